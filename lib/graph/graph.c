/* The graph builder: validation, shape and dtype inference, numpy broadcasting. Every
 * builder call either appends one well-typed node or records an error and changes
 * nothing (views the call would have added are rolled back). */
#include "graph/graph.h"

#include <stddef.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "ops/asm.h"

/* Records the graph's first error (and the thread's last error) with its status:
 * IC_ERR_INVALID_GRAPH for a wrong call, IC_ERR_UNSUPPORTED for what the graph could mean
 * but ic cannot compile. Returns the sentinel. */
PRINTF_LIKE(3, 4)
static ic_value graph_fail_with(ic_graph *g, ic_status status, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  error_set(status, "%s", msg);
  if (g) g->sym_wraps = sym_arena_wraps(g->syms); /* a refused call's folds are no one's */
  if (g && g->error == IC_OK) {
    g->error = status;
    g->error_message = str_dup(msg);
  }
  return IC_INVALID_VALUE;
}

#define graph_fail(g, ...) graph_fail_with((g), IC_ERR_INVALID_GRAPH, __VA_ARGS__)

static ic_value graph_oom(ic_graph *g) {
  error_set(IC_ERR_OUT_OF_MEMORY, "out of memory building the graph");
  if (g->error == IC_OK) g->error = IC_ERR_OUT_OF_MEMORY;
  return IC_INVALID_VALUE;
}

ic_status ic_graph_create(ic_graph **out) {
  if (!out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_create: out is NULL");
  *out = NULL;
  ic_graph *g = sys_calloc(1, sizeof *g);
  if (!g || !(g->syms = sym_arena_create())) {
    free(g);
    return error_set(IC_ERR_OUT_OF_MEMORY, "ic_graph_create: out of memory");
  }
  *out = g;
  return IC_OK;
}

void ic_graph_destroy(ic_graph *g) {
  if (!g) return;
  for (int32_t i = 0; i < g->nodes.count; i++) free(g->nodes.items[i].name);
  for (int32_t i = 0; i < g->symbols.count; i++) free(g->symbols.items[i]);
  for (int32_t i = 0; i < g->outputs.count; i++) free(g->outputs.items[i].name);
  free(g->nodes.items);
  free(g->inputs.items);
  free(g->symbols.items);
  free(g->outputs.items);
  free(g->concat_parts.items);
  for (int32_t i = 0; i < g->asms.count; i++) {
    free(g->asms.items[i].text);
    free(g->asms.items[i].constraints);
  }
  free(g->asms.items);
  free(g->error_message);
  sym_arena_destroy(g->syms);
  free(g);
}

ic_status ic_graph_error(const ic_graph *g, const char **message) {
  if (message) *message = "";
  if (!g) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_error: graph is NULL");
  if (message && g->error_message) *message = g->error_message;
  if (message && g->error == IC_ERR_OUT_OF_MEMORY) *message = "out of memory";
  return g->error;
}

const graph_node *graph_node_get(const ic_graph *g, ic_value v) {
  if (!g || v < 0 || v >= g->nodes.count) return NULL;
  return &g->nodes.items[v];
}

sym_names graph_symbol_names(const ic_graph *g) {
  sym_names n = {0};
  n.symbols = (const char *const *)g->symbols.items;
  n.nsymbols = g->symbols.count;
  n.plain_ints = true; /* the text format's integers */
  return n;
}

/* ---------------------------------------------------------------- helpers */

static const char *graph_shape_text(const ic_graph *g, int32_t ndim, const sym_id *dims, char *buf, size_t size);

/* Whether the constant dims of a shape (its nonzero ones) multiply to at most INT64_MAX
 * elements, and those times the element size to at most INT64_MAX bytes: no tensor holds
 * more, and the symbolic arithmetic of sizes and byte counts (whose constant folds would
 * wrap) stays exact. *bytes_fit says which of the two failed. */
static bool graph_const_dims_fit(const ic_graph *g, ic_dtype dt, int32_t ndim, const sym_id *dims, bool *bytes_fit) {
  int64_t product = 1, v;
  *bytes_fit = true;
  for (int32_t i = 0; i < ndim; i++)
    if (sym_is_const(g->syms, dims[i], &v) && v > 0 && __builtin_mul_overflow(product, v, &product)) return false;
  *bytes_fit = !__builtin_mul_overflow(product, (int64_t)ic_dtype_size(dt), &product);
  return *bytes_fit;
}

/* What built node n, for messages. */
static const char *graph_node_what(const graph_node *n) {
  switch (n->kind) {
  case GRAPH_INPUT: return "input";
  case GRAPH_CONST: return "constant";
  case GRAPH_OP: return ic_op_name(n->op);
  case GRAPH_RESHAPE: return "reshape";
  case GRAPH_PERMUTE: return "permute";
  case GRAPH_EXPAND: return "expand";
  case GRAPH_SLICE: return "slice";
  case GRAPH_CONCAT: return "concat";
  case GRAPH_PAD: return "pad";
  case GRAPH_REDUCE: return ic_reduce_name(n->reduce);
  case GRAPH_MATMUL: return "matmul";
  case GRAPH_ASM: case GRAPH_ASM_RESULT: break;
  }
  return "inline_asm";
}

/* Whether a size expression built since the last builder call folded a constant that
 * overflowed int64 (its value would have wrapped). */
static bool graph_sizes_wrapped(const ic_graph *g) { return sym_arena_wraps(g->syms) != g->sym_wraps; }

static ic_value graph_append(ic_graph *g, const graph_node *n) {
  if (sym_arena_failed(g->syms)) return graph_oom(g);
  char s[192];
  /* The builders that add sizes say which ones overflowed; this catches any other. */
  if (graph_sizes_wrapped(g))
    return graph_fail(g, "%s: a size of the result overflows 64-bit integers", graph_node_what(n));
  bool bytes_fit;
  if (!graph_const_dims_fit(g, n->dtype, n->ndim, n->dims, &bytes_fit))
    return bytes_fit ? graph_fail(g, "%s: a value of shape %s would hold more than INT64_MAX elements", graph_node_what(n),
                                  graph_shape_text(g, n->ndim, n->dims, s, sizeof s))
                     : graph_fail(g, "%s: a value of type %s%s would span more than INT64_MAX bytes", graph_node_what(n),
                                  ic_dtype_name(n->dtype), graph_shape_text(g, n->ndim, n->dims, s, sizeof s));
  if (!VEC_PUSH(g->nodes, *n)) return graph_oom(g);
  return g->nodes.count - 1;
}

static const graph_node *graph_arg(ic_graph *g, const char *what, ic_value v) {
  const graph_node *n = graph_node_get(g, v);
  if (!n) graph_fail(g, "%s: argument %" PRId32 " is not a value of this graph", what, v);
  else if (n->kind == GRAPH_ASM)
    return graph_fail(g, "%s: argument %" PRId32 " is an inline_asm node, not a value: use its outputs", what, v), NULL;
  return n;
}

/* "[n, 4]" into buf, for messages. */
static const char *graph_shape_text(const ic_graph *g, int32_t ndim, const sym_id *dims, char *buf, size_t size) {
  sbuf sb = {0};
  sym_names names = graph_symbol_names(g);
  sym_print_list(g->syms, ndim, dims, &names, &sb);
  snprintf(buf, size, "%s", sb.data ? sb.data : "[?]");
  sbuf_free(&sb);
  return buf;
}

/* An ic_dim from the API as an expression; SYM_NONE if it is not a valid dim. */
static sym_id graph_dim_expr(ic_graph *g, ic_dim d) {
  if (d >= 0) return sym_const(g->syms, d);
  if (d == IC_DIM_INFER) return SYM_NONE; /* before negating: -INT64_MIN has no value */
  int64_t k = -d - 1;
  if (k >= g->symbols.count) return SYM_NONE;
  return sym_symbol(g->syms, (int32_t)k);
}

static sym_id graph_numel(ic_graph *g, int32_t ndim, const sym_id *dims) {
  sym_id n = sym_const(g->syms, 1);
  for (int32_t i = 0; i < ndim; i++) n = sym_mul(g->syms, n, dims[i]);
  return n;
}

static bool graph_dim_is_one(const ic_graph *g, sym_id d) {
  int64_t v;
  return sym_is_const(g->syms, d, &v) && v == 1;
}

/* Adds an expand view of v to ndim/dims unless v already has that shape. */
static ic_value graph_broadcast_to(ic_graph *g, ic_value v, int32_t ndim, const sym_id *dims) {
  const graph_node *src = &g->nodes.items[v];
  if (src->ndim == ndim && memcmp(src->dims, dims, sizeof(sym_id) * (size_t)ndim) == 0) return v;
  graph_node n = {.kind = GRAPH_EXPAND, .dtype = src->dtype, .ndim = ndim, .nargs = 1, .args = {v}};
  memcpy(n.dims, dims, sizeof(sym_id) * (size_t)ndim);
  return graph_append(g, &n);
}

/* A weak constant takes dt: returns a typed constant node (or v itself). */
static ic_value graph_adopt_dtype(ic_graph *g, ic_value v, ic_dtype dt) {
  const graph_node *src = &g->nodes.items[v];
  if (src->kind != GRAPH_CONST || !src->weak || src->dtype == dt) return v;
  graph_node n = *src;
  n.name = NULL; /* the copy is a new, unnamed value; the name stays with the original */
  n.dtype = dt;
  n.weak = false;
  n.value = dtype_round(dt, src->value);
  return graph_append(g, &n);
}

/* ---------------------------------------------------------------- leaves */

ic_dim ic_graph_symbol(ic_graph *g, const char *name) {
  if (!g) return 0;
  if (!name || !*name) return (ic_dim)(graph_fail(g, "ic_graph_symbol: empty name"), 0);
  for (int32_t i = 0; i < g->symbols.count; i++)
    if (strcmp(g->symbols.items[i], name) == 0) return -(ic_dim)i - 1;
  char *copy = str_dup(name);
  if (!copy || !VEC_PUSH(g->symbols, copy)) {
    free(copy);
    graph_oom(g);
    return 0;
  }
  return -(ic_dim)(g->symbols.count - 1) - 1;
}

int32_t ic_graph_symbol_count(const ic_graph *g) { return g ? g->symbols.count : 0; }

const char *ic_graph_symbol_name(const ic_graph *g, int32_t i) {
  return g && i >= 0 && i < g->symbols.count ? g->symbols.items[i] : NULL;
}

static bool graph_check_dtype(ic_graph *g, const char *what, ic_dtype dt) {
  if (!dtype_valid(dt)) {
    graph_fail(g, "%s: invalid dtype %d", what, (int)dt);
    return false;
  }
  return true;
}

ic_value ic_graph_input(ic_graph *g, const char *name, ic_dtype dtype, int32_t ndim, const ic_dim *dims,
                        ic_layout layout) {
  if (!g) return IC_INVALID_VALUE;
  if (!name || !*name) return graph_fail(g, "ic_graph_input: empty name");
  /* Inputs share one namespace with named values (the text format prints both). */
  for (int32_t i = 0; i < g->nodes.count; i++) {
    const graph_node *other = &g->nodes.items[i];
    if (other->name && strcmp(other->name, name) == 0)
      return other->kind == GRAPH_INPUT
                 ? graph_fail(g, "ic_graph_input: duplicate input name '%s'", name)
                 : graph_fail(g, "ic_graph_input: name '%s' is already the name of value %" PRId32, name, i);
  }
  if (!graph_check_dtype(g, "ic_graph_input", dtype)) return IC_INVALID_VALUE;
  if (ndim < 0 || ndim > IC_MAX_DIMS)
    return graph_fail(g, "ic_graph_input '%s': ndim %" PRId32 " outside 0..%d", name, ndim, IC_MAX_DIMS);
  if (ndim > 0 && !dims) return graph_fail(g, "ic_graph_input '%s': dims is NULL", name);
  if (layout != IC_LAYOUT_CONTIGUOUS && layout != IC_LAYOUT_INNER_CONTIGUOUS && layout != IC_LAYOUT_STRIDED)
    return graph_fail(g, "ic_graph_input '%s': invalid layout %d", name, (int)layout);
  graph_node n = {.kind = GRAPH_INPUT, .dtype = dtype, .ndim = ndim, .layout = layout, .input = g->inputs.count};
  for (int32_t i = 0; i < ndim; i++) {
    n.dims[i] = graph_dim_expr(g, dims[i]);
    if (n.dims[i] == SYM_NONE) {
      if (sym_arena_failed(g->syms)) return graph_oom(g);
      return graph_fail(g, "ic_graph_input '%s': dim %" PRId32 " (%" PRId64 ") is neither a size nor a symbol", name,
                        i, dims[i]);
    }
  }
  if (!vec_grow((void **)&g->inputs.items, &g->inputs.cap, g->inputs.count + 1, sizeof(ic_value)))
    return graph_oom(g);
  n.name = str_dup(name);
  if (!n.name) return graph_oom(g);
  ic_value v = graph_append(g, &n);
  if (v == IC_INVALID_VALUE) {
    free(n.name);
    return v;
  }
  g->inputs.items[g->inputs.count++] = v;
  return v;
}

ic_value ic_graph_constant(ic_graph *g, double value, ic_dtype dtype) {
  if (!g) return IC_INVALID_VALUE;
  bool weak = dtype == IC_DTYPE_AUTO;
  if (weak) dtype = IC_F32;
  else if (!graph_check_dtype(g, "ic_graph_constant", dtype)) return IC_INVALID_VALUE;
  if (isnan(value) && !dtype_is_float(dtype))
    return graph_fail(g, "ic_graph_constant: NaN is not a value of %s", ic_dtype_name(dtype));
  graph_node n = {.kind = GRAPH_CONST, .dtype = dtype, .ndim = 0, .weak = weak};
  n.value = weak ? value : dtype_round(dtype, value);
  return graph_append(g, &n);
}

/* ---------------------------------------------------------------- ops */

/* Broadcast shape of two nodes into out; false (error recorded) if incompatible. */
static bool graph_broadcast_shape(ic_graph *g, const char *what, const graph_node *a, const graph_node *b,
                                  int32_t *ndim, sym_id *out) {
  int32_t nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int32_t i = 0; i < nd; i++) {
    int32_t ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    sym_id da = ia >= 0 ? a->dims[ia] : SYM_NONE, db = ib >= 0 ? b->dims[ib] : SYM_NONE;
    if (da == SYM_NONE || graph_dim_is_one(g, da)) out[i] = db == SYM_NONE ? da : db;
    else if (db == SYM_NONE || graph_dim_is_one(g, db) || da == db) out[i] = da;
    else {
      char sa[128], sb[128];
      graph_fail(g, "%s: shapes %s and %s do not broadcast (dim %" PRId32 ")", what,
                 graph_shape_text(g, a->ndim, a->dims, sa, sizeof sa),
                 graph_shape_text(g, b->ndim, b->dims, sb, sizeof sb), i);
      return false;
    }
  }
  *ndim = nd;
  return true;
}

ic_value ic_graph_op(ic_graph *g, ic_op op, int32_t nargs, const ic_value *args) {
  if (!g) return IC_INVALID_VALUE;
  const op_info *info = op_get(op);
  if (!info) return graph_fail(g, "ic_graph_op: invalid op %d", (int)op);
  if (info->result == OP_RESULT_TARGET)
    return graph_fail(g, "%s: use ic_graph_%s, which names the target dtype", info->name, info->name);
  if (nargs != info->arity || !args)
    return graph_fail(g, "%s: takes %" PRId32 " arguments, got %" PRId32, info->name, info->arity, nargs);
  int32_t mark = g->nodes.count;
  ic_value v[3];
  const graph_node *n[3] = {NULL, NULL, NULL};
  for (int32_t i = 0; i < nargs; i++) {
    if (!(n[i] = graph_arg(g, info->name, args[i]))) return IC_INVALID_VALUE;
    v[i] = args[i];
  }
  /* The data operands: all but where's condition. Weak constants adopt their partner's
   * dtype; then all data operands must agree. */
  int32_t first = op == IC_OP_WHERE ? 1 : 0;
  ic_dtype dt = IC_DTYPE_INVALID;
  for (int32_t i = first; i < nargs; i++)
    if (n[i] && !(n[i]->kind == GRAPH_CONST && n[i]->weak)) dt = dt ? dt : n[i]->dtype;
  if (!dt && n[first]) dt = n[first]->dtype;
  for (int32_t i = first; i < nargs; i++) {
    v[i] = graph_adopt_dtype(g, v[i], dt);
    if (v[i] == IC_INVALID_VALUE) return IC_INVALID_VALUE;
  }
  for (int32_t i = 0; i < nargs; i++) n[i] = &g->nodes.items[v[i]];
  for (int32_t i = first; i < nargs; i++) {
    if (n[i]->dtype != dt) {
      g->nodes.count = mark;
      return graph_fail(g, "dtype mismatch: %s vs %s: %s: operand dtypes differ (cast one of them)",
                        ic_dtype_name(dt), ic_dtype_name(n[i]->dtype), info->name);
    }
  }
  if (!op_accepts(info, dt)) {
    g->nodes.count = mark;
    return graph_fail(g, "%s: dtype %s not accepted (takes %s)", info->name, ic_dtype_name(dt),
                      op_types_text(info->types));
  }
  if (op == IC_OP_WHERE && n[0]->dtype != IC_BOOL) {
    g->nodes.count = mark;
    return graph_fail(g, "dtype mismatch: %s vs bool: where: condition must be bool", ic_dtype_name(n[0]->dtype));
  }
  int32_t ndim = n[0]->ndim;
  sym_id dims[IC_MAX_DIMS];
  memcpy(dims, n[0]->dims, sizeof dims);
  for (int32_t i = 1; i < nargs; i++) {
    graph_node acc = {.ndim = ndim};
    memcpy(acc.dims, dims, sizeof dims);
    if (!graph_broadcast_shape(g, info->name, &acc, n[i], &ndim, dims)) {
      g->nodes.count = mark;
      return IC_INVALID_VALUE;
    }
  }
  graph_node node = {.kind = GRAPH_OP, .op = op, .ndim = ndim, .nargs = nargs};
  node.dtype = info->result == OP_RESULT_BOOL ? IC_BOOL : dt;
  memcpy(node.dims, dims, sizeof dims);
  for (int32_t i = 0; i < nargs; i++) {
    node.args[i] = graph_broadcast_to(g, v[i], ndim, dims);
    if (node.args[i] == IC_INVALID_VALUE) {
      g->nodes.count = mark;
      return IC_INVALID_VALUE;
    }
  }
  ic_value r = graph_append(g, &node);
  if (r == IC_INVALID_VALUE) g->nodes.count = mark;
  return r;
}

ic_value ic_graph_unary(ic_graph *g, ic_op op, ic_value a) { return ic_graph_op(g, op, 1, &a); }

ic_value ic_graph_binary(ic_graph *g, ic_op op, ic_value a, ic_value b) {
  ic_value args[2] = {a, b};
  return ic_graph_op(g, op, 2, args);
}

ic_value ic_graph_where(ic_graph *g, ic_value cond, ic_value a, ic_value b) {
  ic_value args[3] = {cond, a, b};
  return ic_graph_op(g, IC_OP_WHERE, 3, args);
}

/* cast, cast_saturate and bitcast: one operand, a named target dtype. */
static ic_value graph_convert(ic_graph *g, ic_op op, ic_value a, ic_dtype dtype) {
  if (!g) return IC_INVALID_VALUE;
  const char *what = ic_op_name(op);
  const graph_node *src = graph_arg(g, what, a);
  if (!src || !graph_check_dtype(g, what, dtype)) return IC_INVALID_VALUE;
  if (op == IC_OP_BITCAST) {
    if (src->dtype == IC_BOOL || dtype == IC_BOOL)
      return graph_fail(g, "bitcast: bool has no bit pattern to reinterpret (%s to %s); use cast",
                        ic_dtype_name(src->dtype), ic_dtype_name(dtype));
    if (ic_dtype_size(src->dtype) != ic_dtype_size(dtype))
      return graph_fail(g, "bitcast: %s and %s differ in width (%zu and %zu bytes)", ic_dtype_name(src->dtype),
                        ic_dtype_name(dtype), ic_dtype_size(src->dtype), ic_dtype_size(dtype));
    if (src->kind == GRAPH_CONST && src->weak)
      return graph_fail(g, "bitcast: the operand is an untyped constant; give it a dtype first");
  } else if (src->kind == GRAPH_CONST && src->weak) {
    return ic_graph_constant(g, src->value, dtype);
  }
  graph_node n = {.kind = GRAPH_OP, .op = op, .dtype = dtype, .ndim = src->ndim, .nargs = 1, .args = {a}};
  memcpy(n.dims, src->dims, sizeof n.dims);
  return graph_append(g, &n);
}

ic_value ic_graph_cast(ic_graph *g, ic_value a, ic_dtype dtype) { return graph_convert(g, IC_OP_CAST, a, dtype); }

ic_value ic_graph_cast_saturate(ic_graph *g, ic_value a, ic_dtype dtype) {
  return graph_convert(g, IC_OP_CAST_SATURATE, a, dtype);
}

ic_value ic_graph_bitcast(ic_graph *g, ic_value a, ic_dtype dtype) {
  return graph_convert(g, IC_OP_BITCAST, a, dtype);
}

/* ---------------------------------------------------------------- views */

static bool graph_check_view_rank(ic_graph *g, const char *what, int32_t ndim, const void *array) {
  if (ndim < 0 || ndim > IC_MAX_DIMS) {
    graph_fail(g, "%s: ndim %" PRId32 " outside 0..%d", what, ndim, IC_MAX_DIMS);
    return false;
  }
  if (ndim > 0 && !array) {
    graph_fail(g, "%s: dims is NULL", what);
    return false;
  }
  return true;
}

ic_value graph_reshape_exprs(ic_graph *g, ic_value a, int32_t ndim, const sym_id *dims) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "reshape", a);
  if (!src || !graph_check_view_rank(g, "reshape", ndim, dims)) return IC_INVALID_VALUE;
  graph_node n = {.kind = GRAPH_RESHAPE, .dtype = src->dtype, .ndim = ndim, .nargs = 1, .args = {a}};
  int32_t infer = -1;
  sym_id known = sym_const(g->syms, 1);
  for (int32_t i = 0; i < ndim; i++) {
    if (dims[i] == SYM_NONE) {
      if (infer >= 0) return graph_fail(g, "reshape: more than one dim to infer");
      infer = i;
      continue;
    }
    n.dims[i] = dims[i];
    known = sym_mul(g->syms, known, n.dims[i]);
  }
  sym_id numel = graph_numel(g, src->ndim, src->dims);
  if (infer >= 0) {
    /* Cancel the dims both sides share ([n, 4, 9] -> [n, ?] leaves 36 / 1), so a
     * symbolic dim never has to be divided by itself (n / n is not 1 when n is 0). */
    bool used[IC_MAX_DIMS] = {false};
    sym_id rest_known = sym_const(g->syms, 1);
    for (int32_t i = 0; i < ndim; i++) {
      if (i == infer) continue;
      int32_t j = 0;
      while (j < src->ndim && (used[j] || src->dims[j] != n.dims[i])) j++;
      if (j < src->ndim) used[j] = true;
      else rest_known = sym_mul(g->syms, rest_known, n.dims[i]);
    }
    sym_id rest = sym_const(g->syms, 1);
    for (int32_t j = 0; j < src->ndim; j++)
      if (!used[j]) rest = sym_mul(g->syms, rest, src->dims[j]);
    n.dims[infer] = sym_floordiv(g->syms, rest, rest_known);
    if (sym_mul(g->syms, n.dims[infer], rest_known) != rest) {
      char s[128];
      return graph_fail(g, "reshape: cannot infer a dim of %s", graph_shape_text(g, src->ndim, src->dims, s, sizeof s));
    }
  } else if (known != numel) {
    char s1[128], s2[128];
    return graph_fail(g, "reshape: %s and %s do not provably have the same number of elements",
                      graph_shape_text(g, src->ndim, src->dims, s1, sizeof s1),
                      graph_shape_text(g, ndim, n.dims, s2, sizeof s2));
  }
  return graph_append(g, &n);
}

ic_value ic_graph_reshape(ic_graph *g, ic_value a, int32_t ndim, const ic_dim *dims) {
  if (!g) return IC_INVALID_VALUE;
  if (!graph_arg(g, "reshape", a) || !graph_check_view_rank(g, "reshape", ndim, dims)) return IC_INVALID_VALUE;
  sym_id exprs[IC_MAX_DIMS];
  for (int32_t i = 0; i < ndim; i++) {
    exprs[i] = dims[i] == IC_DIM_INFER ? SYM_NONE : graph_dim_expr(g, dims[i]);
    if (exprs[i] == SYM_NONE && dims[i] != IC_DIM_INFER)
      return graph_fail(g, "reshape: dim %" PRId32 " is neither a size nor a symbol", i);
  }
  return graph_reshape_exprs(g, a, ndim, exprs);
}

ic_value ic_graph_permute(ic_graph *g, ic_value a, int32_t ndim, const int32_t *perm) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "permute", a);
  if (!src || !graph_check_view_rank(g, "permute", ndim, perm)) return IC_INVALID_VALUE;
  if (ndim != src->ndim)
    return graph_fail(g, "permute: %" PRId32 " entries for a tensor of %" PRId32 " dims", ndim, src->ndim);
  graph_node n = {.kind = GRAPH_PERMUTE, .dtype = src->dtype, .ndim = ndim, .nargs = 1, .args = {a}};
  bool seen[IC_MAX_DIMS] = {false};
  for (int32_t i = 0; i < ndim; i++) {
    if (perm[i] < 0 || perm[i] >= ndim || seen[perm[i]])
      return graph_fail(g, "permute: entry %" PRId32 " (%" PRId32 ") makes no permutation", i, perm[i]);
    seen[perm[i]] = true;
    n.perm[i] = perm[i];
    n.dims[i] = src->dims[perm[i]];
  }
  return graph_append(g, &n);
}

ic_value graph_expand_exprs(ic_graph *g, ic_value a, int32_t ndim, const sym_id *dims) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "expand", a);
  if (!src || !graph_check_view_rank(g, "expand", ndim, dims)) return IC_INVALID_VALUE;
  if (ndim < src->ndim)
    return graph_fail(g, "expand: %" PRId32 " dims cannot hold a tensor of %" PRId32, ndim, src->ndim);
  for (int32_t i = 0; i < ndim; i++) {
    int32_t j = i - (ndim - src->ndim);
    if (j >= 0 && src->dims[j] != dims[i] && !graph_dim_is_one(g, src->dims[j])) {
      char s1[128], s2[128];
      return graph_fail(g, "expand: %s cannot expand to %s (dim %" PRId32 ")",
                        graph_shape_text(g, src->ndim, src->dims, s1, sizeof s1),
                        graph_shape_text(g, ndim, dims, s2, sizeof s2), i);
    }
  }
  if (src->ndim == ndim && memcmp(src->dims, dims, sizeof(sym_id) * (size_t)ndim) == 0) return a;
  graph_node n = {.kind = GRAPH_EXPAND, .dtype = src->dtype, .ndim = ndim, .nargs = 1, .args = {a}};
  memcpy(n.dims, dims, sizeof(sym_id) * (size_t)ndim);
  return graph_append(g, &n);
}

ic_value ic_graph_expand(ic_graph *g, ic_value a, int32_t ndim, const ic_dim *dims) {
  if (!g) return IC_INVALID_VALUE;
  if (!graph_arg(g, "expand", a) || !graph_check_view_rank(g, "expand", ndim, dims)) return IC_INVALID_VALUE;
  sym_id exprs[IC_MAX_DIMS];
  for (int32_t i = 0; i < ndim; i++) {
    exprs[i] = graph_dim_expr(g, dims[i]);
    if (exprs[i] == SYM_NONE) return graph_fail(g, "expand: dim %" PRId32 " is neither a size nor a symbol", i);
  }
  return graph_expand_exprs(g, a, ndim, exprs);
}

/* ---------------------------------------------------------------- value names */

bool graph_name_valid(const char *s) {
  if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
  for (s++; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
      return false;
  return true;
}

ic_status ic_graph_name_value(ic_graph *g, ic_value v, const char *name) {
  if (!g) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_name_value: graph is NULL");
  if (!graph_arg(g, "ic_graph_name_value", v)) return IC_ERR_INVALID_GRAPH;
  if (!name || !*name) return (graph_fail(g, "ic_graph_name_value: empty name"), IC_ERR_INVALID_GRAPH);
  /* '%' is left out: the text format names unnamed values %<id>. */
  if (!graph_name_valid(name))
    return (graph_fail(g, "ic_graph_name_value: '%s' is not a name ([A-Za-z_][A-Za-z0-9_.]*)", name),
            IC_ERR_INVALID_GRAPH);
  graph_node *n = &g->nodes.items[v];
  if (n->name)
    return (graph_fail(g, "ic_graph_name_value: value %" PRId32 " is already named '%s'", v, n->name),
            IC_ERR_INVALID_GRAPH);
  for (int32_t i = 0; i < g->nodes.count; i++)
    if (g->nodes.items[i].name && strcmp(g->nodes.items[i].name, name) == 0)
      return (graph_fail(g, "ic_graph_name_value: name '%s' is already the name of value %" PRId32, name, i),
              IC_ERR_INVALID_GRAPH);
  if (!(n->name = str_dup(name))) {
    graph_oom(g);
    return IC_ERR_OUT_OF_MEMORY;
  }
  return IC_OK;
}

/* ---------------------------------------------------------------- outputs, queries */

ic_status ic_graph_output(ic_graph *g, const char *name, ic_value value) {
  if (!g) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_output: graph is NULL");
  if (!name || !*name) return (graph_fail(g, "ic_graph_output: empty name"), IC_ERR_INVALID_GRAPH);
  for (int32_t i = 0; i < g->outputs.count; i++)
    if (strcmp(g->outputs.items[i].name, name) == 0)
      return (graph_fail(g, "ic_graph_output: duplicate output name '%s'", name), IC_ERR_INVALID_GRAPH);
  if (!graph_arg(g, "ic_graph_output", value)) return IC_ERR_INVALID_GRAPH;
  graph_output o = {str_dup(name), value};
  if (!o.name || !VEC_PUSH(g->outputs, o)) {
    free(o.name);
    graph_oom(g);
    return IC_ERR_OUT_OF_MEMORY;
  }
  /* the output is recorded either way; a graph that holds an error says so, as documented */
  return g->error;
}

ic_dtype ic_graph_value_dtype(const ic_graph *g, ic_value v) {
  const graph_node *n = graph_node_get(g, v);
  return n ? n->dtype : IC_DTYPE_INVALID;
}

int32_t ic_graph_value_ndim(const ic_graph *g, ic_value v) {
  const graph_node *n = graph_node_get(g, v);
  return n ? n->ndim : -1;
}

ic_status ic_graph_value_dims(const ic_graph *g, ic_value v, ic_dim *dims) {
  const graph_node *n = graph_node_get(g, v);
  if (!n || (!dims && n->ndim > 0))
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_value_dims: not a value, or dims is NULL");
  for (int32_t i = 0; i < n->ndim; i++) {
    int64_t c;
    if (sym_is_const(g->syms, n->dims[i], &c)) dims[i] = c;
    else if (sym_kind_of(g->syms, n->dims[i]) == SYM_SYMBOL) dims[i] = -(ic_dim)sym_leaf_index(g->syms, n->dims[i]) - 1;
    else dims[i] = IC_DIM_INFER;
  }
  return IC_OK;
}

/* ---------------------------------------------------------------- printing */

void graph_print_type(const ic_graph *g, ic_dtype dt, int32_t ndim, const sym_id *dims, sbuf *out) {
  sym_names names = graph_symbol_names(g);
  sbuf_puts(out, ic_dtype_name(dt));
  sym_print_list(g->syms, ndim, dims, &names, out);
}

/* ---------------------------------------------------------------- reshape shorthands */

/* A dim index of a tensor with n dims (negative counts from the end), or -1. */
static int32_t graph_dim_index(int32_t dim, int32_t n) {
  int32_t d = dim < 0 ? dim + n : dim;
  return d >= 0 && d < n ? d : -1;
}

ic_value ic_graph_squeeze(ic_graph *g, ic_value a, int32_t dim) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "squeeze", a);
  if (!src) return IC_INVALID_VALUE;
  int32_t d = graph_dim_index(dim, src->ndim);
  if (d < 0) return graph_fail(g, "squeeze: dim %" PRId32 " outside a tensor of %" PRId32 " dims", dim, src->ndim);
  if (!graph_dim_is_one(g, src->dims[d]))
    return graph_fail(g, "squeeze: dim %" PRId32 " does not have the constant size 1", dim);
  sym_id dims[IC_MAX_DIMS];
  int32_t n = 0;
  for (int32_t i = 0; i < src->ndim; i++)
    if (i != d) dims[n++] = src->dims[i];
  return graph_reshape_exprs(g, a, n, dims);
}

ic_value ic_graph_unsqueeze(ic_graph *g, ic_value a, int32_t dim) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "unsqueeze", a);
  if (!src) return IC_INVALID_VALUE;
  if (src->ndim == IC_MAX_DIMS) return graph_fail(g, "unsqueeze: a tensor of %d dims cannot grow", IC_MAX_DIMS);
  int32_t d = graph_dim_index(dim, src->ndim + 1);
  if (d < 0) return graph_fail(g, "unsqueeze: dim %" PRId32 " outside a result of %" PRId32 " dims", dim, src->ndim + 1);
  sym_id dims[IC_MAX_DIMS];
  for (int32_t i = 0, j = 0; i <= src->ndim; i++) dims[i] = i == d ? sym_const(g->syms, 1) : src->dims[j++];
  return graph_reshape_exprs(g, a, src->ndim + 1, dims);
}

ic_value ic_graph_flatten(ic_graph *g, ic_value a, int32_t start, int32_t end) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "flatten", a);
  if (!src) return IC_INVALID_VALUE;
  int32_t n = src->ndim ? src->ndim : 1;
  int32_t s = graph_dim_index(start, n), e = graph_dim_index(end, n);
  if (s < 0 || e < 0 || s > e)
    return graph_fail(g, "flatten: dims %" PRId32 "..%" PRId32 " are no range of a tensor of %" PRId32 " dims", start,
                      end, src->ndim);
  sym_id dims[IC_MAX_DIMS];
  int32_t m = 0;
  for (int32_t i = 0; i < src->ndim; i++) {
    if (i > s && i <= e) dims[m - 1] = sym_mul(g->syms, dims[m - 1], src->dims[i]);
    else dims[m++] = src->dims[i];
  }
  if (src->ndim == 0) dims[m++] = sym_const(g->syms, 1); /* a scalar flattens to [1] */
  return graph_reshape_exprs(g, a, m, dims);
}

/* ---------------------------------------------------------------- slice, concat, pad */

/* A slice bound as Python clamps it into [lo, hi] of a dim of size n: a negative bound
 * counts from the end; INT64_MIN and INT64_MAX are the open ends. */
static sym_id graph_slice_bound(ic_graph *g, sym_id n, int64_t b, sym_id lo, sym_id hi) {
  sym_arena *a = g->syms;
  if (b == INT64_MIN) return lo;
  if (b == INT64_MAX) return hi;
  if (b >= 0) return sym_min(a, sym_const(a, b), hi);
  return sym_max(a, sym_add(a, n, sym_const(a, b)), lo);
}

ic_value ic_graph_slice(ic_graph *g, ic_value a, int32_t dim, int64_t start, int64_t stop, int64_t step) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "slice", a);
  if (!src) return IC_INVALID_VALUE;
  int32_t d = graph_dim_index(dim, src->ndim);
  if (d < 0) return graph_fail(g, "slice: dim %" PRId32 " outside a tensor of %" PRId32 " dims", dim, src->ndim);
  if (step == 0) return graph_fail(g, "slice: step is 0 (a step must be positive or negative)");
  if (step == INT64_MIN) return graph_fail(g, "slice: step INT64_MIN has no magnitude in int64");
  sym_arena *sa = g->syms;
  sym_id n = src->dims[d], zero = sym_const(sa, 0), minus_one = sym_const(sa, -1);
  /* Clamped as Python clamps: [0, n] going forward, [-1, n - 1] going backward. */
  sym_id lo = step > 0 ? zero : minus_one, hi = step > 0 ? n : sym_sub(sa, n, sym_const(sa, 1));
  sym_id first = graph_slice_bound(g, n, start, lo, hi), last = graph_slice_bound(g, n, stop, lo, hi);
  sym_id span = step > 0 ? sym_sub(sa, last, first) : sym_sub(sa, first, last);
  if (!sym_nonneg(sa, span)) span = sym_max(sa, span, zero);
  graph_node r = {.kind = GRAPH_SLICE, .dtype = src->dtype, .ndim = src->ndim, .nargs = 1, .args = {a}, .axis = d,
                  .start = start, .stop = stop, .step = step, .first = first};
  memcpy(r.dims, src->dims, sizeof r.dims);
  /* ceil(span / |step|), as a floor division (the form the text format reads back) */
  int64_t magnitude = step > 0 ? step : -step, c = 0;
  if (sym_is_const(sa, span, &c)) r.dims[d] = sym_const(sa, c == 0 ? 0 : (c - 1) / magnitude + 1);
  else if (magnitude > INT32_MAX) /* span + |step| - 1 must stay far from overflow */
    return graph_fail_with(g, IC_ERR_UNSUPPORTED, "slice: step %" PRId64 " on a symbolic dim (at most 2^31 - 1 in magnitude)", step);
  else r.dims[d] = sym_floordiv(sa, sym_add(sa, span, sym_const(sa, magnitude - 1)), sym_const(sa, magnitude));
  if (sym_arena_failed(sa)) return graph_oom(g);
  if (step == 1 && first == zero && r.dims[d] == n) return a; /* every point, in order */
  return graph_append(g, &r);
}

ic_value ic_graph_concat(ic_graph *g, int32_t n, const ic_value *values, int32_t dim) {
  if (!g) return IC_INVALID_VALUE;
  if (n < 1) return graph_fail(g, "concat: no values (n is %" PRId32 ", at least 1 is needed)", n);
  if (!values) return graph_fail(g, "concat: values is NULL");
  const graph_node *first = graph_arg(g, "concat", values[0]);
  if (!first) return IC_INVALID_VALUE;
  if (first->ndim == 0) return graph_fail(g, "concat: value 0 is a scalar (no dim to concatenate along)");
  int32_t d = graph_dim_index(dim, first->ndim);
  if (d < 0) return graph_fail(g, "concat: dim %" PRId32 " outside a tensor of %" PRId32 " dims", dim, first->ndim);
  graph_node r = {.kind = GRAPH_CONCAT, .dtype = first->dtype, .ndim = first->ndim, .nargs = n, .axis = d,
                  .parts = g->concat_parts.count};
  memcpy(r.dims, first->dims, sizeof r.dims);
  for (int32_t i = 1; i < n; i++) {
    const graph_node *p = graph_arg(g, "concat", values[i]);
    if (!p) return IC_INVALID_VALUE;
    if (p->dtype != first->dtype)
      return graph_fail(g, "dtype mismatch: %s vs %s: concat: value %" PRId32 " is %s, value 0 is %s (cast one of them)",
                        ic_dtype_name(p->dtype), ic_dtype_name(first->dtype), i, ic_dtype_name(p->dtype),
                        ic_dtype_name(first->dtype));
    bool same = p->ndim == first->ndim;
    for (int32_t k = 0; same && k < first->ndim; k++) same = k == d || p->dims[k] == first->dims[k];
    if (!same) {
      char s1[128], s2[128];
      return graph_fail(g, "concat: value %" PRId32 " has shape %s, value 0 %s: all dims but dim %" PRId32
                           " must be equal",
                        i, graph_shape_text(g, p->ndim, p->dims, s1, sizeof s1),
                        graph_shape_text(g, first->ndim, first->dims, s2, sizeof s2), d);
    }
    r.dims[d] = sym_add(g->syms, r.dims[d], p->dims[d]);
  }
  if (n == 1) return values[0];
  if (graph_sizes_wrapped(g)) {
    sbuf sb = {0};
    sym_names names = graph_symbol_names(g);
    for (int32_t i = 0; i < n; i++) {
      if (i) sbuf_puts(&sb, " + ");
      sym_print(g->syms, g->nodes.items[values[i]].dims[d], &names, &sb);
    }
    graph_fail(g, "concat: the sizes along dim %" PRId32 ", %s, add up past INT64_MAX (the result's size overflows)", d,
               sb.data ? sb.data : "?");
    sbuf_free(&sb);
    return IC_INVALID_VALUE;
  }
  if (sym_arena_failed(g->syms) ||
      !vec_grow((void **)&g->concat_parts.items, &g->concat_parts.cap, g->concat_parts.count + n, sizeof(ic_value)))
    return graph_oom(g);
  memcpy(&g->concat_parts.items[g->concat_parts.count], values, sizeof(ic_value) * (size_t)n);
  ic_value v = graph_append(g, &r);
  if (v != IC_INVALID_VALUE) g->concat_parts.count += n;
  return v;
}

ic_value ic_graph_pad(ic_graph *g, ic_value a, int32_t npads, const int64_t *lo_hi, double value) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "pad", a);
  if (!src) return IC_INVALID_VALUE;
  if (npads < 0 || npads > src->ndim)
    return graph_fail(g, "pad: %" PRId32 " pairs of amounts for a tensor of %" PRId32 " dims", npads, src->ndim);
  if (npads > 0 && !lo_hi) return graph_fail(g, "pad: lo_hi is NULL");
  if (isnan(value) && !dtype_is_float(src->dtype))
    return graph_fail(g, "pad: NaN is not a value of %s", ic_dtype_name(src->dtype));
  sym_arena *sa = g->syms;
  graph_node r = {.kind = GRAPH_PAD, .dtype = src->dtype, .ndim = src->ndim, .nargs = 1, .args = {a},
                  .value = dtype_round(src->dtype, value)};
  memcpy(r.dims, src->dims, sizeof r.dims);
  bool any = false;
  for (int32_t i = 0; i < npads; i++) {
    int32_t d = src->ndim - 1 - i; /* pairs run from the last dim backwards, as F.pad's */
    int64_t lo = lo_hi[2 * (size_t)i], hi = lo_hi[2 * (size_t)i + 1], size = 0;
    /* Bounded so that lo + hi and a kernel's index arithmetic stay far from overflow. */
    if (lo > GRAPH_MAX_PAD || lo < -GRAPH_MAX_PAD || hi > GRAPH_MAX_PAD || hi < -GRAPH_MAX_PAD)
      return graph_fail(g, "pad: amount %" PRId64 " or %" PRId64 " for dim %" PRId32 " is out of range (at most 2^61 = %" PRId64
                           " in magnitude)",
                        lo, hi, d, GRAPH_MAX_PAD);
    bool constant = sym_is_const(sa, src->dims[d], &size);
    if (!constant && (lo < 0 || hi < 0))
      return graph_fail_with(g, IC_ERR_UNSUPPORTED, "pad: dim %" PRId32 " is symbolic: negative amounts (crops) need a constant size", d);
    int64_t crop = (lo < 0 ? -lo : 0) + (hi < 0 ? -hi : 0);
    if (constant && crop > size)
      return graph_fail(g, "pad: crops %" PRId64 " and %" PRId64 " take more than dim %" PRId32 " of size %" PRId64, lo,
                        hi, d, size);
    r.pad[d][0] = lo;
    r.pad[d][1] = hi;
    r.dims[d] = sym_add(sa, src->dims[d], sym_const(sa, lo + hi));
    if (graph_sizes_wrapped(g)) { /* a constant size, or a symbolic one's constant part */
      char s[128];
      return graph_fail(g, "pad: dim %" PRId32 " of size %s padded by %" PRId64 " and %" PRId64 " overflows 64-bit integers",
                        d, graph_shape_text(g, 1, &src->dims[d], s, sizeof s), lo, hi);
    }
    any |= lo != 0 || hi != 0;
  }
  if (sym_arena_failed(sa)) return graph_oom(g);
  if (!any) return a;
  return graph_append(g, &r);
}

/* ---------------------------------------------------------------- reductions */

/* The axes of a reduction over a tensor of ndim dims as a bit mask (naxes 0: all). */
static bool graph_axes_mask(ic_graph *g, const char *what, int32_t ndim, int32_t naxes, const int32_t *axes,
                            uint32_t *mask) {
  *mask = 0;
  if (naxes == 0) {
    *mask = ndim ? (1u << ndim) - 1u : 0;
    return true;
  }
  if (naxes < 0 || naxes > ndim) {
    graph_fail(g, "%s: %" PRId32 " axes for a tensor of %" PRId32 " dims", what, naxes, ndim);
    return false;
  }
  if (!axes) {
    graph_fail(g, "%s: axes is NULL", what);
    return false;
  }
  for (int32_t i = 0; i < naxes; i++) {
    int32_t d = graph_dim_index(axes[i], ndim);
    if (d < 0) {
      graph_fail(g, "%s: axis %" PRId32 " outside a tensor of %" PRId32 " dims", what, axes[i], ndim);
      return false;
    }
    if (*mask & (1u << d)) {
      graph_fail(g, "%s: axis %" PRId32 " given twice", what, axes[i]);
      return false;
    }
    *mask |= 1u << d;
  }
  return true;
}

ic_value graph_reduce_mask(ic_graph *g, ic_reduce_op op, ic_value a, uint32_t axes, bool keepdim, double correction) {
  const reduce_info *info = reduce_get(op);
  if (!info) return graph_fail(g, "ic_graph_reduce: invalid reduction %d", (int)op);
  const graph_node *src = graph_arg(g, info->name, a);
  if (!src) return IC_INVALID_VALUE;
  if (src->ndim < 32 && (axes >> src->ndim) != 0)
    return graph_fail(g, "%s: an axis outside a tensor of %" PRId32 " dims", info->name, src->ndim);
  ic_dtype dt = reduce_result_dtype(op, src->dtype);
  if (!dt) {
    op_info types = {.types = info->types};
    return graph_fail(g, "%s: dtype %s not accepted (takes %s%s)", info->name, ic_dtype_name(src->dtype),
                      op_types_text(types.types),
                      op == IC_REDUCE_MEAN && dtype_is_integer(src->dtype) ? "; cast integers to a float dtype first" : "");
  }
  if (correction != 0 && op != IC_REDUCE_MEAN) return graph_fail(g, "%s: only mean takes a correction", info->name);
  if (!isfinite(correction)) return graph_fail(g, "mean: correction %g is not finite", correction);
  sym_id count = sym_const(g->syms, 1);
  for (int32_t d = 0; d < src->ndim; d++)
    if (axes & (1u << d)) count = sym_mul(g->syms, count, src->dims[d]);
  int64_t n = 0;
  if (info->needs_elements && sym_is_const(g->syms, count, &n) && n == 0)
    return graph_fail(g, "%s: the reduction is over no elements (a dim of size 0)", info->name);
  graph_node r = {.kind = GRAPH_REDUCE, .dtype = dt, .nargs = 1, .args = {a}, .reduce = op, .axes = axes,
                  .keepdim = keepdim, .value = correction};
  for (int32_t d = 0; d < src->ndim; d++) {
    if (!(axes & (1u << d))) r.dims[r.ndim++] = src->dims[d];
    else if (keepdim) r.dims[r.ndim++] = sym_const(g->syms, 1);
  }
  return graph_append(g, &r);
}

ic_value ic_graph_reduce(ic_graph *g, ic_reduce_op op, ic_value a, int32_t naxes, const int32_t *axes, int keepdim) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, ic_reduce_name(op), a);
  uint32_t mask;
  if (!src || !graph_axes_mask(g, ic_reduce_name(op), src->ndim, naxes, axes, &mask)) return IC_INVALID_VALUE;
  return graph_reduce_mask(g, op, a, mask, keepdim != 0, 0);
}

ic_value ic_graph_mean_correction(ic_graph *g, ic_value a, int32_t naxes, const int32_t *axes, double correction,
                                  int keepdim) {
  if (!g) return IC_INVALID_VALUE;
  const graph_node *src = graph_arg(g, "mean", a);
  uint32_t mask;
  if (!src || !graph_axes_mask(g, "mean", src->ndim, naxes, axes, &mask)) return IC_INVALID_VALUE;
  return graph_reduce_mask(g, IC_REDUCE_MEAN, a, mask, keepdim != 0, correction);
}

/* Shorthands build ordinary nodes; on an error they roll the graph back to where it was
 * (the first error stays recorded). */
static ic_value graph_rollback(ic_graph *g, int32_t mark) {
  g->nodes.count = mark;
  return IC_INVALID_VALUE;
}

static bool graph_float_operand(ic_graph *g, const char *what, ic_value a, const graph_node **out) {
  const graph_node *src = graph_arg(g, what, a);
  if (src && !dtype_is_float(src->dtype)) {
    graph_fail(g, "%s: dtype %s not accepted (takes %s)", what, ic_dtype_name(src->dtype),
               op_types_text(OP_TYPES_FLOAT));
    src = NULL;
  }
  *out = src;
  return src != NULL;
}

static ic_value graph_bin(ic_graph *g, ic_op op, ic_value a, ic_value b) {
  if (a == IC_INVALID_VALUE || b == IC_INVALID_VALUE) return IC_INVALID_VALUE;
  return ic_graph_binary(g, op, a, b);
}

static ic_value graph_un(ic_graph *g, ic_op op, ic_value a) {
  return a == IC_INVALID_VALUE ? IC_INVALID_VALUE : ic_graph_unary(g, op, a);
}

static ic_value graph_red(ic_graph *g, ic_reduce_op op, ic_value a, uint32_t mask, double correction) {
  return a == IC_INVALID_VALUE ? IC_INVALID_VALUE : graph_reduce_mask(g, op, a, mask, true, correction);
}

/* var's nodes: the mean kept (it broadcasts back over the row), the last mean with the
 * caller's keepdim, so that no reshape (a copy kernel of its own) drops the dims after. */
static ic_value graph_var_mask(ic_graph *g, ic_value a, uint32_t mask, double correction, bool keepdim) {
  ic_value m = graph_red(g, IC_REDUCE_MEAN, a, mask, 0);
  ic_value d = graph_bin(g, IC_OP_SUB, a, m);
  ic_value sq = graph_bin(g, IC_OP_MUL, d, d);
  return sq == IC_INVALID_VALUE ? IC_INVALID_VALUE : graph_reduce_mask(g, IC_REDUCE_MEAN, sq, mask, keepdim, correction);
}

static ic_value graph_var_or_std(ic_graph *g, const char *what, ic_value a, int32_t naxes, const int32_t *axes,
                                 double correction, int keepdim, bool std) {
  if (!g) return IC_INVALID_VALUE;
  int32_t mark = g->nodes.count;
  const graph_node *src;
  uint32_t mask;
  if (!graph_float_operand(g, what, a, &src) || !graph_axes_mask(g, what, src->ndim, naxes, axes, &mask))
    return IC_INVALID_VALUE;
  ic_value v = graph_var_mask(g, a, mask, correction, keepdim != 0);
  if (std) v = graph_un(g, IC_OP_SQRT, v);
  return v == IC_INVALID_VALUE ? graph_rollback(g, mark) : v;
}

ic_value ic_graph_var(ic_graph *g, ic_value a, int32_t naxes, const int32_t *axes, double correction, int keepdim) {
  return graph_var_or_std(g, "var", a, naxes, axes, correction, keepdim, false);
}

ic_value ic_graph_std(ic_graph *g, ic_value a, int32_t naxes, const int32_t *axes, double correction, int keepdim) {
  return graph_var_or_std(g, "std", a, naxes, axes, correction, keepdim, true);
}

static ic_value graph_softmax_like(ic_graph *g, const char *what, ic_value a, int32_t axis, bool log) {
  if (!g) return IC_INVALID_VALUE;
  int32_t mark = g->nodes.count;
  const graph_node *src;
  uint32_t mask;
  if (!graph_float_operand(g, what, a, &src) || !graph_axes_mask(g, what, src->ndim, 1, &axis, &mask))
    return IC_INVALID_VALUE;
  ic_value shifted = graph_bin(g, IC_OP_SUB, a, graph_red(g, IC_REDUCE_MAX, a, mask, 0));
  ic_value e = graph_un(g, IC_OP_EXP, shifted);
  ic_value s = graph_red(g, IC_REDUCE_SUM, e, mask, 0);
  ic_value v = log ? graph_bin(g, IC_OP_SUB, shifted, graph_un(g, IC_OP_LOG, s)) : graph_bin(g, IC_OP_DIV, e, s);
  return v == IC_INVALID_VALUE ? graph_rollback(g, mark) : v;
}

ic_value ic_graph_softmax(ic_graph *g, ic_value a, int32_t axis) { return graph_softmax_like(g, "softmax", a, axis, false); }

ic_value ic_graph_log_softmax(ic_graph *g, ic_value a, int32_t axis) {
  return graph_softmax_like(g, "log_softmax", a, axis, true);
}

/* The mask of the last nlast dims, for the norms. */
static bool graph_last_dims(ic_graph *g, const char *what, const graph_node *src, int32_t nlast, uint32_t *mask) {
  if (nlast < 1 || nlast > src->ndim) {
    graph_fail(g, "%s: %" PRId32 " normalized dims for a tensor of %" PRId32 " dims (1 to its rank)", what, nlast,
               src->ndim);
    return false;
  }
  *mask = ((1u << src->ndim) - 1u) & ~((1u << (src->ndim - nlast)) - 1u);
  return true;
}

/* The affine part of the norms: v * w, then + b (either may be IC_INVALID_VALUE: none). */
static ic_value graph_norm_affine(ic_graph *g, ic_value v, ic_value w, ic_value b) {
  if (w != IC_INVALID_VALUE) v = graph_bin(g, IC_OP_MUL, v, w);
  if (b != IC_INVALID_VALUE) v = graph_bin(g, IC_OP_ADD, v, b);
  return v;
}

static bool graph_optional_arg(ic_graph *g, const char *what, ic_value v) {
  return v == IC_INVALID_VALUE || graph_arg(g, what, v) != NULL;
}

ic_value ic_graph_layer_norm(ic_graph *g, ic_value a, int32_t nlast, ic_value weight, ic_value bias, double eps) {
  if (!g) return IC_INVALID_VALUE;
  int32_t mark = g->nodes.count;
  const graph_node *src;
  uint32_t mask;
  if (!graph_float_operand(g, "layer_norm", a, &src) || !graph_last_dims(g, "layer_norm", src, nlast, &mask) ||
      !graph_optional_arg(g, "layer_norm", weight) || !graph_optional_arg(g, "layer_norm", bias))
    return IC_INVALID_VALUE;
  ic_dtype dt = src->dtype;
  ic_value m = graph_red(g, IC_REDUCE_MEAN, a, mask, 0);
  ic_value d = graph_bin(g, IC_OP_SUB, a, m);
  ic_value var = graph_red(g, IC_REDUCE_MEAN, graph_bin(g, IC_OP_MUL, d, d), mask, 0);
  ic_value inv = graph_un(g, IC_OP_RSQRT, graph_bin(g, IC_OP_ADD, var, ic_graph_constant(g, eps, dt)));
  ic_value v = graph_norm_affine(g, graph_bin(g, IC_OP_MUL, d, inv), weight, bias);
  return v == IC_INVALID_VALUE ? graph_rollback(g, mark) : v;
}

ic_value ic_graph_rms_norm(ic_graph *g, ic_value a, int32_t nlast, ic_value weight, double eps) {
  if (!g) return IC_INVALID_VALUE;
  int32_t mark = g->nodes.count;
  const graph_node *src;
  uint32_t mask;
  if (!graph_float_operand(g, "rms_norm", a, &src) || !graph_last_dims(g, "rms_norm", src, nlast, &mask) ||
      !graph_optional_arg(g, "rms_norm", weight))
    return IC_INVALID_VALUE;
  ic_dtype dt = src->dtype;
  ic_value ms = graph_red(g, IC_REDUCE_MEAN, graph_bin(g, IC_OP_MUL, a, a), mask, 0);
  ic_value inv = graph_un(g, IC_OP_RSQRT, graph_bin(g, IC_OP_ADD, ms, ic_graph_constant(g, eps, dt)));
  ic_value v = graph_norm_affine(g, graph_bin(g, IC_OP_MUL, a, inv), weight, IC_INVALID_VALUE);
  return v == IC_INVALID_VALUE ? graph_rollback(g, mark) : v;
}

/* ---------------------------------------------------------------- matmul */

/* "a f32[4, 5] and b f32[6, 7]" into buf: every matmul error names both operands. */
static const char *graph_matmul_operands(const ic_graph *g, const graph_node *a, const graph_node *b, char *buf,
                                         size_t size) {
  sbuf sb = {0};
  sbuf_puts(&sb, "a ");
  graph_print_type(g, a->dtype, a->ndim, a->dims, &sb);
  sbuf_puts(&sb, " and b ");
  graph_print_type(g, b->dtype, b->ndim, b->dims, &sb);
  snprintf(buf, size, "%s", sb.data ? sb.data : "?");
  sbuf_free(&sb);
  return buf;
}

/* One dim as the text format writes it ("5", "n", "4 * n"), into buf. */
static const char *graph_dim_text(const ic_graph *g, sym_id d, char *buf, size_t size) {
  sbuf sb = {0};
  sym_names names = graph_symbol_names(g);
  sym_print(g->syms, d, &names, &sb);
  snprintf(buf, size, "%s", sb.data ? sb.data : "?");
  sbuf_free(&sb);
  return buf;
}

/* torch.matmul's shape rules, with no views added: a 1-D a is a row [1, K] and a 1-D b a
 * column [K, 1] whose added dim is dropped from the result; the dims before the last two
 * (the batch dims) broadcast numpy-style. */
ic_value ic_graph_matmul(ic_graph *g, ic_value a, ic_value b) {
  static const char what[] = "matmul";
  if (!g) return IC_INVALID_VALUE;
  const graph_node *na = graph_arg(g, what, a), *nb = na ? graph_arg(g, what, b) : NULL;
  if (!na || !nb) return IC_INVALID_VALUE;
  char ops[320], s1[96], s2[96];
  if (na->ndim == 0 || nb->ndim == 0)
    return graph_fail(g, "%s: %s: %s is 0-dim (operands have 1 dim or more; mul scales by a scalar)", what,
                      graph_matmul_operands(g, na, nb, ops, sizeof ops), na->ndim == 0 ? "a" : "b");
  if (na->dtype != nb->dtype)
    return graph_fail(g, "dtype mismatch: %s vs %s: %s: operand dtypes differ (cast one of them)",
                      ic_dtype_name(na->dtype), ic_dtype_name(nb->dtype), what);
  ic_dtype dt = na->dtype;
  if (dt != IC_F16 && dt != IC_BF16 && dt != IC_F32 && dt != IC_F64 && dt != IC_I8)
    return graph_fail_with(g, IC_ERR_UNSUPPORTED, "%s: dtype %s is not supported (takes f16, bf16, f32, f64, i8)", what,
                           ic_dtype_name(dt));
  sym_id ka = na->dims[na->ndim - 1], kb = nb->dims[nb->ndim == 1 ? 0 : nb->ndim - 2];
  if (ka != kb)
    return graph_fail(g, "%s: %s: K differs (%s vs %s)", what, graph_matmul_operands(g, na, nb, ops, sizeof ops),
                      graph_dim_text(g, ka, s1, sizeof s1), graph_dim_text(g, kb, s2, sizeof s2));
  graph_node r = {.kind = GRAPH_MATMUL, .dtype = dt == IC_I8 ? IC_I32 : dt, .nargs = 2, .args = {a, b}};
  /* batch dims: all but a's last two and b's last two, aligned at their ends */
  int32_t ba = na->ndim > 2 ? na->ndim - 2 : 0, bb = nb->ndim > 2 ? nb->ndim - 2 : 0;
  int32_t nbatch = ba > bb ? ba : bb;
  for (int32_t i = 0; i < nbatch; i++) {
    int32_t ia = i - (nbatch - ba), ib = i - (nbatch - bb);
    sym_id da = ia >= 0 ? na->dims[ia] : SYM_NONE, db = ib >= 0 ? nb->dims[ib] : SYM_NONE;
    if (da == SYM_NONE || graph_dim_is_one(g, da)) r.dims[i] = db == SYM_NONE ? da : db;
    else if (db == SYM_NONE || graph_dim_is_one(g, db) || da == db) r.dims[i] = da;
    else
      return graph_fail(g, "%s: %s: batch dims do not broadcast (result dim %" PRId32 ": %s vs %s)", what,
                        graph_matmul_operands(g, na, nb, ops, sizeof ops), i, graph_dim_text(g, da, s1, sizeof s1),
                        graph_dim_text(g, db, s2, sizeof s2));
  }
  r.ndim = nbatch;
  if (na->ndim >= 2) r.dims[r.ndim++] = na->dims[na->ndim - 2];
  if (nb->ndim >= 2) r.dims[r.ndim++] = nb->dims[nb->ndim - 1];
  return graph_append(g, &r);
}

/* ---------------------------------------------------------------- inline PTX */

/* After a failed inline_asm call (the graph has recorded it): no outputs, the status. */
static ic_status graph_asm_fail(ic_status st, int32_t n_outputs, ic_value *outputs) {
  for (int32_t k = 0; outputs && k < n_outputs && k < IC_ASM_MAX_OPERANDS; k++) outputs[k] = IC_INVALID_VALUE;
  return st;
}

ic_status ic_graph_inline_asm(ic_graph *g, const ic_inline_asm_desc *desc, int32_t n_inputs, const ic_value *inputs,
                              int32_t n_outputs, ic_value *outputs) {
  static const char what[] = "inline_asm";
  for (int32_t k = 0; outputs && k < n_outputs && k < IC_ASM_MAX_OPERANDS; k++) outputs[k] = IC_INVALID_VALUE;
  if (!g) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_inline_asm: graph is NULL");
  if (!desc || desc->struct_size < offsetof(ic_inline_asm_desc, pack) + sizeof(int32_t) ||
      desc->struct_size > sizeof(ic_inline_asm_desc) || !desc->asm_text || !desc->constraints || !outputs ||
      (n_inputs > 0 && !inputs) || (n_outputs > 0 && !desc->output_dtypes)) {
    graph_fail(g, "%s: a NULL argument, or a desc whose struct_size ic does not know", what);
    return graph_asm_fail(IC_ERR_INVALID_GRAPH, 0, NULL);
  }
  if (n_inputs < 1 || n_inputs > IC_ASM_MAX_OPERANDS || n_outputs < 1 || n_outputs > IC_ASM_MAX_OPERANDS) {
    graph_fail(g, "%s: takes 1 to %d inputs and 1 to %d outputs, got %" PRId32 " and %" PRId32, what,
               IC_ASM_MAX_OPERANDS, IC_ASM_MAX_OPERANDS, n_inputs, n_outputs);
    return graph_asm_fail(IC_ERR_INVALID_GRAPH, n_outputs, outputs);
  }
  int32_t mark = g->nodes.count, parts_mark = g->concat_parts.count;
  ic_dtype in_dt[IC_ASM_MAX_OPERANDS];
  int32_t ndim = 0;
  sym_id dims[IC_MAX_DIMS];
  for (int32_t i = 0; i < n_inputs; i++) {
    const graph_node *n = graph_arg(g, what, inputs[i]);
    if (!n) return graph_asm_fail(IC_ERR_INVALID_GRAPH, n_outputs, outputs);
    if (n->kind == GRAPH_CONST && n->weak) {
      graph_fail(g, "%s: input %" PRId32 " is a constant without a dtype (give it one)", what, i);
      return graph_asm_fail(IC_ERR_INVALID_GRAPH, n_outputs, outputs);
    }
    in_dt[i] = n->dtype;
    graph_node acc = {.ndim = ndim};
    memcpy(acc.dims, dims, sizeof dims);
    if (i == 0) {
      ndim = n->ndim;
      memcpy(dims, n->dims, sizeof dims);
    } else if (!graph_broadcast_shape(g, what, &acc, n, &ndim, dims)) {
      return graph_asm_fail(IC_ERR_INVALID_GRAPH, n_outputs, outputs);
    }
  }
  for (int32_t k = 0; k < n_outputs; k++)
    if (!graph_check_dtype(g, what, desc->output_dtypes[k])) return graph_asm_fail(IC_ERR_INVALID_GRAPH, n_outputs, outputs);
  asm_layout layout;
  ic_status st = asm_plan(what, desc->asm_text, desc->constraints, desc->pack, n_outputs, desc->output_dtypes, n_inputs,
                          in_dt, &layout);
  if (st) {
    graph_fail_with(g, st, "%s", ic_last_error());
    return graph_asm_fail(st, n_outputs, outputs);
  }
  asm_spec a = {.noutputs = n_outputs, .pure = desc->is_pure != 0, .pack = desc->pack, .layout = layout};
  memcpy(a.outputs, desc->output_dtypes, sizeof(ic_dtype) * (size_t)n_outputs);
  a.text = str_dup(desc->asm_text);
  a.constraints = str_dup(desc->constraints);
  bool ok = a.text && a.constraints && VEC_PUSH(g->asms, a);
  if (!ok) {
    free(a.text);
    free(a.constraints);
    graph_oom(g);
    return graph_asm_fail(IC_ERR_OUT_OF_MEMORY, n_outputs, outputs);
  }
  graph_node node = {.kind = GRAPH_ASM, .dtype = desc->output_dtypes[0], .ndim = ndim, .nargs = n_inputs,
                     .asm_index = g->asms.count - 1, .parts = g->concat_parts.count};
  memcpy(node.dims, dims, sizeof dims);
  ic_value args[IC_ASM_MAX_OPERANDS];
  for (int32_t i = 0; i < n_inputs && ok; i++) ok = (args[i] = graph_broadcast_to(g, inputs[i], ndim, dims)) >= 0;
  for (int32_t i = 0; i < n_inputs && ok; i++) ok = VEC_PUSH(g->concat_parts, args[i]);
  ic_value v = ok ? graph_append(g, &node) : IC_INVALID_VALUE;
  for (int32_t k = 0; k < n_outputs && v >= 0; k++) {
    graph_node r = {.kind = GRAPH_ASM_RESULT, .dtype = desc->output_dtypes[k], .ndim = ndim, .nargs = 1, .args = {v},
                    .result = k};
    memcpy(r.dims, dims, sizeof dims);
    if ((outputs[k] = graph_append(g, &r)) < 0) v = IC_INVALID_VALUE;
  }
  if (v < 0) {
    /* roll back: nodes, operands and the asm entry */
    g->nodes.count = mark;
    g->concat_parts.count = parts_mark;
    g->asms.count--;
    free(a.text);
    free(a.constraints);
    graph_oom(g);
    return graph_asm_fail(IC_ERR_OUT_OF_MEMORY, n_outputs, outputs);
  }
  return IC_OK;
}
