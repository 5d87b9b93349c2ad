/* lib/graph: the op graph a host builds with ic_graph_* calls, and the op table. */
#ifndef IC_GRAPH_H
#define IC_GRAPH_H

#include "common.h"
#include "sym/sym.h"

/* ---- the op table (ops.c), read by the builder, printers and backends */

typedef enum op_types {
  OP_TYPES_FLOAT, /* f16 bf16 f32 */
  OP_TYPES_NUM,   /* FLOAT + i32 */
  OP_TYPES_ANY    /* NUM + bool */
} op_types;

typedef enum op_result {
  OP_RESULT_SAME,  /* the operands' dtype (for where: a's and b's) */
  OP_RESULT_BOOL,  /* bool */
  OP_RESULT_TARGET /* the dtype a cast names */
} op_result;

typedef struct op_info {
  const char *name;
  int32_t arity;
  op_types types;
  op_result result;
} op_info;

/* NULL for an op outside the table. */
const op_info *op_get(ic_op op);
/* True when dtype dt is accepted by the op's type class. */
bool op_accepts(const op_info *info, ic_dtype dt);
/* "f16, bf16, f32" for error messages. */
const char *op_types_text(op_types t);

/* ---- graph nodes */

typedef enum graph_node_kind {
  GRAPH_INPUT,
  GRAPH_CONST,
  GRAPH_OP,
  GRAPH_RESHAPE,
  GRAPH_PERMUTE,
  GRAPH_EXPAND
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
  double value;      /* GRAPH_CONST, already rounded to dtype */
  bool weak;         /* GRAPH_CONST of IC_DTYPE_AUTO: adopts its partner's dtype */
  int32_t input;     /* GRAPH_INPUT: position among inputs */
  ic_layout layout;  /* GRAPH_INPUT */
  char *name;        /* GRAPH_INPUT */
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
  ic_status error;
  char *error_message;
};

/* The node of a value, NULL when v is not a value of g. */
const graph_node *graph_node_get(const ic_graph *g, ic_value v);

/* Prints the graph, one node a line ("%3 = add(%1, %2) : f32[n, 4]"). */
void graph_print(const ic_graph *g, ic_sbuf *out);
/* Appends "f32[n, 4]" for a dtype and dims. */
void graph_print_type(const ic_graph *g, ic_dtype dt, int32_t ndim, const sym_id *dims, ic_sbuf *out);
/* Symbol names in sym_print's form. */
sym_names graph_symbol_names(const ic_graph *g);

#endif
