/* Aggregation settings: environment (PARTITA_*) and per-request info keys (partita_*). */
#include "request/settings.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "partita/config.h"
#include "request/progress_thread.h"

/* The list is the build's (CMakeLists.txt), which also hands it to the CLI (partita-build.json). */
static const char *const policy_names[] = { PARTITA_POLICY_NAMES };
_Static_assert(sizeof policy_names / sizeof *policy_names == PT_POLICY_COUNT,
               "PARTITA_POLICIES in CMakeLists.txt must name every pt_policy, in order");

static const char *const transport_names[PT_TRANSPORT_COUNT] = { "mpi", "fabric", "auto" };

#define DEFAULT_MIN_BYTES 8192

static pt_settings global = {
    .policy = PT_POLICY_MODEL, .min_bytes = DEFAULT_MIN_BYTES, .delta_us = -1, .delay_us = 0,
    .transport_parts = 0, .adapt = 1, .transport = PT_TRANSPORT_MPI,
};

const char *pt_policy_name(pt_policy p)
{
    return (p >= 0 && p < PT_POLICY_COUNT) ? policy_names[p] : "?";
}

const char *pt_transport_choice_name(pt_transport_choice t)
{
    return (t >= 0 && t < PT_TRANSPORT_COUNT) ? transport_names[t] : "?";
}

const pt_settings *pt_settings_global(void) { return &global; }

/* The index of value among n names (any case), or -1 with the message
 * "what='value' is not one of a|b|c" in err. */
static int one_of(const char *const names[], int n, const char *value, const char *what, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(value, names[i]))
            return i;
    int at = snprintf(err, errlen, "%s='%s' is not one of ", what, value);
    for (int i = 0; i < n && at >= 0 && (size_t)at < errlen; i++)
        at += snprintf(err + at, errlen - (size_t)at, "%s%s", i ? "|" : "", names[i]);
    return -1;
}

/* Plain decimal text: digits (integer), or digits, '.' and an exponent,
 * starting with a digit or '.'. strtod and strtoll alone also take leading
 * blanks, a sign, hexadecimal ("0x10") and "inf". */
static int plain_number(const char *v, int integer)
{
    if (!isdigit((unsigned char)v[0]) && (integer || v[0] != '.'))
        return 0;
    for (const char *c = v; *c; c++)
        if (!isdigit((unsigned char)*c) && (integer || !strchr(".eE+-", *c)))
            return 0;
    return 1;
}

/* One setting given as text: `what` names its source in messages. */
static int apply(pt_settings *s, const char *key, const char *value, const char *what, char *err,
                 size_t errlen)
{
    char *end = NULL;
    errno = 0;
    if (!strcmp(key, "policy")) {
        int p = one_of(policy_names, PT_POLICY_COUNT, value, what, err, errlen);
        if (p >= 0)
            s->policy = (pt_policy)p;
        return p >= 0 ? 0 : -1;
    }
    if (!strcmp(key, "transport")) {
        int t = one_of(transport_names, PT_TRANSPORT_COUNT, value, what, err, errlen);
        if (t >= 0)
            s->transport = (pt_transport_choice)t;
        return t >= 0 ? 0 : -1;
    }
    if (!strcmp(key, "min_bytes") || !strcmp(key, "transport_parts")) {
        long long v = strtoll(value, &end, 10);
        long long max = !strcmp(key, "min_bytes") ? (1LL << 40) : (1LL << 30);
        if (!plain_number(value, 1) || end == value || *end || errno || v < (key[0] == 'm' ? 0 : 1) || v > max) {
            snprintf(err, errlen, "%s='%s' is not an integer in [%d, %lld]", what, value,
                     key[0] == 'm' ? 0 : 1, max);
            return -1;
        }
        if (key[0] == 'm')
            s->min_bytes = (size_t)v;
        else
            s->transport_parts = (int)v;
        return 0;
    }
    if (!strcmp(key, "delta_us") || !strcmp(key, "delay_us")) {
        double v = strtod(value, &end);
        if (!plain_number(value, 0) || end == value || *end || errno || !isfinite(v) || v < 0 || v > 1e9) {
            snprintf(err, errlen, "%s='%s' is not a number of microseconds in [0, 1e9]", what, value);
            return -1;
        }
        if (!strcmp(key, "delta_us"))
            s->delta_us = v;
        else
            s->delay_us = v;
        return 0;
    }
    if (!strcmp(key, "adapt")) {
        if (strcmp(value, "0") && strcmp(value, "1")) {
            snprintf(err, errlen, "%s='%s' is not 0 or 1", what, value);
            return -1;
        }
        s->adapt = value[0] == '1';
        return 0;
    }
    snprintf(err, errlen, "%s: unknown setting", what);
    return -1;
}

static const char *const keys[] = { "policy",          "min_bytes", "delta_us", "delay_us",
                                    "transport_parts", "adapt",     "transport" };
#define NKEYS (sizeof keys / sizeof keys[0])

static int check_complete(const pt_settings *s, const char *how, char *err, size_t errlen)
{
    if (s->policy == PT_POLICY_FIXED && s->transport_parts < 1) {
        snprintf(err, errlen, "policy 'fixed' needs %s", how);
        return -1;
    }
    return 0;
}

/* "min_bytes" -> "PARTITA_MIN_BYTES" */
static void env_name(const char *key, char *name, size_t len)
{
    size_t n = (size_t)snprintf(name, len, "PARTITA_%s", key);
    for (size_t i = 8; i < n && i < len; i++)
        if (name[i] >= 'a' && name[i] <= 'z')
            name[i] = (char)(name[i] - 'a' + 'A');
}

int pt_settings_load_env(char *err, size_t errlen)
{
    pt_settings s = global;
    for (size_t k = 0; k < NKEYS; k++) {
        char name[64];
        env_name(keys[k], name, sizeof name);
        const char *v = getenv(name);
        if (!v || !*v)
            continue;
        if (apply(&s, keys[k], v, name, err, errlen))
            return -1;
    }
    if (check_complete(&s, "PARTITA_TRANSPORT_PARTS=N", err, errlen))
        return -1;
    /* read by progress_thread.c; checked here with the rest */
    const char *thread = getenv("PARTITA_PROGRESS_THREAD");
    if (thread && *thread && strcmp(thread, "0") && strcmp(thread, "1")) {
        snprintf(err, errlen, "PARTITA_PROGRESS_THREAD='%s' is not 0 or 1", thread);
        return -1;
    }
    if (pt_progress_interval_load(err, errlen))
        return -1;
    s.background = pt_progress_thread_wanted();
    global = s;
    return 0;
}

int pt_settings_from_info(MPI_Info info, pt_settings *out, char *err, size_t errlen)
{
    *out = global;
    if (info == MPI_INFO_NULL)
        return 0;
    int nkeys = 0;
    if (PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS) {
        snprintf(err, errlen, "info is not a valid MPI_Info handle (MPI_INFO_NULL, or one from MPI_Info_create)");
        return -2;
    }
    for (size_t k = 0; k < NKEYS; k++) {
        char key[64], value[256], what[400];
        int flag = 0, len = 0;
        snprintf(key, sizeof key, "partita_%s", keys[k]);
        if (PMPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag)
            continue;
        if (len >= (int)sizeof value) {
            snprintf(err, errlen, "info key %s: value too long", key);
            return -1;
        }
        PMPI_Info_get(info, key, (int)sizeof value - 1, value, &flag);
        snprintf(what, sizeof what, "info %s", key);
        if (apply(out, keys[k], value, what, err, errlen))
            return -1;
    }
    return check_complete(out, "info partita_transport_parts or PARTITA_TRANSPORT_PARTS", err, errlen);
}
