/* The disk cache's entry reader (lib/cache/disk.h): any file at an entry's path is a miss
 * or a hit whose payload is exactly the one the file holds, never a crash or an
 * over-read. The first byte steers: bit 0 writes a right magic, schema and key over the
 * header, bit 1 a right checksum at the end, so the fuzzer reaches the length and payload
 * checks behind them. */
#include <ftw.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/bytes.h"
#include "cache/disk.h"
#include "fuzz.h"

/* The entry layout of disk.h. */
enum { OFF_SCHEMA = 8, OFF_KEY = 12, OFF_LENGTH = 28, HEADER = 36 };

static char dir[64];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_dir(void) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static disk_cache *c;
  if (!c) {
    snprintf(dir, sizeof dir, "/tmp/ic-fuzz-disk-XXXXXX");
    if (!mkdtemp(dir)) abort();
    atexit(remove_dir);
    unsetenv("IC_CACHE"); /* IC_CACHE=0 would turn even an explicit directory off */
    c = disk_cache_open(dir, 0, NULL);
    if (!c || !disk_cache_enabled(c)) abort();
  }
  if (size == 0) return 0;
  uint8_t steer = data[0];
  size_t n = size - 1;
  uint8_t *file = malloc(n ? n : 1);
  if (!file) return 0;
  memcpy(file, data + 1, n);
  const key128 key = {0x0123456789abcdefull, 0xfedcba9876543210ull};
  if ((steer & 1) && n >= HEADER) {
    memcpy(file, "ICKCACHE", 8);
    bytes_store_u32(file + OFF_SCHEMA, DISK_CACHE_SCHEMA);
    bytes_store_u64(file + OFF_KEY, key.lo);
    bytes_store_u64(file + OFF_KEY + 8, key.hi);
  }
  if ((steer & 2) && n >= 8) bytes_store_u64(file + n - 8, XXH3_64bits(file, n - 8));
  char path[512];
  disk_cache_entry_path(c, key, path, sizeof path);
  char sub[512];
  snprintf(sub, sizeof sub, "%.*s", (int)(strrchr(path, '/') - path), path);
  (void)mkdir(sub, 0700);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(file, 1, n, f) != n) abort();
  fclose(f);

  void *payload = NULL;
  size_t got = 0;
  if (disk_cache_get(c, key, &payload, &got)) {
    FUZZ_REQUIRE(n >= HEADER + 8 && got == n - HEADER - 8, "a hit of %zu bytes from a %zu-byte file", got, n);
    FUZZ_REQUIRE(bytes_load_u64(file + OFF_LENGTH) == got, "the payload length disagrees with the header");
    FUZZ_REQUIRE(memcmp(payload, file + HEADER, got) == 0, "the payload differs from the file's");
    free(payload);
  }
  free(file);
  unlink(path);
  return 0;
}
