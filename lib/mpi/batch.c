/* One batch over the ranks: its requests (or their parts, plan.h) handed
 * out one piece at a time to whichever rank is free, the root's own pieces
 * on a second thread (only the calling thread calls MPI), and the scores
 * assembled in the order asked. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coordinator.h"
#include "mpi/plan.h"

/* Samples [first, first + count) of request `req`; whole requests: 0, 0. */
struct piece {
    size_t req, first, count;
};

struct batch {
    bosch_mpi_coordinator *c;
    const uint8_t *masks;
    const double *fidelity;
    const uint32_t *draws;
    size_t n;
    double *scores;
    struct piece *pieces;
    size_t n_pieces, next;
    size_t *k, *offset; /* parts mode: each request's samples, and where its values start */
    double *values;
    int status; /* the first failure */
    pthread_mutex_t lock;
};

/* The next piece to hand out, or 0 when none is left (or one failed). */
static int take(struct batch *b, size_t *p)
{
    pthread_mutex_lock(&b->lock);
    int ok = b->status == BOSCH_OK && b->next < b->n_pieces;
    if (ok)
        *p = b->next++;
    pthread_mutex_unlock(&b->lock);
    return ok;
}

static void fail(struct batch *b, int rank, int status, const char *why)
{
    pthread_mutex_lock(&b->lock);
    if (b->status == BOSCH_OK) {
        b->status = status;
        snprintf(b->c->err, sizeof b->c->err, "rank %d: %s", rank,
                 why && *why ? why : bosch_strerror(status));
    }
    pthread_mutex_unlock(&b->lock);
}

static void counted(struct batch *b, int rank)
{
    pthread_mutex_lock(&b->lock);
    b->c->counts[rank]++;
    pthread_mutex_unlock(&b->lock);
}

/* The root's own pieces (inline, or the body of its thread). */
static void *evaluate_locally(void *arg)
{
    struct batch *b = arg;
    bosch_mpi_coordinator *c = b->c;
    size_t p;
    while (take(b, &p)) {
        const struct piece *pc = &b->pieces[p];
        const size_t i = pc->req;
        double fid = b->fidelity ? b->fidelity[i] : 1.0;
        uint32_t draw = b->draws ? b->draws[i] : 0;
        const uint8_t *mask = b->masks + i * c->units;
        int rc = c->parts ? c->ev.sample_eval(mask, fid, draw, pc->first, pc->count, c->units,
                                              b->values + b->offset[i] + pc->first, c->ev.user)
                          : c->ev.eval(mask, &fid, &draw, 1, c->units, &b->scores[i],
                                       c->ev.user);
        if (rc != BOSCH_OK) {
            fail(b, 0, rc > 0 ? BOSCH_E_EVALUATOR : rc,
                 c->ev.error ? c->ev.error(c->ev.user) : NULL);
            break;
        }
        counted(b, 0);
    }
    return NULL;
}

/* Sends piece p to worker w (after the reference, when it has changed)
 * and posts the receive of its result. */
static void hand_out(struct batch *b, int w, size_t p)
{
    bosch_mpi_coordinator *c = b->c;
    if (c->reference && c->ref_sent[w] != c->ref_gen) {
        MPI_Send(c->reference, (int)c->units, MPI_BYTE, w, TAG_REFERENCE, c->comm);
        c->ref_sent[w] = c->ref_gen;
    }
    const struct piece *pc = &b->pieces[p];
    const size_t i = pc->req;
    unsigned char *msg = c->out + (size_t)w * (sizeof(struct work_head) + c->units);
    struct work_head head = {(uint32_t)p, b->draws ? b->draws[i] : 0,
                             b->fidelity ? b->fidelity[i] : 1.0, pc->first, pc->count};
    memcpy(msg, &head, sizeof head);
    memcpy(msg + sizeof head, b->masks + i * c->units, c->units);
    MPI_Send(msg, (int)(sizeof head + c->units), MPI_BYTE, w, TAG_WORK, c->comm);
    c->sent[w] = mpi_now();
    MPI_Irecv(c->in + (size_t)w * c->in_size, (int)c->in_size, MPI_BYTE, w, TAG_RESULT, c->comm,
              &c->recv[w]);
}

/* Takes worker w's result, and gives it the next piece: 0 when none. */
static int collect(struct batch *b, int w)
{
    bosch_mpi_coordinator *c = b->c;
    const unsigned char *in = c->in + (size_t)w * c->in_size;
    struct result_head r;
    memcpy(&r, in, sizeof r);
    const struct piece *pc = r.index < b->n_pieces ? &b->pieces[r.index] : NULL;
    mpi_backoff_piece(&c->poll, mpi_now() - c->sent[w]);
    if (r.status != BOSCH_OK) {
        char msg[MSG_LEN];
        MPI_Recv(msg, MSG_LEN, MPI_CHAR, w, TAG_MESSAGE, c->comm, MPI_STATUS_IGNORE);
        msg[MSG_LEN - 1] = '\0';
        fail(b, w, r.status, msg);
    } else if (!pc || r.count != (c->parts ? pc->count : 1)) {
        fail(b, w, BOSCH_E_INVALID, "a result that answers no piece of this batch");
    } else {
        double *to = c->parts ? b->values + b->offset[pc->req] + pc->first : &b->scores[pc->req];
        memcpy(to, in + sizeof r, (size_t)r.count * sizeof(double));
        counted(b, w);
    }
    size_t p;
    if (!take(b, &p))
        return 0;
    hand_out(b, w, p);
    return 1;
}

/* The pieces of the batch: whole requests, or each request's samples cut
 * into parts so that every evaluating rank has work (plan.h). */
static int plan(struct batch *b)
{
    bosch_mpi_coordinator *c = b->c;
    if (!c->parts) {
        if (!(b->pieces = malloc((b->n ? b->n : 1) * sizeof *b->pieces)))
            return BOSCH_E_NOMEM;
        for (size_t i = 0; i < b->n; i++)
            b->pieces[i] = (struct piece){i, 0, 0};
        b->n_pieces = b->n;
        return BOSCH_OK;
    }
    b->k = malloc((b->n ? b->n : 1) * sizeof *b->k);
    b->offset = malloc((b->n ? b->n : 1) * sizeof *b->offset);
    if (!b->k || !b->offset)
        return BOSCH_E_NOMEM;
    size_t total = 0;
    for (size_t i = 0; i < b->n; i++) {
        const double f = b->fidelity ? b->fidelity[i] : 1.0;
        b->k[i] = c->ev.samples(f, c->ev.user);
        if (!b->k[i] || b->k[i] > c->samples) {
            snprintf(c->err, sizeof c->err,
                     "request %zu: %zu samples at fidelity %g (a whole request has %zu)", i,
                     b->k[i], f, c->samples);
            return BOSCH_E_INVALID;
        }
        b->offset[i] = total;
        total += b->k[i];
    }
    const size_t ranks = (size_t)(c->size - 1) + (c->local ? 1 : 0);
    const size_t s = mpi_parts(b->k, b->n, ranks);
    size_t np = 0;
    for (size_t i = 0; i < b->n; i++)
        np += s < b->k[i] ? s : b->k[i];
    b->values = malloc((total ? total : 1) * sizeof *b->values);
    b->pieces = malloc((np ? np : 1) * sizeof *b->pieces);
    if (!b->values || !b->pieces)
        return BOSCH_E_NOMEM;
    for (size_t i = 0; i < b->n; i++) {
        const size_t parts = s < b->k[i] ? s : b->k[i];
        for (size_t p = 0; p < parts; p++) {
            struct piece *pc = &b->pieces[b->n_pieces++];
            pc->req = i;
            mpi_part(b->k[i], parts, p, &pc->first, &pc->count);
        }
    }
    return BOSCH_OK;
}

/* Parts mode: each score is its samples' values added in sample order,
 * divided by their count (struct bosch_mpi_evaluator's contract). */
static void assemble(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        double sum = 0.0;
        for (size_t j = 0; j < b->k[i]; j++)
            sum += b->values[b->offset[i] + j];
        b->scores[i] = sum / (double)b->k[i];
    }
}

/* Hands the pieces out until all are back (or the first failure, after
 * which the pieces in flight are still collected). */
static void run(struct batch *b)
{
    bosch_mpi_coordinator *c = b->c;
    if (c->local == 1) {
        evaluate_locally(b);
        return;
    }
    int in_flight = 0;
    size_t p;
    for (int w = 1; w < c->size && take(b, &p); w++, in_flight++)
        hand_out(b, w, p);
    pthread_t thread;
    int threaded = c->local == 2 && pthread_create(&thread, NULL, evaluate_locally, b) == 0;
    mpi_backoff_reset(&c->poll);
    while (in_flight > 0) {
        int index = MPI_UNDEFINED, flag = 0;
        MPI_Testany(c->size - 1, c->recv + 1, &index, &flag, MPI_STATUS_IGNORE);
        if (!flag || index == MPI_UNDEFINED) {
            mpi_backoff_wait(&c->poll);
            continue;
        }
        mpi_backoff_reset(&c->poll);
        in_flight -= 1 - collect(b, index + 1);
    }
    if (threaded)
        pthread_join(thread, NULL);
}

int bosch_mpi_request_batch_eval(const uint8_t *masks, const double *fidelity,
                                 const uint32_t *draws, size_t n, size_t units, double *scores,
                                 void *coordinator)
{
    bosch_mpi_coordinator *c = coordinator;
    if (!c)
        return BOSCH_E_INVALID;
    if (units != c->units || (n && (!masks || !scores))) {
        snprintf(c->err, sizeof c->err, "bosch_mpi_request_batch_eval: %zu units (the job's: %zu)",
                 units, c->units);
        return BOSCH_E_INVALID;
    }
    c->err[0] = '\0';
    struct batch b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.masks = masks;
    b.fidelity = fidelity;
    b.draws = draws;
    b.n = n;
    b.scores = scores;
    pthread_mutex_init(&b.lock, NULL);
    b.status = plan(&b);
    if (b.status == BOSCH_E_NOMEM)
        snprintf(c->err, sizeof c->err, "bosch_mpi_request_batch_eval: out of memory");
    if (b.status == BOSCH_OK) {
        run(&b);
        if (b.status == BOSCH_OK && c->parts)
            assemble(&b);
    }
    pthread_mutex_destroy(&b.lock);
    free(b.pieces);
    free(b.k);
    free(b.offset);
    free(b.values);
    return b.status;
}
