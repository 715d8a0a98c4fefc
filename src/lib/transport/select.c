/* The transports a request can use, by name. The sender picks one at init
 * (pt_transport_choose: PARTITA_TRANSPORT=mpi|fabric|auto or the info key
 * partita_transport); the set-up message names it by its index here, and
 * the receiver uses the same. A new transport adds a line to `transports`. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "partita/config.h"
#include "request/settings.h"
#include "transport/mpi/mpi_transport.h"
#include "transport/transport.h"
/* The fabric is in the table when it is built; a test library leaves it out
 * (PT_TABLE_HAS_FABRIC=0: a receiver whose libpartita lacks the sender's
 * transport, tests/fabric). */
#ifndef PT_TABLE_HAS_FABRIC
#define PT_TABLE_HAS_FABRIC PARTITA_HAVE_FABRIC
#endif
#if PT_TABLE_HAS_FABRIC
#include "transport/fabric/fabric_transport.h"
#endif

static const pt_transport_ops *const transports[] = {
    &pt_mpi_transport,
#if PT_TABLE_HAS_FABRIC
    &pt_fabric_transport,
#endif
};
#define NTRANSPORTS ((int)(sizeof transports / sizeof transports[0]))

const pt_transport_ops *pt_transport_choose(const struct pt_settings *s, int peer_world, char *err, size_t errlen)
{
    (void)peer_world;
    switch (s->transport) {
    case PT_TRANSPORT_FABRIC:
#if PT_TABLE_HAS_FABRIC
        return &pt_fabric_transport; /* its send_init reports what it cannot do */
#else
        snprintf(err, errlen, "transport 'fabric' asked for, but this libpartita was built without it (libfabric "
                              "was not found when it was configured)");
        return NULL;
#endif
    case PT_TRANSPORT_AUTO:
#if PT_TABLE_HAS_FABRIC
        if (pt_fabric_reaches(peer_world))
            return &pt_fabric_transport;
#endif
        return &pt_mpi_transport;
    default:
        (void)err, (void)errlen;
        return &pt_mpi_transport;
    }
}

const pt_transport_ops *pt_transport_by_name(const char *name)
{
    for (int i = 0; i < NTRANSPORTS; i++)
        if (!strcmp(transports[i]->name, name))
            return transports[i];
    return NULL;
}

const pt_transport_ops *pt_transport_by_index(int64_t index)
{
    return index >= 0 && index < NTRANSPORTS ? transports[index] : NULL;
}

/* Every transport a build may have, at its index in `transports` when built
 * (the fabric is 1 wherever it is built): ranks compare their tables at init
 * and a receiver names what a set-up message asks for. */
static const char *const known[] = {"mpi", "fabric"};
#define NKNOWN ((int)(sizeof known / sizeof known[0]))

uint64_t pt_transports_built(void)
{
    uint64_t mask = 0;
    for (int i = 0; i < NTRANSPORTS; i++)
        for (int b = 0; b < NKNOWN; b++)
            if (!strcmp(transports[i]->name, known[b]))
                mask |= UINT64_C(1) << b;
    return mask;
}

const char *pt_transport_known_name(int b) { return b >= 0 && b < NKNOWN ? known[b] : NULL; }

const char *pt_transport_missing_why(int64_t index)
{
    if (index == 1 && !PT_TABLE_HAS_FABRIC)
        return "the sender uses the 'fabric' transport, which this libpartita was built without (libfabric was not "
               "found when it was configured): build both ranks' libpartita with libfabric, or set "
               "PARTITA_TRANSPORT=mpi for the sender";
    return "the sender uses a transport this libpartita does not know (its set-up message names a transport index "
           "out of range): both ranks must load the same libpartita";
}

int64_t pt_transport_index(const pt_transport_ops *ops)
{
    for (int i = 0; i < NTRANSPORTS; i++)
        if (transports[i] == ops)
            return i;
    return -1;
}

/* Every transport connects: a receiver may meet any of them. */
int pt_transports_init(char *err, size_t errlen)
{
    for (int i = 0; i < NTRANSPORTS; i++) {
        int rc = transports[i]->init(err, errlen);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

void pt_transports_finalize(void)
{
    for (int i = NTRANSPORTS - 1; i >= 0; i--)
        transports[i]->finalize();
}

static int pending_of(int with_self_progressed)
{
    for (int i = 0; i < NTRANSPORTS; i++) {
        const pt_transport_ops *t = transports[i];
        if (!with_self_progressed && t->self_progressed && t->self_progressed())
            continue;
        if (t->pending && t->pending())
            return 1;
    }
    return 0;
}

int pt_transports_pending(void) { return pending_of(1); }

int pt_transports_unattended(void) { return pending_of(0); }

void pt_transports_poll(void)
{
    for (int i = 0; i < NTRANSPORTS; i++)
        if (transports[i]->poll)
            transports[i]->poll();
}
