/* Ghost-cell exchange of a pat_field with its neighbours, shared by Halo3D and
 * the 27-point stencil. Messages come from box intersection: for neighbour
 * direction d, the receive box is this rank's ghosted box intersected with the
 * neighbour's owned box, the send box is this rank's owned box intersected with
 * the neighbour's ghosted box (both in local coordinates). Every message is
 * packed through an index list into one contiguous buffer, box after box,
 * variable after variable.
 *
 * Work split: a message of n elements is cut into P parts of c = ceil(n/P)
 * elements (the last ones shorter or empty); part j is [j*c, min(n, (j+1)*c)).
 * Thread t handles parts t, t+T, ... . Partitioned messages have P partitions
 * of c elements, so P*c - n elements are padding (sent, counted, reported).
 *
 * Strategies:
 *   nonblocking  main thread: Irecv all; threads compute, pack their parts; main: Isend all, Waitall, threads unpack
 *   persistent   the same with Recv_init/Send_init once and Startall per iteration
 *   multiple     each thread Irecvs, packs, Isends and unpacks its own part of every message (MPI_THREAD_MULTIPLE)
 *   partitioned  Precv_init/Psend_init once; main thread Startall; each thread computes, packs its partitions and
 *                calls MPI_Pready; Waitall then threaded unpack, or (early unpack) each thread polls MPI_Parrived
 *                and unpacks its partitions as they arrive. */
#ifndef PAT_EXCHANGE_H
#define PAT_EXCHANGE_H
#include <mpi.h>
#include <stdint.h>

#include "counted.h"
#include "driver.h"
#include "field.h"
#include "grid.h"

typedef enum { PAT_NONBLOCKING, PAT_PERSISTENT, PAT_MULTIPLE, PAT_PARTITIONED } pat_strategy;

typedef struct pat_msg {
    int peer, tag;
    int nboxes;
    pat_box boxes[PAT_NDIRS];
    long n;        /* elements: cells of all boxes x vars */
    long count;    /* elements per part */
    int parts;
    long *idx;     /* n offsets into the field data */
    double *buf;   /* parts * count elements */
} pat_msg;

typedef struct pat_exchange {
    pat_strategy strategy;
    int threads, parts, early_unpack;
    MPI_Comm comm;
    pat_counter *counter;
    int nsend, nrecv;
    pat_msg send[PAT_NDIRS], recv[PAT_NDIRS];
    pat_req sreq[PAT_NDIRS], rreq[PAT_NDIRS];
    MPI_Request scratch[PAT_NDIRS];
    MPI_Request *tsreq, *trreq;     /* multiple: [thread][message] */
    unsigned char *unpacked;        /* early unpack: [message][partition] */
    int64_t *stamp;                 /* [4][thread]: compute, post, recv, unpack */
    long long payload, padding;     /* bytes per exchange on this rank */
} pat_exchange;

typedef struct pat_exchange_spec {
    pat_strategy strategy;
    int threads;
    int parts;          /* partitioned: partitions per message (0 = threads) */
    int early_unpack;
    int per_partner;    /* 1: one message per partner rank (all its boxes); 0: one per direction */
    const int *dirs;    /* direction indices (grid.h) to exchange */
    int ndirs;
} pat_exchange_spec;

/* Build messages and, for persistent/partitioned, the requests (initialised in
 * an order that cannot deadlock when init blocks until the peer initialises).
 * Returns 0, or -1 with a reason in err (same on every rank for the same input). */
int pat_exchange_setup(pat_exchange *x, const pat_exchange_spec *spec, const pat_grid *grid, pat_field *f,
                       MPI_Comm comm, pat_counter *counter, char *err, size_t errlen);
/* One exchange. compute_us: per-thread compute before packing, the noise model applied (0 computes
 * only what the noise adds: delay's late thread); PAT_NO_COMPUTE: no compute phase at all (an
 * exchange after the first of an iteration). Fills the stamps it measures. */
#define PAT_NO_COMPUTE (-1.0)
void pat_exchange_run(pat_exchange *x, pat_field *f, const pt_common *c, double compute_us, long iter,
                      pat_stamps *st);
void pat_exchange_free(pat_exchange *x);

#endif
