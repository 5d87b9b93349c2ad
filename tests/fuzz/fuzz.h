/* The fuzz targets' shared pieces: a byte reader and the failure that libFuzzer catches.
 * Every target is built twice: with clang's libFuzzer (-fsanitize=fuzzer, scripts/fuzz.sh)
 * and, in every build, with standalone_main.c as a regression test that runs the seed
 * corpus and every input a fuzzer once found (tests/fuzz/corpus/<target>/). */
#ifndef IC_TESTS_FUZZ_H
#define IC_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ic/ic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise: print it and abort, so that the fuzzer keeps the input. */
#define FUZZ_REQUIRE(cond, ...)                                       \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
      abort();                                                        \
    }                                                                 \
  } while (0)

/* The process's ref-only context, made on first use (the targets never destroy it). */
static inline ic_context *fuzz_context(void) {
  static ic_context *ctx;
  if (!ctx) {
    ic_context_options o = {.struct_size = sizeof o, .flags = IC_CONTEXT_NO_DISK_CACHE};
    if (ic_context_create(&o, &ctx) != IC_OK) abort();
  }
  return ctx;
}

typedef struct fuzz_bytes {
  const uint8_t *p;
  size_t n;
} fuzz_bytes;

/* The next byte, 0 once the input is used up. */
static inline uint8_t fuzz_u8(fuzz_bytes *b) {
  if (!b->n) return 0;
  b->n--;
  return *b->p++;
}

static inline uint32_t fuzz_u32(fuzz_bytes *b) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = v << 8 | fuzz_u8(b);
  return v;
}

static inline uint64_t fuzz_u64(fuzz_bytes *b) { return (uint64_t)fuzz_u32(b) << 32 | fuzz_u32(b); }

#endif
