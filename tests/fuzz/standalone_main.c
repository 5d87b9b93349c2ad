/* main() for a fuzz target built without libFuzzer: runs LLVMFuzzerTestOneInput once on
 * every file named on the command line, and on every file of every directory named
 * (not recursively). Exit 0 when every input ran; a broken promise aborts.
 *
 * -random=N [-seed=S] instead runs N random inputs (1 to 1024 bytes, from seed S,
 * default 1), a long run where no libFuzzer is at hand; each input is first written to
 * ./fuzz-last-input, so the one that aborts is left there. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *grown = realloc(buf, cap *= 2);
      if (!grown) free(buf);
      buf = grown;
    }
  }
  fclose(f);
  if (!buf) return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

/* xorshift64*: the random inputs' bytes */
static uint64_t next_random(uint64_t *x) {
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 0x2545f4914f6cdd1dull;
}

static int run_random(long long count, unsigned long long seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  uint8_t *buf = malloc(1024);
  if (!buf) return 1;
  for (long long k = 0; k < count; k++) {
    size_t n = 1 + next_random(&x) % 1024;
    for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(next_random(&x) >> 56);
    FILE *f = fopen("fuzz-last-input", "wb");
    if (f) {
      fwrite(buf, 1, n, f);
      fclose(f);
    }
    LLVMFuzzerTestOneInput(buf, n);
  }
  free(buf);
  remove("fuzz-last-input");
  printf("%lld random inputs run (seed %llu)\n", count, seed);
  return 0;
}

int main(int argc, char **argv) {
  int failed = 0, ran = 0;
  long long random_count = -1;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "-random=", 8) == 0) random_count = atoll(argv[i] + 8);
    if (strncmp(argv[i], "-seed=", 6) == 0) seed = strtoull(argv[i] + 6, NULL, 10);
  }
  if (random_count >= 0) return run_random(random_count, seed);
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "no such file or directory: %s\n", argv[i]);
      failed++;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      failed += run_file(argv[i]);
      ran++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
      if (de->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
      failed += run_file(path);
      ran++;
    }
    if (d) closedir(d);
  }
  printf("%d inputs run, %d unreadable\n", ran, failed);
  return failed ? 1 : 0;
}
