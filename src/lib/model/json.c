/* Recursive-descent JSON parser (RFC 8259) into a tree of ptm_json nodes. */
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const char *s, *p;
    char *err;
    size_t errlen;
    int failed;
} parser;

static void fail(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = 1;
    int line = 1, col = 1;
    for (const char *q = ps->s; q < ps->p; q++) {
        if (*q == '\n') { line++; col = 1; } else col++;
    }
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (ps->err && ps->errlen)
        snprintf(ps->err, ps->errlen, "line %d, column %d: %s", line, col, what);
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static void free_node(ptm_json *v)
{
    if (v->type == PTM_JSON_STRING)
        free(v->string);
    if (v->type == PTM_JSON_ARRAY || v->type == PTM_JSON_OBJECT) {
        for (size_t i = 0; i < v->count; i++) {
            free_node(&v->items[i]);
            if (v->keys)
                free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
}

static int parse_value(parser *ps, ptm_json *out, int depth);

static void put_utf8(char *buf, size_t *n, unsigned cp)
{
    if (cp < 0x80) {
        buf[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        buf[(*n)++] = (char)(0xC0 | (cp >> 6));
        buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        buf[(*n)++] = (char)(0xE0 | (cp >> 12));
        buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        buf[(*n)++] = (char)(0xF0 | (cp >> 18));
        buf[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static int hex4(parser *ps, unsigned *cp)
{
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        char c = *ps->p;
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else { fail(ps, "bad \\u escape"); return -1; }
        *cp = *cp * 16 + d;
        ps->p++;
    }
    return 0;
}

/* ps->p is at the opening quote. The decoded text is never longer than the source. */
static char *parse_string(parser *ps)
{
    const char *start = ++ps->p;
    const char *q = start;
    while (*q && *q != '"') {
        if (*q == '\\' && q[1]) q++;
        q++;
    }
    if (!*q) { fail(ps, "unterminated string"); return NULL; }
    char *buf = malloc((size_t)(q - start) + 1);
    if (!buf) { fail(ps, "out of memory"); return NULL; }
    size_t n = 0;
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) { fail(ps, "control character in string"); free(buf); return NULL; }
        if (c != '\\') { buf[n++] = (char)c; ps->p++; continue; }
        ps->p++;
        char e = *ps->p++;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (hex4(ps, &cp)) { free(buf); return NULL; }
            if (cp >= 0xD800 && cp < 0xDC00 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                unsigned lo;
                ps->p += 2;
                if (hex4(ps, &lo)) { free(buf); return NULL; }
                if (lo >= 0xDC00 && lo < 0xE000)
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(buf, &n, cp); /* 6 source chars always cover 4 output bytes */
            break;
        }
        default:
            ps->p--;
            fail(ps, "bad escape '\\%c'", e ? e : '0');
            free(buf);
            return NULL;
        }
    }
    ps->p++;
    buf[n] = '\0';
    return buf;
}

static int parse_number(parser *ps, ptm_json *out)
{
    const char *q = ps->p;
    if (*q == '-') q++;
    if (!(*q >= '0' && *q <= '9')) { fail(ps, "unexpected character '%c'", *ps->p); return -1; }
    errno = 0;
    char *end;
    double v = strtod(ps->p, &end);
    if (end == ps->p || errno == ERANGE || strspn(ps->p, "0123456789+-.eE") < (size_t)(end - ps->p)) {
        fail(ps, "bad number");
        return -1;
    }
    out->type = PTM_JSON_NUMBER;
    out->number = v;
    ps->p = end;
    return 0;
}

static int literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(ps->p, word, n) != 0) { fail(ps, "unexpected token"); return -1; }
    ps->p += n;
    return 0;
}

static int append(parser *ps, ptm_json *v, size_t *cap, int with_keys)
{
    if (v->count < *cap)
        return 0;
    size_t ncap = *cap ? 2 * *cap : 8;
    ptm_json *items = realloc(v->items, ncap * sizeof *items);
    if (!items) { fail(ps, "out of memory"); return -1; }
    v->items = items;
    if (with_keys) {
        char **keys = realloc(v->keys, ncap * sizeof *keys);
        if (!keys) { fail(ps, "out of memory"); return -1; }
        v->keys = keys;
    }
    *cap = ncap;
    return 0;
}

static int parse_container(parser *ps, ptm_json *out, int depth, int is_object)
{
    char close = is_object ? '}' : ']';
    size_t cap = 0;
    out->type = is_object ? PTM_JSON_OBJECT : PTM_JSON_ARRAY;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) { ps->p++; return 0; }
    for (;;) {
        if (append(ps, out, &cap, is_object))
            return -1;
        ptm_json *item = &out->items[out->count];
        memset(item, 0, sizeof *item);
        if (is_object) {
            skip_ws(ps);
            if (*ps->p != '"') { fail(ps, "expected a string key"); return -1; }
            char *key = parse_string(ps);
            if (!key) return -1;
            out->keys[out->count] = key;
            /* a repeated key would silently shadow one of the values: refuse it */
            for (size_t k = 0; k < out->count; k++) {
                if (strcmp(out->keys[k], key) == 0) {
                    out->count++;
                    fail(ps, "duplicate key \"%s\"", key);
                    return -1;
                }
            }
            skip_ws(ps);
            if (*ps->p != ':') { out->count++; fail(ps, "expected ':'"); return -1; }
            ps->p++;
        }
        out->count++;
        if (parse_value(ps, item, depth + 1))
            return -1;
        skip_ws(ps);
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == close) { ps->p++; return 0; }
        fail(ps, *ps->p ? "expected ',' or '%c'" : "unexpected end of input, expected '%c'", close);
        return -1;
    }
}

static int parse_value(parser *ps, ptm_json *out, int depth)
{
    if (depth > MAX_DEPTH) { fail(ps, "nesting deeper than %d", MAX_DEPTH); return -1; }
    skip_ws(ps);
    switch (*ps->p) {
    case '{': return parse_container(ps, out, depth, 1);
    case '[': return parse_container(ps, out, depth, 0);
    case '"':
        out->type = PTM_JSON_STRING;
        out->string = parse_string(ps);
        return out->string ? 0 : -1;
    case 't': out->type = PTM_JSON_BOOL; out->number = 1; return literal(ps, "true");
    case 'f': out->type = PTM_JSON_BOOL; out->number = 0; return literal(ps, "false");
    case 'n': out->type = PTM_JSON_NULL; return literal(ps, "null");
    case '\0': fail(ps, "unexpected end of input"); return -1;
    default: return parse_number(ps, out);
    }
}

ptm_json *ptm_json_parse(const char *text, char *err, size_t errlen)
{
    parser ps = { text, text, err, errlen, 0 };
    ptm_json *root = calloc(1, sizeof *root);
    if (!root) { fail(&ps, "out of memory"); return NULL; }
    if (parse_value(&ps, root, 0) == 0) {
        skip_ws(&ps);
        if (*ps.p)
            fail(&ps, "trailing characters after the document");
    }
    if (ps.failed) {
        ptm_json_free(root);
        return NULL;
    }
    return root;
}

ptm_json *ptm_json_parse_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    errno = 0;
    while (text) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *t = realloc(text, 2 * cap);
        if (!t) { free(text); text = NULL; break; }
        text = t;
        cap *= 2;
    }
    int ioerr = ferror(f) ? (errno ? errno : EIO) : 0; /* a folder opens, then fails here with EISDIR */
    fclose(f);
    if (!text || ioerr) {
        free(text);
        snprintf(err, errlen, "%s: cannot read it (%s)", path, strerror(text ? ioerr : ENOMEM));
        return NULL;
    }
    text[n] = '\0';
    if (strlen(text) != n) {
        free(text);
        snprintf(err, errlen, "%s: not a JSON text file (contains NUL bytes)", path);
        return NULL;
    }
    char why[200];
    ptm_json *v = ptm_json_parse(text, why, sizeof why);
    free(text);
    if (!v)
        snprintf(err, errlen, "%s: invalid JSON: %s", path, why);
    return v;
}

void ptm_json_free(ptm_json *v)
{
    if (!v) return;
    free_node(v);
    free(v);
}

const ptm_json *ptm_json_get(const ptm_json *v, const char *key)
{
    if (!v || v->type != PTM_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}
