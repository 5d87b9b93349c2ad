/* Canonical placement of pointwise ops on a broadcast operand: which computed values a
 * broadcast read recomputes in the reader's kernel.
 *
 * cast(w) read as expand(cast(w)) and cast(expand(w)) are the same values; the second is
 * computed in the reader's space from w, the first would be a kernel over w whose buffer
 * the reader loads, a kernel boundary between the reader and everything before it in its
 * kernel. So a value computed from inputs and constants only (through any index view)
 * and read through a broadcast is recomputed at the reader's point, as the second
 * spelling is, and both spellings lower to the same nodes: the small side is never
 * materialized, let alone at the broadcast size. Values that depend on a reduction (a
 * row of a reduction kernel, read back over its row), an asm (run once), a pad or a
 * concat (guarded choices), and outputs (stored anyway) are read from their nodes as
 * before. Eager programs keep each op in its own space: one kernel an op of the graph. */
#include "lower/lower.h"

#include <stdlib.h>

/* The value under a chain of index views of v. */
static ic_value broadcast_view_base(const ic_graph *g, ic_value v) {
  for (;;) {
    const graph_node *n = graph_node_get(g, v);
    if (n->kind != GRAPH_EXPAND && n->kind != GRAPH_PERMUTE && n->kind != GRAPH_RESHAPE && n->kind != GRAPH_SLICE)
      return v;
    v = n->args[0];
  }
}

bool *lower_broadcast_recomputable(const ic_graph *g, const bool *is_output, bool fused) {
  bool *leaf_only = sys_calloc((size_t)g->nodes.count + 1, sizeof(bool)); /* inputs, constants and such ops */
  bool *recompute = sys_calloc((size_t)g->nodes.count + 1, sizeof(bool));
  if (!leaf_only || !recompute) {
    free(leaf_only);
    free(recompute);
    return NULL;
  }
  for (int32_t v = 0; v < g->nodes.count; v++) {
    const graph_node *n = &g->nodes.items[v];
    if (n->kind == GRAPH_INPUT || n->kind == GRAPH_CONST) {
      leaf_only[v] = true;
      continue;
    }
    if (n->kind != GRAPH_OP) continue;
    bool ok = true;
    for (int32_t i = 0; i < n->nargs && ok; i++) ok = leaf_only[broadcast_view_base(g, n->args[i])];
    leaf_only[v] = ok;
    recompute[v] = fused && ok && !is_output[v];
  }
  free(leaf_only);
  return recompute;
}
