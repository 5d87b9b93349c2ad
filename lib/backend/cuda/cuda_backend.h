/* The CUDA backend's internal interface: its state, code generation, NVRTC and keys. */
#ifndef IC_BACKEND_CUDA_H
#define IC_BACKEND_CUDA_H

#include "backend/backend.h"
#include "base/key.h"
#include "cuda/device.h"

enum { CUDA_BLOCK = 128 };

/* The backend's state in a context: NVRTC, the target, the device it borrows. */
typedef struct cuda_state {
  backend_state base;
  const logger *log;
  kernel_cache *kernels;
  const char *dump_dir;
  const cuda_nvrtc_api *nvrtc;
  const cuda_device *device;  /* NULL: compile only */
  char arch[16];              /* "sm_90a" */
  int32_t sm;                 /* 90 */
  uint64_t nvrtc_fingerprint; /* of the loaded libnvrtc file: part of every kernel key */
  uint64_t config_hash;       /* options, NVRTC version and file: part of every program key */
} cuda_state;

/* Helpers every generated source starts with: the text of prelude.cuh, embedded at build
 * time by cmake/embed.cmake (NUL-terminated). */
extern const char cuda_prelude[];
/* Separates the prelude from the kernel in a generated source (several kernels can then
 * share one prelude in one NVRTC call). */
#define CUDA_KERNEL_MARK "\n/* ---- kernel ---- */\n"

typedef struct cuda_codegen_result {
  char *source;       /* malloc'd CUDA C */
  int32_t per_thread; /* elements per thread (one 16-byte vector of the widest dtype) */
  int32_t block;      /* threads per block; 0: CUDA_BLOCK */
  int32_t per_block;  /* launch points a block (backend_kernel.per_block); 0: block * per_thread */
} cuda_codegen_result;

/* Writes self-contained CUDA C for kernel k with the given entry point name. */
ic_status cuda_codegen(const kir_kernel *k, const char *entry, cuda_codegen_result *out);

/* The NVRTC options ic compiles with for arch (arch option first, written to arch_opt). */
void cuda_nvrtc_options(const char *arch, const char **opts, int32_t max, int32_t *count, char *arch_opt,
                        size_t arch_size);

/* Compiles source to a CUBIN for the state's arch; on failure the NVRTC log is in the
 * error message and, under IC_DUMP, the source and log are written there. */
ic_status cuda_nvrtc_compile(const cuda_state *cs, const char *name, const char *source, void **cubin, size_t *size);

/* The parallel NVRTC calls (batch parts) a program's `kernels` missing kernels compile
 * as: min(cores, kernels, CUDA_BATCH_MAX_PARTS), at least 1 (cuda_backend.c). */
enum { CUDA_BATCH_MAX_PARTS = 8 };
int32_t cuda_batch_parts(int32_t kernels);

/* Everything a kernel's binary depends on besides ic's own code. */
typedef struct cuda_key_parts {
  const char *source;
  const char *const *options; /* NVRTC options */
  int32_t noptions;
  int32_t nvrtc_major, nvrtc_minor;
  uint64_t nvrtc_fingerprint; /* of the loaded libnvrtc file */
  const char *arch;
  const char *ic_version;
  uint32_t schema;            /* DISK_CACHE_SCHEMA */
} cuda_key_parts;

/* XXH3-128 over every part, each length-prefixed so no two part lists collide; the zero
 * key when out of memory (a miss that is never stored). */
key128 cuda_kernel_key(const cuda_key_parts *parts);

#endif
