/* GPU: the shared pointwise cases (tests/pointwise_cases.h) on the cuda backend with
 * device memory. Exits 77 without a GPU. */
#include "gpu_harness.h"
#include "pointwise_cases.h"
#include "semantics_cases.h"

static void *mem_upload(const void *host, size_t bytes) { return gpu_upload(ctx, host, bytes); }
static void *mem_poisoned(size_t bytes) { return gpu_poisoned(ctx, bytes); }
static void *mem_download(const void *mem, size_t bytes) { return gpu_download(ctx, mem, bytes); }
static void mem_free(void *mem) { IC_OK_OR_FAIL(ic_free(ctx, mem)); }
static void mem_sync(void) { IC_OK_OR_FAIL(ic_stream_synchronize(ctx, NULL)); }

static void setup(void) {
  backend = "cuda";
  IC_OK_OR_FAIL(ic_context_create(NULL, &ctx));
}

static void teardown(void) {
  ic_context_destroy(ctx);
  ctx = NULL;
}

int main(void) {
  Suite *s = suite_create("gpu_pointwise");
  TCase *tc = tcase_create("pointwise");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 1500);
  pointwise_add_cases(tc);
  tcase_add_test(tc, test_semantics_table);
  suite_add_tcase(s, tc);
  return gpu_run_suite(s);
}
