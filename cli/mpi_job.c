/* The bosch command as one rank of an MPI job (mpi_job.h, docs/mpi.md). */
#include "mpi_job.h"

#include <bosch/mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "model_dir.h"

/* The first of these that is set says how many ranks a launcher started:
 * Open MPI's mpirun, MPICH's / Intel MPI's mpiexec (PMI), a step of Slurm's
 * srun (not SLURM_NTASKS, which a batch script sees outside any step). One
 * rank runs as a plain process. */
static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "SLURM_STEP_NUM_TASKS"};

int mpi_job_launched(void)
{
    for (size_t i = 0; i < sizeof size_vars / sizeof size_vars[0]; i++) {
        const char *v = getenv(size_vars[i]);
        if (v && *v)
            return atoi(v) > 1;
    }
    return 0;
}

/* This rank's place on its node: the ranks sharing memory with it. */
static int local_rank(void)
{
    MPI_Comm node;
    int r = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &r);
        MPI_Comm_free(&node);
    }
    return r;
}

int mpi_job_start(struct mpi_job *j, struct settings *s)
{
    memset(j, 0, sizeof *j);
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        errorf("MPI_Init_thread failed");
        return EXIT_ERROR;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j->size);
    j->local_rank = local_rank();
    if (provided < MPI_THREAD_SERIALIZED) {
        errorf("this MPI gives thread level %d; the search hands out from its own thread and "
               "needs MPI_THREAD_SERIALIZED", provided);
        MPI_Finalize();
        return EXIT_ERROR;
    }
    /* Requests cut over ranks score exactly as whole with one sample per
     * forward (bosch_torch_evaluator_set_forward_samples). */
    if (!s->forward_samples_given)
        s->forward_samples = 1;
    /* One GPU per rank on a node of several: cuda:<local rank mod count>. */
    const uint32_t gpus = bosch_torch_cuda_device_count();
    if (gpus && (!strcmp(s->device, "auto") || !strcmp(s->device, "cuda"))) {
        snprintf(j->device, sizeof j->device, "cuda:%u", (unsigned)j->local_rank % gpus);
        s->device = j->device;
    }
    return 0;
}

#define PLACE_LEN 128

int mpi_job_gather_devices(struct mpi_job *j, struct settings *s)
{
    char mine[PLACE_LEN], host[MPI_MAX_PROCESSOR_NAME] = "";
    int n = 0;
    MPI_Get_processor_name(host, &n);
    const char *dev = s->device;
    if (!strcmp(dev, "auto") && !bosch_torch_cuda_device_count())
        dev = "cpu";
    snprintf(mine, sizeof mine, "%s:%s", host, dev);
    char *all = j->rank ? NULL : malloc((size_t)j->size * PLACE_LEN);
    char one[PLACE_LEN];
    /* The gather runs whatever happened here: the other ranks wait on it. */
    MPI_Gather(mine, PLACE_LEN, MPI_CHAR, all ? all : one, PLACE_LEN, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (j->rank)
        return 0;
    j->devices = all ? malloc((size_t)j->size * (PLACE_LEN + 1)) : NULL;
    if (!j->devices) {
        free(all);
        errorf("out of memory");
        return EXIT_ERROR;
    }
    size_t at = 0;
    for (int r = 0; r < j->size; r++)
        at += (size_t)sprintf(j->devices + at, "%s%.*s", r ? " " : "", PLACE_LEN - 1,
                              all + (size_t)r * PLACE_LEN);
    free(all);
    s->job_ranks = j->size;
    s->job_devices = j->devices;
    return 0;
}

void mpi_job_announce(const struct settings *s)
{
    fprintf(stderr, "job: %d ranks evaluate (rank 0 also searches); devices in rank order: %s\n",
            s->job_ranks, s->job_devices);
}

void mpi_job_end(struct mpi_job *j)
{
    free(j->devices);
    j->devices = NULL;
    MPI_Finalize();
}

static const char *evaluator_error(void *evaluator)
{
    return bosch_torch_evaluator_last_error(evaluator);
}

static int set_reference(const uint8_t *mask, size_t units, void *evaluator)
{
    return bosch_torch_evaluator_set_reference(evaluator, mask, units);
}

/* A rank's libbosch-torch evaluator for libbosch-mpi: whole requests, and
 * parts of them (a request's samples), so that stage 1's small batches
 * keep every rank busy; the incumbent's mask for the prefix cache
 * (`follow`: what --no-prefix-cache and --cache-all-full leave on). */
static struct bosch_mpi_evaluator torch_evaluator(const struct backend *b, int follow)
{
    struct bosch_mpi_evaluator ev;
    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    ev.eval = bosch_torch_request_batch_eval;
    ev.error = evaluator_error;
    ev.user = b->e;
    ev.samples = bosch_torch_request_samples;
    ev.sample_eval = bosch_torch_sample_eval;
    ev.reference = follow ? set_reference : NULL;
    ev.identity = bosch_torch_evaluator_identity; /* ranks that differ refuse the job */
    return ev;
}

int mpi_job_serve(const struct mpi_job *j, struct settings *s)
{
    errorf_rank(j->rank);
    struct backend b;
    memset(&b, 0, sizeof b);
    const int opened = !model_setup(s, 0) && !backend_open(s, &b);
    const size_t units = opened ? (size_t)b.L * b.G : 0;
    const struct bosch_mpi_evaluator ev = torch_evaluator(&b, b.follow);
    int rc = bosch_mpi_worker_serve(MPI_COMM_WORLD, units, opened ? &ev : NULL,
                                    opened ? BOSCH_OK : BOSCH_E_IO, opened ? NULL : last_errorf());
    backend_free(&b);
    return rc == BOSCH_OK ? EXIT_OK : EXIT_ERROR;
}

bosch_mpi_coordinator *mpi_job_coordinator(struct backend *b, int opened)
{
    /* The root's own reference is the backend's to set (it follows the
     * incumbent itself): the coordinator passes it on to the workers. */
    const struct bosch_mpi_evaluator ev = torch_evaluator(b, 0);
    bosch_mpi_coordinator *c = bosch_mpi_coordinator_open(
        MPI_COMM_WORLD, opened ? (size_t)b->L * b->G : 0, opened ? &ev : NULL,
        opened ? BOSCH_OK : BOSCH_E_IO, opened ? NULL : last_errorf(), 0);
    if (!c) {
        const char *e = bosch_mpi_create_error(), *colon = strstr(e, ": ");
        errorf("%s", colon ? colon + 2 : e);
    }
    return c;
}
