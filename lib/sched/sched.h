/* lib/sched: groups lowered nodes into kernels. */
#ifndef IC_SCHED_H
#define IC_SCHED_H

#include "lower/lower.h"

typedef struct sched_group {
  int32_t ndim;
  const sym_id *dims; /* the iteration space (the first node's dims; a reduction's operand space) */
  /* A reduction group: its reductions reduce `axes` of dims. Its other nodes live on dims
   * (element nodes) or on the row form of dims (lower_is_row_form: row nodes). */
  bool reduces;
  uint32_t axes;
  /* A contraction group: the contraction node (lowered node `contract`), its prologue
   * (the nodes private to it: lower_node.contract_of) and epilogue nodes over its row
   * form; nothing else. */
  bool contracts;
  int32_t contract;
  bool has_asm;       /* holds an asm node: its largest pack, whether one is impure */
  int32_t asm_pack;
  bool asm_impure;
  int32_t *nodes;     /* lowered nodes in dependency order */
  int32_t count, cap;
} sched_group;

typedef struct schedule {
  sched_group *groups; /* in launch order */
  int32_t count, cap;
  int32_t *group_of;   /* lowered node -> group */
  bool *materialize;   /* lowered node -> stored to a buffer (an output or read by another group) */
  int32_t *last_use;   /* lowered node -> last group reading its buffer (-1: none) */
  bool eager;          /* one group per node was asked for */
} schedule;

/* Fuses pointwise chains and siblings over the same iteration space into one group, and
 * reductions with their prologues (the pointwise nodes over their operand space), their
 * epilogues (nodes over the row form, and element nodes reading a row back over the
 * reduced axes) and other reductions of the same axes of the same space.
 * A node joins the earliest group, at or after every group its operands come from
 * (strictly after, for operands read through a moved index), that has its iteration
 * space (or, for a reduction group, its row form); else it opens a new group. Nodes with
 * split[n] set (may be NULL), and all nodes in eager mode, get a group of their own.
 * The results of an asm node always join its group. An asm shares a reduction's group
 * only when it is pure and its pack is 1, or (an element node) its pack divides 8 and
 * the one reduced dim is the last: its groups then line up with the kernel's chunks.
 * budget (> 0; -1: none) caps the nodes of a group: a full group takes no more (an asm's
 * results, which always join their asm, excepted); with a budget, a reduction also
 * joins a group only where at most SCHED_MAX_REDUCTION_DEPTH reductions of the group
 * lead to it (itself included): each is a pass over the row that recomputes the element
 * ops before it, so a chain of dependent reductions makes a kernel's source (and NVRTC's
 * time) grow with its length times its ops (25 chained softmaxes in one kernel: 27.7 s
 * of NVRTC). Softmax, log_softmax, layer and RMS norm chain 2 at most; independent
 * reductions over the same rows (siblings) do not count against each other.
 * A contraction (matmul) opens a group of its own after every group so far, with the
 * nodes private to it (its prologue: lower_node.contract_of), whatever split and the
 * budget say (apart, a prologue node would be a kernel over the whole M x N x K space);
 * pointwise nodes over its row form (the epilogue) join it as they join a reduction;
 * nothing else does (no reduction, no asm, no element node). */
enum { SCHED_MAX_REDUCTION_DEPTH = 4 };
ic_status sched_fuse_pointwise(const lowered *l, bool eager, const bool *split, int32_t budget, schedule *out);
void schedule_free(schedule *s);

#endif
