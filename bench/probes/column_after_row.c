/* ic-bench's column sum reads at 101% of copy on its own and at 93-94% right after its row
 * sum (bench/results/2026-12-06-column-reductions-h100.md). This replays the two workloads through ic's
 * public API as ic-bench does (a buffer set each, random inputs uploaded from pageable
 * memory, freed after), and times the column sum three ways: an event pair around each
 * run with a sync after it (ic-bench's way; the median of 40), the host time of each
 * ic_program_run call, and 40 runs back to back between two events.
 *   gcc -O2 -std=c11 -Iinclude -I$CUDA/include bench/probes/column_after_row.c \
 *       -Lbuild-gpu -lic -L$CUDA/lib64/stubs -lcuda -Wl,-rpath,$PWD/build-gpu -o car
 *   ./car alone; ./car after        (a new process each: the order is the point)
 *   ./car alone null; ...           the same on the NULL stream (ic's runs and the events)
 *   ./car alone keep; ...           each workload's input kept, never freed (no re-allocation) */
#define _POSIX_C_SOURCE 199309L
#include <cuda.h>
#include <ic/ic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CU(x)                                                                        \
  do {                                                                               \
    CUresult r_ = (x);                                                               \
    if (r_ != CUDA_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, (int)r_); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)
#define IC(x)                                                                                \
  do {                                                                                       \
    ic_status s_ = (x);                                                                      \
    if (s_ != IC_OK) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #x, ic_status_string(s_), \
              ic_last_error());                                                              \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

enum { REPS = 40 };
static int keep_inputs; /* "keep": inputs never freed (until the process ends), so no workload re-allocates one */
static const int64_t N = 32768, LEN = 4096;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static ic_program *compile_text(ic_context *ctx, const char *text) {
  ic_graph *g = NULL;
  ic_program *p = NULL;
  IC(ic_graph_parse(text, &g));
  ic_compile_options o = {.struct_size = sizeof o, .mode = IC_MODE_FUSED};
  IC(ic_compile(ctx, g, &o, &p));
  ic_graph_destroy(g);
  return p;
}

/* One workload as ic-bench runs it: input and output allocated, the input uploaded, three
 * warm runs and REPS timed one at a time, then freed. Prints the three timings. */
static void workload(ic_program *p, const char *name, int64_t rows, int64_t cols, int64_t out_n, const float *host,
                     CUstream stream, double copy_ms) {
  const size_t bytes = (size_t)rows * (size_t)cols * 4;
  CUdeviceptr x = 0, y = 0;
  CU(cuMemAlloc(&x, bytes));
  CU(cuMemAlloc(&y, (size_t)out_n * 4));
  CU(cuMemcpyHtoD(x, host, bytes));
  CU(cuStreamSynchronize(NULL));
  const int64_t xs[2] = {rows, cols}, ys[1] = {out_n};
  ic_tensor in = {(void *)(uintptr_t)x, IC_F32, 2, xs, NULL}, out = {(void *)(uintptr_t)y, IC_F32, 1, ys, NULL};
  CUevent a, b;
  CU(cuEventCreate(&a, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&b, CU_EVENT_DEFAULT));
  double ev[REPS], host_us[REPS];
  for (int i = 0; i < 3; i++) IC(ic_program_run(p, &in, 1, &out, 1, stream));
  CU(cuStreamSynchronize(stream));
  for (int i = 0; i < REPS; i++) {
    CU(cuEventRecord(a, stream));
    double t0 = now_us();
    IC(ic_program_run(p, &in, 1, &out, 1, stream));
    host_us[i] = now_us() - t0;
    CU(cuEventRecord(b, stream));
    CU(cuEventSynchronize(b));
    float ms = 0;
    CU(cuEventElapsedTime(&ms, a, b));
    ev[i] = ms;
  }
  CU(cuEventRecord(a, stream));
  for (int i = 0; i < REPS; i++) IC(ic_program_run(p, &in, 1, &out, 1, stream));
  CU(cuEventRecord(b, stream));
  CU(cuEventSynchronize(b));
  float batch = 0;
  CU(cuEventElapsedTime(&batch, a, b));
  const double moved = (double)bytes + (double)out_n * 4, one = median(ev, REPS), back = batch / REPS;
  printf("%-10s x at %#llx: one at a time %.4f ms (%.1f%% of copy), ic_program_run %.1f us on the host; "
         "back to back %.4f ms (%.1f%%)\n",
         name, (unsigned long long)x, one, 100.0 * moved / one / (2.0 * bytes / copy_ms), median(host_us, REPS), back,
         100.0 * moved / back / (2.0 * bytes / copy_ms));
  CU(cuEventDestroy(a));
  CU(cuEventDestroy(b));
  if (!keep_inputs) CU(cuMemFree(x));
  CU(cuMemFree(y));
}

int main(int argc, char **argv) {
  const int after = argc > 1 && strcmp(argv[1], "after") == 0;
  const int null_stream = argc > 2 && strcmp(argv[2], "null") == 0;
  keep_inputs = argc > 2 && strcmp(argv[2], "keep") == 0;
  CU(cuInit(0));
  CUdevice dev;
  CUcontext pctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&pctx, dev));
  CU(cuCtxSetCurrent(pctx));
  ic_context *ctx = NULL;
  IC(ic_context_create(NULL, &ctx));
  CUstream stream;
  if (null_stream) stream = NULL;
  else CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  const size_t bytes = (size_t)N * (size_t)LEN * 4;
  float *host = malloc(bytes);
  if (!host) return 1;
  unsigned s = 1;
  for (size_t i = 0; i < bytes / 4; i++) {
    s = s * 1664525u + 1013904223u;
    host[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
  }
  /* the copy floor, as ic-bench takes it first: two buffers, freed after */
  CUdeviceptr c0, c1;
  CU(cuMemAlloc(&c0, bytes));
  CU(cuMemAlloc(&c1, bytes));
  CUevent a, b;
  CU(cuEventCreate(&a, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&b, CU_EVENT_DEFAULT));
  double t[REPS];
  for (int i = 0; i < REPS; i++) {
    CU(cuEventRecord(a, stream));
    CU(cuMemcpyDtoDAsync(c1, c0, bytes, stream));
    CU(cuEventRecord(b, stream));
    CU(cuEventSynchronize(b));
    float ms = 0;
    CU(cuEventElapsedTime(&ms, a, b));
    t[i] = ms;
  }
  const double copy_ms = median(t, REPS);
  printf("%s: copy %.4f ms (%.0f GB/s)\n", after ? "after the row sum" : "alone", copy_ms, 2.0 * bytes / copy_ms / 1e6);
  CU(cuMemFree(c0));
  CU(cuMemFree(c1));
  /* each program compiled when its workload comes, as ic-bench does */
  if (after) {
    ic_program *row = compile_text(ctx, "symbol n\ninput x : f32[n, 4096]\ny = sum(x, [1])\noutput y\n");
    workload(row, "row sum", N, LEN, N, host, stream, copy_ms);
    ic_program_release(row);
  }
  ic_program *col = compile_text(ctx, "symbol n\ninput x : f32[4096, n]\ny = sum(x, [0])\noutput y\n");
  workload(col, "column sum", LEN, N, N, host, stream, copy_ms);
  workload(col, "again", LEN, N, N, host, stream, copy_ms);
  ic_program_release(col);
  ic_context_destroy(ctx);
  free(host);
  if (stream) CU(cuStreamDestroy(stream));
  CU(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
