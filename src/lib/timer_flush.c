/* Timer policy, send side. A group whose marking has stalled, some of its
 * partitions ready and none added for delta, is split (checked from
 * Test/Wait/Parrived and the optional progress thread; a thread calling
 * MPI_Pready is itself progress, so Pready stays a single atomic): its ready
 * partitions go out
 * now as runs (a header naming the run, then its data, on the channel's split
 * tag) and the rest follow as they become ready; the group's last contributor
 * sends what is left and an empty terminator on the group's own tag, so the
 * receiver's pre-posted whole-group receive always completes. Marking stays
 * lock-free: runs are claimed partition by partition with compare-and-swap,
 * and only the (rare) sending of runs takes the request's split lock, which
 * keeps each header next to its data on the split tag. */
#include <stdlib.h>
#include <time.h>

#include "errors.h"
#include "request.h"
#include "runtime.h"
#include "timer_registry.h"

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int pt_timer_alloc(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    s->xcap = 2 * req->partitions + s->ntrans; /* at most one run per partition, one terminator per group */
    s->xreq = malloc((size_t)s->xcap * sizeof *s->xreq);
    s->xhdr = malloc((size_t)req->partitions * PT_RUN_LEN * sizeof *s->xhdr);
    pthread_mutex_init(&s->split_lock, NULL);
    s->nx = s->nhdr = 0;
    return s->xreq && s->xhdr ? 0 : -1;
}

void pt_timer_free(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    free(s->xreq);
    free(s->xhdr);
    pthread_mutex_destroy(&s->split_lock);
}

void pt_timer_round_reset(pt_request *req)
{
    /* Under the lock: a flush from another thread (the progress thread) may
     * still be claiming partitions of the round that just ended. */
    pt_send_side *s = &req->u.s;
    pthread_mutex_lock(&s->split_lock);
    s->nx = 0;
    s->nhdr = 0;
    for (int p = 0; p < req->partitions; p++)
        atomic_store_explicit(&s->part[p], PT_PART_IDLE, memory_order_relaxed);
    pthread_mutex_unlock(&s->split_lock);
}

/* Send user partitions [p, q) of group g as one run. Caller holds split_lock. */
static int send_run(pt_request *req, int g, int p, int q)
{
    pt_send_side *s = &req->u.s;
    int64_t *h = &s->xhdr[(size_t)s->nhdr++ * PT_RUN_LEN];
    h[PT_RUN_ROUND] = s->round;
    h[PT_RUN_GROUP] = g;
    h[PT_RUN_FIRST] = p;
    h[PT_RUN_COUNT] = q - p;
    int split_tag = s->tag_base + s->ntrans;
    int rc = PMPI_Isend(h, PT_RUN_LEN, MPI_INT64_T, req->peer_world, split_tag, pt_data_comm(), &s->xreq[s->nx++]);
    if (rc == MPI_SUCCESS)
        rc = pt_send_span_isend(req, p, q, split_tag, &s->xreq[s->nx++]);
    return rc;
}

/* Claim the ready, unsent partitions of group g and send them as runs.
 * Caller holds split_lock. */
static int send_ready_runs(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    int end = s->bound[g + 1];
    for (int p = s->bound[g]; p < end;) {
        unsigned char ready = PT_PART_READY;
        if (!atomic_compare_exchange_strong(&s->part[p], &ready, PT_PART_SENT)) {
            p++;
            continue;
        }
        int q = p + 1;
        for (;;) {
            ready = PT_PART_READY;
            if (q >= end || !atomic_compare_exchange_strong(&s->part[q], &ready, PT_PART_SENT))
                break;
            q++;
        }
        int rc = send_run(req, g, p, q);
        if (rc != MPI_SUCCESS)
            return rc;
        p = q;
    }
    return MPI_SUCCESS;
}

static void flush_group(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    int expected = PT_GROUP_OPEN;
    if (atomic_compare_exchange_strong(&s->groups[g].state, &expected, PT_GROUP_SPLIT))
        pt_timer_group_closed(req);
    else if (expected != PT_GROUP_SPLIT)
        return; /* its last contributor sends it whole */
    pthread_mutex_lock(&s->split_lock);
    int rc = send_ready_runs(req, g);
    pthread_mutex_unlock(&s->split_lock);
    if (rc != MPI_SUCCESS)
        pt_error_mpi(req->comm, rc);
}

int pt_timer_send_late(pt_request *req, int g, int p)
{
    pt_send_side *s = &req->u.s;
    unsigned char ready = PT_PART_READY;
    /* whoever claims it sends it: this thread, or a concurrent flush or the group's last contributor */
    if (!atomic_compare_exchange_strong(&s->part[p], &ready, PT_PART_SENT))
        return MPI_SUCCESS;
    pthread_mutex_lock(&s->split_lock);
    int rc = send_run(req, g, p, p + 1);
    pthread_mutex_unlock(&s->split_lock);
    return rc == MPI_SUCCESS ? rc : pt_error_mpi(req->comm, rc);
}

/* Partitions of group g marked so far this round (its chunks are consecutive). */
static int group_marked(const pt_send_side *s, int g)
{
    int first = (int)(s->slot[s->bound[g]] >> 6), n = 0;
    for (int c = first; c < first + s->groups[g].nchunks; c++)
        n += __builtin_popcountll(atomic_load_explicit(&s->chunks[c].mask, memory_order_relaxed));
    return n;
}

/* Flush group g when it has ready partitions and its marking made no progress
 * for delta: a laggard holds it back. Each flush re-arms the wait, so a group
 * marked slowly goes out in a few runs, never one per partition. *t caches the
 * clock across groups (0: not read yet). */
static void check_group(pt_request *req, int g, int64_t *t)
{
    pt_send_side *s = &req->u.s;
    pt_group *grp = &s->groups[g];
    if (atomic_load_explicit(&grp->issued, memory_order_acquire) ||
        atomic_load_explicit(&grp->state, memory_order_relaxed) == PT_GROUP_WHOLE)
        return;
    int marked = group_marked(s, g);
    if (marked == 0)
        return;
    if (!*t)
        *t = now_ns();
    if (marked != atomic_load_explicit(&grp->seen_marked, memory_order_relaxed)) {
        atomic_store_explicit(&grp->seen_marked, marked, memory_order_relaxed);
        atomic_store_explicit(&grp->seen_ns, *t, memory_order_relaxed);
        return;
    }
    if (*t - atomic_load_explicit(&grp->seen_ns, memory_order_relaxed) >= s->delta_ns) {
        flush_group(req, g);
        atomic_store_explicit(&grp->seen_ns, *t, memory_order_relaxed);
    }
}

void pt_timer_flush_due(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    if (!atomic_load_explicit(&req->active, memory_order_acquire))
        return;
    int64_t t = 0;
    for (int g = 0; g < s->ntrans; g++)
        check_group(req, g, &t);
}

int pt_timer_finish_group(pt_request *req, int g)
{
    pt_send_side *s = &req->u.s;
    pthread_mutex_lock(&s->split_lock);
    int rc = send_ready_runs(req, g);
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
    return rc == MPI_SUCCESS ? rc : pt_error_mpi(req->comm, rc);
}
