/* A monotonic host clock in milliseconds, shared by the tools and the bench (header only;
 * needs _GNU_SOURCE or _POSIX_C_SOURCE >= 199309L, which ic's targets define). */
#ifndef IC_TOOLS_HOST_CLOCK_H
#define IC_TOOLS_HOST_CLOCK_H

#include <time.h>

/* Milliseconds of CLOCK_MONOTONIC: only differences mean anything. */
static inline double host_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif /* IC_TOOLS_HOST_CLOCK_H */
