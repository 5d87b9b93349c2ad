/* main() for a fuzz target built without libFuzzer: runs LLVMFuzzerTestOneInput once on
 * every file named on the command line, and on every file of every directory named
 * (not recursively). Exit 0 when every input ran; a broken promise aborts. */
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

int main(int argc, char **argv) {
  int failed = 0, ran = 0;
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
