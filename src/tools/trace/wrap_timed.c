/* Ordinary point-to-point and collective calls: only the total time inside
 * them and their number, per thread (as mpiP does), so that the share of run
 * time spent in MPI is known. The list is in docs/trace.md. */
#include "trace.h"

/* X(category, name, parameter list, argument list) */
#define TIMED_CALLS(X)                                                                                              \
    X(CAT_P2P, Send, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))          \
    X(CAT_P2P, Ssend, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))         \
    X(CAT_P2P, Rsend, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))         \
    X(CAT_P2P, Bsend, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))         \
    X(CAT_P2P, Recv, (void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status *s),                    \
      (b, c, d, p, t, m, s))                                                                                        \
    X(CAT_P2P, Isend, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),            \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Issend, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),           \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Irecv, (void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),                  \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Send_init, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),        \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Recv_init, (void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),              \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Sendrecv,                                                                                            \
      (const void *sb, int sc, MPI_Datatype sd, int dst, int st, void *rb, int rc, MPI_Datatype rd, int src, int rt, \
       MPI_Comm m, MPI_Status *s),                                                                                  \
      (sb, sc, sd, dst, st, rb, rc, rd, src, rt, m, s))                                                             \
    X(CAT_P2P, Sendrecv_replace,                                                                                    \
      (void *b, int c, MPI_Datatype d, int dst, int st, int src, int rt, MPI_Comm m, MPI_Status *s),               \
      (b, c, d, dst, st, src, rt, m, s))                                                                            \
    X(CAT_P2P, Probe, (int p, int t, MPI_Comm m, MPI_Status *s), (p, t, m, s))                                      \
    X(CAT_P2P, Iprobe, (int p, int t, MPI_Comm m, int *f, MPI_Status *s), (p, t, m, f, s))                          \
    X(CAT_COLLECTIVE, Barrier, (MPI_Comm m), (m))                                                                   \
    X(CAT_COLLECTIVE, Bcast, (void *b, int c, MPI_Datatype d, int root, MPI_Comm m), (b, c, d, root, m))            \
    X(CAT_COLLECTIVE, Reduce,                                                                                       \
      (const void *s, void *r, int c, MPI_Datatype d, MPI_Op o, int root, MPI_Comm m), (s, r, c, d, o, root, m))    \
    X(CAT_COLLECTIVE, Allreduce, (const void *s, void *r, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m),            \
      (s, r, c, d, o, m))                                                                                           \
    X(CAT_COLLECTIVE, Allgather,                                                                                    \
      (const void *s, int sc, MPI_Datatype sd, void *r, int rc, MPI_Datatype rd, MPI_Comm m),                       \
      (s, sc, sd, r, rc, rd, m))                                                                                    \
    X(CAT_COLLECTIVE, Allgatherv,                                                                                   \
      (const void *s, int sc, MPI_Datatype sd, void *r, const int rc[], const int dp[], MPI_Datatype rd, MPI_Comm m), \
      (s, sc, sd, r, rc, dp, rd, m))                                                                                \
    X(CAT_COLLECTIVE, Alltoall,                                                                                     \
      (const void *s, int sc, MPI_Datatype sd, void *r, int rc, MPI_Datatype rd, MPI_Comm m),                       \
      (s, sc, sd, r, rc, rd, m))                                                                                    \
    X(CAT_COLLECTIVE, Alltoallv,                                                                                    \
      (const void *s, const int sc[], const int sp[], MPI_Datatype sd, void *r, const int rc[], const int rp[],     \
       MPI_Datatype rd, MPI_Comm m),                                                                                \
      (s, sc, sp, sd, r, rc, rp, rd, m))                                                                            \
    X(CAT_COLLECTIVE, Gather,                                                                                       \
      (const void *s, int sc, MPI_Datatype sd, void *r, int rc, MPI_Datatype rd, int root, MPI_Comm m),             \
      (s, sc, sd, r, rc, rd, root, m))                                                                              \
    X(CAT_COLLECTIVE, Gatherv,                                                                                      \
      (const void *s, int sc, MPI_Datatype sd, void *r, const int rc[], const int dp[], MPI_Datatype rd, int root,  \
       MPI_Comm m),                                                                                                 \
      (s, sc, sd, r, rc, dp, rd, root, m))                                                                          \
    X(CAT_COLLECTIVE, Scatter,                                                                                      \
      (const void *s, int sc, MPI_Datatype sd, void *r, int rc, MPI_Datatype rd, int root, MPI_Comm m),             \
      (s, sc, sd, r, rc, rd, root, m))                                                                              \
    X(CAT_COLLECTIVE, Scatterv,                                                                                     \
      (const void *s, const int sc[], const int dp[], MPI_Datatype sd, void *r, int rc, MPI_Datatype rd, int root,  \
       MPI_Comm m),                                                                                                 \
      (s, sc, dp, sd, r, rc, rd, root, m))                                                                          \
    X(CAT_COLLECTIVE, Reduce_scatter_block,                                                                         \
      (const void *s, void *r, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m), (s, r, c, d, o, m))                    \
    X(CAT_COLLECTIVE, Scan, (const void *s, void *r, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m),                 \
      (s, r, c, d, o, m))                                                                                           \
    X(CAT_COLLECTIVE, Exscan, (const void *s, void *r, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m),               \
      (s, r, c, d, o, m))

#define DECLARE_NEXT(cat, name, params, args) static int(*next_##name) params;
TIMED_CALLS(DECLARE_NEXT)

#define RESOLVE(cat, name, params, args) next_##name = (int(*) params)ptr_next("MPI_" #name);
__attribute__((constructor)) static void resolve(void) { TIMED_CALLS(RESOLVE) }

#define WRAP(cat, name, params, args)                                                                               \
    PTR_EXPORT int MPI_##name params                                                                                \
    {                                                                                                               \
        int64_t t0 = ptr_ticks();                                                                                   \
        int result_ = next_##name args;                                                                             \
        ptr_account(cat, t0, ptr_ticks());                                                                          \
        return result_;                                                                                             \
    }
TIMED_CALLS(WRAP)
