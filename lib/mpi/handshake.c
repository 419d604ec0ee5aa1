/* The collective start of a job: every rank says whether its evaluator is
 * open, what it can do and what it evaluates; the root refuses the job when
 * a rank is not ready or evaluates another job (identity.c), naming it, and
 * decides whether requests go whole or in parts. */
#include "bosch/bosch.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/protocol.h"

int mpi_evaluator_copy(struct bosch_mpi_evaluator *out, const struct bosch_mpi_evaluator *in)
{
    memset(out, 0, sizeof *out);
    if (!in)
        return 0;
    if (in->struct_size < offsetof(struct bosch_mpi_evaluator, samples))
        return -1;
    memcpy(out, in, in->struct_size < sizeof *out ? in->struct_size : sizeof *out);
    return 0;
}

struct bosch_mpi_evaluator mpi_whole_evaluator(bosch_request_batch_eval_fn eval, void *user,
                                               bosch_mpi_error_fn error)
{
    struct bosch_mpi_evaluator ev;
    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    ev.eval = eval;
    ev.error = error;
    ev.user = user;
    return ev;
}

uint32_t mpi_abilities(const struct bosch_mpi_evaluator *ev, int plans_only, uint64_t *samples)
{
    uint32_t can = (ev->eval ? CAN_WHOLE : 0) | (ev->reference ? CAN_REFERENCE : 0);
    *samples = 0;
    if (ev->samples && (ev->sample_eval || plans_only) &&
        (*samples = ev->samples(1.0, ev->user)) > 0)
        can |= CAN_PARTS;
    return can;
}

/* The root's decision over every rank's hello. */
static struct verdict decide(const struct hello *all, int size, int root_evaluates,
                             int waive_identity, char *why_out, size_t why_len)
{
    struct verdict v = {BOSCH_OK, 1, all[0].samples};
    for (int r = 0; r < size; r++) {
        const struct hello *h = &all[r];
        if (h->status != BOSCH_OK) {
            v.status = h->status < 0 ? h->status : BOSCH_E_INVALID;
            snprintf(why_out, why_len, "rank %d is not ready: %.*s", r, WHY_LEN,
                     h->why[0] ? h->why : bosch_strerror(h->status));
            return v;
        }
        if (h->units != all[0].units) {
            v.status = BOSCH_E_INVALID;
            snprintf(why_out, why_len, "rank %d evaluates %llu units, rank 0 %llu", r,
                     (unsigned long long)h->units, (unsigned long long)all[0].units);
            return v;
        }
        /* Parts need every evaluating rank (and the root, which plans
         * them) to score samples, of one count: another count is another
         * task. */
        const int evaluates = r > 0 || root_evaluates;
        if (!(h->can & CAN_PARTS)) {
            if (r == 0 || evaluates)
                v.parts = 0;
        } else if (h->samples != all[0].samples && (all[0].can & CAN_PARTS)) {
            v.status = BOSCH_E_INVALID;
            snprintf(why_out, why_len, "rank %d scores %llu samples per request, rank 0 %llu", r,
                     (unsigned long long)h->samples, (unsigned long long)all[0].samples);
            return v;
        }
    }
    for (int r = v.parts ? size : 0; r < size; r++)
        if ((r > 0 || root_evaluates) && !(all[r].can & CAN_WHOLE)) {
            v.status = BOSCH_E_INVALID;
            snprintf(why_out, why_len,
                     "rank %d scores only parts of requests, and not every rank can", r);
            return v;
        }
    /* Ranks that can work together must also evaluate the same thing. */
    if (mpi_identities_agree(all, size, root_evaluates, waive_identity, why_out, why_len)) {
        v.status = BOSCH_E_INVALID;
        return v;
    }
    if (!v.parts)
        v.samples = 0;
    return v;
}

struct verdict mpi_handshake(MPI_Comm comm, const struct hello *mine, int root_evaluates,
                             int waive_identity, char *why_out, size_t why_len)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    struct hello *all = NULL;
    struct verdict v = {BOSCH_OK, 0, 0};
    if (rank == 0 && !(all = calloc((size_t)size, sizeof *all)))
        v.status = BOSCH_E_NOMEM; /* the gather still runs: the workers wait on it */
    struct hello scratch;
    MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, all ? (void *)all : (void *)&scratch,
               (int)sizeof *mine, MPI_BYTE, 0, comm);
    if (rank == 0 && all)
        v = decide(all, size, root_evaluates, waive_identity, why_out, why_len);
    else if (rank == 0)
        snprintf(why_out, why_len, "out of memory");
    free(all);
    MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm);
    return v;
}
