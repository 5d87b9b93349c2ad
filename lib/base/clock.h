/* Time for logs, statistics and benchmarks. */
#ifndef IC_BASE_CLOCK_H
#define IC_BASE_CLOCK_H

/* Monotonic milliseconds. */
double clock_now_ms(void);

#endif
