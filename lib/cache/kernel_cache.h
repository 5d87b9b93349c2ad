/* lib/cache/kernel_cache: compiled kernels by content key, in memory (per context,
 * capped, least recently used out first) over the disk cache (lib/cache/disk). Threads
 * asking for the same missing key compile it once: the first compiles, the others wait
 * for its result (single flight). */
#ifndef IC_CACHE_KERNEL_CACHE_H
#define IC_CACHE_KERNEL_CACHE_H

#include <pthread.h>

#include "cache/disk.h"

typedef enum kernel_origin { KERNEL_FROM_MEMORY, KERNEL_FROM_DISK, KERNEL_COMPILED } kernel_origin;

typedef struct kernel_cache kernel_cache;

/* Produces the binary of a missing key (malloc'd). */
typedef ic_status (*kernel_compile_fn)(void *user, void **binary, size_t *size);

/* max_bytes caps the memory level; disk may be NULL or disabled. */
kernel_cache *kernel_cache_create(uint64_t max_bytes, disk_cache *disk, const ic_logger *log);
void kernel_cache_destroy(kernel_cache *c);

/* The binary for key (a malloc'd copy for the caller), from memory, disk, or compile(). */
ic_status kernel_cache_get(kernel_cache *c, ic_key key, kernel_compile_fn compile, void *user, void **binary,
                           size_t *size, kernel_origin *origin);

/* True when key is ready in the memory level (no counting, no waiting). */
bool kernel_cache_in_memory(kernel_cache *c, ic_key key);

/* Fills the kernel counts of out (memory, disk, compiles) since creation. */
void kernel_cache_stats(kernel_cache *c, ic_cache_stats *out);

/* Everything a kernel's binary depends on besides ic's own code. */
typedef struct kernel_key_parts {
  const char *source;
  const char *const *options; /* NVRTC options */
  int32_t noptions;
  int32_t nvrtc_major, nvrtc_minor;
  uint64_t nvrtc_fingerprint; /* of the loaded libnvrtc file */
  const char *arch;
  const char *ic_version;
  uint32_t schema;            /* DISK_CACHE_SCHEMA */
  uint64_t backend_config;    /* the backend's config hash */
} kernel_key_parts;

/* XXH3-128 over every part, each length-prefixed so no two part lists collide. */
ic_key kernel_key(const kernel_key_parts *parts);

#endif
