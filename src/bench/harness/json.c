#include "json.h"

#include <math.h>

void pt_json_init(pt_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
}

static void write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Separator, indentation and key before a value at the current level. */
static void prefix(pt_json *j, const char *key)
{
    if (j->count[j->depth]++ > 0)
        fputc(',', j->f);
    if (j->depth > 0) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key) {
        write_escaped(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_level(pt_json *j, const char *key, char c)
{
    prefix(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < PT_JSON_MAX_DEPTH)
        j->depth++;
    j->count[j->depth] = 0;
}

static void close_level(pt_json *j, char c)
{
    int had = j->count[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

void pt_json_object_begin(pt_json *j, const char *key) { open_level(j, key, '{'); }
void pt_json_object_end(pt_json *j) { close_level(j, '}'); }
void pt_json_array_begin(pt_json *j, const char *key) { open_level(j, key, '['); }
void pt_json_array_end(pt_json *j) { close_level(j, ']'); }

void pt_json_string(pt_json *j, const char *key, const char *value)
{
    prefix(j, key);
    if (value)
        write_escaped(j->f, value);
    else
        fputs("null", j->f);
}

static void raw_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

void pt_json_number(pt_json *j, const char *key, double value)
{
    prefix(j, key);
    raw_number(j->f, value);
}

void pt_json_int(pt_json *j, const char *key, long long value)
{
    prefix(j, key);
    fprintf(j->f, "%lld", value);
}

void pt_json_bool(pt_json *j, const char *key, int value)
{
    prefix(j, key);
    fputs(value ? "true" : "false", j->f);
}

void pt_json_null(pt_json *j, const char *key)
{
    prefix(j, key);
    fputs("null", j->f);
}

void pt_json_numbers(pt_json *j, const char *key, const double *v, size_t n)
{
    prefix(j, key);
    fputc('[', j->f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', j->f);
        /* 9 significant digits keep nanosecond resolution of microsecond values */
        if (isfinite(v[i]))
            fprintf(j->f, "%.9g", v[i]);
        else
            fputs("null", j->f);
    }
    fputc(']', j->f);
}
