/* How partita-loggp's PRTT probe moves its messages (loggp_prtt.h): the n
 * messages client -> server, the reply server -> client, and what happens
 * between rounds off the clock. One channel per transport libpartita has:
 * MPI point-to-point (blocking, or MPI_Isend with receives posted ahead, as
 * libpartita's MPI transport), and libfabric RMA writes with remote CQ data
 * (as its fabric transport). */
#ifndef PARTITA_LOGGP_CHANNEL_H
#define PARTITA_LOGGP_CHANNEL_H
#include <stddef.h>

typedef struct loggp_probe loggp_probe;

typedef struct loggp_channel {
    const char *name;
    /* client: message i of the round (s bytes) is on its way when this returns */
    void (*send)(loggp_probe *p, int i, size_t s);
    /* client: every send of the round completed locally (off the clock) */
    void (*complete_sends)(loggp_probe *p, int n);
    /* server: ready for the first round of n messages of s bytes */
    void (*prepare)(loggp_probe *p, int n, size_t s);
    /* server: returns once message i (s bytes) is in */
    void (*recv)(loggp_probe *p, int i, size_t s);
    void (*reply_send)(loggp_probe *p, size_t s);
    void (*reply_recv)(loggp_probe *p, size_t s);
    /* both: after a round when another follows (off the clock) */
    void (*next_round)(loggp_probe *p, int n, size_t s);
} loggp_channel;

extern const loggp_channel loggp_mpi_send;  /* MPI_Send / MPI_Recv (Netgauge) */
extern const loggp_channel loggp_mpi_isend; /* MPI_Isend / receives posted ahead, polled with MPI_Test */

/* The fabric channel (loggp_fabric.c, when the fabric transport is built):
 * opens the provider (PARTITA_FABRIC_PROVIDER, else shm between ranks of one
 * host and tcp;ofi_rxm otherwise), registers the buffers and exchanges
 * addresses and keys over MPI. Returns the channel, or NULL with a reason. */
const loggp_channel *loggp_fabric_open(loggp_probe *p, size_t client_bytes, size_t server_bytes, int same_host,
                                       char *err, size_t errlen);
const char *loggp_fabric_provider(void);
/* The fabric transport's own protocol switches, as the last size of each
 * segment (ptm_loggp_derive_known): the inject size, when writes go in
 * pieces the largest write in pieces, and when copies are split (shm) the
 * largest write that is not. Returns how many. */
#define LOGGP_FABRIC_SWITCHES_MAX 3
int loggp_fabric_switches(size_t known[LOGGP_FABRIC_SWITCHES_MAX]);
void loggp_fabric_close(loggp_probe *p);

#endif
