/* Contiguity from the type's construction (MPI_Type_get_envelope/contents),
 * not only from its size and extent: a type whose blocks are permuted in
 * memory has extent == size and still packs in another order. Anything not
 * proven contiguous takes the pack/unpack path, which is always correct. */
#include "planner/type_layout.h"

#include <stdlib.h>

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

/* Size equals extent and the data starts at the lower bound. */
static int dense(MPI_Datatype t)
{
    MPI_Count size;
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_size_x(t, &size);
    PMPI_Type_get_extent(t, &lb, &extent);
    PMPI_Type_get_true_extent(t, &tlb, &textent);
    return (MPI_Aint)size == extent && (MPI_Aint)size == textent && lb == tlb;
}

static int contiguous(MPI_Datatype t, int depth)
{
    int ni, na, nd, combiner;
    if (depth > 32 || PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 0;
    if (combiner == MPI_COMBINER_NAMED)
        return dense(t);
    if (!dense(t))
        return 0;
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    int yes = 0;
    if (ints && aints && types && PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types) == MPI_SUCCESS) {
        MPI_Aint lb, old_extent = 0;
        if (nd >= 1)
            PMPI_Type_get_extent(types[0], &lb, &old_extent);
        switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_CONTIGUOUS:
        case MPI_COMBINER_RESIZED: /* dense(t) checked the new bounds */
            yes = contiguous(types[0], depth + 1);
            break;
        case MPI_COMBINER_VECTOR: /* count, blocklength, stride (in old extents) */
            yes = (ints[0] <= 1 || ints[1] == ints[2]) && contiguous(types[0], depth + 1);
            break;
        case MPI_COMBINER_HVECTOR: /* count, blocklength; stride in bytes */
            yes = (ints[0] <= 1 || (MPI_Aint)ints[1] * old_extent == aints[0]) && contiguous(types[0], depth + 1);
            break;
        default:
            yes = 0; /* indexed, struct, subarray, ...: not proven, so pack */
        }
        for (int i = 0; i < nd; i++)
            if (!is_named(types[i]))
                PMPI_Type_free(&types[i]);
    }
    free(ints);
    free(aints);
    free(types);
    return yes;
}

int pt_type_contiguous(MPI_Datatype type) { return contiguous(type, 0); }
