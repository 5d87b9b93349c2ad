/* 128-bit content keys (XXH3-128) and feeding their ingredients: every part is
 * length-prefixed, so no two lists of parts hash alike by moving bytes from one part to
 * the next. */
#ifndef IC_BASE_KEY_H
#define IC_BASE_KEY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

typedef struct key128 {
  uint64_t lo, hi; /* XXH3-128 */
} key128;

static inline bool key_equal(key128 a, key128 b) { return a.lo == b.lo && a.hi == b.hi; }

static inline key128 key_digest(XXH3_state_t *st) {
  XXH128_hash_t h = XXH3_128bits_digest(st);
  return (key128){h.low64, h.high64};
}

static inline void key_feed(XXH3_state_t *st, const void *data, size_t len) {
  uint64_t n = len;
  XXH3_128bits_update(st, &n, sizeof n);
  if (len) XXH3_128bits_update(st, data, len);
}

static inline void key_feed_str(XXH3_state_t *st, const char *s) { key_feed(st, s ? s : "", s ? strlen(s) : 0); }

static inline void key_feed_i64(XXH3_state_t *st, int64_t v) { key_feed(st, &v, sizeof v); }

#endif
