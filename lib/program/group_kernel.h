/* Kernel IR from a schedule. */
#ifndef IC_PROGRAM_GROUP_KERNEL_H
#define IC_PROGRAM_GROUP_KERNEL_H

#include "kir/kir.h"
#include "sched/sched.h"

/* Builds the kernel of group `group` (dims coalesced; in eager mode, sizes generalized).
 * Graph input i is program buffer i; buffer_of maps a materialized lowered node to its
 * program buffer. scratch holds one int32 per lowered node. */
ic_status program_group_kernel(const lowered *l, const schedule *s, int32_t group, bool eager, const int32_t *buffer_of,
                          int32_t *scratch, kir_kernel *out);

#endif
