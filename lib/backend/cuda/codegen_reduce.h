/* The reduction generator's state (red_gen) and the pieces its files share: codegen_reduce.c
 * chooses the strategy and writes the kernel, one file a strategy writes its passes
 * (codegen_reduce_rows.c, _columns.c, _rounds.c, _split.c), codegen_reduce_common.c holds
 * what several of them use. */
#ifndef IC_BACKEND_CUDA_CODEGEN_REDUCE_H
#define IC_BACKEND_CUDA_CODEGEN_REDUCE_H

#include "backend/cuda/codegen.h"

typedef struct red_gen {
  codegen *cg;
  const kir_kernel *k;
  bool *element;    /* kir_levels */
  bool *need;       /* kir_pass_needs: (nreduce + 1) x count */
  int32_t nreduce;
  int32_t tpr;      /* threads per row */
  int32_t block;    /* threads per block */
  bool groups;      /* G may exceed 1: emit the lane-group loop */
  int32_t inner;    /* the innermost reduced dim, -1 if none */
  bool any_vector;  /* some element access moves whole chunks */
  bool vec_never;   /* ... one of them at offsets never aligned: vec_ok is false, whole
                     * chunks go shifted (vrow_ok) */
  bool shift;       /* chunks that are whole but not aligned go shifted (vrow_ok) */
  /* Persistent rows: when a row's chunks fit (K chunks a lane, K * 8 values of every
   * cached load within RED_CACHE_VALUES), loads that several passes read are kept in
   * registers (c<i>[K][8], filled by the first pass that reads them): the row comes from
   * memory once. cache_k 0: no cache. */
  int32_t cache_k;
  bool *cached;
  /* The shared-memory tier: a cached value's chunks k < cache_regs are in registers
   * (c<i>[cache_regs][8]), the others in dynamic shared memory (sc<i>[K - cache_regs][8]
   * [block]: a thread's element e of a chunk at word e * block + threadIdx.x, so a warp's accesses
   * are consecutive words). smem: its bytes; min_blocks: the blocks a multiprocessor
   * must hold (__launch_bounds__), 0 for no bound. */
  int32_t cache_regs, smem, min_blocks;
  /* Rows of a cluster (red_plan_cluster): CTAs a row (1: none). CTA q of a row holds lanes
   * [q * block, (q + 1) * block), t its lane; block combines end with the cluster's. */
  int32_t cluster;
  /* The part of the cache red_cache_at names: both (k a constant: the choice folds), the
   * registers alone, or the shared memory alone (k at run time: red_chunk_loops' rolled
   * loop) */
  enum { RED_CACHE_BOTH, RED_CACHE_REGS, RED_CACHE_SHARED } cache_part;
  /* Cached loads of dtypes narrower than 4 bytes whose values would take more than half
   * the cache budget keep their storage words instead (ic_u32 c<i>[K][words]: half or a
   * quarter of the registers), unpacked again by each pass that reads them (the raw
   * bits, so NaN payloads stay as memory has them). */
  bool *packed;
  int32_t *first_pass;
  /* Column kernels (the innermost dim is kept): a block holds 32 consecutive rows, one a
   * lane of each of its `ywarps` warps, so every load of a warp reads 32 neighbouring
   * rows (coalesced). Light kernels' warps take rounds of 8 lanes side by side
   * (red_column_rounds), the warps of heavy kernels and of those that store elements
   * contiguous shares of the lanes (red_column_shares); either way the lanes' pairwise
   * tree. The element stores split the lanes in contiguous shares (red_column_lanes). */
  bool columns;
  int32_t ywarps, colgroups; /* columns: warps a group of 32 rows, groups a block */
  bool column_rounds;        /* columns: the warps in rounds side by side, not in shares */
  int32_t round_warps;       /* columns: the W of the rounds (8 W lanes), the partials' in a combine */
  /* columns: the neighbouring rows (columns of the input) a thread holds, P (1, 2, 4:
   * kir_reduce_strategy's column_pack): row_in is the first. Its loads along the columns
   * read one word for all P (pack_ok: aligned, the columns in one innermost run), else a
   * load a column; each column has its own accumulators, subtrees and counter. */
  int32_t pack;
  bool pack_words; /* ... and the chunk at hand is pack_ok's copy */
  /* Short rows (at most 1024 chunks) spread over fewer threads, so that more rows are in
   * flight: thread t is lanes t, t + tpr, ... (lanes_per_thread of them, accumulators
   * a[k]); each lane's block combines, then they pair up (lanes t and t + tpr first).
   * kloop > 0: the chunk loop is unrolled over the thread's kloop chunks. */
  int32_t lanes_per_thread, kloop;
  int32_t per_thread; /* chunks a thread takes of a row of constant length; 0: not known */
  /* red_chunk's chunk lies inside the row (a column pass's whole round): no bounds tests,
   * so nothing stands between its loads and those of the chunks unrolled beside it */
  bool chunk_inside;
  /* ... and the vector test holds for it (red_stores_pass's copy for aligned rows of whole
   * chunks): no element-by-element path is emitted beside the vectors */
  bool vector_known;
  int64_t count; /* the elements a row reduces, -1 when symbolic */
  const char *lane; /* the element index element values are named with (red_name): "e", or "e + 1" */
  /* the pass red_chunk writes (-1 between passes): a stored value that it takes from the
   * cache is stored as it is, never rebuilt from operands that this pass did not read */
  int32_t pass;
} red_gen;

/* RED_TIER_BLOCK: the rows whose caches may take the shared-memory tier, those of one
 * 512-thread block (the long rows of kir_reduce_strategy_of): two such blocks of 64
 * registers fill a multiprocessor's 64K. */
/* RED_CLUSTER_SLOTS: the bytes of a cluster row's ic_cslot (a value and an index). */
/* RED_SHIFT_MIN: the shortest constant row length whose misaligned chunks go shifted. */
enum { RED_SHIFT_MIN = 256 };
enum { RED_CACHE_VALUES = 64, RED_DIVIDE_ROW_CHUNKS = 8, RED_TIER_BLOCK = 512, RED_CLUSTER_MAX = 8, RED_CLUSTER_SLOTS = 16 };

/* ---------------------------------------------------------------- codegen_reduce_common.c */

/* The row's cache and its length */
bool red_count_multiple(const red_gen *rg, int64_t unit);
bool red_from_cache(const red_gen *rg, int32_t p, int32_t i);
bool red_reduced(const kir_kernel *k, int32_t d);

/* Accumulators: their type, identity and combine; the warp's butterflies, the pairwise
 * tree, the binary counter; a row value from its accumulator */
bool red_arg(ic_reduce_op op);
const char *red_acc_type(ic_reduce_op op, ic_dtype dt);
void red_identity(sbuf *o, ic_reduce_op op, ic_dtype dt);
void red_combine(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *acc, const char *acc_i, const char *x,
                 const char *x_i);
void red_acc_decl(sbuf *o, const char *ind, ic_reduce_op op, ic_dtype dt);
void red_butterflies(sbuf *o, const char *ind, ic_reduce_op op, ic_dtype dt, const char *a, const char *ai,
                     int32_t width);
void red_pairwise(sbuf *o, ic_reduce_op op, ic_dtype dt, const char *arr, const char *arri, int32_t count);
void red_counter_push(sbuf *o, ic_reduce_op op, ic_dtype dt, int height);
void red_counter_collapse(sbuf *o, ic_reduce_op op, ic_dtype dt);
void red_finish(red_gen *rg, int32_t reduce);

/* Vars, element loads and ops */
void red_kept_split(const red_gen *rg, const char *indent, const char *var);
void red_kept_vars(const red_gen *rg);
void red_decompose(red_gen *rg, const char *r, const char *indent);
void red_scalar_load(red_gen *rg, int32_t i, const char *target);
void red_range(red_gen *rg, int32_t i, const char *target);
int32_t red_words(ic_dtype dt);
void red_divisor_prep(red_gen *rg, int32_t j);
void red_op_expr(red_gen *rg, int32_t i);

/* A pass: its start, a chunk and the lane's chunk loop, the block's combine; row values */
const kir_instr *red_pass_begin(red_gen *rg, int32_t p, int32_t reduce, ic_dtype *dt, const char **t);
const char *red_in_row(const red_gen *rg, const char *test);
void red_chunk_accumulate(red_gen *rg, int32_t reduce, const char *acc, const char *acc_i);
void red_chunk(red_gen *rg, int32_t p, int32_t reduce, const char *acc, const char *acc_i);
void red_chunk_loop(red_gen *rg, const char *first, const char *stride);
void red_chunk_loop_end(red_gen *rg);
void red_block_combine(red_gen *rg, int32_t reduce, const char *a, const char *ai);
void red_row_instr(red_gen *rg, int32_t i);

/* ---------------------------------------------------------------- codegen_reduce_rows.c */

void red_pass(red_gen *rg, int32_t p, int32_t reduce);
void red_stores_pass(red_gen *rg, int32_t p);
/* The persistent rows' cache: its plan, a cached chunk's entries and shared bytes */
void red_plan_cache(red_gen *rg, int32_t per_thread);
int32_t red_chunk_values(ic_dtype dt, bool packed);
int32_t red_chunk_bytes(ic_dtype dt, bool packed);
int32_t red_static_smem(const red_gen *rg);

/* ---------------------------------------------------------------- codegen_reduce_columns.c */

void red_pass_columns(red_gen *rg, int32_t p, int32_t reduce);
void red_pack_test(red_gen *rg);
void red_chunk_pack(red_gen *rg, int32_t p, int32_t reduce, const char *acc, const char *acc_i);
void red_column_lanes(red_gen *rg);

/* ---------------------------------------------------------------- codegen_reduce_rounds.c */

void red_column_rounds(red_gen *rg, int32_t p, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t);
void red_column_round(red_gen *rg, int32_t p, int32_t reduce, const kir_instr *in, ic_dtype dt, const char *t,
                      const char *first);
void red_column_join_warps(sbuf *o, const kir_instr *in, ic_dtype dt, const char *t, int32_t w, int32_t pk, const char *buf);
int32_t red_round_height(int32_t w);

/* ---------------------------------------------------------------- codegen_reduce_split.c */

void red_kernel_partial(red_gen *rg);
void red_pass_combine(red_gen *rg, int32_t reduce);
void red_column_combine(red_gen *rg, const kir_instr *in, ic_dtype dt, const char *t);

#endif
