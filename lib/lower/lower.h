/* lib/lower: the graph lowered to pointwise nodes over iteration spaces, with every view
 * folded into an index expression.
 *
 * A lowered node computes one op at every point of its iteration space (vars i0..i{r-1}
 * of the arena). Each operand is the value of another node at the same point (NODE), a
 * load from an input or from another node's materialized buffer at an offset expression
 * of the vars (LOAD), or a constant (CONST). A pointwise op read through a view that
 * moves the index (permute, reshape, slice, a concat's or pad's operand) is recomputed in
 * the consumer's space from its operands at the moved index (a copy of the node: same op,
 * same operand values, same bits), so views of computed values fuse; outputs, reductions
 * and asm nodes (computed once) are loaded instead, and a load of a node's buffer is an
 * edge the scheduler never fuses across.
 *
 * Concat and pad are index remaps with a choice: an operand read through them is a
 * SELECT tree whose conditions are index ranges (lo <= index < hi, expressions of the
 * consumer's vars) and whose leaves are the plain operands. A leaf LOAD carries a guard,
 * the conjunction of the ranges on its path: it reads memory only where the guard holds
 * (elsewhere its value is never chosen), so padding, operands of size 0 and indices
 * outside an operand are never read. */
#ifndef IC_LOWER_H
#define IC_LOWER_H

#include "graph/graph.h"

typedef enum lower_arg_kind { LOWER_ARG_NODE, LOWER_ARG_LOAD, LOWER_ARG_CONST, LOWER_ARG_SELECT } lower_arg_kind;

/* lo <= index < hi, and range `parent` too unless parent is -1 (a conjunction). index
 * is an expression of the consumer's vars; lo and hi are free of vars. */
typedef struct lower_range {
  sym_id index, lo, hi;
  int32_t parent;
} lower_range;

/* Where a load reads: graph input `index`, or the buffer of lowered node `index`. */
typedef struct lower_source {
  bool is_input;
  int32_t index;
} lower_source;

typedef struct lower_arg {
  lower_arg_kind kind;
  int32_t node;       /* NODE */
  /* NODE: a row of a reduction's result read back over the reduced axes. Bit d set: the
   * consumer's dim d is broadcast (node has size 1 there, or lacks the dim); the other
   * dims map to the node's in order. offset: where the point sits in node's buffer
   * (contiguous), for a consumer that does not share node's kernel. 0: same point. */
  uint32_t bcast;
  lower_source src;   /* LOAD */
  sym_id offset;      /* LOAD: element offset, an expression of the consumer's vars */
  int32_t guard;      /* LOAD: the range (lowered.ranges) where it may read, or -1: everywhere */
  double value;       /* CONST, rounded to dtype */
  ic_dtype dtype;
  /* SELECT: where range `cond` holds, the value of arg `then_arg`, else of `else_arg`
   * (both in lowered.select_args) */
  int32_t cond, then_arg, else_arg;
} lower_arg;

enum { LOWER_MAX_ARGS = IC_ASM_MAX_OPERANDS }; /* an op's 3, an asm node's inputs */

typedef struct lower_node {
  ic_op op;
  ic_dtype dtype;
  int32_t ndim;
  sym_id dims[IC_MAX_DIMS];
  sym_id numel;
  int32_t nargs;
  lower_arg args[LOWER_MAX_ARGS];
  /* A reduction (op unused): args[0] is resolved over its operand's space in_dims (vars
   * i0.. of in_dims), reduced over the dims in `axes`; dims are in_dims with those dims
   * made 1 (keepdim) or dropped. value: mean's correction. */
  bool is_reduce;
  ic_reduce_op reduce;
  uint32_t axes;
  double correction;
  int32_t in_ndim;
  sym_id in_dims[IC_MAX_DIMS];
  /* Inline PTX (op unused): an asm node (asm: its spec in lowered.asms; args: its inputs,
   * at the same point) makes its outputs through asm result nodes (args[0]: the asm
   * node, same point; result: which output, dtype its dtype). The scheduler keeps an asm
   * node and its results in one group, and never stores the asm node itself. */
  const asm_spec *asm_spec;
  bool is_asm_result;
  int32_t result;
  /* A contraction (matmul; is_reduce is set too, reduce unused): in_dims are the result's
   * dims then K, axes the bit of K (the last); args[0] is the A operand at (batch, m, k),
   * args[1] the B operand at (batch, k, n), both resolved over in_dims. contract_m,
   * contract_n: the dims of in_dims that are M and N (-1 where a 1-D operand has none);
   * the other dims before K are batch dims. */
  bool contracts;
  int32_t contract_m, contract_n;
  /* A node made while resolving the operands of contraction node contract_of (a
   * recomputation of a pointwise value at the operand's index: a prologue), -1 for none.
   * Only such nodes share a contraction's kernel as element nodes. */
  int32_t contract_of;
  /* Why this node exists where the graph has no op (a static string, shown with its
   * kernel in the program dump), NULL for none. */
  const char *copy_note;
} lower_node;

/* True when dims (ndim) are the row form of a reduction over `axes` of space in_dims:
 * in_dims with each reduced dim made 1s (one, or several where a merged reduction is read
 * in the graph's keepdim shape; lib/lower/merge_axes.c) or dropped. */
bool lower_is_row_form(const sym_arena *a, int32_t in_ndim, const sym_id *in_dims, uint32_t axes, int32_t ndim,
                       const sym_id *dims);
/* The substitution that maps a row-form node's vars (its own ndim dims) onto the vars of
 * the element space in_dims: a kept dim's var becomes its element dim's var, a reduced
 * dim's 1s become 0. repl gets ndim entries; false (repl untouched) when dims are no row
 * form of in_dims. */
bool lower_row_vars(sym_arena *a, int32_t in_ndim, const sym_id *in_dims, uint32_t axes, int32_t ndim,
                    const sym_id *dims, sym_id *repl);

typedef struct lower_input {
  char *name;
  ic_dtype dtype;
  int32_t ndim;
  ic_layout layout;
  sym_id dims[IC_MAX_DIMS];
  /* Element strides: expressions of the dims for CONTIGUOUS, run-time params
   * (lower_stride_param) where the layout leaves them free. */
  sym_id strides[IC_MAX_DIMS];
} lower_input;

/* An output's buffer holds node's values in row-major order; its shape is the graph
 * output's, which differs from node's dims where the output is a reshape of node (a
 * reshape of a contiguous buffer moves no element, so only the store's shape changes). */
typedef struct lower_output {
  char *name;
  int32_t node;
  int32_t ndim;
  sym_id dims[IC_MAX_DIMS];
} lower_output;

typedef struct lowered {
  sym_arena *syms;
  char **symbol_names;
  int32_t nsymbols;
  lower_input *inputs;
  int32_t ninputs;
  struct { lower_node *items; int32_t count, cap; } nodes; /* in dependency order */
  struct { lower_range *items; int32_t count, cap; } ranges;     /* of guards and SELECTs */
  struct { lower_arg *items; int32_t count, cap; } select_args;  /* the branches of SELECTs */
  lower_output *outputs;
  int32_t noutputs;
  asm_spec **asms; /* the asm nodes' specs (copies owned here, lower_node.asm_spec points in) */
  int32_t nasms;
  bool allow_tf32; /* IC_COMPILE_ALLOW_TF32: f32 contractions may run as TF32 (set by the compile) */
} lowered;

/* The sym param holding the run-time stride of input i, dim d. */
static inline int32_t lower_stride_param(int32_t input, int32_t dim) { return input * IC_MAX_DIMS + dim; }

/* Lowers a graph without errors. Unused nodes are dropped; every output gets a node of
 * its own (a copy where the output is an input, a constant, a view or another output,
 * but the value's own node for a reshape of a computed value). fused: canonicalize for
 * fusion (lib/lower/broadcast.c); eager programs keep every op of the graph in its own
 * space. */
ic_status lower_graph(const ic_graph *g, bool fused, lowered **out);
void lowered_destroy(lowered *l);
/* Calls fn on every leaf (NODE, LOAD, CONST) of arg: arg itself, or a SELECT's branches. */
void lower_arg_leaves(const lowered *l, const lower_arg *arg, void (*fn)(const lower_arg *leaf, void *ctx), void *ctx);
/* Puts the nodes in canonical order (lib/lower/order.c): the order a depth-first walk
 * from the outputs finishes them, independent of the order the graph built them in. */
ic_status lower_canonical_order(lowered *l);
/* Per graph value: whether a read of it through a broadcast recomputes it at the
 * reader's point (lib/lower/broadcast.c; none unless fused); NULL when out of memory. */
bool *lower_broadcast_recomputable(const ic_graph *g, const bool *is_output, bool fused);
/* A reduction's operand space with each run of adjacent reduced dims merged into one and
 * kept dims of size 1 dropped (lib/lower/merge_axes.c): merged dims and axes; by original
 * dim, its merged dim (-1: dropped), the product of the run's sizes after it, and whether
 * it starts its merged dim. */
typedef struct lower_axes_merge {
  int32_t ndim;
  sym_id dims[IC_MAX_DIMS];
  uint32_t axes;
  int32_t dim_of[IC_MAX_DIMS];
  sym_id inner[IC_MAX_DIMS];
  bool first[IC_MAX_DIMS];
} lower_axes_merge;
/* The merge of a reduction over `axes` of dims; true when it changes the space (only dims
 * of constant size join a run after its first). */
bool lower_merge_axes(sym_arena *a, int32_t ndim, const sym_id *dims, uint32_t axes, lower_axes_merge *m);
/* The original index (ndim, of dims) of the point at the merged space's vars. */
void lower_merge_split_index(sym_arena *a, const lower_axes_merge *m, int32_t ndim, const sym_id *dims, sym_id *idx);
/* Contiguous element strides of dims into strides. */
void lower_contiguous_strides(sym_arena *a, int32_t ndim, const sym_id *dims, sym_id *strides);

#endif
