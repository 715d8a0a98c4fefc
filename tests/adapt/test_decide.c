/* The adaptive policy's decisions on simulated rounds: the schedule both
 * sides derive, convergence to the cheapest candidate, ties, hysteresis,
 * re-planning when the chosen layout drifts or the arrival pattern changes,
 * the seed's min-δ rule and the fake-cost test hook. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/adapt.h"
#include "check.h"

typedef double (*cost_fn)(int round, int cand, void *arg);
/* A round as the library measures it: its cost, its time after the last
 * mark and the laggard's pause its hand-overs showed (NAN: none). */
typedef struct {
    double us, after_us, pause_us;
} round_measure;
typedef round_measure (*measure_fn)(int round, int cand, void *arg);

/* Runs `rounds` rounds as the library does, candidate `prefer` preferred by
 * the model: the initial exploration, then windows planned one round ahead;
 * round r's measurement is known `lag` rounds later. Fills used[r] with the
 * candidate of round r. */
static void simulate_rounds(pta_state *st, int ncand, int prefer, int rounds, int lag, measure_fn measure, void *arg,
                            int *used)
{
    int E = pta_initial_rounds(ncand);
    pta_window window = { .first = 0, .span = E, .every = 1 }, next = window; /* the initial exploration first */
    char *measured = malloc((size_t)rounds); /* whether round r reports a sample */
    CHECK(measured != NULL);
    if (!measured)
        return;
    pta_init(st, ncand);
    pta_prefer(st, prefer);
    for (int r = 0; r < rounds; r++) {
        if (r >= lag && measured[r - lag]) { /* only measured rounds report, as in the library */
            round_measure m = measure(r - lag, used[r - lag], arg);
            pta_add_round(st, used[r - lag], m.us, m.after_us, m.pause_us);
        }
        if (r == window.first + window.span) /* a window begins */
            window = next;
        used[r] = r < E ? pta_initial_candidate(ncand, r) : pta_window_candidate(&window, r);
        measured[r] = (char)pta_measured_round(E, &window, r);
        if (r + 1 == window.first + window.span) { /* the next round begins a window: announce it now */
            pta_plan_window(st, &next);
            next.first = r + 1;
            CHECK(next.span >= PTA_WINDOW && next.span <= PTA_SPAN_MAX && next.span == st->span);
        }
    }
    free(measured);
}

/* simulate_rounds with a cost alone (pta_add_sample's rounds). */
typedef struct {
    cost_fn cost;
    void *arg;
} cost_only;
static round_measure measure_cost_only(int round, int cand, void *arg)
{
    const cost_only *c = arg;
    return (round_measure){ c->cost(round, cand, c->arg), NAN, NAN };
}
static void simulate(pta_state *st, int ncand, int rounds, int lag, cost_fn cost, void *arg, int *used)
{
    cost_only c = { cost, arg };
    simulate_rounds(st, ncand, 0, rounds, lag, measure_cost_only, &c, used);
}

static unsigned noise_state = 12345;
static double noise(void) /* uniform in [-1, 1), deterministic */
{
    noise_state = noise_state * 1103515245u + 12345u;
    return ((noise_state >> 8) & 0xffff) / 32768.0 - 1.0;
}

static double table_cost(int round, int cand, void *arg)
{
    (void)round;
    const double *c = arg;
    return c[cand] * (1 + 0.05 * noise());
}

/* Candidate 1 is cheapest until round `switch_at`, then candidate 2. */
static double changing_cost(int round, int cand, void *arg)
{
    int switch_at = *(int *)arg;
    static const double before[] = { 10, 5, 20, 8 }, after[] = { 10, 15, 4, 8 };
    return (round < switch_at ? before : after)[cand] * (1 + 0.05 * noise());
}

/* How many of rounds [from, to) used candidate c. */
static int count_used(const int *used, int from, int to, int c)
{
    int n = 0;
    for (int r = from; r < to; r++)
        n += used[r] == c;
    return n;
}

static void test_initial_schedule(void)
{
    CHECK(pta_initial_rounds(4) == 4 * PTA_EXPLORE_PASSES);
    CHECK(pta_initial_rounds(1) == 0);
    int seen[4] = { 0 };
    for (int r = 0; r < pta_initial_rounds(4); r++)
        seen[pta_initial_candidate(4, r)]++;
    for (int c = 0; c < 4; c++)
        CHECK(seen[c] == PTA_EXPLORE_PASSES);
    CHECK(pta_initial_candidate(4, 1) != pta_initial_candidate(4, 0)); /* interleaved, not blocks */
}

static void test_converges_to_cheapest(void)
{
    double costs[] = { 10, 5, 20, 7 };
    int used[200];
    pta_state st;
    for (int lag = 1; lag <= 3; lag++) {
        simulate(&st, 4, 200, lag, table_cost, costs, used);
        int E = pta_initial_rounds(4);
        /* after the exploration and at most two more windows, candidate 1 nearly always */
        int from = E + 2 * PTA_WINDOW;
        CHECK(count_used(used, from, 200, 1) >= (200 - from) * 9 / 10);
        CHECK(st.current == 1 && !st.exploring);
        CHECK(st.replans == 0);
        CHECK(strstr(st.why, "#1") != NULL);
    }
}

/* A negative round (stamps that raced: the last partition went by a flush
 * while the thread that marked it waited for a core before its hand-over's
 * stamp) is not kept. Kept, it made a typical cost below zero, the tie bound
 * fell below the least cost, and the search for the chosen candidate walked
 * past the candidates into memory it then read as sample counts: this test
 * ended in a segmentation fault before the fix. partita-p2p under
 * `adaptive` crashed in one launch of the library suite's laggard threads
 * with a write past the stack in ring_quantile, where such a count leads. */
static void test_negative_rounds_are_not_kept(void)
{
    pta_state st;
    pta_init(&st, 3);
    pta_add_round(&st, 1, -40.0, NAN, NAN);
    CHECK(st.nsample[1] == 0);
    pta_add_round(&st, 1, 0.0, NAN, NAN); /* zero is a cost (a round faster than the clock) */
    CHECK(st.nsample[1] == 1);
    double costs[] = { 10, 5, -30, 7 };
    int used[200];
    simulate(&st, 4, 200, 1, table_cost, costs, used);
    CHECK(st.nsample[2] == 0);
    CHECK(st.current == 1 && !st.exploring);
    CHECK(strstr(st.why, "#1") != NULL);
}

static void test_ties_go_to_model_preference(void)
{
    double costs[] = { 10, 10.1, 10, 50 };
    int used[120];
    pta_state st;
    simulate(&st, 4, 120, 1, table_cost, costs, used);
    CHECK(st.current == 0 || st.current == 1 || st.current == 2);
    /* exact ties: the lowest index */
    pta_init(&st, 3);
    pta_window w;
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++)
            pta_add_sample(&st, c, c == 0 ? 10.2 : 10.0);
    pta_plan_window(&st, &w);
    CHECK(st.current == 0); /* 10.2 is within the tie tolerance of 10 */
    CHECK(w.plan[0] == 0 && w.plan[PTA_WINDOW - 1] == 0);
}

/* Sub-microsecond rounds: a difference under TIE_FLOOR_US (0.25 us) is noise,
 * the model's preference (index 0) stays; a larger one still wins. */
static void test_small_differences_are_ties(void)
{
    pta_state st;
    pta_window w;
    pta_init(&st, 2);
    for (int i = 0; i < 3; i++) {
        pta_add_sample(&st, 0, 1.0);
        pta_add_sample(&st, 1, 0.8); /* 20% faster, 0.2 us */
    }
    pta_plan_window(&st, &w);
    CHECK(st.current == 0);
    pta_init(&st, 2);
    for (int i = 0; i < 3; i++) {
        pta_add_sample(&st, 0, 1.0);
        pta_add_sample(&st, 1, 0.6); /* 0.4 us faster */
    }
    pta_plan_window(&st, &w);
    CHECK(st.current == 1);
}

/* The preferred candidate (the library's plain message) wins a tie over the
 * lower index, but not a clear difference; out of range it is ignored. */
static void test_ties_go_to_preferred(void)
{
    pta_state st;
    pta_window w;
    pta_init(&st, 3);
    pta_prefer(&st, 2);
    for (int i = 0; i < 3; i++) {
        pta_add_sample(&st, 0, 10.0);
        pta_add_sample(&st, 1, 10.1);
        pta_add_sample(&st, 2, 10.5); /* within the tie tolerance of 10 */
    }
    pta_plan_window(&st, &w);
    CHECK(st.current == 2);
    pta_init(&st, 3);
    pta_prefer(&st, 2);
    for (int i = 0; i < 3; i++) {
        pta_add_sample(&st, 0, 12.0);
        pta_add_sample(&st, 1, 10.0);
        pta_add_sample(&st, 2, 14.0); /* 40% slower: not a tie */
    }
    pta_plan_window(&st, &w);
    CHECK(st.current == 1);
    pta_init(&st, 2);
    pta_prefer(&st, 5);
    CHECK(st.prefer == 0);
}

/* Three candidates, the preferred (2) and 0 tied by cost, 1 dearer: rounds
 * paused for a laggard (`pause` us) tell 0 and 2 apart by the time after the
 * last mark; without a pause, or when the soonest is not tied by cost, the
 * cost decides. Of every 4 rounds of a candidate of several messages (0 and
 * 1), the last `paused_rounds` paused (so 2 is never most of its rounds). */
typedef struct {
    double pause, cost0, cost1;
    int paused_rounds;
    int seen[3]; /* rounds measured so far, per candidate */
} laggard_rounds;

static round_measure laggard_round(int round, int cand, void *arg)
{
    (void)round;
    laggard_rounds *l = arg;
    int paused = l->seen[cand]++ % 4 >= 4 - l->paused_rounds && l->pause > 0;
    double pause = paused ? l->pause : NAN;
    if (cand == 0)
        return (round_measure){ l->cost0, 2.0, pause }; /* most of it handed over before the last mark */
    if (cand == 1)
        return (round_measure){ l->cost1, 1.0, pause }; /* the soonest after the last mark */
    return (round_measure){ 16.0, 16.0, NAN };          /* one message: handed over once, shows no pause */
}

/* The choice after `rounds` rounds through the library's schedule. */
static int choice_under_laggard(double pause, double cost0, double cost1, int paused_rounds)
{
    enum { ROUNDS = 120 };
    pta_state st;
    int used[ROUNDS];
    laggard_rounds l = { pause, cost0, cost1, paused_rounds, { 0, 0, 0 } };
    simulate_rounds(&st, 3, 2, ROUNDS, 1, laggard_round, &l, used);
    CHECK(count_used(used, ROUNDS - 2 * PTA_WINDOW, ROUNDS, st.current) >= PTA_WINDOW); /* it runs its choice */
    return st.current;
}

static void test_laggard_ties_go_to_the_soonest_after_the_last_mark(void)
{
    CHECK(choice_under_laggard(1000, 16.5, 30, 4) == 0); /* tied with 2 by cost, 14 us sooner */
    CHECK(choice_under_laggard(1000, 16.5, 30, 3) == 0);
    CHECK(choice_under_laggard(1000, 16.5, 30, 2) == 2); /* half the rounds paused: no laggard */
    CHECK(choice_under_laggard(0, 16.5, 30, 4) == 2);    /* no pause: the preferred */
    CHECK(choice_under_laggard(1000, 16.5, 16.9, 4) == 1); /* all three tied: the soonest of all */
    CHECK(choice_under_laggard(1000, 20, 30, 4) == 2);   /* 25% dearer: not tied, the cost decides */
    /* Sooner within the tie margin is a tie (the lower index wins); a tied incumbent yields to one sooner
     * by more than the hysteresis. */
    pta_state st;
    pta_window w;
    pta_init(&st, 2);
    for (int i = 0; i < 4; i++) {
        pta_add_round(&st, 0, 10.0, 4.0, 500);
        pta_add_round(&st, 1, 10.2, 3.8, 500);  /* 5% sooner: within the hysteresis */
    }
    pta_plan_window(&st, &w);
    CHECK(st.current == 0);
    CHECK(strstr(st.why, "a laggard paused the rounds 500 us") != NULL);
    for (int i = 0; i < PTA_KEEP; i++)
        pta_add_round(&st, 1, 10.2, 1.0, 500);  /* now 4x sooner */
    pta_plan_window(&st, &w);
    CHECK(st.current == 1);
}

/* Two candidates measured `first` and `second` us 4 times each, under the
 * timer's margins or the adaptive policy's; the choice that follows. */
static int choice_of_two(pta_state *st, int timer, double first, double second)
{
    pta_window w;
    pta_init(st, 2);
    if (timer)
        pta_set_margins(st, PTA_TIMER_TIE, PTA_TIMER_TIE_FLOOR_US, PTA_TIMER_HYSTERESIS);
    for (int i = 0; i < 4; i++) {
        pta_add_sample(st, 0, first);
        pta_add_sample(st, 1, second);
    }
    pta_plan_window(st, &w);
    return st->current;
}

/* The timer's narrower margins (pta_set_margins): 4.4 us against the model's
 * 5.0 (its two layouts under a laggard at 16 KiB in 2 partitions) is a tie
 * by the adaptive policy's margins, a win by the timer's; and a rival that
 * becomes 5% faster than the incumbent replaces it only under the timer's
 * hysteresis. Bad margins are ignored. */
static void test_timer_margins(void)
{
    pta_state st;
    pta_window w;
    for (int timer = 0; timer < 2; timer++) {
        CHECK(choice_of_two(&st, timer, 5.0, 4.4) == timer);
        CHECK(choice_of_two(&st, timer, 40, 60) == 0);
        for (int i = 0; i < PTA_KEEP; i++)
            pta_add_sample(&st, 1, 38);
        pta_plan_window(&st, &w);
        CHECK(st.current == timer);
    }
    pta_init(&st, 2);
    pta_set_margins(&st, -1, NAN, INFINITY); /* the adaptive policy's stay */
    CHECK(st.tie > 0.05 && st.tie_floor_us > 0.2 && st.hysteresis > 0.05 && isfinite(st.hysteresis));
}

/* Two candidates measured 10 and 20 us: the first is chosen. */
static void choose_first_of_two(pta_state *st, pta_window *w)
{
    pta_init(st, 2);
    for (int i = 0; i < 3; i++) {
        pta_add_sample(st, 0, 10);
        pta_add_sample(st, 1, 20);
    }
    pta_plan_window(st, w);
    CHECK(st->current == 0 && !st->exploring);
}

static void test_hysteresis(void)
{
    pta_state st;
    pta_window w;
    choose_first_of_two(&st, &w);
    /* the other one becomes a little faster (within the hysteresis): kept */
    for (int i = 0; i < PTA_KEEP; i++)
        pta_add_sample(&st, 1, 9.7);
    for (int i = 0; i < PTA_WINDOW; i++)
        pta_add_sample(&st, 0, 10);
    pta_plan_window(&st, &w);
    CHECK(st.current == 0);
    /* clearly faster: switched */
    for (int i = 0; i < PTA_KEEP; i++)
        pta_add_sample(&st, 1, 6);
    pta_plan_window(&st, &w);
    CHECK(st.current == 1);
    CHECK(w.plan[0] == 1);
}

static void test_replans_on_drift(void)
{
    int switch_at = 100, used[300];
    pta_state st;
    simulate(&st, 4, 300, 1, changing_cost, &switch_at, used);
    CHECK(st.replans >= 1);
    CHECK(st.current == 2);
    CHECK(count_used(used, 60, 100, 1) >= 30);  /* before: candidate 1 */
    CHECK(count_used(used, 200, 300, 2) >= 90); /* after: candidate 2 */
}

static void test_replans_on_spread_change(void)
{
    pta_state st;
    pta_window w;
    choose_first_of_two(&st, &w);
    for (int i = 0; i < PTA_WINDOW; i++) {
        pta_add_sample(&st, 0, 10);
        pta_add_spread(&st, 0, 3);
        pta_add_spread(&st, 1, 300); /* another layout's rounds do not count */
    }
    pta_plan_window(&st, &w);
    CHECK(!st.exploring && st.current == 0);
    for (int i = 0; i < PTA_WINDOW; i++) {
        pta_add_sample(&st, 0, 10);
        pta_add_spread(&st, 0, 300); /* a laggard appeared */
    }
    pta_plan_window(&st, &w);
    CHECK(st.exploring && st.replans == 1);
    CHECK(w.plan[0] != w.plan[1]); /* both candidates are tried again */
}

/* A window of `span` rounds from round `first`: plan[i] = c, but a probe of
 * candidate 1 at PTA_WINDOW / 2 when `probe`; `explore`: the candidates in turn. */
static pta_window window_of(int first, int span, int c, int probe, int explore)
{
    pta_window w = { .first = first, .span = span, .every = explore };
    for (int i = 0; i < PTA_WINDOW; i++)
        w.plan[i] = explore ? i % 3 : probe && i == PTA_WINDOW / 2 ? 1 : c;
    return w;
}

static void test_measured_rounds(void)
{
    pta_window init = { .first = 0, .span = 12, .every = 1 };
    for (int r = 0; r < 12; r++)
        CHECK(pta_measured_round(12, &init, r)); /* the initial exploration: all */
    int n = 0, probe = 0, e = 0;
    for (int r = 12; r < 12 + 2 * PTA_WINDOW; r++) { /* two windows of PTA_WINDOW rounds */
        int pos = (r - 12) % PTA_WINDOW, first = r - pos;
        pta_window uniform = window_of(first, PTA_WINDOW, 2, 0, 0), mixed = window_of(first, PTA_WINDOW, 2, 1, 0);
        pta_window exploring = window_of(first, PTA_WINDOW, 2, 0, 1);
        n += pta_measured_round(12, &uniform, r);
        CHECK(pta_measured_round(12, &uniform, r) == (pos == PTA_WINDOW - 1)); /* the announcing round */
        probe += pta_measured_round(12, &mixed, r);
        CHECK(pta_measured_round(12, &mixed, r) == (pos == PTA_WINDOW - 1 || pos == PTA_WINDOW / 2));
        e += pta_measured_round(12, &exploring, r);
    }
    CHECK(n == 2);                 /* a settled window: one round in each */
    CHECK(probe == 4);             /* with a probe: the probe too */
    CHECK(e == 2 * PTA_WINDOW);    /* exploring: every round */
    /* A long window: the round PTA_WINDOW before its last, and its probe;
     * past the plan's rounds, the plan's first candidate. */
    pta_window uniform = window_of(12, PTA_SPAN_MAX, 2, 0, 0), mixed = window_of(12, PTA_SPAN_MAX, 2, 1, 0);
    n = probe = 0;
    int probes_used = 0;
    for (int r = 12; r < 12 + PTA_SPAN_MAX; r++) {
        n += pta_measured_round(12, &uniform, r);
        probe += pta_measured_round(12, &mixed, r);
        probes_used += pta_window_candidate(&mixed, r) != 2;
        CHECK(r - 12 < PTA_WINDOW || pta_window_candidate(&mixed, r) == 2);
    }
    CHECK(pta_measured_round(12, &uniform, 12 + PTA_SPAN_MAX - 1 - PTA_WINDOW));
    CHECK(n == 1 && probe == 2 && probes_used == 1);
    pta_window two = window_of(12, 2 * PTA_WINDOW, 2, 0, 0); /* 16 rounds: the 8th, as in a window of 8 */
    for (int r = 12; r < 12 + 2 * PTA_WINDOW; r++)
        CHECK(pta_measured_round(12, &two, r) == (r == 12 + PTA_WINDOW - 1));
    uniform.every = 1; /* checking a choice: every round */
    for (int r = 12; r < 12 + PTA_SPAN_MAX; r++)
        CHECK(pta_measured_round(12, &uniform, r));
}

/* The windows planned after a choice of candidate 0, costing `us` (5%
 * noise), over candidate 1: out[i], i < count. One sample of the chosen
 * layout per window, as the library measures a settled window. */
static void plan_settled(pta_state *st, double us, int count, pta_window *out)
{
    pta_init(st, 2);
    for (int i = 0; i < 3; i++) {
        pta_add_sample(st, 0, us);
        pta_add_sample(st, 1, 3 * us);
    }
    for (int i = 0; i < count; i++) {
        pta_plan_window(st, &out[i]);
        CHECK(out[i].span == st->span && st->current == 0);
        pta_add_sample(st, 0, us * (1 + 0.05 * noise()));
    }
}

/* The next window after one more sample of the chosen layout, `us`. */
static pta_window after_sample(pta_state *st, double us)
{
    pta_window w;
    pta_add_sample(st, st->current, us);
    pta_plan_window(st, &w);
    return w;
}

/* k windows of PTA_WINDOW rounds, or PTA_SPAN_MAX when that is less. */
static int grown(int k) { return k * PTA_WINDOW < PTA_SPAN_MAX ? k * PTA_WINDOW : PTA_SPAN_MAX; }

/* A settled choice of short rounds gets longer windows, doubling up to
 * PTA_SPAN_MAX once it has a drift check's samples; long rounds, a sample
 * that strays as a drift would (the next window is then measured in every
 * round), a spread that does, and a new choice keep or make the next window
 * short. */
static void test_settled_windows_grow(void)
{
    pta_state st;
    pta_window w[12];
    plan_settled(&st, 2.0, 12, w);
    CHECK(w[0].span == PTA_WINDOW);     /* just chosen (on 3 samples, fewer than a drift check needs) */
    CHECK(w[1].span == grown(2)); /* a fourth */
    int at_max = 0;
    for (int i = 1; i < 12; i++) {
        CHECK(w[i].span == PTA_WINDOW || w[i].span == 2 * w[i - 1].span || w[i].span == PTA_SPAN_MAX);
        CHECK(!w[i].every);
        at_max += w[i].span == PTA_SPAN_MAX;
    }
    CHECK(at_max >= 4 && w[11].span == PTA_SPAN_MAX);
    pta_window next = after_sample(&st, 4.0); /* 2x: as far as a drift */
    CHECK(next.span == PTA_WINDOW && next.every && st.current == 0 && !st.exploring);
    for (int i = 0; i < PTA_WINDOW; i++) /* a check measures every round: the plan has no probe */
        CHECK(next.plan[i] == 0);
    next = after_sample(&st, 2.0);
    CHECK(next.span == grown(2) && !next.every); /* grows again */
    pta_add_sample(&st, 1, 40.0); /* another candidate's sample says nothing of the chosen one */
    CHECK(after_sample(&st, 2.0).span == grown(4));
    /* the arrival pattern: spreads of the chosen layout, then one far off */
    for (int i = 0; i < PTA_WINDOW / 2; i++)
        pta_add_spread(&st, 0, 3.0);
    CHECK(after_sample(&st, 2.0).span == grown(8));
    pta_add_spread(&st, 0, 300.0);
    next = after_sample(&st, 2.0);
    CHECK(next.span == PTA_WINDOW && next.every);
    /* rounds of PTA_LONG_SPAN_BELOW_US or more: windows stay short */
    plan_settled(&st, 2 * PTA_LONG_SPAN_BELOW_US, 12, w);
    for (int i = 0; i < 12; i++)
        CHECK(w[i].span == PTA_WINDOW);
    /* a probe at least every PROBE_EVERY (4) windows' worth of rounds: one per long window */
    plan_settled(&st, 2.0, 12, w);
    int rounds = 0, probes = 0;
    for (int i = 0; i < 6; i++) {
        next = after_sample(&st, 2.0);
        rounds += next.span;
        probes += next.plan[PTA_WINDOW / 2] != next.plan[0];
    }
    CHECK(rounds == 6 * PTA_SPAN_MAX && probes == 6);
    /* exploring windows are short and measured in every round */
    pta_init(&st, 3);
    pta_plan_window(&st, &next);
    CHECK(st.exploring && next.span == PTA_WINDOW && next.every);
}

static void test_unmeasured_falls_back(void)
{
    pta_state st;
    pta_window w;
    pta_init(&st, 3);
    for (int i = 0; i < 10; i++)
        pta_plan_window(&st, &w); /* no feedback ever */
    CHECK(!st.exploring && st.current == 0);
    pta_init(&st, 1);
    pta_plan_window(&st, &w);
    CHECK(w.plan[0] == 0 && w.plan[PTA_WINDOW - 1] == 0);
}

static void test_fake_costs(void)
{
    pta_fake f;
    CHECK(pta_fake_parse("1=50,9c=10,8s=7;@40:1=5,9c=10", &f) == 0);
    CHECK(f.nphase == 2);
    CHECK_NEAR(pta_fake_cost(&f, 0, 1, PTA_FAKE_GROUPS), 50, 0);
    CHECK_NEAR(pta_fake_cost(&f, 39, 9, PTA_FAKE_CUT), 10, 0);
    CHECK_NEAR(pta_fake_cost(&f, 39, 8, PTA_FAKE_SPLIT), 7, 0);
    CHECK_NEAR(pta_fake_cost(&f, 40, 1, PTA_FAKE_GROUPS), 5, 0);
    CHECK_NEAR(pta_fake_cost(&f, 0, 9, PTA_FAKE_GROUPS), PTA_FAKE_UNLISTED_US, 0); /* 9 groups: not the cut */
    CHECK_NEAR(pta_fake_cost(&f, 0, 8, PTA_FAKE_GROUPS), PTA_FAKE_UNLISTED_US, 0); /* nor the split 8 */
    const char *bad[] = { "", "x", "1=", "1=5,", "0=5", "1=5;2=3", "@5:1=5;@5:1=6", "1c5", "1=-3", "1=5;@2",
                          "1cs=5", "1x=5" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = pta_fake_parse(bad[i], &f);
        if (rc == 0)
            fprintf(stderr, "accepted bad fake costs '%s'\n", bad[i]);
        CHECK(rc != 0);
    }
}

int main(void)
{
    test_initial_schedule();
    test_converges_to_cheapest();
    test_negative_rounds_are_not_kept();
    test_ties_go_to_model_preference();
    test_small_differences_are_ties();
    test_ties_go_to_preferred();
    test_laggard_ties_go_to_the_soonest_after_the_last_mark();
    test_timer_margins();
    test_hysteresis();
    test_replans_on_drift();
    test_replans_on_spread_change();
    test_measured_rounds();
    test_settled_windows_grow();
    test_unmeasured_falls_back();
    test_fake_costs();
    CHECK_DONE();
}
