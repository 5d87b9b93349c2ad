/* The context: logging, the GPU (when there is one), the kernel caches and the backends'
 * states, each opened on first use. The program cache above it belongs to the top level
 * (lib/program_cache.h); the context only holds it. */
#ifndef IC_CONTEXT_H
#define IC_CONTEXT_H

#include <pthread.h>

#include "backend/backend.h"
#include "cache/kernel_cache.h"
#include "cuda/device.h"

struct program_cache;

/* Backends a context opens at most: cuda, ref, and tests' own. */
enum { CTX_MAX_BACKENDS = 8 };

struct ic_context {
  logger log;
  int32_t ordinal;           /* options.device */
  cuda_device *device;       /* NULL: no GPU, or compile-only */
  char arch[16];             /* the CUDA target: options.arch, IC_ARCH or the device's; "" for none */
  bool strict_env;           /* IC_STRICT=1 */
  char *dump_dir;            /* IC_DUMP */
  disk_cache *disk;
  kernel_cache *kernels;
  struct program_cache *programs; /* created and destroyed by lib/context.c */
  pthread_mutex_t lock;      /* guards opening backends */
  pthread_t warm_thread;     /* IC_CONTEXT_WARM_COMPILER: cuda_nvrtc_warm, joined by ctx_close */
  bool warm_started;
  struct { const backend_vtable *vt; backend_state *bs; } backends[CTX_MAX_BACKENDS];
};

/* Everything of ic_context_create but the program cache; ctx_close undoes it (the
 * context's programs must be gone). */
ic_status ctx_open(const ic_context_options *opts, ic_context **out);
void ctx_close(ic_context *ctx);

/* The backend's state in this context, opened on first use (thread-safe). A backend
 * that cannot open (the cuda backend without NVRTC or a target) says why, every time. */
ic_status ctx_backend(ic_context *ctx, const backend_vtable *vt, backend_state **out);

/* Makes the context's GPU current for a call; ctx_leave restores. ctx_enter fails with
 * IC_ERR_NO_DEVICE when the context has no GPU. */
ic_status ctx_enter(ic_context *ctx);
void ctx_leave(ic_context *ctx);

/* Writes `text` to $IC_DUMP/<sub>/<name> when IC_DUMP is set (best effort, logged on
 * failure); sub is a program's folder (its key in hex), NULL for $IC_DUMP itself. */
void ctx_dump(const ic_context *ctx, const char *sub, const char *name, const char *text, size_t len);

#endif
