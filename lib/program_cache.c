/* The program cache: compiled programs by a canonical hash of the graph's structure.
 *
 * Each value's hash covers what it computes (its op and attributes, dtype, dims by
 * symbol name, and its operands' hashes), never its handle number, its place in the node
 * list or a value name; inputs add their position, name and layout, and the graph hash
 * covers the inputs and the outputs (names and values) in order. Two graphs built in
 * different orders that compute the same outputs from the same inputs get the same key.
 *
 * The entries live in slots (freed slots are reused through a free list), indexed by a
 * chained hash table on key.lo (the key is already a uniform hash) that doubles when it
 * holds more entries than buckets, and linked in a least-recently-used list: a get or a
 * put of a key makes it the newest, and a put past the cap evicts the oldest. Evicting
 * releases the cache's reference only: a program the user still holds stays valid, and
 * is freed (kernels, modules) with the user's last reference. */
#include "program_cache.h"

#include "base/key.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

enum {
  PC_NONE = -1,          /* no entry: an empty bucket, the end of a chain or list */
  PC_MIN_BUCKETS = 16,
  PC_MAX_BUCKETS = 1 << 30
};

typedef struct pc_entry {
  key128 key;
  ic_program *program;  /* the cache's reference; NULL in a free slot */
  int32_t newer, older; /* the LRU list */
  int32_t chain;        /* the next entry of its bucket, or the next free slot */
} pc_entry;

struct program_cache {
  pthread_mutex_t lock;
  pc_entry *slots;         /* nslots in use (live or free) of slots_cap */
  int32_t nslots, slots_cap;
  int32_t *buckets;        /* the first entry of each chain; nbuckets is a power of two */
  int32_t nbuckets;
  int32_t live, max;       /* entries held, and the cap */
  int32_t newest, oldest;  /* the ends of the LRU list */
  int32_t vacant;          /* the free slots, chained */
  uint64_t hits, misses, evictions;
};

static int32_t *pc_new_buckets(int32_t n) {
  int32_t *b = sys_malloc(sizeof *b * (size_t)n);
  for (int32_t i = 0; b && i < n; i++) b[i] = PC_NONE;
  return b;
}

program_cache *program_cache_create(int32_t max_programs) {
  program_cache *c = sys_calloc(1, sizeof *c);
  if (!c) return NULL;
  if (!(c->buckets = pc_new_buckets(PC_MIN_BUCKETS))) {
    free(c);
    return NULL;
  }
  pthread_mutex_init(&c->lock, NULL);
  c->nbuckets = PC_MIN_BUCKETS;
  c->max = max_programs > 0 ? max_programs : PROGRAM_CACHE_DEFAULT_MAX;
  c->newest = c->oldest = c->vacant = PC_NONE;
  return c;
}

void program_cache_destroy(program_cache *c) {
  if (!c) return;
  for (int32_t i = 0; i < c->nslots; i++) ic_program_release(c->slots[i].program);
  free(c->slots);
  free(c->buckets);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

static int32_t *pc_bucket(const program_cache *c, key128 key) {
  return &c->buckets[key.lo & (uint64_t)(c->nbuckets - 1)];
}

static int32_t pc_find(const program_cache *c, key128 key) {
  int32_t i = *pc_bucket(c, key);
  while (i != PC_NONE && !key_equal(c->slots[i].key, key)) i = c->slots[i].chain;
  return i;
}

static void pc_lru_unlink(program_cache *c, int32_t i) {
  pc_entry *e = &c->slots[i];
  if (e->newer != PC_NONE) c->slots[e->newer].older = e->older;
  else c->newest = e->older;
  if (e->older != PC_NONE) c->slots[e->older].newer = e->newer;
  else c->oldest = e->newer;
}

static void pc_lru_push(program_cache *c, int32_t i) {
  pc_entry *e = &c->slots[i];
  e->newer = PC_NONE;
  e->older = c->newest;
  if (c->newest != PC_NONE) c->slots[c->newest].newer = i;
  else c->oldest = i;
  c->newest = i;
}

static void pc_touch(program_cache *c, int32_t i) {
  if (c->newest == i) return;
  pc_lru_unlink(c, i);
  pc_lru_push(c, i);
}

/* Doubles the buckets and rechains every entry; false (and nothing changed) when out of
 * memory or at the largest size: the chains just grow longer. */
static bool pc_grow(program_cache *c) {
  if (c->nbuckets >= PC_MAX_BUCKETS) return false;
  int32_t n = c->nbuckets * 2;
  int32_t *b = pc_new_buckets(n);
  if (!b) return false;
  free(c->buckets);
  c->buckets = b;
  c->nbuckets = n;
  for (int32_t i = c->oldest; i != PC_NONE; i = c->slots[i].newer) {
    int32_t *head = pc_bucket(c, c->slots[i].key);
    c->slots[i].chain = *head;
    *head = i;
  }
  return true;
}

/* A slot for a new entry (a free one, else a new one), or PC_NONE when out of memory. */
static int32_t pc_slot(program_cache *c) {
  int32_t i = c->vacant;
  if (i != PC_NONE) {
    c->vacant = c->slots[i].chain;
    return i;
  }
  if (c->nslots == c->slots_cap) {
    if (c->slots_cap > INT32_MAX / 2) return PC_NONE;
    int32_t cap = c->slots_cap ? c->slots_cap * 2 : PC_MIN_BUCKETS;
    pc_entry *grown = sys_realloc(c->slots, sizeof *grown * (size_t)cap);
    if (!grown) return PC_NONE;
    c->slots = grown;
    c->slots_cap = cap;
  }
  c->slots[c->nslots] = (pc_entry){.program = NULL, .newer = PC_NONE, .older = PC_NONE, .chain = PC_NONE};
  return c->nslots++;
}

/* Takes entry i out of the index and the list and frees its slot; returns its program
 * (the cache's reference, for the caller to release outside the lock). */
static ic_program *pc_remove(program_cache *c, int32_t i) {
  pc_entry *e = &c->slots[i];
  int32_t *link = pc_bucket(c, e->key);
  while (*link != i) link = &c->slots[*link].chain;
  *link = e->chain;
  pc_lru_unlink(c, i);
  ic_program *p = e->program;
  e->program = NULL;
  e->chain = c->vacant;
  c->vacant = i;
  c->live--;
  return p;
}

ic_program *program_cache_get(program_cache *c, key128 key) {
  pthread_mutex_lock(&c->lock);
  int32_t i = pc_find(c, key);
  ic_program *p = NULL;
  if (i != PC_NONE) {
    p = c->slots[i].program;
    ic_program_retain(p);
    pc_touch(c, i);
    c->hits++;
  } else {
    c->misses++;
  }
  pthread_mutex_unlock(&c->lock);
  return p;
}

void program_cache_put(program_cache *c, key128 key, ic_program *p) {
  ic_program *evicted = NULL;
  pthread_mutex_lock(&c->lock);
  int32_t i = pc_find(c, key);
  if (i != PC_NONE) {
    pc_touch(c, i); /* the first one stays */
  } else {
    if (c->live >= c->nbuckets && c->live < c->max) (void)pc_grow(c); /* at most one per bucket */
    i = pc_slot(c);
    if (i != PC_NONE) { /* else: simply not cached */
      pc_entry *e = &c->slots[i];
      e->key = key;
      e->program = p;
      ic_program_retain(p);
      int32_t *head = pc_bucket(c, key);
      e->chain = *head;
      *head = i;
      pc_lru_push(c, i);
      /* The cap held before this put, so one eviction restores it; the new entry is
       * the newest and never the one to go. */
      if (++c->live > c->max) {
        evicted = pc_remove(c, c->oldest);
        c->evictions++;
      }
    }
  }
  pthread_mutex_unlock(&c->lock);
  ic_program_release(evicted); /* outside the lock: it may unload modules */
}

void program_cache_stats(program_cache *c, ic_cache_stats *out) {
  pthread_mutex_lock(&c->lock);
  out->program_hits = c->hits;
  out->program_misses = c->misses;
  out->program_evictions = c->evictions;
  pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------- canonical hash */

/* A dim's canonical form fed straight to the hash, symbols by name (not by index: a
 * graph that makes its symbols in another order hashes the same where a dim names one). */
typedef struct pc_dim_feed {
  XXH3_state_t *st;
  const ic_graph *g;
} pc_dim_feed;

static void pc_feed_sym(void *user, sym_kind kind, int64_t value, int32_t nops) {
  const pc_dim_feed *f = user;
  key_feed_i64(f->st, kind);
  key_feed_i64(f->st, nops);
  if (kind == SYM_SYMBOL && value >= 0 && value < f->g->symbols.count) {
    const char *name = f->g->symbols.items[value];
    key_feed_i64(f->st, (int64_t)strlen(name));
    key_feed_str(f->st, name);
  } else {
    key_feed_i64(f->st, value);
  }
}

static void pc_feed_dims(XXH3_state_t *st, const ic_graph *g, const graph_node *n) {
  pc_dim_feed f = {st, g};
  key_feed_i64(st, n->ndim);
  for (int32_t d = 0; d < n->ndim; d++) sym_visit(g->syms, n->dims[d], pc_feed_sym, &f);
}

static void pc_hash_node(const ic_graph *g, ic_value v, const XXH128_hash_t *hashes, XXH3_state_t *st,
                         XXH128_hash_t *out) {
  const graph_node *n = &g->nodes.items[v];
  XXH3_128bits_reset(st);
  key_feed_i64(st, n->kind);
  key_feed_i64(st, n->dtype);
  pc_feed_dims(st, g, n);
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
  case GRAPH_REDUCE:
    key_feed_i64(st, n->reduce);
    key_feed_i64(st, n->axes);
    key_feed_i64(st, n->keepdim);
    key_feed(st, &n->value, sizeof n->value);
    break;
  case GRAPH_ASM: { /* the whole spec: asms that differ are different programs */
    const asm_spec *a = &g->asms.items[n->asm_index];
    key_feed_str(st, a->text);
    key_feed_str(st, a->constraints);
    key_feed_i64(st, a->noutputs);
    for (int32_t k = 0; k < a->noutputs; k++) key_feed_i64(st, a->outputs[k]);
    key_feed_i64(st, a->pure);
    key_feed_i64(st, a->pack);
    break;
  }
  case GRAPH_ASM_RESULT: key_feed_i64(st, n->result); break;
  case GRAPH_MATMUL: break; /* its operands, in order, and its dims say it all */
  default: break;
  }
  key_feed_i64(st, n->nargs);
  for (int32_t i = 0; i < n->nargs; i++) key_feed(st, &hashes[graph_node_arg(g, n, i)], sizeof hashes[0]);
  *out = XXH3_128bits_digest(st);
}

bool program_cache_key(const ic_graph *g, const ic_compile_options *o, const char *backend, uint64_t backend_config,
                       key128 *key) {
  XXH128_hash_t *hashes = sys_malloc(sizeof *hashes * ((size_t)g->nodes.count + 1));
  XXH3_state_t *st = XXH3_createState(), *top = XXH3_createState();
  bool ok = hashes && st && top;
  /* Operands precede their users in the node list, so one pass hashes every value. */
  for (int32_t v = 0; ok && v < g->nodes.count; v++) pc_hash_node(g, v, hashes, st, &hashes[v]);
  if (ok) {
    XXH3_128bits_reset(top);
    key_feed_str(top, "ic program");
    key_feed_str(top, IC_VERSION_STRING);
    key_feed_str(top, backend);
    key_feed(top, &backend_config, sizeof backend_config);
    key_feed_i64(top, o->mode);
    key_feed_i64(top, o->flags & ~(uint32_t)IC_COMPILE_NO_CACHE);
    key_feed_i64(top, o->fusion_budget);
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
  return ok;
}
