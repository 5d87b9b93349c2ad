/* lib/cache/program_cache: compiled programs of a context by canonical graph key. */
#ifndef IC_CACHE_PROGRAM_CACHE_H
#define IC_CACHE_PROGRAM_CACHE_H

#include <pthread.h>

#include "cache/disk.h"
#include "graph/graph.h"

typedef struct program_cache program_cache;

program_cache *program_cache_create(void);
/* Releases the cache's reference on every program. */
void program_cache_destroy(program_cache *c);
/* A new reference to the cached program, or NULL (counted as a hit or a miss). */
ic_program *program_cache_get(program_cache *c, ic_key key);
/* Keeps a reference to p under key (first one wins). */
void program_cache_put(program_cache *c, ic_key key, ic_program *p);
void program_cache_stats(program_cache *c, ic_cache_stats *out);

/* The canonical key of compiling g with options o for arch; false when out of memory. */
bool program_cache_key(const ic_graph *g, const ic_compile_options *o, const char *arch, ic_key *key);

#endif
