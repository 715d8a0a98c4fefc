/* The transports a request can use, by name. The sender picks one at init
 * (pt_transport_default); the set-up message names it by its index here, and
 * the receiver uses the same. A new transport adds a line to `transports`. */
#include <string.h>

#include <mpi.h>

#include "transport/mpi/mpi_transport.h"
#include "transport/transport.h"

static const pt_transport_ops *const transports[] = { &pt_mpi_transport };
#define NTRANSPORTS ((int)(sizeof transports / sizeof transports[0]))

/* The one every sender uses. A setting naming it (PARTITA_TRANSPORT) would be
 * read in pt_transports_init, with pt_transport_by_name, and a bad name
 * reported through its err buffer, which stops Partita_Init_hook. */
static const pt_transport_ops *chosen = &pt_mpi_transport;

const pt_transport_ops *pt_transport_default(void) { return chosen; }

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
