/* A fixed set of worker threads (libuv threads, mutex and condition) that
 * run the tasks 0..n-1 of one job at a time. The optimizer uses it to keep
 * up to `threads` evaluations in flight; libuv's global work queue is not
 * used because its size is a process-wide setting the host owns. */
#ifndef LIBBOSCH_UTIL_POOL_H
#define LIBBOSCH_UTIL_POOL_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct pool pool;
typedef void (*pool_task_fn)(void *ctx, size_t i);

/* NULL when threads cannot be created. */
pool *pool_create(unsigned nthreads);
void pool_destroy(pool *p);
/* Runs task(ctx, i) for i = 0..n-1 on the workers, each index once, in
 * increasing order of start; an index is skipped (never started) once
 * *cancel is non-zero. Returns when every started task has finished. */
void pool_run(pool *p, pool_task_fn task, void *ctx, size_t n, const atomic_int *cancel);

#endif
