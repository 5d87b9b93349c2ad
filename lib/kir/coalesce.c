/* Two kernel IR passes over the iteration space.
 *
 * kir_coalesce_dims: adjacent dims that every access walks contiguously (the outer dim's
 * coefficient is the inner one's times the inner size) and no range (concat, pad) reads
 * become one dim, and dims of constant size 1 disappear. [n, 37] + [n, 37] becomes one
 * run of 37n elements, so the vector path applies whatever the row length; [n, 37] *
 * [37] keeps its two dims.
 *
 * kir_generalize_sizes: a kernel whose every access is a contiguous tensor, broadcast
 * along some dims (y[n, m] = x[n, m] * w[m], or one run of elements after coalescing),
 * computes the same thing for every size: its sizes become launch parameters, so its
 * source and cache key do not depend on the shape. Eager mode uses it, so the eager
 * kernels of one op, dtypes and layout are shared by every graph.
 *
 * Both take kernels of any length (their per-instruction state is on the heap) and say
 * in their result (kir_pass_result) why they leave a kernel as it is. */
#include <stdlib.h>
#include <string.h>

#include "kir/kir.h"

typedef struct kir_affine {
  sym_id coeff[IC_MAX_DIMS];
  sym_id rest;
} kir_affine;

/* Splits an offset into coefficients of the vars and a var-free rest. */
static bool kir_decompose(kir_kernel *k, sym_id offset, kir_affine *out) {
  sym_id rest = offset;
  for (int32_t d = k->ndim - 1; d >= 0; d--) {
    sym_id r;
    if (!sym_affine_in_var(k->syms, rest, d, &out->coeff[d], &r) || sym_depends_on(k->syms, out->coeff[d], SYM_VAR, -1))
      return false;
    rest = r;
  }
  out->rest = rest;
  return true;
}

static bool kir_is_access(const kir_instr *in) { return in->kind == KIR_LOAD || in->kind == KIR_STORE; }

static kir_pass_result kir_coalesce_with(kir_kernel *k, kir_affine *acc);

kir_pass_result kir_coalesce_dims(kir_kernel *k) {
  int32_t n = k->instrs.count;
  /* One decomposition per instruction, whatever the kernel's size. */
  kir_affine *acc = sys_calloc((size_t)n + 1, sizeof *acc);
  if (!acc) return KIR_PASS_OUT_OF_MEMORY;
  kir_pass_result r = kir_coalesce_with(k, acc);
  free(acc);
  return r;
}

static kir_pass_result kir_pass_end(const sym_arena *a) {
  return sym_arena_failed(a) ? KIR_PASS_OUT_OF_MEMORY : KIR_PASS_DONE;
}

/* The pass proper, over acc (one entry per instruction). */
static kir_pass_result kir_coalesce_with(kir_kernel *k, kir_affine *acc) {
  sym_arena *a = k->syms;
  int32_t n = k->instrs.count;
  for (int32_t i = 0; i < n; i++) /* an access that is not affine in the vars: keep the dims */
    if (kir_is_access(&k->instrs.items[i]) && !kir_decompose(k, k->instrs.items[i].offset, &acc[i]))
      return sym_arena_failed(a) ? KIR_PASS_OUT_OF_MEMORY : KIR_PASS_NOT_AFFINE;
  int32_t ndim = k->ndim;
  sym_id dims[IC_MAX_DIMS];
  memcpy(dims, k->dims, sizeof dims);
  /* Ranges (of concat and pad) test single vars, so a dim whose var a range reads is
   * never merged: the test would need the merged var split again. origin[d]: the var
   * dim d stands for, -1 once merged; ranged[d]: a range reads it. */
  int32_t origin[IC_MAX_DIMS];
  bool ranged[IC_MAX_DIMS] = {false}, reduced[IC_MAX_DIMS] = {false};
  for (int32_t d = 0; d < ndim; d++) {
    origin[d] = d;
    reduced[d] = k->reduces && ((k->axes >> d) & 1u); /* reduced dims merge only with each other */
    for (int32_t i = 0; i < n; i++)
      if (k->instrs.items[i].kind == KIR_RANGE) ranged[d] |= sym_depends_on(a, k->instrs.items[i].offset, SYM_VAR, d);
  }
  /* An asm's groups run along the last dim: it stays the last, whatever its size. */
  bool keep_last = kir_pack(k) > 1 && ndim > 0;
  /* size-1 dims: their var is always 0 */
  for (int32_t d = ndim - 1; d >= 0; d--) {
    int64_t c;
    if (!sym_is_const(a, dims[d], &c) || c != 1 || (keep_last && d == ndim - 1)) continue;
    for (int32_t i = 0; i < n; i++)
      if (kir_is_access(&k->instrs.items[i])) memmove(&acc[i].coeff[d], &acc[i].coeff[d + 1], sizeof(sym_id) * (size_t)(ndim - d - 1));
    memmove(&dims[d], &dims[d + 1], sizeof(sym_id) * (size_t)(ndim - d - 1));
    memmove(&origin[d], &origin[d + 1], sizeof(int32_t) * (size_t)(ndim - d - 1));
    memmove(&ranged[d], &ranged[d + 1], sizeof(bool) * (size_t)(ndim - d - 1));
    memmove(&reduced[d], &reduced[d + 1], sizeof(bool) * (size_t)(ndim - d - 1));
    ndim--;
  }
  /* merge an outer dim into its inner neighbour where every access allows it */
  for (int32_t d = ndim - 2; d >= 0; d--) {
    bool ok = !ranged[d] && !ranged[d + 1] && reduced[d] == reduced[d + 1] && !(keep_last && d + 1 == ndim - 1);
    for (int32_t i = 0; i < n && ok; i++)
      if (kir_is_access(&k->instrs.items[i])) ok = acc[i].coeff[d] == sym_mul(a, acc[i].coeff[d + 1], dims[d + 1]);
    if (!ok) continue;
    dims[d] = sym_mul(a, dims[d], dims[d + 1]);
    origin[d] = -1;
    for (int32_t i = 0; i < n; i++) {
      if (!kir_is_access(&k->instrs.items[i])) continue;
      acc[i].coeff[d] = acc[i].coeff[d + 1];
      memmove(&acc[i].coeff[d + 1], &acc[i].coeff[d + 2], sizeof(sym_id) * (size_t)(ndim - d - 2));
    }
    memmove(&dims[d + 1], &dims[d + 2], sizeof(sym_id) * (size_t)(ndim - d - 2));
    memmove(&origin[d + 1], &origin[d + 2], sizeof(int32_t) * (size_t)(ndim - d - 2));
    memmove(&ranged[d + 1], &ranged[d + 2], sizeof(bool) * (size_t)(ndim - d - 2));
    memmove(&reduced[d + 1], &reduced[d + 2], sizeof(bool) * (size_t)(ndim - d - 2));
    ndim--;
  }
  if (ndim == k->ndim) return kir_pass_end(a);
  k->axes = 0;
  for (int32_t d = 0; d < ndim; d++) k->axes |= reduced[d] ? 1u << d : 0u;
  /* Ranges read the vars of unmerged dims (renumbered) and of size-1 dims (now 0). */
  sym_id repl[IC_MAX_DIMS];
  for (int32_t d = 0; d < k->ndim; d++) repl[d] = sym_const(a, 0);
  for (int32_t d = 0; d < ndim; d++)
    if (origin[d] >= 0) repl[origin[d]] = sym_var(a, d);
  for (int32_t i = 0; i < n; i++) {
    kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_RANGE) in->offset = sym_subst_vars(a, in->offset, k->ndim, repl);
  }
  k->ndim = ndim;
  memcpy(k->dims, dims, sizeof dims);
  for (int32_t i = 0; i < n; i++) {
    kir_instr *in = &k->instrs.items[i];
    if (!kir_is_access(in)) continue;
    sym_id off = acc[i].rest;
    for (int32_t d = 0; d < ndim; d++) off = sym_add(a, off, sym_mul(a, acc[i].coeff[d], sym_var(a, d)));
    in->offset = off;
  }
  return kir_pass_end(a);
}

kir_pass_result kir_generalize_sizes(kir_kernel *k) {
  sym_arena *a = k->syms;
  int32_t ndim = k->ndim, n = k->instrs.count;
  if (k->reduces) return KIR_PASS_REDUCTION;
  if (ndim == 0 || ndim > KIR_MAX_SIZES) return KIR_PASS_RANK;
  /* Ranges compare indices with the sizes themselves: such a kernel keeps its sizes. */
  for (int32_t i = 0; i < n; i++)
    if (k->instrs.items[i].kind == KIR_RANGE || kir_is_guarded_load(&k->instrs.items[i])) return KIR_PASS_RANGES;
  for (int32_t d = 0; d < ndim; d++)
    if (sym_kind_of(a, k->dims[d]) == SYM_PARAM && sym_leaf_index(a, k->dims[d]) >= KIR_SIZE_PARAM_BASE)
      return KIR_PASS_ALREADY;
  /* Every access must be a contiguous tensor broadcast along some dims: no constant part,
   * a zero coefficient for the broadcast dims, and for the others the product of the
   * sizes of the later dims the access does not broadcast. */
  sym_id zero = sym_const(a, 0);
  bool *walks = sys_calloc((size_t)n * IC_MAX_DIMS + 1, sizeof(bool)); /* per access and var */
  if (!walks) return KIR_PASS_OUT_OF_MEMORY;
  bool ok = true;
  for (int32_t i = 0; i < n && ok; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (!kir_is_access(in)) continue;
    kir_affine acc;
    ok = kir_decompose(k, in->offset, &acc) && acc.rest == zero;
    sym_id expected = sym_const(a, 1);
    for (int32_t d = ndim - 1; d >= 0 && ok; d--) {
      walks[i * IC_MAX_DIMS + d] = acc.coeff[d] != zero;
      ok = !walks[i * IC_MAX_DIMS + d] || acc.coeff[d] == expected;
      if (walks[i * IC_MAX_DIMS + d]) expected = sym_mul(a, expected, k->dims[d]);
    }
  }
  if (ok) {
    sym_id size[IC_MAX_DIMS];
    for (int32_t d = 0; d < ndim; d++) {
      size[d] = sym_param(a, KIR_SIZE_PARAM_BASE + d);
      k->size_exprs[d] = k->dims[d];
    }
    for (int32_t i = 0; i < n; i++) {
      kir_instr *in = &k->instrs.items[i];
      if (!kir_is_access(in)) continue;
      sym_id off = zero, stride = sym_const(a, 1);
      for (int32_t d = ndim - 1; d >= 0; d--) {
        if (!walks[i * IC_MAX_DIMS + d]) continue;
        off = sym_add(a, off, sym_mul(a, stride, sym_var(a, d)));
        stride = sym_mul(a, stride, size[d]);
      }
      in->offset = off;
    }
    k->nsizes = ndim;
    k->numel = sym_const(a, 1);
    for (int32_t d = 0; d < ndim; d++) {
      k->dims[d] = size[d];
      k->numel = sym_mul(a, k->numel, size[d]);
    }
  }
  free(walks);
  if (sym_arena_failed(a)) return KIR_PASS_OUT_OF_MEMORY;
  return ok ? KIR_PASS_DONE : KIR_PASS_NOT_CONTIGUOUS;
}
