/* The root's side of libbosch-mpi: the handshake, and each batch handed out
 * request by request to the free ranks, the root's own evaluations on a
 * second thread (only this file's main thread calls MPI). */
#include "bosch/mpi.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/protocol.h"

struct bosch_mpi_coordinator {
    MPI_Comm comm;
    int size;
    size_t units;
    bosch_request_batch_eval_fn eval;
    void *user;
    bosch_mpi_error_fn error;
    int local;          /* 0 idle, 1 inline (no workers), 2 on a thread */
    uint64_t *counts;   /* evaluations per rank */
    unsigned char *out; /* one work message per worker */
    struct result *in;  /* one result per worker */
    MPI_Request *recv;  /* the pending result of each worker (MPI_REQUEST_NULL: free) */
    char err[1024];
};

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
    free(c);
}

/* How the root evaluates: inline alone, on a thread beside workers when
 * MPI allows threads, else not at all. */
static int local_mode(const bosch_mpi_coordinator *c, unsigned flags)
{
    if (c->size == 1)
        return c->eval ? 1 : 0;
    if ((flags & BOSCH_MPI_ROOT_IDLE) || !c->eval)
        return 0;
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    return provided >= MPI_THREAD_FUNNELED ? 2 : 0;
}

bosch_mpi_coordinator *bosch_mpi_coordinator_create(MPI_Comm comm, size_t units,
                                                    bosch_request_batch_eval_fn eval,
                                                    void *user, bosch_mpi_error_fn error,
                                                    int ready, const char *why, unsigned flags)
{
    struct hello mine;
    memset(&mine, 0, sizeof mine);
    mine.status = ready;
    mine.units = units;
    if (ready == BOSCH_OK && (!units || (!eval && !(flags & BOSCH_MPI_ROOT_IDLE)) ||
                              (flags & ~(unsigned)BOSCH_MPI_ROOT_IDLE))) {
        mine.status = BOSCH_E_INVALID;
        why = !units ? "no units" : eval ? "unknown flags" : "no evaluator (and not ROOT_IDLE)";
    }
    snprintf(mine.why, sizeof mine.why, "%s", why ? why : "");
    char verdict_why[512] = "";
    int verdict = mpi_handshake(comm, &mine, verdict_why, sizeof verdict_why);
    if (verdict != BOSCH_OK)
        return create_fail(verdict, "%s", verdict_why);
    bosch_mpi_coordinator *c = calloc(1, sizeof *c);
    int size = 1;
    MPI_Comm_size(comm, &size);
    if (c) {
        c->comm = comm;
        c->size = size;
        c->units = units;
        c->eval = eval;
        c->user = user;
        c->error = error;
        c->counts = calloc((size_t)size, sizeof *c->counts);
        c->out = malloc((size_t)size * (sizeof(struct work_head) + units));
        c->in = calloc((size_t)size, sizeof *c->in);
        c->recv = malloc((size_t)size * sizeof *c->recv);
    }
    if (!c || !c->counts || !c->out || !c->in || !c->recv) {
        bosch_mpi_coordinator_free(c); /* still tells the workers to stop */
        if (!c)
            for (int w = 1; w < size; w++)
                MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, comm);
        return create_fail(BOSCH_E_NOMEM, "out of memory");
    }
    for (int w = 0; w < size; w++)
        c->recv[w] = MPI_REQUEST_NULL;
    c->local = local_mode(c, flags);
    if (size == 1 && !c->local) {
        bosch_mpi_coordinator_free(c);
        return create_fail(BOSCH_E_INVALID, "a job of one rank needs the root's evaluator");
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* One batch                                                                 */
/* ------------------------------------------------------------------------ */
struct batch {
    bosch_mpi_coordinator *c;
    const uint8_t *masks;
    const double *fidelity;
    const uint32_t *draws;
    size_t n, next;
    double *scores;
    int status; /* the first failure */
    pthread_mutex_t lock;
};

/* The next request to hand out, or 0 when none is left (or one failed). */
static int take(struct batch *b, size_t *i)
{
    pthread_mutex_lock(&b->lock);
    int ok = b->status == BOSCH_OK && b->next < b->n;
    if (ok)
        *i = b->next++;
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

/* The root's own evaluations (inline, or the body of its thread). */
static void *evaluate_locally(void *arg)
{
    struct batch *b = arg;
    bosch_mpi_coordinator *c = b->c;
    size_t i;
    while (take(b, &i)) {
        double fid = b->fidelity ? b->fidelity[i] : 1.0;
        uint32_t draw = b->draws ? b->draws[i] : 0;
        int rc = c->eval(b->masks + i * c->units, &fid, &draw, 1, c->units, &b->scores[i],
                         c->user);
        if (rc != BOSCH_OK) {
            fail(b, 0, rc > 0 ? BOSCH_E_EVALUATOR : rc, c->error ? c->error(c->user) : NULL);
            break;
        }
        pthread_mutex_lock(&b->lock);
        c->counts[0]++;
        pthread_mutex_unlock(&b->lock);
    }
    return NULL;
}

/* Sends request i to worker w and posts the receive of its result. */
static void hand_out(struct batch *b, int w, size_t i)
{
    bosch_mpi_coordinator *c = b->c;
    unsigned char *msg = c->out + (size_t)w * (sizeof(struct work_head) + c->units);
    struct work_head head = {(uint32_t)i, b->draws ? b->draws[i] : 0,
                             b->fidelity ? b->fidelity[i] : 1.0};
    memcpy(msg, &head, sizeof head);
    memcpy(msg + sizeof head, b->masks + i * c->units, c->units);
    MPI_Send(msg, (int)(sizeof head + c->units), MPI_BYTE, w, TAG_WORK, c->comm);
    MPI_Irecv(&c->in[w], (int)sizeof c->in[w], MPI_BYTE, w, TAG_RESULT, c->comm, &c->recv[w]);
}

/* Collects one result from worker w, and gives it the next request. */
static int collect(struct batch *b, int w)
{
    bosch_mpi_coordinator *c = b->c;
    const struct result *r = &c->in[w];
    if (r->status != BOSCH_OK) {
        char msg[MSG_LEN];
        MPI_Recv(msg, MSG_LEN, MPI_CHAR, w, TAG_MESSAGE, c->comm, MPI_STATUS_IGNORE);
        msg[MSG_LEN - 1] = '\0';
        fail(b, w, r->status, msg);
    } else if (r->index < b->n) {
        b->scores[r->index] = r->score;
        pthread_mutex_lock(&b->lock);
        c->counts[w]++;
        pthread_mutex_unlock(&b->lock);
    }
    size_t i;
    if (!take(b, &i))
        return 0;
    hand_out(b, w, i);
    return 1;
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
    struct batch b = {c, masks, fidelity, draws, n, 0, scores, BOSCH_OK,
                      PTHREAD_MUTEX_INITIALIZER};
    if (c->local == 1) {
        evaluate_locally(&b);
        return b.status;
    }
    int in_flight = 0;
    size_t i;
    for (int w = 1; w < c->size && take(&b, &i); w++, in_flight++)
        hand_out(&b, w, i);
    pthread_t thread;
    int threaded = c->local == 2 && pthread_create(&thread, NULL, evaluate_locally, &b) == 0;
    for (unsigned idle = 0; in_flight > 0;) {
        int index = MPI_UNDEFINED, flag = 0;
        MPI_Testany(c->size - 1, c->recv + 1, &index, &flag, MPI_STATUS_IGNORE);
        if (!flag || index == MPI_UNDEFINED) {
            mpi_pause(idle++ < 100 ? 10 : 100);
            continue;
        }
        idle = 0;
        in_flight -= 1 - collect(&b, index + 1);
    }
    if (threaded)
        pthread_join(thread, NULL);
    pthread_mutex_destroy(&b.lock);
    return b.status;
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
