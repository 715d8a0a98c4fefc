/* Data, partition counts, datatypes, statuses and repeated rounds.
 *   transfer -s SEND_PARTS -r RECV_PARTS -n DOUBLES [-i ROUNDS] [-m wait|test|parrived|range|list]
 *            [-t contig|derived|strided|blocks] [-c world|dup|split|inter|merged|group|self]
 *            [-x RECV_FACTOR]
 * Rank 0 sends DOUBLES doubles in SEND_PARTS partitions, rank 1 receives them in
 * RECV_PARTS partitions (on MPI_COMM_SELF every rank sends to itself).
 * -m parrived polls MPI_Parrived only, then tests once (that must complete).
 * -c names the communicator: world, a dup, a rank-reversed split, an
 * intercommunicator between the even and odd ranks, its merge, a reversed
 * MPI_Comm_create_group, or self. `derived` sends one contiguous derived
 * element per partition (same signature, other type); `strided` receives
 * into every other double (the gaps must stay untouched); `blocks` does too,
 * with elements of three such doubles, so a short message can end inside a
 * receive element; -x makes the receive buffer RECV_FACTOR times larger than
 * the data: erroneous (MPI-4 wants equal sizes; MPICH says so at MPI_Wait),
 * so each round must end in MPI_ERR_OTHER from MPI_Wait, with the data that
 * came delivered and the rest of the buffer untouched. */
#include <unistd.h>

#include "ptest.h"

static double value(int round, long i) { return round * 100000.0 + (double)i + 0.5; }

typedef struct opts {
    int sparts, rparts, rounds, factor;
    long n;
    char mode[16], type[16], comm[16];
} opts;

static void parse(int argc, char **argv, opts *o)
{
    *o = (opts){ .sparts = 1, .rparts = 1, .rounds = 3, .factor = 1, .n = 64 };
    strcpy(o->mode, "wait");
    strcpy(o->type, "contig");
    strcpy(o->comm, "world");
    int c;
    while ((c = getopt(argc, argv, "s:r:n:i:m:t:c:x:")) != -1) {
        switch (c) {
        case 's': o->sparts = atoi(optarg); break;
        case 'r': o->rparts = atoi(optarg); break;
        case 'n': o->n = atol(optarg); break;
        case 'i': o->rounds = atoi(optarg); break;
        case 'x': o->factor = atoi(optarg); break;
        case 'm': snprintf(o->mode, sizeof o->mode, "%s", optarg); break;
        case 't': snprintf(o->type, sizeof o->type, "%s", optarg); break;
        case 'c': snprintf(o->comm, sizeof o->comm, "%s", optarg); break;
        default: ptest_usage("transfer: unknown option (see the comment at the top of transfer.c)");
        }
    }
    if (o->sparts < 1 || o->rparts < 1 || o->n < 0 || o->rounds < 1 || o->factor < 1 ||
        o->n % o->sparts || (o->n * o->factor) % o->rparts)
        ptest_usage("transfer: need partitions >= 1, rounds >= 1, and DOUBLES divisible by both partition counts");
    if (strcmp(o->mode, "wait") && strcmp(o->mode, "test") && strcmp(o->mode, "parrived") &&
        strcmp(o->mode, "range") && strcmp(o->mode, "list"))
        ptest_usage("transfer: -m must be wait, test, parrived, range or list");
    if (strcmp(o->type, "contig") && strcmp(o->type, "derived") && strcmp(o->type, "strided") &&
        strcmp(o->type, "blocks"))
        ptest_usage("transfer: -t must be contig, derived, strided or blocks");
    if (!strcmp(o->type, "blocks") && (o->n * o->factor) % (3 * o->rparts))
        ptest_usage("transfer: -t blocks needs DOUBLES * RECV_FACTOR divisible by 3 * RECV_PARTS");
}

static MPI_Comm make_comm(const char *name)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!strcmp(name, "world"))
        return MPI_COMM_WORLD;
    if (!strcmp(name, "self"))
        return MPI_COMM_SELF;
    if (!strcmp(name, "dup"))
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else if (!strcmp(name, "split"))
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c); /* ranks reversed */
    else if (!strcmp(name, "inter") || !strcmp(name, "merged")) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 12, &inter);
        MPI_Comm_free(&half);
        if (!strcmp(name, "inter"))
            return inter;
        MPI_Intercomm_merge(inter, rank % 2, &c);
        MPI_Comm_free(&inter);
    } else if (!strcmp(name, "group")) {
        MPI_Group world, reversed;
        int range[1][3] = { { size - 1, 0, -1 } };
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_range_incl(world, 1, range, &reversed);
        MPI_Comm_create_group(MPI_COMM_WORLD, reversed, 13, &c);
        MPI_Group_free(&world);
        MPI_Group_free(&reversed);
    } else
        ptest_usage("transfer: -c must be world, dup, split, inter, merged, group or self");
    return c;
}

static void send_side(const opts *o, MPI_Comm comm, int dest, MPI_Request *req, double *buf, MPI_Datatype *made)
{
    long per = o->n / o->sparts;
    if (!strcmp(o->type, "derived")) {
        MPI_Type_contiguous((int)per, MPI_DOUBLE, made);
        MPI_Type_commit(made);
        OK(MPI_Psend_init(buf, o->sparts, 1, *made, dest, 7, comm, MPI_INFO_NULL, req));
    } else {
        OK(MPI_Psend_init(buf, o->sparts, per, MPI_DOUBLE, dest, 7, comm, MPI_INFO_NULL, req));
    }
}

static void mark_all(const opts *o, MPI_Request req)
{
    if (!strcmp(o->mode, "range")) {
        OK(MPI_Pready_range(o->sparts / 2, o->sparts - 1, req));
        if (o->sparts / 2 > 0)
            OK(MPI_Pready_range(0, o->sparts / 2 - 1, req));
    } else if (!strcmp(o->mode, "list")) {
        int *list = malloc(sizeof(int) * (size_t)o->sparts), k = 0;
        for (int p = 1; p < o->sparts; p += 2)
            list[k++] = p;
        for (int p = 0; p < o->sparts; p += 2)
            list[k++] = p;
        OK(MPI_Pready_list(o->sparts, list, req));
        free(list);
    } else {
        for (int p = o->sparts - 1; p >= 0; p--) /* last to first */
            OK(MPI_Pready(p, req));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    opts o;
    parse(argc, argv, &o);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int self = !strcmp(o.comm, "self");
    if (!self && size < 2)
        ptest_usage("transfer: needs 2 ranks (or -c self)");
    MPI_Comm comm = make_comm(o.comm);
    if (o.factor > 1)
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); /* the short send's error is checked */
    int crank;
    MPI_Comm_rank(comm, &crank);
    /* World ranks 0 and 1 are the pair; in `split` their ranks are reversed. */
    int sender = self || rank == 0, receiver = self || rank == 1;
    int peer_of_sender = -1, peer_of_receiver = -1, inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter) {
        /* Rank 0 and rank 1 are each rank 0 of their own half. */
        peer_of_sender = peer_of_receiver = 0;
    } else if (!self) {
        int wr[2] = { 0, 1 }, cr[2];
        MPI_Group wg, cg;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Comm_group(comm, &cg);
        MPI_Group_translate_ranks(wg, 2, wr, cg, cr);
        peer_of_sender = cr[1];
        peer_of_receiver = cr[0];
        MPI_Group_free(&wg);
        MPI_Group_free(&cg);
    } else {
        peer_of_sender = peer_of_receiver = 0;
    }

    int blocks = !strcmp(o.type, "blocks");
    int stride = !strcmp(o.type, "strided") || blocks ? 2 : 1;
    int per_elem = blocks ? 3 : 1; /* doubles per receive element */
    long rn = o.n * o.factor;
    double *sbuf = sender ? calloc((size_t)o.n + 1, sizeof(double)) : NULL;
    double *rbuf = receiver ? calloc((size_t)(rn * stride) + 1, sizeof(double)) : NULL;
    MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    MPI_Datatype made = MPI_DATATYPE_NULL, rtype = MPI_DOUBLE;
    if (stride > 1) {
        MPI_Datatype vec;
        MPI_Type_vector(per_elem, 1, stride, MPI_DOUBLE, &vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint)(per_elem * stride * sizeof(double)), &rtype);
        MPI_Type_commit(&rtype);
        MPI_Type_free(&vec);
    }
    if (receiver)
        OK(MPI_Precv_init(rbuf, o.rparts, rn / o.rparts / per_elem, rtype, peer_of_receiver, 7, comm, MPI_INFO_NULL, &rreq));
    if (sender)
        send_side(&o, comm, peer_of_sender, &sreq, sbuf, &made);
    if (receiver)
        CHECK_PARTITA(rreq);
    if (sender)
        CHECK_PARTITA(sreq);
    if (rtype != MPI_DOUBLE)
        MPI_Type_free(&rtype); /* the request must keep its own reference */

    for (int round = 0; round < o.rounds; round++) {
        if (receiver) {
            for (long i = 0; i < rn * stride; i++)
                rbuf[i] = -1.0;
            OK(MPI_Start(&rreq));
        }
        if (sender) {
            for (long i = 0; i < o.n; i++)
                sbuf[i] = value(round, i);
            OK(MPI_Start(&sreq));
            mark_all(&o, sreq);
        }
        if (receiver && !strcmp(o.mode, "parrived")) {
            /* Only MPI_Parrived drives progress here; check each partition as it arrives. */
            long per = rn / o.rparts;
            for (int p = 0; p < o.rparts; p++) {
                if (o.n > 0 && p * per >= o.n) /* beyond the data (-x) */
                    break;
                ptest_parrived_loop(rreq, p);
                for (long i = p * per; i < (p + 1) * per && i < o.n; i++)
                    CHECK(rbuf[i * stride] == value(round, i), "round %d partition %d element %ld: %g", round, p, i,
                          rbuf[i * stride]);
            }
        }
        MPI_Status st;
        if (sender && !strcmp(o.mode, "test")) {
            int flag = 0;
            while (!flag)
                OK(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
        } else if (sender) {
            OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        }
        if (receiver) {
            int flag = 0;
            if (o.factor > 1) {
                int rc = MPI_Wait(&rreq, &st);
                CHECK(ptest_class(rc) == MPI_ERR_OTHER, "round %d: a receive %d times larger than the send: "
                      "MPI_Wait gave class %d, expected MPI_ERR_OTHER", round, o.factor, ptest_class(rc));
            } else if (!strcmp(o.mode, "test")) {
                while (!flag)
                    OK(MPI_Test(&rreq, &flag, &st));
            } else if (!strcmp(o.mode, "parrived") && o.factor == 1) {
                /* Every partition has arrived: one Test must complete the request. */
                OK(MPI_Test(&rreq, &flag, &st));
                CHECK(flag, "round %d: MPI_Test after the last MPI_Parrived did not complete", round);
                if (!flag)
                    OK(MPI_Wait(&rreq, &st));
            } else {
                OK(MPI_Wait(&rreq, &st));
            }
            int count = -1;
            MPI_Get_elements(&st, MPI_DOUBLE, &count);
            CHECK(count == o.n, "status count %d, expected %ld", count, o.n);
            CHECK(st.MPI_SOURCE == peer_of_receiver, "status source %d", st.MPI_SOURCE);
            CHECK(st.MPI_TAG == 7, "status tag %d", st.MPI_TAG);
            long bad = 0;
            for (long i = 0; i < o.n; i++)
                bad += rbuf[i * stride] != value(round, i);
            for (long i = 0; stride > 1 && i < rn; i++)
                bad += rbuf[i * stride + 1] != -1.0; /* gaps untouched */
            for (long i = o.n; i < rn; i++)
                bad += rbuf[i * stride] != -1.0; /* beyond the data untouched */
            CHECK(bad == 0, "round %d: %ld wrong doubles", round, bad);
        }
    }
    if (sender) {
        OK(MPI_Request_free(&sreq));
        CHECK(sreq == MPI_REQUEST_NULL, "free must null the handle");
    }
    if (receiver)
        OK(MPI_Request_free(&rreq));
    if (made != MPI_DATATYPE_NULL)
        MPI_Type_free(&made);
    if (comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF)
        MPI_Comm_free(&comm);
    free(sbuf);
    free(rbuf);
    return ptest_finish("transfer");
}
