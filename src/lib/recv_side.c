/* Receive side: the set-up message, the pre-posted persistent receives of the
 * transport messages, MPI_Parrived and completion. A receiver partition is
 * reported arrived once every transport message overlapping its bytes is in
 * (and, for a non-contiguous datatype, unpacked from staging). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "planner.h"
#include "request.h"
#include "runtime.h"
#include "setup_waiters.h"
#include "partita/partita.h"

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

/* Receiver partitions overlapping transport message j: [*lo, *hi], empty when *lo > *hi. */
static void overlap(const pt_request *req, int j, int *lo, int *hi)
{
    const pt_recv_side *r = &req->u.r;
    size_t a = r->tstart[j], b = r->tstart[j + 1];
    if (r->sent_bytes == 0 || req->part_bytes == 0) {
        /* Nothing to measure in bytes: map by partition index instead. */
        long long first = ptm_group_first(r->sparts, r->ntrans, j);
        long long end = ptm_group_first(r->sparts, r->ntrans, j + 1);
        *lo = (int)(first * req->partitions / r->sparts);
        *hi = (int)((end * req->partitions + r->sparts - 1) / r->sparts) - 1;
    } else if (a == b) {
        *lo = 1, *hi = 0;
    } else {
        *lo = (int)(a / req->part_bytes);
        *hi = (int)((b - 1) / req->part_bytes);
    }
    if (*hi >= req->partitions)
        *hi = req->partitions - 1;
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

/* The set-up message has arrived: build the receive plan. */
static int setup(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    memcpy(r->hs, req->hs_buf, sizeof r->hs);
    const int64_t *hs = r->hs;
    if (hs[PT_HS_MAGIC] != PT_HS_MAGIC_VALUE || hs[PT_HS_PARTS] < 1 || hs[PT_HS_NTRANS] < 1 ||
        !layout_ok(hs) || hs[PT_HS_PART_BYTES] < 0 || hs[PT_HS_TAG_BASE] < 0 ||
        hs[PT_HS_POLICY] < 0 || hs[PT_HS_POLICY] >= PT_POLICY_COUNT) {
        r->ready = 1;
        r->error = PT_E_SETUP; /* reported when the round completes */
        return MPI_SUCCESS;
    }
    r->sparts = (int)hs[PT_HS_PARTS];
    r->ntrans = (int)hs[PT_HS_NTRANS];
    r->tag_base = (int)hs[PT_HS_TAG_BASE];
    r->sent_bytes = (size_t)hs[PT_HS_PARTS] * (size_t)hs[PT_HS_PART_BYTES];
    r->ready = 1;
    /* Too much data: still receive it (into scratch space) so that the sender
     * completes, and report the truncation when the round completes. */
    int truncated = r->sent_bytes > req->part_bytes * (size_t)req->partitions;
    if (truncated)
        r->error = PT_E_TRUNCATE;
    int N = r->ntrans, P = req->partitions;
    r->tstart = malloc(((size_t)N + 1) * sizeof *r->tstart);
    r->plo = malloc((size_t)N * sizeof *r->plo);
    r->phi = malloc((size_t)N * sizeof *r->phi);
    r->need = calloc((size_t)P, sizeof *r->need);
    r->missing = calloc((size_t)P, sizeof *r->missing);
    r->treq = malloc((size_t)N * sizeof *r->treq);
    r->tdone = calloc((size_t)N, 1);
    int staged = (!req->contiguous || truncated) && r->sent_bytes > 0;
    if (staged)
        r->staging = malloc(r->sent_bytes);
    if (!r->tstart || !r->plo || !r->phi || !r->need || !r->missing || !r->treq || !r->tdone ||
        (staged && !r->staging)) {
        r->ntrans = 0;
        r->error = PT_E_NO_MEM;
        return MPI_SUCCESS;
    }
    r->dest = staged ? r->staging : req->buf + req->true_lb;
    for (int j = 0; j <= N; j++)
        r->tstart[j] = pt_plan_message_offset((size_t)hs[PT_HS_PART_BYTES], r->sparts, N,
                                              (hs[PT_HS_FLAGS] & PT_HS_FLAG_CUT) != 0, j);
    for (int j = 0; j < N; j++) {
        if (r->tstart[j + 1] - r->tstart[j] > INT_MAX) { /* the sender refuses this at init */
            r->ntrans = j;
            r->error = PT_E_TOO_BIG;
            return MPI_SUCCESS;
        }
        overlap(req, j, &r->plo[j], &r->phi[j]);
        for (int p = r->plo[j]; p <= r->phi[j]; p++)
            r->need[p]++;
        int rc = PMPI_Recv_init(r->dest + r->tstart[j], (int)(r->tstart[j + 1] - r->tstart[j]), MPI_BYTE,
                                req->peer_world, r->tag_base + j, pt_data_comm(), &r->treq[j]);
        if (rc != MPI_SUCCESS) {
            r->ntrans = j;
            r->error = PT_E_INTERNAL;
            r->error_code = rc;
            r->error_call = "MPI_Recv_init";
            return MPI_SUCCESS; /* reported when the round completes */
        }
    }
    if ((hs[PT_HS_FLAGS] & PT_HS_FLAG_SPLIT) && pt_runs_setup(req) != MPI_SUCCESS) {
        r->error = PT_E_NO_MEM;
        return MPI_SUCCESS;
    }
    return MPI_SUCCESS;
}

/* Reset the per-round state and post this round's receives. */
static int begin_round(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    if (r->error && r->error != PT_E_TRUNCATE)
        return MPI_SUCCESS;
    memcpy(r->missing, r->need, (size_t)req->partitions * sizeof *r->missing);
    memset(r->tdone, 0, (size_t)r->ntrans);
    r->ndone = 0;
    r->scan_from = 0;
    r->narrived = 0;
    for (int p = 0; p < req->partitions; p++)
        if (r->need[p] == 0)
            pt_recv_partition_in(req, p); /* no data comes for it */
    int rc = PMPI_Startall(r->ntrans, r->treq);
    if (rc == MPI_SUCCESS && r->split)
        rc = pt_runs_round_start(req);
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Startall of the transport receives");
}

int pt_recv_start(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    r->round++;
    memset((void *)r->arrived, 0, (size_t)req->partitions * sizeof *r->arrived);
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
    if (r->split)
        pt_waiters_add(req); /* its runs need receiving even while the process is elsewhere */
    return begin_round(req);
}

/* Unpack receiver partition p from staging into the user's buffer. The last
 * partition may end inside an element when the sender sends less than the
 * receive describes: that element is packed from the buffer first, so the
 * bytes that did not come keep their old contents. A truncated receive
 * (the sender sends more) is staged whole; its partitions are copied out of
 * staging as they complete, so what MPI_Parrived reports is in the buffer. */
static void unpack(pt_request *req, int p)
{
    pt_recv_side *r = &req->u.r;
    size_t first = (size_t)p * req->part_bytes;
    if (!r->staging || (r->error && r->error != PT_E_TRUNCATE) || first >= r->sent_bytes || req->type_size == 0)
        return;
    size_t len = r->sent_bytes - first < req->part_bytes ? r->sent_bytes - first : req->part_bytes;
    if (req->contiguous) {
        memcpy(req->buf + req->true_lb + first, r->staging + first, len);
        return;
    }
    size_t whole = len / req->type_size, rest = len % req->type_size;
    char *out = req->buf + (MPI_Aint)p * req->count * req->extent;
    /* MPI_Unpack takes int sizes: elements in batches of at most INT_MAX bytes */
    size_t batch = (size_t)INT_MAX / req->type_size;
    for (size_t done = 0; done < whole;) {
        size_t n = whole - done < batch ? whole - done : batch;
        int position = 0;
        PMPI_Unpack(r->staging + first + done * req->type_size, (int)(n * req->type_size), &position,
                    out + (MPI_Aint)done * req->extent, (int)n, req->type, req->comm);
        done += n;
    }
    if (rest) {
        char *elem = out + (MPI_Aint)whole * req->extent;
        char *tmp = malloc(req->type_size);
        if (!tmp)
            return;
        int position = 0;
        PMPI_Pack(elem, 1, req->type, tmp, (int)req->type_size, &position, req->comm);
        memcpy(tmp, r->staging + first + whole * req->type_size, rest);
        position = 0;
        PMPI_Unpack(tmp, (int)req->type_size, &position, elem, 1, req->type, req->comm);
        free(tmp);
    }
}

/* Every byte of receive partition p is in: unpack it (staging) and report it. */
void pt_recv_partition_in(pt_request *req, int p)
{
    pt_recv_side *r = &req->u.r;
    if (atomic_load_explicit(&r->arrived[p], memory_order_relaxed))
        return; /* already reported, by runs of a split group */
    unpack(req, p);
    r->narrived++;
    atomic_store_explicit(&r->arrived[p], 1, memory_order_release);
}

/* Transport message j is complete in this round. */
void pt_recv_message_done(pt_request *req, int j)
{
    pt_recv_side *r = &req->u.r;
    if (r->tdone[j])
        return;
    r->tdone[j] = 1;
    r->ndone++;
    for (int p = r->plo[j]; p <= r->phi[j]; p++)
        if (--r->missing[p] == 0)
            pt_recv_partition_in(req, p);
}

/* Receive of transport message j completed with `bytes` bytes. */
static void received(pt_request *req, int j, int bytes)
{
    pt_recv_side *r = &req->u.r;
    if (r->split && bytes == 0 && r->tstart[j + 1] > r->tstart[j])
        pt_runs_terminator(req, j); /* the group came in runs */
    else
        pt_recv_message_done(req, j);
}

/* Test the messages in order from scan_from and stop at the first one still
 * missing. One progress poll moves only a few messages, so testing all n at
 * every poll made a round O(n^2); messages further on still move, and are
 * found complete at once when the scan reaches them (MPI_Parrived also tests
 * its own partition's messages, test_range). */
static int scan_in_order(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    int rc;
    while (r->scan_from < r->ntrans) {
        int j = r->scan_from;
        if (!r->tdone[j]) {
            int flag = 0;
            MPI_Status st;
            if ((rc = PMPI_Test(&r->treq[j], &flag, &st)) != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of a transport receive");
            if (!flag)
                break;
            int bytes = 0;
            PMPI_Get_count(&st, MPI_BYTE, &bytes);
            received(req, j, bytes);
        }
        r->scan_from++;
    }
    return MPI_SUCCESS;
}

/* Test messages lo..hi (those overlapping one partition). */
static int test_range(pt_request *req, int lo, int hi)
{
    pt_recv_side *r = &req->u.r;
    int rc;
    if (hi - lo < 8) {
        for (int j = lo; j <= hi; j++) {
            if (r->tdone[j])
                continue;
            int flag = 0;
            MPI_Status st;
            if ((rc = PMPI_Test(&r->treq[j], &flag, &st)) != MPI_SUCCESS)
                return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Test of a transport receive");
            if (flag) {
                int bytes = 0;
                PMPI_Get_count(&st, MPI_BYTE, &bytes);
                received(req, j, bytes);
            }
        }
    } else {
        int n = hi - lo + 1, out = 0;
        int *idx = malloc((size_t)n * sizeof *idx);
        MPI_Status *st = malloc((size_t)n * sizeof *st);
        if (!idx || !st) {
            free(idx);
            free(st);
            return pt_fail(req->comm, PT_E_NO_MEM, pt_call_name(), "out of memory testing %d transport receives", n);
        }
        rc = PMPI_Testsome(n, &r->treq[lo], &out, idx, st);
        for (int k = 0; rc == MPI_SUCCESS && out != MPI_UNDEFINED && k < out; k++) {
            int bytes = 0;
            PMPI_Get_count(&st[k], MPI_BYTE, &bytes);
            received(req, lo + idx[k], bytes);
        }
        free(idx);
        free(st);
        if (rc != MPI_SUCCESS)
            return pt_fail_mpi(req->comm, rc, pt_call_name(), "MPI_Testsome of transport receives");
    }
    return MPI_SUCCESS;
}

int pt_recv_progress(pt_request *req, int lo, int hi)
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
    }
    if ((r->error && r->error != PT_E_TRUNCATE) || r->ndone == r->ntrans)
        return r->split ? pt_runs_progress(req) : MPI_SUCCESS;
    rc = scan_in_order(req);
    /* The scan has just tested every message up to and including scan_from:
     * testing them again would only double the cost of a poll. */
    if (lo <= r->scan_from)
        lo = r->scan_from + 1;
    if (rc == MPI_SUCCESS && hi >= 0 && lo <= hi)
        rc = test_range(req, lo, hi);
    if (rc != MPI_SUCCESS)
        return rc;
    return r->split ? pt_runs_progress(req) : MPI_SUCCESS;
}

int pt_recv_all_arrived(const pt_request *req)
{
    return req->u.r.ready && req->u.r.narrived == req->partitions;
}

int pt_recv_round_done(const pt_request *req)
{
    const pt_recv_side *r = &req->u.r;
    return req->proc_null || (r->ready && ((r->error && r->error != PT_E_TRUNCATE) || r->ndone == r->ntrans));
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
                               : r->error               ? 0
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

int Partita_Parrived(MPI_Request request, int partition, int *flag)
{
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
    if (!atomic_load_explicit(&req->active, memory_order_acquire) || req->proc_null ||
        atomic_load_explicit(&r->arrived[partition], memory_order_acquire)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    /* The progress call scans the request in order as well as testing this
     * partition's messages: no message is left untested however the calls
     * are ordered. */
    if (!miss_should_test(r, partition)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    pt_enter("MPI_Parrived");
    pt_background_progress();
    int rc = MPI_SUCCESS;
    /* Another thread progressing this request does our work too. */
    if (pt_progress_trylock(req) == 0) {
        if (r->split) /* only the progress thread's schedule of split receives reads it */
            pt_recv_app_polled(req);
        int lo = -1, hi = -1;
        if (r->ready && !r->error && r->ntrans > 0) {
            /* The messages overlapping this partition: a binary search on their
             * receiver-partition ranges, which are sorted. */
            int a = 0, b = r->ntrans - 1;
            while (a < b) {
                int m = (a + b) / 2;
                if (r->phi[m] < partition)
                    a = m + 1;
                else
                    b = m;
            }
            lo = hi = a;
            while (hi + 1 < r->ntrans && r->plo[hi + 1] <= partition)
                hi++;
        }
        rc = pt_recv_progress(req, lo, hi);
        pt_progress_unlock(req);
    } else {
        pt_recv_app_polled(req);
    }
    *flag = atomic_load_explicit(&r->arrived[partition], memory_order_acquire);
    return rc;
}

int pt_recv_report_error(pt_request *req, const char *call)
{
    pt_recv_side *r = &req->u.r;
    size_t holds = req->part_bytes * (size_t)req->partitions;
    switch (r->error) {
    case PT_E_TRUNCATE:
        return pt_fail(req->comm, PT_E_TRUNCATE, call,
                       "the sender sends %zu bytes per round (%d partitions of %zu bytes), the partitioned receive "
                       "holds %zu (%d partitions of %zu bytes), round %d; the first %zu bytes were delivered",
                       r->sent_bytes, r->sparts, r->sent_bytes / (size_t)(r->sparts ? r->sparts : 1), holds,
                       req->partitions, req->part_bytes, pt_request_round(req), holds);
    case PT_E_INTERNAL:
        return pt_fail_mpi(req->comm, r->error_code, call, r->error_call);
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
    atomic_store_explicit(&req->u.r.app_polled_ns, pt_now_ns(), memory_order_relaxed);
}

int pt_recv_app_polling(const pt_request *req)
{
    int64_t last = atomic_load_explicit(&req->u.r.app_polled_ns, memory_order_relaxed);
    return pt_now_ns() - last < PT_APP_POLLING_NS;
}

void pt_recv_destroy(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    pt_waiters_remove(req);
    if (r->split)
        pt_runs_destroy(req);
    for (int j = 0; r->treq && j < r->ntrans; j++)
        PMPI_Request_free(&r->treq[j]);
    free(r->tstart);
    free(r->plo);
    free(r->phi);
    free(r->need);
    free(r->missing);
    free(r->treq);
    free(r->tdone);
    free(r->staging);
    free((void *)r->arrived);
}
