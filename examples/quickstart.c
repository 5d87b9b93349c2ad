/* quickstart: y = gelu_tanh(x * w + b) over x [n, 4096] with a symbolic n, fused into one
 * kernel. Prints the generated CUDA C, compiles it with NVRTC, and on a GPU runs it and
 * checks the result against a host computation. Without a GPU it compiles for sm_90a,
 * says it cannot run, and exits 0. */
#include <ic/ic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    ic_status s_ = (call);                                                                     \
    if (s_ != IC_OK) {                                                                         \
      fprintf(stderr, "%s failed: %s: %s\n", #call, ic_status_string(s_), ic_last_error()); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

enum { COLS = 4096, ROWS = 1000 };

static float gelu_tanh_ref(float x) {
  float inner = 0.7978845608028654f * (x + 0.044715f * (x * x * x));
  return (0.5f * x) * (1.0f + tanhf(inner));
}

int main(void) {
  /* A context for the local GPU; with none, compile-only for sm_90a. */
  ic_context *ctx = NULL;
  ic_status st = ic_context_create(NULL, &ctx);
  CHECK(st);
  if (!ic_context_has_device(ctx) && !ic_context_arch(ctx)[0]) {
    printf("no GPU here: compiling for sm_90a only\n");
    ic_context_destroy(ctx);
    ic_context_options opts = {.struct_size = sizeof opts, .arch = "sm_90a"};
    CHECK(ic_context_create(&opts, &ctx));
  }

  /* The graph: one symbolic dim n. */
  ic_graph *g = NULL;
  CHECK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, COLS}, IC_LAYOUT_CONTIGUOUS);
  ic_value w = ic_graph_input(g, "w", IC_F32, 1, (ic_dim[]){COLS}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 1, (ic_dim[]){COLS}, IC_LAYOUT_CONTIGUOUS);
  ic_value xw = ic_graph_binary(g, IC_OP_MUL, x, w); /* w broadcasts over rows */
  ic_value y = ic_graph_unary(g, IC_OP_GELU_TANH, ic_graph_binary(g, IC_OP_ADD, xw, b));
  CHECK(ic_graph_output(g, "y", y));

  ic_program *prog = NULL;
  CHECK(ic_compile(ctx, g, NULL, &prog));
  ic_graph_destroy(g);
  printf("%d kernel(s); kernel IR and CUDA C of the first:\n%s\n%s\n", (int)ic_program_kernel_count(prog),
         ic_program_kernel_ir(prog, 0), ic_program_kernel_source(prog, 0));

  if (!ic_context_has_device(ctx)) {
    printf("compiled for %s; no GPU, so not running it\n", ic_context_arch(ctx));
    ic_program_release(prog);
    ic_context_destroy(ctx);
    return 0;
  }

  size_t nx = (size_t)ROWS * COLS;
  float *hx = malloc(nx * sizeof(float)), *hy = malloc(nx * sizeof(float));
  float hw[COLS], hb[COLS];
  if (!hx || !hy) return 1;
  for (size_t i = 0; i < nx; i++) hx[i] = (float)((int)(i % 97) - 48) / 16.0f;
  for (int c = 0; c < COLS; c++) {
    hw[c] = 1.0f + (float)(c % 7) / 8.0f;
    hb[c] = (float)(c % 5) / 4.0f - 0.5f;
  }
  void *dx, *dw, *db;
  CHECK(ic_malloc(ctx, nx * sizeof(float), &dx));
  CHECK(ic_malloc(ctx, sizeof hw, &dw));
  CHECK(ic_malloc(ctx, sizeof hb, &db));
  CHECK(ic_memcpy_htod(ctx, dx, hx, nx * sizeof(float)));
  CHECK(ic_memcpy_htod(ctx, dw, hw, sizeof hw));
  CHECK(ic_memcpy_htod(ctx, db, hb, sizeof hb));

  int64_t xs[2] = {ROWS, COLS}, vs[1] = {COLS};
  ic_tensor in[3] = {{dx, IC_F32, 2, xs, NULL}, {dw, IC_F32, 1, vs, NULL}, {db, IC_F32, 1, vs, NULL}};
  ic_tensor out[1] = {{NULL, IC_F32, 2, xs, NULL}}; /* data NULL: ic allocates y */
  CHECK(ic_program_run(prog, in, 3, out, 1, NULL));
  CHECK(ic_memcpy_dtoh(ctx, hy, out[0].data, nx * sizeof(float)));

  size_t bad = 0;
  for (size_t i = 0; i < nx; i++) {
    float ref = gelu_tanh_ref(hx[i] * hw[i % COLS] + hb[i % COLS]);
    if (fabsf(hy[i] - ref) > 1e-5f * (1.0f + fabsf(ref))) bad++;
  }
  printf("ran on %s: %zu of %zu values differ from the host reference\n", ic_context_arch(ctx), bad, nx);
  ic_free(ctx, out[0].data);
  ic_free(ctx, dx);
  ic_free(ctx, dw);
  ic_free(ctx, db);
  free(hx);
  free(hy);
  ic_program_release(prog);
  ic_context_destroy(ctx);
  return bad ? 1 : 0;
}
