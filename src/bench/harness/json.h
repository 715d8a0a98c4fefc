/* A small streaming JSON writer (machine-readable benchmark results). Keys are
 * given with each value; pass NULL inside arrays. NaN and infinities are written
 * as null (JSON has no such numbers). */
#ifndef PT_JSON_H
#define PT_JSON_H
#include <stdio.h>

#define PT_JSON_MAX_DEPTH 32

typedef struct pt_json {
    FILE *f;
    int depth;
    int count[PT_JSON_MAX_DEPTH]; /* values written at each level */
} pt_json;

void pt_json_init(pt_json *j, FILE *f);
void pt_json_object_begin(pt_json *j, const char *key);
void pt_json_object_end(pt_json *j);
void pt_json_array_begin(pt_json *j, const char *key);
void pt_json_array_end(pt_json *j);
void pt_json_string(pt_json *j, const char *key, const char *value);
void pt_json_number(pt_json *j, const char *key, double value);
void pt_json_int(pt_json *j, const char *key, long long value);
void pt_json_bool(pt_json *j, const char *key, int value);
void pt_json_null(pt_json *j, const char *key);
/* A whole array of numbers, written compactly on one line. */
void pt_json_numbers(pt_json *j, const char *key, const double *v, size_t n);

#endif
