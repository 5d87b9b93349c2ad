/* The CUDA backend's internal interface: code generation and NVRTC. */
#ifndef IC_BACKEND_CUDA_H
#define IC_BACKEND_CUDA_H

#include "backend/backend.h"
#include "runtime/context.h"

enum { CUDA_BLOCK = 128 };

/* Helpers every generated source starts with (prelude.c). */
extern const char cuda_prelude[];
/* Separates the prelude from the kernel in a generated source (several kernels can then
 * share one prelude in one NVRTC call). */
#define CUDA_KERNEL_MARK "\n/* ---- kernel ---- */\n"

typedef struct cuda_codegen_result {
  char *source;       /* malloc'd CUDA C */
  int32_t per_thread; /* elements per thread (one 16-byte vector of the widest dtype) */
} cuda_codegen_result;

/* Writes self-contained CUDA C for kernel k with the given entry point name. */
ic_status cuda_codegen(const kir_kernel *k, const char *entry, cuda_codegen_result *out);

/* The NVRTC options ic compiles with, NULL-terminated (arch option first). */
void cuda_nvrtc_options(const ic_context *ctx, const char **opts, int32_t max, int32_t *count, char *arch_opt,
                        size_t arch_size);

/* Compiles source to a CUBIN for the context's arch; on failure the NVRTC log is in the
 * error message and, under IC_DUMP, the source and log are written there. */
ic_status cuda_nvrtc_compile(ic_context *ctx, const char *name, const char *source, void **cubin, size_t *size);

#endif
