/* CUDA C for tiled pointwise kernels (transposes): kir.h's "tiled" strategy.
 *
 * A block of KIR_TILE_THREADS threads takes one T x TL tile of (p, last), p the dim along
 * which the transposed loads are contiguous, at one point of the other dims (T =
 * KIR_TILE, TL = the strategy's tile_last):
 *   load phase     each transposed load reads the tile along p (consecutive threads,
 *                  consecutive addresses; along the last dim for a strided load whose
 *                  run-time stride there is 1) into shared memory: t<i>[last][p] of the
 *                  compute type, padded by one against bank conflicts, or, for a load
 *                  read in 16-byte vectors along p (1- and 2-byte dtypes), its storage
 *                  bits p-major (cg_tile_at)
 *   compute phase  each thread takes slots of V consecutive points along the
 *                  last dim, as the vector path does (vector loads and stores when aligned
 *                  and full, else point by point), the transposed values from the tile.
 * The body function is the pointwise kernels' own, so the bits are the same. */
#include <inttypes.h>

#include "backend/cuda/codegen.h"

/* Element (row along p, col along the last dim) of load i's tile, both C expressions.
 * A load read W > 1 elements at a time along p (kir_tile_load_width) keeps a tile of
 * storage bits; W == 1, one of the compute type. Storage-bit tiles are p-major, TL elements a row, their 16-byte chunks (W elements)
 * swizzled by the row's group of W rows: the load phase stores W rows of one column a
 * thread, and a warp's stores fall in distinct banks; the compute phase reads W
 * consecutive columns of one row as one 16-byte vector, and a quarter warp's vectors fall
 * in distinct banks. (A compute-type tile of bf16 read a column of 8 rows a thread: 4-way
 * bank conflicts with 128-wide tiles, and L1 was the bottleneck, 97% busy.) */
static void cg_tile_index(codegen *cg, int32_t W, int32_t TL, const char *row, const char *col) {
  sbuf_printf(&cg->out, "(%s) * %" PRId32 " + ((((%s) / %" PRId32 ") ^ (((%s) / %" PRId32 ") %% %" PRId32 ")) * %" PRId32 " + (%s) %% %" PRId32 ")",
              row, TL, col, W, row, W, TL / W, W, col, W);
}

static void cg_tile_at(codegen *cg, int32_t i, int32_t P, int32_t TL, const char *row, const char *col) {
  const int32_t W = kir_tile_load_width(cg->k, i, P);
  if (W == 1) {
    sbuf_printf(&cg->out, "t%" PRId32 "[%s][%s]", i, col, row);
    return;
  }
  sbuf_printf(&cg->out, "t%" PRId32 "[", i);
  cg_tile_index(cg, W, TL, row, col);
  sbuf_puts(&cg->out, "]");
}

/* The storage-bit C type of a tile of dtype dt. */
static const char *cg_tile_bits_type(ic_dtype dt) { return ic_dtype_size(dt) == 1 ? "ic_u8" : "ic_u16"; }

static void cg_tile_coordinates(codegen *cg, int32_t P, int32_t TL) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t L = k->ndim - 1, T = KIR_TILE;
  sbuf_printf(o, "  const ic_i64 tl_n = (d%" PRId32 " + %" PRId32 ") / %" PRId32 ", tp_n = (d%" PRId32 " + %d) / %d;\n", L, TL - 1, TL, P,
              T - 1, T);
  sbuf_puts(o, "  ic_i64 blk = blockIdx.x;\n  const ic_i64 tl = blk % tl_n;\n  blk /= tl_n;\n  const ic_i64 tp = blk % tp_n;\n  blk /= tp_n;\n");
  int32_t outer = P == 0 ? 1 : 0; /* the outermost of the other dims takes the rest */
  for (int32_t d = L - 1; d >= 0; d--) {
    if (d == P) continue;
    if (d == outer) sbuf_printf(o, "  const ic_i64 i%" PRId32 " = blk;\n", d);
    else sbuf_printf(o, "  const ic_i64 i%" PRId32 " = blk %% d%" PRId32 ";\n  blk /= d%" PRId32 ";\n", d, d, d);
  }
  sbuf_puts(o, "  (void)blk;\n");
}

/* Thread t's element of the tile in step m of a load loop, lp along p and ll along the
 * last dim: `across` consecutive threads walk a tile row (along p, W elements each, or
 * along the last dim), so step m is t's step 0 moved by KIR_TILE_THREADS / across rows.
 * Written as offsets of m (not q = t + m * threads, then q / across and q % across on
 * ints): the addresses of a run-time stride stay affine in m and strength-reduce, where
 * the divisions of a signed q left sign fixups and a 64-bit multiply per load. */
static void cg_tile_lanes(codegen *cg, bool along_last, int32_t across, int32_t W) {
  const int32_t rows = KIR_TILE_THREADS / across; /* KIR_TILE_THREADS is a multiple of across */
  if (along_last)
    sbuf_printf(&cg->out, "      const int lp = threadIdx.x / %" PRId32 " + m * %" PRId32 ", ll = threadIdx.x %% %" PRId32 ";\n",
                across, rows, across);
  else
    sbuf_printf(&cg->out, "      const int lp = (threadIdx.x %% %" PRId32 ") * %" PRId32 ", ll = threadIdx.x / %" PRId32 " + m * %" PRId32 ";\n",
                across, W, across, rows);
}

/* Tile load i along p, W elements a thread at a time (kir_tile_load_width: scalar loads
 * of narrow elements kept too few bytes in flight, bf16 permute 59% of copy against 98%
 * for f32): one 16-byte load where the address is aligned and the W elements are inside
 * d_p, else element by element. The thread's vectors are all loaded before any goes to
 * the tile, so they are in flight together (a tile store between two loads waits for the
 * first: one vector in flight a thread). */
static void cg_tile_vector_load(codegen *cg, int32_t i, int32_t P, int32_t TL, int32_t W) {
  const kir_instr *in = &cg->k->instrs.items[i];
  sbuf *o = &cg->out;
  const int32_t L = cg->k->ndim - 1, T = KIR_TILE, per_word = W / 4, bits = 32 / per_word, M = T * TL / (W * KIR_TILE_THREADS);
  sbuf_printf(o, " {\n    ic_u32 w[%" PRId32 "][4];\n    bool whole[%" PRId32 "];\n", M, M);
  for (int pass = 0; pass < 2; pass++) {
    sbuf_printf(o, "#pragma unroll\n    for (int m = 0; m < %" PRId32 "; m++) {\n", M);
    cg_tile_lanes(cg, false, T / W, W);
    sbuf_printf(o, "      const ic_i64 i%" PRId32 " = tp * %d + lp, i%" PRId32 " = tl * %" PRId32 " + ll;\n", P, T, L, TL);
    sbuf_puts(o, "      const ic_u8 *a = ");
    cg_address(cg, in, NULL);
    sbuf_puts(o, ";\n");
    if (pass == 0) {
      sbuf_printf(o, "      whole[m] = i%" PRId32 " < d%" PRId32 " && ((ic_u64)a & 15) == 0 && i%" PRId32 " + %" PRId32 " <= d%" PRId32 ";\n"
                     "      if (whole[m]) ic_ld_w4(a, w[m]);\n    }\n", L, L, P, W, P);
      continue;
    }
    /* rows lp .. lp + W - 1 (lp a multiple of W) share their swizzle: element e is
     * TL e after the first */
    const char *bt = cg_tile_bits_type(in->dtype);
    sbuf_puts(o, "      const int tb = ");
    cg_tile_index(cg, W, TL, "lp", "ll");
    sbuf_printf(o, ";\n      if (whole[m]) {\n        for (int e = 0; e < %" PRId32 "; e++) t%" PRId32 "[tb + e * %" PRId32
                   "] = (%s)(w[m][e / %" PRId32 "] >> (e %% %" PRId32 ") * %" PRId32 ");\n",
                W, i, TL, bt, per_word, per_word, bits);
    sbuf_printf(o, "      } else if (i%" PRId32 " < d%" PRId32 ") {\n        for (int e = 0; e < %" PRId32 " && i%" PRId32 " + e < d%" PRId32
                   "; e++) t%" PRId32 "[tb + e * %" PRId32 "] = (%s)ic_ld_s%s(a + e * %zu);\n      }\n    }\n",
                L, L, W, P, P, i, TL, bt, cg_scalar_width(in->dtype), ic_dtype_size(in->dtype));
  }
  sbuf_puts(o, "  }\n");
}

/* Each tiled load fills its tile, T x TL elements, KIR_TILE_THREADS at a time along p
 * (consecutive threads, consecutive addresses; 16-byte vectors of narrow dtypes,
 * kir_tile_load_width), or along the last dim where its run-time stride there is 1
 * (kir_tile_order; uniform over the grid). */
static void cg_tile_load_phase(codegen *cg, int32_t P, int32_t TL) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t L = k->ndim - 1, T = KIR_TILE;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    if (cg->mode[i] != ACCESS_TILED) continue;
    if (kir_tile_load_width(cg->k, i, P) > 1)
      sbuf_printf(o, "  __shared__ __align__(16) %s t%" PRId32 "[%" PRId32 "];\n", cg_tile_bits_type(k->instrs.items[i].dtype), i, T * TL);
    else
      sbuf_printf(o, "  __shared__ %s t%" PRId32 "[%" PRId32 "][%d];\n", cg_ctype(k->instrs.items[i].dtype), i, TL, T + 1);
  }
  for (int32_t i = 0; i < k->instrs.count; i++) {
    if (cg->mode[i] != ACCESS_TILED) continue;
    sym_id order = kir_tile_order(k, i);
    /* one loop per order, each affine in m (so its addresses strength-reduce) */
    for (int32_t along_last = 0; along_last < (order < 0 ? 1 : 2); along_last++) {
      if (order >= 0 && !along_last) {
        sbuf_puts(o, "  if (!(");
        cg_expr(cg, order, NULL);
        sbuf_puts(o, " == 1))");
      } else if (order >= 0) {
        sbuf_puts(o, "  else");
      }
      int32_t W = kir_tile_load_width(k, i, P); /* 1 for a load read along the last dim */
      if (W > 1) {
        cg_tile_vector_load(cg, i, P, TL, W);
        continue;
      }
      /* a whole tile (most of them) loads without bounds tests, so its loads issue
       * back to back */
      sbuf_printf(o, " {\n    const bool whole = tp * %d + %d <= d%" PRId32 " && tl * %" PRId32 " + %" PRId32 " <= d%" PRId32 ";\n", T, T, P,
                  TL, TL, L);
      for (int32_t whole = 1; whole >= 0; whole--) {
        sbuf_printf(o, "    %s {\n#pragma unroll 4\n    for (int m = 0; m < %" PRId32 "; m++) {\n", whole ? "if (whole)" : "else",
                    T * TL / KIR_TILE_THREADS);
        cg_tile_lanes(cg, along_last, along_last ? TL : T, 1);
        sbuf_printf(o, "      const ic_i64 i%" PRId32 " = tp * %d + lp, i%" PRId32 " = tl * %" PRId32 " + ll;\n", P, T, L, TL);
        if (whole)
          sbuf_printf(o, "      t%" PRId32 "[ll][lp] = ", i);
        else
          sbuf_printf(o, "      if (i%" PRId32 " < d%" PRId32 " && i%" PRId32 " < d%" PRId32 ") t%" PRId32 "[ll][lp] = ", P, P, L, L, i);
        cg_load(cg, &k->instrs.items[i], NULL);
        sbuf_puts(o, ";\n    }\n    }\n");
      }
      sbuf_puts(o, "  }\n");
    }
  }
  sbuf_puts(o, "  __syncthreads();\n");
}

/* The vector slot: the condition (uniform but for the slot's fullness), loads, body,
 * stores; `continue` after it. */
/* Tile element (lp, ll + k) of load i as its value (a storage-bit tile unpacked). */
static void cg_tile_value(codegen *cg, int32_t i, int32_t P, int32_t TL) {
  const bool bits = kir_tile_load_width(cg->k, i, P) > 1;
  if (bits) sbuf_printf(&cg->out, "ic_unpack_%s(", cg_dtname(cg->k->instrs.items[i].dtype));
  cg_tile_at(cg, i, P, TL, "lp", "ll + k");
  if (bits) sbuf_puts(&cg->out, ")");
}

static void cg_tile_vector_slot(codegen *cg, int32_t P, int32_t TL) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t L = k->ndim - 1, V = cg->vec;
  sbuf_puts(o, "    if (");
  cg_vector_conditions(cg);
  sbuf_printf(o, "i%" PRId32 " + %" PRId32 " <= d%" PRId32 ") {\n", L, V, L);
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_STORE) sbuf_printf(o, "    %s r%" PRId32 "[%" PRId32 "];\n", cg_store_type(cg, in), i, V);
    if (in->kind != KIR_LOAD) continue;
    sbuf_printf(o, "    %s v%" PRId32 "[%" PRId32 "];\n", cg_ctype(in->dtype), i, V);
    const int32_t W = cg->mode[i] == ACCESS_TILED ? kir_tile_load_width(cg->k, i, P) : 0;
    if (W > 1 && W == V) { /* the slot is one chunk of the tile's row: one 16-byte read */
      const int32_t per_word = W / 4;
      sbuf_puts(o, "    { const uint4 q4 = *(const uint4 *)&");
      cg_tile_at(cg, i, P, TL, "lp", "ll");
      sbuf_printf(o, ";\n      const ic_u32 tw[4] = {q4.x, q4.y, q4.z, q4.w};\n      for (int k = 0; k < %" PRId32 "; k++) v%" PRId32
                     "[k] = ic_unpack_%s(tw[k / %" PRId32 "] >> (k %% %" PRId32 ") * %" PRId32 "); }\n",
                  V, i, cg_dtname(in->dtype), per_word, per_word, 32 / per_word);
    } else if (W > 0) {
      sbuf_printf(o, "    for (int k = 0; k < %" PRId32 "; k++) v%" PRId32 "[k] = ", V, i);
      cg_tile_value(cg, i, P, TL);
      sbuf_puts(o, ";\n");
    } else {
      cg_slot_load(cg, i);
    }
  }
  cg_slot_body_calls(cg);
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_STORE) cg_slot_store(cg, i);
  sbuf_puts(o, "      continue;\n    }\n");
}

/* The slot point by point: the last dim's tail, misaligned views. */
static void cg_tile_scalar_slot(codegen *cg, int32_t P, int32_t TL) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t L = k->ndim - 1;
  sbuf_printf(o, "    for (int k = 0; k < %" PRId32 "; k++) {\n      const ic_i64 j = i%" PRId32 " + k;\n      if (j >= d%" PRId32 ") break;\n",
              cg->vec, L, L);
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_STORE) sbuf_printf(o, "      %s r%" PRId32 ";\n", cg_store_type(cg, in), i);
    if (in->kind != KIR_LOAD) continue;
    sbuf_printf(o, "      const %s v%" PRId32 " = ", cg_ctype(in->dtype), i);
    if (cg->mode[i] == ACCESS_TILED) cg_tile_value(cg, i, P, TL);
    else cg_load(cg, in, "j");
    sbuf_puts(o, ";\n");
  }
  sbuf_puts(o, "      ");
  cg_body_call(cg, "");
  cg_point_stores(cg, "j", "      ");
  sbuf_puts(o, "    }\n");
}

void cg_tiled_kernel(codegen *cg, int32_t P, int32_t TL) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t L = k->ndim - 1, T = KIR_TILE, V = cg->vec, across = TL / V; /* threads along a tile row */
  cg_kernel_head(cg, KIR_TILE_THREADS, 0, 1);
  cg_tile_coordinates(cg, P, TL);
  cg_tile_load_phase(cg, P, TL);
  sbuf_printf(o, "  for (int m = 0; m < %" PRId32 "; m++) {\n", T * TL / (KIR_TILE_THREADS * V));
  sbuf_printf(o, "    const int lp = threadIdx.x / %" PRId32 " + %" PRId32 " * m, ll = (threadIdx.x %% %" PRId32 ") * %" PRId32 ";\n",
              across, KIR_TILE_THREADS / across, across, V);
  sbuf_printf(o, "    const ic_i64 i%" PRId32 " = tp * %d + lp, i%" PRId32 " = tl * %" PRId32 " + ll;\n", P, T, L, TL);
  sbuf_printf(o, "    if (i%" PRId32 " >= d%" PRId32 " || i%" PRId32 " >= d%" PRId32 ") continue;\n", P, P, L, L);
  cg_tile_vector_slot(cg, P, TL);
  cg_tile_scalar_slot(cg, P, TL);
  sbuf_puts(o, "  }\n}\n");
}
