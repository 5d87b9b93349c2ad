/* The reference backend's scalar semantics: the table of include/ic/ic.h, computed the
 * way the CUDA backend's prelude computes it, so that exactly rounded ops agree bit for
 * bit (NaN results of f32 arithmetic are the canonical 0x7fffffff, as GPU arithmetic
 * gives). Compute types as there: bool; integers exact in int64, wrapped to the width;
 * f16/bf16/f32/fp8 in float, rounded to the dtype; f64 in double. u64 values at and
 * above 2^63 live in the int64 as their bits: every unsigned op works on uint64. */
#include <math.h>
#include <string.h>

#include "backend/ref/ref.h"
#include "base/dtype.h"

typedef enum ref_kind { REF_BOOL, REF_INT, REF_F32, REF_F64 } ref_kind;

static ref_kind ref_kind_of(ic_dtype dt) {
  if (dt == IC_BOOL) return REF_BOOL;
  if (dtype_is_integer(dt)) return REF_INT;
  return dt == IC_F64 ? REF_F64 : REF_F32;
}

static float ref_f32_gelu_tanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * (x * x * x));
  return (0.5f * x) * (1.0f + tanhf(inner));
}
static float ref_f32_gelu_erf(float x) { return (0.5f * x) * (1.0f + erff(x * 0.70710678118654752f)); }
static double ref_f64_gelu_tanh(double x) {
  const double inner = 0.7978845608028654 * (x + 0.044715 * (x * x * x));
  return (0.5 * x) * (1.0 + tanh(inner));
}
static double ref_f64_gelu_erf(double x) { return (0.5 * x) * (1.0 + erf(x * 0.70710678118654752)); }

#define REF_T float
#define REF_FN(name) name##f
#define REF_NAME(name) ref_f32_##name
#define REF_BITS uint32_t
#define REF_SIGN UINT32_C(0x80000000)
#define REF_CANON ref_f32_from_bits(0x7fffffffu)
#include "backend/ref/ref_float_op.h"

#define REF_T double
#define REF_FN(name) name
#define REF_NAME(name) ref_f64_##name
#define REF_BITS uint64_t
#define REF_SIGN UINT64_C(0x8000000000000000)
#define REF_CANON ref_f64_from_bits(UINT64_C(0x7fffffffffffffff))
#include "backend/ref/ref_float_op.h"

static float ref_canonical_nan(void) { return ref_f32_from_bits(0x7fffffffu); }

ref_value ref_canonical(ic_dtype dt, ref_value v) {
  if (dt == IC_F64 && isnan(v.d)) v.d = ref_f64_from_bits(UINT64_C(0x7fffffffffffffff));
  else if (dt != IC_F64 && isnan(v.f)) v.f = ref_canonical_nan();
  return v;
}

/* A float-computed result rounded to its dtype (f32 stays); NaN becomes canonical, as the
 * GPU's unpacking of a rounded NaN gives. */
static float ref_round(ic_dtype dt, float f) {
  switch (dt) {
  case IC_F16: return f16_bits_to_f32(f32_to_f16_bits(f));
  case IC_BF16: {
    const uint16_t h = f32_to_bf16_bits(f);
    return bf16_bits_to_f32(h);
  }
  case IC_F8E4M3: case IC_F8E5M2: {
    const double v = small_float_value(dt, small_float_bits(dt, (double)f));
    return isnan(v) ? ref_canonical_nan() : (float)v;
  }
  default: return f;
  }
}

/* An integer wrapped to the width of dt (two's complement; unsigned modulo 2^width). */
static int64_t ref_wrap(ic_dtype dt, int64_t v) {
  const uint64_t u = (uint64_t)v;
  switch (dt) {
  case IC_U8: return (int64_t)(u & 0xffu);
  case IC_U16: return (int64_t)(u & 0xffffu);
  case IC_U32: return (int64_t)(u & 0xffffffffu);
  case IC_I8: return (int64_t)(int8_t)(uint8_t)u;
  case IC_I16: return (int64_t)(int16_t)(uint16_t)u;
  case IC_I32: return (int64_t)(int32_t)(uint32_t)u;
  default: return v;
  }
}

static int ref_width(ic_dtype dt) { return (int)ic_dtype_size(dt) * 8; }

/* The range of a signed dtype, or of an unsigned one but u64 (whose top is UINT64_MAX). */
static void ref_int_range(ic_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
  case IC_U8: *lo = 0; *hi = 255; break;
  case IC_U16: *lo = 0; *hi = 65535; break;
  case IC_U32: *lo = 0; *hi = UINT32_MAX; break;
  case IC_I8: *lo = -128; *hi = 127; break;
  case IC_I16: *lo = -32768; *hi = 32767; break;
  case IC_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
  default: *lo = INT64_MIN; *hi = INT64_MAX; break;
  }
}

ref_value ref_load(ic_dtype dt, const void *base, int64_t index) {
  ref_value v = {0};
  const unsigned char *p = (const unsigned char *)base + index * (int64_t)ic_dtype_size(dt);
  uint16_t h;
  switch (dt) {
  case IC_BOOL: v.b = *p != 0; break;
  case IC_U8: v.i = *p; break;
  case IC_U16: { uint16_t x; memcpy(&x, p, 2); v.i = x; break; }
  case IC_U32: { uint32_t x; memcpy(&x, p, 4); v.i = x; break; }
  case IC_I8: v.i = *p >= 128 ? (int64_t)*p - 256 : (int64_t)*p; break; /* sign-extended */
  case IC_I16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
  case IC_I32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
  case IC_I64: case IC_U64: memcpy(&v.i, p, 8); break;
  case IC_F16: memcpy(&h, p, 2); v.f = f16_bits_to_f32(h); break;
  case IC_BF16: memcpy(&h, p, 2); v.f = bf16_bits_to_f32(h); break;
  case IC_F32: memcpy(&v.f, p, 4); break;
  case IC_F64: memcpy(&v.d, p, 8); break;
  case IC_F8E4M3: case IC_F8E5M2: {
    const double d = small_float_value(dt, *p);
    v.f = isnan(d) ? ref_canonical_nan() : (float)d;
    break;
  }
  default: break;
  }
  return v;
}

void ref_store(ic_dtype dt, void *base, int64_t index, ref_value v) {
  unsigned char *p = (unsigned char *)base + index * (int64_t)ic_dtype_size(dt);
  uint16_t h;
  switch (dt) {
  case IC_BOOL: *p = v.b ? 1 : 0; break;
  case IC_U8: case IC_I8: *p = (unsigned char)(v.i & 0xff); break;
  case IC_I16: case IC_U16: { const uint16_t x = (uint16_t)(uint64_t)v.i; memcpy(p, &x, 2); break; }
  case IC_I32: case IC_U32: { const uint32_t x = (uint32_t)(uint64_t)v.i; memcpy(p, &x, 4); break; }
  case IC_I64: case IC_U64: memcpy(p, &v.i, 8); break;
  case IC_F16: h = f32_to_f16_bits(v.f); memcpy(p, &h, 2); break;
  case IC_BF16: h = f32_to_bf16_bits(v.f); memcpy(p, &h, 2); break;
  case IC_F32: memcpy(p, &v.f, 4); break;
  case IC_F64: memcpy(p, &v.d, 8); break;
  case IC_F8E4M3: case IC_F8E5M2: *p = (unsigned char)small_float_bits(dt, (double)v.f); break;
  default: break;
  }
}

ref_value ref_constant(ic_dtype dt, double value) {
  /* the builder already rounded the value to dt */
  ref_value v = {0};
  switch (ref_kind_of(dt)) {
  case REF_BOOL: v.b = value != 0; break;
  case REF_INT:
    if (dt == IC_U64) v.i = (int64_t)(value >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)value);
    else v.i = value >= 9223372036854775807.0 ? INT64_MAX : (int64_t)value;
    break;
  case REF_F32: v.f = (float)value; break;
  case REF_F64: v.d = value; break;
  }
  return v;
}

/* The exact value of an integer of dtype dt as a double (u64 above 2^53 rounds). */
static double ref_int_value(ic_dtype dt, int64_t v) { return dt == IC_U64 ? (double)(uint64_t)v : (double)v; }

/* An integer of dtype dt rounded to odd in f32 (24 bits kept, the rest folded into the
 * last one): a second rounding to f16/bf16/fp8 is then exactly one rounding, as the
 * prelude's cvt.rz + sticky bit. */
static float ref_int_to_f32_odd(ic_dtype dt, int64_t v) {
  const bool neg = v < 0 && dt != IC_U64;
  const uint64_t mag = neg ? 0 - (uint64_t)v : (uint64_t)v;
  if (mag < (UINT64_C(1) << 24)) return (float)(int64_t)mag * (neg ? -1.0f : 1.0f);
  int top = 63;
  while (!((mag >> top) & 1)) top--;
  const int drop = top - 23;
  uint64_t kept = mag >> drop;
  if (mag & ((UINT64_C(1) << drop) - 1)) kept |= 1;
  const float f = ldexpf((float)kept, drop);
  return neg ? -f : f;
}

/* float/double -> integer dtype: truncate, saturate, NaN -> 0 (cvt.rzi.sat). */
static int64_t ref_float_to_int(ic_dtype to, double d) {
  int64_t lo, hi;
  ref_int_range(to, &lo, &hi);
  if (isnan(d)) return 0;
  if (to == IC_U64) return d <= 0.0 ? 0 : d >= 18446744073709551616.0 ? (int64_t)UINT64_MAX : (int64_t)(uint64_t)d;
  if (d >= 9223372036854775808.0) return hi;
  if (d <= -9223372036854775808.0) return lo;
  const int64_t t = (int64_t)d;
  return t < lo ? lo : t > hi ? hi : t;
}

static ref_value ref_convert(ic_dtype from, ic_dtype to, bool saturate, ref_value a) {
  ref_value r = {0};
  const ref_kind fk = ref_kind_of(from);
  /* a cast to its own dtype is the value, except that f16, bf16 and fp8 are rounded
   * again: their NaNs become canonical as a store makes them (eager == fused) */
  if (from == to && !(saturate && dtype_is_float(to)) && !dtype_is_narrow_float(to)) return a;
  if (to == IC_BOOL) {
    r.b = fk == REF_BOOL ? a.b : fk == REF_INT ? a.i != 0 : fk == REF_F32 ? a.f != 0.0f : a.d != 0.0;
    return r;
  }
  if (fk == REF_BOOL) return ref_constant(to, a.b ? 1.0 : 0.0);
  if (dtype_is_integer(to)) {
    if (fk == REF_F32 || fk == REF_F64) {
      r.i = ref_float_to_int(to, fk == REF_F32 ? (double)a.f : a.d);
    } else if (saturate) {
      /* u64 sources above INT64_MAX clamp to the top; u64 targets have no top to clamp to */
      int64_t lo, hi;
      ref_int_range(to, &lo, &hi);
      if (from == IC_U64 && a.i < 0) r.i = to == IC_U64 ? a.i : hi;
      else if (to == IC_U64) r.i = a.i < 0 ? 0 : a.i;
      else r.i = a.i < lo ? lo : a.i > hi ? hi : a.i;
    } else {
      r.i = ref_wrap(to, a.i);
    }
    return r;
  }
  if (to == IC_F64) {
    r.d = fk == REF_INT ? ref_int_value(from, a.i) : fk == REF_F32 ? (double)a.f : a.d;
    if (saturate && isinf(r.d)) r.d = r.d > 0 ? dtype_max_finite(to) : -dtype_max_finite(to);
    return r;
  }
  /* to a float-computed dtype: one rounding from the exact value */
  double x;
  if (to == IC_F32) {
    float f = fk == REF_INT ? (from == IC_U64 ? (float)(uint64_t)a.i : (float)a.i) : fk == REF_F32 ? a.f : (float)a.d;
    r.f = isnan(f) && fk == REF_F64 ? ref_canonical_nan() : f; /* f16/bf16/fp8 NaNs pass through */
    x = fk == REF_INT ? ref_int_value(from, a.i) : fk == REF_F32 ? (double)a.f : a.d;
  } else {
    x = fk == REF_INT ? (double)ref_int_to_f32_odd(from, a.i) : fk == REF_F32 ? (double)a.f : a.d;
    /* held as a load of the stored bits holds it (bf16 NaN 0x7fff as 0x7fff0000) */
    const uint32_t bits = small_float_bits(to, x);
    const unsigned char bytes[2] = {(unsigned char)bits, (unsigned char)(bits >> 8)};
    r = ref_load(to, bytes, 0);
  }
  if (saturate && !isnan(x) && (isinf(r.f) || isnan(r.f))) r.f = (float)(x > 0 ? dtype_max_finite(to) : -dtype_max_finite(to));
  return r;
}

/* Integer division: by zero gives 0; MIN / -1 wraps (its remainder is 0). In int64 only
 * i64's MIN / -1 overflows; narrower dtypes wrap their exact quotient afterwards. */
static bool ref_div_wraps(int64_t a, int64_t b) { return a == INT64_MIN && b == -1; }
static int64_t ref_truncdiv(int64_t a, int64_t b) { return b == 0 ? 0 : ref_div_wraps(a, b) ? a : a / b; }
static int64_t ref_fmod(int64_t a, int64_t b) { return b == 0 || ref_div_wraps(a, b) ? 0 : a % b; }

/* An op of an unsigned dtype dt, exact in uint64 (wrapping), before the wrap to dt: the
 * operands are zero-extended, so division, comparisons and shifts are unsigned ones. */
static int64_t ref_uint_op(ic_op op, ic_dtype dt, uint64_t a, uint64_t b, uint64_t c) {
  const int width = ref_width(dt);
  switch (op) {
  case IC_OP_NEG: return (int64_t)(0 - a);
  case IC_OP_RELU: case IC_OP_ABS: return (int64_t)a;
  case IC_OP_ADD: return (int64_t)(a + b);
  case IC_OP_SUB: return (int64_t)(a - b);
  case IC_OP_MUL: return (int64_t)(a * b);
  case IC_OP_MAXIMUM: case IC_OP_FMAX: return (int64_t)(a > b ? a : b);
  case IC_OP_MINIMUM: case IC_OP_FMIN: return (int64_t)(a < b ? a : b);
  case IC_OP_SIGN: return a != 0;
  case IC_OP_BITWISE_NOT: return (int64_t)~a;
  case IC_OP_FMOD: case IC_OP_REMAINDER: return b == 0 ? 0 : (int64_t)(a % b);
  case IC_OP_TRUNC_DIVIDE: case IC_OP_FLOOR_DIVIDE: return b == 0 ? 0 : (int64_t)(a / b);
  case IC_OP_BITWISE_AND: return (int64_t)(a & b);
  case IC_OP_BITWISE_OR: return (int64_t)(a | b);
  case IC_OP_BITWISE_XOR: return (int64_t)(a ^ b);
  case IC_OP_SHIFT_LEFT: return b >= (uint64_t)width ? 0 : (int64_t)(a << b);
  case IC_OP_SHIFT_RIGHT: return b >= (uint64_t)width ? 0 : (int64_t)(a >> b);
  case IC_OP_CLAMP: {
    const uint64_t lo = a > b ? a : b;
    return (int64_t)(lo < c ? lo : c);
  }
  default: return 0;
  }
}

/* An integer op of dtype dt, exact in int64 (wrapping in uint64), before the wrap to dt. */
static int64_t ref_int_op(ic_op op, ic_dtype dt, int64_t a, int64_t b, int64_t c) {
  if (dtype_is_unsigned(dt)) return ref_uint_op(op, dt, (uint64_t)a, (uint64_t)b, (uint64_t)c);
  const uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  const int width = ref_width(dt);
  switch (op) {
  case IC_OP_NEG: return (int64_t)(0 - ua);
  case IC_OP_RELU: return a > 0 ? a : 0;
  case IC_OP_ADD: return (int64_t)(ua + ub);
  case IC_OP_SUB: return (int64_t)(ua - ub);
  case IC_OP_MUL: return (int64_t)(ua * ub);
  case IC_OP_MAXIMUM: case IC_OP_FMAX: return a > b ? a : b;
  case IC_OP_MINIMUM: case IC_OP_FMIN: return a < b ? a : b;
  case IC_OP_ABS: return a < 0 ? (int64_t)(0 - ua) : a;
  case IC_OP_SIGN: return (a > 0) - (a < 0);
  case IC_OP_BITWISE_NOT: return (int64_t)~ua;
  case IC_OP_FMOD: return ref_fmod(a, b);
  case IC_OP_REMAINDER: {
    const int64_t r = ref_fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  }
  case IC_OP_TRUNC_DIVIDE: return ref_truncdiv(a, b);
  case IC_OP_FLOOR_DIVIDE: {
    const int64_t q = ref_truncdiv(a, b);
    return b != 0 && !ref_div_wraps(a, b) && q * b != a && ((a < 0) != (b < 0)) ? q - 1 : q;
  }
  case IC_OP_BITWISE_AND: return a & b;
  case IC_OP_BITWISE_OR: return a | b;
  case IC_OP_BITWISE_XOR: return a ^ b;
  case IC_OP_SHIFT_LEFT: return b < 0 || b >= width ? 0 : (int64_t)(ua << b);
  case IC_OP_SHIFT_RIGHT: return b < 0 || b >= width ? (a < 0 ? -1 : 0) : a >> b;
  case IC_OP_CLAMP: {
    const int64_t lo = a > b ? a : b;
    return lo < c ? lo : c;
  }
  default: return 0;
  }
}

static bool ref_compare(ic_op op, ic_dtype dt, ref_kind k, ref_value a, ref_value b) {
  double x, y;
  if (k == REF_BOOL) return op == IC_OP_EQ ? a.b == b.b : a.b != b.b;
  if (dt == IC_U64) { /* u64 above INT64_MAX is held as a negative int64 */
    const uint64_t u = (uint64_t)a.i, v = (uint64_t)b.i;
    switch (op) {
    case IC_OP_EQ: return u == v;
    case IC_OP_NE: return u != v;
    case IC_OP_LT: return u < v;
    case IC_OP_LE: return u <= v;
    case IC_OP_GT: return u > v;
    default: return u >= v;
    }
  }
  if (k == REF_INT) {
    switch (op) {
    case IC_OP_EQ: return a.i == b.i;
    case IC_OP_NE: return a.i != b.i;
    case IC_OP_LT: return a.i < b.i;
    case IC_OP_LE: return a.i <= b.i;
    case IC_OP_GT: return a.i > b.i;
    default: return a.i >= b.i;
    }
  }
  x = k == REF_F32 ? (double)a.f : a.d; /* exact: float widens to double */
  y = k == REF_F32 ? (double)b.f : b.d;
  switch (op) {
  case IC_OP_EQ: return x == y;
  case IC_OP_NE: return x != y;
  case IC_OP_LT: return x < y;
  case IC_OP_LE: return x <= y;
  case IC_OP_GT: return x > y;
  default: return x >= y;
  }
}

/* x != 0 of any compute type (NaN is nonzero). */
static bool ref_nonzero(ref_kind k, ref_value a) {
  return k == REF_BOOL ? a.b : k == REF_INT ? a.i != 0 : k == REF_F32 ? a.f != 0.0f : a.d != 0.0;
}

/* Ops with a bool result on one operand. */
static bool ref_predicate(ic_op op, ref_kind k, ref_value a) {
  const double x = k == REF_F32 ? (double)a.f : a.d;
  const bool is_float = k == REF_F32 || k == REF_F64;
  switch (op) {
  case IC_OP_LOGICAL_NOT: return !ref_nonzero(k, a);
  case IC_OP_ISNAN: return is_float && isnan(x);
  case IC_OP_ISINF: return is_float && isinf(x);
  case IC_OP_ISFINITE: return !is_float || isfinite(x);
  default: return false;
  }
}

ref_value ref_apply(ic_op op, ic_dtype operand_dt, ic_dtype result_dt, const ref_value *args) {
  ref_value r = {0};
  const ref_kind k = ref_kind_of(operand_dt);
  switch (op) {
  case IC_OP_LOGICAL_NOT: case IC_OP_ISNAN: case IC_OP_ISINF: case IC_OP_ISFINITE:
    r.b = ref_predicate(op, k, args[0]);
    return r;
  case IC_OP_LOGICAL_AND: case IC_OP_LOGICAL_OR: case IC_OP_LOGICAL_XOR: {
    const bool x = ref_nonzero(k, args[0]), y = ref_nonzero(k, args[1]);
    r.b = op == IC_OP_LOGICAL_AND ? x && y : op == IC_OP_LOGICAL_OR ? x || y : x != y;
    return r;
  }
  case IC_OP_BITWISE_NOT: case IC_OP_BITWISE_AND: case IC_OP_BITWISE_OR: case IC_OP_BITWISE_XOR:
    if (k == REF_BOOL) {
      const bool x = args[0].b, y = args[1].b;
      r.b = op == IC_OP_BITWISE_NOT ? !x : op == IC_OP_BITWISE_AND ? x && y : op == IC_OP_BITWISE_OR ? x || y : x != y;
      return r;
    }
    break;
  case IC_OP_EQ: case IC_OP_NE: case IC_OP_LT: case IC_OP_LE: case IC_OP_GT: case IC_OP_GE:
    r.b = ref_compare(op, operand_dt, k, args[0], args[1]);
    return r;
  case IC_OP_WHERE: return args[0].b ? args[1] : args[2];
  case IC_OP_CAST: return ref_convert(operand_dt, result_dt, false, args[0]);
  case IC_OP_CAST_SATURATE: return ref_convert(operand_dt, result_dt, true, args[0]);
  case IC_OP_BITCAST: {
    unsigned char bytes[8] = {0};
    ref_store(operand_dt, bytes, 0, args[0]);
    return ref_load(result_dt, bytes, 0);
  }
  default: break;
  }
  switch (k) {
  case REF_INT: r.i = ref_wrap(result_dt, ref_int_op(op, operand_dt, args[0].i, args[1].i, args[2].i)); break;
  case REF_F32: r.f = ref_round(result_dt, ref_f32_op(op, args[0].f, args[1].f, args[2].f)); break;
  case REF_F64: r.d = ref_f64_op(op, args[0].d, args[1].d, args[2].d); break;
  case REF_BOOL: break;
  }
  return r;
}
