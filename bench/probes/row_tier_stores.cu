// Rows of a long row kernel (log_softmax and softmax of f32 [8192, 32000]: 512 threads a
// row, 4 chunks a thread in registers and 4 in the shared-memory tier, two blocks a
// multiprocessor) launched directly in variants of their stores: as ic generates them
// (st.global.cs, asm volatile with a "memory" clobber), without the clobber, with plain
// st.global, both. Why does log_softmax, whose last pass does less, read slower than softmax
// on the same rows (H100: 2758 against 2909 GB/s in `ic bench`)?
// Then the same with the next row prefetched into L2, and with the last pass slowed.
// Each kernel is ic's dumped source with its entry renamed, compiled alone with ic's options:
//   IC_DUMP=d build/tools/ic compile G --arch sm_90a; sed -E 's/__global__ void
//   (__launch_bounds__\([0-9, ]+\) )?ic_[0-9a-f]+\(/__global__ void \1k_lsm(/' d/*/ic_k0.cu
//   (and `s/ : "memory");/);/`, `s/st.global.cs/st.global/` for the variants),
//   nvcc -c -arch=sm_90a --fmad=false -std=c++17 -prec-div=true -prec-sqrt=true -ftz=false -w
//   nvcc -O3 -arch=sm_90a bench/probes/row_tier_stores.cu k_*.o -o rts && ./rts
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "probe_common.cuh"
typedef unsigned char u8;
extern "C" __global__ void k_lsm(const u8 *, u8 *, long long);
extern "C" __global__ void k_lsm_nomem(const u8 *, u8 *, long long);
extern "C" __global__ void k_lsm_wb(const u8 *, u8 *, long long);
extern "C" __global__ void k_lsm_wb_nomem(const u8 *, u8 *, long long);
extern "C" __global__ void k_sm(const u8 *, u8 *, long long);
/* the next row of this multiprocessor's slot (blockIdx.x + 264: 2 blocks on 132) prefetched
 * into L2 by one thread (cp.async.bulk.prefetch.L2) at the start of pass 0, 1 or the last */
extern "C" __global__ void k_lsm_pf0(const u8 *, u8 *, long long);
extern "C" __global__ void k_lsm_pf1(const u8 *, u8 *, long long);
extern "C" __global__ void k_lsm_pf2(const u8 *, u8 *, long long);
extern "C" __global__ void k_sm_pf0(const u8 *, u8 *, long long);
/* the last pass slowed by an exp an element (+ 0 * exp(x): the same values but -0) */
extern "C" __global__ void k_lsm_slow(const u8 *, u8 *, long long);
static const long long ROWS = 8192, COLS = 32000;
static const size_t BYTES = (size_t)ROWS * COLS * 4;
static unsigned long long out_bits(const void *y) {
  unsigned *h = (unsigned *)malloc(BYTES);
  cudaMemcpy(h, y, BYTES, cudaMemcpyDeviceToHost);
  const unsigned long long f = fnv1a_words(h, BYTES / 4);
  free(h);
  return f;
}
int main(void) {
  u8 *x, *y;
  cudaMalloc(&x, BYTES); cudaMalloc(&y, BYTES);
  float *h = (float *)malloc(BYTES);
  lcg_fill(h, BYTES / 4, 1048576.0f, -8.0f);
  cudaMemcpy(x, h, BYTES, cudaMemcpyHostToDevice);
  free(h);
  const float copy = copy_ms_of(y, x, BYTES);
  printf("copy %zu MiB: %.4f ms, %.0f GB/s\n", BYTES >> 20, copy, 2.0 * BYTES / copy / 1e6);
  struct { const char *name; void (*k)(const u8 *, u8 *, long long); } ks[] = {
    {"log_softmax, as generated", k_lsm}, {"log_softmax, no memory clobber", k_lsm_nomem},
    {"log_softmax, st.global", k_lsm_wb}, {"log_softmax, st.global, no clobber", k_lsm_wb_nomem},
    {"softmax, as generated", k_sm}, {"log_softmax, L2 prefetch at pass 0", k_lsm_pf0},
    {"log_softmax, L2 prefetch at pass 1", k_lsm_pf1}, {"log_softmax, L2 prefetch at the last", k_lsm_pf2},
    {"softmax, L2 prefetch at pass 0", k_sm_pf0}, {"log_softmax, last pass slowed", k_lsm_slow}};
  for (int round = 0; round < 2; round++)
    for (auto &k : ks) {
      cudaFuncSetAttribute(k.k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
      cudaMemset(y, 0xff, BYTES);
      const float ms = batch_ms([&]() { k.k<<<(unsigned)ROWS, 512, 65536>>>(x, y, ROWS); });
      printf("%-36s | %.4f ms %6.0f GB/s %5.1f%% of copy | bits %016llx %s\n", k.name, ms, 2.0 * BYTES / ms / 1e6,
             100.0 * copy / ms, out_bits(y), cudaGetErrorString(cudaGetLastError()));
    }
  return 0;
}
