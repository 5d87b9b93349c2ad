/* lib/cache/disk: the on-disk kernel cache, shared by processes and users' sessions.
 *
 * One file an entry, named by its key (32 hex digits) under a two-hex-digit fan-out
 * directory: DIR/ab/ab0123...ef.ick (hi then lo, lowercase). An entry is: magic
 * "ICKCACHE", schema version (u32), key (lo then hi, u64 each), payload length (u64),
 * payload, XXH3-64 checksum (u64) of everything before it; integers little-endian.
 * Writers write a uniquely named temp file in the same directory and rename it into
 * place, so readers never see half an entry; readers ignore temp files. A truncated,
 * corrupted, foreign-magic, other-version, zero-length or other-user entry is a miss
 * (logged at warn); the caller recompiles and puts the entry again, replacing it.
 *
 * The directory: IC_CACHE_DIR, else $XDG_CACHE_HOME/ic, else ~/.cache/ic; created 0700.
 * A directory that cannot be created or written, or that belongs to another user or is
 * writable by group or others, disables the disk cache with one warning (memory-only).
 * IC_CACHE=0 (or off, no, false) disables it. Size cap: max_bytes (IC_CACHE_MAX_BYTES overrides; 0 = default 1 GiB):
 * after a put that takes the directory over the cap, least recently used entries (by
 * mtime, refreshed on every hit) are deleted until it is under 90% of the cap.
 *
 * Thread-safe: any number of threads and processes may use one directory (a child of
 * fork() opens its own handle rather than using its parent's). */
#ifndef IC_CACHE_DISK_H
#define IC_CACHE_DISK_H

#include "base/base.h"
#include "base/key.h"

/* 2: a kernel's payload is its CUBIN or a reference record naming the entry of the batch
 * CUBIN that holds it (lib/backend/cuda/cuda_backend.c). */
enum { DISK_CACHE_SCHEMA = 2 };

typedef struct disk_cache disk_cache;

/* Opens the cache described above. Never fails: a disabled cache (disk_cache_enabled
 * false) when the disk cache is off or unusable; NULL only when out of memory. dir NULL
 * means the environment's choice (an explicit dir wins over IC_CACHE_DIR; IC_CACHE=0
 * disables either); log may be NULL (it is copied). */
disk_cache *disk_cache_open(const char *dir, uint64_t max_bytes, const logger *log);
void disk_cache_close(disk_cache *c);
bool disk_cache_enabled(const disk_cache *c);
/* The directory in use ("" when disabled). */
const char *disk_cache_dir(const disk_cache *c);

/* A verified payload (malloc'd, caller frees) or false. */
bool disk_cache_get(disk_cache *c, key128 key, void **payload, size_t *size);
/* Stores a payload, best effort (failures are logged at warn, never returned). */
void disk_cache_put(disk_cache *c, key128 key, const void *payload, size_t size);

/* Deletes an entry if present (an entry its user found stale), best effort. */
void disk_cache_remove(disk_cache *c, key128 key);

/* The path of an entry (for tests that corrupt entries): DIR/ab/<32 hex>.ick. */
void disk_cache_entry_path(const disk_cache *c, key128 key, char *path, size_t size);

#endif
