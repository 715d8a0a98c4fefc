/* LogGP parameter sets: built-in defaults, the partita.loggp/1 file (read,
 * check, write) and the default file location shared by the CLI and libpartita. */
#include "partita/model.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SOURCE "built-in defaults"

static void set_defaults(ptm_params *p, const ptm_segment *eager, const ptm_segment *large, const char *what)
{
    memset(p, 0, sizeof *p);
    p->nseg = 2;
    p->seg[0] = *eager;
    p->seg[1] = *large;
    p->o_pready = 0.0;
    p->max_eager_messages = PTM_MAX_EAGER_MESSAGES;
    snprintf(p->source, sizeof p->source, "%s", what);
}

void ptm_params_default(ptm_params *p)
{
    /* Measured with partita-loggp (--api isend: receives posted ahead and
     * completed by polling MPI_Test in order, as libpartita does; medians, 4
     * passes) between two ranks of MPICH 5.0 on a 2-core shared-memory node;
     * rounded. Good enough to rank candidate layouts when no measured file is
     * present. The eager segment ends at the protocol switch, found by a
     * ping-pong between the powers of two: 8112 bytes 1.39 us a way, 8120
     * bytes 2.2 us (the last eager power of two, 4 KiB, would make 64 KiB
     * 16 pieces where 9 suffice). */
    static const ptm_segment eager = {
        .max_bytes = 8112, .L = 0.46, .o_s = 0.07, .o_r = 0.10, .g = 0.10, .G = 3.0e-5, .handshake_us = 0
    };
    static const ptm_segment large = {
        .max_bytes = SIZE_MAX, .L = 0.46, .o_s = 0.2, .o_r = 1.5, .g = 1.55, .G = 7.9e-5, .handshake_us = 0.45
    };
    set_defaults(p, &eager, &large, DEFAULT_SOURCE);
}

void ptm_params_default_fabric(ptm_params *p)
{
    /* partita-loggp --transport fabric (fi_writedata with remote CQ data,
     * libfabric 1.17's shm provider, medians of 3 passes) between two ranks
     * of the 2-core node partita was developed on; rounded. Without it a
     * fabric request planned with the MPI set, whose cheap eager pieces do
     * not exist over RMA writes: 64 KiB in 64 partitions as 10 writes took
     * 3.9x one MPI_Send, as one write 1.2x (side by side, one launch).
     * The probe now also measures writes in pieces, a third segment (4-16 KiB
     * over shm) in which 8 writes of 8 KiB look cheaper than one of 64 KiB.
     * With that segment 64-128 KiB in 8-64 partitions go as bursts of 8
     * writes in pieces: 5-20% faster than one write in the median of most
     * campaigns, but 2-3x slower in about one launch of seven, where one
     * write never was (docs/library.md), so the built-in set keeps its two
     * segments and one write there. */
    static const ptm_segment small = {
        .max_bytes = 4096, .L = 0.05, .o_s = 0.16, .o_r = 0.14, .g = 0.28, .G = 9.4e-5, .handshake_us = 0
    };
    static const ptm_segment large = {
        .max_bytes = SIZE_MAX, .L = 0.05, .o_s = 0.17, .o_r = 1.57, .g = 1.95, .G = 7.3e-5, .handshake_us = 2.5
    };
    set_defaults(p, &small, &large, DEFAULT_SOURCE " (fabric)");
}

void ptm_params_default_for(ptm_params *p, const char *mpi_version)
{
    if (!mpi_version || !strstr(mpi_version, "Open MPI")) {
        ptm_params_default(p);
        return;
    }
    /* The same measurement with Open MPI 5.0 (ob1/sm), whose powers of two
     * are eager up to 2 KiB. The switch itself, found by a ping-pong between
     * the powers of two: 4016 bytes move eagerly (0.45 us), 4024 take the
     * rendezvous (3.0 us; btl_sm_eager_limit 4096 counts the header). With
     * MPICH's 4 KiB limit partitions would be cut into rendezvous pieces. */
    static const ptm_segment eager = {
        .max_bytes = 4016, .L = 0.06, .o_s = 0.04, .o_r = 0.06, .g = 0.065, .G = 4.0e-5, .handshake_us = 0
    };
    static const ptm_segment large = {
        .max_bytes = SIZE_MAX, .L = 0.06, .o_s = 0.06, .o_r = 1.37, .g = 1.37, .G = 7.7e-5, .handshake_us = 0.44
    };
    set_defaults(p, &eager, &large, DEFAULT_SOURCE " (Open MPI)");
    /* No cliff at 16 here: 64 KiB in 32 partitions sent as 32 eager messages
     * took 0.65x one MPI_Send, as one message 1.11x; 64 messages of 1 KiB were
     * slower again (1.11x). */
    p->max_eager_messages = 32;
}

/* A cost beyond this (us, or us a byte for G) is no measurement: the model's
 * times overflow or lose every digit (the CLI's bound too). */
#define PTM_MAX_COST 1e9
static int plausible(double v) { return isfinite(v) && v >= 0 && v <= PTM_MAX_COST; }

int ptm_params_check(const ptm_params *p, char *err, size_t errlen)
{
    if (p->nseg < 1 || p->nseg > PTM_MAX_SEGMENTS) {
        snprintf(err, errlen, "needs 1 to %d segments, has %d", PTM_MAX_SEGMENTS, p->nseg);
        return -1;
    }
    if (!plausible(p->o_pready)) {
        snprintf(err, errlen, "o_pready is %g: not a plausible cost (a finite number in [0, 1e9])", p->o_pready);
        return -1;
    }
    if (p->max_eager_messages < 0 || p->max_eager_messages > PTM_MAX_EAGER_LIMIT) {
        snprintf(err, errlen, "max_eager_messages must be in [0, %d] (0: the default)", PTM_MAX_EAGER_LIMIT);
        return -1;
    }
    for (int i = 0; i < p->nseg; i++) {
        const ptm_segment *s = &p->seg[i];
        const double v[] = { s->L, s->o_s, s->o_r, s->g, s->G, s->handshake_us };
        static const char *names[] = { "L", "o_s", "o_r", "g", "G", "handshake_us" };
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
            if (!plausible(v[k])) {
                snprintf(err, errlen, "segment %d: %s is %g: not a plausible cost (a finite number in [0, 1e9])", i,
                         names[k], v[k]);
                return -1;
            }
        }
        if (s->max_bytes == 0 || (i > 0 && s->max_bytes <= p->seg[i - 1].max_bytes)) {
            snprintf(err, errlen, "segment %d: max_bytes must be > 0 and larger than the previous segment's", i);
            return -1;
        }
    }
    return 0;
}

const ptm_segment *ptm_segment_for(const ptm_params *p, size_t bytes)
{
    for (int i = 0; i < p->nseg - 1; i++)
        if (bytes <= p->seg[i].max_bytes)
            return &p->seg[i];
    return &p->seg[p->nseg - 1];
}

/* A required finite number member of a JSON object. */
static int get_number(const ptm_json *obj, const char *key, int required, double dflt, double *out,
                      const char *where, char *err, size_t errlen)
{
    const ptm_json *v = ptm_json_get(obj, key);
    if (!v) {
        if (required) {
            snprintf(err, errlen, "%s: missing \"%s\"", where, key);
            return -1;
        }
        *out = dflt;
        return 0;
    }
    if (v->type != PTM_JSON_NUMBER) {
        snprintf(err, errlen, "%s: \"%s\" must be a number", where, key);
        return -1;
    }
    *out = v->number;
    return 0;
}

static int params_from_json(const ptm_json *root, ptm_params *p, char *err, size_t errlen)
{
    if (!root || root->type != PTM_JSON_OBJECT) {
        snprintf(err, errlen, "top level must be a JSON object");
        return -1;
    }
    const ptm_json *schema = ptm_json_get(root, "schema");
    if (!schema || schema->type != PTM_JSON_STRING) {
        snprintf(err, errlen, "missing \"schema\" (expected \"%s\")", PTM_LOGGP_SCHEMA);
        return -1;
    }
    if (strcmp(schema->string, PTM_LOGGP_SCHEMA) != 0) {
        snprintf(err, errlen, "unsupported schema \"%.60s\" (expected \"%s\")", schema->string, PTM_LOGGP_SCHEMA);
        return -1;
    }
    const ptm_json *segs = ptm_json_get(root, "segments");
    if (!segs || segs->type != PTM_JSON_ARRAY || segs->count == 0) {
        snprintf(err, errlen, "\"segments\" must be a non-empty array");
        return -1;
    }
    if (segs->count > PTM_MAX_SEGMENTS) {
        snprintf(err, errlen, "too many segments (%zu, at most %d)", segs->count, PTM_MAX_SEGMENTS);
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->nseg = (int)segs->count;
    if (get_number(root, "o_pready", 0, 0.0, &p->o_pready, "top level", err, errlen))
        return -1;
    double burst;
    if (get_number(root, "max_eager_messages", 0, PTM_MAX_EAGER_MESSAGES, &burst, "top level", err, errlen))
        return -1;
    if (!(burst >= 1 && burst <= PTM_MAX_EAGER_LIMIT && burst == floor(burst))) {
        snprintf(err, errlen, "top level: \"max_eager_messages\" must be an integer in [1, %d]", PTM_MAX_EAGER_LIMIT);
        return -1;
    }
    p->max_eager_messages = (int)burst;
    for (size_t i = 0; i < segs->count; i++) {
        const ptm_json *s = &segs->items[i];
        ptm_segment *d = &p->seg[i];
        char where[32];
        snprintf(where, sizeof where, "segment %zu", i);
        if (s->type != PTM_JSON_OBJECT) {
            snprintf(err, errlen, "%s: must be an object", where);
            return -1;
        }
        if (get_number(s, "L", 1, 0, &d->L, where, err, errlen) ||
            get_number(s, "o_s", 1, 0, &d->o_s, where, err, errlen) ||
            get_number(s, "o_r", 1, 0, &d->o_r, where, err, errlen) ||
            get_number(s, "g", 1, 0, &d->g, where, err, errlen) ||
            get_number(s, "G", 1, 0, &d->G, where, err, errlen) ||
            get_number(s, "handshake_us", 0, 0.0, &d->handshake_us, where, err, errlen))
            return -1;
        const ptm_json *mb = ptm_json_get(s, "max_bytes");
        int last = i + 1 == segs->count;
        if (last && (!mb || mb->type == PTM_JSON_NULL)) {
            d->max_bytes = SIZE_MAX;
        } else if (mb && mb->type == PTM_JSON_NUMBER && mb->number >= 1 && mb->number < 9.0e15 &&
                   mb->number == floor(mb->number)) {
            /* The last segment covers every size above the one before: a bound there is
             * ignored, but one that is not above the previous is a file that lost its order. */
            if (last && i > 0 && (size_t)mb->number <= p->seg[i - 1].max_bytes) {
                snprintf(err, errlen, "%s: \"max_bytes\" %.0f is not larger than the previous segment's %zu", where,
                         mb->number, p->seg[i - 1].max_bytes);
                return -1;
            }
            d->max_bytes = last ? SIZE_MAX : (size_t)mb->number;
        } else {
            snprintf(err, errlen, "%s: \"max_bytes\" must be a positive integer%s", where,
                     last ? " or null" : "");
            return -1;
        }
    }
    return ptm_params_check(p, err, errlen);
}

int ptm_params_load(const char *path, ptm_params *p, char *err, size_t errlen)
{
    char why[300];
    if (!path || !*path) {
        snprintf(err, errlen, "no LogGP parameter file given");
        ptm_params_default(p);
        return -1;
    }
    ptm_json *root = ptm_json_parse_file(path, why, sizeof why);
    if (!root) {
        snprintf(err, errlen, "%s", why); /* already names the file */
        ptm_params_default(p);
        return -1;
    }
    int rc = params_from_json(root, p, why, sizeof why);
    ptm_json_free(root);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, why);
        ptm_params_default(p);
        return -1;
    }
    snprintf(p->source, sizeof p->source, "%s", path);
    return 0;
}

/* $env, else <config>/partita/<file> (XDG_CONFIG_HOME, else HOME/.config). */
static int config_path(const char *env_name, const char *file, char *buf, size_t buflen)
{
    const char *env = getenv(env_name);
    if (env && *env) {
        snprintf(buf, buflen, "%s", env);
        return 1;
    }
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg) {
        snprintf(buf, buflen, "%s/partita/%s", xdg, file);
        return 0;
    }
    const char *home = getenv("HOME");
    if (home && *home) {
        snprintf(buf, buflen, "%s/.config/partita/%s", home, file);
        return 0;
    }
    if (buflen)
        buf[0] = '\0';
    return -1;
}

int ptm_params_default_path(char *buf, size_t buflen) { return config_path("PARTITA_LOGGP", "loggp.json", buf, buflen); }

int ptm_params_transport_path(const char *transport, char *buf, size_t buflen)
{
    if (transport && !strcmp(transport, "fabric"))
        return config_path("PARTITA_LOGGP_FABRIC", "loggp-fabric.json", buf, buflen);
    return ptm_params_default_path(buf, buflen);
}

/* Load the file at path (from_env: named by the user, so its absence is worth a warning). */
static int load_path(ptm_params *p, const char *path, int from_env)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    char err[512];
    if (from_env < 0) {
        ptm_params_default(p);
        return 1;
    }
    FILE *probe = fopen(path, "rb");
    if (!probe && errno == ENOENT && !from_env) {
        ptm_params_default(p); /* nobody ran `partita loggp` yet: quietly use defaults */
        return 1;
    }
    if (probe)
        fclose(probe);
    if (ptm_params_load(path, p, err, sizeof err) == 0)
        return 0;
    if (!atomic_flag_test_and_set(&warned))
        fprintf(stderr, "partita: warning: cannot use LogGP parameters (%s); using built-in defaults\n", err);
    return -1;
}

int ptm_params_load_default(ptm_params *p)
{
    char path[1024];
    int from_env = ptm_params_default_path(path, sizeof path);
    return load_path(p, path, from_env);
}

int ptm_params_load_transport(ptm_params *p, const char *transport, const char *mpi_version)
{
    if (transport && !strcmp(transport, "fabric")) {
        char path[1024];
        int from_env = ptm_params_transport_path("fabric", path, sizeof path);
        if (load_path(p, path, from_env) == 0)
            return 0;
        ptm_params_default_fabric(p); /* not the MPI library's set: it says nothing about RMA writes */
        return 2;
    }
    return ptm_params_load_for(p, mpi_version);
}

int ptm_params_load_for(ptm_params *p, const char *mpi_version)
{
    int rc = ptm_params_load_default(p);
    if (rc != 0) /* no usable file: the built-in set of this MPI library */
        ptm_params_default_for(p, mpi_version);
    return rc;
}

static void put_number(FILE *f, const char *key, double v, const char *sep)
{
    fprintf(f, "\"%s\": %.9g%s", key, v, sep);
}

int ptm_params_write(FILE *f, const ptm_params *p, const char *extra_members, char *err, size_t errlen)
{
    if (ptm_params_check(p, err, errlen))
        return -1;
    fprintf(f, "{\n  \"schema\": \"%s\",\n", PTM_LOGGP_SCHEMA);
    fprintf(f, "  \"units\": {\"time\": \"us\", \"G\": \"us/byte\", \"sizes\": \"bytes\"},\n  ");
    put_number(f, "o_pready", p->o_pready, ",\n");
    fprintf(f, "  \"max_eager_messages\": %d,\n", ptm_max_eager_messages(p));
    fprintf(f, "  \"segments\": [\n");
    for (int i = 0; i < p->nseg; i++) {
        const ptm_segment *s = &p->seg[i];
        fprintf(f, "    {\"protocol\": \"%s\", ", i == 0 ? "eager" : s->handshake_us > 0 ? "rendezvous" : "eager");
        if (i == p->nseg - 1 || s->max_bytes == SIZE_MAX)
            fprintf(f, "\"max_bytes\": null, ");
        else
            fprintf(f, "\"max_bytes\": %zu, ", s->max_bytes);
        put_number(f, "L", s->L, ", ");
        put_number(f, "o_s", s->o_s, ", ");
        put_number(f, "o_r", s->o_r, ", ");
        put_number(f, "g", s->g, ", ");
        put_number(f, "G", s->G, ", ");
        put_number(f, "handshake_us", s->handshake_us, "");
        fprintf(f, "}%s\n", i + 1 < p->nseg ? "," : "");
    }
    fprintf(f, "  ]");
    if (extra_members && *extra_members)
        fprintf(f, ",\n  %s", extra_members);
    fprintf(f, "\n}\n");
    return 0;
}

int ptm_params_save(const char *path, const ptm_params *p, const char *extra_members,
                    char *err, size_t errlen)
{
    char why[256];
    if (ptm_params_check(p, why, sizeof why)) {
        snprintf(err, errlen, "%s: refusing to write invalid parameters: %s", path, why);
        return -1;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    ptm_params_write(f, p, extra_members, why, sizeof why);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
