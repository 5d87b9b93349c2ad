/* lib/cache/kernel_cache: compiled binaries by key, a generic store of bytes (the
 * backend makes the key from whatever shapes its binaries), in memory (per context,
 * capped, least recently used out first) over the disk cache (lib/cache/disk). Threads
 * asking for the same missing key compile it once: the first compiles, the others wait
 * for its result (single flight). The cache gives the bytes no meaning: the cuda backend
 * stores a batch CUBIN once under its own key and its kernels' entries as small reference
 * records naming it (kernel_cache_fetch, kernel_cache_drop; lib/backend/cuda). */
#ifndef IC_CACHE_KERNEL_CACHE_H
#define IC_CACHE_KERNEL_CACHE_H

#include <pthread.h>

#include "cache/disk.h"

typedef enum kernel_origin { KERNEL_FROM_MEMORY, KERNEL_FROM_DISK, KERNEL_COMPILED } kernel_origin;

typedef struct kernel_cache kernel_cache;

/* Produces the binary of a missing key (malloc'd). */
typedef ic_status (*kernel_compile_fn)(void *user, void **binary, size_t *size);

/* max_bytes caps the memory level; disk may be NULL or disabled. */
kernel_cache *kernel_cache_create(uint64_t max_bytes, disk_cache *disk, const logger *log);
void kernel_cache_destroy(kernel_cache *c);

/* The binary for key (a malloc'd copy for the caller), from memory, disk, or compile(). */
ic_status kernel_cache_get(kernel_cache *c, key128 key, kernel_compile_fn compile, void *user, void **binary,
                           size_t *size, kernel_origin *origin);

/* As kernel_cache_get, but not counted in the stats (which count kernels): for entries
 * that other entries name, such as a CUBIN that several kernels' entries refer to. The
 * cache itself gives bytes no meaning; references are the caller's business. */
ic_status kernel_cache_fetch(kernel_cache *c, key128 key, kernel_compile_fn compile, void *user, void **binary,
                             size_t *size, kernel_origin *origin);

/* Forgets key in memory (unless a thread is producing it) and on disk: for an entry that
 * its caller found stale (a reference whose target is gone), so the next get produces it. */
void kernel_cache_drop(kernel_cache *c, key128 key);

/* True when key is ready in the memory level (no counting, no waiting). */
bool kernel_cache_in_memory(kernel_cache *c, key128 key);

/* Fills the kernel counts of out (memory, disk, compiles) since creation. */
void kernel_cache_stats(kernel_cache *c, ic_cache_stats *out);

#endif
