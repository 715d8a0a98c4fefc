/* Helpers of the timer tests (timer_plan.c, timer_split.c): the built-in
 * LogGP parameters from a file of their own, so that the plans do not depend
 * on a file `partita loggp` saved on this machine, and one round of bytes
 * whose receiver checks every one. */
#ifndef PARTITA_PTEST_TIMER_H
#define PARTITA_PTEST_TIMER_H

#include <unistd.h>

#include "partita/model.h"
#include "ptest.h"

/* Where ptest_builtin_loggp writes the fabric transport's built-in set. */
static inline void ptest_fabric_loggp_path(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s.fabric.json", path);
}

/* Before MPI_Init: write the built-in parameters to path (and the fabric
 * transport's built-in set next to it) and point the library at them.
 * 0, or 1 after a message naming the test. */
static inline int ptest_builtin_loggp(const char *name, ptm_params *params, char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/partita-%s-%ld.json", tmp && *tmp ? tmp : "/tmp", name, (long)getpid());
    char err[256], fabric_path[600];
    ptm_params fabric;
    ptm_params_default(params);
    ptm_params_default_fabric(&fabric);
    ptest_fabric_loggp_path(path, fabric_path, sizeof fabric_path);
    if (ptm_params_save(path, params, NULL, err, sizeof err) != 0 ||
        ptm_params_save(fabric_path, &fabric, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 1;
    }
    setenv("PARTITA_LOGGP", path, 1);
    setenv("PARTITA_LOGGP_FABRIC", fabric_path, 1);
    return 0;
}

/* Remove the files ptest_builtin_loggp wrote. */
static inline void ptest_builtin_loggp_remove(const char *path)
{
    char fabric_path[600];
    ptest_fabric_loggp_path(path, fabric_path, sizeof fabric_path);
    unlink(path);
    unlink(fabric_path);
}

static inline unsigned char ptest_byte(size_t i, int tag) { return (unsigned char)(i * 7 + (size_t)tag); }

static inline void ptest_fill(unsigned char *buf, size_t total, int tag)
{
    for (size_t i = 0; i < total; i++)
        buf[i] = ptest_byte(i, tag);
}

/* Rank 1: receive one round of total bytes in parts partitions from rank 0. */
static inline void ptest_recv_start(unsigned char *buf, size_t total, int parts, int tag, MPI_Request *req)
{
    memset(buf, 0, total);
    OK(MPI_Precv_init(buf, parts, (int)(total / (size_t)parts), MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                      req));
    OK(MPI_Start(req));
}

/* The timer policy's request pair of total bytes in parts partitions, rank 0
 * sending (its buffer filled) to rank 1; transport: the partita_transport
 * info key, or NULL for the default. */
static inline void ptest_timer_pair(unsigned char *buf, size_t total, int parts, int tag, int rank,
                                    const char *transport, MPI_Request *req)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "timer");
    if (transport)
        MPI_Info_set(info, "partita_transport", transport);
    int count = (int)(total / (size_t)parts);
    if (rank == 0) {
        ptest_fill(buf, total, tag);
        OK(MPI_Psend_init(buf, parts, count, MPI_BYTE, 1, tag, MPI_COMM_WORLD, info, req));
    } else {
        OK(MPI_Precv_init(buf, parts, count, MPI_BYTE, 0, tag, MPI_COMM_WORLD, info, req));
    }
    MPI_Info_free(&info);
}

/* Rank 1, after the round: every byte as rank 0 filled it. */
static inline void ptest_check_bytes(const unsigned char *buf, size_t total, int tag, const char *what)
{
    size_t wrong = 0;
    for (size_t i = 0; i < total; i++)
        wrong += buf[i] != ptest_byte(i, tag);
    CHECK(wrong == 0, "%s, %zu bytes: %zu wrong bytes", what, total, wrong);
}

#endif
