/* Set-up and tear-down: MPI_Init / MPI_Init_thread (settings, buffers) and
 * MPI_Finalize (the clock offset, the file). PARTITA_TRACE=dir turns tracing
 * on; unset, the library only passes calls on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interpose/abort_output.h"
#include "trace.h"

int ptr_active;
int64_t ptr_init_ns, ptr_finalize_ns;
static const char *trace_dir;

static int (*next_Init)(int *, char ***);
static int (*next_Init_thread)(int *, char ***, int, int *);
static int (*next_Finalize)(void);

__attribute__((constructor)) static void resolve(void)
{
    next_Init = (int (*)(int *, char ***))ptr_next("MPI_Init");
    next_Init_thread = (int (*)(int *, char ***, int, int *))ptr_next("MPI_Init_thread");
    next_Finalize = (int (*)(void))ptr_next("MPI_Finalize");
}

void ptr_after_init(void)
{
    ptr_init_ns = pt_now_ns();
    trace_dir = getenv("PARTITA_TRACE");
    if (!trace_dir || !*trace_dir)
        return;
    char err[256] = "cannot allocate the request registry";
    /* only `monotonic` has a meaning: a typo must not silently keep the TSC */
    const char *clock = getenv("PARTITA_TRACE_CLOCK");
    int bad_clock = clock && *clock && strcmp(clock, "monotonic") != 0;
    if (bad_clock)
        snprintf(err, sizeof err, "PARTITA_TRACE_CLOCK='%s' is not 'monotonic' (unset: the TSC where usable)", clock);
    /* The folder is made now: a run must not end, perhaps hours later, with
     * its trace lost and an exit status of 0 from a program that ignores
     * MPI_Finalize's error. */
    if (bad_clock || ptr_events_setup(getenv("PARTITA_TRACE_EVENTS"), err, sizeof err) != 0 ||
        ptr_registry_setup() != 0 || ptr_dir_ready(trace_dir, err, sizeof err) != 0) {
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            fprintf(stderr, "partita-trace: error: %s\n", err);
        } else {
            /* Rank 0 prints first (when it has the same error, its abort ends this rank
             * during the wait: one line). When only this rank has it (an environment that
             * differs per rank), rank 0 runs on, and this rank must say why it stops. */
            sleep(2);
            fprintf(stderr, "partita-trace: error (rank %d): %s\n", rank, err);
        }
        pt_let_launcher_forward_output();
        PMPI_Abort(MPI_COMM_WORLD, 1);
        exit(1); /* an abort that returns must not let the program run untraced */
    }
    ptr_ticks_setup();
    ptr_active = 1;
}

PTR_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = next_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        ptr_after_init();
    return rc;
}

PTR_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = next_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        ptr_after_init();
    return rc;
}

int ptr_before_finalize(void)
{
    ptr_finalize_ns = pt_now_ns();
    if (!ptr_active)
        return MPI_SUCCESS;
    ptr_active = 0; /* once only */
    ptr_ticks_finish();
    /* totals first: what the offset estimate below sends is not counted */
    int64_t time_ns[CAT_COUNT] = {0}, calls[CAT_COUNT] = {0};
    for (int i = 0; i < ptr_thread_count(); i++)
        for (int c = 0; c < CAT_COUNT; c++) {
            time_ns[c] += ptr_ticks_span_ns(ptr_thread_slot(i)->time_ns[c]);
            calls[c] += ptr_thread_slot(i)->calls[c];
        }
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    ptr_clock clock;
    ptr_clock_offset(&clock);
    return ptr_write(trace_dir, rank, size, &clock, time_ns, calls) == 0 ? MPI_SUCCESS : MPI_ERR_FILE;
}

/* A folder that became unwritable after MPI_Init (checked there) cannot
 * change the program's exit status: the file is not written, one line on
 * stderr names it, and MPI_Finalize returns MPI_ERR_FILE after finalizing
 * MPI. */
PTR_EXPORT int MPI_Finalize(void)
{
    int traced = ptr_before_finalize();
    int rc = next_Finalize();
    return rc != MPI_SUCCESS ? rc : traced;
}
