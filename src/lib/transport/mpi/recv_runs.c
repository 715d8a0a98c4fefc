/* The MPI transport, timer policy, receive side: groups that the sender split
 * arrive as runs on the request's split tag (a header, then the run's data
 * straight into place), then partitions alone on their late tags, and an
 * empty terminator on the group's own tag (recv.c). The flagged last header
 * of a group's first flush is the cue to post a receive on the late tag of
 * each of its partitions not in a run, so the late partitions (those a
 * laggard holds back) land without a header being read before each (in as
 * many receives as the sender sends it pieces: mpi_transport.h). Each
 * run and late partition is reported up as it lands (pt_recv_parts_in).
 * One header receive is kept posted; a header of a later round (the sender
 * may be ahead) is kept until that round starts, and nothing more is posted
 * on the split tag meanwhile, so the later round's data stays queued in MPI. */
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"
#include "request/clock.h"
#include "request/errors.h"
#include "request/request.h"
#include "transport/mpi/mpi_transport.h"

static pt_mpi_recv *state(const pt_request *req) { return req->tp; }

static int split_tag(const pt_request *req) { return pt_split_tag(state(req)->tag_base, req->u.r.ntrans); }

/* First sender partition of group g (the sender's balanced layout). */
static int group_first(const pt_recv_side *r, int g) { return ptm_group_first(r->sparts, r->ntrans, g); }

/* The header receive of a request that may split is not tested in the
 * first HDR_QUIET_NS after the receive's MPI_Start (pt_mpi_runs_progress): a
 * run comes only once the sender's marking has stalled for delta (5 us or
 * more) and its header has travelled, and a round with no late partition is
 * often over by then. Each test is a pass of MPI's progress engine; made at
 * every fourth poll they were most of what the timer cost a small message
 * with the progress thread on and no late partition: 1-4 KiB in 2-64
 * partitions went from 0.91-0.94 of `model`'s speed to 0.94-0.96 (8
 * interleaved launches; 0.95-0.97 with no header test at all). While the
 * round is that young a clock read replaces the test. */
#define HDR_QUIET_NS 8000

int pt_mpi_runs_setup(pt_request *req)
{
    const pt_recv_side *r = &req->u.r;
    pt_mpi_recv *t = state(req);
    size_t receives = (size_t)r->sparts * (size_t)t->late_pieces; /* at most, a round */
    t->sstate = calloc((size_t)r->sparts, 1);
    t->lleft = calloc((size_t)r->sparts, 1);
    t->lfirst = malloc((size_t)r->sparts * sizeof *t->lfirst);
    t->lreq = malloc(receives * sizeof *t->lreq);
    t->lpart = malloc(receives * sizeof *t->lpart);
    t->lidx = malloc(receives * sizeof *t->lidx);
    t->ahead_end = calloc((size_t)r->ntrans, sizeof *t->ahead_end);
    t->hdr_req = t->run_req = MPI_REQUEST_NULL;
    t->nlate = t->late_done = t->late_from = 0;
    t->ahead_max = 0;
    if (!t->sstate || !t->lleft || !t->lfirst || !t->lreq || !t->lpart || !t->lidx || !t->ahead_end) {
        pt_mpi_runs_destroy(req);
        return MPI_ERR_NO_MEM;
    }
    t->split = 1;
    return MPI_SUCCESS;
}

static int post_header(pt_request *req)
{
    pt_mpi_recv *r = state(req);
    r->hdr_posted = 1;
    return PMPI_Irecv(r->hdr_in, PT_RUN_LEN, MPI_INT64_T, req->peer_world, split_tag(req), pt_data_comm(),
                      &r->hdr_req);
}

/* Post the receives (one per piece) on the late tag of every partition of
 * group g that no run of its first flush carries: the sender sends each of
 * those alone. */
static int post_late(pt_request *req, int g)
{
    const pt_recv_side *u = &req->u.r;
    pt_mpi_recv *r = state(req);
    size_t bytes = (size_t)u->hs[PT_HS_PART_BYTES];
    size_t k = (size_t)r->late_pieces;
    for (int p = group_first(u, g), end = group_first(u, g + 1); p < end; p++) {
        if (r->sstate[p] != PT_SP_NONE)
            continue;
        char *at = u->dest + (size_t)p * bytes;
        r->lfirst[p] = r->nlate;
        for (size_t i = 0; i < k; i++) {
            size_t lo = ptm_piece_offset(bytes, k, i), hi = ptm_piece_offset(bytes, k, i + 1);
            int rc = PMPI_Irecv(at + lo, (int)(hi - lo), MPI_BYTE, req->peer_world,
                                pt_late_tag(r->tag_base, u->ntrans, p), pt_data_comm(), &r->lreq[r->nlate]);
            if (rc != MPI_SUCCESS)
                return rc;
            r->lpart[r->nlate++] = p;
        }
        r->lleft[p] = (unsigned char)k;
        r->sstate[p] = PT_SP_LATE;
    }
    return MPI_SUCCESS;
}

/* Post the data receive of the run in run_hdr (and, after the first flush's
 * last run, the late receives of its group), then the next header receive
 * (MPI matches them in this order). */
static int post_run(pt_request *req)
{
    pt_mpi_recv *r = state(req);
    const int64_t *h = r->run_hdr;
    size_t bytes = (size_t)req->u.r.hs[PT_HS_PART_BYTES];
    memset(r->sstate + h[PT_RUN_FIRST], PT_SP_RUN, (size_t)h[PT_RUN_COUNT]);
    if (h[PT_RUN_FLAGS] & PT_RUN_FLAG_AHEAD) {
        int end = pt_ahead_end((int)h[PT_RUN_ROUND]);
        r->ahead_end[h[PT_RUN_GROUP]] = end;
        r->ahead_max = end > r->ahead_max ? end : r->ahead_max;
    }
    r->run_posted = 1;
    int rc = PMPI_Irecv(req->u.r.dest + (size_t)h[PT_RUN_FIRST] * bytes, (int)((size_t)h[PT_RUN_COUNT] * bytes), MPI_BYTE,
                        req->peer_world, split_tag(req), pt_data_comm(), &r->run_req);
    if (rc == MPI_SUCCESS && (h[PT_RUN_FLAGS] & PT_RUN_FLAG_LAST))
        rc = post_late(req, (int)h[PT_RUN_GROUP]);
    return rc == MPI_SUCCESS ? post_header(req) : rc;
}

/* The groups the sender announced ahead for this round (PT_RUN_FLAG_AHEAD)
 * send every partition alone on its late tag: post those receives now, as
 * `none` posts its receives when the round starts. */
static int post_ahead(pt_request *req)
{
    pt_mpi_recv *r = state(req);
    int round = req->u.r.round, rc = MPI_SUCCESS;
    if (round >= r->ahead_max)
        return MPI_SUCCESS;
    for (int g = 0; g < req->u.r.ntrans && rc == MPI_SUCCESS; g++)
        if (pt_ahead_in(round, r->ahead_end[g]))
            rc = post_late(req, g);
    return rc;
}

int pt_mpi_runs_round_start(pt_request *req)
{
    pt_mpi_recv *r = state(req);
    r->hdr_quiet_until = pt_ticks() + pt_ticks_from_ns(HDR_QUIET_NS);
    memset(r->sstate, PT_SP_NONE, (size_t)req->u.r.sparts);
    r->nlate = r->late_done = r->late_from = r->late_early = 0; /* the last round's all completed */
    int rc = post_ahead(req);
    if (rc != MPI_SUCCESS)
        return rc;
    if (r->have_stash) {
        if (r->run_hdr[PT_RUN_ROUND] != req->u.r.round)
            return MPI_SUCCESS; /* still a later round's */
        r->have_stash = 0;
        return post_run(req);
    }
    return r->hdr_posted || r->run_posted ? MPI_SUCCESS : post_header(req);
}

static int valid_header(const pt_request *req, const int64_t *h)
{
    const pt_recv_side *r = &req->u.r;
    if (h[PT_RUN_GROUP] < 0 || h[PT_RUN_GROUP] >= r->ntrans || h[PT_RUN_COUNT] < 1 || h[PT_RUN_ROUND] < r->round ||
        (h[PT_RUN_FLAGS] & ~(int64_t)(PT_RUN_FLAG_LAST | PT_RUN_FLAG_AHEAD)) ||
        (h[PT_RUN_FLAGS] & PT_RUN_FLAG_AHEAD && !(h[PT_RUN_FLAGS] & PT_RUN_FLAG_LAST)))
        return 0;
    int first = group_first(r, (int)h[PT_RUN_GROUP]), end = group_first(r, (int)h[PT_RUN_GROUP] + 1);
    return h[PT_RUN_FIRST] >= first && h[PT_RUN_FIRST] + h[PT_RUN_COUNT] <= end;
}

/* Later late receives tested per call while the next one in order is pending. */
#define LATE_WINDOW 8

/* Late receive k completed: its partition is in with its last piece. */
static void late_in(pt_request *req, int k)
{
    pt_mpi_recv *r = state(req);
    int p = r->lpart[k];
    if (--r->lleft[p] == 0)
        pt_recv_parts_in(req, pt_plan_group_of(req->u.r.sparts, req->u.r.ntrans, p), p, 1);
}

/* The late receives past the cursor of the partition an MPI_Parrived asks
 * about (its sender partitions'), as the messages of its partition are
 * (recv.c, test_range). Under a laggard whose partitions are scattered
 * (every fourth, in a group announced ahead, so that every partition comes
 * alone) the cursor waits at the first late one all round, and the others
 * were found only by the rotating window: each once in nlate / LATE_WINDOW
 * polls. Over MPICH's shared memory that was not only late news: in some
 * launches the round's pieces moved only as fast as the receiver's tests
 * ran MPI's progress, and 1 MiB in 64 partitions had its last partition in
 * 30-290 us after the last mark where `none`'s, whose polls test their own
 * partition's messages, took 5-60 (10 interleaved launches: timer over
 * `none` 0.74 [0.13-1.02] before, 1.04 [0.81-1.58] after; 64 KiB in 512
 * partitions, 6 launches: 1.15 [1.01-1.38] before, 1.73 [1.45-1.90] after). */
static int test_focus(pt_request *req, const pt_recv_focus *focus)
{
    pt_mpi_recv *r = state(req);
    int first, end;
    pt_recv_sender_span(req, focus->part, &first, &end);
    for (int sp = first; sp < end; sp++) {
        if (r->sstate[sp] != PT_SP_LATE || !r->lleft[sp])
            continue;
        for (int k = r->lfirst[sp]; k < r->lfirst[sp] + r->late_pieces; k++) {
            if (k <= r->late_done || r->lreq[k] == MPI_REQUEST_NULL)
                continue; /* the cursor's own was just tested */
            int flag = 0, rc = PMPI_Test(&r->lreq[k], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of a late timer partition");
            if (flag) {
                late_in(req, k);
                r->late_early++;
            }
        }
    }
    return MPI_SUCCESS;
}

/* The late receives mostly complete in the order they were posted: the
 * sender sends a split group's partitions alone as they are marked, and a
 * laggard marks them in order. So they are tested in order from the cursor,
 * as long as they are complete, like the messages (recv.c, scan_in_order):
 * a call costs one test per completion it finds plus one, and drains what
 * MPI has moved. A Testsome over a window of 64 at every call found one or
 * two a call: with 32 lone partitions of 16 bytes the receiver fell behind
 * a sender sending one every 0.15 us, and the last was in 3x later than
 * under `none`. While the one at the cursor is pending, a rotating window
 * of the later ones is tested too, so one that completes out of order is
 * found within nlate / LATE_WINDOW calls. A completed receive is
 * MPI_REQUEST_NULL: found once, whichever test finds it. Once every receive
 * past the cursor has been found (late_early counts them), no window is
 * tested: in 2 partitions under a laggard, the early one found, every poll
 * for the late one made an MPI call on null requests alone. */
static int test_late(pt_request *req, const pt_recv_focus *focus)
{
    pt_mpi_recv *r = state(req);
    int rc;
    while (r->late_done < r->nlate) {
        int k = r->late_done;
        if (r->lreq[k] != MPI_REQUEST_NULL) {
            int flag = 0;
            if ((rc = PMPI_Test(&r->lreq[k], &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of a late timer partition");
            if (!flag)
                break;
            late_in(req, k);
        } else {
            r->late_early--;
        }
        r->late_done++;
    }
    if (r->late_done == r->nlate) {
        r->nlate = r->late_done = r->late_from = r->late_early = 0;
        return MPI_SUCCESS;
    }
    if (r->nlate - r->late_done - 1 == r->late_early)
        return MPI_SUCCESS;
    if (focus && (rc = test_focus(req, focus)) != MPI_SUCCESS)
        return rc;
    int lo, w = pt_mpi_next_window(&r->late_from, r->late_done + 1, r->nlate, LATE_WINDOW, &lo);
    if (w == 0)
        return MPI_SUCCESS;
    int out = 0;
    if ((rc = PMPI_Testsome(w, r->lreq + lo, &out, r->lidx, MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
        return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Testsome of late timer partitions");
    for (int k = 0; out != MPI_UNDEFINED && k < out; k++) {
        late_in(req, lo + r->lidx[k]);
        r->late_early++;
    }
    return MPI_SUCCESS;
}

/* Calls of pt_mpi_runs_progress per test of the header receive, unless a
 * run just came in. A request that may split keeps a header receive posted
 * all round, and testing it at every call doubled what a poll of a group
 * that never splits costs MPI (1-4 KiB in 2-64 partitions took 0.85-0.9 of
 * `model`'s speed). A header comes once per split group, a laggard's delta
 * before its late partitions: a few polls late costs nothing there. In a
 * round whose every group was announced ahead none can come (one of a
 * later round waits for its round), so that round tests none. */
#define HDR_TEST_EVERY 4

/* Calls per clock read while the round is young (the header receive's
 * quiet start, HDR_QUIET_NS). A read (about 30 ns here) was made at every
 * HDR_TEST_EVERY-th call, all round; with the progress thread, at 1-16 KiB
 * in 64 partitions, whose rounds end before the quiet start does, leaving
 * out the header's tests and reads altogether took the timer from
 * 0.971-0.978 of `model`'s speed to 0.983-0.991 (8 interleaved launches).
 * This many calls past the quiet start's end (a few us at most) delay no
 * header that matters: one comes once a laggard has held a group back for
 * delta. */
#define HDR_QUIET_CHECK_EVERY 16

/* Whether this call tests the header receive: every HDR_TEST_EVERY-th call
 * once the quiet start is over (which takes no more clock reads), none
 * before it, and none in a round whose every group was announced ahead. */
static int header_due(pt_mpi_recv *r)
{
    if (r->all_ahead)
        return 0;
    if (++r->hdr_skipped < (r->hdr_quiet_until ? HDR_QUIET_CHECK_EVERY : HDR_TEST_EVERY))
        return 0;
    r->hdr_skipped = 0;
    if (r->hdr_quiet_until) {
        if (pt_ticks() < r->hdr_quiet_until)
            return 0;
        r->hdr_quiet_until = 0; /* over */
    }
    return 1;
}

int pt_mpi_runs_progress(pt_request *req, const pt_recv_focus *focus)
{
    pt_mpi_recv *r = state(req);
    int run_in = 0;
    for (int progressed = 1; progressed;) {
        progressed = 0;
        int flag = 0, rc;
        if (r->run_posted) {
            if ((rc = PMPI_Test(&r->run_req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "a receive of a timer run");
            if (flag) {
                r->run_posted = 0;
                pt_recv_parts_in(req, (int)r->run_hdr[PT_RUN_GROUP], (int)r->run_hdr[PT_RUN_FIRST],
                        (int)r->run_hdr[PT_RUN_COUNT]);
                progressed = run_in = 1;
            }
        }
        if (!r->run_posted && r->hdr_posted) {
            if (!run_in && !header_due(r))
                break;
            if ((rc = PMPI_Test(&r->hdr_req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "a receive of a timer run");
            if (flag) {
                r->hdr_posted = 0;
                for (int k = 0; k < PT_RUN_LEN; k++)
                    r->run_hdr[k] = r->hdr_in[k];
                if (!valid_header(req, r->run_hdr))
                    return pt_fail(req->comm, PT_E_SETUP, pt_call_name(), "malformed run header from rank %d", req->peer);
                if (r->run_hdr[PT_RUN_ROUND] > req->u.r.round ||
                    !atomic_load_explicit(&req->active, memory_order_acquire)) {
                    r->have_stash = 1; /* the sender is a round ahead */
                } else if ((rc = post_run(req)) != MPI_SUCCESS) {
                    return pt_fail_mpi(req->comm, rc, pt_call_name(), "a receive of a timer run");
                }
                progressed = 1;
            }
        }
    }
    return r->nlate ? test_late(req, focus) : MPI_SUCCESS;
}

void pt_mpi_runs_destroy(pt_request *req)
{
    pt_mpi_recv *r = state(req);
    MPI_Request *pending[2] = { r->hdr_posted ? &r->hdr_req : NULL, r->run_posted ? &r->run_req : NULL };
    for (int i = 0; i < 2; i++) {
        if (pending[i]) {
            PMPI_Cancel(pending[i]);
            PMPI_Wait(pending[i], MPI_STATUS_IGNORE);
        }
    }
    for (int k = r->late_done; k < r->nlate; k++) {
        if (r->lreq[k] != MPI_REQUEST_NULL) {
            PMPI_Cancel(&r->lreq[k]);
            PMPI_Wait(&r->lreq[k], MPI_STATUS_IGNORE);
        }
    }
    r->nlate = r->late_done = r->late_from = r->late_early = 0;
    free(r->sstate);
    free(r->lleft);
    free(r->lfirst);
    free(r->lreq);
    free(r->lpart);
    free(r->lidx);
    free(r->ahead_end);
    r->ahead_end = NULL;
    r->sstate = r->lleft = NULL;
    r->lreq = NULL;
    r->lpart = r->lidx = r->lfirst = NULL;
}
