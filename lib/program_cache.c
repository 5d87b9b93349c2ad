/* The program cache: compiled programs by a canonical hash of the graph's structure.
 *
 * Each value's hash covers what it computes (its op and attributes, dtype, dims by
 * symbol name, and its operands' hashes), never its handle number, its place in the node
 * list or a value name; inputs add their position, name and layout, and the graph hash
 * covers the inputs and the outputs (names and values) in order. Two graphs built in
 * different orders that compute the same outputs from the same inputs get the same key. */
#include "program_cache.h"

#include "base/key.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct pc_entry {
  key128 key;
  ic_program *program; /* the cache's reference */
} pc_entry;

struct program_cache {
  pthread_mutex_t lock;
  struct { pc_entry *items; int32_t count, cap; } entries;
  uint64_t hits, misses;
};

program_cache *program_cache_create(void) {
  program_cache *c = calloc(1, sizeof *c);
  if (c) pthread_mutex_init(&c->lock, NULL);
  return c;
}

void program_cache_destroy(program_cache *c) {
  if (!c) return;
  for (int32_t i = 0; i < c->entries.count; i++) ic_program_release(c->entries.items[i].program);
  free(c->entries.items);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

static int32_t pc_find(const program_cache *c, key128 key) {
  for (int32_t i = 0; i < c->entries.count; i++)
    if (c->entries.items[i].key.lo == key.lo && c->entries.items[i].key.hi == key.hi) return i;
  return -1;
}

ic_program *program_cache_get(program_cache *c, key128 key) {
  pthread_mutex_lock(&c->lock);
  int32_t i = pc_find(c, key);
  ic_program *p = i >= 0 ? c->entries.items[i].program : NULL;
  if (p) ic_program_retain(p);
  if (p) c->hits++;
  else c->misses++;
  pthread_mutex_unlock(&c->lock);
  return p;
}

void program_cache_put(program_cache *c, key128 key, ic_program *p) {
  pthread_mutex_lock(&c->lock);
  pc_entry e = {key, p};
  if (pc_find(c, key) < 0 && VEC_PUSH(c->entries, e)) ic_program_retain(p); /* else: simply not cached */
  pthread_mutex_unlock(&c->lock);
}

void program_cache_stats(program_cache *c, ic_cache_stats *out) {
  pthread_mutex_lock(&c->lock);
  out->program_hits = c->hits;
  out->program_misses = c->misses;
  pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------- canonical hash */

/* Dims as text with symbol names: independent of symbol creation order. */
static void pc_feed_dims(XXH3_state_t *st, const ic_graph *g, const graph_node *n, sbuf *scratch) {
  sym_names names = graph_symbol_names(g);
  key_feed_i64(st, n->ndim);
  for (int32_t d = 0; d < n->ndim; d++) {
    scratch->len = 0;
    sym_print(g->syms, n->dims[d], &names, scratch);
    key_feed(st, scratch->data ? scratch->data : "", scratch->len);
  }
}

static bool pc_hash_node(const ic_graph *g, ic_value v, const XXH128_hash_t *hashes, XXH3_state_t *st,
                         sbuf *scratch, XXH128_hash_t *out) {
  const graph_node *n = &g->nodes.items[v];
  XXH3_128bits_reset(st);
  key_feed_i64(st, n->kind);
  key_feed_i64(st, n->dtype);
  pc_feed_dims(st, g, n, scratch);
  switch (n->kind) {
  case GRAPH_INPUT:
    key_feed_i64(st, n->input);
    key_feed_i64(st, n->layout);
    key_feed_str(st, n->name);
    break;
  case GRAPH_CONST:
    key_feed(st, &n->value, sizeof n->value);
    key_feed_i64(st, n->weak);
    break;
  case GRAPH_PERMUTE: key_feed(st, n->perm, sizeof(int32_t) * (size_t)n->ndim); break;
  case GRAPH_OP: key_feed_i64(st, n->op); break;
  case GRAPH_SLICE:
    key_feed_i64(st, n->axis);
    key_feed_i64(st, n->start);
    key_feed_i64(st, n->stop);
    key_feed_i64(st, n->step);
    break;
  case GRAPH_CONCAT: key_feed_i64(st, n->axis); break;
  case GRAPH_PAD:
    key_feed(st, n->pad, sizeof(int64_t) * 2 * (size_t)n->ndim);
    key_feed(st, &n->value, sizeof n->value);
    break;
  default: break;
  }
  key_feed_i64(st, n->nargs);
  for (int32_t i = 0; i < n->nargs; i++) key_feed(st, &hashes[graph_node_arg(g, n, i)], sizeof hashes[0]);
  if (scratch->oom) return false;
  *out = XXH3_128bits_digest(st);
  return true;
}

bool program_cache_key(const ic_graph *g, const ic_compile_options *o, const char *backend, uint64_t backend_config,
                       key128 *key) {
  XXH128_hash_t *hashes = malloc(sizeof *hashes * ((size_t)g->nodes.count + 1));
  XXH3_state_t *st = XXH3_createState(), *top = XXH3_createState();
  sbuf scratch = {0};
  bool ok = hashes && st && top;
  /* Operands precede their users in the node list, so one pass hashes every value. */
  for (int32_t v = 0; ok && v < g->nodes.count; v++) ok = pc_hash_node(g, v, hashes, st, &scratch, &hashes[v]);
  if (ok) {
    XXH3_128bits_reset(top);
    key_feed_str(top, "ic program");
    key_feed_str(top, IC_VERSION_STRING);
    key_feed_str(top, backend);
    key_feed(top, &backend_config, sizeof backend_config);
    key_feed_i64(top, o->mode);
    key_feed_i64(top, o->flags & ~(uint32_t)IC_COMPILE_NO_CACHE);
    key_feed_i64(top, g->inputs.count);
    for (int32_t i = 0; i < g->inputs.count; i++) key_feed(top, &hashes[g->inputs.items[i]], sizeof hashes[0]);
    key_feed_i64(top, g->outputs.count);
    for (int32_t i = 0; i < g->outputs.count; i++) {
      key_feed_str(top, g->outputs.items[i].name);
      key_feed(top, &hashes[g->outputs.items[i].value], sizeof hashes[0]);
    }
    XXH128_hash_t h = XXH3_128bits_digest(top);
    key->lo = h.low64;
    key->hi = h.high64;
  }
  free(hashes);
  XXH3_freeState(st);
  XXH3_freeState(top);
  sbuf_free(&scratch);
  return ok;
}
