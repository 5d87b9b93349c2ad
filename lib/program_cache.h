/* lib/program_cache: compiled programs of a context by canonical graph key. It sits at
 * the top, beside compile.c: it hashes graphs and holds programs. */
#ifndef IC_PROGRAM_CACHE_H
#define IC_PROGRAM_CACHE_H

#include <pthread.h>

#include "base/key.h"
#include "graph/graph.h"

typedef struct program_cache program_cache;

/* Default cap on the number of cached programs. */
#define PROGRAM_CACHE_DEFAULT_MAX 1024

/* A cache of at most max_programs programs (0 or less: PROGRAM_CACHE_DEFAULT_MAX);
 * NULL when out of memory. */
program_cache *program_cache_create(int32_t max_programs);
/* Releases the cache's reference on every program. */
void program_cache_destroy(program_cache *c);
/* A new reference to the cached program, or NULL (counted as a hit or a miss). A hit
 * makes the entry the most recently used. O(1). */
ic_program *program_cache_get(program_cache *c, key128 key);
/* Keeps a reference to p under key (first one wins; the entry becomes the most recently
 * used either way). Past the cap the least recently used entry is evicted: the cache
 * releases its reference, so the program is freed once no user holds it. Out of memory:
 * simply not cached. O(1) amortized. */
void program_cache_put(program_cache *c, key128 key, ic_program *p);
/* Fills program_hits, program_misses and program_evictions. */
void program_cache_stats(program_cache *c, ic_cache_stats *out);

/* The canonical key of compiling g with options o on a backend (its name and config
 * hash: target, compiler and options); false when out of memory. */
bool program_cache_key(const ic_graph *g, const ic_compile_options *o, const char *backend, uint64_t backend_config,
                       key128 *key);

#endif
