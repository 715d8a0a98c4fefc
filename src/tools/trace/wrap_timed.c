/* Ordinary point-to-point and collective calls: only the total time inside
 * them and their number, per thread (as mpiP does), so that the share of run
 * time spent in MPI is known. The list is in docs/trace.md. */
#include "trace.h"

/* The calls with a count, written once for both families: the int-count ones
 * and, where the MPI library has them, the MPI-4 large-count `_c` ones (mpi4py 4
 * calls those). S is the name's suffix, N the count type, V the element type of
 * a count array and D that of a displacement array.
 * X(category, name, parameter list, argument list) */
#define COUNTED_CALLS(X, S, N, V, D)                                                                                \
    X(CAT_P2P, Send##S, (const void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))         \
    X(CAT_P2P, Ssend##S, (const void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))        \
    X(CAT_P2P, Rsend##S, (const void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))        \
    X(CAT_P2P, Bsend##S, (const void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))        \
    X(CAT_P2P, Recv##S, (void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status *s),                   \
      (b, c, d, p, t, m, s))                                                                                        \
    X(CAT_P2P, Isend##S, (const void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),           \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Issend##S, (const void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),          \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Irecv##S, (void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),                 \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Send_init##S, (const void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),       \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Recv_init##S, (void *b, N c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r),             \
      (b, c, d, p, t, m, r))                                                                                        \
    X(CAT_P2P, Sendrecv##S,                                                                                         \
      (const void *sb, N sc, MPI_Datatype sd, int dst, int st, void *rb, N rc, MPI_Datatype rd, int src, int rt,   \
       MPI_Comm m, MPI_Status *s),                                                                                  \
      (sb, sc, sd, dst, st, rb, rc, rd, src, rt, m, s))                                                             \
    X(CAT_P2P, Sendrecv_replace##S,                                                                                 \
      (void *b, N c, MPI_Datatype d, int dst, int st, int src, int rt, MPI_Comm m, MPI_Status *s),                 \
      (b, c, d, dst, st, src, rt, m, s))                                                                            \
    X(CAT_COLLECTIVE, Bcast##S, (void *b, N c, MPI_Datatype d, int root, MPI_Comm m), (b, c, d, root, m))          \
    X(CAT_COLLECTIVE, Reduce##S,                                                                                    \
      (const void *s, void *r, N c, MPI_Datatype d, MPI_Op o, int root, MPI_Comm m), (s, r, c, d, o, root, m))      \
    X(CAT_COLLECTIVE, Allreduce##S, (const void *s, void *r, N c, MPI_Datatype d, MPI_Op o, MPI_Comm m),           \
      (s, r, c, d, o, m))                                                                                           \
    X(CAT_COLLECTIVE, Allgather##S,                                                                                 \
      (const void *s, N sc, MPI_Datatype sd, void *r, N rc, MPI_Datatype rd, MPI_Comm m),                           \
      (s, sc, sd, r, rc, rd, m))                                                                                    \
    X(CAT_COLLECTIVE, Allgatherv##S,                                                                                \
      (const void *s, N sc, MPI_Datatype sd, void *r, V rc[], D dp[], MPI_Datatype rd, MPI_Comm m),                 \
      (s, sc, sd, r, rc, dp, rd, m))                                                                                \
    X(CAT_COLLECTIVE, Alltoall##S,                                                                                  \
      (const void *s, N sc, MPI_Datatype sd, void *r, N rc, MPI_Datatype rd, MPI_Comm m),                           \
      (s, sc, sd, r, rc, rd, m))                                                                                    \
    X(CAT_COLLECTIVE, Alltoallv##S,                                                                                 \
      (const void *s, V sc[], D sp[], MPI_Datatype sd, void *r, V rc[], D rp[], MPI_Datatype rd, MPI_Comm m),       \
      (s, sc, sp, sd, r, rc, rp, rd, m))                                                                            \
    X(CAT_COLLECTIVE, Gather##S,                                                                                    \
      (const void *s, N sc, MPI_Datatype sd, void *r, N rc, MPI_Datatype rd, int root, MPI_Comm m),                 \
      (s, sc, sd, r, rc, rd, root, m))                                                                              \
    X(CAT_COLLECTIVE, Gatherv##S,                                                                                   \
      (const void *s, N sc, MPI_Datatype sd, void *r, V rc[], D dp[], MPI_Datatype rd, int root, MPI_Comm m),       \
      (s, sc, sd, r, rc, dp, rd, root, m))                                                                          \
    X(CAT_COLLECTIVE, Scatter##S,                                                                                   \
      (const void *s, N sc, MPI_Datatype sd, void *r, N rc, MPI_Datatype rd, int root, MPI_Comm m),                 \
      (s, sc, sd, r, rc, rd, root, m))                                                                              \
    X(CAT_COLLECTIVE, Scatterv##S,                                                                                  \
      (const void *s, V sc[], D dp[], MPI_Datatype sd, void *r, N rc, MPI_Datatype rd, int root, MPI_Comm m),       \
      (s, sc, dp, sd, r, rc, rd, root, m))                                                                          \
    X(CAT_COLLECTIVE, Reduce_scatter_block##S,                                                                      \
      (const void *s, void *r, N c, MPI_Datatype d, MPI_Op o, MPI_Comm m), (s, r, c, d, o, m))                      \
    X(CAT_COLLECTIVE, Scan##S, (const void *s, void *r, N c, MPI_Datatype d, MPI_Op o, MPI_Comm m),                \
      (s, r, c, d, o, m))                                                                                           \
    X(CAT_COLLECTIVE, Exscan##S, (const void *s, void *r, N c, MPI_Datatype d, MPI_Op o, MPI_Comm m),              \
      (s, r, c, d, o, m))

/* The calls without a count: one family only. */
#define COUNTLESS_CALLS(X)                                                                                          \
    X(CAT_P2P, Probe, (int p, int t, MPI_Comm m, MPI_Status *s), (p, t, m, s))                                      \
    X(CAT_P2P, Iprobe, (int p, int t, MPI_Comm m, int *f, MPI_Status *s), (p, t, m, f, s))                          \
    X(CAT_COLLECTIVE, Barrier, (MPI_Comm m), (m))

#if PARTITA_MPI_LARGE_COUNT
#define LARGE_COUNT_CALLS(X) COUNTED_CALLS(X, _c, MPI_Count, const MPI_Count, const MPI_Aint)
#else
#define LARGE_COUNT_CALLS(X)
#endif

#define TIMED_CALLS(X)                                                                                              \
    COUNTED_CALLS(X, , int, const int, const int)                                                                   \
    LARGE_COUNT_CALLS(X)                                                                                            \
    COUNTLESS_CALLS(X)

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
