/* Host reference semantics of every op (include/ic/ic.h's table), written plainly for
 * tests, plus value generation and comparison helpers. */
#ifndef IC_TESTS_REF_OPS_H
#define IC_TESTS_REF_OPS_H

#include <ic/ic.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "runtime/half.h"

typedef union hv {
  float f;
  int32_t i;
  bool b;
} hv;

static inline bool ref_is_float(ic_dtype dt) { return dt == IC_F32 || dt == IC_F16 || dt == IC_BF16; }

static inline float ref_round(ic_dtype dt, float f) {
  if (dt == IC_F16) return ic_f16_bits_to_f32(ic_f32_to_f16_bits(f));
  if (dt == IC_BF16) return ic_bf16_bits_to_f32(ic_f32_to_bf16_bits(f));
  return f;
}

static inline hv ref_get(ic_dtype dt, const void *p, int64_t i) {
  hv v = {0};
  switch (dt) {
  case IC_F32: memcpy(&v.f, (const char *)p + i * 4, 4); break;
  case IC_F16: v.f = ic_f16_bits_to_f32(((const uint16_t *)p)[i]); break;
  case IC_BF16: v.f = ic_bf16_bits_to_f32(((const uint16_t *)p)[i]); break;
  case IC_I32: memcpy(&v.i, (const char *)p + i * 4, 4); break;
  case IC_BOOL: v.b = ((const uint8_t *)p)[i] != 0; break;
  default: break;
  }
  return v;
}

static inline void ref_set(ic_dtype dt, void *p, int64_t i, hv v) {
  switch (dt) {
  case IC_F32: memcpy((char *)p + i * 4, &v.f, 4); break;
  case IC_F16: ((uint16_t *)p)[i] = ic_f32_to_f16_bits(v.f); break;
  case IC_BF16: ((uint16_t *)p)[i] = ic_f32_to_bf16_bits(v.f); break;
  case IC_I32: memcpy((char *)p + i * 4, &v.i, 4); break;
  case IC_BOOL: ((uint8_t *)p)[i] = v.b ? 1 : 0; break;
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

static inline hv ref_cast(ic_dtype from, ic_dtype to, hv a) {
  hv r = {0};
  if (from == to) return a;
  if (to == IC_BOOL) {
    r.b = ref_is_float(from) ? a.f != 0.0f : from == IC_I32 ? a.i != 0 : a.b;
  } else if (from == IC_BOOL) {
    if (to == IC_I32) r.i = a.b;
    else r.f = a.b ? 1.0f : 0.0f;
  } else if (to == IC_I32) {
    if (isnan(a.f)) r.i = 0;
    else if (a.f >= 2147483648.0f) r.i = INT32_MAX;
    else if (a.f <= -2147483648.0f) r.i = INT32_MIN;
    else r.i = (int32_t)a.f;
  } else if (from == IC_I32) {
    r.f = (float)ic_dtype_round(to, (double)a.i);
  } else {
    r.f = ref_round(to, a.f);
  }
  return r;
}

/* The result of op on operands of dtype dt (for where: the data dtype), as out_dt. */
static inline hv ref_op(ic_op op, ic_dtype dt, ic_dtype out_dt, hv a, hv b, hv c) {
  hv r = {0};
  bool i32 = dt == IC_I32;
  uint32_t ua = (uint32_t)a.i, ub = (uint32_t)b.i;
  switch (op) {
  case IC_OP_NEG: if (i32) r.i = (int32_t)(0u - ua); else r.f = -a.f; break;
  case IC_OP_EXP: r.f = expf(a.f); break;
  case IC_OP_LOG: r.f = logf(a.f); break;
  case IC_OP_SQRT: r.f = sqrtf(a.f); break;
  case IC_OP_TANH: r.f = tanhf(a.f); break;
  case IC_OP_SIGMOID: r.f = 1.0f / (1.0f + expf(-a.f)); break;
  case IC_OP_RELU: if (i32) r.i = a.i > 0 ? a.i : 0; else r.f = a.f > 0.0f ? a.f : (isnan(a.f) ? a.f : 0.0f); break;
  case IC_OP_GELU_TANH: r.f = ref_gelu_tanh(a.f); break;
  case IC_OP_ABS: if (i32) r.i = (int32_t)(a.i < 0 ? 0u - ua : ua); else r.f = fabsf(a.f); break;
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
  case IC_OP_SIGN:
    if (i32) r.i = (a.i > 0) - (a.i < 0);
    else r.f = a.f > 0 ? 1.0f : a.f < 0 ? -1.0f : a.f;
    break;
  case IC_OP_LOGICAL_NOT: r.b = dt == IC_BOOL ? !a.b : i32 ? a.i == 0 : a.f == 0.0f; break;
  case IC_OP_BITWISE_NOT: if (dt == IC_BOOL) r.b = !a.b; else r.i = (int32_t)~ua; break;
  case IC_OP_ISNAN: r.b = !i32 && isnan(a.f); break;
  case IC_OP_ISINF: r.b = !i32 && isinf(a.f); break;
  case IC_OP_ISFINITE: r.b = i32 || isfinite(a.f); break;
  case IC_OP_MINIMUM: if (i32) r.i = a.i < b.i ? a.i : b.i; else r.f = ref_min_f32(a.f, b.f); break;
  case IC_OP_FMAX:
    if (i32) r.i = a.i > b.i ? a.i : b.i;
    else r.f = isnan(a.f) ? b.f : isnan(b.f) ? a.f : ref_max_f32(a.f, b.f);
    break;
  case IC_OP_FMIN:
    if (i32) r.i = a.i < b.i ? a.i : b.i;
    else r.f = isnan(a.f) ? b.f : isnan(b.f) ? a.f : ref_min_f32(a.f, b.f);
    break;
  case IC_OP_COPYSIGN: r.f = copysignf(a.f, b.f); break;
  case IC_OP_POW: r.f = powf(a.f, b.f); break;
  case IC_OP_ATAN2: r.f = atan2f(a.f, b.f); break;
  case IC_OP_HYPOT: r.f = hypotf(a.f, b.f); break;
  case IC_OP_FMOD:
    if (i32) r.i = b.i == 0 || (a.i == INT32_MIN && b.i == -1) ? 0 : a.i % b.i;
    else r.f = fmodf(a.f, b.f);
    break;
  case IC_OP_REMAINDER:
    if (i32) {
      int32_t m = b.i == 0 || (a.i == INT32_MIN && b.i == -1) ? 0 : a.i % b.i;
      r.i = m != 0 && ((m < 0) != (b.i < 0)) ? m + b.i : m;
    } else {
      float f = floorf(a.f / b.f);
      r.f = a.f - b.f * f;
    }
    break;
  case IC_OP_FLOOR_DIVIDE:
  case IC_OP_TRUNC_DIVIDE:
    if (!i32) {
      r.f = op == IC_OP_FLOOR_DIVIDE ? floorf(a.f / b.f) : truncf(a.f / b.f);
    } else if (b.i == 0) {
      r.i = 0;
    } else if (a.i == INT32_MIN && b.i == -1) {
      r.i = INT32_MIN;
    } else {
      /* floor division through exact 64-bit arithmetic */
      int64_t q = (int64_t)a.i / b.i;
      if (op == IC_OP_FLOOR_DIVIDE && q * b.i != a.i && ((a.i < 0) != (b.i < 0))) q--;
      r.i = (int32_t)q;
    }
    break;
  case IC_OP_LOGICAL_AND:
  case IC_OP_LOGICAL_OR:
  case IC_OP_LOGICAL_XOR: {
    bool x = dt == IC_BOOL ? a.b : i32 ? a.i != 0 : a.f != 0.0f;
    bool y = dt == IC_BOOL ? b.b : i32 ? b.i != 0 : b.f != 0.0f;
    r.b = op == IC_OP_LOGICAL_AND ? (x && y) : op == IC_OP_LOGICAL_OR ? (x || y) : (x != y);
    break;
  }
  case IC_OP_BITWISE_AND: if (dt == IC_BOOL) r.b = a.b && b.b; else r.i = a.i & b.i; break;
  case IC_OP_BITWISE_OR: if (dt == IC_BOOL) r.b = a.b || b.b; else r.i = a.i | b.i; break;
  case IC_OP_BITWISE_XOR: if (dt == IC_BOOL) r.b = a.b != b.b; else r.i = a.i ^ b.i; break;
  case IC_OP_SHIFT_LEFT: r.i = b.i < 0 || b.i >= 32 ? 0 : (int32_t)(ua << b.i); break;
  case IC_OP_SHIFT_RIGHT: r.i = b.i < 0 || b.i >= 32 ? (a.i < 0 ? -1 : 0) : a.i >> b.i; break;
  case IC_OP_CLAMP:
    if (i32) {
      int32_t lo = a.i > b.i ? a.i : b.i;
      r.i = lo < c.i ? lo : c.i;
    } else {
      r.f = ref_min_f32(ref_max_f32(a.f, b.f), c.f);
    }
    break;
  case IC_OP_LERP: r.f = c.f < 0.5f ? a.f + c.f * (b.f - a.f) : b.f - (b.f - a.f) * (1.0f - c.f); break;
  case IC_OP_FMA: r.f = fmaf(a.f, b.f, c.f); break;
  case IC_OP_ADD: if (i32) r.i = (int32_t)(ua + ub); else r.f = a.f + b.f; break;
  case IC_OP_SUB: if (i32) r.i = (int32_t)(ua - ub); else r.f = a.f - b.f; break;
  case IC_OP_MUL: if (i32) r.i = (int32_t)(ua * ub); else r.f = a.f * b.f; break;
  case IC_OP_DIV: r.f = a.f / b.f; break;
  case IC_OP_MAXIMUM: if (i32) r.i = a.i > b.i ? a.i : b.i; else r.f = ref_max_f32(a.f, b.f); break;
  case IC_OP_EQ: r.b = dt == IC_BOOL ? a.b == b.b : i32 ? a.i == b.i : a.f == b.f; break;
  case IC_OP_NE: r.b = dt == IC_BOOL ? a.b != b.b : i32 ? a.i != b.i : a.f != b.f; break;
  case IC_OP_LT: r.b = i32 ? a.i < b.i : a.f < b.f; break;
  case IC_OP_LE: r.b = i32 ? a.i <= b.i : a.f <= b.f; break;
  case IC_OP_GT: r.b = i32 ? a.i > b.i : a.f > b.f; break;
  case IC_OP_GE: r.b = i32 ? a.i >= b.i : a.f >= b.f; break;
  case IC_OP_WHERE: r = a.b ? b : c; break;
  case IC_OP_CAST: return ref_cast(dt, out_dt, a);
  default: break;
  }
  if (ref_is_float(out_dt) && op != IC_OP_WHERE) r.f = ref_round(out_dt, r.f);
  return r;
}

/* One unit in the last place of |x| in dtype dt (its smallest subnormal step at 0). */
static inline double ref_ulp(ic_dtype dt, float x) {
  int mant = dt == IC_F16 ? 10 : dt == IC_BF16 ? 7 : 23;
  int emin = dt == IC_F16 ? -14 : -126;
  int e = x == 0.0f || isinf(x) ? emin : ilogbf(x);
  if (e < emin) e = emin;
  return ldexp(1.0, e - mant);
}

/* Equal as the table promises: bitwise (NaNs of any payload equal), or within `ulps`
 * units plus `abs_tol` for transcendentals. */
static inline bool ref_close(ic_dtype dt, hv got, hv want, int ulps, double abs_tol) {
  if (dt == IC_BOOL) return got.b == want.b;
  if (dt == IC_I32) return got.i == want.i;
  if (isnan(want.f) || isnan(got.f)) return isnan(want.f) && isnan(got.f);
  if (ulps == 0) return memcmp(&got.f, &want.f, sizeof(float)) == 0;
  if (isinf(want.f) || isinf(got.f)) return got.f == want.f || fabs((double)got.f - want.f) <= abs_tol;
  return fabs((double)got.f - (double)want.f) <= ulps * ref_ulp(dt, want.f) + abs_tol;
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
  } else if (dt == IC_I32) {
    static const int32_t special[] = {0, 1, -1, INT32_MAX, INT32_MIN, 7, -7};
    if (pick < 10) v.i = special[(r >> 8) % 7];
    else if (pick < 60) v.i = (int32_t)((r >> 16) % 201) - 100;
    else v.i = (int32_t)(uint32_t)(r >> 32);
  } else {
    static const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -3e-39f, 65504.0f, 1e30f, -1.0f, 1.0f};
    if (pick < 6) v.f = special[(r >> 8) % 11];
    else v.f = (float)((double)(int64_t)(r >> 11) / 9007199254740992.0 * 16.0 - 8.0);
    v.f = ref_round(dt, v.f);
  }
  return v;
}

#endif
