/* Timer policy, receive side: groups that the sender split arrive as runs on
 * the channel's split tag (a header, then the run's data straight into place)
 * and an empty terminator on the group's own tag. A receive partition is
 * reported as soon as the runs (and whole messages) holding its bytes are in.
 * One header receive is kept posted; a header of a later round (the sender
 * may be ahead) is kept until that round starts, and nothing more is posted
 * on the split tag meanwhile, so the later round's data stays queued in MPI. */
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "request.h"
#include "runtime.h"

static int split_tag(const pt_request *req) { return req->u.r.tag_base + req->u.r.ntrans; }

static int group_parts(const pt_request *req, int g)
{
    const pt_recv_side *r = &req->u.r;
    return (int)((long long)(g + 1) * r->sparts / r->ntrans - (long long)g * r->sparts / r->ntrans);
}

int pt_runs_setup(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    r->group_missing = malloc((size_t)r->ntrans * sizeof *r->group_missing);
    r->group_split = calloc((size_t)r->ntrans, 1);
    r->sarrived = calloc((size_t)r->sparts, 1);
    r->hdr_req = r->run_req = MPI_REQUEST_NULL;
    if (!r->group_missing || !r->group_split || !r->sarrived) {
        free(r->group_missing);
        free(r->group_split);
        free(r->sarrived);
        r->group_missing = NULL;
        r->group_split = r->sarrived = NULL;
        return MPI_ERR_NO_MEM;
    }
    r->split = 1;
    return MPI_SUCCESS;
}

static int post_header(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    r->hdr_posted = 1;
    return PMPI_Irecv(r->hdr_in, PT_RUN_LEN, MPI_INT64_T, req->peer_world, split_tag(req), pt_data_comm(),
                      &r->hdr_req);
}

/* Post the data receive of the run in run_hdr, then the next header receive
 * (MPI matches them in this order). */
static int post_run(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    size_t bytes = (size_t)r->hs[PT_HS_PART_BYTES];
    r->run_posted = 1;
    int rc = PMPI_Irecv(r->dest + (size_t)r->run_hdr[PT_RUN_FIRST] * bytes,
                        (int)((size_t)r->run_hdr[PT_RUN_COUNT] * bytes), MPI_BYTE, req->peer_world, split_tag(req),
                        pt_data_comm(), &r->run_req);
    return rc == MPI_SUCCESS ? post_header(req) : rc;
}

int pt_runs_round_start(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    for (int g = 0; g < r->ntrans; g++) {
        r->group_missing[g] = group_parts(req, g);
        r->group_split[g] = 0;
    }
    memset(r->sarrived, 0, (size_t)r->sparts);
    if (r->have_stash) {
        if (r->run_hdr[PT_RUN_ROUND] != r->round)
            return MPI_SUCCESS; /* still a later round's */
        r->have_stash = 0;
        return post_run(req);
    }
    return r->hdr_posted || r->run_posted ? MPI_SUCCESS : post_header(req);
}

static int valid_header(const pt_request *req, const int64_t *h)
{
    const pt_recv_side *r = &req->u.r;
    if (h[PT_RUN_GROUP] < 0 || h[PT_RUN_GROUP] >= r->ntrans || h[PT_RUN_COUNT] < 1 || h[PT_RUN_ROUND] < r->round)
        return 0;
    long long first = (long long)h[PT_RUN_GROUP] * r->sparts / r->ntrans;
    long long end = (long long)(h[PT_RUN_GROUP] + 1) * r->sparts / r->ntrans;
    return h[PT_RUN_FIRST] >= first && h[PT_RUN_FIRST] + h[PT_RUN_COUNT] <= end;
}

/* The group of sender partition s (groups are floor(j * S / N) bounded). */
static int group_of(const pt_recv_side *r, int s)
{
    return (int)(((long long)(s + 1) * r->ntrans - 1) / r->sparts);
}

/* A run of sender partitions [first, first + count) is in: report the receive
 * partitions whose bytes are now all in, without waiting for the rest of
 * the group. */
static void run_in(pt_request *req, int first, int count)
{
    pt_recv_side *r = &req->u.r;
    size_t sbytes = (size_t)r->hs[PT_HS_PART_BYTES], rbytes = req->part_bytes;
    memset(r->sarrived + first, 1, (size_t)count);
    if (r->error || rbytes == 0 || sbytes == 0)
        return;
    size_t a = (size_t)first * sbytes, b = (size_t)(first + count) * sbytes;
    for (size_t p = a / rbytes; p <= (b - 1) / rbytes && p < (size_t)req->partitions; p++) {
        if (atomic_load_explicit(&r->arrived[p], memory_order_relaxed))
            continue;
        size_t x = p * rbytes, y = x + rbytes < r->sent_bytes ? x + rbytes : r->sent_bytes;
        int covered = 1;
        for (size_t sp = x / sbytes; covered && sp <= (y - 1) / sbytes; sp++)
            covered = r->sarrived[sp] || r->tdone[group_of(r, (int)sp)];
        if (covered)
            pt_recv_partition_in(req, (int)p);
    }
}

void pt_runs_terminator(pt_request *req, int g)
{
    pt_recv_side *r = &req->u.r;
    r->group_split[g] = 1;
    if (r->group_missing[g] == 0)
        pt_recv_message_done(req, g);
}

int pt_runs_progress(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    for (int progressed = 1; progressed;) {
        progressed = 0;
        int flag = 0, rc;
        if (r->run_posted) {
            if ((rc = PMPI_Test(&r->run_req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return pt_error_mpi(req->comm, rc);
            if (flag) {
                int g = (int)r->run_hdr[PT_RUN_GROUP];
                r->run_posted = 0;
                r->group_missing[g] -= (int)r->run_hdr[PT_RUN_COUNT];
                run_in(req, (int)r->run_hdr[PT_RUN_FIRST], (int)r->run_hdr[PT_RUN_COUNT]);
                if (r->group_split[g] && r->group_missing[g] == 0)
                    pt_recv_message_done(req, g);
                progressed = 1;
            }
        }
        if (!r->run_posted && r->hdr_posted) {
            if ((rc = PMPI_Test(&r->hdr_req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return pt_error_mpi(req->comm, rc);
            if (flag) {
                r->hdr_posted = 0;
                for (int k = 0; k < PT_RUN_LEN; k++)
                    r->run_hdr[k] = r->hdr_in[k];
                if (!valid_header(req, r->run_hdr))
                    return pt_error(req->comm, PT_E_SETUP);
                if (r->run_hdr[PT_RUN_ROUND] > r->round ||
                    !atomic_load_explicit(&req->active, memory_order_acquire)) {
                    r->have_stash = 1; /* the sender is a round ahead */
                } else if ((rc = post_run(req)) != MPI_SUCCESS) {
                    return pt_error_mpi(req->comm, rc);
                }
                progressed = 1;
            }
        }
    }
    return MPI_SUCCESS;
}

void pt_runs_destroy(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    MPI_Request *pending[2] = { r->hdr_posted ? &r->hdr_req : NULL, r->run_posted ? &r->run_req : NULL };
    for (int i = 0; i < 2; i++) {
        if (pending[i]) {
            PMPI_Cancel(pending[i]);
            PMPI_Wait(pending[i], MPI_STATUS_IGNORE);
        }
    }
    free(r->group_missing);
    free(r->group_split);
    free(r->sarrived);
}
