/* Fixed limits of programs and kernels, in one place so that the numbering they share
 * stays consistent: a kernel's symbolic parameters are input strides first
 * (input * IC_MAX_DIMS + dim, lower_stride_param) and launch sizes from
 * KIR_SIZE_PARAM_BASE up (kir_generalize_sizes). */
#ifndef IC_BASE_LIMITS_H
#define IC_BASE_LIMITS_H

#include "ic/ic.h"

enum {
  PROGRAM_MAX_BUFFERS = 512, /* the budget inputs and outputs are carved from (temporaries
                              * are not bounded: the memory plan sizes itself from the program) */
  PROGRAM_MAX_SYMBOLS = 64,  /* size symbols of a graph */
  PROGRAM_MAX_INPUTS = 128,
  PROGRAM_MAX_OUTPUTS = PROGRAM_MAX_BUFFERS / 4,
  PROGRAM_MAX_PARAMS = 256,  /* launch parameters of one kernel */
  KIR_SIZE_PARAM_BASE = 1024,
  KIR_MAX_SIZES = 4,         /* generalized sizes of one kernel */
  KIR_MAX_PARAM_INDEX = KIR_SIZE_PARAM_BASE + KIR_MAX_SIZES /* sym params are below this */
};

/* The largest pad amount, before or after, in magnitude (ic_graph_pad: 2^61, both signs
 * inclusive): a dim's two amounts add to at most 2^62, so a symbolic dim's padded size,
 * and every index a pad kernel computes, stays far from int64 overflow. */
#define GRAPH_MAX_PAD (INT64_C(1) << 61)

/* Stride params of every input dim stay below the size params. */
_Static_assert(PROGRAM_MAX_INPUTS * IC_MAX_DIMS <= KIR_SIZE_PARAM_BASE,
               "input stride params would collide with size params");
_Static_assert(PROGRAM_MAX_INPUTS + PROGRAM_MAX_OUTPUTS <= PROGRAM_MAX_BUFFERS,
               "inputs and outputs must leave room for temporaries");
/* A kernel's params: at most every buffer, symbol, stride and size; the launch ABI
 * passes PROGRAM_MAX_PARAMS at most (checked per kernel at compile time). */
_Static_assert(PROGRAM_MAX_PARAMS >= PROGRAM_MAX_SYMBOLS + KIR_MAX_SIZES,
               "a kernel must be able to take every symbol and size");

#endif
