/* The fault sweeps of test_faults (CPU) and gpu_faults: one graph with a pointwise
 * prologue, a row reduction and a broadcast back (two outputs), its inputs and host
 * check, and the sweep itself. */
#ifndef IC_TESTS_FAULT_SWEEP_H
#define IC_TESTS_FAULT_SWEEP_H

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "ic/ic.h"

static const char *const GRAPH_TEXT =
    "symbol n\n"
    "input x : f32[n, 37]\n"
    "input w : f32[37]\n"
    "e = exp(x)\n"
    "y = mul(e, w)\n"
    "s = sum(y, [1], keepdim)\n"
    "z = div(y, s)\n"
    "output z\n"
    "output s\n";

enum { ROWS = 5, COLS = 37 };

static inline float input_x(int64_t i) { return (float)((i * 37 + 11) % 101) / 50.0f - 1.0f; }
static inline float input_w(int64_t j) { return 0.5f + (float)j / 64.0f; }

/* Checks z and s against a host computation (ref order: sums to within rounding). */
static inline bool outputs_right(const float *z, const float *s) {
  for (int r = 0; r < ROWS; r++) {
    double sum = 0;
    for (int c = 0; c < COLS; c++) sum += (double)expf(input_x(r * COLS + c)) * input_w(c);
    if (fabs(s[r] - sum) > 1e-4 * fabs(sum)) return false;
    for (int c = 0; c < COLS; c++) {
      double want = (double)expf(input_x(r * COLS + c)) * input_w(c) / sum;
      if (fabs(z[r * COLS + c] - want) > 1e-5) return false;
    }
  }
  return true;
}

/* ---------------------------------------------------------------- the sweep */

typedef struct sweep_result {
  int64_t points;   /* calls of the class the sequence makes */
  int64_t failed;   /* injected faults that failed the sequence */
  int64_t absorbed; /* injected faults the sequence survived */
} sweep_result;

/* IC_FAULT_SWEEP_STRIDE=K (environment) tries every Kth call only (1, 1 + K, ...): a
 * sample, for the slow builds. ctest sets it in the ASan build (tests/CMakeLists.txt),
 * scripts/gpu-sanitize.sh under compute-sanitizer; the plain builds sweep every call
 * (default 1). */
static inline int64_t sweep_stride(void) {
  const char *text = getenv("IC_FAULT_SWEEP_STRIDE");
  long long k = text ? strtoll(text, NULL, 10) : 1;
  return k >= 1 && k <= 1000000 ? (int64_t)k : 1;
}

/* Makes the Nth call of `which` fail with `code` for N = 1, 2, ... (sweep_stride). Each
 * failure must be a clean error (a message, not IC_ERR_INTERNAL) or be absorbed with right
 * results; afterwards the unarmed sequence must succeed. `before` runs before every
 * attempt. */
static inline sweep_result sweep(const char *what, ic_status (*sequence)(const void *env), const void *env,
                                 const char *which, int code, void (*before)(void)) {
  sweep_result r = {0, 0, 0};
  const int64_t stride = sweep_stride();
  for (int64_t n = 1;; n += stride) {
    if (before) before();
    ck_assert_int_eq(fault_arm(which, n, code), IC_OK);
    ic_status s = sequence(env);
    bool fired = fault_fired();
    int64_t calls = fault_calls();
    fault_disarm();
    if (!fired) {
      ck_assert_msg(s == IC_OK, "%s: failed with no fault injected (%s): %s", what, ic_status_string(s),
                    ic_last_error());
      r.points = calls;
      break;
    }
    if (s != IC_OK) {
      const char *msg = ic_last_error();
      ck_assert_msg(msg && msg[0], "%s: %s fault %" PRId64 ": status %s without a message", what, which, n,
                    ic_status_string(s));
      ck_assert_msg(s != IC_ERR_INTERNAL, "%s: %s fault %" PRId64 ": internal error: %s", what, which, n, msg);
      r.failed++;
    } else {
      r.absorbed++; /* e.g. a disk cache write: best effort (the results were checked) */
    }
    /* the context (and the process) stays usable */
    if (before) before();
    ic_status again = sequence(env);
    ck_assert_msg(again == IC_OK, "%s: after %s fault %" PRId64 " (%s), the next sequence failed: %s", what, which,
                  n, ic_status_string(s), ic_last_error());
    ck_assert_msg(n < 100000, "%s: the sweep does not end", what);
  }
  printf("%s, %s faults (code %d): %" PRId64 " points%s, %" PRId64 " failed cleanly, %" PRId64 " absorbed\n", what,
         which, code, r.points, stride > 1 ? " (a sample: every IC_FAULT_SWEEP_STRIDE-th)" : "", r.failed, r.absorbed);
  return r;
}

#endif
