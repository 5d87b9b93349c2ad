/* String buffers: appends never fail; out of memory is sticky and reported once, when
 * the string is taken. */
#ifndef IC_BASE_SBUF_H
#define IC_BASE_SBUF_H

#include "base/base.h"

typedef struct sbuf {
  char *data;
  size_t len, cap;
  bool oom;
} sbuf;

void sbuf_printf(sbuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
void sbuf_vprintf(sbuf *sb, const char *fmt, va_list ap);
void sbuf_puts(sbuf *sb, const char *s);
/* Returns the malloc'd string (caller frees) or NULL when out of memory; resets sb. */
char *sbuf_take(sbuf *sb);
void sbuf_free(sbuf *sb);

/* A malloc'd copy of s (NULL for NULL or out of memory). */
char *str_dup(const char *s);

#endif
