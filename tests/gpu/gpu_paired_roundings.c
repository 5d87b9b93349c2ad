/* GPU: the prelude's paired roundings (ic_rnd2_bf16, ic_rnd2_f16: one cvt.rn.bf16x2.f32 or
 * cvt.rn.f16x2.f32 for two values), which pair bodies and reduction element loops use in
 * place of two ic_rnd_ (cvt.rn.bf16.f32 each), give each lane the bits ic_rnd_ gives it,
 * for every one of the 2^32 f32 bit patterns in lane 0 (and a scrambled pattern in lane
 * 1): NaNs of any sign and payload, subnormals, overflow, ties. And a probe of the
 * hardware property a packed bf16/f16 arithmetic would need (test_packed_half_arith_probe).
 * Exits 77 without a GPU. */
#include "check_main.h"
#include "gpu_exhaustive.h"

static const char kernel_src[] =
    "extern \"C\" __global__ void rnd2_check(unsigned long long *mismatches, unsigned *first) {\n"
    "  const ic_u64 step = (ic_u64)gridDim.x * blockDim.x;\n"
    "  for (ic_u64 x = (ic_u64)blockIdx.x * blockDim.x + threadIdx.x; x < (1ull << 32); x += step) {\n"
    "    const float a = __uint_as_float((ic_u32)x), b = __uint_as_float((ic_u32)x * 2654435761u + 0x7f800001u);\n"
    "    float p[4];\n"
    "    ic_rnd2_bf16(a, b, p[0], p[1]);\n"
    "    ic_rnd2_f16(a, b, p[2], p[3]);\n"
    "    const float q[4] = {ic_rnd_bf16(a), ic_rnd_bf16(b), ic_rnd_f16(a), ic_rnd_f16(b)};\n"
    "    for (int k = 0; k < 4; k++)\n"
    "      if (__float_as_uint(p[k]) != __float_as_uint(q[k])) {\n"
    "        atomicAdd(&mismatches[k], 1ull);\n"
    "        atomicCAS(&first[k], 0xffffffffu, (ic_u32)x);\n"
    "      }\n"
    "  }\n"
    "}\n";

/* The hardware property a packed bf16/f16 arithmetic would rest on: fma.rn.bf16x2 and
 * fma.rn.f16x2 (a * b + -0, a * 1 + b, b * -1 + a) give, for every pair of 16-bit patterns,
 * the bits of ic's f32 arithmetic rounded once (ic_rndbits_(ic_mul(...)), ...): by
 * Figueroa's bound (f32 has at least 2p + 2 bits for p = 8 and 11) the values agree, and
 * the question this answers on the device is NaN: whether its packed results are the
 * canonical NaN (they are, on sm_90: bench/results/2026-12-05-gpu-tests-h100.md).
 * Counters: [op][dtype][0: a non-NaN result differs, 1: a NaN result]. */
static const char packed_src[] =
    "__device__ __forceinline__ ic_u32 ic_fma_x2(ic_u32 a, ic_u32 b, ic_u32 c, bool f16) {\n"
    "  ic_u32 d;\n"
    "  if (f16) asm(\"fma.rn.f16x2 %0, %1, %2, %3;\" : \"=r\"(d) : \"r\"(a), \"r\"(b), \"r\"(c));\n"
    "  else asm(\"fma.rn.bf16x2 %0, %1, %2, %3;\" : \"=r\"(d) : \"r\"(a), \"r\"(b), \"r\"(c));\n"
    "  return d;\n"
    "}\n"
    "extern \"C\" __global__ void packed_check(unsigned long long *mismatches, unsigned *first) {\n"
    "  const ic_u64 step = (ic_u64)gridDim.x * blockDim.x;\n"
    "  for (ic_u64 x = (ic_u64)blockIdx.x * blockDim.x + threadIdx.x; x < (1ull << 32); x += step) {\n"
    "    const ic_u32 a = (ic_u32)x >> 16, b = (ic_u32)x & 0xffffu, A = a | b << 16, B = b | a << 16;\n"
    "    for (int h = 0; h < 2; h++) {\n"
    "      const bool f16 = h == 1;\n"
    "      const float fa = f16 ? ic_unpack_f16(a) : ic_unpack_bf16(a), fb = f16 ? ic_unpack_f16(b) : ic_unpack_bf16(b);\n"
    "      const ic_u32 mz = 0x80008000u, one = f16 ? 0x3c003c00u : 0x3f803f80u, mone = f16 ? 0xbc00bc00u : 0xbf80bf80u;\n"
    "      const ic_u32 got[3] = {ic_fma_x2(A, B, mz, f16), ic_fma_x2(A, one, B, f16), ic_fma_x2(B, mone, A, f16)};\n"
    "      const float want_f[3] = {ic_mul(fa, fb), ic_add(fa, fb), ic_sub(fa, fb)};\n"
    "      for (int op = 0; op < 3; op++) {\n"
    "        const ic_u32 want = f16 ? ic_rndbits_f16(want_f[op]) : ic_rndbits_bf16(want_f[op]);\n"
    "        if ((got[op] & 0xffffu) != want) {\n"
    "          const int slot = (op * 2 + h) * 2 + (want_f[op] != want_f[op] ? 1 : 0);\n"
    "          atomicAdd(&mismatches[slot], 1ull);\n"
    "          atomicCAS(&first[slot], 0xffffffffu, (ic_u32)x);\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

START_TEST(test_packed_half_arith_probe) {
  enum { SLOTS = 12 };
  unsigned long long got[SLOTS];
  unsigned at[SLOTS];
  ck_assert(gpu_exhaustive_check("packed_check", packed_src, 80, SLOTS, got, at));
  static const char *const ops[3] = {"mul", "add", "sub"};
  for (int slot = 0; slot < SLOTS; slot++)
    ck_assert_msg(got[slot] == 0, "%s %s, %s results: %llu pairs differ from f32-then-round, first a|b = 0x%08x", ops[slot / 4],
                  (slot / 2) % 2 ? "f16" : "bf16", slot % 2 ? "NaN" : "non-NaN", got[slot], at[slot]);
}
END_TEST

START_TEST(test_paired_roundings_match_single) {
  unsigned long long got[4];
  unsigned at[4];
  ck_assert(gpu_exhaustive_check("rnd2_check", kernel_src, 80, 4, got, at));
  static const char *const what[4] = {"bf16 lane 0", "bf16 lane 1", "f16 lane 0", "f16 lane 1"};
  for (int k = 0; k < 4; k++)
    ck_assert_msg(got[k] == 0, "%s: ic_rnd2_ and ic_rnd_ differ on %llu patterns, first at x = 0x%08x", what[k], got[k], at[k]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu_paired_roundings");
  TCase *tc = check_tcase("rnd2");
  tcase_add_test(tc, test_paired_roundings_match_single);
  tcase_add_test(tc, test_packed_half_arith_probe);
  suite_add_tcase(s, tc);
  return gpu_run_suite(s);
}
