/* Timer policy, send side. A group whose marking has stalled, some of its
 * partitions ready and none added for delta, is split (checked from
 * Test/Wait/Parrived and the optional progress thread; a thread calling
 * MPI_Pready is itself progress, so Pready stays a single atomic). Its first
 * flush sends the ready partitions as runs (flagged PT_RUNS_FIRST_FLUSH);
 * every partition of the group marked after that goes alone (PT_RUNS_ALONE)
 * at its mark; a group with many partitions left goes on in runs instead
 * (PT_GROUP_RUNS). The group's last contributor sends what is left and
 * finishes the group (send_finish_group). How runs travel is the
 * transport's (transport/mpi: headers, late tags, terminators). Marking
 * stays lock-free: partitions are claimed one by one with compare-and-swap,
 * and only the (rare) sending for split groups takes the request's split
 * lock. */
#include <stdlib.h>

#include "flush/flush.h"
#include "flush/timer_flush.h"
#include "flush/timer_registry.h"
#include "request/clock.h"
#include "request/errors.h"
#include "request/request.h"
#include "transport/transport.h"

/* Runs being collected for one send_runs call (under split_lock): at most
 * one per partition of a group. */
static pt_run *run_buffer(pt_request *req) { return req->u.s.runbuf; }

int pt_timer_alloc(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    s->headed = calloc((size_t)s->ntrans, 1);
    s->runbuf = malloc((size_t)req->partitions * sizeof(pt_run));
    if (!s->lock_made) /* one per request (the adaptive policy has one layout that splits) */
        pthread_mutex_init(&s->split_lock, NULL);
    s->lock_made = 1;
    s->nruns = s->stall_flushed = 0;
    return s->headed && s->runbuf ? 0 : -1;
}

void pt_timer_free(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    free(s->headed);
    free(s->runbuf);
    s->headed = NULL;
    s->runbuf = NULL;
    if (s->lock_made)
        pthread_mutex_destroy(&s->split_lock);
    s->lock_made = 0;
}

/* Whether the marks that begin this round's groups wake the progress thread.
 * Waking it costs the marking thread a system call, and on a machine with no
 * idle core the woken thread takes one from the ranks: with the progress
 * thread and no late partition, 1 KiB in 2 partitions took 10 us a round
 * against 0.5 under `model`, 64 KiB in 512 twice `model`'s time. So a
 * request wakes it only in the PT_TIMER_WATCH_ROUNDS rounds after one in
 * which it split a stalled group (and in its first ones when a split can pay:
 * pt_flush_init; a group split because it began late needs no thread, and
 * letting such splits wake it made a preempted marking thread look late
 * again and again: over the fabric with no late partition, launches at
 * 0.05-0.14 of `model`'s speed at 16-32 KiB in 64 partitions); the others
 * arm nothing (pt_timer_round_reset): a stalled group goes whole when its
 * laggard comes, and a round whose marking took the late-begin pause makes
 * the next one watched. Caller holds split_lock. */
static void update_watch(pt_request *req, int long_round)
{
    pt_send_side *s = &req->u.s;
    int left = atomic_load_explicit(&s->watch_rounds, memory_order_relaxed);
    /* A split group may have been announced ahead (pt_timer_round_ahead):
     * watch past the rounds announced, so that a laggard that stays is caught
     * again when they end. */
    int watch = PT_TIMER_WATCH_ROUNDS + PT_AHEAD_ROUNDS;
    left = s->stall_flushed ? watch : left > 0 ? left - 1 : 0;
    /* A round whose marking took the late-begin pause or more (update_late_watch)
     * may have had a laggard that no one split: the next round is watched, so a
     * laggard that stays is found in its second round. Only the thread's ~1 ms
     * look found it before, which on the 2-core VM took 3-132 rounds of 1 KiB
     * in 2 partitions, half of them 100 us late, sent whole (4 launches).
     * Waking the thread costs little in a round that long. */
    if (long_round && left < 1)
        left = 1;
    atomic_store_explicit(&s->watch_rounds, left, memory_order_relaxed);
}

/* The late-begin rule (pt_timer_split_if_late) reads the clock twice per
 * group: at each hand-over and at each group's first mark. The TSC takes
 * about 30 ns a read on this project's 2-core VM, and those reads cost the
 * timer 3-5% against `model` at 64 KiB in 128-512 partitions (9 groups,
 * marked back to back; 5 interleaved launches, 2026-11-29). A round whose
 * marking, from its first group begun to its last handed over, took less
 * than the late-begin pause cannot have held a late group: so after
 * PT_LATE_WATCH_ROUNDS such rounds in a row the rule is off (late_on
 * clear) and a round reads the clock twice, at its first group's first mark
 * and at its last hand-over, to measure that span. A round that spans the
 * pause or more (or whose span went unseen: hand-overs racing in threads)
 * turns it on again for the next PT_LATE_WATCH_ROUNDS. The price: the first
 * round of a laggard that holds a whole group back, after a quick stretch,
 * sends that group whole, as `model` does; the rounds after it are split as
 * before. A request starts with the rule on. Returns whether the round just
 * ended was seen to take that pause or more. Caller holds split_lock. */
static int update_late_watch(pt_send_side *s)
{
    int span = atomic_exchange_explicit(&s->span, PT_SPAN_UNSEEN, memory_order_relaxed);
    s->late_rounds = span != PT_SPAN_QUICK ? PT_LATE_WATCH_ROUNDS : s->late_rounds > 0 ? s->late_rounds - 1 : 0;
    s->late_on = s->late_rounds > 0;
    atomic_store_explicit(&s->span_from_ticks, 0, memory_order_relaxed);
    return span == PT_SPAN_LONG;
}

/* A group that began late, in a round after one in which a group began
 * late too, does not stamp its hand-over: the next group of the laggard's
 * block, begun right after it, is late too (split at its first mark), not
 * measured from it. A laggard's block is often more than one group: over
 * the fabric, 16 KiB in 64 partitions (4 groups, the first half 100 us
 * late), the second late group went whole, and the last partition came 3.0
 * us after its mark where `none`'s came after 2.0. A laggard comes back
 * round after round; a preempted marking thread rarely twice in a row.
 * Over the fabric only: over MPI a false split's lone messages are dear,
 * and carried on there, one preemption split every later group of its
 * round, each announced ahead for PT_AHEAD_ROUNDS rounds: across two
 * emulated hosts (TCP at 1 Gbit/s), the timer's overhead at 64 KiB in 512
 * partitions with no late partition read 9.8-23x one send in 4 of 12
 * launches after any long round, and 16.2x and 11.6x in 2 of 24 after a
 * late begin once groups announced ahead counted (1.02-1.11 in 12 without
 * the cascade; docs/library.md, "Over the fabric too"). The MPI
 * transport's plans put a laggard's block in fewer groups. */
void pt_timer_handed_over(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    if (!s->late_begin_ticks || s->span_unseen)
        return;
    int last = atomic_load_explicit(&s->groups_done, memory_order_relaxed) == s->ntrans - 1;
    if (!s->late_on && !last)
        return;
    int64_t now = pt_ticks();
    if (s->late_on && !atomic_load_explicit(&s->groups[g].begun_late, memory_order_relaxed))
        atomic_store_explicit(&s->last_issue_ticks, now, memory_order_relaxed);
    if (last) {
        int64_t from = atomic_load_explicit(&s->span_from_ticks, memory_order_relaxed);
        int span = from && now - from < s->late_begin_ticks ? PT_SPAN_QUICK : PT_SPAN_LONG;
        atomic_store_explicit(&s->span, span, memory_order_relaxed);
    }
}

/* A plain round measures its marking span (update_late_watch) in one round
 * of this many; the others count as quick. */
#define PT_PLAIN_SPAN_EVERY 4

void pt_timer_round_reset(pt_request *req)
{
    /* Under the lock: a flush from another thread (the progress thread) may
     * still be claiming partitions of the round that just ended. Reopening the
     * groups here makes such a flush, once it gets the lock, find nothing to do. */
    pt_send_side *s = &req->u.s;
    pthread_mutex_lock(&s->split_lock);
    int long_round = update_late_watch(s);
    update_watch(req, long_round);
    /* With the progress thread, a round that does not wake it arms nothing.
     * Armed, its stalled group would be found by the thread's idle look (at
     * most once a millisecond) or by a poll of the application's, but the
     * arming and disarming (a fence and five atomic read-modify-writes a
     * round) cost the timer 1.5-4% against `model` at 1-4 KiB in 2-8
     * partitions with the thread and no late partition (10 interleaved
     * launches), and 1.5-3% at 64-256 KiB in 512 (8). Not armed, such a
     * round sends a stalled group whole when its laggard comes, as `model`
     * does; its marking then spans the late-begin pause, so the next round
     * is watched (update_watch) and split. Without the thread every round of
     * a request whose split can pay is armed: the application's own polls
     * are what find a stall then. One whose split pays only under a laggard
     * (thread_only) arms none: its stall is caught at its last mark
     * (pt_timer_split_if_stalled). */
    int background = req->settings.background;
    s->unarmed_round = background ? atomic_load_explicit(&s->watch_rounds, memory_order_relaxed) == 0
                                  : s->thread_only;
    /* A plain round: unarmed, and no group can split at its first mark
     * either (the late-begin rule rests, or there is one group, which
     * cannot begin late) nor goes alone (none announced ahead). It runs as
     * under `model`: marks skip the partition states (marks is NULL: a
     * partition marked twice is caught by its chunk), each group goes whole
     * at its last mark with no compare-and-swap (marking.c), and the groups
     * start WHOLE, so a flush that raced with this MPI_Start finds none to
     * split. Only the marking span is still measured, in one round of
     * PT_PLAIN_SPAN_EVERY (its two clock reads are 28-30 ns each here), so a
     * laggard after a quick stretch has the next round watched within that
     * many rounds rather than at once. The states, the exchange and the
     * clock reads cost the timer 3-6% against `model` at 1-4 KiB in 2-8
     * partitions with the progress thread and no late partition. */
    int plain = s->unarmed_round && (!s->late_on || (s->ntrans == 1 && background)) &&
                s->round >= atomic_load_explicit(&s->ahead_max, memory_order_relaxed);
    s->marks = plain ? NULL : s->part;
    s->catch_late = !background && !plain && long_round;
    s->after_late = atomic_exchange_explicit(&s->begun_late_now, 0, memory_order_relaxed);
    s->after_stall = atomic_exchange_explicit(&s->stalled_now, 0, memory_order_relaxed);
    s->span_unseen = plain && s->round % PT_PLAIN_SPAN_EVERY != 0;
    if (s->span_unseen) /* taken as quick */
        atomic_store_explicit(&s->span, PT_SPAN_QUICK, memory_order_relaxed);
    s->nruns = s->stall_flushed = 0;
    s->any_alone = 0;
    atomic_store_explicit(&s->alone_sent, 0, memory_order_relaxed);
    atomic_store_explicit(&s->any_split, 0, memory_order_relaxed);
    req->tp_ops->send_start(req);
    for (int p = 0; p < req->partitions; p++)
        atomic_store_explicit(&s->part[p], PT_PART_IDLE, memory_order_relaxed);
    for (int g = 0; g < s->ntrans; g++) {
        s->headed[g] = 0;
        s->groups[g].alone = 0;
        atomic_store_explicit(&s->groups[g].state, plain ? PT_GROUP_WHOLE : PT_GROUP_OPEN, memory_order_relaxed);
    }
    pthread_mutex_unlock(&s->split_lock);
}

/* What the transport was handed early is driven by polls until it is
 * complete (pt_timer_sent_early); passes the send's code on. */
static int sent_early(pt_request *req, int rc)
{
    if (rc == MPI_SUCCESS)
        pt_timer_sent_early(req);
    return rc;
}

/* Claim ready partition p for sending (whoever claims it sends it). */
static int claim(pt_send_side *s, int p)
{
    unsigned char ready = PT_PART_READY;
    return atomic_compare_exchange_strong(&s->part[p], &ready, PT_PART_SENT);
}

/* Whether group g is small enough (PT_LATE_MAX partitions) for the rules
 * that send each of its partitions alone: the late-begin and last-mark
 * rules, and an announcement ahead over the fabric. */
static int may_go_alone(const pt_send_side *s, int g) { return s->bound[g + 1] - s->bound[g] <= PT_LATE_MAX; }

/* Whether a split group is announced ahead. Over the MPI transport always:
 * its runs wait for a header. Over the fabric it spares the next rounds the
 * split (with the progress thread: finding the stall, its flush, each later
 * partition's lock and claim; without it nothing else splits in time), so
 * each partition goes at its mark as under `none`: a laggard's last
 * partition came after 0.64-0.65 of `none`'s time there at 1-4 KiB in 64
 * partitions with the thread, 0.88-0.91 announced (6 interleaved launches).
 * Not a group of more than PT_LATE_MAX partitions, whose partitions alone
 * cost the fabric much when a split was wrong (a preempted marking thread:
 * single launches with no late partition at 0.26-0.40 of `model`'s speed at
 * 4-64 KiB in 512 partitions, announced). */
static int ahead_pays(const pt_request *req, int g)
{
    return !req->tp_ops->cheap_runs || may_go_alone(&req->u.s, g);
}

/* Group g's ready partitions as runs: its first flush of the round (late
 * mode follows: each later partition alone), or any flush of a RUNS group.
 * With none ready it sends nothing and the next send for the group is the
 * first flush: whoever sends a partition claimed it, so until a first flush
 * every partition is still claimable, and the group's last contributor
 * always finds its own. (An empty first flush would also make the receiver
 * wait for lone partitions of a group that a flush from the round before,
 * losing a race with MPI_Start, split for nothing.) Caller holds split_lock. */
static int claimed_runs(pt_request *req, int g, int first_flush, int early)
{
    pt_send_side *s = &req->u.s;
    pt_run *runs = run_buffer(req);
    int n = 0, end = s->bound[g + 1];
    for (int p = s->bound[g]; p < end;) {
        if (!claim(s, p)) {
            p++;
            continue;
        }
        int q = p + 1;
        while (q < end && claim(s, q))
            q++;
        runs[n++] = (pt_run){ p, q - p };
        p = q;
    }
    if (n == 0)
        return MPI_SUCCESS;
    s->nruns += n;
    s->headed[g] = 1;
    int flags = (first_flush ? PT_RUNS_FIRST_FLUSH : 0) | (early ? PT_RUNS_EARLY : 0);
    /* The laggard is likely to come back: announce the group ahead. Over a
     * transport whose runs are cheap (the fabric's: each write names what it
     * carries, so there is nothing to tell the receiver) only a group of at
     * most PT_LATE_MAX partitions: see ahead_pays. */
    if (first_flush && ahead_pays(req, g)) {
        flags |= PT_RUNS_AHEAD;
        s->groups[g].ahead_end = pt_ahead_end(s->round);
        atomic_store_explicit(&s->ahead_max, s->groups[g].ahead_end, memory_order_relaxed);
    }
    return sent_early(req, req->tp_ops->send_runs(req, g, runs, n, flags));
}

/* Partitions of a group after its first flush, claimed: each goes alone.
 * Caller holds split_lock. */
static int send_alone(pt_request *req, int g, const pt_run *runs, int n)
{
    for (int k = 0; k < n; k++)
        req->u.s.nruns += runs[k].count;
    return n ? sent_early(req, req->tp_ops->send_runs(req, g, runs, n, PT_RUNS_ALONE)) : MPI_SUCCESS;
}

/* Send what is ready of split group g: the first flush if it has not gone
 * out yet, else every ready partition alone. early: a stall's flush (its
 * runs PT_RUNS_EARLY). Caller holds split_lock. */
static int send_ready(pt_request *req, int g, int early)
{
    pt_send_side *s = &req->u.s;
    int state = atomic_load_explicit(&s->groups[g].state, memory_order_acquire);
    if (state == PT_GROUP_RUNS)
        return claimed_runs(req, g, 0, early);
    if (state != PT_GROUP_SPLIT)
        return MPI_SUCCESS; /* a flush that outlived its round */
    if (!s->headed[g])
        return claimed_runs(req, g, 1, early);
    pt_run *runs = run_buffer(req);
    int n = 0;
    for (int p = s->bound[g]; p < s->bound[g + 1]; p++)
        if (claim(s, p))
            runs[n++] = (pt_run){ p, 1 };
    return send_alone(req, g, runs, n);
}

static int group_marked(const pt_send_side *s, int g);

/* Before a group's state leaves OPEN for SPLIT or RUNS: marks look at their
 * group's state from now on (marking.c). */
static void note_split(pt_send_side *s) { atomic_store(&s->any_split, 1); }

/* Runs of consecutive marked partitions of group g (the partitions left
 * unmarked lie between them: about as many runs). */
static int marked_runs(const pt_send_side *s, int g)
{
    int n = 0, prev = 0;
    for (int p = s->bound[g]; p < s->bound[g + 1]; p++) {
        int marked = atomic_load_explicit(&s->part[p], memory_order_relaxed) != PT_PART_IDLE;
        n += marked && !prev;
        prev = marked;
    }
    return n;
}

/* A stalled group is not split when its ready partitions would take the
 * round's runs (lone partitions included) past this: it goes whole at its
 * last mark, as under `model`. Over a transport whose runs are not cheap
 * (MPI's) each run is a header the receiver reads before it posts the run's
 * receive, one after the other. A laggard whose partitions are every fourth
 * (0, 4, 8, ...: the `library` suite's `policies-laggard-scattered`, one
 * marking thread) made 43 runs of each of the 3 groups of 512 partitions,
 * and the last arrival came 1.0-1.8 ms after the last mark at 1-256 KiB (5
 * launches), where the whole groups took 8-36 us and `none`'s lone
 * partitions 345-452 us. */
#define PT_FLUSH_RUNS_MAX 32

/* Whether splitting group g now would take the round past PT_FLUSH_RUNS_MAX
 * runs (a first split only: a split group goes on being sent). */
static int too_many_runs(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    if (req->tp_ops->cheap_runs || atomic_load_explicit(&s->groups[g].state, memory_order_acquire) != PT_GROUP_OPEN)
        return 0;
    pthread_mutex_lock(&s->split_lock);
    int sent = s->nruns;
    pthread_mutex_unlock(&s->split_lock);
    return sent + marked_runs(s, g) > PT_FLUSH_RUNS_MAX;
}

/* marked: the group's partitions marked so far (group_marked). */
static void flush_group(pt_request *req, int g, int marked)
{
    pt_send_side *s = &req->u.s;
    if (too_many_runs(req, g))
        return;
    int expected = PT_GROUP_OPEN;
    int left = s->bound[g + 1] - s->bound[g] - marked;
    /* Each later partition alone at its mark (SPLIT), unless many are left,
     * or a partition alone would wait for MPI's rendezvous handshake and the
     * ones left lie in long runs: then the rest goes in runs, at the group's
     * last mark or when its marking stalls again (RUNS). A laggard's half of
     * 2 MiB in 64 partitions (32 KiB each, over the eager pieces' cap) took
     * 183-249 us after its last mark one by one, 112-134 as one run; but
     * when a laggard's partitions are scattered (every fourth), a run each
     * adds a header to every handshake (docs/library.md, "When a lone
     * partition waits"). */
    int next = left > PT_LATE_MAX || (s->lone_waits && 2 * marked_runs(s, g) <= left) ? PT_GROUP_RUNS
                                                                                       : PT_GROUP_SPLIT;
    /* Before the state leaves OPEN. A group no longer OPEN was split this round (any_split is
     * set already) or went whole in a race with this check (the exchange below fails). */
    note_split(s);
    if (atomic_compare_exchange_strong(&s->groups[g].state, &expected, next)) {
        if (next == PT_GROUP_SPLIT)
            pt_timer_group_closed(req); /* each later partition goes at its mark */
    } else if (expected != PT_GROUP_SPLIT && expected != PT_GROUP_RUNS) {
        return; /* its last contributor sends it whole */
    }
    pthread_mutex_lock(&s->split_lock);
    int before = s->nruns;
    int rc = send_ready(req, g, 1);
    s->stall_flushed += s->nruns - before;
    pthread_mutex_unlock(&s->split_lock);
    if (rc != MPI_SUCCESS)
        pt_fail_mpi(req->comm, rc, pt_call_name(), "a send of a timer run");
}

int pt_timer_send_late(pt_request *req, int g, int p)
{
    pt_send_side *s = &req->u.s;
    if (atomic_load_explicit(&s->part[p], memory_order_acquire) != PT_PART_READY)
        return MPI_SUCCESS; /* a concurrent flush or the group's last contributor sent it */
    pthread_mutex_lock(&s->split_lock);
    int rc = MPI_SUCCESS;
    if (!s->headed[g])
        rc = send_ready(req, g, 0); /* the first flush, which takes p along */
    else if (claim(s, p))
        rc = send_alone(req, g, &(pt_run){ p, 1 }, 1);
    pthread_mutex_unlock(&s->split_lock);
    return rc; /* the caller (MPI_Pready*) reports it */
}

/* The mark of partition p of a group announced ahead for this round sends it
 * before anything else, without split_lock: nothing of the group goes in
 * runs this round (headed from the start), and the mark made p SENT, never
 * READY, so no flush claims it (marking.c, mark_in_ahead_round: a claim's
 * compare-and-swap there cost every such mark ~20 ns before its send), and
 * the mark sends it before counting it off its group, so the group
 * (and the round) cannot complete before the send is known to the
 * transport. Through split_lock, the group's state and the claim loop of
 * pt_timer_finish_group, the last partition of 1 KiB in 2 partitions, late
 * by 100 us every round, went 0.15-0.5 us later than `none`'s (each line
 * touched is cold after the laggard's pause; docs/library.md). */
int pt_timer_send_alone(pt_request *req, int g, int p)
{
    pt_send_side *s = &req->u.s;
    int rc = req->tp_ops->send_runs(req, g, &(pt_run){ p, 1 }, 1, PT_RUNS_ALONE);
    atomic_fetch_add_explicit(&s->alone_sent, 1, memory_order_relaxed); /* after: the data goes first */
    return sent_early(req, rc);
}

/* A group that begins late after the round's last hand-over (a laggard held
 * all of it back) and is then marked back to back never stalls, so no check
 * splits it, and sent whole its last partition waits for the whole group,
 * where `none` sends each late partition at its mark. Split at its first
 * mark, each of its partitions goes at its mark too. Over the fabric, 8-32
 * KiB in 8 and 64 partitions, the first half 100 us late, this took the
 * timer from 0.47-0.97 of `none`'s speed after the last mark to 0.71-1.31
 * (3 launches each). Over the MPI transport, whose runs wait for a header to
 * be read and then their receives posted, splitting at the first mark alone
 * fell from 0.77-1.72 to 0.40-0.87; there the split is announced ahead
 * instead (PT_RUNS_AHEAD): in the next PT_AHEAD_ROUNDS rounds the group goes
 * alone from the start, each partition at its mark into a receive posted
 * when the round began, as under `none` (pt_timer_round_ahead), and a
 * laggard that stays costs the split path once in PT_AHEAD_ROUNDS + 1
 * rounds. Late means PT_LAGGARD_PAUSE_NS
 * (25 us), or delta if longer: a thread that is preempted between two groups
 * is no laggard, and with 2 us (and delta 0.3 us, before its floor) a group
 * of 32 KiB in 64 partitions with no late partition was split in up to 321
 * of 400 rounds of a launch; with 25 us and the floor in 1 of 7,200 (18
 * launches). Groups of more than PT_LATE_MAX partitions are not split this
 * way: sending each partition of a large group alone at its mark cost the
 * fabric too much when a split was wrong (letting a split fabric group of
 * any size do so, 8-16 KiB in 512 partitions with no late partition took
 * 0.13-0.29 of `model`'s speed, the progress thread having seen a preempted
 * marking thread as a stall). */
int64_t pt_timer_late_begin_ns(const pt_request *req)
{
    return req->u.s.delta_ns > PT_LAGGARD_PAUSE_NS ? req->u.s.delta_ns : PT_LAGGARD_PAUSE_NS;
}

void pt_timer_span_begun(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    if (s->late_begin_ticks && !s->span_unseen && !atomic_load_explicit(&s->span_from_ticks, memory_order_relaxed))
        atomic_store_explicit(&s->span_from_ticks, pt_ticks(), memory_order_relaxed); /* the round's first group */
}

/* Split group g at a mark (each later partition alone) if it is still OPEN;
 * returns the state it found. */
static int split_open_group(pt_request *req, int g)
{
    note_split(&req->u.s);
    int expected = PT_GROUP_OPEN;
    if (atomic_compare_exchange_strong(&req->u.s.groups[g].state, &expected, PT_GROUP_SPLIT))
        pt_timer_group_closed(req);
    return expected;
}

/* Whether group g, at one of its chunks' first marks, begins late (the
 * late-begin pause after the round's last stamped hand-over); if so it is
 * noted for pt_timer_handed_over. (lone_waits: sent alone, each partition
 * would wait for a handshake: the rule does not hold.) */
static int begins_late(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    int64_t quiet = atomic_load_explicit(&s->last_issue_ticks, memory_order_relaxed);
    if (!quiet || s->lone_waits || !may_go_alone(s, g) ||
        pt_ticks() - quiet < s->late_begin_ticks)
        return 0;
    atomic_store_explicit(&s->begun_late_now, 1, memory_order_relaxed);
    if (s->after_late && req->tp_ops->cheap_runs)
        atomic_store_explicit(&s->groups[g].begun_late, 1, memory_order_relaxed);
    return 1;
}

int pt_timer_split_if_late(pt_request *req, int g)
{
    pt_timer_span_begun(req);
    if (!begins_late(req, g))
        return 0;
    int was = split_open_group(req, g);
    return was == PT_GROUP_OPEN || was == PT_GROUP_SPLIT; /* split now or by a flush */
}

void pt_timer_split_begun(pt_request *req, int g)
{
    (void)begins_late(req, g); /* (late_on clear: no hand-over stamped, so never late) */
}

/* Without a progress thread nothing looks at a group while a laggard holds
 * its marking thread (a thread that sleeps or computes makes no MPI call),
 * so a group that began before the pause went whole after it, as under
 * `model`, every round: 1-16 KiB in 2-64 partitions, the first half 100 us
 * late, took 0.51-0.95 of `none`'s speed after the last mark (t_last; 5
 * interleaved launches, one marking thread), 256 KiB-1 MiB 0.12-0.60; with
 * this rule 0.94-1.25 at 1 KiB-16 MiB in 2-64 (6 launches; docs/library.md,
 * "A laggard found at the last mark"). Its last mark can still tell: a
 * group whose marking, first mark to last, took the late-begin pause or
 * more, in a round that catches stalls, is split there. A round catches
 * them (catch_late) when the round before it took that pause too: a slow
 * first round (pages touched for the first time; ThreadSanitizer) or one
 * preemption of the marking thread is no laggard, and announcing its group
 * ahead would send each partition alone for PT_AHEAD_ROUNDS rounds for
 * nothing, and keep a real laggard that comes in them from announcing it
 * again (lib.policies.timer-split-late: its window ended 4 rounds early
 * when the late watch was enough). And a group's marking must have taken
 * that pause in the round before too (after_stall): where every round is
 * long (two emulated hosts, TCP at 1 Gbit/s, 64 KiB in 512 partitions, no
 * late partition), a marking thread preempted inside one group split it,
 * and its 16 rounds of lone partitions took the timer's overhead to
 * 1.6-8.1x one send in 9 of 34 launches (1.6 at most in 28 without the
 * rule; with this guard 1.04-1.40 in 12). Its first flush is then the
 * whole group in one run, announced ahead (PT_RUNS_AHEAD), so in the next
 * PT_AHEAD_ROUNDS rounds each of its partitions goes alone at its mark, as
 * under `none` (over MPI into a receive posted when the round began: a
 * laggard that stays costs a header and a terminator once in
 * PT_AHEAD_ROUNDS + 1 rounds; over the fabric the sender alone knows). Not
 * for groups of more than PT_LATE_MAX partitions (the late-begin rule's
 * limit). Unlike that rule, it holds where a partition alone waits for
 * MPI's handshake (lone_waits): in the rounds announced ahead each does,
 * as under `none`, which is the bar. */
void pt_timer_stamp_begun(pt_request *req, int g)
{
    pt_group *grp = &req->u.s.groups[g];
    if (!atomic_load_explicit(&grp->begun_ticks, memory_order_relaxed)) /* its first chunk's first mark */
        atomic_store_explicit(&grp->begun_ticks, pt_ticks(), memory_order_relaxed);
}

int pt_timer_split_if_stalled(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    int64_t begun = atomic_load_explicit(&s->groups[g].begun_ticks, memory_order_relaxed);
    if (!begun || !may_go_alone(s, g) ||
        atomic_load_explicit(&s->groups[g].state, memory_order_relaxed) != PT_GROUP_OPEN ||
        pt_ticks() - begun < s->late_begin_ticks)
        return 0;
    atomic_store_explicit(&s->stalled_now, 1, memory_order_relaxed);
    /* The round right after group g's rounds announced ahead counts as one
     * after a stall: in those rounds its partitions went at their marks, so
     * it could not stall, and the stall that announced it had come back
     * already. Before, a laggard that stayed sent the group whole once more
     * there and at its last mark in the round after: two rounds in
     * PT_AHEAD_ROUNDS + 2 as under `model`, now one in PT_AHEAD_ROUNDS + 1
     * (lib.stall.timer-no-thread-*, 20 rounds). */
    if (!s->after_stall && !pt_ahead_just_ended(s->round, s->groups[g].ahead_end))
        return 0; /* the first such round: a stall must come back (pt_timer_stamp_begun) */
    return split_open_group(req, g) == PT_GROUP_OPEN; /* else split by a flush meanwhile: finished all the same */
}

void pt_timer_round_ahead(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    if (s->round >= atomic_load_explicit(&s->ahead_max, memory_order_relaxed))
        return;
    pthread_mutex_lock(&s->split_lock);
    for (int g = 0; g < s->ntrans; g++) {
        if (!pt_ahead_in(s->round, s->groups[g].ahead_end))
            continue;
        s->headed[g] = 1; /* nothing to flush first: every partition goes alone */
        s->groups[g].alone = s->any_alone = 1;
        note_split(s);
        atomic_store_explicit(&s->groups[g].state, PT_GROUP_SPLIT, memory_order_relaxed);
        pt_timer_group_closed(req);
    }
    pthread_mutex_unlock(&s->split_lock);
}

/* Partitions of group g marked so far this round (its chunks are consecutive). */
static int group_marked(const pt_send_side *s, int g)
{
    int first = s->groups[g].first_chunk, n = 0;
    for (int c = first; c < first + s->groups[g].nchunks; c++)
        n += __builtin_popcountll(atomic_load_explicit(&s->chunks[c].mask, memory_order_relaxed));
    return n;
}

/* When a RUNS group that was flushed with every mark it has is looked at
 * again: only a new mark gives it something to send. Its due time used to
 * stay at the flush's, in the past, so the progress thread polled it without
 * a pause until the laggard came back, and kept a core: 2 ranks on 2 cores
 * at 8 MiB in 8 partitions, half of them 100 us late, the marking thread's
 * pause lasted 0.5-2.4 ms in a quarter to half of the timer's rounds. Beyond
 * the progress thread's spin window (100 us, progress_thread.c), so it sleeps
 * its regular interval (20 us) before its next look, which pushes this due
 * time on again: a new mark is seen, and a second stall flushed, up to one
 * interval and the thread's wake-up later. */
#define PT_TIMER_RECHECK_NS 200000

/* Flush group g when it has ready partitions and its marking made no progress
 * for delta: a laggard holds it back. Each flush re-arms the wait, so a group
 * marked slowly goes out in a few runs, never one per partition. *t caches the
 * clock across groups (0: not read yet). Returns when the group is next due
 * for a check (CLOCK_MONOTONIC ns), INT64_MAX when nothing is pending: no
 * mark yet, or split (each later partition goes at once). */
static int64_t check_group(pt_request *req, int g, int64_t *t)
{
    pt_send_side *s = &req->u.s;
    pt_group *grp = &s->groups[g];
    int state = atomic_load_explicit(&grp->state, memory_order_relaxed);
    if (atomic_load_explicit(&grp->issued, memory_order_acquire) || state == PT_GROUP_WHOLE)
        return INT64_MAX;
    /* Nothing to look at: no mark yet, or a split group with no mark since
     * its flush (each later mark sends its own partition). Such a group used
     * to fall through to the recheck below (meant for RUNS groups) once delta
     * had passed since the flush (a flush slower than delta, or a look for
     * another group still watched), and stayed due every PT_TIMER_RECHECK_NS:
     * the request was never unwatched, and the progress thread woke every
     * interval until the round's last mark (over the fabric, 128 KiB in 64
     * partitions, 16 of them 1 ms late: 101,407 regular waits in 3,000
     * rounds; 0-1 since). */
    int marked = group_marked(s, g);
    if (marked == 0 ||
        (state == PT_GROUP_SPLIT && marked == atomic_load_explicit(&grp->flushed_marked, memory_order_relaxed)))
        return INT64_MAX;
    if (!*t)
        *t = pt_now_ns();
    if (marked != atomic_load_explicit(&grp->seen_marked, memory_order_relaxed)) {
        atomic_store_explicit(&grp->seen_marked, marked, memory_order_relaxed);
        atomic_store_explicit(&grp->seen_ns, *t, memory_order_relaxed);
    } else if (*t - atomic_load_explicit(&grp->seen_ns, memory_order_relaxed) >= s->delta_ns) {
        if (marked == atomic_load_explicit(&grp->flushed_marked, memory_order_relaxed))
            return *t + PT_TIMER_RECHECK_NS; /* a RUNS group flushed with these marks: nothing new */
        atomic_store_explicit(&grp->flushed_marked, marked, memory_order_relaxed);
        flush_group(req, g, marked);
        atomic_store_explicit(&grp->seen_ns, *t, memory_order_relaxed);
    }
    if (atomic_load_explicit(&grp->state, memory_order_relaxed) == PT_GROUP_SPLIT)
        return INT64_MAX;
    return atomic_load_explicit(&grp->seen_ns, memory_order_relaxed) + s->delta_ns;
}

int64_t pt_timer_flush_due(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    int64_t t = 0, due = INT64_MAX;
    if (!atomic_load_explicit(&req->active, memory_order_acquire))
        return due;
    for (int g = 0; g < s->ntrans; g++) {
        int64_t d = check_group(req, g, &t);
        due = d < due ? d : due;
    }
    return due;
}

int pt_timer_finish_group(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    pthread_mutex_lock(&s->split_lock);
    int rc = send_ready(req, g, 0);
    if (rc == MPI_SUCCESS)
        rc = sent_early(req, req->tp_ops->send_finish_group(req, g));
    pthread_mutex_unlock(&s->split_lock);
    return rc;
}
