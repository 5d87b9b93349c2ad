/* Dtype tables and host-side rounding to dtypes, small floats bit-exact with PTX cvt. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

/* ---------------------------------------------------------------- dtypes */

const char *ic_dtype_name(ic_dtype dtype) {
  switch (dtype) {
#define IC_DTYPE_NAME_(name, bytes, spelling) \
  case IC_##name:                             \
    return spelling;
    IC_DTYPE_LIST(IC_DTYPE_NAME_)
#undef IC_DTYPE_NAME_
    default:
      break;
  }
  return "invalid";
}

size_t ic_dtype_size(ic_dtype dtype) {
  switch (dtype) {
#define IC_DTYPE_SIZE_(name, bytes, spelling) \
  case IC_##name:                             \
    return bytes;
    IC_DTYPE_LIST(IC_DTYPE_SIZE_)
#undef IC_DTYPE_SIZE_
    default:
      break;
  }
  return 0;
}

bool dtype_valid(ic_dtype dt) { return dt >= IC_BOOL && dt < IC_DTYPE_COUNT; }

bool dtype_is_narrow_float(ic_dtype dt) { return dt == IC_F16 || dt == IC_BF16 || dt == IC_F8E4M3 || dt == IC_F8E5M2; }

bool dtype_is_float(ic_dtype dt) {
  switch (dt) {
    case IC_F16:
    case IC_BF16:
    case IC_F32:
    case IC_F64:
    case IC_F8E4M3:
    case IC_F8E5M2:
      return true;
    default:
      return false;
  }
}

bool dtype_is_integer(ic_dtype dt) {
  switch (dt) {
    case IC_U8:
    case IC_U16:
    case IC_U32:
    case IC_U64:
    case IC_I8:
    case IC_I16:
    case IC_I32:
    case IC_I64:
      return true;
    default:
      return false;
  }
}

bool dtype_is_unsigned(ic_dtype dt) { return dt == IC_U8 || dt == IC_U16 || dt == IC_U32 || dt == IC_U64; }

/* ---------------------------------------------------------------- small floats
 *
 * A binary format with `ebits` exponent bits and `mbits` stored mantissa bits, IEEE-style
 * (subnormals, an all-ones exponent for inf/NaN), or "fn" style (no inf: only the
 * all-ones pattern is NaN, as f8e4m3fn). Rounding works on the double's bits directly,
 * so a double rounds once (not double -> float -> half) and a float, widened exactly,
 * rounds exactly as the PTX cvt.rn does. */
typedef struct small_float {
  int ebits, mbits;
  bool fn; /* finite-only: no inf, NaN is all ones */
} small_float;

static const small_float FMT_F16 = {5, 10, false};
static const small_float FMT_BF16 = {8, 7, false};
static const small_float FMT_E5M2 = {5, 2, false};
static const small_float FMT_E4M3FN = {4, 3, true};

static uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static uint32_t round_to_small(double v, small_float f) {
  const uint64_t u = double_bits(v);
  const uint32_t sign = (uint32_t)(u >> 63) << (f.ebits + f.mbits);
  const int ed = (int)((u >> 52) & 0x7ff);
  const uint64_t md = u & ((UINT64_C(1) << 52) - 1);
  const uint32_t emask = (1u << f.ebits) - 1;
  const uint32_t all_ones = (emask << f.mbits) | ((1u << f.mbits) - 1);
  const uint32_t inf = f.fn ? all_ones : emask << f.mbits;

  if (ed == 0x7ff) {
    if (md == 0) return sign | inf; /* fn formats: inf becomes NaN */
    /* Any NaN becomes the canonical NaN, all ones without the sign: what cvt.rn.f16.f32
     * and cvt.rn.bf16.f32 produce (0x7fff), as measured on sm_90 for every f32 NaN. */
    return all_ones;
  }
  if (ed == 0) return sign; /* zero, or a double subnormal: far below any half ulp */

  const int bias = (1 << (f.ebits - 1)) - 1;
  const int emin = 1 - bias; /* the smallest normal exponent */
  const int e = ed - 1023;
  const uint64_t sig = (UINT64_C(1) << 52) | md;
  int shift = 52 - f.mbits;
  if (e < emin) shift += emin - e;
  uint64_t q;
  if (shift >= 64) {
    q = 0; /* below half the smallest subnormal */
  } else {
    q = sig >> shift;
    const uint64_t rem = sig & ((UINT64_C(1) << shift) - 1);
    const uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
  }
  uint64_t mag;
  if (e < emin) {
    mag = q; /* subnormal; q == 1 << mbits is the smallest normal */
  } else {
    const int64_t be = (int64_t)e + bias; /* >= 1 */
    if (be >= (int64_t)emask + 1) return sign | inf;
    mag = ((uint64_t)(be - 1) << f.mbits) + q; /* a mantissa carry bumps the exponent */
  }
  if (f.fn) {
    if (mag >= all_ones) return sign | all_ones;
  } else if (mag >= inf) {
    return sign | inf;
  }
  return sign | (uint32_t)mag;
}

static double small_to_double(uint32_t bits, small_float f) {
  const int bias = (1 << (f.ebits - 1)) - 1;
  const uint32_t emask = (1u << f.ebits) - 1;
  const uint32_t mmask = (1u << f.mbits) - 1;
  const bool neg = (bits >> (f.ebits + f.mbits)) & 1;
  const uint32_t be = (bits >> f.mbits) & emask;
  const uint32_t m = bits & mmask;
  double mag;
  if (f.fn && be == emask && m == mmask) {
    return neg ? -NAN : NAN;
  } else if (!f.fn && be == emask) {
    if (m != 0) return NAN;
    mag = INFINITY;
  } else if (be == 0) {
    mag = ldexp((double)m, 1 - bias - f.mbits);
  } else {
    mag = ldexp((double)(m | (mmask + 1)), (int)be - bias - f.mbits);
  }
  return neg ? -mag : mag;
}

static const small_float *small_format(ic_dtype dt) {
  switch (dt) {
    case IC_F16: return &FMT_F16;
    case IC_BF16: return &FMT_BF16;
    case IC_F8E4M3: return &FMT_E4M3FN;
    case IC_F8E5M2: return &FMT_E5M2;
    default: return NULL;
  }
}

uint32_t small_float_bits(ic_dtype dt, double v) {
  const small_float *f = small_format(dt);
  return f ? round_to_small(v, *f) : 0;
}

double small_float_value(ic_dtype dt, uint32_t bits) {
  const small_float *f = small_format(dt);
  return f ? small_to_double(bits, *f) : 0.0;
}

uint16_t f32_to_f16_bits(float f) { return (uint16_t)round_to_small((double)f, FMT_F16); }

float f16_bits_to_f32(uint16_t h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) {
    /* cvt.f32.f16 of any NaN gives the canonical 0x7fffffff (measured on sm_90). */
    const uint32_t u = 0x7fffffffu;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
  }
  return (float)small_to_double(h, FMT_F16);
}

uint16_t f32_to_bf16_bits(float f) { return (uint16_t)round_to_small((double)f, FMT_BF16); }

float bf16_bits_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16; /* exact, NaNs included, as cvt.f32.bf16 */
  float r;
  memcpy(&r, &u, sizeof r);
  return r;
}

static double round_int(double v, double lo, double hi) {
  if (isnan(v)) return 0.0;
  if (v <= lo) return lo;
  if (v >= hi) return hi;
  return trunc(v);
}

double dtype_max_finite(ic_dtype dt) {
  switch (dt) {
  case IC_F16: return 65504.0;
  case IC_BF16: return 3.3895313892515355e38;
  case IC_F8E4M3: return 448.0;
  case IC_F8E5M2: return 57344.0;
  case IC_F32: return 3.4028234663852886e38;
  default: return 1.7976931348623157e308;
  }
}

double dtype_round(ic_dtype dt, double v) {
  switch (dt) {
    case IC_BOOL:
      return v != 0.0 || isnan(v) ? 1.0 : 0.0;
    case IC_U8:
      return round_int(v, 0.0, 255.0);
    case IC_U16:
      return round_int(v, 0.0, 65535.0);
    case IC_U32:
      return round_int(v, 0.0, 4294967295.0);
    case IC_U64:
      /* 2^64 - 1 is no double; the saturated value prints as 2^64. */
      return round_int(v, 0.0, 18446744073709551615.0);
    case IC_I8:
      return round_int(v, -128.0, 127.0);
    case IC_I16:
      return round_int(v, -32768.0, 32767.0);
    case IC_I32:
      return round_int(v, -2147483648.0, 2147483647.0);
    case IC_I64:
      /* 2^63 - 1 is no double; the saturated value prints as 2^63. */
      return round_int(v, -9223372036854775808.0, 9223372036854775807.0);
    case IC_F16:
      return isnan(v) ? v : small_to_double(round_to_small(v, FMT_F16), FMT_F16);
    case IC_BF16:
      return isnan(v) ? v : small_to_double(round_to_small(v, FMT_BF16), FMT_BF16);
    case IC_F32:
      return (double)(float)v;
    case IC_F64:
      return v;
    case IC_F8E4M3:
      return isnan(v) ? v : small_to_double(round_to_small(v, FMT_E4M3FN), FMT_E4M3FN);
    case IC_F8E5M2:
      return isnan(v) ? v : small_to_double(round_to_small(v, FMT_E5M2), FMT_E5M2);
    default:
      return v;
  }
}


ic_status ic_element_store(ic_dtype dt, double value, void *dst) {
  if (!dtype_valid(dt) || !dst)
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_element_store: %s", dst ? "invalid dtype" : "dst is NULL");
  const double v = dtype_round(dt, value);
  unsigned char bytes[8] = {0};
  switch (dt) {
  case IC_BOOL: bytes[0] = v != 0.0; break;
  case IC_U8: bytes[0] = (uint8_t)v; break;
  case IC_U16: memcpy(bytes, &(uint16_t){(uint16_t)v}, 2); break;
  case IC_U32: memcpy(bytes, &(uint32_t){(uint32_t)v}, 4); break;
  case IC_U64: { /* 2^64 is the saturated high end: no double holds UINT64_MAX */
    const uint64_t u = v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
    memcpy(bytes, &u, 8);
    break;
  }
  case IC_I8: memcpy(bytes, &(int8_t){(int8_t)v}, 1); break;
  case IC_I16: memcpy(bytes, &(int16_t){(int16_t)v}, 2); break;
  case IC_I32: memcpy(bytes, &(int32_t){(int32_t)v}, 4); break;
  case IC_I64: { /* 2^63 is the saturated high end: no double holds INT64_MAX */
    const int64_t i = v >= 9223372036854775807.0 ? INT64_MAX : (int64_t)v;
    memcpy(bytes, &i, 8);
    break;
  }
  case IC_F32: memcpy(bytes, &(float){(float)value}, 4); break;
  case IC_F64: memcpy(bytes, &value, 8); break;
  case IC_F16: case IC_BF16: memcpy(bytes, &(uint16_t){(uint16_t)small_float_bits(dt, value)}, 2); break;
  case IC_F8E4M3: case IC_F8E5M2: bytes[0] = (uint8_t)small_float_bits(dt, value); break;
  default: break;
  }
  memcpy(dst, bytes, ic_dtype_size(dt));
  return IC_OK;
}

double ic_element_load(ic_dtype dt, const void *src) {
  if (!dtype_valid(dt) || !src) return NAN;
  unsigned char b[8] = {0};
  memcpy(b, src, ic_dtype_size(dt));
  uint16_t h;
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  float f;
  double d;
  switch (dt) {
  case IC_BOOL: return b[0] != 0;
  case IC_U8: return b[0];
  case IC_U16: { uint16_t u; memcpy(&u, b, 2); return u; }
  case IC_U32: { uint32_t u; memcpy(&u, b, 4); return u; }
  case IC_U64: { uint64_t u; memcpy(&u, b, 8); return (double)u; }
  case IC_I8: memcpy(&i8, b, 1); return i8;
  case IC_I16: memcpy(&i16, b, 2); return i16;
  case IC_I32: memcpy(&i32, b, 4); return i32;
  case IC_I64: memcpy(&i64, b, 8); return (double)i64;
  case IC_F32: memcpy(&f, b, 4); return f;
  case IC_F64: memcpy(&d, b, 8); return d;
  case IC_F16: case IC_BF16: memcpy(&h, b, 2); return small_float_value(dt, h);
  case IC_F8E4M3: case IC_F8E5M2: return small_float_value(dt, b[0]);
  default: return NAN;
  }
}
