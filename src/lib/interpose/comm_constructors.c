/* Every communicator constructor gets a private twin for partita's set-up
 * messages, made right here while all members are in the collective anyway
 * (partitioned init itself must stay local). MPI_Comm_idup is not wrapped:
 * partitioned requests on its communicators report MPI_ERR_COMM. */
#include <mpi.h>

#include "partita/partita.h"

static int attach(int rc, MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
        rc = Partita_Comm_attach(*newcomm);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) { return attach(PMPI_Comm_dup(comm, newcomm), newcomm); }

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return attach(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return attach(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    return attach(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    return attach(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    return attach(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm *newintercomm)
{
    return attach(PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm),
                  newintercomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    return attach(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *comm_cart)
{
    return attach(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    return attach(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *comm_graph)
{
    return attach(PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph), comm_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *comm_dist_graph)
{
    return attach(PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder,
                                         comm_dist_graph),
                  comm_dist_graph);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    return attach(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                                  destinations, destweights, info, reorder, comm_dist_graph),
                  comm_dist_graph);
}

#ifdef PARTITA_HAVE_FROM_GROUP
int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                               MPI_Comm *newcomm)
{
    return attach(PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm), newcomm);
}

int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                     int remote_leader, const char *stringtag, MPI_Info info,
                                     MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    return attach(PMPI_Intercomm_create_from_groups(local_group, local_leader, remote_group, remote_leader,
                                                    stringtag, info, errhandler, newintercomm),
                  newintercomm);
}
#endif
