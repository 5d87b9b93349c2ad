/* ic: the command-line tool of the ic library. Reads a graph in the text format of
 * ic_graph_parse (include/ic/ic.h) and
 *
 *   ic compile FILE [--dump LIST] [--eager] [--backend ref|cuda] [--arch sm_XX]
 *       compiles it and prints the graph, program, kernel IR and CUDA C asked for;
 *   ic run FILE [--backend ref|cuda] [--eager] [--size n=1000 ...] [--seed S]
 *       runs it on random inputs and summarizes every output; on cuda it also runs the
 *       ref backend and compares;
 *   ic bench FILE [--eager] [--size n=1000 ...] [--iters N]
 *       times it on the GPU.
 *
 * Uses only the public API. Exit status: 0 success; 1 failure (missing or unreadable
 * file, bad graph, compile or run error); 2 bad command line (unknown command or option,
 * bad value, missing --size); 77 bench without a GPU (nothing measured, as ic-bench).
 * A graph's syntax error reads "FILE:LINE:COL: message", as compilers print them. */
#include <ic/ic.h>

#include "host_clock.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_SKIP = 77 };

#define DEFAULT_ARCH "sm_90a"
#define MAX_SIZES 64     /* --size arguments */
#define PREVIEW_VALUES 6 /* values printed per output */
#define WARMUP_RUNS 3    /* bench: untimed runs first */

/* ---------------------------------------------------------------- options */

typedef enum command { CMD_COMPILE, CMD_RUN, CMD_BENCH, CMD_COUNT } command;

static const char *const command_names[CMD_COUNT] = {"compile", "run", "bench"};

enum { DUMP_GRAPH = 1u << 0, DUMP_PROGRAM = 1u << 1, DUMP_KIR = 1u << 2, DUMP_CUDA = 1u << 3 };

typedef struct size_arg {
  const char *name; /* into argv, not terminated: len characters */
  size_t len;
  int64_t value;
} size_arg;

typedef struct options {
  command cmd;
  const char *file;
  unsigned dumps;      /* DUMP_* */
  const char *backend; /* "ref", "cuda" or NULL (the default) */
  const char *arch;    /* compile: target of a compile-only context */
  bool eager;
  uint64_t seed;
  int64_t iters;
  int32_t nsizes;
  size_arg sizes[MAX_SIZES];
} options;

typedef enum opt_id { OPT_DUMP, OPT_EAGER, OPT_BACKEND, OPT_ARCH, OPT_SIZE, OPT_SEED, OPT_ITERS } opt_id;

#define FOR(cmd) (1u << (cmd))
static const struct opt_spec {
  const char *name;
  opt_id id;
  bool has_value;
  unsigned commands; /* FOR(CMD_*) */
} opt_specs[] = {
    {"--dump", OPT_DUMP, true, FOR(CMD_COMPILE)},
    {"--eager", OPT_EAGER, false, FOR(CMD_COMPILE) | FOR(CMD_RUN) | FOR(CMD_BENCH)},
    {"--backend", OPT_BACKEND, true, FOR(CMD_COMPILE) | FOR(CMD_RUN)},
    {"--arch", OPT_ARCH, true, FOR(CMD_COMPILE)},
    {"--size", OPT_SIZE, true, FOR(CMD_RUN) | FOR(CMD_BENCH)},
    {"--seed", OPT_SEED, true, FOR(CMD_RUN)},
    {"--iters", OPT_ITERS, true, FOR(CMD_BENCH)},
};

static const char usage_text[] =
    "usage: ic compile FILE [--dump LIST] [--eager] [--backend ref|cuda] [--arch sm_XX]\n"
    "       ic run FILE [--backend ref|cuda] [--eager] [--size SYM=N ...] [--seed S]\n"
    "       ic bench FILE [--eager] [--size SYM=N ...] [--iters N]\n"
    "       ic --help | --version\n";

static const char help_text[] =
    "\n"
    "FILE is a graph in ic's text format (see include/ic/ic.h), e.g.\n"
    "  symbol n\n"
    "  input x : f32[n, 4096]\n"
    "  y = gelu_tanh(x)\n"
    "  output y\n"
    "\n"
    "commands:\n"
    "  compile   compile the graph and print what --dump names (default: program):\n"
    "            a comma-separated list of graph, program, kir, cuda, or all.\n"
    "            For cuda with no GPU (or with --arch) it compiles for --arch, IC_ARCH\n"
    "            or " DEFAULT_ARCH "; the ref backend needs neither a GPU nor a target.\n"
    "  run       run on random inputs (floats uniform in [-2, 2], i32 in [-100, 100],\n"
    "            random bools) and print each output's shape, min, max, mean, NaN and inf\n"
    "            counts and first values. Every size symbol needs a --size. The backend is\n"
    "            cuda when there is a GPU, else ref; on cuda the outputs are compared with\n"
    "            the ref backend's (max abs and ulp difference, bitwise equality); a graph\n"
    "            with inline asm is not compared (ref cannot run PTX). --size values are\n"
    "            checked before anything compiles.\n"
    "  bench     time the program on the GPU (needs one): wall clock of --iters back-to-back\n"
    "            runs, synchronized at the end; prints the kernels, time per run and GB/s\n"
    "            of input plus output bytes.\n"
    "\n"
    "options:\n"
    "  --dump LIST        compile: what to print\n"
    "  --eager            one kernel per op instead of fused kernels\n"
    "  --backend B        ref (host interpreter, no GPU needed) or cuda\n"
    "  --arch sm_XX       compile: target architecture (compile-only, no GPU used)\n"
    "  --size SYM=N       the size of symbol SYM; repeat or separate with commas\n"
    "  --seed S           run: random seed (default 1)\n"
    "  --iters N          bench: timed runs (default 100)\n"
    "\n"
    "exit status:\n"
    "  0   success\n"
    "  1   failure: the file is missing or unreadable, the graph is malformed (printed as\n"
    "      FILE:LINE:COL: message), or the compile or run failed\n"
    "  2   bad command line: unknown command or option, bad value, missing --size\n"
    "  77  bench with no GPU: nothing was measured\n";

static int usage_error(const char *fmt, const char *arg) {
  fputs("ic: ", stderr);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  fputs(usage_text, stderr);
  return EXIT_USAGE;
}

/* Parses a decimal integer in [min, max] that fills the whole string. */
static bool parse_int(const char *s, int64_t min, int64_t max, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < min || v > max) return false;
  *out = (int64_t)v;
  return true;
}

/* "graph,kir" -> DUMP_GRAPH | DUMP_KIR; false on an unknown name. */
static bool parse_dumps(const char *list, unsigned *out) {
  static const struct {
    const char *name;
    unsigned bits;
  } kinds[] = {{"graph", DUMP_GRAPH},
               {"program", DUMP_PROGRAM},
               {"kir", DUMP_KIR},
               {"cuda", DUMP_CUDA},
               {"all", DUMP_GRAPH | DUMP_PROGRAM | DUMP_KIR | DUMP_CUDA}};
  *out = 0;
  for (const char *p = list;;) {
    size_t len = strcspn(p, ",");
    bool known = false;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
      if (strlen(kinds[k].name) == len && strncmp(p, kinds[k].name, len) == 0) {
        *out |= kinds[k].bits;
        known = true;
      }
    }
    if (!known) return false;
    if (!p[len]) return true;
    p += len + 1;
  }
}

static const size_arg *find_size(const options *o, const char *name, size_t len) {
  for (int32_t i = 0; i < o->nsizes; i++)
    if (o->sizes[i].len == len && strncmp(o->sizes[i].name, name, len) == 0) return &o->sizes[i];
  return NULL;
}

/* "n=1000" or "n=1000,m=8", appended to o->sizes. */
static int parse_sizes(const char *arg, options *o) {
  for (const char *p = arg;;) {
    size_t len = strcspn(p, ",");
    const char *eq = memchr(p, '=', len);
    char digits[32];
    size_t ndigits = eq ? len - (size_t)(eq + 1 - p) : 0;
    if (!eq || eq == p || ndigits == 0 || ndigits >= sizeof digits)
      return usage_error("--size wants SYM=N (e.g. n=1000), not '%s'", arg);
    memcpy(digits, eq + 1, ndigits);
    digits[ndigits] = '\0';
    int64_t value;
    if (!parse_int(digits, 0, INT64_MAX, &value)) return usage_error("--size: '%s' is not a size >= 0", arg);
    if (o->nsizes == MAX_SIZES) return usage_error("too many --size values (at most 64): '%s'", arg);
    size_arg size = {.name = p, .len = (size_t)(eq - p), .value = value};
    if (find_size(o, size.name, size.len)) return usage_error("--size: '%s' sets a symbol a second time", arg);
    o->sizes[o->nsizes++] = size;
    if (!p[len]) return EXIT_OK;
    p += len + 1;
  }
}

static int apply_option(const struct opt_spec *spec, const char *value, options *o) {
  int64_t n;
  switch (spec->id) {
  case OPT_DUMP:
    if (!parse_dumps(value, &o->dumps)) return usage_error("--dump: '%s': use graph, program, kir, cuda or all", value);
    return EXIT_OK;
  case OPT_EAGER: o->eager = true; return EXIT_OK;
  case OPT_BACKEND:
    if (strcmp(value, "ref") != 0 && strcmp(value, "cuda") != 0)
      return usage_error("--backend: '%s': use ref or cuda", value);
    o->backend = value;
    return EXIT_OK;
  case OPT_ARCH: o->arch = value; return EXIT_OK;
  case OPT_SIZE: return parse_sizes(value, o);
  case OPT_SEED:
    if (!parse_int(value, 0, INT64_MAX, &n)) return usage_error("--seed: '%s' is not a number >= 0", value);
    o->seed = (uint64_t)n;
    return EXIT_OK;
  case OPT_ITERS:
    if (!parse_int(value, 1, 1000000000, &n)) return usage_error("--iters: '%s' is not a count >= 1", value);
    o->iters = n;
    return EXIT_OK;
  }
  return usage_error("internal: unhandled option %s", spec->name);
}

/* One option at argv[*i] ("--size n=1" or "--size=n=1"); advances *i past its value. */
static int parse_option(int argc, char **argv, int *i, options *o) {
  const char *arg = argv[*i];
  size_t name_len = strcspn(arg, "=");
  for (size_t k = 0; k < sizeof opt_specs / sizeof opt_specs[0]; k++) {
    const struct opt_spec *spec = &opt_specs[k];
    if (strlen(spec->name) != name_len || strncmp(arg, spec->name, name_len) != 0) continue;
    if (!(spec->commands & FOR(o->cmd))) {
      fprintf(stderr, "ic: %s does not apply to 'ic %s'\n%s", spec->name, command_names[o->cmd], usage_text);
      return EXIT_USAGE;
    }
    const char *value = ""; /* flags have none */
    if (arg[name_len] == '=') {
      if (!spec->has_value) return usage_error("%s takes no value", spec->name);
      value = arg + name_len + 1;
    } else if (spec->has_value) {
      if (*i + 1 >= argc) return usage_error("%s needs a value", spec->name);
      value = argv[++*i];
    }
    return apply_option(spec, value, o);
  }
  return usage_error("unknown option '%s'", arg);
}

/* Fills *o from the command line. Returns -1 to go on, else the exit status (after
 * --help or --version, or an error). */
static int parse_args(int argc, char **argv, options *o) {
  *o = (options){.dumps = DUMP_PROGRAM, .seed = 1, .iters = 100};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage_text, stdout);
      fputs(help_text, stdout);
      return EXIT_OK;
    }
    if (strcmp(argv[i], "--version") == 0) {
      int v = ic_version();
      printf("ic %s (library %d.%d.%d)\n", IC_VERSION_STRING, v / 10000, v / 100 % 100, v % 100);
      return EXIT_OK;
    }
  }
  if (argc < 2) return usage_error("%s", "no command given");
  int cmd = 0;
  while (cmd < CMD_COUNT && strcmp(argv[1], command_names[cmd]) != 0) cmd++;
  if (cmd == CMD_COUNT) {
    if (argv[1][0] == '-') return usage_error("unknown option '%s' (the command comes first)", argv[1]);
    return usage_error("unknown command '%s'", argv[1]);
  }
  o->cmd = (command)cmd;
  for (int i = 2; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] != '\0') {
      int status = parse_option(argc, argv, &i, o);
      if (status != EXIT_OK) return status;
    } else if (o->file) {
      return usage_error("one FILE only; '%s' is a second", argv[i]);
    } else {
      o->file = argv[i];
    }
  }
  if (!o->file) return usage_error("'ic %s' needs a graph FILE", command_names[o->cmd]);
  return -1;
}

/* ---------------------------------------------------------------- small helpers */


/* Reports a failed ic call. ic_last_error() is fetched last: its string lives until the
 * next ic call. */
static int ic_failure(const char *what, ic_status st) {
  const char *status = ic_status_string(st);
  const char *message = ic_last_error();
  fprintf(stderr, "ic: %s: %s: %s\n", what, status, message);
  return EXIT_FAIL;
}

/* Reads a whole file into a terminated string. */
static int read_file(const char *path, char **out) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "ic: cannot open %s: %s\n", path, strerror(errno));
    return EXIT_FAIL;
  }
  size_t len = 0, cap = 4096;
  char *text = malloc(cap);
  int status = EXIT_OK;
  if (!text) {
    fprintf(stderr, "ic: %s: out of memory\n", path);
    status = EXIT_FAIL;
  }
  while (status == EXIT_OK) {
    len += fread(text + len, 1, cap - 1 - len, f);
    if (ferror(f)) {
      fprintf(stderr, "ic: cannot read %s: %s\n", path, strerror(errno));
      status = EXIT_FAIL;
    } else if (feof(f)) {
      break;
    } else if (len == cap - 1) {
      char *bigger = cap < SIZE_MAX / 2 ? realloc(text, cap * 2) : NULL;
      if (!bigger) {
        fprintf(stderr, "ic: %s: out of memory\n", path);
        status = EXIT_FAIL;
      } else {
        text = bigger;
        cap *= 2;
      }
    }
  }
  fclose(f);
  if (status == EXIT_OK && memchr(text, '\0', len)) {
    fprintf(stderr, "ic: %s: not a text file (it contains a NUL byte)\n", path);
    status = EXIT_FAIL;
  }
  if (status != EXIT_OK) {
    free(text);
    return status;
  }
  text[len] = '\0';
  *out = text;
  return EXIT_OK;
}

/* "f32[1000, 4096]" into buf. */
static const char *format_type(ic_dtype dt, int32_t ndim, const int64_t *shape, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "%s[", ic_dtype_name(dt));
  for (int32_t d = 0; d < ndim && used < size; d++)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, d ? ", " : "", shape[d]);
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}

/* ---------------------------------------------------------------- elements */

static bool dtype_is_float(ic_dtype dt) {
  switch (dt) {
  case IC_F16: case IC_BF16: case IC_F32: case IC_F64: case IC_F8E4M3: case IC_F8E5M2: return true;
  default: return false;
  }
}

/* The raw bits of element i (any dtype of at most 8 bytes). */
static uint64_t load_bits(ic_dtype dt, const void *base, size_t i) {
  const unsigned char *p = (const unsigned char *)base + i * ic_dtype_size(dt);
  uint8_t b1;
  uint16_t b2;
  uint32_t b4;
  uint64_t b8;
  switch (ic_dtype_size(dt)) {
  case 1: memcpy(&b1, p, 1); return b1;
  case 2: memcpy(&b2, p, 2); return b2;
  case 4: memcpy(&b4, p, 4); return b4;
  default: memcpy(&b8, p, 8); return b8;
  }
}

static double load_value(ic_dtype dt, const void *base, size_t i) {
  return ic_element_load(dt, (const unsigned char *)base + i * ic_dtype_size(dt));
}

/* Stores v (already in the dtype's range; integral for integer dtypes) as element i. */
static void store_value(ic_dtype dt, void *base, size_t i, double v) {
  ic_element_store(dt, v, (unsigned char *)base + i * ic_dtype_size(dt));
}

/* Distance in units in the last place between two float bit patterns of `width` bits:
 * the difference of their positions on the ordered line of finite values. */
static uint64_t ulp_distance(uint64_t a, uint64_t b, unsigned width) {
  uint64_t sign = 1ull << (width - 1);
  uint64_t ma = a & (sign - 1), mb = b & (sign - 1);
  if ((a & sign) != (b & sign)) return ma + mb;
  return ma > mb ? ma - mb : mb - ma;
}

/* ---------------------------------------------------------------- random inputs */

typedef struct rng {
  uint64_t state;
} rng;

static uint64_t rng_next(rng *r) { /* splitmix64 */
  uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Floats uniform in [-2, 2] (an f32 value, then rounded to the dtype), integers in
 * [-100, 100] ([0, 100] for unsigned dtypes), bools 0 or 1. */
static double random_value(ic_dtype dt, rng *r) {
  uint64_t x = rng_next(r);
  if (dtype_is_float(dt)) return (double)(-2.0f + 4.0f * (float)(x >> 40) * 0x1p-24f);
  if (dt == IC_BOOL) return (double)(x >> 63);
  if (dt == IC_U8 || dt == IC_U16 || dt == IC_U32 || dt == IC_U64) return (double)((x >> 32) % 101);
  return (double)((int64_t)((x >> 32) % 201) - 100);
}

/* ---------------------------------------------------------------- host tensors */

typedef struct host_tensor {
  const char *name; /* the program's */
  ic_dtype dtype;
  int32_t ndim;
  int64_t shape[IC_MAX_DIMS];
  size_t count, bytes;
  void *data; /* malloc'd */
} host_tensor;

/* Sets count and bytes from the shape and allocates data (uninitialized). */
static int host_tensor_alloc(host_tensor *t) {
  size_t count = 1, elem = ic_dtype_size(t->dtype);
  for (int32_t d = 0; d < t->ndim; d++) {
    uint64_t dim = (uint64_t)t->shape[d];
    if (dim && count > SIZE_MAX / dim) count = SIZE_MAX; /* overflow: caught below */
    else count *= (size_t)dim;
  }
  char type[160];
  if (elem == 0 || count > SIZE_MAX / 16) {
    fprintf(stderr, "ic: %s %s is too large\n", t->name, format_type(t->dtype, t->ndim, t->shape, type, sizeof type));
    return EXIT_FAIL;
  }
  t->count = count;
  t->bytes = count * elem;
  t->data = malloc(t->bytes ? t->bytes : 1);
  if (!t->data) {
    fprintf(stderr, "ic: %s %s: out of memory (%zu bytes)\n", t->name,
            format_type(t->dtype, t->ndim, t->shape, type, sizeof type), t->bytes);
    return EXIT_FAIL;
  }
  return EXIT_OK;
}

static void host_tensors_free(host_tensor *ts, int32_t n) {
  for (int32_t i = 0; ts && i < n; i++) free(ts[i].data);
  free(ts);
}

/* ic_tensors over host tensors, with data[i] (host or device pointers) as their data. */
static void tensor_views(const host_tensor *ts, int32_t n, void *const *data, ic_tensor *out) {
  for (int32_t i = 0; i < n; i++)
    out[i] = (ic_tensor){.data = data ? data[i] : ts[i].data, .dtype = ts[i].dtype, .ndim = ts[i].ndim,
                         .shape = ts[i].shape, .strides = NULL};
}

/* ---------------------------------------------------------------- a loaded graph */

typedef struct session {
  const options *opt;
  ic_context *ctx;
  ic_graph *graph;
  ic_program *prog;
  int32_t ninputs, noutputs;
  host_tensor *inputs, *outputs; /* run and bench */
  int64_t *symbols;              /* values of the program's symbols (ic_program_eval) */
} session;

static void session_free(session *s) {
  host_tensors_free(s->inputs, s->ninputs);
  host_tensors_free(s->outputs, s->noutputs);
  free(s->symbols);
  ic_program_release(s->prog);
  ic_graph_destroy(s->graph);
  ic_context_destroy(s->ctx);
}

/* Reads and parses FILE; a syntax error reads "FILE:LINE:COL: message", as compilers
 * print them (the parser says "line L, column C: message"), any other "FILE: message". */
static int load_graph(session *s) {
  char *text = NULL;
  int status = read_file(s->opt->file, &text);
  if (status != EXIT_OK) return status;
  ic_status st = ic_graph_parse(text, &s->graph);
  free(text);
  if (st != IC_OK) {
    const char *msg = ic_last_error();
    long long line = 0, col = 0;
    int used = 0;
    if (sscanf(msg, "line %lld, column %lld: %n", &line, &col, &used) == 2 && used > 0)
      fprintf(stderr, "%s:%lld:%lld: %s\n", s->opt->file, line, col, msg + used);
    else
      fprintf(stderr, "%s: %s\n", s->opt->file, msg);
    return EXIT_FAIL;
  }
  return EXIT_OK;
}

/* Drops the messages of the probe context below (it would log a second time what the
 * real context logs). */
static void discard_log(void *user, ic_log_level level, const char *message) {
  (void)user;
  (void)level;
  (void)message;
}

/* A context for the local GPU. With an explicit arch, a compile-only context for it.
 * With no GPU: for cuda_target, a compile-only context for IC_ARCH or DEFAULT_ARCH;
 * else a host-only one (the ref backend needs no target). Whether there is a GPU is asked
 * of a silent probe context without disk cache, kept alive until the real one exists so
 * that the device's primary context is not torn down and made again. */
static int open_context(session *s, const char *arch, bool cuda_target) {
  ic_context_options o = {.struct_size = sizeof o, .arch = arch, .flags = arch ? IC_CONTEXT_COMPILE_ONLY : 0};
  ic_context *probe = NULL;
  if (cuda_target && !arch) {
    ic_context_options p = {.struct_size = sizeof p, .log_fn = discard_log, .flags = IC_CONTEXT_NO_DISK_CACHE};
    if (ic_context_create(&p, &probe) == IC_OK && !ic_context_has_device(probe) && !ic_context_arch(probe)[0]) {
      /* No GPU and no IC_ARCH: compile for the default target. */
      o.arch = DEFAULT_ARCH;
      o.flags = IC_CONTEXT_COMPILE_ONLY;
    }
  }
  ic_status st = ic_context_create(&o, &s->ctx);
  ic_context_destroy(probe);
  return st == IC_OK ? EXIT_OK : ic_failure("creating a context", st);
}

/* Whether the graph holds an inline_asm node (its text has the statement). */
static bool graph_has_asm(const session *s) {
  char *text = NULL;
  bool has = ic_graph_print(s->graph, &text) == IC_OK && strstr(text, " = inline_asm(\"") != NULL;
  ic_string_free(text);
  return has;
}

static int compile_graph(session *s, const char *backend, ic_program **out) {
  ic_compile_options co = {.struct_size = sizeof co,
                           .mode = s->opt->eager ? IC_MODE_EAGER : IC_MODE_FUSED,
                           .backend = backend};
  double t0 = host_now_ms();
  ic_status st = ic_compile(s->ctx, s->graph, &co, out);
  double ms = host_now_ms() - t0;
  if (st != IC_OK) {
    char what[512];
    snprintf(what, sizeof what, "%s: compile failed", s->opt->file);
    return ic_failure(what, st);
  }
  int32_t k = ic_program_kernel_count(*out);
  bool cuda = strcmp(backend, "cuda") == 0; /* only cuda has a target arch */
  fprintf(stderr, "ic: compiled %s in %.2f ms: %" PRId32 " kernel%s, %s, %s backend%s%s\n", s->opt->file, ms, k,
          k == 1 ? "" : "s", s->opt->eager ? "eager" : "fused", backend, cuda ? ", " : "",
          cuda ? ic_context_arch(s->ctx) : "");
  return EXIT_OK;
}

/* ---------------------------------------------------------------- sizes and inputs */

/* Every --size names a symbol of the graph and every symbol has one: checked before
 * compiling, so a wrong command line costs no compile. */
static int check_sizes(const session *s) {
  const options *o = s->opt;
  int status = EXIT_OK;
  for (int32_t k = 0; k < o->nsizes; k++) {
    bool found = false;
    for (int32_t j = 0; j < ic_graph_symbol_count(s->graph) && !found; j++) {
      const char *name = ic_graph_symbol_name(s->graph, j);
      found = strlen(name) == o->sizes[k].len && strncmp(name, o->sizes[k].name, o->sizes[k].len) == 0;
    }
    if (!found) {
      fprintf(stderr, "ic: --size %.*s: %s has no symbol '%.*s'\n", (int)o->sizes[k].len, o->sizes[k].name, o->file,
              (int)o->sizes[k].len, o->sizes[k].name);
      status = EXIT_USAGE;
    }
  }
  for (int32_t j = 0; j < ic_graph_symbol_count(s->graph); j++) {
    const char *name = ic_graph_symbol_name(s->graph, j);
    if (!find_size(o, name, strlen(name))) {
      fprintf(stderr, "ic: missing --size for symbol '%s': give --size %s=N\n", name, name);
      status = EXIT_USAGE;
    }
  }
  return status;
}

/* Binds every symbol of the program to its --size (check_sizes made sure each has one:
 * the program's symbols are the graph's) and shapes the inputs by evaluating their dims. */
static int bind_sizes(session *s) {
  const options *o = s->opt;
  int32_t n = ic_program_symbol_count(s->prog);
  s->symbols = calloc((size_t)n + 1, sizeof *s->symbols);
  if (!s->symbols) return ic_failure("binding symbols", IC_ERR_OUT_OF_MEMORY);
  bool missing = false;
  for (int32_t k = 0; k < n; k++) {
    const char *name = ic_program_symbol_name(s->prog, k);
    const size_arg *size = name ? find_size(o, name, strlen(name)) : NULL;
    if (size) s->symbols[k] = size->value;
    missing |= !size;
  }
  if (missing) {
    fprintf(stderr, "ic: the program has a symbol the graph has not\n");
    return EXIT_FAIL;
  }
  for (int32_t i = 0; i < s->ninputs; i++) {
    ic_buffer_info info;
    ic_status st = ic_program_buffer(s->prog, i, &info);
    if (st != IC_OK) return ic_failure("reading the program's inputs", st);
    s->inputs[i] = (host_tensor){.name = info.name, .dtype = info.dtype, .ndim = info.ndim};
    for (int32_t d = 0; d < info.ndim && st == IC_OK; d++)
      st = ic_program_eval(s->prog, info.dims_expr[d], s->symbols, &s->inputs[i].shape[d]);
    if (st != IC_OK) return ic_failure("shaping the inputs", st);
  }
  return EXIT_OK;
}

/* Output i's name, dtype and shape (for the inputs' shapes), and its memory. */
static int prepare_output(session *s, int32_t i, const ic_tensor *input_views) {
  host_tensor *t = &s->outputs[i];
  ic_buffer_info info;
  ic_status st = ic_program_buffer(s->prog, s->ninputs + i, &info);
  if (st != IC_OK) return ic_failure("reading the program's outputs", st);
  if (info.kind != IC_BUFFER_OUTPUT || info.index != i) {
    fprintf(stderr, "ic: buffer %" PRId32 " is not output %" PRId32 "\n", s->ninputs + i, i);
    return EXIT_FAIL;
  }
  *t = (host_tensor){.name = info.name, .dtype = info.dtype};
  st = ic_program_output_shape(s->prog, i, input_views, &t->ndim, t->shape);
  if (st != IC_OK) return ic_failure("computing the output shapes", st);
  return host_tensor_alloc(t);
}

/* Inputs shaped by --size and filled with random values; outputs allocated. */
static int prepare_tensors(session *s) {
  s->ninputs = ic_program_input_count(s->prog);
  s->noutputs = ic_program_output_count(s->prog);
  s->inputs = calloc((size_t)s->ninputs + 1, sizeof *s->inputs);
  s->outputs = calloc((size_t)s->noutputs + 1, sizeof *s->outputs);
  ic_tensor *views = calloc((size_t)s->ninputs + 1, sizeof *views);
  int status = s->inputs && s->outputs && views ? EXIT_OK : ic_failure("allocating", IC_ERR_OUT_OF_MEMORY);
  if (status == EXIT_OK) status = bind_sizes(s);
  rng r = {s->opt->seed};
  for (int32_t i = 0; status == EXIT_OK && i < s->ninputs; i++) {
    host_tensor *t = &s->inputs[i];
    status = host_tensor_alloc(t);
    for (size_t e = 0; status == EXIT_OK && e < t->count; e++) store_value(t->dtype, t->data, e, random_value(t->dtype, &r));
  }
  if (status == EXIT_OK) tensor_views(s->inputs, s->ninputs, NULL, views);
  for (int32_t i = 0; status == EXIT_OK && i < s->noutputs; i++) status = prepare_output(s, i, views);
  free(views);
  return status;
}

/* ---------------------------------------------------------------- running */

/* Device copies of the inputs (uploaded) and device memory for the outputs. */
typedef struct device_io {
  ic_context *ctx;
  int32_t ninputs, noutputs;
  void **inputs, **outputs;
} device_io;

static void device_io_free(device_io *io) {
  for (int32_t i = 0; io->inputs && i < io->ninputs; i++) ic_free(io->ctx, io->inputs[i]);
  for (int32_t i = 0; io->outputs && i < io->noutputs; i++) ic_free(io->ctx, io->outputs[i]);
  free(io->inputs);
  free(io->outputs);
  *io = (device_io){0};
}

static int device_io_create(const session *s, device_io *io) {
  *io = (device_io){.ctx = s->ctx, .ninputs = s->ninputs, .noutputs = s->noutputs};
  io->inputs = calloc((size_t)s->ninputs + 1, sizeof *io->inputs);
  io->outputs = calloc((size_t)s->noutputs + 1, sizeof *io->outputs);
  ic_status st = io->inputs && io->outputs ? IC_OK : IC_ERR_OUT_OF_MEMORY;
  for (int32_t i = 0; st == IC_OK && i < s->ninputs; i++) {
    st = ic_malloc(s->ctx, s->inputs[i].bytes ? s->inputs[i].bytes : 1, &io->inputs[i]);
    if (st == IC_OK) st = ic_memcpy_htod(s->ctx, io->inputs[i], s->inputs[i].data, s->inputs[i].bytes);
  }
  for (int32_t i = 0; st == IC_OK && i < s->noutputs; i++)
    st = ic_malloc(s->ctx, s->outputs[i].bytes ? s->outputs[i].bytes : 1, &io->outputs[i]);
  if (st == IC_OK) return EXIT_OK;
  int status = ic_failure("device memory", st);
  device_io_free(io);
  return status;
}

/* Runs prog into outputs[] (host memory): on the ref backend directly, on cuda through
 * device copies. */
static int run_program(const session *s, ic_program *prog, bool on_device, host_tensor *outputs) {
  ic_tensor *in = calloc((size_t)s->ninputs + 1, sizeof *in), *out = calloc((size_t)s->noutputs + 1, sizeof *out);
  device_io io = {0};
  int status = in && out ? EXIT_OK : ic_failure("running", IC_ERR_OUT_OF_MEMORY);
  if (status == EXIT_OK && on_device) status = device_io_create(s, &io);
  if (status == EXIT_OK) {
    tensor_views(s->inputs, s->ninputs, on_device ? io.inputs : NULL, in);
    tensor_views(outputs, s->noutputs, on_device ? io.outputs : NULL, out);
    ic_status st = ic_program_run(prog, in, s->ninputs, out, s->noutputs, NULL);
    if (st == IC_OK && on_device) st = ic_stream_synchronize(s->ctx, NULL);
    for (int32_t i = 0; st == IC_OK && on_device && i < s->noutputs; i++)
      st = ic_memcpy_dtoh(s->ctx, outputs[i].data, io.outputs[i], outputs[i].bytes);
    if (st != IC_OK) status = ic_failure("run failed", st);
  }
  if (on_device) device_io_free(&io);
  free(in);
  free(out);
  return status;
}

/* ---------------------------------------------------------------- reports */

static void print_value(ic_dtype dt, double v) {
  if (dtype_is_float(dt)) printf(" %.6g", v);
  else printf(" %.0f", v);
}

/* "y  f32[1000, 4096]  4096000 values", then min, max, mean, NaN/inf counts and the
 * first values. */
static void print_summary(const host_tensor *t) {
  char type[160];
  size_t nan = 0, inf = 0, finite = 0;
  double min = INFINITY, max = -INFINITY, sum = 0;
  for (size_t i = 0; i < t->count; i++) {
    double v = load_value(t->dtype, t->data, i);
    if (isnan(v)) nan++;
    else if (isinf(v)) inf++;
    else {
      finite++;
      sum += v;
      min = v < min ? v : min;
      max = v > max ? v : max;
    }
  }
  printf("%s  %s  %zu value%s\n", t->name, format_type(t->dtype, t->ndim, t->shape, type, sizeof type), t->count,
         t->count == 1 ? "" : "s");
  if (finite) {
    printf("  min");
    print_value(t->dtype, min);
    printf("  max");
    print_value(t->dtype, max);
    printf("  mean %.6g", sum / (double)finite);
  } else {
    printf("  no finite values");
  }
  printf("  nan %zu  inf %zu\n  first:", nan, inf);
  for (size_t i = 0; i < t->count && i < PREVIEW_VALUES; i++) print_value(t->dtype, load_value(t->dtype, t->data, i));
  printf("%s\n", t->count > PREVIEW_VALUES ? " ..." : "");
}

/* Compares an output with the ref backend's: max abs and ulp difference, bitwise equal. */
static void print_comparison(const host_tensor *got, const host_tensor *ref) {
  if (got->bytes == ref->bytes && memcmp(got->data, ref->data, got->bytes) == 0) {
    printf("  vs ref: bitwise equal\n");
    return;
  }
  bool is_float = dtype_is_float(got->dtype);
  unsigned width = (unsigned)ic_dtype_size(got->dtype) * 8;
  size_t differ = 0, nan_mismatch = 0;
  double max_abs = 0;
  uint64_t max_ulp = 0;
  for (size_t i = 0; i < got->count && i < ref->count; i++) {
    uint64_t ga = load_bits(got->dtype, got->data, i), rb = load_bits(ref->dtype, ref->data, i);
    if (ga == rb) continue;
    differ++;
    double a = load_value(got->dtype, got->data, i), b = load_value(ref->dtype, ref->data, i);
    if (isnan(a) || isnan(b)) {
      nan_mismatch += isnan(a) != isnan(b);
      continue;
    }
    double diff = fabs(a - b);
    max_abs = diff > max_abs || isnan(diff) ? diff : max_abs;
    uint64_t ulp = is_float ? ulp_distance(ga, rb, width) : 0;
    max_ulp = ulp > max_ulp ? ulp : max_ulp;
  }
  printf("  vs ref: NOT bitwise equal: %zu of %zu values differ; max abs diff %.6g", differ, got->count, max_abs);
  if (is_float) printf(", max ulp diff %" PRIu64, max_ulp);
  if (nan_mismatch) printf(", %zu NaN in one only", nan_mismatch);
  printf("\n");
}

static void print_inputs(const session *s) {
  char type[160];
  printf("inputs (seed %" PRIu64 "):", s->opt->seed);
  for (int32_t i = 0; i < s->ninputs; i++)
    printf("%s %s %s", i ? "," : "", s->inputs[i].name,
           format_type(s->inputs[i].dtype, s->inputs[i].ndim, s->inputs[i].shape, type, sizeof type));
  printf("%s\n", s->ninputs ? "" : " none");
}

/* "kernel 0 k0_mul_add_gelu_tanh: grid 32000 x 128 threads", from the step walk. */
static void print_kernels(const session *s) {
  for (int32_t i = 0; i < ic_program_step_count(s->prog); i++) {
    ic_step step;
    if (ic_program_step(s->prog, i, &step) != IC_OK || step.kind != IC_STEP_LAUNCH) continue;
    int64_t grid = -1;
    if (step.grid_expr < 0 || ic_program_eval(s->prog, step.grid_expr, s->symbols, &grid) != IC_OK) grid = -1;
    printf("kernel %" PRId32 " %s: ", step.kernel, step.kernel_name ? step.kernel_name : "?");
    if (grid >= 0) printf("grid %" PRId64 " x %" PRId32 " threads", grid, step.block);
    else printf("grid ? x %" PRId32 " threads", step.block);
    if (step.cluster > 1) printf(", clusters of %" PRId32, step.cluster);
    if (step.shared_bytes > 0) printf(", %" PRId32 " bytes of shared memory a block", step.shared_bytes);
    printf("\n");
  }
}

/* ---------------------------------------------------------------- commands */

/* The program part of ic_program_dump: everything before the first blank line (kernel
 * IR and sources follow it, and have their own dumps). */
static int print_program(const ic_program *prog) {
  char *dump = NULL;
  ic_status st = ic_program_dump(prog, &dump);
  if (st != IC_OK) return ic_failure("dumping the program", st);
  const char *blank = strstr(dump, "\n\n");
  int len = blank ? (int)(blank - dump + 1) : (int)strlen(dump);
  printf("== program ==\n%.*s", len, dump);
  ic_string_free(dump);
  return EXIT_OK;
}

static void print_kernel_texts(const ic_program *prog, bool source) {
  printf("== %s ==\n", source ? "cuda" : "kir");
  for (int32_t k = 0; k < ic_program_kernel_count(prog); k++) {
    const char *text = source ? ic_program_kernel_source(prog, k) : ic_program_kernel_ir(prog, k);
    if (k) printf("\n");
    if (!text) printf("// kernel %" PRId32 ": no %s for this backend\n", k, source ? "source" : "IR");
    else printf("%s%s", text, *text && text[strlen(text) - 1] == '\n' ? "" : "\n");
  }
}

static int cmd_compile(session *s) {
  const char *backend = s->opt->backend ? s->opt->backend : "cuda";
  bool cuda = strcmp(backend, "cuda") == 0;
  int status = open_context(s, s->opt->arch, cuda);
  if (status != EXIT_OK) return status;
  if (cuda && !s->opt->arch && !ic_context_has_device(s->ctx))
    fprintf(stderr, "ic: no GPU: compiling for %s only\n", ic_context_arch(s->ctx));
  status = compile_graph(s, backend, &s->prog);
  if (status != EXIT_OK) return status;
  if (s->opt->dumps & DUMP_GRAPH) {
    char *text = NULL;
    ic_status st = ic_graph_print(s->graph, &text);
    if (st != IC_OK) return ic_failure("printing the graph", st);
    printf("== graph ==\n%s", text);
    ic_string_free(text);
  }
  if (s->opt->dumps & DUMP_PROGRAM) status = print_program(s->prog);
  if (s->opt->dumps & DUMP_KIR) print_kernel_texts(s->prog, false);
  if (s->opt->dumps & DUMP_CUDA) print_kernel_texts(s->prog, true);
  return status;
}

static int cmd_run(session *s) {
  int status = check_sizes(s);
  if (status == EXIT_OK) status = open_context(s, NULL, false);
  if (status != EXIT_OK) return status;
  bool gpu = ic_context_has_device(s->ctx);
  const char *backend = s->opt->backend ? s->opt->backend : gpu ? "cuda" : "ref";
  if (strcmp(backend, "cuda") == 0 && !gpu) {
    fprintf(stderr, "ic: no GPU: cannot run on the cuda backend (use --backend ref)\n");
    return EXIT_FAIL;
  }
  if (!gpu && !s->opt->backend) fprintf(stderr, "ic: no GPU: running on the ref backend\n");
  bool on_device = strcmp(backend, "cuda") == 0;
  status = compile_graph(s, backend, &s->prog);
  if (status == EXIT_OK) status = prepare_tensors(s);
  if (status == EXIT_OK) status = run_program(s, s->prog, on_device, s->outputs);
  if (status != EXIT_OK) return status;
  print_inputs(s);

  /* On cuda, the same graph on the ref backend, for comparison. The ref backend cannot
   * run PTX: a graph with inline asm is printed unchecked. */
  ic_program *ref = NULL;
  host_tensor *ref_out = NULL;
  bool compare = on_device;
  if (on_device && graph_has_asm(s)) {
    printf("not checked against the ref backend: it cannot run PTX (the graph has inline_asm)\n");
    compare = false;
  }
  if (compare) {
    ref_out = calloc((size_t)s->noutputs + 1, sizeof *ref_out);
    status = ref_out ? compile_graph(s, "ref", &ref) : ic_failure("allocating", IC_ERR_OUT_OF_MEMORY);
    for (int32_t i = 0; status == EXIT_OK && i < s->noutputs; i++) {
      ref_out[i] = s->outputs[i];
      ref_out[i].data = NULL;
      status = host_tensor_alloc(&ref_out[i]);
    }
    if (status == EXIT_OK) status = run_program(s, ref, false, ref_out);
  }
  printf("outputs (%s backend):\n", backend);
  for (int32_t i = 0; i < s->noutputs; i++) {
    print_summary(&s->outputs[i]);
    if (compare && status == EXIT_OK) print_comparison(&s->outputs[i], &ref_out[i]);
  }
  host_tensors_free(ref_out, s->noutputs);
  ic_program_release(ref);
  return status;
}

/* Times back-to-back runs of the program on device memory: warm-up runs, then --iters
 * runs and one synchronization. Returns the ms per run in *ms. */
static int time_runs(const session *s, const device_io *io, double *ms) {
  ic_tensor *in = calloc((size_t)s->ninputs + 1, sizeof *in), *out = calloc((size_t)s->noutputs + 1, sizeof *out);
  ic_status st = in && out ? IC_OK : IC_ERR_OUT_OF_MEMORY;
  if (st == IC_OK) {
    tensor_views(s->inputs, s->ninputs, io->inputs, in);
    tensor_views(s->outputs, s->noutputs, io->outputs, out);
  }
  for (int i = 0; st == IC_OK && i < WARMUP_RUNS; i++) st = ic_program_run(s->prog, in, s->ninputs, out, s->noutputs, NULL);
  if (st == IC_OK) st = ic_stream_synchronize(s->ctx, NULL);
  double t0 = host_now_ms();
  for (int64_t i = 0; st == IC_OK && i < s->opt->iters; i++)
    st = ic_program_run(s->prog, in, s->ninputs, out, s->noutputs, NULL);
  if (st == IC_OK) st = ic_stream_synchronize(s->ctx, NULL);
  *ms = (host_now_ms() - t0) / (double)s->opt->iters;
  free(in);
  free(out);
  return st == IC_OK ? EXIT_OK : ic_failure("run failed", st);
}

static int cmd_bench(session *s) {
  int status = check_sizes(s);
  if (status == EXIT_OK) status = open_context(s, NULL, false);
  if (status != EXIT_OK) return status;
  if (!ic_context_has_device(s->ctx)) {
    fprintf(stderr, "ic: no GPU: bench needs one; nothing was measured (exit 77: skipped)\n");
    return EXIT_SKIP;
  }
  device_io io = {0};
  double ms = 0;
  status = compile_graph(s, "cuda", &s->prog);
  if (status == EXIT_OK) status = prepare_tensors(s);
  if (status == EXIT_OK) status = device_io_create(s, &io);
  if (status == EXIT_OK) status = time_runs(s, &io, &ms);
  device_io_free(&io);
  if (status != EXIT_OK) return status;
  double bytes = 0;
  for (int32_t i = 0; i < s->ninputs; i++) bytes += (double)s->inputs[i].bytes;
  for (int32_t i = 0; i < s->noutputs; i++) bytes += (double)s->outputs[i].bytes;
  print_inputs(s);
  print_kernels(s);
  printf("time per run: %.4f ms (wall clock of %" PRId64 " back-to-back runs after %d warm-up runs, synchronized at "
         "the end)\n",
         ms, s->opt->iters, WARMUP_RUNS);
  printf("moved: %.4g MB of inputs and outputs, %.1f GB/s\n", bytes / 1e6, ms > 0 ? bytes / (ms * 1e6) : 0.0);
  return EXIT_OK;
}

int main(int argc, char **argv) {
  options opt;
  int status = parse_args(argc, argv, &opt);
  if (status >= 0) return status;
  session s = {.opt = &opt};
  status = load_graph(&s);
  if (status == EXIT_OK) {
    switch (opt.cmd) {
    case CMD_COMPILE: status = cmd_compile(&s); break;
    case CMD_RUN: status = cmd_run(&s); break;
    case CMD_BENCH: status = cmd_bench(&s); break;
    case CMD_COUNT: break;
    }
  }
  session_free(&s);
  fflush(stdout);
  return status;
}
