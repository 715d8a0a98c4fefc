/* Receiver lifecycle: the set-up message (which names the sender's
 * transport), the receive plan (recv_plan.c), progress through the
 * transport, MPI_Parrived and completion. A receiver partition is reported
 * arrived once every transport message overlapping its bytes is in (and,
 * for a non-contiguous datatype, unpacked from staging). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "partita/partita.h"
#include "planner/planner.h"
#include "request/adaptive.h"
#include "request/errors.h"
#include "request/request.h"
#include "request/runtime.h"
#include "request/setup_waiters.h"
#include "transport/transport.h"

int pt_recv_init(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    r->round = -1;
    r->arrived = calloc((size_t)req->partitions, sizeof *r->arrived);
    req->hs_buf = calloc(PT_HS_LEN, sizeof *req->hs_buf);
    if (!r->arrived || !req->hs_buf)
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Precv_init", "out of memory for %d partitions", req->partitions);
    if (req->proc_null)
        return MPI_SUCCESS;
    /* Posted now, in init order: MPI's ordering pairs it with the sender's
     * init-time set-up message of the same (communicator, peer, tag). */
    int rc = PMPI_Irecv(req->hs_buf, PT_HS_LEN, MPI_INT64_T, req->peer, req->tag, req->shadow, &req->hs_req);
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, "MPI_Precv_init", "MPI_Irecv of the set-up message");
}

/* The sender's layout: groups (at most one message per partition), or the
 * buffer cut into byte-balanced pieces of at least one byte, which the timer
 * never splits further. */
static int layout_ok(const int64_t *hs)
{
    if (!(hs[PT_HS_FLAGS] & PT_HS_FLAG_CUT))
        return hs[PT_HS_NTRANS] <= hs[PT_HS_PARTS];
    return hs[PT_HS_NTRANS] <= INT_MAX && hs[PT_HS_PART_BYTES] > 0 &&
           (hs[PT_HS_NTRANS] + hs[PT_HS_PARTS] - 1) / hs[PT_HS_PARTS] <= hs[PT_HS_PART_BYTES] && /* >= 1 byte each */
           !(hs[PT_HS_FLAGS] & PT_HS_FLAG_SPLIT);
}

/* The set-up message has arrived: pick the sender's transport, build the
 * receive plan and let the transport set up its side. */
static int setup(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    memcpy(r->hs, req->hs_buf, sizeof r->hs);
    const int64_t *hs = r->hs;
    const struct pt_transport_ops *ops = pt_transport_by_index(hs[PT_HS_TRANSPORT]);
    r->ready = 1;
    if (hs[PT_HS_MAGIC] == PT_HS_MAGIC_VALUE && !ops) { /* a well-formed message of a transport not built here */
        r->error = PT_E_TRANSPORT;
        r->error_call = pt_transport_missing_why(hs[PT_HS_TRANSPORT]);
        return MPI_SUCCESS;
    }
    if (hs[PT_HS_MAGIC] != PT_HS_MAGIC_VALUE || hs[PT_HS_PARTS] < 1 || hs[PT_HS_NTRANS] < 1 ||
        !layout_ok(hs) || hs[PT_HS_PART_BYTES] < 0 ||
        hs[PT_HS_POLICY] < 0 || hs[PT_HS_POLICY] >= PT_POLICY_COUNT || hs[PT_HS_NCAND] < 1 ||
        hs[PT_HS_NCAND] > PT_HS_MAX_CAND) {
        r->error = PT_E_SETUP; /* reported when the round completes */
        return MPI_SUCCESS;
    }
    r->sparts = (int)hs[PT_HS_PARTS];
    r->ntrans = (int)hs[PT_HS_NTRANS];
    r->sent_bytes = (size_t)hs[PT_HS_PARTS] * (size_t)hs[PT_HS_PART_BYTES];
    if (hs[PT_HS_NCAND] > 1) { /* the adaptive policy: every candidate layout */
        req->tp_ops = ops;
        return pt_adapt_recv_setup(req);
    }
    pt_recv_plan_build(req);
    if (pt_recv_error_stops(r->error))
        return MPI_SUCCESS;
    req->tp_ops = ops;
    ops->recv_setup(req);
    if (!pt_recv_error_stops(r->error))
        r->split = (hs[PT_HS_FLAGS] & PT_HS_FLAG_SPLIT) != 0;
    return MPI_SUCCESS;
}

/* Reset the per-round state and post this round's receives. */
static int begin_round(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    if (pt_recv_error_stops(r->error))
        return MPI_SUCCESS;
    if (r->adapt) { /* the round's layout; deferred until the sender's schedule is in */
        int rc = MPI_SUCCESS;
        if (!pt_adapt_recv_round_layout(req, &rc))
            return rc;
    }
    pt_recv_plan_reset(req);
    return req->tp_ops->recv_start(req);
}

int pt_recv_start(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    r->round++;
    memset((void *)r->arrived, 0, (size_t)req->partitions * sizeof *r->arrived);
    r->narrived = 0; /* also while the round waits for its layout (adaptive) */
    if (req->proc_null)
        return MPI_SUCCESS;

    if (!r->ready) {
        int flag = 0;
        int rc = PMPI_Test(&req->hs_req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of the set-up message");
        if (!flag) {
            pt_waiters_add(req); /* posted by pt_recv_progress once the set-up message is in */
            return MPI_SUCCESS;
        }
        if ((rc = setup(req)) != MPI_SUCCESS)
            return rc;
    }
    int rc = begin_round(req);
    /* After it (the adaptive policy's round may have swapped in a layout that
     * splits), not in it: progress begins a round too, from the waiters'
     * own poll, which holds their list. A round deferred for its layout is
     * listed already and stays so while its split receives need it. */
    if (pt_recv_runs_may_come(req))
        pt_waiters_add(req); /* its runs need receiving even while the process is elsewhere */
    return rc;
}

int pt_recv_progress(pt_request *req, const pt_recv_focus *focus)
{
    pt_recv_side *r = &req->u.r;
    int rc;
    if (req->proc_null)
        return MPI_SUCCESS;
    if (!r->ready) {
        int flag = 0;
        if ((rc = PMPI_Test(&req->hs_req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of the set-up message");
        if (!flag)
            return MPI_SUCCESS;
        if ((rc = setup(req)) != MPI_SUCCESS)
            return rc;
        if (atomic_load_explicit(&req->active, memory_order_acquire) && (rc = begin_round(req)) != MPI_SUCCESS)
            return rc;
    } else if (r->deferred && (rc = begin_round(req)) != MPI_SUCCESS) {
        return rc;
    }
    if (pt_recv_error_stops(r->error) || r->deferred)
        return MPI_SUCCESS;
    return req->tp_ops->recv_progress(req, focus);
}

int pt_recv_all_arrived(const pt_request *req)
{
    return req->u.r.ready && req->u.r.narrived == req->partitions;
}

int pt_recv_runs_may_come(const pt_request *req)
{
    return req->u.r.split && (!req->tp_ops->recv_runs_may_come || req->tp_ops->recv_runs_may_come(req));
}

int pt_recv_round_done(const pt_request *req)
{
    const pt_recv_side *r = &req->u.r;
    return req->proc_null ||
           (r->ready && (pt_recv_error_stops(r->error) ||
                         (!r->deferred && r->ndone == r->ntrans && req->tp_ops->recv_settled(req))));
}

void pt_recv_fill_status(const pt_request *req, MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    if (req->proc_null) {
        pt_fill_empty_status(status);
        status->MPI_SOURCE = MPI_PROC_NULL;
        return;
    }
    const pt_recv_side *r = &req->u.r;
    status->MPI_SOURCE = req->peer;
    status->MPI_TAG = req->tag;
    status->MPI_ERROR = !r->error                     ? MPI_SUCCESS
                        : r->error == PT_E_INTERNAL ? pt_mpi_code(r->error_code, "completion", r->error_call)
                                                    : pt_error_code((pt_err)r->error);
    PMPI_Status_set_elements_x(status, MPI_BYTE,
                               r->error == PT_E_TRUNCATE ? (MPI_Count)(req->part_bytes * (size_t)req->partitions)
                               : pt_recv_error_stops(r->error) ? 0
                                                               : (MPI_Count)r->sent_bytes);
    PMPI_Status_set_cancelled(status, 0);
}

/* Most MPI_Parrived misses in a row, in increasing partition order, between
 * two tests of MPI. */
#define PARRIVED_TEST_EVERY 64

/* Whether this miss should test MPI. A polling loop asks about many partitions
 * that one message carries: testing MPI at every miss made a sweep over 512
 * partitions cost 512 MPI_Test calls (about 10 us under Open MPI, whose test
 * runs its whole progress engine), and the arrivals were seen up to a sweep
 * late. So a miss tests when the caller starts a new pass (a partition at or
 * below the last missed one: also every call of a loop polling one
 * partition) and otherwise every PARRIVED_TEST_EVERY-th miss. The counters
 * are hints: relaxed loads and stores, a lost update only moves a test. */
static int miss_should_test(pt_recv_side *r, int partition)
{
    int last = atomic_load_explicit(&r->last_miss, memory_order_relaxed);
    unsigned n = atomic_load_explicit(&r->misses, memory_order_relaxed) + 1;
    atomic_store_explicit(&r->last_miss, partition, memory_order_relaxed);
    if (partition > last && n < PARRIVED_TEST_EVERY) {
        atomic_store_explicit(&r->misses, n, memory_order_relaxed);
        return 0;
    }
    atomic_store_explicit(&r->misses, 0, memory_order_relaxed);
    return 1;
}

/* Adaptive policy: one more MPI_Parrived said true; as many as there are
 * partitions, and the application has (most likely) seen the round in.
 * A count, not a flag per partition: at 512 partitions a flag's atomic
 * exchange per first true answer made the sweep 20% slower. */
static inline void count_true(pt_request *req)
{
    atomic_int *n = &req->u.r.adapt_true;
    int now = req->serial ? atomic_load_explicit(n, memory_order_relaxed) + 1
                          : atomic_fetch_add_explicit(n, 1, memory_order_relaxed) + 1;
    if (req->serial)
        atomic_store_explicit(n, now, memory_order_relaxed);
    if (now == req->partitions)
        pt_adapt_recv_seen_all(req);
}

int Partita_Parrived(MPI_Request request, int partition, int *flag)
{
    if (!flag) {
        pt_request *req = pt_lookup(request);
        return pt_fail(req ? req->comm : MPI_COMM_SELF, PT_E_NULL_ARG, "MPI_Parrived",
                       "flag is NULL (partition %d): there is nowhere to put the answer", partition);
    }
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    pt_request *req = pt_lookup(request);
    if (!req)
        return pt_fail(MPI_COMM_SELF, PT_E_NOT_PARTITIONED, "MPI_Parrived", "the request is not a partitioned request");
    if (req->is_send)
        return pt_fail(req->comm, PT_E_PARRIVED_SEND, "MPI_Parrived", "the request is a partitioned send request");
    if (partition < 0 || partition >= req->partitions)
        return pt_fail(req->comm, PT_E_PARTITION_RANGE, "MPI_Parrived",
                       "partition %d is outside [0, %d), the request's partitions (round %d)", partition,
                       req->partitions, pt_request_round(req));
    pt_recv_side *r = &req->u.r;
    if (!atomic_load_explicit(&req->active, memory_order_acquire) || req->proc_null) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (atomic_load_explicit(&r->arrived[partition], memory_order_acquire)) {
        if (r->adapt_measure)
            count_true(req);
        *flag = 1;
        return MPI_SUCCESS;
    }
    /* The progress call scans the request in order as well as testing this
     * partition's messages and a window of the messages past the scan, which
     * moves on at each call (transport/mpi/recv.c): no message is left
     * untested however the calls are ordered. */
    if (!miss_should_test(r, partition)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    pt_enter("MPI_Parrived");
    pt_background_progress_beside(req);
    int rc = MPI_SUCCESS, past = 0;
    /* Another thread progressing this request does our work too. */
    if (pt_progress_trylock(req) == 0) {
        if (r->split) /* only the progress thread's schedule of split receives reads it */
            pt_recv_app_polled(req);
        pt_recv_focus focus;
        rc = pt_recv_progress(req, pt_recv_focus_of(req, partition, &focus) ? &focus : NULL);
        /* under the lock: the set-up (ready, the error) may be another thread's */
        past = rc == MPI_SUCCESS && r->ready && pt_recv_past_data(req, partition);
        pt_progress_unlock(req);
    } else {
        pt_recv_app_polled(req);
    }
    *flag = atomic_load_explicit(&r->arrived[partition], memory_order_acquire);
    if (*flag && r->adapt_measure)
        count_true(req);
    if (past && !*flag)
        return pt_recv_report_error(req, "MPI_Parrived"); /* it would never be true */
    return rc;
}

int pt_recv_report_error(pt_request *req, const char *call)
{
    pt_recv_side *r = &req->u.r;
    size_t holds = req->part_bytes * (size_t)req->partitions;
    size_t sent_part = r->sent_bytes / (size_t)(r->sparts ? r->sparts : 1);
    switch (r->error) {
    case PT_E_TRUNCATE:
        return pt_fail(req->comm, PT_E_TRUNCATE, call,
                       "the sender sends %zu bytes per round (%d partitions of %zu bytes), the partitioned receive "
                       "holds %zu (%d partitions of %zu bytes), round %d; the first %zu bytes were delivered",
                       r->sent_bytes, r->sparts, sent_part, holds, req->partitions, req->part_bytes,
                       pt_request_round(req), holds);
    case PT_E_SHORT:
        return pt_fail(req->comm, PT_E_SHORT, call,
                       "the sender sends %zu bytes per round (%d partitions of %zu bytes), the partitioned receive "
                       "holds %zu (%d partitions of %zu bytes), round %d: sizes must match; the %zu bytes were "
                       "delivered, receive partitions from %zu on never arrive",
                       r->sent_bytes, r->sparts, sent_part, holds, req->partitions, req->part_bytes,
                       pt_request_round(req), r->sent_bytes,
                       req->part_bytes ? (r->sent_bytes + req->part_bytes - 1) / req->part_bytes : 0);
    case PT_E_INTERNAL:
        return pt_fail_mpi(req->comm, r->error_code, call, r->error_call);
    case PT_E_TRANSPORT:
        return pt_fail(req->comm, PT_E_TRANSPORT, call, "%s (peer rank %d)",
                       r->error_call ? r->error_call : "the transport failed", req->peer);
    case PT_E_TOO_BIG:
        return pt_fail(req->comm, PT_E_TOO_BIG, call, "the sender's transport messages are over INT_MAX bytes");
    case PT_E_NO_MEM:
        return pt_fail(req->comm, PT_E_NO_MEM, call, "out of memory building the receive plan (%d messages)",
                       r->ntrans);
    default:
        return pt_fail(req->comm, (pt_err)r->error, call, "malformed set-up message from rank %d", req->peer);
    }
}

void pt_recv_app_polled(pt_request *req)
{
    atomic_uint *n = &req->u.r.app_polls;
    atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1, memory_order_relaxed);
}

int pt_recv_app_polling(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    unsigned n = atomic_load_explicit(&r->app_polls, memory_order_relaxed);
    if (n != r->app_polls_seen) {
        r->app_polls_seen = n;
        r->app_quiet_ns = 0;
        return 1;
    }
    int64_t now = pt_now_ns();
    if (!r->app_quiet_ns)
        r->app_quiet_ns = now;
    return now - r->app_quiet_ns < PT_APP_POLLING_NS;
}

void pt_recv_destroy(pt_request *req)
{
    pt_waiters_remove(req);
    if (req->u.r.adapt)
        pt_adapt_recv_destroy(req); /* every candidate's transport state and plan */
    else if (req->tp_ops)
        req->tp_ops->recv_destroy(req);
    pt_recv_plan_free(req);
    free((void *)req->u.r.arrived);
}
