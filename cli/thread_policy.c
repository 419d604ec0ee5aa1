/* The CPU thread policy of the model commands (docs/torch.md, "Threads"):
 * libtorch's OpenMP pool sized to the CPUs this process may run on, and both
 * thread pools of the forward (libgomp's and OpenBLAS's) sleeping when idle
 * instead of spinning. On 2 cores with the pools spinning against each
 * other, two libtorch threads made the 0.6B-shaped forward 1.6x slower than
 * one; with both sleeping they are ~10% faster (docs/benchmarks-history.md).
 *
 * Only the environment sets the wait policies, and libgomp and OpenBLAS read
 * it when they load, before main(): so the command re-executes itself once
 * with the missing variables added. A variable the user set is never
 * changed; BOSCH_THREAD_POLICY=0 keeps the environment as it is (and marks
 * the re-executed process, so that it happens at most once). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifdef BOSCH_CLI_TORCH
static unsigned usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}
#endif

void thread_policy_apply(char **argv)
{
#ifdef BOSCH_CLI_TORCH
    const char *mode = getenv("BOSCH_THREAD_POLICY");
    if (mode && !strcmp(mode, "0"))
        return;
    char cpus[16];
    snprintf(cpus, sizeof cpus, "%u", usable_cpus());
    const char *defaults[][2] = {
        {"OMP_NUM_THREADS", cpus},       /* libtorch's pool (and OpenBLAS's) */
        {"OMP_WAIT_POLICY", "PASSIVE"},  /* libgomp threads sleep when idle */
        {"OPENBLAS_THREAD_TIMEOUT", "4"}, /* OpenBLAS threads sleep after 2^4 cycles */
    };
    int added = 0;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (!getenv(defaults[i][0]) && setenv(defaults[i][0], defaults[i][1], 0) == 0)
            added++;
    if (!added || setenv("BOSCH_THREAD_POLICY", "0", 1) != 0)
        return;
    /* The path /proc/self/exe names (not the link itself, which a tool such
     * as valgrind would resolve to its own binary). */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        execv(self, argv);
    }
    /* No /proc, or exec refused: run on with the libraries' own defaults. */
#else
    (void)argv;
#endif
}
