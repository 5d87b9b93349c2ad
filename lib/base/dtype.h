/* Dtypes on the host: classes, rounding a double to a dtype's value, and conversions
 * between f32/double and the small float formats, bit-exact with the PTX conversions the
 * generated kernels use: cvt.rn.f16.f32, cvt.rn.bf16.f32, cvt.f32.f16 and cvt.f32.bf16
 * (checked against an H200 for every f32 and every 16-bit pattern).
 *   f32 -> f16/bf16: round to nearest even, overflow to inf, subnormals kept; every NaN
 *                    (either sign, any payload) becomes the canonical 0x7fff.
 *   f16 -> f32:      exact; every NaN becomes the canonical 0x7fffffff.
 *   bf16 -> f32:     exact, the bits shifted left by 16 (NaN payloads and signs kept). */
#ifndef IC_BASE_DTYPE_H
#define IC_BASE_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "ic/ic.h"

bool dtype_valid(ic_dtype dt);
bool dtype_is_float(ic_dtype dt);
/* f16, bf16 and fp8: computed in f32, stored in 8 or 16 bits. */
bool dtype_is_narrow_float(ic_dtype dt);
/* u8, u16, u32, u64, i8, i16, i32, i64. */
bool dtype_is_integer(ic_dtype dt);
/* u8, u16, u32, u64. */
bool dtype_is_unsigned(ic_dtype dt);
/* Rounds a double to the value dtype dt holds (f16/bf16/fp8 round to nearest even,
 * integers truncate and saturate like a cast, bool is != 0). */
double dtype_round(ic_dtype dt, double v);
/* The largest finite value of a float dtype (f64's for the others). */
double dtype_max_finite(ic_dtype dt);

uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float f);
float bf16_bits_to_f32(uint16_t h);

/* Any double to the storage bits of f16, bf16, f8e4m3 or f8e5m2, rounded once to nearest
 * even (overflow: inf, or NaN 0x7f|sign for f8e4m3; a NaN: the canonical all-ones
 * pattern without sign), and back (exact; a NaN gives a NaN). */
uint32_t small_float_bits(ic_dtype dt, double v);
double small_float_value(ic_dtype dt, uint32_t bits);

#endif
