/* Private twins of user communicators. The set-up message of a partitioned
 * pair travels on the twin with the user's tag, so it can never match (or be
 * matched by) the user's own point-to-point traffic, and MPI's ordering rules
 * pair requests in init order per (communicator, peer, tag). A twin is made
 * collectively when the user's communicator is made (making a communicator
 * is collective, partitioned init must stay local). */
#ifndef PARTITA_COMM_SHADOW_H
#define PARTITA_COMM_SHADOW_H

#include <mpi.h>

int pt_shadow_init(void);     /* create the attribute key (at init) */
void pt_shadow_finalize(void);
int pt_shadow_attach(MPI_Comm comm);            /* collective over comm */
int pt_shadow_lookup(MPI_Comm comm, MPI_Comm *shadow); /* 0, or -1 when comm has none */
#include "request/world_rank.h" /* pt_world_rank */

#endif
