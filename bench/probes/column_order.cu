// Column sums of f32 [4096, 32768] over dim 0 in ic's summation order (ic.h: chunks of 8
// rows, lanes of chunks, a warp's lanes ROUND at a time as a pairwise subtree into a binary
// counter, then the warps pairwise), hand-written, to find the access pattern for
// ic's column kernels (lib/kir/kir.h, kir_reduce_strategy_of). Each variant prints its
// time and share of the device-to-device copy bandwidth, taken in the same run, and its
// largest difference from a host sum (an indexing check; the orders differ).
// Parameters: VEC neighbouring columns a thread (16-byte loads at 4), WARPS a group of 32
// threads, GROUPS a block, ROUND lanes a round, the load's flavour (PF: ld.global.nc, with
// an L2 prefetch size of 128 or 256 B, plain ld.global, L1::no_allocate, .cs,
// L1::evict_first; 7: L1::no_allocate not volatile, so the compiler may reorder the loads)
// and S blocks a column group (S > 1: partials combined pairwise by a second kernel), MINB (launch bounds' blocks a multiprocessor, as ic's column kernels
// declare 1; 0: none). Each layout can be timed two ways: back to back (20 launches between
// two events, the best of 5) or one at a time (an event pair around each launch, a sync
// after it, the median of 50: how ic-bench times), and on a second input allocated after
// the others (the same bytes: a placement check). Results: bench/results/2026-12-05-reductions-h100.md,
// 2026-12-05-reductions-h200.md, 2026-12-06-column-reductions-h100.md.
//   nvcc -O3 -arch=sm_90a -o column_order bench/probes/column_order.cu && ./column_order [realloc|band]
//   (realloc with ic's kernels beside: add -DWITH_IC -Iinclude -Lbuild-gpu -lic -Xlinker -rpath=$PWD/build-gpu;
//   with ic's dumped kernels launched directly: -DWITH_DUMPS and their objects, made as
//   bench/results/2026-12-06-column-reductions-h100.md, section 8, says)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cuda_runtime.h>
#include "probe_common.cuh"
template <int PF> __device__ __forceinline__ float ld(const float *p) {
  float v;
  if (PF == 0) asm("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (PF == 1) asm("ld.global.nc.L2::128B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (PF == 3) asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (PF == 4) asm volatile("ld.global.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (PF == 5) asm volatile("ld.global.cs.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (PF == 6) asm volatile("ld.global.L1::evict_first.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (PF == 7) asm("ld.global.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(p)); /* 4, reorderable */
  else asm("ld.global.nc.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
// block: WARPS x GROUPS warps; blockIdx.x: column block, blockIdx.y: split s of S
template <int VEC> struct vt;
template <> struct vt<1> { typedef float T; };
template <> struct vt<2> { typedef float2 T; };
template <> struct vt<4> { typedef float4 T; };
__device__ __forceinline__ void addv(float (&a)[1], float v) { a[0] += v; }
__device__ __forceinline__ void addv(float (&a)[2], float2 v) { a[0] += v.x; a[1] += v.y; }
__device__ __forceinline__ void addv(float (&a)[4], float4 v) { a[0] += v.x; a[1] += v.y; a[2] += v.z; a[3] += v.w; }
template <int PF> __device__ __forceinline__ float4 ld4(const float4 *p) {
  float4 v;
  if (PF == 4) asm volatile("ld.global.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  else if (PF == 0) asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  else asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
template <int PF> __device__ __forceinline__ float2 ldv(const float2 *p) {
  float2 v;
  asm volatile("ld.global.L1::no_allocate.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p));
  return v;
}
template <int PF> __device__ __forceinline__ float ldv(const float *p) { return ld<PF>(p); }
template <int PF> __device__ __forceinline__ float4 ldv(const float4 *p) { return ld4<PF>(p); }
template <int WARPS, int GROUPS, int ROUND, int PF, int S, int VEC = 1, int MINB = 0>
__global__ void __launch_bounds__(WARPS * GROUPS * 32, MINB) colsum(const float *__restrict__ x, float *__restrict__ out, int R, long N) {
  const int colx = threadIdx.x & 31, w = threadIdx.x >> 5, g = w / WARPS, y = w % WARPS;
  typedef typename vt<VEC>::T T;
  const long col = ((long)blockIdx.x * (32 * GROUPS) + g * 32 + colx) * VEC;
  const int C = R / 8, per_split = C / S, share = per_split / WARPS, l0 = blockIdx.y * per_split + y * share;
  float st[24][VEC]; int sh[24], n = 0;
  const T *p = reinterpret_cast<const T *>(x + col);
  const long NV = N / VEC;
  for (int j = l0; j < l0 + share; j += ROUND) {
    float am[ROUND][VEC];
#pragma unroll
    for (int k = 0; k < ROUND; k++) {
#pragma unroll
      for (int q = 0; q < VEC; q++) am[k][q] = -0.0f;
      T v[8];
#pragma unroll
      for (int e = 0; e < 8; e++) v[e] = ldv<PF>(p + (long)((j + k) * 8 + e) * NV);
#pragma unroll
      for (int e = 0; e < 8; e++) addv(am[k], v[e]);
    }
    pairwise(am);
#pragma unroll
    for (int q = 0; q < VEC; q++) st[n][q] = am[0][q];
    sh[n] = 0; n++;
    while (n >= 2 && sh[n - 1] == sh[n - 2]) {
#pragma unroll
      for (int q = 0; q < VEC; q++) st[n - 2][q] += st[n - 1][q];
      sh[n - 2]++; n--;
    }
  }
  while (n >= 2) {
#pragma unroll
    for (int q = 0; q < VEC; q++) st[n - 2][q] += st[n - 1][q];
    n--;
  }
  join_warps<WARPS, GROUPS, VEC>(st[0], out + (long)blockIdx.y * N + col);
}
template <int S> __global__ void combine(const float *__restrict__ part, float *__restrict__ out, long N) {
  long col = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  float v[S];
#pragma unroll
  for (int s = 0; s < S; s++) v[s] = part[(long)s * N + col];
  pairwise(v);
  out[col] = v[0];
}

static float *gx, *gx2, *gout, *gpart, *gcopy;
enum timing { BATCH, SINGLE, BATCH_X2, SINGLE_X2 };
/* hot: 4000 back-to-back 512 MiB copies (about 1.5 s) right before a layout's timing, as
 * the workloads before ic-bench's column sum keep the device busy */
static bool hot;
static size_t copy_bytes;
static const int R = 4096;
static const long N = 32768;
static float ref[32768];
/* The time of one launch (ms): the best of 5 x 20 back to back, or (one_at_a_time) the
 * median of 50 each between an event pair and a sync, as ic-bench times; 3 warm-ups. */
template <class F> static float launch_ms(F launch, bool one_at_a_time) {
  if (!one_at_a_time) return batch_ms(launch);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; i++) launch();
  float t[50];
  for (int i = 0; i < 50; i++) {
    cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&t[i], a, b);
  }
  for (int i = 1; i < 50; i++) for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { float q = t[j]; t[j] = t[j - 1]; t[j - 1] = q; }
  cudaEventDestroy(a); cudaEventDestroy(b);
  return (t[24] + t[25]) / 2;
}
/* The output's largest difference from the host sums (an indexing check; the orders differ). */
static double max_error(void) {
  static float h[32768]; cudaMemcpy(h, gout, N * 4, cudaMemcpyDeviceToHost);
  double maxerr = 0; for (long i = 0; i < N; i++) { double e = fabs(h[i] - ref[i]); if (!(e <= maxerr)) maxerr = e; }
  return maxerr;
}
/* FNV-1a of the output's bits. */
static unsigned long long out_bits(void) {
  static unsigned h[32768]; cudaMemcpy(h, gout, N * 4, cudaMemcpyDeviceToHost);
  return fnv1a_words(h, N);
}
/* % of copy of a column sum taking ms. */
static double pct_of_copy(double ms, double copy_ms) {
  return 100.0 * ((double)R * N * 4 + N * 4) / ms / (2.0 * (double)R * N * 4 / copy_ms);
}
/* The input's host copy (pseudo-random, the same every run) and its column sums in ref. */
static float *make_input(size_t bytes) {
  float *h = (float *)malloc(bytes);
  if (!h) { printf("out of host memory\n"); exit(1); }
  lcg_fill(h, (size_t)R * N, 16777216.0f, -0.5f);
  for (long c = 0; c < N; c++) ref[c] = 0;
  for (long r = 0; r < R; r++) for (long c = 0; c < N; c++) ref[c] += h[r * N + c];
  return h;
}
/* The copy floor of `bytes` between two fresh allocations (ms), printed. */
static float copy_floor(size_t bytes) {
  void *c0, *c1;
  cudaMalloc(&c0, bytes); cudaMalloc(&c1, bytes);
  const float copy = copy_ms_of(c1, c0, bytes);
  cudaFree(c0); cudaFree(c1);
  printf("copy %zu MiB: %.4f ms, %.0f GB/s\n", bytes >> 20, copy, 2.0 * bytes / copy / 1e6);
  return copy;
}
template <int WARPS, int GROUPS, int ROUND, int PF, int S, int VEC = 1, int MINB = 0>
static void run(double copy_ms, timing how = BATCH) {
  dim3 grid((unsigned)(N / (32 * GROUPS * VEC)), S), block(32 * WARPS * GROUPS);
  cudaFuncAttributes fa;
  cudaFuncGetAttributes(&fa, colsum<WARPS, GROUPS, ROUND, PF, S, VEC, MINB>);
  const float *x = how == BATCH_X2 || how == SINGLE_X2 ? gx2 : gx;
  auto launch = [&]() {
    if (S == 1) colsum<WARPS, GROUPS, ROUND, PF, S, VEC, MINB><<<grid, block>>>(x, gout, R, N);
    else {
      colsum<WARPS, GROUPS, ROUND, PF, S, VEC, MINB><<<grid, block>>>(x, gpart, R, N);
      combine<S><<<(unsigned)(N / 256), 256>>>(gpart, gout, N);
    }
  };
  cudaMemset(gout, 0xff, N * 4);
  launch();
  if (hot)
    for (int i = 0; i < 4000; i++) cudaMemcpyAsync(gcopy, gx, copy_bytes, cudaMemcpyDeviceToDevice);
  const float best = launch_ms(launch, how == SINGLE || how == SINGLE_X2);
  printf("%svec %d warps %2d groups %d round %d prefetch %s split %2d minb %d %-9s | %4d thr %3d regs %5u x %2u blocks | %.4f ms %5.1f%% of copy | maxerr %.2g bits %016llx %s\n",
         hot ? "hot " : "", VEC, WARPS, GROUPS, ROUND, PF == 0 ? "nc" : PF == 1 ? "nc128B" : PF == 2 ? "nc256B" : PF == 3 ? "plain" : PF == 4 ? "L1noalloc" : PF == 5 ? "cs" : PF == 6 ? "L1evfirst" : "L1noalloc-reorderable", S, MINB,
         how == SINGLE ? "single" : how == BATCH_X2 ? "batch-x2" : how == SINGLE_X2 ? "single-x2" : "batch", 32 * WARPS * GROUPS, fa.numRegs, grid.x, grid.y, best,
         pct_of_copy(best, copy_ms), max_error(), out_bits(), cudaGetErrorString(cudaGetLastError()));
}
#ifdef WITH_IC
/* Built with -DWITH_IC (and -Iinclude -Lbuild-gpu -lic): ic's own column sums over the same
 * input, beside the hand-written layouts: the graph ic-bench times (columns symbolic, 4096
 * rows) and one of a symbolic length (guarded rounds). */
#include <ic/ic.h>
static ic_program *ic_prog[2];
static const char *const ic_names[2] = {"ic [4096, n]", "ic [r, n]"};
static void ic_setup(void) {
  static ic_context *ctx;
  const char *text[2] = {"symbol n\ninput x : f32[4096, n]\ny = sum(x, [0])\noutput y\n",
                         "symbol r\nsymbol n\ninput x : f32[r, n]\ny = sum(x, [0])\noutput y\n"};
  if (ic_context_create(NULL, &ctx) != IC_OK) { printf("ic: %s\n", ic_last_error()); exit(1); }
  for (int i = 0; i < 2; i++) {
    ic_graph *g = NULL;
    ic_compile_options o = {};
    o.struct_size = sizeof o;
    if (ic_graph_parse(text[i], &g) != IC_OK || ic_compile(ctx, g, &o, &ic_prog[i]) != IC_OK) { printf("ic: %s\n", ic_last_error()); exit(1); }
    ic_graph_destroy(g);
  }
}
static void run_ic(double copy_ms) {
  const int64_t xs[2] = {R, N}, ys[1] = {N};
  ic_tensor in = {gx2, IC_F32, 2, xs, NULL}, out = {gout, IC_F32, 1, ys, NULL};
  for (int w = 0; w < 2; w++) {
    ic_status st = IC_OK;
    auto launch = [&]() { if (st == IC_OK) st = ic_program_run(ic_prog[w], &in, 1, &out, 1, NULL); };
    const float batch = launch_ms(launch, false), one = launch_ms(launch, true);
    printf("%-40s | back to back %.4f ms %5.1f%% | one at a time %.4f ms %5.1f%% | maxerr %.2g %s\n", ic_names[w], batch,
           pct_of_copy(batch, copy_ms), one, pct_of_copy(one, copy_ms), max_error(), st == IC_OK ? "ok" : ic_last_error());
  }
}
#else
static void ic_setup(void) {}
static void run_ic(double) {}
#endif

/* A generated kernel launched directly, timed back to back; the output's bits hashed
 * (kernels of one summation order must agree). */
template <class F> static void time_dump(const char *name, double copy_ms, F launch) {
  cudaMemset(gout, 0xff, N * 4);
  const float best = launch_ms(launch, false);
  printf("dump %-36s | back to back %.4f ms %5.1f%% of copy | maxerr %.2g bits %016llx %s\n", name, best, pct_of_copy(best, copy_ms),
         max_error(), out_bits(), cudaGetErrorString(cudaGetLastError()));
}
#ifdef WITH_DUMPS
/* Built with -DWITH_DUMPS and ic's generated kernels (IC_DUMP sources with their entry
 * renamed, each compiled alone with nvcc -c and linked in): launched directly, so the
 * kernels are timed without ic's runtime (no workspace allocation, no host work).
 *   old_const      the one-stage [4096, n] column sum (ccfbbd6, as ic has it)
 *   split_partial  + split_combine: the two stages of the same graph at b4fdfb2 (a split
 *                  in 16 lane shares, measured slower and reverted)
 *   sym_r          the one-stage kernel of a symbolic length [r, n] */
extern "C" __global__ void old_const(const unsigned char *, unsigned char *, long long);
extern "C" __global__ void split_partial(const unsigned char *, unsigned char *, unsigned char *, long long);
extern "C" __global__ void split_combine(const unsigned char *, unsigned char *, const unsigned char *, long long);
extern "C" __global__ void sym_r(const unsigned char *, unsigned char *, long long, long long);
static void run_dumps(double copy_ms) {
  const unsigned char *x = (const unsigned char *)gx2;
  unsigned char *y = (unsigned char *)gout, *w = (unsigned char *)gpart;
  time_dump("old_const (one stage)", copy_ms, [&]() { old_const<<<128, 1024>>>(x, y, N); });
  time_dump("split_partial + combine", copy_ms, [&]() { split_partial<<<2048, 1024>>>(x, y, w, N); split_combine<<<128, 256>>>(x, y, w, N); });
  time_dump("split_partial alone (no sums)", copy_ms, [&]() { split_partial<<<2048, 1024>>>(x, y, w, N); });
  time_dump("sym_r (one stage)", copy_ms, [&]() { sym_r<<<128, 1024>>>(x, y, R, N); });
}
#else
static void run_dumps(double) {}
#endif

#ifdef WITH_BAND_DUMPS
/* Built with -DWITH_BAND_DUMPS and the one-band kernels of the experiment branches, dumped
 * and linked as WITH_DUMPS's (see there), each also with its loads made asm volatile
 * (sed 's/asm("ld.global/asm volatile("ld.global/'): is the compiler's load order what
 * keeps them below the hand-written layout of the same order? */
extern "C" __global__ void k_ob(const unsigned char *, unsigned char *);
extern "C" __global__ void k_ob_vol(const unsigned char *, unsigned char *);
extern "C" __global__ void k_il(const unsigned char *, unsigned char *);
extern "C" __global__ void k_il_vol(const unsigned char *, unsigned char *);
static void run_band_dumps(double copy_ms) {
  const unsigned char *x = (const unsigned char *)gx2;
  unsigned char *y = (unsigned char *)gout;
  time_dump("one-band (exp/column-one-band)", copy_ms, [&]() { k_ob<<<512, 64>>>(x, y); });
  time_dump("one-band, volatile loads", copy_ms, [&]() { k_ob_vol<<<512, 64>>>(x, y); });
  time_dump("interleaved (exp/column-interleaved)", copy_ms, [&]() { k_il<<<128, 1024>>>(x, y); });
  time_dump("interleaved, volatile loads", copy_ms, [&]() { k_il_vol<<<128, 1024>>>(x, y); });
}
#else
static void run_band_dumps(double) {}
#endif

/* realloc: ic-bench's column sum and bench/probes/column_after_row.c read at 97-101% of copy
 * on an input allocated once and at 90-91% on one allocated again after the same bytes
 * were freed (the same address; H100, 2026-12-06). Rounds of: the input and a 128 KiB output
 * allocated, uploaded from pageable memory, each layout timed, a streaming copy of the
 * input's first half onto its second as a sequential-read reference, both freed. The last
 * round keeps its input and allocates a second one (fresh pages) beside it. */
static void realloc_rounds(const float *h, size_t bytes) {
  const size_t half = bytes / 2;
  /* the process's first allocation (ic's layout read at 100.9% on one, and at 91.7-102.5%
   * on others, H100, 2026-12-06: the placement, not the order, decides) */
  cudaMalloc(&gx2, bytes);
  cudaMemcpy(gx2, h, bytes, cudaMemcpyHostToDevice);
  float *first = gx2;
  const float copy = copy_floor(bytes);
  printf("first allocation at %p\n", (void *)gx2);
  run_ic(copy);
  run_dumps(copy);
  run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);
  run<4, 8, 8, 4, 8, 1, 1>(copy, BATCH_X2);
  run<2, 8, 8, 4, 32>(copy, BATCH_X2);
  float *keep = NULL;
  for (int round = 0; round < 3; round++) {
    void *y;
    if (round == 2) keep = gx2; /* round 2: the last input kept, a second one beside it */
    cudaMalloc(&gx2, bytes); cudaMalloc(&y, N * 4);
    cudaMemcpy(gx2, h, bytes, cudaMemcpyHostToDevice);
    const float half_ms = copy_ms_of((char *)gx2 + half, gx2, half);
    cudaMemcpy(gx2, h, bytes, cudaMemcpyHostToDevice);
    printf("round %d: input at %p%s; half onto half %.4f ms (%.1f%% of copy)\n", round, (void *)gx2,
           round == 2 ? ", the last kept beside it" : "", half_ms, 100.0 * copy / 2 / half_ms);
    run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);   // ic's layout and bound
    run<4, 8, 8, 4, 16, 1, 1>(copy, BATCH_X2);  // the same split over 16 blocks a column group
    run<2, 8, 8, 4, 32>(copy, BATCH_X2);        // 2 warps x 8 groups, split 32
    run<8, 4, 4, 4, 1, 2, 1>(copy, BATCH_X2);   // 2 columns a thread
    run<1, 2, 8, 4, 1, 1, 1>(copy, BATCH_X2);   // a warp a group (every warp walks the rows
    run<1, 4, 8, 4, 1, 1, 1>(copy, BATCH_X2);   // from the top: one band of rows in flight,
    run<1, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);   // as Inductor's column sum reads them)
    run<1, 2, 8, 4, 1, 1, 0>(copy, BATCH_X2);
    run_ic(copy);
    run_dumps(copy);
    if (round != 2) cudaFree(gx2);
    cudaFree(y);
  }
  cudaFree(gx2); cudaFree(keep); cudaFree(first);
}
/* band: the one-band layouts on a first allocation and on two allocated again in its place
 * (where ic's four-band layout falls to 90%): the hand-written warp-a-group layout with
 * its loads in program order and reorderable, and the branches' generated kernels
 * (WITH_BAND_DUMPS) as generated and with volatile loads. */
static void band_rounds(const float *h, size_t bytes) {
  const float copy = copy_floor(bytes);
  for (int round = 0; round < 3; round++) {
    cudaMalloc(&gx2, bytes);
    cudaMemcpy(gx2, h, bytes, cudaMemcpyHostToDevice);
    printf("round %d: input at %p%s\n", round, (void *)gx2, round ? " (allocated again)" : " (first allocation)");
    run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);  // main's layout
    run<1, 2, 8, 4, 1, 1, 1>(copy, BATCH_X2);  // a warp a group, loads in program order
    run<1, 2, 8, 7, 1, 1, 1>(copy, BATCH_X2);  // the same, loads reorderable
    run_band_dumps(copy);
    cudaFree(gx2);
  }
}
int main(int argc, char **argv) {
  size_t bytes = (size_t)R * N * 4;
  copy_bytes = bytes;
  if (argc > 1 && strcmp(argv[1], "band") == 0) {
    float *h = make_input(bytes);
    cudaMalloc(&gout, N * 4);
    band_rounds(h, bytes);
    free(h);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "realloc") == 0) {
    float *h = make_input(bytes);
    cudaMalloc(&gout, N * 4); cudaMalloc(&gpart, 128 * N * 4);
    ic_setup();
    realloc_rounds(h, bytes);
    free(h);
    return 0;
  }
  cudaMalloc(&gx, bytes); cudaMalloc(&gcopy, bytes); cudaMalloc(&gout, N * 4); cudaMalloc(&gpart, 128 * N * 4);
  float *h = make_input(bytes);
  cudaMemcpy(gx, h, bytes, cudaMemcpyHostToDevice);
  cudaMalloc(&gx2, bytes);
  cudaMemcpy(gx2, h, bytes, cudaMemcpyHostToDevice);
  const float copy = copy_ms_of(gcopy, gx, bytes);
  printf("copy %zu MiB: %.4f ms, %.0f GB/s\n", bytes >> 20, copy, 2.0 * bytes / copy / 1e6);
  run<4, 8, 8, 4, 1>(copy);                 // ic's light column layout, no bound (32 registers)
  run<4, 8, 8, 4, 1>(copy, SINGLE);
  run<4, 8, 8, 4, 1>(copy, BATCH_X2);
  run<4, 8, 8, 4, 1, 1, 1>(copy);           // ic's bound: one block a multiprocessor
  run<4, 8, 8, 4, 1, 1, 1>(copy, SINGLE);
  run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);
  run<8, 4, 8, 4, 1>(copy);
  run<8, 2, 8, 4, 1>(copy);
  run<1, 8, 8, 4, 64>(copy);                // split over 64 blocks a column group
  run<2, 8, 8, 4, 32>(copy);
  run<1, 8, 4, 4, 64, 4>(copy);             // 4 columns a thread, 16-byte loads
  run<4, 8, 8, 4, 1>(copy);                 // again, last
  run<4, 8, 8, 4, 1>(copy, SINGLE);
  run<4, 8, 8, 4, 1, 1, 1>(copy);
  run<8, 4, 4, 4, 1, 2, 1>(copy);           // 2 columns a thread (8-byte loads), 8 warps x 4 groups
  run<16, 2, 2, 4, 1, 4, 1>(copy);          // 4 columns a thread (16-byte loads), 16 warps x 2 groups
  /* the same after 1.5 s of copies */
  hot = true;
  run<4, 8, 8, 4, 1, 1, 1>(copy);
  run<4, 8, 8, 4, 1, 1, 1>(copy, SINGLE);
  run<8, 4, 4, 4, 1, 2, 1>(copy);
  run<8, 4, 4, 4, 1, 2, 1>(copy, SINGLE);
  run<16, 2, 2, 4, 1, 4, 1>(copy);
  run<16, 2, 2, 4, 1, 4, 1>(copy, SINGLE);
  run<2, 8, 8, 4, 32>(copy);
  run<4, 8, 8, 4, 1, 1, 1>(copy);
  hot = false;
  /* placement: the second input again after the allocations of ic-bench's reductions table
   * before its column sum (each workload's input and two sets of outputs, touched, freed),
   * then behind spacers of a few MiB */
  cudaFree(gx2);
  const size_t mib = (size_t)1 << 20, table[][3] = {{512, 512, 512}, {1000, 1000, 1000}, {512, 512, 512},
                                                    {256, 256, 256}, {256, 128, 128}, {256, 128, 128}, {512, 1, 1}};
  for (const auto &w : table) {
    void *p[3];
    for (int i = 0; i < 3; i++) { cudaMalloc(&p[i], w[i] * mib); cudaMemset(p[i], 0, w[i] * mib); }
    cudaDeviceSynchronize();
    for (int i = 0; i < 3; i++) cudaFree(p[i]);
  }
  const size_t spacers[] = {0, 2, 6, 64, 126, 254};
  for (size_t sp : spacers) {
    void *spacer = NULL;
    if (sp) cudaMalloc(&spacer, sp * mib);
    cudaMalloc(&gx2, bytes);
    cudaMemcpy(gx2, gx, bytes, cudaMemcpyDeviceToDevice);
    printf("input at %p after the table's allocations, behind %zu MiB\n", (void *)gx2, sp);
    run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);
    run<4, 8, 8, 4, 1, 1, 1>(copy, SINGLE_X2);
    if (sp == 0 || sp == 64) {
      run<8, 2, 8, 4, 1>(copy, BATCH_X2);
      run<2, 8, 8, 4, 32>(copy, BATCH_X2);
      run<1, 8, 4, 4, 64, 4>(copy, BATCH_X2);
    }
    cudaFree(gx2);
    if (spacer) cudaFree(spacer);
  }
  /* a pool that keeps what is freed to it (as ic's does), holding the temporaries of the
   * table's eager runs before its column sum, then the input */
  cudaMemPool_t pool;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPoolCreate(&pool, &props);
  unsigned long long keep = ~0ull;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  const size_t temps[][4] = {{512, 512, 1, 1}, {1000, 1000, 1000, 1}, {512, 512, 512, 512}, {256, 512, 512, 256}, {512, 256, 1, 1}};
  for (const auto &t : temps) {
    void *p[4];
    for (int i = 0; i < 4; i++) { cudaMallocFromPoolAsync(&p[i], t[i] * mib, pool, 0); cudaMemsetAsync(p[i], 0, t[i] * mib, 0); }
    for (int i = 0; i < 4; i++) cudaFreeAsync(p[i], 0);
    cudaDeviceSynchronize();
  }
  cudaMalloc(&gx2, bytes);
  cudaMemcpy(gx2, gx, bytes, cudaMemcpyDeviceToDevice);
  printf("input at %p with a pool holding the eager temporaries: %s\n", (void *)gx2, cudaGetErrorString(cudaGetLastError()));
  run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);
  run<4, 8, 8, 4, 1, 1, 1>(copy, SINGLE_X2);
  run<8, 4, 4, 4, 1, 2, 1>(copy, BATCH_X2);
  run<2, 8, 8, 4, 32>(copy, BATCH_X2);
  run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH);
  cudaFree(gx2);
  cudaMemPoolDestroy(pool);
  /* as ic-bench's column sum follows its row sum: a 512 MiB input read by streaming
   * kernels, freed, and the column input allocated in its place and uploaded from the host */
  for (int round = 0; round < 2; round++) {
    float *prev = NULL;
    cudaMalloc(&prev, bytes);
    cudaMemcpy(prev, h, bytes, cudaMemcpyHostToDevice);
    for (int i = 0; i < 40; i++) cudaMemcpyAsync(gcopy, prev, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    cudaFree(prev);
    cudaMalloc(&gx2, bytes);
    cudaMemcpy(gx2, h, bytes, cudaMemcpyHostToDevice);
    printf("input at %p in the place of a streamed input at %p (round %d)\n", (void *)gx2, (void *)prev, round);
    run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH_X2);
    run<4, 8, 8, 4, 1, 1, 1>(copy, SINGLE_X2);
    run<8, 4, 4, 4, 1, 2, 1>(copy, BATCH_X2);
    run<2, 8, 8, 4, 32>(copy, BATCH_X2);
    run<1, 8, 8, 4, 64>(copy, BATCH_X2);
    run<4, 8, 8, 4, 1, 1, 1>(copy, BATCH);
    cudaFree(gx2);
  }
  return 0;
}
