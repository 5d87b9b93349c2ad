/* GPU: the prelude's software f32 -> fp8 conversion (what targets below sm_89 run) against
 * the PTX cvt path of sm_89+, for every one of the 2^32 f32 bit patterns: e4m3fn and e5m2,
 * plain (PyTorch's overflow rules) and saturating. The software path must be bit-exact,
 * and this is the one place it can be run on an sm_90 device. Exits 77 without a GPU. */
#include "check_main.h"
#include "gpu_exhaustive.h"

static const char kernel_src[] =
    "extern \"C\" __global__ void fp8_check(unsigned long long *mismatches, unsigned *first) {\n"
    "  const ic_u64 step = (ic_u64)gridDim.x * blockDim.x;\n"
    "  for (ic_u64 x = (ic_u64)blockIdx.x * blockDim.x + threadIdx.x; x < (1ull << 32); x += step) {\n"
    "    const float f = __uint_as_float((ic_u32)x);\n"
    "    const ic_u32 hw[4] = {ic_f2e4m3(f), ic_f2e5m2(f), ic_f2e4m3_sat(f), ic_f2e5m2_sat(f)};\n"
    "    const ic_u32 sw[4] = {ic_f2f8_soft(f, 4, 3, true, false), ic_f2f8_soft(f, 5, 2, false, false),\n"
    "                          ic_f2f8_soft(f, 4, 3, true, true), ic_f2f8_soft(f, 5, 2, false, true)};\n"
    "    for (int k = 0; k < 4; k++)\n"
    "      if (hw[k] != sw[k]) { atomicAdd(&mismatches[k], 1ull); atomicCAS(&first[k], 0xffffffffu, (ic_u32)x); }\n"
    "  }\n"
    "}\n";

START_TEST(test_soft_fp8_matches_ptx) {
  unsigned long long got[4];
  unsigned at[4];
  if (!gpu_exhaustive_check("fp8_check", kernel_src, 89, 4, got, at)) return; /* no PTX fp8 cvt to compare with */
  static const char *const what[4] = {"e4m3fn", "e5m2", "e4m3fn saturating", "e5m2 saturating"};
  for (int k = 0; k < 4; k++)
    ck_assert_msg(got[k] == 0, "%s: software and PTX differ on %llu f32 patterns, first 0x%08x", what[k], got[k], at[k]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu_fp8_convert");
  TCase *tc = check_tcase("fp8");
  tcase_add_test(tc, test_soft_fp8_matches_ptx);
  suite_add_tcase(s, tc);
  return gpu_run_suite(s);
}
