/* The CUDA C generator's shared pieces (codegen.c: pointwise kernels and the helpers;
 * codegen_reduce*.c: reduction kernels, codegen_reduce.h). */
#ifndef IC_BACKEND_CUDA_CODEGEN_H
#define IC_BACKEND_CUDA_CODEGEN_H

#include "backend/cuda/cuda_backend.h"

/* A pointwise body whose estimated weight (cg_body_weight: 1 a simple op, 8 an op that
 * expands to a call or a long sequence: exp, tanh, div, pow, inline asm, ...) passes this
 * is emitted __noinline__: the vector path calls it V times and the scalar path once, and
 * inlined copies made NVRTC's time grow with the graph times the copies (a 300-op chain:
 * 452 ms inlined, 121 ms as one function; 1000 ops: 2.9 s, 355 ms). Smaller bodies stay
 * __forceinline__, as fast as before. */
enum { CG_BODY_INLINE_MAX_WEIGHT = 128 };

typedef enum access_mode {
  ACCESS_VECTOR,  /* V contiguous elements, one vector access */
  ACCESS_SPLAT,   /* independent of the innermost var: one element for the slot */
  ACCESS_ELEMENT, /* anything else: element by element */
  ACCESS_TILED    /* tiled kernels: through the shared-memory tile (codegen_tile.c) */
} access_mode;

typedef struct codegen {
  const kir_kernel *k;
  const char *entry; /* the kernel's entry point */
  sym_arena *a;
  sbuf out;
  int32_t vec;                      /* V */
  int32_t pack;                     /* P: the body's elements a call (kir_pack; 1: one point) */
  bool uniform_ranges;              /* pointwise: kir_pointwise_strategy's */
  int32_t row_dim, rows;            /* pointwise: kir_pointwise_strategy's (rows > 1: a thread's rows of
                                     * row_dim; cg_decompose then makes q<row_dim> over Dr) */
  bool bits;                        /* cg_op/cg_convert: the outer rounding makes storage bits */
  bool pair_body;                   /* pointwise: the kernel has <name>_body2 for two points (written
                                     * by cg_body at pack 2), which vector slots call */
  bool leave_rounding;              /* cg_op/cg_convert: an outer rounding to bf16 or f16 is left out
                                     * (its caller rounds a pair at once: ic_rnd2_); cleared when one is */
  const bool *element;              /* reduction kernels: kir_levels (row values are scalars) */
  access_mode *mode;                /* per instruction (loads and stores) */
  int32_t *merged;                  /* pointwise, per guarded load: the load one vector load serves with it
                                     * (kir_shared_loads), -1 for none */
  bool *merged_true;                /* ... and whether it is the where's true arm */
  bool *exact_unrounded;            /* pointwise, per op: a narrow-float neg/abs/relu left unrounded
                                     * (kir_exact_unrounded); NULL: every op rounds */
  struct { sym_id *items; int32_t count, cap; } aligned; /* exprs that must be multiples of V */
  cuda_smem_limits smem;            /* the target's shared memory (reduction kernels' cache tier) */
  int32_t sm;                       /* the target (90 for sm_90a) */
  bool oom;
} codegen;

/* The compute type of a dtype (the prelude's overloads): bool, int, ic_i64, float, double. */
const char *cg_ctype(ic_dtype dt);
const char *cg_dtname(ic_dtype dt);
/* Results of these dtypes are rounded (wrapped) to them after every op: ic_rnd_<dtype>. */
bool cg_rounds(ic_dtype dt);
/* Roundings to these dtypes go two at a time where values come in pairs (ic_rnd2_). */
bool cg_pairs_rounding(ic_dtype dt);
/* An index expression in C; the innermost var named last_var (NULL: i<ndim-1>). */
void cg_expr(codegen *cg, sym_id e, const char *last_var);
void cg_require_aligned(codegen *cg, sym_id e);
void cg_const(codegen *cg, const kir_instr *in);
void cg_convert(codegen *cg, ic_dtype from, ic_dtype to, bool saturate, const char *v);
/* The C expression of op instruction in, whose operands are args (dtypes; where's data
 * operand first) and are named names[0..2]. */
void cg_op(codegen *cg, const kir_instr *in, const kir_instr *args, const char *const *names);
const char *cg_scalar_width(ic_dtype dt);
/* b<buffer> + (offset) * size */
void cg_address(codegen *cg, const kir_instr *in, const char *last_var);
/* A range's value: [parent<suffix> && ](lo <= index && index < hi). */
void cg_range(codegen *cg, const kir_instr *in, const char *last_var, const char *suffix);

/* Pointwise pieces (codegen.c) the tiled kernels (codegen_tile.c) share. */
/* `ic_unpack_<dt>(ic_ld_s<bits>(address))`: load i's element, last var named last_var. */
void cg_load(codegen *cg, const kir_instr *in, const char *last_var);
/* Load i's V elements as one vector (or 16-byte pieces) into v<i>[] (declared). */
void cg_vector_load(codegen *cg, int32_t i);
/* The vector path's conditions on alignment, each ending in " && ". */
void cg_vector_conditions(codegen *cg);
/* Unguarded load i of a slot into v<i>[] (declared): vector, splat or element by element. */
void cg_slot_load(codegen *cg, int32_t i);
/* Store i of a slot's V points r<i>[]: a vector, or element by element (j: the last var). */
void cg_slot_store(codegen *cg, int32_t i);
/* One point's stores of r<i> (scalars), the last var named last_var (NULL: i<last>). */
void cg_point_stores(codegen *cg, const char *last_var, const char *indent);
/* <entry>_body(loads and ranges <index>, stores <index>); (<entry>_body2 while cg->pack is 2
 * in a kernel with a pair body) */
void cg_body_call(codegen *cg, const char *index);
/* A vector slot's body calls: V points one at a time, or two at a time through
 * <entry>_body2 (cg->pair_body). */
void cg_slot_body_calls(codegen *cg);
/* The type of store i's r<i> (ic_u32 bits for narrow floats), and its stored bits. */
const char *cg_store_type(const codegen *cg, const kir_instr *in);
/* Whether asm result instruction in is an output the asm makes as bits (a narrow float in
 * an integer register): cg_asm_block keeps them in a<asm>_b<result>, which a store takes
 * as they are. */
bool cg_asm_result_bits(const codegen *cg, const kir_instr *in);
void cg_store_bits(codegen *cg, int32_t i, const char *suffix);
/* The vars i<d> of point e (a C expression), in 32-bit arithmetic when n fits. */
void cg_decompose(codegen *cg, const char *e, const char *indent);
/* The tiled kernel (kir_pointwise_strategy's tile_dim): the whole entry point. */
void cg_tiled_kernel(codegen *cg, int32_t tile_dim, int32_t tile_last);

/* The entry point's signature (the kernel's params, as sym_print names them) with
 * __launch_bounds__(block[, min_blocks]) (min_blocks > 0: blocks a multiprocessor must
 * hold, which caps the registers; 0: no bound), __cluster_dims__(cluster) where cluster > 1 (sm_90),
 * the opening brace, and d<i> for every dim. */
void cg_kernel_head(codegen *cg, int32_t block, int32_t min_blocks, int32_t cluster);

/* The statements of asm instruction i in the body (codegen_asm.c): its outputs'
 * elements in a<i>_o<k> (arrays of cg->pack, scalars at pack 1). */
void cg_asm_block(codegen *cg, int32_t i);

/* Reduction kernels (codegen_reduce.c). */
ic_status cuda_codegen_reduce(const kir_kernel *k, const char *entry, int32_t sm, cuda_codegen_result *res);

#endif
