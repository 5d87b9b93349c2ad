/* GPU: matmul (issue 41) on the cuda backend against the ref backend and plain C loops
 * (tests/matmul_cases.h): f32, f64 and i8 bit for bit (cuda == ref == the documented
 * loop), bf16 and f16 within ic.h's bound of an f64 reference, f32 under
 * IC_COMPILE_ALLOW_TF32 within the TF32 bound; outputs poisoned first; eager == fused bit
 * for bit and two runs the same bits. Graphs of symbolic sizes, so each compiles once
 * and runs at every size: 1, 7, 13, 127, 129, 257, 1000 and 0 in M, N and K; 1-D forms,
 * broadcast batches (a batch of 1, 2-D against batched, an expand of stride 0),
 * transposed, sliced (steps, odd offsets) and strided inputs (padded misaligned rows,
 * column-major); epilogues (bias + GELU, a residual add and a cast as a second output)
 * and a dequantizing prologue (an i8 weight cast and scaled a column), each in the
 * matmul's one kernel. Exits 77 without a GPU. */
#include "gpu_harness.h"
#include "matmul_cases.h"

static void setup(void) {
  mm_backend = "cuda";
  IC_OK_OR_FAIL(ic_context_create(NULL, &mm_e.ctx));
}

static void teardown(void) {
  ic_context_destroy(mm_e.ctx);
  mm_e.ctx = NULL;
}

/* {m, k, n}: ones, primes and odd sizes around the tile sizes, a long K (1000: 63 chunks
 * of 16, the last partial), 0 in each place. The ref backend runs each too, so the
 * largest stays near 10^7 multiply-adds. */
static const int64_t sizes_2d[][3] = {{1, 1, 1},       {7, 13, 1},     {1, 1000, 7},   {13, 7, 127},
                                      {127, 129, 257}, {129, 257, 13}, {257, 13, 129}, {64, 1000, 128},
                                      {1000, 127, 7},  {0, 7, 13},     {7, 0, 13},     {13, 7, 0}};

#define GPU_2D_CASE(name, dt) \
  START_TEST(test_2d_##name) { mm_case_2d(dt, sizes_2d, MM_COUNT(sizes_2d), 0); } \
  END_TEST
GPU_2D_CASE(bf16, IC_BF16)
GPU_2D_CASE(f16, IC_F16)
GPU_2D_CASE(f32, IC_F32)
GPU_2D_CASE(f64, IC_F64)
GPU_2D_CASE(i8, IC_I8)

START_TEST(test_tf32) {
  static const int64_t sizes[][3] = {{7, 13, 1}, {127, 129, 257}, {64, 1000, 128}, {13, 0, 7}};
  mm_case_2d(IC_F32, sizes, MM_COUNT(sizes), IC_COMPILE_ALLOW_TF32);
}
END_TEST

START_TEST(test_vectors) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {7, 13, 5}, {257, 1000, 129}, {3, 0, 2}};
  static const ic_dtype dts[] = {IC_BF16, IC_F32, IC_I8};
  for (int i = 0; i < MM_COUNT(dts); i++) mm_case_vectors(dts[i], sizes, MM_COUNT(sizes));
}
END_TEST

START_TEST(test_batched_broadcast) {
  static const int64_t sizes[][4] = {{1, 1, 1, 1}, {5, 13, 129, 7}, {3, 127, 64, 129}, {0, 3, 4, 5}, {2, 3, 0, 4}};
  static const ic_dtype dts[] = {IC_BF16, IC_F32};
  for (int i = 0; i < MM_COUNT(dts); i++) mm_case_batched(dts[i], sizes, MM_COUNT(sizes));
}
END_TEST

START_TEST(test_views_and_strides) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {13, 127, 7}, {129, 257, 127}};
  static const ic_dtype dts[] = {IC_BF16, IC_F32, IC_F16};
  for (int i = 0; i < MM_COUNT(dts); i++) mm_case_views(dts[i], sizes, MM_COUNT(sizes));
}
END_TEST

START_TEST(test_epilogues) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {13, 127, 7}, {129, 257, 127}, {0, 4, 3}, {3, 0, 4}};
  mm_case_epilogue(IC_F32, sizes, MM_COUNT(sizes));
  mm_case_epilogue(IC_BF16, sizes, MM_COUNT(sizes));
}
END_TEST

START_TEST(test_dequant_prologue) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {13, 127, 7}, {127, 1000, 129}};
  mm_case_dequant(IC_BF16, sizes, MM_COUNT(sizes));
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("gpu_matmul");
  CHECK_CASE(s, test_2d_bf16, setup, teardown);
  CHECK_CASE(s, test_2d_f16, setup, teardown);
  CHECK_CASE(s, test_2d_f32, setup, teardown);
  CHECK_CASE(s, test_2d_f64, setup, teardown);
  CHECK_CASE(s, test_2d_i8, setup, teardown);
  CHECK_CASE(s, test_tf32, setup, teardown);
  CHECK_CASE(s, test_vectors, setup, teardown);
  CHECK_CASE(s, test_batched_broadcast, setup, teardown);
  CHECK_CASE(s, test_views_and_strides, setup, teardown);
  CHECK_CASE(s, test_epilogues, setup, teardown);
  CHECK_CASE(s, test_dequant_prologue, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return gpu_run_suite(s);
}
