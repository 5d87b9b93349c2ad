/* lib/ops: inline PTX (ic_graph_inline_asm, ic.h "inline PTX"). How the operands of an
 * asm node map onto registers: the constraint string read, checked against the operand
 * dtypes and the pack, and the asm text made ready for a C compiler. The builder checks
 * with it at build time, and the cuda backend generates its calls from the same layout. */
#ifndef IC_OPS_ASM_H
#define IC_OPS_ASM_H

#include "base/base.h"
#include "base/sbuf.h"

enum { ASM_MAX_PACK = 16, ASM_MAX_REGS = 2 * IC_ASM_MAX_OPERANDS * ASM_MAX_PACK };



/* One operand (an output or an input): its register letter (h, r, l, f, d), its
 * registers and the elements each holds (elements 0, 1, ... of the pack from the low bits
 * of the first register on), and its element width in bits (bool: 8). */
typedef struct asm_operand {
  char letter;
  int32_t regs;
  int32_t per_reg;
  int32_t bits;
  ic_dtype dtype;
  bool upcast; /* an f16 or bf16 input bound to f: converted to f32 first */
} asm_operand;

typedef struct asm_layout {
  int32_t noutputs, ninputs;
  asm_operand ops[2 * IC_ASM_MAX_OPERANDS]; /* outputs, then inputs */
  int32_t nregs;                            /* registers of every operand together ($0 ..) */
} asm_layout;

/* An asm node's own data, as ic_graph_inline_asm took it and checked it, with its
 * register layout (the graph owns one copy, the lowered graph another). */
typedef struct asm_spec {
  char *text;
  char *constraints;
  int32_t noutputs;
  ic_dtype outputs[IC_ASM_MAX_OPERANDS];
  bool pure;
  int32_t pack;
  asm_layout layout; /* asm_plan's, from the builder: the backend generates from it */
} asm_spec;

/* The layout of an asm node with these operands, or a status with the error set
 * (IC_ERR_INVALID_GRAPH: an unknown or unsupported letter, a count that does not match,
 * a dtype that does not fit its letter, a pack that is not a power of two up to 16, a
 * $ reference past the registers). what: the call's name for messages. */
ic_status asm_plan(const char *what, const char *text, const char *constraints, int32_t pack, int32_t noutputs,
                   const ic_dtype *outputs, int32_t ninputs, const ic_dtype *inputs, asm_layout *out);

/* Appends text as the template of a C asm statement: $N becomes %N, $$ a $, and a % is
 * doubled. The text was checked by asm_plan. */
void asm_c_template(const char *text, sbuf *out);

/* Appends s as the body of a C (and text-format) string literal: \\, \", \n, \t, \r,
 * and other control and non-ASCII bytes as three-digit octal escapes (never longer, so
 * a digit after one stays a digit). */
void asm_quote(const char *s, sbuf *out);

#endif
