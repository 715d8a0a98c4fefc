/* Error codes: one per kind of misuse, added to the fitting MPI error class,
 * so MPI_Error_class() gives the class and a fatal handler prints what went
 * wrong. The code's string is set at each error to a message naming the MPI
 * call, the offending value and the valid range (MPI_Add_error_string
 * replaces a code's string). Failures of partita's internal MPI calls are
 * reported with a code of their class and a message of our own: the
 * internal call's error stack would only confuse. */
#include "request/errors.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

_Thread_local const char *pt_call __attribute__((tls_model("initial-exec")));

static const struct {
    int cls;
    const char *text;
} kinds[PT_E_COUNT_KINDS] = {
    [PT_E_PARTITIONS] = { MPI_ERR_ARG, "partita: the number of partitions must be at least 1" },
    [PT_E_COUNT] = { MPI_ERR_COUNT, "partita: negative count" },
    [PT_E_DATATYPE] = { MPI_ERR_TYPE, "partita: invalid or uncommitted datatype" },
    [PT_E_COMM] = { MPI_ERR_COMM, "partita: invalid communicator" },
    [PT_E_COMM_UNKNOWN] = { MPI_ERR_COMM, "partita: communicator unknown to partita" },
    [PT_E_RANK] = { MPI_ERR_RANK, "partita: peer rank out of range" },
    [PT_E_ANY_SOURCE] = { MPI_ERR_RANK, "partita: MPI_ANY_SOURCE is not allowed in partitioned communication" },
    [PT_E_TAG] = { MPI_ERR_TAG, "partita: tag out of range" },
    [PT_E_ANY_TAG] = { MPI_ERR_TAG, "partita: MPI_ANY_TAG is not allowed in partitioned communication" },
    [PT_E_INFO] = { MPI_ERR_INFO_VALUE, "partita: invalid partita_* info value" },
    [PT_E_INFO_HANDLE] = { MPI_ERR_INFO, "partita: invalid MPI_Info handle" },
    [PT_E_BUFFER] = { MPI_ERR_BUFFER, "partita: NULL buffer with a nonzero count" },
    [PT_E_PARTITION_RANGE] = { MPI_ERR_ARG, "partita: partition index outside [0, partitions)" },
    [PT_E_LENGTH] = { MPI_ERR_ARG, "partita: negative list length" },
    [PT_E_NULL_ARG] = { MPI_ERR_ARG, "partita: a NULL pointer argument" },
    [PT_E_PREADY_TWICE] = { MPI_ERR_ARG, "partita: partition already marked ready in this round" },
    [PT_E_PREADY_INACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Pready on an inactive request (not started)" },
    [PT_E_PREADY_RECV] = { MPI_ERR_REQUEST, "partita: MPI_Pready on a partitioned receive request" },
    [PT_E_PARRIVED_SEND] = { MPI_ERR_REQUEST, "partita: MPI_Parrived on a partitioned send request" },
    [PT_E_NOT_PARTITIONED] = { MPI_ERR_REQUEST, "partita: the request is not a partitioned request" },
    [PT_E_START_ACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Start on an active partitioned request" },
    [PT_E_FREE_ACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Request_free on an active partitioned request" },
    [PT_E_CANCEL_ACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Cancel on an active partitioned request" },
    [PT_E_TRUNCATE] = { MPI_ERR_TRUNCATE, "partita: the sender sends more data than the partitioned receive holds" },
    /* MPI_ERR_OTHER, as MPICH's own partitioned path reports it: no data is lost, but partitions stay empty. */
    [PT_E_SHORT] = { MPI_ERR_OTHER, "partita: the sender sends less data than the partitioned receive holds" },
    [PT_E_SETUP] = { MPI_ERR_OTHER, "partita: malformed set-up message from the sender" },
    [PT_E_NOT_INITIALISED] = { MPI_ERR_OTHER, "partita: not initialised (call Partita_Init_hook after MPI_Init)" },
    [PT_E_NO_MEM] = { MPI_ERR_NO_MEM, "partita: out of memory" },
    [PT_E_TAGS] = { MPI_ERR_OTHER, "partita: no free range of internal tags" },
    [PT_E_TOO_BIG] = { MPI_ERR_COUNT, "partita: a transport message would exceed INT_MAX elements or bytes" },
    [PT_E_INTERNAL] = { MPI_ERR_INTERN, "partita: an internal MPI call failed" },
    [PT_E_TRANSPORT] = { MPI_ERR_OTHER, "partita: the transport cannot serve the request" },
};

static int codes[PT_E_COUNT_KINDS];
static int registered;
/* Codes for internal failures, one per MPI error class, made on first use. */
#define MAX_CLASSES 128
static int class_codes[MAX_CLASSES];
/* Setting a code's string and reading the class table. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int pt_errors_init(void)
{
    if (registered)
        return MPI_SUCCESS;
    for (int k = 0; k < PT_E_COUNT_KINDS; k++) {
        int code;
        if (PMPI_Add_error_code(kinds[k].cls, &code) != MPI_SUCCESS ||
            PMPI_Add_error_string(code, (char *)kinds[k].text) != MPI_SUCCESS)
            code = kinds[k].cls; /* still a fitting class, just without our message */
        codes[k] = code;
    }
    registered = 1;
    return MPI_SUCCESS;
}

int pt_error_code(pt_err kind) { return registered ? codes[kind] : kinds[kind].cls; }

/* Set code's string (only codes partita added; a class keeps MPI's own). */
static void set_text(int code, int ours, const char *text)
{
    if (ours)
        PMPI_Add_error_string(code, (char *)text);
}

static int call_handler(MPI_Comm comm, int code)
{
    PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, code);
    return code;
}

int pt_fail(MPI_Comm comm, pt_err kind, const char *call, const char *fmt, ...)
{
    char text[MPI_MAX_ERROR_STRING];
    int n = snprintf(text, sizeof text, "partita: %s: ", call);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof text)
        vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    int code = pt_error_code(kind);
    pthread_mutex_lock(&lock);
    set_text(code, registered && code != kinds[kind].cls, text);
    pthread_mutex_unlock(&lock);
    return call_handler(comm, code);
}

int pt_fail_null(const char *call, const char *name)
{
    return pt_fail(MPI_COMM_SELF, PT_E_NULL_ARG, call, "%s is NULL", name);
}

int pt_check_array(const char *call, int count, const MPI_Request reqs[])
{
    if (count < 0)
        return pt_fail(MPI_COMM_SELF, PT_E_COUNT, call, "count = %d, must be >= 0", count);
    if (count > 0 && !reqs)
        return pt_fail(MPI_COMM_SELF, PT_E_NULL_ARG, call, "array_of_requests is NULL with count = %d", count);
    return MPI_SUCCESS;
}

int pt_mpi_code(int code, const char *call, const char *internal)
{
    int cls = MPI_ERR_INTERN;
    if (PMPI_Error_class(code, &cls) != MPI_SUCCESS || cls <= MPI_SUCCESS || cls >= MAX_CLASSES)
        cls = MPI_ERR_INTERN;
    char name[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    PMPI_Error_string(cls, name, &len);
    char text[MPI_MAX_ERROR_STRING];
    snprintf(text, sizeof text, "partita: %s: internal call %s failed: %s", call, internal, name);
    pthread_mutex_lock(&lock);
    if (!class_codes[cls] && registered && PMPI_Add_error_code(cls, &class_codes[cls]) != MPI_SUCCESS)
        class_codes[cls] = 0;
    int out = class_codes[cls] ? class_codes[cls] : cls;
    set_text(out, class_codes[cls] != 0, text);
    pthread_mutex_unlock(&lock);
    return out;
}

int pt_fail_mpi(MPI_Comm comm, int code, const char *call, const char *internal)
{
    if (code == MPI_SUCCESS)
        return code;
    return call_handler(comm, pt_mpi_code(code, call, internal));
}
