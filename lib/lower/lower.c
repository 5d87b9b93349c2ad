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

typedef struct lower_state {
  const ic_graph *g;
  lowered *l;
  int32_t *node_of; /* graph value -> lowered node, -1 */
} lower_state;

/* A graph node's dims, brought into the lowered arena. */
static void lower_import_dims(lower_state *st, const graph_node *n, sym_id *dims) {
  for (int32_t d = 0; d < n->ndim; d++) dims[d] = sym_import(st->l->syms, st->g->syms, n->dims[d]);
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
  case GRAPH_RESHAPE: {
    sym_id vstr[IC_MAX_DIMS] = {0}, sstr[IC_MAX_DIMS] = {0};
    lower_contiguous_strides(a, view->ndim, vdims, vstr);
    lower_contiguous_strides(a, src->ndim, sdims, sstr);
    sym_id flat = lower_dot(a, view->ndim, idx, vstr);
    for (int32_t d = 0; d < src->ndim; d++) {
      sym_id q = sym_floordiv(a, flat, sstr[d]);
      out[d] = d == 0 ? q : sym_mod(a, q, sdims[d]);
    }
    break;
  }
  default: return;
  }
  memcpy(idx, out, sizeof(sym_id) * (size_t)src->ndim);
}

/* Resolves operand value v of a consumer over ndim vars: follows views to the base. */
static lower_arg lower_operand(lower_state *st, ic_value v, int32_t ndim) {
  sym_arena *a = st->l->syms;
  sym_id idx[IC_MAX_DIMS] = {0};
  for (int32_t d = 0; d < ndim; d++) idx[d] = sym_var(a, d);
  const graph_node *n = graph_node_get(st->g, v);
  bool viewed = false;
  while (n->kind == GRAPH_EXPAND || n->kind == GRAPH_PERMUTE || n->kind == GRAPH_RESHAPE) {
    const graph_node *src = graph_node_get(st->g, n->args[0]);
    lower_view_index(st, n, src, idx);
    v = n->args[0];
    n = src;
    viewed = true;
  }
  lower_arg arg = {.dtype = n->dtype};
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
    return arg;
  }
  /* A computed value: same point (fusable) unless a view moved the index. */
  const lower_node *p = &st->l->nodes.items[st->node_of[v]];
  bool identity = p->ndim == ndim;
  for (int32_t d = 0; identity && d < ndim; d++) identity = idx[d] == sym_var(a, d);
  if (!viewed || identity) {
    arg.kind = LOWER_ARG_NODE;
    arg.node = st->node_of[v];
    return arg;
  }
  sym_id str[IC_MAX_DIMS] = {0};
  lower_contiguous_strides(a, p->ndim, p->dims, str);
  arg.kind = LOWER_ARG_LOAD;
  arg.src = (lower_source){false, st->node_of[v]};
  arg.offset = lower_dot(a, p->ndim, idx, str);
  return arg;
}

static bool lower_push_node(lower_state *st, ic_op op, ic_dtype dt, int32_t ndim, const sym_id *dims) {
  lower_node ln = {.op = op, .dtype = dt, .ndim = ndim};
  for (int32_t d = 0; d < ndim; d++) ln.dims[d] = sym_import(st->l->syms, st->g->syms, dims[d]);
  ln.numel = sym_const(st->l->syms, 1);
  for (int32_t d = 0; d < ndim; d++) ln.numel = sym_mul(st->l->syms, ln.numel, ln.dims[d]);
  return IC_VEC_PUSH(st->l->nodes, ln);
}

/* Marks every value the outputs depend on. */
static void lower_mark_live(const ic_graph *g, bool *live) {
  for (int32_t i = 0; i < g->outputs.count; i++) live[g->outputs.items[i].value] = true;
  for (int32_t v = g->nodes.count - 1; v >= 0; v--) {
    if (!live[v]) continue;
    const graph_node *n = &g->nodes.items[v];
    for (int32_t i = 0; i < n->nargs; i++) live[n->args[i]] = true;
  }
}

static ic_status lower_inputs(lower_state *st) {
  const ic_graph *g = st->g;
  lowered *l = st->l;
  l->ninputs = g->inputs.count;
  l->inputs = calloc((size_t)l->ninputs + 1, sizeof *l->inputs);
  if (!l->inputs) return IC_ERR_OUT_OF_MEMORY;
  for (int32_t i = 0; i < l->ninputs; i++) {
    const graph_node *n = graph_node_get(g, g->inputs.items[i]);
    lower_input *in = &l->inputs[i];
    in->name = ic_strdup(n->name);
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

static ic_status lower_run(lower_state *st) {
  const ic_graph *g = st->g;
  lowered *l = st->l;
  ic_status s = lower_inputs(st);
  if (s) return s;
  l->nsymbols = g->symbols.count;
  l->symbol_names = calloc((size_t)l->nsymbols + 1, sizeof(char *));
  if (!l->symbol_names) return IC_ERR_OUT_OF_MEMORY;
  for (int32_t k = 0; k < l->nsymbols; k++)
    if (!(l->symbol_names[k] = ic_strdup(g->symbols.items[k]))) return IC_ERR_OUT_OF_MEMORY;

  bool *live = calloc((size_t)g->nodes.count + 1, sizeof(bool));
  if (!live) return IC_ERR_OUT_OF_MEMORY;
  lower_mark_live(g, live);
  for (int32_t v = 0; v < g->nodes.count && !s; v++) {
    const graph_node *n = &g->nodes.items[v];
    if (!live[v] || n->kind != GRAPH_OP) continue;
    if (!lower_push_node(st, n->op, n->dtype, n->ndim, n->dims)) s = IC_ERR_OUT_OF_MEMORY;
    else {
      st->node_of[v] = l->nodes.count - 1;
      lower_node *ln = &l->nodes.items[l->nodes.count - 1];
      ln->nargs = n->nargs;
      for (int32_t i = 0; i < n->nargs; i++) ln->args[i] = lower_operand(st, n->args[i], n->ndim);
    }
  }
  free(live);
  if (s) return s;

  /* Outputs: each gets a node of its own; a copy (cast to its own dtype) where the value
   * is not a computed node or is already another output's. */
  l->noutputs = g->outputs.count;
  l->outputs = calloc((size_t)l->noutputs + 1, sizeof *l->outputs);
  bool *claimed = calloc((size_t)l->nodes.count + 1, sizeof(bool));
  if (!l->outputs || !claimed) {
    free(claimed);
    return IC_ERR_OUT_OF_MEMORY;
  }
  for (int32_t o = 0; o < l->noutputs && !s; o++) {
    const graph_output *go = &g->outputs.items[o];
    const graph_node *n = graph_node_get(g, go->value);
    l->outputs[o].name = ic_strdup(go->name);
    bool own = n->kind == GRAPH_OP && !claimed[st->node_of[go->value]];
    if (!l->outputs[o].name || (!own && !lower_push_node(st, IC_OP_CAST, n->dtype, n->ndim, n->dims))) {
      s = IC_ERR_OUT_OF_MEMORY;
    } else if (own) {
      l->outputs[o].node = st->node_of[go->value];
      claimed[l->outputs[o].node] = true;
    } else {
      lower_node *ln = &l->nodes.items[l->nodes.count - 1];
      ln->nargs = 1;
      ln->args[0] = lower_operand(st, go->value, n->ndim);
      l->outputs[o].node = l->nodes.count - 1;
    }
  }
  free(claimed);
  if (!s && sym_arena_failed(l->syms)) s = IC_ERR_OUT_OF_MEMORY;
  return s;
}

ic_status lower_graph(const ic_graph *g, lowered **out) {
  *out = NULL;
  lowered *l = calloc(1, sizeof *l);
  int32_t *node_of = malloc(sizeof(int32_t) * ((size_t)g->nodes.count + 1));
  if (!l || !node_of || !(l->syms = sym_arena_create())) {
    free(node_of);
    lowered_destroy(l);
    return ic_set_error(IC_ERR_OUT_OF_MEMORY, "lowering: out of memory");
  }
  for (int32_t v = 0; v < g->nodes.count; v++) node_of[v] = -1;
  lower_state st = {g, l, node_of};
  ic_status s = lower_run(&st);
  free(node_of);
  if (s) {
    lowered_destroy(l);
    return ic_set_error(s, "lowering: out of memory");
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
  free(l->inputs);
  free(l->outputs);
  free(l->nodes.items);
  sym_arena_destroy(l->syms);
  free(l);
}
