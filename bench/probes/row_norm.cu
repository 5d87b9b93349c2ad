// RMS norm of bf16 rows of 4096 with a bf16 weight (y = x * rsqrt(mean(x^2) + eps) * w,
// in f32, rounded once to bf16), the shape ic-bench's "RMS norm" times, hand-written in
// the layouts ic's row kernels could take, to find what reads at the copy speed on the
// H200 (where ic's row kernels stop at 93-95% of copy and at 97-99% on an H100). Each
// variant prints its time and share of the device-to-device copy bandwidth taken in the
// same run, and its largest difference from a host reference (a check of the indexing:
// the summation orders differ).
// Parameters: TPR threads a row (each holds 4096 / TPR elements, 16-byte loads of
// neighbouring chunks: thread t reads chunks t, t + TPR, ...), RPB rows a block, NA (the
// row's loads skip L1), PERSIST (a grid of MINB blocks a multiprocessor looping over the
// rows, the next row's loads issued before this row's reduction), MINB (launch bounds'
// blocks a multiprocessor; 0: none).
//   nvcc -O3 -arch=sm_90a -o row_norm bench/probes/row_norm.cu && ./row_norm
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static const int COLS = 4096;
static const long ROWS = 32768;

__device__ __forceinline__ uint4 ld16(const void *p, bool na) {
  uint4 v;
  if (na) asm volatile("ld.global.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else asm volatile("ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ void st16(void *p, uint4 v) {
  asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__device__ __forceinline__ float lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ unsigned pack(float a, float b) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
  return r;
}
__device__ __forceinline__ float sumsq(uint4 v) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 4; i++) s += lo(w[i]) * lo(w[i]) + hi(w[i]) * hi(w[i]);
  return s;
}

template <int TPR, int RPB, bool NA, bool PERSIST, int MINB>
__global__ void __launch_bounds__(TPR * RPB, MINB > 0 ? MINB : 1)
    rms(const unsigned short *__restrict__ x, const unsigned short *__restrict__ wgt, unsigned short *__restrict__ y, long rows) {
  constexpr int K = COLS / 8 / TPR; // 16-byte chunks a thread
  const int t = threadIdx.x % TPR, r_in = threadIdx.x / TPR;
  __shared__ float part[RPB][TPR / 32 > 0 ? TPR / 32 : 1];
  uint4 cur[K], nxt[K];
  // a block's rows are base + r_in: every thread of the block takes the same iterations
  // (the barriers), a row past the end computes nothing
  const long step = PERSIST ? (long)gridDim.x * RPB : rows + RPB;
  long base = (long)blockIdx.x * RPB;
  if (base + r_in < rows) {
#pragma unroll
    for (int k = 0; k < K; k++) cur[k] = ld16(x + (base + r_in) * COLS + (long)(t + k * TPR) * 8, NA);
  }
  for (; base < rows; base += step) {
    const long row = base + r_in, next = row + step;
    const bool live = row < rows;
    if (PERSIST && next < rows) {
#pragma unroll
      for (int k = 0; k < K; k++) nxt[k] = ld16(x + next * COLS + (long)(t + k * TPR) * 8, NA);
    }
    float s = 0.f;
    if (live) {
#pragma unroll
      for (int k = 0; k < K; k++) s += sumsq(cur[k]);
    }
#pragma unroll
    for (int o = 1; o < (TPR < 32 ? TPR : 32); o <<= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (TPR > 32) {
      if ((t & 31) == 0) part[r_in][t >> 5] = s;
      __syncthreads();
      s = 0.f;
#pragma unroll
      for (int i = 0; i < (TPR > 32 ? TPR / 32 : 1); i++) s += part[r_in][i];
      __syncthreads();
    }
    const float inv = rsqrtf(s / COLS + 1e-6f);
    if (live) {
#pragma unroll
      for (int k = 0; k < K; k++) {
        const long c = (long)(t + k * TPR) * 8;
        uint4 w = ld16(wgt + c, false), v = cur[k], o;
        o.x = pack(lo(v.x) * inv * lo(w.x), hi(v.x) * inv * hi(w.x));
        o.y = pack(lo(v.y) * inv * lo(w.y), hi(v.y) * inv * hi(w.y));
        o.z = pack(lo(v.z) * inv * lo(w.z), hi(v.z) * inv * hi(w.z));
        o.w = pack(lo(v.w) * inv * lo(w.w), hi(v.w) * inv * hi(w.w));
        st16(y + row * COLS + c, o);
      }
    }
    if (PERSIST) {
#pragma unroll
      for (int k = 0; k < K; k++) cur[k] = nxt[k];
    }
  }
}

// The best of 5 timings of `calls` calls of launch (CUDA events), in ms a call.
template <class F> static float best_ms(F launch, int calls) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int rep = 0; rep < 5; rep++) {
    cudaEventRecord(a);
    for (int i = 0; i < calls; i++) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (ms / calls < best) best = ms / calls;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

static unsigned short *gx, *gw, *gy;
static void *gcopy;
static float *href;
static unsigned short *hy;

template <int TPR, int RPB, bool NA, bool PERSIST, int MINB> static void run(double copy_ms, int sms) {
  auto k = rms<TPR, RPB, NA, PERSIST, MINB>;
  cudaFuncAttributes fa;
  cudaFuncGetAttributes(&fa, k);
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, TPR * RPB, 0);
  const unsigned grid = PERSIST ? (unsigned)(sms * per_sm) : (unsigned)((ROWS + RPB - 1) / RPB);
  cudaMemset(gy, 0xff, ROWS * COLS * 2);
  k<<<grid, TPR * RPB>>>(gx, gw, gy, ROWS);
  const float best = best_ms([&]() { k<<<grid, TPR * RPB>>>(gx, gw, gy, ROWS); }, 20);
  cudaMemcpy(hy, gy, (size_t)ROWS * COLS * 2, cudaMemcpyDeviceToHost);
  double maxerr = 0;
  for (long i = 0; i < 64L * COLS; i++) { // the first 64 rows
    float got;
    unsigned u = (unsigned)hy[i] << 16;
    memcpy(&got, &u, 4);
    double e = fabs((double)got - href[i]) / (fabs(href[i]) + 1e-3);
    if (!(e <= maxerr)) maxerr = e;
  }
  const double bytes = 2.0 * ROWS * COLS * 2 + COLS * 2;
  printf("tpr %4d rows/block %d %s %s minblocks %d | %4d thr %3d regs %2d blocks/SM %6u blocks | %.4f ms %5.1f%% of copy | max rel err %.2g %s\n",
         TPR, RPB, NA ? "L1::no_allocate" : "nc             ", PERSIST ? "persistent+prefetch" : "a row a slot       ", MINB,
         TPR * RPB, fa.numRegs, per_sm, grid, best, 100.0 * (bytes / best) / (2.0 * ROWS * COLS * 2 / copy_ms), maxerr,
         cudaGetErrorString(cudaGetLastError()));
}

int main() {
  const size_t n = (size_t)ROWS * COLS, bytes = n * 2;
  cudaMalloc(&gx, bytes);
  cudaMalloc(&gy, bytes);
  cudaMalloc(&gcopy, bytes);
  cudaMalloc(&gw, COLS * 2);
  unsigned short *hx = (unsigned short *)malloc(bytes), hw[COLS];
  hy = (unsigned short *)malloc(bytes);
  unsigned s = 1;
  auto bf = [](float f) { unsigned u; memcpy(&u, &f, 4); return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); };
  auto fl = [](unsigned short h) { unsigned u = (unsigned)h << 16; float f; memcpy(&f, &u, 4); return f; };
  for (size_t i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; hx[i] = bf((float)(s >> 8) / 8388608.0f - 1.0f); }
  for (int i = 0; i < COLS; i++) { s = s * 1664525u + 1013904223u; hw[i] = bf((float)(s >> 8) / 16777216.0f + 0.5f); }
  cudaMemcpy(gx, hx, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(gw, hw, COLS * 2, cudaMemcpyHostToDevice);
  href = (float *)malloc(64 * COLS * sizeof(float));
  for (int r = 0; r < 64; r++) {
    double ss = 0;
    for (int c = 0; c < COLS; c++) ss += (double)fl(hx[(size_t)r * COLS + c]) * fl(hx[(size_t)r * COLS + c]);
    double inv = 1.0 / sqrt(ss / COLS + 1e-6);
    for (int c = 0; c < COLS; c++) href[r * COLS + c] = (float)(fl(hx[(size_t)r * COLS + c]) * inv * fl(hw[c]));
  }
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const float copy = best_ms([&]() { cudaMemcpyAsync(gcopy, gx, bytes, cudaMemcpyDeviceToDevice); }, 10);
  printf("copy %zu MiB: %.4f ms, %.0f GB/s; %d multiprocessors\n", bytes >> 20, copy, 2.0 * bytes / copy / 1e6, sms);
  run<64, 2, false, false, 0>(copy, sms);   // ic's layout today (64 threads of 8 chunks, 2 rows a block)
  run<64, 2, true, false, 0>(copy, sms);
  run<64, 4, false, false, 0>(copy, sms);
  run<128, 1, false, false, 0>(copy, sms);
  run<128, 2, false, false, 0>(copy, sms);
  run<256, 1, false, false, 0>(copy, sms);
  run<256, 2, false, false, 0>(copy, sms);
  run<512, 1, false, false, 0>(copy, sms);
  run<64, 2, false, true, 0>(copy, sms);
  run<64, 4, false, true, 0>(copy, sms);
  run<128, 2, false, true, 0>(copy, sms);
  run<256, 1, false, true, 0>(copy, sms);
  run<256, 2, false, true, 0>(copy, sms);
  run<128, 1, false, false, 8>(copy, sms);
  run<256, 1, false, false, 4>(copy, sms);
  run<64, 2, false, false, 0>(copy, sms);   // again
  free(hx);
  free(hy);
  free(href);
  return 0;
}
