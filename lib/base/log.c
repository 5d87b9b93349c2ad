/* Leveled logging to a host callback or stderr; off unless asked for. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/base.h"

static const char *level_name(ic_log_level level) {
  switch (level) {
    case IC_LOG_ERROR:
      return "error";
    case IC_LOG_WARN:
      return "warn";
    case IC_LOG_INFO:
      return "info";
    case IC_LOG_DEBUG:
      return "debug";
    case IC_LOG_OFF:
      break;
  }
  return "off";
}

/* IC_LOG=error|warn|info|debug (any case, "warning" too) or 0..4. *known is false for
 * anything else (which is off). Unset, empty or blank is off and known. */
static ic_log_level parse_env_level(const char *s, bool *known) {
  *known = true;
  if (!s) return IC_LOG_OFF;
  while (*s == ' ' || *s == '\t') s++;
  if (!*s) return IC_LOG_OFF;
  *known = false;
  if (s[0] >= '0' && s[0] <= '9') {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    if (*end != '\0' || v < IC_LOG_OFF || v > IC_LOG_DEBUG) return IC_LOG_OFF;
    *known = true;
    return (ic_log_level)v;
  }
  static const struct {
    const char *name;
    ic_log_level level;
  } names[] = {{"off", IC_LOG_OFF},   {"none", IC_LOG_OFF},     {"error", IC_LOG_ERROR},
               {"warn", IC_LOG_WARN}, {"warning", IC_LOG_WARN}, {"info", IC_LOG_INFO},
               {"debug", IC_LOG_DEBUG}};
  for (size_t i = 0; i < ARRAY_LEN(names); i++) {
    if (strcasecmp(s, names[i].name) == 0) {
      *known = true;
      return names[i].level;
    }
  }
  return IC_LOG_OFF;
}

/* An unknown IC_LOG is said once per process, on stderr: the one print the library does
 * without a logger, asked for by setting IC_LOG. */
static pthread_once_t bad_env_once = PTHREAD_ONCE_INIT;

static void warn_bad_env_level(void) {
  const char *s = getenv("IC_LOG");
  fprintf(stderr, "ic: warning: IC_LOG=%s is not a level (error, warn, info, debug, 0-4); logging stays off\n",
          s ? s : "");
}

void logger_init(logger *lg, ic_log_fn fn, void *user, ic_log_level level) {
  if (!lg) return;
  lg->fn = fn;
  lg->user = user;
  if (level > IC_LOG_OFF && level <= IC_LOG_DEBUG)
    lg->level = level;
  else if (level > IC_LOG_DEBUG)
    lg->level = IC_LOG_DEBUG;
  else {
    bool known = true;
    lg->level = parse_env_level(getenv("IC_LOG"), &known);
    if (!known) pthread_once(&bad_env_once, warn_bad_env_level);
  }
}

void log_msg(const logger *lg, ic_log_level level, const char *fmt, ...) {
  if (!lg || !fmt || level <= IC_LOG_OFF || level > lg->level) return;
  char stack[1024];
  char *msg = stack;
  int head = snprintf(stack, sizeof stack, "ic: %s: ", level_name(level));
  if (head < 0) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(stack + head, sizeof stack - (size_t)head, fmt, ap);
  va_end(ap);
  if (n < 0) {
    stack[head] = '\0';
  } else if ((size_t)n >= sizeof stack - (size_t)head) {
    /* Long messages (kernel sources, NVRTC logs) go through the heap; when that fails,
     * the truncated stack copy is logged. */
    size_t need = (size_t)head + (size_t)n + 1;
    char *big = sys_malloc(need);
    if (big) {
      memcpy(big, stack, (size_t)head);
      va_start(ap, fmt);
      vsnprintf(big + head, need - (size_t)head, fmt, ap);
      va_end(ap);
      msg = big;
    }
  }
  if (lg->fn) {
    lg->fn(lg->user, level, msg);
  } else {
    fprintf(stderr, "%s\n", msg);
  }
  if (msg != stack) free(msg);
}

void log_dump_file(const logger *lg, const char *dir, const char *sub, const char *name, const char *text,
                   size_t len) {
  if (!dir || !text) return;
  char path[4096];
  sys_mkdir(dir, 0755);
  if (sub && *sub) {
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    sys_mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
  } else {
    snprintf(path, sizeof path, "%s/%s", dir, name);
  }
  FILE *f = sys_fopen(path, "wb");
  if (!f || fwrite(text, 1, len, f) != len) log_msg(lg, IC_LOG_WARN, "IC_DUMP: cannot write %s: %s", path, strerror(errno));
  if (f) fclose(f);
}
