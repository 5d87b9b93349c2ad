/* ic_compile: the whole pipeline, top to bottom, in compile_graph.
 *   check the graph -> open the backend (ctx_backend: its state in this context) ->
 *   program cache (canonical graph key + backend config) -> lower (lib/lower; it
 *   canonicalizes equivalent spellings) -> canonical node order (lib/lower/order.c) ->
 *   schedule (lib/sched) -> program IR and each group's kernel IR (lib/program) ->
 *   backend compile (lib/backend, through the kernel cache) -> grids -> program cache
 * A fused kernel that fails to compile is split into eager kernels (with a warning)
 * unless the compile is strict. This file and its neighbours context.c and
 * program_cache.c are the top layer: they may use every layer below. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "program/program.h"
#include "program_cache.h"
#include "runtime/context.h"

/* Every symbol must be a whole dim of some input, so a run can bind it. */
static ic_status compile_check_graph(const ic_graph *g) {
  const char *msg = NULL;
  if (g->error) {
    ic_graph_error(g, &msg);
    return error_set(g->error, "the graph holds an error: %s", msg);
  }
  if (g->outputs.count == 0) return error_set(IC_ERR_INVALID_GRAPH, "the graph has no outputs");
  if (g->inputs.count > PROGRAM_MAX_INPUTS || g->symbols.count > PROGRAM_MAX_SYMBOLS ||
      g->outputs.count > PROGRAM_MAX_OUTPUTS)
    return error_set(IC_ERR_UNSUPPORTED,
                     "the graph has %" PRId32 " inputs, %" PRId32 " symbols and %" PRId32
                     " outputs; ic supports at most %d, %d and %d",
                     g->inputs.count, g->symbols.count, g->outputs.count, PROGRAM_MAX_INPUTS, PROGRAM_MAX_SYMBOLS,
                     PROGRAM_MAX_OUTPUTS);
  for (int32_t k = 0; k < g->symbols.count; k++) {
    bool bound = false;
    for (int32_t i = 0; i < g->inputs.count && !bound; i++) {
      const graph_node *in = graph_node_get(g, g->inputs.items[i]);
      for (int32_t d = 0; d < in->ndim && !bound; d++)
        bound = sym_kind_of(g->syms, in->dims[d]) == SYM_SYMBOL && sym_leaf_index(g->syms, in->dims[d]) == k;
    }
    if (!bound)
      return error_set(IC_ERR_INVALID_GRAPH, "symbol '%s' is not a dim of any input, so no run can bind it",
                          g->symbols.items[k]);
  }
  return IC_OK;
}

/* IC_DUMP: the program's files in $IC_DUMP/<its program key in 32 hex digits>/, so that
 * every compile keeps its own (a program from the program cache was dumped when
 * compiled); key is NULL when it could not be computed (out of memory): $IC_DUMP/unkeyed/. */
static void compile_dump(ic_context *ctx, const ic_graph *g, const key128 *key, const ic_program *p) {
  if (!ctx->dump_dir) return;
  char sub[40] = "unkeyed";
  if (key) snprintf(sub, sizeof sub, "%016" PRIx64 "%016" PRIx64, key->hi, key->lo);
  sbuf sb = {0};
  graph_print(g, &sb);
  ctx_dump(ctx, sub, "graph.txt", sb.data, sb.len);
  sb.len = 0;
  program_print(p, &sb);
  ctx_dump(ctx, sub, "program.txt", sb.data, sb.len);
  for (int32_t i = 0; i < p->kernels.count; i++) {
    const program_kernel *k = &p->kernels.items[i];
    char name[64];
    snprintf(name, sizeof name, "%s.kir", k->kir.name);
    ctx_dump(ctx, sub, name, k->ir_text, strlen(k->ir_text));
    snprintf(name, sizeof name, "%s.cu", k->kir.name);
    if (k->compiled->source) ctx_dump(ctx, sub, name, k->compiled->source, strlen(k->compiled->source));
  }
  sbuf_free(&sb);
}

/* A kernel IR pass that left a kernel as it was says why (debug level). */
static void compile_log_skipped_passes(ic_context *ctx, const ic_program *p) {
  for (int32_t i = 0; i < p->kernels.count; i++) {
    const kir_kernel *k = &p->kernels.items[i].kir;
    if (k->coalesced != KIR_PASS_DONE)
      log_msg(&ctx->log, IC_LOG_DEBUG, "%s: dims not coalesced: %s", k->name, kir_pass_result_text(k->coalesced));
    if (k->generalized != KIR_PASS_DONE)
      log_msg(&ctx->log, IC_LOG_DEBUG, "%s: sizes not generalized (compiled for these sizes): %s", k->name,
              kir_pass_result_text(k->generalized));
  }
}

/* Compiles every kernel. *failed_group: the schedule group whose fusion failed (-1 if
 * none). */
static ic_status compile_kernels(ic_program *p, const schedule *s, uint32_t flags, int32_t *failed_group) {
  *failed_group = -1;
  /* Batching is an optimisation: without memory for the list, compile one by one. */
  const int32_t n = p->kernels.count;
  const kir_kernel **kirs = p->backend->batch_begin && n > 1 ? sys_malloc(sizeof *kirs * (size_t)n) : NULL;
  for (int32_t i = 0; kirs && i < n; i++) kirs[i] = &p->kernels.items[i].kir;
  void *batch = kirs ? p->backend->batch_begin(p->bs, kirs, n, flags) : NULL;
  free(kirs); /* the batch keeps what it needs */
  ic_status st = IC_OK;
  for (int32_t i = 0; i < p->kernels.count && !st; i++) {
    program_kernel *k = &p->kernels.items[i];
    bool fused = s->groups[k->group].count > 1;
    if (k->kir.params.count > PROGRAM_MAX_PARAMS)
      st = error_set(IC_ERR_UNSUPPORTED, "%s needs %" PRId32 " parameters (at most %d)", k->kir.name,
                        k->kir.params.count, PROGRAM_MAX_PARAMS);
    else
      st = p->backend->compile(p->bs, &k->kir, flags, batch, &k->compiled);
    if (st) {
      if (st == IC_ERR_COMPILE && fused) *failed_group = k->group;
      error_prefix("compiling %s", k->kir.name);
    }
  }
  if (batch) p->backend->batch_end(batch);
  return st;
}

ic_status ic_compile(ic_context *ctx, const ic_graph *g, const ic_compile_options *opts, ic_program **out) {
  if (!out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_compile: out is NULL");
  *out = NULL;
  if (!ctx || !g) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_compile: context or graph is NULL");
  ic_compile_options o = {.struct_size = sizeof o};
  if (opts) {
    if (opts->struct_size < offsetof(ic_compile_options, flags) + sizeof(uint32_t) || opts->struct_size > sizeof o)
      return error_set(IC_ERR_INVALID_ARGUMENT, "ic_compile: options.struct_size %u is not one ic knows",
                          (unsigned)opts->struct_size);
    memcpy(&o, opts, opts->struct_size);
  }
  if (o.mode != IC_MODE_FUSED && o.mode != IC_MODE_EAGER)
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_compile: unknown mode %d", (int)o.mode);
  const uint32_t known = IC_COMPILE_STRICT | IC_COMPILE_NO_CACHE | IC_COMPILE_ALLOW_TF32;
  if (o.flags & ~known)
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_compile: unknown flag bits 0x%x", (unsigned)(o.flags & ~known));
  if (o.fusion_budget < -1)
    return error_set(IC_ERR_INVALID_ARGUMENT, "ic_compile: fusion_budget %" PRId32 " (0: the default %d, -1: none, or a count >= 1)",
                     o.fusion_budget, IC_FUSION_BUDGET_DEFAULT);
  const backend_vtable *backend = backend_by_name(o.backend ? o.backend : "cuda");
  if (!backend) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_compile: unknown backend '%s' (cuda, ref)", o.backend);
  return compile_graph(ctx, g, &o, backend, out);
}

ic_status compile_graph(ic_context *ctx, const ic_graph *g, const ic_compile_options *opts,
                        const backend_vtable *backend, ic_program **out) {
  ic_compile_options o = *opts;
  bool eager = o.mode == IC_MODE_EAGER;
  /* before the key: 0 and 512 are one program, and eager programs (a kernel an op) have
   * no use for a budget */
  if (o.fusion_budget == 0) o.fusion_budget = IC_FUSION_BUDGET_DEFAULT;
  if (eager) o.fusion_budget = -1;
  backend_state *bs = NULL;
  ic_status st = ctx_backend(ctx, backend, &bs);
  if (st) {
    error_prefix("ic_compile: backend %s", backend->name);
    return st;
  }
  bool strict = (o.flags & IC_COMPILE_STRICT) || ctx->strict_env;

  if ((st = compile_check_graph(g))) return st;
  /* The program cache: the same graph (structurally) and options, the same program. The
   * key also names the IC_DUMP folder, IC_COMPILE_NO_CACHE compiles included. */
  key128 key;
  bool no_cache = (o.flags & IC_COMPILE_NO_CACHE) != 0;
  bool keyed = (!no_cache || ctx->dump_dir) && program_cache_key(g, &o, backend->name, backend->config_hash(bs), &key);
  bool cacheable = keyed && !no_cache;
  if (cacheable && (*out = program_cache_get(ctx->programs, key)) != NULL) {
    log_msg(&ctx->log, IC_LOG_DEBUG, "program %016" PRIx64 "%016" PRIx64 ": from the program cache", key.hi, key.lo);
    return IC_OK;
  }
  lowered *l = NULL;
  if ((st = lower_graph(g, !eager, &l))) return st;
  l->allow_tf32 = (o.flags & IC_COMPILE_ALLOW_TF32) != 0;
  /* canonical node order: spellings that differ in the order of their lines give the
   * same kernels, instruction for instruction */
  if ((st = lower_canonical_order(l))) {
    lowered_destroy(l);
    return error_set(st, "lowering: out of memory");
  }
  bool *split = sys_calloc((size_t)l->nodes.count + 1, sizeof(bool));
  if (!split) {
    lowered_destroy(l);
    return error_set(IC_ERR_OUT_OF_MEMORY, "ic_compile: out of memory");
  }

  ic_program *p = NULL;
  for (;;) {
    schedule s;
    int32_t failed = -1;
    st = sched_fuse_pointwise(l, eager, split, o.fusion_budget, &s);
    if (!st) st = program_build(backend, bs, l, &s, &p);
    if (!st) st = compile_kernels(p, &s, o.flags, &failed);
    /* Eager fallback: the failed fusion's nodes become kernels of their own, once. A
     * kernel whose nodes are split already, or that holds an asm (its own kernel fails
     * the same way: an asm and its results are never apart), fails the compile. */
    bool progress = false, has_asm = failed >= 0 && s.groups[failed].has_asm;
    for (int32_t j = 0; failed >= 0 && j < s.groups[failed].count; j++) progress |= !split[s.groups[failed].nodes[j]];
    if (st && failed >= 0 && !strict && progress && !has_asm) {
      log_msg(&ctx->log, IC_LOG_WARN, "fused kernel ic_k%" PRId32 " failed to compile; running its %" PRId32
              " ops as eager kernels: %s", failed, s.groups[failed].count, ic_last_error());
      for (int32_t j = 0; j < s.groups[failed].count; j++) split[s.groups[failed].nodes[j]] = true;
      program_destroy(p);
      p = NULL;
      schedule_free(&s);
      continue;
    }
    if (st && failed >= 0 && strict) error_prefix("fused kernel (strict mode: no eager fallback)");
    else if (st && failed >= 0 && has_asm) error_prefix("kernel with inline asm (no eager fallback: the asm fails alone too)");
    schedule_free(&s);
    break;
  }
  free(split);
  if (st) {
    program_destroy(p);
    lowered_destroy(l);
    return st;
  }
  p->graph = l;
  if ((st = program_finish(p))) {
    program_destroy(p);
    return st;
  }
  compile_log_skipped_passes(ctx, p);
  compile_dump(ctx, g, keyed ? &key : NULL, p);
  if (cacheable) program_cache_put(ctx->programs, key, p);
  log_msg(&ctx->log, IC_LOG_INFO, "compiled %" PRId32 " kernel(s) for %s (%s, %s mode)", p->kernels.count,
          backend->target(bs), backend->name, eager ? "eager" : "fused");
  *out = p;
  return IC_OK;
}
