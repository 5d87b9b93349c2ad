/* Column reductions (the innermost dim kept; kir_reduce_strategy's columns): a block holds
 * 32 neighbouring rows a warp group (P of them a thread where the columns pack), the
 * column pass (rounds, shares, or a split's combine), heavy kernels' contiguous shares,
 * the packed columns' test and chunks, and the lanes of the element stores. */
#include <inttypes.h>
#include <stdio.h>

#include "backend/cuda/codegen_reduce.h"

/* Whether element load i of a packed column kernel reads along the columns (a kept var:
 * kir_column_pack_of lets only the innermost, with coefficient 1, and others alongside
 * it): one load for the thread's P columns. The others read no kept var: one for all. */
static bool red_pack_reads_columns(const red_gen *rg, int32_t i) { return kir_reads_kept_var(rg->k, rg->k->instrs.items[i].offset); }

/* `const bool pack_ok`: a packed kernel's P columns are neighbours in one run of the
 * innermost kept dim (its size a multiple of P) and each load along them finds its P
 * values in one aligned word (a buffer so aligned, every other coefficient of its offset
 * and its constant part multiples of P); uniform over the launch. */
void red_pack_test(red_gen *rg) {
  const kir_kernel *k = rg->k;
  codegen *cg = rg->cg;
  sbuf *o = &cg->out;
  const int32_t pk = rg->pack, last = k->ndim - 1;
  sbuf_printf(o, "  const bool pack_ok = d%" PRId32 " %% %" PRId32 " == 0", last, pk);
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_LOAD || !rg->element[i] || !red_pack_reads_columns(rg, i)) continue;
    sbuf_printf(o, " && ((ic_u64)b%" PRId32 " & %zu) == 0", in->buffer, (size_t)pk * ic_dtype_size(in->dtype) - 1);
    sym_id checks[IC_MAX_DIMS + 1];
    int32_t nchecks = 0;
    if (!kir_contiguous_along(k, in->offset, last, pk, checks, &nchecks)) sbuf_puts(o, " && false");
    for (int32_t c = 0; c < nchecks; c++) {
      sbuf_puts(o, " && (");
      cg_expr(cg, checks[c], NULL);
      sbuf_printf(o, ") %% %" PRId32 " == 0", pk);
    }
  }
  sbuf_puts(o, ";\n");
  /* the kept vars of the thread's columns, for the column-at-a-time copy */
  for (int32_t d = 0; d < k->ndim; d++)
    if (!red_reduced(k, d)) sbuf_printf(o, "  ic_i64 i%" PRId32 "_c[%" PRId32 "];\n", d, pk);
  sbuf_printf(o, "#pragma unroll\n  for (int cp = 0; cp < %" PRId32 "; cp++) {\n    ic_i64 rem = row_in + cp;\n", pk);
  red_kept_split(rg, "    ", "i%" PRId32 "_c[cp]");
  sbuf_puts(o, "  }\n");
}

/* A chunk of a packed column pass (light: one REDUCE, element loads, ranges and ops):
 * each load along the columns once for the thread's P columns into words w<i>[e] (one
 * load of P values in pack_ok's copy, else a load a live column at its own kept vars), loads
 * and ranges free of the columns once, then, a column at a time, its values unpacked, its
 * ops and its accumulation into acc (of column cp). */
void red_chunk_pack(red_gen *rg, int32_t p, int32_t reduce, const char *acc, const char *acc_i) {
  const kir_kernel *k = rg->k;
  codegen *cg = rg->cg;
  sbuf *o = &cg->out;
  const bool *need = &rg->need[(size_t)p * (size_t)k->instrs.count];
  const int32_t pk = rg->pack;
  sbuf_puts(o, "    {\n      const ic_i64 r0 = c * 8;\n");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (!need[i] || (in->kind != KIR_LOAD && in->kind != KIR_RANGE)) continue;
    if (in->kind == KIR_LOAD && red_pack_reads_columns(rg, i)) sbuf_printf(o, "      ic_u32 w%" PRId32 "[8];\n", i);
    else sbuf_printf(o, "      %s v%" PRId32 "[8];\n", cg_ctype(in->dtype), i);
  }
  sbuf_printf(o, "#pragma unroll\n      for (int e = 0; e < 8; e++) {\n        const ic_i64 r = r0 + e;\n        if (%s) {\n",
              red_in_row(rg, "r < R"));
  red_decompose(rg, "r", "          ");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (!need[i] || (in->kind != KIR_LOAD && in->kind != KIR_RANGE)) continue;
    char t[32];
    snprintf(t, sizeof t, "v%" PRId32 "[e]", i);
    sbuf_puts(o, "          ");
    if (in->kind == KIR_RANGE) {
      red_range(rg, i, t);
      continue;
    }
    if (!red_pack_reads_columns(rg, i)) {
      red_scalar_load(rg, i, t);
      continue;
    }
    const size_t size = ic_dtype_size(in->dtype);
    if (rg->pack_words) {
      sbuf_printf(o, "w%" PRId32 "[e] = ic_ld_na_s%zu(", i, 8 * size * (size_t)pk);
      cg_address(cg, in, NULL);
      sbuf_puts(o, ");\n");
      continue;
    }
    sbuf_printf(o, "w%" PRId32 "[e] = 0u;\n#pragma unroll\n          for (int cp = 0; cp < %" PRId32 "; cp++)\n          if (row_in + cp < rows) {\n",
                i, pk);
    for (int32_t d = 0; d < k->ndim; d++)
      if (!red_reduced(k, d)) sbuf_printf(o, "            const ic_i64 i%" PRId32 " = i%" PRId32 "_c[cp];\n", d, d);
    sbuf_printf(o, "            w%" PRId32 "[e] |= ic_ld_na_s%zu(", i, 8 * size);
    cg_address(cg, in, NULL);
    sbuf_printf(o, ") << cp * %zu;\n          }\n", 8 * size);
  }
  sbuf_puts(o, "        } else {\n");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (!need[i] || (in->kind != KIR_LOAD && in->kind != KIR_RANGE)) continue;
    if (in->kind == KIR_LOAD && red_pack_reads_columns(rg, i)) sbuf_printf(o, "          w%" PRId32 "[e] = 0u;\n", i);
    else sbuf_printf(o, "          v%" PRId32 "[e] = (%s)0;\n", i, cg_ctype(in->dtype));
  }
  sbuf_printf(o, "        }\n      }\n#pragma unroll\n      for (int cp = 0; cp < %" PRId32 "; cp++) {\n", pk);
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (!need[i]) continue;
    if (in->kind == KIR_LOAD && red_pack_reads_columns(rg, i)) {
      sbuf_printf(o, "      %s v%" PRId32 "[8];\n      for (int e = 0; e < 8; e++) v%" PRId32 "[e] = ic_unpack_%s(w%" PRId32 "[e] >> cp * %zu);\n",
                  cg_ctype(in->dtype), i, i, cg_dtname(in->dtype), i, 8 * ic_dtype_size(in->dtype));
    } else if (in->kind == KIR_OP) {
      sbuf_printf(o, "      %s v%" PRId32 "[8];\n#pragma unroll\n      for (int e = 0; e < 8; e++) v%" PRId32 "[e] = ", cg_ctype(in->dtype), i, i);
      red_op_expr(rg, i);
      sbuf_puts(o, ";\n");
    }
  }
  red_chunk_accumulate(rg, reduce, acc, acc_i);
  sbuf_puts(o, "      }\n    }\n");
}

/* Heavy column kernels (a round's side-by-side subtrees through shared memory cost argmax
 * over f32 [4096, 32768] 9%): warp y takes a contiguous power-of-two share of the lanes,
 * 8 at a time then the rest one by one, on a binary counter; then the warps' results
 * combine pairwise. */
static void red_column_shares(red_gen *rg, int32_t p, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t) {
  sbuf *o = &rg->cg->out;
  sbuf_puts(o, "  ic_i64 j = live ? lane0 : lane1;\n  for (; j + 8 <= lane1; j += 8) {\n");
  /* j is in the thread's share only where live: c0 = j (a test there took argmax's kernel
   * from 80 to 96 registers) */
  red_column_round(rg, p, reduce, in, dt, t, "j");
  sbuf_printf(o, "    const %s a = am[0][0];\n    const ic_i64 ai = ami[0][0];\n", t);
  red_counter_push(o, in->reduce, dt, 3);
  sbuf_puts(o, "  }\n  for (; j < lane1; j++) {\n");
  red_acc_decl(o, "    ", in->reduce, dt);
  sbuf_puts(o, "    for (ic_i64 c = j; c < C; c += L)\n");
  red_chunk(rg, p, reduce, "a", "ai");
  red_counter_push(o, in->reduce, dt, 0);
  sbuf_puts(o, "  }\n");
  red_counter_collapse(o, in->reduce, dt);
  red_acc_decl(o, "  ", in->reduce, dt);
  sbuf_puts(o, "  if (n > 0) { a = st[0]; ai = sti[0]; }\n");
  sbuf_printf(o, "  {\n    %s (*const sa)[32] = (%s (*)[32])ic_smem;\n", t, t);
  const bool arg = red_arg(in->reduce);
  if (arg) sbuf_printf(o, "    ic_i64 (*const sai)[32] = (ic_i64 (*)[32])(ic_smem + %" PRId32 ");\n    sai[cbase + coly][colx] = ai;\n",
                       rg->ywarps * rg->colgroups * 32);
  sbuf_puts(o, "    sa[cbase + coly][colx] = a;\n    __syncthreads();\n    if (coly == 0) {\n");
  sbuf_printf(o, "      %s w[%" PRId32 "]; ic_i64 wi[%" PRId32 "];\n", t, rg->ywarps, rg->ywarps);
  sbuf_printf(o, "      for (int q = 0; q < %" PRId32 "; q++) { w[q] = sa[cbase + q][colx]; wi[q] = %s; }\n", rg->ywarps,
              arg ? "sai[cbase + q][colx]" : "0");
  red_pairwise(o, in->reduce, dt, "w", "wi", rg->ywarps);
  sbuf_puts(o, "      sa[cbase][colx] = w[0];\n");
  if (arg) sbuf_puts(o, "      sai[cbase][colx] = wi[0];\n");
  sbuf_puts(o, "    }\n    __syncthreads();\n    a = sa[cbase][colx];\n");
  if (arg) sbuf_puts(o, "    ai = sai[cbase][colx];\n");
  sbuf_puts(o, "    __syncthreads();\n");
}

/* A column pass: light kernels in rounds side by side, heavy ones in contiguous shares
 * (kir_reduce_strategy's column_rounds), a split's combine over its partials; all compute
 * the lanes' one tree. */
void red_pass_columns(red_gen *rg, int32_t p, int32_t reduce) {
  ic_dtype dt;
  const char *t;
  sbuf *o = &rg->cg->out;
  if (rg->pack > 1) {
    /* the pass's P columns into pa[]; then the rest of the kernel a column at a time, its
     * kept vars those of column row_in + cp (closed by red_kernel) */
    const kir_instr *in = &rg->k->instrs.items[reduce];
    dt = rg->k->instrs.items[in->args[0]].dtype;
    t = red_acc_type(in->reduce, dt);
    sbuf_printf(o, "  /* pass %" PRId32 ": %s, %" PRId32 " neighbouring rows a thread */\n  %s pa[%" PRId32 "]; ic_i64 pai[%" PRId32 "];\n  {\n",
                p, ic_reduce_name(in->reduce), rg->pack, t, rg->pack, rg->pack);
    red_column_rounds(rg, p, reduce, in, dt, t);
    sbuf_printf(o, "  }\n#pragma unroll\n  for (int cp = 0; cp < %" PRId32 "; cp++) {\n  const ic_i64 row_c = row_in + cp;\n  {\n"
                   "  const ic_i64 row_in = row_c;\n", rg->pack);
    red_kept_vars(rg);
    sbuf_printf(o, "  %s v%" PRId32 ";\n  {\n    const %s a = pa[cp];\n    const ic_i64 ai = pai[cp];\n", cg_ctype(in->dtype), reduce, t);
    red_finish(rg, reduce);
    sbuf_puts(o, "  }\n");
    return;
  }
  const kir_instr *in = red_pass_begin(rg, p, reduce, &dt, &t);
  if (rg->k->stage == KIR_STAGE_COMBINE) {
    sbuf_printf(o, "  %s st[40]; ic_i64 sti[40]; int sh[40], n = 0;\n", t);
    red_column_combine(rg, in, dt, t);
  } else if (rg->column_rounds) {
    sbuf_printf(o, "  %s pa[1]; ic_i64 pai[1];\n", t);
    red_column_rounds(rg, p, reduce, in, dt, t);
    sbuf_printf(o, "  {\n    const %s a = pa[0];\n    const ic_i64 ai = pai[0];\n", t);
  } else {
    sbuf_printf(o, "  %s st[40]; ic_i64 sti[40]; int sh[40], n = 0;\n", t);
    red_column_shares(rg, p, reduce, in, dt, t);
  }
  red_finish(rg, reduce);
  sbuf_puts(o, "  }\n  }\n");
}

/* The lanes warp y of a column kernel stores the elements of: [lane0, lane1), a contiguous
 * share of the lanes in use (no order matters there), and the loop over them. */
void red_column_lanes(red_gen *rg) {
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "  for (ic_i64 j = live ? lane0 : lane1; j < lane1; j++) {\n");
}
