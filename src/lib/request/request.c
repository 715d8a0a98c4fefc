/* Partitioned request lifecycle: init (argument checks, datatype facts, the
 * handle), Start, completion, free, cancel. */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "request/adaptive.h"
#include "request/comm_shadow.h"
#include "request/errors.h"
#include "request/handle_table.h"
#include "request/orphans.h"
#include "request/request.h"
#include "request/runtime.h"
#include "request/setup_waiters.h"
#include "planner/type_layout.h"
#include "partita/partita.h"

int Partita_Is_partitioned(MPI_Request request) { return pt_lookup(request) != NULL; }

void pt_fill_empty_status(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

int pt_complete_or_cancel_recv(MPI_Request *r)
{
    int flag = 0, cancelled = 1;
    MPI_Status st;
    PMPI_Test(r, &flag, &st);
    if (!flag) {
        PMPI_Cancel(r);
        PMPI_Wait(r, &st);
    }
    PMPI_Test_cancelled(&st, &cancelled);
    return !cancelled;
}

/* Arguments every partitioned init checks; reports the first bad one
 * through comm's handler and returns its code, or MPI_SUCCESS. */
static int check_args(const char *call, int partitions, MPI_Count count, MPI_Datatype type, int peer, int tag,
                      MPI_Comm comm)
{
    if (partitions < 1)
        return pt_fail(comm, PT_E_PARTITIONS, call, "partitions = %d, must be at least 1", partitions);
    if (count < 0)
        return pt_fail(comm, PT_E_COUNT, call, "count = %lld per partition, must be >= 0", (long long)count);
    if (type == MPI_DATATYPE_NULL)
        return pt_fail(comm, PT_E_DATATYPE, call, "the datatype is MPI_DATATYPE_NULL");
    if (peer == MPI_ANY_SOURCE)
        return pt_fail(comm, PT_E_ANY_SOURCE, call, "MPI_ANY_SOURCE is not allowed in partitioned communication");
    if (tag == MPI_ANY_TAG)
        return pt_fail(comm, PT_E_ANY_TAG, call, "MPI_ANY_TAG is not allowed in partitioned communication");
    if (tag < 0 || tag > pt_tag_ub())
        return pt_fail(comm, PT_E_TAG, call, "tag %d is outside [0, %d] (MPI_TAG_UB)", tag, pt_tag_ub());
    int inter = 0, size = 0;
    PMPI_Comm_test_inter(comm, &inter);
    (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &size);
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= size))
        return pt_fail(comm, PT_E_RANK, call, "rank %d is outside [0, %d) of the %scommunicator", peer, size,
                       inter ? "remote group of the inter" : "");
    return MPI_SUCCESS;
}

/* The request's bytes, and the span of memory its buffer covers, must each
 * fit in the address space: partitions x count x type size wrapping past
 * SIZE_MAX made a request of no bytes, whose planning divided by zero. */
static int check_total(const char *call, MPI_Comm comm, int partitions, MPI_Count count, MPI_Count type_size,
                       MPI_Aint true_extent)
{
    unsigned long long elements, bytes, span;
    unsigned long long extent = true_extent < 0 ? 0 - (unsigned long long)true_extent : (unsigned long long)true_extent;
    if (__builtin_mul_overflow((unsigned long long)partitions, (unsigned long long)count, &elements) ||
        __builtin_mul_overflow(elements, (unsigned long long)type_size, &bytes) ||
        __builtin_mul_overflow(elements, extent, &span) || bytes > PTRDIFF_MAX || span > PTRDIFF_MAX)
        return pt_fail(comm, PT_E_COUNT, call,
                       "partitions x count = %d x %lld elements of %lld bytes (extent %lld) is more than a buffer "
                       "can hold (%lld bytes at most)",
                       partitions, (long long)count, (long long)type_size, (long long)true_extent,
                       (long long)PTRDIFF_MAX);
    return MPI_SUCCESS;
}

/* MPI has no query for "committed". A send init of one element to
 * MPI_PROC_NULL, never started, makes the MPI library check the type (MPICH
 * and Open MPI answer MPI_ERR_TYPE for an uncommitted one), on the private
 * twin, whose errors return. A predefined type is always committed. */
static int type_committed(MPI_Datatype type, MPI_Comm shadow)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS && combiner == MPI_COMBINER_NAMED)
        return 1;
    static const char byte;
    MPI_Request probe;
    int rc = PMPI_Send_init(&byte, 1, type, MPI_PROC_NULL, 0, shadow, &probe), cls = MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        PMPI_Request_free(&probe);
    else
        PMPI_Error_class(rc, &cls);
    return cls != MPI_ERR_TYPE;
}

/* Facts about the datatype the data path needs. */
static void describe_type(pt_request *req)
{
    MPI_Count size = 0;
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_size_x(req->type, &size);
    PMPI_Type_get_extent(req->type, &lb, &extent);
    PMPI_Type_get_true_extent(req->type, &true_lb, &true_extent);
    req->type_size = (size_t)size;
    req->extent = extent;
    req->true_lb = true_lb;
    req->part_bytes = (size_t)size * (size_t)req->count;
    req->contiguous = size == 0 || pt_type_contiguous(req->type);
}

static void destroy(pt_request *req)
{
    if (req->is_send)
        pt_send_destroy(req);
    else
        pt_recv_destroy(req);
    if (req->hs_buf) {
        int done = 1;
        if (req->hs_req != MPI_REQUEST_NULL)
            PMPI_Test(&req->hs_req, &done, MPI_STATUS_IGNORE);
        if (done)
            free(req->hs_buf);
        else
            pt_orphan_add(req->hs_req, req->hs_buf); /* the pair is matched already: finish it */
    }
    if (req->type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&req->type);
    pthread_mutex_destroy(&req->progress_lock);
    if (req->handle != MPI_REQUEST_NULL)
        PMPI_Request_free(&req->handle);
    free(req);
}

static int init_request(int is_send, const void *buf, int partitions, MPI_Count count, MPI_Datatype type,
                        int peer, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *call = is_send ? "MPI_Psend_init" : "MPI_Precv_init";
    pt_enter(call);
    if (!pt_initialised())
        return pt_fail(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, PT_E_NOT_INITIALISED, call,
                       "partita is not initialised (call Partita_Init_hook after MPI_Init)");
    if (comm == MPI_COMM_NULL)
        return pt_fail(MPI_COMM_SELF, PT_E_COMM, call, "the communicator is MPI_COMM_NULL");
    if (!request)
        return pt_fail(comm, PT_E_NULL_ARG, call, "request is NULL: there is nowhere to put the new request");
    int rc = check_args(call, partitions, count, type, peer, tag, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm shadow;
    if (pt_shadow_lookup(comm, &shadow) != 0)
        return pt_fail(comm, PT_E_COMM_UNKNOWN, call,
                       "communicator unknown to partita (made by a constructor it does not intercept, "
                       "such as MPI_Comm_idup, or Partita_Comm_attach was not called)");
    pt_settings settings;
    char why[256];
    int bad_info = pt_settings_from_info(info, &settings, why, sizeof why);
    if (bad_info)
        return pt_fail(comm, bad_info == -2 ? PT_E_INFO_HANDLE : PT_E_INFO, call, "%s", why);
    if (!type_committed(type, shadow))
        return pt_fail(comm, PT_E_DATATYPE, call, "the datatype is not committed (call MPI_Type_commit first)");
    int peer_world = MPI_PROC_NULL;
    if (peer != MPI_PROC_NULL && (peer_world = pt_world_rank(comm, peer)) == MPI_UNDEFINED)
        return pt_fail(comm, PT_E_COMM_UNKNOWN, call, "rank %d of the communicator is outside MPI_COMM_WORLD", peer);
    /* The buffer's first byte at address 0 (MPI_BOTTOM with a type that does
     * not hold absolute addresses): MPICH says MPI_ERR_BUFFER here too. */
    MPI_Aint true_lb = 0, true_extent = 0;
    MPI_Count type_size = 0;
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    PMPI_Type_size_x(type, &type_size);
    if (buf == NULL && true_lb == 0 && count > 0 && type_size > 0)
        return pt_fail(comm, PT_E_BUFFER, call, "the buffer is NULL with count = %lld per partition",
                       (long long)count);
    if ((rc = check_total(call, comm, partitions, count, type_size, true_extent)) != MPI_SUCCESS)
        return rc;

    pt_request *req = calloc(1, sizeof *req);
    if (!req)
        return pt_fail(comm, PT_E_NO_MEM, call, "out of memory for the request");
    req->handle = MPI_REQUEST_NULL;
    req->hs_req = MPI_REQUEST_NULL;
    req->type = MPI_DATATYPE_NULL;
    pthread_mutex_init(&req->progress_lock, NULL);
    req->is_send = is_send;
    /* Below MPI_THREAD_MULTIPLE the application serialises its MPI calls, so
     * MPI_Pready needs no atomic read-modify-write. */
    req->serial = pt_serial_process();
    req->buf = (char *)buf;
    req->partitions = partitions;
    req->count = count;
    req->peer = peer;
    req->tag = tag;
    req->comm = comm;
    req->shadow = shadow;
    req->peer_world = peer_world;
    req->proc_null = peer == MPI_PROC_NULL;
    req->settings = settings;
    rc = PMPI_Type_dup(type, &req->type);
    if (rc != MPI_SUCCESS) {
        req->type = MPI_DATATYPE_NULL;
        destroy(req);
        return pt_fail_mpi(comm, rc, call, "MPI_Type_dup");
    }
    describe_type(req);
    /* The user's handle: a real request that is never started, so it is valid
     * in every MPI ABI and harmless if it reaches a call partita does not wrap. */
    rc = PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &req->handle);
    if (rc != MPI_SUCCESS) {
        req->handle = MPI_REQUEST_NULL;
        destroy(req);
        return pt_fail_mpi(comm, rc, call, "MPI_Send_init");
    }
    rc = is_send ? pt_send_init(req) : pt_recv_init(req);
    if (rc == MPI_SUCCESS && pt_table_insert(req->handle, req) != 0)
        rc = pt_fail(comm, PT_E_NO_MEM, call, "out of memory for the handle table");
    if (rc != MPI_SUCCESS) {
        destroy(req);
        return rc;
    }
    *request = req->handle;
    return MPI_SUCCESS;
}

int Partita_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest,
                       int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_request(1, buf, partitions, count, datatype, dest, tag, comm, info, request);
}

int Partita_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_request(0, buf, partitions, count, datatype, source, tag, comm, info, request);
}

int pt_request_start(pt_request *req)
{
    if (atomic_load_explicit(&req->active, memory_order_acquire))
        return pt_fail(req->comm, PT_E_START_ACTIVE, pt_call_name(),
                       "the partitioned %s request is still active (round %d has not completed)",
                       req->is_send ? "send" : "receive", pt_request_round(req));
    int rc = MPI_SUCCESS;
    pt_progress_lock(req);
    req->complete_pending = 0;
    if (req->is_send)
        pt_send_start(req);
    else
        rc = pt_recv_start(req);
    atomic_store_explicit(&req->active, 1, memory_order_release);
    pt_progress_unlock(req);
    return rc;
}

/* Progress once; *done when the round is complete. Caller holds the progress
 * lock (pt_progress_lock: not taken for a serial request). */
static int progress_locked(pt_request *req, int *done)
{
    int rc = MPI_SUCCESS;
    if (req->complete_pending) {
        *done = 1;
    } else if (req->is_send) {
        rc = pt_send_progress(req, done);
    } else {
        rc = pt_recv_progress(req, NULL);
        /* Every partition has arrived: then only empty terminators of groups
         * that came in runs (timer policy) can be missing, and their senders
         * are sending them right now; the round must complete here, because
         * a program may test just once after the last MPI_Parrived. */
        while (rc == MPI_SUCCESS && !pt_recv_round_done(req) && pt_recv_all_arrived(req))
            rc = pt_recv_progress(req, NULL);
        *done = pt_recv_round_done(req);
    }
    return rc;
}

static int report(pt_request *req, MPI_Status *status)
{
    if (req->is_send) {
        pt_fill_empty_status(status);
        return MPI_SUCCESS;
    }
    pt_recv_fill_status(req, status);
    return req->u.r.error ? pt_recv_report_error(req, pt_call_name()) : MPI_SUCCESS;
}

/* One progress step of an active request. finish: a completed round makes
 * the request inactive (Test/Wait); otherwise it stays active and the
 * completion is kept for the next Test/Wait (Request_get_status). */
static int progress_step(pt_request *req, int *done, int finish)
{
    *done = 0;
    pt_background_progress_beside(req);
    pt_progress_lock(req);
    if (!req->is_send && req->u.r.split)
        pt_recv_app_polled(req);
    int rc = progress_locked(req, done);
    if (*done && finish) {
        if (!req->is_send && req->u.r.adapt)
            pt_adapt_recv_done(req); /* the round's measurement goes back to the sender */
        req->complete_pending = 0;
        atomic_store_explicit(&req->active, 0, memory_order_release);
    } else if (*done) {
        req->complete_pending = 1;
    }
    pt_progress_unlock(req);
    /* A receive listed for its set-up or its runs (pt_recv_start) leaves the
     * list with its round: its own polls leave it out of the list's pass. */
    if (*done && finish && !req->is_send && pt_waiters_pending())
        pt_waiters_remove(req);
    return rc;
}

/* An inactive request is complete at once, with an empty status (true then). */
static int inactive_done(pt_request *req, int *done, MPI_Status *status)
{
    if (atomic_load_explicit(&req->active, memory_order_acquire))
        return 0;
    *done = 1;
    pt_fill_empty_status(status);
    return 1;
}

int pt_request_peek(pt_request *req, int *done, MPI_Status *status)
{
    if (inactive_done(req, done, status))
        return MPI_SUCCESS;
    int rc = progress_step(req, done, 0);
    if (rc == MPI_SUCCESS && *done) {
        if (req->is_send)
            pt_fill_empty_status(status);
        else
            pt_recv_fill_status(req, status);
    }
    return rc;
}

int pt_request_test(pt_request *req, int *done, MPI_Status *status)
{
    if (inactive_done(req, done, status))
        return MPI_SUCCESS;
    int rc = progress_step(req, done, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    return *done ? report(req, status) : MPI_SUCCESS;
}

int pt_request_wait(pt_request *req, MPI_Status *status)
{
    for (unsigned spins = 0;; spins++) {
        int done = 0;
        int rc = pt_request_test(req, &done, status);
        if (rc != MPI_SUCCESS || done)
            return rc;
        if (spins > 64)
            sched_yield(); /* be fair to the peer when ranks outnumber cores */
    }
}

int Partita_Start(MPI_Request *request)
{
    pt_enter("MPI_Start");
    if (!request)
        return pt_fail_null("MPI_Start", "request");
    pt_request *req = pt_lookup(*request);
    return req ? pt_request_start(req) : PMPI_Start(request);
}

int Partita_Startall(int count, MPI_Request array_of_requests[])
{
    pt_enter("MPI_Startall");
    int bad = pt_check_array("MPI_Startall", count, array_of_requests);
    if (bad != MPI_SUCCESS)
        return bad;
    for (int i = 0; i < count; i++) {
        pt_request *req = pt_lookup(array_of_requests[i]);
        int rc = req ? pt_request_start(req) : PMPI_Start(&array_of_requests[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int pt_request_free(MPI_Request *handle)
{
    if (!handle)
        return pt_fail_null("MPI_Request_free", "request");
    pt_request *req = pt_lookup(*handle);
    if (!req)
        return PMPI_Request_free(handle);
    if (atomic_load_explicit(&req->active, memory_order_acquire))
        return pt_fail(req->comm, PT_E_FREE_ACTIVE, "MPI_Request_free",
                       "the partitioned %s request is active (round %d): complete it first",
                       req->is_send ? "send" : "receive", pt_request_round(req));
    pt_table_remove(req->handle);
    destroy(req);
    *handle = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int Partita_Request_free(MPI_Request *request) { return pt_request_free(request); }

int Partita_Cancel(MPI_Request *request)
{
    if (!request)
        return pt_fail_null("MPI_Cancel", "request");
    pt_request *req = pt_lookup(*request);
    if (!req)
        return PMPI_Cancel(request);
    if (atomic_load_explicit(&req->active, memory_order_acquire))
        return pt_fail(req->comm, PT_E_CANCEL_ACTIVE, "MPI_Cancel",
                       "the partitioned %s request is active (round %d); partita cannot cancel a round",
                       req->is_send ? "send" : "receive", pt_request_round(req));
    return MPI_SUCCESS; /* nothing to cancel on an inactive request */
}
