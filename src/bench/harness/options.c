#include "options.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pt_option *pt_cli_add(pt_cli *cli, pt_option opt)
{
    if (cli->nopts >= PT_MAX_OPTIONS) {
        fprintf(stderr, "%s: internal error: too many options\n", cli->program);
        abort();
    }
    cli->opts[cli->nopts] = opt;
    return &cli->opts[cli->nopts++];
}

#define ADD(...) pt_cli_add(cli, (pt_option){__VA_ARGS__})
pt_option *pt_add_flag(pt_cli *cli, const char *name, char letter, int *dest, const char *help)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_FLAG, .dest = dest, .help = help);
}
pt_option *pt_add_int(pt_cli *cli, const char *name, char letter, int *dest, const char *metavar, const char *help,
                      double min, double max)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_INT, .dest = dest, .metavar = metavar, .help = help,
               .min = min, .max = max);
}
pt_option *pt_add_double(pt_cli *cli, const char *name, char letter, double *dest, const char *metavar,
                         const char *help, double min, double max)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_DOUBLE, .dest = dest, .metavar = metavar,
               .help = help, .min = min, .max = max);
}
pt_option *pt_add_string(pt_cli *cli, const char *name, char letter, const char **dest, const char *metavar,
                         const char *help)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_STRING, .dest = dest, .metavar = metavar, .help = help);
}
pt_option *pt_add_choice(pt_cli *cli, const char *name, char letter, int *dest, const char *metavar, const char *help,
                         const char *const *choices)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_CHOICE, .dest = dest, .metavar = metavar,
               .help = help, .choices = choices);
}
pt_option *pt_add_sizes(pt_cli *cli, const char *name, char letter, pt_size_range *dest, const char *metavar,
                        const char *help)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_SIZES, .dest = dest, .metavar = metavar, .help = help);
}
pt_option *pt_add_int_list(pt_cli *cli, const char *name, char letter, pt_int_list *dest, const char *metavar,
                           const char *help, double min, double max)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_INT_LIST, .dest = dest, .metavar = metavar,
               .help = help, .min = min, .max = max);
}
pt_option *pt_add_custom(pt_cli *cli, const char *name, char letter, void *dest, const char *metavar,
                         const char *help, pt_opt_fn fn, const char *default_text)
{
    return ADD(.name = name, .letter = letter, .type = PT_OPT_CUSTOM, .dest = dest, .metavar = metavar,
               .help = help, .fn = fn, .default_text = default_text);
}
#undef ADD

int pt_parse_double(const char *s, double min, double max, double *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno || isnan(v)) {
        snprintf(err, errlen, "'%s' is not a number", s);
        return -1;
    }
    if (v < min || v > max) {
        snprintf(err, errlen, "%s is out of range [%g, %g]", s, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int pt_parse_int(const char *s, double min, double max, int *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || (errno && errno != ERANGE)) {
        snprintf(err, errlen, "'%s' is not a whole number", s);
        return -1;
    }
    /* a whole number beyond long or int is out of range, not malformed */
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX || (double)v < min || (double)v > max) {
        snprintf(err, errlen, "%s is out of range [%.0f, %.0f]", s, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int pt_parse_bytes(const char *s, size_t *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0') {
        snprintf(err, errlen, "'%s' is not a byte count", s);
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mult = 1;
    if (end != s && (*end == 'K' || *end == 'k'))
        mult = 1ULL << 10, end++;
    else if (end != s && (*end == 'M' || *end == 'm'))
        mult = 1ULL << 20, end++;
    else if (end != s && (*end == 'G' || *end == 'g'))
        mult = 1ULL << 30, end++;
    if (end == s || *end != '\0' || errno || v > (1ULL << 40) / mult) {
        snprintf(err, errlen, "'%s' is not a byte count (a number with an optional K, M or G suffix)", s);
        return -1;
    }
    *out = (size_t)(v * mult);
    return 0;
}

static int is_pow2(size_t v) { return v && !(v & (v - 1)); }

int pt_parse_size_range(const char *s, pt_size_range *out, char *err, size_t errlen)
{
    const char *colon = strchr(s, ':');
    char lo[64];
    if (!colon || (size_t)(colon - s) >= sizeof lo) {
        snprintf(err, errlen, "sizes must be given as MIN:MAX, e.g. 64:4M (got '%s')", s);
        return -1;
    }
    memcpy(lo, s, (size_t)(colon - s));
    lo[colon - s] = '\0';
    pt_size_range r;
    if (pt_parse_bytes(lo, &r.min, err, errlen) || pt_parse_bytes(colon + 1, &r.max, err, errlen))
        return -1;
    if (r.min == 0 || !is_pow2(r.min) || !is_pow2(r.max)) {
        snprintf(err, errlen, "message sizes must be powers of two of at least 1 byte (got '%s')", s);
        return -1;
    }
    if (r.min > r.max) {
        snprintf(err, errlen, "MIN is larger than MAX in '%s'", s);
        return -1;
    }
    *out = r;
    return 0;
}

int pt_parse_int_list(const char *s, double min, double max, pt_int_list *out, char *err, size_t errlen)
{
    pt_int_list r = {0};
    const char *p = s;
    while (1) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (n == 0 || n >= sizeof item) {
            snprintf(err, errlen, "'%s' is not a comma-separated list of whole numbers", s);
            return -1;
        }
        if (r.n >= PT_INT_LIST_MAX) {
            snprintf(err, errlen, "too many values in '%s' (at most %d)", s, PT_INT_LIST_MAX);
            return -1;
        }
        memcpy(item, p, n);
        item[n] = '\0';
        if (pt_parse_int(item, min, max, &r.v[r.n], err, errlen))
            return -1;
        r.n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = r;
    return 0;
}

int pt_int_list_distinct(const pt_int_list *l, char *err, size_t errlen)
{
    for (int i = 1; i < l->n; i++)
        for (int k = 0; k < i; k++)
            if (l->v[k] == l->v[i]) {
                snprintf(err, errlen, "%d is listed twice", l->v[i]);
                return -1;
            }
    return 0;
}

static int apply(pt_option *o, const char *arg, char *err, size_t errlen)
{
    char why[256];
    int rc = 0;
    switch (o->type) {
    case PT_OPT_FLAG: *(int *)o->dest = 1; o->given++; return 0;
    case PT_OPT_INT: rc = pt_parse_int(arg, o->min, o->max, (int *)o->dest, why, sizeof why); break;
    case PT_OPT_DOUBLE: rc = pt_parse_double(arg, o->min, o->max, (double *)o->dest, why, sizeof why); break;
    case PT_OPT_STRING:
        if (*arg == '\0') {
            snprintf(why, sizeof why, "an empty value is not allowed");
            rc = -1;
        } else
            *(const char **)o->dest = arg;
        break;
    case PT_OPT_CHOICE: {
        for (int i = 0; o->choices[i]; i++)
            if (strcmp(o->choices[i], arg) == 0) {
                *(int *)o->dest = i;
                o->given++;
                return 0;
            }
        int len = snprintf(why, sizeof why, "'%s' is not one of", arg);
        for (int i = 0; o->choices[i] && len < (int)sizeof why; i++)
            len += snprintf(why + len, sizeof why - (size_t)len, "%s %s", i ? "," : "", o->choices[i]);
        rc = -1;
        break;
    }
    case PT_OPT_SIZES: rc = pt_parse_size_range(arg, (pt_size_range *)o->dest, why, sizeof why); break;
    case PT_OPT_INT_LIST: {
        pt_int_list l;
        rc = pt_parse_int_list(arg, o->min, o->max, &l, why, sizeof why);
        if (!rc)
            rc = pt_int_list_distinct(&l, why, sizeof why);
        if (!rc)
            *(pt_int_list *)o->dest = l;
        break;
    }
    case PT_OPT_CUSTOM: rc = o->fn(arg, o->dest, why, sizeof why); break;
    }
    if (rc)
        snprintf(err, errlen, "--%s: %s", o->name, why);
    else
        o->given++;
    return rc;
}

static void format_default(const pt_option *o, char *buf, size_t len)
{
    buf[0] = '\0';
    if (o->default_text) {
        snprintf(buf, len, "%s", o->default_text);
        return;
    }
    switch (o->type) {
    case PT_OPT_INT: snprintf(buf, len, "%d", *(int *)o->dest); break;
    case PT_OPT_DOUBLE: snprintf(buf, len, "%g", *(double *)o->dest); break;
    case PT_OPT_STRING:
        if (*(const char **)o->dest)
            snprintf(buf, len, "%s", *(const char **)o->dest);
        break;
    case PT_OPT_CHOICE: snprintf(buf, len, "%s", o->choices[*(int *)o->dest]); break;
    case PT_OPT_SIZES: {
        const pt_size_range *r = o->dest;
        snprintf(buf, len, "%zu:%zu", r->min, r->max);
        break;
    }
    case PT_OPT_INT_LIST: {
        const pt_int_list *l = o->dest;
        size_t used = 0;
        for (int i = 0; i < l->n && used < len; i++)
            used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "", l->v[i]);
        break;
    }
    default: break;
    }
}

static pt_option *find_long(pt_cli *cli, const char *name, size_t n)
{
    for (int i = 0; i < cli->nopts; i++)
        if (strlen(cli->opts[i].name) == n && strncmp(cli->opts[i].name, name, n) == 0)
            return &cli->opts[i];
    return NULL;
}

static pt_option *find_short(pt_cli *cli, char c)
{
    for (int i = 0; i < cli->nopts; i++)
        if (cli->opts[i].letter == c)
            return &cli->opts[i];
    return NULL;
}

int pt_cli_parse(pt_cli *cli, int argc, char **argv, char *err, size_t errlen)
{
    /* Defaults are captured before parsing so --help shows them, not the values given. */
    static char defaults[PT_MAX_OPTIONS][96];
    for (int i = 0; i < cli->nopts; i++)
        if (!cli->opts[i].default_text && cli->opts[i].type != PT_OPT_FLAG) {
            format_default(&cli->opts[i], defaults[i], sizeof defaults[i]);
            cli->opts[i].default_text = defaults[i][0] ? defaults[i] : NULL;
        }
    int want_help = 0, want_version = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        pt_option *o = NULL;
        const char *val = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            want_help = 1;
            continue;
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
            want_version = 1;
            continue;
        }
        if (strncmp(a, "--", 2) == 0 && a[2]) {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
            o = find_long(cli, a + 2, n);
            if (!o && eq && ((n == 4 && !strncmp(a + 2, "help", 4)) || (n == 7 && !strncmp(a + 2, "version", 7)))) {
                snprintf(err, errlen, "--%.*s takes no value (got '%s')", (int)n, a + 2, a);
                return PT_PARSE_ERROR;
            }
            if (!o) {
                snprintf(err, errlen, "unknown option '%.*s' (see --help)", (int)(n + 2), a);
                return PT_PARSE_ERROR;
            }
            if (eq)
                val = eq + 1;
        } else if (a[0] == '-' && a[1] && a[1] != '-') {
            o = find_short(cli, a[1]);
            if (!o) {
                snprintf(err, errlen, "unknown option '-%c' (see --help)", a[1]);
                return PT_PARSE_ERROR;
            }
            if (a[2]) {
                if (o->type == PT_OPT_FLAG) {
                    snprintf(err, errlen, "option '-%c' takes no value (got '%s')", a[1], a);
                    return PT_PARSE_ERROR;
                }
                val = a + 2;
            }
        } else {
            snprintf(err, errlen, "unexpected argument '%s' (see --help)", a);
            return PT_PARSE_ERROR;
        }
        if (o->type == PT_OPT_FLAG) {
            if (val) {
                snprintf(err, errlen, "--%s takes no value", o->name);
                return PT_PARSE_ERROR;
            }
        } else if (!val) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
                return PT_PARSE_ERROR;
            }
            val = argv[++i];
        }
        if (apply(o, val, err, errlen))
            return PT_PARSE_ERROR;
    }
    if (want_help)
        return PT_PARSE_HELP;
    if (want_version)
        return PT_PARSE_VERSION;
    return PT_PARSE_OK;
}

void pt_cli_print_help(const pt_cli *cli, FILE *out)
{
    fprintf(out, "Usage: mpiexec -n N %s [OPTIONS]\n%s\n\nOptions:\n", cli->program, cli->summary);
    for (int i = 0; i < cli->nopts; i++) {
        const pt_option *o = &cli->opts[i];
        char head[96];
        int n = 0;
        if (o->letter)
            n = snprintf(head, sizeof head, "  -%c, --%s", o->letter, o->name);
        else
            n = snprintf(head, sizeof head, "      --%s", o->name);
        if (o->type != PT_OPT_FLAG && n < (int)sizeof head)
            snprintf(head + n, sizeof head - (size_t)n, " %s", o->metavar ? o->metavar : "VALUE");
        fprintf(out, "%-34s %s", head, o->help);
        if (o->type == PT_OPT_CHOICE) {
            fprintf(out, " (");
            for (int c = 0; o->choices[c]; c++)
                fprintf(out, "%s%s", c ? "|" : "", o->choices[c]);
            fprintf(out, ")");
        }
        if (o->default_text)
            fprintf(out, " [default: %s]", o->default_text);
        fprintf(out, "\n");
    }
    fprintf(out, "%-34s %s\n%-34s %s\n", "  -h, --help", "print this help and exit", "  -v, --version",
            "print the version and exit");
    if (cli->details)
        fprintf(out, "\n%s\n", cli->details);
}
