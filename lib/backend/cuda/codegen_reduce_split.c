/* Two-stage reductions (kir_split_wanted, kir.h): the partial stage's kernel, an aligned
 * subtree of the lanes a block into the workspace (rows: 256 lanes; columns: a round), and
 * the combine stage's pass over a row's (a column's) partials. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cuda/codegen_reduce.h"

/* ---------------------------------------------------------------- the partial stage */

/* A split column reduction's partial stage: round u of the block's columns, the W warps'
 * subtrees joined as red_column_rounds joins them, into partial u * columns + column for
 * each of the thread's P columns. */
static void red_column_partial(red_gen *rg, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t) {
  sbuf *o = &rg->cg->out;
  const int32_t w = rg->ywarps, pk = rg->pack;
  sbuf_printf(o, "    const ic_i64 j = u * %" PRId32 " + coly * 8;\n", 8 * w);
  red_column_round(rg, 0, reduce, in, dt, t, "live ? j : C");
  if (w > 1) {
    sbuf_printf(o, "    %s (*const xa)[%" PRId32 "] = (%s (*)[%" PRId32 "])ic_smem;\n", t, 32 * pk, t, 32 * pk);
    red_column_join_warps(o, in, dt, t, w, pk, "");
  }
  const char *sub = w > 1 ? "wv" : "am";
  sbuf_printf(o, "#pragma unroll\n    for (int cp = 0; cp < %" PRId32 "; cp++)\n"
                 "      if (live && coly == 0 && row_in + cp < rows) ((%s *)b%" PRId32 ")[u * rows + row_in + cp] = %s[cp][0];\n",
              pk, t, rg->k->partials, sub);
  sbuf_printf(o, "    v%" PRId32 " = %s[0][0];\n  }\n", reduce, sub);
}

/* The partial stage's pass (kir_split_wanted): lanes u * 256 + t of the row, their tree,
 * stored as partial u of the row. */
static void red_pass_partial(red_gen *rg, int32_t reduce) {
  ic_dtype dt;
  const char *t;
  const kir_instr *in = red_pass_begin(rg, 0, reduce, &dt, &t);
  const kir_kernel *k = rg->k;
  sbuf *o = &rg->cg->out;
  if (rg->columns) {
    red_column_partial(rg, reduce, in, dt, t);
    return;
  }
  red_acc_decl(o, "    ", in->reduce, dt);
  char first[32];
  snprintf(first, sizeof first, "u * %d + t", KIR_SPLIT_LANES);
  red_chunk_loop(rg, first, "L");
  red_chunk(rg, 0, reduce, "a", "ai");
  red_block_combine(rg, reduce, "a", "ai");
  sbuf_printf(o, "    if (live && t == 0) {\n      ((%s *)b%" PRId32 ")[row_in * U + u] = a;\n", t, k->partials);
  if (k->partial_index >= 0) sbuf_printf(o, "      ((ic_i64 *)b%" PRId32 ")[row_in * U + u] = ai;\n", k->partial_index);
  sbuf_printf(o, "    }\n    (void)ai;\n    v%" PRId32 " = a;\n  }\n", reduce);
}

/* The partial stage's body: the row values its one pass reads, the pass. */
void red_kernel_partial(red_gen *rg) {
  const kir_kernel *k = rg->k;
  int32_t n = k->instrs.count, reduce = 0;
  while (k->instrs.items[reduce].kind != KIR_REDUCE) reduce++;
  bool *row_need = sys_calloc((size_t)n + 1, sizeof(bool));
  if (!row_need) {
    rg->cg->oom = true;
    return;
  }
  row_need[reduce] = true;
  for (int32_t i = reduce; i >= 0; i--) {
    if (!rg->need[i] && !row_need[i]) continue;
    const kir_instr *in = &k->instrs.items[i];
    for (int32_t a = 0; a < in->nargs; a++)
      if (!rg->element[in->args[a]]) row_need[in->args[a]] = true;
  }
  for (int32_t i = 0; i < reduce; i++)
    if (row_need[i] && !rg->element[i]) red_row_instr(rg, i);
  free(row_need);
  red_pass_partial(rg, reduce);
  sbuf_puts(&rg->cg->out, "}\n");
}

/* ---------------------------------------------------------------- the combine stage */

/* The combine stage's pass: thread t combines an aligned power-of-two share of the row's
 * U partials by a binary counter (the pairwise tree), then the threads pair up. */
void red_pass_combine(red_gen *rg, int32_t reduce) {
  ic_dtype dt;
  const char *t;
  const kir_instr *in = red_pass_begin(rg, 0, reduce, &dt, &t);
  const kir_kernel *k = rg->k;
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "  %s st[40]; ic_i64 sti[40]; int sh[40], n = 0;\n", t);
  sbuf_puts(o, "  ic_i64 cover = 1;\n  while (cover < U) cover <<= 1;\n");
  sbuf_printf(o, "  const ic_i64 share = cover >= %d ? cover / %d : 1;\n", KIR_SPLIT_LANES, KIR_SPLIT_LANES);
  sbuf_puts(o, "  const ic_i64 j0 = (ic_i64)t * share, j1 = j0 + share < U ? j0 + share : U;\n");
  sbuf_puts(o, "  for (ic_i64 j = live ? j0 : j1; j < j1; j++) {\n");
  sbuf_printf(o, "    %s a = ((const %s *)b%" PRId32 ")[row_in * U + j];\n", t, t, k->partials);
  if (k->partial_index >= 0) sbuf_printf(o, "    ic_i64 ai = ((const ic_i64 *)b%" PRId32 ")[row_in * U + j];\n", k->partial_index);
  else sbuf_puts(o, "    ic_i64 ai = 0;\n");
  red_counter_push(o, in->reduce, dt, 0);
  sbuf_puts(o, "  }\n");
  red_counter_collapse(o, in->reduce, dt);
  sbuf_puts(o, "  {\n");
  red_acc_decl(o, "    ", in->reduce, dt);
  sbuf_puts(o, "    if (n > 0) { a = st[0]; ai = sti[0]; }\n");
  red_block_combine(rg, reduce, "a", "ai");
  red_finish(rg, reduce);
  sbuf_puts(o, "  }\n  }\n");
}

/* A split column reduction's combine stage: a thread a column loads its U partials 32 at a
 * time, joins each batch in the pairwise tree (partials past U hold the identity, as lanes
 * past the last chunk do) and pushes the batch's subtree on the binary counter at the
 * height of 32 rounds. Batches start at multiples of 32, so each is the counter's own
 * subtree and the bits are those of pushing the partials one by one; the 32 loads are in
 * flight together (one at a time, a column of 32 partials had waited out 32 latencies). */
void red_column_combine(red_gen *rg, const kir_instr *in, ic_dtype dt, const char *t) {
  sbuf *o = &rg->cg->out;
  enum { BATCH = 32, BATCH_LOG2 = 5 };
  /* the batches rolled: with U a constant the counter's unrolled pushes took NVRTC 7 s (U = 64) */
  sbuf_printf(o, "#pragma unroll 1\n  for (ic_i64 u0 = 0; u0 < U; u0 += %d) {\n    %s pa[%d];\n", BATCH, t, BATCH);
  sbuf_printf(o, "#pragma unroll\n    for (int q = 0; q < %d; q++) {\n", BATCH);
  sbuf_printf(o, "      pa[q] = u0 + q < U ? ((const %s *)b%" PRId32 ")[(u0 + q) * rows + (live ? row_in : 0)] : ", t,
              rg->k->partials);
  red_identity(o, in->reduce, dt);
  sbuf_puts(o, ";\n    }\n#pragma unroll\n");
  red_pairwise(o, in->reduce, dt, "pa", "pai", BATCH); /* light: no index, pai never named */
  sbuf_printf(o, "    const %s a = pa[0];\n    const ic_i64 ai = 0;\n", t);
  red_counter_push(o, in->reduce, dt, red_round_height(rg->round_warps) + BATCH_LOG2);
  sbuf_puts(o, "  }\n");
  red_counter_collapse(o, in->reduce, dt);
  red_acc_decl(o, "  ", in->reduce, dt);
  sbuf_puts(o, "  if (n > 0) { a = st[0]; ai = sti[0]; }\n  {\n");
}
