/* Loads a partita.loggp/1 file with the library's reader: exit 0 when it is
 * usable, 1 with the reason otherwise. Checks what partita-loggp wrote. */
#include <stdio.h>

#include "partita/model.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    ptm_params p;
    char err[512];
    if (ptm_params_load(argv[1], &p, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("%s: %d segment(s), first up to %zu bytes\n", argv[1], p.nseg, p.seg[0].max_bytes);
    return p.nseg >= 1 ? 0 : 1;
}
