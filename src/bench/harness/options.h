/* Command-line parsing shared by every partita program: a table of options,
 * GNU-style long options (--name VALUE, --name=VALUE), OMB letters (-i 100, -i100),
 * range-checked numbers and a generated --help. Nothing is printed here: the
 * caller prints errors on rank 0 only (bench.h). */
#ifndef PT_OPTIONS_H
#define PT_OPTIONS_H
#include <stddef.h>
#include <stdio.h>

typedef enum {
    PT_OPT_FLAG,     /* int, set to 1 */
    PT_OPT_INT,      /* int in [min, max] */
    PT_OPT_DOUBLE,   /* double in [min, max] */
    PT_OPT_STRING,   /* const char * */
    PT_OPT_CHOICE,   /* int: index into choices */
    PT_OPT_SIZES,    /* pt_size_range: MIN:MAX, powers of two, K/M/G suffixes */
    PT_OPT_INT_LIST, /* pt_int_list: N[,N...] each in [min, max], none twice */
    PT_OPT_CUSTOM    /* fn(arg, dest) */
} pt_opt_type;

typedef struct pt_size_range { size_t min, max; } pt_size_range;

#define PT_INT_LIST_MAX 64
typedef struct pt_int_list { int n; int v[PT_INT_LIST_MAX]; } pt_int_list;

typedef int (*pt_opt_fn)(const char *arg, void *dest, char *err, size_t errlen);

typedef struct pt_option {
    const char *name; /* long name, without the dashes */
    char letter;      /* short letter, or 0 */
    pt_opt_type type;
    void *dest;
    const char *metavar;
    const char *help;
    double min, max;             /* INT, DOUBLE, INT_LIST */
    const char *const *choices;  /* CHOICE: NULL-terminated */
    pt_opt_fn fn;                /* CUSTOM */
    const char *default_text;    /* shown by --help; filled from dest when NULL */
    int given;                   /* set by pt_cli_parse: how often the command line gave it */
} pt_option;

#define PT_MAX_OPTIONS 64
typedef struct pt_cli {
    const char *program; /* e.g. "partita-p2p" */
    const char *summary; /* one line */
    const char *details; /* paragraphs printed after the options, or NULL */
    pt_option opts[PT_MAX_OPTIONS];
    int nopts;
} pt_cli;

enum { PT_PARSE_OK = 0, PT_PARSE_HELP = 1, PT_PARSE_VERSION = 2, PT_PARSE_ERROR = -1 };

/* Append an option; returns it so fields can be adjusted. The typed helpers
 * below are what programs use. */
pt_option *pt_cli_add(pt_cli *cli, pt_option opt);
pt_option *pt_add_flag(pt_cli *cli, const char *name, char letter, int *dest, const char *help);
pt_option *pt_add_int(pt_cli *cli, const char *name, char letter, int *dest, const char *metavar, const char *help,
                      double min, double max);
pt_option *pt_add_double(pt_cli *cli, const char *name, char letter, double *dest, const char *metavar,
                         const char *help, double min, double max);
pt_option *pt_add_string(pt_cli *cli, const char *name, char letter, const char **dest, const char *metavar,
                         const char *help);
pt_option *pt_add_choice(pt_cli *cli, const char *name, char letter, int *dest, const char *metavar, const char *help,
                         const char *const *choices);
pt_option *pt_add_sizes(pt_cli *cli, const char *name, char letter, pt_size_range *dest, const char *metavar,
                        const char *help);
pt_option *pt_add_int_list(pt_cli *cli, const char *name, char letter, pt_int_list *dest, const char *metavar,
                           const char *help, double min, double max);
pt_option *pt_add_custom(pt_cli *cli, const char *name, char letter, void *dest, const char *metavar,
                         const char *help, pt_opt_fn fn, const char *default_text);
/* Parse argv[1..argc-1]. On PT_PARSE_ERROR a one-line message is in err. */
int pt_cli_parse(pt_cli *cli, int argc, char **argv, char *err, size_t errlen);
void pt_cli_print_help(const pt_cli *cli, FILE *out);

/* Parsers usable on their own (tests, custom options). Return 0 or -1 + err. */
int pt_parse_int(const char *s, double min, double max, int *out, char *err, size_t errlen);
int pt_parse_double(const char *s, double min, double max, double *out, char *err, size_t errlen);
int pt_parse_bytes(const char *s, size_t *out, char *err, size_t errlen);
int pt_parse_size_range(const char *s, pt_size_range *out, char *err, size_t errlen);
int pt_parse_int_list(const char *s, double min, double max, pt_int_list *out, char *err, size_t errlen);
/* 0 when no value of the list repeats, else -1 + "N is listed twice" in err. The
 * PT_OPT_INT_LIST options check it: a repeated value would run the same case twice. */
int pt_int_list_distinct(const pt_int_list *l, char *err, size_t errlen);

#endif
