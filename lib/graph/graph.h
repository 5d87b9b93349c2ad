/* lib/graph: the op graph a host builds with ic_graph_* calls. */
#ifndef IC_GRAPH_H
#define IC_GRAPH_H

#include "base/base.h"
#include "ops/asm.h"
#include "ops/ops.h"
#include "sym/sym.h"

/* ---- graph nodes */

typedef enum graph_node_kind {
  GRAPH_INPUT,
  GRAPH_CONST,
  GRAPH_OP,
  GRAPH_RESHAPE,
  GRAPH_PERMUTE,
  GRAPH_EXPAND,
  GRAPH_SLICE,  /* point i of dim axis reads source point first + i * step */
  GRAPH_CONCAT, /* operands in g->concat_parts; each point reads one of them */
  GRAPH_PAD,    /* points outside the source read `value` */
  GRAPH_REDUCE, /* reduce `reduce` of args[0] over the dims in axes (a bit per operand dim) */
  GRAPH_ASM,    /* inline PTX g->asms.items[asm] over its nargs inputs (g->concat_parts from
                   parts), broadcast to its shape; not a value: its results are */
  GRAPH_ASM_RESULT, /* output `result` of the GRAPH_ASM args[0] */
  GRAPH_MATMUL  /* torch.matmul of args[0] and args[1] (ic.h, "matmul"): operands of one dtype
                   (bf16, f16, f32, f64, i8), 1-D or more; dims the result's, dtype the
                   result's (i32 for i8) */
} graph_node_kind;



typedef struct graph_node {
  graph_node_kind kind;
  ic_dtype dtype;
  int32_t ndim;
  sym_id dims[IC_MAX_DIMS];
  ic_op op;          /* GRAPH_OP */
  int32_t nargs;     /* GRAPH_OP: arity; views: 1 */
  ic_value args[3];
  int32_t perm[IC_MAX_DIMS]; /* GRAPH_PERMUTE */
  double value;      /* GRAPH_CONST, GRAPH_PAD: already rounded to dtype */
  bool weak;         /* GRAPH_CONST of IC_DTYPE_AUTO: adopts its partner's dtype */
  int32_t input;     /* GRAPH_INPUT: position among inputs */
  ic_layout layout;  /* GRAPH_INPUT */
  char *name;        /* GRAPH_INPUT: its input name; others: NULL or ic_graph_name_value's */
  int32_t axis;      /* GRAPH_SLICE, GRAPH_CONCAT: the dim (non-negative) */
  int64_t start, stop, step; /* GRAPH_SLICE: the bounds as given (printing, hashing) */
  sym_id first;      /* GRAPH_SLICE: the source index of point 0 (clamped start) */
  int32_t parts;     /* GRAPH_CONCAT: its nargs operands start at g->concat_parts.items[parts] */
  int64_t pad[IC_MAX_DIMS][2]; /* GRAPH_PAD: amounts before and after, by dim */
  ic_reduce_op reduce; /* GRAPH_REDUCE (value: mean's correction) */
  uint32_t axes;       /* GRAPH_REDUCE: bit d set = operand dim d is reduced */
  bool keepdim;        /* GRAPH_REDUCE: reduced dims stay with size 1 */
  int32_t asm_index;   /* GRAPH_ASM: its g->asms entry */
  int32_t result;      /* GRAPH_ASM_RESULT: which output */
} graph_node;

typedef struct graph_output {
  char *name;
  ic_value value;
} graph_output;

struct ic_graph {
  sym_arena *syms;
  struct { graph_node *items; int32_t count, cap; } nodes;
  struct { ic_value *items; int32_t count, cap; } inputs; /* node of each input */
  struct { char **items; int32_t count, cap; } symbols;   /* symbol k's name */
  struct { graph_output *items; int32_t count, cap; } outputs;
  struct { ic_value *items; int32_t count, cap; } concat_parts; /* GRAPH_CONCAT and GRAPH_ASM operands */
  struct { asm_spec *items; int32_t count, cap; } asms; /* GRAPH_ASM's, owned */
  ic_status error;
  char *error_message;
  uint64_t sym_wraps; /* sym_arena_wraps(syms) when the last builder call ended */
};

/* Operand i of node n (< n->nargs): concat and asm keep their any number of operands
 * apart. */
static inline ic_value graph_node_arg(const ic_graph *g, const graph_node *n, int32_t i) {
  return n->kind == GRAPH_CONCAT || n->kind == GRAPH_ASM ? g->concat_parts.items[n->parts + i] : n->args[i];
}

/* The node of a value, NULL when v is not a value of g. */
const graph_node *graph_node_get(const ic_graph *g, ic_value v);

/* Builder calls on dims that are already expressions of g->syms, for the text parser,
 * whose dims may be products such as 4 * n. reshape: a dim SYM_NONE is inferred. Same
 * checks, errors and results as ic_graph_reshape and ic_graph_expand. */
ic_value graph_reshape_exprs(ic_graph *g, ic_value a, int32_t ndim, const sym_id *dims);
ic_value graph_expand_exprs(ic_graph *g, ic_value a, int32_t ndim, const sym_id *dims);

/* A reduction built from already checked parts, for the text parser: same checks,
 * errors and result as ic_graph_mean_correction / ic_graph_reduce. */
ic_value graph_reduce_mask(ic_graph *g, ic_reduce_op op, ic_value a, uint32_t axes, bool keepdim, double correction);

/* True when s is a name the text format can carry: [A-Za-z_][A-Za-z0-9_.]*. */
bool graph_name_valid(const char *s);

/* Prints the graph in the text format (ic.h, "graph text format"; lib/graph/text.c), even
 * when some name cannot be written in it (ic_graph_print refuses those). */
void graph_print(const ic_graph *g, sbuf *out);
/* Appends "f32[n, 4]" for a dtype and dims. */
void graph_print_type(const ic_graph *g, ic_dtype dt, int32_t ndim, const sym_id *dims, sbuf *out);
/* Symbol names in sym_print's form. */
sym_names graph_symbol_names(const ic_graph *g);

#endif
