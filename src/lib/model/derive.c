/* From PRTT measurements to LogGP parameters (the method of Hoefler, Lichei and
 * Rehm, with L computed with the overheads removed and one (g, G) per protocol
 * segment). Pure computation: partita-loggp measures, this derives. */
#include "partita/model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Protocol-switch detection thresholds (see detect_switches). */
#define SWITCH_REL_TOL 0.25
#define SWITCH_LOOKAHEAD 3

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Size-independent part a of v(s) ~ a + b s, fitted with relative weights;
 * the smallest value when the fit is undetermined. Never negative. */
static double intercept(const ptm_loggp_sample *s, size_t n, const double *v)
{
    double *x = malloc(n * sizeof *x), *w = malloc(n * sizeof *w);
    double a = INFINITY, b;
    if (x && w) {
        for (size_t i = 0; i < n; i++) {
            x[i] = (double)s[i].bytes;
            w[i] = 1.0 / fmax(v[i] * v[i], 1e-6);
        }
        if (ptm_fit_line(n, x, v, w, &a, &b, NULL))
            a = INFINITY;
    }
    if (!isfinite(a))
        for (size_t i = 0; i < n; i++)
            a = fmin(a, v[i]);
    free(x);
    free(w);
    return fmax(a, 0.0);
}

/* Per-size L with the segment's overheads removed. The segment's L is their
 * median over the sizes whose ping-pong is at most 4 times the segment's
 * smallest: at larger sizes L is a small difference of large, noisy times. */
static void segment_latency(ptm_loggp_sample *s, size_t n, ptm_segment *seg)
{
    double *v = malloc(n * sizeof *v), shortest = INFINITY;
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
        s[i].L_us = s[i].prtt1_us / 2 - seg->o_s - seg->o_r - seg->G * (double)(s[i].bytes ? s[i].bytes - 1 : 0);
        shortest = fmin(shortest, s[i].prtt1_us);
    }
    for (size_t i = 0; v && i < n; i++)
        if (s[i].prtt1_us <= 4 * shortest)
            v[nv++] = s[i].L_us;
    seg->L = nv ? median(v, nv) : s[0].L_us;
    free(v);
}

/* When o_s + o_r exceed what the ping-pong leaves for them (L below the wire
 * latency L0), the CPU overheads overlapped the transfer: on shared memory the
 * processes copy the data themselves, so their "overheads" contain part of the
 * transfer. Scale them down until a single message takes the measured half
 * ping-pong again; g, G keep the measured throughput. */
static void overlap_overheads(ptm_loggp_sample *s, size_t n, ptm_segment *seg, double L0)
{
    double total = seg->o_s + seg->o_r, excess = L0 - seg->L;
    double keep = total > 0 ? fmax(0.0, (total - excess) / total) : 0.0;
    seg->o_s *= keep;
    seg->o_r *= keep;
    segment_latency(s, n, seg);
    seg->L = fmax(seg->L, L0); /* overheads at 0 and still short: nothing left to scale */
}

static int fit_segment(ptm_loggp_sample *s, size_t n, ptm_segment *seg)
{
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    double *os = malloc(n * sizeof *os), *orr = malloc(n * sizeof *orr);
    int rc = -1;
    if (!x || !y || !w || !os || !orr)
        goto out;
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)(s[i].bytes ? s[i].bytes - 1 : 0);
        y[i] = s[i].gap_us;
        w[i] = 1.0 / fmax(y[i] * y[i], 1e-6);
        os[i] = s[i].o_s_us;
        orr[i] = s[i].o_r_us;
    }
    double g, G;
    if (n >= 2 && ptm_fit_line(n, x, y, w, &g, &G, NULL) == 0 && G >= 0) {
        seg->g = fmax(g, 0.0);
        seg->G = G;
    } else {
        /* One size, or a falling line: no bandwidth term can be resolved. */
        memcpy(w, y, n * sizeof *y);
        seg->g = fmax(median(w, n), 0.0);
        seg->G = 0.0;
    }
    seg->o_s = intercept(s, n, os);
    seg->o_r = intercept(s, n, orr);
    segment_latency(s, n, seg);
    seg->max_bytes = s[n - 1].bytes;
    rc = 0;
out:
    free(x);
    free(y);
    free(w);
    free(os);
    free(orr);
    return rc;
}

/* A protocol switch shows as a change of level or slope in the per-message gap,
 * or as a jump in the ping-pong time alone (a handshake that back-to-back
 * messages hide). The gap series is split first; each piece is then split where
 * its ping-pong jumps. (The ping-pong alone is a poor detector: a rendezvous
 * protocol often has the higher bandwidth, so its line meets the eager one.) */
static int detect_switches(size_t n, const double *x, double *y, const ptm_loggp_sample *s, int max_seg,
                           size_t *starts)
{
    size_t gap_starts[PTM_MAX_SEGMENTS];
    for (size_t i = 0; i < n; i++)
        y[i] = s[i].gap_us;
    int ngap = ptm_detect_segments(n, x, y, max_seg, SWITCH_REL_TOL, SWITCH_LOOKAHEAD, gap_starts);
    for (size_t i = 0; i < n; i++)
        y[i] = s[i].prtt1_us / 2;
    int nseg = 0;
    for (int k = 0; k < ngap && nseg < max_seg; k++) {
        size_t lo = gap_starts[k], hi = k + 1 < ngap ? gap_starts[k + 1] : n;
        size_t sub[PTM_MAX_SEGMENTS];
        int room = max_seg - nseg - (ngap - k - 1); /* keep one for each later gap piece */
        int nsub = ptm_detect_segments(hi - lo, x + lo, y + lo, room > 0 ? room : 1, SWITCH_REL_TOL,
                                       SWITCH_LOOKAHEAD, sub);
        for (int j = 0; j < nsub; j++)
            starts[nseg++] = lo + sub[j];
    }
    return nseg;
}

/* Segment starts at the switches the caller knows (a size > known[k] starts a
 * new segment), at most max_seg segments; ranges with no size are skipped.
 * Returns the count; the last one is where detection may go on. */
static int split_known(size_t n, const ptm_loggp_sample *s, const size_t *known, int nknown, int max_seg,
                       size_t *starts)
{
    int nseg = 1;
    starts[0] = 0;
    for (int k = 0; k < nknown && nseg < max_seg; k++) {
        size_t i = starts[nseg - 1];
        while (i < n && s[i].bytes <= known[k])
            i++;
        if (i > starts[nseg - 1] && i < n)
            starts[nseg++] = i;
    }
    return nseg;
}

int ptm_loggp_derive_known(ptm_loggp_sample *samples, size_t n, int nmsg, int max_seg, const size_t *known,
                           int nknown, ptm_params *out, char *err, size_t errlen)
{
    if (n == 0 || nmsg < 2) {
        snprintf(err, errlen, "need at least one message size and n >= 2 messages per round trip");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const ptm_loggp_sample *s = &samples[i];
        if (!(s->prtt1_us > 0) || !isfinite(s->prttn_us) || !isfinite(s->prttd_us) ||
            !isfinite(s->delay_us) || !isfinite(s->o_r_us) || (i > 0 && s->bytes <= samples[i - 1].bytes)) {
            snprintf(err, errlen, "sample %zu (%zu bytes): round trips must be positive and sizes ascending", i,
                     s->bytes);
            return -1;
        }
    }
    if (max_seg < 1 || max_seg > PTM_MAX_SEGMENTS)
        max_seg = PTM_MAX_SEGMENTS;
    for (int k = 0; k < nknown; k++)
        if (known[k] == 0 || (k > 0 && known[k] <= known[k - 1])) {
            snprintf(err, errlen, "known protocol switches must be ascending sizes > 0");
            return -1;
        }
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    size_t starts[PTM_MAX_SEGMENTS];
    if (!x || !y) {
        free(x);
        free(y);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        ptm_loggp_sample *s = &samples[i];
        s->gap_us = (s->prttn_us - s->prtt1_us) / (nmsg - 1);
        if (s->o_s_us < 0 || !isfinite(s->o_s_us))
            s->o_s_us = fmax((s->prttd_us - s->prtt1_us) / (nmsg - 1) - s->delay_us, 0.0);
        x[i] = (double)s->bytes;
    }
    int nseg = split_known(n, samples, known, nknown, max_seg, starts);
    if (nseg < max_seg) { /* beyond the known switches: detected ones, with the segments left */
        size_t lo = starts[nseg - 1];
        int more = detect_switches(n - lo, x + lo, y + lo, samples + lo, max_seg - nseg + 1, starts + nseg - 1);
        for (int j = nseg - 1; j < nseg - 1 + more; j++)
            starts[j] += lo;
        nseg += more - 1;
    }
    free(x);
    free(y);
    memset(out, 0, sizeof *out);
    out->nseg = nseg;
    for (int j = 0; j < nseg; j++) {
        size_t lo = starts[j], hi = j + 1 < nseg ? starts[j + 1] : n;
        for (size_t i = lo; i < hi; i++)
            samples[i].segment = j;
        if (fit_segment(samples + lo, hi - lo, &out->seg[j])) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        /* a known switch ends the segment where it is, not at its last measured size */
        for (int k = 0; k < nknown && j + 1 < nseg; k++)
            if (known[k] >= out->seg[j].max_bytes && known[k] < samples[hi].bytes)
                out->seg[j].max_bytes = known[k];
    }
    /* One wire latency; what a later protocol adds on top of it is its handshake. */
    double L0 = fmax(out->seg[0].L, 0.0);
    for (int j = 0; j < nseg; j++) {
        ptm_segment *g = &out->seg[j];
        size_t lo = starts[j], hi = j + 1 < nseg ? starts[j + 1] : n;
        if (g->L < L0)
            overlap_overheads(samples + lo, hi - lo, g, L0);
        g->handshake_us = j == 0 ? 0.0 : fmax(g->L - L0, 0.0);
        g->L = L0;
    }
    out->seg[nseg - 1].max_bytes = SIZE_MAX;
    snprintf(out->source, sizeof out->source, "partita-loggp measurement");
    return ptm_params_check(out, err, errlen);
}

int ptm_loggp_derive(ptm_loggp_sample *samples, size_t n, int nmsg, int max_seg, ptm_params *out, char *err,
                     size_t errlen)
{
    return ptm_loggp_derive_known(samples, n, nmsg, max_seg, NULL, 0, out, err, errlen);
}
