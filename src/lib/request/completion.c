/* Wait/Test and their all/any/some forms, and Request_get_status*, over arrays
 * that may mix partita's requests with the MPI library's own. Without any
 * partita request in the array the call goes straight to the MPI library. */
#include <sched.h>
#include <stdlib.h>

#include "request/errors.h"
#include "request/request.h"
#include "request/runtime.h"
#include "partita/partita.h"

static MPI_Status *status_at(MPI_Status *statuses, int i)
{
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

static int any_ours(int count, const MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (pt_lookup(reqs[i]))
            return 1;
    return 0;
}

/* The count and request array of a request-array call, then its out-arguments a and b
 * (named name_a and name_b; a NULL name: not written by this call): MPI_SUCCESS or the
 * error of the first bad one (pt_check_array, pt_fail_null). */
static int check_array_call(const char *call, int count, const MPI_Request reqs[], const char *name_a,
                            const void *a, const char *name_b, const void *b)
{
    int bad = pt_check_array(call, count, reqs);
    if (bad == MPI_SUCCESS && name_a && !a)
        bad = pt_fail_null(call, name_a);
    if (bad == MPI_SUCCESS && name_b && !b)
        bad = pt_fail_null(call, name_b);
    return bad;
}

static void pause_between_sweeps(unsigned sweep)
{
    if (sweep > 64)
        sched_yield();
}

int Partita_Wait(MPI_Request *request, MPI_Status *status)
{
    pt_enter("MPI_Wait");
    if (!request)
        return pt_fail_null("MPI_Wait", "request");
    pt_request *req = pt_lookup(*request);
    if (req)
        return pt_request_wait(req, status);
    if (!pt_background_pending())
        return PMPI_Wait(request, status);
    /* Poll, so partita's background work (a receive waiting for its set-up
     * message, a timer) goes on while this ordinary request is pending. */
    for (unsigned sweep = 0;; sweep++) {
        int flag = 0;
        pt_background_progress();
        int rc = PMPI_Test(request, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        pause_between_sweeps(sweep);
    }
}

int Partita_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    pt_enter("MPI_Test");
    if (!request || !flag)
        return pt_fail_null("MPI_Test", request ? "flag" : "request");
    pt_request *req = pt_lookup(*request);
    if (req)
        return pt_request_test(req, flag, status);
    pt_background_progress();
    return PMPI_Test(request, flag, status);
}

/* The native entries of a mixed array, compacted, and where they came from. */
typedef struct natives {
    int n;
    int *from;
    MPI_Request *reqs;
    MPI_Status *st;
} natives;

static int natives_collect(int count, const MPI_Request reqs[], natives *nv)
{
    nv->n = 0;
    nv->from = malloc((size_t)(count ? count : 1) * sizeof *nv->from);
    nv->reqs = malloc((size_t)(count ? count : 1) * sizeof *nv->reqs);
    nv->st = malloc((size_t)(count ? count : 1) * sizeof *nv->st);
    if (!nv->from || !nv->reqs || !nv->st) {
        free(nv->from);
        free(nv->reqs);
        free(nv->st);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < count; i++) {
        if (!pt_lookup(reqs[i])) {
            nv->from[nv->n] = i;
            nv->reqs[nv->n++] = reqs[i];
        }
    }
    return MPI_SUCCESS;
}

/* Copy the (possibly nulled) native handles back into the user's array. */
static void natives_store(natives *nv, MPI_Request reqs[])
{
    for (int k = 0; k < nv->n; k++)
        reqs[nv->from[k]] = nv->reqs[k];
}

static void natives_free(natives *nv)
{
    free(nv->from);
    free(nv->reqs);
    free(nv->st);
}

int Partita_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    pt_enter("MPI_Waitall");
    int bad = pt_check_array("MPI_Waitall", count, reqs);
    if (bad != MPI_SUCCESS)
        return bad;
    if (!any_ours(count, reqs) && !pt_background_pending())
        return PMPI_Waitall(count, reqs, statuses);
    unsigned char local[64];
    unsigned char *done = count <= 64 ? local : calloc((size_t)count, 1);
    if (!done)
        return MPI_ERR_NO_MEM;
    if (done == local)
        for (int i = 0; i < count; i++)
            local[i] = 0;
    int left = count, err = MPI_SUCCESS;
    for (unsigned sweep = 0; left > 0; sweep++) {
        for (int i = 0; i < count; i++) {
            if (done[i])
                continue;
            int flag = 0, rc;
            pt_request *req = pt_lookup(reqs[i]);
            rc = req ? pt_request_test(req, &flag, status_at(statuses, i))
                     : PMPI_Test(&reqs[i], &flag, status_at(statuses, i));
            if (rc != MPI_SUCCESS) {
                flag = 1;
                err = statuses == MPI_STATUSES_IGNORE ? rc : MPI_ERR_IN_STATUS;
                if (statuses != MPI_STATUSES_IGNORE)
                    statuses[i].MPI_ERROR = rc;
            }
            if (flag) {
                done[i] = 1;
                left--;
            }
        }
        if (left > 0)
            pt_background_progress();
        pause_between_sweeps(sweep);
    }
    if (done != local)
        free(done);
    return err;
}

int Partita_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    pt_enter("MPI_Testall");
    int bad = check_array_call("MPI_Testall", count, reqs, "flag", flag, NULL, NULL);
    if (bad != MPI_SUCCESS)
        return bad;
    if (!any_ours(count, reqs))
        return PMPI_Testall(count, reqs, flag, statuses);
    /* All or nothing: look at ours without completing them first. */
    *flag = 0;
    for (int i = 0; i < count; i++) {
        pt_request *req = pt_lookup(reqs[i]);
        int done = 0;
        if (req) {
            int rc = pt_request_peek(req, &done, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
            if (!done)
                return MPI_SUCCESS;
        }
    }
    natives nv;
    int rc = natives_collect(count, reqs, &nv);
    if (rc != MPI_SUCCESS)
        return rc;
    int nflag = 1;
    if (nv.n)
        rc = PMPI_Testall(nv.n, nv.reqs, &nflag, nv.st);
    natives_store(&nv, reqs);
    if (rc == MPI_SUCCESS && nflag) {
        for (int k = 0; k < nv.n; k++)
            if (statuses != MPI_STATUSES_IGNORE)
                statuses[nv.from[k]] = nv.st[k];
        for (int i = 0; i < count; i++) {
            pt_request *req = pt_lookup(reqs[i]);
            int done = 0;
            if (req && (rc = pt_request_test(req, &done, status_at(statuses, i))) != MPI_SUCCESS)
                break;
        }
        *flag = rc == MPI_SUCCESS;
    }
    natives_free(&nv);
    return rc;
}

/* One sweep of Testany. *index is MPI_UNDEFINED when nothing completed;
 * *flag is also set when every entry is null or inactive. */
static int testany_sweep(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    *index = MPI_UNDEFINED;
    *flag = 0;
    int active_ours = 0;
    for (int i = 0; i < count; i++) {
        pt_request *req = pt_lookup(reqs[i]);
        if (!req || !atomic_load_explicit(&req->active, memory_order_acquire))
            continue;
        active_ours++;
        int done = 0;
        int rc = pt_request_test(req, &done, status);
        if (rc != MPI_SUCCESS || done) {
            *index = i;
            *flag = 1;
            return rc;
        }
    }
    natives nv;
    int rc = natives_collect(count, reqs, &nv);
    if (rc != MPI_SUCCESS)
        return rc;
    int k = MPI_UNDEFINED, nflag = 1;
    if (nv.n)
        rc = PMPI_Testany(nv.n, nv.reqs, &k, &nflag, status);
    natives_store(&nv, reqs);
    if (nflag && k != MPI_UNDEFINED) {
        *index = nv.from[k];
        *flag = 1;
    } else if (nflag && active_ours == 0) {
        *flag = 1; /* nothing active anywhere */
        pt_fill_empty_status(status);
    }
    natives_free(&nv);
    return rc;
}

int Partita_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    pt_enter("MPI_Testany");
    int bad = check_array_call("MPI_Testany", count, reqs, "index", index, "flag", flag);
    if (bad != MPI_SUCCESS)
        return bad;
    if (!any_ours(count, reqs))
        return PMPI_Testany(count, reqs, index, flag, status);
    return testany_sweep(count, reqs, index, flag, status);
}

int Partita_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    pt_enter("MPI_Waitany");
    int bad = check_array_call("MPI_Waitany", count, reqs, "index", index, NULL, NULL);
    if (bad != MPI_SUCCESS)
        return bad;
    if (!any_ours(count, reqs) && !pt_background_pending())
        return PMPI_Waitany(count, reqs, index, status);
    for (unsigned sweep = 0;; sweep++) {
        int flag = 0;
        int rc = testany_sweep(count, reqs, index, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        pt_background_progress();
        pause_between_sweeps(sweep);
    }
}

static int testsome_sweep(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    int out = 0, active = 0, err = MPI_SUCCESS;
    for (int i = 0; i < incount; i++) {
        pt_request *req = pt_lookup(reqs[i]);
        if (!req || !atomic_load_explicit(&req->active, memory_order_acquire))
            continue;
        active++;
        int done = 0;
        int rc = pt_request_test(req, &done, status_at(statuses, out));
        if (rc != MPI_SUCCESS) {
            done = 1;
            err = MPI_ERR_IN_STATUS;
            if (statuses != MPI_STATUSES_IGNORE)
                statuses[out].MPI_ERROR = rc;
        }
        if (done)
            indices[out++] = i;
    }
    natives nv;
    int rc = natives_collect(incount, reqs, &nv);
    if (rc != MPI_SUCCESS)
        return rc;
    int nout = MPI_UNDEFINED;
    int *nidx = malloc((size_t)(nv.n ? nv.n : 1) * sizeof *nidx);
    if (!nidx) {
        natives_free(&nv);
        return MPI_ERR_NO_MEM;
    }
    if (nv.n)
        rc = PMPI_Testsome(nv.n, nv.reqs, &nout, nidx, nv.st);
    natives_store(&nv, reqs);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
        err = rc;
    else if (rc == MPI_ERR_IN_STATUS)
        err = rc;
    for (int k = 0; nout != MPI_UNDEFINED && k < nout; k++) {
        if (statuses != MPI_STATUSES_IGNORE)
            statuses[out] = nv.st[k];
        indices[out++] = nv.from[nidx[k]];
    }
    *outcount = (nout == MPI_UNDEFINED && active == 0) ? MPI_UNDEFINED : out;
    free(nidx);
    natives_free(&nv);
    return err;
}

int Partita_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    pt_enter("MPI_Testsome");
    int bad = check_array_call("MPI_Testsome", incount, reqs, "outcount", outcount,
                               incount > 0 ? "array_of_indices" : NULL, indices);
    if (bad != MPI_SUCCESS)
        return bad;
    if (!any_ours(incount, reqs))
        return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
    return testsome_sweep(incount, reqs, outcount, indices, statuses);
}

int Partita_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    pt_enter("MPI_Waitsome");
    int bad = check_array_call("MPI_Waitsome", incount, reqs, "outcount", outcount,
                               incount > 0 ? "array_of_indices" : NULL, indices);
    if (bad != MPI_SUCCESS)
        return bad;
    if (!any_ours(incount, reqs) && !pt_background_pending())
        return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
    for (unsigned sweep = 0;; sweep++) {
        int rc = testsome_sweep(incount, reqs, outcount, indices, statuses);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc;
        pt_background_progress();
        pause_between_sweeps(sweep);
    }
}

int Partita_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    pt_enter("MPI_Request_get_status");
    if (!flag)
        return pt_fail_null("MPI_Request_get_status", "flag");
    pt_request *req = pt_lookup(request);
    if (req)
        return pt_request_peek(req, flag, status);
    pt_background_progress();
    return PMPI_Request_get_status(request, flag, status);
}

/* The MPI-4.1 forms, written over the single-request call so they work with
 * any MPI library and with mixed arrays. Null and inactive entries count as
 * complete with an empty status, as in MPI_Request_get_status. */
int Partita_Request_get_status_all(int count, const MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    pt_enter("MPI_Request_get_status_all");
    int bad = check_array_call("MPI_Request_get_status_all", count, reqs, "flag", flag, NULL, NULL);
    if (bad != MPI_SUCCESS)
        return bad;
    *flag = 1;
    for (int i = 0; i < count; i++) {
        int f = 0;
        int rc = Partita_Request_get_status(reqs[i], &f, status_at(statuses, i));
        if (rc != MPI_SUCCESS)
            return rc;
        *flag = *flag && f;
    }
    return MPI_SUCCESS;
}

/* Request_get_status_any/some skip null requests and inactive partitioned ones. */
static int status_candidate(MPI_Request r)
{
    if (r == MPI_REQUEST_NULL)
        return 0;
    pt_request *req = pt_lookup(r);
    return !req || atomic_load_explicit(&req->active, memory_order_acquire);
}

int Partita_Request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag,
                                   MPI_Status *status)
{
    pt_enter("MPI_Request_get_status_any");
    int bad = check_array_call("MPI_Request_get_status_any", count, reqs, "index", index, "flag", flag);
    if (bad != MPI_SUCCESS)
        return bad;
    *index = MPI_UNDEFINED;
    *flag = 0;
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (!status_candidate(reqs[i]))
            continue;
        active++;
        int f = 0;
        int rc = Partita_Request_get_status(reqs[i], &f, status);
        if (rc != MPI_SUCCESS)
            return rc;
        if (f) {
            *index = i;
            *flag = 1;
            return MPI_SUCCESS;
        }
    }
    if (active == 0) {
        *flag = 1;
        pt_fill_empty_status(status);
    }
    return MPI_SUCCESS;
}

int Partita_Request_get_status_some(int incount, const MPI_Request reqs[], int *outcount, int indices[],
                                    MPI_Status statuses[])
{
    pt_enter("MPI_Request_get_status_some");
    int bad = check_array_call("MPI_Request_get_status_some", incount, reqs, "outcount", outcount,
                               incount > 0 ? "array_of_indices" : NULL, indices);
    if (bad != MPI_SUCCESS)
        return bad;
    int out = 0, active = 0;
    for (int i = 0; i < incount; i++) {
        if (!status_candidate(reqs[i]))
            continue;
        active++;
        int f = 0;
        int rc = Partita_Request_get_status(reqs[i], &f, status_at(statuses, out));
        if (rc != MPI_SUCCESS)
            return rc;
        if (f)
            indices[out++] = i;
    }
    *outcount = active == 0 ? MPI_UNDEFINED : out;
    return MPI_SUCCESS;
}
