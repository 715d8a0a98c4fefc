/* The adaptive policy's decisions: exploration, choice with hysteresis,
 * re-planning on drift (adapt.h). */
#include "planner/adapt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SAMPLES 3          /* per candidate before a choice */
#define TIE 0.08               /* quartiles this close count as equal: the preferred candidate, else the lower
                                * index (the model's preference), wins */
#define TIE_FLOOR_US 0.25      /* ... or this close in microseconds: at 4-8 KiB the layouts' rounds differ by less
                                * than their noise, and choosing on it put adaptive at 0.75-0.91 of the launch's
                                * best in 32 of 100 (case, launch) pairs (side by side, 5 launches) */
#define HYSTERESIS 0.10        /* another candidate must be this much faster to replace the chosen one */
#define DRIFT 0.50             /* the chosen one this much slower than when chosen, at two checks in a row:
                                * explore again (a busy machine slows every layout for a while) */
#define DRIFT_FLOOR_US 0.5     /* ... and by at least this much */
#define DRIFT_SAMPLES 4        /* the chosen one's latest samples a drift check looks at (one per settled
                                * window: the last 32 rounds in windows of 8, more in longer ones; a
                                * window after a stray sample measures every round, 8 of them) */
#define SPREAD_FACTOR 2.0      /* the ready spread changed by this factor: explore again */
#define SPREAD_FLOOR_US 5.0    /* ... and by at least this much */
#define PROBE_EVERY 4          /* exploiting: one round of another candidate every this many windows of
                                * PTA_WINDOW rounds (one per window in longer ones) */
#define EXPLORE_MAX_WINDOWS 3  /* choose with what there is after this many windows of exploring */
#define TYPICAL 0.25           /* the quantile a candidate is judged by (median_of) */

void pta_init(pta_state *st, int ncand)
{
    memset(st, 0, sizeof *st);
    st->ncand = ncand < 1 ? 1 : ncand > PTA_MAX_CANDIDATES ? PTA_MAX_CANDIDATES : ncand;
    st->exploring = st->ncand > 1;
    st->spread_ref_us = -1;
    st->span = PTA_WINDOW;
    pta_set_margins(st, TIE, TIE_FLOOR_US, HYSTERESIS);
    snprintf(st->why, sizeof st->why, st->exploring ? "exploring %d layouts" : "one layout", st->ncand);
}

void pta_set_margins(pta_state *st, double tie, double floor_us, double hysteresis)
{
    if (isfinite(tie) && tie >= 0)
        st->tie = tie;
    if (isfinite(floor_us) && floor_us >= 0)
        st->tie_floor_us = floor_us;
    if (isfinite(hysteresis) && hysteresis >= 0)
        st->hysteresis = hysteresis;
}

void pta_prefer(pta_state *st, int cand)
{
    if (cand >= 0 && cand < st->ncand)
        st->prefer = cand;
}

int pta_initial_rounds(int ncand) { return ncand > 1 ? ncand * PTA_EXPLORE_PASSES : 0; }

int pta_initial_candidate(int ncand, int round) { return ncand > 1 ? round % ncand : 0; }

int pta_window_candidate(const pta_window *w, int r)
{
    return r - w->first < PTA_WINDOW ? w->plan[r - w->first] : w->plan[0];
}

int pta_measured_round(int initial, const pta_window *w, int r)
{
    if (r < initial || w->every)
        return 1;
    /* The last round of a window of PTA_WINDOW, which also announces the
     * next one; in a longer window the round PTA_WINDOW before its last, so
     * the sender has its report when it plans the next window (it reads
     * reports only then): a report of the last round would wait a whole
     * window more, and a change would be seen that much later. */
    int sampled = (w->span > 2 * PTA_WINDOW ? w->span - PTA_WINDOW : PTA_WINDOW) - 1;
    return r - w->first == sampled || pta_window_candidate(w, r) != w->plan[0]; /* or a probe */
}

static void ring_push(double *ring, int *n, int *next, double v)
{
    ring[*next] = v;
    *next = (*next + 1) % PTA_KEEP;
    if (*n < PTA_KEEP)
        ++*n;
}

/* The q-quantile (linear interpolation) of the finite ones among the last k
 * values pushed to a ring (k <= n); INFINITY when there is none. */
static double ring_quantile(const double *ring, int n, int next, int k, double q)
{
    double v[PTA_KEEP];
    if (k > n)
        k = n;
    int m = 0;
    for (int i = 0; i < k; i++) {
        double x = ring[(next - 1 - i + 2 * PTA_KEEP) % PTA_KEEP];
        if (!isfinite(x))
            continue;
        int j = m++;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    if (m == 0)
        return INFINITY;
    double pos = q * (m - 1);
    int lo = (int)pos;
    return lo + 1 < m ? v[lo] + (pos - lo) * (v[lo + 1] - v[lo]) : v[lo];
}

/* A candidate's typical time (and the typical spread): the lower quartile
 * of its samples. A round in which either process was descheduled is
 * slower, never faster, and on a shared machine that is many rounds
 * (milliseconds in a third of them, 2 ranks on 2 busy cores); the quartile
 * sees through up to 3/4 of them. */
static double typical_of(const pta_state *st, int c)
{
    return ring_quantile(st->sample[c], st->nsample[c], st->next[c], st->nsample[c], TYPICAL);
}

/* A candidate's typical time after the last mark, of its rounds that have one. */
static double typical_after(const pta_state *st, int c)
{
    return ring_quantile(st->after[c], st->nsample[c], st->next[c], st->nsample[c], TYPICAL);
}

/* Whether a sample of the chosen layout, `us`, is as far above its cost when
 * chosen as a drift would be (drifted() asks it of a quartile, twice). */
static int strays(const pta_state *st, double us)
{
    return isfinite(st->reference_us) && us > st->reference_us * (1 + DRIFT) && us - st->reference_us > DRIFT_FLOOR_US;
}

/* Whether a spread is as far from the reference as a change of the arrival pattern would be. */
static int spread_strays(const pta_state *st, double us)
{
    double ref = st->spread_ref_us;
    return ref >= 0 && fabs(us - ref) > SPREAD_FLOOR_US && (us > ref * SPREAD_FACTOR || us * SPREAD_FACTOR < ref);
}

/* Whether the rounds wait for a laggard: the first candidate with enough
 * rounds, most of them paused between two hand-overs, or -1. Only a layout
 * of several messages can show the pause (one message is handed over
 * once), so one such candidate is enough. */
static int lag_witness(const pta_state *st)
{
    for (int c = 0; c < st->ncand; c++) {
        int n = 0;
        for (int i = 0; i < st->nsample[c]; i++)
            n += isfinite(st->pause[c][i]);
        if (st->nsample[c] >= MIN_SAMPLES && 2 * n > st->nsample[c])
            return c;
    }
    return -1;
}

/* The laggard's pause the rounds wait for, us (the witness's typical
 * pause), or 0: for the why. */
static double lag_pause_us(const pta_state *st)
{
    int c = lag_witness(st);
    return c < 0 ? 0 : ring_quantile(st->pause[c], st->nsample[c], st->next[c], st->nsample[c], TYPICAL);
}

void pta_add_round(pta_state *st, int cand, double us, double after_us, double pause_us)
{
    /* A round cannot cost less than nothing: a negative one is stamps that
     * raced (a flush sent the last partition while the thread that marked it
     * was descheduled before its hand-over's stamp), not a measurement. */
    if (cand < 0 || cand >= st->ncand || !isfinite(us) || us < 0)
        return;
    /* the three rings share the sample ring's position and count */
    st->after[cand][st->next[cand]] = isfinite(after_us) && after_us >= 0 ? after_us : NAN;
    st->pause[cand][st->next[cand]] = isfinite(pause_us) && pause_us > 0 ? pause_us : NAN;
    ring_push(st->sample[cand], &st->nsample[cand], &st->next[cand], us);
    if (!st->exploring && cand == st->current) {
        st->since_choice++;
        st->unsettled |= strays(st, us);
    }
}

void pta_add_sample(pta_state *st, int cand, double us) { pta_add_round(st, cand, us, NAN, NAN); }

void pta_add_spread(pta_state *st, int cand, double us)
{
    /* Only the chosen layout's rounds: the spread of group issues depends on the layout. */
    if (st->exploring || cand != st->current || !isfinite(us) || us < 0)
        return;
    st->unsettled |= spread_strays(st, us);
    ring_push(st->spread, &st->nspread, &st->spread_next, us);
    st->spread_since++;
    if (st->spread_ref_us < 0 && st->spread_since == PTA_WINDOW / 2) { /* the first ones are the reference */
        st->spread_ref_us = ring_quantile(st->spread, st->nspread, st->spread_next, PTA_WINDOW / 2, TYPICAL);
        st->spread_since = 0;
    }
}

/* Whether `value` of candidate c is within the margin `rel` (relative) plus the floor of `of`. */
static int within(const pta_state *st, double (*value)(const pta_state *, int), int c, double of, double rel)
{
    return value(st, c) <= of * (1 + rel) + st->tie_floor_us + 1e-9;
}

/* Among the candidates whose `value` is within the tie margin of the
 * least (*best), the preferred one, else the lower index; `among`: only
 * these (NULL: all). -1 when none has a finite value. */
static int least(const pta_state *st, double (*value)(const pta_state *, int), const int *among, double *best)
{
    double v[PTA_MAX_CANDIDATES]; /* each a quantile of its samples: computed once */
    *best = INFINITY;
    int argmin = -1;
    for (int c = 0; c < st->ncand; c++) {
        v[c] = !among || among[c] ? value(st, c) : INFINITY;
        if (v[c] < *best)
            *best = v[c], argmin = c;
    }
    if (argmin < 0)
        return -1;
    /* The margin is added to the magnitude: a value below zero (none is
     * kept now: pta_add_round) made the tied bound lower than the least
     * itself, and the search below walked past the candidates. */
    double tied = *best + fabs(*best) * st->tie + st->tie_floor_us + 1e-9;
    if (v[st->prefer] <= tied)
        return st->prefer;
    for (int c = 0; c < argmin; c++)
        if (v[c] <= tied)
            return c;
    return argmin;
}

/* The best candidate by its typical cost (ties within the tie margin to the
 * preferred one, else to the lower index), or `keep` when it is within the
 * hysteresis of that (keep < 0: no incumbent). When the rounds wait for a
 * laggard, the candidates tied by cost are told apart by their time after
 * the last mark, the soonest winning (and `keep`, when tied by cost, within
 * the hysteresis of it by that time): pta_add_round. */
static int best_candidate(const pta_state *st, int keep)
{
    double best, soonest_us;
    int pick = least(st, typical_of, NULL, &best);
    if (pick < 0)
        return keep >= 0 ? keep : 0; /* nothing measured: the model's preference */
    if (lag_witness(st) >= 0) {
        int tied[PTA_MAX_CANDIDATES];
        for (int c = 0; c < st->ncand; c++)
            tied[c] = within(st, typical_of, c, best, st->tie);
        int soonest = least(st, typical_after, tied, &soonest_us);
        if (soonest >= 0) {
            if (keep >= 0 && keep != soonest && tied[keep] &&
                within(st, typical_after, keep, typical_after(st, soonest), st->hysteresis))
                return keep;
            return soonest;
        }
    }
    if (keep >= 0 && keep != pick && within(st, typical_of, keep, typical_of(st, pick), st->hysteresis))
        return keep;
    return pick;
}

/* Each candidate's typical cost and sample count; under a laggard also its
 * typical time after the last mark ("#1 16.2 us (2.6 after)/4"). */
static int describe(char *out, size_t len, const pta_state *st)
{
    int n = 0, lag = lag_witness(st) >= 0;
    for (int c = 0; c < st->ncand && n < (int)len; c++) {
        double m = typical_of(st, c), after = typical_after(st, c);
        if (!isfinite(m)) {
            n += snprintf(out + n, len - (size_t)n, "%s#%d -", c ? ", " : "", c);
            continue;
        }
        n += snprintf(out + n, len - (size_t)n, "%s#%d %.1f us", c ? ", " : "", c, m);
        if (lag && isfinite(after) && n < (int)len)
            n += snprintf(out + n, len - (size_t)n, " (%.1f after)", after);
        if (n < (int)len)
            n += snprintf(out + n, len - (size_t)n, "/%d", st->nsample[c]);
    }
    return n;
}

static void choose(pta_state *st, int incumbent, const char *reason)
{
    int pick = best_candidate(st, incumbent);
    if (pick != st->current)
        st->switches++;
    st->current = pick;
    st->exploring = 0;
    st->explore_windows = 0;
    st->reference_us = typical_of(st, pick);
    st->since_choice = 0;
    st->slow_checks = 0;
    st->unprobed = 0;
    st->spread_ref_us = -1; /* from the next spreads of the chosen layout */
    st->nspread = st->spread_next = st->spread_since = 0;
    char medians[200];
    describe(medians, sizeof medians, st);
    char lag[96] = "";
    double pause = lag_pause_us(st);
    if (pause > 0)
        snprintf(lag, sizeof lag, "; a laggard paused the rounds %.0f us: tied layouts by their us after the last mark",
                 pause);
    snprintf(st->why, sizeof st->why, "layout #%d %s (lower quartile of a round's us after the last mark and earlier "
             "hand-overs/samples: %s%s)", pick, reason, medians, lag);
}

/* Exploration: the least measured candidates first, cycling. */
static void plan_exploration(pta_state *st, pta_window *out)
{
    int order[PTA_MAX_CANDIDATES];
    for (int c = 0; c < st->ncand; c++) {
        int j = c;
        for (; j > 0 && st->nsample[order[j - 1]] > st->nsample[c]; j--)
            order[j] = order[j - 1];
        order[j] = c;
    }
    for (int i = 0; i < PTA_WINDOW; i++)
        out->plan[i] = order[i % st->ncand];
    out->span = st->span = PTA_WINDOW;
    out->every = 1;
    st->explore_windows++;
}

static void start_exploration(pta_state *st, pta_window *out, const char *reason)
{
    for (int c = 0; c < st->ncand; c++)
        st->nsample[c] = st->next[c] = 0;
    st->exploring = 1;
    st->explore_windows = 0;
    st->replans++;
    plan_exploration(st, out);
    snprintf(st->why, sizeof st->why, "exploring again: %s", reason);
}

/* Whether the chosen layout has drifted, or the arrival pattern changed:
 * a reason in `why`, else 0. */
static int drifted(pta_state *st, char *why, size_t len)
{
    if (st->since_choice >= DRIFT_SAMPLES && isfinite(st->reference_us)) {
        double now = ring_quantile(st->sample[st->current], st->nsample[st->current], st->next[st->current],
                                   DRIFT_SAMPLES, TYPICAL);
        st->slow_checks = strays(st, now) ? st->slow_checks + 1 : 0;
        if (st->slow_checks >= 2) {
            snprintf(why, len, "layout #%d took %.1f us at two checks, %.1f when chosen", st->current, now,
                     st->reference_us);
            return 1;
        }
    }
    if (st->spread_since >= PTA_WINDOW / 2 && st->spread_ref_us >= 0) {
        int k = st->spread_since < PTA_WINDOW ? st->spread_since : PTA_WINDOW;
        double now = ring_quantile(st->spread, st->nspread, st->spread_next, k, TYPICAL);
        if (spread_strays(st, now)) {
            snprintf(why, len, "ready spread %.1f us, %.1f when chosen", now, st->spread_ref_us);
            return 1;
        }
    }
    return 0;
}

/* The candidate a probe round tries: the least measured other one. */
static int probe_candidate(const pta_state *st)
{
    int pick = -1;
    for (int c = 0; c < st->ncand; c++)
        if (c != st->current && (pick < 0 || st->nsample[c] < st->nsample[pick]))
            pick = c;
    return pick;
}

/* The rounds a settled window covers: twice the last one's, up to
 * PTA_SPAN_MAX, once the chosen layout has DRIFT_SAMPLES samples (a drift
 * check's worth, its exploration's included), their typical round is short
 * and none strayed; else PTA_WINDOW. */
static int settled_span(const pta_state *st, int unsettled)
{
    int c = st->current;
    if (unsettled || st->nsample[c] < DRIFT_SAMPLES ||
        !(ring_quantile(st->sample[c], st->nsample[c], st->next[c], DRIFT_SAMPLES, TYPICAL) < PTA_LONG_SPAN_BELOW_US))
        return PTA_WINDOW;
    return 2 * st->span < PTA_SPAN_MAX ? 2 * st->span : PTA_SPAN_MAX;
}

void pta_plan_window(pta_state *st, pta_window *out)
{
    int unsettled = st->unsettled;
    st->unsettled = 0;
    out->every = 0;
    if (st->ncand < 2) {
        for (int i = 0; i < PTA_WINDOW; i++)
            out->plan[i] = 0;
        out->span = st->span = PTA_WINDOW;
        return;
    }
    int chose = 0;
    if (st->exploring) {
        int measured = 1;
        for (int c = 0; c < st->ncand; c++)
            measured &= st->nsample[c] >= MIN_SAMPLES;
        if (!measured && st->explore_windows < EXPLORE_MAX_WINDOWS) {
            plan_exploration(st, out);
            char medians[200];
            describe(medians, sizeof medians, st);
            snprintf(st->why, sizeof st->why, "exploring (%s)", medians);
            return;
        }
        choose(st, st->replans ? st->current : -1, measured ? "measured best" : "best of what was measured");
        chose = 1;
    } else {
        char why[160];
        if (drifted(st, why, sizeof why)) {
            start_exploration(st, out, why);
            return;
        }
        /* A probe may have shown another candidate faster by the hysteresis. */
        int best = best_candidate(st, st->current);
        if (best != st->current && st->nsample[best] >= MIN_SAMPLES) {
            choose(st, st->current, "faster than the previous choice");
            chose = 1;
        }
    }
    for (int i = 0; i < PTA_WINDOW; i++)
        out->plan[i] = st->current;
    out->span = st->span = chose ? PTA_WINDOW : settled_span(st, unsettled);
    out->every = !chose && unsettled; /* a drift check's samples, in one window */
    st->unprobed += out->span;
    if (st->unprobed >= PROBE_EVERY * PTA_WINDOW && !out->every) {
        out->plan[PTA_WINDOW / 2] = probe_candidate(st);
        st->unprobed = 0;
    }
}

/* One "layout=us" entry. */
static int parse_entry(const char *s, char **end, int *count, int *kind, double *us)
{
    long n = strtol(s, end, 10);
    if (*end == s || n < 1 || n > 1 << 30)
        return -1;
    *count = (int)n;
    *kind = **end == 'c' ? PTA_FAKE_CUT : **end == 's' ? PTA_FAKE_SPLIT : PTA_FAKE_GROUPS;
    if (*kind != PTA_FAKE_GROUPS)
        ++*end;
    if (**end != '=')
        return -1;
    s = *end + 1;
    *us = strtod(s, end);
    return *end == s || !isfinite(*us) || *us < 0 ? -1 : 0;
}

int pta_fake_parse(const char *text, pta_fake *f)
{
    memset(f, 0, sizeof *f);
    const char *s = text;
    while (*s) {
        if (f->nphase == PTA_FAKE_PHASES)
            return -1;
        int ph = f->nphase++;
        char *end;
        if (*s == '@') {
            long from = strtol(s + 1, &end, 10);
            if (end == s + 1 || *end != ':' || from < 0 || from > 1 << 30 || (ph && from <= f->from[ph - 1]))
                return -1;
            f->from[ph] = (int)from;
            s = end + 1;
        } else if (ph) {
            return -1; /* only the first phase may leave out its round */
        }
        for (;;) {
            if (f->n[ph] == PTA_FAKE_ENTRIES)
                return -1;
            int k = f->n[ph]++;
            if (parse_entry(s, &end, &f->count[ph][k], &f->kind[ph][k], &f->us[ph][k]))
                return -1;
            s = end;
            if (*s != ',')
                break;
            s++;
        }
        if (*s == ';')
            s++;
        else if (*s)
            return -1;
    }
    return f->nphase ? 0 : -1;
}

double pta_fake_cost(const pta_fake *f, int round, int count, int kind)
{
    int ph = 0;
    while (ph + 1 < f->nphase && round >= f->from[ph + 1])
        ph++;
    for (int k = 0; k < f->n[ph]; k++)
        if (f->count[ph][k] == count && f->kind[ph][k] == kind)
            return f->us[ph][k];
    return PTA_FAKE_UNLISTED_US;
}
