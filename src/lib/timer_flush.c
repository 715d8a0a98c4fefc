/* Timer policy, send side. A group whose marking has stalled, some of its
 * partitions ready and none added for delta, is split (checked from
 * Test/Wait/Parrived and the optional progress thread; a thread calling
 * MPI_Pready is itself progress, so Pready stays a single atomic). Its first
 * flush sends the ready partitions as runs on the channel's split tag, each a
 * header naming the run and then its data, the last header flagged; every
 * partition of the group sent after that goes alone on its own late tag,
 * where the receiver, told by the flag, has a receive posted: a late
 * partition's data needs no header read first. The group's last contributor
 * sends what is left and an empty terminator on the group's own tag, so the
 * receiver's pre-posted whole-group receive always completes. Marking stays
 * lock-free: partitions are claimed one by one with compare-and-swap, and
 * only the (rare) sending for split groups takes the request's split lock,
 * which keeps each header next to its data on the split tag. */
#include <stdlib.h>
#include <time.h>

#include "errors.h"
#include "request.h"
#include "runtime.h"
#include "timer_registry.h"

int pt_timer_alloc(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    /* Per partition at most two sends (a header and its run, or itself
     * alone) and one header; per group a terminator. */
    s->xcap = 2 * req->partitions + s->ntrans;
    s->xreq = malloc((size_t)s->xcap * sizeof *s->xreq);
    s->xhdr = malloc((size_t)req->partitions * PT_RUN_LEN * sizeof *s->xhdr);
    s->headed = calloc((size_t)s->ntrans, 1);
    pthread_mutex_init(&s->split_lock, NULL);
    s->nx = s->nhdr = s->nruns = 0;
    return s->xreq && s->xhdr && s->headed ? 0 : -1;
}

void pt_timer_free(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    free(s->xreq);
    free(s->xhdr);
    free(s->headed);
    pthread_mutex_destroy(&s->split_lock);
}

void pt_timer_round_reset(pt_request *req)
{
    /* Under the lock: a flush from another thread (the progress thread) may
     * still be claiming partitions of the round that just ended. Reopening the
     * groups here makes such a flush, once it gets the lock, find nothing to do. */
    pt_send_side *s = &req->u.s;
    pthread_mutex_lock(&s->split_lock);
    s->nx = s->nhdr = s->nruns = 0;
    for (int p = 0; p < req->partitions; p++)
        atomic_store_explicit(&s->part[p], PT_PART_IDLE, memory_order_relaxed);
    for (int g = 0; g < s->ntrans; g++) {
        s->headed[g] = 0;
        atomic_store_explicit(&s->groups[g].state, PT_GROUP_OPEN, memory_order_relaxed);
    }
    pthread_mutex_unlock(&s->split_lock);
}

/* Claim ready partition p for sending (whoever claims it sends it). */
static int claim(pt_send_side *s, int p)
{
    unsigned char ready = PT_PART_READY;
    return atomic_compare_exchange_strong(&s->part[p], &ready, PT_PART_SENT);
}

/* Write the next header: user partitions [p, q) of group g. Caller holds split_lock. */
static void add_header(pt_send_side *s, int g, int p, int q)
{
    int64_t *h = &s->xhdr[(size_t)s->nhdr++ * PT_RUN_LEN];
    h[PT_RUN_ROUND] = s->round;
    h[PT_RUN_GROUP] = g;
    h[PT_RUN_FIRST] = p;
    h[PT_RUN_COUNT] = q - p;
    h[PT_RUN_FLAGS] = 0;
}

/* Send header h and the data it names on the split tag. Caller holds split_lock. */
static int send_headed(pt_request *req, int h)
{
    pt_send_side *s = &req->u.s;
    const int64_t *hd = &s->xhdr[(size_t)h * PT_RUN_LEN];
    int tag = pt_split_tag(s->tag_base, s->ntrans);
    int rc = PMPI_Isend(hd, PT_RUN_LEN, MPI_INT64_T, req->peer_world, tag, pt_data_comm(), &s->xreq[s->nx++]);
    if (rc == MPI_SUCCESS)
        rc = pt_send_span_isend(req, (int)hd[PT_RUN_FIRST], (int)(hd[PT_RUN_FIRST] + hd[PT_RUN_COUNT]), tag,
                                &s->xreq[s->nx++]);
    return rc;
}

/* Group g's ready partitions as headed runs: its first flush of the round
 * (the last header flagged, late mode: the receiver then posts late
 * receives), or any flush of a RUNS group (nothing flagged). With none ready it sends nothing and the next
 * send for the group is the first flush: whoever sends a partition claimed
 * it, so until a first flush every partition is still claimable, and the
 * group's last contributor always finds its own. (An empty flagged header
 * would also make the receiver wait on late tags for a group that a flush
 * from the round before, losing a race with MPI_Start, split for nothing.)
 * Caller holds split_lock. */
static int headed_runs(pt_request *req, int g, int flag_last)
{
    pt_send_side *s = &req->u.s;
    int h0 = s->nhdr, end = s->bound[g + 1];
    for (int p = s->bound[g]; p < end;) {
        if (!claim(s, p)) {
            p++;
            continue;
        }
        int q = p + 1;
        while (q < end && claim(s, q))
            q++;
        add_header(s, g, p, q);
        s->nruns++;
        p = q;
    }
    if (s->nhdr == h0)
        return MPI_SUCCESS;
    s->headed[g] = 1;
    if (flag_last)
        s->xhdr[(size_t)(s->nhdr - 1) * PT_RUN_LEN + PT_RUN_FLAGS] = PT_RUN_FLAG_LAST;
    int rc = MPI_SUCCESS;
    for (int h = h0; h < s->nhdr && rc == MPI_SUCCESS; h++)
        rc = send_headed(req, h);
    return rc;
}

/* Partition p of a headed group, claimed: send it alone on its late tag,
 * where the receiver has (or will have) a receive posted. Caller holds split_lock. */
static int send_alone(pt_request *req, int p)
{
    pt_send_side *s = &req->u.s;
    s->nruns++;
    return pt_send_span_isend(req, p, p + 1, pt_late_tag(s->tag_base, s->ntrans, p), &s->xreq[s->nx++]);
}

/* Send what is ready of split group g: the first flush if it has not gone
 * out yet, else every ready partition alone. Caller holds split_lock. */
static int send_ready(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    int state = atomic_load_explicit(&s->groups[g].state, memory_order_acquire);
    if (state == PT_GROUP_RUNS)
        return headed_runs(req, g, 0);
    if (state != PT_GROUP_SPLIT)
        return MPI_SUCCESS; /* a flush that outlived its round */
    if (!s->headed[g])
        return headed_runs(req, g, 1);
    int rc = MPI_SUCCESS;
    for (int p = s->bound[g]; p < s->bound[g + 1] && rc == MPI_SUCCESS; p++)
        if (claim(s, p))
            rc = send_alone(req, p);
    return rc;
}

static int group_marked(const pt_send_side *s, int g);

/* marked: the group's partitions marked so far (group_marked). */
static void flush_group(pt_request *req, int g, int marked)
{
    pt_send_side *s = &req->u.s;
    int expected = PT_GROUP_OPEN;
    int left = s->bound[g + 1] - s->bound[g] - marked;
    int next = left <= PT_LATE_MAX ? PT_GROUP_SPLIT : PT_GROUP_RUNS;
    if (atomic_compare_exchange_strong(&s->groups[g].state, &expected, next)) {
        if (next == PT_GROUP_SPLIT)
            pt_timer_group_closed(req); /* each later partition goes at its mark */
    } else if (expected != PT_GROUP_SPLIT && expected != PT_GROUP_RUNS) {
        return; /* its last contributor sends it whole */
    }
    pthread_mutex_lock(&s->split_lock);
    int rc = send_ready(req, g);
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
        rc = send_ready(req, g); /* the first flush, which takes p along */
    else if (claim(s, p))
        rc = send_alone(req, p);
    pthread_mutex_unlock(&s->split_lock);
    return rc; /* the caller (MPI_Pready*) reports it */
}

/* Partitions of group g marked so far this round (its chunks are consecutive). */
static int group_marked(const pt_send_side *s, int g)
{
    int first = s->groups[g].first_chunk, n = 0;
    for (int c = first; c < first + s->groups[g].nchunks; c++)
        n += __builtin_popcountll(atomic_load_explicit(&s->chunks[c].mask, memory_order_relaxed));
    return n;
}

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
    if (atomic_load_explicit(&grp->issued, memory_order_acquire) ||
        atomic_load_explicit(&grp->state, memory_order_relaxed) == PT_GROUP_WHOLE)
        return INT64_MAX;
    int marked = group_marked(s, g);
    if (marked == 0)
        return INT64_MAX;
    if (!*t)
        *t = pt_now_ns();
    if (marked != atomic_load_explicit(&grp->seen_marked, memory_order_relaxed)) {
        atomic_store_explicit(&grp->seen_marked, marked, memory_order_relaxed);
        atomic_store_explicit(&grp->seen_ns, *t, memory_order_relaxed);
    } else if (*t - atomic_load_explicit(&grp->seen_ns, memory_order_relaxed) >= s->delta_ns &&
               marked > atomic_load_explicit(&grp->flushed_marked, memory_order_relaxed)) {
        /* (a RUNS group already flushed with this many marks has nothing new) */
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
    int rc = send_ready(req, g);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(NULL, 0, MPI_BYTE, req->peer_world, s->tag_base + g, pt_data_comm(), &s->xreq[s->nx++]);
    pthread_mutex_unlock(&s->split_lock);
    return rc;
}

int pt_timer_runs_complete(pt_request *req, int *done)
{
    pt_send_side *s = &req->u.s;
    pthread_mutex_lock(&s->split_lock);
    int rc = s->nx ? PMPI_Testall(s->nx, s->xreq, done, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    if (!s->nx)
        *done = 1;
    pthread_mutex_unlock(&s->split_lock);
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Testall of timer runs");
}
