/* CPU: inline PTX (issue 13). The builder's checks and their messages, the register
 * layouts, the text format (print and parse round trip, escapes, errors), fusion (an asm
 * between pointwise ops is one kernel; eager keeps an asm node's outputs together), the
 * ref backend's refusal, and NVRTC compiles of every case of tests/asm_cases.h for
 * sm_90a (FP4 packing for sm_100a where NVRTC has it); a rejected asm names its line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_cases.h"
#include "check_main.h"
#include "ops/asm.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

static ic_context *ctx; /* compile-only, sm_90a */

static void setup(void) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  OK(ic_context_create(&o, &ctx));
}

static void teardown(void) {
  ic_context_destroy(ctx);
  ctx = NULL;
}

/* One asm call on a fresh graph with inputs of dtypes dts (shape [4, 8]); returns its
 * status, and the message through *msg (static copy). */
static ic_status try_asm(const char *text, const char *cons, int32_t pack, int32_t nin, const ic_dtype *dts, int32_t nout,
                         const ic_dtype *outs, const char **msg) {
  static char copy[600];
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value ins[IC_ASM_MAX_OPERANDS + 1], res[IC_ASM_MAX_OPERANDS + 1];
  for (int32_t i = 0; i < nin; i++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", (int)i);
    ins[i] = ic_graph_input(g, name, dts[i], 2, (ic_dim[]){4, 8}, IC_LAYOUT_CONTIGUOUS);
  }
  ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = text, .constraints = cons, .output_dtypes = outs,
                          .is_pure = 1, .pack = pack};
  ic_status st = ic_graph_inline_asm(g, &d, nin, ins, nout, res);
  const char *m = NULL;
  ic_status ge = ic_graph_error(g, &m);
  snprintf(copy, sizeof copy, "%s", m ? m : "");
  *msg = copy;
  if (st != IC_OK) {
    ck_assert_int_eq(ge, st); /* recorded by the graph too */
    for (int32_t k = 0; k < nout && k < IC_ASM_MAX_OPERANDS; k++) ck_assert_int_eq(res[k], IC_INVALID_VALUE);
  }
  ic_graph_destroy(g);
  return st;
}

static void expect_error(const char *text, const char *cons, int32_t pack, int32_t nin, const ic_dtype *dts, int32_t nout,
                         const ic_dtype *outs, const char *needle) {
  const char *msg;
  ic_status st = try_asm(text, cons, pack, nin, dts, nout, outs, &msg);
  ck_assert_msg(st == IC_ERR_INVALID_GRAPH, "'%s' '%s': status %d, want IC_ERR_INVALID_GRAPH", text, cons, (int)st);
  ck_assert_msg(strstr(msg, needle), "'%s' '%s': message '%s' lacks '%s'", text, cons, msg, needle);
}

static const ic_dtype F32[] = {IC_F32, IC_F32, IC_F32}, I32[] = {IC_I32, IC_I32}, I64[] = {IC_I64}, F16[] = {IC_F16, IC_F16},
                      U8[] = {IC_U8}, U16[] = {IC_U16}, U32[] = {IC_U32}, U64[] = {IC_U64};

START_TEST(test_builder_errors) {
  expect_error("mov.b32 $0, $1;", "=r,r", 3, 1, F32, 1, F32, "pack 3 is not 1, 2, 4, 8 or 16");
  expect_error("mov.b32 $0, $1;", "=r,r", 32, 1, F32, 1, F32, "pack 32");
  expect_error("mov.b32 $0, $1;", "=r,r", 0, 1, F32, 1, F32, "pack 0");
  expect_error("mov.b32 $0, $1;", "=r,r", 1, 0, F32, 1, F32, "1 to 8 inputs");
  static const ic_dtype nine[9] = {IC_F32, IC_F32, IC_F32, IC_F32, IC_F32, IC_F32, IC_F32, IC_F32, IC_F32};
  expect_error("mov.b32 $0, $1;", "=r,r", 1, 9, nine, 1, F32, "1 to 8 inputs");
  expect_error("mov.b32 $0, $1;", "=r,r", 1, 1, F32, 0, F32, "1 to 8 inputs and 1 to 8 outputs");
  expect_error("mov.b32 $0, $1;", "=x,r", 1, 1, F32, 1, F32, "unknown letter 'x'");
  expect_error("mov.b32 $0, $1;", "=c,r", 1, 1, U8, 1, U8, "NVRTC has no 8-bit register constraint");
  expect_error("mov.b32 $0, $1;", "=r", 1, 1, F32, 1, F32, "input 0 needs more");
  expect_error("mov.b32 $0, $1;", "=r,r,r", 1, 1, F32, 1, F32, "more than the 2 registers");
  expect_error("mov.b32 $0, $1;", "r,r", 1, 1, F32, 1, F32, "output 0) needs '='");
  expect_error("mov.b32 $0, $1;", "=r,=r", 1, 1, F32, 1, F32, "input 0) must not have '='");
  expect_error("mov.b32 $0, $1;", "=r,rr", 1, 1, F32, 1, F32, "is not one letter");
  expect_error("mov.b32 $0, $1;", "=r,r,", 1, 1, F32, 1, F32, "end with a comma");
  expect_error("mov.b64 $0, $1;", "=l,r", 1, 1, I64, 1, I64, "input 0 is i64 (64 bits), which does not fit 'r'");
  expect_error("mov.b64 $0, $1;", "=l,r", 1, 1, U64, 1, U64, "input 0 is u64 (64 bits), which does not fit 'r'");
  expect_error("mov.b32 $0, $1;", "=h,h", 1, 1, U32, 1, U32, "output 0 is u32 (32 bits), which does not fit 'h'");
  expect_error("mov.b32 $0, $1;", "=f,h", 1, 1, U16, 1, U32, "output 0 is u32, which does not fit 'f'");
  expect_error("mov.b32 $0, $1;", "=r,f", 1, 1, I32, 1, I32, "input 0 is i32, which does not fit 'f'");
  expect_error("mov.b32 $0, $1;", "=f,f", 1, 1, F16, 1, F16, "output 0 is f16, which does not fit 'f' (f32 only)");
  expect_error("mov.b64 $0, $1;", "=d,d", 1, 1, F32, 1, F32, "which does not fit 'd' (f64 only)");
  expect_error("mov.b32 $0, $2;", "=r,r", 1, 1, F32, 1, F32, "names $2, but its operands have 2 registers");
  expect_error("mov.b32 $0, $x;", "=r,r", 1, 1, F32, 1, F32, "not followed by an operand number");
  expect_error("mov.b32 $0, $1;", "=r,=h,r,r", 2, 1, F32, 1, F32, "mix 'r' and 'h'");
  /* the asm node is no value; inputs must broadcast; constants need a dtype */
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){4, 8}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){3, 8}, IC_LAYOUT_CONTIGUOUS);
  ic_value r[2];
  ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = "add.f32 $0, $1, $2;", .constraints = "=f,f,f",
                          .output_dtypes = F32, .is_pure = 1, .pack = 1};
  ck_assert_int_eq(ic_graph_inline_asm(g, &d, 2, (ic_value[]){a, b}, 1, r), IC_ERR_INVALID_GRAPH);
  const char *m;
  ic_graph_error(g, &m);
  ck_assert_ptr_nonnull(strstr(m, "do not broadcast"));
  ic_graph_destroy(g);
  OK(ic_graph_create(&g));
  a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){4, 8}, IC_LAYOUT_CONTIGUOUS);
  ck_assert_int_eq(ic_graph_inline_asm(g, &d, 2, (ic_value[]){a, ic_graph_constant(g, 1.0, IC_DTYPE_AUTO)}, 1, r),
                   IC_ERR_INVALID_GRAPH);
  ic_graph_error(g, &m);
  ck_assert_ptr_nonnull(strstr(m, "constant without a dtype"));
  ic_graph_destroy(g);
  OK(ic_graph_create(&g));
  a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){4, 8}, IC_LAYOUT_CONTIGUOUS);
  d.asm_text = "mov.b32 $0, $1;";
  d.constraints = "=r,r";
  OK(ic_graph_inline_asm(g, &d, 1, &a, 1, r));
  ck_assert_int_eq(ic_graph_unary(g, IC_OP_NEG, r[0] - 1), IC_INVALID_VALUE); /* the asm node itself */
  ic_graph_error(g, &m);
  ck_assert_ptr_nonnull(strstr(m, "is an inline_asm node, not a value"));
  ic_graph_destroy(g);
  /* NULL and struct_size */
  OK(ic_graph_create(&g));
  a = ic_graph_input(g, "a", IC_F32, 1, (ic_dim[]){4}, IC_LAYOUT_CONTIGUOUS);
  ck_assert_int_eq(ic_graph_inline_asm(g, NULL, 1, &a, 1, r), IC_ERR_INVALID_GRAPH);
  ic_graph_destroy(g);
  OK(ic_graph_create(&g));
  a = ic_graph_input(g, "a", IC_F32, 1, (ic_dim[]){4}, IC_LAYOUT_CONTIGUOUS);
  d.struct_size = 4;
  ck_assert_int_eq(ic_graph_inline_asm(g, &d, 1, &a, 1, r), IC_ERR_INVALID_GRAPH);
  ic_graph_destroy(g);
  ck_assert_int_eq(ic_graph_inline_asm(NULL, &d, 1, &a, 1, r), IC_ERR_INVALID_ARGUMENT);
}
END_TEST

/* Registers a register holds and operands need (ops/asm.c), as ic.h states them. */
START_TEST(test_register_layouts) {
  asm_layout l;
  const ic_dtype f16[] = {IC_F16}, u8[] = {IC_U8}, f32[] = {IC_F32}, b[] = {IC_BOOL}, i64[] = {IC_I64};
  OK(asm_plan("t", "", "=r,r", 2, 1, f16, 1, f16, &l)); /* two f16 a register */
  ck_assert_int_eq(l.nregs, 2);
  ck_assert_int_eq(l.ops[0].per_reg, 2);
  OK(asm_plan("t", "", "=r,r", 4, 1, u8, 1, u8, &l)); /* four u8 a register */
  ck_assert_int_eq(l.nregs, 2);
  OK(asm_plan("t", "", "=h,=h,h,h", 4, 1, u8, 1, u8, &l)); /* two u8 an h */
  ck_assert_int_eq(l.ops[1].per_reg, 2);
  OK(asm_plan("t", "", "=f,=f,=f,=f,f,f,f,f", 4, 1, f32, 1, f32, &l)); /* f: one a register */
  ck_assert_int_eq(l.nregs, 8);
  OK(asm_plan("t", "", "=h,h", 1, 1, b, 1, b, &l)); /* bool is 8 bits */
  ck_assert_int_eq(l.ops[1].bits, 8);
  OK(asm_plan("t", "", "=l,=l,l,l", 2, 1, i64, 1, i64, &l)); /* wider than 32 bits: pack registers */
  ck_assert_int_eq(l.ops[0].regs, 2);
  /* i32 at pack 16 needs 16 r: 4 for the u8 output and 4 + 16 for the inputs */
  ck_assert_int_eq(asm_plan("t", "", "=r,=r,=r,=r,r,r,r,r,r", 16, 1, u8, 2, (const ic_dtype[]){IC_U8, IC_I32}, &l),
                   IC_ERR_INVALID_GRAPH);
  /* a dtype no register holds (the builder refuses it first; the plan says so too) */
  ck_assert_int_eq(asm_plan("t", "", "=r,r", 1, 1, u8, 1, (const ic_dtype[]){IC_DTYPE_INVALID}, &l), IC_ERR_INVALID_GRAPH);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "which no register 'r' holds"));
  sbuf c = {0};
  asm_c_template("mov.u32 $0, %tid.x; // $$5 100%", &c);
  ck_assert_str_eq(c.data, "mov.u32 %0, %%tid.x; // $5 100%%");
  sbuf_free(&c);
}
END_TEST

static char *print_graph(const ic_graph *g) {
  char *s = NULL;
  OK(ic_graph_print(g, &s));
  return s;
}

START_TEST(test_text_round_trip) {
  const char *text =
      "symbol n\n"
      "input a : f32[n, 8]\n"
      "input b : f16[8]\n"
      "q, e = inline_asm(\"{\\n .reg .b16 t;\\n cvt.rn.satfinite.e4m3x2.f32 t, $4, $3;\\n mov.b16 $0, t;\\n}\\n"
      "mov.b32 $1, 7; mov.b32 $2, 0; // \\\"100%\\\" \\\\ \\t\\001\", \"=h,=r,=r,f,f,f,f\", [a, bb], [f8e4m3, i32], pack=2, impure)\n"
      "output q\noutput e\n";
  /* bb: b broadcast and upcast */
  char *full = NULL;
  size_t len = strlen(text) + 100;
  full = malloc(len);
  snprintf(full, len, "%.*sbh = cast(b, f32)\nbb = expand(bh, [n, 8])\n%s", (int)(strstr(text, "q, e") - text), text,
           strstr(text, "q, e"));
  ic_graph *g;
  ic_status st = ic_graph_parse(full, &g);
  ck_assert_msg(st == IC_OK, "%s", ic_last_error());
  char *p1 = print_graph(g);
  ck_assert_ptr_nonnull(strstr(p1, "q, e = inline_asm("));
  ck_assert_ptr_nonnull(strstr(p1, "\\\"100%\\\" \\\\ \\t\\001\""));
  ck_assert_ptr_nonnull(strstr(p1, "[f8e4m3, i32], pack=2, impure)"));
  ic_graph *g2;
  st = ic_graph_parse(p1, &g2);
  ck_assert_msg(st == IC_OK, "%s\n%s", ic_last_error(), p1);
  char *p2 = print_graph(g2);
  ck_assert_str_eq(p1, p2);
  ic_string_free(p1);
  ic_string_free(p2);
  ic_graph_destroy(g);
  ic_graph_destroy(g2);
  free(full);
  /* one output, pure, pack 1 printed; unnamed results print as labels */
  OK(ic_graph_create(&g));
  ic_value a = ic_graph_input(g, "a", IC_F32, 1, (ic_dim[]){4}, IC_LAYOUT_CONTIGUOUS), r[2];
  ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = "mov.b32 $0, $2; mov.b32 $1, $2;", .constraints = "=r,=r,r",
                          .output_dtypes = (const ic_dtype[]){IC_F32, IC_I32}, .is_pure = 1, .pack = 1};
  OK(ic_graph_inline_asm(g, &d, 1, &a, 2, r));
  OK(ic_graph_output(g, "y", r[1]));
  p1 = print_graph(g);
  ck_assert_ptr_nonnull(strstr(p1, "%2, %3 = inline_asm(\"mov.b32 $0, $2; mov.b32 $1, $2;\", \"=r,=r,r\", [a], [f32, i32], pack=1)"));
  OK(ic_graph_parse(p1, &g2));
  p2 = print_graph(g2);
  ck_assert_str_eq(p1, p2);
  ic_string_free(p1);
  ic_string_free(p2);
  ic_graph_destroy(g);
  ic_graph_destroy(g2);
}
END_TEST

static void expect_parse_error(const char *text, const char *needle) {
  ic_graph *g = NULL;
  ic_status st = ic_graph_parse(text, &g);
  ck_assert_msg(st == IC_ERR_INVALID_GRAPH, "parsed: %s", text);
  ck_assert_msg(strstr(ic_last_error(), needle), "'%s' lacks '%s'", ic_last_error(), needle);
  ck_assert_ptr_null(g);
}

START_TEST(test_text_errors) {
  const char *head = "input a : f32[4]\n";
  char buf[400];
  struct { const char *stmt, *needle; } cases[] = {
      {"y = inline_asm(\"mov.b32 $0, $1;", "unterminated string"},
      {"y = inline_asm(\"a\\q\", \"=r,r\", [a], [f32])", "unknown escape"},
      {"y = inline_asm(\"a\\0\", \"=r,r\", [a], [f32])", "cannot hold a NUL"},
      {"y, z = inline_asm(\"mov.b32 $0, $1;\", \"=r,r\", [a], [f32])", "makes 1 outputs"},
      {"y, y = inline_asm(\"mov.b32 $0, $1;\", \"=r,r\", [a], [f32, f32])", "duplicate name"},
      {"y, z = add(a, a)", "only inline_asm assigns several names"},
      {"y = inline_asm(\"mov.b32 $0, $1;\", \"=r,r\", [a], [f32], pack=3)", "pack 3"},
      {"y = inline_asm(\"mov.b32 $0, $1;\", \"=r,r\", [a], [f32], fast)", "expected pack=N or impure"},
      {"y = inline_asm(\"mov.b32 $0, $1;\", \"=r\", [a], [f32])", "input 0 needs more"},
      {"y = inline_asm(mov, \"=r\", [a], [f32])", "the asm (a string)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(buf, sizeof buf, "%s%s\noutput y\n", head, cases[i].stmt);
    expect_parse_error(buf, cases[i].needle);
  }
}
END_TEST

static int32_t kernels(ic_context *c, const ic_graph *g, ic_compile_mode mode, const char *backend, ic_status *st) {
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .backend = backend, .flags = IC_COMPILE_STRICT};
  ic_program *p = NULL;
  *st = ic_compile(c, g, &o, &p);
  int32_t n = p ? ic_program_kernel_count(p) : -1;
  ic_program_release(p);
  return n;
}

/* x * 2 -> asm -> + 1 is one kernel; eager: the asm node and both its outputs in one
 * kernel; a reduction of an asm output is a kernel of its own; ref refuses. */
START_TEST(test_fusion_and_eager) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_dim n = ic_graph_symbol(g, "n");
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){n, 64}, IC_LAYOUT_CONTIGUOUS);
  ic_value x2 = ic_graph_binary(g, IC_OP_MUL, x, ic_graph_constant(g, 2.0, IC_F32)), r[2];
  OK(ac_build(g, &ac_cases[15], &x2, r)); /* two outputs */
  OK(ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_ADD, r[0], ic_graph_constant(g, 1.0, IC_F32))));
  OK(ic_graph_output(g, "t", r[1]));
  ic_status st;
  ck_assert_int_eq(kernels(ctx, g, IC_MODE_FUSED, NULL, &st), 1);
  OK(st);
  ck_assert_int_eq(kernels(ctx, g, IC_MODE_EAGER, NULL, &st), 3); /* mul, the asm (both outputs), add */
  OK(st);
  ck_assert_int_eq(kernels(ctx, g, IC_MODE_FUSED, "ref", &st), -1);
  ck_assert_int_eq(st, IC_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ic_last_error(), "the ref backend cannot run PTX"));
  OK(ic_graph_output(g, "s", ic_graph_reduce(g, IC_REDUCE_SUM, r[0], 1, (int32_t[]){1}, 0)));
  ck_assert_int_eq(kernels(ctx, g, IC_MODE_FUSED, NULL, &st), 2);
  OK(st);
  ic_graph_destroy(g);
}
END_TEST

/* Which asm nodes share a reduction's kernel (ic.h): pure, pack 1 anywhere; pack <= 8
 * as an element node of a reduction over the last dim alone. Each compiles (NVRTC). */
START_TEST(test_asm_in_reductions) {
  struct { const char *text; int32_t want; } cases[] = {
      /* prologue, pack 2, rows: one kernel */
      {"symbol n\ninput x : f16[n, 1001]\nd = inline_asm(\"add.f16x2 $0, $1, $1;\", \"=r,r\", [x], [f16], pack=2)\n"
       "s = sum(d, [1])\noutput s\n", 1},
      /* row-wise FP8: amax, then the e4m3x2 asm in the epilogue: one kernel */
      {"symbol n\ninput x : f32[n, 1000]\na = abs(x)\nm = max(a, [1], keepdim)\nv = div(x, m)\n"
       "q = inline_asm(\"cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;\", \"=h,f,f\", [v], [f8e4m3], pack=2)\noutput q\noutput m\n", 1},
      /* pack 2 over a column reduction: its groups cross the kernel's rows (the asm a
       * kernel, then the column sum of a symbolic length: one kernel or two stages, chosen
       * at run time, kir.h) */
      {"symbol n\ninput x : f16[n, 64]\nd = inline_asm(\"add.f16x2 $0, $1, $1;\", \"=r,r\", [x], [f16], pack=2)\n"
       "s = sum(d, [0])\noutput s\n", 4},
      /* pack 1 over a column reduction: fine (in the one kernel and the partial stage) */
      {"symbol n\ninput x : f32[n, 64]\nd = inline_asm(\"add.f32 $0, $1, $1;\", \"=f,f\", [x], [f32])\n"
       "s = sum(d, [0])\noutput s\n", 3},
      /* impure: runs once, in a kernel of its own */
      {"symbol n\ninput x : f32[n, 64]\nd = inline_asm(\"add.f32 $0, $1, $1;\", \"=f,f\", [x], [f32], pack=1, impure)\n"
       "s = sum(d, [1])\noutput s\n", 2},
      /* pack 16 does not divide the chunk of 8 */
      {"symbol n\ninput x : u8[n, 64]\nd = inline_asm(\"mov.b32 $0, $1; mov.b32 $2, $3; mov.b32 $4, $5; mov.b32 $6, $7;\", "
       "\"=r,=r,=r,=r,r,r,r,r\", [x], [u8], pack=16)\ns = sum(d, [1])\noutput s\n", 2},
      /* pack 1 on a row value (epilogue of the reduced value) */
      {"symbol n\ninput x : f32[n, 64]\ns = sum(x, [1], keepdim)\nd = inline_asm(\"add.f32 $0, $1, $1;\", \"=f,f\", [s], [f32])\n"
       "y = div(x, d)\noutput y\n", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ic_graph *g;
    ic_status st = ic_graph_parse(cases[i].text, &g);
    ck_assert_msg(st == IC_OK, "case %zu: %s", i, ic_last_error());
    ck_assert_msg(kernels(ctx, g, IC_MODE_FUSED, NULL, &st) == cases[i].want && st == IC_OK, "case %zu: %s", i,
                  st ? ic_last_error() : "kernel count");
    ck_assert_msg(kernels(ctx, g, IC_MODE_EAGER, NULL, &st) > 0 && st == IC_OK, "case %zu eager: %s", i, ic_last_error());
    ic_graph_destroy(g);
  }
}
END_TEST

/* Every case compiles through NVRTC for sm_90a, fused and eager, over a symbolic shape;
 * the kernel IR shows the asm; the generated source has the asm statement. */
START_TEST(test_nvrtc_every_case) {
  for (int c = 0; c < AC_NCASES; c++) {
    const asm_case *ac = &ac_cases[c];
    ic_graph *g;
    OK(ic_graph_create(&g));
    ic_dim n = ic_graph_symbol(g, "n");
    ic_value ins[3], outs[2];
    for (int32_t k = 0; k < ac->nin; k++) {
      char name[16];
      snprintf(name, sizeof name, "x%d", (int)k);
      ins[k] = ic_graph_input(g, name, ac->in[k], 2, (ic_dim[]){n, 37}, IC_LAYOUT_CONTIGUOUS);
    }
    ck_assert_msg(ac_build(g, ac, ins, outs) == IC_OK, "%s: %s", ac->name, ic_last_error());
    for (int32_t o = 0; o < ac->nout; o++) {
      char name[16];
      snprintf(name, sizeof name, "y%d", (int)o);
      OK(ic_graph_output(g, name, outs[o]));
    }
    for (int mode = 0; mode < 2; mode++) {
      ic_compile_options o = {.struct_size = sizeof o, .mode = mode ? IC_MODE_EAGER : IC_MODE_FUSED, .flags = IC_COMPILE_STRICT};
      ic_program *p;
      ic_status st = ic_compile(ctx, g, &o, &p);
      ck_assert_msg(st == IC_OK, "%s (%s): %s", ac->name, mode ? "eager" : "fused", ic_last_error());
      ck_assert_int_eq(ic_program_kernel_count(p), 1);
      ck_assert_ptr_nonnull(strstr(ic_program_kernel_ir(p, 0), ac->pure ? " = asm pack " : " = asm.impure pack "));
      /* its own asm (graphs that differ only in the asm are different programs) */
      sbuf quoted = {0};
      asm_quote(ac->text, &quoted);
      ck_assert_msg(quoted.data && strstr(ic_program_kernel_ir(p, 0), quoted.data), "%s: the program of another asm",
                    ac->name);
      sbuf_free(&quoted);
      ck_assert_ptr_nonnull(strstr(ic_program_kernel_source(p, 0), ac->pure ? "    asm(\"" : "    asm volatile(\""));
      ic_program_release(p);
    }
    ic_graph_destroy(g);
  }
}
END_TEST

/* Shapes: scalar, empty, 4-d, broadcast [4, 1] with [1, 8], a transposed input, and
 * pack 2 and 4 over odd rows, all through NVRTC. */
START_TEST(test_nvrtc_shapes) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value s = ic_graph_input(g, "s", IC_F32, 0, NULL, IC_LAYOUT_CONTIGUOUS), r[2];
  OK(ac_build(g, &ac_cases[1], (ic_value[]){s, s}, r));
  OK(ic_graph_output(g, "scalar", r[0]));
  ic_value e = ic_graph_input(g, "e", IC_F16, 2, (ic_dim[]){0, 8}, IC_LAYOUT_CONTIGUOUS);
  OK(ac_build(g, &ac_cases[13], (ic_value[]){e, e}, r));
  OK(ic_graph_output(g, "empty", r[0]));
  ic_value f = ic_graph_input(g, "f", IC_F32, 4, (ic_dim[]){2, 3, 4, 5}, IC_LAYOUT_CONTIGUOUS);
  OK(ac_build(g, &ac_cases[16], &f, r));
  OK(ic_graph_output(g, "four_d", r[0]));
  ic_value a = ic_graph_input(g, "a", IC_F32, 2, (ic_dim[]){4, 1}, IC_LAYOUT_CONTIGUOUS);
  ic_value b = ic_graph_input(g, "b", IC_F32, 2, (ic_dim[]){1, 8}, IC_LAYOUT_CONTIGUOUS);
  OK(ac_build(g, &ac_cases[1], (ic_value[]){a, b}, r));
  OK(ic_graph_output(g, "bcast", r[0]));
  ic_value t = ic_graph_permute(g, ic_graph_input(g, "t", IC_U8, 2, (ic_dim[]){7, 5}, IC_LAYOUT_CONTIGUOUS), 2,
                                (int32_t[]){1, 0});
  OK(ac_build(g, &ac_cases[14], &t, r));
  OK(ic_graph_output(g, "transposed_pack4", r[0]));
  ic_status st;
  ck_assert_int_eq(kernels(ctx, g, IC_MODE_FUSED, NULL, &st), 5);
  ck_assert_msg(st == IC_OK, "%s", ic_last_error());
  ic_graph_destroy(g);
}
END_TEST

/* FP4 (NVFP4) packing for sm_100a: compiled where this NVRTC knows the target. */
START_TEST(test_nvrtc_fp4_sm100a) {
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_100a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *c100 = NULL;
  if (ic_context_create(&co, &c100) != IC_OK) {
    fprintf(stderr, "test_nvrtc_fp4_sm100a: skipped: %s\n", ic_last_error());
    return;
  }
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 2, (ic_dim[]){ic_graph_symbol(g, "n"), 64}, IC_LAYOUT_CONTIGUOUS), r;
  /* two f32 -> one byte of two e2m1 values in element 0 of each pair, 0 in element 1 */
  ic_inline_asm_desc d = {.struct_size = sizeof d,
                          .asm_text = "{\n .reg .b8 t;\n cvt.rn.satfinite.e2m1x2.f32 t, $3, $2;\n cvt.u32.u8 $0, t;\n mov.b32 $1, 0;\n}",
                          .constraints = "=r,=r,f,f", .output_dtypes = (const ic_dtype[]){IC_I32}, .is_pure = 1, .pack = 2};
  OK(ic_graph_inline_asm(g, &d, 1, &x, 1, &r));
  OK(ic_graph_output(g, "fp4", r));
  ic_status st;
  int32_t k = kernels(c100, g, IC_MODE_FUSED, NULL, &st);
  ck_assert_msg(st == IC_OK && k == 1, "%s", ic_last_error());
  ic_graph_destroy(g);
  ic_context_destroy(c100);
}
END_TEST

/* An asm that ptxas rejects fails strict ic_compile with IC_ERR_COMPILE, the compiler's
 * message and the user's line. */
START_TEST(test_rejected_asm_names_its_line) {
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS), r;
  ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = "add.f32 $0, $1, 0f3F800000;\nfrobnicate.b32 $0, $1;",
                          .constraints = "=f,f", .output_dtypes = (const ic_dtype[]){IC_F32}, .is_pure = 1, .pack = 1};
  OK(ic_graph_inline_asm(g, &d, 1, &x, 1, &r));
  OK(ic_graph_output(g, "y", r));
  ic_status st;
  ck_assert_int_eq(kernels(ctx, g, IC_MODE_FUSED, NULL, &st), -1);
  ck_assert_int_eq(st, IC_ERR_COMPILE);
  ck_assert_msg(strstr(ic_last_error(), "inline_asm line 2: frobnicate.b32 $0, $1;"), "%s", ic_last_error());
  ic_graph_destroy(g);
}
END_TEST

/* Without strict mode too: a kernel with an asm that the target refuses (e4m3x2 needs
 * sm_89) fails at once, no eager fallback (the asm fails alone as well; the fallback once
 * retried such a kernel forever), with the user's line named by a word of ptxas's
 * complaint ("Feature 'cvt with .e4m3x2/.e5m2x2' requires ..."). */
START_TEST(test_rejected_asm_no_fallback) {
  ic_context_options co = {.struct_size = sizeof co, .arch = "sm_80", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *c80 = NULL;
  OK(ic_context_create(&co, &c80));
  ic_graph *g;
  OK(ic_graph_create(&g));
  ic_value x = ic_graph_input(g, "x", IC_BF16, 2, (ic_dim[]){ic_graph_symbol(g, "n"), 64}, IC_LAYOUT_CONTIGUOUS), q;
  ic_value xs = ic_graph_binary(g, IC_OP_MUL, ic_graph_cast(g, x, IC_F32), ic_graph_constant(g, 3.0, IC_F32));
  ic_inline_asm_desc d = {.struct_size = sizeof d, .asm_text = "cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;",
                          .constraints = "=h,f,f", .output_dtypes = (const ic_dtype[]){IC_F8E4M3}, .is_pure = 1, .pack = 2};
  OK(ic_graph_inline_asm(g, &d, 1, &xs, 1, &q));
  OK(ic_graph_output(g, "q", q));
  for (int mode = 0; mode < 2; mode++) {
    ic_compile_options o = {.struct_size = sizeof o, .mode = mode ? IC_MODE_EAGER : IC_MODE_FUSED};
    ic_program *p = NULL;
    ck_assert_int_eq(ic_compile(c80, g, &o, &p), IC_ERR_COMPILE);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(ic_last_error(), "no eager fallback"), "%s", ic_last_error());
    ck_assert_msg(strstr(ic_last_error(), "inline_asm line 1: cvt.rn.satfinite.e4m3x2.f32"), "%s", ic_last_error());
  }
  ic_graph_destroy(g);
  ic_context_destroy(c80);
}
END_TEST

int main(int argc, char **argv) {
  Suite *s = suite_create("asm");
  CHECK_CASE(s, test_builder_errors, setup, teardown);
  CHECK_CASE(s, test_register_layouts, setup, teardown);
  CHECK_CASE(s, test_text_round_trip, setup, teardown);
  CHECK_CASE(s, test_text_errors, setup, teardown);
  CHECK_CASE(s, test_fusion_and_eager, setup, teardown);
  CHECK_CASE(s, test_asm_in_reductions, setup, teardown);
  CHECK_CASE(s, test_nvrtc_every_case, setup, teardown);
  CHECK_CASE(s, test_nvrtc_shapes, setup, teardown);
  CHECK_CASE(s, test_nvrtc_fp4_sm100a, setup, teardown);
  CHECK_CASE(s, test_rejected_asm_names_its_line, setup, teardown);
  CHECK_CASE(s, test_rejected_asm_no_fallback, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
