/* Lowering: graph -> pointwise nodes with views folded into index expressions. */
#include "lower/lower.h"

#include <stdlib.h>
#include <string.h>

void lower_contiguous_strides(sym_arena *a, int32_t ndim, const sym_id *dims, sym_id *strides) {
  sym_id s = sym_const(a, 1);
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s = sym_mul(a, s, dims[d]);
  }
}

static sym_id lower_dot(sym_arena *a, int32_t ndim, const sym_id *idx, const sym_id *strides) {
  sym_id off = sym_const(a, 0);
  for (int32_t d = 0; d < ndim; d++) off = sym_add(a, off, sym_mul(a, idx[d], strides[d]));
  return off;
}

/* The copies lower_inline may make: this many, plus 4 a graph node. */
enum { LOWER_INLINE_BASE = 64 };
/* The reduction spaces pointwise ops may move to (the first ones of a graph). */
enum { LOWER_MAX_SPACES = 8 };

typedef struct lower_state {
  const ic_graph *g;
  lowered *l;
  int32_t *node_of; /* graph value -> lowered node, -1 */
  bool *is_output;  /* graph value -> an output's value */
  bool *recompute;  /* graph value -> recomputed where read through a broadcast */
  /* The (merged: merge_axes.c) operand spaces of reductions, first come first: a pointwise
   * op over a reshape of one of them is lowered on it, so that it shares the reduction's
   * kernel whichever view of the rows the graph computes it on. */
  struct { int32_t ndim; sym_id dims[IC_MAX_DIMS]; } spaces[LOWER_MAX_SPACES];
  int32_t nspaces;
  int32_t inline_budget; /* copies lower_inline may still make */
  bool fused;            /* lower_graph's: canonicalize for fusion */
  bool oom;
} lower_state;

/* A graph node's dims, brought into the lowered arena. */
static void lower_import_dims(lower_state *st, const graph_node *n, sym_id *dims) {
  for (int32_t d = 0; d < n->ndim; d++) dims[d] = sym_import(st->l->syms, st->g->syms, n->dims[d]);
}

/* The index (into out) of the point of space `to` with the row-major number of point idx
 * of space `from` (a reshape). Dims split and merge in groups whose sizes multiply to the
 * same product (prefixes of both shapes with equal products end a group): each index
 * comes from its group's flat index only, and the first of a group needs no modulo (it
 * is in range), so [n, 256, 1024] read as [n, 32, 8192] stays affine: i0, 8 * i1 +
 * i2 / 1024, i2 % 1024. False when the sizes never line up before the end (symbolic
 * sizes that differ: then the whole shape is one group) or at all (zero elements). */
static bool lower_reshape_index(sym_arena *a, int32_t from_ndim, const sym_id *from_dims, const sym_id *idx,
                                int32_t to_ndim, const sym_id *to_dims, sym_id *out) {
  int32_t vi = 0, si = 0;
  bool grouped = true;
  while (vi < from_ndim || si < to_ndim) {
    int32_t ve = vi, se = si;
    sym_id vp = sym_const(a, 1), sp = sym_const(a, 1);
    if (ve < from_ndim) vp = from_dims[ve++];
    if (se < to_ndim) sp = to_dims[se++];
    /* grow the group until the products agree */
    while (vp != sp && (ve < from_ndim || se < to_ndim)) {
      int64_t vc = 0, sc = 0;
      bool consts = sym_is_const(a, vp, &vc) && sym_is_const(a, sp, &sc);
      bool grow_from = se >= to_ndim || (ve < from_ndim && consts && vc < sc);
      if (!grow_from && ve < from_ndim && !consts) {
        ve = from_ndim; /* symbolic sizes that do not line up: the rest is one group */
        se = to_ndim;
        grouped = false;
        break;
      }
      if (grow_from) vp = sym_mul(a, vp, from_dims[ve++]);
      else sp = sym_mul(a, sp, to_dims[se++]);
    }
    /* shapes of no elements ([0, 5] and [0, 7]) can end with products that never met */
    if (vp != sp) grouped = false;
    sym_id vstr[IC_MAX_DIMS] = {0}, sstr[IC_MAX_DIMS] = {0};
    lower_contiguous_strides(a, ve - vi, from_dims + vi, vstr);
    lower_contiguous_strides(a, se - si, to_dims + si, sstr);
    sym_id flat = lower_dot(a, ve - vi, idx + vi, vstr);
    for (int32_t d = si; d < se; d++) {
      sym_id q = sym_floordiv(a, flat, sstr[d - si]);
      out[d] = d == si ? q : sym_mod(a, q, to_dims[d]);
    }
    vi = ve;
    si = se;
  }
  return grouped;
}

/* Maps an index of a view's space (idx, in place) to its source's space. */
static void lower_view_index(lower_state *st, const graph_node *view, const graph_node *src, sym_id *idx) {
  sym_arena *a = st->l->syms;
  sym_id out[IC_MAX_DIMS] = {0}, vdims[IC_MAX_DIMS] = {0}, sdims[IC_MAX_DIMS] = {0};
  lower_import_dims(st, view, vdims);
  lower_import_dims(st, src, sdims);
  switch (view->kind) {
  case GRAPH_EXPAND:
    for (int32_t d = 0; d < src->ndim; d++) {
      int32_t j = d + (view->ndim - src->ndim);
      int64_t one;
      bool broadcast = sym_is_const(a, sdims[d], &one) && one == 1 && sdims[d] != vdims[j];
      out[d] = broadcast ? sym_const(a, 0) : idx[j];
    }
    break;
  case GRAPH_PERMUTE:
    for (int32_t d = 0; d < view->ndim; d++) out[view->perm[d]] = idx[d];
    break;
  case GRAPH_RESHAPE:
    lower_reshape_index(a, view->ndim, vdims, idx, src->ndim, sdims, out);
    break;
  case GRAPH_SLICE:
    memcpy(out, idx, sizeof(sym_id) * (size_t)view->ndim);
    out[view->axis] = sym_add(a, sym_import(a, st->g->syms, view->first), sym_mul(a, idx[view->axis], sym_const(a, view->step)));
    break;
  default: return;
  }
  memcpy(idx, out, sizeof(sym_id) * (size_t)src->ndim);
}

static bool lower_is_index_view(graph_node_kind k) {
  return k == GRAPH_EXPAND || k == GRAPH_PERMUTE || k == GRAPH_RESHAPE || k == GRAPH_SLICE;
}

/* The consumer whose operand is being resolved: its iteration space. */
typedef struct lower_consumer {
  int32_t ndim;
  sym_id dims[IC_MAX_DIMS];
} lower_consumer;

/* A new range lo <= index < hi under parent (-1: none); parent itself when the range
 * holds at every point of the consumer (index is var d, lo <= 0, hi is dim d); -2 when
 * out of memory. */
static int32_t lower_push_range(lower_state *st, const lower_consumer *c, sym_id index, sym_id lo, sym_id hi,
                                int32_t parent) {
  sym_arena *a = st->l->syms;
  int64_t lo_c = 0;
  for (int32_t d = 0; d < c->ndim; d++)
    if (index == sym_var(a, d) && sym_is_const(a, lo, &lo_c) && lo_c <= 0 && hi == c->dims[d]) return parent;
  lower_range r = {index, lo, hi, parent};
  return VEC_PUSH(st->l->ranges, r) ? st->l->ranges.count - 1 : -2;
}

static int32_t lower_push_select_arg(lower_state *st, lower_arg arg) {
  return VEC_PUSH(st->l->select_args, arg) ? st->l->select_args.count - 1 : -1;
}

static lower_arg lower_resolve(lower_state *st, const lower_consumer *c, ic_value v, sym_id *idx, int32_t guard,
                               bool viewed);
static bool lower_push_node(lower_state *st, ic_op op, ic_dtype dt, int32_t ndim, const sym_id *dims, bool imported);

static lower_arg lower_select(lower_state *st, int32_t cond, lower_arg then_arg, lower_arg else_arg) {
  lower_arg arg = {.kind = LOWER_ARG_SELECT, .dtype = then_arg.dtype, .cond = cond, .guard = -1};
  arg.then_arg = lower_push_select_arg(st, then_arg);
  arg.else_arg = lower_push_select_arg(st, else_arg);
  st->oom |= arg.then_arg < 0 || arg.else_arg < 0;
  return arg;
}

/* pad: where every padded dim's index lies inside the source, the source; else the value. */
static lower_arg lower_resolve_pad(lower_state *st, const lower_consumer *c, const graph_node *n, sym_id *idx,
                                   int32_t guard) {
  sym_arena *a = st->l->syms;
  const graph_node *src = graph_node_get(st->g, n->args[0]);
  int32_t cond = -1, inner = guard;
  sym_id sidx[IC_MAX_DIMS] = {0};
  for (int32_t d = 0; d < n->ndim; d++) {
    sym_id lo = sym_const(a, n->pad[d][0]);
    sidx[d] = sym_sub(a, idx[d], lo);
    if (n->pad[d][0] <= 0 && n->pad[d][1] <= 0) continue; /* a crop only: always inside */
    sym_id hi = sym_add(a, lo, sym_import(a, st->g->syms, src->dims[d]));
    cond = lower_push_range(st, c, idx[d], lo, hi, cond);
    inner = lower_push_range(st, c, idx[d], lo, hi, inner);
    if (cond < -1 || inner < -1) st->oom = true;
  }
  lower_arg inside = lower_resolve(st, c, n->args[0], sidx, inner, true);
  if (cond < 0) return inside; /* padding nowhere in the consumer's space */
  lower_arg fill = {.kind = LOWER_ARG_CONST, .dtype = n->dtype, .value = n->value, .guard = -1};
  return lower_select(st, cond, inside, fill);
}

/* concat: a chain of choices, operand k where the index along the axis lies in its range;
 * operands of constant size 0 drop out. */
static lower_arg lower_resolve_concat(lower_state *st, const lower_consumer *c, const graph_node *n, sym_id *idx,
                                      int32_t guard) {
  sym_arena *a = st->l->syms;
  int32_t count = 0;
  int32_t *conds = sys_calloc((size_t)n->nargs + 1, sizeof(int32_t));
  lower_arg *parts = sys_calloc((size_t)n->nargs + 1, sizeof(lower_arg));
  lower_arg result = {.kind = LOWER_ARG_CONST, .dtype = n->dtype, .value = 0, .guard = -1};
  if (!conds || !parts) {
    st->oom = true;
    goto done;
  }
  sym_id offset = sym_const(a, 0), at = idx[n->axis];
  for (int32_t k = 0; k < n->nargs; k++) {
    ic_value pv = graph_node_arg(st->g, n, k);
    sym_id size = sym_import(a, st->g->syms, graph_node_get(st->g, pv)->dims[n->axis]);
    int64_t constant = -1;
    if (sym_is_const(a, size, &constant) && constant == 0) continue;
    sym_id end = sym_add(a, offset, size), pidx[IC_MAX_DIMS];
    memcpy(pidx, idx, sizeof pidx);
    pidx[n->axis] = sym_sub(a, at, offset);
    conds[count] = lower_push_range(st, c, at, offset, end, -1);
    int32_t inner = lower_push_range(st, c, at, offset, end, guard);
    if (conds[count] < -1 || inner < -1) st->oom = true;
    parts[count++] = lower_resolve(st, c, pv, pidx, inner, true);
    offset = end;
  }
  if (count == 0) goto done; /* the concat is empty: no point reads it */
  result = parts[count - 1];
  for (int32_t k = count - 2; k >= 0; k--) result = conds[k] < 0 ? parts[k] : lower_select(st, conds[k], parts[k], result);
done:
  free(conds);
  free(parts);
  return result;
}

/* The dims of the consumer's space along which idx reads p as a row broadcast: p's dims
 * are the consumer's with those dims made 1s (idx 0 there; any number of 1s, so a merged
 * reduction's keepdim result and the graph's spelling of it both match) or dropped, and
 * idx is the consumer's var on every other dim, in order. 0 when idx is anything else. */
static uint32_t lower_row_broadcast(sym_arena *a, const lower_consumer *c, const lower_node *p, const sym_id *idx) {
  uint32_t bcast = 0;
  int64_t v = 0;
  int32_t j = 0;
  for (int32_t d = 0; d < c->ndim; d++) {
    while (j < p->ndim && sym_is_const(a, idx[j], &v) && v == 0 && sym_is_const(a, p->dims[j], &v) && v == 1) j++;
    if (j < p->ndim && idx[j] == sym_var(a, d) && p->dims[j] == c->dims[d]) j++;
    else bcast |= 1u << d;
  }
  while (j < p->ndim && sym_is_const(a, idx[j], &v) && v == 0 && sym_is_const(a, p->dims[j], &v) && v == 1) j++;
  return j == p->ndim ? bcast : 0;
}

/* Matches dims (ndim) to the row form of in_dims over axes: each kept dim in order, each
 * reduced dim as 1s (as many as the kept dims after it leave room for) or nothing, and
 * 1s anywhere else too (kept dims of size 1 that a merged space dropped: merge_axes.c).
 * src[j]: the in_dims dim that dims[j] is, -1 for a 1 that is no kept dim. */
static bool lower_row_match(const sym_arena *a, int32_t in_ndim, const sym_id *in_dims, uint32_t axes, int32_t ndim,
                            const sym_id *dims, int32_t *src) {
  int32_t kept_after = 0, j = 0;
  int64_t one = 0;
  for (int32_t d = 0; d < in_ndim; d++) kept_after += !((axes >> d) & 1u);
  for (int32_t d = 0; d < in_ndim; d++) {
    if ((axes >> d) & 1u) {
      while (j < ndim && ndim - j > kept_after && sym_is_const(a, dims[j], &one) && one == 1) src[j++] = -1;
      continue;
    }
    while (j < ndim && ndim - j > kept_after && dims[j] != in_dims[d] && sym_is_const(a, dims[j], &one) && one == 1)
      src[j++] = -1;
    kept_after--;
    if (j >= ndim || dims[j] != in_dims[d]) return false;
    src[j++] = d;
  }
  while (j < ndim && sym_is_const(a, dims[j], &one) && one == 1) src[j++] = -1;
  return j == ndim;
}

bool lower_is_row_form(const sym_arena *a, int32_t in_ndim, const sym_id *in_dims, uint32_t axes, int32_t ndim,
                       const sym_id *dims) {
  int32_t src[IC_MAX_DIMS];
  return lower_row_match(a, in_ndim, in_dims, axes, ndim, dims, src);
}

bool lower_row_vars(sym_arena *a, int32_t in_ndim, const sym_id *in_dims, uint32_t axes, int32_t ndim,
                    const sym_id *dims, sym_id *repl) {
  int32_t src[IC_MAX_DIMS];
  if (!lower_row_match(a, in_ndim, in_dims, axes, ndim, dims, src)) return false;
  for (int32_t j = 0; j < ndim; j++) repl[j] = src[j] >= 0 ? sym_var(a, src[j]) : sym_const(a, 0);
  return true;
}

/* A pointwise op read through a view (a slice, a concat's or a pad's operand, a permute)
 * is recomputed in the consumer's space from its own operands, resolved at the moved
 * index, rather than stored and loaded back: the value is the same op on the same
 * operand values, so its bits are those of the stored value, and the view costs no
 * temporary and no kernel boundary. Outputs are stored anyway and are loaded; so are
 * reductions and asm nodes (computed once), and everything once the budget of copies
 * (which bounds nested views of one value) is spent. True with *arg set (a NODE of the
 * copy); false when v is to be loaded. */
static bool lower_inline(lower_state *st, const lower_consumer *c, ic_value v, const sym_id *idx, int32_t guard,
                         lower_arg *arg) {
  const graph_node *n = graph_node_get(st->g, v);
  if (n->kind != GRAPH_OP || st->is_output[v] || st->inline_budget <= 0) return false;
  st->inline_budget--;
  lower_arg args[LOWER_MAX_ARGS] = {{0}};
  for (int32_t i = 0; i < n->nargs; i++) {
    sym_id aidx[IC_MAX_DIMS];
    memcpy(aidx, idx, sizeof aidx);
    args[i] = lower_resolve(st, c, graph_node_arg(st->g, n, i), aidx, guard, true);
  }
  if (!lower_push_node(st, n->op, n->dtype, c->ndim, c->dims, true)) {
    st->oom = true;
    return false;
  }
  lower_node *ln = &st->l->nodes.items[st->l->nodes.count - 1];
  ln->nargs = n->nargs;
  memcpy(ln->args, args, sizeof args);
  *arg = (lower_arg){.kind = LOWER_ARG_NODE, .node = st->l->nodes.count - 1, .dtype = n->dtype, .guard = -1};
  return true;
}

/* idx (ndim) without the divisions and modulos the consumer's ranges make moot, and with
 * the vars of the consumer's dims of size 1 (always 0) replaced by 0. */
static void lower_simplify_index(sym_arena *a, const lower_consumer *c, int32_t ndim, sym_id *idx) {
  int64_t end[IC_MAX_DIMS] = {0};
  sym_id vars[IC_MAX_DIMS] = {0};
  for (int32_t d = 0; d < c->ndim; d++) {
    if (!sym_is_const(a, c->dims[d], &end[d])) end[d] = 0;
    vars[d] = end[d] == 1 ? sym_const(a, 0) : sym_var(a, d);
  }
  for (int32_t d = 0; d < ndim; d++)
    idx[d] = sym_simplify_in_range(a, sym_subst_vars(a, idx[d], c->ndim, vars), c->ndim, end);
}

static bool lower_is_one(const sym_arena *a, sym_id e) {
  int64_t v = 0;
  return sym_is_const(a, e, &v) && v == 1;
}

/* Whether idx reads p at the consumer's own point up to dims of size 1 (whose index can
 * only be 0): an unsqueeze, a squeeze or a keepdim of a value is the same point of the
 * same row-major numbering, so a row read as [n, 1] or as [n] is one value of one kernel. */
static bool lower_same_point(sym_arena *a, const lower_consumer *c, const lower_node *p, const sym_id *idx) {
  int32_t j = 0;
  for (int32_t d = 0; d < c->ndim; d++) {
    if (lower_is_one(a, c->dims[d])) continue;
    while (j < p->ndim && lower_is_one(a, p->dims[j])) j++;
    if (j >= p->ndim || p->dims[j] != c->dims[d] || idx[j] != sym_var(a, d)) return false;
    j++;
  }
  while (j < p->ndim && lower_is_one(a, p->dims[j])) j++;
  return j == p->ndim;
}

/* Resolves value v at index idx (of v's space; expressions of the consumer's vars, idx
 * is overwritten): follows views to a base. guard: the range a load must sit under;
 * viewed: whether a view has moved the index. */
static lower_arg lower_resolve(lower_state *st, const lower_consumer *c, ic_value v, sym_id *idx, int32_t guard,
                               bool viewed) {
  sym_arena *a = st->l->syms;
  const graph_node *n = graph_node_get(st->g, v);
  while (lower_is_index_view(n->kind)) {
    const graph_node *src = graph_node_get(st->g, n->args[0]);
    lower_view_index(st, n, src, idx);
    v = n->args[0];
    n = src;
    viewed = true;
  }
  if (viewed) lower_simplify_index(a, c, n->ndim, idx);
  lower_arg arg = {.dtype = n->dtype, .guard = -1};
  if (n->kind == GRAPH_PAD) return lower_resolve_pad(st, c, n, idx, guard);
  if (n->kind == GRAPH_CONCAT) return lower_resolve_concat(st, c, n, idx, guard);
  if (n->kind == GRAPH_CONST) {
    arg.kind = LOWER_ARG_CONST;
    arg.value = n->value;
    return arg;
  }
  if (n->kind == GRAPH_INPUT) {
    const lower_input *in = &st->l->inputs[n->input];
    arg.kind = LOWER_ARG_LOAD;
    arg.src = (lower_source){true, n->input};
    arg.offset = lower_dot(a, n->ndim, idx, in->strides);
    arg.guard = guard;
    return arg;
  }
  /* A computed value: the same point (fusable) unless a view moved the index, or a
   * slice, concat or pad left the same index in a space of other sizes. */
  const lower_node *p = &st->l->nodes.items[st->node_of[v]];
  sym_id gdims[IC_MAX_DIMS] = {0}, gidx[IC_MAX_DIMS] = {0};
  lower_import_dims(st, n, gdims);
  memcpy(gidx, idx, sizeof gidx); /* v's own index: what a recomputation of v reads at */
  if (p->ndim != n->ndim || memcmp(p->dims, gdims, sizeof(sym_id) * (size_t)n->ndim) != 0) {
    /* lowered on a merged space (merge_axes.c): the same point in its row-major order */
    sym_id moved[IC_MAX_DIMS] = {0};
    lower_reshape_index(a, n->ndim, gdims, idx, p->ndim, p->dims, moved);
    memcpy(idx, moved, sizeof moved);
    lower_simplify_index(a, c, p->ndim, idx);
    viewed = true;
  }
  if (!viewed || lower_same_point(a, c, p, idx)) {
    arg.kind = LOWER_ARG_NODE;
    arg.node = st->node_of[v];
    return arg;
  }
  sym_id str[IC_MAX_DIMS] = {0};
  lower_contiguous_strides(a, p->ndim, p->dims, str);
  uint32_t bcast = lower_row_broadcast(a, c, p, idx);
  /* a value of inputs and constants only is recomputed here (lib/lower/broadcast.c) */
  if (bcast && st->recompute[v] && lower_inline(st, c, v, gidx, guard, &arg)) return arg;
  if (bcast && guard < 0) {
    arg.kind = LOWER_ARG_NODE;
    arg.node = st->node_of[v];
    arg.bcast = bcast;
    arg.offset = lower_dot(a, p->ndim, idx, str);
    return arg;
  }
  if (lower_inline(st, c, v, gidx, guard, &arg)) return arg;
  arg.kind = LOWER_ARG_LOAD;
  arg.src = (lower_source){false, st->node_of[v]};
  arg.offset = lower_dot(a, p->ndim, idx, str);
  arg.guard = guard;
  return arg;
}

/* Resolves operand value v of a consumer over the consumer's space (its dims, or a
 * reduction's operand space), graph dims of ndim. */
static lower_arg lower_operand(lower_state *st, ic_value v, int32_t ndim, const sym_id *graph_dims) {
  sym_arena *a = st->l->syms;
  lower_consumer c = {.ndim = ndim};
  for (int32_t d = 0; d < ndim; d++) c.dims[d] = sym_import(a, st->g->syms, graph_dims[d]);
  sym_id idx[IC_MAX_DIMS] = {0};
  for (int32_t d = 0; d < c.ndim; d++) idx[d] = sym_var(a, d);
  return lower_resolve(st, &c, v, idx, -1, false);
}

void lower_arg_leaves(const lowered *l, const lower_arg *arg, void (*fn)(const lower_arg *leaf, void *ctx), void *ctx) {
  if (arg->kind != LOWER_ARG_SELECT) {
    fn(arg, ctx);
    return;
  }
  lower_arg_leaves(l, &l->select_args.items[arg->then_arg], fn, ctx);
  lower_arg_leaves(l, &l->select_args.items[arg->else_arg], fn, ctx);
}

/* A new node of ndim dims: graph dims, or dims of the lowered arena already (imported). */
static bool lower_push_node(lower_state *st, ic_op op, ic_dtype dt, int32_t ndim, const sym_id *dims, bool imported) {
  lower_node ln = {.op = op, .dtype = dt, .ndim = ndim, .contract_m = -1, .contract_n = -1, .contract_of = -1};
  for (int32_t d = 0; d < ndim; d++) ln.dims[d] = imported ? dims[d] : sym_import(st->l->syms, st->g->syms, dims[d]);
  ln.numel = sym_const(st->l->syms, 1);
  for (int32_t d = 0; d < ndim; d++) ln.numel = sym_mul(st->l->syms, ln.numel, ln.dims[d]);
  return VEC_PUSH(st->l->nodes, ln);
}

/* Marks every value the outputs depend on. */
static void lower_mark_live(const ic_graph *g, bool *live) {
  for (int32_t i = 0; i < g->outputs.count; i++) live[g->outputs.items[i].value] = true;
  for (int32_t v = g->nodes.count - 1; v >= 0; v--) {
    if (!live[v]) continue;
    const graph_node *n = &g->nodes.items[v];
    for (int32_t i = 0; i < n->nargs; i++) live[graph_node_arg(g, n, i)] = true;
  }
}

static ic_status lower_inputs(lower_state *st) {
  const ic_graph *g = st->g;
  lowered *l = st->l;
  l->ninputs = g->inputs.count;
  l->inputs = sys_calloc((size_t)l->ninputs + 1, sizeof *l->inputs);
  if (!l->inputs) return IC_ERR_OUT_OF_MEMORY;
  for (int32_t i = 0; i < l->ninputs; i++) {
    const graph_node *n = graph_node_get(g, g->inputs.items[i]);
    lower_input *in = &l->inputs[i];
    in->name = str_dup(n->name);
    if (!in->name) return IC_ERR_OUT_OF_MEMORY;
    in->dtype = n->dtype;
    in->ndim = n->ndim;
    in->layout = n->layout;
    for (int32_t d = 0; d < n->ndim; d++) in->dims[d] = sym_import(l->syms, g->syms, n->dims[d]);
    lower_contiguous_strides(l->syms, in->ndim, in->dims, in->strides);
    for (int32_t d = 0; d < n->ndim; d++) {
      bool free_stride = n->layout == IC_LAYOUT_STRIDED || (n->layout == IC_LAYOUT_INNER_CONTIGUOUS && d < n->ndim - 1);
      if (free_stride) in->strides[d] = sym_param(l->syms, lower_stride_param(i, d));
    }
  }
  return IC_OK;
}

/* A copy of spec owned by l (NULL when out of memory). */
static const asm_spec *lower_asm_spec(lowered *l, const asm_spec *spec) {
  asm_spec **grown = sys_realloc(l->asms, sizeof *grown * ((size_t)l->nasms + 1));
  if (!grown) return NULL;
  l->asms = grown;
  asm_spec *c = sys_malloc(sizeof *c);
  if (!c) return NULL;
  *c = *spec;
  c->text = str_dup(spec->text);
  c->constraints = str_dup(spec->constraints);
  l->asms[l->nasms++] = c; /* freed by lowered_destroy, complete or not */
  return c->text && c->constraints ? c : NULL;
}

/* Values with a lowered node of their own (computed ones). */
static bool lower_computed(const graph_node *n) {
  return n->kind == GRAPH_OP || n->kind == GRAPH_REDUCE || n->kind == GRAPH_ASM_RESULT || n->kind == GRAPH_MATMUL;
}

/* Whether step, a coefficient of an offset, is other than 1 whatever the run: free of
 * run-time strides (the kernel tests those at launch) and not the constant 1 (a step that
 * is a size, n, is 1 only where n is). */
static bool lower_fixed_non_unit(sym_arena *a, sym_id step) {
  int64_t c = 0;
  return !sym_depends_on(a, step, SYM_PARAM, -1) && !(sym_is_const(a, step, &c) && c == 1);
}

/* Whether arg is a load (of an input or a node's buffer, unguarded) whose offset steps by
 * other than 1 (lower_fixed_non_unit) along var d. Along both of an operand's matrix dims:
 * neither its rows nor its columns are contiguous, so no tensor-core load (16 contiguous
 * bytes) can read it; along K, for i8: no 16-byte load along K, the only direction an i8
 * mma operand is read in (ldmatrix transposes 16-bit elements only). Run-time strides are
 * left to the kernel, which picks its load at launch. */
static bool lower_load_steps(sym_arena *a, const lower_arg *arg, int32_t d) {
  bool load = arg->kind == LOWER_ARG_LOAD || (arg->kind == LOWER_ARG_NODE && arg->bcast);
  if (!load || (arg->kind == LOWER_ARG_LOAD && arg->guard >= 0)) return false;
  sym_id coeff = SYM_NONE, rest = SYM_NONE;
  return sym_affine_in_var(a, arg->offset, d, &coeff, &rest) && lower_fixed_non_unit(a, coeff);
}

/* Operand `which` (0: a, 1: b) of a matmul, graph value v, copied to a contiguous buffer
 * by a kernel of its own (a cast to its own dtype), which the contraction reads at idx
 * (v's index, expressions of the contraction's vars): *arg. transpose: the copy holds v
 * with its last two dims swapped (b of i8 in K-major order). note: why, for the dump. */
static ic_status lower_matmul_copy(lower_state *st, ic_value v, const sym_id *idx, bool transpose, const char *note,
                                   lower_arg *arg) {
  const graph_node *n = graph_node_get(st->g, v);
  sym_arena *a = st->l->syms;
  lower_consumer c = {.ndim = n->ndim};
  lower_import_dims(st, n, c.dims);
  sym_id at[IC_MAX_DIMS] = {0}, read[IC_MAX_DIMS] = {0};
  for (int32_t d = 0; d < n->ndim; d++) at[d] = sym_var(a, d), read[d] = idx[d];
  if (transpose) {
    const int32_t r = n->ndim;
    sym_id t = c.dims[r - 1];
    c.dims[r - 1] = c.dims[r - 2];
    c.dims[r - 2] = t;
    /* the copy's point (.., j, i) is v's (.., i, j) */
    at[r - 2] = sym_var(a, r - 1);
    at[r - 1] = sym_var(a, r - 2);
    read[r - 2] = idx[r - 1];
    read[r - 1] = idx[r - 2];
  }
  lower_arg copied = lower_resolve(st, &c, v, at, -1, transpose);
  if (!lower_push_node(st, IC_OP_CAST, n->dtype, n->ndim, c.dims, true)) return IC_ERR_OUT_OF_MEMORY;
  lower_node *ln = &st->l->nodes.items[st->l->nodes.count - 1];
  ln->nargs = 1;
  ln->args[0] = copied;
  ln->copy_note = note;
  sym_id str[IC_MAX_DIMS] = {0};
  lower_contiguous_strides(a, ln->ndim, ln->dims, str);
  *arg = (lower_arg){.kind = LOWER_ARG_LOAD, .src = {false, st->l->nodes.count - 1}, .dtype = n->dtype, .guard = -1,
                     .offset = lower_dot(a, n->ndim, read, str)};
  return IC_OK;
}

/* The index of a matmul operand of ndim dims (dims: its sizes) in the contraction's
 * space: its batch dims right-aligned to the space's nbatch batch dims (index 0 where it
 * has size 1), then row and col (a 2-D or more operand), or k alone (1-D). */
static void lower_matmul_index(sym_arena *a, int32_t ndim, const sym_id *dims, int32_t nbatch, sym_id row, sym_id col,
                               sym_id k, sym_id *idx) {
  if (ndim < 2) {
    idx[0] = k;
    return;
  }
  int64_t one = 0;
  for (int32_t d = 0; d < ndim - 2; d++)
    idx[d] = sym_is_const(a, dims[d], &one) && one == 1 ? sym_const(a, 0) : sym_var(a, nbatch - (ndim - 2) + d);
  idx[ndim - 2] = row;
  idx[ndim - 1] = col;
}

/* Matmul n (torch.matmul's shapes, ic.h) as a contraction node: its space is the result's
 * dims then K; a is read at (a's batch dims, right-aligned to the result's, index 0 where
 * a has size 1; m; k), b at (batch; k; n); a 1-D operand is read at (k). Pointwise values
 * on an operand are recomputed at that index in the contraction's kernel (private to it:
 * its prologue) where the program is fused; an eager program loads every operand (an op
 * a kernel, and never a copy over the whole M x N x K space). */
static ic_status lower_matmul(lower_state *st, const graph_node *n, int32_t v) {
  const ic_graph *g = st->g;
  lowered *l = st->l;
  sym_arena *a = l->syms;
  const graph_node *an = graph_node_get(g, n->args[0]), *bn = graph_node_get(g, n->args[1]);
  lower_consumer c = {.ndim = n->ndim + 1};
  lower_import_dims(st, n, c.dims);
  sym_id adims[IC_MAX_DIMS] = {0}, bdims[IC_MAX_DIMS] = {0};
  lower_import_dims(st, an, adims);
  lower_import_dims(st, bn, bdims);
  const int32_t kd = n->ndim; /* K: the last dim of the space */
  c.dims[kd] = adims[an->ndim - 1];
  /* the result: batch dims, then M (a 2-D a), then N (a 2-D b) */
  const int32_t nbatch = n->ndim - (an->ndim >= 2) - (bn->ndim >= 2);
  const int32_t mdim = an->ndim >= 2 ? nbatch : -1, ndim_n = bn->ndim >= 2 ? nbatch + (mdim >= 0) : -1;
  sym_id aidx[IC_MAX_DIMS] = {0}, bidx[IC_MAX_DIMS] = {0};
  const sym_id kvar = sym_var(a, kd);
  lower_matmul_index(a, an->ndim, adims, nbatch, mdim >= 0 ? sym_var(a, mdim) : kvar, kvar, kvar, aidx);
  lower_matmul_index(a, bn->ndim, bdims, nbatch, kvar, ndim_n >= 0 ? sym_var(a, ndim_n) : kvar, kvar, bidx);
  const int32_t first = l->nodes.count, budget = st->inline_budget;
  if (!st->fused) st->inline_budget = 0;
  lower_arg args[LOWER_MAX_ARGS] = {{0}};
  sym_id idx[IC_MAX_DIMS];
  memcpy(idx, aidx, sizeof idx);
  args[0] = lower_resolve(st, &c, n->args[0], idx, -1, true);
  memcpy(idx, bidx, sizeof idx);
  args[1] = lower_resolve(st, &c, n->args[1], idx, -1, true);
  if (!st->fused) st->inline_budget = budget;
  const int32_t resolved = l->nodes.count; /* the copies below are no prologue */
  /* an operand read in place that a tensor-core load cannot read goes through a copy
   * (f32 and f64 run on CUDA cores, which gather any layout as fast as a copy would) */
  const int32_t inner[2][2] = {{mdim, kd}, {kd, ndim_n}};
  const graph_node *operand[2] = {an, bn};
  const sym_id *oidx[2] = {aidx, bidx};
  static const char *const strided[2] = {
      "a copy of matmul operand a: neither its rows nor its columns are contiguous, and a tensor-core load reads 16 "
      "contiguous bytes",
      "a copy of matmul operand b: neither its rows nor its columns are contiguous, and a tensor-core load reads 16 "
      "contiguous bytes"};
  static const char *const k_major[2] = {
      "a copy of matmul operand a with its rows contiguous: an i8 tensor-core load reads 16 contiguous bytes along K",
      "a copy of matmul operand b, transposed: an i8 tensor-core load reads 16 contiguous bytes along K"};
  const bool tensor_cores = an->dtype == IC_BF16 || an->dtype == IC_F16 || an->dtype == IC_I8;
  for (int32_t i = 0; i < 2 && tensor_cores; i++) {
    if (operand[i]->ndim < 2) continue;
    ic_status s = IC_OK;
    if (an->dtype == IC_I8 && lower_load_steps(a, &args[i], kd))
      s = lower_matmul_copy(st, n->args[i], oidx[i], i == 1, k_major[i], &args[i]);
    else if (lower_load_steps(a, &args[i], inner[i][0]) && lower_load_steps(a, &args[i], inner[i][1]))
      s = lower_matmul_copy(st, n->args[i], oidx[i], false, strided[i], &args[i]);
    if (s) return s;
  }
  if (!lower_push_node(st, IC_OP_CAST, n->dtype, n->ndim, n->dims, false)) return IC_ERR_OUT_OF_MEMORY;
  const int32_t mi = l->nodes.count - 1;
  st->node_of[v] = mi;
  lower_node *ln = &l->nodes.items[mi];
  ln->is_reduce = true;
  ln->contracts = true;
  ln->contract_m = mdim;
  ln->contract_n = ndim_n;
  ln->axes = 1u << kd;
  ln->in_ndim = c.ndim;
  memcpy(ln->in_dims, c.dims, sizeof ln->in_dims);
  ln->nargs = 2;
  memcpy(ln->args, args, sizeof args);
  /* the nodes resolving the operands made are recomputations for this contraction alone */
  for (int32_t i = first; i < resolved; i++) l->nodes.items[i].contract_of = mi;
  return IC_OK;
}

/* The value under a chain of reshapes of v (v itself when v is no reshape). */
static ic_value lower_reshape_base(const ic_graph *g, ic_value v) {
  while (graph_node_get(g, v)->kind == GRAPH_RESHAPE) v = graph_node_get(g, v)->args[0];
  return v;
}

/* A reduction space (lower_state.spaces) that dims (ndim) are a reshape of, dims
 * splitting and merging in groups of equal constant products: into m->ndim and m->dims.
 * False for none, and for dims that are such a space already. */
static bool lower_pick_space(lower_state *st, int32_t ndim, const sym_id *dims, lower_axes_merge *m) {
  sym_arena *a = st->l->syms;
  sym_id numel = sym_const(a, 1);
  for (int32_t d = 0; d < ndim; d++) numel = sym_mul(a, numel, dims[d]);
  for (int32_t k = 0; k < st->nspaces; k++) {
    int32_t rn = st->spaces[k].ndim;
    const sym_id *r = st->spaces[k].dims;
    if (rn == ndim && memcmp(r, dims, sizeof(sym_id) * (size_t)ndim) == 0) return false;
    sym_id rnumel = sym_const(a, 1), idx[IC_MAX_DIMS] = {0}, out[IC_MAX_DIMS] = {0};
    for (int32_t d = 0; d < rn; d++) rnumel = sym_mul(a, rnumel, r[d]);
    for (int32_t d = 0; d < ndim; d++) idx[d] = sym_var(a, d);
    if (rnumel != numel || !lower_reshape_index(a, ndim, dims, idx, rn, r, out)) continue;
    m->ndim = rn;
    memcpy(m->dims, r, sizeof(sym_id) * (size_t)rn);
    return true;
  }
  return false;
}

static ic_status lower_run(lower_state *st) {
  const ic_graph *g = st->g;
  lowered *l = st->l;
  ic_status s = lower_inputs(st);
  if (s) return s;
  l->nsymbols = g->symbols.count;
  l->symbol_names = sys_calloc((size_t)l->nsymbols + 1, sizeof(char *));
  if (!l->symbol_names) return IC_ERR_OUT_OF_MEMORY;
  for (int32_t k = 0; k < l->nsymbols; k++)
    if (!(l->symbol_names[k] = str_dup(g->symbols.items[k]))) return IC_ERR_OUT_OF_MEMORY;

  bool *live = sys_calloc((size_t)g->nodes.count + 1, sizeof(bool));
  if (!live) return IC_ERR_OUT_OF_MEMORY;
  lower_mark_live(g, live);
  /* the reductions' spaces first: pointwise ops before a reduction may move onto it too */
  for (int32_t v = 0; v < g->nodes.count && st->nspaces < LOWER_MAX_SPACES; v++) {
    const graph_node *n = &g->nodes.items[v];
    if (!live[v] || n->kind != GRAPH_REDUCE) continue;
    const graph_node *operand = graph_node_get(g, n->args[0]);
    sym_id dims[IC_MAX_DIMS] = {0};
    lower_axes_merge m;
    lower_import_dims(st, operand, dims);
    bool merged = lower_merge_axes(l->syms, operand->ndim, dims, n->axes, &m);
    st->spaces[st->nspaces].ndim = merged ? m.ndim : operand->ndim;
    memcpy(st->spaces[st->nspaces++].dims, merged ? m.dims : dims, sizeof dims);
  }
  for (int32_t v = 0; v < g->nodes.count && !s; v++) {
    const graph_node *n = &g->nodes.items[v];
    bool is_asm = n->kind == GRAPH_ASM || n->kind == GRAPH_ASM_RESULT;
    if (live[v] && n->kind == GRAPH_MATMUL) {
      s = lower_matmul(st, n, v);
      continue;
    }
    if (!live[v] || (n->kind != GRAPH_OP && n->kind != GRAPH_REDUCE && !is_asm)) continue;
    /* operands first: resolving them may add nodes (lower_inline), which come before */
    const graph_node *space = n->kind == GRAPH_REDUCE ? graph_node_get(g, n->args[0]) : n;
    lower_arg args[LOWER_MAX_ARGS] = {{0}};
    lower_axes_merge merge = {0};
    sym_id dims[IC_MAX_DIMS] = {0}, space_dims[IC_MAX_DIMS] = {0};
    int32_t row_ndim = n->ndim; /* the lowered node's dims, where they are not the graph's */
    lower_import_dims(st, n, dims);
    lower_import_dims(st, space, space_dims);
    bool merged = n->kind == GRAPH_REDUCE && lower_merge_axes(l->syms, space->ndim, space_dims, n->axes, &merge);
    if (merged) {
      /* the operand at the point of the merged space's vars (merge_axes.c) */
      lower_consumer c = {.ndim = merge.ndim};
      memcpy(c.dims, merge.dims, sizeof c.dims);
      sym_id idx[IC_MAX_DIMS] = {0};
      lower_merge_split_index(l->syms, &merge, space->ndim, space_dims, idx);
      args[0] = lower_resolve(st, &c, n->args[0], idx, -1, true);
      /* the merged space's row: one 1 a merged run (keepdim), or its kept dims */
      int32_t rn = 0;
      for (int32_t d = 0; d < merge.ndim; d++)
        if (n->keepdim || !((merge.axes >> d) & 1u)) dims[rn++] = (merge.axes >> d) & 1u ? sym_const(l->syms, 1) : merge.dims[d];
      row_ndim = rn;
    } else if (n->kind == GRAPH_OP && lower_pick_space(st, n->ndim, dims, &merge)) {
      /* on a merged reduction space: operands at the point of its vars */
      lower_consumer c = {.ndim = merge.ndim};
      memcpy(c.dims, merge.dims, sizeof c.dims);
      sym_id vars[IC_MAX_DIMS] = {0};
      for (int32_t d = 0; d < c.ndim; d++) vars[d] = sym_var(l->syms, d);
      for (int32_t i = 0; i < n->nargs; i++) {
        sym_id idx[IC_MAX_DIMS] = {0};
        lower_reshape_index(l->syms, c.ndim, c.dims, vars, n->ndim, dims, idx);
        lower_simplify_index(l->syms, &c, n->ndim, idx);
        args[i] = lower_resolve(st, &c, graph_node_arg(g, n, i), idx, -1, true);
      }
      memcpy(dims, merge.dims, sizeof dims);
      row_ndim = merge.ndim;
      merged = true;
    } else {
      for (int32_t i = 0; i < n->nargs; i++) args[i] = lower_operand(st, graph_node_arg(g, n, i), space->ndim, space->dims);
    }
    if (!lower_push_node(st, n->op, n->dtype, row_ndim, dims, true)) {
      s = IC_ERR_OUT_OF_MEMORY;
      break;
    }
    st->node_of[v] = l->nodes.count - 1;
    lower_node *ln = &l->nodes.items[l->nodes.count - 1];
    if (n->kind == GRAPH_REDUCE) {
      ln->is_reduce = true;
      ln->reduce = n->reduce;
      ln->axes = n->axes;
      ln->correction = n->value;
      ln->in_ndim = merged ? merge.ndim : space->ndim;
      memcpy(ln->in_dims, merged ? merge.dims : space_dims, sizeof ln->in_dims);
      if (merged) ln->axes = merge.axes;
    }
    if (n->kind == GRAPH_ASM && !(ln->asm_spec = lower_asm_spec(l, &g->asms.items[n->asm_index]))) s = IC_ERR_OUT_OF_MEMORY;
    ln->is_asm_result = n->kind == GRAPH_ASM_RESULT;
    ln->result = n->result;
    ln->nargs = n->nargs;
    memcpy(ln->args, args, sizeof args);
  }
  free(live);
  if (s) return s;

  /* Outputs: each gets a node of its own; a copy (cast to its own dtype) where the value
   * is not a computed node or is already another output's. */
  l->noutputs = g->outputs.count;
  l->outputs = sys_calloc((size_t)l->noutputs + 1, sizeof *l->outputs);
  bool *claimed = sys_calloc((size_t)l->nodes.count + 1, sizeof(bool));
  if (!l->outputs || !claimed) {
    free(claimed);
    return IC_ERR_OUT_OF_MEMORY;
  }
  for (int32_t o = 0; o < l->noutputs && !s; o++) {
    const graph_output *go = &g->outputs.items[o];
    const graph_node *n = graph_node_get(g, go->value);
    l->outputs[o].name = str_dup(go->name);
    l->outputs[o].ndim = n->ndim;
    lower_import_dims(st, n, l->outputs[o].dims);
    /* A reshape (squeeze, unsqueeze, flatten, a keepdim reduction viewed without its 1s)
     * of a computed value: the value's own buffer in the output's shape, so that the
     * kernel computing it stores the output, not a copy kernel after it. */
    ic_value base = lower_reshape_base(g, go->value);
    const graph_node *bn = graph_node_get(g, base);
    if (base != go->value && bn->dtype == n->dtype && lower_computed(bn) && !claimed[st->node_of[base]]) {
      l->outputs[o].node = st->node_of[base];
      claimed[l->outputs[o].node] = true;
      continue;
    }
    bool own = lower_computed(n) && !claimed[st->node_of[go->value]];
    lower_arg copied = {0};
    if (!own && l->outputs[o].name) copied = lower_operand(st, go->value, n->ndim, n->dims);
    if (!l->outputs[o].name || (!own && !lower_push_node(st, IC_OP_CAST, n->dtype, n->ndim, n->dims, false))) {
      s = IC_ERR_OUT_OF_MEMORY;
    } else if (own) {
      l->outputs[o].node = st->node_of[go->value];
      claimed[l->outputs[o].node] = true;
    } else {
      lower_node *ln = &l->nodes.items[l->nodes.count - 1];
      ln->nargs = 1;
      ln->args[0] = copied;
      l->outputs[o].node = l->nodes.count - 1;
    }
  }
  free(claimed);
  if (!s && (st->oom || sym_arena_failed(l->syms))) s = IC_ERR_OUT_OF_MEMORY;
  return s;
}

/* Node indices in an arg's leaves, renumbered (old -> new). */
static void lower_renumber_leaf(lower_arg *a, const int32_t *new_index) {
  if (a->kind == LOWER_ARG_NODE) a->node = new_index[a->node];
  else if (a->kind == LOWER_ARG_LOAD && !a->src.is_input) a->src.index = new_index[a->src.index];
}

typedef struct lower_live_visit {
  bool *live;
} lower_live_visit;

static void lower_mark_leaf(const lower_arg *a, void *ctx) {
  bool *live = ((lower_live_visit *)ctx)->live;
  if (a->kind == LOWER_ARG_NODE) live[a->node] = true;
  else if (a->kind == LOWER_ARG_LOAD && !a->src.is_input) live[a->src.index] = true;
}

/* Drops the nodes no output depends on: those every reader recomputes (lower_inline). */
static ic_status lower_drop_dead(lowered *l) {
  int32_t n = l->nodes.count;
  bool *live = sys_calloc((size_t)n + 1, sizeof(bool));
  int32_t *new_index = sys_malloc(((size_t)n + 1) * sizeof(int32_t));
  if (!live || !new_index) {
    free(live);
    free(new_index);
    return IC_ERR_OUT_OF_MEMORY;
  }
  lower_live_visit visit = {live};
  for (int32_t o = 0; o < l->noutputs; o++) live[l->outputs[o].node] = true;
  for (int32_t i = n - 1; i >= 0; i--)
    for (int32_t j = 0; live[i] && j < l->nodes.items[i].nargs; j++) lower_arg_leaves(l, &l->nodes.items[i].args[j], lower_mark_leaf, &visit);
  int32_t kept = 0;
  for (int32_t i = 0; i < n; i++) {
    new_index[i] = live[i] ? kept : -1;
    if (live[i]) l->nodes.items[kept++] = l->nodes.items[i];
  }
  l->nodes.count = kept;
  for (int32_t i = 0; i < kept; i++)
    for (int32_t j = 0; j < l->nodes.items[i].nargs; j++)
      if (l->nodes.items[i].args[j].kind != LOWER_ARG_SELECT) lower_renumber_leaf(&l->nodes.items[i].args[j], new_index);
  /* select branches of dropped nodes may name dropped nodes: -1, never read */
  for (int32_t i = 0; i < l->select_args.count; i++) lower_renumber_leaf(&l->select_args.items[i], new_index);
  for (int32_t o = 0; o < l->noutputs; o++) l->outputs[o].node = new_index[l->outputs[o].node];
  for (int32_t i = 0; i < kept; i++) /* a prologue lives exactly as long as its contraction */
    if (l->nodes.items[i].contract_of >= 0) l->nodes.items[i].contract_of = new_index[l->nodes.items[i].contract_of];
  free(live);
  free(new_index);
  return IC_OK;
}

ic_status lower_graph(const ic_graph *g, bool fused, lowered **out) {
  *out = NULL;
  lowered *l = sys_calloc(1, sizeof *l);
  int32_t *node_of = sys_malloc(sizeof(int32_t) * ((size_t)g->nodes.count + 1));
  if (!l || !node_of || !(l->syms = sym_arena_create())) {
    free(node_of);
    lowered_destroy(l);
    return error_set(IC_ERR_OUT_OF_MEMORY, "lowering: out of memory");
  }
  bool *is_output = sys_calloc((size_t)g->nodes.count + 1, sizeof(bool));
  for (int32_t v = 0; v < g->nodes.count; v++) node_of[v] = -1;
  for (int32_t o = 0; is_output && o < g->outputs.count; o++) is_output[g->outputs.items[o].value] = true;
  bool *recompute = is_output ? lower_broadcast_recomputable(g, is_output, fused) : NULL;
  lower_state st = {.g = g, .l = l, .node_of = node_of, .is_output = is_output, .recompute = recompute,
                    .inline_budget = LOWER_INLINE_BASE + 4 * g->nodes.count, .fused = fused};
  ic_status s = recompute ? lower_run(&st) : IC_ERR_OUT_OF_MEMORY;
  if (!s) s = lower_drop_dead(l);
  free(node_of);
  free(is_output);
  free(recompute);
  if (s) {
    lowered_destroy(l);
    return error_set(s, "lowering: out of memory");
  }
  *out = l;
  return IC_OK;
}

void lowered_destroy(lowered *l) {
  if (!l) return;
  for (int32_t i = 0; l->inputs && i < l->ninputs; i++) free(l->inputs[i].name);
  for (int32_t i = 0; l->outputs && i < l->noutputs; i++) free(l->outputs[i].name);
  for (int32_t k = 0; l->symbol_names && k < l->nsymbols; k++) free(l->symbol_names[k]);
  free(l->symbol_names);
  for (int32_t i = 0; i < l->nasms; i++) {
    free(l->asms[i]->text);
    free(l->asms[i]->constraints);
    free(l->asms[i]);
  }
  free(l->asms);
  free(l->inputs);
  free(l->outputs);
  free(l->nodes.items);
  free(l->ranges.items);
  free(l->select_args.items);
  sym_arena_destroy(l->syms);
  free(l);
}
