/* The receive plan: which receive partitions each transport message (and,
 * timer policy, each run of sender partitions) covers; when a receive
 * partition is in, unpacking it from staging and reporting it arrived. The
 * transport reports what came through the two upcalls of
 * transport/transport.h, pt_recv_message_done and pt_recv_parts_in; the
 * group accounting of groups sent in runs is here, above the seam. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"
#include "request/errors.h"
#include "request/adaptive.h"
#include "request/request.h"
#include "transport/transport.h"

/* Receiver partitions overlapping transport message j: [*lo, *hi], empty when *lo > *hi. */
static void overlap(const pt_request *req, int j, int *lo, int *hi)
{
    const pt_recv_side *r = &req->u.r;
    size_t a = r->tstart[j], b = r->tstart[j + 1];
    if (r->sent_bytes == 0 && req->part_bytes > 0) {
        *lo = 1, *hi = 0; /* no data for a receive that wants some (PT_E_SHORT): no partition arrives */
    } else if (r->sent_bytes == 0 || req->part_bytes == 0) {
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

void pt_recv_plan_build(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    const int64_t *hs = r->hs;
    /* Too much data: still receive it (into scratch space) so that the sender
     * completes, and report the truncation when the round completes. */
    size_t holds = req->part_bytes * (size_t)req->partitions;
    int truncated = r->sent_bytes > holds;
    if (truncated)
        r->error = PT_E_TRUNCATE;
    else if (r->sent_bytes < holds)
        r->error = PT_E_SHORT; /* erroneous, as MPICH finds it too: the partitions past the data never arrive */
    int N = r->ntrans, P = req->partitions;
    int split = (hs[PT_HS_FLAGS] & PT_HS_FLAG_SPLIT) != 0;
    r->tstart = malloc(((size_t)N + 1) * sizeof *r->tstart);
    r->plo = malloc((size_t)N * sizeof *r->plo);
    r->phi = malloc((size_t)N * sizeof *r->phi);
    r->need = calloc((size_t)P, sizeof *r->need);
    r->missing = calloc((size_t)P, sizeof *r->missing);
    r->tdone = calloc((size_t)N, 1);
    if (split) {
        r->group_missing = malloc((size_t)N * sizeof *r->group_missing);
        r->sin = calloc((size_t)r->sparts, 1);
    }
    int staged = (!req->contiguous || truncated) && r->sent_bytes > 0;
    if (staged && !r->staging) /* the adaptive policy's candidates share it */
        r->staging = malloc(r->sent_bytes);
    if (!r->tstart || !r->plo || !r->phi || !r->need || !r->missing || !r->tdone || (staged && !r->staging) ||
        (split && (!r->group_missing || !r->sin))) {
        r->ntrans = 0;
        r->error = PT_E_NO_MEM;
        return;
    }
    r->dest = staged ? r->staging : req->buf + req->true_lb;
    for (int j = 0; j <= N; j++)
        r->tstart[j] = pt_plan_message_offset((size_t)hs[PT_HS_PART_BYTES], r->sparts, N,
                                              (hs[PT_HS_FLAGS] & PT_HS_FLAG_CUT) != 0, j);
    for (int j = 0; j < N; j++) {
        if (r->tstart[j + 1] - r->tstart[j] > INT_MAX) { /* the sender refuses this at init */
            r->ntrans = j;
            r->error = PT_E_TOO_BIG;
            return;
        }
        overlap(req, j, &r->plo[j], &r->phi[j]);
        for (int p = r->plo[j]; p <= r->phi[j]; p++)
            r->need[p]++;
    }
}

static void partition_in(pt_request *req, int p);

void pt_recv_plan_reset(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    memcpy(r->missing, r->need, (size_t)req->partitions * sizeof *r->missing);
    memset(r->tdone, 0, (size_t)r->ntrans);
    r->ndone = 0;
    r->narrived = 0;
    if (r->split) {
        for (int g = 0; g < r->ntrans; g++)
            r->group_missing[g] =
                ptm_group_first(r->sparts, r->ntrans, g + 1) - ptm_group_first(r->sparts, r->ntrans, g);
        memset(r->sin, 0, (size_t)r->sparts);
    }
    for (int p = 0; p < req->partitions; p++)
        if (r->need[p] == 0 && !pt_recv_past_data(req, p))
            partition_in(req, p); /* no data comes for it */
}

int pt_recv_past_data(const pt_request *req, int p)
{
    return req->u.r.error == PT_E_SHORT && (size_t)p * req->part_bytes >= req->u.r.sent_bytes;
}

int pt_recv_focus_of(const pt_request *req, int p, pt_recv_focus *focus)
{
    const pt_recv_side *r = &req->u.r;
    if (!r->ready || pt_recv_error_stops(r->error) || r->deferred || r->ntrans <= 0)
        return 0;
    /* The messages overlapping p: a binary search on their receiver-partition
     * ranges, which are sorted. */
    int a = 0, b = r->ntrans - 1;
    while (a < b) {
        int m = (a + b) / 2;
        if (r->phi[m] < p)
            a = m + 1;
        else
            b = m;
    }
    focus->part = p;
    focus->lo = focus->hi = a;
    while (focus->hi + 1 < r->ntrans && r->plo[focus->hi + 1] <= p)
        focus->hi++;
    return 1;
}

void pt_recv_sender_span(const pt_request *req, int p, int *first, int *end)
{
    const pt_recv_side *r = &req->u.r;
    size_t sbytes = (size_t)r->hs[PT_HS_PART_BYTES], rbytes = req->part_bytes;
    size_t x = (size_t)p * rbytes, y = x + rbytes < r->sent_bytes ? x + rbytes : r->sent_bytes;
    *first = *end = 0;
    if (sbytes > 0 && x < y) {
        *first = (int)(x / sbytes);
        *end = (int)((y - 1) / sbytes) + 1;
        if (*end > r->sparts)
            *end = r->sparts;
    }
}

void pt_recv_plan_free(pt_request *req)
{
    pt_recv_side *r = &req->u.r;
    free(r->tstart);
    free(r->plo);
    free(r->phi);
    free(r->need);
    free(r->missing);
    free(r->tdone);
    free(r->staging);
    free(r->group_missing);
    free(r->sin);
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
    if (!r->staging || pt_recv_error_stops(r->error) || first >= r->sent_bytes || req->type_size == 0)
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
static void partition_in(pt_request *req, int p)
{
    pt_recv_side *r = &req->u.r;
    if (atomic_load_explicit(&r->arrived[p], memory_order_relaxed))
        return; /* already reported, by runs of a split group */
    unpack(req, p);
    r->narrived++;
    atomic_store_explicit(&r->arrived[p], 1, memory_order_release);
}

void pt_recv_message_done(pt_request *req, int j)
{
    pt_recv_side *r = &req->u.r;
    if (r->tdone[j])
        return;
    r->tdone[j] = 1;
    if (++r->ndone == r->ntrans && r->adapt)
        pt_adapt_recv_round_in(req);
    for (int p = r->plo[j]; p <= r->phi[j]; p++)
        if (--r->missing[p] == 0)
            partition_in(req, p);
}

/* A run of sender partitions [first, first + count) is in: report the receive
 * partitions whose bytes are now all in, without waiting for the rest of
 * the group. */
static void run_in(pt_request *req, int first, int count)
{
    pt_recv_side *r = &req->u.r;
    size_t sbytes = (size_t)r->hs[PT_HS_PART_BYTES], rbytes = req->part_bytes;
    memset(r->sin + first, 1, (size_t)count);
    if (pt_recv_error_stops(r->error) || rbytes == 0 || sbytes == 0)
        return;
    if (sbytes == rbytes) { /* the same partitions on both sides: each sender partition is one receive partition */
        for (int p = first; p < first + count && p < req->partitions; p++)
            partition_in(req, p);
        return;
    }
    size_t a = (size_t)first * sbytes, b = (size_t)(first + count) * sbytes;
    for (size_t p = a / rbytes; p <= (b - 1) / rbytes && p < (size_t)req->partitions; p++) {
        if (atomic_load_explicit(&r->arrived[p], memory_order_relaxed))
            continue;
        int covered = 1, sfirst, send;
        pt_recv_sender_span(req, (int)p, &sfirst, &send);
        for (int sp = sfirst; covered && sp < send; sp++)
            covered = r->sin[sp] || r->tdone[pt_plan_group_of(r->sparts, r->ntrans, sp)];
        if (covered)
            partition_in(req, (int)p);
    }
}

void pt_recv_parts_in(pt_request *req, int g, int first, int count)
{
    pt_recv_side *r = &req->u.r;
    r->group_missing[g] -= count;
    run_in(req, first, count);
    if (r->group_missing[g] == 0)
        pt_recv_message_done(req, g);
}
