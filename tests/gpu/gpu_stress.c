/* Concurrency and long runs on the GPU (tests/stress.h; the CPU versions are
 * test_stress): 16 threads share one context, each with a CUDA stream of its own,
 * building, compiling and running overlapping graphs for a bounded time with every
 * result checked; and a soak of 100 000 runs of one cached program with the size
 * changing every call, device memory (cuMemGetInfo) and process RSS reported before and
 * after and required flat. The test opens libcuda itself for streams and memory figures
 * (ic's driver table holds only what ic calls). */
#include <cuda.h>
#include <dlfcn.h>

#include "check_main.h"
#include "gpu_harness.h"
#include "stress.h"

static struct {
  CUresult (*init)(unsigned);
  CUresult (*retain)(CUcontext *, CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*stream_create)(CUstream *, unsigned);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*mem_get_info)(size_t *, size_t *);
  CUcontext primary;
} cu;

static void open_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ck_assert_ptr_nonnull(lib);
  *(void **)&cu.init = dlsym(lib, "cuInit");
  *(void **)&cu.retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
  *(void **)&cu.set_current = dlsym(lib, "cuCtxSetCurrent");
  *(void **)&cu.stream_create = dlsym(lib, "cuStreamCreate");
  *(void **)&cu.stream_destroy = dlsym(lib, "cuStreamDestroy_v2");
  *(void **)&cu.mem_get_info = dlsym(lib, "cuMemGetInfo_v2");
  ck_assert(cu.init && cu.retain && cu.set_current && cu.stream_create && cu.stream_destroy && cu.mem_get_info);
  ck_assert_int_eq(cu.init(0), CUDA_SUCCESS); /* ic has not initialized the driver yet */
  ck_assert_int_eq(cu.retain(&cu.primary, 0), CUDA_SUCCESS); /* ic runs in device 0's primary context */
}

static void *stream_create(void) {
  CUstream s = NULL;
  if (cu.set_current(cu.primary) != CUDA_SUCCESS || cu.stream_create(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    return NULL;
  return s;
}

static void stream_destroy(void *s) { cu.stream_destroy((CUstream)s); }

static const stress_device k_device = {stream_create, stream_destroy};

START_TEST(test_sixteen_threads_own_streams) {
  open_driver();
  ic_context *ctx = NULL;
  IC_OK_OR_FAIL(ic_context_create(NULL, &ctx));
  stress_shared sh = {.ctx = ctx, .backend = "cuda", .device = &k_device, .seconds = 20};
  stress_run(&sh, 16);
  ic_context_destroy(ctx);
}
END_TEST

START_TEST(test_soak_changing_sizes) {
  open_driver();
  ck_assert_int_eq(cu.set_current(cu.primary), CUDA_SUCCESS);
  ic_context *ctx = NULL;
  IC_OK_OR_FAIL(ic_context_create(NULL, &ctx));
  ic_graph *g = stress_graph(1); /* softmax */
  ic_program *p = NULL;
  IC_OK_OR_FAIL(ic_compile(ctx, g, NULL, &p));
  enum { RUNS = 100000, WARMUP = 2000, MAX_ROWS = 4096 };
  size_t bytes = sizeof(float) * MAX_ROWS * STRESS_COLS;
  float *hx = malloc(bytes), *hy = malloc(bytes);
  for (int64_t i = 0; i < (int64_t)MAX_ROWS * STRESS_COLS; i++) hx[i] = stress_x(7, i);
  void *dx = gpu_upload(ctx, hx, bytes);
  size_t free_before = 0, free_after = 0, total = 0;
  long rss_before = 0;
  for (int i = 0; i < RUNS; i++) {
    if (i == WARMUP) {
      IC_OK_OR_FAIL(ic_stream_synchronize(ctx, NULL));
      ck_assert_int_eq(cu.mem_get_info(&free_before, &total), CUDA_SUCCESS);
      rss_before = stress_rss_kib();
    }
    int64_t xs[2] = {1 + (i * 7919) % MAX_ROWS, STRESS_COLS};
    ic_tensor in = {dx, IC_F32, 2, xs, NULL};
    ic_tensor out = {NULL, IC_F32, 2, NULL, NULL}; /* ic allocates (stream-ordered) */
    ck_assert_msg(ic_program_run(p, &in, 1, &out, 1, NULL) == IC_OK, "run %d: %s", i, ic_last_error());
    if (i % 9973 == 0) {
      IC_OK_OR_FAIL(ic_memcpy_dtoh(ctx, hy, out.data, sizeof(float) * (size_t)(xs[0] * STRESS_COLS)));
      ck_assert(stress_check(1, 7, xs[0], NULL, hy));
    }
    IC_OK_OR_FAIL(ic_free(ctx, out.data));
  }
  IC_OK_OR_FAIL(ic_stream_synchronize(ctx, NULL));
  ck_assert_int_eq(cu.mem_get_info(&free_after, &total), CUDA_SUCCESS);
  long rss_after = stress_rss_kib();
  printf("gpu soak: %d runs (rows changing every call, outputs allocated by ic): device free memory %zu MiB "
         "after %d runs, %zu MiB after %d; RSS %ld KiB -> %ld KiB\n",
         RUNS, free_before >> 20, WARMUP, free_after >> 20, RUNS, rss_before, rss_after);
  /* flat: within 64 MiB of device memory (pool granularity) and 1 MiB of host memory */
  ck_assert_int_le((long long)free_before - (long long)free_after, 64ll << 20);
  ck_assert_int_le(rss_after - rss_before, 1024);
  IC_OK_OR_FAIL(ic_free(ctx, dx));
  free(hx);
  free(hy);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("gpu_stress");
  TCase *tc = check_tcase("stress");
  tcase_add_test(tc, test_sixteen_threads_own_streams);
  tcase_add_test(tc, test_soak_changing_sizes);
  suite_add_tcase(s, tc);
  return gpu_run_suite(s);
}
