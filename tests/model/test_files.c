/* partita.loggp/1 and partita.tuning/1 files: round trip, corrupt and missing
 * files give an error naming the file and leave the defaults in place. */
#include "check.h"
#include "partita/model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[512];

static const char *path_of(const char *name)
{
    static char buf[4][1024];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", dir, name);
    return b;
}

static const char *write_file(const char *name, const char *text)
{
    const char *path = path_of(name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

static void params_round_trip(void)
{
    ptm_params p, q;
    char err[512];
    memset(&p, 0, sizeof p);
    p.nseg = 3;
    p.o_pready = 0.0625;
    p.max_eager_messages = 24;
    p.seg[0] = (ptm_segment){ 4096, 0.21, 0.33, 0.29, 0.41, 1.7e-4, 0 };
    p.seg[1] = (ptm_segment){ 65536, 0.22, 0.51, 0.47, 0.9, 1.1e-4, 1.25 };
    p.seg[2] = (ptm_segment){ SIZE_MAX, 0.23, 0.61, 0.57, 1.9, 0.9e-4, 2.5 };
    const char *path = path_of("round.json");
    CHECK(ptm_params_save(path, &p, "\"sizes\": [{\"bytes\": 1, \"o_s\": 0.3}]", err, sizeof err) == 0);
    CHECK(ptm_params_load(path, &q, err, sizeof err) == 0);
    CHECK(q.nseg == 3);
    CHECK(strcmp(q.source, path) == 0);
    CHECK_NEAR(q.o_pready, 0.0625, 1e-12);
    CHECK(q.max_eager_messages == 24);
    for (int i = 0; i < 3; i++) {
        CHECK(q.seg[i].max_bytes == p.seg[i].max_bytes);
        CHECK_NEAR(q.seg[i].L, p.seg[i].L, 1e-12);
        CHECK_NEAR(q.seg[i].o_s, p.seg[i].o_s, 1e-12);
        CHECK_NEAR(q.seg[i].o_r, p.seg[i].o_r, 1e-12);
        CHECK_NEAR(q.seg[i].g, p.seg[i].g, 1e-12);
        CHECK_NEAR(q.seg[i].G, p.seg[i].G, 1e-15);
        CHECK_NEAR(q.seg[i].handshake_us, p.seg[i].handshake_us, 1e-12);
    }
    /* Invalid parameters are never written. */
    p.seg[1].G = -1;
    CHECK(ptm_params_save(path_of("bad-save.json"), &p, NULL, err, sizeof err) == -1);
    CHECK(strstr(err, "bad-save.json") != NULL);
}

/* Loading `text` fails with a message that names the file and contains `why`;
 * the parameters are the defaults afterwards. */
static void rejects(const char *name, const char *text, const char *why)
{
    ptm_params p, d;
    char err[512] = "";
    const char *path = text ? write_file(name, text) : path_of(name);
    int rc = ptm_params_load(path, &p, err, sizeof err);
    CHECK(rc == -1);
    if (!strstr(err, path) || !strstr(err, why)) {
        fprintf(stderr, "%s: message \"%s\" lacks the file or \"%s\"\n", name, err, why);
        check_failures++;
    }
    ptm_params_default(&d);
    CHECK(memcmp(&p, &d, sizeof p) == 0);
}

static void params_bad_files(void)
{
    rejects("missing.json", NULL, "No such file");
    rejects("empty.json", "", "unexpected end of input");
    rejects("garbage.json", "this is not json", "invalid JSON");
    rejects("truncated.json", "{\"schema\": \"partita.loggp/1\", \"segments\": [{\"L\": 1", "line 1");
    rejects("array.json", "[1, 2]", "top level must be a JSON object");
    rejects("noschema.json", "{\"segments\": []}", "missing \"schema\"");
    rejects("v2.json", "{\"schema\": \"partita.loggp/2\", \"segments\": []}", "unsupported schema");
    rejects("noseg.json", "{\"schema\": \"partita.loggp/1\", \"segments\": []}", "non-empty array");
    rejects("missingG.json",
            "{\"schema\": \"partita.loggp/1\", \"segments\": [{\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1}]}",
            "segment 0: missing \"G\"");
    rejects("negative.json",
            "{\"schema\": \"partita.loggp/1\", \"segments\": [{\"L\":-1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1}]}",
            "L is -1: not a plausible cost (a finite number in [0, 1e9])");
    /* accepted by the library while the CLI refused it */
    rejects("hugeG.json",
            "{\"schema\": \"partita.loggp/1\", \"segments\": [{\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":1e300}]}",
            "segment 0: G is 1e+300: not a plausible cost");
    /* the last segment's bound is not used, but one below the previous is a file out of order (it was accepted) */
    rejects("order-last.json",
            "{\"schema\": \"partita.loggp/1\", \"segments\": ["
            "{\"max_bytes\":100,\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1},"
            "{\"max_bytes\":50,\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1}]}",
            "segment 1: \"max_bytes\" 50 is not larger than the previous segment's 100");
    rejects("string.json",
            "{\"schema\": \"partita.loggp/1\", \"segments\": [{\"L\":\"1\",\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1}]}",
            "\"L\" must be a number");
    rejects("order.json",
            "{\"schema\": \"partita.loggp/1\", \"segments\": ["
            "{\"max_bytes\":100,\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1},"
            "{\"max_bytes\":50,\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1},"
            "{\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1}]}",
            "larger than the previous");
    rejects("nomax.json",
            "{\"schema\": \"partita.loggp/1\", \"segments\": ["
            "{\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1},{\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1}]}",
            "max_bytes");
    rejects("burst0.json",
            "{\"schema\": \"partita.loggp/1\", \"max_eager_messages\": 0, \"segments\": ["
            "{\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1}]}",
            "max_eager_messages");
    rejects("burst-frac.json",
            "{\"schema\": \"partita.loggp/1\", \"max_eager_messages\": 2.5, \"segments\": ["
            "{\"L\":1,\"o_s\":1,\"o_r\":1,\"g\":1,\"G\":0.1}]}",
            "max_eager_messages");
    rejects("duplicate.json", "{\"schema\": \"partita.loggp/1\", \"o_pready\": 9.5, \"o_pready\": 1.0}",
            "duplicate key \"o_pready\"");
    rejects("hex.json", "{\"schema\": \"partita.loggp/1\", \"o_pready\": 0x10}", "bad number");
    rejects("trailing.json", "{\"schema\": \"partita.loggp/1\"} x", "trailing characters");
    rejects("nul.json", "", "unexpected end"); /* empty again, via a different name */
}

static void params_default_path_and_fallback(void)
{
    char buf[1024];
    ptm_params p;
    setenv("PARTITA_LOGGP", "/nonexistent/partita/loggp.json", 1);
    CHECK(ptm_params_default_path(buf, sizeof buf) == 1);
    CHECK(strcmp(buf, "/nonexistent/partita/loggp.json") == 0);
    /* A file named by PARTITA_LOGGP that cannot be read: defaults and a warning, no crash. */
    CHECK(ptm_params_load_default(&p) == -1);
    CHECK(strcmp(p.source, "built-in defaults") == 0);
    unsetenv("PARTITA_LOGGP");
    setenv("XDG_CONFIG_HOME", dir, 1);
    CHECK(ptm_params_default_path(buf, sizeof buf) == 0);
    CHECK(strcmp(buf, path_of("partita/loggp.json")) == 0);
    /* Standard place empty: defaults, silently. */
    CHECK(ptm_params_load_default(&p) == 1);
    /* ... and, for libpartita's planner, the defaults of the MPI underneath. */
    CHECK(ptm_params_load_for(&p, "Open MPI v5.0.11") == 1);
    CHECK(ptm_max_eager_messages(&p) == 32);
    CHECK(ptm_params_load_for(&p, "MPICH Version: 5.0.2") == 1);
    CHECK(ptm_max_eager_messages(&p) == PTM_MAX_EAGER_MESSAGES);
    /* The fabric transport without a file of its own: its built-in set, not the MPI's
     * (whose eager pieces made 64 KiB in 64 partitions 10 writes). */
    ptm_params f, mpi;
    ptm_params_default(&mpi);
    CHECK(ptm_params_load_transport(&f, "fabric", "MPICH Version: 5.0.2") == 2);
    CHECK(strcmp(f.source, "built-in defaults (fabric)") == 0);
    CHECK(f.seg[0].max_bytes != mpi.seg[0].max_bytes && f.seg[1].handshake_us > mpi.seg[1].handshake_us);
    CHECK(ptm_optimal_transport(&f, 65536, 64, 0) == 1);
    /* A good file named by PARTITA_LOGGP is used. */
    ptm_params q;
    char err[512];
    ptm_params_default(&q);
    q.seg[0].L = 0.125;
    CHECK(ptm_params_save(path_of("env.json"), &q, NULL, err, sizeof err) == 0);
    setenv("PARTITA_LOGGP", path_of("env.json"), 1);
    CHECK(ptm_params_load_default(&p) == 0);
    CHECK_NEAR(p.seg[0].L, 0.125, 1e-12);
    /* A usable file wins over the MPI's built-in set. */
    CHECK(ptm_params_load_for(&p, "Open MPI v5.0.11") == 0);
    CHECK_NEAR(p.seg[0].L, 0.125, 1e-12);
    CHECK(ptm_max_eager_messages(&p) == PTM_MAX_EAGER_MESSAGES);
    unsetenv("PARTITA_LOGGP");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/someone", 1);
    CHECK(ptm_params_default_path(buf, sizeof buf) == 0);
    CHECK(strcmp(buf, "/home/someone/.config/partita/loggp.json") == 0);
}

static void tuning_table(void)
{
    char err[512];
    const char *path = write_file("table.json",
        "{\"schema\": \"partita.tuning/1\", \"pattern\": {\"name\": \"laggard\", \"delay_us\": 100},\n"
        " \"entries\": [\n"
        "  {\"bytes\": 65536, \"user_partitions\": 16, \"transport_partitions\": 4, \"time_us\": 12.5},\n"
        "  {\"bytes\": 1048576, \"user_partitions\": 16, \"transport_partitions\": 16},\n"
        "  {\"bytes\": 65536, \"user_partitions\": 8, \"transport_partitions\": 2}]}");
    ptm_table *t = ptm_table_load(path, err, sizeof err);
    CHECK(t != NULL);
    CHECK(ptm_table_size(t) == 3);
    CHECK(ptm_table_lookup(t, 65536, 16) == 4);
    CHECK(ptm_table_lookup(t, 65536, 8) == 2);
    CHECK(ptm_table_lookup(t, 1048576, 16) == 16);
    CHECK(ptm_table_lookup(t, 100000, 16) == 4);   /* nearest size within 2x */
    CHECK(ptm_table_lookup(t, 700000, 16) == 16);
    CHECK(ptm_table_lookup(t, 16384, 16) == 0);    /* nothing within a factor of 2 */
    CHECK(ptm_table_lookup(t, 65536, 32) == 0);    /* other user partition count */
    ptm_table_free(t);
    CHECK(ptm_table_lookup(NULL, 1, 1) == 0);

    const struct { const char *name, *text, *why; } bad[] = {
        { "t-missing.json", NULL, "No such file" },
        { "t-garbage.json", "{\"schema\": ", "invalid JSON" },
        { "t-schema.json", "{\"schema\": \"partita.loggp/1\", \"entries\": []}", "partita.tuning/1" },
        { "t-empty.json", "{\"schema\": \"partita.tuning/1\", \"entries\": []}", "non-empty array" },
        { "t-field.json", "{\"schema\": \"partita.tuning/1\", \"entries\": [{\"bytes\": 1}]}", "entry 0" },
        { "t-big.json", "{\"schema\": \"partita.tuning/1\", \"entries\": [{\"bytes\": 1, \"user_partitions\": 2,"
                        " \"transport_partitions\": 4}]}", "exceeds" },
        { "t-frac.json", "{\"schema\": \"partita.tuning/1\", \"entries\": [{\"bytes\": 1.5, \"user_partitions\": 2,"
                         " \"transport_partitions\": 1}]}", "entry 0" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = bad[i].text ? write_file(bad[i].name, bad[i].text) : path_of(bad[i].name);
        err[0] = '\0';
        CHECK(ptm_table_load(p, err, sizeof err) == NULL);
        if (!strstr(err, p) || !strstr(err, bad[i].why)) {
            fprintf(stderr, "%s: message \"%s\" lacks the file or \"%s\"\n", bad[i].name, err, bad[i].why);
            check_failures++;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    params_round_trip();
    params_bad_files();
    params_default_path_and_fallback();
    tuning_table();
    CHECK_DONE();
}
