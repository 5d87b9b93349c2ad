/* CPU: the shared pointwise cases (tests/pointwise_cases.h) on the ref backend with host
 * memory: lowering, fusion, memory planning and the ref interpreter checked against plain
 * C references, fused and eager, on every machine. */
#include <stdlib.h>
#include <string.h>

#include "pointwise_cases.h"
#include "semantics_cases.h"

#include "check_main.h"

static void *mem_upload(const void *host, size_t bytes) {
  void *m = malloc(bytes ? bytes : 1);
  ck_assert_ptr_nonnull(m);
  if (bytes) memcpy(m, host, bytes);
  return m;
}

static void *mem_poisoned(size_t bytes) {
  void *m = malloc(bytes ? bytes : 1);
  ck_assert_ptr_nonnull(m);
  memset(m, 0xA5, bytes);
  return m;
}

static void *mem_download(const void *mem, size_t bytes) { return mem_upload(mem, bytes); }
static void mem_free(void *mem) { free(mem); }
static void mem_sync(void) {}

static void setup(void) {
  backend = "ref";
  ic_context_options o = {.struct_size = sizeof o, .arch = "sm_90a", .flags = IC_CONTEXT_COMPILE_ONLY};
  IC_OK_OR_FAIL(ic_context_create(&o, &ctx));
}

static void teardown(void) {
  ic_context_destroy(ctx);
  ctx = NULL;
}

int main(int argc, char **argv) {
  Suite *s = suite_create("ref_pointwise");
  pointwise_add_cases(s, setup, teardown);
  CHECK_CASE(s, test_semantics_table, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return check_run_suite(s);
}
