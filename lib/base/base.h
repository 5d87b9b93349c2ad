/* lib/base: the ground floor every layer stands on. It depends on nothing of ic but the
 * public header (statuses, dtypes): errors and the thread's message, logging, growable
 * vectors, string buffers, dtypes and small floats, time, 128-bit keys, limits.
 * Internal names carry their module's prefix (error_, log_, vec_, sbuf_, dtype_, key_);
 * ic_ is kept for what include/ic/ exports. */
#ifndef IC_BASE_H
#define IC_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic/ic.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#include "base/clock.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "base/sys.h"
#include "base/vec.h"

#endif
