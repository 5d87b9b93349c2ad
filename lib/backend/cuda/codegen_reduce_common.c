/* Pieces every reduction strategy uses (codegen_reduce.c says which file holds which):
 * the row's cache accessors, the accumulators and their trees, element loads, ops and
 * stores, a chunk of a pass (red_chunk) and the lane's chunk loop, the block's combine,
 * a row value's finish, and the row values between the passes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/codegen_reduce.h"
#include "ops/ops.h"

/* Whether a row's length is a known constant, positive and a multiple of `unit` elements
 * (KIR_REDUCE_CHUNK: rows of whole chunks; 8 chunks: column rounds that are never ragged). */
bool red_count_multiple(const red_gen *rg, int64_t unit) { return rg->count > 0 && rg->count % unit == 0; }

/* Whether pass p takes load i from the registers rather than from memory. */
bool red_from_cache(const red_gen *rg, int32_t p, int32_t i) {
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

bool red_reduced(const kir_kernel *k, int32_t d) { return (k->axes >> d) & 1u; }

/* ---------------------------------------------------------------- accumulators */

static bool red_arith(ic_reduce_op op) { return op == IC_REDUCE_SUM || op == IC_REDUCE_MEAN || op == IC_REDUCE_PROD; }
bool red_arg(ic_reduce_op op) { return op == IC_REDUCE_ARGMAX || op == IC_REDUCE_ARGMIN; }

/* The accumulator's C type for op over operand dtype dt. */
const char *red_acc_type(ic_reduce_op op, ic_dtype dt) { return cg_ctype(kir_reduce_acc_dtype(op, dt)); }

void red_identity(sbuf *o, ic_reduce_op op, ic_dtype dt) {
  const char *t = red_acc_type(op, dt);
  bool is_f = strcmp(t, "float") == 0, is_d = strcmp(t, "double") == 0, is_b = strcmp(t, "bool") == 0;
  bool is_l = strcmp(t, "ic_i64") == 0, is_u = strcmp(t, "ic_u32") == 0, is_ul = strcmp(t, "ic_u64") == 0;
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
    else if (is_u) sbuf_puts(o, high ? "0xffffffffu" : "0u");
    else if (is_ul) sbuf_puts(o, high ? "0xffffffffffffffffull" : "0ull");
    else sbuf_puts(o, high ? "2147483647" : "(-2147483647 - 1)");
    break;
  }
}

/* acc = acc (+) x, for accumulators named acc[/acc_i] and x[/x_i]. */
void red_combine(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *acc, const char *acc_i, const char *x,
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
void red_acc_decl(sbuf *o, const char *ind, ic_reduce_op op, ic_dtype dt) {
  sbuf_printf(o, "%s%s a = ", ind, red_acc_type(op, dt));
  red_identity(o, op, dt);
  sbuf_printf(o, ";\n%sic_i64 ai = (ic_i64)9223372036854775807ll;\n", ind);
}

/* The butterflies over `width` lanes of a warp (distances 1, 2, 4, ...) of a/ai, xi only
 * for the arg reductions; ind: the loop's indentation. */
void red_butterflies(sbuf *o, const char *ind, ic_reduce_op op, ic_dtype dt, const char *a, const char *ai,
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
void red_kept_split(const red_gen *rg, const char *indent, const char *var) {
  sbuf *o = &rg->cg->out;
  for (int32_t d = rg->k->ndim - 1; d >= 0; d--) {
    if (red_reduced(rg->k, d)) continue;
    sbuf_puts(o, indent);
    sbuf_printf(o, var, d);
    sbuf_printf(o, " = rem %% d%" PRId32 "; rem /= d%" PRId32 ";\n", d, d);
  }
}

/* `live` and the kept vars of the row row_in (a C variable in scope). */
void red_kept_vars(const red_gen *rg) {
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
void red_decompose(red_gen *rg, const char *r, const char *indent) {
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

void red_scalar_load(red_gen *rg, int32_t i, const char *target) {
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

void red_range(red_gen *rg, int32_t i, const char *target) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "%s = ", target);
  /* the parent range may be a row value (free of the reduced dims) under an element one */
  cg_range(rg->cg, in, NULL, in->nargs == 1 && rg->element[in->args[0]] ? "[e]" : "");
  sbuf_puts(o, ";\n");
}

/* Words of a chunk of 8 elements of dt, moved by ic_ld_w4/ic_st_w4 (ic_ld_w2 for bytes). */
int32_t red_words(ic_dtype dt) { return KIR_REDUCE_CHUNK * (int32_t)ic_dtype_size(dt) / 4; }

/* Load i's chunk as words; where `shift`, a chunk that is whole but not aligned
 * (`shifted`) takes the aligned vectors around it (ic_ld_shift). */
static void red_vector_load(red_gen *rg, int32_t i, bool shift) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  int32_t words = red_words(in->dtype);
  sbuf_printf(o, "      { ic_u32 w[%" PRId32 "];\n", words);
  if (shift) {
    sbuf_puts(o, "        if (shifted) {\n          ic_ld_shift(");
    cg_address(rg->cg, in, NULL);
    sbuf_printf(o, ", w, %" PRId32 ");\n        } else {\n", words);
  }
  for (int32_t q = 0; q < words; q += 4) {
    sbuf_printf(o, "        ic_ld_w%d((", words < 4 ? (int)words : 4);
    cg_address(rg->cg, in, NULL);
    sbuf_printf(o, ") + %" PRId32 ", &w[%" PRId32 "]);\n", q * 4, q);
  }
  if (shift) sbuf_puts(o, "        }\n");
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

/* The storage bits of store i's value. A conversion to a narrow float that is stored
 * takes the bits of one rounding of its f32 operand (ic_rndbits_, ic_satbits_: the bits
 * the pointwise kernels store, canonical NaN included); an asm output made as bits is
 * stored as the asm made it (its canonical bits: what unpacking and packing again would
 * give). */
static void red_pack(red_gen *rg, int32_t i, sbuf *o) {
  const kir_kernel *k = rg->k;
  const kir_instr *in = &k->instrs.items[i], *v = &k->instrs.items[in->args[0]];
  char src[32];
  if (red_from_cache(rg, rg->pass, in->args[0])) {
    red_name(rg, in->args[0], src, sizeof src);
    sbuf_printf(o, "ic_pack_%s(%s)", cg_dtname(in->dtype), src);
    return;
  }
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

/* Store i's chunk as words: vectors, or where `shifted` a chunk aligned to its element
 * only (ic_st_shift). */
static void red_vector_store(red_gen *rg, int32_t i, bool shifted) {
  const kir_instr *in = &rg->k->instrs.items[i];
  sbuf *o = &rg->cg->out;
  int32_t words = red_words(in->dtype);
  sbuf_printf(o, "      { ic_u32 w[%" PRId32 "] = {0};\n", words);
  if (ic_dtype_size(in->dtype) == 8) {
    sbuf_puts(o, "        for (int e = 0; e < 8; e++) { const ic_u64 p = ");
    red_pack(rg, i, o);
    sbuf_puts(o, "; w[2 * e] = (ic_u32)p; w[2 * e + 1] = (ic_u32)(p >> 32); }\n");
  } else if (in->dtype == IC_F8E4M3 && red_stored_rounding(rg, i) && !red_from_cache(rg, rg->pass, in->args[0]) &&
             rg->element[rg->k->instrs.items[in->args[0]].args[0]]) {
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
  if (shifted) {
    sbuf_puts(o, "        ic_st_shift(");
    cg_address(rg->cg, in, NULL);
    sbuf_printf(o, ", w, %" PRId32 ");\n", words);
  }
  for (int32_t q = 0; q < words && !shifted; q += 4) {
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
void red_divisor_prep(red_gen *rg, int32_t j) {
  bool divides = false;
  for (int32_t i = j + 1; i < rg->k->instrs.count && !divides; i++)
    divides = red_divides_by_row(rg, i) && rg->k->instrs.items[i].args[1] == j;
  if (divides)
    sbuf_printf(&rg->cg->out, "  float v%" PRId32 "_y, v%" PRId32 "_lo, v%" PRId32 "_hi;\n  ic_divisor_prep(v%" PRId32
                ", v%" PRId32 "_y, v%" PRId32 "_lo, v%" PRId32 "_hi);\n", j, j, j, j, j, j, j);
}

/* An op's C expression with operands named as red_name does. */
void red_op_expr(red_gen *rg, int32_t i) {
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
const char *red_in_row(const red_gen *rg, const char *test) { return rg->chunk_inside ? "true" : test; }

/* The test for a chunk's vector accesses: `vec_ok && r0 + 8 <= R`, shorter where known. */
static void red_vector_test(const red_gen *rg, sbuf *o) {
  if (rg->vector_known) sbuf_puts(o, "true");
  else sbuf_printf(o, "vec_ok && %s", red_in_row(rg, "r0 + 8 <= R"));
}

/* The chunk's elements (r0 + e) of the REDUCE at `reduce` into accumulator acc/acc_i. */
void red_chunk_accumulate(red_gen *rg, int32_t reduce, const char *acc, const char *acc_i) {
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
void red_chunk(red_gen *rg, int32_t p, int32_t reduce, const char *acc, const char *acc_i) {
  const kir_kernel *k = rg->k;
  sbuf *o = &rg->cg->out;
  const bool *need = &rg->need[(size_t)p * (size_t)k->instrs.count];
  bool last = p == rg->nreduce;
  rg->pass = p;
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
    /* whole chunks of rows that are not aligned take the vectors around them */
    bool shift = false;
    for (int32_t i = 0; i < k->instrs.count; i++) shift |= load[i] && rg->cg->mode[i] == ACCESS_VECTOR;
    shift = shift && rg->shift && !rg->vector_known;
    sbuf_puts(o, "      const bool full = ");
    red_vector_test(rg, o);
    if (shift) sbuf_printf(o, ";\n      const bool shifted = !full && vrow_ok && %s;\n      if (full || shifted) {\n        {\n", red_in_row(rg, "r0 + 8 <= R"));
    else sbuf_puts(o, ";\n      if (full) {\n        {\n");
    red_decompose(rg, "r0", "          ");
    for (int32_t i = 0; i < k->instrs.count; i++) {
      const kir_instr *in = &k->instrs.items[i];
      if (!load[i]) continue;
      if (rg->cg->mode[i] == ACCESS_VECTOR) red_vector_load(rg, i, shift);
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
    /* whole chunks: aligned vectors, then (rows not aligned) the shifted stores */
    const int copies = vstores ? rg->vector_known || !rg->shift ? 1 : 2 : 0;
    for (int copy = 0; copy < copies; copy++) {
      if (copy == 0) {
        sbuf_puts(o, "      if (");
        red_vector_test(rg, o);
      } else {
        sbuf_printf(o, "      if (vrow_ok && %s", red_in_row(rg, "r0 + 8 <= R"));
      }
      sbuf_puts(o, ") {\n        {\n");
      red_decompose(rg, "r0", "          ");
      for (int32_t i = 0; i < k->instrs.count; i++)
        if (need[i] && k->instrs.items[i].kind == KIR_STORE && rg->cg->mode[i] == ACCESS_VECTOR) red_vector_store(rg, i, copy == 1);
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
  rg->pass = -1;
}

/* The loop over a lane's chunks (first, first + stride, ...; below C): unrolled over the
 * K chunks of a persistent row, so that the cached values stay in registers. The chunk
 * body follows. */
void red_chunk_loop(red_gen *rg, const char *first, const char *stride) {
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

void red_chunk_loop_end(red_gen *rg) {
  if (rg->kloop > 0) sbuf_puts(&rg->cg->out, "    }\n");
}

/* ---------------------------------------------------------------- the lanes' combine */

/* The top levels of the lanes' tree for a row of a cluster: each CTA's value (its lanes'
 * subtree, in every thread after the block combine) goes to its slot; after a cluster
 * barrier every thread reads the Q slots in rank order and joins them pairwise, which
 * are the tree's last log2 Q levels; a second barrier keeps the slots until every CTA
 * has read them (the next pass writes them again). */
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
void red_block_combine(red_gen *rg, int32_t reduce, const char *a, const char *ai) {
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
void red_pairwise(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *arr, const char *arri, int32_t count) {
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

/* The push of accumulator a/ai onto the binary counter st/sti/sh/n: equal heights merge,
 * left (earlier lanes) first. */
void red_counter_push(sbuf *o, ic_reduce_op op, ic_dtype dt, int height) {
  sbuf_printf(o, "    st[n] = a; sti[n] = ai; sh[n] = %d; n++;\n    while (n >= 2 && sh[n - 1] == sh[n - 2]) {\n      ", height);
  red_combine(o, op, dt, "st[n - 2]", "sti[n - 2]", "st[n - 1]", "sti[n - 1]");
  sbuf_puts(o, "\n      sh[n - 2]++; n--;\n    }\n");
}

void red_counter_collapse(sbuf *o, ic_reduce_op op, ic_dtype dt) {
  sbuf_puts(o, "  while (n >= 2) {\n    ");
  red_combine(o, op, dt, "st[n - 2]", "sti[n - 2]", "st[n - 1]", "sti[n - 1]");
  sbuf_puts(o, "\n    n--;\n  }\n");
}

/* The row value of REDUCE `in` from accumulator a/ai: the mean's division, the sum of
 * nothing (+0), one rounding to the result dtype. */
void red_finish(red_gen *rg, int32_t reduce) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  sbuf *o = &rg->cg->out;
  sbuf_printf(o, "    v%" PRId32 " = ", reduce);
  /* max and min of a narrow float are exact but for a NaN's bits: rounded, the row holds
   * the dtype's canonical NaN, as a stored and reloaded row does (eager == fused) */
  bool narrow_pick = (in->reduce == IC_REDUCE_MAX || in->reduce == IC_REDUCE_MIN) && dtype_is_narrow_float(in->dtype);
  bool rounds = cg_rounds(in->dtype) && (red_arith(in->reduce) || narrow_pick);
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

/* The start of the pass of the REDUCE at instruction `reduce` (the p-th): its row value
 * v<reduce> declared, a scope opened; the operand's dtype and the accumulator type. */
const kir_instr *red_pass_begin(red_gen *rg, int32_t p, int32_t reduce, ic_dtype *dt, const char **t) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  *dt = rg->k->instrs.items[in->args[0]].dtype;
  *t = red_acc_type(in->reduce, *dt);
  sbuf_printf(&rg->cg->out, "  /* pass %" PRId32 ": %s */\n  %s v%" PRId32 ";\n  {\n", p, ic_reduce_name(in->reduce),
              cg_ctype(in->dtype), reduce);
  return in;
}

/* ---------------------------------------------------------------- row values */

/* Row value (or row store) i, once a thread, between the passes. */
void red_row_instr(red_gen *rg, int32_t i) {
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
  case KIR_REDUCE:
  case KIR_CONTRACT: break; /* contraction kernels have a generator of their own */
  }
  if (in->kind != KIR_STORE && in->kind != KIR_REDUCE && in->kind != KIR_ASM) red_divisor_prep(rg, i);
}
