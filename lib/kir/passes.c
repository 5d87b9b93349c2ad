/* A kernel a pass: few long rows with several REDUCEs or element stores, split so that
 * each REDUCE can take two stages (kir.h, "A kernel a pass"). */
#include "kir/kir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether some store of k is an element store (kir_levels: its value or its address
 * varies over the reduced dims). */
static bool kir_passes_store_elements(const kir_kernel *k, const bool *element) {
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (k->instrs.items[i].kind == KIR_STORE && element[i]) return true;
  return false;
}

/* element[] of k (count + 1 entries, the caller frees); NULL when out of memory. */
static bool *kir_passes_levels(const kir_kernel *k) {
  bool *element = sys_calloc((size_t)k->instrs.count + 1, sizeof(bool));
  if (element) kir_levels(k, element);
  return element;
}

bool kir_passes_wanted(const kir_kernel *k) {
  int64_t rows = 0;
  if (!k->reduces || k->stage != KIR_STAGE_WHOLE || kir_pack(k) > 1) return false;
  kir_reduce_strategy rs;
  kir_reduce_strategy_of(k, &rs);
  if (rs.columns || !rs.groups || !sym_is_const(k->syms, k->launch_numel, &rows) || rows > KIR_SPLIT_MAX_ROWS) return false;
  if (kir_reduce_count(k) > 1) return true;
  bool *element = kir_passes_levels(k);
  if (!element) return false; /* the one kernel is as right, only slower */
  bool stores = kir_passes_store_elements(k, element);
  free(element);
  return stores;
}

int32_t kir_pass_count(const kir_kernel *k) {
  bool *element = kir_passes_levels(k);
  if (!element) return -1;
  int32_t n = kir_reduce_count(k) + (kir_passes_store_elements(k, element) ? 1 : 0);
  free(element);
  return n;
}

sym_id kir_passes_when(const kir_kernel *k) {
  sym_arena *a = k->syms;
  sym_id count = sym_const(a, 1);
  for (int32_t d = 0; d < k->ndim; d++)
    if ((k->axes >> d) & 1u) count = sym_mul(a, count, k->dims[d]);
  int64_t c = 0;
  if (sym_is_const(a, count, &c)) return SYM_NONE; /* kir_passes_wanted: more than one lane group */
  /* 1 where count > one lane group's elements, else 0 */
  const int64_t group = (int64_t)KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS * KIR_REDUCE_CHUNK;
  return sym_min(a, sym_const(a, 1), sym_max(a, sym_const(a, 0), sym_sub(a, count, sym_const(a, group))));
}

/* A row's place in a buffer of one value a row: the kept vars, row-major over the kept
 * dims. */
static sym_id kir_passes_row_offset(const kir_kernel *k) {
  sym_arena *a = k->syms;
  sym_id offset = sym_const(a, 0), stride = sym_const(a, 1);
  for (int32_t d = k->ndim - 1; d >= 0; d--) {
    if ((k->axes >> d) & 1u) continue;
    offset = sym_add(a, offset, sym_mul(a, sym_var(a, d), stride));
    stride = sym_mul(a, stride, k->dims[d]);
  }
  return offset;
}

/* The kernel buffer of out for the caller's buffer ref (added on first use). */
static int32_t kir_passes_buffer(kir_kernel *out, int32_t ref, ic_dtype dt, bool written) {
  for (int32_t b = 0; b < out->buffers.count; b++)
    if (out->buffers.items[b].ref == ref) {
      out->buffers.items[b].written |= written;
      return b;
    }
  kir_buffer buf = {dt, written, ref};
  return VEC_PUSH(out->buffers, buf) ? out->buffers.count - 1 : -1;
}

/* What the passes look at: element[i] (kir_levels); reduce_no[i], a REDUCE's number (-1
 * for other instructions); last[i], the last REDUCE leading to i (-1 for none); need[i],
 * scratch for kir_passes_need. */
typedef struct kir_passes_info {
  bool *element, *need;
  int32_t *reduce_no, *last;
  int32_t nreduce, npasses;
} kir_passes_info;

static void kir_passes_info_free(kir_passes_info *pi) {
  free(pi->element);
  free(pi->need);
  free(pi->reduce_no);
  free(pi->last);
}

static bool kir_passes_info_of(const kir_kernel *k, kir_passes_info *pi) {
  const int32_t n = k->instrs.count;
  pi->element = kir_passes_levels(k);
  pi->need = sys_calloc((size_t)n + 1, sizeof(bool));
  pi->reduce_no = sys_malloc(sizeof(int32_t) * ((size_t)n + 1));
  pi->last = sys_malloc(sizeof(int32_t) * ((size_t)n + 1));
  if (!pi->element || !pi->need || !pi->reduce_no || !pi->last) {
    kir_passes_info_free(pi);
    return false;
  }
  pi->nreduce = 0;
  for (int32_t i = 0; i < n; i++) {
    const kir_instr *in = &k->instrs.items[i];
    pi->reduce_no[i] = in->kind == KIR_REDUCE ? pi->nreduce++ : -1;
    pi->last[i] = pi->reduce_no[i];
    for (int32_t a = 0; a < in->nargs && in->kind != KIR_REDUCE; a++)
      if (pi->last[in->args[a]] > pi->last[i]) pi->last[i] = pi->last[in->args[a]];
  }
  pi->npasses = pi->nreduce + (kir_passes_store_elements(k, pi->element) ? 1 : 0);
  return true;
}

/* pi->need[i]: instruction i is in pass `pass` (a REDUCE of another pass: read back). */
static void kir_passes_need(const kir_kernel *k, int32_t pass, kir_passes_info *pi) {
  const int32_t n = k->instrs.count;
  bool *need = pi->need;
  for (int32_t i = 0; i < n; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (pass < pi->nreduce)
      need[i] = pi->reduce_no[i] == pass ||
                (in->kind == KIR_STORE && !pi->element[i] && (pi->last[i] > 0 ? pi->last[i] : 0) == pass);
    else
      need[i] = in->kind == KIR_STORE && pi->element[i];
  }
  /* operands are earlier instructions: one backward sweep; a REDUCE of another pass is
   * read back from its buffer, so what it reduces is not needed */
  for (int32_t i = n - 1; i >= 0; i--) {
    const kir_instr *in = &k->instrs.items[i];
    if (!need[i] || (pi->reduce_no[i] >= 0 && pi->reduce_no[i] != pass)) continue;
    for (int32_t a = 0; a < in->nargs; a++) need[in->args[a]] = true;
  }
}

/* Whether a pass after q reads REDUCE q back (pi->need is left as the last pass's). */
static bool kir_passes_read_back(const kir_kernel *k, int32_t q, kir_passes_info *pi) {
  int32_t at = -1;
  for (int32_t i = 0; i < k->instrs.count; i++)
    if (pi->reduce_no[i] == q) at = i;
  for (int32_t p = q + 1; at >= 0 && p < pi->npasses; p++) {
    kir_passes_need(k, p, pi);
    if (pi->need[at]) return true;
  }
  return false;
}

bool kir_pass_reads_back(const kir_kernel *k, int32_t q) {
  kir_passes_info pi;
  if (!kir_passes_info_of(k, &pi)) return true; /* a buffer too many is harmless */
  bool read = kir_passes_read_back(k, q, &pi);
  kir_passes_info_free(&pi);
  return read;
}

ic_status kir_pass_kernel(const kir_kernel *k, int32_t pass, const int32_t *row_refs, kir_kernel *out) {
  const int32_t n = k->instrs.count;
  *out = *k;
  memset(&out->buffers, 0, sizeof out->buffers);
  memset(&out->instrs, 0, sizeof out->instrs);
  memset(&out->params, 0, sizeof out->params);
  snprintf(out->name, sizeof out->name, "%.20s_p%d", k->name, (int)pass);
  kir_passes_info pi;
  int32_t *map = sys_malloc(sizeof(int32_t) * ((size_t)n + 1));
  bool ok = map && kir_passes_info_of(k, &pi);
  if (!ok) {
    free(map);
    return IC_ERR_OUT_OF_MEMORY;
  }
  const bool store_row = pass < pi.nreduce && kir_passes_read_back(k, pass, &pi);
  const int32_t nreduce = pi.nreduce;
  kir_passes_need(k, pass, &pi);
  const sym_id row = kir_passes_row_offset(k);
  for (int32_t i = 0; ok && i < n; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (!pi.need[i]) continue;
    kir_instr c = *in;
    if (pi.reduce_no[i] >= 0 && pi.reduce_no[i] != pass) {
      c = (kir_instr){.kind = KIR_LOAD, .dtype = in->dtype, .offset = row};
      c.buffer = kir_passes_buffer(out, row_refs[pi.reduce_no[i]], in->dtype, false);
    } else {
      for (int32_t a = 0; a < in->nargs; a++) c.args[a] = map[in->args[a]];
      if (in->kind == KIR_LOAD || in->kind == KIR_STORE)
        c.buffer = kir_passes_buffer(out, k->buffers.items[in->buffer].ref, k->buffers.items[in->buffer].dtype,
                                     in->kind == KIR_STORE);
    }
    ok = (c.kind != KIR_LOAD && c.kind != KIR_STORE) || c.buffer >= 0;
    ok = ok && VEC_PUSH(out->instrs, c);
    map[i] = out->instrs.count - 1;
    if (ok && store_row && pi.reduce_no[i] == pass) { /* the pass's own REDUCE, for a pass after it */
      kir_instr st = {.kind = KIR_STORE, .dtype = in->dtype, .nargs = 1, .args = {map[i]}, .offset = row};
      st.buffer = kir_passes_buffer(out, row_refs[pass], in->dtype, true);
      ok = st.buffer >= 0 && VEC_PUSH(out->instrs, st);
    }
  }
  kir_passes_info_free(&pi);
  free(map);
  if (ok && pass == nreduce) { /* the element stores: a pointwise kernel over every point */
    out->reduces = false;
    out->axes = 0;
    out->numel = sym_const(k->syms, 1);
    for (int32_t d = 0; d < k->ndim; d++) out->numel = sym_mul(k->syms, out->numel, k->dims[d]);
    out->launch_numel = out->numel;
    kir_plan_pointwise_launch(out);
  }
  ic_status st = ok && !sym_arena_failed(k->syms) ? kir_collect_params(out) : IC_ERR_OUT_OF_MEMORY;
  if (st) kir_kernel_free(out);
  return st;
}
