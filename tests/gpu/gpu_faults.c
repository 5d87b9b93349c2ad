/* Fault injection on the GPU (lib/base/fault.h; the CPU sweeps are test_faults): each
 * driver entry point that can fail in use (context and pool creation, module load,
 * launch, allocation, copies, synchronization) and every allocation and NVRTC call of a
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

START_TEST(test_alloc_and_nvrtc) {
  sweep("device sequence", device_sequence, NULL, "alloc", ENOMEM, NULL);
  sweep("device sequence", device_sequence, NULL, "nvrtc", NVRTC_ERROR_OUT_OF_MEMORY, NULL);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("gpu_faults");
  /* a case each: ctest and scripts/gpu-sanitize.sh take them one at a time (under the
   * sanitizers the allocation sweep alone outlasts a device session's call) */
  CHECK_CASE(s, test_driver_points, 600, NULL, NULL);
  CHECK_CASE(s, test_alloc_and_nvrtc, 600, NULL, NULL);
  if (check_list_cases(argc, argv, s)) return 0;
  return gpu_run_suite(s);
}
