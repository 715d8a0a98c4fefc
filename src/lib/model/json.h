/* A small JSON reader for partita's own files (partita.loggp/1, partita.tuning/1).
 * Parses a whole document into a tree; errors carry line and column. Internal to
 * libpartita-model. */
#ifndef PARTITA_MODEL_JSON_H
#define PARTITA_MODEL_JSON_H

#include <stddef.h>

typedef enum { PTM_JSON_NULL, PTM_JSON_BOOL, PTM_JSON_NUMBER, PTM_JSON_STRING,
               PTM_JSON_ARRAY, PTM_JSON_OBJECT } ptm_json_type;

typedef struct ptm_json ptm_json;
struct ptm_json {
    ptm_json_type type;
    double number;      /* NUMBER, and BOOL as 0/1 */
    char *string;       /* STRING */
    size_t count;       /* ARRAY, OBJECT: number of items */
    ptm_json *items;    /* ARRAY, OBJECT: the values */
    char **keys;        /* OBJECT: the key of each item */
};

/* Parse text; NULL on error with "line L, column C: what" in err. */
ptm_json *ptm_json_parse(const char *text, char *err, size_t errlen);
/* Read and parse a file; NULL on error with a message naming the file in err. */
ptm_json *ptm_json_parse_file(const char *path, char *err, size_t errlen);
void ptm_json_free(ptm_json *v);

/* Member of an object (NULL when absent or v is not an object). */
const ptm_json *ptm_json_get(const ptm_json *v, const char *key);

#endif
