/* Internal helpers shared by every layer: errors, logging, growable arrays, strings. */
#ifndef IC_COMMON_H
#define IC_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic/ic.h"

#if defined(__GNUC__)
#define IC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define IC_PRINTF(f, a)
#endif

#define IC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (lib/runtime/error.c) */

/* Records the thread's last error message and returns status. */
ic_status ic_set_error(ic_status status, const char *fmt, ...) IC_PRINTF(2, 3);
/* Prefixes the current last-error message with a context line ("compiling kernel k0: "). */
void ic_error_prefix(const char *fmt, ...) IC_PRINTF(1, 2);

/* ---- logging (lib/runtime/log.c) */

typedef struct ic_logger {
  ic_log_fn fn;
  void *user;
  ic_log_level level;
} ic_logger;

/* Fills a logger from options (fn, user, level) and IC_LOG. */
void ic_logger_init(ic_logger *lg, ic_log_fn fn, void *user, ic_log_level level);
void ic_log(const ic_logger *lg, ic_log_level level, const char *fmt, ...) IC_PRINTF(3, 4);

/* ---- growable arrays: a struct with T *items; int32_t count, cap. */

/* Ensures room for `need` items of `size` bytes; false when out of memory. */
bool ic_grow(void **items, int32_t *cap, int32_t need, size_t size);
#define IC_VEC_PUSH(vec, item)                                                          \
  (ic_grow((void **)&(vec).items, &(vec).cap, (vec).count + 1, sizeof(*(vec).items)) \
       ? ((vec).items[(vec).count++] = (item), true)                                  \
       : false)

/* ---- string buffer: appends never fail; oom is sticky and reported once at the end. */

typedef struct ic_sbuf {
  char *data;
  size_t len, cap;
  bool oom;
} ic_sbuf;

void ic_sbuf_printf(ic_sbuf *sb, const char *fmt, ...) IC_PRINTF(2, 3);
void ic_sbuf_vprintf(ic_sbuf *sb, const char *fmt, va_list ap);
void ic_sbuf_puts(ic_sbuf *sb, const char *s);
/* Returns the malloc'd string (caller frees) or NULL when out of memory; resets sb. */
char *ic_sbuf_take(ic_sbuf *sb);
void ic_sbuf_free(ic_sbuf *sb);

char *ic_strdup(const char *s);

/* Monotonic milliseconds, for timing logs and stats. */
double ic_now_ms(void);

/* ---- dtypes */

bool ic_dtype_valid(ic_dtype dt);
bool ic_dtype_is_float(ic_dtype dt);
/* u8, i8, i16, i32, i64. */
bool ic_dtype_is_integer(ic_dtype dt);
/* Rounds a double to the value dtype dt holds (f16/bf16 round to nearest even, i32
 * truncates and saturates like a cast, bool is != 0). */
double ic_dtype_round(ic_dtype dt, double v);

#endif
