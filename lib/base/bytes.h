/* Little-endian integers in byte buffers, whatever the host: cache entries on a shared
 * file system read the same everywhere. */
#ifndef IC_BASE_BYTES_H
#define IC_BASE_BYTES_H

#include <stdint.h>

static inline void bytes_store_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline void bytes_store_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t bytes_load_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}

static inline uint64_t bytes_load_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

#endif
