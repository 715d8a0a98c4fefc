/* Error codes: one per kind of misuse, each with its own message, added to
 * the fitting MPI error class, so a fatal handler prints what went wrong and
 * MPI_Error_class() still gives the class. */
#include "errors.h"

static const struct {
    int cls;
    const char *text;
} kinds[PT_E_COUNT_KINDS] = {
    [PT_E_PARTITIONS] = { MPI_ERR_ARG, "partita: the number of partitions must be at least 1" },
    [PT_E_COUNT] = { MPI_ERR_COUNT, "partita: the count per partition must not be negative" },
    [PT_E_DATATYPE] = { MPI_ERR_TYPE, "partita: invalid or uncommitted datatype" },
    [PT_E_COMM] = { MPI_ERR_COMM, "partita: invalid communicator" },
    [PT_E_COMM_UNKNOWN] = { MPI_ERR_COMM,
                            "partita: communicator unknown to partita (made by a constructor it "
                            "does not intercept, or Partita_Comm_attach was not called)" },
    [PT_E_RANK] = { MPI_ERR_RANK, "partita: peer rank out of range" },
    [PT_E_ANY_SOURCE] = { MPI_ERR_RANK, "partita: MPI_ANY_SOURCE is not allowed in partitioned communication" },
    [PT_E_TAG] = { MPI_ERR_TAG, "partita: tag out of range" },
    [PT_E_ANY_TAG] = { MPI_ERR_TAG, "partita: MPI_ANY_TAG is not allowed in partitioned communication" },
    [PT_E_INFO] = { MPI_ERR_INFO_VALUE, "partita: invalid partita_* info value" },
    [PT_E_PARTITION_RANGE] = { MPI_ERR_ARG, "partita: partition index outside [0, partitions)" },
    [PT_E_PREADY_TWICE] = { MPI_ERR_ARG, "partita: partition already marked ready in this round" },
    [PT_E_PREADY_INACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Pready on an inactive request (not started)" },
    [PT_E_PREADY_RECV] = { MPI_ERR_REQUEST, "partita: MPI_Pready on a partitioned receive request" },
    [PT_E_PARRIVED_SEND] = { MPI_ERR_REQUEST, "partita: MPI_Parrived on a partitioned send request" },
    [PT_E_NOT_PARTITIONED] = { MPI_ERR_REQUEST, "partita: the request is not a partitioned request" },
    [PT_E_START_ACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Start on an active partitioned request" },
    [PT_E_FREE_ACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Request_free on an active partitioned request" },
    [PT_E_CANCEL_ACTIVE] = { MPI_ERR_REQUEST, "partita: MPI_Cancel on an active partitioned request" },
    [PT_E_TRUNCATE] = { MPI_ERR_TRUNCATE, "partita: the sender sends more data than the partitioned receive holds" },
    [PT_E_SETUP] = { MPI_ERR_OTHER, "partita: malformed set-up message from the sender" },
    [PT_E_NOT_INITIALISED] = { MPI_ERR_OTHER, "partita: not initialised (call Partita_Init_hook after MPI_Init)" },
    [PT_E_NO_MEM] = { MPI_ERR_NO_MEM, "partita: out of memory" },
    [PT_E_TAGS] = { MPI_ERR_OTHER, "partita: no free range of internal tags" },
    [PT_E_TOO_BIG] = { MPI_ERR_COUNT,
                       "partita: a transport message would exceed INT_MAX elements or bytes "
                       "(use more transport partitions)" },
};

static int codes[PT_E_COUNT_KINDS];
static int registered;

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

int pt_error_mpi(MPI_Comm comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, code);
    return code;
}

int pt_error(MPI_Comm comm, pt_err kind) { return pt_error_mpi(comm, pt_error_code(kind)); }
