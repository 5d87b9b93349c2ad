/* Kernel IR: parameters and the text form. */
#include "kir/kir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

void kir_kernel_free(kir_kernel *k) {
  if (!k) return;
  free(k->buffers.items);
  free(k->instrs.items);
  free(k->params.items);
  k->buffers.items = NULL;
  k->instrs.items = NULL;
  k->params.items = NULL;
}

int32_t kir_pack(const kir_kernel *k) {
  int32_t pack = 1;
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_ASM && k->instrs.items[i].spec->pack > pack) pack = k->instrs.items[i].spec->pack;
  return pack;
}

bool kir_kernel_copy(kir_kernel *dst, const kir_kernel *src) {
  *dst = *src;
  dst->buffers.items = NULL;
  dst->instrs.items = NULL;
  dst->params.items = NULL;
  dst->buffers.cap = dst->instrs.cap = dst->params.cap = 0;
  dst->buffers.count = dst->instrs.count = dst->params.count = 0;
  for (int32_t i = 0; i < src->buffers.count; i++)
    if (!VEC_PUSH(dst->buffers, src->buffers.items[i])) goto oom;
  for (int32_t i = 0; i < src->instrs.count; i++)
    if (!VEC_PUSH(dst->instrs, src->instrs.items[i])) goto oom;
  for (int32_t i = 0; i < src->params.count; i++)
    if (!VEC_PUSH(dst->params, src->params.items[i])) goto oom;
  return true;
oom:
  kir_kernel_free(dst);
  return false;
}

/* Sets used[i] for every leaf of `kind` with index i in e; false (nothing dropped
 * silently) when an index is out of [0, limit). */
static bool kir_mark_leaves(const sym_arena *a, sym_id e, sym_kind kind, bool *used, int32_t limit) {
  if (sym_kind_of(a, e) == kind) {
    int32_t i = sym_leaf_index(a, e);
    if (i < 0 || i >= limit) return false;
    used[i] = true;
    return true;
  }
  for (int32_t i = 0; i < sym_operand_count(a, e); i++)
    if (!kir_mark_leaves(a, sym_operand(a, e, i), kind, used, limit)) return false;
  return true;
}

static ic_status kir_push_leaves(kir_kernel *k, sym_kind kind, kir_param_kind pk) {
  bool used[KIR_MAX_PARAM_INDEX] = {false};
  bool ok = true;
  for (int32_t d = 0; d < k->ndim && ok; d++) ok = kir_mark_leaves(k->syms, k->dims[d], kind, used, KIR_MAX_PARAM_INDEX);
  for (int32_t i = 0; i < k->instrs.count && ok; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_LOAD || in->kind == KIR_STORE || in->kind == KIR_RANGE)
      ok = kir_mark_leaves(k->syms, in->offset, kind, used, KIR_MAX_PARAM_INDEX);
    if (ok && in->kind == KIR_RANGE)
      ok = kir_mark_leaves(k->syms, in->lo, kind, used, KIR_MAX_PARAM_INDEX) &&
           kir_mark_leaves(k->syms, in->hi, kind, used, KIR_MAX_PARAM_INDEX);
  }
  if (!ok)
    return error_set(IC_ERR_INTERNAL, "kernel %s: a %s index outside [0, %d)", k->name,
                     kind == SYM_SYMBOL ? "symbol" : "parameter", (int)KIR_MAX_PARAM_INDEX);
  for (int32_t i = 0; i < KIR_MAX_PARAM_INDEX; i++) {
    kir_param_kind kind_of_leaf = pk == KIR_PARAM_STRIDE && i >= KIR_SIZE_PARAM_BASE ? KIR_PARAM_SIZE : pk;
    if (used[i] && !VEC_PUSH(k->params, ((kir_param){kind_of_leaf, i})))
      return error_set(IC_ERR_OUT_OF_MEMORY, "kernel %s: out of memory", k->name);
  }
  return IC_OK;
}

ic_status kir_collect_params(kir_kernel *k) {
  k->params.count = 0;
  for (int32_t b = 0; b < k->buffers.count; b++)
    if (!VEC_PUSH(k->params, ((kir_param){KIR_PARAM_BUFFER, b})))
      return error_set(IC_ERR_OUT_OF_MEMORY, "kernel %s: out of memory", k->name);
  ic_status s = kir_push_leaves(k, SYM_SYMBOL, KIR_PARAM_SYMBOL);
  return s ? s : kir_push_leaves(k, SYM_PARAM, KIR_PARAM_STRIDE);
}

/* Size params print as size<j>; strides keep the default p<k>. */
static const char *const kir_param_names[KIR_MAX_PARAM_INDEX] = {
    [KIR_SIZE_PARAM_BASE] = "size0", [KIR_SIZE_PARAM_BASE + 1] = "size1", [KIR_SIZE_PARAM_BASE + 2] = "size2",
    [KIR_SIZE_PARAM_BASE + 3] = "size3"};

/* A pointwise kernel's load or store: how it moves memory (kir_instr_access), and for a
 * load that shares its vector (kir_shared_loads), the other load: shared_with >= 0. */
static void kir_print_access(const kir_kernel *k, const kir_pointwise_strategy *ps, bool pointwise, int32_t i,
                             int32_t shared_with, sbuf *out) {
  if (!pointwise) return;
  sym_id checks[IC_MAX_DIMS + 1];
  int32_t n;
  kir_access acc = kir_instr_access(k, ps, i, checks, &n);
  int32_t w = acc == KIR_ACCESS_TILED ? kir_tile_load_width(k, i, ps->tile_dim) : 1;
  sbuf_printf(out, "  (%s", kir_access_name(acc));
  if (w > 1) sbuf_printf(out, ", %" PRId32 " along i%" PRId32 " a load", w, ps->tile_dim);
  if (shared_with >= 0) sbuf_printf(out, ", one load with v%" PRId32, shared_with);
  sbuf_puts(out, ")");
}

void kir_print(const kir_kernel *k, bool with_names, sbuf *out) {
  sym_names named = {.params = kir_param_names, .nparams = KIR_MAX_PARAM_INDEX};
  if (with_names && k->names) {
    named.symbols = k->names->symbols;
    named.nsymbols = k->names->nsymbols;
  }
  const sym_names *names = &named;
  sbuf_printf(out, "kernel %s ", with_names ? k->name : "");
  sym_print_list(k->syms, k->ndim, k->dims, names, out);
  if (k->contracts) {
    sbuf_printf(out, " contract [%" PRId32 "]\n  strategy matmul: ", k->ndim - 1);
    if (k->contract_m >= 0) sbuf_printf(out, "m i%" PRId32 ", ", k->contract_m);
    else sbuf_puts(out, "no m, ");
    if (k->contract_n >= 0) sbuf_printf(out, "n i%" PRId32 ", ", k->contract_n);
    else sbuf_puts(out, "no n, ");
    sbuf_printf(out, "a block a tile of %" PRId32 " x %" PRId32 "%s", k->tile_m, k->tile_n,
                k->allow_tf32 ? ", tf32 allowed" : "");
    if (k->small_m > 0)
      sbuf_printf(out, ", or of %" PRId32 " x %" PRId32 " where that gives fewer than %d blocks", k->small_m, k->small_n,
                  KIR_CONTRACT_WAVE);
  } else if (k->reduces) {
    sbuf_puts(out, " reduce [");
    const char *sep = "";
    for (int32_t d = 0; d < k->ndim; d++) {
      if (!((k->axes >> d) & 1u)) continue;
      sbuf_printf(out, "%s%" PRId32, sep, d);
      sep = ", ";
    }
    kir_reduce_strategy rs;
    kir_reduce_strategy_of(k, &rs);
    if (k->stage == KIR_STAGE_PARTIAL && rs.columns)
      sbuf_printf(out, "]\n  strategy column partials: %" PRId32 " warps a row, %" PRId32 " rows a block, round u (lanes [%" PRId32
                       " u, %" PRId32 " u + %" PRId32 ")) into partial u of U a row",
                  rs.threads, 32 * rs.column_groups * rs.column_pack, 8 * rs.threads, 8 * rs.threads, 8 * rs.threads);
    else if (k->stage == KIR_STAGE_COMBINE && rs.columns)
      sbuf_printf(out, "]\n  strategy column combine: a thread a row over its U partials, 32 at a time, %" PRId32 " rows a block", 32 * rs.column_groups);
    else if (k->stage == KIR_STAGE_PARTIAL)
      sbuf_printf(out, "]\n  strategy partials: %d threads a block, lanes [%d u, %d u + %d) into partial u of U = 4 G a row",
                  KIR_SPLIT_LANES, KIR_SPLIT_LANES, KIR_SPLIT_LANES, KIR_SPLIT_LANES);
    else if (k->stage == KIR_STAGE_COMBINE)
      sbuf_printf(out, "]\n  strategy combine: %d threads a row over its U partials", KIR_SPLIT_LANES);
    else
      sbuf_printf(out, "]\n  strategy %s: %" PRId32 " %s a row", rs.columns ? "columns" : "rows", rs.threads,
                rs.columns ? "warps" : "threads");
    if (k->stage == KIR_STAGE_WHOLE && rs.columns)
      sbuf_printf(out, ", %" PRId32 " rows a block%s", 32 * rs.column_groups * rs.column_pack, rs.column_rounds ? ", warps in rounds" : "");
    if (rs.columns && rs.column_pack > 1 && k->stage != KIR_STAGE_COMBINE)
      sbuf_printf(out, ", %" PRId32 " neighbouring rows a thread", rs.column_pack);
    if (k->stage == KIR_STAGE_WHOLE && rs.lanes_per_thread > 1)
      sbuf_printf(out, ", %" PRId32 " lanes a thread", rs.lanes_per_thread);
    if (k->stage == KIR_STAGE_WHOLE && rs.groups) sbuf_puts(out, ", lane groups in turn");
  }
  kir_pointwise_strategy ps;
  kir_pointwise_strategy_of(k, &ps);
  const bool pointwise = !k->reduces && k->ndim > 0;
  if (pointwise && ps.tile_dim >= 0) {
    sbuf_printf(out, "\n  strategy tiled: %d x %" PRId32 " tiles of (i%" PRId32 ", i%" PRId32 "), %d threads a tile, %" PRId32 " points a slot",
                KIR_TILE, ps.tile_last, ps.tile_dim, k->ndim - 1, KIR_TILE_THREADS, ps.vec);
  } else if (pointwise) {
    sbuf_printf(out, "\n  strategy vector: %" PRId32 " points a thread", ps.vec);
    if (ps.uniform_ranges) sbuf_puts(out, ", ranges once a slot");
    if (ps.row_dim >= 0) sbuf_printf(out, ", %" PRId32 " rows of i%" PRId32 " a thread (loads free of it read once)", ps.rows, ps.row_dim);
  }
  sbuf_puts(out, "\n");
  if (with_names && k->note) sbuf_printf(out, "  note: %s\n", k->note);
  /* the code generator's choices the kernel alone decides: loads one vector serves, exact
   * ops left unrounded (out of memory: not printed, and not made) */
  const size_t n = (size_t)k->instrs.count + 1;
  int32_t *partner = pointwise ? sys_malloc(n * sizeof *partner) : NULL;
  bool *first = pointwise ? sys_malloc(n * sizeof *first) : NULL;
  bool *unrounded = sys_malloc(n * sizeof *unrounded);
  bool shared = partner && first && kir_shared_loads(k, &ps, partner, first);
  bool exact = unrounded && kir_exact_unrounded(k, unrounded);
  for (int32_t b = 0; b < k->buffers.count; b++) {
    sbuf_printf(out, "  buffer b%" PRId32 " : %s %s", b, ic_dtype_name(k->buffers.items[b].dtype),
                   k->buffers.items[b].written ? "out" : "in");
    if (with_names) sbuf_printf(out, " (program buffer %" PRId32 ")", k->buffers.items[b].ref);
    sbuf_puts(out, "\n");
  }
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    switch (in->kind) {
    case KIR_LOAD:
      sbuf_printf(out, "  v%" PRId32 " = load.%s b%" PRId32 "[", i, ic_dtype_name(in->dtype), in->buffer);
      sym_print(k->syms, in->offset, names, out);
      sbuf_puts(out, "]");
      if (in->nargs == 1) sbuf_printf(out, " if v%" PRId32, in->args[0]);
      kir_print_access(k, &ps, pointwise, i, shared ? partner[i] : -1, out);
      sbuf_puts(out, "\n");
      break;
    case KIR_RANGE:
      sbuf_printf(out, "  v%" PRId32 " = range ", i);
      sym_print(k->syms, in->lo, names, out);
      sbuf_puts(out, " <= ");
      sym_print(k->syms, in->offset, names, out);
      sbuf_puts(out, " < ");
      sym_print(k->syms, in->hi, names, out);
      if (in->nargs == 1) sbuf_printf(out, " and v%" PRId32, in->args[0]);
      sbuf_puts(out, "\n");
      break;
    case KIR_CONST:
      sbuf_printf(out, "  v%" PRId32 " = const.%s %.17g\n", i, ic_dtype_name(in->dtype), in->value);
      break;
    case KIR_OP:
      sbuf_printf(out, "  v%" PRId32 " = %s.%s", i, ic_op_name(in->op), ic_dtype_name(in->dtype));
      for (int32_t a = 0; a < in->nargs; a++) sbuf_printf(out, a ? ", v%" PRId32 : " v%" PRId32, in->args[a]);
      if (exact && unrounded[i]) sbuf_puts(out, "  (exact: not rounded)");
      if (in->clamped) sbuf_puts(out, "  (of a value clamped into range)");
      sbuf_puts(out, "\n");
      break;
    case KIR_REDUCE:
      sbuf_printf(out, "  v%" PRId32 " = reduce.%s.%s v%" PRId32, i, ic_reduce_name(in->reduce), ic_dtype_name(in->dtype),
                  in->args[0]);
      if (in->value != 0) sbuf_printf(out, " correction %.17g", in->value);
      sbuf_puts(out, "\n");
      break;
    case KIR_CONTRACT:
      sbuf_printf(out, "  v%" PRId32 " = contract.%s v%" PRId32 ", v%" PRId32 "\n", i, ic_dtype_name(in->dtype), in->args[0],
                  in->args[1]);
      break;
    case KIR_ASM: {
      /* the whole spec: it is part of the kernel's content and cache key */
      sbuf_printf(out, "  v%" PRId32 " = asm%s pack %" PRId32 " \"", i, in->spec->pure ? "" : ".impure", in->spec->pack);
      asm_quote(in->spec->text, out);
      sbuf_puts(out, "\" \"");
      asm_quote(in->spec->constraints, out);
      sbuf_puts(out, "\" (");
      for (int32_t a = 0; a < in->nargs; a++) sbuf_printf(out, a ? ", v%" PRId32 : "v%" PRId32, in->args[a]);
      sbuf_puts(out, ") -> [");
      for (int32_t o = 0; o < in->spec->noutputs; o++) sbuf_printf(out, "%s%s", o ? ", " : "", ic_dtype_name(in->spec->outputs[o]));
      sbuf_puts(out, "]\n");
      break;
    }
    case KIR_ASM_RESULT:
      sbuf_printf(out, "  v%" PRId32 " = asm_result.%s v%" PRId32 " %" PRId32 "\n", i, ic_dtype_name(in->dtype), in->args[0],
                  in->result);
      break;
    case KIR_STORE:
      sbuf_printf(out, "  store.%s b%" PRId32 "[", ic_dtype_name(in->dtype), in->buffer);
      sym_print(k->syms, in->offset, names, out);
      sbuf_printf(out, "] = v%" PRId32, in->args[0]);
      kir_print_access(k, &ps, pointwise, i, -1, out);
      sbuf_puts(out, "\n");
      break;
    }
  }
  free(partner);
  free(first);
  free(unrounded);
}

uint64_t kir_content_hash(const kir_kernel *k) {
  sbuf sb = {0};
  kir_print(k, false, &sb);
  uint64_t h = sb.data ? XXH3_64bits(sb.data, sb.len) : 0;
  sbuf_free(&sb);
  return h;
}

const char *kir_pass_result_text(kir_pass_result r) {
  switch (r) {
  case KIR_PASS_OUT_OF_MEMORY: return "out of memory";
  case KIR_PASS_DONE: return "done";
  case KIR_PASS_NOT_AFFINE: return "an access is not affine in the vars";
  case KIR_PASS_RANK: return "no dims, or more than the launch passes sizes for";
  case KIR_PASS_RANGES: return "ranges or guarded loads compare indices with the sizes";
  case KIR_PASS_ALREADY: return "the sizes are launch parameters already";
  case KIR_PASS_NOT_CONTIGUOUS: return "an access is not a contiguous tensor broadcast along dims";
  case KIR_PASS_REDUCTION: return "a reduction kernel keeps its sizes";
  case KIR_PASS_CONTRACTION: return "a contraction kernel keeps its dims (M, N and K)";
  }
  return "?";
}

/* ---------------------------------------------------------------- reduction kernels */

/* Whether e reads a var of dims whose reduced bit (k->axes) is `reduced`. */
static bool kir_reads_var_of(const kir_kernel *k, sym_id e, bool reduced) {
  for (int32_t d = 0; d < k->ndim; d++)
    if ((((k->axes >> d) & 1u) != 0) == reduced && sym_depends_on(k->syms, e, SYM_VAR, d)) return true;
  return false;
}

static bool kir_reads_reduced_var(const kir_kernel *k, sym_id e) { return kir_reads_var_of(k, e, true); }

bool kir_reads_kept_var(const kir_kernel *k, sym_id e) { return kir_reads_var_of(k, e, false); }

void kir_levels(const kir_kernel *k, bool *element) {
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    bool e = false;
    if (in->kind == KIR_LOAD || in->kind == KIR_RANGE) e = kir_reads_reduced_var(k, in->offset);
    if (in->kind == KIR_STORE) e = kir_reads_reduced_var(k, in->offset);
    if (in->kind != KIR_REDUCE && in->kind != KIR_CONTRACT)
      for (int32_t a = 0; a < in->nargs; a++) e = e || element[in->args[a]];
    element[i] = e;
  }
}

bool kir_stores_element_values(const kir_kernel *k, const bool *element) {
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_STORE && element[i]) return true;
  return false;
}

int32_t kir_buffer_of(kir_kernel *k, int32_t ref, ic_dtype dt, bool written) {
  for (int32_t b = 0; b < k->buffers.count; b++)
    if (k->buffers.items[b].ref == ref) {
      k->buffers.items[b].written |= written;
      return b;
    }
  kir_buffer buf = {dt, written, ref};
  return VEC_PUSH(k->buffers, buf) ? k->buffers.count - 1 : -1;
}

int32_t kir_reduce_count(const kir_kernel *k) {
  int32_t n = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) n += k->instrs.items[i].kind == KIR_REDUCE || k->instrs.items[i].kind == KIR_CONTRACT;
  return n;
}

/* Closes need over the element values the marked instructions read (instructions only
 * read earlier ones, so one backward sweep does it, whatever the kernel's length). An
 * instruction pass p finds kept (kept_from[i] < p) is a leaf: its operands are not needed. */
static void kir_close_needs(const kir_kernel *k, const bool *element, const int32_t *kept_from, int32_t p, bool *need) {
  for (int32_t i = k->instrs.count - 1; i >= 0; i--) {
    if (!need[i] || (kept_from && kept_from[i] < p)) continue;
    const kir_instr *in = &k->instrs.items[i];
    for (int32_t a = 0; a < in->nargs; a++)
      if (element[in->args[a]]) need[in->args[a]] = true;
  }
}

void kir_pass_needs(const kir_kernel *k, const bool *element, const int32_t *kept_from, bool *need) {
  int32_t n = k->instrs.count, p = 0;
  if (n <= 0) return;
  memset(need, 0, sizeof(bool) * (size_t)n * (size_t)(kir_reduce_count(k) + 1));
  for (int32_t i = 0; i < n; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_REDUCE && in->kind != KIR_CONTRACT) continue;
    for (int32_t a = 0; a < in->nargs; a++) /* a contraction's pass needs both its operands */
      if (element[in->args[a]]) need[(size_t)p * (size_t)n + (size_t)in->args[a]] = true;
    kir_close_needs(k, element, kept_from, p, &need[(size_t)p * (size_t)n]);
    p++;
  }
  for (int32_t i = 0; i < n; i++)
    if (k->instrs.items[i].kind == KIR_STORE && element[i]) need[(size_t)p * (size_t)n + (size_t)i] = true;
  kir_close_needs(k, element, kept_from, p, &need[(size_t)p * (size_t)n]);
}

sym_id kir_reduced_count(const kir_kernel *k) {
  sym_id count = sym_const(k->syms, 1);
  for (int32_t d = 0; d < k->ndim; d++)
    if ((k->axes >> d) & 1u) count = sym_mul(k->syms, count, k->dims[d]);
  return count;
}

/* The bytes of the widest dtype a load of the kernel reads along its rows (its offset
 * depends on a reduced var); 0 without one. */
static size_t kir_widest_element_load(const kir_kernel *k) {
  size_t wide = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_LOAD || ic_dtype_size(in->dtype) <= wide) continue;
    for (int32_t d = 0; d < k->ndim; d++)
      if (((k->axes >> d) & 1u) && sym_depends_on(k->syms, in->offset, SYM_VAR, d)) wide = ic_dtype_size(in->dtype);
  }
  return wide;
}

/* Whether a column kernel is light: one REDUCE, accumulating in at most 4 bytes, with no
 * index (argmax, argmin). */
static bool kir_column_kernel_light(const kir_kernel *k) {
  int32_t reduces = 0;
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind != KIR_REDUCE) continue;
    ic_dtype acc = kir_reduce_acc_dtype(in->reduce, k->instrs.items[in->args[0]].dtype);
    if (++reduces > 1 || ic_dtype_size(acc) > 4 || in->reduce == IC_REDUCE_ARGMAX || in->reduce == IC_REDUCE_ARGMIN) return false;
  }
  return reduces == 1;
}

/* Whether a kernel stores elements (a store whose address walks the reduced axes: the
 * result broadcast back, say), which it does in a second pass over its columns. */
static bool kir_stores_elements(const kir_kernel *k) {
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_STORE && kir_reads_reduced_var(k, k->instrs.items[i].offset)) return true;
  return false;
}

/* The columns a thread of a light column kernel holds (kir_reduce_strategy's
 * column_pack): 4 / w where the loads along its rows are w < 4 bytes wide and contiguous
 * across the columns, so that a thread's load is 4 bytes (2 for bytes under 2-byte
 * values) and a warp's reads 128 bytes of a row, not 64 or 32 (bf16 column sums read at
 * 91% of copy where f32 read at 100%: a warp's 64 bytes are two sectors, twice f32's L2
 * requests a byte, with the L2 saturated; H100, bench/results/2026-12-06-column-reductions-h100.md).
 * Only kernels whose columns differ in those loads alone: every load reads the columns
 * contiguously (the coefficient of the innermost kept var 1) or no kept var, no range
 * reads a kept var, no asm anywhere (an epilogue's asm, copied a column at a time, would
 * define its registers and labels P times); their rows' values after the REDUCE are
 * computed a column at a time. P halves while a constant innermost kept size is not a
 * multiple of it (columns of 33: every launch would take the column-at-a-time copy).
 * 1 for every other kernel. */
static int32_t kir_column_pack_of(const kir_kernel *k) {
  const int32_t last = k->ndim - 1;
  size_t wide = 0;
  bool before = true; /* before the REDUCE: what follows it is computed a column at a time */
  for (int32_t i = 0; i < k->instrs.count; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (in->kind == KIR_ASM || in->kind == KIR_ASM_RESULT) return 1;
    before = before && in->kind != KIR_REDUCE;
    if (!before || (in->kind != KIR_LOAD && in->kind != KIR_RANGE)) continue;
    if (!kir_reads_kept_var(k, in->offset)) continue;
    sym_id checks[IC_MAX_DIMS + 1];
    int32_t nchecks;
    if (in->kind == KIR_RANGE || kir_is_guarded_load(in) || ic_dtype_size(in->dtype) > 2 || !kir_reads_reduced_var(k, in->offset) ||
        !kir_contiguous_along(k, in->offset, last, 1, checks, &nchecks))
      return 1;
    if (ic_dtype_size(in->dtype) > wide) wide = ic_dtype_size(in->dtype);
  }
  int32_t pack = wide == 0 ? 1 : (int32_t)(4 / wide);
  int64_t run = 0;
  while (pack > 1 && sym_is_const(k->syms, k->dims[last], &run) && run % pack != 0) pack /= 2;
  return pack;
}

/* The strategy of kernel k as stage `stage` of it (a split's partial stage is planned on
 * the whole kernel before the stage exists). */
static void kir_reduce_strategy_at(const kir_kernel *k, kir_stage stage, kir_reduce_strategy *out) {
  enum { CHUNK = KIR_REDUCE_CHUNK, LANES = KIR_REDUCE_LANES, ROW_THREADS = 128, NARROW_ROW_THREADS = 64,
         LONG_ROW_THREADS = 512, LONG_ROW_CHUNKS = 8, COLUMN_WARPS = 4, COLUMN_GROUPS = 8,
         HEAVY_COLUMN_WARPS = 8, HEAVY_COLUMN_GROUPS = 2, PARTIAL_COLUMN_GROUPS = 4 };
  *out = (kir_reduce_strategy){.threads = LANES, .lanes_per_thread = 1, .column_groups = 1, .column_pack = 1, .groups = true, .count = -1};
  sym_id count = kir_reduced_count(k);
  int32_t inner = -1;
  for (int32_t d = 0; d < k->ndim; d++)
    if ((k->axes >> d) & 1u) inner = d;
  int64_t r = 0, chunks = -1;
  if (sym_is_const(k->syms, count, &r)) {
    out->count = r;
    chunks = (r + CHUNK - 1) / CHUNK;
    out->groups = kir_reduce_groups(r) > 1;
  }
  out->columns = k->ndim > 0 && inner >= 0 && !((k->axes >> (k->ndim - 1)) & 1u);
  if (out->columns) {
    /* a light kernel fits 64 registers: blocks of 1024 threads, 8 groups side by side (a
     * block reads 1 KB of each f32 row); heavier ones keep 128 registers in blocks of 512 */
    bool light = kir_column_kernel_light(k);
    out->threads = light ? COLUMN_WARPS : HEAVY_COLUMN_WARPS;
    out->column_groups = light ? COLUMN_GROUPS : HEAVY_COLUMN_GROUPS;
    /* a split's partial stage: 128 columns of 512 threads, two blocks a multiprocessor
     * (H100, ic bench, against 8 groups: f32 [524288, 256] over 0 2998 -> 3063 GB/s,
     * [4096, c = 4096] 2340 -> 2435, bf16 [65536, 4096] level at 2795; 2 groups: bf16 2678) */
    if (stage == KIR_STAGE_PARTIAL) out->column_groups = PARTIAL_COLUMN_GROUPS;
    /* rounds side by side, but for kernels that store elements: a column mean subtracted
     * back read 3% slower in rounds than in shares at f32 [4096, 16384], the same at
     * [4096, 32768] (H100) */
    out->column_rounds = light && !kir_stores_elements(k);
    if (stage != KIR_STAGE_COMBINE && (out->column_rounds || stage == KIR_STAGE_PARTIAL)) out->column_pack = kir_column_pack_of(k);
    if (out->column_rounds && chunks >= 0)
      /* rounds of 8 lanes a warp: no more warps than the first round gives lanes to (a
       * round of 4 warps over 8 chunks left 3 idle: max over f32 [64, 2^21] -11%) */
      while (out->threads > 1 && (int64_t)8 * (out->threads / 2) >= chunks) out->threads /= 2;
    else if (chunks >= 0 && chunks < out->threads)
      for (out->threads = 1; out->threads < chunks; out->threads *= 2) continue;
  } else if (chunks >= 0 && chunks <= LANES) {
    int32_t cover = 1;
    while (cover < chunks) cover *= 2;
    /* a thread holds 128 bytes of a row's widest load (bf16 rows of 4096: 64 threads of 8
     * lanes, f32 128 of 4): that much in flight a thread, while the row still fits the
     * registers (at most 8 lanes a thread, kept as storage words) */
    int32_t row_threads = kir_widest_element_load(k) <= 2 && cover <= 8 * NARROW_ROW_THREADS ? NARROW_ROW_THREADS : ROW_THREADS;
    out->threads = cover < row_threads ? cover : row_threads;
    out->lanes_per_thread = cover / out->threads;
  } else if (chunks >= 0 && chunks <= (int64_t)LANES * LONG_ROW_CHUNKS) {
    /* rows of a few chunks a lane: two lanes a thread, so more rows are in flight */
    out->threads = LONG_ROW_THREADS;
    out->lanes_per_thread = LANES / LONG_ROW_THREADS;
  }
}

void kir_reduce_strategy_of(const kir_kernel *k, kir_reduce_strategy *out) { kir_reduce_strategy_at(k, k->stage, out); }

/* ---------------------------------------------------------------- two stages */

ic_dtype kir_reduce_acc_dtype(ic_reduce_op op, ic_dtype dt) {
  bool arith = op == IC_REDUCE_SUM || op == IC_REDUCE_MEAN || op == IC_REDUCE_PROD;
  if (op == IC_REDUCE_ANY || op == IC_REDUCE_ALL) return IC_BOOL;
  if (arith && (dt == IC_BOOL || dtype_is_integer(dt))) return IC_I64;
  if (dt == IC_BOOL || dt == IC_I64 || dt == IC_U32 || dt == IC_U64 || dt == IC_F64) return dt;
  return dtype_is_integer(dt) ? IC_I32 : IC_F32;
}

sym_id kir_split_units(const kir_kernel *k) {
  sym_arena *a = k->syms;
  sym_id chunks = sym_ceildiv(a, kir_reduced_count(k), sym_const(a, KIR_REDUCE_CHUNK));
  sym_id groups = sym_max(a, sym_const(a, 1), sym_ceildiv(a, chunks, sym_const(a, (int64_t)KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS)));
  kir_reduce_strategy rs;
  kir_reduce_strategy_of(k, &rs);
  if (rs.columns) {
    /* the rounds over the lanes in use, min(C, L) (L = 1024 G) */
    sym_id used = sym_min(a, chunks, sym_mul(a, sym_const(a, KIR_REDUCE_LANES), groups));
    return sym_ceildiv(a, used, sym_const(a, (int64_t)KIR_REDUCE_CHUNK * rs.threads));
  }
  return sym_mul(a, sym_const(a, KIR_REDUCE_LANES / KIR_SPLIT_LANES), groups);
}

sym_id kir_split_partial_numel(const kir_kernel *k) {
  sym_arena *a = k->syms;
  kir_reduce_strategy rs;
  kir_reduce_strategy_at(k, KIR_STAGE_PARTIAL, &rs);
  sym_id points = k->launch_numel;
  if (rs.columns) {
    sym_id block = sym_const(a, (int64_t)32 * rs.column_groups * rs.column_pack);
    points = sym_mul(a, sym_ceildiv(a, points, block), block);
  }
  return sym_mul(a, points, kir_split_units(k));
}

/* A light column kernel's split conditions, rounds >= KIR_SPLIT_COLUMN_ROUNDS and column
 * blocks < KIR_SPLIT_COLUMN_BLOCKS, as expressions of 0 or 1 (constants where the sizes
 * are). */
sym_id kir_sym_positive(sym_arena *a, sym_id x) {
  return sym_min(a, sym_const(a, 1), sym_max(a, sym_const(a, 0), x));
}

static void kir_split_column_terms(const kir_kernel *k, const kir_reduce_strategy *rs, sym_id *long_enough, sym_id *few_blocks) {
  sym_arena *a = k->syms;
  sym_id rounds = sym_ceildiv(a, kir_reduced_count(k), sym_const(a, (int64_t)KIR_REDUCE_CHUNK * 8 * rs->threads));
  sym_id blocks = sym_ceildiv(a, k->launch_numel, sym_const(a, (int64_t)32 * rs->column_groups * rs->column_pack));
  *long_enough = kir_sym_positive(a, sym_sub(a, rounds, sym_const(a, KIR_SPLIT_COLUMN_ROUNDS - 1)));
  *few_blocks = kir_sym_positive(a, sym_sub(a, sym_const(a, KIR_SPLIT_COLUMN_BLOCKS), blocks));
}

sym_id kir_split_when(const kir_kernel *k) {
  kir_reduce_strategy rs;
  kir_reduce_strategy_of(k, &rs);
  if (!rs.columns) return SYM_NONE;
  sym_id long_enough, few_blocks;
  kir_split_column_terms(k, &rs, &long_enough, &few_blocks);
  sym_id when = sym_mul(k->syms, long_enough, few_blocks);
  int64_t always = 0;
  return sym_is_const(k->syms, when, &always) && always == 1 ? SYM_NONE : when;
}

bool kir_split_wanted(const kir_kernel *k) {
  int64_t rows = 0;
  if (!k->reduces || k->contracts || k->stage != KIR_STAGE_WHOLE || kir_reduce_count(k) != 1) return false;
  kir_reduce_strategy rs;
  kir_reduce_strategy_of(k, &rs);
  if (rs.columns) {
    /* few column blocks over many rounds (one block walking f32 [524288, 256] read at 4%
     * of copy); where a size is symbolic, the sizes bound at run time choose
     * (kir_split_when): wanted unless the constant ones already rule the split out */
    if (!rs.column_rounds) return false;
    sym_id long_enough, few_blocks;
    kir_split_column_terms(k, &rs, &long_enough, &few_blocks);
    int64_t v = 0;
    if ((sym_is_const(k->syms, long_enough, &v) && v == 0) || (sym_is_const(k->syms, few_blocks, &v) && v == 0)) return false;
  } else if (!sym_is_const(k->syms, k->launch_numel, &rows) || rows > KIR_SPLIT_MAX_ROWS || !rs.groups) {
    return false; /* rs.groups: more than one lane group possible */
  }
  /* every store is a row store: the combine stage does them */
  bool *element = sys_malloc(sizeof(bool) * ((size_t)k->instrs.count + 1));
  if (!element) return false; /* one stage is as right, only slower */
  kir_levels(k, element);
  const bool row_stores = !kir_stores_element_values(k, element);
  free(element);
  return row_stores;
}
