/* Host reference semantics of every op (include/ic/ic.h's table), written plainly for
 * tests, plus value generation and comparison helpers. */
#ifndef IC_TESTS_REF_OPS_H
#define IC_TESTS_REF_OPS_H

#include <ic/ic.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/dtype.h"

/* A value in its compute type: f16/bf16/f32/fp8 in f (rounded to the dtype), f64 in d,
 * integers in i (wrapped to the width; u64 as its bits), bool in b. */
typedef struct hv {
  float f;
  double d;
  int64_t i;
  bool b;
} hv;

static const ic_dtype ref_all_dtypes[] = {IC_BOOL, IC_U8,  IC_I8,  IC_I16,    IC_I32,    IC_I64,  IC_F16, IC_BF16,
                                          IC_F32,  IC_F64, IC_F8E4M3, IC_F8E5M2, IC_U16, IC_U32, IC_U64};

/* computed in f32 */
/* The bits of an f32. */
static inline uint32_t ref_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline bool ref_is_float(ic_dtype dt) {
  return dt == IC_F32 || dt == IC_F16 || dt == IC_BF16 || dt == IC_F8E4M3 || dt == IC_F8E5M2;
}
static inline bool ref_is_unsigned(ic_dtype dt) { return dt == IC_U8 || dt == IC_U16 || dt == IC_U32 || dt == IC_U64; }
static inline bool ref_is_int(ic_dtype dt) {
  return ref_is_unsigned(dt) || dt == IC_I8 || dt == IC_I16 || dt == IC_I32 || dt == IC_I64;
}

static inline float ref_nan32(void) { return NAN; }

static inline float ref_round(ic_dtype dt, float f) {
  if (dt == IC_F16) return f16_bits_to_f32(f32_to_f16_bits(f));
  if (dt == IC_BF16) return bf16_bits_to_f32(f32_to_bf16_bits(f));
  if (dt == IC_F8E4M3 || dt == IC_F8E5M2) return (float)small_float_value(dt, small_float_bits(dt, f));
  return f;
}

/* two's complement wrap to the width */
static inline int64_t ref_wrap(ic_dtype dt, int64_t v) {
  switch (dt) {
  case IC_U8: return v & 0xff;
  case IC_U16: return v & 0xffff;
  case IC_U32: return v & 0xffffffff;
  case IC_I8: return (int8_t)(v & 0xff);
  case IC_I16: return (int16_t)(v & 0xffff);
  case IC_I32: return (int32_t)(uint32_t)(uint64_t)v;
  default: return v;
  }
}

/* The range of an integer dtype; u64's top, 2^64 - 1, is -1 as int64 bits. */
static inline void ref_range(ic_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
  case IC_U8: *lo = 0; *hi = 255; break;
  case IC_U16: *lo = 0; *hi = 65535; break;
  case IC_U32: *lo = 0; *hi = UINT32_MAX; break;
  case IC_U64: *lo = 0; *hi = -1; break;
  case IC_I8: *lo = -128; *hi = 127; break;
  case IC_I16: *lo = -32768; *hi = 32767; break;
  case IC_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
  default: *lo = INT64_MIN; *hi = INT64_MAX; break;
  }
}

/* The integer value of v of dtype dt as a double (u64 by its unsigned value). */
static inline double ref_int_double(ic_dtype dt, int64_t v) { return dt == IC_U64 ? (double)(uint64_t)v : (double)v; }

static inline hv ref_get(ic_dtype dt, const void *p, int64_t i) {
  hv v = {0};
  const unsigned char *q = (const unsigned char *)p + i * (int64_t)ic_dtype_size(dt);
  switch (dt) {
  case IC_F32: memcpy(&v.f, q, 4); break;
  case IC_F16: { uint16_t h; memcpy(&h, q, 2); v.f = f16_bits_to_f32(h); break; }
  case IC_BF16: { uint16_t h; memcpy(&h, q, 2); v.f = bf16_bits_to_f32(h); break; }
  case IC_F8E4M3: case IC_F8E5M2: v.f = (float)small_float_value(dt, *q); break;
  case IC_F64: memcpy(&v.d, q, 8); break;
  case IC_U8: v.i = *q; break;
  case IC_U16: { uint16_t x; memcpy(&x, q, 2); v.i = x; break; }
  case IC_U32: { uint32_t x; memcpy(&x, q, 4); v.i = x; break; }
  case IC_U64: memcpy(&v.i, q, 8); break;
  case IC_I8: v.i = (int8_t)*q; break;
  case IC_I16: { int16_t x; memcpy(&x, q, 2); v.i = x; break; }
  case IC_I32: { int32_t x; memcpy(&x, q, 4); v.i = x; break; }
  case IC_I64: memcpy(&v.i, q, 8); break;
  case IC_BOOL: v.b = *q != 0; break;
  default: break;
  }
  return v;
}

static inline void ref_set(ic_dtype dt, void *p, int64_t i, hv v) {
  unsigned char *q = (unsigned char *)p + i * (int64_t)ic_dtype_size(dt);
  switch (dt) {
  case IC_F32: memcpy(q, &v.f, 4); break;
  case IC_F16: { uint16_t h = f32_to_f16_bits(v.f); memcpy(q, &h, 2); break; }
  case IC_BF16: { uint16_t h = f32_to_bf16_bits(v.f); memcpy(q, &h, 2); break; }
  case IC_F8E4M3: case IC_F8E5M2: *q = (unsigned char)small_float_bits(dt, v.f); break;
  case IC_F64: memcpy(q, &v.d, 8); break;
  case IC_U8: case IC_I8: *q = (unsigned char)(v.i & 0xff); break;
  case IC_I16: case IC_U16: { uint16_t x = (uint16_t)(v.i & 0xffff); memcpy(q, &x, 2); break; }
  case IC_I32: case IC_U32: { uint32_t x = (uint32_t)(v.i & 0xffffffff); memcpy(q, &x, 4); break; }
  case IC_I64: case IC_U64: memcpy(q, &v.i, 8); break;
  case IC_BOOL: *q = v.b ? 1 : 0; break;
  default: break;
  }
}

/* Ops whose results are exactly rounded: bitwise comparable with the device. */
static inline bool ref_exact(ic_op op) {
  switch (op) {
  case IC_OP_EXP: case IC_OP_LOG: case IC_OP_TANH: case IC_OP_SIGMOID: case IC_OP_GELU_TANH: case IC_OP_EXP2:
  case IC_OP_EXPM1: case IC_OP_LOG2: case IC_OP_LOG10: case IC_OP_LOG1P: case IC_OP_SIN: case IC_OP_COS:
  case IC_OP_TAN: case IC_OP_ASIN: case IC_OP_ACOS: case IC_OP_ATAN: case IC_OP_SINH: case IC_OP_COSH:
  case IC_OP_ASINH: case IC_OP_ACOSH: case IC_OP_ATANH: case IC_OP_ERF: case IC_OP_ERFC: case IC_OP_SILU:
  case IC_OP_SOFTPLUS: case IC_OP_GELU_ERF: case IC_OP_POW: case IC_OP_ATAN2: case IC_OP_HYPOT:
    return false;
  default:
    return true;
  }
}

static inline float ref_gelu_tanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * (x * x * x));
  return (0.5f * x) * (1.0f + tanhf(inner));
}

static inline float ref_max_f32(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a; /* +0 over -0 */
  return a > b ? a : b;
}

static inline float ref_min_f32(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b; /* -0 under +0 */
  return a < b ? a : b;
}

static inline double ref_max_finite(ic_dtype dt) {
  switch (dt) {
  case IC_F16: return 65504.0;
  case IC_BF16: return 3.3895313892515355e38;
  case IC_F8E4M3: return 448.0;
  case IC_F8E5M2: return 57344.0;
  case IC_F32: return FLT_MAX;
  default: return DBL_MAX;
  }
}

/* An integer of magnitude m and sign neg rounded to `bits` significant bits, to nearest
 * even (exact in a double). */
static inline double ref_round_mag_bits(uint64_t m, bool neg, int bits) {
  int top = 63;
  while (top > 0 && !((m >> top) & 1)) top--;
  int drop = top + 1 - bits;
  double r;
  if (drop <= 0) {
    r = (double)m;
  } else {
    uint64_t q = m >> drop, rem = m & ((UINT64_C(1) << drop) - 1), half = UINT64_C(1) << (drop - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    r = ldexp((double)q, drop);
  }
  return neg ? -r : r;
}

/* An integer v of dtype dt rounded to `bits` significant bits. */
static inline double ref_round_int_bits(ic_dtype dt, int64_t v, int bits) {
  bool neg = v < 0 && dt != IC_U64;
  return ref_round_mag_bits(neg ? 0 - (uint64_t)v : (uint64_t)v, neg, bits);
}

/* Saturating integer -> integer: v of dtype from clamped to to's range (compared as the
 * values they are: u64 above INT64_MAX is no negative number). */
static inline int64_t ref_int_saturate(ic_dtype from, ic_dtype to, int64_t v) {
  bool huge = from == IC_U64 && v < 0; /* >= 2^63 */
  if (to == IC_U64) return huge || v >= 0 ? v : 0;
  int64_t lo, hi;
  ref_range(to, &lo, &hi);
  if (huge) return hi;
  return v < lo ? lo : v > hi ? hi : v;
}

static inline int ref_mant_bits(ic_dtype dt) {
  return dt == IC_F16 ? 11 : dt == IC_BF16 ? 8 : dt == IC_F8E4M3 ? 4 : dt == IC_F8E5M2 ? 3 : dt == IC_F32 ? 24 : 53;
}

/* cast (saturate false) and cast_saturate, as the table in ic.h says. */
static inline hv ref_convert(ic_dtype from, ic_dtype to, hv a, bool saturate) {
  hv r = {0};
  bool ff = ref_is_float(from), fd = from == IC_F64, fi = ref_is_int(from);
  if (from == to && !(saturate && (ref_is_float(to) || to == IC_F64))) return a;
  double x = ff ? a.f : fd ? a.d : fi ? ref_int_double(from, a.i) : (a.b ? 1.0 : 0.0); /* inexact only for huge i64, u64 */
  if (to == IC_BOOL) {
    r.b = from == IC_BOOL ? a.b : fi ? a.i != 0 : x != 0.0;
  } else if (ref_is_int(to)) {
    int64_t lo, hi;
    ref_range(to, &lo, &hi);
    if (fi) r.i = saturate ? ref_int_saturate(from, to, a.i) : ref_wrap(to, a.i);
    else if (from == IC_BOOL) r.i = a.b;
    else if (isnan(x)) r.i = 0;
    else if (to == IC_U64) r.i = x <= 0.0 ? 0 : x >= 18446744073709551616.0 ? -1 : (int64_t)(uint64_t)x;
    else if (x >= 9223372036854775808.0) r.i = hi;
    else if (x < -9223372036854775808.0) r.i = lo;
    else {
      int64_t t = (int64_t)x;
      r.i = t < lo ? lo : t > hi ? hi : t;
    }
  } else {
    /* the exact value rounded once to the target */
    bool big = fi && (from == IC_U64 ? (uint64_t)a.i > (UINT64_C(1) << 53) : a.i > (INT64_C(1) << 53) || a.i < -(INT64_C(1) << 53));
    double v = big ? ref_round_int_bits(from, a.i, ref_mant_bits(to)) : x;
    if (to == IC_F64) r.d = v;
    else if (to == IC_F32) r.f = (float)v;
    else r.f = (float)small_float_value(to, small_float_bits(to, v));
    double got = to == IC_F64 ? r.d : r.f;
    if (saturate && !isnan(x) && (isinf(got) || isnan(got))) {
      double m = x > 0 ? ref_max_finite(to) : -ref_max_finite(to);
      if (to == IC_F64) r.d = m;
      else r.f = (float)m;
    }
  }
  return r;
}

static inline hv ref_cast(ic_dtype from, ic_dtype to, hv a) { return ref_convert(from, to, a, false); }

/* bitcast: the storage bytes read as the other dtype (zeroed first: ref_set writes only
   ic_dtype_size(from) of them, nothing for a dtype it does not know) */
static inline hv ref_bitcast(ic_dtype from, ic_dtype to, hv a) {
  unsigned char bytes[8] = {0};
  ref_set(from, bytes, 0, a);
  return ref_get(to, bytes, 0);
}

static inline double ref_max_f64(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

static inline double ref_min_f64(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* An f64 op (the f32 ops below, in double). */
static inline double ref_op_f64(ic_op op, double a, double b, double c) {
  switch (op) {
  case IC_OP_NEG: return -a;
  case IC_OP_EXP: return exp(a);
  case IC_OP_LOG: return log(a);
  case IC_OP_SQRT: return sqrt(a);
  case IC_OP_TANH: return tanh(a);
  case IC_OP_SIGMOID: return 1.0 / (1.0 + exp(-a));
  case IC_OP_RELU: return a > 0 ? a : isnan(a) ? a : 0.0;
  case IC_OP_GELU_TANH: return 0.5 * a * (1.0 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
  case IC_OP_ABS: return fabs(a);
  case IC_OP_EXP2: return exp2(a);
  case IC_OP_EXPM1: return expm1(a);
  case IC_OP_LOG2: return log2(a);
  case IC_OP_LOG10: return log10(a);
  case IC_OP_LOG1P: return log1p(a);
  case IC_OP_RSQRT: return 1.0 / sqrt(a);
  case IC_OP_RECIPROCAL: return 1.0 / a;
  case IC_OP_SIN: return sin(a);
  case IC_OP_COS: return cos(a);
  case IC_OP_TAN: return tan(a);
  case IC_OP_ASIN: return asin(a);
  case IC_OP_ACOS: return acos(a);
  case IC_OP_ATAN: return atan(a);
  case IC_OP_SINH: return sinh(a);
  case IC_OP_COSH: return cosh(a);
  case IC_OP_ASINH: return asinh(a);
  case IC_OP_ACOSH: return acosh(a);
  case IC_OP_ATANH: return atanh(a);
  case IC_OP_ERF: return erf(a);
  case IC_OP_ERFC: return erfc(a);
  case IC_OP_SILU: return a / (1.0 + exp(-a));
  case IC_OP_SOFTPLUS: return a > 20.0 ? a : log1p(exp(a));
  case IC_OP_GELU_ERF: return 0.5 * a * (1.0 + erf(a / sqrt(2.0)));
  case IC_OP_FLOOR: return floor(a);
  case IC_OP_CEIL: return ceil(a);
  case IC_OP_ROUND: return nearbyint(a);
  case IC_OP_TRUNC: return trunc(a);
  case IC_OP_FRAC: return a - trunc(a);
  case IC_OP_SIGN: return a > 0 ? 1.0 : a < 0 ? -1.0 : a;
  case IC_OP_MAXIMUM: return ref_max_f64(a, b);
  case IC_OP_MINIMUM: return ref_min_f64(a, b);
  case IC_OP_FMAX: return isnan(a) ? b : isnan(b) ? a : ref_max_f64(a, b);
  case IC_OP_FMIN: return isnan(a) ? b : isnan(b) ? a : ref_min_f64(a, b);
  case IC_OP_COPYSIGN: return copysign(a, b);
  case IC_OP_POW: return pow(a, b);
  case IC_OP_ATAN2: return atan2(a, b);
  case IC_OP_HYPOT: return hypot(a, b);
  case IC_OP_FMOD: return fmod(a, b);
  case IC_OP_REMAINDER: return a - b * floor(a / b);
  case IC_OP_FLOOR_DIVIDE: return floor(a / b);
  case IC_OP_TRUNC_DIVIDE: return trunc(a / b);
  case IC_OP_CLAMP: return ref_min_f64(ref_max_f64(a, b), c);
  case IC_OP_LERP: return c < 0.5 ? a + c * (b - a) : b - (b - a) * (1.0 - c);
  case IC_OP_FMA: return fma(a, b, c);
  case IC_OP_ADD: return a + b;
  case IC_OP_SUB: return a - b;
  case IC_OP_MUL: return a * b;
  case IC_OP_DIV: return a / b;
  default: return 0.0;
  }
}

/* An op of an unsigned dtype: exact on the zero-extended values, then wrapped. */
static inline int64_t ref_op_uint(ic_op op, ic_dtype dt, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t width = ic_dtype_size(dt) * 8, r = 0;
  switch (op) {
  case IC_OP_NEG: r = 0 - a; break;
  case IC_OP_RELU: case IC_OP_ABS: r = a; break;
  case IC_OP_SIGN: r = a != 0; break;
  case IC_OP_BITWISE_NOT: r = ~a; break;
  case IC_OP_ADD: r = a + b; break;
  case IC_OP_SUB: r = a - b; break;
  case IC_OP_MUL: r = a * b; break;
  case IC_OP_MAXIMUM: case IC_OP_FMAX: r = a > b ? a : b; break;
  case IC_OP_MINIMUM: case IC_OP_FMIN: r = a < b ? a : b; break;
  case IC_OP_FMOD: case IC_OP_REMAINDER: r = b == 0 ? 0 : a % b; break;
  case IC_OP_TRUNC_DIVIDE: case IC_OP_FLOOR_DIVIDE: r = b == 0 ? 0 : a / b; break;
  case IC_OP_BITWISE_AND: r = a & b; break;
  case IC_OP_BITWISE_OR: r = a | b; break;
  case IC_OP_BITWISE_XOR: r = a ^ b; break;
  case IC_OP_SHIFT_LEFT: r = b >= width ? 0 : a << b; break;
  case IC_OP_SHIFT_RIGHT: r = b >= width ? 0 : a >> b; break;
  case IC_OP_CLAMP: r = a < b ? b : a; r = r > c ? c : r; break;
  default: break;
  }
  return ref_wrap(dt, (int64_t)r);
}

/* An integer op of dtype dt: exact, then wrapped to the width. */
static inline int64_t ref_op_int(ic_op op, ic_dtype dt, int64_t a, int64_t b, int64_t c) {
  if (ref_is_unsigned(dt)) return ref_op_uint(op, dt, (uint64_t)a, (uint64_t)b, (uint64_t)c);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int width = (int)ic_dtype_size(dt) * 8;
  bool wraps = a == INT64_MIN && b == -1; /* i64 only; narrower MIN / -1 wrap below */
  int64_t r = 0;
  switch (op) {
  case IC_OP_NEG: r = (int64_t)(0 - ua); break;
  case IC_OP_RELU: r = a > 0 ? a : 0; break;
  case IC_OP_ABS: r = a < 0 ? (int64_t)(0 - ua) : a; break;
  case IC_OP_SIGN: r = (a > 0) - (a < 0); break;
  case IC_OP_BITWISE_NOT: r = (int64_t)~ua; break;
  case IC_OP_ADD: r = (int64_t)(ua + ub); break;
  case IC_OP_SUB: r = (int64_t)(ua - ub); break;
  case IC_OP_MUL: r = (int64_t)(ua * ub); break;
  case IC_OP_MAXIMUM: case IC_OP_FMAX: r = a > b ? a : b; break;
  case IC_OP_MINIMUM: case IC_OP_FMIN: r = a < b ? a : b; break;
  case IC_OP_FMOD: r = b == 0 || wraps ? 0 : a % b; break;
  case IC_OP_REMAINDER: {
    int64_t m = b == 0 || wraps ? 0 : a % b;
    r = m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
    break;
  }
  case IC_OP_TRUNC_DIVIDE: r = b == 0 ? 0 : wraps ? a : a / b; break;
  case IC_OP_FLOOR_DIVIDE:
    if (b == 0) r = 0;
    else if (wraps) r = a;
    else {
      r = a / b;
      if (r * b != a && ((a < 0) != (b < 0))) r--;
    }
    break;
  case IC_OP_BITWISE_AND: r = a & b; break;
  case IC_OP_BITWISE_OR: r = a | b; break;
  case IC_OP_BITWISE_XOR: r = a ^ b; break;
  case IC_OP_SHIFT_LEFT: r = b < 0 || b >= width ? 0 : (int64_t)(ua << b); break;
  case IC_OP_SHIFT_RIGHT: r = b < 0 || b >= width ? (a < 0 ? -1 : 0) : a >> b; break;
  case IC_OP_CLAMP: {
    int64_t lo = a > b ? a : b;
    r = lo < c ? lo : c;
    break;
  }
  default: break;
  }
  return ref_wrap(dt, r);
}

/* The result of op on operands of dtype dt (for where: the data dtype), as out_dt. */
static inline hv ref_op(ic_op op, ic_dtype dt, ic_dtype out_dt, hv a, hv b, hv c) {
  hv r = {0};
  bool isint = ref_is_int(dt), f64 = dt == IC_F64;
  double x = f64 ? a.d : a.f, y = f64 ? b.d : b.f;
  switch (op) {
  case IC_OP_WHERE: return a.b ? b : c;
  case IC_OP_CAST: return ref_convert(dt, out_dt, a, false);
  case IC_OP_CAST_SATURATE: return ref_convert(dt, out_dt, a, true);
  case IC_OP_BITCAST: return ref_bitcast(dt, out_dt, a);
  case IC_OP_LOGICAL_NOT: r.b = dt == IC_BOOL ? !a.b : isint ? a.i == 0 : x == 0.0; return r;
  case IC_OP_ISNAN: r.b = !isint && isnan(x); return r;
  case IC_OP_ISINF: r.b = !isint && isinf(x); return r;
  case IC_OP_ISFINITE: r.b = isint || isfinite(x); return r;
  case IC_OP_LOGICAL_AND:
  case IC_OP_LOGICAL_OR:
  case IC_OP_LOGICAL_XOR: {
    bool p = dt == IC_BOOL ? a.b : isint ? a.i != 0 : x != 0.0;
    bool q = dt == IC_BOOL ? b.b : isint ? b.i != 0 : y != 0.0;
    r.b = op == IC_OP_LOGICAL_AND ? (p && q) : op == IC_OP_LOGICAL_OR ? (p || q) : (p != q);
    return r;
  }
  case IC_OP_EQ: r.b = dt == IC_BOOL ? a.b == b.b : isint ? a.i == b.i : x == y; return r;
  case IC_OP_NE: r.b = dt == IC_BOOL ? a.b != b.b : isint ? a.i != b.i : x != y; return r;
  case IC_OP_LT: r.b = dt == IC_U64 ? (uint64_t)a.i < (uint64_t)b.i : isint ? a.i < b.i : x < y; return r;
  case IC_OP_LE: r.b = dt == IC_U64 ? (uint64_t)a.i <= (uint64_t)b.i : isint ? a.i <= b.i : x <= y; return r;
  case IC_OP_GT: r.b = dt == IC_U64 ? (uint64_t)a.i > (uint64_t)b.i : isint ? a.i > b.i : x > y; return r;
  case IC_OP_GE: r.b = dt == IC_U64 ? (uint64_t)a.i >= (uint64_t)b.i : isint ? a.i >= b.i : x >= y; return r;
  default: break;
  }
  if (dt == IC_BOOL) {
    r.b = op == IC_OP_BITWISE_NOT ? !a.b : op == IC_OP_BITWISE_AND ? (a.b && b.b)
        : op == IC_OP_BITWISE_OR  ? (a.b || b.b) : (a.b != b.b);
    return r;
  }
  if (isint) {
    r.i = ref_op_int(op, dt, a.i, b.i, c.i);
    return r;
  }
  if (f64) {
    r.d = ref_op_f64(op, a.d, b.d, c.d);
    return r;
  }
  switch (op) {
  case IC_OP_NEG: r.f = -a.f; break;
  case IC_OP_EXP: r.f = expf(a.f); break;
  case IC_OP_LOG: r.f = logf(a.f); break;
  case IC_OP_SQRT: r.f = sqrtf(a.f); break;
  case IC_OP_TANH: r.f = tanhf(a.f); break;
  case IC_OP_SIGMOID: r.f = 1.0f / (1.0f + expf(-a.f)); break;
  case IC_OP_RELU: r.f = a.f > 0.0f ? a.f : (isnan(a.f) ? a.f : 0.0f); break;
  case IC_OP_GELU_TANH: r.f = ref_gelu_tanh(a.f); break;
  case IC_OP_ABS: r.f = fabsf(a.f); break;
  case IC_OP_EXP2: r.f = exp2f(a.f); break;
  case IC_OP_EXPM1: r.f = expm1f(a.f); break;
  case IC_OP_LOG2: r.f = log2f(a.f); break;
  case IC_OP_LOG10: r.f = log10f(a.f); break;
  case IC_OP_LOG1P: r.f = log1pf(a.f); break;
  case IC_OP_RSQRT: r.f = 1.0f / sqrtf(a.f); break;
  case IC_OP_RECIPROCAL: r.f = 1.0f / a.f; break;
  case IC_OP_SIN: r.f = sinf(a.f); break;
  case IC_OP_COS: r.f = cosf(a.f); break;
  case IC_OP_TAN: r.f = tanf(a.f); break;
  case IC_OP_ASIN: r.f = asinf(a.f); break;
  case IC_OP_ACOS: r.f = acosf(a.f); break;
  case IC_OP_ATAN: r.f = atanf(a.f); break;
  case IC_OP_SINH: r.f = sinhf(a.f); break;
  case IC_OP_COSH: r.f = coshf(a.f); break;
  case IC_OP_ASINH: r.f = asinhf(a.f); break;
  case IC_OP_ACOSH: r.f = acoshf(a.f); break;
  case IC_OP_ATANH: r.f = atanhf(a.f); break;
  case IC_OP_ERF: r.f = erff(a.f); break;
  case IC_OP_ERFC: r.f = erfcf(a.f); break;
  case IC_OP_SILU: r.f = a.f / (1.0f + expf(-a.f)); break;
  case IC_OP_SOFTPLUS: r.f = a.f > 20.0f ? a.f : log1pf(expf(a.f)); break;
  case IC_OP_GELU_ERF: r.f = 0.5f * a.f * (1.0f + erff(a.f / sqrtf(2.0f))); break;
  case IC_OP_FLOOR: r.f = floorf(a.f); break;
  case IC_OP_CEIL: r.f = ceilf(a.f); break;
  case IC_OP_ROUND: r.f = nearbyintf(a.f); break;
  case IC_OP_TRUNC: r.f = truncf(a.f); break;
  case IC_OP_FRAC: r.f = a.f - truncf(a.f); break;
  case IC_OP_SIGN: r.f = a.f > 0 ? 1.0f : a.f < 0 ? -1.0f : a.f; break;
  case IC_OP_MAXIMUM: r.f = ref_max_f32(a.f, b.f); break;
  case IC_OP_MINIMUM: r.f = ref_min_f32(a.f, b.f); break;
  case IC_OP_FMAX: r.f = isnan(a.f) ? b.f : isnan(b.f) ? a.f : ref_max_f32(a.f, b.f); break;
  case IC_OP_FMIN: r.f = isnan(a.f) ? b.f : isnan(b.f) ? a.f : ref_min_f32(a.f, b.f); break;
  case IC_OP_COPYSIGN: r.f = copysignf(a.f, b.f); break;
  case IC_OP_POW: r.f = powf(a.f, b.f); break;
  case IC_OP_ATAN2: r.f = atan2f(a.f, b.f); break;
  case IC_OP_HYPOT: r.f = hypotf(a.f, b.f); break;
  case IC_OP_FMOD: r.f = fmodf(a.f, b.f); break;
  case IC_OP_REMAINDER: {
    float f = floorf(a.f / b.f);
    r.f = a.f - b.f * f;
    break;
  }
  case IC_OP_FLOOR_DIVIDE: r.f = floorf(a.f / b.f); break;
  case IC_OP_TRUNC_DIVIDE: r.f = truncf(a.f / b.f); break;
  case IC_OP_CLAMP: r.f = ref_min_f32(ref_max_f32(a.f, b.f), c.f); break;
  case IC_OP_LERP: r.f = c.f < 0.5f ? a.f + c.f * (b.f - a.f) : b.f - (b.f - a.f) * (1.0f - c.f); break;
  case IC_OP_FMA: r.f = fmaf(a.f, b.f, c.f); break;
  case IC_OP_ADD: r.f = a.f + b.f; break;
  case IC_OP_SUB: r.f = a.f - b.f; break;
  case IC_OP_MUL: r.f = a.f * b.f; break;
  case IC_OP_DIV: r.f = a.f / b.f; break;
  default: break;
  }
  r.f = ref_round(out_dt, r.f);
  return r;
}

/* One unit in the last place of |x| in dtype dt (its smallest subnormal step at 0). */
static inline double ref_ulp(ic_dtype dt, double x) {
  int mant = ref_mant_bits(dt) - 1;
  int emin = dt == IC_F16 ? -14 : dt == IC_F8E4M3 ? -6 : dt == IC_F8E5M2 ? -14 : dt == IC_F64 ? -1022 : -126;
  int e = x == 0.0 || isinf(x) ? emin : ilogb(x);
  if (e < emin) e = emin;
  return ldexp(1.0, e - mant);
}

/* Equal as the table promises: bitwise (NaNs of any payload equal), or within `ulps`
 * units plus `abs_tol` for transcendentals. */
static inline bool ref_close(ic_dtype dt, hv got, hv want, int ulps, double abs_tol) {
  if (dt == IC_BOOL) return got.b == want.b;
  if (ref_is_int(dt)) return got.i == want.i;
  double g = dt == IC_F64 ? got.d : got.f, w = dt == IC_F64 ? want.d : want.f;
  if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
  if (ulps == 0) return g == w && signbit(g) == signbit(w);
  if (isinf(w) || isinf(g)) return g == w || fabs(g - w) <= abs_tol;
  return fabs(g - w) <= ulps * ref_ulp(dt, w) + abs_tol;
}

/* For messages: a value as a double and its integer view. */
static inline double ref_show(ic_dtype dt, hv v) {
  return dt == IC_BOOL ? v.b : ref_is_int(dt) ? ref_int_double(dt, v.i) : dt == IC_F64 ? v.d : v.f;
}

/* xorshift64* */
static inline uint64_t ref_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* A random value of dt, with the specials (NaN, infinities, zeros, subnormals, integer
 * extremes) turning up a few percent of the time. */
static inline hv ref_random(ic_dtype dt, uint64_t *s) {
  hv v = {0};
  uint64_t r = ref_rand(s);
  int pick = (int)(r % 100);
  if (dt == IC_BOOL) {
    v.b = (r >> 32) & 1;
  } else if (ref_is_int(dt)) {
    int64_t lo, hi;
    ref_range(dt, &lo, &hi);
    const int64_t special[] = {0, 1, -1, hi, lo, 7, -7, (int64_t)((uint64_t)hi - 1), lo + 1};
    if (pick < 10) v.i = special[(r >> 8) % 9];
    else if (pick < 60) v.i = (int64_t)((r >> 16) % 201) - 100;
    else v.i = (int64_t)ref_rand(s);
    v.i = ref_wrap(dt, v.i);
  } else {
    static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40, -3e-39, 65504.0, 1e30, -1.0, 1.0,
                                     448.0, 464.0, 57344.0, 61440.0, 1e-310, 0.001953125};
    double d;
    if (pick < 8) d = special[(r >> 8) % 17];
    else d = (double)(int64_t)(r >> 11) / 9007199254740992.0 * 16.0 - 8.0;
    if (dt == IC_F64) v.d = d;
    else v.f = ref_round(dt, (float)d);
  }
  return v;
}

#endif
