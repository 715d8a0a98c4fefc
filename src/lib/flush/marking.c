/* Marking (MPI_Pready*): lock-free, one atomic add per partition on its
 * chunk; the thread that completes a chunk counts it off its group, the one
 * that completes a group hands the group's message to the transport (or, a
 * group the timer split, sends the rest of it). Also the sender's marking
 * state per round: chunks, slots, groups. */
#include <stdlib.h>
#include <string.h>

#include "flush/flush.h"
#include "flush/serial_atomics.h"
#include "flush/timer_flush.h"
#include "flush/timer_registry.h"
#include "partita/partita.h"
#include "planner/planner.h"
#include "request/clock.h"
#include "request/errors.h"
#include "request/request.h"
#include "transport/transport.h"

/* User partitions [*first, *end) that message j holds bytes of. */
static void message_parts(const pt_request *req, int j, int *first, int *end)
{
    size_t a, b, lo, hi;
    ptm_message_span(req->part_bytes * (size_t)req->partitions, (size_t)req->partitions, (size_t)req->u.s.ntrans,
                     req->u.s.cut, (size_t)j, &a, &b, &lo, &hi);
    *first = (int)lo;
    *end = (int)hi + 1;
}

/* Chunks of up to 64 partitions per message, and each partition's slot. A
 * partition that a cut shares with the next message(s) is the first one of
 * each of those (bit 0 of its first chunk) and is flagged in its own chunk's
 * `shared` mask. */
static int build_chunks(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    int n = 0, first, end;
    for (int j = 0; j < s->ntrans; j++) {
        message_parts(req, j, &first, &end);
        s->groups[j].first = first;
        s->groups[j].first_chunk = n;
        s->groups[j].nchunks = (end - first + 63) / 64;
        n += s->groups[j].nchunks;
    }
    s->nchunks = n;
    s->chunks = aligned_alloc(PT_CACHE_LINE, (size_t)(n ? n : 1) * sizeof *s->chunks);
    s->slot = malloc((size_t)req->partitions * sizeof *s->slot);
    if (!s->chunks || !s->slot)
        return -1;
    memset(s->chunks, 0, (size_t)n * sizeof *s->chunks);
    int c = 0, slotted = 0; /* partitions [0, slotted) have their slot */
    for (int j = 0; j < s->ntrans; j++) {
        message_parts(req, j, &first, &end);
        for (int lo = first; lo < end; lo += 64, c++) {
            int len = end - lo < 64 ? end - lo : 64;
            s->chunks[c].full = len == 64 ? ~(uint64_t)0 : (((uint64_t)1 << len) - 1);
            s->chunks[c].group = j;
            for (int k = 0; k < len; k++) {
                uint32_t v = s->slot[lo + k];
                if (lo + k < slotted) /* shared with the message before */
                    s->chunks[v >> 6].shared |= (uint64_t)1 << (v & 63);
                else
                    s->slot[lo + k] = (uint32_t)c << 6 | (uint32_t)k;
            }
        }
        slotted = end;
    }
    return 0;
}

int pt_flush_init(pt_request *req, int may_split)
{
    pt_send_side *s = &req->u.s;
    int P = req->partitions, N = s->ntrans;
    s->groups = aligned_alloc(PT_CACHE_LINE, (size_t)N * sizeof *s->groups);
    if (!s->groups)
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for %d transport messages", N);
    memset(s->groups, 0, (size_t)N * sizeof *s->groups);
    if (build_chunks(req) != 0)
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for the marking state of %d partitions",
                       P);
    /* The timer only matters when some group holds more than one partition,
     * and when splitting it can pay (planner.h) or a laggard holds part of
     * it back; otherwise the request runs as under model. A group that
     * small, split only under a laggard, beats sending it whole after the
     * laggard (1-4 KiB in 8 partitions, half of them 100 us late: 0.6-0.8 us
     * from the last mark to the last arrival against 1.2-1.9). The progress
     * thread splits it in time, and waking that thread every round costs
     * more than the message: its rounds wake it only after a split
     * (timer_flush.c, update_watch). Without the thread, over either
     * transport, a group whose marking took a laggard's pause is found at
     * its last mark, and its next rounds go as under `none`
     * (pt_timer_split_if_stalled). Neither that rule nor the late-begin
     * rule splits a group of more than PT_LATE_MAX partitions: when every
     * group is that large, only a split that pays or the thread's needs the
     * state (with it, 1-4 KiB in 512 partitions over the fabric, no late
     * partition, took 0.98 of `model`'s speed against 1.00 without; 8
     * interleaved launches). s->split is set once it exists (destroy looks
     * at it). */
    int group_parts = (P + N - 1) / N;
    int pays = pt_plan_timer_splits(&req->settings, req->part_bytes * (size_t)group_parts, group_parts);
    int split = may_split && req->part_bytes > 0 && N < P && !s->cut &&
                (pays || req->settings.background || P / N <= PT_LATE_MAX);
    if (!split)
        return MPI_SUCCESS;
    atomic_store_explicit(&s->watch_rounds, pays ? PT_TIMER_WATCH_ROUNDS : 0, memory_order_relaxed);
    s->thread_only = !pays;
    s->lone_waits = !req->tp_ops->cheap_runs &&
                    pt_plan_lone_waits(&req->settings, req->part_bytes, P, N, req->contiguous);
    s->delta_ns = pt_plan_delta_ns(&req->settings, req->part_bytes * (size_t)group_parts, group_parts);
    s->late_begin_ticks = pt_ticks_from_ns(pt_timer_late_begin_ns(req));
    s->late_rounds = 0; /* the first round's span is unseen: on from there (timer_flush.c) */
    if (!(s->part = calloc((size_t)P, sizeof *s->part)) || pt_timer_alloc(req) != 0) {
        pt_timer_free(req);
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for the timer's state");
    }
    s->split = 1;
    pt_timers_register(req);
    return MPI_SUCCESS;
}

void pt_flush_start(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    if (s->split)
        pt_timer_round_reset(req); /* the partition states too (and the transport's round), under the lock */
    else {
        if (s->part)
            memset((void *)s->part, 0, (size_t)req->partitions * sizeof *s->part);
        s->marks = s->part;
        req->tp_ops->send_start(req);
    }
    int state = s->marks || !s->split ? PT_GROUP_OPEN : PT_GROUP_WHOLE; /* a plain round: no flush can split */
    for (int c = 0; c < s->nchunks; c++)
        atomic_store_explicit(&s->chunks[c].mask, 0, memory_order_relaxed);
    for (int j = 0; j < s->ntrans; j++) {
        atomic_store_explicit(&s->groups[j].remaining, s->groups[j].nchunks, memory_order_relaxed);
        atomic_store_explicit(&s->groups[j].state, state, memory_order_relaxed);
        atomic_store_explicit(&s->groups[j].issued, 0, memory_order_relaxed);
        atomic_store_explicit(&s->groups[j].seen_marked, 0, memory_order_relaxed);
        atomic_store_explicit(&s->groups[j].flushed_marked, 0, memory_order_relaxed);
        atomic_store_explicit(&s->groups[j].seen_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&s->groups[j].begun_ticks, 0, memory_order_relaxed);
        atomic_store_explicit(&s->groups[j].begun_late, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&s->groups_done, 0, memory_order_relaxed);
    atomic_store_explicit(&s->last_issue_ticks, 0, memory_order_relaxed);
    /* An arming that raced with the last round's last split; looked at
     * first, as the disarming is an atomic exchange (a missed one leaves the
     * request armed until a poll finds nothing begun, which disarms it). */
    if (s->split && atomic_load_explicit(&s->armed, memory_order_relaxed))
        pt_timer_disarm(req);
    atomic_store_explicit(&s->open_groups, s->ntrans, memory_order_relaxed);
    if (s->split)
        pt_timer_round_ahead(req);
}

void pt_flush_detach(pt_request *req)
{
    if (req->u.s.split)
        pt_timers_unregister(req);
}

void pt_flush_destroy(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    if (s->split)
        pt_timer_free(req);
    free(s->groups);
    free(s->chunks);
    free(s->slot);
    free((void *)s->part);
}

/* Adaptive policy, in a measured round: when the hand-over (or lone send)
 * starting now comes a laggard's pause or more after the last one ended,
 * what went before it is not charged (adapt_stamp_before says why). */
static void adapt_note_pause(pt_send_side *s, int64_t now)
{
    int64_t prev = atomic_load_explicit(&s->adapt_prev_end_ns, memory_order_relaxed);
    if (prev && now - prev >= PT_LAGGARD_PAUSE_NS) {
        atomic_store_explicit(&s->adapt_before_cost_ns, 0, memory_order_relaxed);
        if (now - prev > atomic_load_explicit(&s->adapt_pause_ns, memory_order_relaxed))
            atomic_store_explicit(&s->adapt_pause_ns, now - prev, memory_order_relaxed);
    }
}

/* Whether this round's hand-overs are no longer charged: a pause, for the timer's layouts. */
static int adapt_charges_ended(const pt_send_side *s)
{
    return s->adapt_pause_ends_charges && atomic_load_explicit(&s->adapt_pause_ns, memory_order_relaxed) > 0;
}

/* Adaptive policy (request/adaptive.h), in a measured round: stamp the
 * round's first and last hand-over, and time each one before the last: what
 * the earlier messages cost the marking thread(s) (a layout of one message
 * has none). Hand-overs made before a laggard's pause (PT_LAGGARD_PAUSE_NS
 * since the one before) are not charged: they went while the round waited
 * for the laggard, as the `library` suite's laggard check (`t_last`) and a
 * program whose other threads wait for a late one see it. Charged, they made
 * a layout of one message per partition, which sends the late half as it is
 * marked, look dearer than one message sent after the laggard. Returns the
 * stamp (0: nothing to time after the call) and in *last whether this is the
 * round's last hand-over. */
static int64_t adapt_stamp_before(pt_send_side *s, int *last, int64_t mark_ns)
{
    int done = atomic_load_explicit(&s->groups_done, memory_order_relaxed);
    int64_t now = pt_now_ns();
    adapt_note_pause(s, now);
    *last = done == s->ntrans - 1;
    /* The timer's laggard check counts from the last mark: when that mark hands over more
     * than one piece of a cut (mark_ns: when it began to), the round's last hand-over is
     * dated from it, once a pause has stopped the charges (else they would count twice). */
    int from_mark = mark_ns && adapt_charges_ended(s);
    if (*last)
        atomic_store_explicit(&s->adapt_last_ns, from_mark ? mark_ns : now, memory_order_relaxed);
    if (done == 0)
        atomic_store_explicit(&s->adapt_first_ns, now, memory_order_relaxed);
    return *last ? 0 : now;
}

/* A hand-over before the round's last took from `began` until now. */
static void adapt_stamp_after(pt_send_side *s, int64_t began)
{
    int64_t now = pt_now_ns();
    if (!adapt_charges_ended(s))
        atomic_fetch_add_explicit(&s->adapt_before_cost_ns, now - began, memory_order_relaxed);
    atomic_store_explicit(&s->adapt_prev_end_ns, now, memory_order_relaxed);
}

/* The last contributor of group g hands it over. Returns the internal call's
 * code: the caller reports it with its own name. */
static int issue_group(pt_request *req, int g, int64_t mark_ns)
{
    pt_send_side *s = &req->u.s;
    int rc = MPI_SUCCESS;
    int expected = PT_GROUP_OPEN;
    int last = 0;
    int64_t handing = s->adapt_measure ? adapt_stamp_before(s, &last, mark_ns) : 0;
    if (!s->marks) /* not split, or a plain round */
        rc = req->tp_ops->send_message(req, g);
    else if (s->catch_late && pt_timer_split_if_stalled(req, g))
        rc = pt_timer_finish_group(req, g); /* the whole group as its first flush, announced ahead */
    else if (pt_compare_exchange(&s->groups[g].state, &expected, PT_GROUP_WHOLE, req->serial)) {
        pt_timer_group_closed(req);
        rc = req->tp_ops->send_message(req, g);
    }
    else {
        if (expected == PT_GROUP_RUNS) /* still watched until now */
            pt_timer_group_closed(req);
        rc = pt_timer_finish_group(req, g); /* the timer already sent part of it */
    }
    if (handing)
        adapt_stamp_after(s, handing);
    if (s->late_begin_ticks) /* after the send: a group begun while this one was sent is not late */
        pt_timer_handed_over(req, g);
    atomic_store_explicit(&s->groups[g].issued, 1, memory_order_release);
    pt_fetch_add(&s->groups_done, 1, req->serial);
    return rc;
}

/* Set `bit` in the chunk's mask unless it is set; returns the mask before.
 * An add is a plain `lock xadd` (a fetch-or that returns the old value is a
 * compare-and-swap loop) and equals the or while the bit is clear. Serial
 * requests (no concurrent MPI calls) use a plain load and store: the atomic
 * read-modify-write is most of MPI_Pready's cost. */
static inline uint64_t chunk_set(pt_chunk *c, uint64_t bit, int serial)
{
    uint64_t before;
    if (serial) {
        before = atomic_load_explicit(&c->mask, memory_order_relaxed);
        if (!(before & bit))
            atomic_store_explicit(&c->mask, before + bit, memory_order_relaxed);
        return before;
    }
    before = atomic_fetch_add_explicit(&c->mask, bit, memory_order_acq_rel);
    if (before & bit)
        atomic_fetch_sub_explicit(&c->mask, bit, memory_order_relaxed); /* undo the carry */
    return before;
}

/* Count a completed chunk off its group; true when it was the last one. */
static inline int group_chunk_done(pt_group *g, int serial)
{
    if (g->nchunks == 1)
        return 1;
    return pt_fetch_add(&g->remaining, -1, serial) == 1;
}

/* The rest of marking a partition that a cut shares between messages: its
 * first message's chunk is set (`now` is the chunk's mask with its bit), and
 * it is bit 0 of each later message it has bytes in. Out of line: only a few
 * partitions of a cut are shared, and inlined its loop made every MPI_Pready
 * save and restore registers. */
__attribute__((noinline)) static int mark_shared(pt_request *req, int p, const pt_chunk *c, uint64_t now,
                                                 const char *call)
{
    pt_send_side *s = &req->u.s;
    int rc = MPI_SUCCESS;
    int64_t mark_ns = s->adapt_measure && s->adapt_pause_ends_charges ? pt_now_ns() : 0;
    if (now == c->full && group_chunk_done(&s->groups[c->group], req->serial))
        rc = issue_group(req, c->group, mark_ns);
    for (int j = c->group + 1; rc == MPI_SUCCESS && j < s->ntrans && s->groups[j].first == p; j++) {
        pt_chunk *d = &s->chunks[s->groups[j].first_chunk];
        if (chunk_set(d, 1, req->serial) + 1 == d->full && group_chunk_done(&s->groups[j], req->serial))
            rc = issue_group(req, j, mark_ns);
    }
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, call, "MPI_Start of a transport message");
}

/* Whether partition p (in range) is marked ready in this round. */
static int is_marked(const pt_request *req, int p)
{
    const pt_send_side *s = &req->u.s;
    if (s->marks)
        return atomic_load_explicit(&s->marks[p], memory_order_relaxed) != PT_PART_IDLE;
    uint32_t v = s->slot[p];
    return (atomic_load_explicit(&s->chunks[v >> 6].mask, memory_order_relaxed) >> (v & 63)) & 1;
}

/* Out of line: the hot path only branches here. */
__attribute__((noinline, cold)) static int bad_partition(pt_request *req, int p, const char *call)
{
    return pt_fail(req->comm, PT_E_PARTITION_RANGE, call,
                   "partition %d is outside [0, %d), the request's partitions (round %d)", p, req->partitions,
                   pt_request_round(req));
}

__attribute__((noinline, cold)) static int marked_twice(pt_request *req, int p, const char *call)
{
    return pt_fail(req->comm, PT_E_PREADY_TWICE, call,
                   "partition %d (of [0, %d)) is already marked ready in round %d", p, req->partitions,
                   pt_request_round(req));
}

/* Send group g, or (timer) partition p of a split group, reporting a
 * failure as `call`'s. Out of line and called in tail position, so that
 * mark() keeps nothing live across a call: saving and restoring registers
 * for that cost every MPI_Pready about 0.4 ns. */
__attribute__((noinline)) static int issue(pt_request *req, int g, const char *call)
{
    int rc = issue_group(req, g, 0);
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, call, "MPI_Start of a transport message");
}

/* Adaptive policy, in a measured round: a partition that its mark sends
 * alone (a group the timer split: the adaptive policy's split candidate)
 * costs the marking thread a send, as a hand-over does, and is timed and
 * charged alike; not charged, a layout that splits looked free after a
 * laggard's pause, when each late partition it sends is what the round
 * waits for. Returns the stamp to time from (0: not measured). */
static int64_t adapt_lone_begin(pt_send_side *s)
{
    if (!s->adapt_measure)
        return 0;
    int64_t now = pt_now_ns();
    adapt_note_pause(s, now);
    return now;
}

/* Timer: partition p of group g goes alone at its mark, timed for the
 * adaptive policy (adapt_lone_begin): the group goes alone this round
 * (`alone`, announced ahead: pt_timer_send_alone) or was split
 * (pt_timer_send_late: the group already waited for a laggard). */
__attribute__((noinline)) static int send_lone(pt_request *req, int g, int p, int alone, const char *call)
{
    int64_t began = adapt_lone_begin(&req->u.s);
    int rc = alone ? pt_timer_send_alone(req, g, p) : pt_timer_send_late(req, g, p);
    if (began)
        adapt_stamp_after(&req->u.s, began);
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, call, "MPI_Isend of a late partition");
}

/* Timer, in a round with a group announced ahead: partition p of such a group
 * (it goes alone this round) is sent now, before its chunk counts it off, and
 * is SENT from its mark on: no flush can claim it, so no compare-and-swap
 * decides who sends it. Any other partition is READY (claimable). */
__attribute__((noinline)) static int mark_in_ahead_round(pt_request *req, int p, const char *call)
{
    pt_send_side *s = &req->u.s;
    int g = s->chunks[s->slot[p] >> 6].group;
    if (!s->groups[g].alone || req->proc_null) {
        atomic_store_explicit(&s->part[p], PT_PART_READY, memory_order_release);
        return MPI_SUCCESS;
    }
    atomic_store_explicit(&s->part[p], PT_PART_SENT, memory_order_relaxed);
    return send_lone(req, g, p, 1, call);
}

__attribute__((noinline)) static int send_late(pt_request *req, int g, int p, const char *call)
{
    return send_lone(req, g, p, 0, call);
}

/* The same for a mark that begins one of the split group's chunks: whether
 * the group began late is noted first (pt_timer_split_begun). Its own
 * function, so that mark() calls it in tail position as the others. */
__attribute__((noinline)) static int send_late_begun(pt_request *req, int g, int p, const char *call)
{
    pt_timer_split_begun(req, g);
    return send_lone(req, g, p, 0, call);
}

/* Timer: partition p's mark begins group g (its chunk's first mark). A group
 * that begins late is split at once and p goes now; any other is watched. */
__attribute__((noinline)) static int group_begun(pt_request *req, int g, int p, const char *call)
{
    if (pt_timer_split_if_late(req, g))
        return send_late(req, g, p, call);
    if (req->u.s.catch_late)
        pt_timer_stamp_begun(req, g);
    pt_timer_begun(req); /* it may stall */
    return MPI_SUCCESS;
}

/* A chunk's first mark in a plain round: the round's first one starts its
 * marking span, which is measured all the same (pt_timer_round_reset says
 * why). */
__attribute__((noinline)) static int plain_begun(pt_request *req)
{
    pt_timer_span_begun(req);
    return MPI_SUCCESS;
}

/* Mark one partition: one atomic add on its chunk; the thread that
 * completes a chunk counts it off its group, the one that completes the
 * group sends it. */
__attribute__((always_inline)) static inline int mark(pt_request *req, int p, const char *call)
{
    pt_send_side *s = &req->u.s;
    if (p < 0 || p >= req->partitions)
        return bad_partition(req, p, call);
    if (s->marks) {
        /* Timer: the state must be READY before the bit is visible, so that
         * whoever completes the group finds every partition claimable. */
        if (atomic_load_explicit(&s->marks[p], memory_order_relaxed) != PT_PART_IDLE)
            return marked_twice(req, p, call);
        if (s->any_alone) {
            int rc = mark_in_ahead_round(req, p, call);
            if (rc != MPI_SUCCESS)
                return rc;
        } else {
            atomic_store_explicit(&s->marks[p], PT_PART_READY, memory_order_release);
        }
        if (req->proc_null)
            return MPI_SUCCESS;
    }
    uint32_t v = s->slot[p];
    pt_chunk *c = &s->chunks[v >> 6];
    uint64_t bit = (uint64_t)1 << (v & 63);
    uint64_t before = chunk_set(c, bit, req->serial);
    if (before & bit)
        return marked_twice(req, p, call);
    if (c->shared & bit)
        return mark_shared(req, p, c, before + bit, call);
    int g = c->group;
    if (before + bit == c->full && group_chunk_done(&s->groups[g], req->serial))
        return issue(req, g, call);
    if (!s->marks)
        return before || !s->split ? MPI_SUCCESS : plain_begun(req);
    /* A group's state is looked at only once a group of the round has split:
     * a load per mark from the group's own cache line cost the timer about
     * 1% against `model` at 64-256 KiB in 512 partitions (interleaved
     * launches). Whoever splits sets any_split before the group's state
     * (note_split in timer_flush.c): a mark that finds it clear came before
     * the split's flush scanned for READY partitions (the chunk's atomic add
     * orders this partition's READY before the load), and that flush takes
     * this partition along. Skipping a split group's mark hangs the round
     * (lib.policies.timer-split-late, timer-late-order). */
    if (atomic_load(&s->any_split) && atomic_load_explicit(&s->groups[g].state, memory_order_acquire) == PT_GROUP_SPLIT)
        return before ? send_late(req, g, p, call) : send_late_begun(req, g, p, call);
    if (!before)
        return group_begun(req, g, p, call);
    return MPI_SUCCESS;
}

/* The request behind a Pready* handle, or an error code in *rc. */
__attribute__((always_inline)) static inline pt_request *sender_of(MPI_Request handle, int *rc, const char *call)
{
    pt_request *req = pt_lookup(handle);
    *rc = MPI_SUCCESS;
    if (!req)
        *rc = pt_fail(MPI_COMM_SELF, PT_E_NOT_PARTITIONED, call, "the request is not a partitioned request");
    else if (!req->is_send)
        *rc = pt_fail(req->comm, PT_E_PREADY_RECV, call, "the request is a partitioned receive request");
    else if (!atomic_load_explicit(&req->active, memory_order_acquire))
        *rc = pt_fail(req->comm, PT_E_PREADY_INACTIVE, call,
                      "the request is inactive (%s; call MPI_Start first)",
                      req->u.s.round < 0 ? "never started" : "its last round completed");
    else
        return req;
    return NULL;
}

int Partita_Pready(int partition, MPI_Request request)
{
    int rc;
    pt_request *req = sender_of(request, &rc, "MPI_Pready");
    return req ? mark(req, partition, "MPI_Pready") : rc;
}

/* Pready_range and Pready_list check every partition before marking any:
 * a call that fails marks nothing (unless another thread marks the same
 * partitions at the same time, which is erroneous anyway). */
int Partita_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    static const char call[] = "MPI_Pready_range";
    int rc;
    pt_request *req = sender_of(request, &rc, call);
    if (!req)
        return rc;
    if (partition_low < 0 || partition_high >= req->partitions || partition_low > partition_high)
        return pt_fail(req->comm, PT_E_PARTITION_RANGE, call,
                       "range [%d, %d] is not a non-empty range within [0, %d), the request's partitions "
                       "(round %d); nothing was marked",
                       partition_low, partition_high, req->partitions, pt_request_round(req));
    for (int p = partition_low; p <= partition_high; p++)
        if (is_marked(req, p))
            return pt_fail(req->comm, PT_E_PREADY_TWICE, call,
                           "partition %d of range [%d, %d] is already marked ready in round %d; nothing was marked",
                           p, partition_low, partition_high, pt_request_round(req));
    for (int p = partition_low; p <= partition_high; p++)
        if ((rc = mark(req, p, call)) != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}

/* The first bad entry of a Pready_list: out of range, already marked, or
 * named twice in the list (a bitmap of the partitions seen). Returns its
 * index, or -1; *kind says what is wrong with it. */
static int list_bad_entry(const pt_request *req, int length, const int list[], pt_err *kind, int *earlier)
{
    uint64_t local[64];
    size_t words = ((size_t)req->partitions + 63) / 64;
    uint64_t *seen = length > 1 ? (words <= 64 ? local : calloc(words, sizeof *seen)) : NULL;
    if (seen == local)
        memset(local, 0, sizeof local);
    int bad = -1;
    for (int i = 0; i < length && bad < 0; i++) {
        int p = list[i];
        if (p < 0 || p >= req->partitions) {
            *kind = PT_E_PARTITION_RANGE, bad = i;
        } else if (is_marked(req, p)) {
            *kind = PT_E_PREADY_TWICE, *earlier = -1, bad = i;
        } else if (seen && (seen[p / 64] >> (p % 64)) & 1) {
            *kind = PT_E_PREADY_TWICE, bad = i;
            for (*earlier = 0; list[*earlier] != p; ++*earlier)
                ;
        } else if (seen) {
            seen[p / 64] |= (uint64_t)1 << (p % 64);
        } else if (length > 1) { /* no memory for the bitmap: compare pairs */
            for (int k = 0; k < i; k++)
                if (list[k] == p) {
                    *kind = PT_E_PREADY_TWICE, *earlier = k, bad = i;
                    break;
                }
        }
    }
    if (seen != local)
        free(seen);
    return bad;
}

int Partita_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    static const char call[] = "MPI_Pready_list";
    int rc;
    pt_request *req = sender_of(request, &rc, call);
    if (!req)
        return rc;
    if (length < 0)
        return pt_fail(req->comm, PT_E_LENGTH, call, "length = %d, must be >= 0", length);
    if (length > 0 && !array_of_partitions)
        return pt_fail(req->comm, PT_E_NULL_ARG, call, "array_of_partitions is NULL with length = %d; nothing was marked",
                       length);
    pt_err kind = PT_E_PARTITION_RANGE;
    int earlier = -1;
    int bad = list_bad_entry(req, length, array_of_partitions, &kind, &earlier);
    if (bad >= 0 && kind == PT_E_PARTITION_RANGE)
        return pt_fail(req->comm, kind, call,
                       "entry %d of %d is partition %d, outside [0, %d), the request's partitions (round %d); "
                       "nothing was marked",
                       bad, length, array_of_partitions[bad], req->partitions, pt_request_round(req));
    if (bad >= 0 && earlier >= 0)
        return pt_fail(req->comm, kind, call,
                       "entry %d of %d is partition %d, which entry %d names too (round %d); nothing was marked", bad,
                       length, array_of_partitions[bad], earlier, pt_request_round(req));
    if (bad >= 0)
        return pt_fail(req->comm, kind, call,
                       "entry %d of %d is partition %d, already marked ready in round %d; nothing was marked", bad,
                       length, array_of_partitions[bad], pt_request_round(req));
    for (int i = 0; i < length; i++)
        if ((rc = mark(req, array_of_partitions[i], call)) != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}
