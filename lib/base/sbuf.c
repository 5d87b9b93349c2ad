/* String buffers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* Makes room for `extra` more bytes plus the terminator. */
static bool sbuf_reserve(sbuf *sb, size_t extra) {
  if (sb->oom) return false;
  if (extra > SIZE_MAX - sb->len - 1) {
    sb->oom = true;
    return false;
  }
  size_t need = sb->len + extra + 1;
  if (need <= sb->cap) return true;
  size_t cap = sb->cap > 0 ? sb->cap : 64;
  while (cap < need) {
    if (cap > SIZE_MAX / 2) {
      cap = need;
      break;
    }
    cap *= 2;
  }
  char *p = sys_realloc(sb->data, cap);
  if (!p) {
    sb->oom = true;
    return false;
  }
  sb->data = p;
  sb->cap = cap;
  return true;
}

void sbuf_vprintf(sbuf *sb, const char *fmt, va_list ap) {
  if (!sb || sb->oom || !fmt) return;
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = sb->cap > sb->len ? sb->cap - sb->len : 0;
  int n = vsnprintf(room ? sb->data + sb->len : NULL, room, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    /* An encoding error: nothing sensible to append; keep the buffer as it was. */
    if (room) sb->data[sb->len] = '\0';
    return;
  }
  if ((size_t)n < room) {
    sb->len += (size_t)n;
    return;
  }
  if (!sbuf_reserve(sb, (size_t)n)) {
    if (room) sb->data[sb->len] = '\0';
    return;
  }
  va_copy(ap2, ap);
  vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap2);
  va_end(ap2);
  sb->len += (size_t)n;
}

void sbuf_printf(sbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sbuf_vprintf(sb, fmt, ap);
  va_end(ap);
}

void sbuf_puts(sbuf *sb, const char *s) {
  if (!sb || !s) return;
  size_t n = strlen(s);
  if (!sbuf_reserve(sb, n)) return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

char *sbuf_take(sbuf *sb) {
  if (!sb) return NULL;
  char *s = NULL;
  if (sb->oom) {
    free(sb->data);
  } else if (sb->data) {
    s = sb->data;
  } else {
    s = sys_malloc(1);
    if (s) s[0] = '\0';
  }
  sb->data = NULL;
  sb->len = sb->cap = 0;
  sb->oom = false;
  return s;
}

void sbuf_free(sbuf *sb) {
  if (!sb) return;
  free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
  sb->oom = false;
}

char *str_dup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = sys_malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

void ic_string_free(char *s) { free(s); }
