/* The thread's last error message (ic_last_error) and the status it goes with. */
#ifndef IC_BASE_ERROR_H
#define IC_BASE_ERROR_H

#include "base/base.h"

/* Records the thread's last error message and returns status. */
ic_status error_set(ic_status status, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Prefixes the current last-error message with a context line ("compiling kernel k0: "). */
void error_prefix(const char *fmt, ...) PRINTF_LIKE(1, 2);

#endif
