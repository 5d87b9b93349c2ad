/* The kernel cache: memory level with single flight, over the disk level. */
#include "cache/kernel_cache.h"

#include "base/key.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct kernel_entry {
  key128 key;
  void *binary;
  size_t size;
  bool pending;     /* a thread is producing it; others wait on the condition */
  uint64_t used;    /* LRU clock */
} kernel_entry;

struct kernel_cache {
  pthread_mutex_t lock;
  pthread_cond_t ready;
  struct { kernel_entry *items; int32_t count, cap; } entries;
  uint64_t bytes, max_bytes, clock;
  disk_cache *disk;
  const logger *log;
  ic_cache_stats stats;
};

kernel_cache *kernel_cache_create(uint64_t max_bytes, disk_cache *disk, const logger *log) {
  kernel_cache *c = sys_calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->ready, NULL);
  c->max_bytes = max_bytes;
  c->disk = disk;
  c->log = log;
  return c;
}

void kernel_cache_destroy(kernel_cache *c) {
  if (!c) return;
  for (int32_t i = 0; i < c->entries.count; i++) free(c->entries.items[i].binary);
  free(c->entries.items);
  pthread_cond_destroy(&c->ready);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

static int32_t kc_find(const kernel_cache *c, key128 key) {
  for (int32_t i = 0; i < c->entries.count; i++)
    if (c->entries.items[i].key.lo == key.lo && c->entries.items[i].key.hi == key.hi) return i;
  return -1;
}

static void kc_remove(kernel_cache *c, int32_t i) {
  c->bytes -= c->entries.items[i].size;
  free(c->entries.items[i].binary);
  c->entries.items[i] = c->entries.items[--c->entries.count];
}

/* Drops least recently used ready entries until the memory level fits its cap. */
static void kc_evict(kernel_cache *c) {
  while (c->bytes > c->max_bytes) {
    int32_t victim = -1;
    for (int32_t i = 0; i < c->entries.count; i++) {
      const kernel_entry *e = &c->entries.items[i];
      if (!e->pending && (victim < 0 || e->used < c->entries.items[victim].used)) victim = i;
    }
    if (victim < 0) return;
    kc_remove(c, victim);
  }
}

static ic_status kc_copy_out(const kernel_entry *e, void **binary, size_t *size) {
  *binary = sys_malloc(e->size ? e->size : 1);
  if (!*binary) return error_set(IC_ERR_OUT_OF_MEMORY, "kernel cache: out of memory");
  memcpy(*binary, e->binary, e->size);
  *size = e->size;
  return IC_OK;
}

/* Produces a missing entry outside the lock: disk, else compile. */
static ic_status kc_produce(kernel_cache *c, key128 key, kernel_compile_fn compile, void *user, bool counted,
                            void **binary, size_t *size, kernel_origin *origin) {
  if (c->disk && disk_cache_get(c->disk, key, binary, size)) {
    *origin = KERNEL_FROM_DISK;
    return IC_OK;
  }
  double t0 = clock_now_ms();
  ic_status s = compile(user, binary, size);
  double ms = clock_now_ms() - t0;
  pthread_mutex_lock(&c->lock);
  if (counted) {
    c->stats.compiles += s == IC_OK;
    c->stats.compile_ms += ms;
  }
  pthread_mutex_unlock(&c->lock);
  if (!s && c->disk) disk_cache_put(c->disk, key, *binary, *size);
  *origin = KERNEL_COMPILED;
  return s;
}

/* kernel_cache_get (counted in the stats) and kernel_cache_fetch (not counted). */
static ic_status kc_get(kernel_cache *c, key128 key, kernel_compile_fn compile, void *user, bool counted,
                        void **binary, size_t *size, kernel_origin *origin) {
  *binary = NULL;
  *size = 0;
  pthread_mutex_lock(&c->lock);
  int32_t i;
  while ((i = kc_find(c, key)) >= 0 && c->entries.items[i].pending) pthread_cond_wait(&c->ready, &c->lock);
  if (i >= 0) {
    kernel_entry *e = &c->entries.items[i];
    e->used = ++c->clock;
    c->stats.memory_hits += counted;
    *origin = KERNEL_FROM_MEMORY;
    ic_status s = kc_copy_out(e, binary, size);
    pthread_mutex_unlock(&c->lock);
    return s;
  }
  c->stats.memory_misses += counted;
  kernel_entry fresh = {.key = key, .pending = true, .used = ++c->clock};
  if (!VEC_PUSH(c->entries, fresh)) {
    pthread_mutex_unlock(&c->lock);
    return error_set(IC_ERR_OUT_OF_MEMORY, "kernel cache: out of memory");
  }
  pthread_mutex_unlock(&c->lock);

  ic_status s = kc_produce(c, key, compile, user, counted, binary, size, origin);

  pthread_mutex_lock(&c->lock);
  i = kc_find(c, key);
  if (!counted) {
  } else if (*origin == KERNEL_FROM_DISK) c->stats.disk_hits++;
  else if (c->disk && disk_cache_enabled(c->disk)) c->stats.disk_misses++;
  kernel_entry *e = &c->entries.items[i];
  void *copy = s ? NULL : sys_malloc(*size ? *size : 1);
  if (copy) {
    memcpy(copy, *binary, *size);
    e->binary = copy;
    e->size = *size;
    e->pending = false;
    c->bytes += *size;
    kc_evict(c);
  } else {
    kc_remove(c, i); /* failed (or no memory to keep it): waiters produce it themselves */
  }
  pthread_cond_broadcast(&c->ready);
  pthread_mutex_unlock(&c->lock);
  return s;
}

ic_status kernel_cache_get(kernel_cache *c, key128 key, kernel_compile_fn compile, void *user, void **binary,
                           size_t *size, kernel_origin *origin) {
  return kc_get(c, key, compile, user, true, binary, size, origin);
}

ic_status kernel_cache_fetch(kernel_cache *c, key128 key, kernel_compile_fn compile, void *user, void **binary,
                             size_t *size, kernel_origin *origin) {
  return kc_get(c, key, compile, user, false, binary, size, origin);
}

void kernel_cache_drop(kernel_cache *c, key128 key) {
  pthread_mutex_lock(&c->lock);
  int32_t i = kc_find(c, key);
  if (i >= 0 && !c->entries.items[i].pending) kc_remove(c, i); /* a pending one is being made afresh */
  pthread_mutex_unlock(&c->lock);
  if (c->disk) disk_cache_remove(c->disk, key);
}

bool kernel_cache_in_memory(kernel_cache *c, key128 key) {
  pthread_mutex_lock(&c->lock);
  int32_t i = kc_find(c, key);
  bool ready = i >= 0 && !c->entries.items[i].pending;
  pthread_mutex_unlock(&c->lock);
  return ready;
}

void kernel_cache_stats(kernel_cache *c, ic_cache_stats *out) {
  pthread_mutex_lock(&c->lock);
  out->memory_hits = c->stats.memory_hits;
  out->memory_misses = c->stats.memory_misses;
  out->disk_hits = c->stats.disk_hits;
  out->disk_misses = c->stats.disk_misses;
  out->compiles = c->stats.compiles;
  out->compile_ms = c->stats.compile_ms;
  pthread_mutex_unlock(&c->lock);
}
