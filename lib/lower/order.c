/* Canonical node order: the lowered nodes in the order a depth-first walk from the
 * outputs (in output order, each node's operands in argument order) finishes them.
 *
 * Graph order is the order the user happened to build values in: r * rsqrt(ms) * (w + 1)
 * builds w + 1 first or last depending on where the line sits. Kernel IR follows node
 * order, so two such spellings would give the same kernels with their instructions
 * shuffled, different sources and cache entries. The walk orders nodes by how the
 * outputs use them, which every equivalent spelling shares. */
#include "lower/lower.h"

#include <stdlib.h>
#include <string.h>

typedef struct order_deps {
  int32_t *at;    /* node i's operand nodes: items[at[i] .. at[i + 1]) */
  int32_t *items;
  int32_t count;
} order_deps;

static void order_count_leaf(const lower_arg *a, void *ctx) {
  order_deps *d = ctx;
  if (a->kind == LOWER_ARG_NODE || (a->kind == LOWER_ARG_LOAD && !a->src.is_input)) d->count++;
}

static void order_add_leaf(const lower_arg *a, void *ctx) {
  order_deps *d = ctx;
  if (a->kind == LOWER_ARG_NODE) d->items[d->count++] = a->node;
  else if (a->kind == LOWER_ARG_LOAD && !a->src.is_input) d->items[d->count++] = a->src.index;
}

static void order_renumber(lower_arg *a, const int32_t *new_index) {
  if (a->kind == LOWER_ARG_NODE && a->node >= 0) a->node = new_index[a->node];
  else if (a->kind == LOWER_ARG_LOAD && !a->src.is_input && a->src.index >= 0) a->src.index = new_index[a->src.index];
}

ic_status lower_canonical_order(lowered *l) {
  const int32_t n = l->nodes.count;
  order_deps deps = {sys_calloc((size_t)n + 2, sizeof(int32_t)), NULL, 0};
  int32_t *new_index = sys_malloc(((size_t)n + 1) * sizeof(int32_t));
  int32_t *stack = sys_malloc(((size_t)n + 1) * sizeof(int32_t));
  int32_t *next = sys_calloc((size_t)n + 1, sizeof(int32_t)); /* the operand a node's walk goes on with */
  lower_node *sorted = sys_malloc(((size_t)n + 1) * sizeof(lower_node));
  ic_status st = IC_OK;
  if (!deps.at || !new_index || !stack || !next || !sorted) goto oom;
  for (int32_t i = 0; i < n; i++) {
    deps.at[i] = deps.count;
    for (int32_t j = 0; j < l->nodes.items[i].nargs; j++) lower_arg_leaves(l, &l->nodes.items[i].args[j], order_count_leaf, &deps);
  }
  deps.at[n] = deps.count;
  if (!(deps.items = sys_malloc(((size_t)deps.count + 1) * sizeof(int32_t)))) goto oom;
  deps.count = 0;
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < l->nodes.items[i].nargs; j++) lower_arg_leaves(l, &l->nodes.items[i].args[j], order_add_leaf, &deps);
  for (int32_t i = 0; i < n; i++) new_index[i] = -1;
  /* -2: on the stack; >= 0: placed */
  int32_t placed = 0;
  for (int32_t o = 0; o < l->noutputs; o++) {
    int32_t root = l->outputs[o].node, top = 0;
    if (new_index[root] != -1) continue;
    stack[top++] = root;
    new_index[root] = -2;
    while (top > 0) {
      int32_t v = stack[top - 1];
      if (deps.at[v] + next[v] < deps.at[v + 1]) {
        int32_t u = deps.items[deps.at[v] + next[v]++];
        if (u >= 0 && new_index[u] == -1) {
          new_index[u] = -2;
          stack[top++] = u;
        }
        continue;
      }
      top--;
      new_index[v] = placed;
      sorted[placed++] = l->nodes.items[v];
    }
  }
  /* nodes no output reaches (lower_drop_dead removed them) keep their order at the end */
  for (int32_t i = 0; i < n; i++)
    if (new_index[i] == -1) {
      new_index[i] = placed;
      sorted[placed++] = l->nodes.items[i];
    }
  memcpy(l->nodes.items, sorted, sizeof(lower_node) * (size_t)n);
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < l->nodes.items[i].nargs; j++)
      if (l->nodes.items[i].args[j].kind != LOWER_ARG_SELECT) order_renumber(&l->nodes.items[i].args[j], new_index);
  for (int32_t i = 0; i < l->select_args.count; i++) order_renumber(&l->select_args.items[i], new_index);
  for (int32_t o = 0; o < l->noutputs; o++) l->outputs[o].node = new_index[l->outputs[o].node];
  for (int32_t i = 0; i < n; i++)
    if (l->nodes.items[i].contract_of >= 0) l->nodes.items[i].contract_of = new_index[l->nodes.items[i].contract_of];
  goto done;
oom:
  st = IC_ERR_OUT_OF_MEMORY;
done:
  free(deps.at);
  free(deps.items);
  free(new_index);
  free(stack);
  free(next);
  free(sorted);
  return st;
}
