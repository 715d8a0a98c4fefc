#include "p2p_metrics.h"

#include <math.h>
#include <stdlib.h>

typedef struct interval { int64_t lo, hi; } interval;

static int cmp_interval(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

int64_t p2p_recv_ready(const p2p_stamps *s, int q)
{
    /* receive partition q covers bytes [q*m/Q, (q+1)*m/Q); send partition j covers
     * [j*m/P, (j+1)*m/P); compute with integers to stay exact */
    size_t m = s->bytes;
    size_t lo = (size_t)q * m / (size_t)s->recv_parts;
    size_t hi = (size_t)(q + 1) * m / (size_t)s->recv_parts;
    int j0 = (int)(lo * (size_t)s->send_parts / m);
    int j1 = (int)((hi - 1) * (size_t)s->send_parts / m);
    int64_t r = s->ready[j0];
    for (int j = j0 + 1; j <= j1; j++)
        if (s->ready[j] < r)
            r = s->ready[j];
    return r;
}

/* Length of the union of intervals, split at `cut`: before and after it. */
static void union_split(interval *iv, int n, int64_t cut, int64_t *before, int64_t *after)
{
    qsort(iv, (size_t)n, sizeof *iv, cmp_interval);
    *before = *after = 0;
    int64_t lo = iv[0].lo, hi = iv[0].hi;
    for (int i = 1; i <= n; i++) {
        if (i < n && iv[i].lo <= hi) {
            if (iv[i].hi > hi) /* keep the longer end: nested intervals do not shorten the run */
                hi = iv[i].hi;
            continue;
        }
        if (hi > lo) {
            if (hi <= cut)
                *before += hi - lo;
            else if (lo >= cut)
                *after += hi - lo;
            else {
                *before += cut - lo;
                *after += hi - cut;
            }
        }
        if (i < n) {
            lo = iv[i].lo;
            hi = iv[i].hi;
        }
    }
}

void p2p_compute_iteration(const p2p_stamps *s, p2p_iteration *out)
{
    int64_t first_ready = s->ready[0], last_ready = s->ready[0];
    for (int j = 1; j < s->send_parts; j++) {
        if (s->ready[j] < first_ready)
            first_ready = s->ready[j];
        if (s->ready[j] > last_ready)
            last_ready = s->ready[j];
    }
    int64_t last_arrival = s->arrival[0];
    for (int q = 1; q < s->recv_parts; q++)
        if (s->arrival[q] > last_arrival)
            last_arrival = s->arrival[q];
    int64_t join = s->compute_end[0];
    for (int t = 1; t < s->threads; t++)
        if (s->compute_end[t] > join)
            join = s->compute_end[t];

    interval *iv = malloc((size_t)s->recv_parts * sizeof *iv);
    for (int q = 0; q < s->recv_parts; q++) {
        iv[q].lo = p2p_recv_ready(s, q);
        iv[q].hi = s->arrival[q] > iv[q].lo ? s->arrival[q] : iv[q].lo;
    }
    int arrived_early = 0;
    for (int q = 0; q < s->recv_parts; q++)
        arrived_early += s->arrival[q] <= join;
    int64_t before, after;
    union_split(iv, s->recv_parts, join, &before, &after);
    free(iv);

    out->t_part_us = (double)(last_arrival - first_ready) / 1e3;
    out->t_last_us = (double)(last_arrival - last_ready) / 1e3;
    out->t_pt2pt_us = (double)s->pt2pt_ns / 1e3;
    out->t_before_join_us = (double)before / 1e3;
    out->t_after_join_us = (double)after / 1e3;
    out->t_union_us = (double)(before + after) / 1e3;
    out->overhead = out->t_pt2pt_us > 0 ? out->t_part_us / out->t_pt2pt_us : NAN;
    out->perceived_bw = out->t_last_us > 0 ? (double)s->bytes / out->t_last_us : NAN;
    double avail = out->t_pt2pt_us > 0 ? 1.0 - out->t_after_join_us / out->t_pt2pt_us : NAN;
    out->availability = 100.0 * (avail > 0.0 ? avail : 0.0);
    out->early_bird = before + after > 0 ? 100.0 * (double)before / (double)(before + after) : 0.0;
    out->early_arrival = 100.0 * arrived_early / s->recv_parts;
}
