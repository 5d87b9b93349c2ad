/* Contraction kernels: the tile of outputs a block computes. */
#include "kir/kir.h"

int32_t kir_contract_index(const kir_kernel *k) {
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_CONTRACT) return i;
  return -1;
}

/* A constant size, or -1 for a symbolic one; 1 for a side the kernel lacks. */
static int64_t kir_contract_size(const kir_kernel *k, int32_t dim) {
  int64_t v = 1;
  if (dim < 0) return 1;
  return sym_is_const(k->syms, k->dims[dim], &v) ? v : -1;
}

/* The blocks of a tm x tn tile: the batch dims times the tiles along M and N. */
static sym_id kir_contract_blocks(const kir_kernel *k, int32_t tm, int32_t tn) {
  sym_arena *a = k->syms;
  sym_id points = sym_const(a, 1);
  for (int32_t d = 0; d + 1 < k->ndim; d++) {
    sym_id size = k->dims[d];
    if (d == k->contract_m) size = sym_ceildiv(a, size, sym_const(a, tm));
    else if (d == k->contract_n) size = sym_ceildiv(a, size, sym_const(a, tn));
    points = sym_mul(a, points, size);
  }
  return points;
}

void kir_contract_plan(kir_kernel *k) {
  int32_t c = kir_contract_index(k);
  ic_dtype dt = c >= 0 ? k->instrs.items[k->instrs.items[c].args[0]].dtype : IC_F32;
  bool tensor_cores = dt == IC_BF16 || dt == IC_F16 || dt == IC_I8 || (dt == IC_F32 && k->allow_tf32);
  int64_t m = kir_contract_size(k, k->contract_m), n = kir_contract_size(k, k->contract_n);
  int32_t tm = 64, tn = 64;
  if (tensor_cores && (m < 0 || m > 64) && (n < 0 || n > 64)) tm = tn = 128;
  /* a 1-D operand leaves one side of the tile with a single row or column */
  if (k->contract_m < 0) tm = 1;
  if (k->contract_n < 0) tn = 1;
  k->tile_m = tm;
  k->tile_n = tn;
  k->small_m = k->small_n = 0;
  if ((m < 0 || n < 0) && (tm > 64 || tn > 64)) {
    k->small_m = k->contract_m < 0 ? 1 : 64;
    k->small_n = k->contract_n < 0 ? 1 : 64;
  }
  sym_id blocks = kir_contract_blocks(k, tm, tn);
  sym_id when = kir_contract_when(k);
  if (when != SYM_NONE) {
    sym_arena *a = k->syms;
    sym_id small = kir_contract_blocks(k, k->small_m, k->small_n);
    blocks = sym_add(a, sym_mul(a, when, blocks), sym_mul(a, sym_sub(a, sym_const(a, 1), when), small));
  }
  k->launch_numel = blocks;
}

sym_id kir_contract_when(const kir_kernel *k) {
  if (k->small_m <= 0) return SYM_NONE;
  sym_arena *a = k->syms;
  sym_id when = sym_const(a, 1);
  if (k->contract_m >= 0) when = sym_mul(a, when, kir_sym_positive(a, sym_sub(a, k->dims[k->contract_m], sym_const(a, 64))));
  if (k->contract_n >= 0) when = sym_mul(a, when, kir_sym_positive(a, sym_sub(a, k->dims[k->contract_n], sym_const(a, 64))));
  return when;
}
