/* lib/cache/disk: the on-disk kernel cache. Round trips across handles and processes,
 * corrupted and foreign entries, directory resolution and checks, the size cap with LRU
 * eviction, and many processes and threads sharing one directory. Every test works in
 * its own fresh directory under /tmp. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "check_main.h"
#include "cache/disk.h"

/* The entry layout disk.h specifies, for tests that forge entries. */
enum { OFF_SCHEMA = 8, OFF_KEY = 12, OFF_LENGTH = 28, HEADER = 36, OVERHEAD = 44 };

static const char *const ENV_VARS[] = {"IC_CACHE", "IC_CACHE_DIR", "IC_CACHE_MAX_BYTES",
                                       "XDG_CACHE_HOME"};

/* ---------------------------------------------------------------- log counting */

static struct {
  pthread_mutex_t mu;
  int warn, info, other;
  char last_warn[1024];
} logs = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void count_log(void *user, ic_log_level level, const char *message) {
  (void)user;
  pthread_mutex_lock(&logs.mu);
  if (level == IC_LOG_WARN) {
    logs.warn++;
    snprintf(logs.last_warn, sizeof logs.last_warn, "%s", message);
  } else if (level == IC_LOG_INFO) {
    logs.info++;
  } else if (level != IC_LOG_DEBUG) {
    logs.other++;
  }
  pthread_mutex_unlock(&logs.mu);
}

static const logger counting_logger = {count_log, NULL, IC_LOG_DEBUG};

static void reset_logs(void) {
  logs.warn = logs.info = logs.other = 0;
  logs.last_warn[0] = '\0';
}

static int warnings(void) {
  pthread_mutex_lock(&logs.mu);
  int n = logs.warn;
  pthread_mutex_unlock(&logs.mu);
  return n;
}

static disk_cache *open_cache(const char *dir, uint64_t max_bytes) {
  disk_cache *c = disk_cache_open(dir, max_bytes, &counting_logger);
  ck_assert_ptr_nonnull(c);
  return c;
}

/* ---------------------------------------------------------------- fixture */

static char tmp_root[64];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_tree(const char *path) { nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static void clear_env(void) {
  for (size_t i = 0; i < sizeof ENV_VARS / sizeof ENV_VARS[0]; i++) unsetenv(ENV_VARS[i]);
}

static void setup(void) {
  clear_env();
  umask(022);
  reset_logs();
  snprintf(tmp_root, sizeof tmp_root, "/tmp/ic-disk-cache-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmp_root));
}

static void teardown(void) {
  remove_tree(tmp_root);
  clear_env();
}

/* tmp_root/name */
static void tmp_path(char *out, const char *name) {
  snprintf(out, PATH_MAX, "%s/%s", tmp_root, name);
}

/* ---------------------------------------------------------------- keys and payloads */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static key128 key_of(uint64_t i) {
  uint64_t s = i * 2654435761u + 17;
  key128 k;
  k.lo = splitmix64(&s);
  k.hi = splitmix64(&s);
  return k;
}

/* Deterministic bytes for key i: `size` of them, or (size 0) 1..64 KiB of them. */
static unsigned char *payload_of(uint64_t i, size_t size, size_t *n) {
  uint64_t s = i ^ 0x5eed5eed5eedull;
  if (size == 0) size = 1024 + (size_t)(splitmix64(&s) % (63 * 1024 + 1));
  unsigned char *p = malloc(size);
  ck_assert_ptr_nonnull(p);
  for (size_t j = 0; j < size; j++) p[j] = (unsigned char)(splitmix64(&s) >> 56);
  *n = size;
  return p;
}

/* Whether the cache holds exactly these bytes under key. */
static bool get_equals(disk_cache *c, key128 key, const void *want, size_t want_n) {
  void *p = NULL;
  size_t n = 0;
  if (!disk_cache_get(c, key, &p, &n)) return false;
  /* want is NULL for an empty payload: memcmp must not see it, even for n == 0. */
  bool same = p && n == want_n && (n == 0 || (want && memcmp(p, want, n) == 0));
  free(p);
  return same;
}

static bool is_miss(disk_cache *c, key128 key) {
  void *p = (void *)1;
  size_t n = 1;
  bool hit = disk_cache_get(c, key, &p, &n);
  if (hit) free(p);
  return !hit && p == NULL && n == 0;
}

/* ---------------------------------------------------------------- files */

static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)len + 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return buf;
}

static void write_file(const char *path, const void *data, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_msg(fd >= 0, "create %s: %s", path, strerror(errno));
  ck_assert(n == 0 || write(fd, data, n) == (ssize_t)n);
  close(fd);
}

static bool exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static unsigned mode_of(const char *path) {
  struct stat st;
  ck_assert_msg(stat(path, &st) == 0, "stat %s: %s", path, strerror(errno));
  return (unsigned)(st.st_mode & 07777);
}

static void set_mtime(const char *path, time_t when) {
  struct timespec times[2] = {{when, 0}, {when, 0}};
  ck_assert_msg(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0, "utimensat %s: %s",
                path, strerror(errno));
}

static void entry_path_of(disk_cache *c, uint64_t i, char *path) {
  disk_cache_entry_path(c, key_of(i), path, PATH_MAX);
}

/* What a cache directory holds: entries (count, bytes) and temp files. */
static struct {
  int entries, temps;
  uint64_t bytes;
} census;

static int census_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  if (flag != FTW_F) return 0;
  const char *name = path + ftw->base;
  size_t len = strlen(name);
  if (strncmp(name, ".tmp.", 5) == 0) {
    census.temps++;
  } else if (len > 4 && strcmp(name + len - 4, ".ick") == 0) {
    census.entries++;
    census.bytes += (uint64_t)st->st_size;
  }
  return 0;
}

static void take_census(const char *dir) {
  memset(&census, 0, sizeof census);
  nftw(dir, census_one, 16, FTW_PHYS);
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- round trips */

START_TEST(test_round_trip) {
  char dir[PATH_MAX];
  tmp_path(dir, "cache");
  disk_cache *c = open_cache(dir, 0);
  ck_assert(disk_cache_enabled(c));
  ck_assert_str_eq(disk_cache_dir(c), dir);
  ck_assert_uint_eq(mode_of(dir), 0700);

  ck_assert(is_miss(c, key_of(1)));
  size_t n1, n1b;
  unsigned char *p1 = payload_of(1, 1000, &n1), *p1b = payload_of(101, 5000, &n1b);
  disk_cache_put(c, key_of(1), p1, n1);
  ck_assert(get_equals(c, key_of(1), p1, n1));

  /* The entry's name, place and modes. */
  char path[PATH_MAX], want[PATH_MAX + 64];
  entry_path_of(c, 1, path);
  key128 k1 = key_of(1);
  char hex[33];
  snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)k1.hi,
           (unsigned long long)k1.lo);
  snprintf(want, sizeof want, "%s/%.2s/%s.ick", dir, hex, hex);
  ck_assert_str_eq(path, want);
  ck_assert_uint_eq(mode_of(path), 0600);
  *strrchr(path, '/') = '\0';
  ck_assert_uint_eq(mode_of(path), 0700);
  entry_path_of(c, 1, path);
  size_t file_n;
  free(read_file(path, &file_n));
  ck_assert_uint_eq(file_n, n1 + OVERHEAD);

  /* A zero-length payload is an entry like any other. */
  disk_cache_put(c, key_of(2), NULL, 0);
  void *p = NULL;
  size_t n = 99;
  ck_assert(disk_cache_get(c, key_of(2), &p, &n));
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(n, 0);
  free(p);

  /* A put replaces. */
  disk_cache_put(c, key_of(1), p1b, n1b);
  ck_assert(get_equals(c, key_of(1), p1b, n1b));

  /* A second handle (a second context) on the same directory. */
  disk_cache *c2 = open_cache(dir, 0);
  ck_assert(get_equals(c2, key_of(1), p1b, n1b));
  ck_assert(get_equals(c2, key_of(2), NULL, 0));
  disk_cache_close(c2);

  /* Another process reads ours and writes one we read. */
  size_t n3;
  unsigned char *p3 = payload_of(3, 0, &n3);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    disk_cache *cc = disk_cache_open(dir, 0, NULL);
    int rc = 0;
    if (!cc) rc = 10;
    else if (!get_equals(cc, key_of(1), p1b, n1b)) rc = 11;
    else if (!get_equals(cc, key_of(2), NULL, 0)) rc = 12;
    if (cc) disk_cache_put(cc, key_of(3), p3, n3);
    disk_cache_close(cc);
    _exit(rc);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  ck_assert(get_equals(c, key_of(3), p3, n3));

  ck_assert_int_eq(warnings(), 0);
  take_census(dir);
  ck_assert_int_eq(census.entries, 3);
  ck_assert_int_eq(census.temps, 0);
  disk_cache_close(c);
  free(p1);
  free(p1b);
  free(p3);
}
END_TEST

START_TEST(test_null_and_disabled_handles) {
  disk_cache_close(NULL);
  ck_assert(!disk_cache_enabled(NULL));
  ck_assert_str_eq(disk_cache_dir(NULL), "");
  disk_cache_put(NULL, key_of(1), "x", 1);
  void *p = (void *)1;
  size_t n = 1;
  ck_assert(!disk_cache_get(NULL, key_of(1), &p, &n));
  ck_assert_ptr_null(p);
  char path[PATH_MAX] = "junk";
  disk_cache_entry_path(NULL, key_of(1), path, sizeof path);
  ck_assert_str_eq(path, "");
}
END_TEST

/* ---------------------------------------------------------------- corrupted entries */

/* The checksum of a forged entry, made valid again after an edit. */
static void reseal(unsigned char *buf, size_t n) {
  uint64_t h = XXH3_64bits(buf, n - 8);
  for (int i = 0; i < 8; i++) buf[n - 8 + i] = (unsigned char)(h >> (8 * i));
}

/* Puts `bytes` where key i's entry lives, checks that it is a miss with one warning
 * (whose text has `reason`), then that a put repairs it. */
static void check_corrupt(disk_cache *c, uint64_t i, const void *bytes, size_t n,
                          const char *what, const char *reason, const void *good,
                          size_t good_n) {
  char path[PATH_MAX];
  entry_path_of(c, i, path);
  unlink(path);
  write_file(path, bytes, n);
  int before = warnings();
  ck_assert_msg(is_miss(c, key_of(i)), "%s: not a miss", what);
  ck_assert_msg(warnings() == before + 1, "%s: %d warnings, want 1", what, warnings() - before);
  ck_assert_msg(strstr(logs.last_warn, "corrupted entry") && strstr(logs.last_warn, path),
                "%s: warning \"%s\"", what, logs.last_warn);
  if (reason)
    ck_assert_msg(strstr(logs.last_warn, reason), "%s: warning \"%s\", want reason \"%s\"", what,
                  logs.last_warn, reason);
  disk_cache_put(c, key_of(i), good, good_n);
  ck_assert_msg(get_equals(c, key_of(i), good, good_n), "%s: not repaired", what);
  ck_assert_int_eq(warnings(), before + 1);
}

START_TEST(test_corrupted_entries) {
  char dir[PATH_MAX], path[PATH_MAX], what[64];
  tmp_path(dir, "cache");
  disk_cache *c = open_cache(dir, 0);
  size_t pn;
  unsigned char *payload = payload_of(7, 300, &pn);
  disk_cache_put(c, key_of(7), payload, pn);
  entry_path_of(c, 7, path);
  size_t n;
  unsigned char *orig = read_file(path, &n);
  ck_assert_uint_eq(n, pn + OVERHEAD);
  unsigned char *buf = malloc(n + 1);

  /* Truncated anywhere, down to nothing. */
  const size_t cuts[] = {0, 1, 7, 8, 12, 28, 35, 36, 43, 44, 100, n - 8, n - 1};
  for (size_t j = 0; j < sizeof cuts / sizeof cuts[0]; j++) {
    snprintf(what, sizeof what, "truncated to %zu", cuts[j]);
    const char *reason = cuts[j] == 0 ? "empty file" : cuts[j] < OVERHEAD ? "truncated" : NULL;
    check_corrupt(c, 7, orig, cuts[j], what, reason, payload, pn);
  }
  /* One bit flipped in the magic, schema, key, length, payload, checksum. */
  const size_t flips[] = {0, 7, 8, 11, 12, 20, 27, 28, 35, 36, 150, n - 9, n - 8, n - 1};
  for (size_t j = 0; j < sizeof flips / sizeof flips[0]; j++) {
    memcpy(buf, orig, n);
    buf[flips[j]] ^= (unsigned char)(1u << (flips[j] % 8));
    snprintf(what, sizeof what, "bit flipped at %zu", flips[j]);
    check_corrupt(c, 7, buf, n, what, NULL, payload, pn);
  }
  /* One byte too many. */
  memcpy(buf, orig, n);
  buf[n] = 0;
  check_corrupt(c, 7, buf, n + 1, "trailing byte", NULL, payload, pn);

  /* Consistent checksums, wrong contents. */
  memcpy(buf, orig, n);
  memcpy(buf, "ICKCACHX", 8);
  reseal(buf, n);
  check_corrupt(c, 7, buf, n, "foreign magic", "bad magic", payload, pn);
  memcpy(buf, orig, n);
  buf[OFF_SCHEMA] = DISK_CACHE_SCHEMA + 1; /* a newer ic's entry */
  reseal(buf, n);
  char newer[32];
  snprintf(newer, sizeof newer, "schema version %d", DISK_CACHE_SCHEMA + 1);
  check_corrupt(c, 7, buf, n, "newer schema", newer, payload, pn);
  memcpy(buf, orig, n);
  buf[OFF_SCHEMA] = 0;
  reseal(buf, n);
  check_corrupt(c, 7, buf, n, "schema 0", "schema version 0", payload, pn);
  memcpy(buf, orig, n);
  buf[OFF_LENGTH] ^= 1;
  reseal(buf, n);
  check_corrupt(c, 7, buf, n, "length", "length mismatch", payload, pn);

  /* A valid entry under another key's name. */
  size_t qn;
  unsigned char *other = payload_of(8, 200, &qn);
  disk_cache_put(c, key_of(8), other, qn);
  check_corrupt(c, 8, orig, n, "copied entry", "key mismatch", other, qn);
  ck_assert(get_equals(c, key_of(7), payload, pn));

  /* Things that are not plain files of ours. */
  int before = warnings();
  unlink(path);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  ck_assert(is_miss(c, key_of(7))); /* and does not hang */
  ck_assert_int_eq(warnings(), before + 1);
  ck_assert_ptr_nonnull(strstr(logs.last_warn, "not a regular file"));
  disk_cache_put(c, key_of(7), payload, pn);
  ck_assert(get_equals(c, key_of(7), payload, pn));

  char elsewhere[PATH_MAX];
  tmp_path(elsewhere, "elsewhere.ick");
  write_file(elsewhere, orig, n);
  unlink(path);
  ck_assert_int_eq(symlink(elsewhere, path), 0);
  ck_assert(is_miss(c, key_of(7)));
  ck_assert_int_eq(warnings(), before + 2);
  ck_assert_ptr_nonnull(strstr(logs.last_warn, "symbolic link"));
  disk_cache_put(c, key_of(7), payload, pn);
  ck_assert(get_equals(c, key_of(7), payload, pn));

  ck_assert_int_eq(chmod(path, 0620), 0);
  ck_assert(is_miss(c, key_of(7)));
  ck_assert_int_eq(warnings(), before + 3);
  disk_cache_put(c, key_of(7), payload, pn);
  ck_assert(get_equals(c, key_of(7), payload, pn));
  ck_assert_uint_eq(mode_of(path), 0600);

  /* Temp files are ignored; stale ones are cleaned up by the next directory scan. */
  char fresh[PATH_MAX + 32], stale[PATH_MAX + 32];
  *strrchr(path, '/') = '\0';
  snprintf(fresh, sizeof fresh, "%s/.tmp.1.2.3.deadbeef", path);
  snprintf(stale, sizeof stale, "%s/.tmp.4.5.6.deadbeef", path);
  write_file(fresh, "garbage", 7);
  write_file(stale, orig, n / 2);
  set_mtime(stale, time(NULL) - 7200);
  before = warnings();
  ck_assert(get_equals(c, key_of(7), payload, pn));
  disk_cache *c2 = open_cache(dir, 0);
  disk_cache_put(c2, key_of(9), payload, pn); /* a new handle's first put scans */
  ck_assert(exists(fresh));
  ck_assert(!exists(stale));
  ck_assert(get_equals(c2, key_of(7), payload, pn));
  ck_assert_int_eq(warnings(), before);
  disk_cache_close(c2);

  disk_cache_close(c);
  free(buf);
  free(orig);
  free(payload);
  free(other);
}
END_TEST

START_TEST(test_other_users_entry) {
  if (geteuid() != 0) {
    fprintf(stderr, "test_other_users_entry: skipped (needs root to chown)\n");
    return;
  }
  char dir[PATH_MAX], path[PATH_MAX];
  tmp_path(dir, "cache");
  disk_cache *c = open_cache(dir, 0);
  size_t pn;
  unsigned char *payload = payload_of(5, 777, &pn);
  disk_cache_put(c, key_of(5), payload, pn);
  entry_path_of(c, 5, path);
  ck_assert_int_eq(chown(path, 65534, 65534), 0);
  ck_assert(is_miss(c, key_of(5)));
  ck_assert_int_eq(warnings(), 1);
  ck_assert_ptr_nonnull(strstr(logs.last_warn, "another user"));
  disk_cache_put(c, key_of(5), payload, pn);
  ck_assert(get_equals(c, key_of(5), payload, pn));
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_uint_eq(st.st_uid, 0);
  disk_cache_close(c);
  free(payload);
}
END_TEST

/* ---------------------------------------------------------------- directories */

/* Opens dir and checks it is disabled with exactly `warns` warnings (text has `text`). */
static void check_disabled(const char *dir, int warns, const char *text) {
  reset_logs();
  disk_cache *c = open_cache(dir, 0);
  ck_assert_msg(!disk_cache_enabled(c), "%s: enabled", dir);
  ck_assert_str_eq(disk_cache_dir(c), "");
  ck_assert_msg(warnings() == warns, "%s: %d warnings, want %d", dir, warnings(), warns);
  if (text)
    ck_assert_msg(strstr(logs.last_warn, text), "%s: warning \"%s\", want \"%s\"", dir,
                  logs.last_warn, text);
  /* A disabled cache does nothing, quietly. */
  disk_cache_put(c, key_of(1), "abc", 3);
  ck_assert(is_miss(c, key_of(1)));
  char path[PATH_MAX] = "junk";
  disk_cache_entry_path(c, key_of(1), path, sizeof path);
  ck_assert_str_eq(path, "");
  ck_assert_int_eq(warnings(), warns);
  disk_cache_close(c);
}

START_TEST(test_disabled_by_env) {
  char dir[PATH_MAX];
  tmp_path(dir, "cache");
  setenv("IC_CACHE", "0", 1);
  check_disabled(dir, 0, NULL);
  ck_assert_int_ge(logs.info, 1);
  ck_assert(!exists(dir));
  setenv("IC_CACHE_DIR", dir, 1);
  check_disabled(NULL, 0, NULL);
  ck_assert(!exists(dir));
  setenv("IC_CACHE", "1", 1);
  disk_cache *c = open_cache(NULL, 0);
  ck_assert(disk_cache_enabled(c));
  disk_cache_close(c);
  ck_assert_int_eq(warnings(), 0);
}
END_TEST

START_TEST(test_unusable_directories) {
  char file[PATH_MAX], dir[PATH_MAX];
  /* Under a regular file: cannot be created. */
  tmp_path(file, "file");
  write_file(file, "x", 1);
  tmp_path(dir, "file/sub");
  check_disabled(dir, 1, "cannot create");
  tmp_path(dir, "file/sub/deeper");
  check_disabled(dir, 1, "cannot create");
  check_disabled(file, 1, "not a directory");

  /* Writable by others or by the group. */
  tmp_path(dir, "open");
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  ck_assert_int_eq(chmod(dir, 0777), 0);
  check_disabled(dir, 1, "writable by group or others");
  ck_assert_int_eq(chmod(dir, 0770), 0);
  check_disabled(dir, 1, "writable by group or others");
  ck_assert_int_eq(chmod(dir, 0755), 0); /* readable by others is fine */
  disk_cache *c = open_cache(dir, 0);
  ck_assert(disk_cache_enabled(c));
  disk_cache_close(c);

  /* Not ours (root) or not writable (others: root ignores permission bits). */
  tmp_path(dir, "theirs");
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  if (geteuid() == 0) {
    ck_assert_int_eq(chown(dir, 65534, 65534), 0);
    check_disabled(dir, 1, "another user");
  } else {
    ck_assert_int_eq(chmod(dir, 0500), 0);
    check_disabled(dir, 1, "not writable");
    chmod(dir, 0700);
  }
}
END_TEST

START_TEST(test_directory_resolution) {
  char dir[PATH_MAX], want[PATH_MAX];
  /* Created with its missing parents, all 0700. */
  tmp_path(dir, "a/b/c/");
  disk_cache *c = open_cache(dir, 0);
  tmp_path(want, "a/b/c");
  ck_assert_str_eq(disk_cache_dir(c), want);
  disk_cache_close(c);
  ck_assert_uint_eq(mode_of(want), 0700);
  tmp_path(want, "a/b");
  ck_assert_uint_eq(mode_of(want), 0700);
  tmp_path(want, "a");
  ck_assert_uint_eq(mode_of(want), 0700);

  /* IC_CACHE_DIR, unless the caller names a directory. */
  tmp_path(dir, "env");
  setenv("IC_CACHE_DIR", dir, 1);
  c = open_cache(NULL, 0);
  ck_assert_str_eq(disk_cache_dir(c), dir);
  disk_cache_close(c);
  tmp_path(dir, "explicit");
  c = open_cache(dir, 0);
  ck_assert_str_eq(disk_cache_dir(c), dir);
  disk_cache_close(c);
  unsetenv("IC_CACHE_DIR");

  /* $XDG_CACHE_HOME/ic, when absolute; else ~/.cache/ic. */
  const char *old_home = getenv("HOME");
  char *home = old_home ? strdup(old_home) : NULL;
  tmp_path(dir, "home");
  setenv("HOME", dir, 1);
  tmp_path(dir, "xdg");
  setenv("XDG_CACHE_HOME", dir, 1);
  c = open_cache(NULL, 0);
  tmp_path(want, "xdg/ic");
  ck_assert_str_eq(disk_cache_dir(c), want);
  disk_cache_close(c);
  setenv("XDG_CACHE_HOME", "relative/cache", 1);
  c = open_cache(NULL, 0);
  tmp_path(want, "home/.cache/ic");
  ck_assert_str_eq(disk_cache_dir(c), want);
  ck_assert_uint_eq(mode_of(want), 0700);
  disk_cache_close(c);
  if (home) setenv("HOME", home, 1);
  else unsetenv("HOME");
  free(home);

  /* A relative directory is made absolute, so a later chdir does not move it. */
  char cwd[PATH_MAX];
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  ck_assert_int_eq(chdir(tmp_root), 0);
  c = open_cache("rel/dir", 0);
  ck_assert_int_eq(chdir(cwd), 0);
  char *real_root = realpath(tmp_root, NULL);
  snprintf(want, sizeof want, "%s/rel/dir", real_root);
  free(real_root);
  ck_assert_str_eq(disk_cache_dir(c), want);
  disk_cache_put(c, key_of(1), "abc", 3);
  ck_assert(get_equals(c, key_of(1), "abc", 3));
  disk_cache_close(c);
  ck_assert_int_eq(warnings(), 0);
}
END_TEST

START_TEST(test_max_bytes_env) {
  char dir[PATH_MAX];
  tmp_path(dir, "cache");
  const char *bad[] = {"12abc", "-5", "lots", "1e9", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("IC_CACHE_MAX_BYTES", bad[i], 1);
    reset_logs();
    disk_cache *c = open_cache(dir, 0);
    ck_assert(disk_cache_enabled(c));
    ck_assert_msg(warnings() == 1 && strstr(logs.last_warn, "IC_CACHE_MAX_BYTES"),
                  "%s: %d warnings", bad[i], warnings());
    disk_cache_close(c);
  }
  const char *good[] = {"", "0", "1000000", " 4096 "};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    setenv("IC_CACHE_MAX_BYTES", good[i], 1);
    reset_logs();
    disk_cache *c = open_cache(dir, 0);
    ck_assert(disk_cache_enabled(c));
    ck_assert_msg(warnings() == 0, "\"%s\": %d warnings", good[i], warnings());
    disk_cache_close(c);
  }
}
END_TEST

/* ---------------------------------------------------------------- size cap */

enum { CAP_PAYLOAD = 1000, CAP_ENTRY = CAP_PAYLOAD + OVERHEAD, CAP_BYTES = 10 * CAP_ENTRY + 500 };

START_TEST(test_size_cap_evicts_least_recently_used) {
  char dir[PATH_MAX], path[PATH_MAX], cap[32];
  tmp_path(dir, "cache");
  snprintf(cap, sizeof cap, "%d", CAP_BYTES);
  setenv("IC_CACHE_MAX_BYTES", cap, 1);
  disk_cache *c = open_cache(dir, UINT64_C(1) << 40); /* the environment wins */
  time_t base = time(NULL) - 100000;
  int prev_entries = 0;
  for (uint64_t i = 0; i < 50; i++) {
    size_t n;
    unsigned char *p = payload_of(i, CAP_PAYLOAD, &n);
    disk_cache_put(c, key_of(i), p, n);
    free(p);
    /* Entries age in put order, one second apart, all long ago. */
    entry_path_of(c, i, path);
    set_mtime(path, base + (time_t)i);
    take_census(dir);
    ck_assert_msg(census.bytes <= CAP_BYTES, "after put %d: %llu bytes", (int)i,
                  (unsigned long long)census.bytes);
    if (census.entries < prev_entries + 1)
      ck_assert_msg(census.bytes <= CAP_BYTES - CAP_BYTES / 10,
                    "eviction stopped at %llu bytes", (unsigned long long)census.bytes);
    prev_entries = census.entries;
    /* Use 0, 1 and 2 once the cache is full: a hit makes them the most recent. */
    if (i == 9)
      for (uint64_t j = 0; j < 3; j++) {
        size_t m;
        unsigned char *q = payload_of(j, CAP_PAYLOAD, &m);
        ck_assert(get_equals(c, key_of(j), q, m));
        free(q);
      }
  }
  take_census(dir);
  ck_assert_int_le(census.entries, 10);
  ck_assert_int_ge(census.entries, 8);
  for (uint64_t i = 0; i < 50; i++) {
    entry_path_of(c, i, path);
    bool want = i < 3 || (int)i >= 50 - (census.entries - 3);
    ck_assert_msg(exists(path) == want, "entry %d: present %d, want %d", (int)i, exists(path),
                  want);
  }
  ck_assert_int_eq(warnings(), 0);
  disk_cache_close(c);
}
END_TEST

START_TEST(test_size_cap_other_cases) {
  char dir[PATH_MAX], cap[32];
  tmp_path(dir, "cache");
  /* A directory filled past the cap by someone else: a new handle's first put (which
   * measures the directory) brings it back under. */
  disk_cache *big = open_cache(dir, 0);
  for (uint64_t i = 0; i < 30; i++) {
    size_t n;
    unsigned char *p = payload_of(i, CAP_PAYLOAD, &n);
    disk_cache_put(big, key_of(i), p, n);
    free(p);
  }
  disk_cache_close(big);
  take_census(dir);
  ck_assert_int_eq(census.entries, 30);
  snprintf(cap, sizeof cap, "%d", CAP_BYTES);
  setenv("IC_CACHE_MAX_BYTES", cap, 1);
  disk_cache *c = open_cache(dir, 0);
  size_t n;
  unsigned char *p = payload_of(100, CAP_PAYLOAD, &n);
  disk_cache_put(c, key_of(100), p, n);
  take_census(dir);
  ck_assert_uint_le(census.bytes, CAP_BYTES - CAP_BYTES / 10);
  ck_assert(get_equals(c, key_of(100), p, n));
  free(p);

  /* An entry the cap cannot hold is not stored (and evicts nothing). */
  int entries = census.entries;
  p = payload_of(101, CAP_BYTES, &n);
  disk_cache_put(c, key_of(101), p, n);
  ck_assert(is_miss(c, key_of(101)));
  take_census(dir);
  ck_assert_int_eq(census.entries, entries);
  free(p);
  disk_cache_close(c);

  /* Without the environment, the caller's cap. */
  unsetenv("IC_CACHE_MAX_BYTES");
  tmp_path(dir, "cache2");
  c = open_cache(dir, CAP_BYTES);
  for (uint64_t i = 0; i < 20; i++) {
    p = payload_of(i, CAP_PAYLOAD, &n);
    disk_cache_put(c, key_of(i), p, n);
    free(p);
    take_census(dir);
    ck_assert_uint_le(census.bytes, CAP_BYTES);
  }
  ck_assert_int_lt(census.entries, 11);
  disk_cache_close(c);
  ck_assert_int_eq(warnings(), 0);
}
END_TEST

START_TEST(test_size_cap_two_writers) {
  /* Two handles stand for two processes: each sees only its own puts between scans, and
   * rescans after every eighth of the cap it writes, so the directory stays within about
   * an eighth of the cap (plus an entry) of it. */
  char dir[PATH_MAX];
  tmp_path(dir, "cache");
  disk_cache *a = open_cache(dir, CAP_BYTES), *b = open_cache(dir, CAP_BYTES);
  for (uint64_t i = 0; i < 60; i++) {
    size_t n;
    unsigned char *p = payload_of(i, CAP_PAYLOAD, &n);
    disk_cache_put(i % 2 ? a : b, key_of(i), p, n);
    free(p);
    take_census(dir);
    ck_assert_msg(census.bytes <= CAP_BYTES + CAP_BYTES / 8 + CAP_ENTRY, "after put %d: %llu",
                  (int)i, (unsigned long long)census.bytes);
  }
  ck_assert_int_eq(warnings(), 0);
  disk_cache_close(a);
  disk_cache_close(b);
}
END_TEST

/* ---------------------------------------------------------------- concurrency */

enum { KEY_SPACE = 300, KEYS_PER_WORKER = 200, PROCS = 8, THREADS = 16 };

/* Worker w's keys: 200 of 0..299 (overlapping other workers'), in a shuffled order. */
static void worker_keys(int w, uint64_t keys[KEYS_PER_WORKER]) {
  for (int j = 0; j < KEYS_PER_WORKER; j++) keys[j] = (uint64_t)((w * 37 + j) % KEY_SPACE);
  uint64_t s = (uint64_t)w + 1000;
  for (int j = KEYS_PER_WORKER - 1; j > 0; j--) {
    int r = (int)(splitmix64(&s) % (uint64_t)(j + 1));
    uint64_t t = keys[j];
    keys[j] = keys[r];
    keys[r] = t;
  }
}

/* Get-or-put over worker w's keys, twice. Every hit must be the exact payload; with
 * `may_evict`, a get right after a put may miss. 0 on success, else what went wrong. */
static int run_worker(disk_cache *c, int w, bool may_evict) {
  uint64_t keys[KEYS_PER_WORKER];
  worker_keys(w, keys);
  for (int pass = 0; pass < 2; pass++)
    for (int j = 0; j < KEYS_PER_WORKER; j++) {
      size_t n, got_n = 0;
      unsigned char *want = payload_of(keys[j], 0, &n);
      void *got = NULL;
      int rc = 0;
      if (disk_cache_get(c, key_of(keys[j]), &got, &got_n)) {
        if (got_n != n || memcmp(got, want, n) != 0) rc = 1; /* wrong bytes */
      } else {
        disk_cache_put(c, key_of(keys[j]), want, n);
        free(got);
        got = NULL;
        if (disk_cache_get(c, key_of(keys[j]), &got, &got_n)) {
          if (got_n != n || memcmp(got, want, n) != 0) rc = 2; /* wrong bytes after put */
        } else if (!may_evict) {
          rc = 3; /* lost our own put */
        }
      }
      free(got);
      free(want);
      if (rc) return rc;
    }
  return 0;
}

/* Forks PROCS workers on dir; checks they all succeed without warnings. Seconds taken. */
static double run_processes(const char *dir, bool may_evict) {
  double t0 = now_seconds();
  pid_t pids[PROCS];
  for (int w = 0; w < PROCS; w++) {
    pids[w] = fork();
    ck_assert_int_ge(pids[w], 0);
    if (pids[w] == 0) {
      reset_logs();
      disk_cache *c = disk_cache_open(dir, 0, &counting_logger);
      int rc = c ? run_worker(c, w, may_evict) : 10;
      disk_cache_close(c);
      if (rc == 0 && logs.warn) rc = 20; /* warned: saw something it should not have */
      if (rc == 20) fprintf(stderr, "worker %d: %s\n", w, logs.last_warn);
      _exit(rc);
    }
  }
  for (int w = 0; w < PROCS; w++) {
    int status = 0;
    ck_assert_int_eq(waitpid(pids[w], &status, 0), pids[w]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "worker %d: status 0x%x", w,
                  status);
  }
  return now_seconds() - t0;
}

START_TEST(test_concurrent_processes) {
  char dir[PATH_MAX];
  tmp_path(dir, "cache");
  double secs = run_processes(dir, false);
  printf("disk cache: %d processes x %d keys x 2 passes: %.3f s\n", PROCS, KEYS_PER_WORKER,
         secs);
  take_census(dir);
  ck_assert_int_eq(census.temps, 0);
  ck_assert_int_eq(census.entries, KEY_SPACE);
  disk_cache *c = open_cache(dir, 0);
  for (uint64_t k = 0; k < KEY_SPACE; k++) {
    size_t n;
    unsigned char *p = payload_of(k, 0, &n);
    ck_assert_msg(get_equals(c, key_of(k), p, n), "key %d", (int)k);
    free(p);
  }
  disk_cache_close(c);
  ck_assert_int_eq(warnings(), 0);
}
END_TEST

START_TEST(test_concurrent_processes_with_eviction) {
  /* A cap of about 60 average entries for 300 keys: processes evict under each other's
   * readers and writers. Gets may miss; they may never return wrong bytes. */
  char dir[PATH_MAX];
  tmp_path(dir, "cache");
  const uint64_t cap = 2u << 20;
  setenv("IC_CACHE_MAX_BYTES", "2097152", 1);
  double secs = run_processes(dir, true);
  printf("disk cache: %d processes x %d keys x 2 passes, 2 MiB cap: %.3f s\n", PROCS,
         KEYS_PER_WORKER, secs);
  take_census(dir);
  ck_assert_int_eq(census.temps, 0);
  /* Each process sees only its own puts between scans (one every eighth of the cap):
   * the directory may be over the cap, boundedly, until the next put measures it. */
  ck_assert_uint_le(census.bytes, cap + PROCS * (cap / 8 + (64u << 10)));
  disk_cache *c = open_cache(dir, 0);
  size_t n;
  unsigned char *p = payload_of(KEY_SPACE + 1, 0, &n);
  disk_cache_put(c, key_of(KEY_SPACE + 1), p, n);
  free(p);
  take_census(dir);
  ck_assert_uint_le(census.bytes, cap);
  disk_cache_close(c);
  ck_assert_int_eq(warnings(), 0);
}
END_TEST

typedef struct thread_arg {
  disk_cache *cache;
  int worker, rc;
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *a = p;
  a->rc = run_worker(a->cache, a->worker, false);
  return NULL;
}

START_TEST(test_concurrent_threads) {
  char dir[PATH_MAX];
  tmp_path(dir, "cache");
  disk_cache *c = open_cache(dir, 0);
  thread_arg args[THREADS];
  pthread_t threads[THREADS];
  double t0 = now_seconds();
  for (int t = 0; t < THREADS; t++) {
    args[t] = (thread_arg){c, t, -1};
    ck_assert_int_eq(pthread_create(&threads[t], NULL, thread_main, &args[t]), 0);
  }
  for (int t = 0; t < THREADS; t++) {
    ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
    ck_assert_msg(args[t].rc == 0, "thread %d: %d", t, args[t].rc);
  }
  printf("disk cache: %d threads x %d keys x 2 passes: %.3f s\n", THREADS, KEYS_PER_WORKER,
         now_seconds() - t0);
  take_census(dir);
  ck_assert_int_eq(census.temps, 0);
  ck_assert_int_eq(census.entries, KEY_SPACE);
  ck_assert_int_eq(warnings(), 0);
  disk_cache_close(c);
}
END_TEST

/* ---------------------------------------------------------------- suite */

static Suite *disk_cache_suite(void) {
  Suite *s = suite_create("disk_cache");
  TCase *tc = check_tcase("basics");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_null_and_disabled_handles);
  tcase_add_test(tc, test_corrupted_entries);
  tcase_add_test(tc, test_other_users_entry);
  tcase_add_test(tc, test_disabled_by_env);
  tcase_add_test(tc, test_unusable_directories);
  tcase_add_test(tc, test_directory_resolution);
  tcase_add_test(tc, test_max_bytes_env);
  tcase_add_test(tc, test_size_cap_evicts_least_recently_used);
  tcase_add_test(tc, test_size_cap_other_cases);
  tcase_add_test(tc, test_size_cap_two_writers);
  suite_add_tcase(s, tc);

  TCase *conc = check_tcase("concurrency");
  tcase_add_checked_fixture(conc, setup, teardown);
  tcase_add_test(conc, test_concurrent_processes);
  tcase_add_test(conc, test_concurrent_processes_with_eviction);
  tcase_add_test(conc, test_concurrent_threads);
  suite_add_tcase(s, conc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(disk_cache_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
