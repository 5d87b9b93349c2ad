/* CUDA C generation for reduction kernels (kir kernels with `reduces` set).
 *
 * A row (a point of the kept dims) belongs to TPR threads (a power of two): one block of
 * TPR threads a row, or, for short rows, TPR-thread slices of a 128-thread block, or on
 * sm_90 a cluster of CTAs (red_plan_cluster) for rows of 1024 lanes whose loads are kept. The
 * kernel walks the row's instructions in order: row values are computed once per thread
 * as scalars; each REDUCE is a pass over the row in which thread t is lane t of ic.h's
 * summation order: it accumulates its chunks of 8 elements (chunks t, t + L, ...) from the
 * identity, element by element; then the row's lanes combine in the pairwise tree, first
 * inside the warp (shfl.sync.bfly at distances 1, 2, 4, ...: lanes 2i and 2i+1 first),
 * then across the warps through shared memory. Rows of more than 32768 chunks (or of a
 * symbolic length) have G lane groups of 1024 lanes, reduced one after the other and
 * combined by a binary counter, which is the same pairwise tree. A last pass computes the
 * element stores. Element values are recomputed in every pass that needs them (loads come
 * back from L2), so no pass depends on what another one kept.
 *
 * Within a chunk, an access contiguous in the innermost reduced dim moves its 8 elements
 * as vectors (ld.global.nc.v4 / st.global.cs.v4) when the launch's pointers, strides and
 * sizes allow it (one test over kernel parameters, uniform over the grid); other chunks,
 * and the last partial chunk, go element by element.
 *
 * cuda_codegen_reduce below chooses the strategy and red_kernel writes the kernel's head
 * and calls a pass a REDUCE; the passes of each strategy have a file:
 *   codegen_reduce_rows.c     rows: chunk loops, lane blocks, the stores pass, the row cache
 *   codegen_reduce_columns.c  columns: the column pass, heavy kernels' shares, column pack
 *   codegen_reduce_rounds.c   light column kernels' rounds side by side
 *   codegen_reduce_split.c    two stages: the partial kernel and the combine pass
 *   codegen_reduce_common.c   what several use: accumulators, loads and stores, a chunk,
 *                             the block's combine, row values (codegen_reduce.h) */
#include <inttypes.h>
#include <stdlib.h>

#include "backend/cuda/codegen_reduce.h"

enum { RED_MIN_BLOCK = 128 };

/* Whether a row's chunks can lie inside its innermost reduced dim (vrow_ok's test): one
 * reduced dim, or an innermost size that is not a constant off a multiple of 8. */
static bool red_chunks_inside(const red_gen *rg) {
  int32_t reduced = 0;
  int64_t size = 0;
  for (int32_t d = 0; d < rg->k->ndim; d++) reduced += red_reduced(rg->k, d);
  return reduced == 1 || !sym_is_const(rg->k->syms, rg->k->dims[rg->inner], &size) || size % KIR_REDUCE_CHUNK == 0;
}

/* How an element access moves a chunk: whole (VECTOR), once (SPLAT: not read by the
 * innermost reduced var) or element by element. */
static access_mode red_classify(red_gen *rg, const kir_instr *in) {
  const kir_kernel *k = rg->k;
  codegen *cg = rg->cg;
  if (rg->inner < 0 || kir_is_guarded_load(in)) return ACCESS_ELEMENT;
  if (!sym_depends_on(cg->a, in->offset, SYM_VAR, rg->inner)) return ACCESS_SPLAT;
  sym_id checks[IC_MAX_DIMS + 1];
  int32_t n = 0;
  if (!kir_contiguous_along(k, in->offset, rg->inner, KIR_REDUCE_CHUNK, checks, &n)) {
    /* contiguous chunks that are never aligned (a row length or offset not a multiple of
     * 8): row kernels move them shifted, and no launch is vec_ok */
    if (rg->columns || (rg->count >= 0 && rg->count < RED_SHIFT_MIN) || !red_chunks_inside(rg) ||
        !kir_contiguous_along(k, in->offset, rg->inner, 1, checks, &n))
      return ACCESS_ELEMENT;
    rg->vec_never = true;
    return ACCESS_VECTOR;
  }
  for (int32_t i = 0; i < n; i++) cg_require_aligned(cg, checks[i]);
  return ACCESS_VECTOR;
}

/* ---------------------------------------------------------------- the kernel */

static void red_kernel(red_gen *rg) {
  const kir_kernel *k = rg->k;
  codegen *cg = rg->cg;
  sbuf *o = &cg->out;
  /* a column kernel says one block of 1024 threads a multiprocessor (a split's partial two
   * of 512): ptxas then takes the registers that keep a round's loads in flight (light
   * kernels: 64 registers, 46 of the 64 loads before the first add; without the bound it
   * picked 32 for two blocks, 15 in flight, and read at 88% of copy where 38 in flight read
   * at 92%, H100) */
  const int32_t column_blocks = rg->block < 1024 && k->stage == KIR_STAGE_PARTIAL ? 1024 / rg->block : 1;
  cg_kernel_head(cg, rg->block, rg->columns ? column_blocks : rg->min_blocks > 1 ? rg->min_blocks : 0, rg->cluster);
  sbuf_puts(o, "  const ic_i64 R = (ic_i64)1");
  for (int32_t d = 0; d < k->ndim; d++)
    if (red_reduced(k, d)) sbuf_printf(o, " * d%" PRId32, d);
  sbuf_puts(o, ";\n  const ic_i64 rows = (ic_i64)1");
  for (int32_t d = 0; d < k->ndim; d++)
    if (!red_reduced(k, d)) sbuf_printf(o, " * d%" PRId32, d);
  sbuf_printf(o, ";\n  const ic_i64 C = (R + 7) / 8;\n  const ic_i64 G = C > %d ? (C + %d) / %d : 1;\n",
              KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS, KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS - 1, KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS);
  sbuf_printf(o, "  const ic_i64 L = (ic_i64)%d * G;\n  (void)G;\n", KIR_REDUCE_LANES);
  if (rg->columns) {
    /* lanes in use, their power-of-two cover, warp y's share */
    /* warp w is group colg's warp coly; the group's combine uses smem rows cbase.. */
    sbuf_printf(o, "  const int colx = (int)(threadIdx.x & 31), colg = (int)(threadIdx.x >> 5) / %" PRId32
                   ", coly = (int)(threadIdx.x >> 5) %% %" PRId32 ", t = coly, cbase = colg * %" PRId32 ";\n  (void)cbase;\n",
                rg->ywarps, rg->ywarps, rg->ywarps);
    if (k->stage == KIR_STAGE_PARTIAL) {
      /* a split's partials: block (b, u), round u of column block b (kir_split_partial_numel) */
      sbuf_printf(o, "  const ic_i64 cblocks = (rows + %" PRId32 ") / %" PRId32 ", u = (ic_i64)blockIdx.x / cblocks;\n",
                  32 * rg->colgroups * rg->pack - 1, 32 * rg->colgroups * rg->pack);
      sbuf_printf(o, "  const ic_i64 row_in = (((ic_i64)blockIdx.x %% cblocks) * %" PRId32 " + colg * 32 + colx) * %" PRId32 ";\n",
                  32 * rg->colgroups, rg->pack);
    } else {
      sbuf_printf(o, "  const ic_i64 row_in = ((ic_i64)blockIdx.x * %" PRId32 " + colg * 32 + colx) * %" PRId32 ";\n", 32 * rg->colgroups,
                  rg->pack);
    }
    sbuf_puts(o, "  const ic_i64 used = C < L ? C : L;\n  ic_i64 cover = 1;\n  while (cover < used) cover <<= 1;\n");
    if (k->stage != KIR_STAGE_WHOLE)
      sbuf_printf(o, "  const ic_i64 U = (used + %" PRId32 ") / %" PRId32 ";\n", 8 * rg->round_warps - 1, 8 * rg->round_warps);
    sbuf_printf(o, "  const ic_i64 share = cover >= %" PRId32 " ? cover / %" PRId32 " : 1;\n", rg->ywarps, rg->ywarps);
    sbuf_puts(o, "  const ic_i64 lane0 = (ic_i64)coly * share, lane1 = lane0 + share < used ? lane0 + share : used;\n");
  } else if (k->stage != KIR_STAGE_WHOLE) {
    /* U partials a row (kir_split_units): block u of the row (partial), or the row's block */
    sbuf_printf(o, "  const ic_i64 U = %d * G;\n", KIR_REDUCE_LANES / KIR_SPLIT_LANES);
    if (k->stage == KIR_STAGE_PARTIAL)
      sbuf_puts(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x / U, u = (ic_i64)blockIdx.x % U;\n");
    else
      sbuf_puts(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x;\n");
    sbuf_puts(o, "  const int t = (int)threadIdx.x;\n");
  } else if (rg->cluster > 1) {
    /* a row is a cluster: CTA q (blockIdx.x % Q, its rank) holds lanes q * block .. */
    sbuf_printf(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x / %" PRId32 ";\n", rg->cluster);
    sbuf_printf(o, "  const int t = (int)(blockIdx.x %% %" PRId32 ") * %" PRId32 " + (int)threadIdx.x;\n", rg->cluster, rg->block);
  } else {
    sbuf_printf(o, "  const ic_i64 row_in = (ic_i64)blockIdx.x * %" PRId32 " + threadIdx.x / %" PRId32 ";\n",
                rg->block / rg->tpr, rg->tpr);
    sbuf_printf(o, "  const int t = (int)(threadIdx.x %% %" PRId32 ");\n", rg->tpr);
  }
  red_kept_vars(rg);
  /* the vector test: uniform over the launch */
  sbuf_puts(o, "  const bool vec_ok = ");
  if (!rg->any_vector || rg->vec_never) {
    sbuf_puts(o, "false");
  } else {
    for (int32_t b = 0; b < k->buffers.count; b++) {
      bool used = false;
      for (int32_t i = 0; i < k->instrs.count; i++) {
        const kir_instr *in = &k->instrs.items[i];
        used |= (in->kind == KIR_LOAD || in->kind == KIR_STORE) && in->buffer == b && cg->mode[i] == ACCESS_VECTOR;
      }
      size_t bytes = KIR_REDUCE_CHUNK * ic_dtype_size(k->buffers.items[b].dtype);
      if (used) sbuf_printf(o, "((ic_u64)b%" PRId32 " & %zu) == 0 && ", b, (bytes < 16 ? bytes : 16) - 1);
    }
    for (int32_t i = 0; i < cg->aligned.count; i++) {
      sbuf_puts(o, "(");
      cg_expr(cg, cg->aligned.items[i], NULL);
      sbuf_puts(o, ") % 8 == 0 && ");
    }
    sbuf_printf(o, "d%" PRId32 " %% 8 == 0", rg->inner);
  }
  sbuf_puts(o, ";\n  (void)vec_ok;\n");
  /* (rg->shift) rows whose chunks are contiguous but whose starts may not be aligned (an
   * odd or symbolic row length or stride): their whole chunks move as the aligned vectors
   * around them (ic_ld_shift, ic_st_shift), each lane keeping its chunks; vrow_ok is the
   * launch's test (element-aligned buffers; chunks inside the innermost dim) */
  if (rg->shift) {
    int32_t reduced = 0;
    for (int32_t d = 0; d < k->ndim; d++) reduced += red_reduced(k, d);
    sbuf_puts(o, "  const bool vrow_ok = ");
    for (int32_t b = 0; b < k->buffers.count; b++) {
      bool used = false;
      for (int32_t i = 0; i < k->instrs.count; i++) {
        const kir_instr *in = &k->instrs.items[i];
        used |= (in->kind == KIR_LOAD || in->kind == KIR_STORE) && in->buffer == b && cg->mode[i] == ACCESS_VECTOR;
      }
      size_t es = ic_dtype_size(k->buffers.items[b].dtype);
      if (used && es > 1) sbuf_printf(o, "((ic_u64)b%" PRId32 " & %zu) == 0 && ", b, es - 1);
    }
    if (reduced > 1) sbuf_printf(o, "d%" PRId32 " %% 8 == 0 && ", rg->inner);
    sbuf_puts(o, "true;\n  (void)vrow_ok;\n");
  }
  if (rg->pack > 1) red_pack_test(rg);
  /* one shared block for every pass's combine (the passes run one after the other, each
   * ending with a barrier): accumulators of up to 8 bytes, then the arg indices */
  sbuf_printf(o, "  __shared__ ic_u64 ic_smem[%" PRId32 "];\n  (void)ic_smem;\n", red_static_smem(rg) / 8);
  if (rg->cluster > 1)
    sbuf_printf(o, "  /* a row is a cluster of %" PRId32 " CTAs, lanes %" PRId32 " a CTA; a CTA's value (and index) for the others */\n"
                   "  __shared__ ic_u64 ic_cslot[%d];\n", rg->cluster, rg->block, RED_CLUSTER_SLOTS / 8);
  /* the cache: chunks below cache_regs in registers, the others in the shared tier */
  if (rg->smem > 0)
    sbuf_printf(o, "  /* the row's cache: chunks 0 .. %" PRId32 " of a thread in registers, %" PRId32 " .. %" PRId32
                   " in shared memory (%" PRId32 " bytes a block, %" PRId32 " block%s a multiprocessor) */\n"
                   "  extern __shared__ __align__(16) ic_u8 ic_tier[];\n",
                rg->cache_regs - 1, rg->cache_regs, rg->cache_k - 1, rg->smem, rg->min_blocks, rg->min_blocks > 1 ? "s" : "");
  int32_t tier = 0;
  for (int32_t i = 0; rg->cache_k > 0 && i < k->instrs.count; i++) {
    if (!rg->cached[i]) continue;
    const ic_dtype dt = k->instrs.items[i].dtype;
    const char *t = rg->packed[i] ? "ic_u32" : cg_ctype(dt);
    const int32_t w = red_chunk_values(dt, rg->packed[i]);
    if (rg->cache_regs > 0) sbuf_printf(o, "  %s c%" PRId32 "[%" PRId32 "][%" PRId32 "];\n", t, i, rg->cache_regs, w);
    if (rg->cache_regs < rg->cache_k) {
      sbuf_printf(o, "  %s (*const sc%" PRId32 ")[%" PRId32 "][%" PRId32 "] = (%s (*)[%" PRId32 "][%" PRId32 "])(ic_tier + %" PRId32 ");\n",
                  t, i, w, rg->block, t, w, rg->block, tier);
      tier += (rg->cache_k - rg->cache_regs) * rg->block * red_chunk_bytes(dt, rg->packed[i]);
    }
  }
  if (k->stage == KIR_STAGE_PARTIAL) {
    red_kernel_partial(rg);
    return;
  }
  int32_t p = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    if (rg->element[i]) continue;
    if (k->instrs.items[i].kind == KIR_REDUCE) {
      if (rg->columns) red_pass_columns(rg, p, i);
      else if (k->stage == KIR_STAGE_COMBINE) red_pass_combine(rg, i);
      else red_pass(rg, p, i);
      red_divisor_prep(rg, i);
      p++;
    } else {
      red_row_instr(rg, i);
    }
  }
  bool stores = false;
  for (int32_t i = 0; i < k->instrs.count; i++) stores |= rg->need[(size_t)p * (size_t)k->instrs.count + (size_t)i];
  if (stores) {
    sbuf_puts(o, "  /* the element stores */\n");
    if (rg->columns) {
      red_column_lanes(rg);
      sbuf_puts(o, "  for (ic_i64 c = j; c < C; c += L)\n");
      red_chunk(rg, p, -1, "a", "ai");
      sbuf_puts(o, "  }\n");
    } else {
      red_stores_pass(rg, p);
    }
  }
  if (rg->pack > 1) sbuf_puts(o, "  }\n  }\n"); /* red_pass_columns' column at a time */
  sbuf_puts(o, "}\n");
}

ic_status cuda_codegen_reduce(const kir_kernel *k, const char *entry, int32_t sm, cuda_codegen_result *res) {
  codegen cg = {.k = k, .entry = entry, .a = k->syms, .vec = KIR_REDUCE_CHUNK, .smem = cuda_smem_of(sm), .sm = sm};
  red_gen rg = {.cg = &cg, .k = k, .inner = -1, .lane = "e", .cluster = 1, .pack = 1, .pass = -1};
  size_t n = (size_t)k->instrs.count + 1;
  rg.nreduce = kir_reduce_count(k);
  rg.element = sys_calloc(n, sizeof(bool));
  rg.need = sys_calloc(n * ((size_t)rg.nreduce + 1), sizeof(bool));
  cg.mode = sys_calloc(n, sizeof *cg.mode);
  ic_status s = IC_OK;
  if (!rg.element || !rg.need || !cg.mode) {
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
    goto done;
  }
  kir_levels(k, rg.element);
  cg.element = rg.element;
  /* exact ops left unrounded (kir_exact_unrounded); out of memory: every op rounds */
  cg.exact_unrounded = sys_malloc(n * sizeof *cg.exact_unrounded);
  if (cg.exact_unrounded && !kir_exact_unrounded(k, cg.exact_unrounded)) {
    free(cg.exact_unrounded);
    cg.exact_unrounded = NULL;
  }
  kir_pass_needs(k, rg.element, NULL, rg.need);
  for (int32_t d = 0; d < k->ndim; d++)
    if (red_reduced(k, d)) rg.inner = d;
  /* threads per row, from the row length alone (kir_reduce_strategy_of) */
  kir_reduce_strategy strategy;
  kir_reduce_strategy_of(k, &strategy);
  rg.groups = strategy.groups;
  rg.columns = strategy.columns;
  rg.tpr = strategy.threads;
  rg.lanes_per_thread = strategy.lanes_per_thread;
  rg.count = strategy.count; /* -1: symbolic */
  if (k->stage != KIR_STAGE_WHOLE) {
    /* two stages: blocks of KIR_SPLIT_LANES threads, a lane (partial) or a share of the
     * partials (combine) each */
    rg.groups = true;
    rg.tpr = KIR_SPLIT_LANES;
    rg.lanes_per_thread = 1;
  }
  /* rows of at most a warp share blocks of RED_MIN_BLOCK; a row of more warps is a block
   * of its own (its combine goes through the block's shared memory and barriers) */
  rg.block = rg.tpr <= 32 ? RED_MIN_BLOCK : rg.tpr;
  if (rg.columns) {
    rg.ywarps = strategy.threads;
    rg.colgroups = strategy.column_groups;
    rg.column_rounds = strategy.column_rounds;
    rg.round_warps = strategy.threads;
    if (k->stage != KIR_STAGE_COMBINE) rg.pack = strategy.column_pack;
    /* a split's combine: a thread a column over its partials */
    if (k->stage == KIR_STAGE_COMBINE) rg.ywarps = 1;
    rg.block = 32 * rg.ywarps * rg.colgroups;
  }
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    cg.mode[i] = ACCESS_ELEMENT;
    if ((in->kind == KIR_LOAD || in->kind == KIR_STORE) && rg.element[i]) cg.mode[i] = red_classify(&rg, in);
    rg.any_vector |= cg.mode[i] == ACCESS_VECTOR;
  }
  /* the shifted copies where rows may be misaligned for more than their pointers: a
   * length or stride that is symbolic or never aligned; rows of a constant length below
   * RED_SHIFT_MIN and rows whose only test is the pointers' alignment (a view's offset)
   * keep their code (each chunk's shifted copy took NVRTC from 0.44 to 0.72 s for a
   * softmax of rows of 4096) */
  int64_t inner_size = 0;
  rg.shift = rg.any_vector && !rg.columns && (rg.count < 0 || rg.count >= RED_SHIFT_MIN) && red_chunks_inside(&rg) &&
             (rg.vec_never || cg.aligned.count > 0 || !sym_is_const(k->syms, k->dims[rg.inner], &inner_size));
  /* persistent rows: loads read by several passes stay in registers */
  rg.cached = sys_calloc(n, sizeof(bool));
  rg.packed = sys_calloc(n, sizeof(bool));
  rg.first_pass = sys_calloc(n, sizeof(int32_t));
  if (!rg.cached || !rg.packed || !rg.first_pass) {
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
    goto done;
  }
  const int64_t r = rg.count;
  if (k->stage == KIR_STAGE_WHOLE && !rg.groups && !rg.columns && r >= 0) {
    int64_t chunks = (r + KIR_REDUCE_CHUNK - 1) / KIR_REDUCE_CHUNK, per_lane = (chunks + KIR_REDUCE_LANES - 1) / KIR_REDUCE_LANES;
    /* chunks a thread: its lanes (short rows) or its lane's chunks */
    int32_t per_thread = rg.lanes_per_thread * (int32_t)(per_lane > 0 ? per_lane : 1);
    rg.per_thread = per_thread;
    red_plan_cache(&rg, per_thread);
    if (rg.lanes_per_thread > 1 || rg.cache_k > 0) rg.kloop = per_thread;
  }
  red_kernel(&rg);
  res->source = cuda_source_assemble(entry, &cg.out);
  res->per_thread = 1;
  res->block = rg.block;
  res->smem = rg.smem;
  res->per_block = rg.columns ? 32 * rg.colgroups * rg.pack : rg.cluster > 1 ? 1 : rg.block / rg.tpr; /* stage kernels: 1 (a unit or a row a block) */
  res->cluster = rg.cluster > 1 ? rg.cluster : 1;
  if (!res->source || cg.oom || sym_arena_failed(cg.a)) {
    free(res->source);
    res->source = NULL;
    s = error_set(IC_ERR_OUT_OF_MEMORY, "codegen: out of memory");
  }
done:
  free(rg.element);
  free(rg.need);
  free(rg.cached);
  free(rg.packed);
  free(rg.first_pass);
  free(cg.mode);
  free(cg.exact_unrounded);
  free(cg.aligned.items);
  sbuf_free(&cg.out);
  return s;
}
