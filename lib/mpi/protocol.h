/* The messages between the root and the workers of libbosch-mpi (internal).
 * Fixed-size records sent as MPI_BYTE: every rank runs the same build. */
#ifndef BOSCH_MPI_PROTOCOL_H
#define BOSCH_MPI_PROTOCOL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TAG_WORK = 1,   /* root -> worker: struct work_head, then the mask's units bytes */
    TAG_RESULT = 2, /* worker -> root: struct result */
    TAG_MESSAGE = 3, /* worker -> root after a failed result: its message (MSG_LEN) */
    TAG_STOP = 4    /* root -> worker: return from bosch_mpi_worker_run */
};

#define MSG_LEN 512
#define WHY_LEN 240

/* Each rank's part of the handshake (MPI_Gather to the root). */
struct hello {
    int32_t status; /* BOSCH_OK: the evaluator is open */
    uint32_t reserved;
    uint64_t units;
    char why[WHY_LEN];
};

struct work_head {
    uint32_t index; /* the request's place in the batch */
    uint32_t draw;
    double fidelity;
};

struct result {
    uint32_t index;
    int32_t status;
    double score;
};

/* The handshake on every rank: gathers the hellos at the root, which
 * decides (BOSCH_OK, or the status of the first rank not ready, its reason
 * in why_out on the root) and broadcasts the verdict. */
int mpi_handshake(MPI_Comm comm, const struct hello *mine, char *why_out, size_t why_len);

/* Sleeps `us` microseconds: the pause of a polling loop (MPI's blocking
 * calls spin, which would take the core of an evaluator sharing it). */
void mpi_pause(unsigned us);

#endif
