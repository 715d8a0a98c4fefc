/* The command line of partita-mech: its configuration and option table. */
#ifndef PT_MECH_CLI_H
#define PT_MECH_CLI_H
#include <stddef.h>

#include "harness/bench.h"
#include "mech_schedule.h"
#include "mech_transfer.h"

/* A list of names chosen from a fixed table (mechanisms, schemes): indices. */
typedef struct mech_name_list {
    const char *const *choices; /* NULL-terminated canonical names */
    int n;
    int v[8];
} mech_name_list;

typedef struct mech_byte_list {
    int n;
    size_t v[PT_INT_LIST_MAX];
} mech_byte_list;

typedef struct mech_config {
    pt_common c;
    pt_size_range sizes;
    pt_int_list parts;         /* --partitions (n == 0: not given) */
    mech_byte_list part_sizes; /* --partition-size (n == 0: not given) */
    mech_name_list mechs;      /* n == 0: every available mechanism */
    mech_name_list schemes;
    int seed;
    const pt_option *seed_option; /* its given: --seed was on the command line */
} mech_config;

extern const char *const mech_scheme_names[]; /* NULL-terminated, in mech_scheme order */

/* Fill cli and the defaults of cfg. */
void mech_configure(pt_cli *cli, mech_config *cfg);

#endif
