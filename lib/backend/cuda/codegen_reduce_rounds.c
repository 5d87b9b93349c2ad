/* Light column kernels' rounds (kir_reduce_strategy's column_rounds): the W warps of a
 * group take 8 lanes each side by side, a round's subtrees join through shared memory
 * and go on a binary counter; a split's partial stage is one such round. */
#include <inttypes.h>

#include "backend/cuda/codegen_reduce.h"

/* A round's chunk c: a column's (red_chunk) or the thread's P columns' (red_chunk_pack). */
static void red_round_chunk(red_gen *rg, int32_t p, int32_t reduce) {
  if (rg->pack > 1) red_chunk_pack(rg, p, reduce, "am[cp][k]", "ami[cp][k]");
  else red_chunk(rg, p, reduce, "am[0][k]", "ami[0][k]");
}

/* The loop over a round's chunks (from `first`, L apart), its 8 lanes' chunks unrolled. */
static void red_column_round_chunks(red_gen *rg, int32_t p, int32_t reduce, const char *first) {
  sbuf *o = &rg->cg->out;
  const bool ragged = !red_count_multiple(rg, (int64_t)8 * KIR_REDUCE_CHUNK);
  sbuf_printf(o, "    for (ic_i64 c0 = %s; c0 < C; c0 += L)\n", first);
  sbuf_puts(o, ragged ? "    if ((c0 + 8) * 8 <= R) {\n" : "    {\n");
  sbuf_puts(o, "#pragma unroll\n    for (int k = 0; k < 8; k++) {\n    const ic_i64 c = c0 + k;\n");
  rg->chunk_inside = true;
  red_round_chunk(rg, p, reduce);
  rg->chunk_inside = false;
  sbuf_puts(o, "    }\n    }");
  if (ragged) {
    sbuf_puts(o, " else {\n#pragma unroll\n    for (int k = 0; k < 8; k++)\n    if (c0 + k < C) {\n    const ic_i64 c = c0 + k;\n");
    red_round_chunk(rg, p, reduce);
    sbuf_puts(o, "    }\n    }");
  }
  sbuf_puts(o, "\n");
}

/* A round of a column pass: the 8 lanes from j, each lane's chunks in its order, into
 * am[cp][] for each of the thread's P columns (rg->pack), and their pairwise subtrees into
 * am[cp][0]. A round inside the row has no bounds tests, so its 64 loads a column are in
 * flight together. Rounds start at multiples of 8 chunks, so a constant length that is a
 * multiple of 64 has no ragged round: its guarded copy is left out (its 64 predicated
 * loads, never run there, took registers from the whole round's: 42 -> 46 in flight for
 * symbolic columns of 4096 rows). The round's first chunk is `first`: in a padded round
 * (red_column_rounds) lanes past the last chunk start at C and read nothing. */
void red_column_round(red_gen *rg, int32_t p, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t,
                      const char *first) {
  sbuf *o = &rg->cg->out;
  const int32_t pk = rg->pack;
  sbuf_printf(o, "    %s am[%" PRId32 "][8]; ic_i64 ami[%" PRId32 "][8];\n", t, pk, pk);
  sbuf_printf(o, "#pragma unroll\n    for (int cp = 0; cp < %" PRId32 "; cp++)\n#pragma unroll\n    for (int k = 0; k < 8; k++) {\n      am[cp][k] = ", pk);
  red_identity(o, in->reduce, dt);
  sbuf_puts(o, ";\n      ami[cp][k] = (ic_i64)9223372036854775807ll;\n    }\n");
  if (pk > 1) {
    /* a copy a way of loading the columns (pack_ok is uniform): no fallback loads
     * predicated beside the words */
    sbuf_puts(o, "    if (pack_ok) {\n");
    rg->pack_words = true;
    red_column_round_chunks(rg, p, reduce, first);
    rg->pack_words = false;
    sbuf_puts(o, "    } else {\n");
    red_column_round_chunks(rg, p, reduce, first);
    sbuf_puts(o, "    }\n");
  } else {
    red_column_round_chunks(rg, p, reduce, first);
  }
  sbuf_printf(o, "#pragma unroll\n    for (int cp = 0; cp < %" PRId32 "; cp++) {\n", pk);
  red_pairwise(o, in->reduce, dt, "am[cp]", "ami[cp]", 8);
  sbuf_puts(o, "    }\n");
}

/* The height of a round's subtree: 8 W lanes. */
int32_t red_round_height(int32_t w) {
  int32_t height = 3;
  for (int32_t q = w; q > 1; q /= 2) height++;
  return height;
}

/* Joins a round's W warp subtrees (am[cp][0] of each warp, for each of the thread's P
 * columns; light kernels, no index) through shared memory xa (xa[slot][cp * 32 + colx]) at
 * slot offset buf ("" or "buf + "): wv[cp][0] is column cp's round subtree. */
void red_column_join_warps(sbuf *o, const kir_instr *in, ic_dtype dt, const char *t, int32_t w, int32_t pk, const char *buf) {
  sbuf_printf(o, "#pragma unroll\n    for (int cp = 0; cp < %" PRId32 "; cp++) xa[%scbase + coly][cp * 32 + colx] = am[cp][0];\n"
                 "    __syncthreads();\n", pk, buf);
  sbuf_printf(o, "    %s wv[%" PRId32 "][%" PRId32 "]; ic_i64 wvi[%" PRId32 "][%" PRId32 "];\n", t, pk, w, pk, w);
  sbuf_printf(o, "#pragma unroll\n    for (int cp = 0; cp < %" PRId32 "; cp++) {\n"
                 "    for (int q = 0; q < %" PRId32 "; q++) { wv[cp][q] = xa[%scbase + q][cp * 32 + colx]; wvi[cp][q] = 0; }\n",
              pk, w, buf);
  red_pairwise(o, in->reduce, dt, "wv[cp]", "wvi[cp]", w);
  sbuf_puts(o, "    }\n");
}

/* Column cp's binary counter (red_counter_push's st/sti/sh/n) among the thread's P. */
static void red_column_counter(sbuf *o, const char *t) {
  sbuf_printf(o, "    %s (&st)[40] = stp[cp]; ic_i64 (&sti)[40] = stip[cp]; int (&sh)[40] = shp[cp]; int &n = np[cp];\n", t);
}

/* Light column kernels: rounds of 8 W lanes, the group's W warps side by side in each
 * (warp y lanes r 8W + 8y .. + 7): the device reads one band of rows at a time, as a
 * row-order sweep does (four bands, one a warp's quarter of the lanes, read 90.6% of copy
 * on inputs allocated again where this reads 95.4%, H100:
 * bench/results/2026-12-06-column-reductions-h100.md). The W subtrees of a round join through shared
 * memory (double-buffered: one barrier a round) into the round's subtree, which every warp
 * pushes on its own copy of column cp's counter. The last round is padded with the
 * identity, which changes no bits. Each column's result goes to pa[cp] (pai[cp]). */
void red_column_rounds(red_gen *rg, int32_t p, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t) {
  sbuf *o = &rg->cg->out;
  /* light kernels only (kir_reduce_strategy: column_rounds): no index to carry */
  const int32_t w = rg->ywarps, slots = rg->ywarps * rg->colgroups, pk = rg->pack;
  const int32_t height = red_round_height(w);
  sbuf_printf(o, "  %s stp[%" PRId32 "][40]; ic_i64 stip[%" PRId32 "][40]; int shp[%" PRId32 "][40], np[%" PRId32 "] = {0};\n", t, pk,
              pk, pk, pk);
  sbuf_printf(o, "  const ic_i64 rounds = (used + %" PRId32 ") / %" PRId32 ";\n", 8 * w - 1, 8 * w);
  if (w > 1) sbuf_printf(o, "  %s (*const xa)[%" PRId32 "] = (%s (*)[%" PRId32 "])ic_smem;\n", t, 32 * pk, t, 32 * pk);
  sbuf_printf(o, "  for (ic_i64 r8 = 0; r8 < rounds; r8++) {\n    const ic_i64 j = r8 * %" PRId32 " + coly * 8;\n", 8 * w);
  red_column_round(rg, p, reduce, in, dt, t, "live ? j : C");
  if (w > 1) {
    sbuf_printf(o, "    const int buf = (int)(r8 & 1) * %" PRId32 ";\n", slots);
    red_column_join_warps(o, in, dt, t, w, pk, "buf + ");
  }
  sbuf_printf(o, "#pragma unroll\n    for (int cp = 0; cp < %" PRId32 "; cp++) {\n", pk);
  red_column_counter(o, t);
  sbuf_printf(o, "    const %s a = %s[cp][0];\n    const ic_i64 ai = %s[cp][0];\n", t, w > 1 ? "wv" : "am", w > 1 ? "wvi" : "ami");
  red_counter_push(o, in->reduce, dt, height);
  sbuf_puts(o, "    }\n");
  /* the next pass writes these slots again */
  sbuf_puts(o, w > 1 ? "  }\n  __syncthreads();\n" : "  }\n");
  sbuf_printf(o, "#pragma unroll\n  for (int cp = 0; cp < %" PRId32 "; cp++) {\n", pk);
  red_column_counter(o, t);
  red_counter_collapse(o, in->reduce, dt);
  red_acc_decl(o, "    ", in->reduce, dt);
  sbuf_puts(o, "    if (n > 0) { a = st[0]; ai = sti[0]; }\n    pa[cp] = a;\n    pai[cp] = ai;\n  }\n");
}
