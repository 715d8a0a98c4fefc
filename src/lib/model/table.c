/* The partita.tuning/1 table: measured best transport count per
 * (total bytes, user partitions), written by `partita tune`. */
#include "partita/model.h"
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t bytes;
    int user_parts, transport;
} table_entry;

struct ptm_table {
    size_t count;
    table_entry *entries;
};

static int get_int(const ptm_json *obj, const char *key, double min, double *out)
{
    const ptm_json *v = ptm_json_get(obj, key);
    if (!v || v->type != PTM_JSON_NUMBER || v->number < min || v->number > 9.0e15 ||
        v->number != floor(v->number))
        return -1;
    *out = v->number;
    return 0;
}

static ptm_table *table_from_json(const ptm_json *root, char *why, size_t whylen)
{
    if (!root || root->type != PTM_JSON_OBJECT) {
        snprintf(why, whylen, "top level must be a JSON object");
        return NULL;
    }
    const ptm_json *schema = ptm_json_get(root, "schema");
    if (!schema || schema->type != PTM_JSON_STRING || strcmp(schema->string, PTM_TUNING_SCHEMA) != 0) {
        snprintf(why, whylen, "\"schema\" must be \"%s\"", PTM_TUNING_SCHEMA);
        return NULL;
    }
    const ptm_json *entries = ptm_json_get(root, "entries");
    if (!entries || entries->type != PTM_JSON_ARRAY || entries->count == 0) {
        snprintf(why, whylen, "\"entries\" must be a non-empty array");
        return NULL;
    }
    ptm_table *t = calloc(1, sizeof *t);
    if (t)
        t->entries = calloc(entries->count, sizeof *t->entries);
    if (!t || !t->entries) {
        free(t);
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < entries->count; i++) {
        const ptm_json *e = &entries->items[i];
        double bytes, user, transport;
        if (e->type != PTM_JSON_OBJECT || get_int(e, "bytes", 0, &bytes) ||
            get_int(e, "user_partitions", 1, &user) || get_int(e, "transport_partitions", 1, &transport) ||
            user > 1e9) {
            snprintf(why, whylen, "entry %zu: needs integer \"bytes\" >= 0, \"user_partitions\" >= 1 and "
                     "\"transport_partitions\" >= 1", i);
            ptm_table_free(t);
            return NULL;
        }
        if (transport > user) {
            snprintf(why, whylen, "entry %zu: transport_partitions %.0f exceeds user_partitions %.0f", i,
                     transport, user);
            ptm_table_free(t);
            return NULL;
        }
        t->entries[i] = (table_entry){ (size_t)bytes, (int)user, (int)transport };
    }
    t->count = entries->count;
    return t;
}

ptm_table *ptm_table_load(const char *path, char *err, size_t errlen)
{
    char why[300];
    if (!path || !*path) {
        snprintf(err, errlen, "no tuning table file given");
        return NULL;
    }
    ptm_json *root = ptm_json_parse_file(path, why, sizeof why);
    if (!root) {
        snprintf(err, errlen, "%s", why);
        return NULL;
    }
    ptm_table *t = table_from_json(root, why, sizeof why);
    ptm_json_free(root);
    if (!t)
        snprintf(err, errlen, "%s: %s", path, why);
    return t;
}

int ptm_table_lookup(const ptm_table *t, size_t total_bytes, int user_parts)
{
    if (!t)
        return 0;
    double want = log2((double)(total_bytes ? total_bytes : 1));
    double best_d = 1.0 + 1e-9; /* within a factor of 2 */
    int best = 0;
    for (size_t i = 0; i < t->count; i++) {
        const table_entry *e = &t->entries[i];
        if (e->user_parts != user_parts)
            continue;
        double d = fabs(log2((double)(e->bytes ? e->bytes : 1)) - want);
        if (d < best_d) {
            best_d = d;
            best = e->transport;
        }
    }
    return best;
}

size_t ptm_table_size(const ptm_table *t)
{
    return t ? t->count : 0;
}

void ptm_table_free(ptm_table *t)
{
    if (!t)
        return;
    free(t->entries);
    free(t);
}
