/* Fault injection on the GPU (lib/base/fault.h; the CPU sweeps are test_faults): each
 * driver entry point that can fail in use (context and pool creation, module load,
 * launch, the opt-in to more shared memory, allocation, copies, synchronization) and every allocation and NVRTC call of a
 * whole sequence on a device context (create the context, compile cold, upload, run with
 * ic-allocated outputs, download, free, destroy) is made to fail in turn. Each failure
 * returns a clean status with a message, frees what the sequence allocated, and the next
 * sequence succeeds. The release calls (cuMemFree, cuModuleUnload, cuCtxPopCurrent, ...)
 * are not failed: an injected failure skips the call, which would leak by construction. */
#include <cuda.h>
#include <errno.h>
#include <nvrtc.h>

#include "check_main.h"
#include "fault_sweep.h"
#include "gpu_harness.h"

/* One whole device sequence; on failure everything made so far is released. */
static ic_status device_sequence(const void *arg) {
  (void)arg;
  ic_context *ctx = NULL;
  ic_graph *g = NULL;
  ic_program *p = NULL;
  void *dx = NULL, *dw = NULL;
  ic_tensor out[2] = {{NULL, IC_F32, 2, NULL, NULL}, {NULL, IC_F32, 2, NULL, NULL}};
  float x[ROWS * COLS], w[COLS], z[ROWS * COLS], sums[ROWS];
  for (int i = 0; i < ROWS * COLS; i++) x[i] = input_x(i);
  for (int j = 0; j < COLS; j++) w[j] = input_w(j);
  ic_context_options o = {.struct_size = sizeof o, .flags = IC_CONTEXT_NO_DISK_CACHE};
  ic_status s = ic_context_create(&o, &ctx);
  if (!s) s = ic_graph_parse(GRAPH_TEXT, &g);
  ic_compile_options co = {.struct_size = sizeof co, .flags = IC_COMPILE_NO_CACHE};
  if (!s) s = ic_compile(ctx, g, &co, &p);
  if (!s) s = ic_malloc(ctx, sizeof x, &dx);
  if (!s) s = ic_malloc(ctx, sizeof w, &dw);
  if (!s) s = ic_memcpy_htod(ctx, dx, x, sizeof x);
  if (!s) s = ic_memcpy_htod(ctx, dw, w, sizeof w);
  int64_t xs[2] = {ROWS, COLS}, ws[1] = {COLS};
  ic_tensor in[2] = {{dx, IC_F32, 2, xs, NULL}, {dw, IC_F32, 1, ws, NULL}};
  if (!s) {
    s = ic_program_run(p, in, 2, out, 2, NULL);
    if (s) {
      ck_assert_ptr_null(out[0].data); /* a failed run leaves no output behind */
      ck_assert_ptr_null(out[1].data);
    }
  }
  if (!s) s = ic_stream_synchronize(ctx, NULL);
  if (!s) s = ic_memcpy_dtoh(ctx, z, out[0].data, sizeof z);
  if (!s) s = ic_memcpy_dtoh(ctx, sums, out[1].data, sizeof sums);
  if (!s) ck_assert_msg(outputs_right(z, sums), "wrong results after a sweep");
  if (ctx) {
    /* a free may take the injected fault itself (cuCtxPushCurrent, ...): the memory is
     * still the caller's, and the next try frees it (compute-sanitizer's leak check found
     * these left over when the first try's status was ignored) */
    void *const held[4] = {out[0].data, out[1].data, dx, dw};
    for (int i = 0; i < 4; i++)
      if (ic_free(ctx, held[i]) != IC_OK) ck_assert_int_eq(ic_free(ctx, held[i]), IC_OK);
  }
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  return s;
}

START_TEST(test_driver_points) {
  static const char *const points[] = {"cuDeviceGetCount",   "cuDeviceGet",       "cuDeviceGetAttribute",
                                        "cuDevicePrimaryCtxRetain", "cuCtxPushCurrent", "cuModuleLoadData",
                                        "cuModuleGetFunction", "cuLaunchKernel",    "cuMemAlloc",
                                        "cuMemAllocAsync",    "cuMemAllocFromPoolAsync", "cuMemPoolCreate",
                                        "cuMemPoolSetAttribute", "cuMemcpyHtoD",   "cuMemcpyDtoH",
                                        "cuMemsetD8",         "cuStreamSynchronize"};
  ck_assert_int_eq(device_sequence(NULL), IC_OK);
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    sweep(points[i], device_sequence, NULL, points[i], CUDA_ERROR_OUT_OF_MEMORY, NULL);
    sweep(points[i], device_sequence, NULL, points[i], CUDA_ERROR_UNKNOWN, NULL);
  }
}
END_TEST

/* A softmax over rows of 32000 f32, whose kernel keeps half of each row in dynamic shared
 * memory (64 KB a block, past the default 48 KB: the kernel opts in at load with
 * cuFuncSetAttribute), on three rows; its results against a float64 softmax. */
enum { TIER_ROWS = 3, TIER_COLS = 32000 };
static float tier_x[TIER_ROWS * TIER_COLS], tier_y[TIER_ROWS * TIER_COLS];

static ic_status tier_sequence(const void *arg) {
  (void)arg;
  static const char *const text = "symbol n\ninput x : f32[n, 32000]\nm = max(x, [1], keepdim)\nd = sub(x, m)\n"
                                  "e = exp(d)\ns = sum(e, [1], keepdim)\ny = div(e, s)\noutput y\n";
  ic_context *ctx = NULL;
  ic_graph *g = NULL;
  ic_program *p = NULL;
  void *dx = NULL;
  int64_t xs[2] = {TIER_ROWS, TIER_COLS};
  ic_tensor in = {NULL, IC_F32, 2, xs, NULL}, out = {NULL, IC_F32, 2, NULL, NULL};
  ic_context_options o = {.struct_size = sizeof o, .flags = IC_CONTEXT_NO_DISK_CACHE};
  ic_status s = ic_context_create(&o, &ctx);
  if (!s) s = ic_graph_parse(text, &g);
  ic_compile_options co = {.struct_size = sizeof co, .flags = IC_COMPILE_NO_CACHE};
  if (!s) s = ic_compile(ctx, g, &co, &p);
  if (!s) ck_assert_ptr_nonnull(strstr(ic_program_kernel_source(p, 0), "ic_tier"));
  if (!s) s = ic_malloc(ctx, sizeof tier_x, &dx);
  if (!s) s = ic_memcpy_htod(ctx, dx, tier_x, sizeof tier_x);
  in.data = dx;
  if (!s) s = ic_program_run(p, &in, 1, &out, 1, NULL);
  if (!s) s = ic_stream_synchronize(ctx, NULL);
  if (!s) s = ic_memcpy_dtoh(ctx, tier_y, out.data, sizeof tier_y);
  for (int r = 0; !s && r < TIER_ROWS; r++) {
    const float *x = tier_x + (size_t)r * TIER_COLS, *y = tier_y + (size_t)r * TIER_COLS;
    double m = x[0], sum = 0;
    for (int c = 1; c < TIER_COLS; c++) m = x[c] > m ? x[c] : m;
    for (int c = 0; c < TIER_COLS; c++) sum += exp((double)x[c] - m);
    for (int c = 0; c < TIER_COLS; c++)
      ck_assert_msg(fabs(y[c] - exp((double)x[c] - m) / sum) <= 1e-6 * exp((double)x[c] - m) / sum + 1e-12,
                    "row %d element %d: %g", r, c, (double)y[c]);
  }
  if (ctx) {
    if (out.data) ck_assert_int_eq(ic_free(ctx, out.data), IC_OK);
    if (dx) ck_assert_int_eq(ic_free(ctx, dx), IC_OK);
  }
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  return s;
}

START_TEST(test_shared_memory_opt_in) {
  for (int i = 0; i < TIER_ROWS * TIER_COLS; i++) tier_x[i] = 8.0f * input_x(i * 7 + i / 3);
  sweep_result r = sweep("rows in shared memory", tier_sequence, NULL, "cuFuncSetAttribute", CUDA_ERROR_INVALID_VALUE, NULL);
  ck_assert_int_ge(r.points, 1);
  ck_assert_int_eq(r.failed, r.points);
}
END_TEST

START_TEST(test_alloc_points) { sweep("device sequence", device_sequence, NULL, "alloc", ENOMEM, NULL); }
END_TEST

START_TEST(test_nvrtc_points) { sweep("device sequence", device_sequence, NULL, "nvrtc", NVRTC_ERROR_OUT_OF_MEMORY, NULL); }
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("gpu_faults");
  /* a case each: ctest and scripts/gpu-sanitize.sh take them one at a time (under
   * compute-sanitizer the allocation sweep alone takes many minutes) */
  CHECK_CASE(s, test_driver_points, NULL, NULL);
  CHECK_CASE(s, test_alloc_points, NULL, NULL);
  CHECK_CASE(s, test_nvrtc_points, NULL, NULL);
  CHECK_CASE(s, test_shared_memory_opt_in, NULL, NULL);
  if (check_list_cases(argc, argv, s)) return 0;
  return gpu_run_suite(s);
}
