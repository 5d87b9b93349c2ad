/* CPU: kernel and program caches: key sensitivity, canonical graph keys, program cache
 * hits, the disk level across contexts and processes, single flight, stats and logs. */
#include <check.h>
#include <ftw.h>
#include <inttypes.h>
#include <ic/ic.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cuda/cuda_backend.h"
#include "cache/kernel_cache.h"
#include "program/program.h"
#include "program_cache.h"

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

static char cache_dir[64];

static void make_cache_dir(void) {
  snprintf(cache_dir, sizeof cache_dir, "/tmp/ic-cache-test-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(cache_dir));
  setenv("IC_CACHE_DIR", cache_dir, 1);
  unsetenv("IC_CACHE");
}

static void remove_cache_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  ck_assert_int_eq(system(cmd), 0);
  unsetenv("IC_CACHE_DIR");
}

static ic_context *make_ctx(ic_log_fn fn, void *user) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY,
                          .log_fn = fn, .log_user = user, .log_level = fn ? IC_LOG_INFO : IC_LOG_OFF};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  return ctx;
}

static ic_cache_stats stats_of(ic_context *ctx) {
  ic_cache_stats s = {.struct_size = sizeof s};
  OK(ic_cache_stats_get(ctx, &s));
  return s;
}

/* ---------------------------------------------------------------- keys */

static bool key_eq(key128 a, key128 b) { return a.lo == b.lo && a.hi == b.hi; }

START_TEST(test_kernel_key_sensitivity) {
  const char *opts[2] = {"-fmad=false", "--gpu-architecture=sm_90a"};
  const char *opts2[2] = {"-fmad=true", "--gpu-architecture=sm_90a"};
  cuda_key_parts base = {.source = "src", .options = opts, .noptions = 2, .nvrtc_major = 13, .nvrtc_minor = 0,
                           .nvrtc_fingerprint = 42, .arch = "sm_90a", .ic_version = "0.1.0", .schema = 1};
  key128 k0 = cuda_kernel_key(&base);
  ck_assert(key_eq(k0, cuda_kernel_key(&base)));
  cuda_key_parts v[9];
  for (int i = 0; i < 9; i++) v[i] = base;
  v[0].source = "src ";
  v[1].options = opts2;
  v[2].noptions = 1;
  v[3].nvrtc_major = 12;
  v[4].nvrtc_minor = 1;
  v[5].nvrtc_fingerprint = 43;
  v[6].arch = "sm_80";
  v[7].ic_version = "0.1.1";
  v[8].schema = 2;
  for (int i = 0; i < 9; i++) {
    key128 k = cuda_kernel_key(&v[i]);
    ck_assert_msg(!key_eq(k, k0), "ingredient %d does not change the key", i);
    for (int j = 0; j < i; j++) ck_assert(!key_eq(k, cuda_kernel_key(&v[j])));
  }
  /* length prefixes: moving a character between parts changes the key */
  cuda_key_parts a = base, b = base;
  a.source = "ab";
  a.arch = "c";
  b.source = "a";
  b.arch = "bc";
  ck_assert(!key_eq(cuda_kernel_key(&a), cuda_kernel_key(&b)));
}
END_TEST

/* The same graph built in two node orders, with other handle numbers and value names. */
static ic_graph *graph_variant(int order, const char *out_name, ic_dtype dt) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", dt, 2, (ic_dim[]){n, 8}, 0);
  ic_value w = ic_graph_input(g, "w", dt, 1, (ic_dim[]){8}, 0);
  ic_value e, m;
  if (order == 0) {
    e = ic_graph_unary(g, IC_OP_EXP, x);
    m = ic_graph_binary(g, IC_OP_MUL, x, w);
  } else {
    ic_graph_unary(g, IC_OP_TANH, x); /* a dead node */
    m = ic_graph_binary(g, IC_OP_MUL, x, w);
    e = ic_graph_unary(g, IC_OP_EXP, x);
    OK(ic_graph_name_value(g, m, "product"));
  }
  OK(ic_graph_output(g, out_name, ic_graph_binary(g, IC_OP_ADD, e, m)));
  return g;
}

START_TEST(test_program_key_is_canonical) {
  ic_compile_options o = {.struct_size = sizeof o};
  key128 k[2], other;
  for (int i = 0; i < 2; i++) {
    ic_graph *g = graph_variant(i, "y", IC_F32);
    ck_assert(program_cache_key(g, &o, "cuda", 90, &k[i]));
    ic_graph_destroy(g);
  }
  ck_assert(key_eq(k[0], k[1]));
  ic_graph *g = graph_variant(0, "z", IC_F32);
  ck_assert(program_cache_key(g, &o, "cuda", 90, &other));
  ck_assert(!key_eq(other, k[0])); /* output names are part of the program */
  ic_graph_destroy(g);
  g = graph_variant(0, "y", IC_F16);
  ck_assert(program_cache_key(g, &o, "cuda", 90, &other));
  ck_assert(!key_eq(other, k[0]));
  ck_assert(program_cache_key(g, &o, "cuda", 80, &k[1]));
  ck_assert(!key_eq(other, k[1]));
  ck_assert(program_cache_key(g, &o, "ref", 90, &k[1])); /* the backend's name */
  ck_assert(!key_eq(other, k[1]));
  o.mode = IC_MODE_EAGER;
  ck_assert(program_cache_key(g, &o, "cuda", 90, &k[1]));
  ck_assert(!key_eq(other, k[1]));
  ic_graph_destroy(g);
}
END_TEST

/* x : f32[a, b] for symbols named a and b (made in that order, or b first); y = x + 1. */
static key128 two_symbol_key(const char *a, const char *b, bool b_first) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim sb = b_first ? ic_graph_symbol(g, b) : 0, sa = ic_graph_symbol(g, a);
  if (!b_first) sb = ic_graph_symbol(g, b);
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){sa, sb}, 0);
  ic_value y = ic_graph_binary(g, IC_OP_ADD, x, ic_graph_constant(g, 1, IC_DTYPE_AUTO));
  OK(ic_graph_output(g, "y", y));
  ic_compile_options o = {.struct_size = sizeof o};
  key128 k;
  ck_assert(program_cache_key(g, &o, "cuda", 90, &k));
  ic_graph_destroy(g);
  return k;
}

/* Dims enter the key as their canonical form with symbols by name: a symbol's name and
 * the boundary between names count (a text of the dims run together would make [ab, c]
 * and [a, bc] one key), the order the symbols were made in does not where each dim names
 * one symbol. */
START_TEST(test_program_key_dims) {
  key128 k = two_symbol_key("ab", "c", false);
  ck_assert(key_eq(k, two_symbol_key("ab", "c", false)));
  ck_assert(!key_eq(k, two_symbol_key("a", "bc", false)));
  ck_assert(!key_eq(k, two_symbol_key("ab", "d", false)));
  ck_assert(!key_eq(k, two_symbol_key("c", "ab", false)));
  ck_assert(key_eq(k, two_symbol_key("ab", "c", true))); /* c made first */
  /* and the context's program cache answers the rebuilt graph */
  make_cache_dir();
  ic_context *ctx = make_ctx(NULL, NULL);
  ic_program *p[2];
  for (int i = 0; i < 2; i++) {
    ic_graph *g;
    OK(ic_graph_create(&g));
    ic_dim sb = i ? ic_graph_symbol(g, "b") : 0, sa = ic_graph_symbol(g, "a");
    if (!i) sb = ic_graph_symbol(g, "b");
    ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){sa, sb}, 0);
    OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_EXP, x)));
    ic_compile_options o = {.struct_size = sizeof o, .backend = "ref"};
    OK(ic_compile(ctx, g, &o, &p[i]));
    ic_graph_destroy(g);
  }
  ck_assert_ptr_eq(p[0], p[1]);
  ic_program_release(p[0]);
  ic_program_release(p[1]);
  ic_context_destroy(ctx);
  remove_cache_dir();
}
END_TEST

/* ---------------------------------------------------------------- program cache */

START_TEST(test_program_cache_hit) {
  make_cache_dir();
  ic_context *ctx = make_ctx(NULL, NULL);
  ic_graph *g = graph_variant(0, "y", IC_F32);
  ic_program *p1, *p2, *p3;
  OK(ic_compile(ctx, g, NULL, &p1));
  ic_graph_destroy(g);
  g = graph_variant(1, "y", IC_F32); /* rebuilt from scratch, in another order */
  OK(ic_compile(ctx, g, NULL, &p2));
  ck_assert_ptr_eq(p1, p2);
  ic_compile_options nc = {.struct_size = sizeof nc, .flags = IC_COMPILE_NO_CACHE};
  OK(ic_compile(ctx, g, &nc, &p3));
  ck_assert_ptr_ne(p3, p1);
  ic_cache_stats s = stats_of(ctx);
  ck_assert_int_eq(s.program_hits, 1);
  ck_assert_int_eq(s.program_misses, 1);
  ck_assert_int_eq(s.compiles, 1);
  ic_program_release(p1);
  ic_program_release(p2);
  ic_program_release(p3);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  remove_cache_dir();
}
END_TEST

/* The program cache's LRU cap, driven directly with programs compiled on the ref
 * backend (IC_COMPILE_NO_CACHE: the context's own cache holds no reference). */

static int refs_of(ic_program *p) { return atomic_load(&p->refs); }

/* y = x * k on 3 floats */
static ic_program *scale_program(ic_context *ctx, double k, key128 *key) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){3}, 0);
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, ic_graph_constant(g, k, IC_F32))));
  ic_compile_options o = {.struct_size = sizeof o, .backend = "ref", .flags = IC_COMPILE_NO_CACHE};
  ic_program *p;
  OK(ic_compile(ctx, g, &o, &p));
  ck_assert(program_cache_key(g, &o, "ref", 0, key));
  ic_graph_destroy(g);
  return p;
}

static void check_scales(ic_program *p, float k) {
  float in[3] = {1, -2, 3}, out[3] = {0};
  int64_t shape[1] = {3};
  ic_tensor ti = {in, IC_F32, 1, shape, NULL}, to = {out, IC_F32, 1, shape, NULL};
  OK(ic_program_run(p, &ti, 1, &to, 1, NULL));
  for (int i = 0; i < 3; i++) ck_assert_float_eq(out[i], in[i] * k);
}

/* get that expects a hit on want (and drops the new reference) or a miss (want NULL) */
static void expect_get(program_cache *c, key128 key, ic_program *want) {
  ic_program *got = program_cache_get(c, key);
  ck_assert_ptr_eq(got, want);
  ic_program_release(got);
}

static ic_cache_stats pc_stats(program_cache *c) {
  ic_cache_stats s = {.struct_size = sizeof s};
  program_cache_stats(c, &s);
  return s;
}

START_TEST(test_program_cache_lru) {
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&co, &ctx));
  enum { N = 7 };
  ic_program *p[N];
  key128 k[N];
  for (int i = 0; i < N; i++) {
    p[i] = scale_program(ctx, i + 1, &k[i]);
    for (int j = 0; j < i; j++) ck_assert(!key_eq(k[i], k[j]));
  }
  program_cache *c = program_cache_create(4);
  ck_assert_ptr_nonnull(c);
  for (int i = 0; i < 4; i++) program_cache_put(c, k[i], p[i]);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(refs_of(p[i]), 2); /* the user's and the cache's */
  ic_cache_stats s = pc_stats(c);
  ck_assert_int_eq(s.program_evictions, 0);
  ck_assert_int_eq(s.program_hits, 0);
  ck_assert_int_eq(s.program_misses, 0);

  /* recency, most recent first: 3 2 1 0. A get refreshes 0: 0 3 2 1. */
  expect_get(c, k[0], p[0]);
  program_cache_put(c, k[4], p[4]); /* evicts 1, not 0: 4 0 3 2 */
  s = pc_stats(c);
  ck_assert_int_eq(s.program_evictions, 1);
  ck_assert_int_eq(refs_of(p[1]), 1); /* the cache let go; the user's reference remains */
  check_scales(p[1], 2);              /* and the evicted program still runs */
  expect_get(c, k[1], NULL);          /* a miss now */

  /* a put of a cached key keeps the first program but refreshes it: 2 4 0 3 */
  program_cache_put(c, k[2], p[6]);
  ck_assert_int_eq(refs_of(p[6]), 1);
  s = pc_stats(c);
  ck_assert_int_eq(s.program_evictions, 1);

  /* the user lets go of 3 while it is cached; its eviction then frees it (ASan: no leak,
   * no use after free) */
  ic_program_release(p[3]);
  p[3] = NULL;
  program_cache_put(c, k[5], p[5]); /* evicts 3: 5 2 4 0 */
  expect_get(c, k[3], NULL);
  expect_get(c, k[2], p[2]);
  expect_get(c, k[4], p[4]);
  expect_get(c, k[5], p[5]);
  expect_get(c, k[0], p[0]); /* 0 5 4 2 */
  program_cache_put(c, k[1], p[1]); /* back in, evicting 2: 1 0 5 4 */
  ck_assert_int_eq(refs_of(p[2]), 1);
  expect_get(c, k[2], NULL);
  expect_get(c, k[1], p[1]);
  s = pc_stats(c);
  ck_assert_int_eq(s.program_evictions, 3);
  ck_assert_int_eq(s.program_hits, 6);
  ck_assert_int_eq(s.program_misses, 3);
  for (int i = 0; i < N; i++)
    if (p[i]) check_scales(p[i], (float)(i + 1));

  program_cache_destroy(c); /* releases 1 0 5 4 */
  for (int i = 0; i < N; i++)
    if (p[i]) {
      ck_assert_int_eq(refs_of(p[i]), 1);
      ic_program_release(p[i]);
    }
  ic_context_destroy(ctx);
}
END_TEST

/* Many keys through a default-cap cache: the index grows, rehashes and evicts; keys
 * whose low bits collide make long probe runs that eviction must keep intact. */
static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

static key128 synthetic_key(int i) {
  /* every fourth key collides with others in its low 16 bits */
  uint64_t lo = splitmix64((uint64_t)i);
  if (i % 4 == 0) lo = (lo << 16) | (uint64_t)(i % 8);
  return (key128){lo, (uint64_t)i};
}

START_TEST(test_program_cache_many_keys) {
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&co, &ctx));
  key128 k0;
  ic_program *p = scale_program(ctx, 3, &k0);
  program_cache *c = program_cache_create(0);
  ck_assert_ptr_nonnull(c);
  enum { KEYS = 3000, CAP = 1024 };
  for (int i = 0; i < KEYS; i++) {
    program_cache_put(c, synthetic_key(i), p);
    expect_get(c, synthetic_key(i), p);
    if (i >= 1) expect_get(c, synthetic_key(i - 1), p);
    if (i >= CAP) expect_get(c, synthetic_key(i - CAP), NULL); /* just evicted */
  }
  ic_cache_stats s = pc_stats(c);
  ck_assert_int_eq(s.program_evictions, KEYS - CAP);
  ck_assert_int_eq(refs_of(p), 1 + CAP);
  /* the newest CAP keys are cached, the rest are not */
  for (int i = 0; i < KEYS; i++) expect_get(c, synthetic_key(i), i >= KEYS - CAP ? p : NULL);
  s = pc_stats(c);
  ck_assert_int_eq(s.program_hits, KEYS + (KEYS - 1) + CAP);
  ck_assert_int_eq(s.program_misses, (KEYS - CAP) + (KEYS - CAP));
  ck_assert_int_eq(s.program_evictions, KEYS - CAP);
  program_cache_destroy(c);
  ck_assert_int_eq(refs_of(p), 1);

  /* against a model LRU: random gets and puts over few colliding keys, a small cap */
  enum { MCAP = 37, MKEYS = 120, STEPS = 20000 };
  c = program_cache_create(MCAP);
  int model[MCAP], n = 0; /* key numbers, most recent first */
  uint64_t rng = 1, evictions = 0;
  for (int step = 0; step < STEPS; step++) {
    rng = splitmix64(rng);
    int key = (int)(rng % MKEYS), at = -1;
    for (int j = 0; j < n; j++)
      if (model[j] == key) at = j;
    if ((rng >> 32) & 1) { /* put */
      if (at < 0 && n == MCAP) {
        n--;
        evictions++;
      }
      if (at < 0) at = n++;
      program_cache_put(c, synthetic_key(key), p);
    } else {
      expect_get(c, synthetic_key(key), at >= 0 ? p : NULL);
      if (at < 0) continue;
    }
    memmove(&model[1], &model[0], sizeof model[0] * (size_t)at);
    model[0] = key;
  }
  ck_assert_int_eq(pc_stats(c).program_evictions, evictions);
  ck_assert_int_eq(refs_of(p), 1 + n);
  for (int key = 0; key < MKEYS; key++) {
    bool in = false;
    for (int j = 0; j < n; j++) in |= model[j] == key;
    ic_program *got = program_cache_get(c, synthetic_key(key));
    ck_assert_ptr_eq(got, in ? p : NULL);
    ic_program_release(got);
  }
  program_cache_destroy(c);
  ck_assert_int_eq(refs_of(p), 1);
  check_scales(p, 3);
  ic_program_release(p);
  ic_context_destroy(ctx);
}
END_TEST

/* Threads putting and getting over a small cap: counts add up, references balance. */
typedef struct pc_worker {
  program_cache *cache;
  ic_program *program;
  int gets;
  bool ok;
} pc_worker;

static void *pc_work(void *arg) {
  pc_worker *w = arg;
  uint64_t rng = (uint64_t)(uintptr_t)w;
  for (int i = 0; i < 5000; i++) {
    rng = splitmix64(rng);
    key128 key = synthetic_key((int)(rng % 200));
    if (rng >> 63) {
      program_cache_put(w->cache, key, w->program);
    } else {
      ic_program *got = program_cache_get(w->cache, key);
      w->gets++;
      if (got && got != w->program) w->ok = false;
      ic_program_release(got);
    }
  }
  return NULL;
}

START_TEST(test_program_cache_threads) {
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&co, &ctx));
  key128 k0;
  ic_program *p = scale_program(ctx, 2, &k0);
  program_cache *c = program_cache_create(64);
  pc_worker w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (pc_worker){.cache = c, .program = p, .ok = true};
    pthread_create(&t[i], NULL, pc_work, &w[i]);
  }
  int gets = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert(w[i].ok);
    gets += w[i].gets;
  }
  ic_cache_stats s = pc_stats(c);
  ck_assert_int_eq(s.program_hits + s.program_misses, gets);
  ck_assert(s.program_evictions > 0);
  ck_assert_int_eq(refs_of(p), 1 + 64);
  program_cache_destroy(c);
  ck_assert_int_eq(refs_of(p), 1);
  ic_program_release(p);
  ic_context_destroy(ctx);
}
END_TEST

/* ---------------------------------------------------------------- kernel cache levels */

typedef struct log_count {
  int memory, disk, compiled;
} log_count;

static void count_origins(void *user, ic_log_level level, const char *msg) {
  log_count *c = user;
  if (level != IC_LOG_INFO || !strstr(msg, " key ")) return;
  c->memory += strstr(msg, ": memory in ") != NULL;
  c->disk += strstr(msg, ": disk in ") != NULL;
  c->compiled += strstr(msg, ": compiled in ") != NULL;
}

static void compile_variant(ic_context *ctx, int order, const char *out) {
  ic_graph *g = graph_variant(order, out, IC_F32);
  ic_program *p;
  OK(ic_compile(ctx, g, NULL, &p));
  ic_program_release(p);
  ic_graph_destroy(g);
}

START_TEST(test_kernel_cache_levels) {
  make_cache_dir();
  log_count c1 = {0}, c2 = {0};
  ic_context *ctx = make_ctx(count_origins, &c1);
  compile_variant(ctx, 0, "y");
  compile_variant(ctx, 0, "other"); /* another program, the same kernel: memory */
  ck_assert_int_eq(c1.compiled, 1);
  ck_assert_int_eq(c1.memory, 1);
  ic_cache_stats s = stats_of(ctx);
  ck_assert_int_eq(s.memory_hits, 1);
  ck_assert_int_eq(s.memory_misses, 1);
  ck_assert_int_eq(s.disk_misses, 1);
  ck_assert(s.compile_ms > 0);
  ic_context_destroy(ctx);

  ctx = make_ctx(count_origins, &c2); /* a second context: disk */
  compile_variant(ctx, 0, "y");
  ck_assert_int_eq(c2.disk, 1);
  ck_assert_int_eq(c2.compiled, 0);
  s = stats_of(ctx);
  ck_assert_int_eq(s.disk_hits, 1);
  ck_assert_int_eq(s.compiles, 0);
  ic_context_destroy(ctx);

  pid_t pid = fork(); /* a second process: disk */
  if (pid == 0) {
    ic_context *child = make_ctx(NULL, NULL);
    compile_variant(child, 0, "y");
    ic_cache_stats cs = {.struct_size = sizeof cs};
    ic_cache_stats_get(child, &cs);
    ic_context_destroy(child);
    _exit(cs.disk_hits == 1 && cs.compiles == 0 ? 0 : 1);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  setenv("IC_CACHE", "0", 1); /* disk off: compiled again */
  log_count c3 = {0};
  ctx = make_ctx(count_origins, &c3);
  compile_variant(ctx, 0, "y");
  ck_assert_int_eq(c3.compiled, 1);
  ic_context_destroy(ctx);
  unsetenv("IC_CACHE");
  remove_cache_dir();
}
END_TEST

/* Eager kernels over contiguous operands do not depend on the shape: one compile serves
 * every graph that applies the op to the dtype. */
static ic_graph *unary_graph(int32_t ndim, const ic_dim *dims) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_BF16, ndim, dims, 0);
  OK(ic_graph_output(g, "y", ic_graph_unary(g, IC_OP_SIGMOID, x)));
  return g;
}

START_TEST(test_eager_kernels_shared_across_shapes) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a",
                          .flags = IC_CONTEXT_COMPILE_ONLY | IC_CONTEXT_NO_DISK_CACHE};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  ic_compile_options eager = {.struct_size = sizeof eager, .mode = IC_MODE_EAGER};
  ic_graph *a = unary_graph(1, (ic_dim[]){100});
  ic_graph *b = unary_graph(3, (ic_dim[]){7, 3, 33});
  ic_graph *c;
  OK(ic_graph_create(&c));
  ic_dim n = ic_graph_symbol(c, "n");
  OK(ic_graph_output(c, "y", ic_graph_unary(c, IC_OP_SIGMOID, ic_graph_input(c, "x", IC_BF16, 2, (ic_dim[]){n, 5}, 0))));
  ic_program *p[3];
  OK(ic_compile(ctx, a, &eager, &p[0]));
  OK(ic_compile(ctx, b, &eager, &p[1]));
  OK(ic_compile(ctx, c, &eager, &p[2]));
  ic_cache_stats s = stats_of(ctx);
  ck_assert_int_eq(s.compiles, 1);
  ck_assert_int_eq(s.memory_hits, 2);
  ck_assert_str_eq(ic_program_kernel_source(p[0], 0), ic_program_kernel_source(p[2], 0));
  for (int i = 0; i < 3; i++) ic_program_release(p[i]);
  /* a broadcast: x [rows, cols] * w [cols] shares one kernel for every rows and cols */
  static const ic_dim shapes[3][2] = {{4, 8}, {1000, 3}, {-1, 77}};
  for (int i = 0; i < 3; i++) {
    ic_graph *h;
    OK(ic_graph_create(&h));
    ic_dim rows = shapes[i][0] < 0 ? ic_graph_symbol(h, "n") : shapes[i][0];
    ic_value x = ic_graph_input(h, "x", IC_F32, 2, (ic_dim[]){rows, shapes[i][1]}, 0);
    ic_value w = ic_graph_input(h, "w", IC_F32, 1, (ic_dim[]){shapes[i][1]}, 0);
    OK(ic_graph_output(h, "y", ic_graph_binary(h, IC_OP_MUL, x, w)));
    OK(ic_compile(ctx, h, &eager, &p[i]));
    ic_graph_destroy(h);
  }
  s = stats_of(ctx);
  ck_assert_int_eq(s.compiles, 2); /* the sigmoid, and one mul for all three */
  ck_assert_str_eq(ic_program_kernel_source(p[0], 0), ic_program_kernel_source(p[2], 0));
  for (int i = 0; i < 3; i++) ic_program_release(p[i]);
  ic_graph_destroy(a);
  ic_graph_destroy(b);
  ic_graph_destroy(c);
  ic_context_destroy(ctx);
}
END_TEST

/* ---------------------------------------------------------------- batch entries */

/* A chain of 40 unary ops over 20 distinct ops: eager, 40 launches of 20 kernels. */
static ic_graph *chain_graph(void) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value v = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){4096}, 0);
  for (int i = 0; i < 40; i++) v = ic_graph_unary(g, (ic_op)(IC_OP_NEG + i % 20), v);
  OK(ic_graph_output(g, "y", v));
  return g;
}

static ic_program *compile_chain(ic_context *ctx, ic_compile_mode mode) {
  ic_graph *g = chain_graph();
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode};
  ic_program *p;
  OK(ic_compile(ctx, g, &o, &p));
  ic_graph_destroy(g);
  return p;
}

/* Every kernel's binary is a CUBIN (ELF) that holds its entry point. */
static void check_binaries(ic_program *p) {
  for (int32_t i = 0; i < p->kernels.count; i++) {
    const backend_kernel *bk = p->kernels.items[i].compiled;
    ck_assert_ptr_nonnull(bk);
    ck_assert(bk->binary_size > 4 && memcmp(bk->binary, "\177ELF", 4) == 0);
    ck_assert_msg(memmem(bk->binary, bk->binary_size, bk->name, strlen(bk->name)) != NULL,
                  "kernel %d: %s not in its CUBIN", i, bk->name);
  }
}

/* Entries of the cache directory: reference records are small, CUBINs large. */
static struct { uint64_t bytes, largest; int files, refs; char largest_path[512]; } census;

enum { REF_MAX_BYTES = 200 };

static int census_file(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)ftw;
  if (type != FTW_F || !strstr(path, ".ick")) return 0;
  census.bytes += (uint64_t)st->st_size;
  census.files++;
  if (st->st_size <= REF_MAX_BYTES) census.refs++;
  if ((uint64_t)st->st_size > census.largest) {
    census.largest = (uint64_t)st->st_size;
    snprintf(census.largest_path, sizeof census.largest_path, "%s", path);
  }
  return 0;
}

static void take_census(void) {
  memset(&census, 0, sizeof census);
  ck_assert_int_eq(nftw(cache_dir, census_file, 16, FTW_PHYS), 0);
}

/* A warm run of an eager chain compiles nothing, and the directory holds each batch part's
 * CUBIN once plus a small reference record a kernel. */
START_TEST(test_batch_warm_from_disk) {
  make_cache_dir();
  log_count c1 = {0}, c2 = {0};
  ic_context *ctx = make_ctx(count_origins, &c1);
  ic_program *p = compile_chain(ctx, IC_MODE_EAGER);
  int32_t kernels = ic_program_kernel_count(p);
  ck_assert_int_ge(kernels, 20);
  check_binaries(p);
  ic_cache_stats s = stats_of(ctx);
  ck_assert_int_eq(s.compiles, 20); /* distinct kernels, in cuda_batch_parts(20) NVRTC calls */
  ck_assert_int_eq(c1.compiled, 20);
  ic_program_release(p);
  ic_context_destroy(ctx);

  take_census();
  printf("eager chain: %d entries, %" PRIu64 " bytes in all, largest %" PRIu64
         " bytes (one entry a kernel holding the batch would be %" PRIu64 " bytes)\n",
         census.files, census.bytes, census.largest, census.largest * 20);
  ck_assert_int_eq(census.files, 20 + cuda_batch_parts(20)); /* 20 references and the parts */
  ck_assert_int_eq(census.refs, 20);

  ctx = make_ctx(count_origins, &c2); /* a new context on the same directory */
  p = compile_chain(ctx, IC_MODE_EAGER);
  check_binaries(p);
  s = stats_of(ctx);
  ck_assert_int_eq(s.compiles, 0);
  ck_assert_int_eq(s.disk_hits, 20);
  ck_assert_int_eq(c2.disk, 20);
  ck_assert_int_eq(c2.compiled, 0);
  ic_program_release(p);
  ic_context_destroy(ctx);
  take_census();
  ck_assert_int_eq(census.files, 20 + cuda_batch_parts(20));
  remove_cache_dir();
}
END_TEST

/* A reference whose batch entry is gone is a miss: the kernels compile again, correctly,
 * and the entries are whole again for the next run. */
START_TEST(test_batch_entry_deleted) {
  make_cache_dir();
  ic_context *ctx = make_ctx(NULL, NULL);
  ic_program_release(compile_chain(ctx, IC_MODE_EAGER));
  ic_context_destroy(ctx);
  take_census();
  ck_assert_int_eq(unlink(census.largest_path), 0); /* a batch part's CUBIN */

  ctx = make_ctx(NULL, NULL);
  ic_program *p = compile_chain(ctx, IC_MODE_EAGER);
  check_binaries(p);
  ic_cache_stats s = stats_of(ctx);
  ck_assert_int_gt(s.compiles, 0);
  ic_program_release(p);
  ic_context_destroy(ctx);

  ctx = make_ctx(NULL, NULL);
  p = compile_chain(ctx, IC_MODE_EAGER);
  check_binaries(p);
  s = stats_of(ctx);
  /* every kernel an entry again, each reference naming a batch CUBIN that is there (a
   * stale one would compile). How many kernels the repair compiled, and in how many
   * parts, depends on the order in which the stale references are met and on the cores. */
  ck_assert_int_eq(s.compiles, 0);
  ic_program_release(p);
  ic_context_destroy(ctx);

  remove_cache_dir();
}
END_TEST

/* Fused and eager programs of one graph in one context: other kernels, other keys, each
 * binary holding its own entry point, warm from disk in the next context. */
START_TEST(test_batch_fused_and_eager) {
  make_cache_dir();
  for (int round = 0; round < 2; round++) {
    ic_context *ctx = make_ctx(NULL, NULL);
    ic_program *f = compile_chain(ctx, IC_MODE_FUSED);
    ic_program *e = compile_chain(ctx, IC_MODE_EAGER);
    ic_program *f2 = compile_chain(ctx, IC_MODE_FUSED);
    ck_assert_ptr_eq(f, f2);
    check_binaries(f);
    check_binaries(e);
    for (int32_t i = 0; i < f->kernels.count; i++)
      for (int32_t j = 0; j < e->kernels.count; j++)
        ck_assert_str_ne(f->kernels.items[i].compiled->name, e->kernels.items[j].compiled->name);
    ic_cache_stats s = stats_of(ctx);
    if (round == 0) ck_assert_int_eq(s.compiles, f->kernels.count + 20);
    else ck_assert_int_eq(s.compiles, 0);
    ic_program_release(f);
    ic_program_release(f2);
    ic_program_release(e);
    ic_context_destroy(ctx);
  }
  remove_cache_dir();
}
END_TEST

/* ---------------------------------------------------------------- single flight */

typedef struct flight {
  kernel_cache *cache;
  pthread_mutex_t lock;
  int compiles;
  bool ok;
} flight;

static ic_status slow_compile(void *user, void **binary, size_t *size) {
  flight *f = user;
  pthread_mutex_lock(&f->lock);
  f->compiles++;
  pthread_mutex_unlock(&f->lock);
  usleep(50 * 1000);
  *binary = malloc(5);
  memcpy(*binary, "CUBIN", 5);
  *size = 5;
  return IC_OK;
}

static void *ask(void *arg) {
  flight *f = arg;
  void *bin;
  size_t size;
  kernel_origin origin;
  key128 key = {1, 2};
  if (kernel_cache_get(f->cache, key, slow_compile, f, &bin, &size, &origin) != IC_OK || size != 5 ||
      memcmp(bin, "CUBIN", 5) != 0)
    f->ok = false;
  free(bin);
  return NULL;
}

START_TEST(test_single_flight) {
  flight f = {.cache = kernel_cache_create(1 << 20, NULL, NULL), .ok = true};
  pthread_mutex_init(&f.lock, NULL);
  pthread_t t[16];
  for (int i = 0; i < 16; i++) pthread_create(&t[i], NULL, ask, &f);
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
  ck_assert(f.ok);
  ck_assert_int_eq(f.compiles, 1);
  ic_cache_stats s = {.struct_size = sizeof s};
  kernel_cache_stats(f.cache, &s);
  ck_assert_int_eq(s.memory_hits, 15);
  ck_assert_int_eq(s.memory_misses, 1);
  kernel_cache_destroy(f.cache);
  pthread_mutex_destroy(&f.lock);
}
END_TEST

/* The memory level stays under its cap, least recently used out first. */
static ic_status sized_compile(void *user, void **binary, size_t *size) {
  *size = *(size_t *)user;
  *binary = calloc(1, *size);
  return IC_OK;
}

START_TEST(test_memory_cap) {
  kernel_cache *c = kernel_cache_create(1000, NULL, NULL);
  size_t sz = 300;
  void *bin;
  size_t size;
  kernel_origin origin;
  for (uint64_t k = 0; k < 4; k++) {
    OK(kernel_cache_get(c, (key128){k, 0}, sized_compile, &sz, &bin, &size, &origin));
    free(bin);
    OK(kernel_cache_get(c, (key128){0, 0}, sized_compile, &sz, &bin, &size, &origin)); /* keep 0 recent */
    free(bin);
  }
  OK(kernel_cache_get(c, (key128){0, 0}, sized_compile, &sz, &bin, &size, &origin));
  ck_assert_int_eq(origin, KERNEL_FROM_MEMORY);
  free(bin);
  OK(kernel_cache_get(c, (key128){1, 0}, sized_compile, &sz, &bin, &size, &origin));
  ck_assert_int_eq(origin, KERNEL_COMPILED); /* evicted */
  free(bin);
  kernel_cache_destroy(c);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cache");
  TCase *tc = check_tcase("cache");
  tcase_add_test(tc, test_kernel_key_sensitivity);
  tcase_add_test(tc, test_program_key_is_canonical);
  tcase_add_test(tc, test_program_key_dims);
  tcase_add_test(tc, test_program_cache_hit);
  tcase_add_test(tc, test_program_cache_lru);
  tcase_add_test(tc, test_program_cache_many_keys);
  tcase_add_test(tc, test_program_cache_threads);
  tcase_add_test(tc, test_kernel_cache_levels);
  tcase_add_test(tc, test_eager_kernels_shared_across_shapes);
  tcase_add_test(tc, test_batch_warm_from_disk);
  tcase_add_test(tc, test_batch_entry_deleted);
  tcase_add_test(tc, test_batch_fused_and_eager);
  tcase_add_test(tc, test_single_flight);
  tcase_add_test(tc, test_memory_cap);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
