/* Host check of the exact division by a row value (lib/backend/cuda/prelude.cuh,
 * ic_divisor_prep / ic_div_in / ic_div_by): y = RN(1/s); in the window, q0 = RN(x y),
 * r = fma(-q0, s, x), q = fma(r, y, q0) must equal RN(x / s) bit for bit; outside it the
 * kernel divides. x86's float division and fmaf are IEEE, so the host's x / s is the
 * reference. Build and run (about 35 s on one core; prints mismatches, exits 1 on any):
 *   gcc -O2 -march=native -ffp-contract=off scripts/div-window-check.c -lm -o /tmp/dwc && /tmp/dwc
 * The window formulas below are the prelude's, written again here for the host. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static float f_of(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}
static uint32_t u_of(float x) {
  uint32_t v;
  memcpy(&v, &x, 4);
  return v;
}
static uint64_t rng = 88172645463325252ull;
static uint32_t next32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 11);
}
static void prep(float s, float *y, float *lo, float *hi) {
  const float as = fabsf(s);
  const int ok = as >= 0x1p-126f && as <= 0x1p126f;
  *y = 1.0f / s;
  *lo = ok ? fmaxf(0x1p-101f, as * 0x1p-125f) : INFINITY;
  *hi = ok ? as * 0x1p127f : 0.0f;
}
static float div_in(float x, float s, float y) {
  const float q0 = x * y;
  return fmaf(fmaf(-q0, s, x), y, q0);
}
static long bad, total, fast;
/* x / s as the kernel computes it, against the host's division */
static void check(float x, float s, float y, float lo, float hi) {
  const int in = fabsf(x) >= lo && fabsf(x) < hi;
  const float q = in ? div_in(x, s, y) : x / s, want = x / s;
  total++;
  fast += in;
  if (u_of(q) != u_of(want) && !(isnan(q) && isnan(want))) {
    if (bad < 20) printf("x %08x s %08x: %08x, division %08x\n", u_of(x), u_of(s), u_of(q), u_of(want));
    bad++;
  }
}

int main(void) {
  /* 1. the algorithm: every significand of x in [1, 2) against 400 divisors in [1, 2)
   * (the first 47 chosen: all-ones, zero, low-bit runs and single-hole significands) */
  for (int t = 0; t < 400; t++) {
    uint32_t m = t == 0 ? 0x7fffffu : t == 1 ? 0u : t < 24 ? 0x7fffffu >> (t - 1) : t < 47 ? 0x7fffffu ^ (1u << (t - 24)) : next32() & 0x7fffffu;
    float s = f_of(0x3f800000u | m), y, lo, hi;
    prep(s, &y, &lo, &hi);
    for (uint32_t xm = 0; xm < 0x800000u; xm++) check(f_of(0x3f800000u | xm), s, y, lo, hi);
  }
  printf("significands: %ld mismatches of %ld\n", bad, total);
  /* 2. the window: every divisor exponent, both signs, 6 significands, against x in the
   * binades at and around both edges of its window and 6 others, 2^15 significands each */
  for (int es = 0; es <= 255; es++)
    for (int sm = 0; sm < 6; sm++)
      for (uint32_t sign = 0; sign < 2; sign++) {
        uint32_t m = sm == 0 ? 0 : sm == 1 ? 0x7fffffu : sm == 2 ? 1 : sm == 3 ? 0x7ffffeu : next32() & 0x7fffffu;
        float s = f_of(sign << 31 | (uint32_t)es << 23 | m), y, lo, hi;
        prep(s, &y, &lo, &hi);
        int ex[32], n = 0;
        int elo = isinf(lo) ? -1 : (int)((u_of(lo) >> 23) & 0xff), ehi = hi == 0 || isinf(hi) ? 254 : (int)((u_of(hi) >> 23) & 0xff);
        for (int d = -3; d <= 3; d++) {
          if (elo >= 0 && elo + d >= 0 && elo + d <= 255) ex[n++] = elo + d;
          if (ehi + d >= 0 && ehi + d <= 255) ex[n++] = ehi + d;
        }
        for (int k = 0; k < 6; k++) ex[n++] = (int)(next32() % 256);
        ex[n++] = 0;
        for (int q = 0; q < n; q++)
          for (int t = 0; t < 32768; t++) {
            uint32_t xm = t == 0 ? 0 : t == 1 ? 0x7fffffu : t == 2 ? 1 : next32() & 0x7fffffu;
            check(f_of((next32() & 1u) << 31 | (uint32_t)ex[q] << 23 | xm), s, y, lo, hi);
          }
      }
  printf("window edges: %ld mismatches of %ld\n", bad, total);
  /* 3. random bit patterns (NaN, inf, zeros, subnormals included) */
  for (long t = 0; t < 200000000; t++) {
    float s = f_of(next32() << 11 ^ next32()), x = f_of(next32() << 11 ^ next32()), y, lo, hi;
    prep(s, &y, &lo, &hi);
    check(x, s, y, lo, hi);
  }
  printf("random bits: %ld mismatches of %ld\n", bad, total);
  /* 4. quotients next to rounding midpoints: x = RN(s m), m a midpoint of [1, 2), and its
   * two neighbours */
  for (long t = 0; t < 300000000; t++) {
    float s = f_of(0x3f800000u | (next32() & 0x7fffffu)), y, lo, hi;
    prep(s, &y, &lo, &hi);
    const double mid = 1.0 + ((double)(next32() & 0x7fffffu) + 0.5) * 0x1p-23;
    const float x0 = (float)(mid * (double)s);
    for (int d = -1; d <= 1; d++) check(f_of(u_of(x0) + (uint32_t)d), s, y, lo, hi);
  }
  printf("near midpoints: %ld mismatches of %ld quotients (%ld through the window)\n", bad, total, fast);
  return bad != 0;
}
