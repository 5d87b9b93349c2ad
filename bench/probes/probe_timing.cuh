// Shared by the CUDA probes: back-to-back timing and a hash of an output's bits.
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
