#include "mech_cli.h"

#include <string.h>

const char *const mech_scheme_names[] = {"ltr", "random", "neighborhood", NULL};

/* Look a name up in choices; the British spelling of a scheme is accepted too. */
static int lookup(const char *const *choices, const char *name, size_t n)
{
    for (int i = 0; choices[i]; i++)
        if (strlen(choices[i]) == n && strncmp(choices[i], name, n) == 0)
            return i;
    if (choices == mech_scheme_names && n == strlen("neighbourhood") && strncmp(name, "neighbourhood", n) == 0)
        return MECH_SCHEME_NEIGHBORHOOD;
    return -1;
}

static int parse_name_list(const char *arg, void *dest, char *err, size_t errlen)
{
    mech_name_list *l = dest;
    l->n = 0;
    const char *p = arg;
    while (1) {
        size_t n = strcspn(p, ",");
        int k = lookup(l->choices, p, n);
        if (k < 0) {
            size_t used = (size_t)snprintf(err, errlen, "unknown name '%.*s' (choose from", (int)n, p);
            for (int i = 0; l->choices[i] && used < errlen; i++)
                used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : " ", l->choices[i]);
            if (used < errlen)
                snprintf(err + used, errlen - used, ")");
            return -1;
        }
        for (int i = 0; i < l->n; i++)
            if (l->v[i] == k) {
                snprintf(err, errlen, "'%s' is listed twice", l->choices[k]);
                return -1;
            }
        l->v[l->n++] = k;
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

static int parse_byte_list(const char *arg, void *dest, char *err, size_t errlen)
{
    mech_byte_list *l = dest;
    l->n = 0;
    const char *p = arg;
    while (1) {
        size_t n = strcspn(p, ",");
        char item[32];
        if (n == 0 || n >= sizeof item) {
            snprintf(err, errlen, "'%s' is not a comma-separated list of byte counts", arg);
            return -1;
        }
        if (l->n >= PT_INT_LIST_MAX) {
            snprintf(err, errlen, "too many values in '%s' (at most %d)", arg, PT_INT_LIST_MAX);
            return -1;
        }
        memcpy(item, p, n);
        item[n] = '\0';
        if (pt_parse_bytes(item, &l->v[l->n], err, errlen))
            return -1;
        if (l->v[l->n] == 0) {
            snprintf(err, errlen, "a partition holds at least 1 byte (got '%s')", item);
            return -1;
        }
        for (int i = 0; i < l->n; i++)
            if (l->v[i] == l->v[l->n]) { /* it would run the same cases twice, with duplicate results */
                snprintf(err, errlen, "%zu bytes are listed twice", l->v[i]);
                return -1;
            }
        l->n++;
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

void mech_configure(pt_cli *cli, mech_config *cfg)
{
    static const char details[] =
        "Runs on exactly 2 ranks: rank 0 sends one buffer of B bytes (powers of two in MIN:MAX) split into P\n"
        "partitions to rank 1, with each mechanism:\n"
        "  send        MPI_Send per partition (receiver: MPI_Recv per partition)\n"
        "  isend       MPI_Isend per partition, then MPI_Waitall (receiver: MPI_Irecv, MPI_Waitall)\n"
        "  persistent  MPI_Send_init per partition once, MPI_Start per partition every round, MPI_Waitall\n"
        "  psend       MPI_Psend_init once; MPI_Start, MPI_Pready per partition, MPI_Wait (receiver: MPI_Precv_init;\n"
        "              MPI_Start, MPI_Wait); only when the MPI library has MPI_Psend_init\n"
        "T threads (--threads) mark the partitions in one of the loop schemes:\n"
        "  ltr           0, 1, ..., P-1; thread t marks the t-th of T contiguous blocks\n"
        "  random        a permutation drawn per round from --seed (the only scheme that uses it; --seed without\n"
        "                random in --scheme is refused); thread t marks the t-th block of it\n"
        "  neighborhood  partitions are the cells of a rows x cols grid (rows: the largest divisor of P not\n"
        "                above sqrt(P)); every thread marks its block of the border cells, then of the interior\n"
        "Every round: a barrier, then the sender stamps its start and marks; the receiver (same threads, same\n"
        "order) stamps when all data is in. time = receiver completion - sender start; bandwidth = B / time.\n"
        "Mechanisms take turns round by round. Cases where B is not a multiple of the partition size or P < T\n"
        "are skipped and listed. See docs/mech.md.";
    *cfg = (mech_config){.sizes = {1 << 20, 1 << 20},
                         .mechs = {.choices = mech_kind_names},
                         .schemes = {.choices = mech_scheme_names, .n = 1, .v = {MECH_SCHEME_LTR}},
                         .seed = 1};
    pt_common_defaults(&cfg->c);
    *cli = (pt_cli){.program = "partita-mech",
                    .summary = "Effective bandwidth of send mechanisms (send, isend, persistent, psend) against partition size, 2 ranks.",
                    .details = details};
    pt_add_sizes(cli, "message-size", 'm', &cfg->sizes, "MIN:MAX", "buffer bytes, powers of two (K, M, G suffixes)");
    pt_add_int_list(cli, "partitions", 'p', &cfg->parts, "P[,P...]", "partition counts (not with --partition-size)", 1,
                    1 << 30)->default_text = "1,8,64,512,4096";
    pt_add_custom(cli, "partition-size", 's', &cfg->part_sizes, "BYTES[,...]",
                  "partition sizes instead of counts: P = B / size (K, M, G suffixes)", parse_byte_list, "-");
    pt_add_custom(cli, "mechanism", 0, &cfg->mechs, "NAME[,...]", "send, isend, persistent, psend", parse_name_list,
                  "all available");
    pt_add_custom(cli, "scheme", 0, &cfg->schemes, "NAME[,...]", "loop schemes: ltr, random, neighborhood",
                  parse_name_list, "ltr");
    cfg->seed_option = pt_add_int(cli, "seed", 0, &cfg->seed, "N",
                                  "random seed of the random scheme (refused when --scheme does not list random)", 0,
                                  2147483647);
    pt_common_options(cli, &cfg->c, PT_COMMON_ITER | PT_COMMON_VALIDATE | PT_COMMON_THREADS | PT_COMMON_OUTPUT);
}
