// Shared by the CUDA probes: back-to-back timing, the copy floor, a pseudo-random input, a
// hash of an output's bits, and the column probes' pairwise trees.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>
/* The time of one launch (ms): the best of 5 batches of 20 back to back, after 3 warm-ups. */
template <class F> static float batch_ms(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; i++) launch();
  float best = 1e30f;
  for (int rep = 0; rep < 5; rep++) {
    cudaEventRecord(a);
    for (int i = 0; i < 20; i++) launch();
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ms /= 20;
    if (ms < best) best = ms;
  }
  cudaEventDestroy(a); cudaEventDestroy(b);
  return best;
}
/* FNV-1a over n 32-bit words (outputs of one summation order must hash alike). */
static unsigned long long fnv1a_words(const unsigned *w, size_t n) {
  unsigned long long f = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) f = (f ^ w[i]) * 1099511628211ull;
  return f;
}
/* A device-to-device copy of `bytes` from src to dst, back to back (ms): the floor the
 * probes' percentages are of. */
static float copy_ms_of(void *dst, const void *src, size_t bytes) {
  return batch_ms([&]() { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); });
}
/* n floats uniform in [offset, offset + 2^24 / div), the same every run (an LCG). */
static void lcg_fill(float *h, size_t n, float div, float offset) {
  unsigned s = 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    h[i] = (float)(s >> 8) / div + offset;
  }
}
/* ic's pairwise tree over v[0..N) into v[0] (neighbours first, then pairs of pairs), each
 * of the V columns alike. */
template <int N, int V> __device__ __forceinline__ void pairwise(float (&v)[N][V]) {
#pragma unroll
  for (int s = 1; s < N; s <<= 1)
#pragma unroll
    for (int i = 0; i + s < N; i += 2 * s)
#pragma unroll
      for (int q = 0; q < V; q++) v[i][q] += v[i + s][q];
}
template <int N> __device__ __forceinline__ void pairwise(float (&v)[N]) {
#pragma unroll
  for (int s = 1; s < N; s <<= 1)
#pragma unroll
    for (int i = 0; i + s < N; i += 2 * s) v[i] += v[i + s];
}
/* A column block's warps joined: GROUPS groups of WARPS warps (thread colx of warp y of
 * group g holds acc, its VEC neighbouring columns' values); each column's WARPS values go
 * pairwise through shared memory, and warp 0 of the group writes them at dst[0..VEC). */
template <int WARPS, int GROUPS, int VEC> __device__ __forceinline__ void join_warps(const float (&acc)[VEC], float *dst) {
  const int colx = threadIdx.x & 31, w = threadIdx.x >> 5, g = w / WARPS, y = w % WARPS;
  __shared__ float sa[WARPS * GROUPS][32 * VEC];
#pragma unroll
  for (int q = 0; q < VEC; q++) sa[g * WARPS + y][colx * VEC + q] = acc[q];
  __syncthreads();
  if (y == 0) {
#pragma unroll
    for (int q = 0; q < VEC; q++) {
      float wv[WARPS];
#pragma unroll
      for (int i = 0; i < WARPS; i++) wv[i] = sa[g * WARPS + i][colx * VEC + q];
      pairwise(wv);
      dst[q] = wv[0];
    }
  }
}
