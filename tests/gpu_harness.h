/* Shared pieces of the GPU tests: GPU detection in a child process, device buffers,
 * and the exit-77 protocol (ctest SKIP_RETURN_CODE). */
#ifndef IC_TESTS_GPU_HARNESS_H
#define IC_TESTS_GPU_HARNESS_H

#include <check.h>
#include <ic/ic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define IC_OK_OR_FAIL(call) ck_assert_msg((call) == IC_OK, "%s: %s", #call, ic_last_error())

/* True when a GPU is usable. Asked in a child so the parent never initializes CUDA
 * before deciding (and never forks with CUDA initialized). */
static inline bool gpu_present(void) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ic_context *ctx = NULL;
    /* A context is created without a GPU too (compile-only or ref): ask for the device. */
    _exit(ic_context_create(NULL, &ctx) == IC_OK && ic_context_has_device(ctx) ? 0 : 1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Runs the suite without forking (CUDA state cannot cross a fork), or exits 77. */
static inline int gpu_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  if (!gpu_present()) {
    printf("no GPU: skipping\n");
    srunner_free(sr); /* frees the suite too */
    return 77;
  }
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

/* Device copy of host bytes (NULL for 0 bytes). */
static inline void *gpu_upload(ic_context *ctx, const void *host, size_t bytes) {
  void *d = NULL;
  IC_OK_OR_FAIL(ic_malloc(ctx, bytes, &d));
  if (bytes) IC_OK_OR_FAIL(ic_memcpy_htod(ctx, d, host, bytes));
  return d;
}

/* A device buffer filled with the poison byte 0xA5 (no op result has that pattern by
 * accident often enough to hide an unwritten element). */
static inline void *gpu_poisoned(ic_context *ctx, size_t bytes) {
  void *d = NULL;
  IC_OK_OR_FAIL(ic_malloc(ctx, bytes, &d));
  if (bytes) IC_OK_OR_FAIL(ic_memset_d8(ctx, d, 0xA5, bytes));
  return d;
}

static inline void *gpu_download(ic_context *ctx, const void *dev, size_t bytes) {
  void *h = malloc(bytes ? bytes : 1);
  ck_assert_ptr_nonnull(h);
  if (bytes) IC_OK_OR_FAIL(ic_memcpy_dtoh(ctx, h, dev, bytes));
  return h;
}

#endif
