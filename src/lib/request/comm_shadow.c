/* Communicator twins, kept as a cached attribute of the user's communicator:
 * freeing the user's communicator frees the twin, duplicating it does not copy it. */
#include "request/comm_shadow.h"

#include <stdlib.h>

typedef struct shadow_attr {
    MPI_Comm twin;
} shadow_attr;

static int keyval = MPI_KEYVAL_INVALID;

static int delete_twin(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    shadow_attr *a = value;
    PMPI_Comm_free(&a->twin);
    free(a);
    return MPI_SUCCESS;
}

int pt_shadow_init(void)
{
    if (keyval != MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_twin, &keyval, NULL);
}

void pt_shadow_finalize(void)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm builtin[2] = { MPI_COMM_SELF, MPI_COMM_WORLD };
    for (int i = 0; i < 2; i++) {
        MPI_Comm twin;
        if (pt_shadow_lookup(builtin[i], &twin) == 0)
            PMPI_Comm_delete_attr(builtin[i], keyval);
    }
    PMPI_Comm_free_keyval(&keyval);
    keyval = MPI_KEYVAL_INVALID;
}

int pt_shadow_attach(MPI_Comm comm)
{
    MPI_Comm twin;
    if (comm == MPI_COMM_NULL || keyval == MPI_KEYVAL_INVALID || pt_shadow_lookup(comm, &twin) == 0)
        return MPI_SUCCESS;
    shadow_attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    /* MPI_Comm_create over the whole (local) group, not MPI_Comm_dup: a dup
     * would run the user's attribute copy callbacks for partita's twin. */
    MPI_Group group;
    int rc = PMPI_Comm_group(comm, &group);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Comm_create(comm, group, &a->twin);
        PMPI_Group_free(&group);
    }
    if (rc == MPI_SUCCESS && a->twin == MPI_COMM_NULL)
        rc = MPI_ERR_COMM;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_attr(comm, keyval, a);
    if (rc != MPI_SUCCESS) {
        free(a);
        return rc;
    }
    /* The twin reports errors to its caller (partita), never aborts by itself. */
    PMPI_Comm_set_errhandler(a->twin, MPI_ERRORS_RETURN);
    return MPI_SUCCESS;
}

int pt_shadow_lookup(MPI_Comm comm, MPI_Comm *shadow)
{
    void *value = NULL;
    int flag = 0;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, keyval, &value, &flag) != MPI_SUCCESS || !flag)
        return -1;
    *shadow = ((shadow_attr *)value)->twin;
    return 0;
}

