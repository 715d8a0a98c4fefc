/* The four send mechanisms of partita-mech and one round of each, on both the
 * sending and the receiving rank (definitions: docs/mech.md).
 *
 *   mechanism   sender, per partition p         sender completion   receiver, per partition p   receiver completion
 *   send        MPI_Send                        -                   MPI_Recv                    -
 *   isend       MPI_Isend                       MPI_Waitall         MPI_Irecv                   MPI_Waitall
 *   persistent  MPI_Start (MPI_Send_init'ed)    MPI_Waitall         MPI_Start (MPI_Recv_init)   MPI_Waitall
 *   psend       MPI_Pready (after MPI_Start)    MPI_Wait            - (MPI_Start only)          MPI_Wait
 *
 * Partition p travels with tag p on a communicator private to the mechanism, so
 * the receiver can post in any order; it mirrors the sender's threads and order
 * anyway (blocking MPI_Send of rendezvous size needs its MPI_Recv to be posted). */
#ifndef PT_MECH_TRANSFER_H
#define PT_MECH_TRANSFER_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "mech_schedule.h"

typedef enum { MECH_SEND, MECH_ISEND, MECH_PERSISTENT, MECH_PSEND, MECH_NKINDS } mech_kind;

extern const char *const mech_kind_names[]; /* NULL-terminated, in mech_kind order */

typedef struct mech_xfer {
    mech_kind kind;
    MPI_Comm comm;
    int sender; /* 1: this rank sends */
    int peer;
    unsigned char *buf;
    int P;
    size_t part_bytes;
    MPI_Request *reqs; /* P requests (isend, persistent) or 1 (psend) */
} mech_xfer;

/* Whether this build can run the mechanism (psend needs MPI_Psend_init). */
int mech_kind_available(mech_kind kind);

/* Prepare a transfer of P partitions of part_bytes each (part_bytes <= INT_MAX):
 * persistent and partitioned requests are created here, once. Returns 0, or -1
 * when out of memory. */
int mech_xfer_init(mech_xfer *x, mech_kind kind, MPI_Comm comm, int sender, int peer, unsigned char *buf, int P,
                   size_t part_bytes);
void mech_xfer_free(mech_xfer *x);

/* One round, after the caller's barrier. *start_ns: the sender's stamp taken
 * just before its first call of the round (MPI_Start for psend, else the first
 * partition). Returns the stamp of completion on this rank: the sender when its
 * completion call (or its last MPI_Send) returned, the receiver when all data
 * is in (MPI_Wait/MPI_Waitall returned, or the last MPI_Recv of any thread). */
int64_t mech_xfer_round(mech_xfer *x, const mech_schedule *s, int threads, int64_t *start_ns);

#endif
