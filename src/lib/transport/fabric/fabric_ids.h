/* Process-wide ids for the objects an immediate names (fabric_wire.h): a
 * completion carries the 20-bit id of its request, looked up without a lock. */
#ifndef PARTITA_FABRIC_IDS_H
#define PARTITA_FABRIC_IDS_H

#include <stdint.h>

/* A free id in [1, PT_IMM_ID_MAX] now naming obj, or 0 when all are taken. */
uint32_t pt_fab_id_new(void *obj);
/* The object of id, or NULL (never issued, or released). */
void *pt_fab_id_find(uint32_t id);
void pt_fab_id_release(uint32_t id);

#endif
