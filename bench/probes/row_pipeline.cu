// log_softmax of f32 [8192, 32000] written by hand in the shape of ic's long-row kernel (512
// threads a row, 8 chunks of 8 a thread: chunks 0-3 in registers, 4-7 in 64 KB of shared
// memory, two blocks a multiprocessor), to find what its last pass's store burst costs
// (bench/probes/row_tier_stores.cu) and whether overlapping the next row's loads with the
// stores wins it back:
//   plain      a block a row; the shared chunks through registers (as ic loads them)
//   async      a block a row; the shared chunks by cp.async (16 bytes, no registers)
//   pipelined  2 blocks a multiprocessor walking the rows; in the last pass each chunk's
//              stores are followed by the next row's loads of the same chunk into its
//              place (cp.async for the shared chunks, registers for the others)
// ic's own kernel is linked beside (k_lsm.o, as row_tier_stores.cu makes it) to calibrate.
// The orders of these sums are not ic's; each output is checked against a host reference.
//   nvcc -O3 -arch=sm_90a bench/probes/row_pipeline.cu k_lsm.o -o rp && ./rp
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>
#include "probe_common.cuh"
typedef unsigned char u8;
extern "C" __global__ void k_lsm(const u8 *, u8 *, long long);
static const int ROWS = 8192, COLS = 32000, CHUNKS = COLS / 8, T = 512;
static const size_t BYTES = (size_t)ROWS * COLS * 4;

__device__ __forceinline__ void ld8(const float *p, float *v) {
  asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3]) : "l"(p));
  asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v[4]), "=f"(v[5]), "=f"(v[6]), "=f"(v[7]) : "l"(p + 4));
}
__device__ __forceinline__ void st8(float *p, const float *v) {
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]) : "memory");
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p + 4), "f"(v[4]), "f"(v[5]), "f"(v[6]), "f"(v[7]) : "memory");
}
__device__ __forceinline__ void cp16(float *dst, const float *src) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }
/* thread t's chunk k of a row: t + (k % 2) 512 + (k / 2) 1024, as ic's lanes */
__device__ __forceinline__ int chunk_of(int k) { return threadIdx.x + (k % 2) * T + (k / 2) * 2 * T; }
/* the shared chunks: [k - 4][thread][8], the thread's two halves swapped every 4 threads
 * (16-byte reads of 8 threads a phase, conflict-free) */
__device__ __forceinline__ float *slot(float (*sc)[T][8], int k, int half) {
  return &sc[k - 4][threadIdx.x][4 * (half ^ ((threadIdx.x >> 2) & 1))];
}
template <bool MAX> __device__ __forceinline__ float block_reduce(float v, float *red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, u) : v + u;
  }
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = red[0];
  for (int w = 1; w < T / 32; w++) r = MAX ? fmaxf(r, red[w]) : r + red[w];
  __syncthreads();
  return r;
}
/* the thread's chunk k (registers or shared) into v */
__device__ __forceinline__ void get(float (*cr)[8], float (*sc)[T][8], int k, float *v) {
  if (k < 4) {
#pragma unroll
    for (int e = 0; e < 8; e++) v[e] = cr[k][e];
  } else {
    const float4 a = *(const float4 *)slot(sc, k, 0), b = *(const float4 *)slot(sc, k, 1);
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
  }
}
template <int MODE> __device__ __forceinline__ void load_chunk(const float *row, float (*cr)[8], float (*sc)[T][8], int k) {
  const int c = chunk_of(k);
  if (c >= CHUNKS) return;
  if (k < 4) ld8(row + 8 * c, cr[k]);
  else if (MODE == 0) {
    float v[8];
    ld8(row + 8 * c, v);
    *(float4 *)slot(sc, k, 0) = make_float4(v[0], v[1], v[2], v[3]);
    *(float4 *)slot(sc, k, 1) = make_float4(v[4], v[5], v[6], v[7]);
  } else {
    cp16(slot(sc, k, 0), row + 8 * c);
    cp16(slot(sc, k, 1), row + 8 * c + 4);
  }
}
/* MODE 0 plain, 1 async, 2 pipelined */
template <int MODE> __global__ void __launch_bounds__(T, 2) lsm(const float *__restrict__ x, float *__restrict__ y, int rows) {
  extern __shared__ __align__(16) float tier[];
  float (*sc)[T][8] = (float (*)[T][8])tier;
  __shared__ float red[T / 32];
  float cr[4][8];
  int row = blockIdx.x;
  if (row >= rows) return;
#pragma unroll
  for (int k = 0; k < 8; k++) load_chunk<MODE>(x + (size_t)row * COLS, cr, sc, k);
  for (;;) {
    if (MODE > 0) cp_wait();
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < 8; k++) {
      if (chunk_of(k) >= CHUNKS) continue;
      float v[8]; get(cr, sc, k, v);
#pragma unroll
      for (int e = 0; e < 8; e++) m = fmaxf(m, v[e]);
    }
    m = block_reduce<true>(m, red);
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
      if (chunk_of(k) >= CHUNKS) continue;
      float v[8]; get(cr, sc, k, v);
#pragma unroll
      for (int e = 0; e < 8; e++) s += expf(v[e] - m);
    }
    s = block_reduce<false>(s, red);
    const float ls = logf(s);
    const int next = row + (int)gridDim.x;
    const bool more = MODE == 2 && next < rows;
    float *out = y + (size_t)row * COLS;
    /* the shared chunks first: their next loads need no registers */
#pragma unroll
    for (int q = 0; q < 8; q++) {
      const int k = (q + 4) % 8;
      if (chunk_of(k) >= CHUNKS) continue;
      float v[8]; get(cr, sc, k, v);
#pragma unroll
      for (int e = 0; e < 8; e++) v[e] = (v[e] - m) - ls;
      st8(out + 8 * chunk_of(k), v);
      if (more) load_chunk<1>(x + (size_t)next * COLS, cr, sc, k);
    }
    if (!more) break;
    row = next;
  }
}
int main(void) {
  float *x, *y;
  cudaMalloc(&x, BYTES); cudaMalloc(&y, BYTES);
  float *h = (float *)malloc(BYTES), *hy = (float *)malloc(BYTES);
  lcg_fill(h, BYTES / 4, 1048576.0f, -8.0f);
  cudaMemcpy(x, h, BYTES, cudaMemcpyHostToDevice);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const float copy = copy_ms_of(y, x, BYTES);
  printf("copy %zu MiB: %.4f ms, %.0f GB/s; %d multiprocessors\n", BYTES >> 20, copy, 2.0 * BYTES / copy / 1e6, sms);
  const int smem = 4 * T * 8 * 4;
  cudaFuncSetAttribute(lsm<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(lsm<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(lsm<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(k_lsm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  struct variant { const char *name; int kind; unsigned grid; };
  const variant vs[] = {{"ic's kernel", 3, ROWS}, {"plain", 0, ROWS}, {"async", 1, ROWS}, {"pipelined, 2 a multiprocessor", 2, 2u * sms},
                        {"pipelined, 4 rows a block", 2, ROWS / 4}};
  for (int round = 0; round < 2; round++)
    for (const variant &v : vs) {
      cudaMemset(y, 0xff, BYTES);
      auto launch = [&]() {
        if (v.kind == 0) lsm<0><<<v.grid, T, smem>>>(x, y, ROWS);
        else if (v.kind == 1) lsm<1><<<v.grid, T, smem>>>(x, y, ROWS);
        else if (v.kind == 2) lsm<2><<<v.grid, T, smem>>>(x, y, ROWS);
        else k_lsm<<<v.grid, T, smem>>>((const u8 *)x, (u8 *)y, ROWS);
      };
      const float ms = batch_ms(launch);
      cudaMemcpy(hy, y, BYTES, cudaMemcpyDeviceToHost);
      double maxerr = 0;
      for (int r = 0; r < ROWS; r += 97) {
        const float *xr = h + (size_t)r * COLS;
        double m = -INFINITY, sum = 0;
        for (int c = 0; c < COLS; c++) m = fmax(m, xr[c]);
        for (int c = 0; c < COLS; c++) sum += exp(xr[c] - m);
        for (int c = 0; c < COLS; c++) { double e = fabs(hy[(size_t)r * COLS + c] - (xr[c] - m - log(sum))); if (!(e <= maxerr)) maxerr = e; }
      }
      printf("%-32s grid %5u | %.4f ms %6.0f GB/s %5.1f%% of copy | maxerr %.2g %s\n", v.name, v.grid, ms, 2.0 * BYTES / ms / 1e6,
             100.0 * copy / ms, maxerr, cudaGetErrorString(cudaGetLastError()));
    }
  free(h); free(hy);
  return 0;
}
