/* Receive requests started before their sender's set-up message arrived,
 * and receives that may be split (timer policy) for each of their rounds.
 * Until the set-up message is processed, their transport receives are not
 * posted, so a sender (in this or another process) may wait on them, and a
 * split group's runs must be received while the application is elsewhere;
 * every partita call in the process therefore looks at this list in passing
 * (for a self-send this is what lets the sender's MPI_Wait complete). A call
 * on one of these receives leaves it out of that look (it progresses it
 * right after), and its round's completion takes it off the list. */
#ifndef PARTITA_SETUP_WAITERS_H
#define PARTITA_SETUP_WAITERS_H

struct pt_request;

void pt_waiters_add(struct pt_request *req);
void pt_waiters_remove(struct pt_request *req);
/* Returns 1 when a listed receive needs regular background progress (not
 * set up yet, or active and not polled by its application). Leaves out
 * `own` (may be NULL): the request its caller progresses next. */
int pt_waiters_poll(const struct pt_request *own);
int pt_waiters_pending(void);

#endif
