/* The adaptive policy on a request pair (adaptive.h): candidate layouts,
 * their swapping at MPI_Start, the schedule's control messages and the
 * measurements fed to the decisions of planner/adapt.c. */
#include "request/adaptive.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flush/flush.h"
#include "flush/timer_flush.h"
#include "flush/timer_registry.h"
#include "partita/partita.h"
#include "planner/adapt.h"
#include "planner/planner.h"
#include "request/clock.h"
#include "request/errors.h"
#include "request/orphans.h"
#include "request/runtime.h"
#include "request/setup_waiters.h"
#include "transport/transport.h"

_Static_assert(PTA_MAX_CANDIDATES == PT_HS_MAX_CAND, "the set-up message carries every candidate");

/* Control message (sender -> receiver): the window it announces (its
 * first round, the rounds it covers, whether every round is measured, one
 * candidate per round of its first PTA_WINDOW: planner/adapt.h) and the
 * candidate count. */
enum { CTRL_FIRST, CTRL_SPAN, CTRL_EVERY, CTRL_NCAND, CTRL_PLAN, CTRL_LEN = CTRL_PLAN + PTA_WINDOW };
/* Feedback (receiver -> sender, back communicator): a round and when its
 * last message was in (CLOCK_MONOTONIC ns of the receiver). */
enum { FB_ROUND, FB_IN_NS, FB_LEN };
#define HISTORY (2 * PTA_SPAN_MAX) /* rounds whose stamps the sender keeps for late feedback */
#define FB_RING 4   /* feedback sends the receiver may have in flight */

/* One candidate's live fields of the send side, its transport's state, and
 * the timer's state of the candidate that splits (flush/timer_flush.c). */
typedef struct send_layout {
    int ntrans, cut, nchunks;
    int *bound;
    pt_group *groups;
    pt_chunk *chunks;
    uint32_t *slot;
    void *tp;
    int split, thread_only, lone_waits;
    atomic_uchar *part;
    unsigned char *headed;
    struct pt_run *runbuf;
    int64_t delta_ns, late_begin_ticks;
} send_layout;

struct pt_adapt_send {
    int ncand, built, cur, initial;
    pt_layout cand[PTA_MAX_CANDIDATES];
    send_layout saved[PTA_MAX_CANDIDATES];
    pta_window window, next; /* the live window (the initial exploration first), the one announced next */
    pta_state st;
    int id; /* the tag of the pair's control and feedback messages */
    int32_t *ctrl_buf[2]; /* malloc'ed: an unfinished send is left to the orphans */
    MPI_Request ctrl_req[2];
    int ctrl_next;
    int64_t fb_buf[FB_LEN];
    MPI_Request fb_req;
    int fb_got;       /* feedback messages received */
    int fb_due;       /* feedback messages the receiver sends: one per measured round started */
    int hist_round[HISTORY], hist_cand[HISTORY];
    int64_t first_ns[HISTORY], last_ns[HISTORY]; /* the round's first and last hand-over */
    int64_t before_ns[HISTORY];                  /* the hand-overs before the last, together */
    int64_t pause_ns[HISTORY];                   /* the round's pause for a laggard (0: none) */
    int faked;
    pta_fake fake;
    int lead; /* rounds the control message goes before its window: 1 (0: PARTITA_ADAPT_TEST_LATE_ANNOUNCE) */
    int failed; /* a control or feedback call failed: the layout stays as it is */
};

/* One candidate's receive plan, its transport's state and its words of the
 * set-up message; a candidate whose groups the sender splits, the group
 * accounting of its runs too (recv_plan.c). */
typedef struct recv_layout {
    int ntrans;
    size_t *tstart;
    int *plo, *phi, *need, *missing;
    unsigned char *tdone;
    void *tp;
    int64_t hs_ntrans, hs_flags, hs_arg;
    int split;
    int *group_missing;
    unsigned char *sin;
} recv_layout;

struct pt_adapt_recv {
    int ncand, built, cur, initial;
    pt_layout cand[PTA_MAX_CANDIDATES];
    recv_layout saved[PTA_MAX_CANDIDATES];
    pta_window window; /* the window held; first -1: none yet */
    int id;
    int32_t ctrl_buf[CTRL_LEN];
    MPI_Request ctrl_req;
    int windows_in;   /* control messages received */
    int waits;        /* rounds that waited for theirs at MPI_Start (deferred) */
    int64_t *fb_buf[FB_RING]; /* malloc'ed, like the sender's control buffers */
    MPI_Request fb_req[FB_RING];
    int fb_next;
    /* When the round was in: its last message, or later, once an application
     * that polls MPI_Parrived has had as many true answers as there are
     * partitions (pt_recv_side.adapt_true; a message that completes 512
     * partitions at once leaves the application 512 calls to make, and
     * partita-p2p's arrival is the last of them). */
    _Atomic int64_t in_ns;
    atomic_int in_round;
};

/* The schedule's own channel: control messages go forward (sender to
 * receiver), feedback back, each on its own twin of MPI_COMM_WORLD, with the
 * sender's id of the request pair as the tag. Ids are handed out in turn by
 * each sender, so on either communicator a (peer, tag) names one pair: a
 * transport's tags are its own business (transport/transport.h). */
static MPI_Comm fwd_comm = MPI_COMM_NULL, back_comm = MPI_COMM_NULL;
static atomic_int next_id;

int pt_adapt_init(void)
{
    int rc = PMPI_Comm_dup(MPI_COMM_WORLD, &fwd_comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_dup(MPI_COMM_WORLD, &back_comm);
    if (rc == MPI_SUCCESS) {
        PMPI_Comm_set_errhandler(fwd_comm, MPI_ERRORS_RETURN);
        PMPI_Comm_set_errhandler(back_comm, MPI_ERRORS_RETURN);
    }
    return rc;
}

void pt_adapt_finalize(void)
{
    if (fwd_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&fwd_comm);
    if (back_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&back_comm);
}

static int schedule(int ncand, int initial, const pta_window *w, int round)
{
    return round < initial ? pta_initial_candidate(ncand, round) : pta_window_candidate(w, round);
}

/* ---- sender ------------------------------------------------------------- */

static void send_save(pt_request *req, send_layout *l)
{
    pt_send_side *s = &req->u.s;
    *l = (send_layout){ s->ntrans, s->cut, s->nchunks, s->bound, s->groups, s->chunks, s->slot, req->tp,
                        s->split, s->thread_only, s->lone_waits, s->part, s->headed, s->runbuf, s->delta_ns,
                        s->late_begin_ticks };
}

static void send_load(pt_request *req, const send_layout *l)
{
    pt_send_side *s = &req->u.s;
    s->ntrans = l->ntrans, s->cut = l->cut, s->nchunks = l->nchunks;
    s->bound = l->bound, s->groups = l->groups, s->chunks = l->chunks, s->slot = l->slot, req->tp = l->tp;
    s->split = l->split, s->thread_only = l->thread_only, s->lone_waits = l->lone_waits, s->part = l->part;
    s->headed = l->headed, s->runbuf = l->runbuf, s->delta_ns = l->delta_ns;
    s->late_begin_ticks = l->late_begin_ticks;
}

/* Whether the request is on the timers' list: some candidate splits. */
static int timers_listed(const pt_request *req)
{
    const struct pt_adapt_send *a = req->u.s.adapt;
    int listed = req->u.s.split;
    for (int k = 0; k < a->built; k++)
        listed |= a->saved[k].split;
    return listed;
}

/* A request with a layout that splits is on the timers' list, whose polls
 * (the progress thread's too) read the live layout: its groups, and its
 * transport state, whose early sends they drain in any layout's round
 * (timer_registry.h: pt_timer_sent_early). None may look while the layout
 * changes, and a request left armed would have another layout's groups
 * flushed as if they could split. */
static void send_switch(pt_request *req, int k)
{
    struct pt_adapt_send *a = req->u.s.adapt;
    int watched = timers_listed(req);
    if (watched) {
        pt_timers_hold();
        if (req->u.s.split)
            pt_timer_disarm(req);
    }
    send_save(req, &a->saved[a->cur]);
    send_load(req, &a->saved[k]);
    a->cur = k;
    if (watched)
        pt_timers_release();
}

/* Candidate k's messages: its groups' bounds, marking state and transport. */
static int build_send(pt_request *req, pt_layout l)
{
    pt_send_side *s = &req->u.s;
    s->ntrans = l.count;
    s->cut = l.cut;
    s->groups = NULL, s->chunks = NULL, s->slot = NULL, req->tp = NULL;
    s->split = s->thread_only = s->lone_waits = 0, s->part = NULL, s->headed = NULL, s->runbuf = NULL;
    s->delta_ns = s->late_begin_ticks = 0;
    s->bound = malloc(((size_t)l.count + 1) * sizeof *s->bound);
    if (!s->bound)
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for %d transport messages", l.count);
    for (int j = 0; !l.cut && j <= l.count; j++)
        s->bound[j] = ptm_group_first(req->partitions, l.count, j);
    int rc = pt_flush_init(req, req->settings.policy == PT_POLICY_TIMER || l.split);
    return rc != MPI_SUCCESS ? rc : req->tp_ops->send_init(req);
}

int pt_adapt_send_init(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    pt_layout cand[PTA_MAX_CANDIDATES];
    int n = req->settings.policy == PT_POLICY_TIMER
                ? pt_plan_timer_candidates(&req->settings, req->part_bytes, req->partitions, req->contiguous, cand)
                : pt_plan_candidates(&req->settings, req->part_bytes, req->partitions, req->contiguous, cand,
                                     PTA_MAX_CANDIDATES);
    if (n < 2)
        return PT_ADAPT_STATIC;
    struct pt_adapt_send *a = calloc(1, sizeof *a);
    if (!a)
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for the adaptive policy's state");
    s->adapt = a;
    s->adapt_pause_ends_charges = req->settings.policy == PT_POLICY_TIMER;
    a->ncand = n;
    a->fb_req = a->ctrl_req[0] = a->ctrl_req[1] = MPI_REQUEST_NULL;
    memcpy(a->cand, cand, sizeof cand);
    a->id = atomic_fetch_add(&next_id, 1) % (pt_tag_ub() + 1);
    int64_t *hs = req->hs_buf;
    hs[PT_HS_NCAND] = n;
    hs[PT_HS_ADAPT_ID] = a->id;
    for (int k = 0; k < n; k++) {
        int rc = build_send(req, cand[k]);
        send_save(req, &a->saved[k]);
        a->built = k + 1;
        a->cur = k;
        if (rc != MPI_SUCCESS)
            return rc;
        a->cand[k].split = s->split; /* the timer's state was built (it can pay) */
        hs[PT_HS_CAND + PT_HS_CAND_WORDS * k] = cand[k].count;
        hs[PT_HS_CAND + PT_HS_CAND_WORDS * k + 1] = (cand[k].cut ? PT_HS_FLAG_CUT : 0) |
                                                    (s->split ? PT_HS_FLAG_SPLIT : 0);
        hs[PT_HS_CAND + PT_HS_CAND_WORDS * k + 2] = hs[PT_HS_TRANSPORT_ARG]; /* e.g. its first tag */
    }
    send_load(req, &a->saved[0]);
    a->cur = 0;
    hs[PT_HS_TRANSPORT_ARG] = hs[PT_HS_CAND + 2];
    a->ctrl_buf[0] = malloc(CTRL_LEN * sizeof *a->ctrl_buf[0]);
    a->ctrl_buf[1] = malloc(CTRL_LEN * sizeof *a->ctrl_buf[1]);
    if (!a->ctrl_buf[0] || !a->ctrl_buf[1])
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for the adaptive policy's state");
    int rc = PMPI_Recv_init(a->fb_buf, FB_LEN, MPI_INT64_T, req->peer_world, a->id, back_comm, &a->fb_req);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Start(&a->fb_req);
    if (rc != MPI_SUCCESS)
        return pt_fail_mpi(req->comm, rc, "MPI_Psend_init", "MPI_Recv_init of the adaptive policy's feedback");
    for (int i = 0; i < HISTORY; i++)
        a->hist_round[i] = -1;
    pta_init(&a->st, n);
    for (int k = 0; k < n; k++)
        if (cand[k].count == 1 && !cand[k].cut && !a->cand[k].split)
            pta_prefer(&a->st, k); /* the plain message wins ties */
    if (req->settings.policy == PT_POLICY_TIMER) /* its two layouts: the model's and none's (5% of each) */
        pta_set_margins(&a->st, PTA_TIMER_TIE, PTA_TIMER_TIE_FLOOR_US, PTA_TIMER_HYSTERESIS);
    a->initial = pta_initial_rounds(n);
    /* the initial exploration, as if a window: the first announced one follows it */
    a->window = (pta_window){ .first = 0, .span = a->initial, .every = 1 };
    /* Test hook: announce each window at its own first round, so a receiver
     * that starts first waits for it (deferred) every time. */
    const char *late = getenv("PARTITA_ADAPT_TEST_LATE_ANNOUNCE");
    a->lead = late && late[0] == '1' ? 0 : 1;
    const char *fake = getenv("PARTITA_ADAPT_TEST_COSTS");
    if (fake && *fake) {
        a->faked = pta_fake_parse(fake, &a->fake) == 0;
        if (!a->faked)
            fprintf(stderr, "partita: warning: PARTITA_ADAPT_TEST_COSTS='%s' is malformed; ignored\n", fake);
    }
    return MPI_SUCCESS;
}

/* A layout's kind: 0 groups, 1 a cut, 2 groups that split, as Partita_Request_layouts reports it
 * (partita.h) and the fake costs name it (planner/adapt.h: pta_fake_cost). */
_Static_assert(PTA_FAKE_GROUPS == 0 && PTA_FAKE_CUT == 1 && PTA_FAKE_SPLIT == 2, "one numbering of layout kinds");
static int layout_kind(pt_layout l) { return l.cut ? PTA_FAKE_CUT : l.split ? PTA_FAKE_SPLIT : PTA_FAKE_GROUPS; }

/* One feedback message: the round's time after its last mark. */
static void take_feedback(struct pt_adapt_send *a, const int64_t *fb)
{
    if (fb[FB_ROUND] < 0 || fb[FB_ROUND] > INT_MAX)
        return;
    int round = (int)fb[FB_ROUND], slot = round % HISTORY;
    int64_t first = a->first_ns[slot], last = a->last_ns[slot];
    if (a->hist_round[slot] != round || !last || !fb[FB_IN_NS])
        return; /* too old, or its stamps are missing */
    int c = a->hist_cand[slot];
    /* After the last mark, plus what handing the earlier messages over cost
     * the marking thread(s), so a layout of many messages pays for them even
     * though they went before the last mark (partita-p2p's overhead metric
     * counts from the first mark). Each one is timed rather than estimated
     * as (count - 1) times the shorter of the first and the last, which
     * assumed a layout's messages alike (the middle ones of a cut may wait
     * for MPI's eager cells). Side by side the two were about as close to
     * the benchmark's t_part (docs/library.md, "What a round costs"). */
    if (a->faked) { /* fake costs stand for the whole measurement */
        pta_add_sample(&a->st, c, pta_fake_cost(&a->fake, round, a->cand[c].count, layout_kind(a->cand[c])));
        return;
    }
    double before = (double)a->before_ns[slot], after = (double)(fb[FB_IN_NS] - last);
    pta_add_round(&a->st, c, (after + before) / 1e3, after / 1e3, (double)a->pause_ns[slot] / 1e3);
    if (first)
        pta_add_spread(&a->st, c, (double)(last - first) / 1e3);
}

/* Every feedback message that has come in. */
static int drain_feedback(struct pt_adapt_send *a)
{
    for (;;) {
        int flag = 0;
        int rc = PMPI_Test(&a->fb_req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || !flag)
            return rc;
        a->fb_got++;
        take_feedback(a, a->fb_buf);
        if ((rc = PMPI_Start(&a->fb_req)) != MPI_SUCCESS)
            return rc;
    }
}

/* Plan the window that begins at round `first` and tell the receiver. */
static int announce(pt_request *req, int first)
{
    struct pt_adapt_send *a = req->u.s.adapt;
    pta_plan_window(&a->st, &a->next);
    a->next.first = first;
    int b = a->ctrl_next;
    a->ctrl_next ^= 1;
    int rc = MPI_SUCCESS;
    if (a->ctrl_req[b] != MPI_REQUEST_NULL && (rc = PMPI_Wait(&a->ctrl_req[b], MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return rc; /* a tiny send of PTA_WINDOW rounds ago: complete locally long since */
    int32_t *m = a->ctrl_buf[b];
    m[CTRL_FIRST] = first;
    m[CTRL_SPAN] = a->next.span;
    m[CTRL_EVERY] = a->next.every;
    m[CTRL_NCAND] = a->ncand;
    for (int i = 0; i < PTA_WINDOW; i++)
        m[CTRL_PLAN + i] = a->next.plan[i];
    return PMPI_Isend(m, CTRL_LEN, MPI_INT32_T, req->peer_world, a->id, fwd_comm, &a->ctrl_req[b]);
}

/* The last round's stamps (taken by the flush layer as it handed the
 * messages over: pt_send_side.adapt_*) go to its history slot. */
static void keep_stamps(pt_send_side *s, struct pt_adapt_send *a)
{
    int last = s->round - 1, slot = last % HISTORY;
    if (last < 0 || a->hist_round[slot] != last)
        return;
    a->first_ns[slot] = atomic_load_explicit(&s->adapt_first_ns, memory_order_relaxed);
    a->last_ns[slot] = atomic_load_explicit(&s->adapt_last_ns, memory_order_relaxed);
    a->before_ns[slot] = atomic_load_explicit(&s->adapt_before_cost_ns, memory_order_relaxed);
    a->pause_ns[slot] = atomic_load_explicit(&s->adapt_pause_ns, memory_order_relaxed);
}

void pt_adapt_send_start(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    struct pt_adapt_send *a = s->adapt;
    int round = s->round;
    if (a->failed) /* the receiver follows the announced windows: so must we */
        return;
    if (s->adapt_measure)
        keep_stamps(s, a); /* the round that just ended was measured */
    int ends = a->window.first + a->window.span; /* the round the next window begins */
    int opens = round == ends;
    /* The window to plan and announce in this round: this round's (test
     * hook: the receiver may well be waiting for it already), or, one round
     * ahead, the next round's, so the receiver has it by its MPI_Start. */
    int announce_now = opens && a->lead == 0;
    int announce_next = a->lead && round + 1 == ends;
    /* Feedback is read only before a window is planned: an MPI_Test of the
     * posted receive runs MPI's progress engine, which every round of 1 KiB
     * felt; the reports wait in MPI's queue meanwhile (HISTORY > a window's
     * measured rounds). */
    int rc = announce_now || announce_next ? drain_feedback(a) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && announce_now)
        rc = announce(req, round);
    if (opens)
        a->window = a->next;
    int k = schedule(a->ncand, a->initial, &a->window, round);
    if (k != a->cur)
        send_switch(req, k);
    /* Only a measured round has stamps to clear and a history slot: the
     * others leave every line of the history alone (at 1-4 KiB a round is
     * under a microsecond). */
    s->adapt_measure = pta_measured_round(a->initial, &a->window, round);
    if (s->adapt_measure) {
        a->fb_due++;
        atomic_store_explicit(&s->adapt_first_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&s->adapt_last_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&s->adapt_before_cost_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&s->adapt_prev_end_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&s->adapt_pause_ns, 0, memory_order_relaxed);
        int slot = round % HISTORY;
        a->hist_round[slot] = round;
        a->hist_cand[slot] = k;
        a->first_ns[slot] = a->last_ns[slot] = a->before_ns[slot] = 0;
        a->pause_ns[slot] = 0;
    }
    if (rc == MPI_SUCCESS && announce_next)
        rc = announce(req, round + 1);
    if (rc != MPI_SUCCESS) {
        /* Without the control message the receiver cannot follow a change:
         * it would wait for it. Report once, then stay put. */
        a->failed = 1;
        pt_fail_mpi(req->comm, rc, pt_call_name(), "a message of the adaptive policy's schedule");
    }
}

/* Cancel and complete a posted receive (local), then free it: 1 when it
 * had received its message after all. */
static int cancel_recv(MPI_Request *r)
{
    int received = pt_complete_or_cancel_recv(r);
    if (*r != MPI_REQUEST_NULL)
        PMPI_Request_free(r);
    return received;
}

/* n messages still to come from peer on tag: received in the background
 * (orphans.h) into buffers of their own. */
static void expect_in_background(int n, int len, MPI_Datatype type, int peer, int tag, MPI_Comm comm)
{
    for (int i = 0; i < n; i++) {
        void *buf = malloc((size_t)len * sizeof(int64_t));
        MPI_Request r;
        if (!buf || PMPI_Irecv(buf, len, type, peer, tag, comm, &r) != MPI_SUCCESS || pt_orphan_add(r, buf) != 0)
            free(buf); /* out of memory: the message stays unmatched */
    }
}

/* A send that may still be going: finish it in the background. */
static void leave_send(MPI_Request *r, void *buf)
{
    int flag = 1;
    if (*r != MPI_REQUEST_NULL)
        PMPI_Test(r, &flag, MPI_STATUS_IGNORE);
    if (flag)
        free(buf);
    else
        pt_orphan_add(*r, buf);
}

void pt_adapt_send_destroy(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    struct pt_adapt_send *a = s->adapt;
    if (a->built > a->cur)
        send_save(req, &a->saved[a->cur]);
    if (timers_listed(req)) /* off the timers' list first: their polls read the live layout, which changes below */
        pt_timers_unregister(req);
    for (int k = 0; k < a->built; k++) {
        send_load(req, &a->saved[k]);
        if (req->tp)
            req->tp_ops->send_destroy(req);
        pt_flush_destroy(req);
        free(s->bound);
        s->bound = NULL;
    }
    /* The receiver sends one feedback message as each of its measured
     * rounds completes: those not received yet are received in the
     * background, so no message is left unmatched (MPICH refuses to free a
     * communicator then). */
    int got = a->fb_got;
    if (a->fb_req != MPI_REQUEST_NULL)
        got += cancel_recv(&a->fb_req);
    expect_in_background(a->fb_due - got, FB_LEN, MPI_INT64_T, req->peer_world, a->id, back_comm);
    for (int b = 0; b < 2; b++)
        leave_send(&a->ctrl_req[b], a->ctrl_buf[b]);
    free(a);
    s->adapt = NULL;
}

/* ---- receiver ----------------------------------------------------------- */

static void recv_save(pt_request *req, recv_layout *l)
{
    pt_recv_side *r = &req->u.r;
    *l = (recv_layout){ r->ntrans, r->tstart, r->plo, r->phi, r->need, r->missing, r->tdone, req->tp,
                        r->hs[PT_HS_NTRANS], r->hs[PT_HS_FLAGS], r->hs[PT_HS_TRANSPORT_ARG],
                        r->split, r->group_missing, r->sin };
}

static void recv_load(pt_request *req, const recv_layout *l)
{
    pt_recv_side *r = &req->u.r;
    r->ntrans = l->ntrans, r->tstart = l->tstart, r->plo = l->plo, r->phi = l->phi, r->need = l->need;
    r->missing = l->missing, r->tdone = l->tdone, req->tp = l->tp;
    r->hs[PT_HS_NTRANS] = l->hs_ntrans, r->hs[PT_HS_FLAGS] = l->hs_flags, r->hs[PT_HS_TRANSPORT_ARG] = l->hs_arg;
    r->split = l->split, r->group_missing = l->group_missing, r->sin = l->sin;
}

/* A candidate the sender may use: groups (at most one message per
 * partition), which it may split, or the buffer cut into pieces of at least
 * one byte. */
static int candidate_ok(const int64_t *hs, int64_t count, int64_t flags)
{
    if (count < 1 || count > INT_MAX || (flags & ~(int64_t)(PT_HS_FLAG_CUT | PT_HS_FLAG_SPLIT)) ||
        flags == (PT_HS_FLAG_CUT | PT_HS_FLAG_SPLIT))
        return 0;
    if (!(flags & PT_HS_FLAG_CUT))
        return count <= hs[PT_HS_PARTS];
    return hs[PT_HS_PART_BYTES] > 0 && (count + hs[PT_HS_PARTS] - 1) / hs[PT_HS_PARTS] <= hs[PT_HS_PART_BYTES];
}

/* Candidate k's receive plan and transport state, as if the set-up message
 * had named that layout alone. */
static int build_recv(pt_request *req, const int64_t *c)
{
    pt_recv_side *r = &req->u.r;
    r->hs[PT_HS_NTRANS] = c[0];
    r->hs[PT_HS_FLAGS] = c[1];
    r->hs[PT_HS_TRANSPORT_ARG] = c[2];
    r->ntrans = (int)c[0];
    r->tstart = NULL, r->plo = r->phi = r->need = r->missing = NULL, r->tdone = NULL, req->tp = NULL;
    r->split = 0, r->group_missing = NULL, r->sin = NULL;
    pt_recv_plan_build(req); /* the staging buffer, if any, is shared */
    if (pt_recv_error_stops(r->error))
        return -1;
    req->tp_ops->recv_setup(req);
    if (pt_recv_error_stops(r->error))
        return -1;
    r->split = (c[1] & PT_HS_FLAG_SPLIT) != 0;
    return 0;
}

int pt_adapt_recv_setup(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    int64_t *hs = r->hs;
    int n = (int)hs[PT_HS_NCAND];
    for (int k = 0; k < n; k++) {
        const int64_t *c = &hs[PT_HS_CAND + PT_HS_CAND_WORDS * k];
        if (!candidate_ok(hs, c[0], c[1]) || (hs[PT_HS_FLAGS] & PT_HS_FLAG_SPLIT) || hs[PT_HS_ADAPT_ID] < 0 ||
            hs[PT_HS_ADAPT_ID] > pt_tag_ub()) {
            r->error = PT_E_SETUP;
            return MPI_SUCCESS;
        }
    }
    struct pt_adapt_recv *a = calloc(1, sizeof *a);
    int64_t *fb = a ? calloc((size_t)FB_LEN, sizeof *fb) : NULL;
    if (!fb) {
        free(a);
        r->error = PT_E_NO_MEM;
        return MPI_SUCCESS;
    }
    r->adapt = a;
    a->ncand = n;
    a->id = (int)hs[PT_HS_ADAPT_ID];
    a->ctrl_req = MPI_REQUEST_NULL;
    for (int b = 0; b < FB_RING; b++) {
        a->fb_buf[b] = b ? malloc(FB_LEN * sizeof *fb) : fb; /* each may go to the orphans on its own */
        a->fb_req[b] = MPI_REQUEST_NULL;
        if (!a->fb_buf[b]) {
            r->error = PT_E_NO_MEM;
            return MPI_SUCCESS;
        }
    }
    a->window.first = -1;
    a->in_round = -1;
    a->initial = pta_initial_rounds(n);
    for (int k = 0; k < n; k++) {
        const int64_t *c = &hs[PT_HS_CAND + PT_HS_CAND_WORDS * k];
        a->cand[k] = (pt_layout){ (int)c[0], (c[1] & PT_HS_FLAG_CUT) != 0, (c[1] & PT_HS_FLAG_SPLIT) != 0 };
        int failed = build_recv(req, c);
        recv_save(req, &a->saved[k]);
        a->built = k + 1;
        a->cur = k;
        if (failed)
            return MPI_SUCCESS; /* r->error is reported when the round completes */
    }
    recv_load(req, &a->saved[0]);
    a->cur = 0;
    int rc = PMPI_Irecv(a->ctrl_buf, CTRL_LEN, MPI_INT32_T, req->peer_world, a->id, fwd_comm, &a->ctrl_req);
    if (rc != MPI_SUCCESS) {
        r->error = PT_E_INTERNAL;
        r->error_code = rc;
        r->error_call = "MPI_Irecv of the adaptive policy's schedule";
    }
    return MPI_SUCCESS;
}

void pt_adapt_recv_done(pt_request *req)
{
    /* One feedback message for every measured round, always (the sender
     * counts them, from the same schedule, to leave nothing unmatched);
     * without a stamp (0) when the round's last message was not seen. Other
     * rounds send none: at 1 KiB a message back every round cost adaptive
     * 10-20% of the round against the same layout under `bulk`. */
    struct pt_adapt_recv *a = req->u.r.adapt;
    if (!req->u.r.adapt_measure)
        return;
    int round = req->u.r.round;
    int b = a->fb_next;
    a->fb_next = (b + 1) % FB_RING;
    if (a->fb_req[b] != MPI_REQUEST_NULL)
        PMPI_Wait(&a->fb_req[b], MPI_STATUS_IGNORE); /* sent FB_RING rounds ago: a tiny eager send */
    a->fb_buf[b][FB_ROUND] = round;
    a->fb_buf[b][FB_IN_NS] = atomic_load(&a->in_round) == round ? atomic_load(&a->in_ns) : 0;
    PMPI_Isend(a->fb_buf[b], FB_LEN, MPI_INT64_T, req->peer_world, a->id, back_comm, &a->fb_req[b]);
}

/* The window that holds `round` is in: 1; not yet: 0; malformed: -1. */
static int window_in(pt_request *req, int first, int *rc)
{
    pt_recv_side *r = &req->u.r;
    struct pt_adapt_recv *a = r->adapt;
    int flag = 0;
    if ((*rc = PMPI_Test(&a->ctrl_req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        *rc = pt_fail_mpi(req->comm, *rc, pt_call_name(), "MPI_Test of the adaptive policy's schedule");
        return -1;
    }
    if (!flag)
        return 0;
    const int32_t *m = a->ctrl_buf;
    int ok = m[CTRL_FIRST] == first && m[CTRL_NCAND] == a->ncand && m[CTRL_SPAN] >= PTA_WINDOW &&
             m[CTRL_SPAN] <= PTA_SPAN_MAX && (m[CTRL_EVERY] == 0 || m[CTRL_EVERY] == 1);
    for (int i = 0; ok && i < PTA_WINDOW; i++)
        ok = m[CTRL_PLAN + i] >= 0 && m[CTRL_PLAN + i] < a->ncand;
    if (!ok)
        return -1;
    a->window = (pta_window){ .first = first, .span = m[CTRL_SPAN], .every = m[CTRL_EVERY] };
    for (int i = 0; i < PTA_WINDOW; i++)
        a->window.plan[i] = m[CTRL_PLAN + i];
    a->windows_in++;
    *rc = PMPI_Irecv(a->ctrl_buf, CTRL_LEN, MPI_INT32_T, req->peer_world, a->id, fwd_comm, &a->ctrl_req);
    if (*rc != MPI_SUCCESS) {
        *rc = pt_fail_mpi(req->comm, *rc, pt_call_name(), "MPI_Irecv of the adaptive policy's schedule");
        return -1;
    }
    return 1;
}

int pt_adapt_recv_round_layout(pt_request *req, int *rc)
{
    pt_recv_side *r = &req->u.r;
    struct pt_adapt_recv *a = r->adapt;
    int round = r->round;
    *rc = MPI_SUCCESS;
    if (round >= a->initial) {
        /* the window held, or the one after it (rounds come one by one) */
        int next = a->window.first < 0 ? a->initial : a->window.first + a->window.span;
        int in = round < next ? 1 : window_in(req, next, rc);
        if (in < 0) {
            r->deferred = 0;
            if (*rc == MPI_SUCCESS)
                r->error = PT_E_SETUP; /* a schedule that does not fit: reported at completion */
            return 0;
        }
        if (!in) {
            if (!r->deferred) {
                a->waits++;
                pt_waiters_add(req); /* posted by progress once the schedule is in */
            }
            r->deferred = 1;
            return 0;
        }
    }
    atomic_store_explicit(&r->adapt_true, 0, memory_order_relaxed); /* no true MPI_Parrived this round yet */
    r->adapt_measure = pta_measured_round(a->initial, &a->window, round);
    int k = schedule(a->ncand, a->initial, &a->window, round);
    if (k != a->cur) {
        recv_save(req, &a->saved[a->cur]);
        recv_load(req, &a->saved[k]);
        a->cur = k;
    }
    r->deferred = 0;
    return 1;
}

void pt_adapt_recv_round_in(pt_request *req)
{
    struct pt_adapt_recv *a = req->u.r.adapt;
    if (!req->u.r.adapt_measure)
        return; /* not measured: its report carries no stamp */
    atomic_store(&a->in_ns, pt_now_ns());
    atomic_store(&a->in_round, req->u.r.round);
}

void pt_adapt_recv_seen_all(pt_request *req)
{
    struct pt_adapt_recv *a = req->u.r.adapt;
    if (atomic_load(&a->in_round) == req->u.r.round) /* not before the last message */
        atomic_store(&a->in_ns, pt_now_ns());
}

void pt_adapt_recv_destroy(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    struct pt_adapt_recv *a = r->adapt;
    if (a->built > a->cur)
        recv_save(req, &a->saved[a->cur]);
    for (int k = 0; k < a->built; k++) { /* each one's plan arrays; the rest is pt_recv_plan_free's */
        recv_load(req, &a->saved[k]);
        if (req->tp)
            req->tp_ops->recv_destroy(req);
        free(r->tstart), free(r->plo), free(r->phi), free(r->need), free(r->missing), free(r->tdone);
        free(r->group_missing), free(r->sin);
        r->tstart = NULL, r->plo = r->phi = r->need = r->missing = NULL, r->tdone = NULL, req->tp = NULL;
        r->group_missing = NULL, r->sin = NULL, r->split = 0;
    }
    /* The sender announces a window in the round before it begins: the
     * first in the initial exploration's last round, each later one in the
     * last round of the window before, which the receiver knows up to the
     * last window it received. Those not received yet are received in the
     * background, so none stays unmatched. */
    int rounds = r->round + 1, got = a->windows_in;
    int announced = a->window.first < 0 ? rounds >= a->initial : got + (rounds >= a->window.first + a->window.span);
    if (a->ctrl_req != MPI_REQUEST_NULL)
        got += cancel_recv(&a->ctrl_req);
    expect_in_background(announced - got, CTRL_LEN, MPI_INT32_T, req->peer_world, a->id, fwd_comm);
    for (int b = 0; b < FB_RING; b++)
        leave_send(&a->fb_req[b], a->fb_buf[b]);
    free(a);
    r->adapt = NULL;
}

/* ---- introspection ------------------------------------------------------ */

/* A request's candidate layouts (the one layout of other policies, in *one),
 * how many (0 before set-up and with MPI_PROC_NULL), and the round's. */
static const pt_layout *layouts_of(const pt_request *req, pt_layout *one, int *n, int *cur)
{
    *n = 1, *cur = 0;
    if (req->is_send && req->u.s.adapt) {
        *n = req->u.s.adapt->ncand, *cur = req->u.s.adapt->cur;
        return req->u.s.adapt->cand;
    }
    if (!req->is_send && req->u.r.adapt) {
        *n = req->u.r.adapt->ncand, *cur = req->u.r.adapt->cur;
        return req->u.r.adapt->cand;
    }
    if (req->proc_null || (!req->is_send && !req->u.r.ready)) {
        *n = 0, *cur = -1;
        return NULL;
    }
    one->count = req->is_send ? req->u.s.ntrans : req->u.r.ntrans;
    one->cut = req->is_send ? req->u.s.cut : (req->u.r.hs[PT_HS_FLAGS] & PT_HS_FLAG_CUT) != 0;
    one->split = 0; /* the timer's splits are told apart (Partita_Request_why) */
    return one;
}

/* The partitioned request behind an introspection call's handle, else NULL after reporting the error. */
static pt_request *introspected(MPI_Request request, const char *call, int *rc)
{
    pt_request *req = pt_lookup(request);
    *rc = req ? MPI_SUCCESS
              : pt_fail(MPI_COMM_SELF, PT_E_NOT_PARTITIONED, call, "the request is not a partitioned request");
    return req;
}

int Partita_Request_layouts(MPI_Request request, int max, int counts[], int cuts[], int *ncand, int *current)
{
    int rc;
    pt_request *req = introspected(request, "Partita_Request_layouts", &rc);
    if (!req)
        return rc;
    if (!ncand || !current)
        return pt_fail_null("Partita_Request_layouts", ncand ? "current" : "ncand");
    pt_layout one;
    int n, cur;
    const pt_layout *cand = layouts_of(req, &one, &n, &cur);
    for (int k = 0; k < n && k < max; k++) {
        if (counts)
            counts[k] = cand[k].count;
        if (cuts)
            cuts[k] = layout_kind(cand[k]);
    }
    *ncand = n;
    *current = cur;
    return MPI_SUCCESS;
}

static int layout_words(char *out, size_t len, pt_layout l)
{
    return snprintf(out, len, "%d %s%s", l.count,
                    l.cut ? (l.count == 1 ? "piece" : "pieces (cut)") : (l.count == 1 ? "message" : "groups"),
                    l.split ? ", split when its marking stalls" : "");
}

/* "; transport NAME" and what the transport adds of itself. */
static void put_transport(const pt_request *req, char *text, size_t cap, size_t *at)
{
    if (!req->tp_ops || *at >= cap)
        return;
    *at += (size_t)snprintf(text + *at, cap - *at, "; transport %s", req->tp_ops->name);
    if (req->tp_ops->describe && req->tp && *at < cap) {
        req->tp_ops->describe(req, text + *at, cap - *at);
        *at += strlen(text + *at);
    }
}

int Partita_Request_why(MPI_Request request, char *text, int len)
{
    int rc;
    pt_request *req = introspected(request, "Partita_Request_why", &rc);
    if (!req)
        return rc;
    if (!text)
        return pt_fail_null("Partita_Request_why", "text");
    if (len < 1)
        return pt_fail(MPI_COMM_SELF, PT_E_LENGTH, "Partita_Request_why",
                       "len = %d: the text needs at least 1 byte (its terminating NUL)", len);
    text[0] = '\0';
    int n = 0, cur = -1;
    pt_layout one;
    const pt_layout *cand = layouts_of(req, &one, &n, &cur);
    size_t cap = (size_t)len, at = 0;
    const char *policy = req->is_send ? pt_policy_name(req->settings.policy)
                         : req->u.r.ready ? pt_policy_name((pt_policy)req->u.r.hs[PT_HS_POLICY])
                                          : "unknown";
#define PUT(...) (at += at < cap ? (size_t)snprintf(text + at, cap - at, __VA_ARGS__) : 0)
    if (n == 0) {
        PUT("%s: %s", policy, req->proc_null ? "MPI_PROC_NULL peer, nothing is sent" : "set-up message not in yet");
        return MPI_SUCCESS;
    }
    char words[64];
    layout_words(words, sizeof words, cand[cur]);
    if (n == 1) {
        PUT("%s: %s, %s at init", policy, words, req->is_send ? "planned" : "as the sender planned");
        if (req->settings.policy == PT_POLICY_ADAPTIVE && req->is_send)
            PUT(req->settings.adapt ? " (one candidate layout)" : " (PARTITA_ADAPT=0: the model's layout)");
        if (req->is_send && req->settings.policy == PT_POLICY_NONE && req->u.s.cut)
            PUT("; each partition in %d eager pieces, sent at its mark (whole, its %zu bytes would wait for MPI's "
                "rendezvous handshake)", req->u.s.ntrans / req->partitions, req->part_bytes);
        if (req->is_send && req->settings.policy == PT_POLICY_TIMER && req->u.s.split) {
            const pt_send_side *ss = &req->u.s;
            PUT("; a group with no new mark for %.1f us is split: its ready partitions go, ",
                (double)ss->delta_ns / 1e3);
            if (ss->lone_waits)
                PUT("and the later ones in runs (at the group's last mark, or when its marking stalls again) when "
                    "they lie in blocks, each at its mark when they lie scattered: alone, a partition of %zu bytes "
                    "would wait for MPI's rendezvous handshake (past the eager limit, with too many pieces to split "
                    "it, and under 256 KiB, where that wait is about its copy's time)", req->part_bytes);
            else
                PUT("each later one at its mark");
            if (ss->thread_only && req->settings.background)
                PUT(" (groups this small only by the progress thread, which a round wakes only after one that split "
                    "a stalled group or whose marking took %.1f us or more; other rounds send a stalled group whole)",
                    (double)pt_timer_late_begin_ns(req) / 1e3);
            else if (req->settings.background)
                PUT(" (in the rounds that wake the progress thread: the first %d, and those after one that split a "
                    "stalled group or whose marking took %.1f us or more; other rounds send a stalled group whole)",
                    PT_TIMER_WATCH_ROUNDS, (double)pt_timer_late_begin_ns(req) / 1e3);
            if (!req->settings.background) /* the last-mark rule (timer_flush.c) */
                PUT(" (%s a group of at most %d partitions %swhose marking took %.1f us or more, as a group's did "
                    "in the round before, is split at its last mark%s, and the next %d rounds send each of its "
                    "partitions at its mark)",
                    ss->thread_only ? "groups this small only by a progress thread, and none runs:"
                                    : "by the application's own MPI calls, as no progress thread runs;",
                    PT_LATE_MAX, ss->thread_only ? "" : "that no call split and ",
                    (double)pt_timer_late_begin_ns(req) / 1e3, ss->thread_only ? " instead" : "", PT_AHEAD_ROUNDS);
            if (ss->lone_waits) {
                PUT("; after a scattered split the group goes alone in the next %d rounds, each partition at its "
                    "mark into a receive posted when the round starts", PT_AHEAD_ROUNDS);
            } else {
                PUT("; a group of at most %d partitions that begins %.1f us or more after the round's last group "
                    "went is split at its first mark (looked for in the first %d rounds and in the %d after any "
                    "whose marking took that long; after %d quicker ones in a row, a laggard's first round sends "
                    "the group whole)",
                    PT_LATE_MAX, (double)pt_timer_late_begin_ns(req) / 1e3, PT_LATE_WATCH_ROUNDS,
                    PT_LATE_WATCH_ROUNDS, PT_LATE_WATCH_ROUNDS);
                if (req->tp_ops->cheap_runs) {
                    PUT("; a split group of at most %d partitions goes alone in the next %d rounds, each partition "
                        "at its mark", PT_LATE_MAX, PT_AHEAD_ROUNDS);
                } else {
                    PUT(", and in the next %d rounds each of its partitions goes alone at its mark into a receive "
                        "posted when the round starts (the %s transport's runs wait for a header)",
                        PT_AHEAD_ROUNDS, req->tp_ops->name);
                    int pieces = pt_plan_late_pieces(&req->settings, req->part_bytes, req->partitions, ss->ntrans,
                                                     req->contiguous);
                    if (pieces > 1)
                        PUT("; a partition sent alone goes in %d eager pieces (whole, its %zu bytes would wait for "
                            "MPI's rendezvous handshake)", pieces, req->part_bytes);
                }
            }
        } else if (req->is_send && req->settings.policy == PT_POLICY_TIMER)
            PUT("; each %s goes whole at its last mark (%s)", req->u.s.cut ? "piece" : "group",
                req->u.s.cut ? "a cut holds no whole partition back"
                : req->u.s.ntrans >= req->partitions ? "one partition each"
                                                     : "a split cannot pay at this size");
        put_transport(req, text, cap, &at);
        return MPI_SUCCESS;
    }
    PUT("%s, round %d: layout #%d (%s) of", policy, pt_request_round(req), cur, words);
    for (int k = 0; k < n; k++) {
        layout_words(words, sizeof words, cand[k]);
        PUT("%s #%d %s", k ? "," : "", k, words);
    }
    if (req->is_send) {
        const pta_state *st = &req->u.s.adapt->st;
        if (req->settings.policy == PT_POLICY_TIMER)
            PUT("; the model's layout is a cut, which cannot be split (its pieces straddle partitions), so the "
                "timer measures it against one message per partition, which sends a late partition at its mark "
                "(PARTITA_ADAPT=0: the cut alone)");
        PUT("; %s; %d re-plans, %d switches", st->why, st->replans, st->switches);
        if (pt_request_round(req) >= req->u.s.adapt->initial) /* past the initial exploration */
            PUT("; the current window covers %d rounds", req->u.s.adapt->window.span);
        if (req->u.s.adapt->faked)
            PUT("; fake costs (PARTITA_ADAPT_TEST_COSTS)");
    } else {
        PUT("; as the sender announced (%d rounds waited for their window)", req->u.r.adapt->waits);
    }
    put_transport(req, text, cap, &at);
#undef PUT
    return MPI_SUCCESS;
}
