/* Leveled logging to a host callback or stderr, off unless asked for; IC_DUMP files. */
#ifndef IC_BASE_LOG_H
#define IC_BASE_LOG_H

#include "base/base.h"

typedef struct logger {
  ic_log_fn fn;
  void *user;
  ic_log_level level;
} logger;

/* Fills a logger from options (fn, user, level) and IC_LOG. An IC_LOG that is no level
 * leaves logging off and prints one warning line to stderr, once per process. */
void logger_init(logger *lg, ic_log_fn fn, void *user, ic_log_level level);
void log_msg(const logger *lg, ic_log_level level, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Writes `text` to dir/sub/name (IC_DUMP; sub NULL or "": dir/name), creating dir and
 * dir/sub, best effort: a failure is logged at warn. A NULL dir or text writes nothing. */
void log_dump_file(const logger *lg, const char *dir, const char *sub, const char *name, const char *text,
                   size_t len);

/* The folder of IC_DUMP for files written before a program exists (the NVRTC log and
 * source of a failed kernel compile). */
#define LOG_DUMP_FAILED_DIR "failed"

#endif
