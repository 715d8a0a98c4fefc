/* Internal requests that outlive their partitioned request: the set-up
 * message of a request freed before it was ever matched must still be sent
 * (or received), or the next pair on the same (communicator, peer, tag) would
 * be matched with the wrong partner. They complete in the background. */
#ifndef PARTITA_ORPHANS_H
#define PARTITA_ORPHANS_H

#include <mpi.h>

/* Take over req (and free `memory` once it completed). */
int pt_orphan_add(MPI_Request req, void *memory);
void pt_orphans_poll(void);     /* cheap; called from progress */
int pt_orphans_pending(void);
void pt_orphans_finalize(void); /* cancel what never matched, release everything */

#endif
