/* CUDA C generation for reduction kernels (kir kernels with `reduces` set).
 *
 * A row (a point of the kept dims) belongs to TPR threads (a power of two): one block of
 * TPR threads a row, or, for short rows, TPR-thread slices of a 128-thread block, or on
 * sm_90 a cluster of CTAs (red_plan_cluster) for rows of 1024 lanes whose loads are kept. The
 * kernel walks the row's instructions in order: row values are computed once per thread
 * as scalars; each REDUCE is a pass over the row in which thread t is lane t of ic.h's
 * summation order: it accumulates its chunks of 8 elements (chunks t, t + L, ...) from the
 * identity, element by element; then the row's lanes combine in the pairwise tree, first
 * inside the warp (shfl.sync.bfly at distances 1, 2, 4, ...: lanes 2i and 2i+1 first),
 * then across the warps through shared memory. Rows of more than 32768 chunks (or of a
 * symbolic length) have G lane groups of 1024 lanes, reduced one after the other and
 * combined by a binary counter, which is the same pairwise tree. A last pass computes the
 * element stores. Element values are recomputed in every pass that needs them (loads come
 * back from L2), so no pass depends on what another one kept.
 *
 * Within a chunk, an access contiguous in the innermost reduced dim moves its 8 elements
 * as vectors (ld.global.nc.v4 / st.global.cs.v4) when the launch's pointers, strides and
 * sizes allow it (one test over kernel parameters, uniform over the grid); other chunks,
 * and the last partial chunk, go element by element. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/codegen.h"
#include "ops/ops.h"

enum { RED_MIN_BLOCK = 128 };

typedef struct red_gen {
  codegen *cg;
  const kir_kernel *k;
  bool *element;    /* kir_levels */
  bool *need;       /* kir_pass_needs: (nreduce + 1) x count */
  int32_t nreduce;
  int32_t tpr;      /* threads per row */
  int32_t block;    /* threads per block */
  bool groups;      /* G may exceed 1: emit the lane-group loop */
  int32_t inner;    /* the innermost reduced dim, -1 if none */
  bool any_vector;  /* some element access moves whole chunks */
  /* Persistent rows: when a row's chunks fit (K chunks a lane, K * 8 values of every
   * cached load within RED_CACHE_VALUES), loads that several passes read are kept in
   * registers (c<i>[K][8], filled by the first pass that reads them): the row comes from
   * memory once. cache_k 0: no cache. */
  int32_t cache_k;
  bool *cached;
  /* The shared-memory tier: a cached value's chunks k < cache_regs are in registers
   * (c<i>[cache_regs][8]), the others in dynamic shared memory (sc<i>[K - cache_regs][8]
   * [block]: a thread's element e of a chunk at word e * block + threadIdx.x, so a warp's accesses
   * are consecutive words). smem: its bytes; min_blocks: the blocks a multiprocessor
   * must hold (__launch_bounds__), 0 for no bound. */
  int32_t cache_regs, smem, min_blocks;
  /* Rows of a cluster (red_plan_cluster): CTAs a row (1: none). CTA q of a row holds lanes
   * [q * block, (q + 1) * block), t its lane; block combines end with the cluster's. */
  int32_t cluster;
  /* The part of the cache red_cache_at names: both (k a constant: the choice folds), the
   * registers alone, or the shared memory alone (k at run time: red_chunk_loops' rolled
   * loop) */
  enum { RED_CACHE_BOTH, RED_CACHE_REGS, RED_CACHE_SHARED } cache_part;
  /* Cached loads of dtypes narrower than 4 bytes whose values would take more than half
   * the cache budget keep their storage words instead (ic_u32 c<i>[K][words]: half or a
   * quarter of the registers), unpacked again by each pass that reads them (the raw
   * bits, so NaN payloads stay as memory has them). */
  bool *packed;
  int32_t *first_pass;
  /* Column kernels (the innermost dim is kept): a block holds 32 consecutive rows, one a
   * lane of each of its `ywarps` warps, so every load of a warp reads 32 neighbouring
   * rows (coalesced). Light kernels' warps take rounds of 8 lanes side by side
   * (red_column_rounds), the warps of heavy kernels and of those that store elements
   * contiguous shares of the lanes (red_column_shares); either way the lanes' pairwise
   * tree. The element stores split the lanes in contiguous shares (red_column_lanes). */
  bool columns;
  int32_t ywarps, colgroups; /* columns: warps a group of 32 rows, groups a block */
  bool column_rounds;        /* columns: the warps in rounds side by side, not in shares */
  int32_t round_warps;       /* columns: the W of the rounds (8 W lanes), the partials' in a combine */
  /* columns: the neighbouring rows (columns of the input) a thread holds, P (1, 2, 4:
   * kir_reduce_strategy's column_pack): row_in is the first. Its loads along the columns
   * read one word for all P (pack_ok: aligned, the columns in one innermost run), else a
   * load a column; each column has its own accumulators, subtrees and counter. */
  int32_t pack;
  bool pack_words; /* ... and the chunk at hand is pack_ok's copy */
  /* Short rows (at most 1024 chunks) spread over fewer threads, so that more rows are in
   * flight: thread t is lanes t, t + tpr, ... (lanes_per_thread of them, accumulators
   * a[k]); each lane's block combines, then they pair up (lanes t and t + tpr first).
   * kloop > 0: the chunk loop is unrolled over the thread's kloop chunks. */
  int32_t lanes_per_thread, kloop;
  int32_t per_thread; /* chunks a thread takes of a row of constant length; 0: not known */
  /* red_chunk's chunk lies inside the row (a column pass's whole round): no bounds tests,
   * so nothing stands between its loads and those of the chunks unrolled beside it */
  bool chunk_inside;
  /* ... and the vector test holds for it (red_stores_pass's copy for aligned rows of whole
   * chunks): no element-by-element path is emitted beside the vectors */
  bool vector_known;
  int64_t count; /* the elements a row reduces, -1 when symbolic */
  const char *lane; /* the element index element values are named with (red_name): "e", or "e + 1" */
} red_gen;

/* RED_TIER_BLOCK: the rows whose caches may take the shared-memory tier, those of one
 * 512-thread block (the long rows of kir_reduce_strategy_of): two such blocks of 64
 * registers fill a multiprocessor's 64K. */
/* RED_CLUSTER_SLOTS: the bytes of a cluster row's ic_cslot (a value and an index). */
enum { RED_CACHE_VALUES = 64, RED_DIVIDE_ROW_CHUNKS = 8, RED_TIER_BLOCK = 512, RED_CLUSTER_MAX = 8, RED_CLUSTER_SLOTS = 16 };

/* Whether a row's length is a known constant, positive and a multiple of `unit` elements
 * (KIR_REDUCE_CHUNK: rows of whole chunks; 8 chunks: column rounds that are never ragged). */
static bool red_count_multiple(const red_gen *rg, int64_t unit) { return rg->count > 0 && rg->count % unit == 0; }

/* Whether pass p takes load i from the registers rather than from memory. */
static bool red_from_cache(const red_gen *rg, int32_t p, int32_t i) {
  return rg->cache_k > 0 && rg->cached[i] && p > rg->first_pass[i];
}

/* The cached value of instruction i at the thread's chunk k, element (or packed word) idx:
 * an lvalue, in registers or in shared memory (k is a constant once the chunk loop is
 * unrolled, so the choice folds away). */
static void red_cache_at(const red_gen *rg, int32_t i, const char *idx) {
  sbuf *o = &rg->cg->out;
  const int32_t kr = rg->cache_regs;
  if (kr >= rg->cache_k || rg->cache_part == RED_CACHE_REGS) sbuf_printf(o, "c%" PRId32 "[k][%s]", i, idx);
  else if (kr == 0) sbuf_printf(o, "sc%" PRId32 "[k][%s][threadIdx.x]", i, idx);
  else if (rg->cache_part == RED_CACHE_SHARED) sbuf_printf(o, "sc%" PRId32 "[k - %" PRId32 "][%s][threadIdx.x]", i, kr, idx);
  else
    sbuf_printf(o, "(k < %" PRId32 " ? c%" PRId32 "[k < %" PRId32 " ? k : 0][%s] : sc%" PRId32 "[k < %" PRId32 " ? 0 : k - %" PRId32 "][%s][threadIdx.x])",
                kr, i, kr, idx, i, kr, kr, idx);
}

/* Keeps the chunk's values v<i>[] in the cache, where instruction i is cached. */
static void red_cache_keep(const red_gen *rg, int32_t i, const char *indent) {
  if (rg->cache_k == 0 || !rg->cached[i]) return;
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "%sfor (int e = 0; e < 8; e++) ", indent);
  red_cache_at(rg, i, "e");
  sbuf_printf(o, " = v%" PRId32 "[e];\n", i);
}

static bool red_reduced(const kir_kernel *k, int32_t d) { return (k->axes >> d) & 1u; }

/* ---------------------------------------------------------------- accumulators */

static bool red_arith(ic_reduce_op op) { return op == IC_REDUCE_SUM || op == IC_REDUCE_MEAN || op == IC_REDUCE_PROD; }
static bool red_arg(ic_reduce_op op) { return op == IC_REDUCE_ARGMAX || op == IC_REDUCE_ARGMIN; }

/* The accumulator's C type for op over operand dtype dt. */
static const char *red_acc_type(ic_reduce_op op, ic_dtype dt) { return cg_ctype(kir_reduce_acc_dtype(op, dt)); }

static void red_identity(sbuf *o, ic_reduce_op op, ic_dtype dt) {
  const char *t = red_acc_type(op, dt);
  bool is_f = strcmp(t, "float") == 0, is_d = strcmp(t, "double") == 0, is_b = strcmp(t, "bool") == 0;
  bool is_l = strcmp(t, "ic_i64") == 0;
  bool high = op == IC_REDUCE_MIN || op == IC_REDUCE_ARGMIN;
  switch (op) {
  case IC_REDUCE_SUM: case IC_REDUCE_MEAN:
    sbuf_puts(o, is_f ? "__uint_as_float(0x80000000u)" : is_d ? "__longlong_as_double(0x8000000000000000ll)" : "(ic_i64)0");
    break;
  case IC_REDUCE_PROD: sbuf_puts(o, is_f ? "1.0f" : is_d ? "1.0" : "(ic_i64)1"); break;
  case IC_REDUCE_ANY: sbuf_puts(o, "false"); break;
  case IC_REDUCE_ALL: sbuf_puts(o, "true"); break;
  default:
    if (is_f) sbuf_puts(o, high ? "__uint_as_float(0x7f800000u)" : "__uint_as_float(0xff800000u)");
    else if (is_d) sbuf_puts(o, high ? "__longlong_as_double(0x7ff0000000000000ll)" : "__longlong_as_double(0xfff0000000000000ll)");
    else if (is_b) sbuf_puts(o, high ? "true" : "false");
    else if (is_l) sbuf_puts(o, high ? "(ic_i64)9223372036854775807ll" : "(-9223372036854775807ll - 1)");
    else sbuf_puts(o, high ? "2147483647" : "(-2147483647 - 1)");
    break;
  }
}

/* acc = acc (+) x, for accumulators named acc[/acc_i] and x[/x_i]. */
static void red_combine(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *acc, const char *acc_i, const char *x,
                        const char *x_i) {
  const char *t = red_acc_type(op, dt);
  bool boolean = strcmp(t, "bool") == 0;
  switch (op) {
  case IC_REDUCE_SUM: case IC_REDUCE_MEAN: sbuf_printf(o, "%s = ic_add(%s, %s);", acc, acc, x); break;
  case IC_REDUCE_PROD: sbuf_printf(o, "%s = ic_mul(%s, %s);", acc, acc, x); break;
  case IC_REDUCE_MAX:
    if (boolean) sbuf_printf(o, "%s = %s || %s;", acc, acc, x);
    else sbuf_printf(o, "%s = ic_maximum(%s, %s);", acc, acc, x);
    break;
  case IC_REDUCE_MIN:
    if (boolean) sbuf_printf(o, "%s = %s && %s;", acc, acc, x);
    else sbuf_printf(o, "%s = ic_minimum(%s, %s);", acc, acc, x);
    break;
  case IC_REDUCE_ARGMAX: case IC_REDUCE_ARGMIN:
    sbuf_printf(o, "ic_arg_step(%s, %s, %s, %s, %s);", op == IC_REDUCE_ARGMAX ? "true" : "false", acc, acc_i, x, x_i);
    break;
  case IC_REDUCE_ANY: sbuf_printf(o, "%s = %s || %s;", acc, acc, x); break;
  case IC_REDUCE_ALL: sbuf_printf(o, "%s = %s && %s;", acc, acc, x); break;
  default: break;
  }
}

/* One element value (the C expression v) as an accumulator. */
static void red_lift(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *v) {
  if (op == IC_REDUCE_ANY || op == IC_REDUCE_ALL) {
    if (dt == IC_BOOL) sbuf_puts(o, v);
    else sbuf_printf(o, "(%s != 0)", v);
  } else if (red_arith(op) && dt == IC_BOOL) {
    sbuf_printf(o, "(ic_i64)(%s ? 1 : 0)", v);
  } else if (red_arith(op) && dtype_is_integer(dt)) {
    sbuf_printf(o, "(ic_i64)%s", v);
  } else {
    sbuf_puts(o, v);
  }
}

/* `<ind>T a = <identity>;\n<ind>ic_i64 ai = <no index>;\n`: an accumulator at the
 * identity (the index past every element: the first index wins ties). */
static void red_acc_decl(sbuf *o, const char *ind, ic_reduce_op op, ic_dtype dt) {
  sbuf_printf(o, "%s%s a = ", ind, red_acc_type(op, dt));
  red_identity(o, op, dt);
  sbuf_printf(o, ";\n%sic_i64 ai = (ic_i64)9223372036854775807ll;\n", ind);
}

/* The butterflies over `width` lanes of a warp (distances 1, 2, 4, ...) of a/ai, xi only
 * for the arg reductions; ind: the loop's indentation. */
static void red_butterflies(sbuf *o, const char *ind, ic_reduce_op op, ic_dtype dt, const char *a, const char *ai,
                            int32_t width) {
  sbuf_printf(o, "%sfor (int o = 1; o < %" PRId32 "; o <<= 1) {\n%s  const %s x = ic_bfly(%s, o);\n", ind, width, ind,
              red_acc_type(op, dt), a);
  if (red_arg(op)) sbuf_printf(o, "%s  const ic_i64 xi = ic_bfly(%s, o);\n%s  ", ind, ai, ind);
  else sbuf_printf(o, "%s  const ic_i64 xi = 0;\n%s  ", ind, ind);
  red_combine(o, op, dt, a, ai, "x", "xi");
  sbuf_printf(o, "\n%s  (void)xi;\n%s}\n", ind, ind);
}

/* ---------------------------------------------------------------- pieces */

/* The kept vars split off `rem` (a C variable in scope), innermost first, each into the
 * lvalue `var` names (a format of its dim). */
static void red_kept_split(const red_gen *rg, const char *indent, const char *var) {
  sbuf *o = &rg->cg->out;
  for (int32_t d = rg->k->ndim - 1; d >= 0; d--) {
    if (red_reduced(rg->k, d)) continue;
    sbuf_puts(o, indent);
    sbuf_printf(o, var, d);
    sbuf_printf(o, " = rem %% d%" PRId32 "; rem /= d%" PRId32 ";\n", d, d);
  }
}

/* `live` and the kept vars of the row row_in (a C variable in scope). */
static void red_kept_vars(const red_gen *rg) {
  sbuf *o = &rg->cg->out;
  sbuf_puts(o, "  const bool live = row_in < rows;\n  ic_i64 rem = live ? row_in : 0;\n");
  red_kept_split(rg, "  ", "const ic_i64 i%" PRId32);
  sbuf_puts(o, "  (void)rem;\n");
}

/* v<i>[e] for element values, v<i> for row values. */
static void red_name(const red_gen *rg, int32_t i, char *buf, size_t size) {
  if (rg->element[i]) snprintf(buf, size, "v%" PRId32 "[%s]", i, rg->lane);
  else snprintf(buf, size, "v%" PRId32, i);
}

/* The reduced vars of element r (a C variable), innermost fastest. */
static void red_decompose(red_gen *rg, const char *r, const char *indent) {
  const kir_kernel *k = rg->k;
  sbuf *o = &rg->cg->out;
  int32_t outer = -1, count = 0;
  for (int32_t d = 0; d < k->ndim; d++)
    if (red_reduced(k, d)) {
      if (outer < 0) outer = d;
      count++;
    }
  if (count == 0) return;
  if (count == 1) {
    sbuf_printf(o, "%sconst ic_i64 i%" PRId32 " = %s;\n", indent, outer, r);
    return;
  }
  sbuf_printf(o, "%sic_i64 rr = %s;\n", indent, r);
  for (int32_t d = k->ndim - 1; d > outer; d--)
    if (red_reduced(k, d))
      sbuf_printf(o, "%sconst ic_i64 i%" PRId32 " = rr %% d%" PRId32 "; rr /= d%" PRId32 ";\n", indent, d, d, d);
  sbuf_printf(o, "%sconst ic_i64 i%" PRId32 " = rr;\n", indent, outer);
}

/* How an element access moves a chunk: whole (VECTOR), once (SPLAT: not read by the
 * innermost reduced var) or element by element. */
static access_mode red_classify(red_gen *rg, const kir_instr *in) {
  const kir_kernel *k = rg->k;
  codegen *cg = rg->cg;
  if (rg->inner < 0 || kir_is_guarded_load(in)) return ACCESS_ELEMENT;
  if (!sym_depends_on(cg->a, in->offset, SYM_VAR, rg->inner)) return ACCESS_SPLAT;
  sym_id checks[IC_MAX_DIMS + 1];
  int32_t n = 0;
  if (!kir_contiguous_along(k, in->offset, rg->inner, KIR_REDUCE_CHUNK, checks, &n)) return ACCESS_ELEMENT;
  for (int32_t i = 0; i < n; i++) cg_require_aligned(cg, checks[i]);
  return ACCESS_VECTOR;
}

/* `ic_keep_bits(c<i>[k][e / per_word], (e % per_word) * bits, mask, ` for element e of
 * packed load i of dtype dt: the caller writes the raw bits and the ')'. */
static void red_keep_bits(const red_gen *rg, int32_t i, ic_dtype dt) {
  sbuf *o = &rg->cg->out;
  int32_t per_word = 4 / (int32_t)ic_dtype_size(dt), bits = 32 / per_word;
  char word[32];
  snprintf(word, sizeof word, "e / %" PRId32, per_word);
  sbuf_puts(o, "ic_keep_bits(");
  red_cache_at(rg, i, word);
  sbuf_printf(o, ", (e %% %" PRId32 ") * %d, 0x%xu, ", per_word, bits, (unsigned)((1ull << bits) - 1));
}

static void red_scalar_load(red_gen *rg, int32_t i, const char *target) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "%s = ", target);
  if (kir_is_guarded_load(in)) {
    char g[32];
    red_name(rg, in->args[0], g, sizeof g);
    sbuf_printf(o, "%s ? ", g);
  }
  if (rg->packed[i]) {
    /* the raw bits into the packed cache (packed loads are unguarded element loads) */
    sbuf_printf(o, "ic_unpack_%s(", cg_dtname(in->dtype));
    red_keep_bits(rg, i, in->dtype);
    sbuf_printf(o, "ic_ld_s%s(", cg_scalar_width(in->dtype));
    cg_address(rg->cg, in, NULL);
    sbuf_puts(o, ")))");
  } else {
    /* a column kernel's element loads skip L1 (prelude.cuh: ic_ld_na_) */
    sbuf_printf(o, "ic_unpack_%s(ic_ld_%ss%s(", cg_dtname(in->dtype), rg->columns && rg->element[i] ? "na_" : "",
                cg_scalar_width(in->dtype));
    cg_address(rg->cg, in, NULL);
    sbuf_puts(o, "))");
  }
  if (kir_is_guarded_load(in)) sbuf_printf(o, " : (%s)0", cg_ctype(in->dtype));
  sbuf_puts(o, ";\n");
}

static void red_range(red_gen *rg, int32_t i, const char *target) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "%s = ", target);
  cg_range(rg->cg, in, NULL, rg->element[i] ? "[e]" : "");
  sbuf_puts(o, ";\n");
}

/* Words of a chunk of 8 elements of dt, moved by ic_ld_w4/ic_st_w4 (ic_ld_w2 for bytes). */
static int32_t red_words(ic_dtype dt) { return KIR_REDUCE_CHUNK * (int32_t)ic_dtype_size(dt) / 4; }

static void red_vector_load(red_gen *rg, int32_t i) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  int32_t words = red_words(in->dtype);
  sbuf_printf(o, "      { ic_u32 w[%" PRId32 "];\n", words);
  for (int32_t q = 0; q < words; q += 4) {
    sbuf_printf(o, "        ic_ld_w%d((", words < 4 ? (int)words : 4);
    cg_address(rg->cg, in, NULL);
    sbuf_printf(o, ") + %" PRId32 ", &w[%" PRId32 "]);\n", q * 4, q);
  }
  const char *dt = cg_dtname(in->dtype);
  if (rg->packed[i]) {
    sbuf_printf(o, "        for (int q = 0; q < %" PRId32 "; q++) ", words);
    red_cache_at(rg, i, "q");
    sbuf_puts(o, " = w[q];\n");
  }
  if (ic_dtype_size(in->dtype) == 8) {
    sbuf_printf(o, "        for (int e = 0; e < 8; e++) v%" PRId32 "[e] = ic_unpack_%s(((ic_u64)w[2 * e + 1] << 32) | w[2 * e]); }\n",
                i, dt);
  } else {
    int32_t per_word = 4 / (int32_t)ic_dtype_size(in->dtype);
    sbuf_printf(o, "        for (int e = 0; e < 8; e++) v%" PRId32 "[e] = ic_unpack_%s(w[e / %" PRId32 "] >> (e %% %" PRId32 ") * %d); }\n",
                i, dt, per_word, per_word, 32 / per_word);
  }
}

/* Whether store i stores a conversion of a float (f32 compute type) to its narrow float
 * dtype: a cast, or a saturating cast to fp8. */
static bool red_stored_rounding(const red_gen *rg, int32_t i) {
  const kir_kernel *k = rg->k;
  const kir_instr *in = &k->instrs.items[i], *v = &k->instrs.items[in->args[0]];
  bool fp8 = in->dtype == IC_F8E4M3 || in->dtype == IC_F8E5M2;
  return v->kind == KIR_OP && dtype_is_narrow_float(in->dtype) && v->dtype == in->dtype &&
         (v->op == IC_OP_CAST || (v->op == IC_OP_CAST_SATURATE && fp8)) &&
         strcmp(cg_ctype(k->instrs.items[v->args[0]].dtype), "float") == 0;
}

static void red_op_expr(red_gen *rg, int32_t i);

/* The storage bits of store i's value. A conversion to a narrow float that is stored
 * takes the bits of one rounding of its f32 operand (ic_rndbits_, ic_satbits_: the bits
 * the pointwise kernels store, canonical NaN included); an asm output made as bits is
 * stored as the asm made it (its canonical bits: what unpacking and packing again would
 * give). */
static void red_pack(red_gen *rg, int32_t i, sbuf *o) {
  const kir_kernel *k = rg->k;
  const kir_instr *in = &k->instrs.items[i], *v = &k->instrs.items[in->args[0]];
  char src[32];
  if (v->dtype == in->dtype && cg_asm_result_bits(rg->cg, v)) {
    sbuf_printf(o, rg->element[v->args[0]] ? "a%" PRId32 "_b%" PRId32 "[e]" : "a%" PRId32 "_b%" PRId32, v->args[0], v->result);
    return;
  }
  if (red_stored_rounding(rg, i)) {
    red_name(rg, v->args[0], src, sizeof src);
    sbuf_printf(o, "ic_%sbits_%s(%s)", v->op == IC_OP_CAST ? "rnd" : "sat", cg_dtname(in->dtype), src);
    return;
  }
  if (v->kind == KIR_OP && v->dtype == in->dtype && dtype_is_narrow_float(in->dtype) && o == &rg->cg->out) {
    /* an op of the stored dtype: the bits of its rounding (ic_rndbits_: ptxas packs two
     * such conversions into one), not its value rounded, unpacked and packed again */
    codegen *cg = rg->cg;
    sbuf expr = {0}, saved = cg->out;
    cg->out = expr;
    cg->bits = true;
    red_op_expr(rg, in->args[0]);
    expr = cg->out;
    cg->out = saved;
    if (expr.oom) cg->oom = true;
    if (cg->bits) sbuf_printf(o, "ic_pack_%s(%s)", cg_dtname(in->dtype), expr.data ? expr.data : ""); /* no rounding took them */
    else sbuf_puts(o, expr.data ? expr.data : "");
    cg->bits = false;
    sbuf_free(&expr);
    return;
  }
  red_name(rg, in->args[0], src, sizeof src);
  sbuf_printf(o, "ic_pack_%s(%s)", cg_dtname(in->dtype), src);
}

static void red_vector_store(red_gen *rg, int32_t i) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  int32_t words = red_words(in->dtype);
  sbuf_printf(o, "      { ic_u32 w[%" PRId32 "] = {0};\n", words);
  if (ic_dtype_size(in->dtype) == 8) {
    sbuf_puts(o, "        for (int e = 0; e < 8; e++) { const ic_u64 p = ");
    red_pack(rg, i, o);
    sbuf_puts(o, "; w[2 * e] = (ic_u32)p; w[2 * e + 1] = (ic_u32)(p >> 32); }\n");
  } else if (in->dtype == IC_F8E4M3 && red_stored_rounding(rg, i) && rg->element[rg->k->instrs.items[in->args[0]].args[0]]) {
    /* two elements a cvt (ic_rndbits_f8e4m3x2; saturating: a word of four at once) */
    const kir_instr *v = &rg->k->instrs.items[in->args[0]];
    if (v->op == IC_OP_CAST)
      sbuf_printf(o, "        for (int e = 0; e < 8; e += 2) w[e / 4] |= ic_rndbits_f8e4m3x2(v%" PRId32 "[e], v%" PRId32 "[e + 1]) << (e %% 4) * 8;\n",
                  v->args[0], v->args[0]);
    else
      sbuf_printf(o, "        for (int e = 0; e < 8; e += 4) w[e / 4] = ic_satbits_f8e4m3x4(v%" PRId32 "[e], v%" PRId32 "[e + 1], v%" PRId32 "[e + 2], v%" PRId32 "[e + 3]);\n",
                  v->args[0], v->args[0], v->args[0], v->args[0]);
  } else {
    int32_t per_word = 4 / (int32_t)ic_dtype_size(in->dtype);
    sbuf_printf(o, "        for (int e = 0; e < 8; e++) w[e / %" PRId32 "] |= (", per_word);
    red_pack(rg, i, o);
    sbuf_printf(o, ") << (e %% %" PRId32 ") * %d;\n", per_word, 32 / per_word);
  }
  for (int32_t q = 0; q < words; q += 4) {
    sbuf_printf(o, "        ic_st_w%d((", words < 4 ? (int)words : 4);
    cg_address(rg->cg, in, NULL);
    sbuf_printf(o, ") + %" PRId32 ", &w[%" PRId32 "]);\n", q * 4, q);
  }
  sbuf_puts(o, "      }\n");
}

static void red_scalar_store(red_gen *rg, int32_t i, const char *indent) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "%sic_st_s%s(", indent, cg_scalar_width(in->dtype));
  cg_address(rg->cg, in, NULL);
  sbuf_puts(o, ", ");
  red_pack(rg, i, o);
  sbuf_puts(o, ");\n");
}

/* Whether element op i is an f32 division by a row value (ic_div_by: the divisor's
 * reciprocal taken once a row). Only where a thread divides at least
 * RED_DIVIDE_ROW_CHUNKS chunks of a row: the reciprocal and its window (a full division)
 * lie between the row's last combine and its first store, and measured on the H200 they
 * paid off with 8 chunks a thread (FP8 row quantization, 128 threads a row: 76.0% ->
 * 87.8% of copy) but not with 4 (softmax rows of 4096: 95.1% -> 95.0%; rows of 16384,
 * 512 threads a row and 2 rows a multiprocessor: 89.5% -> 80.5%). */
static bool red_divides_by_row(const red_gen *rg, int32_t i) {
  const kir_instr *in = &rg->k->instrs.items[i];
  if (rg->per_thread > 0 && rg->per_thread < RED_DIVIDE_ROW_CHUNKS) return false;
  return in->kind == KIR_OP && in->op == IC_OP_DIV && in->dtype == IC_F32 && rg->element[i] &&
         !rg->element[in->args[1]] && rg->k->instrs.items[in->args[1]].dtype == IC_F32 &&
         rg->k->instrs.items[in->args[0]].dtype == IC_F32;
}

/* After row value j: its reciprocal and window (ic_divisor_prep) where elements divide by it. */
static void red_divisor_prep(red_gen *rg, int32_t j) {
  bool divides = false;
  for (int32_t i = j + 1; i < rg->k->instrs.count && !divides; i++)
    divides = red_divides_by_row(rg, i) && rg->k->instrs.items[i].args[1] == j;
  if (divides)
    sbuf_printf(&rg->cg->out, "  float v%" PRId32 "_y, v%" PRId32 "_lo, v%" PRId32 "_hi;\n  ic_divisor_prep(v%" PRId32
                ", v%" PRId32 "_y, v%" PRId32 "_lo, v%" PRId32 "_hi);\n", j, j, j, j, j, j, j);
}

/* An op's C expression with operands named as red_name does. */
static void red_op_expr(red_gen *rg, int32_t i) {
  const kir_kernel *k = rg->k;
  const kir_instr *in = &k->instrs.items[i];
  kir_instr args[3] = {{0}};
  char names[3][32] = {"", "", ""};
  for (int32_t j = 0; j < in->nargs; j++) {
    args[j] = k->instrs.items[in->args[j]];
    red_name(rg, in->args[j], names[j], sizeof names[j]);
  }
  if (red_divides_by_row(rg, i)) {
    const int32_t s = in->args[1];
    sbuf_printf(&rg->cg->out, "ic_div_by(%s, v%" PRId32 ", v%" PRId32 "_y, v%" PRId32 "_lo, v%" PRId32 "_hi)", names[0], s, s, s, s);
    return;
  }
  if (in->op == IC_OP_WHERE) args[0] = args[1];
  const char *const refs[3] = {names[0], names[1], names[2]};
  cg_op(rg->cg, in, args, refs);
}

/* ---------------------------------------------------------------- a pass over the row */

/* At element e (its reduced vars set): the ranges the pass needs and its loads (only
 * those that go element by element when vector_path: the others moved whole). */
static void red_element_reads(red_gen *rg, const bool *need, const bool *load, bool vector_path) {
  for (int32_t i = 0; i < rg->k->instrs.count; i++) {
    char t[32];
    red_name(rg, i, t, sizeof t);
    if (need[i] && rg->k->instrs.items[i].kind == KIR_RANGE) {
      sbuf_puts(&rg->cg->out, "          ");
      red_range(rg, i, t);
    } else if (load[i] && (!vector_path || rg->cg->mode[i] == ACCESS_ELEMENT)) {
      sbuf_puts(&rg->cg->out, "          ");
      red_scalar_load(rg, i, t);
    }
  }
}

/* Element division i by a row value over a chunk: where the eight dividends are all in the
 * divisor's window (as they are but for zeros, inf, NaN and extreme values), its
 * instructions alone (ic_div_in: no test or branch an element); else each by ic_div_by. */
static void red_chunk_divide(red_gen *rg, int32_t i) {
  sbuf *o = &rg->cg->out;
  const kir_instr *in = &rg->k->instrs.items[i];
  char x[32];
  red_name(rg, in->args[0], x, sizeof x);
  const int32_t s = in->args[1];
  sbuf_printf(o, "      bool v%" PRId32 "_in = true;\n#pragma unroll\n      for (int e = 0; e < 8; e++) v%" PRId32
                 "_in &= ic_div_in_window(%s, v%" PRId32 "_lo, v%" PRId32 "_hi);\n",
              i, i, x, s, s);
  sbuf_printf(o, "      if (v%" PRId32 "_in) {\n#pragma unroll\n        for (int e = 0; e < 8; e++) v%" PRId32
                 "[e] = ic_div_in(%s, v%" PRId32 ", v%" PRId32 "_y);\n      } else {\n",
              i, i, x, s, s);
  sbuf_printf(o, "#pragma unroll\n        for (int e = 0; e < 8; e++) v%" PRId32 "[e] = ", i);
  red_op_expr(rg, i);
  sbuf_puts(o, ";\n      }\n");
  red_cache_keep(rg, i, "      ");
}

/* Element op i, rounded to bf16 or f16, two elements a conversion (ic_rnd2_: F2F is a
 * quarter-rate instruction on sm_90, and ptxas pairs only conversions whose bits it
 * packs): its loop of pairs, after closing the open loop of single elements. False (and
 * nothing written) for an op with no such rounding. */
static bool red_round_pair(red_gen *rg, int32_t i, bool open) {
  codegen *cg = rg->cg;
  const kir_instr *in = &rg->k->instrs.items[i];
  if (!cg_pairs_rounding(in->dtype) || !rg->element[i] || red_divides_by_row(rg, i)) return false;
  sbuf lanes[2] = {{0}, {0}}, saved = cg->out;
  bool left = true;
  for (int l = 0; l < 2; l++) {
    cg->out = lanes[l];
    rg->lane = l ? "e + 1" : "e";
    cg->leave_rounding = true;
    red_op_expr(rg, i);
    left &= !cg->leave_rounding; /* a rounding was left out */
    lanes[l] = cg->out;
  }
  cg->out = saved;
  cg->leave_rounding = false;
  rg->lane = "e";
  if (lanes[0].oom || lanes[1].oom) cg->oom = true;
  const bool paired = left && lanes[0].data && lanes[1].data;
  if (paired) {
    sbuf *o = &cg->out;
    if (open) sbuf_puts(o, "      }\n");
    sbuf_printf(o, "#pragma unroll\n      for (int e = 0; e < 8; e += 2) ic_rnd2_%s(%s, %s, v%" PRId32 "[e], v%" PRId32 "[e + 1]);\n",
                cg_dtname(in->dtype), lanes[0].data, lanes[1].data, i, i);
    red_cache_keep(rg, i, "      ");
  }
  sbuf_free(&lanes[0]);
  sbuf_free(&lanes[1]);
  return paired;
}

/* A chunk's bounds test, or `true` where the chunk is known to lie inside the row. */
static const char *red_in_row(const red_gen *rg, const char *test) { return rg->chunk_inside ? "true" : test; }

/* The test for a chunk's vector accesses: `vec_ok && r0 + 8 <= R`, shorter where known. */
static void red_vector_test(const red_gen *rg, sbuf *o) {
  if (rg->vector_known) sbuf_puts(o, "true");
  else sbuf_printf(o, "vec_ok && %s", red_in_row(rg, "r0 + 8 <= R"));
}

/* The chunk's elements (r0 + e) of the REDUCE at `reduce` into accumulator acc/acc_i. */
static void red_chunk_accumulate(red_gen *rg, int32_t reduce, const char *acc, const char *acc_i) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  const ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  sbuf *o = &rg->cg->out;
  char x[32];
  red_name(rg, in->args[0], x, sizeof x);
  sbuf_printf(o, "#pragma unroll\n      for (int e = 0; e < 8; e++) {\n        if (%s) {\n", red_in_row(rg, "r0 + e < R"));
  sbuf_printf(o, "          const %s x = ", red_acc_type(in->reduce, dt));
  red_lift(o, in->reduce, dt, x);
  sbuf_puts(o, ";\n          const ic_i64 xi = r0 + e;\n          ");
  red_combine(o, in->reduce, dt, acc, acc_i, "x", "xi");
  sbuf_puts(o, "\n          (void)xi;\n        }\n      }\n");
}

/* The chunk at r0 of pass p: element values into arrays, then `then` (the accumulation
 * or the stores) per element. */
static void red_chunk(red_gen *rg, int32_t p, int32_t reduce, const char *acc, const char *acc_i) {
  const kir_kernel *k = rg->k;
  sbuf *o = &rg->cg->out;
  const bool *need = &rg->need[(size_t)p * (size_t)k->instrs.count];
  bool last = p == rg->nreduce;
  sbuf_puts(o, "    {\n      const ic_i64 r0 = c * 8;\n");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (need[i] && in->kind != KIR_STORE) sbuf_printf(o, "      %s v%" PRId32 "[8];\n", cg_ctype(in->dtype), i);
  }
  /* loads the registers hold already */
  bool *load = sys_malloc(sizeof(bool) * ((size_t)k->instrs.count + 1));
  if (!load) {
    rg->cg->oom = true;
    return;
  }
  for (int32_t i = 0; i < k->instrs.count; i++) {
    load[i] = need[i] && k->instrs.items[i].kind == KIR_LOAD && !red_from_cache(rg, p, i);
    if (need[i] && red_from_cache(rg, p, i) && rg->packed[i]) {
      int32_t per_word = 4 / (int32_t)ic_dtype_size(k->instrs.items[i].dtype);
      char word[32];
      snprintf(word, sizeof word, "e / %" PRId32, per_word);
      sbuf_printf(o, "      for (int e = 0; e < 8; e++) v%" PRId32 "[e] = ic_unpack_%s(", i, cg_dtname(k->instrs.items[i].dtype));
      red_cache_at(rg, i, word);
      sbuf_printf(o, " >> (e %% %" PRId32 ") * %d);\n", per_word, 32 / per_word);
    } else if (need[i] && red_from_cache(rg, p, i)) {
      sbuf_printf(o, "      for (int e = 0; e < 8; e++) v%" PRId32 "[e] = ", i);
      red_cache_at(rg, i, "e");
      sbuf_puts(o, ";\n");
    }
  }
  /* loads and ranges */
  bool vec = false;
  for (int32_t i = 0; i < k->instrs.count; i++)
    vec |= ((load[i] || (need[i] && k->instrs.items[i].kind == KIR_STORE))) && rg->cg->mode[i] == ACCESS_VECTOR;
  if (vec) {
    sbuf_puts(o, "      const bool full = ");
    red_vector_test(rg, o);
    sbuf_puts(o, ";\n      if (full) {\n        {\n");
    red_decompose(rg, "r0", "          ");
    for (int32_t i = 0; i < k->instrs.count; i++) {
      const kir_instr *in = &k->instrs.items[i];
      if (!load[i]) continue;
      if (rg->cg->mode[i] == ACCESS_VECTOR) red_vector_load(rg, i);
      if (rg->cg->mode[i] == ACCESS_SPLAT) {
        sbuf_printf(o, "          { %s sv; ", cg_ctype(in->dtype));
        red_scalar_load(rg, i, "sv");
        sbuf_printf(o, "            for (int e = 0; e < 8; e++) v%" PRId32 "[e] = sv; }\n", i);
      }
    }
    sbuf_puts(o, "        }\n#pragma unroll\n        for (int e = 0; e < 8; e++) {\n          const ic_i64 r = r0 + e;\n");
    red_decompose(rg, "r", "          ");
    red_element_reads(rg, need, load, true);
    sbuf_puts(o, "          (void)r;\n        }\n      } else {\n");
  }
  sbuf_printf(o, "#pragma unroll\n      for (int e = 0; e < 8; e++) {\n        const ic_i64 r = r0 + e;\n        if (%s) {\n", red_in_row(rg, "r < R"));
  red_decompose(rg, "r", "          ");
  red_element_reads(rg, need, load, false);
  sbuf_puts(o, "        } else {\n");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if ((need[i] && in->kind == KIR_RANGE) || load[i])
      sbuf_printf(o, "          v%" PRId32 "[e] = (%s)0;\n", i, cg_ctype(in->dtype));
    if (load[i] && rg->packed[i]) {
      sbuf_puts(o, "          ");
      red_keep_bits(rg, i, in->dtype);
      sbuf_puts(o, "0u);\n");
    }
  }
  sbuf_puts(o, "        }\n      }\n");
  if (vec) sbuf_puts(o, "      }\n");
  /* the first pass to read a cached load keeps it */
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (load[i] && !rg->packed[i]) red_cache_keep(rg, i, "      ");
  free(load);
  /* the ops, element by element; an asm runs over the chunk's groups of its pack (the
   * chunk starts a group: the scheduler lets asm into reductions over the last dim only,
   * with packs up to 8), between loops of the ops around it */
  bool open = false;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    kir_kind kind = k->instrs.items[i].kind;
    if (!need[i] || red_from_cache(rg, p, i) || (kind != KIR_OP && kind != KIR_ASM && kind != KIR_ASM_RESULT)) continue;
    if (kind == KIR_ASM) {
      if (open) sbuf_puts(o, "      }\n");
      open = false;
      rg->cg->pack = KIR_REDUCE_CHUNK;
      cg_asm_block(rg->cg, i);
      continue;
    }
    if (red_divides_by_row(rg, i)) {
      if (open) sbuf_puts(o, "      }\n");
      open = false;
      red_chunk_divide(rg, i);
      continue;
    }
    if (kind == KIR_OP && red_round_pair(rg, i, open)) {
      open = false;
      continue;
    }
    if (!open) sbuf_puts(o, "#pragma unroll\n      for (int e = 0; e < 8; e++) {\n");
    open = true;
    sbuf_printf(o, "        v%" PRId32 "[e] = ", i);
    if (kind == KIR_ASM_RESULT) sbuf_printf(o, "a%" PRId32 "_o%" PRId32 "[e]", k->instrs.items[i].args[0], k->instrs.items[i].result);
    else red_op_expr(rg, i);
    sbuf_puts(o, ";\n");
    if (rg->cache_k > 0 && rg->cached[i]) {
      sbuf_puts(o, "        ");
      red_cache_at(rg, i, "e");
      sbuf_printf(o, " = v%" PRId32 "[e];\n", i);
    }
  }
  if (open) sbuf_puts(o, "      }\n");
  if (!last) {
    red_chunk_accumulate(rg, reduce, acc, acc_i);
  } else {
    bool vstores = false;
    for (int32_t i = 0; i < k->instrs.count; i++)
      vstores |= need[i] && k->instrs.items[i].kind == KIR_STORE && rg->cg->mode[i] == ACCESS_VECTOR;
    if (vstores) {
      sbuf_puts(o, "      if (");
      red_vector_test(rg, o);
      sbuf_puts(o, ") {\n        {\n");
      red_decompose(rg, "r0", "          ");
      for (int32_t i = 0; i < k->instrs.count; i++)
        if (need[i] && k->instrs.items[i].kind == KIR_STORE && rg->cg->mode[i] == ACCESS_VECTOR) red_vector_store(rg, i);
      sbuf_puts(o, "        }\n#pragma unroll\n        for (int e = 0; e < 8; e++) {\n          const ic_i64 r = r0 + e;\n");
      red_decompose(rg, "r", "          ");
      for (int32_t i = 0; i < k->instrs.count; i++)
        if (need[i] && k->instrs.items[i].kind == KIR_STORE && rg->cg->mode[i] != ACCESS_VECTOR)
          red_scalar_store(rg, i, "          ");
      sbuf_puts(o, "          (void)r;\n        }\n      } else\n");
    }
    sbuf_printf(o, "#pragma unroll\n      for (int e = 0; e < 8; e++) {\n        const ic_i64 r = r0 + e;\n        if (%s) {\n", red_in_row(rg, "r < R"));
    red_decompose(rg, "r", "          ");
    for (int32_t i = 0; i < k->instrs.count; i++)
      if (need[i] && k->instrs.items[i].kind == KIR_STORE) red_scalar_store(rg, i, "          ");
    sbuf_puts(o, "        }\n      }\n");
  }
  sbuf_puts(o, "    }\n");
}

/* The loop over a lane's chunks (first, first + stride, ...; below C): unrolled over the
 * K chunks of a persistent row, so that the cached values stay in registers. The chunk
 * body follows. */
static void red_chunk_loop(red_gen *rg, const char *first, const char *stride) {
  sbuf *o = &rg->cg->out;
  if (rg->kloop > 0) {
    /* k runs over the thread's lanes (t + q * tpr, q = k % m) and their chunks (each
     * lane's in increasing order: 1024 apart, k / m) */
    int32_t m = rg->lanes_per_thread;
    sbuf_printf(o, "#pragma unroll\n    for (int k = 0; k < %" PRId32 "; k++) {\n"
                   "    const ic_i64 c = %s + (ic_i64)(k %% %" PRId32 ") * %" PRId32 " + (ic_i64)(k / %" PRId32 ") * %d;\n",
                rg->kloop, first, m, rg->tpr, m, KIR_REDUCE_LANES);
    if (rg->chunk_inside && red_count_multiple(rg, KIR_REDUCE_CHUNK)) {
      /* a copy for rows of whole chunks of a constant length: chunks k below `safe` lie
       * inside the row for every thread (t < tpr), and a grid of a block (or a cluster) a
       * row has no block past the last row */
      const int64_t chunks = rg->count / KIR_REDUCE_CHUNK;
      int32_t safe = 0;
      while (safe < rg->kloop &&
             (int64_t)rg->tpr - 1 + (int64_t)(safe % m) * rg->tpr + (int64_t)(safe / m) * KIR_REDUCE_LANES < chunks)
        safe++;
      const bool row_a_block = rg->cluster > 1 || rg->block == rg->tpr;
      sbuf_printf(o, "    if (%s && (k < %" PRId32 " || c < C))\n", row_a_block ? "true" : "live", safe);
    } else {
      sbuf_puts(o, "    if (live && c < C)\n");
    }
  } else {
    sbuf_printf(o, "    for (ic_i64 c = live ? %s : C; c < C; c += %s)\n", first, stride);
  }
}

static void red_chunk_loop_end(red_gen *rg) {
  if (rg->kloop > 0) sbuf_puts(&rg->cg->out, "    }\n");
}

/* Whether pass p reads anything from memory (a load the cache does not hold). */
static bool red_pass_loads(const red_gen *rg, int32_t p) {
  const kir_kernel *k = rg->k;
  const bool *need = &rg->need[(size_t)p * (size_t)k->instrs.count];
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (need[i] && k->instrs.items[i].kind == KIR_LOAD && !red_from_cache(rg, p, i)) return true;
  return false;
}

/* Whether pass p, which reads memory, gets a copy of its chunk loop for aligned rows
 * (vec_ok) of a constant length of whole chunks: no element-by-element path and no bounds
 * tests between its chunks (red_chunk_loop's guards for rows of whole chunks), so that the unrolled chunks are
 * one stretch of code whose loads ptxas issues together. With a test and a branch a chunk,
 * each chunk's loads waited for the one before to be used: a warp had a chunk in flight
 * (softmax rows of 262144 in clusters of 8 CTAs of 128 threads, 8 warps a multiprocessor:
 * 50.7% of copy on an H100). Rows of a block of 512 threads or of a cluster only: few
 * warps share a multiprocessor there; rows of 4096 (many blocks a multiprocessor) read at
 * 97-99% of copy as they are, and the copy took f32 layer norm from 64 to 95 registers. */
static bool red_known_copy(const red_gen *rg, int32_t p) {
  return rg->kloop > 0 && rg->any_vector && red_count_multiple(rg, KIR_REDUCE_CHUNK) && !rg->groups &&
         !rg->columns && rg->k->stage == KIR_STAGE_WHOLE && (rg->cluster > 1 || rg->block >= RED_TIER_BLOCK) &&
         red_pass_loads(rg, p);
}

/* The chunk loop of pass p with its body (red_chunk; acc/acc_i name the accumulator at
 * chunk k, rolled_acc/rolled_acc_i at lane q of the rolled loop). A pass that takes every
 * load from a cache with a shared-memory part, and reads nothing from memory, unrolls only
 * the register chunks and rolls the shared ones (k at run time, the thread's lanes q
 * unrolled): NVRTC then compiles a body a lane instead of one a chunk (softmax rows of
 * 262144: 32 chunks a thread, three passes), and nothing waits on memory in the loop. */
static void red_chunk_loops(red_gen *rg, int32_t p, int32_t reduce, const char *first, const char *stride,
                            const char *acc, const char *acc_i, const char *rolled_acc, const char *rolled_acc_i) {
  sbuf *o = &rg->cg->out;
  const int32_t kr = rg->cache_regs, m = rg->lanes_per_thread;
  if (rg->kloop == 0 || rg->cache_k == 0 || kr >= rg->cache_k || red_pass_loads(rg, p)) {
    red_chunk_loop(rg, first, stride);
    red_chunk(rg, p, reduce, acc, acc_i);
    red_chunk_loop_end(rg);
    return;
  }
  const int32_t kloop = rg->kloop;
  rg->cache_part = RED_CACHE_REGS;
  rg->kloop = kr;
  if (kr > 0) {
    red_chunk_loop(rg, first, stride);
    red_chunk(rg, p, reduce, acc, acc_i);
    red_chunk_loop_end(rg);
  }
  rg->kloop = kloop;
  rg->cache_part = RED_CACHE_SHARED;
  sbuf_printf(o, "#pragma unroll 1\n    for (int k0 = %" PRId32 "; k0 < %" PRId32 "; k0 += %" PRId32 ") {\n#pragma unroll\n"
                 "    for (int q = 0; q < %" PRId32 "; q++) {\n    const int k = k0 + q;\n"
                 "    const ic_i64 c = %s + (ic_i64)q * %" PRId32 " + (ic_i64)(k / %" PRId32 ") * %d;\n    if (live && c < C)\n",
              kr, kloop, m, m, first, rg->tpr, m, KIR_REDUCE_LANES);
  red_chunk(rg, p, reduce, rolled_acc, rolled_acc_i);
  sbuf_puts(o, "    }\n    }\n");
  rg->cache_part = RED_CACHE_BOTH;
}

/* Pass p's chunk loops (red_chunk_loops), and where `copy` before them a copy for aligned
 * rows of whole chunks (vec_ok, R % 8 == 0): vector accesses without an element path, no
 * bounds tests inside the row (red_chunk_loop's guards where R is a constant). */
static void red_chunk_loops_copied(red_gen *rg, int32_t p, int32_t reduce, bool copy, const char *first, const char *stride,
                                   const char *acc, const char *acc_i, const char *rolled_acc, const char *rolled_acc_i) {
  sbuf *o = &rg->cg->out;
  if (copy) {
    sbuf_puts(o, "  if (vec_ok && R % 8 == 0) {\n");
    rg->vector_known = rg->chunk_inside = true;
    red_chunk_loops(rg, p, reduce, first, stride, acc, acc_i, rolled_acc, rolled_acc_i);
    rg->vector_known = rg->chunk_inside = false;
    sbuf_puts(o, "  } else {\n");
  }
  red_chunk_loops(rg, p, reduce, first, stride, acc, acc_i, rolled_acc, rolled_acc_i);
  if (copy) sbuf_puts(o, "  }\n");
}

/* Row kernels' last pass, the element stores (and the loads only it reads). Where it
 * loads vectors of 1- or 2-byte elements, a copy of it serves launches whose buffers are
 * aligned and whose rows are whole chunks (vec_ok, R % 8 == 0: every chunk below C is a
 * full vector): with the vector test a constant, no chunk carries the 8 element loads
 * beside each vector, which ptxas predicates into every chunk (RMS norm's weight: 56
 * predicated-off 2-byte loads a thread, an issue slot each; 4-byte loads kept their
 * branches, and the copy took f32 layer norm from 64 to 80 registers). Rows of a
 * 512-thread block or a cluster whose last pass reads memory take the copy too, with no
 * test between chunks (red_known_copy). */
static void red_stores_pass(red_gen *rg, int32_t p) {
  const kir_kernel *k = rg->k;
  const bool *need = &rg->need[(size_t)p * (size_t)k->instrs.count];
  bool vec = false;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    vec |= need[i] && in->kind == KIR_LOAD && !red_from_cache(rg, p, i) && rg->cg->mode[i] == ACCESS_VECTOR &&
           ic_dtype_size(in->dtype) <= 2;
  }
  red_chunk_loops_copied(rg, p, -1, vec || red_known_copy(rg, p), "t", "(ic_i64)1024", "a", "ai", "a", "ai");
}

/* The top levels of the lanes' tree for a row of a cluster: each CTA's value (its lanes'
 * subtree, in every thread after the block combine) goes to its slot; after a cluster
 * barrier every thread reads the Q slots in rank order and joins them pairwise, which
 * are the tree's last log2 Q levels; a second barrier keeps the slots until every CTA
 * has read them (the next pass writes them again). */
static void red_pairwise(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *arr, const char *arri, int32_t count);
static void red_cluster_combine(red_gen *rg, int32_t reduce, const char *a, const char *ai) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  bool arg = red_arg(in->reduce);
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "    {\n      if (threadIdx.x == 0) { ic_slot_put(&ic_cslot[0], %s);", a);
  if (arg) sbuf_printf(o, " ic_slot_put(&ic_cslot[1], %s);", ai);
  sbuf_printf(o, " }\n      ic_cluster_sync();\n      %s cv[%" PRId32 "]; ic_i64 cvi[%" PRId32 "];\n", t, rg->cluster, rg->cluster);
  sbuf_printf(o, "#pragma unroll\n      for (int q = 0; q < %" PRId32 "; q++) {\n        cv[q] = ic_slot_get<%s>(&ic_cslot[0], (ic_u32)q);\n",
              rg->cluster, t);
  sbuf_printf(o, "        cvi[q] = %s;\n      }\n", arg ? "ic_slot_get<ic_i64>(&ic_cslot[1], (ic_u32)q)" : "0");
  red_pairwise(o, in->reduce, dt, "cv", "cvi", rg->cluster);
  sbuf_printf(o, "      %s = cv[0];\n      %s = cvi[0];\n      ic_cluster_sync();\n    }\n", a, ai);
}

/* The lanes of a row combine: butterflies in the warp, then across the warps (then across
 * the CTAs of a cluster). */
static void red_block_combine(red_gen *rg, int32_t reduce, const char *a, const char *ai) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  bool arg = red_arg(in->reduce);
  sbuf *o = &rg->cg->out;
  const int32_t span = rg->cluster > 1 ? rg->block : rg->tpr; /* the threads whose lanes the block joins */
  int32_t warp_lanes = span < 32 ? span : 32;
  if (warp_lanes > 1) red_butterflies(o, "    ", in->reduce, dt, a, ai, warp_lanes);
  if (span <= 32) return;
  int32_t warps = span / 32;
  sbuf_printf(o, "    {\n      %s *const sa = (%s *)ic_smem;\n", t, t);
  if (arg) sbuf_puts(o, "      ic_i64 *const sai = (ic_i64 *)(ic_smem + 32);\n");
  sbuf_puts(o, "      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n");
  sbuf_printf(o, "      if (lane == 0) { sa[warp] = %s;", a);
  if (arg) sbuf_printf(o, " sai[warp] = %s;", ai);
  sbuf_printf(o, " }\n      __syncthreads();\n      if (warp == 0) {\n        %s = ", a);
  sbuf_printf(o, "lane < %" PRId32 " ? sa[lane] : ", warps);
  red_identity(o, in->reduce, dt);
  sbuf_puts(o, ";\n");
  if (arg) sbuf_printf(o, "        %s = lane < %" PRId32 " ? sai[lane] : (ic_i64)9223372036854775807ll;\n", ai, warps);
  red_butterflies(o, "        ", in->reduce, dt, a, ai, warps);
  sbuf_printf(o, "        if (lane == 0) { sa[0] = %s;", a);
  if (arg) sbuf_printf(o, " sai[0] = %s;", ai);
  sbuf_printf(o, " }\n      }\n      __syncthreads();\n      %s = sa[0];\n", a);
  if (arg) sbuf_printf(o, "      %s = sai[0];\n", ai);
  sbuf_puts(o, "      __syncthreads();\n    }\n");
  if (rg->cluster > 1) red_cluster_combine(rg, reduce, a, ai);
}

/* The pairwise tree over count accumulators arr[0..count) (and their indices arri): 2i
 * with 2i+1 first, then pairs of pairs; the result in arr[0]. */
static void red_pairwise(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *arr, const char *arri, int32_t count) {
  char a[24], ai[24], b[32], bi[32];
  snprintf(a, sizeof a, "%s[q]", arr);
  snprintf(ai, sizeof ai, "%s[q]", arri);
  snprintf(b, sizeof b, "%s[q + s]", arr);
  snprintf(bi, sizeof bi, "%s[q + s]", arri);
  sbuf_printf(o, "    for (int s = 1; s < %" PRId32 "; s <<= 1)\n      for (int q = 0; q + s < %" PRId32 "; q += 2 * s) {\n        ",
              count, count);
  red_combine(o, op, dt, a, ai, b, bi);
  sbuf_puts(o, "\n      }\n");
}

/* Whether red_block_combine_scattered serves m lane blocks: several warps a row (a block
 * is one row), every (block, warp) pair fits one warp's lanes, and eight blocks or more.
 * Measured on the H200 against the plain butterflies (ic-bench reductions, two runs
 * each): 8 blocks, RMS norm bf16 87.0% -> 90.1% of copy, FP8 row quantization 87.7% ->
 * 89.2%; 4 blocks (f32 rows of 4096), softmax 95.5% -> 93.7% and layer norm 93.8% ->
 * 92.4% (softmax took 64 registers where it had 56). */
static bool red_scatter_fits(const red_gen *rg, int32_t m) {
  return rg->tpr > 32 && m >= 8 && m <= 32 && rg->tpr / 32 * m <= 32;
}

/* red_block_combine_many by scattering: the same tree in fewer shuffles. At butterfly
 * distance o = 1, 2, ... while a thread holds n > 1 blocks, it keeps half of them (the
 * upper half where bit o of its lane is set), sends its partner the other half and joins
 * what the partner sends: n/2 shuffles a level instead of n, every pair of the tree
 * joined. The upper lane's thread joins a pair as (upper, lower): every combine is
 * commutative to the bit (f32 NaNs are canonical), as rows of a warp or less, whose every
 * lane keeps its own butterflies' result, already assume. A lane ends with one block,
 * q = its first log2(m) bits reversed; the warp's other levels are plain butterflies.
 * Lanes 0..m-1 of each warp store their block's sum; warp 0 then holds (block q, warp w)
 * at lane q * warps + w: butterflies below distance `warps` are the warps' tree, those
 * from `warps` up the blocks' pairwise tree. */
static void red_block_combine_scattered(red_gen *rg, int32_t reduce, int32_t m) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  bool arg = red_arg(in->reduce);
  sbuf *o = &rg->cg->out;
  int32_t warps = rg->tpr / 32, dist = 1;
  sbuf_puts(o, "    {\n      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n");
  for (int32_t n = m; n > 1; n /= 2, dist *= 2) {
    int32_t half = n / 2;
    sbuf_printf(o, "      {\n        const bool up = (lane & %" PRId32 ") != 0;\n#pragma unroll\n"
                   "        for (int j = 0; j < %" PRId32 "; j++) {\n", dist, half);
    sbuf_printf(o, "          const %s keep = up ? am[j + %" PRId32 "] : am[j], x = ic_bfly(up ? am[j] : am[j + %" PRId32
                   "], %" PRId32 ");\n", t, half, half, dist);
    if (arg)
      sbuf_printf(o, "          const ic_i64 keepi = up ? ami[j + %" PRId32 "] : ami[j], xi = ic_bfly(up ? ami[j] : ami[j + %" PRId32
                     "], %" PRId32 ");\n", half, half, dist);
    else
      sbuf_puts(o, "          const ic_i64 keepi = 0, xi = 0;\n");
    sbuf_puts(o, "          am[j] = keep; ami[j] = keepi; ");
    red_combine(o, in->reduce, dt, "am[j]", "ami[j]", "x", "xi");
    sbuf_puts(o, "\n          (void)keepi; (void)xi;\n        }\n      }\n");
  }
  sbuf_printf(o, "      for (int o = %" PRId32 "; o < 32; o <<= 1) {\n        const %s x = ic_bfly(am[0], o);\n", dist, t);
  sbuf_puts(o, arg ? "        const ic_i64 xi = ic_bfly(ami[0], o);\n" : "        const ic_i64 xi = 0;\n");
  sbuf_puts(o, "        ");
  red_combine(o, in->reduce, dt, "am[0]", "ami[0]", "x", "xi");
  sbuf_puts(o, "\n        (void)xi;\n      }\n");
  /* lane l < m holds block q(l): l's bit s is q's bit log2(m) - 1 - s */
  sbuf_printf(o, "      %s *const sa = (%s *)ic_smem;\n", t, t);
  if (arg) sbuf_puts(o, "      ic_i64 *const sai = (ic_i64 *)(ic_smem + 32);\n");
  sbuf_printf(o, "      if (lane < %" PRId32 ") {\n        int q = 0;\n        for (int b = 1; b < %" PRId32 "; b <<= 1) q = q * 2 + ((lane & b) != 0);\n"
                 "        sa[q * %" PRId32 " + warp] = am[0];\n", m, m, warps);
  if (arg) sbuf_printf(o, "        sai[q * %" PRId32 " + warp] = ami[0];\n", warps);
  sbuf_puts(o, "      }\n      __syncthreads();\n");
  sbuf_printf(o, "      if (warp == 0) {\n        a = lane < %" PRId32 " ? sa[lane] : ", m * warps);
  red_identity(o, in->reduce, dt);
  sbuf_puts(o, ";\n");
  if (arg) sbuf_printf(o, "        ai = lane < %" PRId32 " ? sai[lane] : (ic_i64)9223372036854775807ll;\n", m * warps);
  red_butterflies(o, "        ", in->reduce, dt, "a", "ai", m * warps);
  sbuf_printf(o, "        if (lane == 0) { sa[0] = a;%s }\n      }\n      __syncthreads();\n      a = sa[0];\n",
              arg ? " sai[0] = ai;" : "");
  if (arg) sbuf_puts(o, "      ai = sai[0];\n");
  sbuf_puts(o, "      __syncthreads();\n    }\n");
}

/* red_block_combine for m lane blocks at once (accumulators am[q]/ami[q]), then the
 * blocks pair up into a/ai: the warp butterflies of each block, one shared-memory round
 * across the warps for all of them. */
static void red_block_combine_many(red_gen *rg, int32_t reduce, int32_t m) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  bool arg = red_arg(in->reduce);
  sbuf *o = &rg->cg->out;
  int32_t warp_lanes = rg->tpr < 32 ? rg->tpr : 32;
  if (warp_lanes > 1) {
    sbuf_printf(o, "#pragma unroll\n    for (int q = 0; q < %" PRId32 "; q++)\n", m);
    red_butterflies(o, "    ", in->reduce, dt, "am[q]", "ami[q]", warp_lanes);
  }
  if (rg->tpr > 32) {
    int32_t warps = rg->tpr / 32;
    sbuf_printf(o, "    {\n      %s (*const sa)[32] = (%s (*)[32])ic_smem;\n", t, t);
    if (arg) sbuf_printf(o, "      ic_i64 (*const sai)[32] = (ic_i64 (*)[32])(ic_smem + %" PRId32 ");\n", m * 32);
    sbuf_puts(o, "      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n");
    sbuf_printf(o, "      if (lane == 0)\n        for (int q = 0; q < %" PRId32 "; q++) { sa[q][warp] = am[q];%s }\n", m,
                arg ? " sai[q][warp] = ami[q];" : "");
    sbuf_puts(o, "      __syncthreads();\n      if (warp == 0) {\n");
    sbuf_printf(o, "#pragma unroll\n        for (int q = 0; q < %" PRId32 "; q++) {\n          am[q] = lane < %" PRId32 " ? sa[q][lane] : ", m, warps);
    red_identity(o, in->reduce, dt);
    sbuf_puts(o, ";\n");
    if (arg) sbuf_printf(o, "          ami[q] = lane < %" PRId32 " ? sai[q][lane] : (ic_i64)9223372036854775807ll;\n", warps);
    red_butterflies(o, "          ", in->reduce, dt, "am[q]", "ami[q]", warps);
    sbuf_puts(o, "        }\n");
  }
  red_pairwise(o, in->reduce, dt, "am", "ami", m);
  sbuf_puts(o, "    a = am[0];\n    ai = ami[0];\n");
  if (rg->tpr > 32) {
    sbuf_printf(o, "        if (lane == 0) { sa[0][0] = a;%s }\n      }\n      __syncthreads();\n      a = sa[0][0];\n",
                arg ? " sai[0][0] = ai;" : "");
    if (arg) sbuf_puts(o, "      ai = sai[0][0];\n");
    sbuf_puts(o, "      __syncthreads();\n    }\n");
  }
}

/* The push of accumulator a/ai onto the binary counter st/sti/sh/n: equal heights merge,
 * left (earlier lanes) first. */
static void red_counter_push(sbuf *o, ic_reduce_op op, ic_dtype dt, int height) {
  sbuf_printf(o, "    st[n] = a; sti[n] = ai; sh[n] = %d; n++;\n    while (n >= 2 && sh[n - 1] == sh[n - 2]) {\n      ", height);
  red_combine(o, op, dt, "st[n - 2]", "sti[n - 2]", "st[n - 1]", "sti[n - 1]");
  sbuf_puts(o, "\n      sh[n - 2]++; n--;\n    }\n");
}

static void red_counter_collapse(sbuf *o, ic_reduce_op op, ic_dtype dt) {
  sbuf_puts(o, "  while (n >= 2) {\n    ");
  red_combine(o, op, dt, "st[n - 2]", "sti[n - 2]", "st[n - 1]", "sti[n - 1]");
  sbuf_puts(o, "\n    n--;\n  }\n");
}

/* The row value of REDUCE `in` from accumulator a/ai: the mean's division, the sum of
 * nothing (+0), one rounding to the result dtype. */
static void red_finish(red_gen *rg, int32_t reduce) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "    v%" PRId32 " = ", reduce);
  bool rounds = cg_rounds(in->dtype) && red_arith(in->reduce);
  if (rounds) sbuf_printf(o, "ic_rnd_%s(", cg_dtname(in->dtype));
  bool is_float = strcmp(t, "float") == 0, is_double = strcmp(t, "double") == 0;
  switch (in->reduce) {
  case IC_REDUCE_SUM:
    if (is_float || is_double) sbuf_printf(o, "R == 0 ? (%s)0 : a", t);
    else sbuf_puts(o, "a");
    break;
  case IC_REDUCE_MEAN: {
    uint64_t bits;
    memcpy(&bits, &in->value, sizeof bits);
    sbuf_printf(o, "ic_div(a, (%s)fmax((double)R - __longlong_as_double(0x%016" PRIx64 "ll), 0.0))", t, bits);
    break;
  }
  case IC_REDUCE_ARGMAX: case IC_REDUCE_ARGMIN: sbuf_puts(o, "ai"); break;
  default: sbuf_puts(o, "a"); break;
  }
  if (rounds) sbuf_puts(o, ")");
  sbuf_puts(o, ";\n    (void)ai;\n");
}

/* The lanes warp y of a column kernel stores the elements of: [lane0, lane1), a contiguous
 * share of the lanes in use (no order matters there), and the loop over them. */
static void red_column_lanes(red_gen *rg) {
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "  for (ic_i64 j = live ? lane0 : lane1; j < lane1; j++) {\n");
}

/* The start of the pass of the REDUCE at instruction `reduce` (the p-th): its row value
 * v<reduce> declared, a scope opened; the operand's dtype and the accumulator type. */
static const kir_instr *red_pass_begin(red_gen *rg, int32_t p, int32_t reduce, ic_dtype *dt, const char **t) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  *dt = rg->k->instrs.items[in->args[0]].dtype;
  *t = red_acc_type(in->reduce, *dt);
  sbuf_printf(&rg->cg->out, "  /* pass %" PRId32 ": %s */\n  %s v%" PRId32 ";\n  {\n", p, ic_reduce_name(in->reduce),
              cg_ctype(in->dtype), reduce);
  return in;
}

/* The pass of the REDUCE at instruction `reduce` (the p-th): its row value v<reduce>. */
static void red_pass(red_gen *rg, int32_t p, int32_t reduce) {
  ic_dtype dt;
  const char *t;
  const kir_instr *in = red_pass_begin(rg, p, reduce, &dt, &t);
  sbuf *o = &rg->cg->out;
  if (rg->groups) {
    sbuf_printf(o, "  %s st[40]; ic_i64 sti[40]; int sh[40], n = 0;\n  for (ic_i64 g = 0; g < G; g++) {\n", t);
  } else {
    sbuf_puts(o, "  {\n    const ic_i64 g = 0;\n");
  }
  int32_t m = rg->lanes_per_thread;
  red_acc_decl(o, "    ", in->reduce, dt);
  if (m > 1) {
    sbuf_printf(o, "    %s am[%" PRId32 "]; ic_i64 ami[%" PRId32 "];\n    for (int q = 0; q < %" PRId32 "; q++) { am[q] = a; ami[q] = ai; }\n",
                t, m, m, m);
  }
  char acc[32], acc_i[32];
  snprintf(acc, sizeof acc, "am[k %% %" PRId32 "]", m);
  snprintf(acc_i, sizeof acc_i, "ami[k %% %" PRId32 "]", m);
  red_chunk_loops_copied(rg, p, reduce, red_known_copy(rg, p), "g * 1024 + t", "L", m > 1 ? acc : "a", m > 1 ? acc_i : "ai",
                         m > 1 ? "am[q]" : "a", m > 1 ? "ami[q]" : "ai");
  if (m > 1) {
    /* each lane block combines (the butterflies per block, one shared-memory round for
     * all of them), then the blocks pair up */
    if (red_scatter_fits(rg, m)) red_block_combine_scattered(rg, reduce, m);
    else red_block_combine_many(rg, reduce, m);
  } else {
    red_block_combine(rg, reduce, "a", "ai");
  }
  if (rg->groups) {
    red_counter_push(o, in->reduce, dt, 0);
    sbuf_puts(o, "  }\n");
    red_counter_collapse(o, in->reduce, dt);
    sbuf_printf(o, "  {\n    const %s a = st[0];\n    const ic_i64 ai = sti[0];\n", t);
  }
  red_finish(rg, reduce);
  sbuf_puts(o, "  }\n  }\n");
}

/* The partial stage's pass (kir_split_wanted): lanes u * 256 + t of the row, their tree,
 * stored as partial u of the row. */
static void red_column_partial(red_gen *rg, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t);

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

/* The combine stage's pass: thread t combines an aligned power-of-two share of the row's
 * U partials by a binary counter (the pairwise tree), then the threads pair up. */
static void red_pass_combine(red_gen *rg, int32_t reduce) {
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

/* Whether element load i of a packed column kernel reads along the columns (a kept var:
 * kir_column_pack_of lets only the innermost, with coefficient 1, and others alongside
 * it): one load for the thread's P columns. The others read no kept var: one for all. */
static bool red_pack_reads_columns(const red_gen *rg, int32_t i) { return kir_reads_kept_var(rg->k, rg->k->instrs.items[i].offset); }

/* `const bool pack_ok`: a packed kernel's P columns are neighbours in one run of the
 * innermost kept dim (its size a multiple of P) and each load along them finds its P
 * values in one aligned word (a buffer so aligned, every other coefficient of its offset
 * and its constant part multiples of P); uniform over the launch. */
static void red_pack_test(red_gen *rg) {
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
static void red_chunk_pack(red_gen *rg, int32_t p, int32_t reduce, const char *acc, const char *acc_i) {
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
static void red_column_round(red_gen *rg, int32_t p, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t,
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
static int32_t red_round_height(int32_t w) {
  int32_t height = 3;
  for (int32_t q = w; q > 1; q /= 2) height++;
  return height;
}

/* Joins a round's W warp subtrees (am[cp][0] of each warp, for each of the thread's P
 * columns; light kernels, no index) through shared memory xa (xa[slot][cp * 32 + colx]) at
 * slot offset buf ("" or "buf + "): wv[cp][0] is column cp's round subtree. */
static void red_column_join_warps(sbuf *o, const kir_instr *in, ic_dtype dt, const char *t, int32_t w, int32_t pk, const char *buf) {
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
 * bench/results/2026-12-06-session10.md). The W subtrees of a round join through shared
 * memory (double-buffered: one barrier a round) into the round's subtree, which every warp
 * pushes on its own copy of column cp's counter. The last round is padded with the
 * identity, which changes no bits. Each column's result goes to pa[cp] (pai[cp]). */
static void red_column_rounds(red_gen *rg, int32_t p, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t) {
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

/* A split column reduction's combine stage: a thread a column loads its U partials 32 at a
 * time, joins each batch in the pairwise tree (partials past U hold the identity, as lanes
 * past the last chunk do) and pushes the batch's subtree on the binary counter at the
 * height of 32 rounds. Batches start at multiples of 32, so each is the counter's own
 * subtree and the bits are those of pushing the partials one by one; the 32 loads are in
 * flight together (one at a time, a column of 32 partials had waited out 32 latencies). */
static void red_column_combine(red_gen *rg, const kir_instr *in, ic_dtype dt, const char *t) {
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

/* A column pass: light kernels in rounds side by side, heavy ones in contiguous shares
 * (kir_reduce_strategy's column_rounds), a split's combine over its partials; all compute
 * the lanes' one tree. */
static void red_pass_columns(red_gen *rg, int32_t p, int32_t reduce) {
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

/* ---------------------------------------------------------------- persistent rows */

/* Whether a cached load keeps its storage words rather than values: a narrow dtype whose
 * values would take more than half the register budget (measured on the H200: bf16 rows
 * of 8192, 8 chunks a thread, gain 62.7% -> 71% of copy; rows of 4096, 4 chunks, lose
 * 89% -> 79% to the unpacking). */
static bool red_packs(const red_gen *rg, int32_t i, int32_t per_thread) {
  const kir_instr *in = &rg->k->instrs.items[i];
  return in->kind == KIR_LOAD && ic_dtype_size(in->dtype) < 4 && !kir_is_guarded_load(in) &&
         rg->cg->mode[i] != ACCESS_SPLAT && per_thread * KIR_REDUCE_CHUNK > RED_CACHE_VALUES / 2;
}

/* A cached chunk of dt: its entries (8 values, or the storage words when packed), as
 * the register budget counts them; the registers they take (two a value of 8 bytes);
 * their bytes in the shared-memory tier. */
static int32_t red_chunk_values(ic_dtype dt, bool packed) { return packed ? red_words(dt) : KIR_REDUCE_CHUNK; }
static int32_t red_value_bytes(ic_dtype dt) {
  const char *t = cg_ctype(dt);
  return strcmp(t, "bool") == 0 ? 1 : strcmp(t, "double") == 0 || strcmp(t, "ic_i64") == 0 ? 8 : 4;
}
static int32_t red_chunk_regs(ic_dtype dt, bool packed) {
  return packed ? red_words(dt) : KIR_REDUCE_CHUNK * (red_value_bytes(dt) == 8 ? 2 : 1);
}
static int32_t red_chunk_bytes(ic_dtype dt, bool packed) { return packed ? 4 * red_words(dt) : KIR_REDUCE_CHUNK * red_value_bytes(dt); }

/* A chunk of every load read again (later): the registers and the shared-memory bytes
 * the tier's cache takes for it; false when there is none. */
static bool red_tier_chunk(const red_gen *rg, const bool *later, int32_t per_thread, int32_t *chunk_regs, int32_t *bytes) {
  *chunk_regs = *bytes = 0;
  for (int32_t i = 0; i < rg->k->instrs.count; i++) {
    const kir_instr *in = &rg->k->instrs.items[i];
    if (!later[i] || in->kind != KIR_LOAD) continue;
    *chunk_regs += red_chunk_regs(in->dtype, red_packs(rg, i, per_thread));
    *bytes += red_chunk_bytes(in->dtype, red_packs(rg, i, per_thread));
  }
  return *chunk_regs > 0;
}

/* The tier's cache for blocks of `threads` threads, `blocks` of them a multiprocessor
 * (fixed: each one's static shared memory and the system's share): the thread's first
 * chunks, whole lanes of them, in `values` registers (chunk_regs a chunk), the rest in
 * dynamic shared memory (bytes a chunk). Taken (every load read again cached) when the
 * shared part is in the target's limits; false, nothing changed, when not, or when
 * `shared` and the registers hold the whole cache. */
static bool red_tier_take(red_gen *rg, const bool *later, int32_t per_thread, int32_t threads, int32_t blocks,
                          int32_t values, int64_t fixed, bool shared) {
  int32_t chunk_regs, bytes;
  if (!red_tier_chunk(rg, later, per_thread, &chunk_regs, &bytes)) return false;
  int32_t regs = values / chunk_regs;
  if (regs > per_thread) regs = per_thread;
  regs -= regs % rg->lanes_per_thread; /* whole lanes (red_chunk_loops' rolled loop) */
  const int64_t smem = (int64_t)(per_thread - regs) * threads * bytes;
  if ((shared && smem == 0) || smem > rg->cg->smem.block || blocks * (smem + fixed) > rg->cg->smem.sm) return false;
  for (int32_t i = 0; i < rg->k->instrs.count; i++) {
    rg->cached[i] = later[i] && rg->k->instrs.items[i].kind == KIR_LOAD;
    rg->packed[i] = rg->cached[i] && red_packs(rg, i, per_thread);
  }
  rg->cache_regs = regs;
  rg->smem = (int32_t)smem;
  rg->min_blocks = blocks;
  return true;
}

/* The static shared memory of a row kernel: the combine's block (red_kernel declares it). */
static int32_t red_static_smem(const red_gen *rg) {
  /* columns in rounds: each warp's round subtree, double-buffered, values and indices of 8
   * bytes (light kernels: accumulators of at most 4 bytes and no index, so the P <= 4
   * subtrees of a packed thread fit too) */
  if (rg->columns && rg->column_rounds && rg->ywarps > 1) return 2 * 2 * 32 * 8 * rg->ywarps * rg->colgroups;
  if (rg->columns) return 64 * 8 * rg->ywarps * rg->colgroups; /* red_column_shares' warps, values and indices */
  int32_t slots = rg->lanes_per_thread;
  return 64 * 8 * (slots > 1 ? slots : 1);
}

/* The shared-memory tier for the cached loads of a one-block row (rg->block threads)
 * whose registers cannot hold them with room for a second block on the multiprocessor:
 * the first chunks in registers, the rest in dynamic shared memory. Rows of 32000 f32
 * (8 chunks a thread of 512) took 98 registers, one block a multiprocessor, whose load,
 * reduce and store phases then follow each other (log_softmax [8192, 32000]: 65% of copy
 * on the H200, where rows of 16384 at 52 registers and two blocks read at 92%). With 4
 * chunks in registers and 4 (64 KB) in shared memory two blocks fit. Where two cannot
 * and the registers leave loads out (`left`: longer rows), one block keeps
 * RED_CACHE_VALUES values in registers and the rest in shared memory, so the row is read
 * from memory once rather than once a pass. False (nothing changed) where the loads do
 * not fit the target's shared memory. */
static bool red_plan_smem_tier(red_gen *rg, const bool *later, int32_t per_thread, bool left) {
  const int64_t fixed = red_static_smem(rg) + CUDA_SMEM_RESERVED;
  return red_tier_take(rg, later, per_thread, rg->block, 2, RED_CACHE_VALUES / 2, fixed, true) ||
         (left && red_tier_take(rg, later, per_thread, rg->block, 1, RED_CACHE_VALUES, fixed, true));
}

/* Rows of 8193 to 32768 chunks (65537 to 262144 elements) are a block of 1024 threads, a
 * lane each, whose loads no multiprocessor holds: every pass read the row from memory
 * again (softmax rows of 262144 f32: 48% of copy on the H200, three reads of 1 MiB a row,
 * 256 rows against an L2 of 50 MiB). On sm_90 such a row becomes a cluster of Q CTAs of
 * 1024 / Q threads: CTA q holds lanes [q 1024/Q, (q + 1) 1024/Q) and keeps their loads as
 * the shared-memory tier does (registers, then dynamic shared memory), so the row is read
 * once. The lanes' tree does not change: each CTA's lanes are an aligned subtree, combined
 * as a block's, and the top log2 Q levels join the CTAs' values through distributed shared
 * memory (red_cluster_combine), the same bits in every CTA. Q is the smallest of 2, 4, 8
 * that lets two CTAs share a multiprocessor (65536 / 2T registers a thread: a cache of 32
 * values at T = 512, 64 below); none where even 8 do not fit (the row stays as it was). */
static bool red_plan_cluster(red_gen *rg, const bool *later, int32_t per_thread) {
  const int64_t fixed = red_static_smem(rg) + RED_CLUSTER_SLOTS + CUDA_SMEM_RESERVED;
  for (int32_t q = 2; q <= RED_CLUSTER_MAX; q *= 2) {
    const int32_t threads = KIR_REDUCE_LANES / q;
    if (!red_tier_take(rg, later, per_thread, threads, 2, threads >= 512 ? RED_CACHE_VALUES / 2 : RED_CACHE_VALUES, fixed,
                       false))
      continue;
    rg->cluster = q;
    rg->block = threads;
    return true;
  }
  return false;
}

/* Element values that several passes read: loads first, then ops, while the thread's
 * registers allow (per_thread chunks of 8 values each), or the loads alone in the
 * shared-memory tier (red_plan_smem_tier) for a row of one block that would take more.
 * Later passes take them from the cache (red_cache_at) and need nothing they were
 * computed from (the needs are cut there). */
static void red_plan_cache(red_gen *rg, int32_t per_thread) {
  const kir_kernel *k = rg->k;
  int32_t n = k->instrs.count, values = 0;
  bool *later = sys_calloc((size_t)n + 1, sizeof(bool));
  if (!later) {
    rg->cg->oom = true;
    return;
  }
  for (int32_t i = 0; i < n; i++) {
    rg->first_pass[i] = -1;
    for (int32_t p = 0; p <= rg->nreduce && rg->first_pass[i] < 0; p++)
      if (rg->need[(size_t)p * (size_t)n + (size_t)i]) rg->first_pass[i] = p;
    for (int32_t p = rg->first_pass[i] + 1; rg->first_pass[i] >= 0 && p <= rg->nreduce; p++)
      later[i] |= rg->need[(size_t)p * (size_t)n + (size_t)i];
    later[i] = later[i] && rg->element[i];
  }
  bool left = false; /* a load read again that the registers do not hold */
  for (int pick = 0; pick < 2; pick++) { /* loads, then ops */
    for (int32_t i = 0; i < n; i++) {
      const kir_instr *in = &k->instrs.items[i];
      if (!later[i] || in->kind != (pick == 0 ? KIR_LOAD : KIR_OP)) continue;
      bool packed = red_packs(rg, i, per_thread);
      int32_t regs = per_thread * red_chunk_values(in->dtype, packed);
      if (values + regs > RED_CACHE_VALUES) {
        left = left || in->kind == KIR_LOAD;
        continue;
      }
      rg->cached[i] = true;
      rg->packed[i] = packed;
      values += regs;
    }
  }
  rg->cache_regs = per_thread;
  const bool more = values > RED_CACHE_VALUES / 2 || left;
  const bool tier = more && ((rg->block == RED_TIER_BLOCK && red_plan_smem_tier(rg, later, per_thread, left)) ||
                             (rg->tpr == KIR_REDUCE_LANES && rg->lanes_per_thread == 1 && rg->cg->sm >= 90 &&
                              red_plan_cluster(rg, later, per_thread)));
  free(later);
  if (values == 0 && !tier) return;
  rg->cache_k = per_thread;
  /* the needs of each later pass stop at the values it takes from the cache */
  int32_t *kept_from = sys_malloc(sizeof(int32_t) * ((size_t)n + 1));
  if (!kept_from) {
    rg->cg->oom = true;
    return;
  }
  for (int32_t i = 0; i < n; i++) kept_from[i] = rg->cached[i] ? rg->first_pass[i] : INT32_MAX;
  kir_pass_needs(k, rg->element, kept_from, rg->need);
  free(kept_from);
}

/* ---------------------------------------------------------------- the kernel */

static void red_row_instr(red_gen *rg, int32_t i) {
  const kir_kernel *k = rg->k;
  const kir_instr *in = &k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  char t[40];
  snprintf(t, sizeof t, "const %s v%" PRId32, cg_ctype(in->dtype), i);
  switch (in->kind) {
  case KIR_LOAD: sbuf_puts(o, "  "); red_scalar_load(rg, i, t); break;
  case KIR_RANGE: sbuf_puts(o, "  "); red_range(rg, i, t); break;
  case KIR_CONST:
    sbuf_printf(o, "  %s = ", t);
    cg_const(rg->cg, in);
    sbuf_puts(o, ";\n");
    break;
  case KIR_OP:
    sbuf_printf(o, "  %s = ", t);
    red_op_expr(rg, i);
    sbuf_puts(o, ";\n");
    break;
  case KIR_STORE:
    sbuf_puts(o, "  if (live && t == 0) {\n");
    red_scalar_store(rg, i, "    ");
    sbuf_puts(o, "  }\n");
    break;
  case KIR_ASM: /* a row value: the scheduler allows pack 1 only there */
    rg->cg->pack = 1;
    cg_asm_block(rg->cg, i);
    break;
  case KIR_ASM_RESULT:
    sbuf_printf(o, "  %s = a%" PRId32 "_o%" PRId32 ";\n", t, in->args[0], in->result);
    break;
  case KIR_REDUCE: break;
  }
  if (in->kind != KIR_STORE && in->kind != KIR_REDUCE && in->kind != KIR_ASM) red_divisor_prep(rg, i);
}

/* The partial stage's body: the row values its one pass reads, the pass. */
static void red_kernel_partial(red_gen *rg) {
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

static void red_kernel(red_gen *rg) {
  const kir_kernel *k = rg->k;
  codegen *cg = rg->cg;
  sbuf *o = &cg->out;
  /* a column kernel says one block of 1024 threads a multiprocessor (a split's partial two
   * of 512): ptxas then takes the registers that keep a round's loads in flight (light
   * kernels: 64 registers, 46 of the 64 loads before the first add; without the bound it
   * picked 32 for two blocks, 15 in flight, and read at 88% of copy where 38 in flight read
   * at 92%, H100) */
  const int32_t column_blocks = rg->block < 1024 && k->stage == KIR_STAGE_PARTIAL ? 1024 / rg->block : 1;
  cg_kernel_head(cg, rg->block, rg->columns ? column_blocks : rg->min_blocks > 1 ? rg->min_blocks : 0, rg->cluster);
  sbuf_puts(o, "  const ic_i64 R = (ic_i64)1");
  for (int32_t d = 0; d < k->ndim; d++)
    if (red_reduced(k, d)) sbuf_printf(o, " * d%" PRId32, d);
  sbuf_puts(o, ";\n  const ic_i64 rows = (ic_i64)1");
  for (int32_t d = 0; d < k->ndim; d++)
    if (!red_reduced(k, d)) sbuf_printf(o, " * d%" PRId32, d);
  sbuf_printf(o, ";\n  const ic_i64 C = (R + 7) / 8;\n  const ic_i64 G = C > %d ? (C + %d) / %d : 1;\n",
              KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS, KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS - 1, KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS);
  sbuf_printf(o, "  const ic_i64 L = (ic_i64)%d * G;\n  (void)G;\n", KIR_REDUCE_LANES);
  if (rg->columns) {
    /* lanes in use, their power-of-two cover, warp y's share */
    /* warp w is group colg's warp coly; the group's combine uses smem rows cbase.. */
    sbuf_printf(o, "  const int colx = (int)(threadIdx.x & 31), colg = (int)(threadIdx.x >> 5) / %" PRId32
                   ", coly = (int)(threadIdx.x >> 5) %% %" PRId32 ", t = coly, cbase = colg * %" PRId32 ";\n  (void)cbase;\n",
                rg->ywarps, rg->ywarps, rg->ywarps);
    if (k->stage == KIR_STAGE_PARTIAL) {
      /* a split's partials: block (b, u), round u of column block b (kir_split_partial_numel) */
      sbuf_printf(o, "  const ic_i64 cblocks = (rows + %" PRId32 ") / %" PRId32 ", u = (ic_i64)blockIdx.x / cblocks;\n",
                  32 * rg->colgroups * rg->pack - 1, 32 * rg->colgroups * rg->pack);
      sbuf_printf(o, "  const ic_i64 row_in = (((ic_i64)blockIdx.x %% cblocks) * %" PRId32 " + colg * 32 + colx) * %" PRId32 ";\n",
                  32 * rg->colgroups, rg->pack);
    } else {
      sbuf_printf(o, "  const ic_i64 row_in = ((ic_i64)blockIdx.x * %" PRId32 " + colg * 32 + colx) * %" PRId32 ";\n", 32 * rg->colgroups,
                  rg->pack);
    }
    sbuf_puts(o, "  const ic_i64 used = C < L ? C : L;\n  ic_i64 cover = 1;\n  while (cover < used) cover <<= 1;\n");
    if (k->stage != KIR_STAGE_WHOLE)
      sbuf_printf(o, "  const ic_i64 U = (used + %" PRId32 ") / %" PRId32 ";\n", 8 * rg->round_warps - 1, 8 * rg->round_warps);
    sbuf_printf(o, "  const ic_i64 share = cover >= %" PRId32 " ? cover / %" PRId32 " : 1;\n", rg->ywarps, rg->ywarps);
    sbuf_puts(o, "  const ic_i64 lane0 = (ic_i64)coly * share, lane1 = lane0 + share < used ? lane0 + share : used;\n");
  } else if (k->stage != KIR_STAGE_WHOLE) {
    /* U partials a row (kir_split_units): block u of the row (partial), or the row's block */
    sbuf_printf(o, "  const ic_i64 U = %d * G;\n", KIR_REDUCE_LANES / KIR_SPLIT_LANES);
    if (k->stage == KIR_STAGE_PARTIAL)
      sbuf_puts(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x / U, u = (ic_i64)blockIdx.x % U;\n");
    else
      sbuf_puts(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x;\n");
    sbuf_puts(o, "  const int t = (int)threadIdx.x;\n");
  } else if (rg->cluster > 1) {
    /* a row is a cluster: CTA q (blockIdx.x % Q, its rank) holds lanes q * block .. */
    sbuf_printf(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x / %" PRId32 ";\n", rg->cluster);
    sbuf_printf(o, "  const int t = (int)(blockIdx.x %% %" PRId32 ") * %" PRId32 " + (int)threadIdx.x;\n", rg->cluster, rg->block);
  } else {
    sbuf_printf(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x * %" PRId32 " + threadIdx.x / %" PRId32 ";\n",
                rg->block / rg->tpr, rg->tpr);
    sbuf_printf(o, "  const int t = (int)(threadIdx.x %% %" PRId32 ");\n", rg->tpr);
  }
  red_kept_vars(rg);
  /* the vector test: uniform over the launch */
  sbuf_puts(o, "  const bool vec_ok = ");
  if (!rg->any_vector) {
    sbuf_puts(o, "false");
  } else {
    for (int32_t b = 0; b < k->buffers.count; b++) {
      bool used = false;
      for (int32_t i = 0; i < k->instrs.count; i++) {
        const kir_instr *in = &k->instrs.items[i];
        used |= (in->kind == KIR_LOAD || in->kind == KIR_STORE) && in->buffer == b && cg->mode[i] == ACCESS_VECTOR;
      }
      size_t bytes = KIR_REDUCE_CHUNK * ic_dtype_size(k->buffers.items[b].dtype);
      if (used) sbuf_printf(o, "((ic_u64)b%" PRId32 " & %zu) == 0 && ", b, (bytes < 16 ? bytes : 16) - 1);
    }
    for (int32_t i = 0; i < cg->aligned.count; i++) {
      sbuf_puts(o, "(");
      cg_expr(cg, cg->aligned.items[i], NULL);
      sbuf_puts(o, ") % 8 == 0 && ");
    }
    sbuf_printf(o, "d%" PRId32 " %% 8 == 0", rg->inner);
  }
  sbuf_puts(o, ";\n  (void)vec_ok;\n");
  if (rg->pack > 1) red_pack_test(rg);
  /* one shared block for every pass's combine (the passes run one after the other, each
   * ending with a barrier): accumulators of up to 8 bytes, then the arg indices */
  sbuf_printf(o, "  __shared__ ic_u64 ic_smem[%" PRId32 "];\n  (void)ic_smem;\n", red_static_smem(rg) / 8);
  if (rg->cluster > 1)
    sbuf_printf(o, "  /* a row is a cluster of %" PRId32 " CTAs, lanes %" PRId32 " a CTA; a CTA's value (and index) for the others */\n"
                   "  __shared__ ic_u64 ic_cslot[%d];\n", rg->cluster, rg->block, RED_CLUSTER_SLOTS / 8);
  /* the cache: chunks below cache_regs in registers, the others in the shared tier */
  if (rg->smem > 0)
    sbuf_printf(o, "  /* the row's cache: chunks 0 .. %" PRId32 " of a thread in registers, %" PRId32 " .. %" PRId32
                   " in shared memory (%" PRId32 " bytes a block, %" PRId32 " block%s a multiprocessor) */\n"
                   "  extern __shared__ __align__(16) ic_u8 ic_tier[];\n",
                rg->cache_regs - 1, rg->cache_regs, rg->cache_k - 1, rg->smem, rg->min_blocks, rg->min_blocks > 1 ? "s" : "");
  int32_t tier = 0;
  for (int32_t i = 0; rg->cache_k > 0 && i < k->instrs.count; i++) {
    if (!rg->cached[i]) continue;
    const ic_dtype dt = k->instrs.items[i].dtype;
    const char *t = rg->packed[i] ? "ic_u32" : cg_ctype(dt);
    const int32_t w = red_chunk_values(dt, rg->packed[i]);
    if (rg->cache_regs > 0) sbuf_printf(o, "  %s c%" PRId32 "[%" PRId32 "][%" PRId32 "];\n", t, i, rg->cache_regs, w);
    if (rg->cache_regs < rg->cache_k) {
      sbuf_printf(o, "  %s (*const sc%" PRId32 ")[%" PRId32 "][%" PRId32 "] = (%s (*)[%" PRId32 "][%" PRId32 "])(ic_tier + %" PRId32 ");\n",
                  t, i, w, rg->block, t, w, rg->block, tier);
      tier += (rg->cache_k - rg->cache_regs) * rg->block * red_chunk_bytes(dt, rg->packed[i]);
    }
  }
  if (k->stage == KIR_STAGE_PARTIAL) {
    red_kernel_partial(rg);
    return;
  }
  int32_t p = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    if (rg->element[i]) continue;
    if (k->instrs.items[i].kind == KIR_REDUCE) {
      if (rg->columns) red_pass_columns(rg, p, i);
      else if (k->stage == KIR_STAGE_COMBINE) red_pass_combine(rg, i);
      else red_pass(rg, p, i);
      red_divisor_prep(rg, i);
      p++;
    } else {
      red_row_instr(rg, i);
    }
  }
  bool stores = false;
  for (int32_t i = 0; i < k->instrs.count; i++) stores |= rg->need[(size_t)p * (size_t)k->instrs.count + (size_t)i];
  if (stores) {
    sbuf_puts(o, "  /* the element stores */\n");
    if (rg->columns) {
      red_column_lanes(rg);
      sbuf_puts(o, "  for (ic_i64 c = j; c < C; c += L)\n");
      red_chunk(rg, p, -1, "a", "ai");
      sbuf_puts(o, "  }\n");
    } else {
      red_stores_pass(rg, p);
    }
  }
  if (rg->pack > 1) sbuf_puts(o, "  }\n  }\n"); /* red_pass_columns' column at a time */
  sbuf_puts(o, "}\n");
}

ic_status cuda_codegen_reduce(const kir_kernel *k, const char *entry, int32_t sm, cuda_codegen_result *res) {
  codegen cg = {.k = k, .entry = entry, .a = k->syms, .vec = KIR_REDUCE_CHUNK, .smem = cuda_smem_of(sm), .sm = sm};
  red_gen rg = {.cg = &cg, .k = k, .inner = -1, .lane = "e", .cluster = 1, .pack = 1};
  size_t n = (size_t)k->instrs.count + 1;
  rg.nreduce = kir_reduce_count(k);
  rg.element = sys_calloc(n, sizeof(bool));
  rg.need = sys_calloc(n * ((size_t)rg.nreduce + 1), sizeof(bool));
  cg.mode = sys_calloc(n, sizeof *cg.mode);
  ic_status s = IC_OK;
  if (!rg.element || !rg.need || !cg.mode) {
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
    goto done;
  }
  kir_levels(k, rg.element);
  cg.element = rg.element;
  /* exact ops left unrounded (kir_exact_unrounded); out of memory: every op rounds */
  cg.exact_unrounded = sys_malloc(n * sizeof *cg.exact_unrounded);
  if (cg.exact_unrounded && !kir_exact_unrounded(k, cg.exact_unrounded)) {
    free(cg.exact_unrounded);
    cg.exact_unrounded = NULL;
  }
  kir_pass_needs(k, rg.element, NULL, rg.need);
  for (int32_t d = 0; d < k->ndim; d++)
    if (red_reduced(k, d)) rg.inner = d;
  /* threads per row, from the row length alone (kir_reduce_strategy_of) */
  kir_reduce_strategy strategy;
  kir_reduce_strategy_of(k, &strategy);
  rg.groups = strategy.groups;
  rg.columns = strategy.columns;
  rg.tpr = strategy.threads;
  rg.lanes_per_thread = strategy.lanes_per_thread;
  if (k->stage != KIR_STAGE_WHOLE) {
    /* two stages: blocks of KIR_SPLIT_LANES threads, a lane (partial) or a share of the
     * partials (combine) each */
    rg.groups = true;
    rg.tpr = KIR_SPLIT_LANES;
    rg.lanes_per_thread = 1;
  }
  /* rows of at most a warp share blocks of RED_MIN_BLOCK; a row of more warps is a block
   * of its own (its combine goes through the block's shared memory and barriers) */
  rg.block = rg.tpr <= 32 ? RED_MIN_BLOCK : rg.tpr;
  if (rg.columns) {
    rg.ywarps = strategy.threads;
    rg.colgroups = strategy.column_groups;
    rg.column_rounds = strategy.column_rounds;
    rg.round_warps = strategy.threads;
    if (k->stage != KIR_STAGE_COMBINE) rg.pack = strategy.column_pack;
    /* a split's combine: a thread a column over its partials */
    if (k->stage == KIR_STAGE_COMBINE) rg.ywarps = 1;
    rg.block = 32 * rg.ywarps * rg.colgroups;
  }
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    cg.mode[i] = ACCESS_ELEMENT;
    if ((in->kind == KIR_LOAD || in->kind == KIR_STORE) && rg.element[i]) cg.mode[i] = red_classify(&rg, in);
    rg.any_vector |= cg.mode[i] == ACCESS_VECTOR;
  }
  /* persistent rows: loads read by several passes stay in registers */
  rg.cached = sys_calloc(n, sizeof(bool));
  rg.packed = sys_calloc(n, sizeof(bool));
  rg.first_pass = sys_calloc(n, sizeof(int32_t));
  if (!rg.cached || !rg.packed || !rg.first_pass) {
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
    goto done;
  }
  const int64_t r = strategy.count; /* -1: symbolic */
  rg.count = r;
  if (k->stage == KIR_STAGE_WHOLE && !rg.groups && !rg.columns && r >= 0) {
    int64_t chunks = (r + KIR_REDUCE_CHUNK - 1) / KIR_REDUCE_CHUNK, per_lane = (chunks + KIR_REDUCE_LANES - 1) / KIR_REDUCE_LANES;
    /* chunks a thread: its lanes (short rows) or its lane's chunks */
    int32_t per_thread = rg.lanes_per_thread * (int32_t)(per_lane > 0 ? per_lane : 1);
    rg.per_thread = per_thread;
    red_plan_cache(&rg, per_thread);
    if (rg.lanes_per_thread > 1 || rg.cache_k > 0) rg.kloop = per_thread;
  }
  red_kernel(&rg);
  res->source = cuda_source_assemble(entry, &cg.out);
  res->per_thread = 1;
  res->block = rg.block;
  res->smem = rg.smem;
  res->per_block = rg.columns ? 32 * rg.colgroups * rg.pack : rg.cluster > 1 ? 1 : rg.block / rg.tpr; /* stage kernels: 1 (a unit or a row a block) */
  res->cluster = rg.cluster > 1 ? rg.cluster : 1;
  if (!res->source || cg.oom || sym_arena_failed(cg.a)) {
    free(res->source);
    res->source = NULL;
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
  }
done:
  free(rg.element);
  free(rg.need);
  free(rg.cached);
  free(rg.packed);
  free(rg.first_pass);
  free(cg.mode);
  free(cg.exact_unrounded);
  free(cg.aligned.items);
  sbuf_free(&cg.out);
  return s;
}
