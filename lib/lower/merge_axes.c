/* Canonical reduction axes: a reduction over several adjacent dims is one reduction over
 * their product, and kept dims of size 1 drop out of its space.
 *
 * ic's summation order depends only on N and the row-major numbering of the reduced
 * elements (ic.h), and adjacent reduced dims, taken in order, number their elements as
 * one dim of their product size does: reducing x[n, 32, 8, 1024] over dims 2 and 3 and
 * reducing its reshape x[n, 32, 8192] over dim 2 give the same bits. The lowered
 * reduction therefore lives on the merged space (a row reduction for group norm's
 * statistics over trailing dims), whichever spelling the graph used. Its operand is
 * resolved at the split index (i2 / 1024, i2 % 1024 for the two dims), which folds back
 * into a reshape's flat index ((x / b) * b + x % b = x). A keepdim result's 1s in the
 * merged run collapse into one 1 (the kept 1s go): same elements, same row-major order,
 * and readers of the graph's shape read it through a reshape index (lower.c). A kept dim
 * of size 1 numbers nothing: x[n, 1, 40] reduced over dim 2 is x[n, 40] reduced over
 * dim 1, the same kernel as the 2-D spelling. Pointwise ops over a
 * reshape of the merged space move onto it (lower_pick_space), so the reduction's
 * prologue and epilogue share its kernel. Only runs whose dims after the first are
 * constants merge, so no index divides by a size that may be 0. */
#include "lower/lower.h"

#include <string.h>

bool lower_merge_axes(sym_arena *a, int32_t ndim, const sym_id *dims, uint32_t axes, lower_axes_merge *m) {
  memset(m, 0, sizeof *m);
  bool changed = false, last_reduced = false;
  int32_t j = -1;
  for (int32_t d = 0; d < ndim; d++) {
    bool reduced = (axes >> d) & 1u;
    int64_t size = 0;
    bool unit = sym_is_const(a, dims[d], &size) && size == 1;
    m->inner[d] = sym_const(a, 1);
    if (unit && !reduced && ndim > 1) { /* a kept dim of size 1: index 0, no dim of its own */
      m->dim_of[d] = -1;
      changed = true;
      continue;
    }
    bool joins = j >= 0 && reduced && last_reduced && sym_is_const(a, dims[d], &size) && size >= 1;
    if (joins) {
      /* every earlier dim of the run gets this dim's size in its inner product */
      for (int32_t e = d - 1; e >= 0 && (m->dim_of[e] == j || m->dim_of[e] < 0); e--)
        if (m->dim_of[e] == j) m->inner[e] = sym_mul(a, m->inner[e], dims[d]);
      m->dims[j] = sym_mul(a, m->dims[j], dims[d]);
      m->first[d] = false;
      changed = true;
    } else {
      m->dims[++j] = dims[d];
      m->first[d] = true;
      if (reduced) m->axes |= 1u << j;
    }
    m->dim_of[d] = j;
    last_reduced = reduced;
  }
  m->ndim = j + 1;
  return changed && m->axes != 0;
}

void lower_merge_split_index(sym_arena *a, const lower_axes_merge *m, int32_t ndim, const sym_id *dims, sym_id *idx) {
  for (int32_t d = 0; d < ndim; d++) {
    if (m->dim_of[d] < 0) {
      idx[d] = sym_const(a, 0);
      continue;
    }
    sym_id q = sym_floordiv(a, sym_var(a, m->dim_of[d]), m->inner[d]);
    idx[d] = m->first[d] ? q : sym_mod(a, q, dims[d]);
  }
}
