/* Ranges of data tags on the data communicator. A sender owns its range while
 * its request lives; ranges are handed out round-robin over the whole tag
 * space so a freed range is reused as late as possible (a receiver may still
 * hold a late message of the old owner in its queue). */
#ifndef PARTITA_TAG_ALLOC_H
#define PARTITA_TAG_ALLOC_H

void pt_tags_init(int tag_ub);
int pt_tags_alloc(int count, int *base); /* 0, or -1 when no range is free */
void pt_tags_free(int base, int count);
void pt_tags_finalize(void);

#endif
