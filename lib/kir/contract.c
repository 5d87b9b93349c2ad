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

/* The tiles by operand dtype and shape:
 *   tensor cores (bf16, f16, i8, f32 as TF32)  128 x 256 (bf16, f16), 128 x 128 or 64 x 64,
 *       the largest with a wave of blocks (KIR_CONTRACT_WAVE); where a size is symbolic,
 *       128 x 128 with 64 x 64 as the small tile, the launch's sizes choosing the same way
 *       (kir_contract_when); a 1-D operand: 64 x 8 (no N), 16 x 64 (no M), 16 x 8 (dot),
 *       the mma's smallest shapes
 *   FMA (f32, f64)  64 x 64; 256 x 1 (no N), 1 x 256 (no M), 1 x 1 (dot) */
void kir_contract_plan(kir_kernel *k) {
  int32_t c = kir_contract_index(k);
  ic_dtype dt = c >= 0 ? k->instrs.items[k->instrs.items[c].args[0]].dtype : IC_F32;
  bool tensor_cores = dt == IC_BF16 || dt == IC_F16 || dt == IC_I8 || (dt == IC_F32 && k->allow_tf32);
  int64_t m = kir_contract_size(k, k->contract_m), n = kir_contract_size(k, k->contract_n);
  int64_t batch = 1;
  for (int32_t d = 0; d + 1 < k->ndim; d++) {
    if (d == k->contract_m || d == k->contract_n) continue;
    int64_t b = kir_contract_size(k, d);
    batch = b < 0 || batch < 0 ? -1 : batch * b;
  }
  const bool known = m >= 0 && n >= 0 && batch >= 0;
  int32_t tm = 64, tn = 64;
  k->small_m = k->small_n = 0;
  if (tensor_cores && k->contract_m >= 0 && k->contract_n >= 0) {
    static const int32_t tiles[][2] = {{128, 256}, {128, 128}};
    /* i8 and TF32 stop at 128 x 128: at 128 x 256 their kernels spill on sm_80 */
    for (int32_t i = dt == IC_BF16 || dt == IC_F16 ? 0 : 1; i < 2 && known; i++) {
      int64_t blocks = batch * ((m + tiles[i][0] - 1) / tiles[i][0]) * ((n + tiles[i][1] - 1) / tiles[i][1]);
      if (blocks >= KIR_CONTRACT_WAVE) {
        tm = tiles[i][0];
        tn = tiles[i][1];
        break;
      }
    }
    if (!known) {
      tm = tn = 128;
      k->small_m = k->small_n = 64;
    }
  } else if (tensor_cores) {
    tm = k->contract_m < 0 ? 16 : 64;
    tn = k->contract_n < 0 ? 8 : 64;
  } else {
    tm = k->contract_m < 0 ? 1 : k->contract_n < 0 ? 256 : 64;
    tn = k->contract_n < 0 ? 1 : k->contract_m < 0 ? 256 : 64;
  }
  k->tile_m = tm;
  k->tile_n = tn;
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
  sym_id large = kir_contract_blocks(k, k->tile_m, k->tile_n);
  return kir_sym_positive(a, sym_sub(a, large, sym_const(a, KIR_CONTRACT_WAVE - 1)));
}
