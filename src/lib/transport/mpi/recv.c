/* The MPI transport, receiver: a persistent receive per message, posted at
 * each round's start (the round's credit), tested in order; under the timer
 * policy the runs of split groups (recv_runs.c). */
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"
#include "request/errors.h"
#include "request/request.h"
#include "transport/mpi/mpi_transport.h"

static pt_mpi_recv *state(const pt_request *req) { return req->tp; }

int pt_mpi_recv_setup(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    int N = r->ntrans;
    int64_t word = r->hs[PT_HS_TRANSPORT_ARG];
    int pieces = word < 0 ? 0 : pt_mpi_word_pieces(word);
    /* at most PT_MAX_EAGER_PIECES pieces, each of at least one byte */
    if (word < 0 || pieces < 1 || pieces > PT_MAX_EAGER_PIECES ||
        (pieces > 1 && r->hs[PT_HS_PART_BYTES] < pieces)) {
        r->error = PT_E_SETUP; /* a malformed set-up message: reported when the round completes */
        return MPI_SUCCESS;
    }
    pt_mpi_recv *t = calloc(1, sizeof *t);
    if (t) {
        req->tp = t;
        t->tag_base = pt_mpi_word_tag(word);
        t->late_pieces = pieces;
        t->treq = malloc((size_t)N * sizeof *t->treq);
        t->tin = calloc((size_t)N, 1);
    }
    if (!t || !t->treq || !t->tin) {
        r->error = PT_E_NO_MEM;
        return MPI_SUCCESS;
    }
    for (int j = 0; j < N; j++) {
        int rc = PMPI_Recv_init(r->dest + r->tstart[j], (int)(r->tstart[j + 1] - r->tstart[j]), MPI_BYTE,
                                req->peer_world, t->tag_base + j, pt_data_comm(), &t->treq[j]);
        if (rc != MPI_SUCCESS) {
            r->error = PT_E_INTERNAL;
            r->error_code = rc;
            r->error_call = "MPI_Recv_init";
            return MPI_SUCCESS; /* reported when the round completes */
        }
        t->nreq = j + 1;
    }
    if ((r->hs[PT_HS_FLAGS] & PT_HS_FLAG_SPLIT) && pt_mpi_runs_setup(req) != MPI_SUCCESS)
        r->error = PT_E_NO_MEM;
    return MPI_SUCCESS;
}

/* Post the round's whole-message receives, but not those of groups
 * announced ahead for it (recv_runs.c): their partitions come alone and
 * their sender sends no terminator, so they count as in already. */
static int start_receives(pt_request *req)
{
    pt_mpi_recv *t = state(req);
    int round = req->u.r.round;
    t->all_ahead = 0;
    if (!t->split || round >= t->ahead_max)
        return PMPI_Startall(t->nreq, t->treq);
    int rc = MPI_SUCCESS;
    for (int j = 0; j < t->nreq && rc == MPI_SUCCESS; j++) {
        if (pt_ahead_in(round, t->ahead_end[j])) {
            t->tin[j] = 1;
            t->nin++;
        } else {
            rc = PMPI_Start(&t->treq[j]);
        }
    }
    t->all_ahead = t->nin == t->nreq;
    return rc;
}

int pt_mpi_recv_start(pt_request *req)
{
    pt_mpi_recv *t = state(req);
    memset(t->tin, 0, (size_t)t->nreq);
    t->nin = 0;
    t->scan_from = t->window_from = 0;
    int rc = start_receives(req);
    if (rc == MPI_SUCCESS && t->split)
        rc = pt_mpi_runs_round_start(req);
    return rc == MPI_SUCCESS ? rc
                             : pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Startall of the transport receives");
}

/* Receive of message j completed with `bytes` bytes: whole, or the empty
 * terminator of a group that came in runs (then the runs report it). */
static void received(pt_request *req, int j, int bytes)
{
    pt_mpi_recv *t = state(req);
    const pt_recv_side *r = &req->u.r;
    if (t->tin[j])
        return;
    t->tin[j] = 1;
    t->nin++;
    if (!(t->split && bytes == 0 && r->tstart[j + 1] > r->tstart[j]))
        pt_recv_message_done(req, j);
}

/* Test the messages in order from scan_from and stop at the first one still
 * missing. One progress poll moves only a few messages, so testing all n at
 * every poll made a round O(n^2); messages further on still move, and are
 * found complete at once when the scan reaches them (MPI_Parrived also tests
 * its own partition's messages, test_range). */
static int scan_in_order(pt_request *req)
{
    pt_mpi_recv *t = state(req);
    int rc;
    while (t->scan_from < t->nreq) {
        int j = t->scan_from;
        if (!t->tin[j]) {
            int flag = 0;
            MPI_Status st;
            if ((rc = PMPI_Test(&t->treq[j], &flag, &st)) != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of a transport receive");
            if (!flag)
                break;
            int bytes = 0;
            PMPI_Get_count(&st, MPI_BYTE, &bytes);
            received(req, j, bytes);
        }
        t->scan_from++;
    }
    return MPI_SUCCESS;
}

/* Test messages lo..hi (those overlapping one partition, or a window). */
static int test_range(pt_request *req, int lo, int hi)
{
    pt_mpi_recv *t = state(req);
    int rc;
    if (hi - lo < 4) {
        for (int j = lo; j <= hi; j++) {
            if (t->tin[j])
                continue;
            int flag = 0;
            MPI_Status st;
            if ((rc = PMPI_Test(&t->treq[j], &flag, &st)) != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of a transport receive");
            if (flag) {
                int bytes = 0;
                PMPI_Get_count(&st, MPI_BYTE, &bytes);
                received(req, j, bytes);
            }
        }
    } else {
        enum { ON_STACK = 16 }; /* a window's worth: no allocation per poll */
        int n = hi - lo + 1, out = 0, idx_stack[ON_STACK];
        MPI_Status st_stack[ON_STACK];
        int *idx = n <= ON_STACK ? idx_stack : malloc((size_t)n * sizeof *idx);
        MPI_Status *st = n <= ON_STACK ? st_stack : malloc((size_t)n * sizeof *st);
        if (!idx || !st) {
            if (idx != idx_stack)
                free(idx);
            if (st != st_stack)
                free(st);
            return pt_fail(req->comm, PT_E_NO_MEM, pt_call_name(), "out of memory testing %d transport receives", n);
        }
        rc = PMPI_Testsome(n, &t->treq[lo], &out, idx, st);
        for (int k = 0; rc == MPI_SUCCESS && out != MPI_UNDEFINED && k < out; k++) {
            int bytes = 0;
            PMPI_Get_count(&st[k], MPI_BYTE, &bytes);
            received(req, lo + idx[k], bytes);
        }
        if (idx != idx_stack)
            free(idx);
        if (st != st_stack)
            free(st);
        if (rc != MPI_SUCCESS)
            return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Testsome of transport receives");
    }
    return MPI_SUCCESS;
}

/* Messages past the in-order scan that no poll of their own tests: a window
 * of RECV_WINDOW of them per poll, from where the last poll's window ended,
 * starting over past the scan at the end. MPI_Parrived tests MPI at the first
 * miss of each sweep over the partitions (recv.c in request/: most misses do
 * not), so when the first message was late (a laggard's), the scan stopped
 * at it and every sweep tested it alone: the messages behind it were never
 * tested, and partitions that had arrived were reported only when the late
 * one came (`none`, 64 partitions of 2 KiB, every fourth 50 ms late: 48 of
 * 48 early partitions seen after the pause in every round; the test
 * lib.early-drain.none: 12 of 12, 16 partitions of 1 KiB).
 * A window costs one MPI_Testsome, and a sweep that tests once sees every
 * message within about nreq / RECV_WINDOW sweeps. */
#define RECV_WINDOW 8

static int test_window(pt_request *req)
{
    pt_mpi_recv *t = state(req);
    int lo, w = pt_mpi_next_window(&t->window_from, t->scan_from + 1, t->nreq, RECV_WINDOW, &lo);
    return w ? test_range(req, lo, lo + w - 1) : MPI_SUCCESS;
}

int pt_mpi_recv_progress(pt_request *req, const pt_recv_focus *focus)
{
    pt_mpi_recv *t = state(req);
    if (t->nin == t->nreq)
        return t->split ? pt_mpi_runs_progress(req, focus) : MPI_SUCCESS;
    int rc = scan_in_order(req), lo = focus ? focus->lo : -1, hi = focus ? focus->hi : -1;
    /* The scan has just tested every message up to and including scan_from:
     * testing them again would only double the cost of a poll. */
    if (lo <= t->scan_from)
        lo = t->scan_from + 1;
    if (rc == MPI_SUCCESS && hi >= 0 && lo <= hi)
        rc = test_range(req, lo, hi);
    if (rc == MPI_SUCCESS)
        rc = test_window(req);
    if (rc != MPI_SUCCESS)
        return rc;
    return t->split ? pt_mpi_runs_progress(req, focus) : MPI_SUCCESS;
}

int pt_mpi_recv_settled(const pt_request *req)
{
    const pt_mpi_recv *t = state(req);
    return t && t->nin == t->nreq;
}

/* A round whose every group was announced ahead has each partition come
 * alone into a receive posted at MPI_Start, as under `none`, and no header
 * (one of a later round waits for its round): nothing the application's own
 * calls would not move, so the receive is not listed for background progress
 * (each MPI_Parrived then skips the list's lock, as `none`'s does). */
int pt_mpi_recv_runs_may_come(const pt_request *req)
{
    const pt_mpi_recv *t = state(req);
    return !t || !t->all_ahead;
}

void pt_mpi_recv_destroy(pt_request *req)
{
    pt_mpi_recv *t = state(req);
    if (!t)
        return;
    if (t->split)
        pt_mpi_runs_destroy(req);
    for (int j = 0; j < t->nreq; j++)
        PMPI_Request_free(&t->treq[j]);
    free(t->treq);
    free(t->tin);
    free(t);
    req->tp = NULL;
}
