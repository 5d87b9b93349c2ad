/* The reference backend's scalar semantics: the table of include/ic/ic.h, computed the
 * way the CUDA backend's prelude computes it, so that exactly rounded ops agree bit for
 * bit (NaN results of arithmetic are the canonical 0x7fffffff, as GPU arithmetic gives). */
#include <math.h>
#include <string.h>

#include "backend/ref/ref.h"
#include "runtime/half.h"

static float ref_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t ref_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* GPU arithmetic returns this NaN whatever its operands' payloads. */
static float ref_canonical(float f) { return isnan(f) ? ref_bits_f32(0x7fffffffu) : f; }

/* f16/bf16 results are rounded to their dtype (f32 stays). */
static float ref_round(ic_dtype dt, float f) {
  if (dt == IC_F16) return ic_f16_bits_to_f32(ic_f32_to_f16_bits(f));
  if (dt == IC_BF16) return ic_bf16_bits_to_f32(ic_f32_to_bf16_bits(f));
  return f;
}

ref_value ref_load(ic_dtype dt, const void *base, int64_t index) {
  ref_value v = {0};
  const unsigned char *p = (const unsigned char *)base + index * (int64_t)ic_dtype_size(dt);
  uint16_t h;
  switch (dt) {
  case IC_F32: memcpy(&v.f, p, 4); break;
  case IC_F16: memcpy(&h, p, 2); v.f = ic_f16_bits_to_f32(h); break;
  case IC_BF16: memcpy(&h, p, 2); v.f = ic_bf16_bits_to_f32(h); break;
  case IC_I32: memcpy(&v.i, p, 4); break;
  case IC_BOOL: v.b = *p != 0; break;
  default: break;
  }
  return v;
}

void ref_store(ic_dtype dt, void *base, int64_t index, ref_value v) {
  unsigned char *p = (unsigned char *)base + index * (int64_t)ic_dtype_size(dt);
  uint16_t h;
  switch (dt) {
  case IC_F32: memcpy(p, &v.f, 4); break;
  case IC_F16: h = ic_f32_to_f16_bits(v.f); memcpy(p, &h, 2); break;
  case IC_BF16: h = ic_f32_to_bf16_bits(v.f); memcpy(p, &h, 2); break;
  case IC_I32: memcpy(p, &v.i, 4); break;
  case IC_BOOL: *p = v.b ? 1 : 0; break;
  default: break;
  }
}

ref_value ref_constant(ic_dtype dt, double value) {
  ref_value v = {0};
  if (dt == IC_BOOL) v.b = value != 0;
  else if (dt == IC_I32) v.i = (int32_t)value; /* already rounded to i32 by the builder */
  else v.f = (float)value;                     /* f16/bf16 values are exact in f32 */
  return v;
}

/* float -> i32 as cvt.rzi.sat.s32.f32: truncate, saturate, NaN -> 0. */
static int32_t ref_f2i32(float f) {
  if (isnan(f)) return 0;
  if (f >= 2147483648.0f) return INT32_MAX;
  if (f <= -2147483648.0f) return INT32_MIN;
  return (int32_t)f;
}

static ref_value ref_cast(ic_dtype from, ic_dtype to, ref_value a) {
  ref_value r = {0};
  bool ffrom = from != IC_I32 && from != IC_BOOL;
  if (from == to) return a;
  if (to == IC_BOOL) r.b = ffrom ? a.f != 0.0f : from == IC_I32 ? a.i != 0 : a.b;
  else if (from == IC_BOOL) { if (to == IC_I32) r.i = a.b; else r.f = a.b ? 1.0f : 0.0f; }
  else if (to == IC_I32) r.i = ref_f2i32(a.f);
  else if (from == IC_I32) r.f = (float)ic_dtype_round(to, (double)a.i); /* one rounding */
  else r.f = ref_round(to, a.f);
  return r;
}

static float ref_max_f32(float a, float b) {
  if (isnan(a) || isnan(b)) return ref_bits_f32(0x7fffffffu);
  if (a == b) return signbit(a) ? b : a; /* max.NaN.f32: +0 over -0 */
  return a > b ? a : b;
}

static float ref_min_f32(float a, float b) {
  if (isnan(a) || isnan(b)) return ref_bits_f32(0x7fffffffu);
  if (a == b) return signbit(a) ? a : b; /* min.NaN.f32: -0 under +0 */
  return a < b ? a : b;
}

static float ref_sign_f32(float a) {
  if (a > 0.0f) return 1.0f;
  if (a < 0.0f) return -1.0f;
  return isnan(a) ? ref_bits_f32(0x7fffffffu) : a;
}

static float ref_gelu_tanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * (x * x * x));
  return (0.5f * x) * (1.0f + tanhf(inner));
}

/* An op on float operands, before rounding to the result dtype. */
static float ref_float_op(ic_op op, float a, float b, float c) {
  switch (op) {
  case IC_OP_NEG: return ref_bits_f32(ref_f32_bits(a) ^ 0x80000000u); /* a sign flip, NaN too */
  case IC_OP_EXP: return ref_canonical(expf(a));
  case IC_OP_LOG: return ref_canonical(logf(a));
  case IC_OP_SQRT: return ref_canonical(sqrtf(a));
  case IC_OP_TANH: return ref_canonical(tanhf(a));
  case IC_OP_SIGMOID: return ref_canonical(1.0f / (1.0f + expf(-a)));
  case IC_OP_RELU: return a > 0.0f ? a : ref_canonical(isnan(a) ? a : 0.0f);
  case IC_OP_GELU_TANH: return ref_canonical(ref_gelu_tanh(a));
  case IC_OP_ABS: return ref_bits_f32(ref_f32_bits(a) & 0x7fffffffu);
  case IC_OP_EXP2: return ref_canonical(exp2f(a));
  case IC_OP_EXPM1: return ref_canonical(expm1f(a));
  case IC_OP_LOG2: return ref_canonical(log2f(a));
  case IC_OP_LOG10: return ref_canonical(log10f(a));
  case IC_OP_LOG1P: return ref_canonical(log1pf(a));
  case IC_OP_RSQRT: return ref_canonical(1.0f / sqrtf(a));
  case IC_OP_RECIPROCAL: return ref_canonical(1.0f / a);
  case IC_OP_SIN: return ref_canonical(sinf(a));
  case IC_OP_COS: return ref_canonical(cosf(a));
  case IC_OP_TAN: return ref_canonical(tanf(a));
  case IC_OP_ASIN: return ref_canonical(asinf(a));
  case IC_OP_ACOS: return ref_canonical(acosf(a));
  case IC_OP_ATAN: return ref_canonical(atanf(a));
  case IC_OP_SINH: return ref_canonical(sinhf(a));
  case IC_OP_COSH: return ref_canonical(coshf(a));
  case IC_OP_ASINH: return ref_canonical(asinhf(a));
  case IC_OP_ACOSH: return ref_canonical(acoshf(a));
  case IC_OP_ATANH: return ref_canonical(atanhf(a));
  case IC_OP_ERF: return ref_canonical(erff(a));
  case IC_OP_ERFC: return ref_canonical(erfcf(a));
  case IC_OP_SILU: return ref_canonical(a / (1.0f + expf(-a)));
  case IC_OP_SOFTPLUS: return ref_canonical(a > 20.0f ? a : log1pf(expf(a)));
  case IC_OP_GELU_ERF: return ref_canonical((0.5f * a) * (1.0f + erff(a * 0.70710678118654752f)));
  case IC_OP_FLOOR: return ref_canonical(floorf(a));
  case IC_OP_CEIL: return ref_canonical(ceilf(a));
  case IC_OP_ROUND: return ref_canonical(rintf(a)); /* the default rounding: half to even */
  case IC_OP_TRUNC: return ref_canonical(truncf(a));
  case IC_OP_FRAC: return ref_canonical(a - truncf(a));
  case IC_OP_SIGN: return ref_sign_f32(a);
  case IC_OP_MINIMUM: return ref_min_f32(a, b);
  case IC_OP_FMAX: return isnan(a) ? b : isnan(b) ? a : ref_max_f32(a, b);
  case IC_OP_FMIN: return isnan(a) ? b : isnan(b) ? a : ref_min_f32(a, b);
  case IC_OP_COPYSIGN: return ref_bits_f32((ref_f32_bits(a) & 0x7fffffffu) | (ref_f32_bits(b) & 0x80000000u));
  case IC_OP_POW: return ref_canonical(powf(a, b));
  case IC_OP_ATAN2: return ref_canonical(atan2f(a, b));
  case IC_OP_HYPOT: return ref_canonical(hypotf(a, b));
  case IC_OP_FMOD: return ref_canonical(fmodf(a, b));
  case IC_OP_REMAINDER: {
    const float f = floorf(a / b);
    return ref_canonical(a - b * f);
  }
  case IC_OP_FLOOR_DIVIDE: return ref_canonical(floorf(a / b));
  case IC_OP_TRUNC_DIVIDE: return ref_canonical(truncf(a / b));
  case IC_OP_CLAMP: return ref_min_f32(ref_max_f32(a, b), c);
  case IC_OP_LERP: return ref_canonical(c < 0.5f ? a + c * (b - a) : b - (b - a) * (1.0f - c));
  case IC_OP_FMA: return ref_canonical(fmaf(a, b, c));
  case IC_OP_ADD: return ref_canonical(a + b);
  case IC_OP_SUB: return ref_canonical(a - b);
  case IC_OP_MUL: return ref_canonical(a * b);
  case IC_OP_DIV: return ref_canonical(a / b);
  case IC_OP_MAXIMUM: return ref_max_f32(a, b);
  default: return 0.0f;
  }
}

/* i32 division: by zero gives 0; INT_MIN / -1 wraps (its remainder is 0). */
static bool ref_div_wraps(int32_t a, int32_t b) { return a == INT32_MIN && b == -1; }
static int32_t ref_truncdiv(int32_t a, int32_t b) { return b == 0 ? 0 : ref_div_wraps(a, b) ? a : a / b; }
static int32_t ref_fmod(int32_t a, int32_t b) { return b == 0 || ref_div_wraps(a, b) ? 0 : a % b; }

static int32_t ref_i32_op(ic_op op, int32_t a, int32_t b, int32_t c) {
  uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
  int32_t q = ref_truncdiv(a, b), r = ref_fmod(a, b);
  switch (op) {
  case IC_OP_NEG: return (int32_t)(0u - ua);
  case IC_OP_RELU: return a > 0 ? a : 0;
  case IC_OP_ADD: return (int32_t)(ua + ub);
  case IC_OP_SUB: return (int32_t)(ua - ub);
  case IC_OP_MUL: return (int32_t)(ua * ub);
  case IC_OP_MAXIMUM: case IC_OP_FMAX: return a > b ? a : b;
  case IC_OP_MINIMUM: case IC_OP_FMIN: return a < b ? a : b;
  case IC_OP_ABS: return (int32_t)(a < 0 ? 0u - ua : ua);
  case IC_OP_SIGN: return (a > 0) - (a < 0);
  case IC_OP_BITWISE_NOT: return (int32_t)~ua;
  case IC_OP_FMOD: return r;
  case IC_OP_REMAINDER: return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  case IC_OP_TRUNC_DIVIDE: return q;
  case IC_OP_FLOOR_DIVIDE: return b != 0 && !ref_div_wraps(a, b) && q * b != a && ((a < 0) != (b < 0)) ? q - 1 : q;
  case IC_OP_BITWISE_AND: return a & b;
  case IC_OP_BITWISE_OR: return a | b;
  case IC_OP_BITWISE_XOR: return a ^ b;
  case IC_OP_SHIFT_LEFT: return b < 0 || b >= 32 ? 0 : (int32_t)(ua << b);
  case IC_OP_SHIFT_RIGHT: return b < 0 || b >= 32 ? (a < 0 ? -1 : 0) : a >> b;
  case IC_OP_CLAMP: {
    int32_t lo = a > b ? a : b;
    return lo < c ? lo : c;
  }
  default: return 0;
  }
}

static bool ref_compare(ic_op op, ic_dtype dt, ref_value a, ref_value b) {
  if (dt == IC_BOOL) return op == IC_OP_EQ ? a.b == b.b : a.b != b.b;
  if (dt == IC_I32) {
    switch (op) {
    case IC_OP_EQ: return a.i == b.i;
    case IC_OP_NE: return a.i != b.i;
    case IC_OP_LT: return a.i < b.i;
    case IC_OP_LE: return a.i <= b.i;
    case IC_OP_GT: return a.i > b.i;
    default: return a.i >= b.i;
    }
  }
  switch (op) {
  case IC_OP_EQ: return a.f == b.f;
  case IC_OP_NE: return a.f != b.f;
  case IC_OP_LT: return a.f < b.f;
  case IC_OP_LE: return a.f <= b.f;
  case IC_OP_GT: return a.f > b.f;
  default: return a.f >= b.f;
  }
}

/* Ops with a bool result on one operand. */
static bool ref_predicate(ic_op op, ic_dtype dt, ref_value a) {
  bool is_float = dt != IC_I32 && dt != IC_BOOL;
  switch (op) {
  case IC_OP_LOGICAL_NOT: return dt == IC_BOOL ? !a.b : is_float ? a.f == 0.0f : a.i == 0;
  case IC_OP_ISNAN: return is_float && isnan(a.f);
  case IC_OP_ISINF: return is_float && isinf(a.f);
  case IC_OP_ISFINITE: return !is_float || isfinite(a.f);
  default: return false;
  }
}

/* logical_and/or/xor: operands compared with zero. */
static bool ref_logical(ic_op op, ic_dtype dt, ref_value a, ref_value b) {
  bool x = dt == IC_BOOL ? a.b : dt == IC_I32 ? a.i != 0 : a.f != 0.0f;
  bool y = dt == IC_BOOL ? b.b : dt == IC_I32 ? b.i != 0 : b.f != 0.0f;
  return op == IC_OP_LOGICAL_AND ? x && y : op == IC_OP_LOGICAL_OR ? x || y : x != y;
}

ref_value ref_apply(ic_op op, ic_dtype operand_dt, ic_dtype result_dt, const ref_value *args) {
  ref_value r = {0};
  switch (op) {
  case IC_OP_LOGICAL_NOT: case IC_OP_ISNAN: case IC_OP_ISINF: case IC_OP_ISFINITE:
    r.b = ref_predicate(op, operand_dt, args[0]);
    return r;
  case IC_OP_LOGICAL_AND: case IC_OP_LOGICAL_OR: case IC_OP_LOGICAL_XOR:
    r.b = ref_logical(op, operand_dt, args[0], args[1]);
    return r;
  case IC_OP_BITWISE_NOT: case IC_OP_BITWISE_AND: case IC_OP_BITWISE_OR: case IC_OP_BITWISE_XOR:
    if (operand_dt == IC_BOOL) {
      bool x = args[0].b, y = args[1].b;
      r.b = op == IC_OP_BITWISE_NOT ? !x : op == IC_OP_BITWISE_AND ? x && y : op == IC_OP_BITWISE_OR ? x || y : x != y;
      return r;
    }
    break;
  case IC_OP_EQ: case IC_OP_NE: case IC_OP_LT: case IC_OP_LE: case IC_OP_GT: case IC_OP_GE:
    r.b = ref_compare(op, operand_dt, args[0], args[1]);
    return r;
  case IC_OP_WHERE: return args[0].b ? args[1] : args[2];
  case IC_OP_CAST: return ref_cast(operand_dt, result_dt, args[0]);
  default: break;
  }
  if (operand_dt == IC_I32) r.i = ref_i32_op(op, args[0].i, args[1].i, args[2].i);
  else r.f = ref_round(result_dt, ref_float_op(op, args[0].f, args[1].f, args[2].f));
  return r;
}
