/* Erroneous use is reported through the communicator's error handler with an
 * MPI error class that fits, and a message naming the MPI call, the offending
 * value and the valid range. */
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
    PT_E_INFO_HANDLE,      /* info is not an MPI_Info */
    PT_E_BUFFER,           /* NULL buffer with data to move */
    PT_E_PARTITION_RANGE,  /* partition index outside [0, partitions) */
    PT_E_LENGTH,           /* negative Pready_list length */
    PT_E_NULL_ARG,         /* a NULL pointer where the call writes or reads a value */
    PT_E_PREADY_TWICE,     /* partition already marked ready this round */
    PT_E_PREADY_INACTIVE,  /* Pready before Start or after completion */
    PT_E_PREADY_RECV,      /* Pready on a receive request */
    PT_E_PARRIVED_SEND,    /* Parrived on a send request */
    PT_E_NOT_PARTITIONED,  /* Pready/Parrived on a request that is not partitioned */
    PT_E_START_ACTIVE,     /* Start on an active request */
    PT_E_FREE_ACTIVE,      /* Request_free on an active request */
    PT_E_CANCEL_ACTIVE,    /* Cancel on an active partitioned request */
    PT_E_TRUNCATE,         /* the sender sends more than the receive buffer holds */
    PT_E_SHORT,            /* the sender sends less than the receive buffer holds */
    PT_E_SETUP,            /* malformed set-up message */
    PT_E_NOT_INITIALISED,  /* Partita_Init_hook was not called */
    PT_E_NO_MEM,
    PT_E_TAGS,             /* no free range of internal tags */
    PT_E_TOO_BIG,          /* a transport message over INT_MAX elements or bytes */
    PT_E_INTERNAL,         /* an internal MPI call failed (deferred: r->error_code holds its code) */
    PT_E_TRANSPORT,        /* the chosen transport cannot serve the request (deferred: r->error_call says why) */
    PT_E_COUNT_KINDS
} pt_err;

/* Whether a receive's deferred error stops its round's data. The sizes'
 * mismatches do not: what the sender sends is delivered (as far as the
 * receive holds it) and the error is reported when the round completes. */
static inline int pt_recv_error_stops(int error) { return error && error != PT_E_TRUNCATE && error != PT_E_SHORT; }

/* Register the error codes and messages (after MPI_Init). */
int pt_errors_init(void);
/* The MPI error code of kind (a class when not registered). */
int pt_error_code(pt_err kind);
/* Call comm's error handler with kind and the message "partita: <call>:
 * <detail>" (printf-style); returns the code (when the handler returns).
 * The message stays the kind's error string until the next error of that
 * kind replaces it. */
int pt_fail(MPI_Comm comm, pt_err kind, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An internal MPI call (`internal`) failed with `code` during `call`: report
 * the code's class with a message naming both, never the internal call's own
 * error stack. */
int pt_fail_mpi(MPI_Comm comm, int code, const char *call, const char *internal);
/* An error code of code's class whose string names call and internal,
 * without calling an error handler (for statuses and deferred reports). */
int pt_mpi_code(int code, const char *call, const char *internal);

/* Arguments of the request calls (Start*, Wait*, Test*, Request_*, Cancel),
 * which have no communicator: a NULL pointer where the call reads or writes
 * (`name` is the argument) is MPI_ERR_ARG, a negative count MPI_ERR_COUNT,
 * through MPI_COMM_SELF's handler and never a crash. pt_check_array checks a
 * request array and its count; each returns MPI_SUCCESS or the error code. */
int pt_fail_null(const char *call, const char *name);
int pt_check_array(const char *call, int count, const MPI_Request reqs[]);

/* The public MPI call this thread is in, for errors found deep inside it
 * (set by the entry points; the hot MPI_Pready passes its name directly). */
extern _Thread_local const char *pt_call __attribute__((tls_model("initial-exec")));
static inline void pt_enter(const char *call) { pt_call = call; }
static inline const char *pt_call_name(void) { return pt_call ? pt_call : "partita progress"; }

#endif
