/* lib/backend: the backend vtable. A backend turns one kernel IR into something it can
 * launch; the program and runtime never look inside. `cuda` is the first entry; the
 * reference backend plugs in beside it. */
#ifndef IC_BACKEND_H
#define IC_BACKEND_H

#include "kir/kir.h"

typedef struct ic_backend ic_backend;

/* A compiled kernel, whatever the backend. */
typedef struct backend_kernel {
  const ic_backend *backend;
  char *name;
  char *source;       /* generated source (NULL if the backend has none) */
  void *binary;       /* e.g. CUBIN */
  size_t binary_size;
  int32_t block;      /* threads per block */
  int32_t per_thread; /* iteration points per thread: grid = ceil(numel / (block * per_thread)) */
  void *impl;         /* backend data (the loaded module and function) */
} backend_kernel;

typedef enum backend_id { BACKEND_CUDA = 0, BACKEND_REF = 1 } backend_id;

struct ic_backend {
  const char *name;
  backend_id id;
  /* Runs on the GPU (needs a device, a current CUDA context and device pointers); the
   * ref backend runs on the host with host pointers. */
  bool on_device;
  /* A hash of the backend's configuration (arch, options), for cache keys. */
  uint64_t (*config_hash)(const ic_context *ctx);
  /* Optional: prepares compiling a program's kernels together (the cuda backend then
   * compiles all of them that are missing from the cache in one NVRTC call). Returns an
   * opaque batch for compile and batch_end, or NULL (compile one by one). */
  void *(*batch_begin)(ic_context *ctx, const kir_kernel *const *kernels, int32_t n, uint32_t flags);
  void (*batch_end)(void *batch);
  /* Generates and compiles one kernel (through the context's kernel cache unless flags
   * hold IC_COMPILE_NO_CACHE); loads it when the context has a device. batch may be NULL. */
  ic_status (*compile)(ic_context *ctx, const kir_kernel *k, uint32_t flags, void *batch, backend_kernel **out);
  /* Launches a compiled kernel over `blocks` blocks; args as the kernel's params say. */
  ic_status (*launch)(ic_context *ctx, const backend_kernel *bk, uint32_t blocks, void **args, void *stream);
  void (*kernel_free)(ic_context *ctx, backend_kernel *bk);
  /* Memory for temporaries and ic-allocated outputs, ordered on the stream where the
   * backend has streams. bytes > 0. */
  ic_status (*mem_alloc)(ic_context *ctx, size_t bytes, void *stream, void **out);
  ic_status (*mem_free)(ic_context *ctx, void *ptr, void *stream);
};

extern const ic_backend ic_backend_cuda;
extern const ic_backend ic_backend_ref;

/* The backend with that name, NULL if none. */
const ic_backend *backend_by_name(const char *name);

#endif
