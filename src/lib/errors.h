/* Erroneous use is reported through the communicator's error handler with an
 * MPI error class that fits, and a message saying what went wrong. */
#ifndef PARTITA_ERRORS_H
#define PARTITA_ERRORS_H

#include <mpi.h>

typedef enum {
    PT_E_PARTITIONS,       /* partitions <= 0 */
    PT_E_COUNT,            /* count < 0 */
    PT_E_DATATYPE,         /* null or uncommitted datatype */
    PT_E_COMM,             /* null communicator */
    PT_E_COMM_UNKNOWN,     /* communicator without partita's private twin */
    PT_E_RANK,             /* peer out of range */
    PT_E_ANY_SOURCE,       /* MPI_ANY_SOURCE */
    PT_E_TAG,              /* tag out of range */
    PT_E_ANY_TAG,          /* MPI_ANY_TAG */
    PT_E_INFO,             /* bad partita_* info value */
    PT_E_PARTITION_RANGE,  /* partition index outside [0, partitions) */
    PT_E_PREADY_TWICE,     /* partition already marked ready this round */
    PT_E_PREADY_INACTIVE,  /* Pready before Start or after completion */
    PT_E_PREADY_RECV,      /* Pready on a receive request */
    PT_E_PARRIVED_SEND,    /* Parrived on a send request */
    PT_E_NOT_PARTITIONED,  /* Pready/Parrived on a request that is not partitioned */
    PT_E_START_ACTIVE,     /* Start on an active request */
    PT_E_FREE_ACTIVE,      /* Request_free on an active request */
    PT_E_CANCEL_ACTIVE,    /* Cancel on an active partitioned request */
    PT_E_TRUNCATE,         /* the sender sends more than the receive buffer holds */
    PT_E_SETUP,            /* malformed set-up message */
    PT_E_NOT_INITIALISED,  /* Partita_Init_hook was not called */
    PT_E_NO_MEM,
    PT_E_TAGS,             /* no free range of internal tags */
    PT_E_TOO_BIG,          /* a transport message over INT_MAX elements or bytes */
    PT_E_COUNT_KINDS
} pt_err;

/* Register the error codes and messages (after MPI_Init). */
int pt_errors_init(void);
/* The MPI error code of kind (a class when not registered). */
int pt_error_code(pt_err kind);
/* Call comm's error handler with kind; returns the code (when the handler returns). */
int pt_error(MPI_Comm comm, pt_err kind);
/* Pass an MPI error code from an internal call through comm's error handler. */
int pt_error_mpi(MPI_Comm comm, int code);

#endif
