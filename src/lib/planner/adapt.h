/* The adaptive policy's decisions (docs/library.md, "Adaptive plans"): which
 * of a send request's candidate layouts each round uses, from the measured
 * time of earlier rounds after their last MPI_Pready. Pure computation: no
 * MPI, no clock; the request feeds it samples and asks for the next window's
 * schedule. Sender and receiver both derive the initial exploration from the
 * candidate count; every later window is announced by the sender.
 *
 * Candidates are indexed 0..n-1 in the model's order of preference (0: the
 * layout the `model` policy would use); ties in measured time go to the
 * preferred candidate (pta_prefer: the plain message) when it is among
 * them, else to the lower index. */
#ifndef PARTITA_PLANNER_ADAPT_H
#define PARTITA_PLANNER_ADAPT_H

#define PTA_MAX_CANDIDATES 4
#define PTA_EXPLORE_PASSES 4 /* the initial exploration tries each candidate this often */
#define PTA_WINDOW 8         /* rounds per announced window after it: the rounds a plan lists */
#define PTA_SPAN_MAX (8 * PTA_WINDOW) /* rounds a settled window may cover (pta_plan_window) */
#define PTA_KEEP 16          /* samples kept per candidate */

/* A window of rounds as the sender announces it and both sides follow. */
typedef struct pta_window {
    int first;            /* its first round */
    int span;             /* the rounds it covers: PTA_WINDOW..PTA_SPAN_MAX */
    int every;            /* every round is measured: exploring, or checking a choice whose sample strayed */
    int plan[PTA_WINDOW]; /* the candidates of its first PTA_WINDOW rounds; later ones use plan[0] */
} pta_window;

typedef struct pta_state {
    int ncand;
    double sample[PTA_MAX_CANDIDATES][PTA_KEEP]; /* a round's cost (pta_add_round), a ring per candidate */
    double after[PTA_MAX_CANDIDATES][PTA_KEEP];  /* its us after the last mark alone (NAN: not known) */
    double pause[PTA_MAX_CANDIDATES][PTA_KEEP];  /* the laggard's pause it waited for, us (NAN: none) */
    int nsample[PTA_MAX_CANDIDATES];             /* in the ring (<= PTA_KEEP) */
    int next[PTA_MAX_CANDIDATES];                /* ring position of the next sample */
    int exploring;          /* trying every candidate; else exploiting `current` */
    int explore_windows;    /* windows planned since this exploration began */
    int current;            /* the candidate in use when exploiting */
    int prefer;             /* wins ties (pta_prefer; 0 unless set) */
    double tie, tie_floor_us, hysteresis; /* the margins of a choice (pta_set_margins) */
    double reference_us;    /* current's median when it was chosen */
    int since_choice;       /* samples of current since it was chosen */
    double spread_ref_us;   /* median spread just after it was chosen (< 0: not yet) */
    double spread[PTA_KEEP];/* recent ready spreads (first to last mark, us) */
    int nspread, spread_next, spread_since;
    int span;               /* rounds the last planned window covers (pta_plan_window) */
    int unsettled;          /* since that window was planned, a sample of the chosen layout or its
                             * spread strayed as far as a drift would (the next window is short) */
    int unprobed;           /* rounds planned since the last probe */
    int slow_checks;        /* window checks in a row that found the chosen layout drifted */
    int replans;            /* explorations started by a drift */
    int switches;           /* times the chosen candidate changed */
    char why[512];          /* the last decision, in words */
} pta_state;

/* Fresh state for ncand candidates (1..PTA_MAX_CANDIDATES). */
void pta_init(pta_state *st, int ncand);
/* Candidate `cand` wins ties in measured time (out of range: ignored). The
 * library prefers the plain message, one message for the whole buffer: what
 * MPIPCL and MPICH send, and what the adaptive policy is compared with, so
 * where the layouts do not measurably differ it sends the same and is not
 * worse than them by a noisy choice. */
void pta_prefer(pta_state *st, int cand);
/* The margins of a choice: candidates whose measured times are within
 * `tie` (relative) plus `floor_us` of the best are tied, and the chosen one
 * is kept unless another is `hysteresis` (relative) plus `floor_us` faster.
 * pta_init sets the adaptive policy's (TIE, TIE_FLOOR_US, HYSTERESIS in
 * adapt.c); the timer, whose promise is 95% of the speed
 * of each of its two layouts, sets narrower ones (PTA_TIMER_*). Negative or
 * non-finite values are ignored. */
void pta_set_margins(pta_state *st, double tie, double floor_us, double hysteresis);
#define PTA_TIMER_TIE 0.02
#define PTA_TIMER_TIE_FLOOR_US 0.05
#define PTA_TIMER_HYSTERESIS 0.03
/* The initial exploration both sides derive: its length in rounds, and the
 * candidate of round r (counted from 0) within it. */
int pta_initial_rounds(int ncand);
int pta_initial_candidate(int ncand, int round);
/* The candidate of round r of window w (w->first <= r < w->first + w->span). */
int pta_window_candidate(const pta_window *w, int r);
/* Whether round r is measured (both sides stamp it): every round of the
 * initial exploration (r < initial) and of a window that says so (every:
 * exploring, or checking a choice); in a settled window only its
 * PTA_WINDOW-th round (the last of a window of PTA_WINDOW, which also
 * carries the announcement of the next window), or in a window over
 * 2 * PTA_WINDOW long the round PTA_WINDOW before its last, and its probe
 * round. Measuring costs the marking and polling calls a little (at 512
 * partitions, 6-13% of a 4-16 KiB round) and the receiver a report:
 * sampling every 4th round and every round of a probe's window kept
 * adaptive 2-8% behind the same single message under `bulk` at 4 KiB in
 * every launch; a settled window now has one round in 8 (or fewer, in a
 * longer window) that does more than its layout's work. */
int pta_measured_round(int initial, const pta_window *w, int r);
/* A measured round: candidate cand cost `us` (the time after the round's
 * last MPI_Pready plus what handing the earlier messages over cost since
 * a laggard's pause: what the policy minimises), of which after_us after
 * the last MPI_Pready (NAN: not known); pause_us: the pause for a laggard
 * its hand-overs showed (PT_LAGGARD_PAUSE_NS or more between two; 0 or NAN:
 * none). When most rounds of a candidate paused, candidates tied by cost
 * are told apart by their time after the last mark: equal from the
 * laggard's resumption on, one has its data at the receiver sooner after
 * the laggard's last mark (the data an application waiting for the last
 * partition sees, partita-p2p's perceived bandwidth). */
void pta_add_round(pta_state *st, int cand, double us, double after_us, double pause_us);
/* pta_add_round with nothing known of the time after the last mark. */
void pta_add_sample(pta_state *st, int cand, double us);
/* A round's spread of group issues (first to last), us: the arrival
 * pattern, as far as the layout shows it. Only the chosen candidate's count:
 * its first PTA_WINDOW/2 after the choice are the reference, and a median
 * of later ones SPREAD_FACTOR away from it starts a new exploration. */
void pta_add_spread(pta_state *st, int cand, double us);
/* The next window (its span, every and plan; the caller sets its first
 * round), from the samples so far; also updates st->why. Its span
 * (st->span too) is PTA_WINDOW while exploring and after a change; a
 * settled choice whose rounds are short (under PTA_LONG_SPAN_BELOW_US) and
 * whose samples hold still gets windows twice as long each time, up to
 * PTA_SPAN_MAX, so the window's two small messages (the plan, a round's
 * report) come up to 8 times less often. A sample of the chosen layout (or
 * its spread) that strays as far as a drift would makes the next window
 * short and measured in every round, so a drift is confirmed or dismissed
 * within a window or two. */
#define PTA_LONG_SPAN_BELOW_US 25.0
void pta_plan_window(pta_state *st, pta_window *out);

/* Test hook (PARTITA_ADAPT_TEST_COSTS): fake costs replace the measured
 * time, per layout, in phases. Text: phases separated by ';', each
 * "[@round:]layout=us,layout=us,...", a layout being a message count with a
 * 'c' suffix for a cut, an 's' suffix for groups the timer splits
 * ("1=50,9c=10;@40:1=5,9c=10,1s=8"); unlisted layouts cost
 * PTA_FAKE_UNLISTED_US. */
enum { PTA_FAKE_GROUPS, PTA_FAKE_CUT, PTA_FAKE_SPLIT }; /* a layout's kind */
#define PTA_FAKE_PHASES 4
#define PTA_FAKE_ENTRIES 8
#define PTA_FAKE_UNLISTED_US 1000.0
typedef struct pta_fake {
    int nphase;
    int from[PTA_FAKE_PHASES];
    int n[PTA_FAKE_PHASES];
    int count[PTA_FAKE_PHASES][PTA_FAKE_ENTRIES];
    int kind[PTA_FAKE_PHASES][PTA_FAKE_ENTRIES]; /* PTA_FAKE_GROUPS, _CUT or _SPLIT */
    double us[PTA_FAKE_PHASES][PTA_FAKE_ENTRIES];
} pta_fake;
/* 0, or -1 when the text is malformed. */
int pta_fake_parse(const char *text, pta_fake *f);
double pta_fake_cost(const pta_fake *f, int round, int count, int kind);

#endif
