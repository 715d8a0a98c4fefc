/* Send requests under the timer policy, so that any partita call in the
 * process (Pready, Parrived, Test, Wait on any request) can flush their
 * overdue groups, and an optional progress thread can too. */
#ifndef PARTITA_TIMER_REGISTRY_H
#define PARTITA_TIMER_REGISTRY_H

struct pt_request;

void pt_timers_register(struct pt_request *req);
void pt_timers_unregister(struct pt_request *req);
void pt_timers_poll(void);
int pt_timers_pending(void);

#endif
