/* lib/kir: the backend-neutral kernel IR.
 *
 * A kernel iterates over an iteration space (dims, vars i0..i{r-1} of the arena) and runs
 * its body once per point: a list of instructions in SSA form, each naming earlier
 * instructions by index. Loads and stores address a kernel buffer at an element offset
 * expression of the vars. The body is what backends compile; the kernel's parameters
 * (buffers, then size symbols, then run-time strides) are the launch ABI.
 *
 * Room to grow without a redesign: reductions add reduction dims after the pointwise
 * ones plus accumulator instructions, ops with several results add a result count and
 * projection instructions, tiled matmul adds a tile shape; none of it changes the
 * pointwise form below. */
#ifndef IC_KIR_H
#define IC_KIR_H

#include "base/base.h"
#include "ops/asm.h"
#include "sym/sym.h"

/* KIR_RANGE is a bool that depends on the point only: lo <= offset < hi, where offset
 * is an index expression of the vars and lo, hi are free of them, and (nargs 1) the
 * earlier RANGE args[0] as well, so a chain of ranges is a conjunction. Concat and pad
 * select with them (where(range, a, b)), and they guard loads: a LOAD with nargs 1
 * reads only where its guard, the RANGE args[0], holds; elsewhere it reads nothing and
 * its value is zero (and never chosen). */
/* KIR_REDUCE (reduction kernels) reduces its operand, an element value, over the reduced
 * dims into a row value, in the order ic.h states ("reductions"). */
/* KIR_ASM runs spec's PTX over its nargs inputs (groups of spec->pack elements along the
 * last dim: ic.h, "inline PTX"); it is no value itself: KIR_ASM_RESULT is output `result`
 * of the KIR_ASM args[0]. */
/* KIR_CONTRACT (contraction kernels, kir_kernel.contracts) is the matmul of its two
 * element values, args[0] (A, a value of the batch, M and K vars only) and args[1] (B, of
 * the batch, K and N vars only), both of one dtype (bf16, f16, f32, f64, i8), summed over
 * the reduced dim K in ic.h's matmul order: a row value of dtype (i32 for i8, else the
 * operands' dtype). */
typedef enum kir_kind { KIR_LOAD, KIR_CONST, KIR_OP, KIR_STORE, KIR_RANGE, KIR_REDUCE, KIR_ASM, KIR_ASM_RESULT, KIR_CONTRACT } kir_kind;

enum { KIR_MAX_ARGS = IC_ASM_MAX_OPERANDS };

typedef struct kir_instr {
  kir_kind kind;
  ic_dtype dtype;     /* the value's dtype (for stores: the stored value's) */
  ic_op op;           /* KIR_OP */
  int32_t nargs;      /* KIR_OP operands, KIR_STORE: 1 (the value), LOAD/RANGE: 0 or 1 (guard, parent),
                         KIR_ASM: its inputs, KIR_ASM_RESULT: 1 */
  int32_t args[KIR_MAX_ARGS]; /* earlier instructions */
  int32_t buffer;     /* LOAD/STORE: kernel buffer */
  sym_id offset;      /* LOAD/STORE: element offset; RANGE: the index */
  sym_id lo, hi;      /* RANGE: bounds */
  double value;       /* CONST; REDUCE: mean's correction */
  ic_reduce_op reduce; /* REDUCE */
  const asm_spec *spec; /* ASM (owned by the program's lowered graph) */
  int32_t result;       /* ASM_RESULT */
  bool clamped;         /* OP cast_saturate: a cast of a clamped value (kir_fold_clamped_casts) */
} kir_instr;

/* A LOAD with a guard. */
static inline bool kir_is_guarded_load(const kir_instr *in) { return in->kind == KIR_LOAD && in->nargs == 1; }

typedef struct kir_buffer {
  ic_dtype dtype;
  bool written;      /* stored to (else only loaded) */
  int32_t ref;       /* the caller's id for it (the program buffer) */
} kir_buffer;

typedef enum kir_param_kind {
  KIR_PARAM_BUFFER, /* index: kernel buffer; a device pointer */
  KIR_PARAM_SYMBOL, /* index: size symbol; int64 */
  KIR_PARAM_STRIDE, /* index: sym param (lower_stride_param); int64 */
  KIR_PARAM_SIZE    /* index: sym param KIR_SIZE_PARAM_BASE + j, value size_exprs[j]; int64 */
} kir_param_kind;

/* Sym params at and above KIR_SIZE_PARAM_BASE (base/limits.h) are sizes the launch
 * passes (kir_generalize_sizes); below it they are input strides. */

typedef struct kir_param {
  kir_param_kind kind;
  int32_t index;
} kir_param;

/* What a pass did. Out of memory is 0, so `if (!pass(k))` is the error check; a pass
 * that leaves a kernel as it is on purpose says why (the kir layer logs nothing: its
 * callers may). */
typedef enum kir_pass_result {
  KIR_PASS_OUT_OF_MEMORY = 0,
  KIR_PASS_DONE,           /* the pass ran over the whole kernel (it may have found nothing to change) */
  KIR_PASS_NOT_AFFINE,     /* coalesce: an access is not affine in the vars; the dims stay */
  KIR_PASS_RANK,           /* generalize: no dims, or more than KIR_MAX_SIZES */
  KIR_PASS_RANGES,         /* generalize: ranges or guarded loads compare indices with the sizes */
  KIR_PASS_ALREADY,        /* generalize: the sizes are launch parameters already */
  KIR_PASS_NOT_CONTIGUOUS, /* generalize: an access is not a contiguous tensor broadcast along dims */
  KIR_PASS_REDUCTION,      /* generalize: a reduction kernel keeps its sizes (its order depends on them) */
  KIR_PASS_CONTRACTION     /* coalesce: a contraction kernel keeps its dims (M, N and K are dims) */
} kir_pass_result;

/* "an access is not affine in the vars", ... for logs. */
const char *kir_pass_result_text(kir_pass_result r);

typedef enum kir_stage { KIR_STAGE_WHOLE, KIR_STAGE_PARTIAL, KIR_STAGE_COMBINE } kir_stage;

typedef struct kir_kernel {
  char name[32];
  sym_arena *syms;        /* shared with the program, not owned; backends may add expressions */
  const sym_names *names; /* for printing, may be NULL */
  int32_t ndim;
  sym_id dims[IC_MAX_DIMS];
  sym_id numel;          /* points of the iteration space, in the kernel's own terms */
  sym_id launch_numel;   /* the launch's points in the program's symbols (for grids): numel, or
                            the rows of a reduction, the padded rows of asm packs, the padded
                            tiles of a tiled kernel (kir_tile_points) */
  sym_id size_exprs[KIR_MAX_SIZES]; /* values of the size params, in the program's symbols */
  int32_t nsizes;
  /* A reduction kernel: the dims in `axes` (a bit per dim) are reduced. A point of the
   * other dims is a row; instructions are row values (computed once per row) or element
   * values (once per point), see kir_levels. */
  bool reduces;
  uint32_t axes;
  /* Two-stage reductions (kir_split_wanted): which stage this kernel is, and the kernel
   * buffers of the workspace between the stages (the partials' values, and their element
   * indices for argmax/argmin; -1 when there is none). */
  kir_stage stage;
  int32_t partials, partial_index;
  /* What the passes did (set by whoever runs them), so callers can log a skip. */
  kir_pass_result coalesced, generalized;
  /* A contraction kernel (a matmul with its prologues and epilogues; reduces is set too):
   * dims are [batch..., M, N, K] (M or N absent where a 1-D operand has none: contract_m,
   * contract_n are their dims or -1), K the last and the one reduced dim; exactly one
   * KIR_CONTRACT; element values are the A or the B side of it (never both, never
   * stored); row values are the epilogue. The launch (kir_contract_plan) is a block a
   * tile of tile_m x tile_n outputs of one batch point: launch_numel is batch x
   * ceil(M / tile_m) x ceil(N / tile_n), each block a launch point (or the same of the
   * small tile, kir_contract_when). allow_tf32: f32 may
   * run as TF32 (IC_COMPILE_ALLOW_TF32). */
  bool contracts;
  int32_t contract_m, contract_n;
  int32_t tile_m, tile_n;
  int32_t small_m, small_n;
  bool allow_tf32;
  /* Why the program has this kernel where the graph has no op (a static string, printed
   * with names only), NULL for none: a copy planned for a matmul operand, say. */
  const char *note;
  /* The rows strategy's dim, fixed (rows_fixed) when the launch was sized, before the
   * sizes were generalized: its choice looks at the sizes, and kernel and launch must
   * agree (kir_pointwise_strategy_of). */
  bool rows_fixed;
  int32_t rows_dim;
  struct { kir_buffer *items; int32_t count, cap; } buffers;
  struct { kir_instr *items; int32_t count, cap; } instrs;
  struct { kir_param *items; int32_t count, cap; } params;
} kir_kernel;

void kir_kernel_free(kir_kernel *k);
/* The kernel buffer for the caller's buffer `ref` (added, of dtype dt, on first use; a
 * store marks it written); -1 when out of memory. */
int32_t kir_buffer_of(kir_kernel *k, int32_t ref, ic_dtype dt, bool written);
/* A deep copy of src into dst (which owns nothing yet); false when out of memory. */
bool kir_kernel_copy(kir_kernel *dst, const kir_kernel *src);

/* The largest pack of the kernel's asm instructions (1 without any): such a kernel keeps
 * its last dim apart (groups run along it), and its launch covers every last-dim row
 * padded to a multiple of the pack. */
int32_t kir_pack(const kir_kernel *k);
/* Appends the kernel as text ("kernel k0 [n, 4] ..."). Without names, the text leaves
 * out the kernel's name, symbol names and program buffers: it is then the same for every
 * kernel that computes the same thing, whatever program it belongs to. */
void kir_print(const kir_kernel *k, bool with_names, sbuf *out);
/* A hash of the kernel's content (kir_print without names): equal kernels, equal hash. */
uint64_t kir_content_hash(const kir_kernel *k);
/* Fills params from the buffers and the symbols, strides and sizes the dims and offsets
 * use. IC_ERR_INTERNAL (never a silently dropped parameter) for a leaf index outside
 * the parameter numbering of base/limits.h; IC_ERR_OUT_OF_MEMORY. */
ic_status kir_collect_params(kir_kernel *k);


/* Reduction kernels: which instructions are element values (element[i] true: they vary
 * over the reduced dims, as loads and ranges that read a reduced var and everything
 * computed from them up to a REDUCE) and which are row values. */
void kir_levels(const kir_kernel *k, bool *element);
/* The passes of a reduction kernel: pass p < nreduce evaluates the element values the
 * p-th REDUCE needs (need[p * count + i]); the last pass (p == nreduce) those the element
 * stores need, and does the element stores. Row values and row stores are evaluated in
 * instruction order as soon as the REDUCEs before them are done. kept_from (may be NULL):
 * a value kept from pass kept_from[i] on (in registers, say) is read there, not
 * recomputed, in every later pass. need holds (nreduce + 1) * count entries. */
int32_t kir_reduce_count(const kir_kernel *k);
/* Whether a store of k is an element store (element: kir_levels'). */
bool kir_stores_element_values(const kir_kernel *k, const bool *element);
/* The elements a row reduces: the product of the reduced dims. */
sym_id kir_reduced_count(const kir_kernel *k);
/* 1 where the integer x > 0, else 0 (a constant where x is). */
sym_id kir_sym_positive(sym_arena *a, sym_id x);
void kir_pass_needs(const kir_kernel *k, const bool *element, const int32_t *kept_from, bool *need);

/* ic.h's summation order, in numbers: elements in chunks of KIR_REDUCE_CHUNK, lane groups
 * of KIR_REDUCE_LANES lanes, at most KIR_REDUCE_LANE_CHUNKS chunks a lane before a row
 * takes another group. Every backend reduces in this order. */
enum { KIR_REDUCE_CHUNK = 8, KIR_REDUCE_LANES = 1024, KIR_REDUCE_LANE_CHUNKS = 32 };

/* The lane groups G of a row of `count` elements: max(1, ceil(chunks / (LANES * LANE_CHUNKS))). */
static inline int64_t kir_reduce_groups(int64_t count) {
  const int64_t chunks = (count + KIR_REDUCE_CHUNK - 1) / KIR_REDUCE_CHUNK, per = (int64_t)KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS;
  return chunks > per ? (chunks + per - 1) / per : 1;
}

/* How a reduction kernel spreads its rows over threads, chosen from the shape and the
 * widths of the loads along the rows, printed with the kernel IR. Every strategy computes
 * ic.h's order: the lanes and their tree do not depend on the threads that hold them, so
 * eager and fused kernels of one reduction agree whatever is fused with it.
 *   rows     a row (a point of the kept dims) is `threads` threads, each holding
 *            lanes_per_thread lanes of the order (threads < 32: rows share a warp); a
 *            thread holds 128 bytes of the widest load along the row where it can (f32
 *            rows of 4096: 128 threads of 4 lanes; bf16: 64 of 8)
 *   columns  the innermost dim is kept: a group of 32 (x column_pack) neighbouring rows is `threads` warps;
 *            a block is column_groups groups side by side. A light kernel (one REDUCE,
 *            an accumulator of at most 4 bytes, no index) is 4 warps x 8 groups: 1024
 *            threads of at most 64 registers, whose warps take rounds of 8 lanes side by
 *            side (column_rounds: rounds of 8 x threads lanes, one band of rows at a
 *            time), as many warps as the first round fills (columns of 64 rows: one).
 *            A light kernel that stores elements (a column mean subtracted back: 3%
 *            slower in rounds) and heavier ones, 8 warps x 2 groups (512 threads, 128
 *            registers), give each warp a contiguous share of the lanes (fewer warps for
 *            short rows). Element loads skip L1 (a row's 128 bytes a warp are not read
 *            again). Measured
 *            (H100, the order's loads in a probe, bench/results/2026-12-05-reductions-h100.md):
 *            8 x 2 through L1 86%, skipping L1 91-95%, 4 x 8 skipping L1 99.6% of copy;
 *            reading 4 neighbouring rows a thread as 16-byte vectors lost (80-89%: a
 *            quarter of the threads, as many bytes in flight each). Rounds side by side
 *            rather than shares (bench/results/2026-12-06-column-reductions-h100.md): the f32 sum 95%
 *            of copy on a re-allocated input where shares read 90%, bf16 +5%; argmax
 *            (heavy) -9%, so heavy kernels keep their shares. A light kernel (whole in
 *            rounds, or a split's partial stage) whose loads along its rows are narrower
 *            than 4 bytes and read the rows contiguously gives each thread column_pack
 *            neighbouring rows (2 for 16-bit loads, 4 for bytes): one 4-byte load for all
 *            of them, so a warp reads 128 bytes of an input row (kir_column_pack_of;
 *            halved while a constant innermost kept size is not a multiple of it)
 *   groups   the row may have more than one lane group (long or symbolic rows): the
 *            groups are reduced one after the other */
typedef struct kir_reduce_strategy {
  bool columns;
  int32_t threads;
  int32_t column_groups; /* columns: groups of 32 rows a block; 1 otherwise */
  bool column_rounds;    /* columns: the warps take rounds of 8 lanes side by side (light, no element stores) */
  int32_t column_pack;   /* columns: neighbouring rows a thread (1, 2, 4): its loads along them one 4-byte word */
  int32_t lanes_per_thread;
  bool groups;
  int64_t count; /* the elements a row reduces, -1 when symbolic */
} kir_reduce_strategy;
void kir_reduce_strategy_of(const kir_kernel *k, kir_reduce_strategy *out);

/* Two-stage reductions. A kernel with one REDUCE and no element stores whose rows are
 * few (a constant count of at most KIR_SPLIT_MAX_ROWS) and may be long (more than one lane
 * group, or a symbolic length) has too few rows to fill the device: the program runs it as
 * two kernels (kir_split_wanted) over a workspace of U partials a row:
 *   partial  (KIR_STAGE_PARTIAL) block u of a row reduces lanes [256u, 256u + 256) of
 *            ic.h's order (each lane's chunks, then the pairwise tree over the 256) into
 *            partial u of its row; U = 4 G (kir_split_units), G the row's lane groups
 *   combine  (KIR_STAGE_COMBINE) a block a row: the row's U partials in the pairwise tree,
 *            then the row values after the REDUCE and the stores
 * Light column kernels (rounds side by side) of at least KIR_SPLIT_COLUMN_ROUNDS rounds,
 * whose columns fill fewer than KIR_SPLIT_COLUMN_BLOCKS blocks (the rows of a tall,
 * narrow input: one block of 256 columns walking 524288 rows read at 4% of copy) split by
 * rounds instead; where the length or the column count is symbolic, the program holds
 * the one kernel too and the sizes bound at run time launch one side (kir_split_when):
 *   partial  block (b, u) of the column blocks x U: round u of its 128 columns (lanes
 *            [8Wu, 8Wu + 8W), W warps a group), the round's subtree into partial
 *            u * columns + column; U the rounds in use
 *   combine  a thread a column: its U partials, 32 at a time in the pairwise tree, pushed
 *            on the binary counter as the one kernel pushes its rounds, then the column
 *            values and stores
 * Each partial is an aligned subtree of the lanes' tree (lanes past the last chunk hold the
 * identity, which changes no bits), so two stages give the bits of one; no atomics. */
enum { KIR_SPLIT_LANES = 256, KIR_SPLIT_MAX_ROWS = 256, KIR_SPLIT_COLUMN_ROUNDS = 4, KIR_SPLIT_COLUMN_BLOCKS = 64 };
bool kir_split_wanted(const kir_kernel *k);
/* Where kir_split_wanted: SYM_NONE when the kernel always splits, else an expression of
 * the symbols that is 1 where the sizes bound at run time split it and 0 where its one
 * kernel runs (a column split of a symbolic length or column count: short columns keep
 * one launch and no workspace, many columns the one kernel that fills the device). */
sym_id kir_split_when(const kir_kernel *k);
/* A kernel a pass. Few long rows (the split's: a constant count of at most
 * KIR_SPLIT_MAX_ROWS, more than one lane group or a symbolic length; no asm pack; columns
 * of 2 to 4 REDUCEs, some reading earlier ones, where the column split may be) whose kernel has several REDUCEs or stores elements cannot split in two stages as
 * it is: one block a row would walk it pass after pass (std over 2^28 elements, softmax
 * of a vector: one multiprocessor's bandwidth). kir_passes_wanted says so; the program
 * then runs the passes kir_pass_plan counts in turn (kir_pass_kernel), each reading the
 * row values of the REDUCEs before it from a buffer of its own (row_refs[q]: the caller's
 * buffer for REDUCE q's values, of its dtype, one a row, rows contiguous over the kept
 * dims; -1 where no later pass reads them):
 *   pass q < R  REDUCE q (the q-th in instruction order) and what it needs, REDUCEs before
 *               it read back from their buffers, its value stored to row_refs[q] (unless
 *               -1), and the row stores whose last REDUCE is q (those of none: pass 0): one
 *               REDUCE and row stores, which splits in two stages (kir_split_wanted)
 *   pass R      (where there are element stores) a pointwise kernel over the whole space:
 *               the element stores and what they need, every REDUCE read back
 * The values are the one kernel's (the same instructions, a REDUCE's value stored and read
 * back exactly), so the bits are too; each pass reads the rows again, as the one kernel's
 * passes did for rows too long to keep. */
bool kir_passes_wanted(const kir_kernel *k);
/* The passes of k (its REDUCEs, and one more where it stores elements), and read_back[q]
 * for each REDUCE q: whether a later pass reads its row values; -1 when out of memory. */
int32_t kir_pass_plan(const kir_kernel *k, bool *read_back);
/* SYM_NONE where the reduced count is a constant (the passes always run); else an
 * expression of the symbols, 1 where the count bound at run time is more than a lane
 * group (the passes run) and 0 where it is not (the one kernel runs: rows that short
 * take a launch, and the row cache, rather than 2 R + 1 launches). The program holds
 * both, as it holds a column split beside its one kernel (kir_split_when). Column
 * kernels (their REDUCEs reading earlier ones, no element stores) take the passes where
 * the one kernel would be split (kir_split_when): few column blocks over many rows. */
sym_id kir_passes_when(const kir_kernel *k);
/* Pass `pass` of k into out (which owns nothing yet); IC_ERR_OUT_OF_MEMORY (no message:
 * the caller's), or kir_collect_params' error. */
ic_status kir_pass_kernel(const kir_kernel *k, int32_t pass, const int32_t *row_refs, kir_kernel *out);
/* U, the partials a row (a column), as an expression of the kernel's symbols. */
sym_id kir_split_units(const kir_kernel *k);
/* The points the partial stage is launched over: rows x U, or for columns the column
 * blocks' columns x U (a block a column block and round). */
sym_id kir_split_partial_numel(const kir_kernel *k);
/* The dtype a REDUCE of op over operand dtype dt accumulates in (ic.h: f32 for f16, bf16,
 * fp8 and f32; f64; i64 for sums and products of integers and bool; bool for any and all;
 * max and min of integers in i32 (the narrow ones), u32, i64 or u64, of bool in bool);
 * partials are stored in it. */
ic_dtype kir_reduce_acc_dtype(ic_reduce_op op, ic_dtype dt);

/* Contraction kernels: the tile of outputs a block computes, chosen from the operand
 * dtype and the sizes (constants; symbolic sizes take the default), into k->tile_m,
 * k->tile_n and k->launch_numel. The tile never changes a value's bits (ic.h: the order
 * along K is the same in every tile). */
void kir_contract_plan(kir_kernel *k);
/* Where a size is symbolic, a tensor-core kernel holds a second, small tile (small_m x
 * small_n; 0 x 0 where there is none), and each launch takes one from the sizes bound at
 * run time, as the plan takes one from constant sizes: the large tile where its blocks
 * fill a wave of the device (at least KIR_CONTRACT_WAVE), the small one elsewhere (more,
 * smaller tiles). kir_contract_when is the choice, an expression of the symbols that is 1
 * where the large tile runs, SYM_NONE without a small tile; the kernel computes the same
 * choice from its sizes, and launch_numel counts the chosen tile's blocks. Either tile
 * gives the same bits. */
enum { KIR_CONTRACT_WAVE = 120 };
sym_id kir_contract_when(const kir_kernel *k);
/* The KIR_CONTRACT instruction of a contraction kernel (-1: none). */
int32_t kir_contract_index(const kir_kernel *k);

/* Pointwise kernels (access.c): how threads cover the points, printed with the kernel.
 *   vector  a thread takes a slot of V consecutive points of the flattened space; V is
 *           16 bytes of the narrowest tensor that moves along the slot, at most 32 bytes
 *           of the widest it loads and 16 of the widest it stores (splat operands, read
 *           once a slot, do not count), halved until it divides a constant last dim, at
 *           least the kernel's asm pack
 *   uniform_ranges  every concat/pad range is monotone along a slot: a slot whose ranges
 *           agree at both its ends evaluates them once, and its guarded loads stay
 *           vectors; a slot across a boundary goes point by point
 *   tiled   (transposes) a load contiguous along dim p, not the last (which the stores
 *           follow), or strided with run-time strides (contiguous along p or the last
 *           dim, found at run time): blocks of KIR_TILE_THREADS threads take KIR_TILE x KIR_TILE tiles of
 *           (p, last); such loads go through a tile in shared memory, read along p and
 *           used along the last dim, so both sides are coalesced; slots of V points
 *           along the last dim, one 16-byte vector of the widest tensor. tile_dim is p
 *           (-1: not tiled); tile_last the tile's extent along the last dim: 2 KIR_TILE
 *           where no buffer is wider than 2 bytes (a KIR_TILE-square tile of them moves
 *           half the bytes a block that one of f32 does: too few in flight) and the tiles
 *           fit, else KIR_TILE. The tiles (of the compute type, padded) take at most
 *           KIR_TILE_SMEM bytes, a block's static shared memory: more transposed loads
 *           than fit leave the kernel untiled;
 *           the launch covers the padded tiles (kir_tile_points). Kernels with
 *           concat/pad ranges or asm packs are not tiled.
 *   rows    a thread takes `rows` slots at once along row_dim (-1: none), a dim but the
 *           last that some load is broadcast along: the loads (and ranges) free of it are
 *           read once for all of them, and each thread stores `rows` vectors, one a row;
 *           the launch covers ceil(d_row / rows) rows (kir_row_points). Taken by
 *           write-dominated kernels (every load broadcast along some dim, as in
 *           [a, 1, k] + [1, b, k]) and by kernels that broadcast a load of more than
 *           KIR_ROW_SPAN bytes (RoPE's cos and sin over the batch: more than L1 keeps, so
 *           every row would read them from L2 again). Not with asm packs or tiles, nor
 *           along a dim that a range tests. */
enum { KIR_TILE = 64, KIR_TILE_THREADS = 256, KIR_ROWS = 4, KIR_ROW_SPAN = 256 * 1024, KIR_TILE_SMEM = 48 * 1024 };
typedef struct kir_pointwise_strategy {
  int32_t vec;
  bool uniform_ranges;
  int32_t tile_dim, tile_last;
  int32_t row_dim, rows;
} kir_pointwise_strategy;
void kir_pointwise_strategy_of(const kir_kernel *k, kir_pointwise_strategy *out);
/* The points a row-strategy launch covers: the dims, d_row replaced by ceil(d_row / rows). */
sym_id kir_row_points(const kir_kernel *k, const kir_pointwise_strategy *ps);
/* A tiled load whose strides are run-time parameters: the stride of its last var (the
 * tile is read along the last dim where it is 1, along p elsewhere); -1 for a load that
 * is transposed by its kernel alone (read along p). */
sym_id kir_tile_order(const kir_kernel *k, int32_t i);
/* Elements a thread's tile load of load i moves along p at once: 16 bytes of a 1- or
 * 2-byte dtype whose offset steps by 1 along p (a constant) and that is read along p
 * (kir_tile_order -1), else 1 (one element: 4- and 8-byte dtypes already fill a warp's
 * 128 bytes). The generated kernel takes the vector where it is aligned and inside d_p,
 * else element by element. */
int32_t kir_tile_load_width(const kir_kernel *k, int32_t i, int32_t tile_dim);
/* The points of the padded tiles of a tiled kernel: ceil(d_p / T) T ceil(d_last / TL) TL
 * times the other dims (T = KIR_TILE, TL = ps->tile_last). */
sym_id kir_tile_points(const kir_kernel *k, const kir_pointwise_strategy *ps);
/* A pointwise kernel of asm pack 1, its launch fixed: launch_numel covers its padded
 * tiles (tiled) or its rows of rows (the rows strategy), and rows_fixed holds the rows
 * strategy's dim, which generalized sizes must not change (the launch counts on it). */
void kir_plan_pointwise_launch(kir_kernel *k);

/* Whether element offset `offset` is affine in the vars with coefficient 1 on var dim
 * (contiguous along it) and every other coefficient and its constant part multiples of m:
 * constant ones are tested here, the others go to checks (at most IC_MAX_DIMS) to hold at
 * run time. */
bool kir_contiguous_along(const kir_kernel *k, sym_id offset, int32_t dim, int64_t m, sym_id *checks, int32_t *nchecks);
/* Whether expression e reads a kept var of reduction kernel k (a dim not in k->axes). */
bool kir_reads_kept_var(const kir_kernel *k, sym_id e);

/* How an access at element offset `offset` (elements of `elem` bytes) moves a slot of vec
 * points: one vector (its offset is the last var plus multiples of vec: those that are
 * not constants go to checks, at most IC_MAX_DIMS + 1, to hold at run time), one element
 * for the slot (splat: it does not read the last var), or element by element. */
typedef enum kir_access { KIR_ACCESS_VECTOR, KIR_ACCESS_SPLAT, KIR_ACCESS_ELEMENT, KIR_ACCESS_TILED } kir_access;
kir_access kir_access_of(const kir_kernel *k, int32_t vec, sym_id offset, size_t elem, sym_id *checks,
                         int32_t *nchecks);
const char *kir_access_name(kir_access a);
/* The access of load or store instruction i under strategy ps (kir_access_of; guarded loads element by element unless
 * the ranges are uniform over slots; tiled: through the shared-memory tile). */
kir_access kir_instr_access(const kir_kernel *k, const kir_pointwise_strategy *ps, int32_t i, sym_id *checks,
                            int32_t *nchecks);

/* Guarded vector loads that one vector load serves (pointwise, not tiled, ranges uniform
 * over slots): loads of one buffer and dtype read at the same rows, and a where that sees
 * the first only on its true arm (its condition the first's guard) and the second only
 * on its false arm (a concat's pieces of one tensor: RoPE's halves of x). One vector is
 * read from the address the first's guard picks where either guard holds: the first
 * gets its own value where its guard holds, the second where the first's fails, and what
 * each holds elsewhere is never seen. partner[i]: the other load of i's pair, -1 for none;
 * true_arm[i]: i is its pair's first. count entries each; false: out of memory (no pairs). */
bool kir_shared_loads(const kir_kernel *k, const kir_pointwise_strategy *ps, int32_t *partner, bool *true_arm);
/* neg, abs and relu of an f16, bf16 or fp8 value are exact: their rounding to the dtype
 * changes only a NaN's bits (to the canonical NaN). unrounded[i]: op i is such an op and no
 * use sees its NaN's bits (every use makes its own canonical NaN: f32 arithmetic, maximum,
 * minimum, clamp, relu, a comparison, a reduction; or is an arm of a where whose uses are
 * such), so the kernel leaves its rounding out. count entries; false: out of memory (none
 * marked). */
bool kir_exact_unrounded(const kir_kernel *k, bool *unrounded);

/* Passes (coalesce.c, fold.c, share.c), for kernels of any length. */
kir_pass_result kir_coalesce_dims(kir_kernel *k);
kir_pass_result kir_generalize_sizes(kir_kernel *k);
/* Casts to fp8 of values clamped into its finite range become saturating casts (one cvt,
 * the same bits), and a saturating cast absorbs a clamp to that range (fold.c). */
kir_pass_result kir_fold_clamped_casts(kir_kernel *k);
/* A value computed twice (the same op, dtype and attributes over the same arguments;
 * stores and asm statements aside) is computed once, its later copies' uses renamed to the
 * first (share.c). */
kir_pass_result kir_share_equal_values(kir_kernel *k);

#endif
