/* lib/program_cache: compiled programs of a context by canonical graph key. It sits at
 * the top, beside compile.c: it hashes graphs and holds programs. */
#ifndef IC_PROGRAM_CACHE_H
#define IC_PROGRAM_CACHE_H

#include <pthread.h>

#include "base/key.h"
#include "graph/graph.h"

typedef struct program_cache program_cache;

program_cache *program_cache_create(void);
/* Releases the cache's reference on every program. */
void program_cache_destroy(program_cache *c);
/* A new reference to the cached program, or NULL (counted as a hit or a miss). */
ic_program *program_cache_get(program_cache *c, key128 key);
/* Keeps a reference to p under key (first one wins). */
void program_cache_put(program_cache *c, key128 key, ic_program *p);
void program_cache_stats(program_cache *c, ic_cache_stats *out);

/* The canonical key of compiling g with options o on a backend (its name and config
 * hash: target, compiler and options); false when out of memory. */
bool program_cache_key(const ic_graph *g, const ic_compile_options *o, const char *backend, uint64_t backend_config,
                       key128 *key);

#endif
