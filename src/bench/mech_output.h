/* The results of partita-mech and how they are written (text, JSON, CSV) on rank 0. */
#ifndef PT_MECH_OUTPUT_H
#define PT_MECH_OUTPUT_H
#include <stdio.h>

#include "harness/bench.h"
#include "harness/clocksync.h"
#include "mech_cli.h"

#define MECH_NMETRICS 3 /* bandwidth, time_us, sender_time_us */

/* One (B, P) pair of the plan, or why it is skipped. */
typedef struct mech_case {
    size_t bytes;
    int P;             /* 0 when a --partition-size does not fit the buffer */
    size_t part_bytes; /* 0 when B is not a multiple of P */
    const char *skip;
} mech_case;

/* One mechanism of one (B, P, scheme) case, as the sender sees it after the run. */
typedef struct mech_result {
    mech_kind kind;
    double *v[MECH_NMETRICS]; /* per-iteration samples: bandwidth, time_us, sender_time_us */
    int errors;
} mech_result;

typedef struct mech_out {
    FILE *f;
    int format; /* PT_FORMAT_* */
    pt_json j;
} mech_out;

/* The opening: text preamble and column header, JSON head and config, or CSV header. */
void mech_write_head(mech_out *o, const pt_ctx *ctx, const mech_config *cfg, const pt_clock_offset *clk,
                     const int *kinds, int nk);
void mech_write_result(mech_out *o, const pt_ctx *ctx, const mech_config *cfg, const mech_case *mc,
                       mech_scheme scheme, const mech_result *r);
void mech_write_skipped(mech_out *o, const mech_config *cfg, const mech_case *mc);
void mech_write_tail(mech_out *o);

#endif
