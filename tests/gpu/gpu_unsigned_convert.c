/* GPU: the prelude's conversions of the unsigned dtypes, for every one of the 2^32
 * 32-bit patterns, against references written with integer operations only:
 *   u32 -> f32, f16, bf16, f8e4m3, f8e5m2 (the round-to-odd ic_u2f_odd, then the dtype's
 *     rounding: one rounding to nearest even of the exact value),
 *   u64 -> f32, f64, bf16, f8e4m3 (ic_ul2f_odd) for a u64 made of each pattern at every
 *     magnitude,
 *   f32 -> u32, u64 and f64 -> u32, u64 (cvt.rzi.sat: truncation, 0 for NaN and below 0,
 *     the largest value above the range).
 * The ref backend computes the same table on the host (tests/semantics_cases.h pins single
 * values there). Exits 77 without a GPU. */
#include "check_main.h"
#include "gpu_exhaustive.h"

enum { SLOTS = 13 };

static const char kernel_src[] =
    /* m rounded to `bits` significant bits, to nearest even: exact in a double */
    "__device__ double rnd_bits(ic_u64 m, int bits) {\n"
    "  if (m == 0) return 0.0;\n"
    "  const int drop = 64 - __clzll((long long)m) - bits;\n"
    "  if (drop <= 0) return (double)m;\n"
    "  ic_u64 q = m >> drop;\n"
    "  const ic_u64 rem = m & ((1ull << drop) - 1), half = 1ull << (drop - 1);\n"
    "  if (rem > half || (rem == half && (q & 1))) q++;\n"
    "  return (double)q * (double)(1ull << drop);\n"
    "}\n"
    /* a float (its bits: sign, exponent of ebits with bias, mbits fraction bits) truncated
     * and saturated to an unsigned integer of `width` bits, NaN 0 */
    "__device__ ic_u64 trunc_sat(ic_u64 bits, int ebits, int mbits, int width) {\n"
    "  const ic_u64 emask = (1ull << ebits) - 1, frac = bits & ((1ull << mbits) - 1);\n"
    "  const int biased = (int)((bits >> mbits) & emask), e = biased - (int)(emask >> 1);\n"
    "  const ic_u64 max = width == 64 ? ~0ull : (1ull << width) - 1;\n"
    "  if ((ic_u64)biased == emask && frac != 0) return 0;\n"
    "  if ((bits >> (ebits + mbits)) & 1) return 0;\n"
    "  if (e < 0) return 0;\n"
    "  if (e >= width) return max;\n"
    "  const ic_u64 m = frac | (1ull << mbits);\n"
    "  return e >= mbits ? m << (e - mbits) : m >> (mbits - e);\n"
    "}\n"
    "extern \"C\" __global__ void unsigned_check(unsigned long long *mismatches, unsigned *first) {\n"
    "  const ic_u64 step = (ic_u64)gridDim.x * blockDim.x;\n"
    "  for (ic_u64 x = (ic_u64)blockIdx.x * blockDim.x + threadIdx.x; x < (1ull << 32); x += step) {\n"
    "    const ic_u32 u = (ic_u32)x;\n"
    "    const float odd = ic_u2f_odd(u);\n"
    "    const ic_u64 w = (((ic_u64)u << 32) | (u * 2654435761u)) >> (u % 61u);\n"
    "    const float odd64 = ic_ul2f_odd(w);\n"
    "    const double d = __longlong_as_double((long long)(((ic_u64)u << 32) | (u * 2654435761u)));\n"
    "    const float f = __uint_as_float(u);\n"
    "    const ic_u64 got[13] = {\n"
    "        __float_as_uint((float)u), ic_f2h(odd), ic_f2bf(odd), ic_rndbits_f8e4m3(odd), ic_f2e5m2(odd),\n"
    "        __float_as_uint((float)w), (ic_u64)__double_as_longlong((double)w), ic_f2bf(odd64), ic_rndbits_f8e4m3(odd64),\n"
    "        ic_f2u32(f), ic_f2u64(f), ic_d2u32(d), ic_d2u64(d)};\n"
    "    const ic_u64 want[13] = {\n"
    "        __float_as_uint((float)rnd_bits(u, 24)), ic_f2h((float)rnd_bits(u, 11)), ic_f2bf((float)rnd_bits(u, 8)),\n"
    "        ic_rndbits_f8e4m3((float)rnd_bits(u, 4)), ic_f2e5m2((float)rnd_bits(u, 3)),\n"
    "        __float_as_uint((float)rnd_bits(w, 24)), (ic_u64)__double_as_longlong(rnd_bits(w, 53)),\n"
    "        ic_f2bf((float)rnd_bits(w, 8)), ic_rndbits_f8e4m3((float)rnd_bits(w, 4)),\n"
    "        trunc_sat(u, 8, 23, 32), trunc_sat(u, 8, 23, 64),\n"
    "        trunc_sat((ic_u64)__double_as_longlong(d), 11, 52, 32), trunc_sat((ic_u64)__double_as_longlong(d), 11, 52, 64)};\n"
    "    for (int k = 0; k < 13; k++)\n"
    "      if (got[k] != want[k]) { atomicAdd(&mismatches[k], 1ull); atomicCAS(&first[k], 0xffffffffu, u); }\n"
    "  }\n"
    "}\n";

START_TEST(test_unsigned_conversions_exhaustive) {
  unsigned long long got[SLOTS];
  unsigned at[SLOTS];
  if (!gpu_exhaustive_check("unsigned_check", kernel_src, 80, SLOTS, got, at)) return;
  static const char *const what[SLOTS] = {
      "u32 -> f32",    "u32 -> f16",     "u32 -> bf16",   "u32 -> f8e4m3", "u32 -> f8e5m2",
      "u64 -> f32",    "u64 -> f64",     "u64 -> bf16",   "u64 -> f8e4m3", "f32 -> u32",
      "f32 -> u64",    "f64 -> u32",     "f64 -> u64"};
  for (int k = 0; k < SLOTS; k++)
    ck_assert_msg(got[k] == 0, "%s: the prelude and the reference differ on %llu patterns, first 0x%08x", what[k], got[k],
                  at[k]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu_unsigned_convert");
  TCase *tc = check_tcase("unsigned");
  tcase_add_test(tc, test_unsigned_conversions_exhaustive);
  suite_add_tcase(s, tc);
  return gpu_run_suite(s);
}
