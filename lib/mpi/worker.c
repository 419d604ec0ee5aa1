/* bosch_mpi_worker_run: a rank other than the root evaluates what the root
 * hands out, one request at a time, until told to stop. */
#include "bosch/mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/protocol.h"

/* Polls for the root's next message without MPI's spinning wait. */
static void wait_message(MPI_Comm comm, MPI_Status *st)
{
    for (unsigned idle = 0;; idle++) {
        int flag = 0;
        MPI_Iprobe(0, MPI_ANY_TAG, comm, &flag, st);
        if (flag)
            return;
        mpi_pause(idle < 100 ? 10 : 200);
    }
}

static int serve(MPI_Comm comm, size_t units, bosch_request_batch_eval_fn eval, void *user,
                 bosch_mpi_error_fn error)
{
    unsigned char *buf = malloc(sizeof(struct work_head) + units);
    char msg[MSG_LEN];
    for (;;) {
        MPI_Status st;
        wait_message(comm, &st);
        if (st.MPI_TAG == TAG_STOP) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_STOP, comm, MPI_STATUS_IGNORE);
            free(buf);
            return BOSCH_OK;
        }
        struct work_head head;
        struct result res = {0, BOSCH_E_NOMEM, 0.0};
        if (buf) {
            MPI_Recv(buf, (int)(sizeof head + units), MPI_BYTE, 0, TAG_WORK, comm,
                     MPI_STATUS_IGNORE);
            memcpy(&head, buf, sizeof head);
            res.index = head.index;
            res.status = eval(buf + sizeof head, &head.fidelity, &head.draw, 1, units,
                              &res.score, user);
        } else { /* no memory for the request: take it, and say so */
            unsigned char one[sizeof head];
            MPI_Recv(one, (int)sizeof one, MPI_BYTE, 0, TAG_WORK, comm, MPI_STATUS_IGNORE);
            memcpy(&head, one, sizeof head);
            res.index = head.index;
        }
        if (res.status > 0)
            res.status = BOSCH_E_EVALUATOR; /* a stop request is not a worker's to make */
        MPI_Send(&res, (int)sizeof res, MPI_BYTE, 0, TAG_RESULT, comm);
        if (res.status != BOSCH_OK) {
            const char *why = error ? error(user) : NULL;
            snprintf(msg, sizeof msg, "%s", why && *why ? why : bosch_strerror(res.status));
            MPI_Send(msg, MSG_LEN, MPI_CHAR, 0, TAG_MESSAGE, comm);
        }
    }
}

int bosch_mpi_worker_run(MPI_Comm comm, size_t units, bosch_request_batch_eval_fn eval,
                         void *user, bosch_mpi_error_fn error, int ready, const char *why)
{
    struct hello mine;
    memset(&mine, 0, sizeof mine);
    mine.status = ready;
    mine.units = units;
    if (ready == BOSCH_OK && (!eval || !units)) {
        mine.status = BOSCH_E_INVALID;
        why = "bosch_mpi_worker_run: no evaluator or no units";
    }
    snprintf(mine.why, sizeof mine.why, "%s", why ? why : "");
    char verdict_why[4];
    if (mpi_handshake(comm, &mine, verdict_why, sizeof verdict_why) != BOSCH_OK)
        return BOSCH_E_INVALID;
    return serve(comm, units, eval, user, error);
}
