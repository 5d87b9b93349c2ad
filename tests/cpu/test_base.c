/* lib/base: errors, logging, growable arrays, string buffers, dtypes and rounding; and
 * lib/cuda: the libcuda loader (no GPU here) and the libnvrtc loader. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "base/base.h"
#include "cuda/cuda_api.h"
#include "base/dtype.h"

/* ---------------------------------------------------------------- helpers */

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

/* Exact decoders, independent of the library: value of f16 / bf16 bits as double. */
static double f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0x1f) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp(m, -24);
  else v = ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

static double bf16_value(uint16_t h) { return (double)bits_f32((uint32_t)h << 16); }

/* The same value, bit for bit (so -0 differs from +0); NaN equals NaN. */
static int same_double(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return f64_bits(a) == f64_bits(b);
}

#define ck_assert_same(a, b)                                                               \
  do {                                                                                     \
    double a_ = (a), b_ = (b);                                                             \
    ck_assert_msg(same_double(a_, b_), "%s = %.17g (0x%016llx), want %.17g (0x%016llx)", #a, \
                  a_, (unsigned long long)f64_bits(a_), b_, (unsigned long long)f64_bits(b_)); \
  } while (0)

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 16);
}

/* ---------------------------------------------------------------- errors */

START_TEST(test_status_strings) {
#define CHECK_STATUS_(name, value, desc)                  \
  ck_assert_int_eq((int)name, value);                     \
  ck_assert_str_eq(ic_status_string(name), desc);
  IC_STATUS_LIST(CHECK_STATUS_)
#undef CHECK_STATUS_
  ck_assert_str_eq(ic_status_string((ic_status)11), "unknown status");
  ck_assert_str_eq(ic_status_string((ic_status)-1), "unknown status");
  ck_assert_str_eq(ic_status_string((ic_status)1000), "unknown status");
  ck_assert_int_eq(ic_version(), IC_VERSION_NUMBER);
  ck_assert_int_eq(ic_version(), 100);
}
END_TEST

static void *thread_reads_error(void *arg) {
  char *seen = arg;
  snprintf(seen, 64, "%s", ic_last_error());
  error_set(IC_ERR_INTERNAL, "thread message");
  snprintf(seen + 64, 64, "%s", ic_last_error());
  return NULL;
}

START_TEST(test_last_error_per_thread) {
  error_set(IC_OK, "%s", "");
  ck_assert_str_eq(ic_last_error(), "");
  ck_assert_int_eq(error_set(IC_ERR_INVALID_ARGUMENT, "bad %s %d", "dim", 3),
                   IC_ERR_INVALID_ARGUMENT);
  ck_assert_str_eq(ic_last_error(), "bad dim 3");
  char seen[128] = {0};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, thread_reads_error, seen), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_str_eq(seen, "");
  ck_assert_str_eq(seen + 64, "thread message");
  ck_assert_str_eq(ic_last_error(), "bad dim 3");
  /* A message may quote the current one. */
  error_set(IC_ERR_COMPILE, "again: %s", ic_last_error());
  ck_assert_str_eq(ic_last_error(), "again: bad dim 3");
}
END_TEST

START_TEST(test_error_prefix) {
  error_set(IC_ERR_COMPILE, "line 3: syntax");
  error_prefix("compiling kernel k%d", 0);
  ck_assert_str_eq(ic_last_error(), "compiling kernel k0: line 3: syntax");
  error_prefix("ic_compile");
  ck_assert_str_eq(ic_last_error(), "ic_compile: compiling kernel k0: line 3: syntax");

  /* Over-long messages truncate and stay terminated. */
  char *big = malloc(10000);
  ck_assert_ptr_nonnull(big);
  memset(big, 'x', 9999);
  big[9999] = '\0';
  error_set(IC_ERR_INTERNAL, "%s", big);
  size_t n = strlen(ic_last_error());
  ck_assert_uint_gt(n, 1000);
  ck_assert_uint_lt(n, 10000);
  error_prefix("pre");
  ck_assert_uint_eq(strlen(ic_last_error()), n);
  ck_assert_int_eq(strncmp(ic_last_error(), "pre: xxx", 8), 0);
  error_prefix("%s", big);
  ck_assert_uint_eq(strlen(ic_last_error()), n);
  ck_assert_int_eq(ic_last_error()[0], 'x');
  free(big);

  error_set(IC_OK, "%s", "");
  error_prefix("only");
  ck_assert_str_eq(ic_last_error(), "only");
}
END_TEST

/* ---------------------------------------------------------------- arrays and strings */

START_TEST(test_sbuf) {
  sbuf sb = {0};
  char *s = sbuf_take(&sb);
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(s, "");
  free(s);

  sbuf_puts(&sb, "a");
  sbuf_printf(&sb, "%d-%s", 42, "b");
  sbuf_puts(&sb, "");
  ck_assert_uint_eq(sb.len, 5);
  ck_assert_str_eq(sb.data, "a42-b");

  /* Long appends grow the buffer; the content stays exact. */
  char *chunk = malloc(5001);
  ck_assert_ptr_nonnull(chunk);
  for (int i = 0; i < 5000; i++) chunk[i] = (char)('a' + i % 26);
  chunk[5000] = '\0';
  for (int i = 0; i < 20; i++) {
    sbuf_printf(&sb, "[%d]%s", i, chunk);
    sbuf_puts(&sb, chunk);
  }
  size_t want = 5;
  for (int i = 0; i < 20; i++) want += (size_t)snprintf(NULL, 0, "[%d]", i) + 10000;
  ck_assert_uint_eq(sb.len, want);
  ck_assert_uint_eq(strlen(sb.data), want);
  ck_assert_int_eq(memcmp(sb.data + 5, "[0]abc", 6), 0);
  ck_assert_int_eq(memcmp(sb.data + want - 5000, chunk, 5000), 0);
  s = sbuf_take(&sb);
  ck_assert_ptr_nonnull(s);
  ck_assert_uint_eq(strlen(s), want);
  ck_assert_ptr_null(sb.data);
  ck_assert_uint_eq(sb.len, 0);
  free(s);

  /* A single printf much larger than the buffer. */
  sbuf_printf(&sb, "%s%s%s", chunk, chunk, chunk);
  ck_assert_uint_eq(sb.len, 15000);
  sbuf_free(&sb);
  ck_assert_ptr_null(sb.data);
  free(chunk);

  /* oom is sticky: appends are ignored and take gives NULL. */
  sbuf_puts(&sb, "x");
  sb.oom = true;
  sbuf_puts(&sb, "y");
  sbuf_printf(&sb, "%d", 1);
  ck_assert_ptr_null(sbuf_take(&sb));
  ck_assert(!sb.oom);
  ck_assert_ptr_null(sb.data);

  s = str_dup("hello");
  ck_assert_str_eq(s, "hello");
  free(s);
  ck_assert_ptr_null(str_dup(NULL));
}
END_TEST

typedef struct ints {
  int64_t *items;
  int32_t count, cap;
} ints;

START_TEST(test_grow) {
  ints v = {0};
  for (int64_t i = 0; i < 10000; i++) ck_assert(VEC_PUSH(v, i * 3));
  ck_assert_int_eq(v.count, 10000);
  ck_assert_int_ge(v.cap, 10000);
  for (int32_t i = 0; i < v.count; i++) ck_assert_int_eq(v.items[i], (int64_t)i * 3);

  void *items = v.items;
  int32_t cap = v.cap;
  ck_assert(vec_grow((void **)&v.items, &v.cap, 5, sizeof *v.items)); /* already room */
  ck_assert_ptr_eq(v.items, items);
  ck_assert_int_eq(v.cap, cap);
  /* An impossible size fails and leaves the array intact. */
  ck_assert(!vec_grow((void **)&v.items, &v.cap, INT32_MAX, SIZE_MAX / 4));
  ck_assert(!vec_grow((void **)&v.items, &v.cap, -1, sizeof *v.items));
  ck_assert_ptr_eq(v.items, items);
  ck_assert_int_eq(v.cap, cap);
  ck_assert_int_eq(v.items[9999], 29997);
  free(v.items);

  char *c = NULL;
  int32_t ccap = 0;
  ck_assert(vec_grow((void **)&c, &ccap, 1, 1));
  ck_assert_int_ge(ccap, 1);
  ck_assert(vec_grow((void **)&c, &ccap, 1000, 1));
  ck_assert_int_ge(ccap, 1000);
  free(c);
}
END_TEST

/* ---------------------------------------------------------------- logging */

typedef struct captured {
  int calls;
  ic_log_level level;
  char message[256];
} captured;

static void capture(void *user, ic_log_level level, const char *message) {
  captured *c = user;
  c->calls++;
  c->level = level;
  snprintf(c->message, sizeof c->message, "%s", message);
}

START_TEST(test_logger) {
  captured c = {0};
  logger lg;
  unsetenv("IC_LOG");
  logger_init(&lg, capture, &c, IC_LOG_WARN);
  ck_assert_int_eq(lg.level, IC_LOG_WARN);
  log_msg(&lg, IC_LOG_ERROR, "bad %d", 1);
  ck_assert_int_eq(c.calls, 1);
  ck_assert_int_eq(c.level, IC_LOG_ERROR);
  ck_assert_str_eq(c.message, "ic: error: bad 1");
  log_msg(&lg, IC_LOG_WARN, "careful %s", "now");
  ck_assert_int_eq(c.calls, 2);
  ck_assert_int_eq(c.level, IC_LOG_WARN);
  ck_assert_str_eq(c.message, "ic: warn: careful now");
  log_msg(&lg, IC_LOG_INFO, "hidden");
  log_msg(&lg, IC_LOG_DEBUG, "hidden");
  log_msg(&lg, IC_LOG_OFF, "hidden");
  ck_assert_int_eq(c.calls, 2);

  logger_init(&lg, capture, &c, IC_LOG_DEBUG);
  log_msg(&lg, IC_LOG_DEBUG, "d");
  ck_assert_str_eq(c.message, "ic: debug: d");
  log_msg(&lg, IC_LOG_INFO, "i");
  ck_assert_str_eq(c.message, "ic: info: i");
  ck_assert_int_eq(c.level, IC_LOG_INFO);
  ck_assert_int_eq(c.calls, 4);

  /* A long message arrives whole. */
  char *big = malloc(5001);
  ck_assert_ptr_nonnull(big);
  memset(big, 'z', 5000);
  big[5000] = '\0';
  log_msg(&lg, IC_LOG_INFO, "%s", big);
  ck_assert_int_eq(c.calls, 5);
  ck_assert_int_eq(strncmp(c.message, "ic: info: zzz", 13), 0);
  free(big);

  /* IC_LOG, when no level is given. */
  static const struct {
    const char *env;
    ic_log_level want;
  } cases[] = {{"error", IC_LOG_ERROR}, {"warn", IC_LOG_WARN},  {"info", IC_LOG_INFO},
               {"debug", IC_LOG_DEBUG}, {"DEBUG", IC_LOG_DEBUG}, {"0", IC_LOG_OFF},
               {"1", IC_LOG_ERROR},     {"2", IC_LOG_WARN},      {"3", IC_LOG_INFO},
               {"4", IC_LOG_DEBUG},     {"5", IC_LOG_OFF},       {"verbose", IC_LOG_OFF},
               {"", IC_LOG_OFF},        {"-1", IC_LOG_OFF},      {"2x", IC_LOG_OFF}};
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    setenv("IC_LOG", cases[i].env, 1);
    logger_init(&lg, NULL, NULL, IC_LOG_OFF);
    ck_assert_msg(lg.level == cases[i].want, "IC_LOG=%s gave %d", cases[i].env, (int)lg.level);
  }
  /* An explicit level wins over IC_LOG. */
  setenv("IC_LOG", "debug", 1);
  logger_init(&lg, capture, &c, IC_LOG_ERROR);
  ck_assert_int_eq(lg.level, IC_LOG_ERROR);
  ck_assert_ptr_eq(lg.user, &c);
  logger_init(&lg, capture, &c, IC_LOG_OFF);
  ck_assert_int_eq(lg.level, IC_LOG_DEBUG);
  unsetenv("IC_LOG");
  logger_init(&lg, capture, &c, IC_LOG_OFF);
  ck_assert_int_eq(lg.level, IC_LOG_OFF);
  int before = c.calls;
  log_msg(&lg, IC_LOG_ERROR, "off");
  ck_assert_int_eq(c.calls, before);

  log_msg(NULL, IC_LOG_ERROR, "nothing");
}
END_TEST

/* ---------------------------------------------------------------- dtypes */

START_TEST(test_dtype_tables) {
  static const struct {
    ic_dtype dt;
    const char *name;
    size_t size;
    bool is_float, is_integer;
  } cases[] = {
      {IC_BOOL, "bool", 1, false, false},  {IC_U8, "u8", 1, false, true},
      {IC_I8, "i8", 1, false, true},       {IC_I16, "i16", 2, false, true},
      {IC_I32, "i32", 4, false, true},     {IC_I64, "i64", 8, false, true},
      {IC_F16, "f16", 2, true, false},     {IC_BF16, "bf16", 2, true, false},
      {IC_F32, "f32", 4, true, false},     {IC_F64, "f64", 8, true, false},
      {IC_F8E4M3, "f8e4m3", 1, true, false}, {IC_F8E5M2, "f8e5m2", 1, true, false},
      {IC_U16, "u16", 2, false, true},     {IC_U32, "u32", 4, false, true},
      {IC_U64, "u64", 8, false, true},
  };
  ck_assert_int_eq(ARRAY_LEN(cases), IC_DTYPE_COUNT - 1);
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    ck_assert_str_eq(ic_dtype_name(cases[i].dt), cases[i].name);
    ck_assert_uint_eq(ic_dtype_size(cases[i].dt), cases[i].size);
    ck_assert(dtype_valid(cases[i].dt));
    ck_assert_int_eq(dtype_is_float(cases[i].dt), cases[i].is_float);
    ck_assert_int_eq(dtype_is_integer(cases[i].dt), cases[i].is_integer);
  }
  static const ic_dtype bad[] = {IC_DTYPE_INVALID, IC_DTYPE_COUNT, IC_DTYPE_AUTO, (ic_dtype)-1};
  for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
    ck_assert_str_eq(ic_dtype_name(bad[i]), "invalid");
    ck_assert_uint_eq(ic_dtype_size(bad[i]), 0);
    ck_assert(!dtype_valid(bad[i]));
    ck_assert(!dtype_is_float(bad[i]));
    ck_assert(!dtype_is_integer(bad[i]));
  }
}
END_TEST

START_TEST(test_round_f16) {
  const ic_dtype H = IC_F16;
  ck_assert_same(dtype_round(H, 1.0 / 3.0), f16_value(0x3555));
  ck_assert_same(dtype_round(H, 1.0), 1.0);
  ck_assert_same(dtype_round(H, 65504.0), 65504.0);
  ck_assert_same(dtype_round(H, 65519.99), 65504.0);
  ck_assert_same(dtype_round(H, 65520.0), INFINITY);
  ck_assert_same(dtype_round(H, -65520.0), -INFINITY);
  ck_assert_same(dtype_round(H, 1e300), INFINITY);
  ck_assert_same(dtype_round(H, -INFINITY), -INFINITY);
  /* Subnormals. */
  ck_assert_same(dtype_round(H, ldexp(1, -24)), ldexp(1, -24));
  ck_assert_same(dtype_round(H, ldexp(1, -25)), 0.0); /* tie to even: zero */
  ck_assert_same(dtype_round(H, -ldexp(1, -25)), -0.0);
  ck_assert_same(dtype_round(H, ldexp(1, -25) * (1 + ldexp(1, -30))), ldexp(1, -24));
  ck_assert_same(dtype_round(H, 3 * ldexp(1, -25)), ldexp(2, -24)); /* tie to even: 2 */
  ck_assert_same(dtype_round(H, 5 * ldexp(1, -25)), ldexp(2, -24));
  ck_assert_same(dtype_round(H, ldexp(1, -14) - ldexp(1, -25)), ldexp(1, -14));
  ck_assert_same(dtype_round(H, ldexp(1023, -24)), ldexp(1023, -24));
  ck_assert_same(dtype_round(H, 1e-30), 0.0);
  ck_assert_same(dtype_round(H, 4.9e-324), 0.0);
  /* Ties to even between normals. */
  ck_assert_same(dtype_round(H, 1 + ldexp(1, -11)), 1.0);
  ck_assert_same(dtype_round(H, 1 + 3 * ldexp(1, -11)), 1 + ldexp(1, -9));
  ck_assert_same(dtype_round(H, 2049.0), 2048.0);
  ck_assert_same(dtype_round(H, 2051.0), 2052.0);
  /* Rounds once, from the double: through float the 2^-40 would be lost and the tie
   * would go to 1. */
  ck_assert_same(dtype_round(H, 1 + ldexp(1, -11) + ldexp(1, -40)), 1 + ldexp(1, -10));
  ck_assert_same(dtype_round(H, 65504 + 16 - ldexp(1, -30)), 65504.0);
  ck_assert(isnan(dtype_round(H, NAN)));
  ck_assert_same(dtype_round(H, -0.0), -0.0);
  ck_assert_same(dtype_round(H, 0.0), 0.0);

  /* The bits helpers on the same cases. */
  ck_assert_uint_eq(f32_to_f16_bits(1.0f / 3.0f), 0x3555);
  ck_assert_uint_eq(f32_to_f16_bits(65504.0f), 0x7bff);
  ck_assert_uint_eq(f32_to_f16_bits(65519.996f), 0x7bff);
  ck_assert_uint_eq(f32_to_f16_bits(65520.0f), 0x7c00);
  ck_assert_uint_eq(f32_to_f16_bits(-65520.0f), 0xfc00);
  ck_assert_uint_eq(f32_to_f16_bits(1e30f), 0x7c00);
  ck_assert_uint_eq(f32_to_f16_bits(INFINITY), 0x7c00);
  ck_assert_uint_eq(f32_to_f16_bits(ldexpf(1, -24)), 0x0001);
  ck_assert_uint_eq(f32_to_f16_bits(ldexpf(1, -25)), 0x0000);
  ck_assert_uint_eq(f32_to_f16_bits(-ldexpf(1, -25)), 0x8000);
  ck_assert_uint_eq(f32_to_f16_bits(3 * ldexpf(1, -25)), 0x0002);
  ck_assert_uint_eq(f32_to_f16_bits(ldexpf(1, -14) - ldexpf(1, -25)), 0x0400);
  ck_assert_uint_eq(f32_to_f16_bits(1 + ldexpf(1, -11)), 0x3c00);
  ck_assert_uint_eq(f32_to_f16_bits(1 + 3 * ldexpf(1, -11)), 0x3c02);
  ck_assert_uint_eq(f32_to_f16_bits(bits_f32(0x00000001)), 0x0000); /* f32 subnormal */
  ck_assert_uint_eq(f32_to_f16_bits(-0.0f), 0x8000);
  /* Every NaN becomes 0x7fff, as cvt.rn.f16.f32 does on the GPU. */
  ck_assert_uint_eq(f32_to_f16_bits(bits_f32(0x7fc00000)), 0x7fff);
  ck_assert_uint_eq(f32_to_f16_bits(bits_f32(0x7f800001)), 0x7fff);
  ck_assert_uint_eq(f32_to_f16_bits(bits_f32(0xffa00000)), 0x7fff);
  ck_assert_uint_eq(f32_to_f16_bits(bits_f32(0x7fffffff)), 0x7fff);

  ck_assert_uint_eq(f32_bits(f16_bits_to_f32(0x3c00)), f32_bits(1.0f));
  ck_assert_uint_eq(f32_bits(f16_bits_to_f32(0x0001)), f32_bits(ldexpf(1, -24)));
  ck_assert_uint_eq(f32_bits(f16_bits_to_f32(0x8000)), 0x80000000u);
  ck_assert_uint_eq(f32_bits(f16_bits_to_f32(0x7c00)), 0x7f800000u);
  ck_assert_uint_eq(f32_bits(f16_bits_to_f32(0xfc00)), 0xff800000u);
  ck_assert_uint_eq(f32_bits(f16_bits_to_f32(0x7e00)), 0x7fffffffu); /* as cvt.f32.f16 */
  ck_assert_uint_eq(f32_bits(f16_bits_to_f32(0xfc01)), 0x7fffffffu);

  /* Every f16: decodes exactly and encodes back to itself. */
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = f16_bits_to_f32((uint16_t)h);
    double want = f16_value((uint16_t)h);
    if (isnan(want)) {
      ck_assert_uint_eq(f32_bits(f), 0x7fffffffu);
      ck_assert_uint_eq(f32_to_f16_bits(f), 0x7fff);
      continue;
    }
    ck_assert_same((double)f, want);
    ck_assert_uint_eq(f32_to_f16_bits(f), h);
    ck_assert_same(dtype_round(IC_F16, want), want);
  }
}
END_TEST

START_TEST(test_round_bf16) {
  const ic_dtype B = IC_BF16;
  ck_assert_same(dtype_round(B, 1.0 / 3.0), bf16_value(0x3eab));
  ck_assert_same(dtype_round(B, 1.0), 1.0);
  const double max = bf16_value(0x7f7f);
  ck_assert_same(dtype_round(B, max), max);
  ck_assert_same(dtype_round(B, max + ldexp(1, 119) - ldexp(1, 90)), max);
  ck_assert_same(dtype_round(B, max + ldexp(1, 119)), INFINITY); /* tie, odd: up */
  ck_assert_same(dtype_round(B, 1e39), INFINITY); /* beyond f32 too */
  ck_assert_same(dtype_round(B, -1e39), -INFINITY);
  ck_assert_same(dtype_round(B, ldexp(1, -133)), ldexp(1, -133));
  ck_assert_same(dtype_round(B, ldexp(1, -134)), 0.0);
  ck_assert_same(dtype_round(B, 3 * ldexp(1, -134)), ldexp(2, -133));
  ck_assert_same(dtype_round(B, 1 + ldexp(1, -8)), 1.0);
  ck_assert_same(dtype_round(B, 1 + 3 * ldexp(1, -8)), 1 + ldexp(1, -6));
  ck_assert_same(dtype_round(B, 1 + ldexp(1, -8) + ldexp(1, -40)), 1 + ldexp(1, -7));
  ck_assert_same(dtype_round(B, 257.0), 256.0);
  ck_assert_same(dtype_round(B, 259.0), 260.0);
  ck_assert(isnan(dtype_round(B, NAN)));
  ck_assert_same(dtype_round(B, -0.0), -0.0);

  ck_assert_uint_eq(f32_to_bf16_bits(1.0f / 3.0f), 0x3eab);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x7f7fffff)), 0x7f80);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x7f7f7fff)), 0x7f7f);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x3f808000)), 0x3f80);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x3f818000)), 0x3f82);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x00008000)), 0x0000);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x00018000)), 0x0002);
  ck_assert_uint_eq(f32_to_bf16_bits(-0.0f), 0x8000);
  ck_assert_uint_eq(f32_to_bf16_bits(-INFINITY), 0xff80);
  /* Every NaN becomes 0x7fff, as cvt.rn.bf16.f32 does on the GPU. */
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x7fc00000)), 0x7fff);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x7f800001)), 0x7fff);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0xffa00000)), 0x7fff);
  ck_assert_uint_eq(f32_to_bf16_bits(bits_f32(0x7fffffff)), 0x7fff);
  ck_assert_uint_eq(f32_bits(bf16_bits_to_f32(0x3eab)), 0x3eab0000u);
  ck_assert_uint_eq(f32_bits(bf16_bits_to_f32(0xffe0)), 0xffe00000u);
}
END_TEST

START_TEST(test_round_other) {
  const ic_dtype I = IC_I32;
  ck_assert_same(dtype_round(I, 3.7), 3.0);
  ck_assert_same(dtype_round(I, -3.7), -3.0);
  ck_assert_same(dtype_round(I, 2147483647.0), 2147483647.0);
  ck_assert_same(dtype_round(I, 2147483647.9), 2147483647.0);
  ck_assert_same(dtype_round(I, 3e9), 2147483647.0);
  ck_assert_same(dtype_round(I, -2147483648.9), -2147483648.0);
  ck_assert_same(dtype_round(I, -3e9), -2147483648.0);
  ck_assert_same(dtype_round(I, INFINITY), 2147483647.0);
  ck_assert_same(dtype_round(I, -INFINITY), -2147483648.0);
  ck_assert(dtype_round(I, NAN) == 0.0);
  ck_assert(dtype_round(I, -0.5) == 0.0);

  ck_assert_same(dtype_round(IC_BOOL, 0.0), 0.0);
  ck_assert_same(dtype_round(IC_BOOL, -0.0), 0.0);
  ck_assert_same(dtype_round(IC_BOOL, 0.5), 1.0);
  ck_assert_same(dtype_round(IC_BOOL, -7.0), 1.0);
  ck_assert_same(dtype_round(IC_BOOL, NAN), 1.0);

  ck_assert_same(dtype_round(IC_F32, 1.0 / 3.0), (double)(1.0f / 3.0f));
  ck_assert_same(dtype_round(IC_F32, 1e39), INFINITY);
  ck_assert_same(dtype_round(IC_F64, 1.0 / 3.0), 1.0 / 3.0);

  /* fp8 (not compiled yet, but rounded like a cast): e4m3fn has no inf, e5m2 has. */
  ck_assert_same(dtype_round(IC_F8E4M3, 448.0), 448.0);
  ck_assert_same(dtype_round(IC_F8E4M3, 464.0), 448.0);
  ck_assert(isnan(dtype_round(IC_F8E4M3, 465.0)));
  ck_assert(isnan(dtype_round(IC_F8E4M3, INFINITY)));
  ck_assert_same(dtype_round(IC_F8E4M3, ldexp(1, -9)), ldexp(1, -9));
  ck_assert_same(dtype_round(IC_F8E4M3, 0.3), 0.3125);
  ck_assert_same(dtype_round(IC_F8E5M2, 57344.0), 57344.0);
  ck_assert_same(dtype_round(IC_F8E5M2, 61440.0), INFINITY);
  ck_assert_same(dtype_round(IC_F8E5M2, ldexp(1, -16)), ldexp(1, -16));
  ck_assert_same(dtype_round(IC_F8E5M2, 0.3), 0.3125);
}
END_TEST

#if defined(__FLT16_MAX__) && (defined(__x86_64__) || defined(__aarch64__))
#define HAVE_FLOAT16 1
__extension__ typedef _Float16 ref_f16;
static uint16_t ref_f16_bits_from_double(double d) {
  ref_f16 h = (ref_f16)d;
  uint16_t u;
  memcpy(&u, &h, sizeof u);
  return u;
}
#endif

/* The classic bf16 rounding, for finite floats. */
static uint16_t ref_bf16_bits(float f) {
  uint32_t u = f32_bits(f);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

START_TEST(test_round_sweep) {
  for (int i = 0; i < 1000000; i++) {
    uint32_t u = rnd32();
    if (i & 1) u = (u & 0x8fffffffu) | 0x30000000u; /* bias towards f16's range */
    float x = bits_f32(u);
    uint16_t h = f32_to_f16_bits(x);
    uint16_t b = f32_to_bf16_bits(x);
    if (isnan(x)) {
      ck_assert_uint_eq(h, 0x7fff);
      ck_assert_uint_eq(b, 0x7fff);
      continue;
    }
    double rh = dtype_round(IC_F16, (double)x);
    double rb = dtype_round(IC_BF16, (double)x);
    ck_assert_msg(same_double((double)f16_bits_to_f32(h), rh), "f16 of 0x%08x", u);
    ck_assert_msg(same_double((double)bf16_bits_to_f32(b), rb), "bf16 of 0x%08x", u);
    ck_assert_msg(b == ref_bf16_bits(x), "bf16 of 0x%08x: 0x%04x", u, b);
#ifdef HAVE_FLOAT16
    ck_assert_msg(h == ref_f16_bits_from_double((double)x), "f16 of 0x%08x: 0x%04x", u, h);
#endif
  }
#ifdef HAVE_FLOAT16
  /* Doubles that are no floats: dtype_round rounds once, like the compiler's
   * double -> _Float16. */
  for (int i = 0; i < 500000; i++) {
    uint64_t u = ((uint64_t)rnd32() << 32) | rnd32();
    u = (u & 0x800fffffffffffffull) | ((uint64_t)(1023 - 30 + (rnd32() % 48)) << 52);
    double d;
    memcpy(&d, &u, sizeof d);
    ck_assert_msg(same_double(dtype_round(IC_F16, d), f16_value(ref_f16_bits_from_double(d))),
                  "f16 of %a", d);
  }
#endif
}
END_TEST

/* ---------------------------------------------------------------- libcuda, libnvrtc */

START_TEST(test_driver) {
  error_set(IC_OK, "%s", "");
  const cuda_driver_api *drv = cuda_driver_get();
  if (drv) {
    /* A machine with a GPU: the table is complete. */
    ck_assert(drv->cuInit != NULL);
    ck_assert(drv->cuStreamSynchronize != NULL && drv->cuLaunchKernel != NULL);
    ck_assert_int_ge(drv->driver_version, 12000);
    ck_assert_ptr_eq(cuda_driver_get(), drv);
    return;
  }
  ck_assert_str_ne(ic_last_error(), "");
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "CUDA"));
  /* The failure is remembered and recorded again, on every thread. */
  error_set(IC_OK, "%s", "");
  ck_assert_ptr_null(cuda_driver_get());
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "CUDA"));

  ck_assert_int_eq(cuda_error(NULL, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc"),
                   IC_ERR_OUT_OF_MEMORY);
  ck_assert_str_eq(ic_last_error(), "cuMemAlloc: CUDA error 2");
  ck_assert_int_eq(cuda_error(NULL, CUDA_ERROR_INVALID_VALUE, "launch"), IC_ERR_CUDA);
  ck_assert_str_eq(ic_last_error(), "launch: CUDA error 1");
}
END_TEST

/* The public element conversions agree with the library's own rounding. */
START_TEST(test_element_store_load) {
  for (uint32_t h = 0; h < 0x10000; h++) { /* every f16 and bf16 pattern round trips */
    uint16_t bits = (uint16_t)h, back = 0;
    double v = ic_element_load(IC_F16, &bits);
    if (!isnan(v)) {
      ck_assert_int_eq(ic_element_store(IC_F16, v, &back), IC_OK);
      ck_assert_uint_eq(back, bits);
    }
    v = ic_element_load(IC_BF16, &bits);
    if (!isnan(v)) {
      ck_assert_int_eq(ic_element_store(IC_BF16, v, &back), IC_OK);
      ck_assert_uint_eq(back, bits);
    }
  }
  unsigned char b[8];
  ck_assert_int_eq(ic_element_store(IC_F8E4M3, 1000.0, b), IC_OK);
  ck_assert_uint_eq(b[0], 0x7f); /* overflow is NaN for e4m3fn */
  ck_assert_int_eq(ic_element_store(IC_F8E5M2, -1e9, b), IC_OK);
  ck_assert_uint_eq(b[0], 0xfc); /* -inf */
  int64_t i64 = 0;
  ck_assert_int_eq(ic_element_store(IC_I64, 1e30, &i64), IC_OK);
  ck_assert(i64 == INT64_MAX);
  ck_assert_int_eq(ic_element_store(IC_I64, -1e30, &i64), IC_OK);
  ck_assert(i64 == INT64_MIN);
  int32_t i32 = 7;
  ck_assert_int_eq(ic_element_store(IC_I32, NAN, &i32), IC_OK);
  ck_assert_int_eq(i32, 0);
  ck_assert_int_eq(ic_element_store(IC_I32, -2.9, &i32), IC_OK);
  ck_assert_int_eq(i32, -2);
  ck_assert(ic_element_load(IC_I32, &i32) == -2.0);
  uint8_t u8 = 0;
  ck_assert_int_eq(ic_element_store(IC_U8, 300.0, &u8), IC_OK);
  ck_assert_uint_eq(u8, 255);
  uint16_t u16 = 0;
  ck_assert_int_eq(ic_element_store(IC_U16, 70000.0, &u16), IC_OK);
  ck_assert_uint_eq(u16, 65535);
  ck_assert_int_eq(ic_element_store(IC_U16, -1.0, &u16), IC_OK);
  ck_assert_uint_eq(u16, 0);
  uint32_t u32 = 0;
  ck_assert_int_eq(ic_element_store(IC_U32, 3e9, &u32), IC_OK);
  ck_assert_uint_eq(u32, 3000000000u);
  ck_assert(ic_element_load(IC_U32, &u32) == 3e9);
  ck_assert_int_eq(ic_element_store(IC_U32, NAN, &u32), IC_OK);
  ck_assert_uint_eq(u32, 0);
  uint64_t u64 = 0;
  ck_assert_int_eq(ic_element_store(IC_U64, 1e30, &u64), IC_OK);
  ck_assert(u64 == UINT64_MAX); /* 2^64, the saturated value, is no u64 */
  ck_assert_int_eq(ic_element_store(IC_U64, 1e19, &u64), IC_OK);
  ck_assert(u64 == UINT64_C(10000000000000000000));
  ck_assert(ic_element_load(IC_U64, &u64) == 1e19);
  ck_assert_int_eq(ic_element_store(IC_U64, -1e30, &u64), IC_OK);
  ck_assert(u64 == 0);
  ck_assert_int_eq(ic_element_store(IC_BOOL, 0.5, &u8), IC_OK);
  ck_assert_uint_eq(u8, 1);
  double d = 0;
  ck_assert_int_eq(ic_element_store(IC_F64, 0.1, &d), IC_OK);
  ck_assert(d == 0.1 && ic_element_load(IC_F64, &d) == 0.1);
  float f = 0;
  ck_assert_int_eq(ic_element_store(IC_F32, 0.1, &f), IC_OK);
  ck_assert(f == 0.1f);
  ck_assert_int_eq(ic_element_store(IC_DTYPE_INVALID, 1.0, b), IC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(ic_element_store(IC_F32, 1.0, NULL), IC_ERR_INVALID_ARGUMENT);
  ck_assert(isnan(ic_element_load((ic_dtype)77, b)));
  ck_assert(isnan(ic_element_load(IC_F32, NULL)));
}
END_TEST

/* Every entry of the driver table is requested at a version that a driver for CUDA 12.0
 * has (the README's promise), and the struct holds only what the library calls: a driver
 * older than 12.8 once lost the whole table because cuEventElapsedTime was asked for at
 * 12080. */
START_TEST(test_driver_entry_versions) {
  size_t n = 0;
  const cuda_driver_entry *e = cuda_driver_entries(&n);
  ck_assert_uint_gt(n, 10);
  ck_assert_uint_eq(n * sizeof(void (*)(void)), offsetof(cuda_driver_api, driver_version));
  for (size_t i = 0; i < n; i++) {
    ck_assert_msg(e[i].version <= 12000, "%s requested at %d", e[i].name, e[i].version);
    ck_assert_msg(strncmp(e[i].name, "cuEvent", 7) != 0, "%s: benchmarks open their own", e[i].name);
    for (size_t j = 0; j < i; j++) ck_assert_str_ne(e[i].name, e[j].name);
  }
  bool async_optional = false;
  for (size_t i = 0; i < n; i++) async_optional |= strcmp(e[i].name, "cuMemAllocAsync") == 0 && e[i].optional;
  ck_assert(async_optional);
}
END_TEST

static const char *const k_kernel = "extern \"C\" __global__ void k(float *p){ p[0] = 1.0f; }";

START_TEST(test_nvrtc) {
  const cuda_nvrtc_api *nv = cuda_nvrtc_get(0);
  ck_assert_msg(nv != NULL, "%s", ic_last_error());
  ck_assert_int_ge(nv->major, 12);
  ck_assert_int_ge(nv->minor, 0);
  ck_assert_str_ne(nv->path, "");
  ck_assert_ptr_eq(cuda_nvrtc_get(12), nv); /* later majors are ignored */

  int narchs = 0;
  ck_assert_int_eq(nv->nvrtcGetNumSupportedArchs(&narchs), NVRTC_SUCCESS);
  ck_assert_int_gt(narchs, 0);

  nvrtcProgram prog;
  ck_assert_int_eq(nv->nvrtcCreateProgram(&prog, k_kernel, "k.cu", 0, NULL, NULL), NVRTC_SUCCESS);
  const char *opts[] = {"--gpu-architecture=sm_90a", "-fmad=false"};
  nvrtcResult r = nv->nvrtcCompileProgram(prog, 2, opts);
  size_t log_size = 0;
  ck_assert_int_eq(nv->nvrtcGetProgramLogSize(prog, &log_size), NVRTC_SUCCESS);
  char *log = malloc(log_size + 1);
  ck_assert_ptr_nonnull(log);
  log[0] = '\0';
  if (log_size) ck_assert_int_eq(nv->nvrtcGetProgramLog(prog, log), NVRTC_SUCCESS);
  ck_assert_msg(r == NVRTC_SUCCESS, "%s: %s", nv->nvrtcGetErrorString(r), log);
  free(log);
  size_t cubin_size = 0;
  ck_assert_int_eq(nv->nvrtcGetCUBINSize(prog, &cubin_size), NVRTC_SUCCESS);
  ck_assert_uint_gt(cubin_size, 0);
  char *cubin = malloc(cubin_size);
  ck_assert_ptr_nonnull(cubin);
  ck_assert_int_eq(nv->nvrtcGetCUBIN(prog, cubin), NVRTC_SUCCESS);
  ck_assert_int_eq(memcmp(cubin, "\x7f" "ELF", 4), 0);
  free(cubin);
  ck_assert_int_eq(nv->nvrtcDestroyProgram(&prog), NVRTC_SUCCESS);
  ck_assert_str_eq(nv->nvrtcGetErrorString(NVRTC_SUCCESS), "NVRTC_SUCCESS");
}
END_TEST

/* IC_NVRTC names the only candidate; a bad one fails with a message that says so. The
 * table is process-wide, so this runs in a child process of its own. */
START_TEST(test_nvrtc_env) {
  const char *ck_fork = getenv("CK_FORK");
  if (ck_fork && strcmp(ck_fork, "no") == 0) return; /* the parent may have loaded it */
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setenv("IC_NVRTC", "/nonexistent/libnvrtc.so.99", 1);
    const cuda_nvrtc_api *nv = cuda_nvrtc_get(0);
    int ok = nv == NULL && strstr(ic_last_error(), "/nonexistent/libnvrtc.so.99") != NULL &&
             strstr(ic_last_error(), "libnvrtc.so.13") == NULL;
    error_set(IC_OK, "%s", "");
    ok = ok && cuda_nvrtc_get(0) == NULL && strstr(ic_last_error(), "IC_NVRTC") != NULL;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* ---------------------------------------------------------------- IC_LOG warning */

/* The child of test_ic_log_warns_once (this program run again with IC_TEST_LOG_CHILD
 * set): contexts from the main thread and from threads at once, then exit. */
static void *log_child_context(void *arg) {
  (void)arg;
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a",
                          .flags = IC_CONTEXT_COMPILE_ONLY | IC_CONTEXT_NO_DISK_CACHE};
  ic_context *ctx = NULL;
  if (ic_context_create(&o, &ctx) != IC_OK) return (void *)1;
  ic_context_destroy(ctx);
  return NULL;
}

static int log_child_main(void) {
  enum { THREADS = 4 };
  pthread_t t[THREADS];
  int bad = log_child_context(NULL) != NULL;
  for (int i = 0; i < THREADS; i++) bad |= pthread_create(&t[i], NULL, log_child_context, NULL) != 0;
  for (int i = 0; i < THREADS; i++) {
    void *r = NULL;
    pthread_join(t[i], &r);
    bad |= r != NULL;
  }
  bad |= log_child_context(NULL) != NULL;
  return bad;
}

/* Runs this program as the child with IC_LOG=value; returns its stderr (malloc'd). */
static char *log_child_stderr(const char *value) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    setenv("IC_LOG", value, 1);
    setenv("IC_TEST_LOG_CHILD", "1", 1);
    execl("/proc/self/exe", "test_base", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  size_t len = 0, cap = 4096;
  char *out = malloc(cap);
  ck_assert_ptr_nonnull(out);
  for (ssize_t n; (n = read(fds[0], out + len, cap - 1 - len)) > 0;) {
    len += (size_t)n;
    if (len == cap - 1) {
      out = realloc(out, cap *= 2);
      ck_assert_ptr_nonnull(out);
    }
  }
  out[len] = '\0';
  close(fds[0]);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "IC_LOG=%s child failed (%d): %s", value, status, out);
  return out;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* An IC_LOG that is no level warns on stderr once per process, however many contexts
 * and threads read it; a known level (here with nothing to log) prints nothing. */
START_TEST(test_ic_log_warns_once) {
  char *err = log_child_stderr("bogus");
  ck_assert_msg(count_lines(err) == 1, "IC_LOG=bogus: want one line, got:\n%s", err);
  ck_assert_msg(strstr(err, "ic: warning: IC_LOG=bogus is not a level") == err, "IC_LOG=bogus: %s", err);
  ck_assert_ptr_nonnull(strstr(err, "logging stays off"));
  free(err);
  err = log_child_stderr("7");
  ck_assert_msg(count_lines(err) == 1 && strstr(err, "IC_LOG=7 is not a level"), "IC_LOG=7: %s", err);
  free(err);
  static const char *const quiet[] = {"warn", "ERROR", "0", "off", ""};
  for (size_t i = 0; i < ARRAY_LEN(quiet); i++) {
    err = log_child_stderr(quiet[i]);
    ck_assert_msg(err[0] == '\0', "IC_LOG=%s printed: %s", quiet[i], err);
    free(err);
  }
}
END_TEST

static Suite *runtime_suite(void) {
  Suite *s = suite_create("base");
  TCase *tc = check_tcase("core");
  tcase_add_test(tc, test_status_strings);
  tcase_add_test(tc, test_last_error_per_thread);
  tcase_add_test(tc, test_error_prefix);
  tcase_add_test(tc, test_sbuf);
  tcase_add_test(tc, test_grow);
  tcase_add_test(tc, test_logger);
  tcase_add_test(tc, test_ic_log_warns_once);
  tcase_add_test(tc, test_dtype_tables);
  tcase_add_test(tc, test_round_f16);
  tcase_add_test(tc, test_round_bf16);
  tcase_add_test(tc, test_round_other);
  tcase_add_test(tc, test_round_sweep);
  tcase_add_test(tc, test_element_store_load);
  tcase_add_test(tc, test_driver);
  tcase_add_test(tc, test_driver_entry_versions);
  tcase_add_test(tc, test_nvrtc);
  tcase_add_test(tc, test_nvrtc_env);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  if (getenv("IC_TEST_LOG_CHILD")) return log_child_main();
  SRunner *sr = srunner_create(runtime_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
