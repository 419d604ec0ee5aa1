/* The cut of a batch into pieces (plan.h). A batch with fewer requests
 * than ranks leaves ranks idle unless its requests are cut: the cut that
 * finishes first under equal per-sample cost, with as few pieces as that
 * takes (each piece is a message and a forward). */
#include "mpi/plan.h"

size_t mpi_parts(const size_t *k, size_t n, size_t ranks)
{
    if (!n || ranks <= 1)
        return 1;
    size_t kmax = 0;
    for (size_t i = 0; i < n; i++)
        kmax = k[i] > kmax ? k[i] : kmax;
    /* More parts than ranks per request, or than 4 ranks' worth per
     * request, never shortens the estimate by much: the bound keeps the
     * plan O(ranks) per batch. */
    size_t smax = ranks < kmax ? ranks : kmax;
    const size_t wide = (4 * ranks + n - 1) / n + 1;
    smax = smax < wide ? smax : wide;
    size_t best = 1, best_span = 0;
    for (size_t s = 1; s <= smax; s++) {
        size_t pieces = 0, longest = 0;
        for (size_t i = 0; i < n; i++) {
            const size_t p = s < k[i] ? s : (k[i] ? k[i] : 1);
            const size_t piece = (k[i] + p - 1) / p;
            pieces += p;
            longest = piece > longest ? piece : longest;
        }
        const size_t span = (pieces + ranks - 1) / ranks * longest;
        if (s == 1 || span < best_span) {
            best = s;
            best_span = span;
        }
    }
    return best;
}

void mpi_part(size_t k, size_t parts, size_t p, size_t *first, size_t *count)
{
    const size_t a = k * p / parts, b = k * (p + 1) / parts;
    *first = a;
    *count = b - a;
}
