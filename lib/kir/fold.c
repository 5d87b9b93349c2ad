/* Kernel IR pass kir_fold_clamped_casts: casts to fp8 of clamped values.
 *
 * ic's plain cast to f8e4m3 or f8e5m2 is PTX's saturating cvt (the only fp8 cvt there
 * is) and a test and a select an element that turn an overflow into NaN (e4m3) or inf
 * (e5m2). Quantization code clamps first, as PyTorch's does
 * (x.clamp(-448, 448).to(torch.float8_e4m3fn)), so nothing overflows:
 *
 *   cast(clamp(x, lo, hi))  with |lo|, |hi| <= max (the target's largest finite value)
 *     never overflows, so it is cast_saturate(clamp(x, lo, hi)): the same bits, NaN
 *     included (both store every NaN as the canonical one);
 *   cast_saturate(clamp(x, lo, hi))  with lo <= -max and hi >= max
 *     is cast_saturate(x): where the clamp moves x, past hi >= max or below lo <= -max,
 *     the saturation gives +-max from either value, and clamp's NaN is a NaN.
 *
 * With lo = -max and hi = max both apply, and PyTorch's clamp-then-cast is one saturating
 * cvt. Ops nothing uses any more (the clamp and its bounds) are dropped. */
#include <math.h>
#include <stdlib.h>

#include "base/dtype.h"
#include "base/sys.h"
#include "kir/kir.h"

/* The value of constant instruction i as its dtype holds it, or NaN when i is no constant. */
static double kir_const_value(const kir_kernel *k, int32_t i) {
  const kir_instr *in = &k->instrs.items[i];
  return in->kind == KIR_CONST ? dtype_round(in->dtype, in->value) : NAN;
}

/* Drops the ops and constants no store, reduction, range, load guard or asm uses
 * (backwards: a value's uses come after it), renumbering the arguments. */
static bool kir_drop_unused(kir_kernel *k) {
  const int32_t count = k->instrs.count;
  bool *live = sys_calloc((size_t)count + 1, sizeof *live);
  int32_t *moved = sys_malloc(((size_t)count + 1) * sizeof *moved);
  if (!live || !moved) {
    free(live);
    free(moved);
    return false;
  }
  for (int32_t i = count - 1; i >= 0; i--) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_OP && in->kind != KIR_CONST) live[i] = true;
    if (!live[i]) continue;
    for (int32_t a = 0; a < in->nargs; a++) live[in->args[a]] = true;
  }
  int32_t n = 0;
  for (int32_t i = 0; i < count; i++) {
    if (!live[i]) continue;
    kir_instr in = k->instrs.items[i];
    for (int32_t a = 0; a < in.nargs; a++) in.args[a] = moved[in.args[a]];
    moved[i] = n;
    k->instrs.items[n++] = in;
  }
  k->instrs.count = n;
  free(live);
  free(moved);
  return true;
}

kir_pass_result kir_fold_clamped_casts(kir_kernel *k) {
  bool folded = false;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_OP || (in->op != IC_OP_CAST && in->op != IC_OP_CAST_SATURATE) ||
        (in->dtype != IC_F8E4M3 && in->dtype != IC_F8E5M2))
      continue;
    const kir_instr *clamp = &k->instrs.items[in->args[0]];
    if (clamp->kind != KIR_OP || clamp->op != IC_OP_CLAMP || !dtype_is_float(clamp->dtype)) continue;
    const double lo = kir_const_value(k, clamp->args[1]), hi = kir_const_value(k, clamp->args[2]);
    const double max = dtype_max_finite(in->dtype);
    if (isnan(lo) || isnan(hi)) continue;
    if (in->op == IC_OP_CAST && fabs(lo) <= max && fabs(hi) <= max) {
      in->op = IC_OP_CAST_SATURATE;
      in->clamped = true;
    }
    if (in->op == IC_OP_CAST_SATURATE && lo <= -max && hi >= max) {
      in->args[0] = clamp->args[0];
      in->clamped = true;
      folded = true;
    }
  }
  if (folded && !kir_drop_unused(k)) return KIR_PASS_OUT_OF_MEMORY;
  return KIR_PASS_DONE;
}
