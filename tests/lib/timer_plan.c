/* The timer policy's groups (2 ranks): the model's layout, with and without a
 * planned delay, so that with no late partition the timer sends what `model`
 * sends (docs/library.md, "The timer's groups").
 * Both ranks use a parameter file written here from the built-in defaults, so
 * the plans do not depend on a file `partita loggp` saved on this machine.
 * For each size the sender asks libpartita for the model's and the timer's
 * plan and checks the rule against the model itself; every request also moves
 * its data once. */
#include <stdint.h>

#include "partita/partita.h"
#include "ptest_timer.h"

static ptm_params params;

/* Plan of one request with this policy (and delay, if not NULL); one round of data. */
static int plan_of(int rank, unsigned char *buf, size_t total, int parts, const char *policy, const char *delay,
                   int tag)
{
    MPI_Info info;
    MPI_Request req;
    int n = -1;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", policy);
    if (delay)
        MPI_Info_set(info, "partita_delay_us", delay);
    int count = (int)(total / (size_t)parts);
    if (rank == 0) {
        ptest_fill(buf, total, tag);
        OK(MPI_Psend_init(buf, parts, count, MPI_BYTE, 1, tag, MPI_COMM_WORLD, info, &req));
        OK(Partita_Request_plan(req, &n, NULL));
        OK(MPI_Start(&req));
        for (int p = parts - 1; p >= 0; p--)
            OK(MPI_Pready(p, req));
    } else {
        ptest_recv_start(buf, total, parts, tag, &req);
    }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 1)
        ptest_check_bytes(buf, total, tag, policy);
    OK(MPI_Request_free(&req));
    MPI_Info_free(&info);
    return n;
}

int main(int argc, char **argv)
{
    /* Both ranks write the built-in defaults to a file of their own and point
     * the library at it before MPI_Init. */
    char path[512];
    if (ptest_builtin_loggp("timer_plan", &params, path, sizeof path))
        return 1;
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("timer_plan");
    static unsigned char buf[4 << 20];
    const size_t sizes[] = { 4096, 65536, 128 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20 };
    const int parts_list[] = { 8, 512 };
    int tag = 0;
    for (size_t pi = 0; pi < sizeof parts_list / sizeof parts_list[0]; pi++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            int parts = parts_list[pi];
            size_t total = sizes[i];
            int nm = plan_of(rank, buf, total, parts, "model", NULL, tag++);
            int nt = plan_of(rank, buf, total, parts, "timer", NULL, tag++);
            int nm_delay = plan_of(rank, buf, total, parts, "model", "100", tag++);
            int nt_delay = plan_of(rank, buf, total, parts, "timer", "100", tag++);
            if (rank != 0)
                continue;
            CHECK(nt == nm, "%zu bytes in %d: timer %d groups, model %d messages", total, parts, nt, nm);
            CHECK(nt_delay == nm_delay, "%zu bytes in %d: delay 100 us planned: timer %d groups, model %d", total, parts,
                  nt_delay, nm_delay);
            CHECK(!ptm_too_many_eager(&params, total, nt),
                  "%zu bytes in %d: timer %d eager messages, more than the cap %d", total, parts, nt,
                  ptm_max_eager_messages(&params));
        }
    ptest_builtin_loggp_remove(path);
    return ptest_finish("timer_plan");
}
