/* LD_PRELOAD="libpartita-mpi.so libpartita-trace.so": libpartita's MPI_*
 * definitions come first, so the program's partitioned calls would never reach
 * the tracer (libpartita calls the MPI library through PMPI_* only). Before
 * main, while no MPI exists yet, the tracer then executes the program once
 * more with itself moved to the front of LD_PRELOAD: both orders record the
 * same events. PARTITA_TRACE_REEXEC marks the second execution (and, set to 0
 * by the user, turns this off: libpartita then also takes MPI_Init and
 * MPI_Finalize, nothing is recorded, and the tracer says so on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

static int is_named(const char *entry, size_t len, const char *stem)
{
    const char *base = entry;
    for (size_t i = 0; i < len; i++)
        if (entry[i] == '/')
            base = entry + i + 1;
    return strncmp(base, stem, strlen(stem)) == 0;
}

/* Moves the tracer's entry of LD_PRELOAD (separated by ':' or ' ') to the front
 * when a libpartita-mpi entry precedes it; 1 if out was filled. */
static int tracer_first(const char *preload, char *out, size_t outlen)
{
    const char *trace = NULL, *partita = NULL;
    size_t trace_len = 0;
    for (const char *p = preload; *p;) {
        size_t len = strcspn(p, ": ");
        if (len && is_named(p, len, "libpartita-mpi") && !partita)
            partita = p;
        if (len && is_named(p, len, "libpartita-trace") && !trace) {
            trace = p;
            trace_len = len;
        }
        p += len;
        p += *p != 0;
    }
    if (!trace || !partita || partita > trace || strlen(preload) + 2 > outlen)
        return 0;
    snprintf(out, outlen, "%.*s:%.*s", (int)trace_len, trace, (int)(trace - preload), preload);
    strcat(out, trace + trace_len + (trace[trace_len] != 0));
    size_t n = strlen(out);
    while (n && (out[n - 1] == ':' || out[n - 1] == ' '))
        out[--n] = 0;
    return 1;
}

__attribute__((constructor)) static void check_order(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)envp;
    const char *preload = getenv("LD_PRELOAD"), *dir = getenv("PARTITA_TRACE");
    char fixed[8192];
    if (!preload || !dir || !*dir || !tracer_first(preload, fixed, sizeof fixed))
        return;
    const char *again = getenv("PARTITA_TRACE_REEXEC");
    if (!again && argv) {
        setenv("LD_PRELOAD", fixed, 1);
        setenv("PARTITA_TRACE_REEXEC", "1", 1);
        execv("/proc/self/exe", argv);
    }
    fprintf(stderr, "partita-trace: warning: libpartita-mpi.so precedes libpartita-trace.so in LD_PRELOAD; "
                    "nothing is recorded (put libpartita-trace.so first)\n");
}
