/* The PLogGP model against hand-computed cases (docs/model.md). */
#include "check.h"
#include "partita/model.h"

#include <stdint.h>
#include <string.h>

/* One eager segment with distinct values so that a wrong term shows. */
static void one_segment(ptm_params *p, double g)
{
    memset(p, 0, sizeof *p);
    p->nseg = 1;
    p->seg[0] = (ptm_segment){ .max_bytes = SIZE_MAX, .L = 2.0, .o_s = 0.5, .o_r = 0.75, .g = g, .G = 0.001 };
}

static void single_message_is_loggp(void)
{
    ptm_params p;
    one_segment(&p, 1.0);
    size_t k = 1001;
    double r = 0;
    /* o_s + G(k-1) + L + o_r = 0.5 + 1.0 + 2.0 + 0.75 */
    CHECK_NEAR(ptm_completion_us(&p, 1, &k, &r), 4.25, 1e-12);
    /* Ready later: shifted by the ready time. */
    r = 10;
    CHECK_NEAR(ptm_completion_us(&p, 1, &k, &r), 14.25, 1e-12);
    /* Grouping everything into one transport partition is the same single message. */
    CHECK_NEAR(ptm_grouped_us(&p, 4 * 1001, 4, 1, NULL, NULL), 0.5 + 0.001 * 4003 + 2.0 + 0.75, 1e-12);
}

static void two_back_to_back_messages(void)
{
    ptm_params p;
    size_t k[2] = { 1001, 1001 };
    double r[2] = { 0, 0 };
    /* g dominates: o_s + 2G(k-1) + max(g,o_s,o_r) + L + o_r */
    one_segment(&p, 1.0);
    CHECK_NEAR(ptm_completion_us(&p, 2, k, r), 0.5 + 2 * 1.0 + 1.0 + 2.0 + 0.75, 1e-12);
    /* o_r dominates the gap: max(g, o_s, o_r) = o_r */
    one_segment(&p, 0.1);
    CHECK_NEAR(ptm_completion_us(&p, 2, k, r), 0.5 + 2 * 1.0 + 0.75 + 2.0 + 0.75, 1e-12);
    /* o_s dominates */
    one_segment(&p, 0.1);
    p.seg[0].o_s = 1.5;
    CHECK_NEAR(ptm_completion_us(&p, 2, k, r), 1.5 + 2 * 1.0 + 1.5 + 2.0 + 0.75, 1e-12);
}

static void n_messages_all_at_once(void)
{
    ptm_params p;
    one_segment(&p, 1.0);
    /* T_all(n,k) = T_1(k) + (n-1)(g* + G(k-1)); n = 8, k = 1001 */
    double t = ptm_grouped_us(&p, 8 * 1001, 8, 8, NULL, NULL);
    CHECK_NEAR(t, 4.25 + 7 * (1.0 + 1.0), 1e-12);
}

static void laggard_formulas(void)
{
    ptm_params p;
    one_segment(&p, 1.0);
    const int n = 8;
    const size_t k = 1001, m = n * k;
    double ready[8];
    double t1 = 4.25, dstar = (n - 1) * (1.0 + 1.0); /* delta* = (n-1)(G(k-1) + g*) = 14 */
    /* delta < delta*: the laggard waits for the channel: T = T_1 + delta* */
    ptm_pattern_ready(PTM_LAGGARD, n, 5.0, ready);
    CHECK_NEAR(ready[n - 1], 5.0, 0);
    CHECK_NEAR(ready[0], 0.0, 0);
    CHECK_NEAR(ptm_grouped_us(&p, m, n, n, ready, NULL), t1 + dstar, 1e-12);
    /* delta > delta*: only the laggard is exposed: T = T_1 + delta */
    ptm_pattern_ready(PTM_LAGGARD, n, 100.0, ready);
    CHECK_NEAR(ptm_grouped_us(&p, m, n, n, ready, NULL), t1 + 100.0, 1e-12);
    /* Benefit over one message sent after the laggard: B = G*m*(1-1/n) for delta >= delta* */
    double base = ptm_grouped_us(&p, m, n, 1, ready, NULL);
    CHECK_NEAR(base, 100.0 + 0.5 + 0.001 * (m - 1) + 2.0 + 0.75, 1e-12);
    CHECK_NEAR(base - ptm_grouped_us(&p, m, n, n, ready, NULL), 0.001 * (m - k), 1e-9);
    /* Per-partition availability: partition 0 arrives after one message, the laggard last. */
    double arrival[8];
    ptm_grouped_us(&p, m, n, n, ready, arrival);
    CHECK_NEAR(arrival[0], t1, 1e-12);
    CHECK_NEAR(arrival[1], t1 + 2.0, 1e-12);
    CHECK_NEAR(arrival[n - 1], t1 + 100.0, 1e-12);
    /* Uniform spread with Delta > S(k): T = T_1 + (n-1)*Delta */
    ptm_pattern_ready(PTM_UNIFORM, n, 70.0, ready);
    CHECK_NEAR(ready[1], 10.0, 1e-12);
    CHECK_NEAR(ptm_grouped_us(&p, m, n, n, ready, NULL), t1 + 70.0, 1e-12);
}

static void grouping_uses_the_latest_member(void)
{
    ptm_params p;
    one_segment(&p, 1.0);
    /* 4 user partitions of 1000 bytes, laggard at 50, grouped in 2: group 0 ready at 0
     * (2000 B), group 1 ready at 50 (2000 B): T = 50 + o_s + G*1999 + L + o_r */
    double ready[4] = { 0, 0, 0, 50 };
    CHECK_NEAR(ptm_grouped_us(&p, 4000, 4, 2, ready, NULL), 50 + 0.5 + 1.999 + 2.0 + 0.75, 1e-12);
    /* The remainder goes to the last user partition. */
    double arr[3];
    double t = ptm_grouped_us(&p, 3002, 3, 3, NULL, arr);
    /* parts 1000,1000,1002: d1 = .5+.999, d2 = d1+1+.999, d3 = d2+1+1.001 */
    CHECK_NEAR(t, 0.5 + 0.999 + 1 + 0.999 + 1 + 1.001 + 2.75, 1e-12);
}

static void rendezvous_handshake_and_segments(void)
{
    ptm_params p;
    one_segment(&p, 1.0);
    p.nseg = 2;
    p.seg[0].max_bytes = 1000;
    p.seg[1] = (ptm_segment){ .max_bytes = SIZE_MAX, .L = 2.0, .o_s = 0.5, .o_r = 0.75, .g = 1.0,
                              .G = 0.0005, .handshake_us = 3.0 };
    CHECK(ptm_segment_for(&p, 1000) == &p.seg[0]);
    CHECK(ptm_segment_for(&p, 1001) == &p.seg[1]);
    size_t k = 2001;
    double r = 0;
    /* A single rendezvous message pays the handshake once. */
    CHECK_NEAR(ptm_completion_us(&p, 1, &k, &r), 0.5 + 3.0 + 1.0 + 2.0 + 0.75, 1e-12);
    /* A second one right behind it: its handshake overlaps the first transfer. */
    size_t kk[2] = { 2001, 2001 };
    double rr[2] = { 0, 0 };
    CHECK_NEAR(ptm_completion_us(&p, 2, kk, rr), 0.5 + 3.0 + 1.0 + (1.0 + 1.0) + 2.75, 1e-12);
    /* The timer hold is the saving of one message less, plus the handshake. */
    CHECK_NEAR(ptm_default_delta_us(&p, 100), 1.0 - 0.001, 1e-12);
    CHECK_NEAR(ptm_default_delta_us(&p, 5000), 1.0 - 0.0005 + 3.0, 1e-12);
    /* libpartita's: plus twice the Pready cost per partition, at least the floor. */
    CHECK_NEAR(ptm_timer_delta_us(&p, 100, 4), PTM_TIMER_DELTA_MIN_US, 1e-12);
    p.o_pready = 0.01;
    CHECK_NEAR(ptm_timer_delta_us(&p, 5000, 100), 1.0 - 0.0005 + 3.0 + 2.0 * 100 * 0.01, 1e-12);
}

static void o_pready_delays_each_message(void)
{
    ptm_params p;
    one_segment(&p, 1.0);
    p.o_pready = 0.25;
    size_t k = 1001;
    double r = 0;
    CHECK_NEAR(ptm_completion_us(&p, 1, &k, &r), 4.5, 1e-12);
}

static void optimal_transport_choices(void)
{
    ptm_params p;
    one_segment(&p, 1.0);
    /* All at once, partitioning only costs: one message. */
    CHECK(ptm_optimal_transport(&p, 1 << 20, 16, 0.0) == 1);
    /* Tiny messages with a laggard: splitting hides 60 bytes (0.06 us of 3.3 us, under
     * the tie tolerance), so one message. */
    CHECK(ptm_optimal_transport(&p, 64, 16, 4000.0) == 1);
    /* 64 KiB: splitting hides enough to matter. */
    CHECK(ptm_optimal_transport(&p, 65536, 16, 4000.0) == 16);
    /* 1 MiB, 16 partitions, laggard at 4 ms: B(n) = min(delta, delta*) - (n-1)(g*-G) is
     * largest at n = 16 (delta* < delta for all n, so B = G m (1-1/n) - (n-1)(g*-G)). */
    CHECK(ptm_optimal_transport(&p, 1 << 20, 16, 4000.0) == 16);
    /* Moderate delay: the optimum is interior. n* from the quadratic in docs/model.md with
     * G m = 1048.576, g*-G = 0.999, delta = 300: n* ~ 1.4 -> candidates 1,2 -> 2 */
    int n = ptm_optimal_transport(&p, 1 << 20, 16, 300.0);
    double best = ptm_grouped_us(&p, 1 << 20, 16, n, (double[16]){ [15] = 300.0 }, NULL);
    for (int t = 1; t <= 16; t *= 2)
        CHECK(best <= ptm_grouped_us(&p, 1 << 20, 16, t, (double[16]){ [15] = 300.0 }, NULL) + 1e-9);
    CHECK(n == 2);
    /* Candidates are divisors: 12 user partitions never give 8. */
    int c = ptm_optimal_transport(&p, 12 * 100000, 12, 100000.0);
    CHECK(c >= 1 && c <= 12 && 12 % c == 0);
    /* pow2-only candidates. */
    double ready[12] = { [11] = 100000.0 };
    c = ptm_optimal_transport_ready(&p, 12 * 100000, 12, ready, 1, NULL);
    CHECK(c == 1 || c == 2 || c == 4);
    /* Bad arguments. */
    CHECK(ptm_optimal_transport_ready(&p, 100, 0, NULL, 0, NULL) == 0);
    CHECK(ptm_optimal_transport(&p, 100, 0, 0.0) == 1);
    CHECK(ptm_grouped_us(&p, 3, 4, 5, NULL, NULL) < 0); /* more messages than bytes */
    CHECK(ptm_cut_us(&p, 100, 4, 0, NULL, NULL) < 0);
    CHECK(ptm_pattern_ready(PTM_LAGGARD, 4, -1.0, ready) == -1);
    size_t k = 10;
    double nan_ready = NAN;
    CHECK(ptm_completion_us(&p, 1, &k, &nan_ready) < 0);
    CHECK(ptm_completion_us(&p, 0, &k, &nan_ready) < 0);
}

/* Eager up to 4 KiB, then rendezvous with a 3 us handshake and a slow gap. */
static void eager_and_rendezvous(ptm_params *p)
{
    memset(p, 0, sizeof *p);
    p->nseg = 2;
    p->seg[0] = (ptm_segment){ .max_bytes = 4096, .L = 0.5, .o_s = 0.1, .o_r = 0.1, .g = 0.1, .G = 3e-5 };
    p->seg[1] = (ptm_segment){ .max_bytes = SIZE_MAX, .L = 0.5, .o_s = 0.2, .o_r = 1.5, .g = 1.5, .G = 8e-5,
                               .handshake_us = 3.0 };
}

static void cut_partitions(void)
{
    /* Pieces: balanced, covering the partition. */
    CHECK(ptm_piece_offset(10, 3, 0) == 0 && ptm_piece_offset(10, 3, 1) == 3 && ptm_piece_offset(10, 3, 2) == 6 &&
          ptm_piece_offset(10, 3, 3) == 10);
    ptm_params p;
    one_segment(&p, 1.0);
    /* Two partitions of 1001 bytes cut in 2: four messages of 500/501 bytes, the
     * second partition's pieces ready at 100, all back to back otherwise. */
    double ready[2] = { 0.0, 100.0 }, arrival[2];
    size_t bytes[4] = { 500, 501, 500, 501 };
    double pready[4] = { 0.0, 0.0, 100.0, 100.0 }, parr[4];
    double expect = ptm_arrivals_us(&p, 4, bytes, pready, parr);
    CHECK_NEAR(ptm_grouped_us(&p, 2002, 2, 4, ready, arrival), expect, 1e-12);
    CHECK_NEAR(arrival[0], parr[1], 1e-12); /* a partition is usable when its last piece is */
    CHECK_NEAR(arrival[1], parr[3], 1e-12);
    /* Five pieces of 2002 bytes straddle the boundary at 1001: [0,400) [400,800)
     * [800,1201) [1201,1601) [1601,2002). The third holds bytes of both partitions,
     * so it waits for the second; the first partition is usable with it. */
    size_t sbytes[5] = { 400, 400, 401, 400, 401 };
    double sready[5] = { 0.0, 0.0, 100.0, 100.0, 100.0 }, sarr[5];
    expect = ptm_arrivals_us(&p, 5, sbytes, sready, sarr);
    CHECK_NEAR(ptm_grouped_us(&p, 2002, 2, 5, ready, arrival), expect, 1e-12);
    CHECK_NEAR(arrival[0], sarr[2], 1e-12);
    CHECK_NEAR(arrival[1], fmax(sarr[2], fmax(sarr[3], sarr[4])), 1e-12);
    /* Fewer pieces than partitions: the cut, not the groups. */
    CHECK_NEAR(ptm_cut_us(&p, 2002, 2, 2, ready, NULL), ptm_grouped_us(&p, 2002, 2, 2, ready, NULL), 1e-12);
    CHECK(ptm_cut_us(&p, 3000, 3, 2, NULL, NULL) >= 0);

    /* Below the protocol switch pieces win; the grouped search never cuts. */
    eager_and_rendezvous(&p);
    int cut = -1;
    CHECK(ptm_optimal_transport(&p, 8192, 1, 0.0) == 1);
    CHECK(ptm_optimal_layout(&p, 8192, 1, 0.0, 1, &cut) == 1 && cut == 0);
    CHECK(ptm_optimal_layout(&p, 8192, 1, 0.0, 64, &cut) == 2 && cut == 1); /* two eager 4 KiB pieces */
    CHECK(ptm_optimal_layout(&p, 32768, 4, 0.0, 64, NULL) == 8);             /* 8 KiB partitions in 4 KiB pieces */
    /* Three partitions of 6000 bytes: pieces of whole partitions are 6000 or 3000
     * bytes; the fewest eager ones straddle them, 5 of 3600. Not without cutting. */
    CHECK(ptm_optimal_layout(&p, 18000, 3, 0.0, 16, &cut) == 5 && cut == 1);
    int n = ptm_optimal_layout(&p, 18000, 3, 0.0, 1, &cut);
    CHECK(cut == 0 && n >= 1 && n <= 3);
    /* No piece below PTM_MIN_PIECE_BYTES, no cut layout above PTM_MAX_CUT_MESSAGES. */
    n = ptm_optimal_layout(&p, 1024, 1, 0.0, 64, NULL);
    CHECK(n == 1 || 1024 / n >= PTM_MIN_PIECE_BYTES);
    CHECK(ptm_optimal_layout(&p, 1 << 20, 1, 0.0, 1024, NULL) <= PTM_MAX_CUT_MESSAGES);
    /* The eager cap: 512 partitions of 1 MiB never go as 256 messages of 4 KiB, though
     * LogGP alone would pick that with these parameters. */
    double t256 = ptm_grouped_us(&p, 1 << 20, 512, 256, NULL, NULL), t1 = ptm_grouped_us(&p, 1 << 20, 512, 1, NULL, NULL);
    CHECK(t256 < t1);
    n = ptm_optimal_transport(&p, 1 << 20, 512, 0.0);
    CHECK(n <= PTM_MAX_EAGER_MESSAGES || (1u << 20) / (unsigned)n > 4096);
    /* The cap is the parameters': raised, the many-message layout is allowed. */
    p.max_eager_messages = 512;
    CHECK(ptm_optimal_transport(&p, 1 << 20, 512, 0.0) > PTM_MAX_EAGER_MESSAGES);
    /* One segment: no protocol switch, no cap. */
    one_segment(&p, 0.01);
    CHECK(ptm_optimal_transport(&p, 1 << 20, 64, 4000.0) == 64);
}

static void defaults_are_valid(void)
{
    ptm_params p;
    char err[256];
    ptm_params_default(&p);
    CHECK(ptm_params_check(&p, err, sizeof err) == 0);
    CHECK(strcmp(p.source, "built-in defaults") == 0);
    /* Default parameters: no split when all are ready at once, a split for big messages
     * with a laggard. */
    CHECK(ptm_optimal_transport(&p, 4096, 32, 0.0) == 1);
    CHECK(ptm_optimal_transport(&p, 64u << 20, 32, 4000.0) > 1);
    /* Open MPI's set (eager up to 2 KiB, up to 32 eager messages at once): 64 KiB in
     * 32 partitions go as 32 eager messages; MPICH's set keeps to 16 or fewer. */
    CHECK(p.max_eager_messages == PTM_MAX_EAGER_MESSAGES);
    CHECK(ptm_optimal_transport(&p, 65536, 32, 0.0) <= PTM_MAX_EAGER_MESSAGES);
    ptm_params_default_for(&p, "Open MPI v5.0.11, package: Open MPI");
    CHECK(ptm_params_check(&p, err, sizeof err) == 0);
    CHECK(p.max_eager_messages == 32);
    CHECK(ptm_optimal_transport(&p, 65536, 32, 0.0) == 32);
    /* 64 KiB in 512 partitions: 16 groups of 4 KiB would take the rendezvous, 32 of
     * 2 KiB stay eager; fewer eager groups exist between the divisors (17 of 30-31
     * partitions) and are the model's choice, each within the eager segment. */
    int n = ptm_optimal_transport(&p, 65536, 512, 0.0);
    CHECK(n > 16 && n < 32);
    CHECK((size_t)((512 + n - 1) / n) * 128 <= p.seg[0].max_bytes);
    /* The paper's power-of-two search does not see them. */
    int pow2 = ptm_optimal_transport_ready(&p, 65536, 512, NULL, 1, NULL);
    CHECK(pow2 > 0 && (pow2 & (pow2 - 1)) == 0);
    /* With cutting allowed, 64 KiB in one partition or in 32 of 2 KiB is cut in
     * the fewest eager pieces: more than the PTM_MAX_CUT_MESSAGES that bound a
     * partition cut in k pieces, within the eager burst. */
    int parts[] = { 1, 32 };
    for (int i = 0; i < 2; i++) {
        int cut = 0;
        n = ptm_optimal_layout(&p, 65536, parts[i], 0.0, PTM_MAX_CUT_MESSAGES, &cut);
        CHECK(cut == 1 && n > PTM_MAX_CUT_MESSAGES && n <= p.max_eager_messages);
        CHECK((size_t)((65536 + n - 1) / n) <= p.seg[0].max_bytes);
    }
    /* MPICH's set (eager up to 8112 bytes): 64 KiB in 8 partitions of 8 KiB. The
     * partitions alone are rendezvous messages and their halves 16 messages; the
     * model cuts the buffer in the fewest eager pieces, which straddle partitions. */
    ptm_params_default(&p);
    int cut = 0;
    n = ptm_optimal_layout(&p, 65536, 8, 0.0, PTM_MAX_CUT_MESSAGES, &cut);
    CHECK(cut == 1 && n % 8 != 0 && (65536 + n - 1) / n <= (int)p.seg[0].max_bytes);
}

/* The ranking's first layout is ptm_optimal_layout's, the rest follow by
 * modelled time (ties excepted), and no layout appears twice. */
static void layout_ranking_order(void)
{
    ptm_params p;
    ptm_params_default(&p);
    size_t sizes[] = { 4096, 16384, 65536, 1 << 20, 4 << 20 };
    int parts[] = { 1, 8, 16, 64, 512 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t j = 0; j < sizeof parts / sizeof parts[0]; j++) {
            ptm_ranked_layout r[8];
            int n = ptm_layout_ranking(&p, sizes[i], parts[j], 0.0, PTM_MAX_CUT_MESSAGES, r, 8);
            int cut = -1;
            int best = ptm_optimal_layout(&p, sizes[i], parts[j], 0.0, PTM_MAX_CUT_MESSAGES, &cut);
            CHECK(n >= 1);
            CHECK(r[0].count == best && r[0].cut == cut);
            for (int k = 1; k < n; k++) {
                CHECK(r[k].model_us >= r[0].model_us * (1 - PTM_TIE_TOLERANCE) - 1e-9);
                for (int m = 0; m < k; m++)
                    CHECK(r[k].count != r[m].count || r[k].cut != r[m].cut);
            }
        }
    }
    ptm_ranked_layout r[2];
    CHECK(ptm_layout_ranking(&p, 100, 0, 0.0, 1, r, 2) == 0);
    CHECK(ptm_layout_ranking(&p, 100, 4, 0.0, 1, r, 0) == 0);
}

int main(void)
{
    single_message_is_loggp();
    two_back_to_back_messages();
    n_messages_all_at_once();
    laggard_formulas();
    grouping_uses_the_latest_member();
    rendezvous_handshake_and_segments();
    o_pready_delays_each_message();
    optimal_transport_choices();
    layout_ranking_order();
    cut_partitions();
    defaults_are_valid();
    CHECK_DONE();
}
