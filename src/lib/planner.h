/* The aggregation planner: how many transport messages a send request uses
 * per round, from its settings, its partition size and partition count. */
#ifndef PARTITA_PLANNER_H
#define PARTITA_PLANNER_H

#include <stddef.h>

#include "settings.h"

/* Transport message count in [1, partitions] (1 when partitions < 1). */
int pt_plan_transport(const pt_settings *s, size_t part_bytes, int partitions);
/* Timer policy: hold time, in ns, of a partly ready group of group_parts
 * partitions and group_bytes bytes: the settings' delta, or the model's (the
 * overhead one more message costs) plus the time marking the group's
 * partitions back to back takes, so a group marked in one go is not split. */
long long pt_plan_delta_ns(const pt_settings *s, size_t group_bytes, int group_parts);

#endif
