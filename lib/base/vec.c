/* Growable arrays. */
#include <stdlib.h>

#include "base/base.h"

bool vec_grow(void **items, int32_t *cap, int32_t need, size_t size) {
  if (!items || !cap || need < 0 || size == 0) return false;
  if (need <= *cap) return true;
  int64_t newcap = *cap > 0 ? *cap : 8;
  while (newcap < need) newcap *= 2;
  if (newcap > INT32_MAX) newcap = INT32_MAX;
  if ((uint64_t)newcap > SIZE_MAX / size) return false;
  void *p = sys_realloc(*items, (size_t)newcap * size);
  if (!p) return false;
  *items = p;
  *cap = (int32_t)newcap;
  return true;
}

