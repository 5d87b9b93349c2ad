/* CPU: golden tests. Every tests/golden/NAME.icg is parsed, compiled fused and eager for
 * the ref backend (whose dump holds no generated source, so it is stable across NVRTC
 * versions), and its program dump compared with NAME.fused.txt and NAME.eager.txt.
 * IC_UPDATE_GOLDEN=1 rewrites the expected files (review the diff before committing). */
#include <check.h>
#include <dirent.h>
#include <ic/ic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#define OK(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())
#define GOLDEN_DIR IC_SOURCE_DIR "/tests/golden"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void check_dump(ic_context *ctx, const ic_graph *g, const char *name, ic_compile_mode mode) {
  ic_compile_options o = {.struct_size = sizeof o, .mode = mode, .backend = "ref"};
  ic_program *p;
  OK(ic_compile(ctx, g, &o, &p));
  char *dump;
  OK(ic_program_dump(p, &dump));
  char path[512];
  snprintf(path, sizeof path, "%s/%s.%s.txt", GOLDEN_DIR, name, mode == IC_MODE_EAGER ? "eager" : "fused");
  const char *update = getenv("IC_UPDATE_GOLDEN");
  if (update && strcmp(update, "1") == 0) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(dump, f);
    fclose(f);
  }
  char *want = read_file(path);
  ck_assert_msg(want != NULL, "missing %s (run with IC_UPDATE_GOLDEN=1 to create it)", path);
  ck_assert_msg(strcmp(dump, want) == 0, "%s differs from the program dump:\n%s", path, dump);
  free(want);
  ic_string_free(dump);
  ic_program_release(p);
}

START_TEST(test_golden_dumps) {
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  ic_context *ctx;
  OK(ic_context_create(&o, &ctx));
  DIR *dir = opendir(GOLDEN_DIR);
  ck_assert_ptr_nonnull(dir);
  int files = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".icg") != 0) continue;
    char path[512], name[256];
    snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, e->d_name);
    snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
    char *text = read_file(path);
    ck_assert_ptr_nonnull(text);
    ic_graph *g;
    ck_assert_msg(ic_graph_parse(text, &g) == IC_OK, "%s: %s", path, ic_last_error());
    check_dump(ctx, g, name, IC_MODE_FUSED);
    check_dump(ctx, g, name, IC_MODE_EAGER);
    ic_graph_destroy(g);
    free(text);
    files++;
  }
  closedir(dir);
  ck_assert_int_ge(files, 3);
  ic_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("golden");
  TCase *tc = check_tcase("golden");
  tcase_add_test(tc, test_golden_dumps);
  suite_add_tcase(s, tc);
  return check_run_suite(s);
}
