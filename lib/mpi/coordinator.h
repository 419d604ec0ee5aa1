/* The root's coordinator (internal): shared by its creation
 * (coordinator.c) and the hand-out of each batch (batch.c). */
#ifndef BOSCH_MPI_COORDINATOR_H
#define BOSCH_MPI_COORDINATOR_H

#include "bosch/mpi.h"

#include "mpi/protocol.h"

struct bosch_mpi_coordinator {
    MPI_Comm comm;
    int size;
    size_t units;
    struct bosch_mpi_evaluator ev;
    int local;          /* 0 idle, 1 inline (no workers), 2 on a thread */
    int parts;          /* requests go in parts (struct verdict) */
    size_t samples;     /* of a whole request, in parts mode */
    uint64_t *counts;   /* pieces scored per rank */
    unsigned char *out; /* one work message per worker */
    unsigned char *in;  /* one result per worker: head + at most `samples` values */
    size_t in_size;     /* bytes of one */
    MPI_Request *recv;  /* the pending result of each worker (MPI_REQUEST_NULL: free) */
    double *sent;       /* when each worker's piece went out (mpi_now) */
    struct mpi_backoff poll; /* the hand-out loop's pauses, learnt across batches */
    uint8_t *reference; /* the last reference (units bytes), NULL before any */
    uint64_t ref_gen;   /* bumped by each bosch_mpi_coordinator_set_reference */
    uint64_t *ref_sent; /* the generation each worker has */
    char err[1024];
};

#endif
