/* The graph text format (ic.h, "graph text format"): the one printer (ic_graph_print and
 * IC_DUMP's graph.txt) and a hand-written lexer and recursive-descent parser that rebuilds
 * a graph through the builder.
 *
 * Round trips hold because the printer writes every node, in value order, and each
 * statement the parser reads appends exactly the node it names: implicit broadcasts are
 * printed as explicit expands (after which the op finds its operands already broadcast),
 * and adopted weak constants as the typed constants they became.
 *
 * Grammar (one statement a line; '#' starts a comment; blank lines are skipped):
 *   line    := [stmt] NEWLINE
 *   stmt    := 'symbol' NAME
 *            | 'input' NAME ':' DTYPE '[' [dim {',' dim}] ']' [LAYOUT]
 *            | NAME '=' rhs
 *            | 'output' NAME ['=' NAME]
 *   rhs     := 'const' ['-'] (NUMBER | 'inf' | 'nan') [':' DTYPE]
 *            | ('cast' | 'cast_saturate' | 'bitcast') '(' NAME ',' DTYPE ')'
 *            | ('reshape' | 'expand') '(' NAME ',' '[' [dim {',' dim}] ']' ')'
 *            | 'permute' '(' NAME ',' '[' [INT {',' INT}] ']' ')'
 *            | 'slice' '(' NAME ',' SINT ',' SINT ',' SINT ',' SINT ')'   dim, start, stop, step
 *            | 'concat' '(' '[' NAME {',' NAME} ']' ',' SINT ')'         values, dim
 *            | 'pad' '(' NAME ',' '[' [SINT {',' SINT}] ']' ',' ['-'] (NUMBER | 'inf' | 'nan') ')'
 *            | 'matmul' '(' NAME ',' NAME ')'
 *            | OP '(' [NAME {',' NAME}] ')'
 *   SINT    := ['-'] INT                      (int64, -9223372036854775808 included)
 *   dim     := expr | '?'                     ('?' in reshape only)
 *   expr    := term {('+' | '-') term}
 *   term    := factor {('*' | '/') factor}   ('/' is floor division)
 *   factor  := INT | SYMBOL | '(' expr ')' | '-' factor
 *            | ('ic_min' | 'ic_max') '(' expr ',' expr ')'   (as sym_print writes them)
 * A NAME followed by '=' is always an assignment, so values may be called 'input' etc.
 * Names starting with '%' label unnamed values only; symbols, inputs, outputs and named
 * values use [A-Za-z_][A-Za-z0-9_.]*. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ops/asm.h"


/* ---------------------------------------------------------------- printer */

static const char *const layout_names[] = {"contiguous", "inner_contiguous", "strided"};

/* A value as operands and targets name it: its own name, else %<id>. */
static void print_value_ref(const ic_graph *g, ic_value v, sbuf *out) {
  const char *name = g->nodes.items[v].name;
  if (name) sbuf_puts(out, name);
  else sbuf_printf(out, "%%%" PRId32, v);
}

static void print_dim_list(const ic_graph *g, int32_t ndim, const sym_id *dims, sbuf *out) {
  sym_names names = graph_symbol_names(g);
  sym_print_list(g->syms, ndim, dims, &names, out);
}

/* %.17g round-trips every finite double; inf and nan get fixed spellings because printf's
 * vary ("-nan", "inf" vs "infinity") and the payload of a NaN is not kept. */
static void print_number(double v, sbuf *out) {
  if (isnan(v)) sbuf_puts(out, "nan");
  else if (isinf(v)) sbuf_puts(out, v > 0 ? "inf" : "-inf");
  else sbuf_printf(out, "%.17g", v);
}

/* r0, r1 = inline_asm("asm", "constraints", [inputs], [output dtypes], pack=P[, impure]):
 * the results are the nodes right after the asm node. */
static void print_asm(const ic_graph *g, ic_value v, sbuf *out) {
  const graph_node *n = &g->nodes.items[v];
  const asm_spec *a = &g->asms.items[n->asm_index];
  for (int32_t k = 0; k < a->noutputs; k++) {
    if (k) sbuf_puts(out, ", ");
    print_value_ref(g, v + 1 + k, out);
  }
  sbuf_puts(out, " = inline_asm(\"");
  asm_quote(a->text, out);
  sbuf_puts(out, "\", \"");
  asm_quote(a->constraints, out);
  sbuf_puts(out, "\", [");
  for (int32_t i = 0; i < n->nargs; i++) {
    if (i) sbuf_puts(out, ", ");
    print_value_ref(g, graph_node_arg(g, n, i), out);
  }
  sbuf_puts(out, "], [");
  for (int32_t k = 0; k < a->noutputs; k++) sbuf_printf(out, "%s%s", k ? ", " : "", ic_dtype_name(a->outputs[k]));
  sbuf_printf(out, "], pack=%" PRId32 "%s)\n", a->pack, a->pure ? "" : ", impure");
}

static void print_node(const ic_graph *g, ic_value v, sbuf *out) {
  const graph_node *n = &g->nodes.items[v];
  if (n->kind == GRAPH_ASM) {
    print_asm(g, v, out);
    return;
  }
  if (n->kind == GRAPH_ASM_RESULT) return; /* named on its asm's line */
  if (n->kind == GRAPH_INPUT) {
    sbuf_printf(out, "input %s : ", n->name);
    graph_print_type(g, n->dtype, n->ndim, n->dims, out);
    if (n->layout != IC_LAYOUT_CONTIGUOUS && (size_t)n->layout < ARRAY_LEN(layout_names))
      sbuf_printf(out, " %s", layout_names[n->layout]);
    sbuf_puts(out, "\n");
    return;
  }
  print_value_ref(g, v, out);
  sbuf_puts(out, " = ");
  switch (n->kind) {
  case GRAPH_CONST:
    sbuf_puts(out, "const ");
    print_number(n->value, out);
    if (!n->weak) sbuf_printf(out, " : %s", ic_dtype_name(n->dtype));
    break;
  case GRAPH_OP:
    sbuf_printf(out, "%s(", ic_op_name(n->op));
    for (int32_t i = 0; i < n->nargs; i++) {
      if (i) sbuf_puts(out, ", ");
      print_value_ref(g, n->args[i], out);
    }
    if (op_get(n->op)->result == OP_RESULT_TARGET) sbuf_printf(out, ", %s", ic_dtype_name(n->dtype));
    sbuf_puts(out, ")");
    break;
  case GRAPH_MATMUL:
    sbuf_puts(out, "matmul(");
    print_value_ref(g, n->args[0], out);
    sbuf_puts(out, ", ");
    print_value_ref(g, n->args[1], out);
    sbuf_puts(out, ")");
    break;
  case GRAPH_RESHAPE:
  case GRAPH_EXPAND:
    sbuf_puts(out, n->kind == GRAPH_RESHAPE ? "reshape(" : "expand(");
    print_value_ref(g, n->args[0], out);
    sbuf_puts(out, ", ");
    print_dim_list(g, n->ndim, n->dims, out);
    sbuf_puts(out, ")");
    break;
  case GRAPH_PERMUTE:
    sbuf_puts(out, "permute(");
    print_value_ref(g, n->args[0], out);
    sbuf_puts(out, ", [");
    for (int32_t i = 0; i < n->ndim; i++) sbuf_printf(out, i ? ", %" PRId32 : "%" PRId32, n->perm[i]);
    sbuf_puts(out, "])");
    break;
  case GRAPH_SLICE:
    sbuf_puts(out, "slice(");
    print_value_ref(g, n->args[0], out);
    sbuf_printf(out, ", %" PRId32 ", %" PRId64 ", %" PRId64 ", %" PRId64 ")", n->axis, n->start, n->stop, n->step);
    break;
  case GRAPH_CONCAT:
    sbuf_puts(out, "concat([");
    for (int32_t i = 0; i < n->nargs; i++) {
      if (i) sbuf_puts(out, ", ");
      print_value_ref(g, graph_node_arg(g, n, i), out);
    }
    sbuf_printf(out, "], %" PRId32 ")", n->axis);
    break;
  case GRAPH_PAD: {
    /* pairs from the last dim back to the first padded one, as ic_graph_pad takes them */
    int32_t outer = 0;
    while (outer < n->ndim && n->pad[outer][0] == 0 && n->pad[outer][1] == 0) outer++;
    sbuf_puts(out, "pad(");
    print_value_ref(g, n->args[0], out);
    sbuf_puts(out, ", [");
    for (int32_t d = n->ndim - 1; d >= outer; d--)
      sbuf_printf(out, "%s%" PRId64 ", %" PRId64, d == n->ndim - 1 ? "" : ", ", n->pad[d][0], n->pad[d][1]);
    sbuf_puts(out, "], ");
    print_number(n->value, out);
    sbuf_puts(out, ")");
    break;
  }
  case GRAPH_REDUCE: {
    const graph_node *src = &g->nodes.items[n->args[0]];
    sbuf_printf(out, "%s(", ic_reduce_name(n->reduce));
    print_value_ref(g, n->args[0], out);
    sbuf_puts(out, ", [");
    const char *sep = "";
    for (int32_t d = 0; d < src->ndim; d++) {
      if (!(n->axes & (1u << d))) continue;
      sbuf_printf(out, "%s%" PRId32, sep, d);
      sep = ", ";
    }
    sbuf_puts(out, "]");
    if (n->keepdim) sbuf_puts(out, ", keepdim");
    if (n->value != 0) {
      sbuf_puts(out, ", correction=");
      print_number(n->value, out);
    }
    sbuf_puts(out, ")");
    break;
  }
  case GRAPH_INPUT: case GRAPH_ASM: case GRAPH_ASM_RESULT: break;
  }
  sbuf_puts(out, "\n");
}

void graph_print(const ic_graph *g, sbuf *out) {
  for (int32_t k = 0; k < g->symbols.count; k++) sbuf_printf(out, "symbol %s\n", g->symbols.items[k]);
  for (ic_value v = 0; v < g->nodes.count; v++) print_node(g, v, out);
  for (int32_t i = 0; i < g->outputs.count; i++) {
    const graph_output *o = &g->outputs.items[i];
    const char *value_name = g->nodes.items[o->value].name;
    if (value_name && strcmp(value_name, o->name) == 0) {
      sbuf_printf(out, "output %s\n", o->name);
    } else {
      sbuf_printf(out, "output %s = ", o->name);
      print_value_ref(g, o->value, out);
      sbuf_puts(out, "\n");
    }
  }
}

/* The builder takes any string as a symbol, input or output name; the text format only
 * [A-Za-z_][A-Za-z0-9_.]* (a space or a '%' would not read back as the same graph). */
static ic_status check_printable_names(const ic_graph *g) {
  for (int32_t k = 0; k < g->symbols.count; k++)
    if (!graph_name_valid(g->symbols.items[k]))
      return error_set(IC_ERR_UNSUPPORTED, "ic_graph_print: symbol name '%s' cannot be written in the text format",
                          g->symbols.items[k]);
  for (int32_t v = 0; v < g->nodes.count; v++)
    if (g->nodes.items[v].name && !graph_name_valid(g->nodes.items[v].name))
      return error_set(IC_ERR_UNSUPPORTED, "ic_graph_print: name '%s' cannot be written in the text format",
                          g->nodes.items[v].name);
  for (int32_t i = 0; i < g->outputs.count; i++)
    if (!graph_name_valid(g->outputs.items[i].name))
      return error_set(IC_ERR_UNSUPPORTED, "ic_graph_print: output name '%s' cannot be written in the text format",
                          g->outputs.items[i].name);
  return IC_OK;
}

ic_status ic_graph_print(const ic_graph *graph, char **out) {
  if (!out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_print: out is NULL");
  *out = NULL;
  if (!graph) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_print: graph is NULL");
  ic_status st = check_printable_names(graph);
  if (st != IC_OK) return st;
  sbuf sb = {0};
  graph_print(graph, &sb);
  *out = sbuf_take(&sb);
  if (!*out) return error_set(IC_ERR_OUT_OF_MEMORY, "ic_graph_print: out of memory");
  return IC_OK;
}

/* ---------------------------------------------------------------- lexer */

typedef enum tok_kind {
  TOK_END,     /* end of the text */
  TOK_NEWLINE,
  TOK_NAME,    /* [A-Za-z_%][A-Za-z0-9_%.]* */
  TOK_NUMBER,  /* a digit and the name characters after it, checked when read */
  TOK_PUNCT,   /* one of = : , ( ) [ ] ? * + - / */
  TOK_STRING,  /* "..." on one line, with C escapes (read by parse_string) */
  TOK_BAD      /* any other character; an unterminated string */
} tok_kind;

typedef struct token {
  tok_kind kind;
  int32_t len;
  const char *start;
  int64_t line, col; /* 1-based; col counts bytes */
} token;

typedef struct lexer {
  const char *p;
  const char *line_start;
  int64_t line;
} lexer;

static bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_name_start(char c) { return is_alpha(c) || c == '%'; }
static bool is_name_char(char c) { return is_alpha(c) || is_digit(c) || c == '%' || c == '.'; }

/* Token lengths are int32_t; a longer name or number is cut (and then fails to match). */
static int32_t lex_span(const char *start, const char *end) {
  ptrdiff_t n = end - start;
  return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

static token lex(lexer *lx) {
  for (;;) {
    while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r') lx->p++;
    if (*lx->p != '#') break;
    while (*lx->p && *lx->p != '\n') lx->p++;
  }
  const char *s = lx->p;
  token t = {.start = s, .len = 1, .line = lx->line, .col = (int64_t)(s - lx->line_start) + 1};
  if (!*s) {
    t.kind = TOK_END;
    t.len = 0;
  } else if (*s == '\n') {
    t.kind = TOK_NEWLINE;
    lx->p++;
    lx->line++;
    lx->line_start = lx->p;
  } else if (is_name_start(*s)) {
    const char *e = s + 1;
    while (is_name_char(*e)) e++;
    t.kind = TOK_NAME;
    t.len = lex_span(s, e);
    lx->p = e;
  } else if (is_digit(*s)) {
    /* Greedy, so "12ab" or "1.5.3" is one bad number rather than two tokens; a sign
     * belongs to the number right after an exponent's 'e'. */
    const char *e = s + 1;
    while (is_name_char(*e) || ((*e == '+' || *e == '-') && (e[-1] == 'e' || e[-1] == 'E'))) e++;
    t.kind = TOK_NUMBER;
    t.len = lex_span(s, e);
    lx->p = e;
  } else if (*s == '"') {
    const char *e = s + 1;
    while (*e && *e != '"' && *e != '\n') e += e[0] == '\\' && e[1] && e[1] != '\n' ? 2 : 1;
    t.kind = *e == '"' ? TOK_STRING : TOK_BAD;
    if (*e == '"') e++;
    t.len = lex_span(s, e);
    lx->p = e;
  } else {
    t.kind = strchr("=:,()[]?*+-/", *s) ? TOK_PUNCT : TOK_BAD;
    lx->p++;
  }
  return t;
}

/* ---------------------------------------------------------------- parser state */

/* Text names to values: an open-addressing table whose keys point into the text. It
 * holds '%' labels too, which never reach the graph. */
typedef struct name_slot {
  const char *name; /* NULL: empty */
  int32_t len;
  ic_value value;
} name_slot;

typedef struct parser {
  lexer lx;
  token tok; /* the current token */
  ic_graph *g;
  name_slot *slots;
  size_t nslots, used; /* nslots: a power of two (or 0) */
  ic_status status;    /* the first error */
} parser;

static void advance(parser *ps) { ps->tok = lex(&ps->lx); }

/* The token after the current one. */
static token peek(const parser *ps) {
  lexer copy = ps->lx;
  return lex(&copy);
}

static bool tok_is_punct(const token *t, char c) { return t->kind == TOK_PUNCT && t->start[0] == c; }

static bool tok_is_word(const token *t, const char *word) {
  return t->kind == TOK_NAME && (size_t)t->len == strlen(word) && memcmp(t->start, word, (size_t)t->len) == 0;
}

static bool tok_at_line_end(const token *t) { return t->kind == TOK_NEWLINE || t->kind == TOK_END; }

/* The token for messages: 'text' (cut at 40 bytes, other than printable ASCII as \xNN),
 * "end of line" or "end of input". */
static const char *tok_describe(const token *t, char *buf, size_t size) {
  if (t->kind == TOK_END) return "end of input";
  if (t->kind == TOK_NEWLINE) return "end of line";
  size_t o = 0;
  int32_t n = t->len > 40 ? 40 : t->len;
  o += (size_t)snprintf(buf + o, size - o, "'");
  for (int32_t i = 0; i < n && o < size; i++) {
    unsigned char c = (unsigned char)t->start[i];
    o += (size_t)snprintf(buf + o, size - o, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
  }
  if (o < size) snprintf(buf + o, size - o, "%s'", t->len > n ? "..." : "");
  return buf;
}

/* Records the first error, "line L, column C: message", and returns false. */
PRINTF_LIKE(3, 4)
static bool fail_at(parser *ps, const token *at, const char *fmt, ...) {
  if (ps->status != IC_OK) return false;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ps->status = error_set(IC_ERR_INVALID_GRAPH, "line %" PRId64 ", column %" PRId64 ": %s", at->line, at->col, msg);
  return false;
}

/* "expected X, found Y" at the current token. */
static bool fail_expected(parser *ps, const char *what) {
  char buf[200];
  return fail_at(ps, &ps->tok, "expected %s, found %s", what, tok_describe(&ps->tok, buf, sizeof buf));
}

static bool fail_oom(parser *ps, const token *at) {
  if (ps->status == IC_OK) {
    ps->status = error_set(IC_ERR_OUT_OF_MEMORY, "line %" PRId64 ", column %" PRId64 ": out of memory", at->line,
                              at->col);
  }
  return false;
}

/* A builder call failed: its message, at the statement that made it. */
static bool fail_builder(parser *ps, const token *stmt) {
  const char *msg = NULL;
  ic_status st = ic_graph_error(ps->g, &msg);
  if (st == IC_ERR_OUT_OF_MEMORY) return fail_oom(ps, stmt);
  return fail_at(ps, stmt, "%s", msg && *msg ? msg : "the builder refused the statement");
}

/* The token's text as a C string for the builder (malloc'd). */
static char *tok_strdup(const token *t) {
  char *s = sys_malloc((size_t)t->len + 1);
  if (s) {
    memcpy(s, t->start, (size_t)t->len);
    s[t->len] = '\0';
  }
  return s;
}

/* ---------------------------------------------------------------- name table */

static size_t name_hash(const char *s, int32_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (int32_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return (size_t)h;
}

static name_slot *names_slot(const parser *ps, const token *t) {
  size_t mask = ps->nslots - 1;
  for (size_t i = name_hash(t->start, t->len) & mask;; i = (i + 1) & mask) {
    name_slot *s = &ps->slots[i];
    if (!s->name || (s->len == t->len && memcmp(s->name, t->start, (size_t)t->len) == 0)) return s;
  }
}

static ic_value names_find(const parser *ps, const token *t) {
  if (!ps->nslots) return IC_INVALID_VALUE;
  const name_slot *s = names_slot(ps, t);
  return s->name ? s->value : IC_INVALID_VALUE;
}

/* Adds a name known to be new; false when out of memory. */
static bool names_add(parser *ps, const token *t, ic_value v) {
  if (2 * (ps->used + 1) > ps->nslots) { /* keep the load under one half */
    size_t n = ps->nslots ? 2 * ps->nslots : 64;
    name_slot *old = ps->slots;
    size_t old_n = ps->nslots;
    if (!(ps->slots = sys_calloc(n, sizeof *ps->slots))) {
      ps->slots = old;
      return false;
    }
    ps->nslots = n;
    for (size_t i = 0; i < old_n; i++) {
      if (!old[i].name) continue;
      token k = {.start = old[i].name, .len = old[i].len};
      *names_slot(ps, &k) = old[i];
    }
    free(old);
  }
  *names_slot(ps, t) = (name_slot){t->start, t->len, v};
  ps->used++;
  return true;
}

/* ---------------------------------------------------------------- pieces */

/* Symbol k of the graph named by t, or -1. */
static int32_t find_symbol(const parser *ps, const token *t) {
  for (int32_t k = 0; k < ps->g->symbols.count; k++) {
    const char *s = ps->g->symbols.items[k];
    if (strlen(s) == (size_t)t->len && memcmp(s, t->start, (size_t)t->len) == 0) return k;
  }
  return -1;
}

/* '%' may only begin a name, and such a name labels an unnamed value (the printer's
 * %<id>); every other name must read back as the same name. */
static bool tok_is_label(const token *t) { return t->kind == TOK_NAME && t->start[0] == '%'; }

static bool check_plain_name(parser *ps, const token *t, const char *what) {
  if (memchr(t->start, '%', (size_t)t->len))
    return fail_at(ps, t, "%s name '%.*s' has a '%%' (reserved for unnamed values, as in %%3)", what, (int)t->len,
                   t->start);
  return true;
}

/* A NAME for a symbol, input or output. */
static bool parse_plain_name(parser *ps, const char *what, token *out) {
  if (ps->tok.kind != TOK_NAME) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s name", what);
    return fail_expected(ps, buf);
  }
  if (!check_plain_name(ps, &ps->tok, what)) return false;
  *out = ps->tok;
  advance(ps);
  return true;
}

/* A NAME that refers to an earlier value. */
static bool parse_value_ref(parser *ps, ic_value *out) {
  if (ps->tok.kind != TOK_NAME) return fail_expected(ps, "a value name");
  *out = names_find(ps, &ps->tok);
  if (*out == IC_INVALID_VALUE) return fail_at(ps, &ps->tok, "unknown name '%.*s'", (int)ps->tok.len, ps->tok.start);
  advance(ps);
  return true;
}

static bool parse_dtype(parser *ps, ic_dtype *out) {
  if (ps->tok.kind != TOK_NAME) return fail_expected(ps, "a dtype");
  for (int d = IC_BOOL; d < IC_DTYPE_COUNT; d++) {
    if (tok_is_word(&ps->tok, ic_dtype_name((ic_dtype)d))) {
      *out = (ic_dtype)d;
      advance(ps);
      return true;
    }
  }
  return fail_at(ps, &ps->tok, "unknown dtype '%.*s'", (int)ps->tok.len, ps->tok.start);
}

static bool expect_punct(parser *ps, char c) {
  if (!tok_is_punct(&ps->tok, c)) {
    char what[8];
    snprintf(what, sizeof what, "'%c'", c);
    return fail_expected(ps, what);
  }
  advance(ps);
  return true;
}

/* A non-negative decimal integer token. */
static bool parse_integer(parser *ps, int64_t *out) {
  const token *t = &ps->tok;
  if (t->kind != TOK_NUMBER) return fail_expected(ps, "an integer");
  int64_t v = 0;
  for (int32_t i = 0; i < t->len; i++) {
    if (!is_digit(t->start[i]))
      return fail_at(ps, t, "bad number '%.*s' (an integer is expected)", (int)(t->len > 40 ? 40 : t->len), t->start);
    int d = t->start[i] - '0';
    if (v > (INT64_MAX - d) / 10) return fail_at(ps, t, "number '%.*s' is too large", (int)(t->len > 40 ? 40 : t->len), t->start);
    v = v * 10 + d;
  }
  *out = v;
  advance(ps);
  return true;
}

/* ['-'] INT as an int64: INT64_MIN's magnitude is one more than INT64_MAX. */
static bool parse_signed(parser *ps, int64_t *out) {
  bool negative = tok_is_punct(&ps->tok, '-');
  if (negative) advance(ps);
  const token *t = &ps->tok;
  if (t->kind != TOK_NUMBER) return fail_expected(ps, "an integer");
  uint64_t v = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (int32_t i = 0; i < t->len; i++) {
    if (!is_digit(t->start[i]))
      return fail_at(ps, t, "bad number '%.*s' (an integer is expected)", (int)(t->len > 40 ? 40 : t->len), t->start);
    uint64_t d = (uint64_t)(t->start[i] - '0');
    if (v > (limit - d) / 10) return fail_at(ps, t, "number '%.*s' is out of range", (int)(t->len > 40 ? 40 : t->len), t->start);
    v = v * 10 + d;
  }
  *out = negative ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  advance(ps);
  return true;
}

/* A dim index argument: a signed integer that fits int32_t (the builder checks it). */
static bool parse_dim_arg(parser *ps, int32_t *out) {
  token at = ps->tok;
  int64_t v = 0;
  if (!parse_signed(ps, &v)) return false;
  if (v < -IC_MAX_DIMS || v >= IC_MAX_DIMS) return fail_at(ps, &at, "dim %" PRId64 " is not a dim (at most %d dims)", v, IC_MAX_DIMS);
  *out = (int32_t)v;
  return true;
}

/* digits ['.' digits] [('e' | 'E') ['+' | '-'] digits]: what %.17g writes, and nothing
 * strtod would read differently (hex, "infinity"). */
static bool is_decimal(const char *s, int32_t len) {
  int32_t i = 0;
  while (i < len && is_digit(s[i])) i++;
  if (i == 0) return false;
  if (i < len && s[i] == '.')
    for (i++; i < len && is_digit(s[i]); i++) {}
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-')) i++;
    int32_t digits = i;
    while (i < len && is_digit(s[i])) i++;
    if (i == digits) return false;
  }
  return i == len;
}

/* A constant's value: ['-'] (NUMBER | inf | nan). */
static bool parse_const_value(parser *ps, double *out) {
  bool negative = false;
  if (tok_is_punct(&ps->tok, '-')) {
    negative = true;
    advance(ps);
  }
  const token *t = &ps->tok;
  int n = (int)(t->len > 40 ? 40 : t->len);
  double v = 0;
  if (tok_is_word(t, "inf")) {
    v = INFINITY;
  } else if (tok_is_word(t, "nan")) {
    v = NAN;
  } else if (t->kind == TOK_NUMBER) {
    if (!is_decimal(t->start, t->len)) return fail_at(ps, t, "bad number '%.*s'", n, t->start);
    /* The token is a complete decimal and the next byte cannot extend it, so strtod
     * reads exactly the token (unless the locale's decimal point is not '.'). */
    char *end = NULL;
    errno = 0;
    v = strtod(t->start, &end);
    if (end != t->start + t->len) return fail_at(ps, t, "bad number '%.*s'", n, t->start);
    if (isinf(v)) return fail_at(ps, t, "number '%.*s' is out of range", n, t->start);
  } else {
    char buf[200];
    return fail_at(ps, t, "bad number: expected a number, inf or nan, found %s", tok_describe(t, buf, sizeof buf));
  }
  *out = negative ? -v : v;
  advance(ps);
  return true;
}

/* ---------------------------------------------------------------- dim expressions */

/* Deep enough for any dim the printer writes; keeps hostile input off the C stack. */
#define EXPR_MAX_DEPTH 64

static bool parse_expr(parser *ps, int depth, sym_id *out);

static bool expr_ok(parser *ps, const token *at, sym_id e) {
  if (e == SYM_NONE || sym_arena_failed(ps->g->syms)) return fail_oom(ps, at);
  return true;
}

/* factor := INT | SYMBOL | '(' expr ')' | '-' factor */
static bool parse_factor(parser *ps, int depth, sym_id *out) {
  token t = ps->tok;
  sym_arena *a = ps->g->syms;
  if (depth > EXPR_MAX_DEPTH) return fail_at(ps, &t, "dim expression nested too deeply (at most %d levels)", EXPR_MAX_DEPTH);
  if (t.kind == TOK_NUMBER) {
    int64_t v = 0;
    if (!parse_integer(ps, &v)) return false;
    *out = sym_const(a, v);
    return expr_ok(ps, &t, *out);
  }
  token next = peek(ps);
  if ((tok_is_word(&t, "ic_min") || tok_is_word(&t, "ic_max")) && tok_is_punct(&next, '(')) {
    bool is_min = tok_is_word(&t, "ic_min");
    sym_id x = SYM_NONE, y = SYM_NONE;
    advance(ps);
    advance(ps);
    if (!parse_expr(ps, depth + 1, &x) || !expect_punct(ps, ',') || !parse_expr(ps, depth + 1, &y) ||
        !expect_punct(ps, ')'))
      return false;
    *out = is_min ? sym_min(a, x, y) : sym_max(a, x, y);
    return expr_ok(ps, &t, *out);
  }
  if (t.kind == TOK_NAME) {
    int32_t k = find_symbol(ps, &t);
    if (k < 0) return fail_at(ps, &t, "unknown symbol '%.*s'", (int)t.len, t.start);
    advance(ps);
    *out = sym_symbol(a, k);
    return expr_ok(ps, &t, *out);
  }
  if (tok_is_punct(&t, '(')) {
    advance(ps);
    if (!parse_expr(ps, depth + 1, out)) return false;
    if (tok_is_punct(&ps->tok, ')')) {
      advance(ps);
      return true;
    }
    return fail_expected(ps, "')'");
  }
  if (tok_is_punct(&t, '-')) {
    advance(ps);
    sym_id x = SYM_NONE;
    if (!parse_factor(ps, depth + 1, &x)) return false;
    *out = sym_sub(a, sym_const(a, 0), x);
    return expr_ok(ps, &t, *out);
  }
  return fail_expected(ps, "a dim (an integer, a symbol or '(')");
}

/* term := factor {('*' | '/') factor} */
static bool parse_term(parser *ps, int depth, sym_id *out) {
  sym_arena *a = ps->g->syms;
  if (!parse_factor(ps, depth, out)) return false;
  while (tok_is_punct(&ps->tok, '*') || tok_is_punct(&ps->tok, '/')) {
    token op = ps->tok;
    advance(ps);
    token rhs_at = ps->tok;
    sym_id y = SYM_NONE;
    if (!parse_factor(ps, depth, &y)) return false;
    int64_t c = 0;
    if (op.start[0] == '/' && sym_is_const(a, y, &c) && c <= 0)
      return fail_at(ps, &rhs_at, "division by %s", c == 0 ? "zero" : "a negative number");
    *out = op.start[0] == '*' ? sym_mul(a, *out, y) : sym_floordiv(a, *out, y);
    if (!expr_ok(ps, &op, *out)) return false;
  }
  return true;
}

/* expr := term {('+' | '-') term} */
static bool parse_expr(parser *ps, int depth, sym_id *out) {
  sym_arena *a = ps->g->syms;
  if (!parse_term(ps, depth, out)) return false;
  while (tok_is_punct(&ps->tok, '+') || tok_is_punct(&ps->tok, '-')) {
    token op = ps->tok;
    advance(ps);
    sym_id y = SYM_NONE;
    if (!parse_term(ps, depth, &y)) return false;
    *out = op.start[0] == '+' ? sym_add(a, *out, y) : sym_sub(a, *out, y);
    if (!expr_ok(ps, &op, *out)) return false;
  }
  return true;
}

/* Whether e prints in this grammar's forms (any sign): constants, symbols, + * / min max. */
static bool dim_printable(const sym_arena *a, sym_id e) {
  switch (sym_kind_of(a, e)) {
  case SYM_CONST: case SYM_SYMBOL: return true;
  case SYM_ADD: case SYM_MUL: case SYM_FLOORDIV: case SYM_MIN: case SYM_MAX:
    for (int32_t i = 0; i < sym_operand_count(a, e); i++)
      if (!dim_printable(a, sym_operand(a, e, i))) return false;
    return true;
  default: return false;
  }
}

/* Dims must be >= 0 for all sizes, and in the forms sym_print writes as this grammar (no
 * %, ceildiv, or the long exact-division form). */
static bool dim_nonneg(const sym_arena *a, sym_id e) { return sym_nonneg(a, e) && dim_printable(a, e); }

/* ---------------------------------------------------------------- lists */

typedef bool (*list_item_fn)(parser *ps, int32_t index, void *ctx);

/* open [item {',' item}] close, at most max items ("too many <noun>"). */
static bool parse_list(parser *ps, char open, char close, int32_t max, const char *noun, list_item_fn item, void *ctx,
                       int32_t *count) {
  *count = 0;
  if (!expect_punct(ps, open)) return false;
  if (tok_is_punct(&ps->tok, close)) {
    advance(ps);
    return true;
  }
  for (;;) {
    if (*count == max) return fail_at(ps, &ps->tok, "too many %s (at most %" PRId32 ")", noun, max);
    if (!item(ps, *count, ctx)) return false;
    ++*count;
    if (tok_is_punct(&ps->tok, close)) {
      advance(ps);
      return true;
    }
    if (tok_is_punct(&ps->tok, ',')) {
      advance(ps);
      continue;
    }
    char buf[200];
    if (tok_at_line_end(&ps->tok))
      return fail_at(ps, &ps->tok, "unterminated list: expected ',' or '%c', found %s", close,
                     tok_describe(&ps->tok, buf, sizeof buf));
    return fail_at(ps, &ps->tok, "expected ',' or '%c', found %s", close, tok_describe(&ps->tok, buf, sizeof buf));
  }
}

typedef struct dim_list {
  bool allow_infer;
  sym_id dims[IC_MAX_DIMS];
  token at[IC_MAX_DIMS]; /* each dim's first token, for messages */
} dim_list;

static bool parse_dim_item(parser *ps, int32_t i, void *ctx) {
  dim_list *dl = ctx;
  dl->at[i] = ps->tok;
  if (tok_is_punct(&ps->tok, '?')) {
    if (!dl->allow_infer) return fail_at(ps, &ps->tok, "'?' (an inferred dim) is only allowed in reshape");
    advance(ps);
    dl->dims[i] = SYM_NONE;
    return true;
  }
  uint64_t wraps = sym_arena_wraps(ps->g->syms);
  if (!parse_expr(ps, 0, &dl->dims[i])) return false;
  /* checked before the sign: a sum that wrapped may look negative, or fine */
  if (sym_arena_wraps(ps->g->syms) != wraps)
    return fail_at(ps, &dl->at[i], "dim %" PRId32 " overflows 64-bit integers", i);
  if (!dim_nonneg(ps->g->syms, dl->dims[i])) return fail_at(ps, &dl->at[i], "dim %" PRId32 " may be negative", i);
  return true;
}

static bool parse_perm_item(parser *ps, int32_t i, void *ctx) {
  int32_t *perm = ctx;
  int64_t v = 0;
  token at = ps->tok;
  if (!parse_integer(ps, &v)) return false;
  if (v >= IC_MAX_DIMS) return fail_at(ps, &at, "permute entry %" PRId64 " is not a dim (at most %d dims)", v, IC_MAX_DIMS);
  perm[i] = (int32_t)v;
  return true;
}

typedef struct arg_list {
  ic_value values[IC_MAX_DIMS];
} arg_list;

static bool parse_arg_item(parser *ps, int32_t i, void *ctx) { return parse_value_ref(ps, &((arg_list *)ctx)->values[i]); }

/* ---------------------------------------------------------------- statements */

/* The ',' between a two-argument call's arguments, and the ')' after them: a call with
 * one or three arguments is reported against the op. */
static bool expect_second_arg(parser *ps, const token *op, const char *second) {
  if (tok_is_punct(&ps->tok, ')'))
    return fail_at(ps, op, "%.*s takes 2 arguments (a value and %s), got 1", (int)op->len, op->start, second);
  return expect_punct(ps, ',');
}

static bool expect_call_end(parser *ps, const token *op, const char *second) {
  if (tok_is_punct(&ps->tok, ','))
    return fail_at(ps, op, "%.*s takes 2 arguments (a value and %s), got more", (int)op->len, op->start, second);
  if (tok_at_line_end(&ps->tok)) {
    char buf[200];
    return fail_at(ps, &ps->tok, "unterminated argument list: expected ')', found %s",
                   tok_describe(&ps->tok, buf, sizeof buf));
  }
  return expect_punct(ps, ')');
}

/* cast, cast_saturate, bitcast: (value, dtype). */
static bool parse_convert(parser *ps, const token *op, ic_op which, ic_value *out) {
  ic_value a = IC_INVALID_VALUE;
  ic_dtype dt = IC_DTYPE_INVALID;
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &a) || !expect_second_arg(ps, op, "a dtype") ||
      !parse_dtype(ps, &dt) || !expect_call_end(ps, op, "a dtype"))
    return false;
  *out = which == IC_OP_CAST            ? ic_graph_cast(ps->g, a, dt)
         : which == IC_OP_CAST_SATURATE ? ic_graph_cast_saturate(ps->g, a, dt)
                                        : ic_graph_bitcast(ps->g, a, dt);
  return true;
}

static bool parse_view(parser *ps, const token *op, graph_node_kind kind, ic_value *out) {
  ic_value a = IC_INVALID_VALUE;
  int32_t n = 0;
  const char *second = kind == GRAPH_PERMUTE ? "a permutation" : "a dim list";
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &a) || !expect_second_arg(ps, op, second)) return false;
  if (kind == GRAPH_PERMUTE) {
    int32_t perm[IC_MAX_DIMS] = {0};
    if (!parse_list(ps, '[', ']', IC_MAX_DIMS, "dims", parse_perm_item, perm, &n) || !expect_call_end(ps, op, second))
      return false;
    *out = ic_graph_permute(ps->g, a, n, perm);
    return true;
  }
  dim_list dl = {.allow_infer = kind == GRAPH_RESHAPE};
  if (!parse_list(ps, '[', ']', IC_MAX_DIMS, "dims", parse_dim_item, &dl, &n) || !expect_call_end(ps, op, second))
    return false;
  *out = kind == GRAPH_RESHAPE ? graph_reshape_exprs(ps->g, a, n, dl.dims) : graph_expand_exprs(ps->g, a, n, dl.dims);
  return true;
}

/* The ')' closing a call of a fixed number of arguments (`what` lists them). */
static bool expect_args_end(parser *ps, const token *op, const char *what) {
  if (tok_is_punct(&ps->tok, ','))
    return fail_at(ps, op, "%.*s takes %s, got more", (int)op->len, op->start, what);
  if (tok_at_line_end(&ps->tok)) {
    char buf[200];
    return fail_at(ps, &ps->tok, "unterminated argument list: expected ')', found %s",
                   tok_describe(&ps->tok, buf, sizeof buf));
  }
  return expect_punct(ps, ')');
}

/* The ',' before another argument: a ')' there means too few (`what` lists them). */
static bool expect_next_arg(parser *ps, const token *op, const char *what) {
  if (tok_is_punct(&ps->tok, ')')) return fail_at(ps, op, "%.*s takes %s, got fewer", (int)op->len, op->start, what);
  return expect_punct(ps, ',');
}

/* slice(value, dim, start, stop, step) */
static bool parse_slice(parser *ps, const token *op, ic_value *out) {
  ic_value a = IC_INVALID_VALUE;
  int32_t dim = 0;
  int64_t bounds[3] = {0, 0, 0};
  const char *what = "5 arguments (a value, dim, start, stop and step)";
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &a) || !expect_next_arg(ps, op, what) || !parse_dim_arg(ps, &dim))
    return false;
  for (int i = 0; i < 3; i++)
    if (!expect_next_arg(ps, op, what) || !parse_signed(ps, &bounds[i])) return false;
  if (!expect_args_end(ps, op, what)) return false;
  *out = ic_graph_slice(ps->g, a, dim, bounds[0], bounds[1], bounds[2]);
  return true;
}

typedef struct value_list {
  struct { ic_value *items; int32_t count, cap; } values;
} value_list;

static bool parse_value_item(parser *ps, int32_t i, void *ctx) {
  (void)i;
  value_list *vl = ctx;
  ic_value v = IC_INVALID_VALUE;
  if (!parse_value_ref(ps, &v)) return false;
  if (!VEC_PUSH(vl->values, v)) return fail_oom(ps, &ps->tok);
  return true;
}

/* concat([values], dim) */
static bool parse_concat(parser *ps, const token *op, ic_value *out) {
  value_list vl = {0};
  int32_t n = 0, dim = 0;
  bool ok = expect_punct(ps, '(') && parse_list(ps, '[', ']', INT32_MAX, "values", parse_value_item, &vl, &n) &&
            expect_second_arg(ps, op, "a dim") && parse_dim_arg(ps, &dim) && expect_call_end(ps, op, "a dim");
  if (ok) *out = ic_graph_concat(ps->g, n, vl.values.items, dim);
  free(vl.values.items);
  return ok;
}

static bool parse_amount_item(parser *ps, int32_t i, void *ctx) { return parse_signed(ps, &((int64_t *)ctx)[i]); }

/* pad(value, [amounts], constant) */
static bool parse_pad(parser *ps, const token *op, ic_value *out) {
  ic_value a = IC_INVALID_VALUE;
  int64_t amounts[2 * IC_MAX_DIMS] = {0};
  int32_t n = 0;
  double value = 0;
  const char *what = "3 arguments (a value, a list of amounts and the pad value)";
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &a) || !expect_next_arg(ps, op, what) ||
      !parse_list(ps, '[', ']', 2 * IC_MAX_DIMS, "amounts", parse_amount_item, amounts, &n) ||
      !expect_next_arg(ps, op, what) || !parse_const_value(ps, &value) || !expect_args_end(ps, op, what))
    return false;
  if (n % 2) return fail_at(ps, op, "pad takes amounts in (before, after) pairs, got %" PRId32 " amounts", n);
  *out = ic_graph_pad(ps->g, a, n / 2, amounts, value);
  return true;
}

static bool parse_axis_item(parser *ps, int32_t i, void *ctx) {
  token at = ps->tok;
  int64_t v = 0;
  if (!parse_signed(ps, &v)) return false;
  if (v < -IC_MAX_DIMS || v >= IC_MAX_DIMS) return fail_at(ps, &at, "axis %" PRId64 " is not a dim (at most %d dims)", v, IC_MAX_DIMS);
  ((int32_t *)ctx)[i] = (int32_t)v;
  return true;
}

/* A reduction's call: (value, [axes] [, keepdim] [, correction=NUMBER]), each option at
 * most once; c->correction is left as set when none is given, c->correction_at.start
 * NULL then. */
typedef struct reduce_call {
  ic_value a;
  int32_t axes[IC_MAX_DIMS], n;
  bool keepdim;
  double correction;
  token correction_at;
} reduce_call;

static bool parse_reduce_call(parser *ps, const token *op, reduce_call *c) {
  const char *what = "a value and a list of axes, then optionally keepdim and correction=NUMBER";
  c->a = IC_INVALID_VALUE;
  c->n = 0;
  c->keepdim = false;
  c->correction_at.start = NULL;
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &c->a) || !expect_next_arg(ps, op, what) ||
      !parse_list(ps, '[', ']', IC_MAX_DIMS, "axes", parse_axis_item, c->axes, &c->n))
    return false;
  while (tok_is_punct(&ps->tok, ',')) {
    advance(ps);
    token word = ps->tok;
    if (tok_is_word(&word, "keepdim") && !c->keepdim) {
      c->keepdim = true;
      advance(ps);
    } else if (tok_is_word(&word, "correction") && !c->correction_at.start) {
      c->correction_at = word;
      advance(ps);
      if (!expect_punct(ps, '=') || !parse_const_value(ps, &c->correction)) return false;
    } else {
      return fail_at(ps, &word, "expected keepdim or correction=NUMBER (each at most once)");
    }
  }
  return expect_args_end(ps, op, what);
}

/* REDUCE(value, [axes] [, keepdim] [, correction=NUMBER]); [] reduces over no dim */
static bool parse_reduce(parser *ps, const token *op, ic_reduce_op which, ic_value *out) {
  reduce_call c = {.correction = 0};
  if (!parse_reduce_call(ps, op, &c)) return false;
  if (c.correction_at.start && c.correction == 0)
    return fail_at(ps, &c.correction_at, "correction=0 is the plain mean: leave it out");
  if (c.correction != 0 && which != IC_REDUCE_MEAN) return fail_at(ps, op, "only mean takes a correction");
  if (c.n == 0) *out = graph_reduce_mask(ps->g, which, c.a, 0, c.keepdim, c.correction);
  else if (which == IC_REDUCE_MEAN) *out = ic_graph_mean_correction(ps->g, c.a, c.n, c.axes, c.correction, c.keepdim);
  else *out = ic_graph_reduce(ps->g, which, c.a, c.n, c.axes, c.keepdim);
  return true;
}

/* The shorthands of ic.h, built by their builders (printing shows the decomposition). */

/* var|std(value, [axes] [, keepdim] [, correction=NUMBER]): correction 1 unless given;
 * [] is a scalar's form only (ic_graph_var's naxes 0 means every dim). */
static bool parse_var(parser *ps, const token *op, bool std, ic_value *out) {
  reduce_call c = {.correction = 1};
  if (!parse_reduce_call(ps, op, &c)) return false;
  if (c.n == 0 && ic_graph_value_ndim(ps->g, c.a) > 0)
    return fail_at(ps, op, "%.*s over no dim: list the axes ([] is a scalar's form)", (int)op->len, op->start);
  *out = std ? ic_graph_std(ps->g, c.a, c.n, c.axes, c.correction, c.keepdim)
             : ic_graph_var(ps->g, c.a, c.n, c.axes, c.correction, c.keepdim);
  return true;
}

/* softmax|log_softmax(value, AXIS) */
static bool parse_softmax(parser *ps, const token *op, bool log, ic_value *out) {
  ic_value a = IC_INVALID_VALUE;
  int32_t axis = 0;
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &a) || !expect_second_arg(ps, op, "an axis") ||
      !parse_dim_arg(ps, &axis) || !expect_call_end(ps, op, "an axis"))
    return false;
  *out = log ? ic_graph_log_softmax(ps->g, a, axis) : ic_graph_softmax(ps->g, a, axis);
  return true;
}

/* layer_norm(value, NLAST [, weight=W] [, bias=B] [, eps=NUMBER]), eps 1e-5 unless given;
 * rms_norm(value, NLAST [, weight=W] [, eps=NUMBER]), eps 1e-6 (the Python defaults). */
static bool parse_norm(parser *ps, const token *op, bool layer, ic_value *out) {
  ic_value a = IC_INVALID_VALUE, weight = IC_INVALID_VALUE, bias = IC_INVALID_VALUE;
  int32_t nlast = 0;
  double eps = layer ? 1e-5 : 1e-6;
  bool has_eps = false;
  const char *what = layer ? "a value and the number of last dims, then optionally weight=W, bias=B and eps=NUMBER"
                           : "a value and the number of last dims, then optionally weight=W and eps=NUMBER";
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &a) || !expect_next_arg(ps, op, what) ||
      !parse_dim_arg(ps, &nlast))
    return false;
  while (tok_is_punct(&ps->tok, ',')) {
    advance(ps);
    token word = ps->tok;
    ic_value *slot = tok_is_word(&word, "weight") ? &weight : layer && tok_is_word(&word, "bias") ? &bias : NULL;
    if (slot && *slot == IC_INVALID_VALUE) {
      advance(ps);
      if (!expect_punct(ps, '=') || !parse_value_ref(ps, slot)) return false;
    } else if (tok_is_word(&word, "eps") && !has_eps) {
      has_eps = true;
      advance(ps);
      if (!expect_punct(ps, '=') || !parse_const_value(ps, &eps)) return false;
    } else {
      return fail_at(ps, &word, layer ? "expected weight=W, bias=B or eps=NUMBER (each at most once)"
                                      : "expected weight=W or eps=NUMBER (each at most once)");
    }
  }
  if (!expect_args_end(ps, op, what)) return false;
  *out = layer ? ic_graph_layer_norm(ps->g, a, nlast, weight, bias, eps) : ic_graph_rms_norm(ps->g, a, nlast, weight, eps);
  return true;
}

/* matmul(a, b) */
static bool parse_matmul(parser *ps, const token *op, ic_value *out) {
  ic_value a = IC_INVALID_VALUE, b = IC_INVALID_VALUE;
  const char *what = "2 arguments (the values a and b)";
  if (!expect_punct(ps, '(') || !parse_value_ref(ps, &a) || !expect_next_arg(ps, op, what) ||
      !parse_value_ref(ps, &b) || !expect_args_end(ps, op, what))
    return false;
  *out = ic_graph_matmul(ps->g, a, b);
  return true;
}

static bool parse_op(parser *ps, const token *op_tok, ic_op op, ic_value *out) {
  arg_list args;
  int32_t n = 0;
  if (!parse_list(ps, '(', ')', IC_MAX_DIMS, "arguments", parse_arg_item, &args, &n)) return false;
  int32_t arity = op_get(op)->arity;
  if (n != arity)
    return fail_at(ps, op_tok, "%s takes %" PRId32 " argument%s, got %" PRId32, ic_op_name(op), arity,
                   arity == 1 ? "" : "s", n);
  *out = ic_graph_op(ps->g, op, n, args.values);
  return true;
}

static bool parse_const(parser *ps, ic_value *out) {
  double v = 0;
  ic_dtype dt = IC_DTYPE_AUTO;
  if (!parse_const_value(ps, &v)) return false;
  if (tok_is_punct(&ps->tok, ':')) {
    advance(ps);
    if (!parse_dtype(ps, &dt)) return false;
  }
  *out = ic_graph_constant(ps->g, v, dt);
  return true;
}

/* ---------------------------------------------------------------- inline_asm */

static int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string token's bytes (malloc'd, *out): escapes \\ \" \n \t \r \xHH \ooo; no NUL. */
static bool parse_string(parser *ps, const char *what, char **out) {
  *out = NULL;
  token t = ps->tok;
  if (t.kind == TOK_BAD && t.start[0] == '"') return fail_at(ps, &t, "unterminated string (strings end on their line)");
  if (t.kind != TOK_STRING) return fail_expected(ps, what);
  const int32_t last = t.len - 2; /* the last byte before the closing quote */
  sbuf sb = {0};
  sbuf_puts(&sb, ""); /* "" is a string too */
  for (int32_t i = 1; i <= last; i++) {
    char c = t.start[i];
    if (c != '\\') {
      sbuf_printf(&sb, "%c", c);
      continue;
    }
    int32_t at = i++;
    int v = -1;
    switch (t.start[i]) {
    case '\\': v = '\\'; break;
    case '"': v = '"'; break;
    case 'n': v = '\n'; break;
    case 't': v = '\t'; break;
    case 'r': v = '\r'; break;
    case 'x':
      if (i + 2 <= last && hex_digit(t.start[i + 1]) >= 0 && hex_digit(t.start[i + 2]) >= 0) {
        v = hex_digit(t.start[i + 1]) * 16 + hex_digit(t.start[i + 2]);
        i += 2;
      }
      break;
    default:
      if (t.start[i] >= '0' && t.start[i] <= '7') {
        v = 0;
        for (int k = 0; k < 3 && i <= last && t.start[i] >= '0' && t.start[i] <= '7'; k++) v = v * 8 + (t.start[i++] - '0');
        i--;
        if (v > 255) v = -1;
      }
      break;
    }
    if (v <= 0) {
      token bad = t;
      bad.col += at;
      sbuf_free(&sb);
      return fail_at(ps, &bad, v == 0 ? "a string cannot hold a NUL byte"
                                      : "unknown escape in a string (\\\\, \\\", \\n, \\t, \\r, \\xHH or octal \\ooo)");
    }
    sbuf_printf(&sb, "%c", (char)v);
  }
  if (!(*out = sbuf_take(&sb))) return fail_oom(ps, &t);
  advance(ps);
  return true;
}

typedef struct dtype_list {
  ic_dtype dtypes[IC_ASM_MAX_OPERANDS];
} dtype_list;

static bool parse_dtype_item(parser *ps, int32_t i, void *ctx) { return parse_dtype(ps, &((dtype_list *)ctx)->dtypes[i]); }

/* inline_asm("asm", "constraints", [inputs], [dtypes] [, pack=N] [, impure]) for the
 * ntargets names targets. */
static bool parse_inline_asm(parser *ps, const token *op, const token *targets, int32_t ntargets) {
  char *text = NULL, *constraints = NULL;
  arg_list args;
  dtype_list dl = {{IC_DTYPE_INVALID}};
  int32_t nin = 0, nout = 0;
  int64_t pack = 1;
  bool pure = true, ok = false;
  const char *what = "the asm, the constraints, a list of inputs and a list of output dtypes";
  if (!expect_punct(ps, '(') || !parse_string(ps, "the asm (a string)", &text) || !expect_next_arg(ps, op, what) ||
      !parse_string(ps, "the constraints (a string)", &constraints) || !expect_next_arg(ps, op, what) ||
      !parse_list(ps, '[', ']', IC_ASM_MAX_OPERANDS, "inputs", parse_arg_item, &args, &nin) ||
      !expect_next_arg(ps, op, what) ||
      !parse_list(ps, '[', ']', IC_ASM_MAX_OPERANDS, "outputs", parse_dtype_item, &dl, &nout))
    goto done;
  while (tok_is_punct(&ps->tok, ',')) {
    advance(ps);
    token opt = ps->tok;
    if (tok_is_word(&opt, "pack")) {
      advance(ps);
      if (!expect_punct(ps, '=') || !parse_integer(ps, &pack)) goto done;
      if (pack > ASM_MAX_PACK) pack = 0; /* the builder names the bad value */
    } else if (tok_is_word(&opt, "impure")) {
      advance(ps);
      pure = false;
    } else {
      fail_expected(ps, "pack=N or impure");
      goto done;
    }
  }
  if (!expect_punct(ps, ')')) goto done;
  if (nout != ntargets) {
    fail_at(ps, &targets[0], "inline_asm makes %" PRId32 " outputs (one a dtype), the statement names %" PRId32, nout,
            ntargets);
    goto done;
  }
  ic_inline_asm_desc desc = {.struct_size = sizeof desc, .asm_text = text, .constraints = constraints,
                             .output_dtypes = dl.dtypes, .is_pure = pure, .pack = (int32_t)pack};
  ic_value outs[IC_ASM_MAX_OPERANDS];
  ic_status st = ic_graph_inline_asm(ps->g, &desc, nin, args.values, nout, outs);
  if (st) {
    fail_builder(ps, &targets[0]);
    goto done;
  }
  ok = true;
  for (int32_t k = 0; k < ntargets && ok; k++) {
    if (!tok_is_label(&targets[k])) {
      char *name = tok_strdup(&targets[k]);
      ic_status ns = name ? ic_graph_name_value(ps->g, outs[k], name) : IC_ERR_OUT_OF_MEMORY;
      free(name);
      if (ns == IC_ERR_OUT_OF_MEMORY) ok = fail_oom(ps, &targets[k]);
      else if (ns != IC_OK) ok = fail_builder(ps, &targets[k]);
    }
    if (ok && !names_add(ps, &targets[k], outs[k])) ok = fail_oom(ps, &targets[k]);
  }
done:
  free(text);
  free(constraints);
  return ok;
}

/* NAME {',' NAME} '=' inline_asm(...): the names of an asm node's outputs. */
static bool parse_multi_assignment(parser *ps) {
  token targets[IC_ASM_MAX_OPERANDS];
  int32_t n = 0;
  for (;;) {
    token t = ps->tok;
    if (!tok_is_label(&t) && !check_plain_name(ps, &t, "value")) return false;
    for (int32_t k = 0; k < n; k++)
      if (targets[k].len == t.len && memcmp(targets[k].start, t.start, (size_t)t.len) == 0)
        return fail_at(ps, &t, "duplicate name '%.*s'", (int)t.len, t.start);
    if (names_find(ps, &t) != IC_INVALID_VALUE) return fail_at(ps, &t, "duplicate name '%.*s'", (int)t.len, t.start);
    if (n == IC_ASM_MAX_OPERANDS) return fail_at(ps, &t, "too many names (an inline_asm has at most %d outputs)", IC_ASM_MAX_OPERANDS);
    targets[n++] = t;
    advance(ps);
    if (tok_is_punct(&ps->tok, '=')) break;
    if (!expect_punct(ps, ',')) return false;
    if (ps->tok.kind != TOK_NAME) return fail_expected(ps, "a name");
  }
  advance(ps); /* '=' */
  token op = ps->tok;
  if (!tok_is_word(&op, "inline_asm")) return fail_at(ps, &op, "only inline_asm assigns several names");
  advance(ps);
  return parse_inline_asm(ps, &op, targets, n);
}

/* NAME '=' rhs */
static bool parse_assignment(parser *ps) {
  token target = ps->tok;
  if (!tok_is_label(&target) && !check_plain_name(ps, &target, "value")) return false;
  if (names_find(ps, &target) != IC_INVALID_VALUE)
    return fail_at(ps, &target, "duplicate name '%.*s'", (int)target.len, target.start);
  advance(ps); /* the name */
  advance(ps); /* '=' */
  token op = ps->tok;
  int32_t before = ps->g->nodes.count;
  ic_value v = IC_INVALID_VALUE;
  bool ok;
  if (op.kind != TOK_NAME) return fail_expected(ps, "an op or 'const'");
  advance(ps);
  if (tok_is_word(&op, "inline_asm")) return parse_inline_asm(ps, &op, &target, 1);
  if (tok_is_word(&op, "const")) ok = parse_const(ps, &v);
  else if (tok_is_word(&op, "cast")) ok = parse_convert(ps, &op, IC_OP_CAST, &v);
  else if (tok_is_word(&op, "cast_saturate")) ok = parse_convert(ps, &op, IC_OP_CAST_SATURATE, &v);
  else if (tok_is_word(&op, "bitcast")) ok = parse_convert(ps, &op, IC_OP_BITCAST, &v);
  else if (tok_is_word(&op, "reshape")) ok = parse_view(ps, &op, GRAPH_RESHAPE, &v);
  else if (tok_is_word(&op, "permute")) ok = parse_view(ps, &op, GRAPH_PERMUTE, &v);
  else if (tok_is_word(&op, "expand")) ok = parse_view(ps, &op, GRAPH_EXPAND, &v);
  else if (tok_is_word(&op, "slice")) ok = parse_slice(ps, &op, &v);
  else if (tok_is_word(&op, "concat")) ok = parse_concat(ps, &op, &v);
  else if (tok_is_word(&op, "pad")) ok = parse_pad(ps, &op, &v);
  else if (tok_is_word(&op, "var") || tok_is_word(&op, "std")) ok = parse_var(ps, &op, tok_is_word(&op, "std"), &v);
  else if (tok_is_word(&op, "softmax") || tok_is_word(&op, "log_softmax"))
    ok = parse_softmax(ps, &op, tok_is_word(&op, "log_softmax"), &v);
  else if (tok_is_word(&op, "layer_norm") || tok_is_word(&op, "rms_norm"))
    ok = parse_norm(ps, &op, tok_is_word(&op, "layer_norm"), &v);
  else if (tok_is_word(&op, "matmul")) ok = parse_matmul(ps, &op, &v);
  else {
    int r = 0, o = 0;
    while (r < IC_REDUCE_COUNT && !tok_is_word(&op, ic_reduce_name((ic_reduce_op)r))) r++;
    if (r < IC_REDUCE_COUNT) {
      if (!parse_reduce(ps, &op, (ic_reduce_op)r, &v)) return false;
      goto built;
    }
    while (o < IC_OP_COUNT && !tok_is_word(&op, ic_op_name((ic_op)o))) o++;
    if (o == IC_OP_COUNT) return fail_at(ps, &op, "unknown op '%.*s'", (int)op.len, op.start);
    ok = parse_op(ps, &op, (ic_op)o, &v);
  }
  if (!ok) return false;
built:
  if (v == IC_INVALID_VALUE) return fail_builder(ps, &target);
  /* A value the builder already had (an expand to the shape it has) only gets the name
   * here; naming it in the graph would rename an existing value. */
  if (v >= before && !tok_is_label(&target)) {
    char *name = tok_strdup(&target);
    ic_status st = name ? ic_graph_name_value(ps->g, v, name) : IC_ERR_OUT_OF_MEMORY;
    free(name);
    if (st == IC_ERR_OUT_OF_MEMORY) return fail_oom(ps, &target);
    if (st != IC_OK) return fail_builder(ps, &target);
  }
  return names_add(ps, &target, v) || fail_oom(ps, &target);
}

/* 'symbol' NAME */
static bool parse_symbol(parser *ps) {
  token stmt = ps->tok, name = ps->tok;
  advance(ps);
  if (!parse_plain_name(ps, "a symbol", &name)) return false;
  if (find_symbol(ps, &name) >= 0) return fail_at(ps, &name, "duplicate symbol '%.*s'", (int)name.len, name.start);
  char *s = tok_strdup(&name);
  if (!s) return fail_oom(ps, &stmt);
  ic_dim d = ic_graph_symbol(ps->g, s);
  free(s);
  return d < 0 || fail_builder(ps, &stmt);
}

/* An input's dims become ic_dims: sizes and symbols only, the builder's inputs. */
static bool input_dims(parser *ps, const dim_list *dl, int32_t n, ic_dim *dims) {
  for (int32_t i = 0; i < n; i++) {
    int64_t c = 0;
    if (sym_is_const(ps->g->syms, dl->dims[i], &c)) dims[i] = c;
    else if (sym_kind_of(ps->g->syms, dl->dims[i]) == SYM_SYMBOL)
      dims[i] = -(ic_dim)sym_leaf_index(ps->g->syms, dl->dims[i]) - 1;
    else return fail_at(ps, &dl->at[i], "an input dim must be a size or a symbol");
  }
  return true;
}

/* 'input' NAME ':' DTYPE '[' dims ']' [LAYOUT] */
static bool parse_input(parser *ps) {
  token stmt = ps->tok, name = ps->tok;
  advance(ps);
  if (!parse_plain_name(ps, "an input", &name)) return false;
  if (names_find(ps, &name) != IC_INVALID_VALUE)
    return fail_at(ps, &name, "duplicate name '%.*s'", (int)name.len, name.start);
  ic_dtype dt = IC_DTYPE_INVALID;
  dim_list dl = {.allow_infer = false};
  int32_t n = 0;
  if (!expect_punct(ps, ':') || !parse_dtype(ps, &dt) ||
      !parse_list(ps, '[', ']', IC_MAX_DIMS, "dims", parse_dim_item, &dl, &n))
    return false;
  ic_dim dims[IC_MAX_DIMS];
  if (!input_dims(ps, &dl, n, dims)) return false;
  ic_layout layout = IC_LAYOUT_CONTIGUOUS;
  if (ps->tok.kind == TOK_NAME) {
    size_t l = 0;
    while (l < ARRAY_LEN(layout_names) && !tok_is_word(&ps->tok, layout_names[l])) l++;
    if (l == ARRAY_LEN(layout_names))
      return fail_at(ps, &ps->tok, "unknown layout '%.*s' (contiguous, inner_contiguous or strided)",
                     (int)ps->tok.len, ps->tok.start);
    layout = (ic_layout)l;
    advance(ps);
  }
  char *s = tok_strdup(&name);
  if (!s) return fail_oom(ps, &stmt);
  ic_value v = ic_graph_input(ps->g, s, dt, n, dims, layout);
  free(s);
  if (v == IC_INVALID_VALUE) return fail_builder(ps, &stmt);
  return names_add(ps, &name, v) || fail_oom(ps, &stmt);
}

/* 'output' NAME ['=' NAME] */
static bool parse_output(parser *ps) {
  token stmt = ps->tok, name = ps->tok;
  advance(ps);
  if (!parse_plain_name(ps, "an output", &name)) return false;
  ic_value v = IC_INVALID_VALUE;
  if (tok_is_punct(&ps->tok, '=')) {
    advance(ps);
    if (!parse_value_ref(ps, &v)) return false;
  } else if ((v = names_find(ps, &name)) == IC_INVALID_VALUE) {
    return fail_at(ps, &name, "unknown name '%.*s'", (int)name.len, name.start);
  }
  char *s = tok_strdup(&name);
  if (!s) return fail_oom(ps, &stmt);
  ic_status st = ic_graph_output(ps->g, s, v);
  free(s);
  return st == IC_OK || fail_builder(ps, &stmt);
}

/* One line: a statement or nothing, then the end of the line. */
static bool parse_line(parser *ps) {
  token first = ps->tok;
  bool ok;
  char buf[200];
  if (tok_at_line_end(&first)) {
    ok = true;
  } else if (first.kind != TOK_NAME) {
    return fail_at(ps, &first, "unknown statement: expected symbol, input, output or NAME =, found %s",
                   tok_describe(&first, buf, sizeof buf));
  } else {
    token second = peek(ps);
    if (tok_is_punct(&second, '=')) ok = parse_assignment(ps);
    else if (tok_is_punct(&second, ',')) ok = parse_multi_assignment(ps);
    else if (tok_is_word(&first, "symbol")) ok = parse_symbol(ps);
    else if (tok_is_word(&first, "input")) ok = parse_input(ps);
    else if (tok_is_word(&first, "output")) ok = parse_output(ps);
    else if (second.kind == TOK_NAME)
      return fail_at(ps, &first, "unknown statement '%.*s'", (int)first.len, first.start);
    else
      return fail_at(ps, &second, "expected '=' after '%.*s', found %s", (int)first.len, first.start,
                     tok_describe(&second, buf, sizeof buf));
  }
  if (!ok) return false;
  if (!tok_at_line_end(&ps->tok))
    return fail_at(ps, &ps->tok, "unexpected %s after the statement", tok_describe(&ps->tok, buf, sizeof buf));
  advance(ps);
  return true;
}

ic_status ic_graph_parse(const char *text, ic_graph **out) {
  if (!out) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_parse: out is NULL");
  *out = NULL;
  if (!text) return error_set(IC_ERR_INVALID_ARGUMENT, "ic_graph_parse: text is NULL");
  parser ps = {.lx = {.p = text, .line_start = text, .line = 1}};
  ic_status st = ic_graph_create(&ps.g);
  if (st != IC_OK) return st;
  advance(&ps);
  while (ps.tok.kind != TOK_END && parse_line(&ps)) {}
  free(ps.slots);
  if (ps.status != IC_OK) {
    ic_graph_destroy(ps.g);
    return ps.status;
  }
  *out = ps.g;
  return IC_OK;
}
