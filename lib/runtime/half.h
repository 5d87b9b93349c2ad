/* Host conversions between f32 and the 16-bit float formats, bit-exact with the PTX
 * conversions the generated kernels use: cvt.rn.f16.f32, cvt.rn.bf16.f32, cvt.f32.f16 and
 * cvt.f32.bf16 (checked against an H200 for every f32 and every 16-bit pattern).
 *   f32 -> f16/bf16: round to nearest even, overflow to inf, subnormals kept; every NaN
 *                    (either sign, any payload) becomes the canonical 0x7fff.
 *   f16 -> f32:      exact; every NaN becomes the canonical 0x7fffffff.
 *   bf16 -> f32:     exact, the bits shifted left by 16 (NaN payloads and signs kept).
 * Used by host references in tests. */
#ifndef IC_RUNTIME_HALF_H
#define IC_RUNTIME_HALF_H

#include <stdint.h>

#include <ic/ic.h>

uint16_t ic_f32_to_f16_bits(float f);
float ic_f16_bits_to_f32(uint16_t h);
uint16_t ic_f32_to_bf16_bits(float f);
float ic_bf16_bits_to_f32(uint16_t h);

/* Any double to the storage bits of f16, bf16, f8e4m3 or f8e5m2, rounded once to nearest
 * even (overflow: inf, or NaN 0x7f|sign for f8e4m3; a NaN: the canonical all-ones
 * pattern without sign), and back (exact; a NaN gives a NaN). */
uint32_t ic_small_float_bits(ic_dtype dt, double v);
double ic_small_float_value(ic_dtype dt, uint32_t bits);

#endif
