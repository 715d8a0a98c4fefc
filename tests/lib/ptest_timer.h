/* Helpers of the timer tests (timer_plan.c, timer_split.c): the built-in
 * LogGP parameters from a file of their own, so that the plans do not depend
 * on a file `partita loggp` saved on this machine, and one round of bytes
 * whose receiver checks every one. */
#ifndef PARTITA_PTEST_TIMER_H
#define PARTITA_PTEST_TIMER_H

#include <unistd.h>

#include "partita/model.h"
#include "ptest.h"

/* Before MPI_Init: write the built-in parameters to path and point the
 * library at it. 0, or 1 after a message naming the test. */
static inline int ptest_builtin_loggp(const char *name, ptm_params *params, char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/partita-%s-%ld.json", tmp && *tmp ? tmp : "/tmp", name, (long)getpid());
    char err[256];
    ptm_params_default(params);
    if (ptm_params_save(path, params, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 1;
    }
    setenv("PARTITA_LOGGP", path, 1);
    return 0;
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

/* Rank 1, after the round: every byte as rank 0 filled it. */
static inline void ptest_check_bytes(const unsigned char *buf, size_t total, int tag, const char *what)
{
    size_t wrong = 0;
    for (size_t i = 0; i < total; i++)
        wrong += buf[i] != ptest_byte(i, tag);
    CHECK(wrong == 0, "%s, %zu bytes: %zu wrong bytes", what, total, wrong);
}

#endif
