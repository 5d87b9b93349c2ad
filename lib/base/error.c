/* The thread's last error message, status strings and the library version. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

#define IC_ERROR_CAP 4096

static _Thread_local char g_last_error[IC_ERROR_CAP];
/* Formatting scratch: messages may quote the current one, and the stack stays small for
 * hosts on small stacks (fibers, coroutines) even on error paths. */
static _Thread_local char g_scratch[IC_ERROR_CAP];

/* Truncation of an over-long message leaves a valid, NUL-terminated prefix. */
static void format_into(char *buf, size_t cap, const char *fmt, va_list ap) {
  int n = vsnprintf(buf, cap, fmt, ap);
  if (n < 0) buf[0] = '\0';
}

ic_status error_set(ic_status status, const char *fmt, ...) {
  if (!fmt) {
    g_last_error[0] = '\0';
    return status;
  }
  /* The message may quote the current one (ic_last_error()); format into a scratch
   * buffer first. */
  va_list ap;
  va_start(ap, fmt);
  format_into(g_scratch, sizeof g_scratch, fmt, ap);
  va_end(ap);
  memcpy(g_last_error, g_scratch, sizeof g_scratch);
  return status;
}

void error_prefix(const char *fmt, ...) {
  if (!fmt) return;
  char *prefix = g_scratch;
  va_list ap;
  va_start(ap, fmt);
  format_into(prefix, sizeof g_scratch, fmt, ap);
  va_end(ap);
  size_t plen = strlen(prefix);
  size_t mlen = strlen(g_last_error);
  const size_t cap = IC_ERROR_CAP - 1; /* room for the terminator */
  const char sep[] = ": ";
  size_t slen = mlen > 0 ? sizeof sep - 1 : 0;
  if (plen > cap) plen = cap;
  if (slen > cap - plen) slen = cap - plen;
  if (mlen > cap - plen - slen) mlen = cap - plen - slen;
  /* Move the message right (it may overlap itself), then write prefix and separator. */
  memmove(g_last_error + plen + slen, g_last_error, mlen);
  memcpy(g_last_error, prefix, plen);
  memcpy(g_last_error + plen, sep, slen);
  g_last_error[plen + slen + mlen] = '\0';
}

const char *ic_last_error(void) { return g_last_error; }

const char *ic_status_string(ic_status status) {
  switch (status) {
#define IC_STATUS_CASE_(name, value, desc) \
  case name:                               \
    return desc;
    IC_STATUS_LIST(IC_STATUS_CASE_)
#undef IC_STATUS_CASE_
  }
  return "unknown status";
}

int ic_version(void) { return IC_VERSION_NUMBER; }
