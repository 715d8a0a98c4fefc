/* The MPI transport, sender: a persistent send per message on its own tag;
 * the timer's runs as headed runs on the split tag, lone partitions on their
 * late tags (in eager pieces past MPI's eager limit), and an empty
 * terminator per group sent in runs. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"
#include "request/errors.h"
#include "request/request.h"
#include "transport/mpi/mpi_transport.h"
#include "transport/mpi/tag_alloc.h"

static pt_mpi_send *state(pt_request *req) { return req->tp; }

/* Buffer address, element count and datatype of user partitions [first, end). */
static void span(const pt_request *req, int first, int end, void **addr, MPI_Count *n, MPI_Datatype *type)
{
    if (req->contiguous) {
        *addr = req->buf + req->true_lb + (size_t)first * req->part_bytes;
        *n = (MPI_Count)((size_t)(end - first) * req->part_bytes);
        *type = MPI_BYTE;
    } else {
        *addr = req->buf + (MPI_Aint)first * req->count * req->extent;
        *n = (MPI_Count)(end - first) * req->count;
        *type = req->type;
    }
}

int pt_mpi_span_isend(pt_request *req, int first, int end, int tag, MPI_Request *out)
{
    void *addr;
    MPI_Count n;
    MPI_Datatype type;
    span(req, first, end, &addr, &n, &type);
    return PMPI_Isend(addr, (int)n, type, req->peer_world, tag, pt_data_comm(), out);
}

int pt_mpi_send_init(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    int P = req->partitions, N = s->ntrans, cut = s->cut, split = s->split;
    pt_mpi_send *t = calloc(1, sizeof *t);
    if (!t || !(t->treq = malloc((size_t)N * sizeof *t->treq))) {
        free(t);
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for %d transport messages", N);
    }
    req->tp = t;
    pthread_mutex_init(&t->xlock, NULL);
    long long tags = (long long)N + (split ? 1 + (long long)P : 0); /* split tag, one late tag per partition */
    t->tag_count = tags > INT_MAX ? 0 : (int)tags;
    if (!t->tag_count || pt_tags_alloc(t->tag_count, &t->tag_base) != 0) {
        t->tag_count = 0;
        return pt_fail(req->comm, PT_E_TAGS, "MPI_Psend_init", "no free range of %lld internal tags", tags);
    }
    for (int j = 0; j < N; j++) {
        void *addr;
        MPI_Count n;
        MPI_Datatype type;
        if (cut) { /* contiguous bytes */
            size_t lo = pt_plan_message_offset(req->part_bytes, P, N, 1, j);
            addr = req->buf + req->true_lb + lo;
            n = (MPI_Count)(pt_plan_message_offset(req->part_bytes, P, N, 1, j + 1) - lo);
            type = MPI_BYTE;
        } else {
            span(req, s->bound[j], s->bound[j + 1], &addr, &n, &type);
        }
        /* The planner keeps messages within INT_MAX bytes unless one
         * partition of a non-contiguous type is larger: that it cannot split. */
        size_t bytes = cut ? (size_t)n : (size_t)(s->bound[j + 1] - s->bound[j]) * req->part_bytes;
        if (n > INT_MAX || bytes > INT_MAX)
            return pt_fail(req->comm, PT_E_TOO_BIG, "MPI_Psend_init",
                           "a partition of %zu bytes (count %lld of a non-contiguous datatype) is over INT_MAX "
                           "bytes, which partita cannot split into transport messages",
                           req->part_bytes, (long long)req->count);
        int rc = PMPI_Send_init(addr, (int)n, type, req->peer_world, t->tag_base + j, pt_data_comm(), &t->treq[j]);
        if (rc != MPI_SUCCESS)
            return pt_fail_mpi(req->comm, rc, "MPI_Psend_init", "MPI_Send_init");
        t->nmsg = j + 1; /* only these exist */
    }
    t->late_pieces = split ? pt_plan_late_pieces(&req->settings, req->part_bytes, P, N, req->contiguous) : 1;
    if (split) {
        /* Per partition at most two sends (a header and its run) or its
         * pieces alone; per group a terminator. */
        int per = t->late_pieces > 2 ? t->late_pieces : 2;
        t->xcap = per * P + N;
        t->xreq = malloc((size_t)t->xcap * sizeof *t->xreq);
        t->xdone = malloc((size_t)t->xcap * sizeof *t->xdone);
        t->xhdr = malloc((size_t)P * PT_RUN_LEN * sizeof *t->xhdr);
        if (!t->xreq || !t->xdone || !t->xhdr)
            return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for the timer's state");
    }
    req->hs_buf[PT_HS_TRANSPORT_ARG] = pt_mpi_word(t->tag_base, t->late_pieces);
    return MPI_SUCCESS;
}

void pt_mpi_send_start(pt_request *req)
{
    pt_mpi_send *t = state(req);
    t->completed_upto = 0;
    if (!t->xcap)
        return; /* no runs (not the timer): nothing else to reset */
    pthread_mutex_lock(&t->xlock);
    t->nx = t->nhdr = t->xdone_upto = 0;
    pthread_mutex_unlock(&t->xlock);
}

int pt_mpi_send_message(pt_request *req, int j) { return PMPI_Start(&state(req)->treq[j]); }

/* Write the next header: user partitions [p, q) of group g. Caller holds xlock. */
static void add_header(pt_request *req, int g, int p, int q)
{
    pt_mpi_send *t = state(req);
    int64_t *h = &t->xhdr[(size_t)t->nhdr++ * PT_RUN_LEN];
    h[PT_RUN_ROUND] = req->u.s.round;
    h[PT_RUN_GROUP] = g;
    h[PT_RUN_FIRST] = p;
    h[PT_RUN_COUNT] = q - p;
    h[PT_RUN_FLAGS] = 0;
}

/* Send header h and the data it names on the split tag. Caller holds xlock. */
static int send_headed(pt_request *req, int h)
{
    pt_mpi_send *t = state(req);
    const int64_t *hd = &t->xhdr[(size_t)h * PT_RUN_LEN];
    int tag = pt_split_tag(t->tag_base, req->u.s.ntrans);
    int rc = PMPI_Isend(hd, PT_RUN_LEN, MPI_INT64_T, req->peer_world, tag, pt_data_comm(), &t->xreq[t->nx++]);
    if (rc == MPI_SUCCESS)
        rc = pt_mpi_span_isend(req, (int)hd[PT_RUN_FIRST], (int)(hd[PT_RUN_FIRST] + hd[PT_RUN_COUNT]), tag,
                               &t->xreq[t->nx++]);
    return rc;
}

/* Partition p alone on its late tag: whole, or in its eager pieces (the
 * receiver posts as many receives, which MPI matches in order), into
 * out[0 .. late_pieces). Returns the sends made; *rc the first failure. */
static int send_alone(pt_request *req, int p, MPI_Request *out, int *rc)
{
    pt_mpi_send *t = state(req);
    int tag = pt_late_tag(t->tag_base, req->u.s.ntrans, p);
    if (t->late_pieces == 1) {
        *rc = pt_mpi_span_isend(req, p, p + 1, tag, out);
        return *rc == MPI_SUCCESS;
    }
    void *addr; /* contiguous bytes: pieces are planned for no other partition */
    MPI_Count n;
    MPI_Datatype type;
    span(req, p, p + 1, &addr, &n, &type);
    size_t k = (size_t)t->late_pieces;
    int sent = 0;
    *rc = MPI_SUCCESS;
    for (size_t i = 0; i < k && *rc == MPI_SUCCESS; i++) {
        size_t lo = ptm_piece_offset(req->part_bytes, k, i), hi = ptm_piece_offset(req->part_bytes, k, i + 1);
        *rc = PMPI_Isend((char *)addr + lo, (int)(hi - lo), MPI_BYTE, req->peer_world, tag, pt_data_comm(),
                         &out[sent]);
        sent += *rc == MPI_SUCCESS;
    }
    return sent;
}

/* Headed runs on the split tag (the first flush's last header flagged: the
 * receiver then posts a receive on the late tag of every other partition of
 * the group), or, PT_RUNS_ALONE, each partition alone on its late tag, where
 * the receiver has (or will have) its receives posted: a late partition's
 * data needs no header read first. One partition alone (a mark's) is sent
 * before xlock is taken, which then only records its sends: after a
 * laggard's pause the lock's line is cold, and the data should not wait for
 * it (the callers order the record before the group can complete). */
int pt_mpi_send_runs(pt_request *req, int g, const pt_run *runs, int n, int flags)
{
    pt_mpi_send *t = state(req);
    int rc = MPI_SUCCESS;
    if ((flags & PT_RUNS_ALONE) && n == 1 && runs[0].count == 1) {
        MPI_Request sent[PT_MAX_EAGER_PIECES];
        int k = send_alone(req, runs[0].first, sent, &rc);
        pthread_mutex_lock(&t->xlock);
        for (int i = 0; i < k; i++)
            t->xreq[t->nx++] = sent[i];
        pthread_mutex_unlock(&t->xlock);
        return rc;
    }
    pthread_mutex_lock(&t->xlock);
    if (flags & PT_RUNS_ALONE) {
        for (int k = 0; k < n && rc == MPI_SUCCESS; k++)
            for (int p = runs[k].first; p < runs[k].first + runs[k].count && rc == MPI_SUCCESS; p++)
                t->nx += send_alone(req, p, &t->xreq[t->nx], &rc);
    } else {
        int h0 = t->nhdr;
        for (int k = 0; k < n; k++)
            add_header(req, g, runs[k].first, runs[k].first + runs[k].count);
        if (flags & PT_RUNS_FIRST_FLUSH)
            t->xhdr[(size_t)(t->nhdr - 1) * PT_RUN_LEN + PT_RUN_FLAGS] =
                PT_RUN_FLAG_LAST | (flags & PT_RUNS_AHEAD ? PT_RUN_FLAG_AHEAD : 0);
        for (int h = h0; h < t->nhdr && rc == MPI_SUCCESS; h++)
            rc = send_headed(req, h);
    }
    pthread_mutex_unlock(&t->xlock);
    return rc;
}

/* The group came in runs: an empty message on its own tag completes the
 * receiver's whole-group receive. A group announced ahead for this round
 * (the flush layer keeps when: pt_group.ahead_end) has none posted (recv.c:
 * start_receives). */
int pt_mpi_send_finish_group(pt_request *req, int g)
{
    pt_mpi_send *t = state(req);
    if (pt_ahead_in(req->u.s.round, req->u.s.groups[g].ahead_end))
        return MPI_SUCCESS;
    pthread_mutex_lock(&t->xlock);
    int rc = PMPI_Isend(NULL, 0, MPI_BYTE, req->peer_world, t->tag_base + g, pt_data_comm(), &t->xreq[t->nx++]);
    pthread_mutex_unlock(&t->xlock);
    return rc;
}

/* Test the messages from completed_upto on, in order, stopping at the first
 * one not complete (or, unless all_issued, whose group is not yet issued:
 * an inactive persistent send tests complete). Returns 1 when every message
 * is complete; *rc is the MPI error, if any. */
static int test_in_order(pt_request *req, int all_issued, int *rc)
{
    pt_mpi_send *t = state(req);
    *rc = MPI_SUCCESS;
    while (t->completed_upto < t->nmsg &&
           (all_issued ||
            atomic_load_explicit(&req->u.s.groups[t->completed_upto].issued, memory_order_acquire))) {
        int flag = 0;
        int err = PMPI_Test(&t->treq[t->completed_upto], &flag, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS) {
            *rc = pt_fail_mpi(req->comm, err, pt_call_name(), "MPI_Test of a transport message");
            return 0;
        }
        if (!flag)
            return 0;
        t->completed_upto++;
    }
    return t->completed_upto == t->nmsg;
}

int pt_mpi_send_progress(pt_request *req, int all_issued, int *done)
{
    pt_mpi_send *t = state(req);
    int rc;
    *done = 0;
    if (!test_in_order(req, all_issued, &rc) || !all_issued)
        return rc;
    if (!t->xcap) { /* no runs: not the timer */
        *done = 1;
        return MPI_SUCCESS;
    }
    /* In order from the first not known complete, stopping at the first that
     * is not, as the messages (test_in_order): an MPI_Testall of every send
     * at each poll walked all of them for the one pass of MPI's progress a
     * poll makes. A laggard's every fourth partition late, 64 KiB in 512
     * partitions: the rounds announced ahead send 512 partitions alone, and
     * the timer's last arrival after the last mark went from 0.25
     * [0.23-0.34] of `none`'s speed to 1.15 [1.01-1.38] (6 interleaved
     * launches each). */
    pthread_mutex_lock(&t->xlock);
    rc = MPI_SUCCESS;
    while (t->xdone_upto < t->nx) {
        int flag = 0;
        if ((rc = PMPI_Test(&t->xreq[t->xdone_upto], &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS || !flag)
            break;
        t->xdone_upto++;
    }
    *done = rc == MPI_SUCCESS && t->xdone_upto == t->nx;
    pthread_mutex_unlock(&t->xlock);
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of timer runs");
}

/* MPICH's shared-memory path holds an eager message back when the
 * receiver's queue is full, and moves about one such message per later
 * progress call of the sender. 192 eager pieces of 5.4 KiB sent back to
 * back: 73-78 reached a receiver that polled for 1 ms while the sender made
 * no MPI call; the rest took the sender's MPI_Waitall 206-293 us after
 * that. A timer request whose early partitions went alone (1 MiB in 64
 * partitions, three threads marking, a fourth 1 ms late) left 26-28 of its
 * 48 early partitions there until the laggard came back, and its last
 * partition arrived 319 us after the last mark against none's 32
 * (docs/library.md, "Early sends that MPI holds back"). Tests per call,
 * each about 2 us, so that a marking thread recording a send waits little
 * for xlock. */
#define DRAIN_TESTS 2

int pt_mpi_send_drain(pt_request *req)
{
    pt_mpi_send *t = state(req);
    if (!t->xcap)
        return 1; /* no runs: not the timer */
    if (pthread_mutex_trylock(&t->xlock) != 0)
        return 0;
    int moved = 0, out = 0;
    for (int i = 0; i < DRAIN_TESTS && t->xdone_upto < t->nx; i++) {
        if (PMPI_Testsome(t->nx - t->xdone_upto, t->xreq + t->xdone_upto, &out, t->xdone, MPI_STATUSES_IGNORE) !=
            MPI_SUCCESS)
            out = MPI_UNDEFINED; /* the application's wait reports it */
        if (out == MPI_UNDEFINED || out == 0)
            break;
        moved += out;
    }
    int done = t->xdone_upto == t->nx || out == MPI_UNDEFINED;
    pthread_mutex_unlock(&t->xlock);
    return done ? 1 : moved ? 0 : -1;
}

void pt_mpi_send_destroy(pt_request *req)
{
    pt_mpi_send *t = state(req);
    if (!t)
        return;
    for (int j = 0; j < t->nmsg; j++)
        PMPI_Request_free(&t->treq[j]);
    if (t->tag_count)
        pt_tags_free(t->tag_base, t->tag_count);
    pthread_mutex_destroy(&t->xlock);
    free(t->treq);
    free(t->xreq);
    free(t->xdone);
    free(t->xhdr);
    free(t);
    req->tp = NULL;
}
