/* `mpirun -np N bosch search ...` (and srun): the command as one rank of an
 * MPI job, through libbosch-mpi (docs/mpi.md). Built with libbosch-torch
 * and MPI (BOSCH_CLI_MPI). */
#ifndef BOSCH_CLI_MPI_JOB_H
#define BOSCH_CLI_MPI_JOB_H

#include "cli.h"

struct mpi_job {
    int rank, size, local_rank;
    char device[32]; /* this rank's device, when it takes one of the node's GPUs */
    char *devices;   /* rank 0: "HOST:DEVICE" of every rank, in rank order (mpi_job_end frees) */
};

/* Non-zero when a launcher (Open MPI's mpirun, MPICH's mpiexec, Slurm's
 * srun) started this process as one of several ranks. */
int mpi_job_launched(void);

/* MPI_Init_thread (MPI_THREAD_SERIALIZED: the search's thread hands out,
 * not the main one), this rank, its rank on the node, and its device: with
 * --device auto or cuda and CUDA devices visible, cuda:<local rank modulo
 * their count>, written into s->device. 0, or EXIT_ERROR after a message
 * (then MPI is not left initialised). */
int mpi_job_start(struct mpi_job *j, struct settings *s);

/* Collective: where each rank evaluates ("HOST:DEVICE", the device as
 * given, or cpu for auto without GPUs), gathered into j->devices on rank 0
 * and recorded in s (job_ranks, job_devices) for the result file. 0, or
 * EXIT_ERROR after a message (out of memory, on rank 0). */
int mpi_job_gather_devices(struct mpi_job *j, struct settings *s);

/* Rank 0, once the job is accepted: one line on stderr saying that the
 * search runs as a job of N ranks and where each evaluates. */
void mpi_job_announce(const struct settings *s);

/* MPI_Finalize; frees j->devices. */
void mpi_job_end(struct mpi_job *j);

struct backend;
typedef struct bosch_mpi_coordinator bosch_mpi_coordinator;

/* A rank other than 0: opens the model directory as rank 0 does (its own
 * device), then evaluates what rank 0 hands out until the search ends. A
 * rank that cannot open it says why in the handshake, and rank 0 refuses
 * the job naming it. The exit code of this rank. */
int mpi_job_serve(const struct mpi_job *j, struct settings *s);

/* Rank 0: the handshake with the other ranks; `opened`: whether b is open
 * (else the reason is the last message printed). The coordinator, or NULL
 * after a message (a rank not ready, named). */
bosch_mpi_coordinator *mpi_job_coordinator(struct backend *b, int opened);

#endif
