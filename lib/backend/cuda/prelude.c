/* The part of the prelude (prelude.cuh) a kernel needs: the helpers its text names, the
 * helpers those name, and so on, in the prelude's order. NVRTC parses and checks every
 * helper a source carries, and a dump is read by people: a source carries only its own.
 *
 * The prelude is cut once into units: a definition with the comment lines before it, a
 * macro, a macro's uses, a whole #if ... #endif block. A unit defines the ic_ names it
 * declares (the first ic_name( after __device__ on a line), a #define's name, and for a
 * macro's uses what the macro body declares, ic_##P pasted from the argument included;
 * it uses every ic_/IC_ name in its code. Units that define nothing (the typedefs) are
 * always kept. Overloads and templates of one name are all kept together, so the
 * compiler sees the same candidates as with the whole prelude. Out of memory is an error
 * of the kernel's code generation (the cut is tried again at the next kernel); a prelude
 * of a shape the cutter does not know is used whole. */
#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_backend.h"
#include "base/sbuf.h"
#include "base/sys.h"
#include "base/vec.h"

enum { PRELUDE_MAX_NAMES = 1024, PRELUDE_NAME_SLOTS = 2048 };

typedef struct { int32_t *items; int32_t count, cap; } id_list;

typedef struct prelude_unit {
  size_t start, len; /* in cuda_prelude */
  id_list defs, uses;
} prelude_unit;

typedef struct prelude_macro {
  int32_t name;          /* its id */
  char params[8][24];    /* its parameters' names */
  int32_t nparams;
  int32_t paste;         /* the parameter its body pastes as ic_##P, or -1 */
  id_list defs;          /* names its body declares literally */
} prelude_macro;

static struct {
  bool done, ok; /* done: cut (ok) or found uncuttable (!ok); not done: try again */
  bool oom;      /* the last cut ran out of memory */
  const char *names[PRELUDE_MAX_NAMES]; /* malloc'd, NUL-terminated */
  size_t name_len[PRELUDE_MAX_NAMES];
  int32_t nnames;
  int32_t slots[PRELUDE_NAME_SLOTS]; /* open addressing: id + 1, 0 empty */
  struct { prelude_unit *items; int32_t count, cap; } units;
  struct { prelude_macro *items; int32_t count, cap; } macros;
  id_list *definers; /* per name: the units defining it */
} P;

static pthread_mutex_t prelude_lock = PTHREAD_MUTEX_INITIALIZER;

/* Adds v to l unless it is there; false (P.oom) when out of memory. */
static bool list_add(id_list *l, int32_t v) {
  for (int32_t i = 0; i < l->count; i++)
    if (l->items[i] == v) return true;
  if (VEC_PUSH(*l, v)) return true;
  P.oom = true;
  return false;
}

static uint32_t name_hash(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* The id of name s[0..n) (-1: not a prelude name; add: make it one, -2 when full). */
static int32_t name_id(const char *s, size_t n, bool add) {
  uint32_t h = name_hash(s, n) % PRELUDE_NAME_SLOTS;
  for (uint32_t probe = 0; probe < PRELUDE_NAME_SLOTS; probe++, h = (h + 1) % PRELUDE_NAME_SLOTS) {
    int32_t slot = P.slots[h];
    if (slot == 0) {
      if (!add) return -1;
      if (P.nnames == PRELUDE_MAX_NAMES) return -2;
      char *copy = sys_malloc(n + 1);
      if (!copy) {
        P.oom = true;
        return -2;
      }
      memcpy(copy, s, n);
      copy[n] = '\0';
      P.names[P.nnames] = copy;
      P.name_len[P.nnames] = n;
      P.slots[h] = P.nnames + 1;
      return P.nnames++;
    }
    if (P.name_len[slot - 1] == n && memcmp(P.names[slot - 1], s, n) == 0) return slot - 1;
  }
  return -2;
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Whether s[i..] starts an ic_/IC_ name (a whole identifier, at least one letter after
 * the prefix). */
static size_t name_at(const char *s, size_t i, size_t end) {
  if (i > 0 && ident_char(s[i - 1])) return 0;
  if (i + 3 >= end || !((s[i] == 'i' && s[i + 1] == 'c') || (s[i] == 'I' && s[i + 1] == 'C')) || s[i + 2] != '_' ||
      !ident_char(s[i + 3]))
    return 0;
  size_t j = i + 3;
  while (j < end && ident_char(s[j])) j++;
  return j - i;
}

/* The code of line [b, e) into buf: comments and string literals blanked (in_comment
 * carries a block comment across lines). */
static void line_code(const char *s, size_t b, size_t e, bool *in_comment, char *buf) {
  bool in_string = false;
  memset(buf, ' ', e - b);
  for (size_t i = b; i < e; i++) {
    char c = s[i], next = i + 1 < e ? s[i + 1] : '\0';
    if (*in_comment) {
      if (c == '*' && next == '/') {
        *in_comment = false;
        i++;
      }
    } else if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') in_string = false;
    } else if (c == '/' && next == '*') {
      *in_comment = true;
      i++;
    } else if (c == '/' && next == '/') {
      break;
    } else if (c == '"') {
      in_string = true;
    } else {
      buf[i - b] = c;
    }
  }
}

static size_t skip_space(const char *s, size_t i, size_t n) {
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  return i;
}

/* The leading identifiers of a macro's parameters or arguments (up to 8; length 0 for an
 * argument that does not start with one) from "(a, b, (c + d))" at s[i] (the '('). */
static int32_t macro_params(const char *s, size_t i, size_t n, size_t *pb, size_t *pl) {
  int32_t count = 0;
  i++;
  while (i < n && s[i] != ')' && count < 8) {
    i = skip_space(s, i, n);
    size_t b = i;
    while (i < n && ident_char(s[i])) i++;
    pb[count] = b;
    pl[count++] = i - b;
    for (int depth = 0; i < n && (depth > 0 || (s[i] != ',' && s[i] != ')')); i++)
      depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (i < n && s[i] == ',') i++;
  }
  return count;
}

/* Definitions and uses of one code line (comments and strings blanked) of unit u; m: the
 * macro whose body the line is (its declarations are the macro's), define: the line is
 * the #define itself (no use of a macro). */
static bool scan_line(const char *code, size_t n, prelude_unit *u, prelude_macro *m, bool define) {
  size_t dev = n;
  const char *d = strstr(code, "__device__");
  if (d && (size_t)(d - code) < n) dev = (size_t)(d - code);
  bool def_taken = false;
  for (size_t i = 0; i < n; i++) {
    size_t len = name_at(code, i, n);
    if (!len) continue;
    int32_t id = name_id(code + i, len, true);
    if (id < 0) return false;
    size_t after = skip_space(code, i + len, n);
    bool call = after < n && code[after] == '(';
    if (!def_taken && i > dev && call && code[i] == 'i') {
      def_taken = true;
      if (!list_add(m ? &m->defs : &u->defs, id)) return false;
    } else if (!list_add(&u->uses, id)) {
      return false;
    }
    /* a use of a pasting macro defines ic_<argument> */
    if (call && code[i] == 'I' && !define) {
      for (int32_t k = 0; k < P.macros.count; k++) {
        const prelude_macro *pm = &P.macros.items[k];
        if (pm->name != id) continue;
        for (int32_t j = 0; j < pm->defs.count; j++)
          if (!list_add(&u->defs, pm->defs.items[j])) return false;
        if (pm->paste < 0) break;
        size_t pb[8], pl[8];
        int32_t np = macro_params(code, after, n, pb, pl);
        if (pm->paste >= np || pl[pm->paste] == 0 || pl[pm->paste] > 60) return false;
        char pasted[64] = "ic_";
        memcpy(pasted + 3, code + pb[pm->paste], pl[pm->paste]);
        int32_t pid = name_id(pasted, 3 + pl[pm->paste], true);
        if (pid < 0 || !list_add(&u->defs, pid)) return false;
        break;
      }
    }
    i += len - 1;
  }
  return true;
}

/* A #define line: the macro's name (a unit definition) and, for a function-like macro,
 * which parameter an ic_##P pastes. */
static bool scan_define(const char *code, size_t n, prelude_unit *u, prelude_macro **m) {
  size_t i = skip_space(code, 0, n);
  if (i >= n || code[i] != '#') return true;
  i = skip_space(code, i + 1, n);
  if (n - i < 6 || strncmp(code + i, "define", 6) != 0) return true;
  i = skip_space(code, i + 6, n);
  size_t b = i;
  while (i < n && ident_char(code[i])) i++;
  int32_t id = name_id(code + b, i - b, true);
  if (id < 0 || !list_add(&u->defs, id)) return false;
  if (i >= n || code[i] != '(') return true; /* an object-like macro */
  if (!VEC_PUSH(P.macros, ((prelude_macro){.name = id, .paste = -1}))) {
    P.oom = true;
    return false;
  }
  prelude_macro *pm = &P.macros.items[P.macros.count - 1];
  size_t pb[8], pl[8];
  pm->nparams = macro_params(code, i, n, pb, pl);
  for (int32_t k = 0; k < pm->nparams; k++) {
    if (pl[k] >= sizeof pm->params[k]) return false;
    memcpy(pm->params[k], code + pb[k], pl[k]);
    pm->params[k][pl[k]] = '\0';
  }
  *m = pm;
  return true;
}

/* A body line of macro m: which parameter an ic_##P pastes. */
static void scan_paste(const char *code, prelude_macro *m) {
  const char *paste = strstr(code, "ic_##");
  if (!paste) return;
  const char *arg = paste + 5;
  size_t al = 0;
  while (ident_char(arg[al])) al++;
  for (int32_t k = 0; k < m->nparams; k++)
    if (strlen(m->params[k]) == al && memcmp(m->params[k], arg, al) == 0) m->paste = k;
}

static void prelude_cut(void) {
  const char *s = cuda_prelude;
  size_t n = strlen(s), unit_start = 0;
  char *code = sys_malloc(n + 1);
  if (!code) {
    P.oom = true;
    return;
  }
  bool in_comment = false, has_code = false, ok = true;
  int32_t braces = 0, conds = 0;
  prelude_unit u = {0};
  prelude_macro *macro = NULL; /* the #define these lines belong to, continuation lines too */
  for (size_t b = 0; b < n && ok;) {
    size_t e = b;
    while (e < n && s[e] != '\n') e++;
    line_code(s, b, e, &in_comment, code);
    size_t len = e - b;
    code[len] = '\0';
    size_t first = skip_space(code, 0, len);
    bool blank = first == len;
    bool continued = len > 0 && s[e - 1] == '\\';
    if (!blank) {
      has_code = true;
      if (code[first] == '#') {
        if (strncmp(code + first + 1, "if", 2) == 0) conds++;
        else if (strncmp(code + first + 1, "endif", 5) == 0) conds--;
        ok = scan_define(code, len, &u, &macro);
      }
      for (size_t i = 0; i < len; i++) braces += code[i] == '{' ? 1 : code[i] == '}' ? -1 : 0;
      ok = ok && scan_line(code, len, &u, macro, code[first] == '#');
      if (macro) scan_paste(code, macro);
    }
    if (!continued) macro = NULL;
    b = e < n ? e + 1 : e;
    if (has_code && !in_comment && braces == 0 && conds == 0 && !continued) {
      u.start = unit_start;
      u.len = b - unit_start;
      if (!VEC_PUSH(P.units, u)) {
        P.oom = true;
        ok = false;
        break;
      }
      u = (prelude_unit){0};
      unit_start = b;
      has_code = false;
    }
    if (braces < 0 || conds < 0) ok = false;
  }
  free(code);
  /* a tail of comments or blanks stays with the last unit */
  if (ok && P.units.count > 0) P.units.items[P.units.count - 1].len = n - P.units.items[P.units.count - 1].start;
  ok = ok && !has_code && braces == 0 && conds == 0 && !in_comment && P.units.count > 0;
  free(u.defs.items);
  free(u.uses.items);
  if (ok) P.definers = sys_calloc((size_t)P.nnames + 1, sizeof *P.definers);
  if (ok && !P.definers) P.oom = true;
  ok = ok && P.definers;
  for (int32_t k = 0; ok && k < P.units.count; k++)
    for (int32_t j = 0; ok && j < P.units.items[k].defs.count; j++) ok = list_add(&P.definers[P.units.items[k].defs.items[j]], k);
  P.ok = P.done = ok;
}

/* Frees what a failed cut made, so that the next kernel tries again. */
static void prelude_reset(void) {
  for (int32_t k = 0; k < P.units.count; k++) {
    free(P.units.items[k].defs.items);
    free(P.units.items[k].uses.items);
  }
  for (int32_t k = 0; k < P.macros.count; k++) free(P.macros.items[k].defs.items);
  for (int32_t k = 0; P.definers && k < P.nnames; k++) free(P.definers[k].items);
  for (int32_t k = 0; k < P.nnames; k++) free((void *)P.names[k]);
  free(P.units.items);
  free(P.macros.items);
  free(P.definers);
  memset(&P, 0, sizeof P);
}

typedef enum prelude_state { PRELUDE_CUT, PRELUDE_WHOLE, PRELUDE_NO_MEMORY } prelude_state;

/* Cuts the prelude once per process (again after an allocation failed). */
static prelude_state prelude_ready(void) {
  pthread_mutex_lock(&prelude_lock);
  if (!P.done) {
    prelude_cut();
    if (!P.ok) {
      bool oom = P.oom;
      prelude_reset();
      P.done = !oom; /* a shape the cutter does not know stays so: the whole prelude */
    }
  }
  prelude_state st = P.ok ? PRELUDE_CUT : P.done ? PRELUDE_WHOLE : PRELUDE_NO_MEMORY;
  pthread_mutex_unlock(&prelude_lock);
  return st;
}

/* The units kernel_text needs, marked in keep[] (P.units.count); false when it cannot tell. */
static bool prelude_mark(const char *kernel_text, bool *keep) {
  bool *need = sys_calloc((size_t)P.nnames + 1, sizeof *need);
  int32_t *stack = sys_malloc(sizeof *stack * ((size_t)P.nnames + 1));
  if (!need || !stack) {
    free(need);
    free(stack);
    return false;
  }
  int32_t top = 0;
  size_t n = strlen(kernel_text);
  for (size_t i = 0; i < n; i++) {
    size_t len = name_at(kernel_text, i, n);
    if (!len) continue;
    int32_t id = name_id(kernel_text + i, len, false);
    if (id >= 0 && !need[id]) {
      need[id] = true;
      stack[top++] = id;
    }
    i += len - 1;
  }
  for (int32_t k = 0; k < P.units.count; k++) keep[k] = P.units.items[k].defs.count == 0;
  while (top > 0) {
    int32_t id = stack[--top];
    const id_list *units = &P.definers[id];
    for (int32_t j = 0; j < units->count; j++) {
      int32_t k = units->items[j];
      if (keep[k]) continue;
      keep[k] = true;
      for (int32_t x = 0; x < P.units.items[k].uses.count; x++) {
        int32_t used = P.units.items[k].uses.items[x];
        if (!need[used]) {
          need[used] = true;
          stack[top++] = used;
        }
      }
    }
  }
  free(need);
  free(stack);
  return true;
}

void cuda_prelude_needed(const char *kernel_text, sbuf *out) {
  prelude_state st = prelude_ready();
  if (st == PRELUDE_WHOLE) {
    sbuf_puts(out, cuda_prelude);
    return;
  }
  /* out of memory is the caller's error, not a different source (and so another key) */
  bool *keep = st == PRELUDE_CUT ? sys_malloc(sizeof *keep * (size_t)P.units.count) : NULL;
  if (!keep || !prelude_mark(kernel_text, keep)) {
    free(keep);
    out->oom = true;
    return;
  }
  for (int32_t k = 0; k < P.units.count; k++)
    if (keep[k]) sbuf_printf(out, "%.*s", (int)P.units.items[k].len, cuda_prelude + P.units.items[k].start);
  free(keep);
}

char *cuda_source_assemble(const char *entry, sbuf *kernel_text) {
  sbuf src = {0};
  sbuf_printf(&src, "/* %s: generated by ic %s */\n", entry, IC_VERSION_STRING);
  cuda_prelude_needed(kernel_text->data ? kernel_text->data : "", &src);
  sbuf_puts(&src, CUDA_KERNEL_MARK);
  if (kernel_text->data) sbuf_puts(&src, kernel_text->data);
  bool oom = kernel_text->oom || src.oom;
  sbuf_free(kernel_text);
  if (oom) {
    sbuf_free(&src);
    return NULL;
  }
  return sbuf_take(&src);
}
