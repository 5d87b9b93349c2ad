/* CUDA C generation for pointwise kernels.
 *
 * Each thread owns one slot of V consecutive points of the flattened iteration space,
 * V = 16 bytes / the widest element, so the widest tensor moves in one 16-byte vector.
 * Two paths of the same kernel:
 *   vector  every access that is contiguous in the innermost var loads or stores V
 *           elements at once (ld.global.nc.v4 / st.global.cs.v4), broadcast accesses load
 *           one element, the rest load element by element. Taken when the alignment test
 *           holds; the test reads only kernel parameters (base pointers, strides, sizes),
 *           so it is uniform over the whole grid, plus "the slot is full", false only in
 *           the last slot of a ragged size.
 *   scalar  V points one by one with a bounds check: misaligned views and tails.
 * The op body is one __device__ function called from both paths, so both compute bit for
 * bit the same thing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/codegen_matmul.h"
#include "ops/ops.h"

/* The compute type of a dtype (the prelude's overloads). */
const char *cg_ctype(ic_dtype dt) {
  switch (dt) {
  case IC_BOOL: return "bool";
  case IC_U8: case IC_U16: case IC_I8: case IC_I16: case IC_I32: return "int";
  case IC_U32: return "ic_u32";
  case IC_I64: return "ic_i64";
  case IC_U64: return "ic_u64";
  case IC_F64: return "double";
  default: return "float";
  }
}

const char *cg_dtname(ic_dtype dt) { return ic_dtype_name(dt); }

bool cg_pairs_rounding(ic_dtype dt) { return dt == IC_BF16 || dt == IC_F16; }

/* Results of these dtypes are rounded (wrapped) to them after every op: ic_rnd_<dtype>. */
bool cg_rounds(ic_dtype dt) {
  switch (dt) {
  case IC_F16: case IC_BF16: case IC_F8E4M3: case IC_F8E5M2: case IC_U8: case IC_U16: case IC_I8: case IC_I16: return true;
  default: return false;
  }
}

/* Pointwise stores of narrow floats take storage bits from the body: r<i> is an ic_u32
 * of the dtype's bits (arrays of P at pack P), stored as it is. */
static bool cg_stores_bits(const codegen *cg, const kir_instr *in) {
  return in->kind == KIR_STORE && !cg->k->reduces && dtype_is_narrow_float(in->dtype);
}

/* The bits store i writes: r<i><suffix>, packed unless the body made bits. */
void cg_store_bits(codegen *cg, int32_t i, const char *suffix) {
  const kir_instr *in = &cg->k->instrs.items[i];
  if (cg_stores_bits(cg, in)) sbuf_printf(&cg->out, "r%" PRId32 "%s", i, suffix);
  else sbuf_printf(&cg->out, "ic_pack_%s(r%" PRId32 "%s)", cg_dtname(in->dtype), i, suffix);
}

/* The type of store i's r<i> in the kernel. */
const char *cg_store_type(const codegen *cg, const kir_instr *in) {
  return cg_stores_bits(cg, in) ? "ic_u32" : cg_ctype(in->dtype);
}

/* ---------------------------------------------------------------- expressions */

void cg_expr(codegen *cg, sym_id e, const char *last_var) {
  static const char *const var_names[IC_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
  const char *vars[IC_MAX_DIMS];
  memcpy(vars, var_names, sizeof vars);
  if (last_var && cg->k->ndim > 0) vars[cg->k->ndim - 1] = last_var;
  sym_names names = {.vars = vars, .nvars = IC_MAX_DIMS};
  sym_print(cg->a, e, &names, &cg->out);
}

/* ---------------------------------------------------------------- access analysis */

void cg_require_aligned(codegen *cg, sym_id e) {
  for (int32_t i = 0; i < cg->aligned.count; i++)
    if (cg->aligned.items[i] == e) return;
  if (!VEC_PUSH(cg->aligned, e)) cg->oom = true;
}

/* ---------------------------------------------------------------- the body function */

void cg_const(codegen *cg, const kir_instr *in) {
  sbuf *o = &cg->out;
  if (in->dtype == IC_BOOL) {
    sbuf_puts(o, in->value != 0 ? "true" : "false");
  } else if (in->dtype == IC_I64) {
    /* the builder rounded the value to i64's range; 2^63 (saturated) is INT64_MAX */
    int64_t v = in->value >= 9223372036854775807.0 ? INT64_MAX : (int64_t)in->value;
    if (v == INT64_MIN) sbuf_puts(o, "(-9223372036854775807ll - 1)");
    else sbuf_printf(o, "%" PRId64 "ll", v);
  } else if (in->dtype == IC_U64) {
    /* the builder rounded the value to u64's range; 2^64 (saturated) is UINT64_MAX */
    uint64_t v = in->value >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)in->value;
    sbuf_printf(o, "%" PRIu64 "ull", v);
  } else if (in->dtype == IC_U32) {
    sbuf_printf(o, "%" PRIu32 "u", (uint32_t)in->value);
  } else if (dtype_is_integer(in->dtype)) {
    int32_t v = (int32_t)in->value;
    if (v == INT32_MIN) sbuf_puts(o, "(-2147483647 - 1)");
    else sbuf_printf(o, "%" PRId32, v);
  } else if (in->dtype == IC_F64) {
    uint64_t bits;
    memcpy(&bits, &in->value, sizeof bits);
    sbuf_printf(o, "__longlong_as_double(0x%016" PRIx64 "ll) /* %.17g */", bits, in->value);
  } else {
    float f = (float)in->value; /* exact: rounded to the dtype by the builder */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    sbuf_printf(o, "__uint_as_float(0x%08" PRIx32 "u) /* %.9g */", bits, (double)f);
  }
}

/* The C expression of a conversion (cast, cast_saturate) from dtype `from` (value text v)
 * to `to`, through the compute types: bool, int, ic_u32, ic_i64, ic_u64, float, double. */
void cg_convert(codegen *cg, ic_dtype from, ic_dtype to, bool saturate, const char *v) {
  sbuf *o = &cg->out;
  const char *tn = cg_dtname(to), *tct = cg_ctype(to);
  bool from_int = dtype_is_integer(from), from_i64 = from == IC_I64, from_f64 = from == IC_F64;
  /* a cast to its own dtype is the value, except that a narrow float is rounded again:
   * its NaNs become canonical in registers as a store makes them (eager == fused) */
  if (from == to && !(saturate && dtype_is_float(to)) && !dtype_is_narrow_float(to)) {
    sbuf_puts(o, v);
  } else if (to == IC_BOOL) {
    sbuf_printf(o, "(%s != 0)", v);
  } else if (from == IC_BOOL) {
    sbuf_printf(o, "((%s)(%s ? 1 : 0))", tct, v);
  } else if (dtype_is_integer(to)) {
    bool wide = to == IC_I64;
    int64_t lo = to == IC_U8 || to == IC_U16 || to == IC_U32 ? 0 : to == IC_I8 ? -128 : to == IC_I16 ? -32768 : INT32_MIN;
    int64_t hi = to == IC_U8 ? 255 : to == IC_U16 ? 65535 : to == IC_U32 ? UINT32_MAX : to == IC_I8 ? 127 : to == IC_I16 ? 32767 : INT32_MAX;
    if (!from_int && (to == IC_U32 || to == IC_U64)) {
      /* cvt.rzi.sat to the unsigned width itself */
      sbuf_printf(o, "ic_%c2%s(%s)", from_f64 ? 'd' : 'f', tn, v);
    } else if (from_int && (to == IC_U32 || to == IC_U64)) {
      if (!saturate) sbuf_printf(o, "((%s)%s)", tct, v); /* wraps (a signed value sign-extends first) */
      else if (from == IC_U64 && to == IC_U64) sbuf_puts(o, v);
      else if (from == IC_U64) sbuf_printf(o, "((ic_u32)ic_clampu64(%s, 0xffffffffull))", v);
      else if (to == IC_U64) sbuf_printf(o, "ic_s2u64_sat((ic_i64)%s)", v);
      else sbuf_printf(o, "((ic_u32)ic_clampl((ic_i64)%s, 0ll, 4294967295ll))", v);
    } else if (saturate && from == IC_U64) {
      /* a u64 above the target's top clamps to it (no u64 is below 0) */
      sbuf_printf(o, "((%s)ic_clampu64(%s, %" PRId64 "ull))", tct, v, wide ? INT64_MAX : hi);
    } else if (!from_int) {
      /* float -> integer saturates either way (cvt.rzi.sat), then clamps to the width */
      const char *cvt = wide ? (from_f64 ? "ic_d2i64" : "ic_f2i64") : (from_f64 ? "ic_d2i32" : "ic_f2i32");
      if (wide || to == IC_I32) sbuf_printf(o, "%s(%s)", cvt, v);
      else sbuf_printf(o, "ic_clampi(%s(%s), %" PRId64 ", %" PRId64 ")", cvt, v, lo, hi);
    } else if (wide) {
      sbuf_printf(o, "((ic_i64)%s)", v);
    } else if (saturate) {
      sbuf_printf(o, "ic_clampi((ic_i64)%s, %" PRId64 "ll, %" PRId64 "ll)", v, lo, hi);
    } else {
      if (to == IC_I32) sbuf_printf(o, "((int)%s)", v);
      else sbuf_printf(o, "ic_rnd_%s((int)%s)", tn, v); /* wraps to the width */
    }
  } else if (to == IC_F64) {
    sbuf_printf(o, saturate ? "ic_sat_f64((double)%s)" : "((double)%s)", v);
  } else {
    /* to a dtype computed in float: f32 rounds once directly; narrower dtypes get a
     * round-to-odd f32 first so that their own rounding is the only one */
    bool f32 = to == IC_F32, leave = !saturate && cg->leave_rounding && cg_pairs_rounding(to);
    const char *bits = cg->bits && !f32 ? "bits" : "";
    cg->bits = false;
    if (leave) cg->leave_rounding = false; /* the float before the rounding: its caller rounds it */
    if (saturate) sbuf_printf(o, "ic_sat%s_%s(", bits, tn);
    else if (!f32 && !leave) sbuf_printf(o, "ic_rnd%s_%s(", bits, tn);
    if (f32 && from_f64) sbuf_printf(o, "ic_d2f(%s)", v);
    else if (f32 || (!from_int && !from_f64)) sbuf_printf(o, "((float)%s)", v);
    else
      sbuf_printf(o, "%s(%s)",
                  from_i64 ? "ic_l2f_odd" : from == IC_U64 ? "ic_ul2f_odd" : from == IC_U32 ? "ic_u2f_odd" : from_f64 ? "ic_d2f_odd" : "ic_i2f_odd", v);
    if (saturate || (!f32 && !leave)) sbuf_puts(o, ")");
  }
}

void cg_op(codegen *cg, const kir_instr *in, const kir_instr *args, const char *const *names) {
  sbuf *o = &cg->out;
  const char *a = names[0], *b = names[1], *c = names[2];
  ic_dtype dt = args[0].dtype;
  const op_info *info = op_get(in->op);
  /* f16/bf16/fp8 results are rounded to their dtype, u8/i8/i16 results wrapped to it
   * (but for the exact ops kir_exact_unrounded leaves as they are) */
  bool exact = cg->exact_unrounded && cg->exact_unrounded[in - cg->k->instrs.items]; /* in: one of k's */
  bool round = cg_rounds(in->dtype) && info->result == OP_RESULT_SAME && in->op != IC_OP_WHERE && !exact;
  if (round && cg->leave_rounding && cg_pairs_rounding(in->dtype)) {
    round = false;
    cg->leave_rounding = false;
  }
  if (round) sbuf_printf(o, "ic_rnd%s_%s(", cg->bits ? "bits" : "", cg_dtname(in->dtype));
  if (round) cg->bits = false;
  const char *helper = info->name; /* the prelude names its helpers ic_<op spelling> */
  switch (in->op) {
  case IC_OP_LOGICAL_NOT: sbuf_printf(o, "(%s == 0)", a); break;
  case IC_OP_BITWISE_NOT: sbuf_printf(o, dt == IC_BOOL ? "(!%s)" : "(~%s)", a); break;
  case IC_OP_LOGICAL_AND: case IC_OP_LOGICAL_OR: case IC_OP_LOGICAL_XOR: {
    const char *join = in->op == IC_OP_LOGICAL_AND ? "&&" : in->op == IC_OP_LOGICAL_OR ? "||" : "!=";
    sbuf_printf(o, "((%s != 0) %s (%s != 0))", a, join, b);
    break;
  }
  case IC_OP_BITWISE_AND: sbuf_printf(o, dt == IC_BOOL ? "(%s && %s)" : "(%s & %s)", a, b); break;
  case IC_OP_BITWISE_OR: sbuf_printf(o, dt == IC_BOOL ? "(%s || %s)" : "(%s | %s)", a, b); break;
  case IC_OP_BITWISE_XOR: sbuf_printf(o, dt == IC_BOOL ? "(%s != %s)" : "(%s ^ %s)", a, b); break;
  case IC_OP_EQ: sbuf_printf(o, "(%s == %s)", a, b); break;
  case IC_OP_NE: sbuf_printf(o, "(%s != %s)", a, b); break;
  case IC_OP_LT: sbuf_printf(o, "(%s < %s)", a, b); break;
  case IC_OP_LE: sbuf_printf(o, "(%s <= %s)", a, b); break;
  case IC_OP_GT: sbuf_printf(o, "(%s > %s)", a, b); break;
  case IC_OP_GE: sbuf_printf(o, "(%s >= %s)", a, b); break;
  case IC_OP_WHERE: sbuf_printf(o, "(%s ? %s : %s)", a, b, c); break;
  case IC_OP_CAST: cg_convert(cg, dt, in->dtype, false, a); break;
  case IC_OP_CAST_SATURATE: cg_convert(cg, dt, in->dtype, true, a); break;
  case IC_OP_BITCAST: sbuf_printf(o, "ic_unpack_%s(ic_pack_%s(%s))", cg_dtname(in->dtype), cg_dtname(dt), a); break;
  default:
    if (in->nargs == 1) sbuf_printf(o, "ic_%s(%s)", helper, a);
    else if (in->nargs == 2) sbuf_printf(o, "ic_%s(%s, %s)", helper, a, b);
    else sbuf_printf(o, "ic_%s(%s, %s, %s)", helper, a, b, c);
    break;
  }
  if (round) sbuf_puts(o, ")");
}

/* Whether a store writes instruction i's value. */
static bool cg_value_stored(const codegen *cg, int32_t i) {
  for (int32_t j = i + 1; j < cg->k->instrs.count; j++)
    if (cg->k->instrs.items[j].kind == KIR_STORE && cg->k->instrs.items[j].args[0] == i) return true;
  return false;
}

/* Whether asm result instruction in is an output the asm makes as bits (a narrow float
 * in an integer register: cg_asm_block keeps them in a<asm>_b<result>). */
bool cg_asm_result_bits(const codegen *cg, const kir_instr *in) {
  if (in->kind != KIR_ASM_RESULT || !dtype_is_narrow_float(in->dtype)) return false;
  const asm_operand *ao = &cg->k->instrs.items[in->args[0]].spec->layout.ops[in->result];
  return ao->letter != 'f' && ao->letter != 'd';
}

/* Whether op i (a narrow float, stored, at pack 1) is computed as its storage bits. */
static bool cg_value_as_bits(const codegen *cg, int32_t i) {
  const kir_instr *in = &cg->k->instrs.items[i];
  return (cg->pack == 1 || (cg->pair_body && cg->pack == 2)) && in->kind == KIR_OP && dtype_is_narrow_float(in->dtype) && cg_value_stored(cg, i);
}

/* cg_op as storage bits: an expression that ends in a rounding to the dtype (ic_rnd_,
 * ic_sat_) takes the rounding's bits (ic_rndbits_, ic_satbits_: no round trip through
 * f32); any other is packed. */
static void cg_op_bits(codegen *cg, const kir_instr *in, const kir_instr *args, const char *const *names) {
  sbuf expr = {0}, saved = cg->out;
  cg->out = expr;
  cg->bits = true;
  cg_op(cg, in, args, names);
  expr = cg->out;
  cg->out = saved;
  if (expr.oom) cg->oom = true;
  const char *text = expr.data ? expr.data : "";
  if (cg->bits) sbuf_printf(&cg->out, "ic_pack_%s(%s)", cg_dtname(in->dtype), text); /* no rounding consumed it */
  else sbuf_puts(&cg->out, text);
  cg->bits = false;
  sbuf_free(&expr);
}

/* Ops that expand to a call or a long instruction sequence weigh 8 (a guess from their
 * PTX; only the order of magnitude matters), the others 1. */
static int32_t cg_op_weight(ic_op op) {
  switch (op) {
  case IC_OP_EXP: case IC_OP_LOG: case IC_OP_TANH: case IC_OP_SIGMOID: case IC_OP_GELU_TANH: case IC_OP_EXP2:
  case IC_OP_EXPM1: case IC_OP_LOG2: case IC_OP_LOG10: case IC_OP_LOG1P: case IC_OP_RSQRT: case IC_OP_RECIPROCAL:
  case IC_OP_SIN: case IC_OP_COS: case IC_OP_TAN: case IC_OP_ASIN: case IC_OP_ACOS: case IC_OP_ATAN:
  case IC_OP_SINH: case IC_OP_COSH: case IC_OP_ASINH: case IC_OP_ACOSH: case IC_OP_ATANH: case IC_OP_ERF:
  case IC_OP_ERFC: case IC_OP_SILU: case IC_OP_SOFTPLUS: case IC_OP_GELU_ERF: case IC_OP_DIV: case IC_OP_POW:
  case IC_OP_ATAN2: case IC_OP_HYPOT: case IC_OP_FMOD: case IC_OP_REMAINDER: case IC_OP_FLOOR_DIVIDE:
  case IC_OP_TRUNC_DIVIDE: case IC_OP_SQRT: case IC_OP_LERP:
    return 8;
  default:
    return 1;
  }
}

/* The body's estimated size in simple-op units (see CG_BODY_INLINE_MAX_WEIGHT). */
static int32_t cg_body_weight(const kir_kernel *k) {
  int32_t w = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_OP) w += cg_op_weight(in->op);
    else if (in->kind == KIR_ASM) w += 8;
  }
  return w;
}

/* The expressions of op in for the two points of a pair body (operands named names[q]),
 * each without its outer rounding to bf16 or f16, into out[0] and out[1]; false when
 * the op has no such rounding (out then holds nothing useful). */
static bool cg_pair_exprs(codegen *cg, const kir_instr *in, const kir_instr *args, char names[2][3][32], sbuf out[2]) {
  sbuf saved = cg->out;
  bool left = true;
  for (int q = 0; q < 2; q++) {
    const char *const refs[3] = {names[q][0], names[q][1], names[q][2]};
    cg->out = out[q];
    cg->leave_rounding = true;
    cg_op(cg, in, args, refs);
    left &= !cg->leave_rounding;
    out[q] = cg->out;
  }
  cg->out = saved;
  cg->leave_rounding = false;
  if (out[0].oom || out[1].oom) cg->oom = true;
  return left && out[0].data && out[1].data;
}

/* Whether the kernel has an op a pair body rounds two points at a time. */
static bool cg_has_pair_rounding(codegen *cg) {
  const kir_kernel *k = cg->k;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_OP || !cg_pairs_rounding(in->dtype) || cg_value_as_bits(cg, i)) continue;
    kir_instr args[3] = {{0}};
    for (int32_t j = 0; j < in->nargs; j++) args[j] = k->instrs.items[in->args[j]];
    if (in->op == IC_OP_WHERE) args[0] = args[1];
    char names[2][3][32] = {{"a", "b", "c"}, {"a", "b", "c"}};
    sbuf e[2] = {{0}, {0}};
    bool pairs = cg_pair_exprs(cg, in, args, names, e);
    sbuf_free(&e[0]);
    sbuf_free(&e[1]);
    if (pairs) return true;
  }
  return false;
}

/* __device__ void <name>_body(loads..., stores&...): the ops of one point, or of P
 * points (cg->pack > 1, for asm groups: arrays of P in and out, each op in a loop;
 * cg->pair_body: <name>_body2, two points whose roundings to bf16 or f16 go through one
 * conversion, ic_rnd2_). Inlined where it is small, one function where it is large
 * (CG_BODY_INLINE_MAX_WEIGHT). */
static void cg_body(codegen *cg) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t P = cg->pack;
  const bool pairs = cg->pair_body && P == 2; /* writing <name>_body2 */
  const char *suffix = pairs ? "2" : "";
  int32_t weight = cg_body_weight(k);
  if (weight > CG_BODY_INLINE_MAX_WEIGHT)
    sbuf_printf(o, "/* weight %" PRId32 " > %d: one copy, called (NVRTC time) */\n__device__ __noinline__ void %s_body%s(",
                weight, CG_BODY_INLINE_MAX_WEIGHT, cg->entry, suffix);
  else
    sbuf_printf(o, "__device__ __forceinline__ void %s_body%s(", cg->entry, suffix);
  const char *sep = "";
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    const char *t = cg_ctype(in->dtype);
    if (in->kind == KIR_LOAD || in->kind == KIR_RANGE) sbuf_printf(o, P > 1 ? "%sconst %s *v%" PRId32 : "%sconst %s v%" PRId32, sep, t, i);
    else if (in->kind == KIR_STORE) sbuf_printf(o, P > 1 ? "%s%s *r%" PRId32 : "%s%s &r%" PRId32, sep, cg_store_type(cg, in), i);
    else continue;
    sep = ", ";
  }
  sbuf_puts(o, ") {\n");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    const char *t = cg_ctype(in->dtype);
    bool array = P > 1 && in->kind != KIR_CONST;
    if (in->kind == KIR_ASM) {
      cg_asm_block(cg, i);
      continue;
    }
    /* a stored narrow float: its bits first, the value from them */
    bool bits = cg_value_as_bits(cg, i);
    if (pairs && in->kind == KIR_OP && !bits && cg_pairs_rounding(in->dtype)) {
      kir_instr args[3] = {{0}};
      for (int32_t j = 0; j < in->nargs; j++) args[j] = k->instrs.items[in->args[j]];
      if (in->op == IC_OP_WHERE) args[0] = args[1];
      char names[2][3][32];
      for (int q = 0; q < 2; q++)
        for (int32_t j = 0; j < 3; j++) {
          const int32_t a = in->args[j];
          if (j < in->nargs && k->instrs.items[a].kind != KIR_CONST) snprintf(names[q][j], sizeof names[q][j], "v%" PRId32 "[%d]", a, q);
          else snprintf(names[q][j], sizeof names[q][j], "v%" PRId32, a);
        }
      sbuf e[2] = {{0}, {0}};
      bool paired = cg_pair_exprs(cg, in, args, names, e);
      if (paired)
        sbuf_printf(o, "  %s v%" PRId32 "[2];\n  ic_rnd2_%s(%s, %s, v%" PRId32 "[0], v%" PRId32 "[1]);\n", t, i, cg_dtname(in->dtype),
                    e[0].data, e[1].data, i, i);
      sbuf_free(&e[0]);
      sbuf_free(&e[1]);
      if (paired) continue;
    }
    if (bits && array) sbuf_printf(o, "  ic_u32 v%" PRId32 "_b[%" PRId32 "];\n#pragma unroll\n  for (int q = 0; q < %" PRId32 "; q++) v%" PRId32 "_b[q] = ", i, P, P, i);
    else if (bits) sbuf_printf(o, "  const ic_u32 v%" PRId32 "_b = ", i);
    else if (in->kind == KIR_CONST || in->kind == KIR_OP || in->kind == KIR_ASM_RESULT) {
      if (array) sbuf_printf(o, "  %s v%" PRId32 "[%" PRId32 "];\n#pragma unroll\n  for (int q = 0; q < %" PRId32 "; q++) v%" PRId32 "[q] = ", t, i, P, P, i);
      else sbuf_printf(o, "  const %s v%" PRId32 " = ", t, i);
    }
    if (in->kind == KIR_CONST) {
      cg_const(cg, in);
    } else if (in->kind == KIR_ASM_RESULT) {
      sbuf_printf(o, array ? "a%" PRId32 "_o%" PRId32 "[q]" : "a%" PRId32 "_o%" PRId32, in->args[0], in->result);
    } else if (in->kind == KIR_OP) {
      kir_instr args[3] = {{0}};
      for (int32_t j = 0; j < in->nargs; j++) args[j] = k->instrs.items[in->args[j]];
      /* named by each operand's own kind (a constant is one scalar), before where's
       * args[0] is made to describe its data operands */
      char names[3][32];
      for (int32_t j = 0; j < 3; j++)
        snprintf(names[j], sizeof names[j], P > 1 && j < in->nargs && args[j].kind != KIR_CONST ? "v%" PRId32 "[q]" : "v%" PRId32,
                 in->args[j]);
      /* where's data operands carry the dtype, not the condition */
      if (in->op == IC_OP_WHERE) args[0] = args[1];
      const char *const refs[3] = {names[0], names[1], names[2]};
      if (bits && array) {
        cg_op_bits(cg, in, args, refs);
        sbuf_printf(o, ";\n  float v%" PRId32 "[%" PRId32 "];\n#pragma unroll\n  for (int q = 0; q < %" PRId32 "; q++) v%" PRId32 "[q] = ic_unpack_%s(v%" PRId32 "_b[q])",
                    i, P, P, i, cg_dtname(in->dtype), i);
      } else if (bits) {
        cg_op_bits(cg, in, args, refs);
        sbuf_printf(o, ";\n  const float v%" PRId32 " = ic_unpack_%s(v%" PRId32 "_b)", i, cg_dtname(in->dtype), i);
      } else {
        cg_op(cg, in, args, refs);
      }
    } else if (in->kind == KIR_STORE) {
      bool src_const = k->instrs.items[in->args[0]].kind == KIR_CONST;
      const kir_instr *val = &k->instrs.items[in->args[0]];
      if (P > 1) sbuf_printf(o, "#pragma unroll\n  for (int q = 0; q < %" PRId32 "; q++) r%" PRId32 "[q] = ", P, i);
      if (P > 1 && cg_stores_bits(cg, in) && cg_asm_result_bits(cg, val))
        sbuf_printf(o, "a%" PRId32 "_b%" PRId32 "[q]", val->args[0], val->result); /* the asm's own bits */
      else if (P > 1 && cg_stores_bits(cg, in) && cg_value_as_bits(cg, in->args[0]))
        sbuf_printf(o, "v%" PRId32 "_b[q]", in->args[0]);
      else if (P > 1 && cg_stores_bits(cg, in))
        sbuf_printf(o, "ic_pack_%s(v%" PRId32 "%s)", cg_dtname(in->dtype), in->args[0], src_const ? "" : "[q]");
      else if (P > 1) sbuf_printf(o, "v%" PRId32 "%s", in->args[0], src_const ? "" : "[q]");
      else if (!cg_stores_bits(cg, in)) sbuf_printf(o, "  r%" PRId32 " = v%" PRId32, i, in->args[0]);
      else if (cg_asm_result_bits(cg, val)) sbuf_printf(o, "  r%" PRId32 " = a%" PRId32 "_b%" PRId32, i, val->args[0], val->result);
      else if (cg_value_as_bits(cg, in->args[0])) sbuf_printf(o, "  r%" PRId32 " = v%" PRId32 "_b", i, in->args[0]);
      else sbuf_printf(o, "  r%" PRId32 " = ic_pack_%s(v%" PRId32 ")", i, cg_dtname(in->dtype), in->args[0]);
    } else {
      continue;
    }
    sbuf_puts(o, ";\n");
  }
  sbuf_puts(o, "}\n\n");
}

/* ---------------------------------------------------------------- the kernel */

const char *cg_scalar_width(ic_dtype dt) {
  size_t s = ic_dtype_size(dt);
  return s == 1 ? "8" : s == 2 ? "16" : s == 4 ? "32" : "64";
}

void cg_address(codegen *cg, const kir_instr *in, const char *last_var) {
  sbuf_printf(&cg->out, "b%" PRId32 " + (", in->buffer);
  cg_expr(cg, in->offset, last_var);
  sbuf_printf(&cg->out, ") * %zu", ic_dtype_size(in->dtype));
}

/* `ic_unpack_<dt>(ic_ld_s<bits>(address))`: load i's element, last var named last_var. */
void cg_load(codegen *cg, const kir_instr *in, const char *last_var) {
  sbuf_printf(&cg->out, "ic_unpack_%s(ic_ld_s%s(", cg_dtname(in->dtype), cg_scalar_width(in->dtype));
  cg_address(cg, in, last_var);
  sbuf_puts(&cg->out, "))");
}

/* A range's value: [parent && ](lo <= index && index < hi), the innermost var named
 * last_var (NULL: i<last>), the parent's value suffixed (an array's "[k]"). */
void cg_range(codegen *cg, const kir_instr *in, const char *last_var, const char *suffix) {
  sbuf *o = &cg->out;
  if (in->nargs == 1) sbuf_printf(o, "v%" PRId32 "%s && ", in->args[0], suffix);
  sbuf_puts(o, "(");
  cg_expr(cg, in->lo, last_var);
  sbuf_puts(o, ") <= (");
  cg_expr(cg, in->offset, last_var);
  sbuf_puts(o, ") && (");
  cg_expr(cg, in->offset, last_var);
  sbuf_puts(o, ") < (");
  cg_expr(cg, in->hi, last_var);
  sbuf_puts(o, ")");
}

/* Index vars of point `e` (a C variable name), innermost first: in 32-bit arithmetic
 * when the launch's points fit (n, and so every dim, below 2^32: decided at run time,
 * uniform over the grid), where a division is a few instructions, not a long sequence. */
void cg_decompose(codegen *cg, const char *e, const char *indent) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  if (k->ndim == 0) return;
  if (k->ndim == 1) {
    sbuf_printf(o, "%sconst ic_i64 i0 = %s;\n", indent, e);
    return;
  }
  /* the row strategy's dim: its row group q<d> over Dr groups */
  char var[IC_MAX_DIMS][16], size[IC_MAX_DIMS][16];
  for (int32_t d = 0; d < k->ndim; d++) {
    bool rows = cg->rows > 1 && d == cg->row_dim;
    snprintf(var[d], sizeof var[d], "%c%" PRId32, rows ? 'q' : 'i', d);
    snprintf(size[d], sizeof size[d], rows ? "Dr" : "d%" PRId32, d);
  }
  sbuf_printf(o, "%sic_i64 %s", indent, var[0]);
  for (int32_t d = 1; d < k->ndim; d++) sbuf_printf(o, ", %s", var[d]);
  sbuf_puts(o, ";\n");
  for (int32_t wide = 0; wide < 2; wide++) {
    const char *t = wide ? "ic_i64" : "ic_u32";
    if (wide) sbuf_printf(o, "%s} else {\n", indent);
    else sbuf_printf(o, "%sif (n <= 4294967295ll) {\n", indent);
    sbuf_printf(o, "%s  %s rem = (%s)%s;\n", indent, t, t, e);
    for (int32_t d = k->ndim - 1; d > 0; d--)
      sbuf_printf(o, "%s  %s = rem %% (%s)%s; rem /= (%s)%s;\n", indent, var[d], t, size[d], t, size[d]);
    sbuf_printf(o, "%s  %s = rem;\n", indent, var[0]);
  }
  sbuf_printf(o, "%s}\n", indent);
}

void cg_slot_body_calls(codegen *cg) {
  const bool pairs = cg->pair_body && cg->vec % 2 == 0;
  sbuf_printf(&cg->out, "#pragma unroll\n    for (int k = 0; k < %" PRId32 "; k += %d) ", cg->vec, pairs ? 2 : 1);
  if (pairs) {
    cg->pack = 2;
    cg_body_call(cg, " + k");
    cg->pack = 1;
  } else {
    cg_body_call(cg, "[k]");
  }
}

void cg_body_call(codegen *cg, const char *index) {
  const kir_kernel *k = cg->k;
  const char *sep = "";
  sbuf_printf(&cg->out, "%s_body%s(", cg->entry, cg->pair_body && cg->pack == 2 ? "2" : "");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_LOAD && in->kind != KIR_STORE && in->kind != KIR_RANGE) continue;
    sbuf_printf(&cg->out, "%s%c%" PRId32 "%s", sep, in->kind == KIR_STORE ? 'r' : 'v', i, index);
    sep = ", ";
  }
  sbuf_puts(&cg->out, ");\n");
}

/* The address of load i's vector: its own, or for a merged pair (cg->merged) the one its
 * true-arm load's guard picks. */
static void cg_vector_address(codegen *cg, int32_t i) {
  const kir_instr *items = cg->k->instrs.items;
  const int32_t j = cg->merged ? cg->merged[i] : -1;
  if (j < 0) {
    cg_address(cg, &items[i], NULL);
    return;
  }
  const int32_t a = cg->merged_true[i] ? i : j, b = a == i ? j : i;
  sbuf_printf(&cg->out, "(u%" PRId32 " ? ", items[a].args[0]);
  cg_address(cg, &items[a], NULL);
  sbuf_puts(&cg->out, " : ");
  cg_address(cg, &items[b], NULL);
  sbuf_puts(&cg->out, ")");
}

/* Load i's V elements as one vector (or 16-byte pieces) into v<i>[]. */
void cg_vector_load(codegen *cg, int32_t i) {
  const kir_instr *in = &cg->k->instrs.items[i];
  sbuf *o = &cg->out;
  const int32_t V = cg->vec;
  const char *dt = cg_dtname(in->dtype);
  int32_t words = V * (int32_t)ic_dtype_size(in->dtype) / 4;
  if (words > 4) { /* asm packs wider than 16 bytes: 16-byte pieces */
    sbuf_printf(o, "    { ic_u32 w[%" PRId32 "];\n", words);
    for (int32_t q = 0; q < words; q += 4) {
      sbuf_puts(o, "      ic_ld_w4((");
      cg_address(cg, in, NULL);
      sbuf_printf(o, ") + %" PRId32 ", &w[%" PRId32 "]);\n", q * 4, q);
    }
  } else {
    sbuf_printf(o, "    { ic_u32 w[%" PRId32 "]; ic_ld_w%" PRId32 "(", words, words);
    cg_vector_address(cg, i);
    sbuf_puts(o, ", w);\n");
  }
  if (ic_dtype_size(in->dtype) == 8) {
    sbuf_printf(o, "      for (int k = 0; k < %" PRId32 "; k++) v%" PRId32
                   "[k] = ic_unpack_%s(((ic_u64)w[2 * k + 1] << 32) | w[2 * k]); }\n",
                V, i, dt);
  } else {
    int32_t per_word = 4 / (int32_t)ic_dtype_size(in->dtype);
    sbuf_printf(o, "      for (int k = 0; k < %" PRId32 "; k++) v%" PRId32 "[k] = ic_unpack_%s(w[k / %" PRId32
                   "] >> (k %% %" PRId32 ") * %d); }\n",
                V, i, dt, per_word, per_word, 32 / per_word);
  }
}

/* Store i of a slot's V points r<i>[]: one vector (or 16-byte pieces), or element by
 * element. */
void cg_slot_store(codegen *cg, int32_t i) {
  const kir_kernel *k = cg->k;
  const kir_instr *in = &k->instrs.items[i];
  sbuf *o = &cg->out;
  const int32_t V = cg->vec;
  const char *dt = cg_dtname(in->dtype);
  if (cg->mode[i] == ACCESS_VECTOR) {
    int32_t words = V * (int32_t)ic_dtype_size(in->dtype) / 4;
    if (ic_dtype_size(in->dtype) == 8) {
      sbuf_printf(o, "    { ic_u32 w[%" PRId32 "];\n      for (int k = 0; k < %" PRId32 "; k++) { const ic_u64 p = ic_pack_%s(r%" PRId32
                        "[k]); w[2 * k] = (ic_u32)p; w[2 * k + 1] = (ic_u32)(p >> 32); }\n",
                     words, V, dt, i);
    } else {
      int32_t per_word = 4 / (int32_t)ic_dtype_size(in->dtype);
      sbuf_printf(o, "    { ic_u32 w[%" PRId32 "] = {0};\n      for (int k = 0; k < %" PRId32 "; k++) w[k / %" PRId32 "] |= ",
                  words, V, per_word);
      cg_store_bits(cg, i, "[k]");
      sbuf_printf(o, " << (k %% %" PRId32 ") * %d;\n", per_word, 32 / per_word);
    }
    /* one vector store, or 16-byte pieces (asm packs wider than 16 bytes) */
    for (int32_t q = 0; q < words; q += 4) {
      sbuf_printf(o, "      ic_st_w%" PRId32 "(", words < 4 ? words : 4);
      if (words > 4) sbuf_puts(o, "(");
      cg_address(cg, in, NULL);
      if (words > 4) sbuf_printf(o, ") + %" PRId32 ", &w[%" PRId32 "]);\n", q * 4, q);
      else sbuf_puts(o, ", w);");
    }
    sbuf_puts(o, words > 4 ? "    }\n" : " }\n");
  } else {
    sbuf_printf(o, "    for (int k = 0; k < %" PRId32 "; k++) { const ic_i64 j = i%" PRId32 " + k; ic_st_s%s(", V,
                   k->ndim - 1, cg_scalar_width(in->dtype));
    cg_address(cg, in, "j");
    sbuf_puts(o, ", ");
    cg_store_bits(cg, i, "[k]");
    sbuf_puts(o, "); }\n");
  }
}

/* Uniform ranges (kir_pointwise_strategy): each range at the slot's two ends; the slot
 * stays on the vector path (`if (slot_ok) {`, closed by the caller) when every range is
 * the same at both ends, or false at both on one side (monotone indices: then it is the
 * same at every point); u<i> is its value for the slot, v<i>[] the body's copies. */
static void cg_slot_ranges(codegen *cg) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  char last[48];
  snprintf(last, sizeof last, "(i%" PRId32 " + %" PRId32 ")", k->ndim - 1, cg->vec - 1);
  sbuf_puts(o, "    bool slot_ok = true;\n");
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_RANGE) sbuf_printf(o, "    bool u%" PRId32 ";\n", i);
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_RANGE) continue;
    sbuf_printf(o, "    {\n      const ic_i64 lo = ");
    cg_expr(cg, in->lo, NULL);
    sbuf_puts(o, ", hi = ");
    cg_expr(cg, in->hi, NULL);
    sbuf_puts(o, ", xa = ");
    cg_expr(cg, in->offset, NULL);
    sbuf_puts(o, ", xb = ");
    cg_expr(cg, in->offset, last);
    sbuf_puts(o, ";\n      const bool ina = lo <= xa && xa < hi, inb = lo <= xb && xb < hi;\n"
                 "      slot_ok = slot_ok && ina == inb && (ina || (xa < lo) == (xb < lo));\n");
    sbuf_printf(o, "      u%" PRId32 " = ", i);
    if (in->nargs == 1) sbuf_printf(o, "u%" PRId32 " && ", in->args[0]);
    sbuf_puts(o, "ina;\n    }\n");
  }
  sbuf_puts(o, "    if (slot_ok) {\n");
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_RANGE)
      sbuf_printf(o, "    bool v%" PRId32 "[%" PRId32 "];\n    for (int k = 0; k < %" PRId32 "; k++) v%" PRId32 "[k] = u%" PRId32 ";\n",
                  i, cg->vec, cg->vec, i, i);
}

/* The vector path's uniform conditions: every buffer a vector access uses aligned to its
 * vector, every alignment check a multiple of V; each ends in " && ". */
void cg_vector_conditions(codegen *cg) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t V = cg->vec;
  for (int32_t b = 0; b < k->buffers.count; b++) {
    bool vector_use = false;
    for (int32_t j = 0; j < k->instrs.count; j++) {
      const kir_instr *in = &k->instrs.items[j];
      vector_use |= (in->kind == KIR_LOAD || in->kind == KIR_STORE) && in->buffer == b && cg->mode[j] == ACCESS_VECTOR;
    }
    if (vector_use)
      sbuf_printf(o, "((ic_u64)b%" PRId32 " & %zu) == 0 && ", b, (size_t)V * ic_dtype_size(k->buffers.items[b].dtype) - 1);
  }
  for (int32_t i = 0; i < cg->aligned.count; i++) {
    sbuf_puts(o, "(");
    cg_expr(cg, cg->aligned.items[i], NULL);
    sbuf_printf(o, ") %% %" PRId32 " == 0 && ", V);
  }
}

/* Unguarded load i of a slot into v<i>[] (declared): one vector, one element for the
 * slot (splat), or element by element. */
void cg_slot_load(codegen *cg, int32_t i) {
  const kir_kernel *k = cg->k;
  const kir_instr *in = &k->instrs.items[i];
  sbuf *o = &cg->out;
  const int32_t V = cg->vec;
  if (cg->mode[i] == ACCESS_VECTOR) {
    cg_vector_load(cg, i);
  } else if (cg->mode[i] == ACCESS_SPLAT) {
    sbuf_printf(o, "    { const %s t = ", cg_ctype(in->dtype));
    cg_load(cg, in, NULL);
    sbuf_printf(o, "; for (int k = 0; k < %" PRId32 "; k++) v%" PRId32 "[k] = t; }\n", V, i);
  } else {
    sbuf_printf(o, "    for (int k = 0; k < %" PRId32 "; k++) { const ic_i64 j = i%" PRId32 " + k; v%" PRId32 "[k] = ", V,
                k->ndim - 1, i);
    cg_load(cg, in, "j");
    sbuf_puts(o, "; }\n");
  }
}

/* Whether instruction i (a load or a range) is read again for each of a thread's rows:
 * it depends on the rows strategy's dim (cg->rows > 1). */
static bool cg_per_row(const codegen *cg, int32_t i) {
  return cg->rows > 1 && sym_depends_on(cg->a, cg->k->instrs.items[i].offset, SYM_VAR, cg->row_dim);
}

/* The rows strategy's loop over a thread's rows: i<row_dim> defined (the caller closes
 * the loop). The point path leaves rows past d<row_dim> out; the vector path (clamped)
 * has no branch between its rows, so that the loads of every row can be in flight at once
 * (a break after a row's store would keep the next row's loads behind it): a row past
 * d<row_dim> reads the last row again and row_live skips its stores. */
static void cg_rows_loop(codegen *cg, const char *indent, bool clamped) {
  const int32_t d = cg->row_dim, R = cg->rows;
  sbuf *o = &cg->out;
  sbuf_printf(o, "#pragma unroll\n%sfor (int r = 0; r < %" PRId32 "; r++) {\n", indent, R);
  if (clamped)
    sbuf_printf(o,
                "%s  const bool row_live = q%" PRId32 " * %" PRId32 " + r < d%" PRId32 ";\n%s  const ic_i64 i%" PRId32
                " = row_live ? q%" PRId32 " * %" PRId32 " + r : d%" PRId32 " - 1;\n",
                indent, d, R, d, indent, d, d, R, d);
  else
    sbuf_printf(o, "%s  const ic_i64 i%" PRId32 " = q%" PRId32 " * %" PRId32 " + r;\n%s  if (i%" PRId32 " >= d%" PRId32 ") break;\n",
                indent, d, d, R, indent, d, d);
}

/* The slot's values of range or load i (declared): ranges point by point (unless uniform),
 * guarded loads as vectors under their uniform range or point by point, the others
 * cg_slot_load. */
static void cg_slot_value(codegen *cg, int32_t i) {
  const kir_kernel *k = cg->k;
  const kir_instr *in = &k->instrs.items[i];
  sbuf *o = &cg->out;
  const int32_t V = cg->vec;
  if (in->kind == KIR_RANGE) {
    if (cg->uniform_ranges) return; /* cg_slot_ranges made them */
    sbuf_printf(o, "    bool v%" PRId32 "[%" PRId32 "];\n    for (int k = 0; k < %" PRId32 "; k++) { const ic_i64 j = i%" PRId32
                      " + k; v%" PRId32 "[k] = ",
                   i, V, V, k->ndim - 1, i);
    cg_range(cg, in, "j", "[k]");
    sbuf_puts(o, "; }\n");
    return;
  }
  const char *ct = cg_ctype(in->dtype);
  sbuf_printf(o, "    %s v%" PRId32 "[%" PRId32 "];\n", ct, i, V);
  const int32_t pair = cg->merged ? cg->merged[i] : -1;
  if (pair >= 0 && pair < i) { /* the pair's first load read both (kir_shared_loads) */
    sbuf_printf(o, "    for (int k = 0; k < %" PRId32 "; k++) v%" PRId32 "[k] = v%" PRId32 "[k];\n", V, i, pair);
  } else if (pair >= 0) {
    sbuf_printf(o, "    if (u%" PRId32 " || u%" PRId32 ") {\n", in->args[0], k->instrs.items[pair].args[0]);
    cg_vector_load(cg, i);
    sbuf_printf(o, "    } else {\n      for (int k = 0; k < %" PRId32 "; k++) v%" PRId32 "[k] = (%s)0;\n    }\n", V, i, ct);
  } else if (kir_is_guarded_load(in) && cg->mode[i] == ACCESS_VECTOR) {
    /* the guard holds at every point of the slot or at none */
    sbuf_printf(o, "    if (u%" PRId32 ") {\n", in->args[0]);
    cg_vector_load(cg, i);
    sbuf_printf(o, "    } else {\n      for (int k = 0; k < %" PRId32 "; k++) v%" PRId32 "[k] = (%s)0;\n    }\n", V, i, ct);
  } else if (kir_is_guarded_load(in)) {
    sbuf_printf(o, "    for (int k = 0; k < %" PRId32 "; k++) { const ic_i64 j = i%" PRId32
                      " + k; v%" PRId32 "[k] = v%" PRId32 "[k] ? ",
                   V, k->ndim - 1, i, in->args[0]);
    cg_load(cg, in, "j");
    sbuf_printf(o, " : (%s)0; }\n", ct);
  } else {
    cg_slot_load(cg, i);
  }
}

static void cg_vector_path(codegen *cg) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  int32_t V = cg->vec;
  sbuf_puts(o, "  if (");
  cg_vector_conditions(cg);
  if (k->ndim > 1) sbuf_printf(o, "d%" PRId32 " %% %" PRId32 " == 0 && ", k->ndim - 1, V);
  /* asm groups: n counts the padded rows; a 1-d slot must lie in the real elements */
  sbuf_printf(o, "e0 + %" PRId32 " <= %s) {\n", V, cg->pack > 1 && k->ndim == 1 ? "d0" : "n");
  cg_decompose(cg, "e0", "    ");
  if (cg->uniform_ranges) cg_slot_ranges(cg);
  /* the slot's values; with rows, those of the row dim once a row */
  for (int pass = 0; pass < (cg->rows > 1 ? 2 : 1); pass++) {
    if (pass == 1) cg_rows_loop(cg, "    ", true);
    for (int32_t i = 0; i < k->instrs.count; i++) {
      const kir_instr *in = &k->instrs.items[i];
      if ((in->kind == KIR_LOAD || in->kind == KIR_RANGE) && cg_per_row(cg, i) == (pass == 1)) cg_slot_value(cg, i);
    }
  }
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_STORE) sbuf_printf(o, "    %s r%" PRId32 "[%" PRId32 "];\n", cg_store_type(cg, in), i, V);
  }
  if (cg->pack > 1) {
    sbuf_printf(o, "#pragma unroll\n    for (int k = 0; k < %" PRId32 "; k += %" PRId32 ") ", V, cg->pack);
    cg_body_call(cg, " + k");
  } else {
    cg_slot_body_calls(cg);
  }
  if (cg->rows > 1) sbuf_puts(o, "    if (row_live) {\n");
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_STORE) cg_slot_store(cg, i);
  if (cg->rows > 1) sbuf_puts(o, "    }\n    }\n");
  sbuf_puts(o, cg->uniform_ranges ? "    return;\n    }\n  }\n" : "    return;\n  }\n");
}

/* One point: its ranges and loads as scalars, its stores' r<i> declared, the body, the
 * stores. */
static void cg_point(codegen *cg, const char *indent) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_RANGE) {
      sbuf_printf(o, "%sconst bool v%" PRId32 " = ", indent, i);
      cg_range(cg, in, NULL, "");
      sbuf_puts(o, ";\n");
    } else if (in->kind == KIR_LOAD) {
      sbuf_printf(o, "%sconst %s v%" PRId32 " = ", indent, cg_ctype(in->dtype), i);
      if (kir_is_guarded_load(in)) sbuf_printf(o, "v%" PRId32 " ? ", in->args[0]);
      cg_load(cg, in, NULL);
      if (kir_is_guarded_load(in)) sbuf_printf(o, " : (%s)0", cg_ctype(in->dtype));
      sbuf_puts(o, ";\n");
    } else if (in->kind == KIR_STORE) {
      sbuf_printf(o, "%s%s r%" PRId32 ";\n", indent, cg_store_type(cg, in), i);
    }
  }
  sbuf_puts(o, indent);
  cg_body_call(cg, "");
  cg_point_stores(cg, NULL, indent);
}

static void cg_scalar_path(codegen *cg) {
  sbuf *o = &cg->out;
  sbuf_printf(o, "  for (int k = 0; k < %" PRId32 "; k++) {\n    const ic_i64 e = e0 + k;\n    if (e >= n) break;\n",
                 cg->vec);
  cg_decompose(cg, "e", "    ");
  if (cg->rows > 1) {
    cg_rows_loop(cg, "    ", false);
    cg_point(cg, "      ");
    sbuf_puts(o, "    }\n");
  } else {
    cg_point(cg, "    ");
  }
  sbuf_puts(o, "  }\n");
}

void cg_point_stores(codegen *cg, const char *last_var, const char *indent) {
  const kir_kernel *k = cg->k;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_STORE) continue;
    sbuf_printf(&cg->out, "%sic_st_s%s(", indent, cg_scalar_width(in->dtype));
    cg_address(cg, in, last_var);
    sbuf_puts(&cg->out, ", ");
    cg_store_bits(cg, i, "");
    sbuf_puts(&cg->out, ");\n");
  }
}

void cg_kernel_head(codegen *cg, int32_t block, int32_t min_blocks, int32_t cluster) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  sbuf_puts(o, "extern \"C\" __global__ void ");
  if (cluster > 1) sbuf_printf(o, "__cluster_dims__(%" PRId32 ", 1, 1) ", cluster);
  sbuf_printf(o, "__launch_bounds__(%" PRId32, block);
  if (min_blocks > 0) sbuf_printf(o, ", %" PRId32, min_blocks);
  sbuf_printf(o, ") %s(", cg->entry);
  for (int32_t i = 0; i < k->params.count; i++) {
    const kir_param *p = &k->params.items[i];
    if (i) sbuf_puts(o, ", ");
    if (p->kind == KIR_PARAM_BUFFER)
      sbuf_printf(o, "%sic_u8 *__restrict__ b%" PRId32, k->buffers.items[p->index].written ? "" : "const ", p->index);
    else sbuf_printf(o, "const ic_i64 %c%" PRId32, p->kind == KIR_PARAM_SYMBOL ? 's' : 'p', p->index); /* as sym_print names them */
  }
  sbuf_puts(o, ") {\n");
  for (int32_t d = 0; d < k->ndim; d++) {
    sbuf_printf(o, "  const ic_i64 d%" PRId32 " = ", d);
    cg_expr(cg, k->dims[d], NULL);
    sbuf_puts(o, ";\n");
  }
}

/* The vars of padded point e (cg->pack > 1: the last dim padded to Dp), and ok: a real
 * point (below n and inside the real last dim). */
static void cg_decompose_padded(codegen *cg, const char *indent) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  int32_t last = k->ndim - 1;
  sbuf_printf(o, "%sconst ic_i64 j = e %% Dp;\n%sic_i64 rem = e / Dp;\n", indent, indent);
  if (last >= 0) sbuf_printf(o, "%sconst ic_i64 i%" PRId32 " = j;\n", indent, last);
  for (int32_t d = last - 1; d > 0; d--)
    sbuf_printf(o, "%sconst ic_i64 i%" PRId32 " = rem %% d%" PRId32 "; rem /= d%" PRId32 ";\n", indent, d, d, d);
  if (last > 0) sbuf_printf(o, "%sconst ic_i64 i0 = rem;\n", indent);
  sbuf_printf(o, "%s(void)rem;\n", indent);
  if (last >= 0) sbuf_printf(o, "%sconst bool ok = e < n && j < d%" PRId32 ";\n", indent, last);
  else sbuf_printf(o, "%sconst bool ok = e < n && j < 1;\n", indent);
}

/* The slot's points as P-element groups (cg->pack > 1): padding points read nothing
 * (their values are zeros) and store nothing; every group goes to the body whole. A group
 * at a time, not unrolled: this path takes only a slot's tail or misaligned views, and
 * the whole slot's values at once would set the registers (and the occupancy) of the
 * kernel's vector path too. */
static void cg_scalar_path_packed(codegen *cg) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  const int32_t V = cg->vec, P = cg->pack, last = k->ndim - 1;
  if (last >= 0)
    sbuf_printf(o, "  const ic_i64 Dp = (d%" PRId32 " + %" PRId32 ") / %" PRId32 " * %" PRId32 ";\n", last, P - 1, P, P);
  else
    sbuf_printf(o, "  const ic_i64 Dp = %" PRId32 ";\n", P);
  sbuf_printf(o, "#pragma unroll 1\n  for (int g = 0; g < %" PRId32 "; g += %" PRId32 ") {\n  bool okk[%" PRId32 "];\n", V, P, P);
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_LOAD || in->kind == KIR_RANGE || in->kind == KIR_STORE)
      sbuf_printf(o, "  %s %c%" PRId32 "[%" PRId32 "];\n",
                  in->kind == KIR_RANGE ? "bool" : in->kind == KIR_STORE ? cg_store_type(cg, in) : cg_ctype(in->dtype),
                  in->kind == KIR_STORE ? 'r' : 'v', i, P);
  }
  sbuf_printf(o, "#pragma unroll\n  for (int k = 0; k < %" PRId32 "; k++) {\n    const ic_i64 e = e0 + g + k;\n", P);
  cg_decompose_padded(cg, "    ");
  sbuf_puts(o, "    okk[k] = ok;\n");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_RANGE) {
      sbuf_printf(o, "    v%" PRId32 "[k] = ok && ", i);
      cg_range(cg, in, NULL, "[k]");
      sbuf_puts(o, ";\n");
    } else if (in->kind == KIR_LOAD) {
      sbuf_printf(o, "    v%" PRId32 "[k] = ok", i);
      if (kir_is_guarded_load(in)) sbuf_printf(o, " && v%" PRId32 "[k]", in->args[0]);
      sbuf_puts(o, " ? ");
      cg_load(cg, in, NULL);
      sbuf_printf(o, " : (%s)0;\n", cg_ctype(in->dtype));
    }
  }
  sbuf_puts(o, "  }\n  ");
  cg_body_call(cg, "");
  sbuf_printf(o, "#pragma unroll\n  for (int k = 0; k < %" PRId32 "; k++) {\n    if (!okk[k]) continue;\n    const ic_i64 e = e0 + g + k;\n", P);
  cg_decompose_padded(cg, "    ");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_STORE) continue;
    sbuf_printf(o, "    ic_st_s%s(", cg_scalar_width(in->dtype));
    cg_address(cg, in, NULL);
    sbuf_puts(o, ", ");
    cg_store_bits(cg, i, "[k]");
    sbuf_puts(o, ");\n");
  }
  sbuf_puts(o, "    (void)ok;\n  }\n  }\n");
}

static void cg_kernel(codegen *cg) {
  const kir_kernel *k = cg->k;
  sbuf *o = &cg->out;
  cg_kernel_head(cg, CUDA_BLOCK, 0, 1);
  if (cg->rows > 1) /* the rows strategy: n counts the row groups' points (kir_row_points) */
    sbuf_printf(o, "  const ic_i64 Dr = (d%" PRId32 " + %" PRId32 ") / %" PRId32 ";\n", cg->row_dim, cg->rows - 1, cg->rows);
  sbuf_puts(o, "  const ic_i64 n = ");
  if (cg->rows > 1) {
    sbuf_puts(o, "(ic_i64)1");
    for (int32_t d = 0; d < k->ndim; d++) sbuf_printf(o, d == cg->row_dim ? " * Dr" : " * d%" PRId32, d);
  } else if (cg->pack > 1) {
    /* every last-dim row padded to a multiple of P (the launch's kir.launch_numel) */
    if (k->ndim == 0) sbuf_printf(o, "%" PRId32, cg->pack);
    else sbuf_printf(o, "(d%" PRId32 " + %" PRId32 ") / %" PRId32 " * %" PRId32, k->ndim - 1, cg->pack - 1, cg->pack, cg->pack);
    for (int32_t d = 0; d + 1 < k->ndim; d++) sbuf_printf(o, " * d%" PRId32, d);
  } else {
    cg_expr(cg, k->numel, NULL);
  }
  sbuf_printf(o, ";\n  const ic_i64 e0 = ((ic_i64)blockIdx.x * %d + threadIdx.x) * %" PRId32 ";\n", CUDA_BLOCK,
                 cg->vec);
  sbuf_puts(o, "  if (e0 >= n) return;\n");
  if (cg->vec > 1 && k->ndim > 0) cg_vector_path(cg);
  if (cg->pack > 1) cg_scalar_path_packed(cg);
  else cg_scalar_path(cg);
  sbuf_puts(o, "}\n");
}

/* The pairs of guarded loads one vector load serves (kir_shared_loads) and the exact ops
 * left unrounded (kir_exact_unrounded); out of memory: none, the same results, slower. */
static void cg_plan_kir_choices(codegen *cg, const kir_pointwise_strategy *ps) {
  const size_t n = (size_t)cg->k->instrs.count + 1;
  cg->merged = sys_malloc(n * sizeof *cg->merged);
  cg->merged_true = sys_malloc(n * sizeof *cg->merged_true);
  cg->exact_unrounded = sys_malloc(n * sizeof *cg->exact_unrounded);
  if (!cg->merged || !cg->merged_true || !kir_shared_loads(cg->k, ps, cg->merged, cg->merged_true)) {
    free(cg->merged);
    free(cg->merged_true);
    cg->merged = NULL;
    cg->merged_true = NULL;
  }
  if (cg->exact_unrounded && !kir_exact_unrounded(cg->k, cg->exact_unrounded)) {
    free(cg->exact_unrounded);
    cg->exact_unrounded = NULL;
  }
}

cuda_smem_limits cuda_smem_of(int32_t sm) {
  switch (sm) {
  case 80: case 87: return (cuda_smem_limits){163 * 1024, 164 * 1024};
  case 90: case 100: case 103: return (cuda_smem_limits){227 * 1024, 228 * 1024};
  default: return (cuda_smem_limits){99 * 1024, 100 * 1024}; /* sm_86, sm_89, sm_120 and unknown ones */
  }
}

ic_status cuda_codegen(const kir_kernel *k, const char *entry, int32_t sm, cuda_codegen_result *res) {
  if (k->contracts) return cuda_codegen_matmul(k, entry, sm, res);
  if (k->reduces) return cuda_codegen_reduce(k, entry, sm, res);
  codegen cg = {.k = k, .entry = entry, .a = k->syms};
  kir_pointwise_strategy ps;
  kir_pointwise_strategy_of(k, &ps);
  cg.pack = kir_pack(k); /* asm groups: P points a body call, at least P a slot */
  cg.vec = ps.vec;
  cg.uniform_ranges = ps.uniform_ranges;
  cg.row_dim = ps.row_dim;
  cg.rows = ps.rows;
  cg.mode = sys_calloc((size_t)k->instrs.count + 1, sizeof *cg.mode);
  if (!cg.mode) return error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_LOAD && in->kind != KIR_STORE) continue;
    sym_id checks[IC_MAX_DIMS + 1];
    int32_t n;
    kir_access acc = kir_instr_access(k, &ps, i, checks, &n);
    cg.mode[i] = acc == KIR_ACCESS_VECTOR  ? ACCESS_VECTOR
                 : acc == KIR_ACCESS_SPLAT ? ACCESS_SPLAT
                 : acc == KIR_ACCESS_TILED ? ACCESS_TILED
                                           : ACCESS_ELEMENT;
    for (int32_t c = 0; acc == KIR_ACCESS_VECTOR && c < n; c++) cg_require_aligned(&cg, checks[c]);
  }
  cg_plan_kir_choices(&cg, &ps);
  cg_body(&cg);
  /* pairs of points for the vector slots where roundings to bf16 or f16 pair up (F2F is a
   * quarter-rate instruction on sm_90; ptxas pairs only conversions whose bits it packs) */
  if (cg.pack == 1 && cg.vec % 2 == 0 && cg_body_weight(k) <= CG_BODY_INLINE_MAX_WEIGHT && cg_has_pair_rounding(&cg)) {
    cg.pair_body = true;
    cg.pack = 2;
    cg_body(&cg);
    cg.pack = 1;
  }
  if (ps.tile_dim >= 0) cg_tiled_kernel(&cg, ps.tile_dim, ps.tile_last);
  else cg_kernel(&cg);
  free(cg.mode);
  free(cg.merged);
  free(cg.merged_true);
  free(cg.exact_unrounded);
  free(cg.aligned.items);
  res->source = cuda_source_assemble(entry, &cg.out);
  res->per_thread = cg.vec;
  if (ps.tile_dim >= 0) { /* a block a tile: the launch counts the padded tiles' points */
    res->block = KIR_TILE_THREADS;
    res->per_block = KIR_TILE * ps.tile_last;
  }
  if (!res->source || cg.oom || sym_arena_failed(cg.a)) {
    free(res->source);
    res->source = NULL;
    return error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
  }
  return IC_OK;
}
