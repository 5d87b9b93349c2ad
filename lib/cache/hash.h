/* Feeding key ingredients to an XXH3-128 state: every part is length-prefixed, so no two
 * lists of parts hash alike by moving bytes from one part to the next. */
#ifndef IC_CACHE_HASH_H
#define IC_CACHE_HASH_H

#include <stdint.h>
#include <string.h>
#include <xxhash.h>

static inline void cache_feed(XXH3_state_t *st, const void *data, size_t len) {
  uint64_t n = len;
  XXH3_128bits_update(st, &n, sizeof n);
  if (len) XXH3_128bits_update(st, data, len);
}

static inline void cache_feed_str(XXH3_state_t *st, const char *s) { cache_feed(st, s ? s : "", s ? strlen(s) : 0); }

static inline void cache_feed_i64(XXH3_state_t *st, int64_t v) { cache_feed(st, &v, sizeof v); }

#endif
