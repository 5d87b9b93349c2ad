/* Growable arrays: a struct with `T *items; int32_t count, cap;`. */
#ifndef IC_BASE_VEC_H
#define IC_BASE_VEC_H

#include "base/base.h"

/* Ensures room for `need` items of `size` bytes; false when out of memory. */
bool vec_grow(void **items, int32_t *cap, int32_t need, size_t size);
#define VEC_PUSH(vec, item)                                                              \
  (vec_grow((void **)&(vec).items, &(vec).cap, (vec).count + 1, sizeof(*(vec).items)) \
       ? ((vec).items[(vec).count++] = (item), true)                                   \
       : false)

#endif
