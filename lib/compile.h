/* Internal knobs of the compile pipeline. */
#ifndef IC_COMPILE_H
#define IC_COMPILE_H

#include "program/program.h"

/* Tests only: when nonzero, every fused (multi-op) kernel fails to compile, so the eager
 * fallback and strict mode can be exercised. Not thread-safe; never set in production. */
extern int ic_debug_fail_fused_compile;

#endif
