/* The root's side of libbosch-mpi: the handshake, the coordinator's life
 * and its reference mask (the hand-out of each batch: batch.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coordinator.h"

static _Thread_local int t_status = BOSCH_OK;
static _Thread_local char t_error[1024];

int bosch_mpi_create_status(void) { return t_status; }
const char *bosch_mpi_create_error(void) { return t_error; }

static bosch_mpi_coordinator *create_fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static bosch_mpi_coordinator *create_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(t_error, sizeof t_error, "bosch_mpi_coordinator_create: ");
    vsnprintf(t_error + n, sizeof t_error - (size_t)n, fmt, ap);
    va_end(ap);
    t_status = status;
    return NULL;
}

void bosch_mpi_coordinator_free(bosch_mpi_coordinator *c)
{
    if (!c)
        return;
    for (int w = 1; w < c->size; w++)
        MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, c->comm);
    free(c->counts);
    free(c->out);
    free(c->in);
    free(c->recv);
    free(c->sent);
    free(c->reference);
    free(c->ref_sent);
    free(c);
}

/* How the root evaluates: inline alone, on a thread beside workers when
 * MPI allows threads, else not at all. */
static int local_mode(int size, const struct bosch_mpi_evaluator *ev, unsigned flags)
{
    const int can = ev->eval || ev->sample_eval;
    if (size == 1)
        return can ? 1 : 0;
    if ((flags & BOSCH_MPI_ROOT_IDLE) || !can)
        return 0;
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    return provided >= MPI_THREAD_FUNNELED ? 2 : 0;
}

/* What the root says in the handshake, and its evaluator copied (zeroed
 * beyond the caller's struct_size); *evaluates: whether the root takes
 * pieces itself. */
static struct hello root_hello(const struct bosch_mpi_evaluator *ev_in, size_t units,
                               int ready, const char *why, unsigned flags, int size,
                               struct bosch_mpi_evaluator *ev, int *evaluates)
{
    struct hello h;
    memset(&h, 0, sizeof h);
    const int unset = mpi_evaluator_copy(ev, ev_in) != 0;
    const int has = ev->eval || ev->sample_eval;
    const char *bad = NULL;
    if (unset)
        bad = "struct bosch_mpi_evaluator: struct_size not set";
    else if (!units)
        bad = "no units";
    else if (flags & ~(unsigned)(BOSCH_MPI_ROOT_IDLE | BOSCH_MPI_NO_IDENTITY))
        bad = "unknown flags";
    else if (size == 1 && !has)
        bad = "a job of one rank needs the root's evaluator";
    else if (!has && !(flags & BOSCH_MPI_ROOT_IDLE))
        bad = "no evaluator (and not ROOT_IDLE)";
    h.status = ready;
    if (ready == BOSCH_OK && bad) {
        h.status = BOSCH_E_INVALID;
        why = bad;
    }
    h.units = units;
    *evaluates = h.status == BOSCH_OK && local_mode(size, ev, flags) != 0;
    h.can = mpi_abilities(ev, !*evaluates, &h.samples);
    snprintf(h.why, sizeof h.why, "%s", why ? why : "");
    if (h.status == BOSCH_OK && mpi_hello_identity(&h, ev))
        h.status = BOSCH_E_INVALID;
    return h;
}

bosch_mpi_coordinator *bosch_mpi_coordinator_open(MPI_Comm comm, size_t units,
                                                  const struct bosch_mpi_evaluator *ev_in,
                                                  int ready, const char *why, unsigned flags)
{
    int size = 1;
    MPI_Comm_size(comm, &size);
    struct bosch_mpi_evaluator ev;
    int evaluates = 0;
    const struct hello mine =
        root_hello(ev_in, units, ready, why, flags, size, &ev, &evaluates);
    char verdict_why[512] = "";
    const struct verdict v = mpi_handshake(comm, &mine, evaluates,
                                           (flags & BOSCH_MPI_NO_IDENTITY) != 0, verdict_why,
                                           sizeof verdict_why);
    if (v.status != BOSCH_OK)
        return create_fail(v.status, "%s", verdict_why);
    bosch_mpi_coordinator *c = calloc(1, sizeof *c);
    if (c) {
        c->comm = comm;
        c->size = size;
        c->units = units;
        c->ev = ev;
        c->parts = v.parts != 0;
        c->samples = (size_t)v.samples;
        c->in_size = sizeof(struct result_head) + (c->parts ? c->samples : 1) * sizeof(double);
        c->counts = calloc((size_t)size, sizeof *c->counts);
        c->out = malloc((size_t)size * (sizeof(struct work_head) + units));
        c->in = malloc((size_t)size * c->in_size);
        c->recv = malloc((size_t)size * sizeof *c->recv);
        c->sent = calloc((size_t)size, sizeof *c->sent);
        c->ref_sent = calloc((size_t)size, sizeof *c->ref_sent);
    }
    if (!c || !c->counts || !c->out || !c->in || !c->recv || !c->sent || !c->ref_sent) {
        bosch_mpi_coordinator_free(c); /* still tells the workers to stop */
        if (!c)
            for (int w = 1; w < size; w++)
                MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, comm);
        return create_fail(BOSCH_E_NOMEM, "out of memory");
    }
    for (int w = 0; w < size; w++)
        c->recv[w] = MPI_REQUEST_NULL;
    c->local = evaluates ? local_mode(size, &ev, flags) : 0;
    mpi_backoff_init(&c->poll);
    return c;
}

bosch_mpi_coordinator *bosch_mpi_coordinator_create(MPI_Comm comm, size_t units,
                                                    bosch_request_batch_eval_fn eval,
                                                    void *user, bosch_mpi_error_fn error,
                                                    int ready, const char *why, unsigned flags)
{
    const struct bosch_mpi_evaluator ev = mpi_whole_evaluator(eval, user, error);
    return bosch_mpi_coordinator_open(comm, units, &ev, ready, why, flags);
}

int bosch_mpi_coordinator_set_reference(bosch_mpi_coordinator *c, const uint8_t *mask,
                                        size_t units)
{
    if (!c || !mask || units != c->units)
        return BOSCH_E_INVALID;
    if (!c->reference && !(c->reference = malloc(units)))
        return BOSCH_E_NOMEM;
    memcpy(c->reference, mask, units);
    c->ref_gen++; /* each worker gets it before its next piece */
    if (c->local && c->ev.reference)
        return c->ev.reference(mask, units, c->ev.user);
    return BOSCH_OK;
}

int bosch_mpi_coordinator_stats(const bosch_mpi_coordinator *c, int *ranks, uint64_t *counts,
                                size_t n_counts)
{
    if (!c)
        return BOSCH_E_INVALID;
    if (ranks)
        *ranks = c->size;
    for (size_t r = 0; counts && r < n_counts && r < (size_t)c->size; r++)
        counts[r] = c->counts[r];
    return BOSCH_OK;
}

const char *bosch_mpi_coordinator_last_error(const bosch_mpi_coordinator *c)
{
    return c ? c->err : "";
}
