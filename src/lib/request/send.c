/* Sender lifecycle: plan the round's messages (planner/), build the marking
 * state (flush/), create the transport's resources (transport/), send the
 * set-up message; progress and completion; the Partita_Request_* queries. */
#include <stdlib.h>
#include <string.h>

#include "flush/flush.h"
#include "partita/partita.h"
#include "planner/planner.h"
#include "request/errors.h"
#include "request/adaptive.h"
#include "request/request.h"
#include "transport/transport.h"

int pt_send_init(pt_request *req)
{
    pt_send_side *s = &req->u.s;
    int P = req->partitions;
    s->round = -1;
    if (req->proc_null) {
        s->part = calloc((size_t)P, sizeof *s->part); /* only to catch a partition marked twice */
        s->marks = s->part;
        return s->part ? MPI_SUCCESS
                       : pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for %d partitions' states",
                                 req->partitions);
    }
    req->hs_buf = calloc(PT_HS_LEN, sizeof *req->hs_buf);
    if (!req->hs_buf)
        return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory");
    /* The transport first: the planner uses its costs (auto resolves here). */
    char why[256] = "";
    /* the timer too: a cut it plans is measured online against a message per partition */
    int adaptive = req->settings.policy == PT_POLICY_ADAPTIVE || req->settings.policy == PT_POLICY_TIMER;
    if (!(req->tp_ops = pt_transport_choose(&req->settings, req->peer_world, why, sizeof why)))
        return pt_fail(req->comm, PT_E_TRANSPORT, "MPI_Psend_init", "%s", why);
    req->settings.transport = strcmp(req->tp_ops->name, "fabric") ? PT_TRANSPORT_MPI : PT_TRANSPORT_FABRIC;
    int rc;
    if (adaptive && (rc = pt_adapt_send_init(req)) != PT_ADAPT_STATIC) {
        if (rc != MPI_SUCCESS)
            return rc; /* every candidate's messages, the first one's live */
    } else {
        int cut;
        int N = pt_plan_transport(&req->settings, req->part_bytes, P, req->contiguous, &cut);
        s->ntrans = N;
        s->cut = cut;
        s->bound = malloc(((size_t)N + 1) * sizeof *s->bound);
        if (!s->bound)
            return pt_fail(req->comm, PT_E_NO_MEM, "MPI_Psend_init", "out of memory for %d transport messages", N);
        for (int j = 0; !cut && j <= N; j++)
            s->bound[j] = ptm_group_first(P, N, j);
        if ((rc = pt_flush_init(req, req->settings.policy == PT_POLICY_TIMER)) != MPI_SUCCESS)
            return rc;
        if ((rc = req->tp_ops->send_init(req)) != MPI_SUCCESS)
            return rc;
        req->hs_buf[PT_HS_NCAND] = 1;
    }
    int64_t *hs = req->hs_buf;
    hs[PT_HS_MAGIC] = PT_HS_MAGIC_VALUE;
    hs[PT_HS_PARTS] = P;
    hs[PT_HS_NTRANS] = s->ntrans;
    hs[PT_HS_PART_BYTES] = (int64_t)req->part_bytes;
    hs[PT_HS_FLAGS] = (s->split ? PT_HS_FLAG_SPLIT : 0) | (s->cut ? PT_HS_FLAG_CUT : 0);
    hs[PT_HS_POLICY] = req->settings.policy;
    hs[PT_HS_TRANSPORT] = pt_transport_index(req->tp_ops);
    /* Local: an eager message the receiver's init-time receive will match. */
    rc = PMPI_Isend(hs, PT_HS_LEN, MPI_INT64_T, req->peer, req->tag, req->shadow, &req->hs_req);
    return rc == MPI_SUCCESS ? rc : pt_fail_mpi(req->comm, rc, "MPI_Psend_init", "MPI_Isend");
}

void pt_send_start(pt_request *req)
{
    req->u.s.round++;
    if (req->u.s.adapt)
        pt_adapt_send_start(req); /* this round's layout */
    if (req->proc_null)
        memset((void *)req->u.s.part, 0, (size_t)req->partitions * sizeof *req->u.s.part);
    else
        pt_flush_start(req);
}

int pt_send_progress(pt_request *req, int *done)
{
    pt_send_side *s = &req->u.s;
    *done = 0;
    if (req->proc_null) {
        *done = 1;
        return MPI_SUCCESS;
    }
    /* Only an armed request can have an overdue group (armed while a group
     * is begun and neither sent whole nor split). */
    if (s->split && atomic_load_explicit(&s->armed, memory_order_acquire))
        pt_timer_flush_due(req);
    /* Read before the transport tests: a group issued after this read is
     * not complete yet, even if the test saw nothing of it (reporting the
     * round earlier let the next MPI_Start restart an active send). Testing
     * issued messages also drives MPI's progress engine while other threads
     * are still marking partitions. */
    int all_issued = pt_flush_all_issued(req), sent = 0;
    int rc = req->tp_ops->send_progress(req, all_issued, &sent);
    *done = rc == MPI_SUCCESS && all_issued && sent;
    return rc;
}

void pt_send_destroy(pt_request *req)
{
    if (req->u.s.adapt) {
        pt_adapt_send_destroy(req); /* every candidate layout */
        return;
    }
    if (!req->proc_null)
        pt_flush_detach(req);
    if (req->tp_ops)
        req->tp_ops->send_destroy(req);
    if (!req->proc_null)
        pt_flush_destroy(req);
    else
        free((void *)req->u.s.part);
    free(req->u.s.bound);
}

int Partita_Request_plan(MPI_Request request, int *transport_parts, const char **policy)
{
    pt_request *req = pt_lookup(request);
    if (!req)
        return pt_fail(MPI_COMM_SELF, PT_E_NOT_PARTITIONED, "Partita_Request_plan",
                       "the request is not a partitioned request");
    if (!transport_parts)
        return pt_fail_null("Partita_Request_plan", "transport_parts");
    if (req->is_send) {
        *transport_parts = req->proc_null ? 0 : req->u.s.ntrans;
        if (policy)
            *policy = pt_policy_name(req->settings.policy);
    } else {
        *transport_parts = req->u.r.ready ? req->u.r.ntrans : -1;
        if (policy)
            *policy = req->u.r.ready ? pt_policy_name((pt_policy)req->u.r.hs[PT_HS_POLICY]) : "unknown";
    }
    return MPI_SUCCESS;
}

int Partita_Request_transport(MPI_Request request, const char **name)
{
    pt_request *req = pt_lookup(request);
    if (!req)
        return pt_fail(MPI_COMM_SELF, PT_E_NOT_PARTITIONED, "Partita_Request_transport",
                       "the request is not a partitioned request");
    if (!name)
        return pt_fail_null("Partita_Request_transport", "name");
    *name = req->proc_null ? "none" : req->tp_ops ? req->tp_ops->name : "unknown";
    return MPI_SUCCESS;
}

int Partita_Request_runs(MPI_Request request, int *runs)
{
    pt_request *req = pt_lookup(request);
    if (!req || !req->is_send)
        return pt_fail(req ? req->comm : MPI_COMM_SELF, PT_E_NOT_PARTITIONED, "Partita_Request_runs",
                       req ? "the request is a receive request" : "the request is not a partitioned request");
    if (!runs)
        return pt_fail_null("Partita_Request_runs", "runs");
    *runs = 0;
    if (req->u.s.split) {
        pthread_mutex_lock(&req->u.s.split_lock);
        *runs = req->u.s.nruns + atomic_load_explicit(&req->u.s.alone_sent, memory_order_relaxed);
        pthread_mutex_unlock(&req->u.s.split_lock);
    }
    return MPI_SUCCESS;
}
