/* Least-squares fit and protocol-segment detection on synthetic data. */
#include "check.h"
#include "partita/model.h"

#include <stdint.h>
#include <string.h>

static void exact_line(void)
{
    double x[] = { 1, 2, 4, 8, 16 }, y[5], a, b, rms;
    for (int i = 0; i < 5; i++)
        y[i] = 0.4 + 0.002 * x[i];
    CHECK(ptm_fit_line(5, x, y, NULL, &a, &b, &rms) == 0);
    CHECK_NEAR(a, 0.4, 1e-12);
    CHECK_NEAR(b, 0.002, 1e-12);
    CHECK_NEAR(rms, 0.0, 1e-12);
}

static void noisy_line_hand_computed(void)
{
    /* Points (0,1) (1,3) (2,2) (3,5): mean x 1.5, mean y 2.75, Sxx 5, Sxy 5.5
     * -> b = 1.1, a = 2.75 - 1.65 = 1.1 */
    double x[] = { 0, 1, 2, 3 }, y[] = { 1, 3, 2, 5 }, a, b;
    CHECK(ptm_fit_line(4, x, y, NULL, &a, &b, NULL) == 0);
    CHECK_NEAR(b, 1.1, 1e-12);
    CHECK_NEAR(a, 1.1, 1e-12);
    /* Weights: zero weight on the outlier (2,2) gives the line through the others. */
    double w[] = { 1, 1, 0, 1 };
    CHECK(ptm_fit_line(4, x, y, w, &a, &b, NULL) == 0);
    /* (0,1) (1,3) (3,5): mean x 4/3, mean y 3, Sxx = 14/3, Sxy = 6 -> b = 9/7 */
    CHECK_NEAR(b, 9.0 / 7.0, 1e-12);
    CHECK_NEAR(a, 3 - 9.0 / 7.0 * 4.0 / 3.0, 1e-12);
}

static void undetermined_fits(void)
{
    double x[] = { 5, 5, 5 }, y[] = { 1, 2, 3 }, a, b;
    CHECK(ptm_fit_line(3, x, y, NULL, &a, &b, NULL) == -1);
    CHECK(ptm_fit_line(1, x, y, NULL, &a, &b, NULL) == -1);
}

/* Eager up to 16 KiB (g = 0.5, G = 0.0002), rendezvous above (6 us handshake, G = 0.00016),
 * geometric sizes 1 B .. 4 MiB, with +-3% deterministic "noise". */
static void eager_rendezvous_switch(void)
{
    double x[23], y[23];
    size_t n = 0;
    for (size_t s = 1; s <= (4u << 20); s *= 2, n++) {
        double noise = 1 + 0.03 * ((n % 3) - 1.0);
        x[n] = (double)s;
        y[n] = (s <= 16384 ? 0.5 + 0.0002 * s : 6.0 + 0.00016 * s) * noise;
    }
    size_t starts[4];
    int nseg = ptm_detect_segments(n, x, y, 4, 0.25, 2, starts);
    CHECK(nseg == 2);
    CHECK(starts[0] == 0);
    CHECK(nseg == 2 && x[starts[1]] == 32768.0);
    /* Per-segment fit recovers the parameters (relative weights). */
    if (nseg == 2) {
        double w[23], a, b;
        for (size_t i = 0; i < n; i++)
            w[i] = 1 / (y[i] * y[i]);
        CHECK(ptm_fit_line(starts[1], x, y, w, &a, &b, NULL) == 0);
        CHECK_NEAR(a, 0.5, 0.05);
        CHECK_NEAR(b, 0.0002, 0.00002);
        CHECK(ptm_fit_line(n - starts[1], x + starts[1], y + starts[1], w + starts[1], &a, &b, NULL) == 0);
        CHECK_NEAR(a, 6.0, 1.0);
        CHECK_NEAR(b, 0.00016, 0.00001);
    }
}

static void no_switch_and_single_outlier(void)
{
    double x[20], y[20];
    size_t n = 0;
    for (size_t s = 1; n < 20; s *= 2, n++) {
        x[n] = (double)s;
        y[n] = 0.5 + 0.0002 * s;
    }
    size_t starts[4];
    CHECK(ptm_detect_segments(n, x, y, 4, 0.25, 2, starts) == 1);
    /* One outlier is not a protocol switch (look-ahead of 2). */
    y[10] *= 3;
    CHECK(ptm_detect_segments(n, x, y, 4, 0.25, 2, starts) == 1);
    /* max_seg caps the count. */
    for (size_t i = 12; i < n; i++)
        y[i] += 10;
    CHECK(ptm_detect_segments(n, x, y, 1, 0.25, 2, starts) == 1);
    CHECK(ptm_detect_segments(n, x, y, 4, 0.25, 2, starts) == 2);
    CHECK(ptm_detect_segments(n, x, y, 0, 0.25, 2, starts) == 0);
}

/* PRTT values the LogGP relations predict for a known machine: eager up to 16 KiB,
 * rendezvous above with a 3 us handshake and twice the bandwidth. */
static void synthetic_prtt(ptm_loggp_sample *out, size_t *count, int nmsg)
{
    const ptm_segment eager = { 16384, 0.3, 0.4, 0.35, 0.5, 2e-4, 0 };
    const ptm_segment rndv = { SIZE_MAX, 0.3, 0.6, 0.5, 0.8, 1e-4, 3.0 };
    size_t n = 0;
    for (size_t s = 1; s <= (4u << 20); s *= 2, n++) {
        const ptm_segment *p = s <= 16384 ? &eager : &rndv;
        double gstar = fmax(p->g, fmax(p->o_s, p->o_r));
        double p1 = 2 * (p->L + p->handshake_us + p->o_s + p->o_r + p->G * (s - 1));
        out[n] = (ptm_loggp_sample){ .bytes = s, .prtt1_us = p1,
                                     .prttn_us = p1 + (nmsg - 1) * (gstar + p->G * (s - 1)),
                                     .prttd_us = p1 + (nmsg - 1) * (p->o_s + p1), .delay_us = p1,
                                     .o_r_us = p->o_r, .o_s_us = -1 };
    }
    *count = n;
}

static void derive_recovers_parameters(void)
{
    ptm_loggp_sample s[32];
    size_t n;
    ptm_params p;
    char err[256];
    synthetic_prtt(s, &n, 10);
    CHECK(ptm_loggp_derive(s, n, 10, 8, &p, err, sizeof err) == 0);
    CHECK(p.nseg == 2);
    CHECK(p.seg[0].max_bytes == 16384);
    CHECK(p.seg[1].max_bytes == SIZE_MAX);
    CHECK_NEAR(p.seg[0].L, 0.3, 1e-6);
    CHECK_NEAR(p.seg[0].o_s, 0.4, 1e-6);
    CHECK_NEAR(p.seg[0].o_r, 0.35, 1e-6);
    CHECK_NEAR(p.seg[0].g, 0.5, 1e-6);
    CHECK_NEAR(p.seg[0].G, 2e-4, 1e-10);
    CHECK_NEAR(p.seg[0].handshake_us, 0.0, 1e-6);
    CHECK_NEAR(p.seg[1].L, 0.3, 1e-6);
    CHECK_NEAR(p.seg[1].handshake_us, 3.0, 1e-6);
    CHECK_NEAR(p.seg[1].o_s, 0.6, 1e-6);
    CHECK_NEAR(p.seg[1].g, 0.8, 1e-6);
    CHECK_NEAR(p.seg[1].G, 1e-4, 1e-10);
    CHECK(s[14].segment == 0 && s[15].segment == 1);
    /* Netgauge's L (half the smallest round trip) would be 1.05 here: ours removes
     * the overheads. */
    CHECK_NEAR(s[0].L_us, 0.3, 1e-6);
    /* A handshake without a change of bandwidth shows only in the ping-pong. */
    for (size_t i = 15; i < n; i++)
        s[i].prtt1_us = 2 * (0.3 + 0.4 + 0.35 + 2e-4 * (s[i].bytes - 1) + 6.0);
    for (size_t i = 0; i < n; i++) {
        s[i].prttn_us = s[i].prtt1_us + 9 * (0.5 + 2e-4 * (s[i].bytes - 1));
        s[i].prttd_us = s[i].prtt1_us + 9 * (0.4 + s[i].prtt1_us);
        s[i].delay_us = s[i].prtt1_us;
        s[i].o_r_us = 0.35;
        s[i].o_s_us = i % 2 ? 0.4 : -1; /* timed directly or derived: the same */
    }
    CHECK(ptm_loggp_derive(s, n, 10, 8, &p, err, sizeof err) == 0);
    CHECK(p.nseg == 2 && p.seg[0].max_bytes == 16384);
    CHECK_NEAR(p.seg[1].handshake_us, 6.0, 1e-6);
    CHECK_NEAR(p.seg[1].G, 2e-4, 1e-10);
    /* One segment allowed: everything in one fit, still valid. */
    synthetic_prtt(s, &n, 10);
    CHECK(ptm_loggp_derive(s, n, 10, 1, &p, err, sizeof err) == 0);
    CHECK(p.nseg == 1);
    /* Bad input. */
    CHECK(ptm_loggp_derive(s, 0, 10, 8, &p, err, sizeof err) == -1);
    CHECK(ptm_loggp_derive(s, n, 1, 8, &p, err, sizeof err) == -1);
    s[3].bytes = 1;
    CHECK(ptm_loggp_derive(s, n, 10, 8, &p, err, sizeof err) == -1);
    CHECK(strstr(err, "sample 3") != NULL);
}

/* Shared memory: o_s and o_r contain the copy, so o_s + o_r exceed what the
 * ping-pong leaves (L would be negative). They are scaled so that one message
 * takes the measured half ping-pong again. */
static void overlapping_overheads_are_scaled(void)
{
    ptm_loggp_sample s[12];
    ptm_params p;
    char err[256];
    size_t n = 0;
    for (size_t b = 1; n < 12; b *= 4, n++) {
        double half = 0.3 + 0.5 + 0.5 + 1e-4 * (b - 1); /* L0 = 0.3, true o_s = o_r = 0.5 */
        s[n] = (ptm_loggp_sample){ .bytes = b, .prtt1_us = 2 * half, .prttn_us = 2 * half + 9 * (0.6 + 1e-4 * (b - 1)),
                                   .prttd_us = 0, .delay_us = 2 * half, .o_r_us = 1.0, .o_s_us = 1.0 };
    }
    CHECK(ptm_loggp_derive(s, n, 10, 1, &p, err, sizeof err) == 0);
    CHECK(p.nseg == 1);
    /* measured o_s + o_r = 2 but the ping-pong leaves 1.3 - L: L clamps at 0 and
     * the overheads shrink to 1.3 together (0.65 each) */
    CHECK_NEAR(p.seg[0].L, 0.0, 1e-9);
    CHECK_NEAR(p.seg[0].o_s + p.seg[0].o_r, 1.3, 1e-6);
    CHECK_NEAR(p.seg[0].o_s, p.seg[0].o_r, 1e-9);
    /* the model's single message equals the half ping-pong */
    size_t k = 4096;
    double r = 0;
    CHECK_NEAR(ptm_completion_us(&p, 1, &k, &r), 1.3 + 1e-4 * 4095, 1e-6);
}

/* Round trips of the sizes first, 2 first, ... (doubling, up to 4 MiB) as
 * segments seg[0..nseg) would give them (each segment's L includes its
 * handshake here, as derive splits it off). */
static size_t segmented_prtt(ptm_loggp_sample *out, size_t first, int nmsg, const ptm_segment *seg, int nseg)
{
    size_t n = 0;
    for (size_t s = first; s <= (4u << 20); s *= 2, n++) {
        const ptm_segment *p = seg;
        while (p < seg + nseg - 1 && s > p->max_bytes)
            p++;
        double gstar = fmax(p->g, fmax(p->o_s, p->o_r));
        double p1 = 2 * (p->L + p->handshake_us + p->o_s + p->o_r + p->G * (s - 1));
        out[n] = (ptm_loggp_sample){ .bytes = s, .prtt1_us = p1,
                                     .prttn_us = p1 + (nmsg - 1) * (gstar + p->G * (s - 1)),
                                     .prttd_us = p1 + (nmsg - 1) * (p->o_s + p1), .delay_us = p1,
                                     .o_r_us = p->o_r, .o_s_us = p->o_s };
    }
    return n;
}

/* A transport's own switches (the fabric's inject size and largest write in
 * pieces) are kept as given, even where the data hardly show them, and even
 * when no size was measured at the switch itself; switches beyond the last
 * one are still detected when segments are left. */
static void known_switches_are_kept(void)
{
    const ptm_segment seg[] = {
        { 4096, 0.1, 0.15, 0.17, 0.20, 1.2e-4, 0 },
        { 16384, 0.1, 0.23, 0.05, 0.25, 1.25e-4, 0 },   /* a change the detector misses */
        { 256u << 10, 0.1, 0.20, 0.96, 1.07, 1.0e-4, 4.5 },
        { SIZE_MAX, 0.1, 0.20, 0.96, 1.07, 3.0e-4, 4.5 }, /* a bandwidth change beyond */
    };
    const size_t known[] = { 4096, 16384 };
    ptm_loggp_sample s[32];
    ptm_params p;
    char err[256];
    size_t n = segmented_prtt(s, 1, 10, seg, 4);
    CHECK(ptm_loggp_derive(s, n, 10, 4, &p, err, sizeof err) == 0);
    CHECK(p.seg[0].max_bytes != 4096); /* what the detector alone finds */
    CHECK(ptm_loggp_derive_known(s, n, 10, 4, known, 2, &p, err, sizeof err) == 0);
    CHECK(p.nseg == 4);
    CHECK(p.seg[0].max_bytes == 4096 && p.seg[1].max_bytes == 16384 && p.seg[2].max_bytes == (256u << 10));
    CHECK_NEAR(p.seg[1].g, 0.25, 1e-6);
    CHECK_NEAR(p.seg[1].G, 1.25e-4, 1e-10);
    CHECK_NEAR(p.seg[1].o_s, 0.23, 1e-6);
    CHECK_NEAR(p.seg[2].handshake_us, 4.5, 1e-6);
    CHECK_NEAR(p.seg[3].G, 3.0e-4, 1e-10);
    CHECK(s[12].segment == 0 && s[13].segment == 1 && s[14].segment == 1 && s[15].segment == 2);
    /* no segment left for detection: the known ones and the rest in one */
    CHECK(ptm_loggp_derive_known(s, n, 10, 3, known, 2, &p, err, sizeof err) == 0);
    CHECK(p.nseg == 3 && p.seg[1].max_bytes == 16384 && p.seg[2].max_bytes == SIZE_MAX);
    /* sizes 3, 6, ... miss both switches: the segments still end there */
    n = segmented_prtt(s, 3, 10, seg, 4);
    CHECK(ptm_loggp_derive_known(s, n, 10, 3, known, 2, &p, err, sizeof err) == 0);
    CHECK(p.nseg == 3 && p.seg[0].max_bytes == 4096 && p.seg[1].max_bytes == 16384);
    /* a switch beyond every size, or before the first, makes no empty segment */
    const size_t outside[] = { 2, 1u << 30 };
    ptm_params detected;
    n = segmented_prtt(s, 1024, 10, seg, 4);
    CHECK(ptm_loggp_derive(s, n, 10, 4, &detected, err, sizeof err) == 0);
    CHECK(ptm_loggp_derive_known(s, n, 10, 4, outside, 2, &p, err, sizeof err) == 0);
    CHECK(p.nseg == detected.nseg && p.seg[0].max_bytes == detected.seg[0].max_bytes);
    const size_t descending[] = { 16384, 4096 };
    CHECK(ptm_loggp_derive_known(s, n, 10, 4, descending, 2, &p, err, sizeof err) == -1);
    CHECK(strstr(err, "ascending") != NULL);
}

int main(void)
{
    exact_line();
    noisy_line_hand_computed();
    undetermined_fits();
    eager_rendezvous_switch();
    no_switch_and_single_outlier();
    derive_recovers_parameters();
    overlapping_overheads_are_scaled();
    known_switches_are_kept();
    CHECK_DONE();
}
