/* The Partitioned LogGP model (partita's derivation from LogGP, docs/model.md):
 * transport messages leave through one FIFO injection channel in ready-time
 * order. Message j (K_j bytes, ready at R_j) has left completely at
 *   d_j = max(R_j + o_pready + o_s + h + G(K_j-1),  d_{j-1} + g* + G(K_j-1))
 * with g* = max(g, o_s, o_r) and h the rendezvous handshake of its size range,
 * and is usable at the receiver at d_j + L + o_r. */
#include "partita/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double ready;
    size_t index;
} ready_slot;

static int by_ready(const void *a, const void *b)
{
    const ready_slot *x = a, *y = b;
    if (x->ready != y->ready)
        return x->ready < y->ready ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

static double gstar(const ptm_segment *s)
{
    return fmax(s->g, fmax(s->o_s, s->o_r));
}

static double wire_us(const ptm_segment *s, size_t bytes)
{
    return bytes > 0 ? s->G * (double)(bytes - 1) : 0.0;
}

double ptm_arrivals_us(const ptm_params *p, size_t nmsg, const size_t *msg_bytes,
                       const double *ready_us, double *arrival_us)
{
    if (!p || nmsg == 0 || !msg_bytes || !ready_us || p->nseg < 1)
        return -1.0;
    ready_slot local[64];
    ready_slot *order = nmsg <= 64 ? local : malloc(nmsg * sizeof *order);
    if (!order)
        return -1.0;
    for (size_t j = 0; j < nmsg; j++) {
        if (!isfinite(ready_us[j])) {
            if (order != local)
                free(order);
            return -1.0;
        }
        order[j].ready = ready_us[j];
        order[j].index = j;
    }
    qsort(order, nmsg, sizeof *order, by_ready);
    double departed = 0, completion = 0;
    for (size_t k = 0; k < nmsg; k++) {
        size_t j = order[k].index;
        const ptm_segment *s = ptm_segment_for(p, msg_bytes[j]);
        double wire = wire_us(s, msg_bytes[j]);
        double alone = order[k].ready + p->o_pready + s->o_s + s->handshake_us + wire;
        departed = k == 0 ? alone : fmax(alone, departed + gstar(s) + wire);
        double arrival = departed + s->L + s->o_r;
        if (arrival_us)
            arrival_us[j] = arrival;
        completion = fmax(completion, arrival);
    }
    if (order != local)
        free(order);
    return completion;
}

double ptm_completion_us(const ptm_params *p, size_t nmsg, const size_t *msg_bytes,
                         const double *ready_us)
{
    return ptm_arrivals_us(p, nmsg, msg_bytes, ready_us, NULL);
}

int ptm_pattern_ready(ptm_pattern pattern, int user_parts, double delay_us, double *ready_us)
{
    if (user_parts < 1 || !ready_us || !isfinite(delay_us) || delay_us < 0)
        return -1;
    for (int u = 0; u < user_parts; u++) {
        switch (pattern) {
        case PTM_ALL_AT_ONCE: ready_us[u] = 0; break;
        case PTM_LAGGARD: ready_us[u] = u == user_parts - 1 ? delay_us : 0; break;
        case PTM_UNIFORM: ready_us[u] = user_parts > 1 ? delay_us * u / (user_parts - 1) : 0; break;
        default: return -1;
        }
    }
    return 0;
}

/* Bytes of user partition u (the last takes the remainder). */
static size_t partition_bytes(size_t total, size_t U, size_t u)
{
    size_t part = total / U;
    return u == U - 1 ? total - part * (U - 1) : part;
}

void ptm_message_span(size_t total, size_t U, size_t T, int cut, size_t i, size_t *a, size_t *b, size_t *lo,
                      size_t *hi)
{
    size_t part = total / U;
    if (!cut) {
        *lo = (size_t)ptm_group_first((int)U, (int)T, (int)i);
        *hi = (size_t)ptm_group_first((int)U, (int)T, (int)i + 1) - 1;
        *a = *lo * part;
        *b = *hi == U - 1 ? total : (*hi + 1) * part;
        return;
    }
    *a = ptm_piece_offset(total, T, i);
    *b = ptm_piece_offset(total, T, i + 1);
    *lo = *a / part < U ? *a / part : U - 1;
    *hi = (*b - 1) / part < U ? (*b - 1) / part : U - 1;
}

static double layout_us(const ptm_params *p, size_t total_bytes, int user_parts, int transport, int cut,
                        const double *user_ready, double *user_arrival_us)
{
    if (!p || user_parts < 1 || transport < 1 || (!cut && transport > user_parts) ||
        (cut && ((size_t)transport > total_bytes || total_bytes / (size_t)user_parts == 0)))
        return -1.0;
    size_t T = (size_t)transport, U = (size_t)user_parts, a, b, lo, hi;
    size_t *bytes = malloc(T * sizeof *bytes);
    double *ready = malloc(T * sizeof *ready);
    double *arrival = malloc(T * sizeof *arrival);
    double result = -1.0;
    if (!bytes || !ready || !arrival)
        goto out;
    for (size_t i = 0; i < T; i++) {
        ptm_message_span(total_bytes, U, T, cut, i, &a, &b, &lo, &hi);
        bytes[i] = b - a;
        ready[i] = user_ready ? user_ready[lo] : 0;
        for (size_t u = lo + 1; user_ready && u <= hi; u++) /* ready when every partition it holds bytes of is */
            ready[i] = fmax(ready[i], user_ready[u]);
    }
    result = ptm_arrivals_us(p, T, bytes, ready, arrival);
    if (result >= 0 && user_arrival_us) {
        for (size_t u = 0; u < U; u++)
            user_arrival_us[u] = -INFINITY; /* every partition is in some message */
        for (size_t i = 0; i < T; i++) {
            ptm_message_span(total_bytes, U, T, cut, i, &a, &b, &lo, &hi);
            for (size_t u = lo; u <= hi; u++) /* a partition is usable when its last byte is */
                user_arrival_us[u] = fmax(user_arrival_us[u], arrival[i]);
        }
    }
out:
    free(bytes);
    free(ready);
    free(arrival);
    return result;
}

double ptm_grouped_us(const ptm_params *p, size_t total_bytes, int user_parts, int transport,
                      const double *user_ready, double *user_arrival_us)
{
    /* more messages than partitions: the buffer is cut */
    return layout_us(p, total_bytes, user_parts, transport, transport > user_parts, user_ready, user_arrival_us);
}

double ptm_cut_us(const ptm_params *p, size_t total_bytes, int user_parts, int transport,
                  const double *user_ready, double *user_arrival_us)
{
    return layout_us(p, total_bytes, user_parts, transport, 1, user_ready, user_arrival_us);
}

size_t ptm_piece_offset(size_t bytes, size_t pieces, size_t i)
{
    /* Balanced like the groups: piece sizes differ by at most one byte.
     * floor(bytes * i / pieces) without the product overflowing. */
    if (!pieces)
        return 0;
    size_t q = bytes / pieces, r = bytes % pieces;
    return q * i + r * i / pieces;
}

/* The candidate after t: the next divisor of U (power of two if pow2_only),
 * then the multiples of U (power-of-two multiples if pow2_only). Starts at 1. */
static long long next_candidate(long long t, int U, int pow2_only)
{
    if (t >= U)
        return pow2_only ? 2 * t : t + U;
    for (t++; t < U; t++)
        if (U % t == 0 && (!pow2_only || (t & (t - 1)) == 0))
            return t;
    return !pow2_only || (U & (U - 1)) == 0 ? U : 2LL * U; /* past U: the cut layouts */
}

int ptm_too_many_eager(const ptm_params *p, size_t total_bytes, long long t)
{
    return ptm_eager_limit(p) && t > ptm_max_eager_messages(p) && total_bytes / (size_t)t <= ptm_eager_limit(p);
}

/* The fewest groups of consecutive partitions that all stay in the first
 * (eager) segment, or 0 when there is no protocol switch or a partition alone
 * is past it. It is seldom a divisor of U: under Open MPI (eager up to 4016
 * bytes) 64 KiB in 512 partitions fit in 17 groups of 30-31 partitions, where
 * the divisors offer 16 rendezvous groups or 32 eager ones. Balanced groups
 * (ptm_group_first) hold at most ceil(U/n) partitions. */
static long long eager_fit_groups(const ptm_params *p, size_t total_bytes, int U)
{
    size_t eager = ptm_eager_limit(p);
    if (!eager || U < 2)
        return 0;
    size_t largest = partition_bytes(total_bytes, (size_t)U, (size_t)U - 1);
    if (largest == 0 || largest > eager)
        return 0;
    size_t per = eager / largest; /* partitions per eager group */
    return (long long)(((size_t)U + per - 1) / per);
}

/* The fewest byte-balanced pieces of the whole buffer that all stay in the
 * eager segment, or 0 when that count divides U (the groups of that count, a
 * candidate already). MPICH (eager up to 8112 bytes) moves 64 KiB in 8
 * partitions of 8 KiB best as 9 pieces of 7282 bytes: the partitions alone
 * are rendezvous messages and halves of them 16 eager messages. The bound is
 * the eager-burst limit (the pieces are all eager), not PTM_MAX_CUT_MESSAGES:
 * under Open MPI (eager up to 4016 bytes, 32 in a burst) 64 KiB is 17
 * pieces, one partition or 512. */
static long long eager_cut_messages(const ptm_params *p, size_t total_bytes, int U, int max_pieces, long long fit)
{
    size_t eager = ptm_eager_limit(p);
    if (!eager || max_pieces < 2)
        return 0;
    size_t n = (total_bytes + eager - 1) / eager;
    if (n < 2 || n > (size_t)ptm_max_eager_messages(p) || total_bytes / n < PTM_MIN_PIECE_BYTES ||
        (long long)n == fit)
        return 0;
    return n <= (size_t)U && (size_t)U % n == 0 ? 0 : (long long)n; /* a divisor: the groups of that count */
}

typedef struct {
    int count;
    int cut; /* byte-balanced pieces of the buffer (ptm_cut_us), not groups */
} layout;

/* Insert x in count order, groups before a cut; a layout already there is not repeated. */
static void insert_sorted(layout *c, int *nc, layout x)
{
    for (int k = 0; k < *nc; k++)
        if (c[k].count == x.count && c[k].cut == x.cut)
            return;
    int i = (*nc)++;
    for (; i > 0 && (c[i - 1].count > x.count || (c[i - 1].count == x.count && c[i - 1].cut > x.cut)); i--)
        c[i] = c[i - 1];
    c[i] = x;
}

/* Candidates: the divisors of user_parts (pow2_only: the power-of-two ones),
 * then user_parts * k for k = 2..max_pieces while a piece keeps at least
 * PTM_MIN_PIECE_BYTES and there are at most PTM_MAX_CUT_MESSAGES messages;
 * not with pow2_only (the paper's search), the eager fit (eager_fit_groups)
 * and, when max_pieces > 1, the eager cut (eager_cut_messages). Layouts with
 * too many eager messages are left out (one is always tried, so there is an
 * answer). Counts are tried in increasing order, groups before a cut: each
 * tried layout and its modelled time go to out/times. Returns how many, or
 * -1 on bad arguments; *last_ready is the latest ready time. */
enum { MAX_LAYOUTS = 128 };
static int tried_layouts(const ptm_params *p, size_t total_bytes, int user_parts, const double *user_ready,
                         int pow2_only, int max_pieces, layout *out, double *times, double *last_ready)
{
    if (!p || user_parts < 1)
        return -1;
    layout cand[MAX_LAYOUTS];
    int nc = 0;
    size_t smallest = total_bytes / (size_t)user_parts;
    for (long long t = 1; nc < MAX_LAYOUTS - 2 && t <= (long long)user_parts * max_pieces;
         t = next_candidate(t, user_parts, pow2_only)) {
        if (t > user_parts && (t > PTM_MAX_CUT_MESSAGES || smallest / (size_t)(t / user_parts) < PTM_MIN_PIECE_BYTES))
            break;
        cand[nc++] = (layout){ (int)t, t > user_parts };
    }
    long long fit = pow2_only ? 0 : eager_fit_groups(p, total_bytes, user_parts);
    long long straddled = pow2_only ? 0 : eager_cut_messages(p, total_bytes, user_parts, max_pieces, fit);
    if (fit > 0 && fit < user_parts && user_parts % fit != 0)
        insert_sorted(cand, &nc, (layout){ (int)fit, 0 });
    if (straddled > 0)
        insert_sorted(cand, &nc, (layout){ (int)straddled, 1 });
    *last_ready = 0;
    for (int u = 0; user_ready && u < user_parts; u++)
        *last_ready = fmax(*last_ready, user_ready[u]);
    int nt = 0;
    for (int c = 0; c < nc; c++) {
        if (ptm_too_many_eager(p, total_bytes, cand[c].count) && nt > 0)
            continue;
        double time = layout_us(p, total_bytes, user_parts, cand[c].count, cand[c].cut, user_ready, NULL);
        if (time < 0)
            return -1;
        times[nt] = time;
        out[nt++] = cand[c];
    }
    return nt;
}

/* Whether exposed time x (after the last Pready) counts as good as the best:
 * the model leaves out per-message CPU costs, so a tiny modelled gain is no gain. */
static int ties_best(double x, double best) { return x <= best * (1 + PTM_TIE_TOLERANCE) + 1e-12; }

/* The fewest messages whose exposed time is within PTM_TIE_TOLERANCE of the best. */
static int optimal_layout(const ptm_params *p, size_t total_bytes, int user_parts, const double *user_ready,
                          int pow2_only, int max_pieces, double *best_us, int *cut)
{
    layout tried[MAX_LAYOUTS];
    double times[MAX_LAYOUTS], last_ready;
    int nt = tried_layouts(p, total_bytes, user_parts, user_ready, pow2_only, max_pieces, tried, times, &last_ready);
    if (nt <= 0)
        return 0;
    double best_exposed = INFINITY;
    for (int k = 0; k < nt; k++)
        best_exposed = fmin(best_exposed, times[k] - last_ready);
    for (int k = 0; k < nt; k++) {
        if (ties_best(times[k] - last_ready, best_exposed)) {
            if (best_us)
                *best_us = times[k];
            if (cut)
                *cut = tried[k].cut;
            return tried[k].count;
        }
    }
    return 0;
}

/* Ready times of the single-laggard pattern (ptm_pattern_ready) in local
 * (256 entries) or, for more partitions, in memory the caller frees when it
 * is not local; NULL when out of memory. A bad delay counts as none. */
static double *laggard_ready(int user_parts, double delay_us, double *local)
{
    if (!isfinite(delay_us) || delay_us < 0)
        delay_us = 0;
    double *ready = user_parts <= 256 ? local : malloc((size_t)user_parts * sizeof *ready);
    if (ready)
        ptm_pattern_ready(PTM_LAGGARD, user_parts, delay_us, ready);
    return ready;
}

int ptm_layout_ranking(const ptm_params *p, size_t total_bytes, int user_parts, double delay_us, int max_pieces,
                       ptm_ranked_layout *out, int max)
{
    if (!p || user_parts < 1 || !out || max < 1)
        return 0;
    double local[256];
    double *ready = laggard_ready(user_parts, delay_us, local);
    if (!ready)
        return 0;
    layout tried[MAX_LAYOUTS];
    double times[MAX_LAYOUTS], last_ready;
    int nt = tried_layouts(p, total_bytes, user_parts, ready, 0, max_pieces < 1 ? 1 : max_pieces, tried, times,
                           &last_ready);
    if (ready != local)
        free(ready);
    /* Selection by exposed time; among ties (ptm_optimal_layout's rule) the
     * fewest messages first, so out[0] is ptm_optimal_layout's answer. */
    int n = 0;
    unsigned char used[MAX_LAYOUTS] = { 0 };
    while (n < max && n < nt) {
        double best = INFINITY;
        for (int k = 0; k < nt; k++)
            if (!used[k])
                best = fmin(best, times[k] - last_ready);
        int pick = 0;
        while (used[pick] || !ties_best(times[pick] - last_ready, best))
            pick++;
        used[pick] = 1;
        out[n++] = (ptm_ranked_layout){ tried[pick].count, tried[pick].cut, times[pick] };
    }
    return n;
}

int ptm_optimal_transport_ready(const ptm_params *p, size_t total_bytes, int user_parts,
                                const double *user_ready, int pow2_only, double *best_us)
{
    return optimal_layout(p, total_bytes, user_parts, user_ready, pow2_only, 1, best_us, NULL);
}

int ptm_optimal_layout(const ptm_params *p, size_t total_bytes, int user_parts, double delay_us, int max_pieces,
                       int *cut)
{
    if (cut)
        *cut = 0;
    if (!p || user_parts < 1)
        return 1;
    double local[256];
    double *ready = laggard_ready(user_parts, delay_us, local);
    if (!ready)
        return 1;
    int best = optimal_layout(p, total_bytes, user_parts, ready, 0, max_pieces < 1 ? 1 : max_pieces, NULL, cut);
    if (ready != local)
        free(ready);
    return best > 0 ? best : 1;
}

int ptm_optimal_transport(const ptm_params *p, size_t total_bytes, int user_parts, double delay_us)
{
    return ptm_optimal_layout(p, total_bytes, user_parts, delay_us, 1, NULL);
}

double ptm_default_delta_us(const ptm_params *p, size_t group_bytes)
{
    const ptm_segment *s = ptm_segment_for(p, group_bytes);
    return fmax(0.0, gstar(s) - s->G) + s->handshake_us;
}

double ptm_timer_delta_us(const ptm_params *p, size_t group_bytes, int group_parts)
{
    double marking = 2.0 * group_parts * p->o_pready; /* twice the model's Pready cost: margin */
    return fmax(PTM_TIMER_DELTA_MIN_US, ptm_default_delta_us(p, group_bytes) + marking);
}
