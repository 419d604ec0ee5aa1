/* The collective start of a job: every rank says whether its evaluator is
 * open; the root refuses the job when one is not, naming it. */
#define _POSIX_C_SOURCE 200809L
#include "bosch/bosch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi/protocol.h"

int mpi_handshake(MPI_Comm comm, const struct hello *mine, char *why_out, size_t why_len)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    struct hello *all = NULL;
    int32_t verdict = BOSCH_OK;
    if (rank == 0 && !(all = calloc((size_t)size, sizeof *all)))
        verdict = BOSCH_E_NOMEM; /* the gather still runs: the workers wait on it */
    struct hello scratch;
    MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, all ? (void *)all : (void *)&scratch,
               (int)sizeof *mine, MPI_BYTE, 0, comm);
    if (rank == 0 && all) {
        for (int r = 0; r < size && verdict == BOSCH_OK; r++) {
            const struct hello *h = &all[r];
            if (h->status != BOSCH_OK) {
                verdict = h->status < 0 ? h->status : BOSCH_E_INVALID;
                snprintf(why_out, why_len, "rank %d is not ready: %.*s", r, WHY_LEN,
                         h->why[0] ? h->why : bosch_strerror(h->status));
            } else if (h->units != all[0].units) {
                verdict = BOSCH_E_INVALID;
                snprintf(why_out, why_len, "rank %d evaluates %llu units, rank 0 %llu", r,
                         (unsigned long long)h->units, (unsigned long long)all[0].units);
            }
        }
    } else if (rank == 0) {
        snprintf(why_out, why_len, "out of memory");
    }
    free(all);
    MPI_Bcast(&verdict, 1, MPI_INT32_T, 0, comm);
    return verdict;
}

void mpi_pause(unsigned us)
{
    struct timespec ts = {0, (long)us * 1000L};
    nanosleep(&ts, NULL);
}
