/* lib/backend: the backend vtable. A backend turns one kernel IR into something it can
 * launch; the program and runtime never look inside. Each backend owns its state,
 * opened once per context on first use (open/close): the cuda backend holds NVRTC, the
 * target arch and the device it borrows; the ref backend holds nothing. */
#ifndef IC_BACKEND_H
#define IC_BACKEND_H

#include "cache/kernel_cache.h"
#include "kir/kir.h"

struct cuda_device;
typedef struct backend_vtable backend_vtable;

/* What a context lends a backend when it opens it; every pointer outlives the state. */
typedef struct backend_env {
  const logger *log;
  kernel_cache *kernels;      /* compiled binaries by key (may be NULL: no caching) */
  const char *dump_dir;       /* IC_DUMP, or NULL */
  struct cuda_device *device; /* the context's GPU, or NULL (none, or compile-only) */
  const char *arch;           /* the context's CUDA target ("sm_90a"), or "" for none */
} backend_env;

/* A backend's state; each backend embeds this first in its own struct. */
typedef struct backend_state {
  const backend_vtable *vt;
} backend_state;

/* A compiled kernel, whatever the backend. */
typedef struct backend_kernel {
  char *name;
  char *source;       /* generated source (NULL if the backend has none) */
  void *binary;       /* e.g. CUBIN */
  size_t binary_size;
  int32_t block;      /* threads per block */
  int32_t per_thread; /* iteration points per thread: grid = ceil(numel / (block * per_thread)) */
  int32_t per_block;  /* if > 0, launch points per block instead (grid = ceil(numel / per_block)):
                         reduction kernels count rows */
  int32_t smem;       /* dynamic shared memory a block, bytes (0: none) */
  int32_t cluster;    /* blocks a launch point (a cluster of them, fixed in the kernel); 0 or 1: one */
  void *impl;         /* backend data (the loaded module and function) */
} backend_kernel;

struct backend_vtable {
  const char *name;
  /* Runs on the GPU (needs a device, a current CUDA context and device pointers); the
   * ref backend runs on the host with host pointers. */
  bool on_device;
  /* Runs two-stage reductions (kir_split_wanted) as their two kernels; a backend without
   * it gets the one-stage kernel (same bits). */
  bool two_stage_reductions;
  /* Opens the backend's state for a context; the error says what is missing. */
  ic_status (*open)(const backend_env *env, backend_state **out);
  void (*close)(backend_state *bs);
  /* What the backend compiles for ("sm_90a", "host"), for messages. */
  const char *(*target)(const backend_state *bs);
  /* A hash of everything besides the kernel IR that shapes compiled code (target,
   * compiler options and version), for program keys. */
  uint64_t (*config_hash)(const backend_state *bs);
  /* Optional: make the device current around a run (cuda pushes its context); enter
   * fails with IC_ERR_NO_DEVICE where the backend cannot run. */
  ic_status (*enter)(backend_state *bs);
  void (*leave)(backend_state *bs);
  /* Optional: prepares compiling a program's kernels together (the cuda backend then
   * compiles all of them that are missing from the cache in one NVRTC call). Returns an
   * opaque batch for compile and batch_end, or NULL (compile one by one). */
  void *(*batch_begin)(backend_state *bs, const kir_kernel *const *kernels, int32_t n, uint32_t flags);
  void (*batch_end)(void *batch);
  /* Generates and compiles one kernel (through the kernel cache unless flags hold
   * IC_COMPILE_NO_CACHE); loads it when the backend can run it. batch may be NULL. */
  ic_status (*compile)(backend_state *bs, const kir_kernel *k, uint32_t flags, void *batch, backend_kernel **out);
  /* Launches a compiled kernel over `blocks` blocks; args as the kernel's params say. */
  ic_status (*launch)(backend_state *bs, const backend_kernel *bk, uint32_t blocks, void **args, void *stream);
  void (*kernel_free)(backend_state *bs, backend_kernel *bk);
  /* Memory for temporaries and ic-allocated outputs, ordered on the stream where the
   * backend has streams. bytes > 0. */
  ic_status (*mem_alloc)(backend_state *bs, size_t bytes, void *stream, void **out);
  ic_status (*mem_free)(backend_state *bs, void *ptr, void *stream);
};

extern const backend_vtable backend_cuda;
extern const backend_vtable backend_ref;

/* The backend with that name, NULL if none. */
const backend_vtable *backend_by_name(const char *name);

#endif
