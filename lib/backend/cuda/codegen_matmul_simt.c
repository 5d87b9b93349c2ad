/* The FMA kernel of contraction kernels whose dtype has no tensor-core path here (f32
 * without TF32, f64, ...): a block of TM x TN threads computes a tile of (TM RM) x (TN RN)
 * outputs, thread (ty, tx) those at rows ty + i TM and columns tx + j TN (neighbouring
 * threads read neighbouring words of a stage: no bank conflicts). K moves in stages of
 * MM_SIMT_K elements filled element by element from the lambdas (K fastest where the
 * operand's load steps by 1 along K, so a warp reads contiguous memory). Each output's
 * accumulator starts at +0 and takes fma(a[k], b[k], acc) for k = 0, 1, ..., K - 1 and no
 * more (a padded zero would turn an accumulated -0 into +0). */
#include <inttypes.h>
#include <stdio.h>

#include "backend/cuda/codegen_matmul.h"

enum { MM_SIMT_K = 16 };

typedef struct mm_simt_config {
  int32_t bm, bn, tm, tn; /* tile; threads along M and N */
} mm_simt_config;

static const mm_simt_config mm_simt_configs[] = {
    {64, 64, 16, 16},
    {256, 1, 256, 1}, /* matrix x vector */
    {1, 256, 1, 256}, /* vector x matrix */
    {1, 1, 1, 1},     /* dot: one thread walks K */
};

/* Whether operand s's element value is a load that steps by 1 along K. */
static bool mm_k_contiguous(const mm_gen *mg, int32_t s) {
  const kir_kernel *k = mg->k;
  const kir_instr *in = &k->instrs.items[k->instrs.items[mg->contract].args[s]];
  sym_id coeff, rest;
  int64_t c = 0;
  return in->kind == KIR_LOAD && sym_affine_in_var(k->syms, in->offset, mg->kdim, &coeff, &rest) && sym_is_const(k->syms, coeff, &c) &&
         c == 1;
}

static void mm_simt_fill(mm_gen *mg, int32_t s, int32_t rows, int32_t threads) {
  sbuf *o = &mg->cg->out;
  const char x = s ? 'b' : 'a';
  const char *ext = s ? "mm_N" : "mm_M", *mn0 = s ? "mm_n0" : "mm_m0";
  const int32_t count = rows * MM_SIMT_K;
  sbuf_printf(o, "    for (int e = mm_tid; e < %" PRId32 "; e += %" PRId32 ") {\n", count, threads);
  if (mm_k_contiguous(mg, s)) sbuf_printf(o, "      const int r = e / %d, kk = e %% %d;\n", MM_SIMT_K, MM_SIMT_K);
  else sbuf_printf(o, "      const int r = e %% %" PRId32 ", kk = e / %" PRId32 ";\n", rows, rows);
  sbuf_printf(o, "      const ic_i64 mn = %s + r, k = k0 + kk;\n", mn0);
  sbuf_printf(o, "      mm_s%c[kk][r] = mn < %s && k < mm_K ? mm_%c(%s) : (%s)0;\n    }\n", x, ext, x, s ? "k, mn" : "mn, k",
              cg_ctype(mg->dt));
}

ic_status mm_simt_kernel(mm_gen *mg) {
  const kir_kernel *k = mg->k;
  codegen *cg = mg->cg;
  sbuf *o = &cg->out;
  const int32_t tm = mg->mdim < 0 ? 1 : k->tile_m, tn = mg->ndim < 0 ? 1 : k->tile_n;
  const mm_simt_config *c = NULL;
  for (size_t i = 0; i < ARRAY_LEN(mm_simt_configs) && !c; i++)
    if (mm_simt_configs[i].bm == tm && mm_simt_configs[i].bn == tn) c = &mm_simt_configs[i];
  if (!c) return error_set(IC_ERR_INTERNAL, "codegen: no FMA matmul tile of %" PRId32 " x %" PRId32 " (kernel %s)", tm, tn, k->name);
  const int32_t workers = c->tm * c->tn, threads = workers < 32 ? 32 : workers;
  const int32_t rm = c->bm / c->tm, rn = c->bn / c->tn;
  const char *t = cg_ctype(mg->dt);
  cg_kernel_head(cg, threads, 1, 1); /* a bound: see mm_configs */
  mm_decode(mg, c->bm, c->bn);
  sbuf_printf(o, "  __shared__ %s mm_sa[%d][%" PRId32 "], mm_sb[%d][%" PRId32 "];\n", t, MM_SIMT_K, c->bm, MM_SIMT_K, c->bn);
  sbuf_printf(o, "  const int mm_tid = (int)threadIdx.x, mm_tx = mm_tid %% %" PRId32 ", mm_ty = mm_tid / %" PRId32 ";\n", c->tn, c->tn);
  sbuf_printf(o, "  %s acc[%" PRId32 "][%" PRId32 "];\n", t, rm, rn);
  sbuf_printf(o, "#pragma unroll\n  for (int i = 0; i < %" PRId32 "; i++)\n#pragma unroll\n    for (int j = 0; j < %" PRId32 "; j++) acc[i][j] = (%s)0;\n",
              rm, rn, t);
  sbuf_printf(o, "#pragma unroll 1\n  for (ic_i64 k0 = 0; k0 < mm_K; k0 += %d) {\n", MM_SIMT_K);
  mm_simt_fill(mg, 0, c->bm, threads);
  mm_simt_fill(mg, 1, c->bn, threads);
  sbuf_printf(o, "    __syncthreads();\n    const int kn = mm_K - k0 < %d ? (int)(mm_K - k0) : %d;\n", MM_SIMT_K, MM_SIMT_K);
  if (threads > workers) sbuf_printf(o, "    if (mm_tid < %" PRId32 ") {\n", workers);
  else sbuf_puts(o, "    {\n");
  sbuf_puts(o, "#pragma unroll 4\n    for (int kk = 0; kk < kn; kk++) {\n");
  sbuf_printf(o, "      %s a[%" PRId32 "], b[%" PRId32 "];\n", t, rm, rn);
  sbuf_printf(o, "#pragma unroll\n      for (int i = 0; i < %" PRId32 "; i++) a[i] = mm_sa[kk][mm_ty + i * %" PRId32 "];\n", rm, c->tm);
  sbuf_printf(o, "#pragma unroll\n      for (int j = 0; j < %" PRId32 "; j++) b[j] = mm_sb[kk][mm_tx + j * %" PRId32 "];\n", rn, c->tn);
  const char *step = mg->dt == IC_F64 ? "acc[i][j] = fma(a[i], b[j], acc[i][j])"
                     : mg->dt == IC_F32 || dtype_is_float(mg->dt) ? "acc[i][j] = fmaf(a[i], b[j], acc[i][j])"
                                                                  : "acc[i][j] = acc[i][j] + a[i] * b[j]";
  sbuf_printf(o, "#pragma unroll\n      for (int i = 0; i < %" PRId32 "; i++)\n#pragma unroll\n        for (int j = 0; j < %" PRId32 "; j++) %s;\n    }\n",
              rm, rn, step);
  sbuf_puts(o, "    }\n    __syncthreads();\n  }\n");
  if (threads > workers) sbuf_printf(o, "  if (mm_tid >= %" PRId32 ") return;\n", workers);
  sbuf_printf(o, "#pragma unroll\n  for (int i = 0; i < %" PRId32 "; i++)\n#pragma unroll\n    for (int j = 0; j < %" PRId32 "; j++) {\n", rm, rn);
  sbuf_printf(o, "      const ic_i64 m = mm_m0 + mm_ty + i * %" PRId32 ", n = mm_n0 + mm_tx + j * %" PRId32 ";\n", c->tm, c->tn);
  sbuf_puts(o, "      if (m < mm_M && n < mm_N) mm_epi(m, n, acc[i][j]);\n    }\n}\n");
  mg->threads = threads;
  mg->smem = 0;
  return IC_OK;
}
