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

int main(int argc, char **argv) {
  Suite *s = suite_create("gpu_pointwise");
  pointwise_add_cases(s, setup, teardown);
  CHECK_CASE(s, test_semantics_table, setup, teardown);
  if (check_list_cases(argc, argv, s)) return 0;
  return gpu_run_suite(s);
}
