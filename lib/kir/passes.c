/* A kernel a pass: few long rows with several REDUCEs or element stores, split so that
 * each REDUCE can take two stages (kir.h, "A kernel a pass"). */
#include "kir/kir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* element[] of k (count + 1 entries, the caller frees); NULL when out of memory. */
static bool *kir_passes_levels(const kir_kernel *k) {
  bool *element = sys_calloc((size_t)k->instrs.count + 1, sizeof(bool));
  if (element) kir_levels(k, element);
  return element;
}

/* A column kernel of REDUCEs that read earlier ones (var and std over dim 0: the squares
 * about the mean) and no element stores reads its columns once a REDUCE either way; as a
 * kernel a pass each pass is one light REDUCE, which the column split serves where few
 * column blocks walk many rows (var over dim 0 of f32 [65536, 1000] was 16 blocks of 64
 * columns): wanted where the split may be (kir_split_when: not a constant 0; short
 * columns stay one launch). REDUCEs that read no other one (sum and argmax) stay one
 * kernel: one read. At most KIR_PASSES_COLUMN_REDUCES REDUCEs (statistics: mean, var,
 * std): each pass holds its stages and, for a symbolic size, the one kernel beside them,
 * so a kernel of 13 column reductions would have NVRTC compile 40 kernels. */
enum { KIR_PASSES_COLUMN_REDUCES = 4 };

static bool kir_passes_columns(const kir_kernel *k) {
  const int32_t nreduce = kir_reduce_count(k);
  if (nreduce < 2 || nreduce > KIR_PASSES_COLUMN_REDUCES) return false;
  const sym_id when = kir_split_when(k);
  int64_t v = 1;
  if (when != SYM_NONE && sym_is_const(k->syms, when, &v) && v == 0) return false;
  bool *element = kir_passes_levels(k);
  bool *read_back = sys_malloc(sizeof(bool) * ((size_t)nreduce + 1));
  bool wanted = element && read_back && !kir_stores_element_values(k, element) && kir_pass_plan(k, read_back) > 0;
  bool reads = false;
  for (int32_t q = 0; wanted && q < nreduce; q++) reads |= read_back[q];
  free(element);
  free(read_back);
  return wanted && reads;
}

bool kir_passes_wanted(const kir_kernel *k) {
  int64_t rows = 0;
  if (!k->reduces || k->contracts || k->stage != KIR_STAGE_WHOLE || kir_pack(k) > 1) return false;
  kir_reduce_strategy rs;
  kir_reduce_strategy_of(k, &rs);
  if (rs.columns) return kir_passes_columns(k);
  if (!rs.groups || !sym_is_const(k->syms, k->launch_numel, &rows) || rows > KIR_SPLIT_MAX_ROWS) return false;
  if (kir_reduce_count(k) > 1) return true;
  bool *element = kir_passes_levels(k);
  if (!element) return false; /* the one kernel is as right, only slower */
  bool stores = kir_stores_element_values(k, element);
  free(element);
  return stores;
}

sym_id kir_passes_when(const kir_kernel *k) {
  int64_t c = 0;
  const sym_id count = kir_reduced_count(k);
  kir_reduce_strategy rs;
  kir_reduce_strategy_of(k, &rs);
  if (rs.columns) return kir_split_when(k); /* kir_passes_columns: where the split would be */
  if (sym_is_const(k->syms, count, &c)) return SYM_NONE; /* kir_passes_wanted: more than one lane group */
  const int64_t group = (int64_t)KIR_REDUCE_LANES * KIR_REDUCE_LANE_CHUNKS * KIR_REDUCE_CHUNK;
  return kir_sym_positive(k->syms, sym_sub(k->syms, count, sym_const(k->syms, group)));
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
  pi->npasses = pi->nreduce + (kir_stores_element_values(k, pi->element) ? 1 : 0);
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

int32_t kir_pass_plan(const kir_kernel *k, bool *read_back) {
  kir_passes_info pi;
  if (!kir_passes_info_of(k, &pi)) return -1;
  for (int32_t q = 0; q < pi.nreduce; q++) read_back[q] = false;
  /* a pass reads back every REDUCE of another pass that it needs (kir_passes_need) */
  for (int32_t p = 1; p < pi.npasses; p++) {
    kir_passes_need(k, p, &pi);
    for (int32_t i = 0; i < k->instrs.count; i++)
      if (pi.need[i] && pi.reduce_no[i] >= 0 && pi.reduce_no[i] != p) read_back[pi.reduce_no[i]] = true;
  }
  const int32_t npasses = pi.npasses;
  kir_passes_info_free(&pi);
  return npasses;
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
  const bool store_row = pass < pi.nreduce && row_refs[pass] >= 0;
  const int32_t nreduce = pi.nreduce;
  kir_passes_need(k, pass, &pi);
  const sym_id row = kir_passes_row_offset(k);
  for (int32_t i = 0; ok && i < n; i++) {
    const kir_instr *in = &k->instrs.items[i];
    if (!pi.need[i]) continue;
    kir_instr c = *in;
    if (pi.reduce_no[i] >= 0 && pi.reduce_no[i] != pass) {
      c = (kir_instr){.kind = KIR_LOAD, .dtype = in->dtype, .offset = row};
      c.buffer = kir_buffer_of(out, row_refs[pi.reduce_no[i]], in->dtype, false);
    } else {
      for (int32_t a = 0; a < in->nargs; a++) c.args[a] = map[in->args[a]];
      if (in->kind == KIR_LOAD || in->kind == KIR_STORE)
        c.buffer = kir_buffer_of(out, k->buffers.items[in->buffer].ref, k->buffers.items[in->buffer].dtype,
                                 in->kind == KIR_STORE);
    }
    ok = (c.kind != KIR_LOAD && c.kind != KIR_STORE) || c.buffer >= 0;
    ok = ok && VEC_PUSH(out->instrs, c);
    map[i] = out->instrs.count - 1;
    if (ok && store_row && pi.reduce_no[i] == pass) { /* the pass's own REDUCE, for a pass after it */
      kir_instr st = {.kind = KIR_STORE, .dtype = in->dtype, .nargs = 1, .args = {map[i]}, .offset = row};
      st.buffer = kir_buffer_of(out, row_refs[pass], in->dtype, true);
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
