#include "util/pool.h"

#include <stdlib.h>
#include <uv.h>

struct pool {
    uv_thread_t *threads;
    unsigned nthreads;
    uv_mutex_t mu;
    uv_cond_t work;  /* a job was posted, or shutdown */
    uv_cond_t done;  /* a worker finished its part */
    /* The job in progress. */
    pool_task_fn task;
    void *ctx;
    size_t n, next, running;
    const atomic_int *cancel;
    unsigned long generation;
    int shutdown;
};

static void worker(void *arg)
{
    pool *p = arg;
    unsigned long seen = 0;
    uv_mutex_lock(&p->mu);
    for (;;) {
        while (!p->shutdown && (p->generation == seen || p->next >= p->n))
            uv_cond_wait(&p->work, &p->mu);
        if (p->shutdown)
            break;
        seen = p->generation;
        while (p->next < p->n && !(p->cancel && atomic_load(p->cancel))) {
            size_t i = p->next++;
            p->running++;
            uv_mutex_unlock(&p->mu);
            p->task(p->ctx, i);
            uv_mutex_lock(&p->mu);
            p->running--;
        }
        if (p->cancel && atomic_load(p->cancel))
            p->next = p->n; /* nobody starts anything more */
        uv_cond_broadcast(&p->done);
    }
    uv_mutex_unlock(&p->mu);
}

pool *pool_create(unsigned nthreads)
{
    pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->threads = calloc(nthreads, sizeof *p->threads);
    if (!p->threads || uv_mutex_init(&p->mu) != 0) {
        free(p->threads);
        free(p);
        return NULL;
    }
    if (uv_cond_init(&p->work) != 0 || uv_cond_init(&p->done) != 0) {
        uv_mutex_destroy(&p->mu);
        free(p->threads);
        free(p);
        return NULL;
    }
    for (unsigned i = 0; i < nthreads; i++) {
        if (uv_thread_create(&p->threads[i], worker, p) != 0)
            break;
        p->nthreads++;
    }
    if (p->nthreads < nthreads) {
        pool_destroy(p);
        return NULL;
    }
    return p;
}

void pool_destroy(pool *p)
{
    if (!p)
        return;
    uv_mutex_lock(&p->mu);
    p->shutdown = 1;
    uv_cond_broadcast(&p->work);
    uv_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        uv_thread_join(&p->threads[i]);
    uv_cond_destroy(&p->work);
    uv_cond_destroy(&p->done);
    uv_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

void pool_run(pool *p, pool_task_fn task, void *ctx, size_t n, const atomic_int *cancel)
{
    uv_mutex_lock(&p->mu);
    p->task = task;
    p->ctx = ctx;
    p->n = n;
    p->next = 0;
    p->running = 0;
    p->cancel = cancel;
    p->generation++;
    uv_cond_broadcast(&p->work);
    while (p->next < p->n || p->running > 0)
        uv_cond_wait(&p->done, &p->mu);
    p->task = NULL;
    uv_mutex_unlock(&p->mu);
}
