/* Reductions along rows (kir_reduce_strategy's rows): TPR threads a row, a pass a REDUCE
 * over each lane's chunks (unrolled over a persistent row's K chunks), the lanes' combine
 * in the block (and the cluster), then the stores pass; and the plan of the persistent
 * rows' cache: registers, the shared-memory tier, clusters of CTAs on sm_90. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/codegen_reduce.h"

/* Whether pass p reads anything from memory (a load the cache does not hold). */
static bool red_pass_loads(const red_gen *rg, int32_t p) {
  const kir_kernel *k = rg->k;
  const bool *need = &rg->need[(size_t)p * (size_t)k->instrs.count];
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (need[i] && k->instrs.items[i].kind == KIR_LOAD && !red_from_cache(rg, p, i)) return true;
  return false;
}

/* Whether pass p, which reads memory, gets a copy of its chunk loop for aligned rows
 * (vec_ok) of a constant length of whole chunks: no element-by-element path and no bounds
 * tests between its chunks (red_chunk_loop's guards for rows of whole chunks), so that the unrolled chunks are
 * one stretch of code whose loads ptxas issues together. With a test and a branch a chunk,
 * each chunk's loads waited for the one before to be used: a warp had a chunk in flight
 * (softmax rows of 262144 in clusters of 8 CTAs of 128 threads, 8 warps a multiprocessor:
 * 50.7% of copy on an H100). Rows of a block of 512 threads or of a cluster only: few
 * warps share a multiprocessor there; rows of 4096 (many blocks a multiprocessor) read at
 * 97-99% of copy as they are, and the copy took f32 layer norm from 64 to 95 registers. */
static bool red_known_copy(const red_gen *rg, int32_t p) {
  return rg->kloop > 0 && rg->any_vector && !rg->vec_never && red_count_multiple(rg, KIR_REDUCE_CHUNK) && !rg->groups &&
         !rg->columns && rg->k->stage == KIR_STAGE_WHOLE && (rg->cluster > 1 || rg->block >= RED_TIER_BLOCK) &&
         red_pass_loads(rg, p);
}

/* The chunk loop of pass p with its body (red_chunk; acc/acc_i name the accumulator at
 * chunk k, rolled_acc/rolled_acc_i at lane q of the rolled loop). A pass that takes every
 * load from a cache with a shared-memory part, and reads nothing from memory, unrolls only
 * the register chunks and rolls the shared ones (k at run time, the thread's lanes q
 * unrolled): NVRTC then compiles a body a lane instead of one a chunk (softmax rows of
 * 262144: 32 chunks a thread, three passes), and nothing waits on memory in the loop. */
static void red_chunk_loops(red_gen *rg, int32_t p, int32_t reduce, const char *first, const char *stride,
                            const char *acc, const char *acc_i, const char *rolled_acc, const char *rolled_acc_i) {
  sbuf *o = &rg->cg->out;
  const int32_t kr = rg->cache_regs, m = rg->lanes_per_thread;
  if (rg->kloop == 0 || rg->cache_k == 0 || kr >= rg->cache_k || red_pass_loads(rg, p)) {
    red_chunk_loop(rg, first, stride);
    red_chunk(rg, p, reduce, acc, acc_i);
    red_chunk_loop_end(rg);
    return;
  }
  const int32_t kloop = rg->kloop;
  rg->cache_part = RED_CACHE_REGS;
  rg->kloop = kr;
  if (kr > 0) {
    red_chunk_loop(rg, first, stride);
    red_chunk(rg, p, reduce, acc, acc_i);
    red_chunk_loop_end(rg);
  }
  rg->kloop = kloop;
  rg->cache_part = RED_CACHE_SHARED;
  sbuf_printf(o, "#pragma unroll 1\n    for (int k0 = %" PRId32 "; k0 < %" PRId32 "; k0 += %" PRId32 ") {\n#pragma unroll\n"
                 "    for (int q = 0; q < %" PRId32 "; q++) {\n    const int k = k0 + q;\n"
                 "    const ic_i64 c = %s + (ic_i64)q * %" PRId32 " + (ic_i64)(k / %" PRId32 ") * %d;\n    if (live && c < C)\n",
              kr, kloop, m, m, first, rg->tpr, m, KIR_REDUCE_LANES);
  red_chunk(rg, p, reduce, rolled_acc, rolled_acc_i);
  sbuf_puts(o, "    }\n    }\n");
  rg->cache_part = RED_CACHE_BOTH;
}

/* Pass p's chunk loops (red_chunk_loops), and where `copy` before them a copy for aligned
 * rows of whole chunks (vec_ok, R % 8 == 0): vector accesses without an element path, no
 * bounds tests inside the row (red_chunk_loop's guards where R is a constant). */
static void red_chunk_loops_copied(red_gen *rg, int32_t p, int32_t reduce, bool copy, const char *first, const char *stride,
                                   const char *acc, const char *acc_i, const char *rolled_acc, const char *rolled_acc_i) {
  sbuf *o = &rg->cg->out;
  if (copy) {
    sbuf_puts(o, "  if (vec_ok && R % 8 == 0) {\n");
    rg->vector_known = rg->chunk_inside = true;
    red_chunk_loops(rg, p, reduce, first, stride, acc, acc_i, rolled_acc, rolled_acc_i);
    rg->vector_known = rg->chunk_inside = false;
    sbuf_puts(o, "  } else {\n");
  }
  red_chunk_loops(rg, p, reduce, first, stride, acc, acc_i, rolled_acc, rolled_acc_i);
  if (copy) sbuf_puts(o, "  }\n");
}

/* Row kernels' last pass, the element stores (and the loads only it reads). Where it
 * loads vectors of 1- or 2-byte elements, a copy of it serves launches whose buffers are
 * aligned and whose rows are whole chunks (vec_ok, R % 8 == 0: every chunk below C is a
 * full vector): with the vector test a constant, no chunk carries the 8 element loads
 * beside each vector, which ptxas predicates into every chunk (RMS norm's weight: 56
 * predicated-off 2-byte loads a thread, an issue slot each; 4-byte loads kept their
 * branches, and the copy took f32 layer norm from 64 to 80 registers). Rows of a
 * 512-thread block or a cluster whose last pass reads memory take the copy too, with no
 * test between chunks (red_known_copy). */
void red_stores_pass(red_gen *rg, int32_t p) {
  const kir_kernel *k = rg->k;
  const bool *need = &rg->need[(size_t)p * (size_t)k->instrs.count];
  bool vec = false;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    vec |= need[i] && in->kind == KIR_LOAD && !red_from_cache(rg, p, i) && rg->cg->mode[i] == ACCESS_VECTOR &&
           ic_dtype_size(in->dtype) <= 2;
  }
  red_chunk_loops_copied(rg, p, -1, (vec && !rg->vec_never) || red_known_copy(rg, p), "t", "(ic_i64)1024", "a", "ai", "a", "ai");
}

/* Whether red_block_combine_scattered serves m lane blocks: several warps a row (a block
 * is one row), every (block, warp) pair fits one warp's lanes, and eight blocks or more.
 * Measured on the H200 against the plain butterflies (ic-bench reductions, two runs
 * each): 8 blocks, RMS norm bf16 87.0% -> 90.1% of copy, FP8 row quantization 87.7% ->
 * 89.2%; 4 blocks (f32 rows of 4096), softmax 95.5% -> 93.7% and layer norm 93.8% ->
 * 92.4% (softmax took 64 registers where it had 56). */
static bool red_scatter_fits(const red_gen *rg, int32_t m) {
  return rg->tpr > 32 && m >= 8 && m <= 32 && rg->tpr / 32 * m <= 32;
}

/* red_block_combine_many by scattering: the same tree in fewer shuffles. At butterfly
 * distance o = 1, 2, ... while a thread holds n > 1 blocks, it keeps half of them (the
 * upper half where bit o of its lane is set), sends its partner the other half and joins
 * what the partner sends: n/2 shuffles a level instead of n, every pair of the tree
 * joined. The upper lane's thread joins a pair as (upper, lower): every combine is
 * commutative to the bit (f32 NaNs are canonical), as rows of a warp or less, whose every
 * lane keeps its own butterflies' result, already assume. A lane ends with one block,
 * q = its first log2(m) bits reversed; the warp's other levels are plain butterflies.
 * Lanes 0..m-1 of each warp store their block's sum; warp 0 then holds (block q, warp w)
 * at lane q * warps + w: butterflies below distance `warps` are the warps' tree, those
 * from `warps` up the blocks' pairwise tree. */
static void red_block_combine_scattered(red_gen *rg, int32_t reduce, int32_t m) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  bool arg = red_arg(in->reduce);
  sbuf *o = &rg->cg->out;
  int32_t warps = rg->tpr / 32, dist = 1;
  sbuf_puts(o, "    {\n      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n");
  for (int32_t n = m; n > 1; n /= 2, dist *= 2) {
    int32_t half = n / 2;
    sbuf_printf(o, "      {\n        const bool up = (lane & %" PRId32 ") != 0;\n#pragma unroll\n"
                   "        for (int j = 0; j < %" PRId32 "; j++) {\n", dist, half);
    sbuf_printf(o, "          const %s keep = up ? am[j + %" PRId32 "] : am[j], x = ic_bfly(up ? am[j] : am[j + %" PRId32
                   "], %" PRId32 ");\n", t, half, half, dist);
    if (arg)
      sbuf_printf(o, "          const ic_i64 keepi = up ? ami[j + %" PRId32 "] : ami[j], xi = ic_bfly(up ? ami[j] : ami[j + %" PRId32
                     "], %" PRId32 ");\n", half, half, dist);
    else
      sbuf_puts(o, "          const ic_i64 keepi = 0, xi = 0;\n");
    sbuf_puts(o, "          am[j] = keep; ami[j] = keepi; ");
    red_combine(o, in->reduce, dt, "am[j]", "ami[j]", "x", "xi");
    sbuf_puts(o, "\n          (void)keepi; (void)xi;\n        }\n      }\n");
  }
  sbuf_printf(o, "      for (int o = %" PRId32 "; o < 32; o <<= 1) {\n        const %s x = ic_bfly(am[0], o);\n", dist, t);
  sbuf_puts(o, arg ? "        const ic_i64 xi = ic_bfly(ami[0], o);\n" : "        const ic_i64 xi = 0;\n");
  sbuf_puts(o, "        ");
  red_combine(o, in->reduce, dt, "am[0]", "ami[0]", "x", "xi");
  sbuf_puts(o, "\n        (void)xi;\n      }\n");
  /* lane l < m holds block q(l): l's bit s is q's bit log2(m) - 1 - s */
  sbuf_printf(o, "      %s *const sa = (%s *)ic_smem;\n", t, t);
  if (arg) sbuf_puts(o, "      ic_i64 *const sai = (ic_i64 *)(ic_smem + 32);\n");
  sbuf_printf(o, "      if (lane < %" PRId32 ") {\n        int q = 0;\n        for (int b = 1; b < %" PRId32 "; b <<= 1) q = q * 2 + ((lane & b) != 0);\n"
                 "        sa[q * %" PRId32 " + warp] = am[0];\n", m, m, warps);
  if (arg) sbuf_printf(o, "        sai[q * %" PRId32 " + warp] = ami[0];\n", warps);
  sbuf_puts(o, "      }\n      __syncthreads();\n");
  sbuf_printf(o, "      if (warp == 0) {\n        a = lane < %" PRId32 " ? sa[lane] : ", m * warps);
  red_identity(o, in->reduce, dt);
  sbuf_puts(o, ";\n");
  if (arg) sbuf_printf(o, "        ai = lane < %" PRId32 " ? sai[lane] : (ic_i64)9223372036854775807ll;\n", m * warps);
  red_butterflies(o, "        ", in->reduce, dt, "a", "ai", m * warps);
  sbuf_printf(o, "        if (lane == 0) { sa[0] = a;%s }\n      }\n      __syncthreads();\n      a = sa[0];\n",
              arg ? " sai[0] = ai;" : "");
  if (arg) sbuf_puts(o, "      ai = sai[0];\n");
  sbuf_puts(o, "      __syncthreads();\n    }\n");
}

/* red_block_combine for m lane blocks at once (accumulators am[q]/ami[q]), then the
 * blocks pair up into a/ai: the warp butterflies of each block, one shared-memory round
 * across the warps for all of them. */
static void red_block_combine_many(red_gen *rg, int32_t reduce, int32_t m) {
  const kir_instr *in = &rg->k->instrs.items[reduce];
  ic_dtype dt = rg->k->instrs.items[in->args[0]].dtype;
  const char *t = red_acc_type(in->reduce, dt);
  bool arg = red_arg(in->reduce);
  sbuf *o = &rg->cg->out;
  int32_t warp_lanes = rg->tpr < 32 ? rg->tpr : 32;
  if (warp_lanes > 1) {
    sbuf_printf(o, "#pragma unroll\n    for (int q = 0; q < %" PRId32 "; q++)\n", m);
    red_butterflies(o, "    ", in->reduce, dt, "am[q]", "ami[q]", warp_lanes);
  }
  if (rg->tpr > 32) {
    int32_t warps = rg->tpr / 32;
    sbuf_printf(o, "    {\n      %s (*const sa)[32] = (%s (*)[32])ic_smem;\n", t, t);
    if (arg) sbuf_printf(o, "      ic_i64 (*const sai)[32] = (ic_i64 (*)[32])(ic_smem + %" PRId32 ");\n", m * 32);
    sbuf_puts(o, "      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n");
    sbuf_printf(o, "      if (lane == 0)\n        for (int q = 0; q < %" PRId32 "; q++) { sa[q][warp] = am[q];%s }\n", m,
                arg ? " sai[q][warp] = ami[q];" : "");
    sbuf_puts(o, "      __syncthreads();\n      if (warp == 0) {\n");
    sbuf_printf(o, "#pragma unroll\n        for (int q = 0; q < %" PRId32 "; q++) {\n          am[q] = lane < %" PRId32 " ? sa[q][lane] : ", m, warps);
    red_identity(o, in->reduce, dt);
    sbuf_puts(o, ";\n");
    if (arg) sbuf_printf(o, "          ami[q] = lane < %" PRId32 " ? sai[q][lane] : (ic_i64)9223372036854775807ll;\n", warps);
    red_butterflies(o, "          ", in->reduce, dt, "am[q]", "ami[q]", warps);
    sbuf_puts(o, "        }\n");
  }
  red_pairwise(o, in->reduce, dt, "am", "ami", m);
  sbuf_puts(o, "    a = am[0];\n    ai = ami[0];\n");
  if (rg->tpr > 32) {
    sbuf_printf(o, "        if (lane == 0) { sa[0][0] = a;%s }\n      }\n      __syncthreads();\n      a = sa[0][0];\n",
                arg ? " sai[0][0] = ai;" : "");
    if (arg) sbuf_puts(o, "      ai = sai[0][0];\n");
    sbuf_puts(o, "      __syncthreads();\n    }\n");
  }
}

/* The pass of the REDUCE at instruction `reduce` (the p-th): its row value v<reduce>. */
void red_pass(red_gen *rg, int32_t p, int32_t reduce) {
  ic_dtype dt;
  const char *t;
  const kir_instr *in = red_pass_begin(rg, p, reduce, &dt, &t);
  sbuf *o = &rg->cg->out;
  if (rg->groups) {
    sbuf_printf(o, "  %s st[40]; ic_i64 sti[40]; int sh[40], n = 0;\n  for (ic_i64 g = 0; g < G; g++) {\n", t);
  } else {
    sbuf_puts(o, "  {\n    const ic_i64 g = 0;\n");
  }
  int32_t m = rg->lanes_per_thread;
  red_acc_decl(o, "    ", in->reduce, dt);
  if (m > 1) {
    sbuf_printf(o, "    %s am[%" PRId32 "]; ic_i64 ami[%" PRId32 "];\n    for (int q = 0; q < %" PRId32 "; q++) { am[q] = a; ami[q] = ai; }\n",
                t, m, m, m);
  }
  char acc[32], acc_i[32];
  snprintf(acc, sizeof acc, "am[k %% %" PRId32 "]", m);
  snprintf(acc_i, sizeof acc_i, "ami[k %% %" PRId32 "]", m);
  red_chunk_loops_copied(rg, p, reduce, red_known_copy(rg, p), "g * 1024 + t", "L", m > 1 ? acc : "a", m > 1 ? acc_i : "ai",
                         m > 1 ? "am[q]" : "a", m > 1 ? "ami[q]" : "ai");
  if (m > 1) {
    /* each lane block combines (the butterflies per block, one shared-memory round for
     * all of them), then the blocks pair up */
    if (red_scatter_fits(rg, m)) red_block_combine_scattered(rg, reduce, m);
    else red_block_combine_many(rg, reduce, m);
  } else {
    red_block_combine(rg, reduce, "a", "ai");
  }
  if (rg->groups) {
    red_counter_push(o, in->reduce, dt, 0);
    sbuf_puts(o, "  }\n");
    red_counter_collapse(o, in->reduce, dt);
    sbuf_printf(o, "  {\n    const %s a = st[0];\n    const ic_i64 ai = sti[0];\n", t);
  }
  red_finish(rg, reduce);
  sbuf_puts(o, "  }\n  }\n");
}

/* ---------------------------------------------------------------- persistent rows */

/* Whether a cached load keeps its storage words rather than values: a narrow dtype whose
 * values would take more than half the register budget (measured on the H200: bf16 rows
 * of 8192, 8 chunks a thread, gain 62.7% -> 71% of copy; rows of 4096, 4 chunks, lose
 * 89% -> 79% to the unpacking). */
static bool red_packs(const red_gen *rg, int32_t i, int32_t per_thread) {
  const kir_instr *in = &rg->k->instrs.items[i];
  return in->kind == KIR_LOAD && ic_dtype_size(in->dtype) < 4 && !kir_is_guarded_load(in) &&
         rg->cg->mode[i] != ACCESS_SPLAT && per_thread * KIR_REDUCE_CHUNK > RED_CACHE_VALUES / 2;
}

/* A cached chunk of dt: its entries (8 values, or the storage words when packed), as
 * the register budget counts them; the registers they take (two a value of 8 bytes);
 * their bytes in the shared-memory tier. */
int32_t red_chunk_values(ic_dtype dt, bool packed) { return packed ? red_words(dt) : KIR_REDUCE_CHUNK; }
static int32_t red_value_bytes(ic_dtype dt) {
  const char *t = cg_ctype(dt);
  return strcmp(t, "bool") == 0 ? 1 : strcmp(t, "double") == 0 || strcmp(t, "ic_i64") == 0 ? 8 : 4;
}
static int32_t red_chunk_regs(ic_dtype dt, bool packed) {
  return packed ? red_words(dt) : KIR_REDUCE_CHUNK * (red_value_bytes(dt) == 8 ? 2 : 1);
}
int32_t red_chunk_bytes(ic_dtype dt, bool packed) { return packed ? 4 * red_words(dt) : KIR_REDUCE_CHUNK * red_value_bytes(dt); }

/* A chunk of every load read again (later): the registers and the shared-memory bytes
 * the tier's cache takes for it; false when there is none. */
static bool red_tier_chunk(const red_gen *rg, const bool *later, int32_t per_thread, int32_t *chunk_regs, int32_t *bytes) {
  *chunk_regs = *bytes = 0;
  for (int32_t i = 0; i < rg->k->instrs.count; i++) {
    const kir_instr *in = &rg->k->instrs.items[i];
    if (!later[i] || in->kind != KIR_LOAD) continue;
    *chunk_regs += red_chunk_regs(in->dtype, red_packs(rg, i, per_thread));
    *bytes += red_chunk_bytes(in->dtype, red_packs(rg, i, per_thread));
  }
  return *chunk_regs > 0;
}

/* The tier's cache for blocks of `threads` threads, `blocks` of them a multiprocessor
 * (fixed: each one's static shared memory and the system's share): the thread's first
 * chunks, whole lanes of them, in `values` registers (chunk_regs a chunk), the rest in
 * dynamic shared memory (bytes a chunk). Taken (every load read again cached) when the
 * shared part is in the target's limits; false, nothing changed, when not, or when
 * `shared` and the registers hold the whole cache. */
static bool red_tier_take(red_gen *rg, const bool *later, int32_t per_thread, int32_t threads, int32_t blocks,
                          int32_t values, int64_t fixed, bool shared) {
  int32_t chunk_regs, bytes;
  if (!red_tier_chunk(rg, later, per_thread, &chunk_regs, &bytes)) return false;
  int32_t regs = values / chunk_regs;
  if (regs > per_thread) regs = per_thread;
  regs -= regs % rg->lanes_per_thread; /* whole lanes (red_chunk_loops' rolled loop) */
  const int64_t smem = (int64_t)(per_thread - regs) * threads * bytes;
  if ((shared && smem == 0) || smem > rg->cg->smem.block || blocks * (smem + fixed) > rg->cg->smem.sm) return false;
  for (int32_t i = 0; i < rg->k->instrs.count; i++) {
    rg->cached[i] = later[i] && rg->k->instrs.items[i].kind == KIR_LOAD;
    rg->packed[i] = rg->cached[i] && red_packs(rg, i, per_thread);
  }
  rg->cache_regs = regs;
  rg->smem = (int32_t)smem;
  rg->min_blocks = blocks;
  return true;
}

/* The static shared memory of a row kernel: the combine's block (red_kernel declares it). */
int32_t red_static_smem(const red_gen *rg) {
  /* columns in rounds: each warp's round subtree, double-buffered, values and indices of 8
   * bytes (light kernels: accumulators of at most 4 bytes and no index, so the P <= 4
   * subtrees of a packed thread fit too) */
  if (rg->columns && rg->column_rounds && rg->ywarps > 1) return 2 * 2 * 32 * 8 * rg->ywarps * rg->colgroups;
  if (rg->columns) return 64 * 8 * rg->ywarps * rg->colgroups; /* red_column_shares' warps, values and indices */
  int32_t slots = rg->lanes_per_thread;
  return 64 * 8 * (slots > 1 ? slots : 1);
}

/* The shared-memory tier for the cached loads of a one-block row (rg->block threads)
 * whose registers cannot hold them with room for a second block on the multiprocessor:
 * the first chunks in registers, the rest in dynamic shared memory. Rows of 32000 f32
 * (8 chunks a thread of 512) took 98 registers, one block a multiprocessor, whose load,
 * reduce and store phases then follow each other (log_softmax [8192, 32000]: 65% of copy
 * on the H200, where rows of 16384 at 52 registers and two blocks read at 92%). With 4
 * chunks in registers and 4 (64 KB) in shared memory two blocks fit. Where two cannot
 * and the registers leave loads out (`left`: longer rows), one block keeps
 * RED_CACHE_VALUES values in registers and the rest in shared memory, so the row is read
 * from memory once rather than once a pass. False (nothing changed) where the loads do
 * not fit the target's shared memory. */
static bool red_plan_smem_tier(red_gen *rg, const bool *later, int32_t per_thread, bool left) {
  const int64_t fixed = red_static_smem(rg) + CUDA_SMEM_RESERVED;
  return red_tier_take(rg, later, per_thread, rg->block, 2, RED_CACHE_VALUES / 2, fixed, true) ||
         (left && red_tier_take(rg, later, per_thread, rg->block, 1, RED_CACHE_VALUES, fixed, true));
}

/* Rows of 8193 to 32768 chunks (65537 to 262144 elements) are a block of 1024 threads, a
 * lane each, whose loads no multiprocessor holds: every pass read the row from memory
 * again (softmax rows of 262144 f32: 48% of copy on the H200, three reads of 1 MiB a row,
 * 256 rows against an L2 of 50 MiB). On sm_90 such a row becomes a cluster of Q CTAs of
 * 1024 / Q threads: CTA q holds lanes [q 1024/Q, (q + 1) 1024/Q) and keeps their loads as
 * the shared-memory tier does (registers, then dynamic shared memory), so the row is read
 * once. The lanes' tree does not change: each CTA's lanes are an aligned subtree, combined
 * as a block's, and the top log2 Q levels join the CTAs' values through distributed shared
 * memory (red_cluster_combine), the same bits in every CTA. Q is the smallest of 2, 4, 8
 * that lets two CTAs share a multiprocessor (65536 / 2T registers a thread: a cache of 32
 * values at T = 512, 64 below); none where even 8 do not fit (the row stays as it was). */
static bool red_plan_cluster(red_gen *rg, const bool *later, int32_t per_thread) {
  const int64_t fixed = red_static_smem(rg) + RED_CLUSTER_SLOTS + CUDA_SMEM_RESERVED;
  for (int32_t q = 2; q <= RED_CLUSTER_MAX; q *= 2) {
    const int32_t threads = KIR_REDUCE_LANES / q;
    if (!red_tier_take(rg, later, per_thread, threads, 2, threads >= 512 ? RED_CACHE_VALUES / 2 : RED_CACHE_VALUES, fixed,
                       false))
      continue;
    rg->cluster = q;
    rg->block = threads;
    return true;
  }
  return false;
}

/* Element values that several passes read: loads first, then ops, while the thread's
 * registers allow (per_thread chunks of 8 values each), or the loads alone in the
 * shared-memory tier (red_plan_smem_tier) for a row of one block that would take more.
 * Later passes take them from the cache (red_cache_at) and need nothing they were
 * computed from (the needs are cut there). */
void red_plan_cache(red_gen *rg, int32_t per_thread) {
  const kir_kernel *k = rg->k;
  int32_t n = k->instrs.count, values = 0;
  bool *later = sys_calloc((size_t)n + 1, sizeof(bool));
  if (!later) {
    rg->cg->oom = true;
    return;
  }
  for (int32_t i = 0; i < n; i++) {
    rg->first_pass[i] = -1;
    for (int32_t p = 0; p <= rg->nreduce && rg->first_pass[i] < 0; p++)
      if (rg->need[(size_t)p * (size_t)n + (size_t)i]) rg->first_pass[i] = p;
    for (int32_t p = rg->first_pass[i] + 1; rg->first_pass[i] >= 0 && p <= rg->nreduce; p++)
      later[i] |= rg->need[(size_t)p * (size_t)n + (size_t)i];
    later[i] = later[i] && rg->element[i];
  }
  bool left = false; /* a load read again that the registers do not hold */
  for (int pick = 0; pick < 2; pick++) { /* loads, then ops */
    for (int32_t i = 0; i < n; i++) {
      const kir_instr *in = &k->instrs.items[i];
      if (!later[i] || in->kind != (pick == 0 ? KIR_LOAD : KIR_OP)) continue;
      bool packed = red_packs(rg, i, per_thread);
      int32_t regs = per_thread * red_chunk_values(in->dtype, packed);
      if (values + regs > RED_CACHE_VALUES) {
        left = left || in->kind == KIR_LOAD;
        continue;
      }
      rg->cached[i] = true;
      rg->packed[i] = packed;
      values += regs;
    }
  }
  rg->cache_regs = per_thread;
  const bool more = values > RED_CACHE_VALUES / 2 || left;
  const bool tier = more && ((rg->block == RED_TIER_BLOCK && red_plan_smem_tier(rg, later, per_thread, left)) ||
                             (rg->tpr == KIR_REDUCE_LANES && rg->lanes_per_thread == 1 && rg->cg->sm >= 90 &&
                              red_plan_cluster(rg, later, per_thread)));
  free(later);
  if (values == 0 && !tier) return;
  rg->cache_k = per_thread;
  /* the needs of each later pass stop at the values it takes from the cache */
  int32_t *kept_from = sys_malloc(sizeof(int32_t) * ((size_t)n + 1));
  if (!kept_from) {
    rg->cg->oom = true;
    return;
  }
  for (int32_t i = 0; i < n; i++) kept_from[i] = rg->cached[i] ? rg->first_pass[i] : INT32_MAX;
  kir_pass_needs(k, rg->element, kept_from, rg->need);
  free(kept_from);
}
