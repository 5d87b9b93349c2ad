// The bias gradient's column sum, bf16 [65536, 4096] over dim 0 (ic-bench's "bias
// gradient"), hand-written in ic's order for a split column reduction and in several
// widths of a thread, to find whether reading neighbouring columns a thread brings it from
// ~91% of copy (H100, bench/results/2026-12-06-column-reductions-h100.md, section 18) to f32's ~100%.
// ic's partial stage holds one column a thread: a warp's load is 64 bytes of one row (two
// sectors), twice f32's L2 requests per byte, and Nsight Compute finds the L2 at 88%.
//
// The order (ic.h, kir_reduce_strategy_at): chunks of 8 rows; C = 8192 chunks in L = 1024
// lanes (lane l takes chunks l, l + L, ... one after the other, each chunk's rows in turn);
// the partial stage's block holds lanes 32 u .. 32 u + 31 of its columns (warp y of a
// group of 32 columns lanes 32 u + 8 y .. + 7), joins a thread's 8 lanes pairwise, then the
// group's 4 warps pairwise through shared memory: partial u of U = 32. The combine stage
// joins a column's 32 partials pairwise and rounds to bf16 once.
// Measured on an H100 (bench/results/2026-12-06-column-reductions-h100.md, section 19): 1 column a
// thread 95-96% of copy, 2 and 4 columns 102%, 8 columns 91%; ic with its column pack (2
// columns, kir_column_pack_of) 101.5%, every output bit the same.
// Parameters: COLS neighbouring columns a thread (loads of 2 COLS bytes: 1 as ic today, 2
// one b32, 4 one v2.b32, 8 one v4.b32), GROUPS groups of 32 threads a block (4 warps each),
// MINB (launch bounds' blocks a multiprocessor). Every variant computes the same order, so
// all print the same output bits (the hash) and the same largest difference from a host
// sum in double.
//   nvcc -O3 -arch=sm_90a -o column_bf16 bench/probes/column_bf16.cu && ./column_bf16
//   (ic's own kernels beside, on the same input: add -DWITH_IC -Iinclude -Lbuild-gpu -lic
//   -Xlinker -rpath=$PWD/build-gpu)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include "probe_common.cuh"

static const int R = 65536, N = 4096, WARPS = 4, LANES = 1024, U = 32;

__device__ __forceinline__ float bf(unsigned h) { return __uint_as_float(h << 16); }

// COLS bf16 values of one row at p (2 COLS bytes, aligned), L1 skipped as ic's loads do.
template <int COLS> __device__ __forceinline__ void load_row(const unsigned short *p, float (&v)[COLS]);
template <> __device__ __forceinline__ void load_row<1>(const unsigned short *p, float (&v)[1]) {
  unsigned short h;
  asm volatile("ld.global.L1::no_allocate.u16 %0, [%1];" : "=h"(h) : "l"(p));
  v[0] = bf(h);
}
template <> __device__ __forceinline__ void load_row<2>(const unsigned short *p, float (&v)[2]) {
  unsigned w;
  asm volatile("ld.global.L1::no_allocate.b32 %0, [%1];" : "=r"(w) : "l"(p));
  v[0] = bf(w & 0xffffu); v[1] = bf(w >> 16);
}
template <> __device__ __forceinline__ void load_row<4>(const unsigned short *p, float (&v)[4]) {
  unsigned a, b;
  asm volatile("ld.global.L1::no_allocate.v2.b32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p));
  v[0] = bf(a & 0xffffu); v[1] = bf(a >> 16); v[2] = bf(b & 0xffffu); v[3] = bf(b >> 16);
}
template <> __device__ __forceinline__ void load_row<8>(const unsigned short *p, float (&v)[8]) {
  unsigned w[4];
  asm volatile("ld.global.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
  for (int q = 0; q < 4; q++) { v[2 * q] = bf(w[q] & 0xffffu); v[2 * q + 1] = bf(w[q] >> 16); }
}

// blockIdx.x: a block of 32 GROUPS COLS columns; blockIdx.y: partial u.
template <int COLS, int GROUPS, int MINB>
__global__ void __launch_bounds__(32 * WARPS * GROUPS, MINB) partial(const unsigned short *__restrict__ x, float *__restrict__ part) {
  const int colx = threadIdx.x & 31, w = threadIdx.x >> 5, g = w / WARPS, y = w % WARPS, u = blockIdx.y;
  const long col = ((long)blockIdx.x * (32 * GROUPS) + g * 32 + colx) * COLS;
  const int C = R / 8, j = u * 32 + y * 8;
  float am[8][COLS];
#pragma unroll
  for (int k = 0; k < 8; k++)
#pragma unroll
    for (int q = 0; q < COLS; q++) am[k][q] = -0.0f;
  for (int c0 = j; c0 < C; c0 += LANES) {
#pragma unroll
    for (int k = 0; k < 8; k++) {
      float v[8][COLS];
#pragma unroll
      for (int e = 0; e < 8; e++) load_row<COLS>(x + (long)((c0 + k) * 8 + e) * N + col, v[e]);
#pragma unroll
      for (int e = 0; e < 8; e++)
#pragma unroll
        for (int q = 0; q < COLS; q++) am[k][q] += v[e][q];
    }
  }
  pairwise(am);
  join_warps<WARPS, GROUPS, COLS>(am[0], part + (long)u * N + col);
}

// A column's U partials pairwise, rounded to bf16 once (cvt.rn).
__global__ void combine(const float *__restrict__ part, unsigned short *__restrict__ out) {
  const long col = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  float v[U];
#pragma unroll
  for (int s = 0; s < U; s++) v[s] = part[(long)s * N + col];
  pairwise(v);
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v[0]));
  out[col] = h;
}

static double bf16_host(unsigned short h) {
  const unsigned u = (unsigned)h << 16;
  float v;
  memcpy(&v, &u, 4);
  return v;
}

static unsigned short *gx, *gout;
static float *gpart;
static double ref[N];

/* The output's largest difference from the host sums in double, and its bits' hash. */
static void check(double *maxerr, unsigned long long *bits) {
  static unsigned short h[N];
  static unsigned w[N];
  cudaMemcpy(h, gout, sizeof h, cudaMemcpyDeviceToHost);
  *maxerr = 0;
  for (int c = 0; c < N; c++) {
    const double e = fabs(bf16_host(h[c]) - ref[c]);
    if (!(e <= *maxerr)) *maxerr = e;
    w[c] = h[c];
  }
  *bits = fnv1a_words(w, N);
}

template <int COLS, int GROUPS, int MINB> static void run(double copy_ms) {
  const dim3 grid(N / (32 * GROUPS * COLS), U), block(32 * WARPS * GROUPS);
  cudaFuncAttributes fa;
  cudaFuncGetAttributes(&fa, partial<COLS, GROUPS, MINB>);
  auto launch = [&]() {
    partial<COLS, GROUPS, MINB><<<grid, block>>>(gx, gpart);
    combine<<<N / 256, 256>>>(gpart, gout);
  };
  cudaMemset(gout, 0xff, N * 2);
  const float ms = batch_ms(launch);
  double maxerr;
  unsigned long long bits;
  check(&maxerr, &bits);
  const double moved = (double)R * N * 2 + N * 2;
  printf("cols %d (%2d-byte loads) groups %d minb %d | %4d thr %3d regs %4u x %2u blocks | %.4f ms %6.1f GB/s %5.1f%% of copy | maxerr %.3g bits %016llx %s\n",
         COLS, 2 * COLS, GROUPS, MINB, block.x, fa.numRegs, grid.x, grid.y, ms, moved / ms / 1e6,
         100.0 * moved / ms / (2.0 * (double)R * N * 2 / copy_ms), maxerr, bits, cudaGetErrorString(cudaGetLastError()));
}

#ifdef WITH_IC
/* Built with -DWITH_IC -Iinclude -Lbuild-gpu -lic -Xlinker -rpath=$PWD/build-gpu: ic's own
 * bias gradient over the same input, timed the same way; its bits must equal the probe's. */
#include <ic/ic.h>
static void run_ic(double copy_ms) {
  ic_context *ctx = NULL;
  ic_graph *g = NULL;
  ic_program *p = NULL;
  if (ic_context_create(NULL, &ctx) != IC_OK ||
      ic_graph_parse("symbol n\ninput x : bf16[n, 4096]\ns = sum(x, [0])\noutput s\n", &g) != IC_OK ||
      ic_compile(ctx, g, NULL, &p) != IC_OK) {
    printf("ic: %s\n", ic_last_error());
    return;
  }
  const int64_t xs[2] = {R, N}, ys[1] = {N};
  ic_tensor in = {gx, IC_BF16, 2, xs, NULL}, out = {gout, IC_BF16, 1, ys, NULL};
  ic_status st = IC_OK;
  cudaMemset(gout, 0xff, N * 2);
  const float ms = batch_ms([&]() { if (st == IC_OK) st = ic_program_run(p, &in, 1, &out, 1, NULL); });
  double maxerr;
  unsigned long long bits;
  check(&maxerr, &bits);
  const double moved = (double)R * N * 2 + N * 2;
  printf("ic 0.1.0 (its partial and combine kernels)                               | %.4f ms %6.1f GB/s %5.1f%% of copy | maxerr %.3g bits %016llx %s\n",
         ms, moved / ms / 1e6, 100.0 * moved / ms / (2.0 * (double)R * N * 2 / copy_ms), maxerr, bits,
         st == IC_OK ? "ok" : ic_last_error());
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
}
#else
static void run_ic(double) {}
#endif

int main() {
  const size_t bytes = (size_t)R * N * 2;
  unsigned short *h = (unsigned short *)malloc(bytes);
  float *f = (float *)malloc((size_t)N * 64 * sizeof(float));
  if (!h || !f) { printf("out of host memory\n"); return 1; }
  /* bf16 values of the same pseudo-random floats in [-0.5, 0.5), rounded to nearest even */
  for (long r = 0; r < R; r += 64) {
    lcg_fill(f, (size_t)N * 64, 16777216.0f, -0.5f + (float)(r % 7) / 64);
    for (long i = 0; i < (long)N * 64; i++) {
      unsigned u;
      memcpy(&u, &f[i], 4);
      h[r * N + i] = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
  }
  for (int c = 0; c < N; c++) ref[c] = 0;
  for (long r = 0; r < R; r++)
    for (int c = 0; c < N; c++) ref[c] += bf16_host(h[r * N + c]);
  cudaMalloc(&gx, bytes);
  cudaMalloc(&gout, N * 2);
  cudaMalloc(&gpart, (size_t)U * N * sizeof(float));
  cudaMemcpy(gx, h, bytes, cudaMemcpyHostToDevice);
  void *c0, *c1;
  cudaMalloc(&c0, bytes);
  cudaMalloc(&c1, bytes);
  const float copy = copy_ms_of(c1, c0, bytes);
  cudaFree(c0);
  cudaFree(c1);
  printf("copy %zu MiB: %.4f ms, %.0f GB/s\n", bytes >> 20, copy, 2.0 * bytes / copy / 1e6);
  run<1, 4, 2>(copy); /* ic today: 128 columns of 512 threads, two a multiprocessor */
  run<2, 4, 2>(copy);
  run<2, 2, 4>(copy); /* 128 columns of 256 threads */
  run<4, 4, 2>(copy);
  run<4, 1, 8>(copy); /* 128 columns of 128 threads */
  run<8, 2, 4>(copy);
  run_ic(copy);
  run<1, 4, 2>(copy); /* again: the first against the device's warm-up */
  free(h);
  free(f);
  return 0;
}
