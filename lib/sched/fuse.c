/* Pointwise fusion: chains and siblings over the same iteration space share a kernel. */
#include "sched/sched.h"

#include <stdlib.h>
#include <string.h>

static bool sched_dims_equal(const sched_group *g, int32_t ndim, const sym_id *dims) {
  return g->ndim == ndim && memcmp(g->dims, dims, sizeof(sym_id) * (size_t)ndim) == 0;
}

/* Whether node n may join group g as far as spaces go. */
/* The chunk of ic.h's summation order (kir.h's KIR_REDUCE_CHUNK; the kir layer sits
 * beside this one, not below). */
enum { SCHED_CHUNK = 8 };

/* Whether an asm of this pack and purity may share a reduction kernel reducing `axes` of
 * an ndim space, as an element node (else: a row node). A reduction kernel walks a row
 * in chunks of 8 elements and may recompute element values in each pass: a pack groups
 * along the last dim only when that is the one reduced dim and the pack divides the
 * chunk; an impure asm must run once. */
static bool sched_asm_fits(int32_t pack, bool pure, uint32_t axes, int32_t ndim, bool element) {
  if (!pure) return false;
  if (pack == 1) return true;
  return element && pack <= SCHED_CHUNK && ndim > 0 && axes == 1u << (ndim - 1);
}

static bool sched_fits(const lowered *l, const sched_group *g, const lower_node *n) {
  /* contractions and their prologues are placed together (sched_fuse_pointwise); an
   * epilogue node lives on the row form (a node over the whole space would be an element
   * node that is neither operand of the contraction) */
  if (n->contracts || n->contract_of >= 0) return false;
  if (g->contracts)
    return !n->is_reduce && !n->asm_spec && !sched_dims_equal(g, n->ndim, n->dims) &&
           lower_is_row_form(l->syms, g->ndim, g->dims, g->axes, n->ndim, n->dims);
  if (n->asm_spec && g->reduces &&
      !sched_asm_fits(n->asm_spec->pack, n->asm_spec->pure, g->axes, g->ndim, sched_dims_equal(g, n->ndim, n->dims)))
    return false;
  if (n->is_reduce && g->has_asm && !sched_asm_fits(g->asm_pack, !g->asm_impure, n->axes, n->in_ndim, true))
    return false;
  if (n->is_reduce) return sched_dims_equal(g, n->in_ndim, n->in_dims) && (!g->reduces || g->axes == n->axes);
  if (sched_dims_equal(g, n->ndim, n->dims)) return true;
  return g->reduces && lower_is_row_form(l->syms, g->ndim, g->dims, g->axes, n->ndim, n->dims);
}

typedef struct sched_visit {
  schedule *s;
  const lower_node *node; /* sched_min_group: the consumer */
  int32_t group; /* sched_min_group: the result; sched_mark_read: the reader's group */
} sched_visit;

static void sched_min_group_leaf(const lower_arg *a, void *ctx) {
  sched_visit *v = ctx;
  int32_t g = -1;
  if (a->kind == LOWER_ARG_NODE && a->bcast) {
    /* a row read back over the reduced axes: in the row's own reduction group only */
    const sched_group *pg = &v->s->groups[v->s->group_of[a->node]];
    bool same = pg->reduces && !pg->contracts && pg->axes == a->bcast && sched_dims_equal(pg, v->node->ndim, v->node->dims);
    g = v->s->group_of[a->node] + (same ? 0 : 1);
  } else if (a->kind == LOWER_ARG_NODE) g = v->s->group_of[a->node];
  else if (a->kind == LOWER_ARG_LOAD && !a->src.is_input) g = v->s->group_of[a->src.index] + 1;
  if (g > v->group) v->group = g;
}

/* Earliest group a node may join: after every operand's producer (the leaves of a
 * concat's or pad's choices included). */
static int32_t sched_min_group(const lowered *l, schedule *s, const lower_node *n) {
  sched_visit v = {s, n, 0};
  for (int32_t i = 0; i < n->nargs; i++) lower_arg_leaves(l, &n->args[i], sched_min_group_leaf, &v);
  return v.group;
}

/* The most reductions of group `group` that lead to a node (its operands' depths there). */
typedef struct sched_depth {
  const schedule *s;
  const int32_t *rdepth;
  int32_t group, depth;
} sched_depth;

static void sched_depth_leaf(const lower_arg *a, void *ctx) {
  sched_depth *d = ctx;
  if (a->kind == LOWER_ARG_NODE && d->s->group_of[a->node] == d->group && d->rdepth[a->node] > d->depth)
    d->depth = d->rdepth[a->node];
}

static int32_t sched_depth_in(const lowered *l, const schedule *s, const int32_t *rdepth, const lower_node *n,
                              int32_t group) {
  sched_depth d = {s, rdepth, group, 0};
  for (int32_t i = 0; i < n->nargs; i++) lower_arg_leaves(l, &n->args[i], sched_depth_leaf, &d);
  return d.depth + (n->is_reduce ? 1 : 0);
}

static void sched_mark_read(schedule *s, int32_t producer, int32_t reader_group) {
  if (s->group_of[producer] == reader_group) return;
  s->materialize[producer] = true;
  if (reader_group > s->last_use[producer]) s->last_use[producer] = reader_group;
}

static void sched_mark_read_leaf(const lower_arg *a, void *ctx) {
  sched_visit *v = ctx;
  if (a->kind == LOWER_ARG_NODE) sched_mark_read(v->s, a->node, v->group);
  else if (a->kind == LOWER_ARG_LOAD && !a->src.is_input) sched_mark_read(v->s, a->src.index, v->group);
}

/* Node i joins group g: the group's kind, its node list, the node's reduction depth
 * (rdepth: NULL without a budget) and the reads it makes of other groups' nodes. False
 * when out of memory. */
static bool sched_place(const lowered *l, schedule *s, int32_t *rdepth, int32_t i, int32_t g) {
  const lower_node *node = &l->nodes.items[i];
  sched_group *grp = &s->groups[g];
  if (node->is_reduce) {
    grp->reduces = true;
    grp->axes = node->axes;
  }
  if (node->asm_spec) {
    grp->has_asm = true;
    if (node->asm_spec->pack > grp->asm_pack) grp->asm_pack = node->asm_spec->pack;
    grp->asm_impure |= !node->asm_spec->pure;
  }
  if (!vec_grow((void **)&grp->nodes, &grp->cap, grp->count + 1, sizeof *grp->nodes)) return false;
  grp->nodes[grp->count++] = i;
  s->group_of[i] = g;
  if (rdepth) rdepth[i] = sched_depth_in(l, s, rdepth, node, g);
  sched_visit reader = {s, node, g};
  for (int32_t a = 0; a < node->nargs; a++) lower_arg_leaves(l, &node->args[a], sched_mark_read_leaf, &reader);
  return true;
}

ic_status sched_fuse_pointwise(const lowered *l, bool eager, const bool *split, int32_t budget, schedule *s) {
  memset(s, 0, sizeof *s);
  s->eager = eager;
  size_t n = (size_t)l->nodes.count + 1;
  s->group_of = sys_malloc(n * sizeof(int32_t));
  s->materialize = sys_calloc(n, sizeof(bool));
  s->last_use = sys_malloc(n * sizeof(int32_t));
  const bool bounded = budget > 0 && !eager; /* eager groups are single nodes */
  int32_t *rdepth = bounded ? sys_malloc(n * sizeof(int32_t)) : NULL; /* reductions leading to a node in its group */
  if (!s->group_of || !s->materialize || !s->last_use || (bounded && !rdepth)) goto oom;
  for (int32_t i = 0; i < l->nodes.count; i++) s->last_use[i] = -1;
  for (int32_t i = 0; i < l->nodes.count; i++) {
    const lower_node *node = &l->nodes.items[i];
    int32_t g = -1;
    s->group_of[i] = -1;
    if (node->contract_of >= 0) continue; /* placed with its contraction */
    if (node->contracts) {
      /* a group of its own after every group so far (its operands' producers are all
       * there), its prologue first, in order */
      sched_group fresh = {.ndim = node->in_ndim, .dims = node->in_dims, .reduces = true, .axes = node->axes,
                           .contracts = true, .contract = i};
      if (!vec_grow((void **)&s->groups, &s->cap, s->count + 1, sizeof *s->groups)) goto oom;
      s->groups[s->count] = fresh;
      g = s->count++;
      for (int32_t j = 0; j < i; j++)
        if (l->nodes.items[j].contract_of == i && !sched_place(l, s, rdepth, j, g)) goto oom;
      if (!sched_place(l, s, rdepth, i, g)) goto oom;
      continue;
    }
    if (node->is_asm_result) {
      g = s->group_of[node->args[0].node]; /* with its asm node, always: the asm runs once */
    } else if (!eager && !(split && split[i])) {
      for (int32_t c = sched_min_group(l, s, node); c < s->count && g < 0; c++) {
        const sched_group *grp = &s->groups[c];
        bool alone = split && grp->count == 1 && split[grp->nodes[0]];
        bool full = bounded && (grp->count >= budget ||
                                (node->is_reduce && sched_depth_in(l, s, rdepth, node, c) > SCHED_MAX_REDUCTION_DEPTH));
        if (!alone && !full && sched_fits(l, grp, node)) g = c;
      }
    }
    if (g < 0) {
      sched_group fresh = {.ndim = node->ndim, .dims = node->dims};
      if (node->is_reduce) fresh = (sched_group){.ndim = node->in_ndim, .dims = node->in_dims};
      if (!vec_grow((void **)&s->groups, &s->cap, s->count + 1, sizeof *s->groups)) goto oom;
      s->groups[s->count] = fresh;
      g = s->count++;
    }
    if (!sched_place(l, s, rdepth, i, g)) goto oom;
  }
  for (int32_t o = 0; o < l->noutputs; o++) s->materialize[l->outputs[o].node] = true;
  free(rdepth);
  return IC_OK;
oom:
  free(rdepth);
  schedule_free(s);
  return error_set(IC_ERR_OUT_OF_MEMORY, "scheduling: out of memory");
}

void schedule_free(schedule *s) {
  for (int32_t g = 0; g < s->count; g++) free(s->groups[g].nodes);
  free(s->groups);
  free(s->group_of);
  free(s->materialize);
  free(s->last_use);
  memset(s, 0, sizeof *s);
}
