#include "exchange.h"

#include <limits.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/clock.h"

enum { ST_COMPUTE, ST_POST, ST_RECV, ST_UNPACK, ST_N };
#define MAX_THREAD_TAGS 1024 /* multiple: tag = message tag * 1024 + thread */

/* The boxes exchanged with the neighbour in direction d (local coordinates). */
static void boxes_toward(const pat_field *f, const int d[3], pat_box *send, pat_box *recv)
{
    pat_box owned, ghosted, nb_owned, nb_ghosted;
    for (int a = 0; a < 3; a++) {
        int n = f->n[a], g = f->g;
        owned.lo[a] = 0, owned.hi[a] = n;
        ghosted.lo[a] = -g, ghosted.hi[a] = n + g;
        nb_owned.lo[a] = d[a] * n, nb_owned.hi[a] = d[a] * n + n;
        nb_ghosted.lo[a] = d[a] * n - g, nb_ghosted.hi[a] = d[a] * n + n + g;
    }
    pat_box_intersect(&owned, &nb_ghosted, send);
    pat_box_intersect(&ghosted, &nb_owned, recv);
}

/* Add a box to the message toward/from peer with this tag (new message if none). */
static pat_msg *message_for(pat_msg *msgs, int *n, int peer, int tag)
{
    for (int i = 0; i < *n; i++)
        if (msgs[i].peer == peer && msgs[i].tag == tag)
            return &msgs[i];
    pat_msg *m = &msgs[(*n)++];
    memset(m, 0, sizeof *m);
    m->peer = peer;
    m->tag = tag;
    return m;
}

static int finish_message(pat_msg *m, const pat_field *f, int parts, int partitioned, long long *payload,
                          long long *padding)
{
    m->n = 0;
    for (int b = 0; b < m->nboxes; b++)
        m->n += pat_box_cells(&m->boxes[b]) * f->vars;
    m->parts = parts;
    m->count = (m->n + parts - 1) / parts;
    if ((long long)m->count * parts > INT_MAX)
        return -1;
    m->idx = malloc((size_t)m->n * sizeof *m->idx);
    m->buf = calloc((size_t)m->count * (size_t)parts, sizeof *m->buf);
    if (!m->idx || !m->buf)
        return -2;
    long e = 0;
    for (int b = 0; b < m->nboxes; b++) {
        const pat_box *x = &m->boxes[b];
        for (int v = 0; v < f->vars; v++)
            for (int k = x->lo[2]; k < x->hi[2]; k++)
                for (int j = x->lo[1]; j < x->hi[1]; j++)
                    for (int i = x->lo[0]; i < x->hi[0]; i++)
                        m->idx[e++] = (long)((size_t)v * f->cells + pat_field_at(f, i, j, k));
    }
    if (payload) {
        *payload += (long long)m->n * (long long)sizeof(double);
        *padding += partitioned ? ((long long)m->count * parts - m->n) * (long long)sizeof(double) : 0;
    }
    return 0;
}

static void init_requests(pat_exchange *x, int me)
{
    pat_init_op ops[2 * PAT_NDIRS];
    int n = 0;
    for (int i = 0; i < x->nsend; i++)
        ops[n++] = (pat_init_op){x->send[i].peer, x->send[i].tag, 1, i};
    for (int i = 0; i < x->nrecv; i++)
        ops[n++] = (pat_init_op){x->recv[i].peer, x->recv[i].tag, 0, i};
    pat_sort_inits(ops, n, me);
    for (int k = 0; k < n; k++) {
        pat_msg *m = ops[k].is_send ? &x->send[ops[k].index] : &x->recv[ops[k].index];
        pat_req *r = ops[k].is_send ? &x->sreq[ops[k].index] : &x->rreq[ops[k].index];
        if (x->strategy == PAT_PERSISTENT) {
            if (ops[k].is_send)
                pat_send_init(r, m->buf, m->n, MPI_DOUBLE, m->peer, m->tag, x->comm);
            else
                pat_recv_init(r, m->buf, m->n, MPI_DOUBLE, m->peer, m->tag, x->comm);
        } else if (ops[k].is_send) {
            pat_psend_init(r, m->buf, m->parts, m->count, MPI_DOUBLE, m->peer, m->tag, x->comm);
        } else {
            pat_precv_init(r, m->buf, m->parts, m->count, MPI_DOUBLE, m->peer, m->tag, x->comm);
        }
    }
}

int pat_exchange_setup(pat_exchange *x, const pat_exchange_spec *spec, const pat_grid *grid, pat_field *f,
                       MPI_Comm comm, pat_counter *counter, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    x->strategy = spec->strategy;
    x->threads = spec->threads;
    x->parts = spec->strategy == PAT_PARTITIONED && spec->parts > 0 ? spec->parts : spec->threads;
    x->early_unpack = spec->early_unpack && spec->strategy == PAT_PARTITIONED;
    x->comm = comm;
    x->counter = counter;
    for (int s = 0; s < spec->ndirs; s++) {
        int d[3];
        int sd = spec->dirs[s];
        pat_direction(sd, d);
        int rd = pat_direction_opposite(sd);
        int e[3];
        pat_direction(rd, e);
        int peer = pat_grid_neighbour(grid, d), from = pat_grid_neighbour(grid, e);
        for (int a = 0; a < 3; a++)
            if (d[a] != 0 && f->g > f->n[a] && (peer >= 0 || from >= 0)) {
                snprintf(err, errlen, "ghost width %d is larger than the %d local cells in %c", f->g, f->n[a], "xyz"[a]);
                return -1;
            }
        /* Send: my direction sd; it arrives at the peer as its direction opposite(sd). On both
         * sides the boxes of a message are in the order of the sender's direction. */
        if (peer >= 0) {
            pat_box sb, unused;
            boxes_toward(f, d, &sb, &unused);
            pat_msg *ms = message_for(x->send, &x->nsend, peer, spec->per_partner ? 0 : sd);
            ms->boxes[ms->nboxes++] = sb;
            pat_field_mark(f, &sb, 0);
        }
        /* Receive: the rank in direction opposite(sd) sends it as its direction sd. */
        if (from >= 0) {
            pat_box unused, rb;
            boxes_toward(f, e, &unused, &rb);
            pat_msg *mr = message_for(x->recv, &x->nrecv, from, spec->per_partner ? 0 : sd);
            mr->boxes[mr->nboxes++] = rb;
            if (pat_field_mark(f, &rb, 1) != 0) {
                snprintf(err, errlen, "a ghost cell would be received twice");
                return -1;
            }
        }
    }
    int partitioned = x->strategy == PAT_PARTITIONED;
    int rc = 0;
    for (int i = 0; i < x->nsend && !rc; i++)
        rc = finish_message(&x->send[i], f, x->parts, partitioned, &x->payload, &x->padding);
    for (int i = 0; i < x->nrecv && !rc; i++)
        rc = finish_message(&x->recv[i], f, x->parts, partitioned, NULL, NULL);
    if (rc) {
        snprintf(err, errlen, rc == -1 ? "a message exceeds 2^31 - 1 elements, more than an int count carries"
                                       : "cannot allocate the message buffers");
        return -1;
    }
    int T = x->threads;
    x->stamp = calloc((size_t)ST_N * (size_t)T, sizeof *x->stamp);
    if (x->strategy == PAT_MULTIPLE) {
        x->tsreq = calloc((size_t)T * PAT_NDIRS, sizeof *x->tsreq);
        x->trreq = calloc((size_t)T * PAT_NDIRS, sizeof *x->trreq);
    }
    if (x->early_unpack)
        x->unpacked = calloc((size_t)PAT_NDIRS * (size_t)x->parts, 1);
    for (int i = 0; i < PAT_NDIRS; i++)
        x->sreq[i].req = x->rreq[i].req = MPI_REQUEST_NULL;
    if (x->strategy == PAT_PERSISTENT || x->strategy == PAT_PARTITIONED) {
        int me;
        MPI_Comm_rank(comm, &me);
        init_requests(x, me);
    }
    return 0;
}

static inline long part_lo(const pat_msg *m, int j) { long lo = (long)j * m->count; return lo < m->n ? lo : m->n; }
static inline long part_hi(const pat_msg *m, int j) { long hi = (long)(j + 1) * m->count; return hi < m->n ? hi : m->n; }

static void pack_part(pat_msg *m, const double *data, int j)
{
    for (long e = part_lo(m, j), hi = part_hi(m, j); e < hi; e++)
        m->buf[e] = data[m->idx[e]];
}

static void unpack_part(const pat_msg *m, double *data, int j)
{
    for (long e = part_lo(m, j), hi = part_hi(m, j); e < hi; e++)
        data[m->idx[e]] = m->buf[e];
}

static int64_t max_stamp(const pat_exchange *x, int which)
{
    int64_t best = 0;
    for (int t = 0; t < x->threads; t++)
        if (x->stamp[which * x->threads + t] > best)
            best = x->stamp[which * x->threads + t];
    return best;
}

/* Thread t's compute of this iteration, then the stamp of its end. */
static void compute_phase(pat_exchange *x, const pt_common *c, double compute_us, long iter, int t)
{
    /* also at 0: delay:US makes one thread US late without any compute (as in partita-p2p) */
    if (compute_us >= 0.0)
        pat_compute(c, compute_us, t, iter);
    x->stamp[ST_COMPUTE * x->threads + t] = pt_now_ns();
}

/* nonblocking and persistent: only the main thread calls MPI. */
static void run_funneled(pat_exchange *x, pat_field *f, const pt_common *c, double compute_us, long iter,
                         pat_stamps *st)
{
    int T = x->threads;
    MPI_Request rq[PAT_NDIRS], sq[PAT_NDIRS];
    if (x->strategy == PAT_NONBLOCKING)
        for (int i = 0; i < x->nrecv; i++)
            MPI_Irecv(x->recv[i].buf, (int)x->recv[i].n, MPI_DOUBLE, x->recv[i].peer, x->recv[i].tag, x->comm, &rq[i]);
    else
        pat_startall(x->counter, x->nrecv, x->rreq, x->scratch);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        compute_phase(x, c, compute_us, iter, t);
        for (int i = 0; i < x->nsend; i++)
            pack_part(&x->send[i], f->data, t);
    }
    st->compute = max_stamp(x, ST_COMPUTE);
    if (x->strategy == PAT_NONBLOCKING)
        for (int i = 0; i < x->nsend; i++)
            pat_isend(x->counter, x->send[i].buf, x->send[i].n, MPI_DOUBLE, x->send[i].peer, x->send[i].tag, x->comm,
                      &sq[i]);
    else
        pat_startall(x->counter, x->nsend, x->sreq, x->scratch);
    st->post = pt_now_ns();
    if (x->strategy == PAT_NONBLOCKING)
        MPI_Waitall(x->nrecv, rq, MPI_STATUSES_IGNORE);
    else
        pat_waitall(x->nrecv, x->rreq, x->scratch);
    st->recv = pt_now_ns();
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        for (int i = 0; i < x->nrecv; i++)
            unpack_part(&x->recv[i], f->data, t);
    }
    st->unpack = pt_now_ns();
    if (x->strategy == PAT_NONBLOCKING)
        MPI_Waitall(x->nsend, sq, MPI_STATUSES_IGNORE);
    else
        pat_waitall(x->nsend, x->sreq, x->scratch);
}

/* multiple: every thread sends and receives its own part of every message. */
static void run_multiple(pat_exchange *x, pat_field *f, const pt_common *c, double compute_us, long iter,
                         pat_stamps *st)
{
    int T = x->threads;
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        MPI_Request *rq = x->trreq + (size_t)t * PAT_NDIRS, *sq = x->tsreq + (size_t)t * PAT_NDIRS;
        for (int i = 0; i < x->nrecv; i++) {
            pat_msg *m = &x->recv[i];
            MPI_Irecv(m->buf + part_lo(m, t), (int)(part_hi(m, t) - part_lo(m, t)), MPI_DOUBLE, m->peer,
                      m->tag * MAX_THREAD_TAGS + t, x->comm, &rq[i]);
        }
        compute_phase(x, c, compute_us, iter, t);
        for (int i = 0; i < x->nsend; i++) {
            pat_msg *m = &x->send[i];
            pack_part(m, f->data, t);
            pat_isend(x->counter, m->buf + part_lo(m, t), part_hi(m, t) - part_lo(m, t), MPI_DOUBLE, m->peer,
                      m->tag * MAX_THREAD_TAGS + t, x->comm, &sq[i]);
        }
        x->stamp[ST_POST * T + t] = pt_now_ns();
        MPI_Waitall(x->nrecv, rq, MPI_STATUSES_IGNORE);
        x->stamp[ST_RECV * T + t] = pt_now_ns();
        for (int i = 0; i < x->nrecv; i++)
            unpack_part(&x->recv[i], f->data, t);
        x->stamp[ST_UNPACK * T + t] = pt_now_ns();
        MPI_Waitall(x->nsend, sq, MPI_STATUSES_IGNORE);
    }
    st->compute = max_stamp(x, ST_COMPUTE);
    st->post = max_stamp(x, ST_POST);
    st->recv = max_stamp(x, ST_RECV);
    st->unpack = max_stamp(x, ST_UNPACK);
}

/* Early unpack: thread t polls its partitions of every receive message. */
static void unpack_on_arrival(pat_exchange *x, pat_field *f, int t)
{
    int T = x->threads, P = x->parts;
    int left = 0;
    for (int i = 0; i < x->nrecv; i++)
        for (int j = t; j < P; j += T)
            left++;
    while (left > 0) {
        int progressed = 0;
        for (int i = 0; i < x->nrecv; i++)
            for (int j = t; j < P; j += T) {
                unsigned char *done = &x->unpacked[(size_t)i * (size_t)P + (size_t)j];
                if (*done || !pat_arrived(&x->rreq[i], j))
                    continue;
                x->stamp[ST_RECV * T + t] = pt_now_ns();
                unpack_part(&x->recv[i], f->data, j);
                *done = 1;
                left--;
                progressed = 1;
            }
        if (!progressed)
            sched_yield();
    }
    x->stamp[ST_UNPACK * T + t] = pt_now_ns();
}

static void run_partitioned(pat_exchange *x, pat_field *f, const pt_common *c, double compute_us, long iter,
                            pat_stamps *st)
{
    int T = x->threads, P = x->parts;
    pat_startall(x->counter, x->nrecv, x->rreq, x->scratch);
    pat_startall(x->counter, x->nsend, x->sreq, x->scratch);
    if (x->early_unpack)
        memset(x->unpacked, 0, (size_t)PAT_NDIRS * (size_t)P);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        compute_phase(x, c, compute_us, iter, t);
        for (int i = 0; i < x->nsend; i++)
            for (int j = t; j < P; j += T) {
                pack_part(&x->send[i], f->data, j);
                pat_pready(x->counter, j, &x->sreq[i]);
            }
        x->stamp[ST_POST * T + t] = pt_now_ns();
        if (x->early_unpack)
            unpack_on_arrival(x, f, t);
    }
    st->compute = max_stamp(x, ST_COMPUTE);
    st->post = max_stamp(x, ST_POST);
    if (x->early_unpack) {
        st->recv = max_stamp(x, ST_RECV);
        st->unpack = max_stamp(x, ST_UNPACK);
        pat_waitall(x->nrecv, x->rreq, x->scratch);
    } else {
        pat_waitall(x->nrecv, x->rreq, x->scratch);
        st->recv = pt_now_ns();
#pragma omp parallel num_threads(T)
        {
            int t = omp_get_thread_num();
            for (int i = 0; i < x->nrecv; i++)
                for (int j = t; j < P; j += T)
                    unpack_part(&x->recv[i], f->data, j);
        }
        st->unpack = pt_now_ns();
    }
    pat_waitall(x->nsend, x->sreq, x->scratch);
}

void pat_exchange_run(pat_exchange *x, pat_field *f, const pt_common *c, double compute_us, long iter,
                      pat_stamps *st)
{
    memset(x->stamp, 0, (size_t)ST_N * (size_t)x->threads * sizeof *x->stamp);
    if (x->strategy == PAT_MULTIPLE)
        run_multiple(x, f, c, compute_us, iter, st);
    else if (x->strategy == PAT_PARTITIONED)
        run_partitioned(x, f, c, compute_us, iter, st);
    else
        run_funneled(x, f, c, compute_us, iter, st);
}

void pat_exchange_free(pat_exchange *x)
{
    for (int i = 0; i < x->nsend; i++) {
        pat_req_free(&x->sreq[i]);
        free(x->send[i].idx);
        free(x->send[i].buf);
    }
    for (int i = 0; i < x->nrecv; i++) {
        pat_req_free(&x->rreq[i]);
        free(x->recv[i].idx);
        free(x->recv[i].buf);
    }
    free(x->tsreq);
    free(x->trreq);
    free(x->unpacked);
    free(x->stamp);
    memset(x, 0, sizeof *x);
}
