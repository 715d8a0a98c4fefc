/* Aggregation settings of a request: the global defaults from the environment,
 * overridden per request by MPI_Info keys. */
#ifndef PARTITA_SETTINGS_H
#define PARTITA_SETTINGS_H

#include <mpi.h>
#include <stddef.h>

typedef enum {
    PT_POLICY_NONE,   /* one transport message per user partition (over MPI past the eager limit: its eager pieces) */
    PT_POLICY_BULK,   /* one message when every partition is ready */
    PT_POLICY_STATIC, /* consecutive partitions grouped up to min_bytes */
    PT_POLICY_MODEL,  /* the PLogGP model picks the message count */
    PT_POLICY_TIMER,  /* model groups, plus flushing ready runs after delta */
    PT_POLICY_FIXED,  /* exactly transport_parts messages (capped at the partitions) */
    PT_POLICY_TABLE,  /* the tuning table's count, the model's when it has none */
    PT_POLICY_ADAPTIVE, /* the model's best few layouts tried online, the fastest kept (planner/adapt.h) */
    PT_POLICY_COUNT
} pt_policy;

/* Which transport a send request uses (PARTITA_TRANSPORT, info partita_transport). */
typedef enum {
    PT_TRANSPORT_MPI,    /* MPI point-to-point (the default) */
    PT_TRANSPORT_FABRIC, /* libfabric RMA; an error when it cannot serve the request */
    PT_TRANSPORT_AUTO,   /* the fabric when built and a provider reaches the peer, else MPI */
    PT_TRANSPORT_COUNT
} pt_transport_choice;

typedef struct pt_settings {
    pt_policy policy;
    size_t min_bytes;    /* static: smallest transport message */
    double delta_us;     /* timer: hold time of a partly ready group; < 0: from the model */
    double delay_us;     /* model/timer: expected delay of the last partition */
    int transport_parts; /* fixed: messages per round; 0: unset */
    int adapt;           /* adaptive: 1 adapt online, 0 plan once like model */
    pt_transport_choice transport;
    int background;      /* a progress thread runs (PARTITA_PROGRESS_THREAD=1): it can flush a
                            stalled group while the application computes */
} pt_settings;

const char *pt_policy_name(pt_policy p);
const char *pt_transport_choice_name(pt_transport_choice t);
/* Read the environment once. Returns 0, or -1 with a one-line message in err. */
int pt_settings_load_env(char *err, size_t errlen);
/* The environment's settings (pt_settings_load_env must have succeeded). */
const pt_settings *pt_settings_global(void);
/* The global settings overridden by the partita_* keys of info (may be
 * MPI_INFO_NULL). Returns 0, or -1 with a one-line message in err (-2 when
 * info is not a valid MPI_Info handle). */
int pt_settings_from_info(MPI_Info info, pt_settings *out, char *err, size_t errlen);

#endif
