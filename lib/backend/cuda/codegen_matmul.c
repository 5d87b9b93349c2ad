/* CUDA C generation for contraction (matmul) kernels (kir_kernel.contracts).
 *
 * A block computes a tile of tile_m x tile_n outputs of one batch point (kir_contract_plan);
 * blockIdx.x is decoded into the batch point and the tile, tiles in groups of MM_GROUP tile
 * rows (grouped raster: a group's blocks share their rows of A and columns of B in L2).
 *
 * The operands' element values (the prologue: loads, ranges, ops) and the epilogue (the
 * row values after the CONTRACT: ops, loads and the stores) are lambdas of the kernel:
 * mm_a(m, k), mm_b(k, n) and mm_epi(m, n, acc), the batch vars captured.
 *
 * bf16, f16, i8, and f32 with TF32 allowed run on tensor cores (mma.sync of the sm_80
 * class, codegen below). K moves in tiles of 64 bytes a row (32 bf16/f16, 64 i8, 16 f32)
 * through a pipeline of MM_STAGES shared-memory stages; an mma step consumes 32 bytes of K
 * (m16n8k16 bf16/f16, m16n8k32 s8, m16n8k8 tf32), so each output's accumulator takes the
 * chunks of K in increasing order whatever the tile and the warp layout: every tile gives
 * the same bits. Elements past M, N or K are zeros in shared memory.
 *
 * An operand's stage is K-major (a row of 64 bytes a row of A or column of B, 16-byte
 * chunks XOR-swizzled by (row / 2) % 4: ldmatrix's eight rows hit distinct banks), or for
 * 16-bit dtypes whose load is contiguous along M (A) or N (B), MN-major (a row a k, chunks
 * swizzled by k % 8) read with ldmatrix.trans. It is filled by one of two paths, chosen at
 * run time for the whole block: cp.async copies of 16 bytes (the operand is a plain load,
 * contiguous along the stage's rows, base and strides 16-byte aligned: the test reads the
 * strides off the offset expression at the block's batch point), or the general path,
 * which evaluates the element lambda per element and stores the words. Both put the same
 * bits in shared memory.
 *
 * f32 (no TF32), f64 and other dtypes run as a tiled FMA kernel (codegen_matmul_simt):
 * each output's acc = fma(a[k], b[k], acc) for k = 0 .. K - 1, acc from +0. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/codegen_matmul.h"

/* The tensor-core tiles kir_contract_plan may choose: warps along M and N, stages, and
 * the blocks a multiprocessor must hold (__launch_bounds__; without one, ptxas 13 spilled
 * a 64 x 64 kernel at 72 registers; with a bound it takes what it needs, and none). */
typedef struct mm_config {
  int32_t bm, bn, warps_m, warps_n, stages, min_blocks;
} mm_config;

static const mm_config mm_configs[] = {
    {128, 256, 2, 4, 4, 1}, /* warp tiles 64 x 64 */
    {128, 128, 2, 4, 4, 1}, /* 64 x 32 */
    {64, 64, 2, 2, 4, 2},   /* 32 x 32 */
    {64, 8, 4, 1, 4, 2},    /* matrix x vector: 16 x 8 */
    {16, 64, 1, 4, 4, 2},   /* vector x matrix: 16 x 16 */
    {16, 8, 1, 1, 4, 1},    /* dot */
};

/* The small tile of a kernel that holds two (kir_contract_when): 64 x 64 in the large
 * tile's 8 warps (warp tiles 32 x 16), so that one block size serves both. */
static const mm_config mm_small_config = {64, 64, 2, 4, 4, 1};

enum { MM_GROUP = 8, MM_ROW_BYTES = 64 };

bool mm_tensor_cores(ic_dtype dt, bool allow_tf32) {
  return dt == IC_BF16 || dt == IC_F16 || dt == IC_I8 || (dt == IC_F32 && allow_tf32);
}

/* Marks in set the instructions value i reads, i included (not through the CONTRACT). */
static void mm_closure(const kir_kernel *k, int32_t i, bool *set) {
  set[i] = true;
  for (int32_t j = i; j >= 0; j--) {
    if (!set[j]) continue;
    const kir_instr *in = &k->instrs.items[j];
    if (in->kind == KIR_CONTRACT) continue;
    for (int32_t a = 0; a < in->nargs; a++) set[in->args[a]] = true;
  }
}

/* One instruction of a lambda body: v<i> from its operands (scalars, vars in scope). */
static void mm_instr(mm_gen *mg, int32_t i, const char *indent) {
  codegen *cg = mg->cg;
  const kir_kernel *k = mg->k;
  const kir_instr *in = &k->instrs.items[i];
  sbuf *o = &cg->out;
  const char *t = cg_ctype(in->dtype);
  switch (in->kind) {
  case KIR_CONST:
    sbuf_printf(o, "%sconst %s v%" PRId32 " = ", indent, t, i);
    cg_const(cg, in);
    sbuf_puts(o, ";\n");
    break;
  case KIR_RANGE:
    sbuf_printf(o, "%sconst bool v%" PRId32 " = ", indent, i);
    cg_range(cg, in, NULL, "");
    sbuf_puts(o, ";\n");
    break;
  case KIR_LOAD:
    sbuf_printf(o, "%sconst %s v%" PRId32 " = ", indent, t, i);
    if (kir_is_guarded_load(in)) sbuf_printf(o, "v%" PRId32 " ? ", in->args[0]);
    cg_load(cg, in, NULL);
    if (kir_is_guarded_load(in)) sbuf_printf(o, " : (%s)0", t);
    sbuf_puts(o, ";\n");
    break;
  case KIR_OP: {
    kir_instr args[3] = {{0}};
    char names[3][24];
    for (int32_t j = 0; j < 3; j++) snprintf(names[j], sizeof names[j], "v%" PRId32, j < in->nargs ? in->args[j] : 0);
    for (int32_t j = 0; j < in->nargs; j++) args[j] = k->instrs.items[in->args[j]];
    if (in->op == IC_OP_WHERE) args[0] = args[1]; /* where's data operands carry the dtype */
    const char *const refs[3] = {names[0], names[1], names[2]};
    sbuf_printf(o, "%sconst %s v%" PRId32 " = ", indent, t, i);
    cg_op(cg, in, args, refs);
    sbuf_puts(o, ";\n");
    break;
  }
  case KIR_STORE:
    sbuf_printf(o, "%sic_st_s%s(", indent, cg_scalar_width(in->dtype));
    cg_address(cg, in, NULL);
    sbuf_printf(o, ", ic_pack_%s(v%" PRId32 "));\n", cg_dtname(in->dtype), in->args[0]);
    break;
  case KIR_ASM:
    cg->pack = 1;
    cg_asm_block(cg, i);
    break;
  case KIR_ASM_RESULT:
    sbuf_printf(o, "%sconst %s v%" PRId32 " = a%" PRId32 "_o%" PRId32 ";\n", indent, t, i, in->args[0], in->result);
    break;
  case KIR_REDUCE:
  case KIR_CONTRACT: break;
  }
}

/* `const ic_i64 i<d>` for a lambda parameter of dim d, or an unnamed one (no such dim). */
static void mm_param(mm_gen *mg, int32_t d) {
  if (d >= 0) sbuf_printf(&mg->cg->out, "const ic_i64 i%" PRId32, d);
  else sbuf_puts(&mg->cg->out, "const ic_i64");
}

/* The element lambdas mm_a(m, k), mm_b(k, n) and the epilogue mm_epi(m, n, acc). */
static void mm_lambdas(mm_gen *mg) {
  const kir_kernel *k = mg->k;
  sbuf *o = &mg->cg->out;
  for (int32_t s = 0; s < 2; s++) {
    const int32_t arg = k->instrs.items[mg->contract].args[s];
    sbuf_printf(o, "  auto mm_%c = [&](", s ? 'b' : 'a');
    mm_param(mg, s ? mg->kdim : mg->mdim);
    sbuf_puts(o, ", ");
    mm_param(mg, s ? mg->ndim : mg->kdim);
    sbuf_printf(o, ") -> %s {\n", cg_ctype(mg->dt));
    for (int32_t i = 0; i < k->instrs.count; i++)
      if (mg->side[s][i]) mm_instr(mg, i, "    ");
    sbuf_printf(o, "    return v%" PRId32 ";\n  };\n", arg);
  }
  const char *acc = mg->dt == IC_I8 ? "int" : mg->dt == IC_F64 ? "double" : "float";
  sbuf_puts(o, "  auto mm_epi = [&](");
  mm_param(mg, mg->mdim);
  sbuf_puts(o, ", ");
  mm_param(mg, mg->ndim);
  sbuf_printf(o, ", const %s mm_acc) {\n", acc);
  /* the accumulator rounded once to the result dtype */
  const ic_dtype rdt = k->instrs.items[mg->contract].dtype;
  sbuf_printf(o, "    const %s v%" PRId32 " = ", cg_ctype(rdt), mg->contract);
  if (rdt == IC_BF16 || rdt == IC_F16) sbuf_printf(o, "ic_rnd_%s(mm_acc);\n", cg_dtname(rdt));
  else sbuf_printf(o, "(%s)mm_acc;\n", cg_ctype(rdt));
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (mg->epi[i]) mm_instr(mg, i, "    ");
  sbuf_puts(o, "  };\n");
}

/* M, N, K, the batch point and the tile (mm_m0, mm_n0) of this block. */
void mm_decode(mm_gen *mg, int32_t bm, int32_t bn) {
  const kir_kernel *k = mg->k;
  sbuf *o = &mg->cg->out;
  if (mg->mdim >= 0) sbuf_printf(o, "  const ic_i64 mm_M = d%" PRId32 ";\n", mg->mdim);
  else sbuf_puts(o, "  const ic_i64 mm_M = 1;\n");
  if (mg->ndim >= 0) sbuf_printf(o, "  const ic_i64 mm_N = d%" PRId32 ";\n", mg->ndim);
  else sbuf_puts(o, "  const ic_i64 mm_N = 1;\n");
  sbuf_printf(o, "  const ic_i64 mm_K = d%" PRId32 ";\n", mg->kdim);
  sbuf_printf(o, "  const ic_i64 mm_tiles_m = (mm_M + %" PRId32 ") / %" PRId32 ", mm_tiles_n = (mm_N + %" PRId32 ") / %" PRId32 ";\n",
              bm - 1, bm, bn - 1, bn);
  sbuf_puts(o, "  const ic_i64 mm_per = mm_tiles_m * mm_tiles_n, mm_t = (ic_i64)blockIdx.x % mm_per;\n");
  sbuf_puts(o, "  ic_i64 mm_rem = (ic_i64)blockIdx.x / mm_per;\n");
  for (int32_t d = k->ndim - 2; d >= 0; d--) {
    if (d == mg->mdim || d == mg->ndim) continue;
    sbuf_printf(o, "  const ic_i64 i%" PRId32 " = mm_rem %% d%" PRId32 ";\n  mm_rem /= d%" PRId32 ";\n", d, d, d);
  }
  sbuf_puts(o, "  (void)mm_rem;\n");
  /* groups of MM_GROUP tile rows, walked column by column */
  sbuf_printf(o, "  const ic_i64 mm_gw = (ic_i64)%d * mm_tiles_n, mm_first = mm_t / mm_gw * %d;\n", MM_GROUP, MM_GROUP);
  sbuf_printf(o, "  const ic_i64 mm_gs = mm_tiles_m - mm_first < %d ? mm_tiles_m - mm_first : %d;\n", MM_GROUP, MM_GROUP);
  sbuf_printf(o, "  const ic_i64 mm_m0 = (mm_first + mm_t %% mm_gw %% mm_gs) * %" PRId32 ", mm_n0 = (mm_t %% mm_gw / mm_gs) * %" PRId32 ";\n",
              bm, bn);
  mm_lambdas(mg);
}

/* ---------------------------------------------------------------- tensor cores */

/* The operand's stage layout and whether its fast path is emitted: a plain load, affine
 * in the vars (coefficients free of them: base + mn smn + k sk is exact), that reads K.
 * MN-major where a 16-bit load steps by 1 along M (N) and not along K; else K-major, whose
 * fast path needs a stride of 1 along K (a run-time stride is tested at run time). */
static void mm_plan_operand(mm_gen *mg, int32_t s) {
  const kir_kernel *k = mg->k;
  sym_arena *a = k->syms;
  const kir_instr *in = &k->instrs.items[k->instrs.items[mg->contract].args[s]];
  const int32_t mn = s ? mg->ndim : mg->mdim;
  mg->fast[s] = false;
  mg->mn_major[s] = false;
  if (in->kind != KIR_LOAD || kir_is_guarded_load(in) || in->dtype != mg->dt) return;
  if (!sym_depends_on(a, in->offset, SYM_VAR, mg->kdim)) return; /* broadcast along K */
  int64_t ck = 0, cmn = 0;
  bool ck_const = false, cmn_one = false;
  for (int32_t d = 0; d < k->ndim; d++) {
    sym_id coeff, rest;
    if (!sym_depends_on(a, in->offset, SYM_VAR, d)) continue;
    if (!sym_affine_in_var(a, in->offset, d, &coeff, &rest)) return;
    for (int32_t e = 0; e < k->ndim; e++)
      if (sym_depends_on(a, coeff, SYM_VAR, e)) return;
    if (d == mg->kdim) ck_const = sym_is_const(a, coeff, &ck);
    if (d == mn) cmn_one = sym_is_const(a, coeff, &cmn) && cmn == 1;
  }
  if (mg->es == 2 && cmn_one && !(ck_const && ck == 1)) mg->mn_major[s] = true;
  else if (ck_const && ck != 1) return; /* never contiguous along K */
  mg->fast[s] = true;
}

/* The run-time test of operand s's fast path and its pointer terms: mm_<x>0 (the offset at
 * (0, 0) of the block's batch point), mm_<x>m (per M or N), mm_<x>k (per K). */
static void mm_fast_test(mm_gen *mg, int32_t s) {
  const kir_kernel *k = mg->k;
  sbuf *o = &mg->cg->out;
  const char x = s ? 'b' : 'a';
  if (!mg->fast[s]) {
    sbuf_printf(o, "  const bool mm_f%c = false;\n", x);
    return;
  }
  const kir_instr *in = &k->instrs.items[k->instrs.items[mg->contract].args[s]];
  const int32_t mn = s ? mg->ndim : mg->mdim;
  sbuf_printf(o, "  auto mm_off%c = [&](", x);
  mm_param(mg, mn);
  sbuf_puts(o, ", ");
  mm_param(mg, mg->kdim);
  sbuf_puts(o, ") -> ic_i64 { return ");
  cg_expr(mg->cg, in->offset, NULL);
  sbuf_puts(o, "; };\n");
  sbuf_printf(o, "  const ic_i64 mm_%c0 = mm_off%c(0, 0), mm_%cm = mm_off%c(1, 0) - mm_%c0, mm_%ck = mm_off%c(0, 1) - mm_%c0;\n", x, x, x,
              x, x, x, x, x);
  /* contiguous along the stage's rows; the other stride, the base 16-byte aligned */
  const char *one = mg->mn_major[s] ? "m" : "k", *other = mg->mn_major[s] ? "k" : "m";
  sbuf_printf(o, "  const bool mm_f%c = ((ic_u64)(b%" PRId32 " + mm_%c0 * %" PRId32 ") & 15) == 0 && mm_%c%s == 1 && mm_%c%s %% %" PRId32
                 " == 0;\n",
              x, in->buffer, x, mg->es, x, one, x, other, mg->ce);
}

/* The chunks of a stage of operand s that thread mm_tid fills: cp.async (fast) or element
 * by element (general), into stage `st` (an int in scope) at tile K offset mm_k0. */
static void mm_fill(mm_gen *mg, int32_t s, const mm_config *c, int32_t threads) {
  const kir_kernel *k = mg->k;
  sbuf *o = &mg->cg->out;
  const char x = s ? 'b' : 'a';
  const int32_t rows = s ? c->bn : c->bm, chunks = rows * 4;
  const int32_t per = (chunks + threads - 1) / threads;
  const int32_t off = s ? c->bm * MM_ROW_BYTES : 0;
  const char *ext = s ? "mm_N" : "mm_M", *mn0 = s ? "mm_n0" : "mm_m0";
  const bool mnm = mg->mn_major[s];
  const int32_t cpr = rows / 8, sw = (cpr < 8 ? cpr : 8) - 1; /* MN-major: chunks a k row, swizzle mask */
  sbuf_printf(o, "#pragma unroll\n    for (int j = 0; j < %" PRId32 "; j++) {\n      const int c = mm_tid + j * %" PRId32 ";\n", per, threads);
  if (per * threads > chunks) sbuf_printf(o, "      if (c >= %" PRId32 ") break;\n", chunks);
  if (mnm) {
    sbuf_printf(o, "      const int r = c / %" PRId32 ", q = c %% %" PRId32 ";\n", cpr, cpr);
    sbuf_printf(o, "      const ic_i64 mn = %s + q * 8, kk = mm_k0 + r;\n", mn0);
    sbuf_printf(o, "      const ic_u32 dst = mm_s + st * %" PRId32 " + %" PRId32 " + r * %" PRId32 " + ((q ^ (r & %" PRId32 ")) << 4);\n",
                mg->stage_bytes, off, rows * 2, sw);
  } else {
    sbuf_puts(o, "      const int r = c >> 2, q = c & 3;\n");
    sbuf_printf(o, "      const ic_i64 mn = %s + r, kk = mm_k0 + q * %" PRId32 ";\n", mn0, mg->ce);
    sbuf_printf(o, "      const ic_u32 dst = mm_s + st * %" PRId32 " + %" PRId32 " + r * %d + ((q ^ ((r >> 1) & 3)) << 4);\n",
                mg->stage_bytes, off, MM_ROW_BYTES);
  }
  if (mg->fast[s]) {
    sbuf_printf(o, "      if (mm_f%c) {\n", x);
    if (mnm)
      sbuf_printf(o, "        const ic_i64 left = kk < mm_K ? %s - mn : 0;\n", ext);
    else
      sbuf_printf(o, "        const ic_i64 left = mn < %s ? mm_K - kk : 0;\n", ext);
    sbuf_printf(o, "        const ic_u32 bytes = left <= 0 ? 0u : left >= %" PRId32 " ? 16u : (ic_u32)left * %" PRId32 "u;\n", mg->ce,
                mg->es);
    const int32_t buf = k->instrs.items[k->instrs.items[mg->contract].args[s]].buffer;
    sbuf_printf(o, "        ic_cp_async16(dst, bytes ? b%" PRId32 " + (mm_%c0 + mn * mm_%cm + kk * mm_%ck) * %" PRId32 " : b%" PRId32 ", bytes);\n",
                buf, x, x, x, mg->es, buf);
    sbuf_puts(o, "        continue;\n      }\n");
  }
  /* the general path: each element from the lambda, zero past the edges */
  const int32_t per_word = 4 / mg->es, bits = 8 * mg->es;
  sbuf_puts(o, "      ic_u32 w[4] = {0u, 0u, 0u, 0u};\n");
  sbuf_printf(o, "#pragma unroll\n      for (int e = 0; e < %" PRId32 "; e++) {\n", mg->ce);
  if (mnm) sbuf_puts(o, "        const ic_i64 em = mn + e, ek = kk;\n");
  else sbuf_puts(o, "        const ic_i64 em = mn, ek = kk + e;\n");
  sbuf_printf(o, "        if (em < %s && ek < mm_K) {\n", ext);
  sbuf_printf(o, "          const ic_u32 v = ic_pack_%s(mm_%c(%s));\n", cg_dtname(mg->dt), x, s ? "ek, em" : "em, ek");
  if (per_word == 1) sbuf_puts(o, "          w[e] = v;\n");
  else sbuf_printf(o, "          w[e / %" PRId32 "] |= (v & 0x%xu) << ((e %% %" PRId32 ") * %" PRId32 ");\n", per_word,
                   (unsigned)((1ull << bits) - 1), per_word, bits);
  sbuf_puts(o, "        }\n      }\n      ic_st_shared_v4(dst, w[0], w[1], w[2], w[3]);\n    }\n");
}

static const char *mm_mma_name(ic_dtype dt) {
  switch (dt) {
  case IC_BF16: return "ic_mma_bf16";
  case IC_F16: return "ic_mma_f16";
  case IC_I8: return "ic_mma_s8";
  default: return "ic_mma_tf32";
  }
}

/* The body of a tensor-core kernel of tile c, after the entry's head, up to (not
 * including) its closing brace. */
static void mm_tc_body(mm_gen *mg, const mm_config *c) {
  codegen *cg = mg->cg;
  sbuf *o = &cg->out;
  const int32_t threads = 32 * c->warps_m * c->warps_n;
  const int32_t wm = c->bm / c->warps_m, wn = c->bn / c->warps_n, mi_n = wm / 16, ni_n = wn / 8;
  const int32_t S = c->stages;
  mg->stage_bytes = (c->bm + c->bn) * MM_ROW_BYTES;
  mm_decode(mg, c->bm, c->bn);
  for (int32_t s = 0; s < 2; s++) mm_fast_test(mg, s);
  sbuf_puts(o, "  (void)mm_fa;\n  (void)mm_fb;\n");
  sbuf_printf(o, "  extern __shared__ __align__(128) ic_u8 ic_smem[];\n  const ic_u32 mm_s = ic_smem_addr(ic_smem);\n");
  sbuf_printf(o, "  const int mm_tid = (int)threadIdx.x, mm_lane = mm_tid & 31, mm_warp = mm_tid >> 5;\n");
  sbuf_printf(o, "  const int mm_wm = (mm_warp %% %" PRId32 ") * %" PRId32 ", mm_wn = (mm_warp / %" PRId32 ") * %" PRId32 ";\n",
              c->warps_m, wm, c->warps_m, wn);
  sbuf_printf(o, "  const ic_i64 mm_nk = (mm_K + %" PRId32 ") / %" PRId32 ";\n", mg->kt - 1, mg->kt);
  /* a stage's fill: both operands' chunks of K tile kt */
  sbuf_puts(o, "  auto mm_load = [&](const ic_i64 kt, const int st) {\n    const ic_i64 mm_k0 = kt * ");
  sbuf_printf(o, "%" PRId32 ";\n", mg->kt);
  mm_fill(mg, 0, c, threads);
  mm_fill(mg, 1, c, threads);
  sbuf_puts(o, "  };\n");
  const char *acc = mg->dt == IC_I8 ? "int" : "float";
  sbuf_printf(o, "  %s acc[%" PRId32 "][%" PRId32 "][4];\n", acc, mi_n, ni_n);
  sbuf_printf(o, "#pragma unroll\n  for (int i = 0; i < %" PRId32 "; i++)\n#pragma unroll\n    for (int j = 0; j < %" PRId32
                 "; j++)\n#pragma unroll\n      for (int e = 0; e < 4; e++) acc[i][j][e] = 0;\n",
              mi_n, ni_n);
  /* the pipeline: S - 1 tiles in flight before the first is used */
  sbuf_printf(o, "#pragma unroll\n  for (int st = 0; st < %" PRId32 "; st++) {\n    if (st < mm_nk) mm_load(st, st);\n    ic_cp_async_commit();\n  }\n",
              S - 1);
  sbuf_puts(o, "#pragma unroll 1\n  for (ic_i64 kt = 0; kt < mm_nk; kt++) {\n");
  sbuf_printf(o, "    ic_cp_async_wait<%" PRId32 ">();\n    __syncthreads();\n", S - 2);
  /* the stage read in the iteration before is free once every thread passed the barrier */
  sbuf_printf(o, "    {\n      const ic_i64 nx = kt + %" PRId32 ";\n      if (nx < mm_nk) mm_load(nx, (int)(nx %% %" PRId32 "));\n      ic_cp_async_commit();\n    }\n",
              S - 1, S);
  sbuf_printf(o, "    const ic_u32 sa = mm_s + (ic_u32)(kt %% %" PRId32 ") * %" PRId32 "u, sb = sa + %" PRId32 "u;\n", S, mg->stage_bytes,
              c->bm * MM_ROW_BYTES);
  sbuf_puts(o, "#pragma unroll\n    for (int ks = 0; ks < 2; ks++) {\n");
  sbuf_printf(o, "      ic_u32 fa[%" PRId32 "][4], fb[%" PRId32 "][2];\n", mi_n, ni_n);
  /* A fragments: rows 0-7 / 8-15 x k 0-15 / 16-31 bytes of the step */
  sbuf_printf(o, "#pragma unroll\n      for (int i = 0; i < %" PRId32 "; i++) {\n", mi_n);
  if (mg->mn_major[0]) {
    const int32_t cpr = c->bm / 8, sw = (cpr < 8 ? cpr : 8) - 1;
    sbuf_puts(o, "        const int k = ks * 16 + (mm_lane & 7) + ((mm_lane >> 4) << 3), m = mm_wm + i * 16 + ((mm_lane >> 3) & 1) * 8;\n");
    sbuf_printf(o, "        ic_ldsm_x4_t(sa + k * %" PRId32 " + (((m >> 3) ^ (k & %" PRId32 ")) << 4), fa[i]);\n", c->bm * 2, sw);
  } else {
    sbuf_puts(o, "        const int r = mm_wm + i * 16 + (mm_lane & 15), q = ks * 2 + (mm_lane >> 4);\n");
    sbuf_printf(o, "        ic_ldsm_x4(sa + r * %d + ((q ^ ((r >> 1) & 3)) << 4), fa[i]);\n", MM_ROW_BYTES);
  }
  sbuf_puts(o, "      }\n");
  /* B fragments: two n8 blocks an ldmatrix.x4 (one with .x2 for a single block) */
  const int32_t pairs = (ni_n + 1) / 2;
  sbuf_printf(o, "#pragma unroll\n      for (int j = 0; j < %" PRId32 "; j++) {\n        ic_u32 t[4];\n", pairs);
  const char *x = ni_n == 1 ? "x2" : "x4";
  if (mg->mn_major[1]) {
    const int32_t cpr = c->bn / 8, sw = (cpr < 8 ? cpr : 8) - 1;
    sbuf_puts(o, "        const int k = ks * 16 + (mm_lane & 7) + ((mm_lane >> 3) & 1) * 8, n = mm_wn + j * 16 + (mm_lane >> 4) * 8;\n");
    sbuf_printf(o, "        ic_ldsm_%s_t(sb + k * %" PRId32 " + (((n >> 3) ^ (k & %" PRId32 ")) << 4), t);\n", x, c->bn * 2, sw);
  } else {
    sbuf_puts(o, "        const int r = mm_wn + j * 16 + (mm_lane & 7) + ((mm_lane >> 4) << 3), q = ks * 2 + ((mm_lane >> 3) & 1);\n");
    sbuf_printf(o, "        ic_ldsm_%s(sb + r * %d + ((q ^ ((r >> 1) & 3)) << 4), t);\n", x, MM_ROW_BYTES);
  }
  sbuf_puts(o, "        fb[2 * j][0] = t[0];\n        fb[2 * j][1] = t[1];\n");
  if (ni_n > 1) sbuf_puts(o, "        fb[2 * j + 1][0] = t[2];\n        fb[2 * j + 1][1] = t[3];\n");
  sbuf_puts(o, "      }\n");
  if (mg->dt == IC_F32) {
    sbuf_printf(o, "#pragma unroll\n      for (int i = 0; i < %" PRId32 "; i++)\n#pragma unroll\n        for (int e = 0; e < 4; e++) fa[i][e] = ic_tf32(fa[i][e]);\n", mi_n);
    sbuf_printf(o, "#pragma unroll\n      for (int j = 0; j < %" PRId32 "; j++)\n#pragma unroll\n        for (int e = 0; e < 2; e++) fb[j][e] = ic_tf32(fb[j][e]);\n", ni_n);
  }
  sbuf_printf(o, "#pragma unroll\n      for (int i = 0; i < %" PRId32 "; i++)\n#pragma unroll\n        for (int j = 0; j < %" PRId32 "; j++) %s(acc[i][j], fa[i], fb[j]);\n",
              mi_n, ni_n, mm_mma_name(mg->dt));
  sbuf_puts(o, "    }\n  }\n  ic_cp_async_wait<0>();\n");
  /* the epilogue: c0, c1 at (g, 2 t4 + e), c2, c3 at (g + 8, ...) of each 16 x 8 tile */
  sbuf_puts(o, "  const int mm_g = mm_lane >> 2, mm_t4 = mm_lane & 3;\n");
  sbuf_printf(o, "#pragma unroll\n  for (int i = 0; i < %" PRId32 "; i++)\n#pragma unroll\n    for (int j = 0; j < %" PRId32 "; j++)\n", mi_n,
              ni_n);
  sbuf_puts(o, "#pragma unroll\n      for (int e = 0; e < 4; e++) {\n");
  sbuf_puts(o, "        const ic_i64 m = mm_m0 + mm_wm + i * 16 + mm_g + (e >> 1) * 8, n = mm_n0 + mm_wn + j * 8 + mm_t4 * 2 + (e & 1);\n");
  sbuf_puts(o, "        if (m < mm_M && n < mm_N) mm_epi(m, n, acc[i][j][e]);\n      }\n");
  mg->threads = threads;
  if (S * mg->stage_bytes > mg->smem) mg->smem = S * mg->stage_bytes;
}

/* kir_contract_when in C: whether the large tile's blocks fill a wave. */
static void mm_large_condition(mm_gen *mg) {
  const kir_kernel *k = mg->k;
  sbuf *o = &mg->cg->out;
  sbuf_puts(o, "  const ic_i64 mm_large_blocks = (ic_i64)1");
  for (int32_t d = 0; d + 1 < k->ndim; d++) {
    int32_t t = d == mg->mdim ? k->tile_m : d == mg->ndim ? k->tile_n : 0;
    if (t) sbuf_printf(o, " * ((d%" PRId32 " + %" PRId32 ") / %" PRId32 ")", d, t - 1, t);
    else sbuf_printf(o, " * d%" PRId32, d);
  }
  sbuf_printf(o, ";\n  if (mm_large_blocks >= %d) {\n", KIR_CONTRACT_WAVE);
}

/* The tensor-core kernel: the plan's tile, or (kir_contract_when) the large tile and the
 * small one, chosen by the launch's sizes as the program chose the grid. */
static void mm_tc_kernel(mm_gen *mg, const mm_config *c) {
  codegen *cg = mg->cg;
  sbuf *o = &cg->out;
  if (mg->k->small_m <= 0) {
    cg_kernel_head(cg, 32 * c->warps_m * c->warps_n, c->min_blocks, 1);
    mm_tc_body(mg, c);
    sbuf_puts(o, "}\n");
    return;
  }
  cg_kernel_head(cg, 32 * c->warps_m * c->warps_n, 1, 1);
  mm_large_condition(mg);
  mm_tc_body(mg, c);
  sbuf_puts(o, "  } else {\n");
  mm_tc_body(mg, &mm_small_config);
  sbuf_puts(o, "  }\n}\n");
}

ic_status cuda_codegen_matmul(const kir_kernel *k, const char *entry, int32_t sm, cuda_codegen_result *res) {
  codegen cg = {.k = k, .entry = entry, .a = k->syms, .vec = 1, .pack = 1, .smem = cuda_smem_of(sm), .sm = sm};
  mm_gen mg = {.cg = &cg, .k = k, .contract = kir_contract_index(k), .mdim = k->contract_m, .ndim = k->contract_n,
               .kdim = k->ndim - 1};
  ic_status s = IC_OK;
  if (mg.contract < 0 || k->ndim < 1 || k->axes != 1u << (k->ndim - 1))
    return error_set(IC_ERR_INTERNAL, "codegen: contraction kernel %s without one CONTRACT over its last dim", k->name);
  const kir_instr *ct = &k->instrs.items[mg.contract];
  mg.dt = k->instrs.items[ct->args[0]].dtype;
  const size_t n = (size_t)k->instrs.count + 1;
  mg.side[0] = sys_calloc(n, sizeof(bool));
  mg.side[1] = sys_calloc(n, sizeof(bool));
  mg.epi = sys_calloc(n, sizeof(bool));
  if (!mg.side[0] || !mg.side[1] || !mg.epi) {
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
    goto done;
  }
  mm_closure(k, ct->args[0], mg.side[0]);
  mm_closure(k, ct->args[1], mg.side[1]);
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_STORE) mm_closure(k, i, mg.epi);
  mg.epi[mg.contract] = false;
  if (mm_tensor_cores(mg.dt, k->allow_tf32)) {
    const mm_config *c = NULL;
    const int32_t tm = mg.mdim < 0 ? 16 : k->tile_m, tn = mg.ndim < 0 ? 8 : k->tile_n;
    for (size_t i = 0; i < ARRAY_LEN(mm_configs) && !c; i++)
      if (mm_configs[i].bm == tm && mm_configs[i].bn == tn) c = &mm_configs[i];
    if (!c) {
      s = error_set(IC_ERR_INTERNAL, "codegen: no tensor-core matmul tile of %" PRId32 " x %" PRId32 " (kernel %s)", tm, tn, k->name);
      goto done;
    }
    mg.es = (int32_t)ic_dtype_size(mg.dt);
    mg.ce = 16 / mg.es;
    mg.kt = MM_ROW_BYTES / mg.es;
    for (int32_t side = 0; side < 2; side++) mm_plan_operand(&mg, side);
    mm_tc_kernel(&mg, c);
  } else {
    s = mm_simt_kernel(&mg);
    if (s) goto done;
  }
  res->source = cuda_source_assemble(entry, &cg.out);
  res->per_thread = 1;
  res->per_block = 1;
  res->block = mg.threads;
  res->smem = mg.smem;
  res->cluster = 1;
  if (!res->source || cg.oom || sym_arena_failed(cg.a)) {
    free(res->source);
    res->source = NULL;
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
  }
done:
  free(mg.side[0]);
  free(mg.side[1]);
  free(mg.epi);
  free(cg.aligned.items);
  sbuf_free(&cg.out);
  return s;
}
