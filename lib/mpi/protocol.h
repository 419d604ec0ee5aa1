/* The messages between the root and the workers of libbosch-mpi (internal).
 * Fixed-size records sent as MPI_BYTE: every rank runs the same build. */
#ifndef BOSCH_MPI_PROTOCOL_H
#define BOSCH_MPI_PROTOCOL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "bosch/mpi.h"

enum {
    TAG_WORK = 1,      /* root -> worker: struct work_head, then the mask's units bytes */
    TAG_RESULT = 2,    /* worker -> root: struct result_head, then its values (doubles) */
    TAG_MESSAGE = 3,   /* worker -> root after a failed result: its message (MSG_LEN) */
    TAG_STOP = 4,      /* root -> worker: return from the worker's loop */
    TAG_REFERENCE = 5  /* root -> worker: a new reference mask (units bytes) */
};

#define MSG_LEN 512
#define WHY_LEN 240

/* What a rank's evaluator can do (struct hello's `can`). */
enum { CAN_WHOLE = 1, CAN_PARTS = 2, CAN_REFERENCE = 4 };

/* Each rank's part of the handshake (MPI_Gather to the root). */
struct hello {
    int32_t status; /* BOSCH_OK: the evaluator is open */
    uint32_t can;   /* CAN_* */
    uint64_t units;
    uint64_t samples; /* of a whole request (fidelity 1), with CAN_PARTS */
    char why[WHY_LEN];
    char identity[BOSCH_MPI_IDENTITY_MAX]; /* what it evaluates; "" = cannot say */
};

/* The root's decision (MPI_Bcast): BOSCH_OK and how requests go. */
struct verdict {
    int32_t status;
    uint32_t parts;   /* nonzero: requests in parts, values summed at the root */
    uint64_t samples; /* of a whole request; the most values in a result */
};

struct work_head {
    uint32_t index; /* the piece's place in the batch */
    uint32_t draw;
    double fidelity;
    uint64_t first, count; /* samples, in parts mode (else 0, 0) */
};

struct result_head {
    uint32_t index;
    int32_t status;
    uint64_t count; /* values that follow: the piece's samples, or 1 (a score) */
};

/* Copies a caller's evaluator, zeroing what its struct_size leaves out
 * (all of it for NULL); -1 when struct_size is too small to be set. */
int mpi_evaluator_copy(struct bosch_mpi_evaluator *out, const struct bosch_mpi_evaluator *in);
/* The evaluator of the first step's calls: whole requests only. */
struct bosch_mpi_evaluator mpi_whole_evaluator(bosch_request_batch_eval_fn eval, void *user,
                                               bosch_mpi_error_fn error);
/* What an evaluator can do (CAN_*), and the samples of a whole request
 * with CAN_PARTS. `plans_only`: a root that evaluates nothing needs only
 * the sample count to cut requests. */
uint32_t mpi_abilities(const struct bosch_mpi_evaluator *ev, int plans_only, uint64_t *samples);

/* The handshake on every rank: gathers the hellos at the root, which
 * decides (BOSCH_OK, or the status of the first rank not ready, its reason
 * in why_out on the root; how requests go) and broadcasts the verdict.
 * `root_evaluates`: whether the root's own evaluator takes requests;
 * `waive_identity`: the root's BOSCH_MPI_NO_IDENTITY (ignored elsewhere). */
struct verdict mpi_handshake(MPI_Comm comm, const struct hello *mine, int root_evaluates,
                             int waive_identity, char *why_out, size_t why_len);

/* identity.c: a rank's identity into h->identity (from ev->identity; ""
 * without one). 0, or -1 with the reason in h->why when the text is too
 * long. */
int mpi_hello_identity(struct hello *h, const struct bosch_mpi_evaluator *ev);
/* Whether every rank that gives an identity gives the reference rank's
 * (the root's, else the first rank's that gives one), and every rank that
 * evaluates gives one unless `waive`: 0, or -1 with the rank and the first
 * field that differs in why_out. A rank evaluates when it is a worker, or
 * the root with `root_evaluates`. */
int mpi_identities_agree(const struct hello *all, int size, int root_evaluates, int waive,
                         char *why_out, size_t why_len);

/* The pauses of a polling loop (poll.c): MPI's blocking calls spin, which
 * would take the core of an evaluator sharing it. */
struct mpi_backoff {
    unsigned pause_us, cap_us;
    double piece_us; /* running mean of the pieces waited for */
};
void mpi_backoff_init(struct mpi_backoff *b);
/* Something came: the next wait starts short again. */
void mpi_backoff_reset(struct mpi_backoff *b);
/* Sleeps, and lengthens the next pause (up to the cap). */
void mpi_backoff_wait(struct mpi_backoff *b);
/* A piece took `seconds`: the cap follows a fiftieth of their mean. */
void mpi_backoff_piece(struct mpi_backoff *b, double seconds);
/* CLOCK_MONOTONIC in seconds. */
double mpi_now(void);

#endif
