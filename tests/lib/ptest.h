/* Helpers shared by the libpartita conformance tests: checks that count
 * failures, and the verdict every test prints at the end. Tests use the
 * standard MPI_* names and run against the interposer. */
#ifndef PARTITA_PTEST_H
#define PARTITA_PTEST_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int ptest_errors;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            int r_;                                                                            \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", r_, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            ptest_errors++;                                                                    \
        }                                                                                      \
    } while (0)

/* Sleep us microseconds (a stalled marking thread, a late partition). */
static inline void ptest_pause_us(long us)
{
    struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&t, NULL);
}

/* A clock in seconds: CLOCK_MONOTONIC for a test's own deadlines and
 * windows (ptest_now_s), CLOCK_THREAD_CPUTIME_ID for the calling thread's
 * CPU time. */
static inline double ptest_clock_s(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline double ptest_now_s(void) { return ptest_clock_s(CLOCK_MONOTONIC); }

/* Whether the run's PARTITA_POLICY is name (a test's expectations that
 * depend on the policy it is run under). */
static inline int ptest_policy_is(const char *name)
{
    const char *policy = getenv("PARTITA_POLICY");
    return policy && !strcmp(policy, name);
}

/* The number written just before `marker` in text (a count in libpartita's
 * Partita_Request_why, "... 4 writes in ..."); -1 when the marker or the
 * number is missing. */
static inline long ptest_number_before(const char *text, const char *marker)
{
    const char *end = strstr(text, marker), *n = end;
    while (n && n > text && n[-1] >= '0' && n[-1] <= '9')
        n--;
    return n && n < end ? strtol(n, NULL, 10) : -1;
}

/* An MPI call that must succeed. */
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s", #call)

/* The error class of an MPI return code. */
static inline int ptest_class(int code)
{
    int cls = code;
    if (code != MPI_SUCCESS)
        MPI_Error_class(code, &cls);
    return cls;
}

/* rc is of error class cls, and its message holds each of the
 * NULL-terminated strings (the call, the value, the valid range). */
static inline void ptest_expect_says(int rc, int cls, const char *what, ...)
{
    CHECK(ptest_class(rc) == cls, "%s: got class %d, expected %d", what, ptest_class(rc), cls);
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, text, &len);
    va_list ap;
    va_start(ap, what);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        CHECK(strstr(text, needle), "%s: the message \"%s\" does not say \"%s\"", what, text, needle);
    va_end(ap);
}

/* Sum the failures of all ranks, print the verdict on rank 0, finalize.
 * Returns the exit code. */
static inline int ptest_finish(const char *name)
{
    int total = 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&ptest_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf("%s: %d failed checks\n", name, total);
        else
            printf("%s: all checks passed\n", name);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

/* Bad command line: one line on rank 0, non-zero exit on all ranks. */
static inline void ptest_usage(const char *msg)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "%s\n", msg);
    MPI_Finalize();
    exit(2);
}

/* Options given as "-x VALUE" pairs: ints (atoi) and strings, by flag. An
 * unknown flag or one without its value is a usage error of `name`. */
typedef struct {
    const char *flag;
    int *value;
} ptest_int_option;
typedef struct {
    const char *flag;
    const char **value;
} ptest_text_option;

static inline void ptest_options(int argc, char **argv, const ptest_int_option *ints, size_t nints,
                                 const ptest_text_option *texts, size_t ntexts, const char *name)
{
    char msg[128];
    for (int i = 1; i + 1 < argc; i += 2) {
        int known = 0;
        for (size_t k = 0; k < nints; k++)
            if (!strcmp(argv[i], ints[k].flag))
                *ints[k].value = atoi(argv[i + 1]), known = 1;
        for (size_t k = 0; k < ntexts; k++)
            if (!strcmp(argv[i], texts[k].flag))
                *texts[k].value = argv[i + 1], known = 1;
        if (!known) {
            snprintf(msg, sizeof msg, "%s: unknown option", name);
            ptest_usage(msg);
        }
    }
    if (argc % 2 == 0) {
        snprintf(msg, sizeof msg, "%s: an option without its value", name);
        ptest_usage(msg);
    }
}

/* This process's rank in MPI_COMM_WORLD; a run on other than 2 ranks is a
 * usage error of the program `name`. */
static inline int ptest_pair_rank(const char *name)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: run with 2 ranks", name);
        ptest_usage(msg);
    }
    return rank;
}

/* A test of 2 ranks that takes no arguments: its rank; else its usage
 * ("usage: partita-test-PROGRAM") and exit. */
static inline int ptest_pair_rank_no_args(const char *name, const char *program, int argc)
{
    int rank = ptest_pair_rank(name);
    if (argc != 1) {
        char msg[128];
        snprintf(msg, sizeof msg, "usage: partita-test-%s", program);
        ptest_usage(msg);
    }
    return rank;
}

/* 1 when req is a partita request: the interposer took the call (looked up
 * at run time, so a test also works when partita is preloaded). */
/* PARTITA_TEST_NATIVE=1: the MPI library's own partitioned implementation is
 * under test (tests/trace runs these programs with the tracer alone), so no
 * request is expected to be partita's. */
static inline int ptest_is_partita(MPI_Request req)
{
    const char *native = getenv("PARTITA_TEST_NATIVE");
    if (native && native[0] == '1')
        return 1;
    int (*is)(MPI_Request) = (int (*)(MPI_Request))dlsym(RTLD_DEFAULT, "Partita_Is_partitioned");
    return is && is(req);
}

#define CHECK_PARTITA(req) CHECK(ptest_is_partita(req), "request is not partita's: is the interposer loaded?")

/* The pair's partitioned request: rank 0 sends to 1, rank 1 receives from 0. */
static inline void ptest_pair_request(int rank, void *buf, int parts, int count, MPI_Datatype type, int tag,
                                      MPI_Info info, MPI_Request *req)
{
    if (rank == 0)
        OK(MPI_Psend_init(buf, parts, count, type, 1, tag, MPI_COMM_WORLD, info, req));
    else
        OK(MPI_Precv_init(buf, parts, count, type, 0, tag, MPI_COMM_WORLD, info, req));
    CHECK_PARTITA(*req);
}

/* Sleep-free wait for a flag of a Parrived loop: spins on MPI_Parrived only. */
static inline void ptest_parrived_loop(MPI_Request req, int partition)
{
    int flag = 0;
    while (!flag)
        MPI_Parrived(req, partition, &flag);
}

#endif
