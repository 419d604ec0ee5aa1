/* A rank other than the root: scores what the root hands out, one piece
 * (a request, or part of one) at a time, until told to stop. */
#include "bosch/mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/protocol.h"

/* Polls for the root's next message without MPI's spinning wait. */
static void wait_message(MPI_Comm comm, MPI_Status *st, struct mpi_backoff *poll)
{
    mpi_backoff_reset(poll);
    for (;;) {
        int flag = 0;
        MPI_Iprobe(0, MPI_ANY_TAG, comm, &flag, st);
        if (flag)
            return;
        mpi_backoff_wait(poll);
    }
}

/* Scores one piece into `values` (its count, or 1 for a whole request). */
static int score(const struct bosch_mpi_evaluator *ev, int parts, size_t units,
                 const unsigned char *work, double *values)
{
    struct work_head head;
    memcpy(&head, work, sizeof head);
    const uint8_t *mask = work + sizeof head;
    if (parts)
        return ev->sample_eval(mask, head.fidelity, head.draw, (size_t)head.first,
                               (size_t)head.count, units, values, ev->user);
    return ev->eval(mask, &head.fidelity, &head.draw, 1, units, values, ev->user);
}

static int serve(MPI_Comm comm, size_t units, const struct bosch_mpi_evaluator *ev,
                 const struct verdict *v)
{
    const size_t max_values = v->parts ? (size_t)v->samples : 1;
    const size_t work_size = sizeof(struct work_head) + units;
    const size_t result_size = sizeof(struct result_head) + max_values * sizeof(double);
    unsigned char *work = malloc(work_size), *result = malloc(result_size);
    char msg[MSG_LEN];
    struct mpi_backoff poll;
    mpi_backoff_init(&poll);
    for (;;) {
        MPI_Status st;
        wait_message(comm, &st, &poll);
        if (st.MPI_TAG == TAG_STOP) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_STOP, comm, MPI_STATUS_IGNORE);
            break;
        }
        if (st.MPI_TAG == TAG_REFERENCE) { /* a hint: without memory, go on without it */
            uint8_t *ref = malloc(units);
            MPI_Recv(ref ? ref : work, ref ? (int)units : 0, MPI_BYTE, 0, TAG_REFERENCE, comm,
                     MPI_STATUS_IGNORE);
            if (ref && ev->reference)
                ev->reference(ref, units, ev->user);
            free(ref);
            continue;
        }
        struct work_head head;
        struct result_head res = {0, BOSCH_E_NOMEM, 0};
        if (work && result) {
            MPI_Recv(work, (int)work_size, MPI_BYTE, 0, TAG_WORK, comm, MPI_STATUS_IGNORE);
            memcpy(&head, work, sizeof head);
            res.index = head.index;
            res.count = v->parts ? head.count : 1;
            if (res.count > max_values) {
                res.status = BOSCH_E_INVALID;
            } else {
                const double t0 = mpi_now();
                res.status = score(ev, v->parts != 0, units, work,
                                   (double *)(void *)(result + sizeof res));
                mpi_backoff_piece(&poll, mpi_now() - t0);
            }
        } else { /* no memory for the piece: take its head, and say so */
            unsigned char one[sizeof head];
            MPI_Recv(one, (int)sizeof one, MPI_BYTE, 0, TAG_WORK, comm, MPI_STATUS_IGNORE);
            memcpy(&head, one, sizeof head);
            res.index = head.index;
        }
        if (res.status > 0)
            res.status = BOSCH_E_EVALUATOR; /* a stop request is not a worker's to make */
        if (res.status != BOSCH_OK)
            res.count = 0;
        unsigned char failed[sizeof res];
        unsigned char *out = result ? result : failed;
        memcpy(out, &res, sizeof res);
        MPI_Send(out, (int)(sizeof res + (size_t)res.count * sizeof(double)), MPI_BYTE, 0,
                 TAG_RESULT, comm);
        if (res.status != BOSCH_OK) {
            const char *why = res.status == BOSCH_E_NOMEM ? "out of memory"
                              : ev->error                ? ev->error(ev->user)
                                                         : NULL;
            snprintf(msg, sizeof msg, "%s", why && *why ? why : bosch_strerror(res.status));
            MPI_Send(msg, MSG_LEN, MPI_CHAR, 0, TAG_MESSAGE, comm);
        }
    }
    free(work);
    free(result);
    return BOSCH_OK;
}

int bosch_mpi_worker_serve(MPI_Comm comm, size_t units, const struct bosch_mpi_evaluator *ev_in,
                           int ready, const char *why)
{
    struct bosch_mpi_evaluator ev;
    const int unset = mpi_evaluator_copy(&ev, ev_in) != 0;
    struct hello mine;
    memset(&mine, 0, sizeof mine);
    mine.status = ready;
    mine.units = units;
    if (ready == BOSCH_OK && (!ev_in || unset || !(ev.eval || (ev.samples && ev.sample_eval)) ||
                              !units)) {
        mine.status = BOSCH_E_INVALID;
        why = unset ? "bosch_mpi_worker_serve: struct bosch_mpi_evaluator's struct_size not set"
                    : "bosch_mpi_worker_serve: no evaluator or no units";
    }
    if (mine.status == BOSCH_OK)
        mine.can = mpi_abilities(&ev, 0, &mine.samples);
    snprintf(mine.why, sizeof mine.why, "%s", why ? why : "");
    if (mine.status == BOSCH_OK && mpi_hello_identity(&mine, &ev))
        mine.status = BOSCH_E_INVALID;
    char verdict_why[4];
    const struct verdict v = mpi_handshake(comm, &mine, 0, 0, verdict_why, sizeof verdict_why);
    if (v.status != BOSCH_OK)
        return BOSCH_E_INVALID;
    return serve(comm, units, &ev, &v);
}

int bosch_mpi_worker_run(MPI_Comm comm, size_t units, bosch_request_batch_eval_fn eval,
                         void *user, bosch_mpi_error_fn error, int ready, const char *why)
{
    const struct bosch_mpi_evaluator ev = mpi_whole_evaluator(eval, user, error);
    return bosch_mpi_worker_serve(comm, units, &ev, ready, why);
}
