/* The on-disk kernel cache: one checksummed file an entry, written to a temp file and
 * renamed into place, read back with every field verified, evicted by mtime (see disk.h
 * for the format and the rules). No file lock anywhere: rename(2) makes puts atomic for
 * readers, and every race between processes (two puts of one key, an eviction under a
 * reader, two evictions at once) ends in a valid entry or a miss. */
#include "cache/disk.h"

#include "base/bytes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

/* ---------------------------------------------------------------- format */

#define ENTRY_MAGIC "ICKCACHE"
#define ENTRY_SUFFIX ".ick"
#define TEMP_PREFIX ".tmp."

enum {
  MAGIC_BYTES = 8,
  OFF_SCHEMA = MAGIC_BYTES,
  OFF_KEY = OFF_SCHEMA + 4,
  OFF_LENGTH = OFF_KEY + 16,
  HEADER_BYTES = OFF_LENGTH + 8,
  CHECKSUM_BYTES = 8,
  ENTRY_OVERHEAD = HEADER_BYTES + CHECKSUM_BYTES,
  KEY_HEX_DIGITS = 32,
  /* "ab/" + 32 hex digits + ".ick": an entry's path below the cache directory. */
  REL_PATH_BYTES = 3 + KEY_HEX_DIGITS + 4 + 1,
  /* Room for "/ab/.tmp.<pid>.<tid>.<counter>.<random>" after the directory. */
  PATH_SLACK = 128,
};

#define DEFAULT_MAX_BYTES (UINT64_C(1) << 30)
/* Kernels are kilobytes to a few megabytes; anything past this is not ours. */
#define MAX_PAYLOAD_BYTES (UINT64_C(1) << 30)
/* A temp file untouched this long belongs to a writer that died. */
#define STALE_TEMP_SECONDS 3600

/* ---------------------------------------------------------------- the cache */

struct disk_cache {
  logger log;
  char *dir; /* NULL when disabled */
  uint64_t max_bytes;
  pthread_mutex_t lock; /* guards the size accounting below and eviction */
  bool size_known;      /* total_bytes was measured by a scan */
  /* Bytes of entries in the directory: measured by a scan, then kept up to date with our
   * own puts. Other processes' puts are invisible, hence the periodic rescan. */
  uint64_t total_bytes;
  uint64_t put_bytes_since_scan;
};

/* Temp-file names must be unique among all writers of a directory: pid and thread id
 * separate live writers on this machine, the counter separates one thread's files, and
 * the random part separates machines or pid namespaces sharing the directory. */
static atomic_uint_least64_t temp_counter;

static void key_hex(key128 key, char out[KEY_HEX_DIGITS + 1]) {
  snprintf(out, KEY_HEX_DIGITS + 1, "%016" PRIx64 "%016" PRIx64, key.hi, key.lo);
}

/* DIR/ab/<32 hex>.ick; the directory length was bounded at open, so this fits. */
static void entry_path(const disk_cache *c, key128 key, char *path, size_t size) {
  char hex[KEY_HEX_DIGITS + 1];
  key_hex(key, hex);
  snprintf(path, size, "%s/%.2s/%s" ENTRY_SUFFIX, c->dir, hex, hex);
}

static uint64_t evict_target(uint64_t max_bytes) { return max_bytes - max_bytes / 10; }

static bool is_hex_lower(char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); }

static bool is_fanout_name(const char *name) {
  return is_hex_lower(name[0]) && is_hex_lower(name[1]) && name[2] == '\0';
}

static bool is_entry_name(const char *name) {
  for (int i = 0; i < KEY_HEX_DIGITS; i++)
    if (!is_hex_lower(name[i])) return false;
  return strcmp(name + KEY_HEX_DIGITS, ENTRY_SUFFIX) == 0;
}

static bool timespec_before(struct timespec a, struct timespec b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/* ---------------------------------------------------------------- I/O helpers */

/* Reads exactly n bytes; false on error or early end of file (errno 0 for the latter). */
static bool read_all(int fd, unsigned char *buf, size_t n) {
  while (n > 0) {
    ssize_t r = sys_read(fd, buf, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = 0;
      return false;
    }
    buf += r;
    n -= (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const unsigned char *buf, size_t n) {
  while (n > 0) {
    ssize_t w = sys_write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    buf += w;
    n -= (size_t)w;
  }
  return true;
}

/* ---------------------------------------------------------------- open */

/* IC_CACHE=0 (or off/no/false) turns the disk cache off. */
static bool disabled_by_env(void) {
  const char *v = getenv("IC_CACHE");
  if (!v) return false;
  return strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0 || strcasecmp(v, "no") == 0 ||
         strcasecmp(v, "false") == 0;
}

/* IC_CACHE_MAX_BYTES (decimal) overrides the caller's cap; 0 means the default. */
static uint64_t resolve_max_bytes(const disk_cache *c, uint64_t max_bytes) {
  const char *v = getenv("IC_CACHE_MAX_BYTES");
  if (v && *v) {
    const char *s = v;
    while (*s == ' ' || *s == '\t') s++;
    char *end = NULL;
    errno = 0;
    unsigned long long n = (*s >= '0' && *s <= '9') ? strtoull(s, &end, 10) : 0;
    if (end) {
      while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    }
    if (!end || *end != '\0' || errno == ERANGE)
      log_msg(&c->log, IC_LOG_WARN,
             "kernel cache: ignoring IC_CACHE_MAX_BYTES=\"%s\" (want a decimal byte count)", v);
    else
      max_bytes = (uint64_t)n;
  }
  return max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
}

/* The user's home: $HOME, else the password database. NULL when there is none. */
static char *home_dir(void) {
  const char *home = getenv("HOME");
  if (home && *home) return str_dup(home);
  long n = sysconf(_SC_GETPW_R_SIZE_MAX);
  size_t len = n > 0 ? (size_t)n : 16384;
  char *buf = sys_malloc(len);
  if (!buf) return NULL;
  struct passwd pw, *found = NULL;
  char *out = NULL;
  if (getpwuid_r(geteuid(), &pw, buf, len, &found) == 0 && found && found->pw_dir &&
      *found->pw_dir)
    out = str_dup(found->pw_dir);
  free(buf);
  return out;
}

/* IC_CACHE_DIR, else $XDG_CACHE_HOME/ic, else ~/.cache/ic. NULL with a warning when
 * there is no home to put it in (or out of memory, which *oom tells apart). */
static char *default_dir(const disk_cache *c, bool *oom) {
  const char *env = getenv("IC_CACHE_DIR");
  if (env && *env) {
    char *d = str_dup(env);
    *oom = !d;
    return d;
  }
  sbuf sb = {0};
  /* The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored. */
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') {
    sbuf_printf(&sb, "%s/ic", xdg);
  } else {
    char *home = home_dir();
    if (!home) {
      log_msg(&c->log, IC_LOG_WARN,
             "kernel cache: disk cache disabled (memory only): no home directory; set "
             "IC_CACHE_DIR");
      return NULL;
    }
    sbuf_printf(&sb, "%s/.cache/ic", home);
    free(home);
  }
  char *d = sbuf_take(&sb);
  *oom = !d;
  return d;
}

static void strip_trailing_slashes(char *path) {
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') path[--n] = '\0';
}

/* mkdir -p, every directory it creates 0700. 0 or the errno of the final mkdir. */
static int make_dirs(char *path) {
  /* Parents: errors here are not final (the parent may exist but be unreadable); the
   * last mkdir tells whether the directory can be had. */
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    (void)sys_mkdir(path, 0700);
    *p = '/';
  }
  if (sys_mkdir(path, 0700) == 0) {
    /* Whatever the umask did, the cache directory is the owner's alone. */
    (void)chmod(path, 0700);
    return 0;
  }
  return errno == EEXIST ? 0 : errno;
}

/* Creates the directory if needed and checks that it is ours alone: a directory that
 * others can write lets them plant entries, and entries are code we run. False (with
 * the one warning) when it cannot be used. */
static bool prepare_dir(const disk_cache *c, char *path) {
#define DISABLED "kernel cache: disk cache disabled (memory only): "
  if (strlen(path) > PATH_MAX - PATH_SLACK) {
    log_msg(&c->log, IC_LOG_WARN, DISABLED "directory path too long: %s", path);
    return false;
  }
  int err = make_dirs(path);
  if (err) {
    log_msg(&c->log, IC_LOG_WARN, DISABLED "cannot create %s: %s", path, strerror(err));
    return false;
  }
  struct stat st;
  if (sys_stat(path, &st) != 0) {
    log_msg(&c->log, IC_LOG_WARN, DISABLED "cannot access %s: %s", path, strerror(errno));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    log_msg(&c->log, IC_LOG_WARN, DISABLED "%s is not a directory", path);
    return false;
  }
  if (st.st_uid != geteuid()) {
    log_msg(&c->log, IC_LOG_WARN, DISABLED "%s belongs to another user (uid %u)", path,
           (unsigned)st.st_uid);
    return false;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    log_msg(&c->log, IC_LOG_WARN, DISABLED "%s is writable by group or others (mode %04o)",
           path, (unsigned)(st.st_mode & 07777));
    return false;
  }
  if (faccessat(AT_FDCWD, path, R_OK | W_OK | X_OK, AT_EACCESS) != 0) {
    log_msg(&c->log, IC_LOG_WARN, DISABLED "%s is not writable: %s", path, strerror(errno));
    return false;
  }
  return true;
#undef DISABLED
}

disk_cache *disk_cache_open(const char *dir, uint64_t max_bytes, const logger *log) {
  disk_cache *c = sys_calloc(1, sizeof *c);
  if (!c) return NULL;
  if (log) c->log = *log;
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return NULL;
  }
  c->max_bytes = resolve_max_bytes(c, max_bytes);
  if (disabled_by_env()) {
    log_msg(&c->log, IC_LOG_INFO, "kernel cache: disk cache disabled by IC_CACHE");
    return c;
  }
  bool oom = false;
  char *path = (dir && *dir) ? str_dup(dir) : default_dir(c, &oom);
  if (!path) {
    if (oom || (dir && *dir)) {
      disk_cache_close(c);
      return NULL;
    }
    return c; /* no home: warned */
  }
  strip_trailing_slashes(path);
  if (!prepare_dir(c, path)) {
    free(path);
    return c;
  }
  /* Entry paths must stay valid when the process changes directory. */
  if (path[0] != '/') {
    char *abs = realpath(path, NULL);
    if (!abs) {
      int err = errno;
      if (err != ENOMEM)
        log_msg(&c->log, IC_LOG_WARN,
               "kernel cache: disk cache disabled (memory only): cannot resolve %s: %s", path,
               strerror(err));
      free(path);
      if (err != ENOMEM) return c;
      disk_cache_close(c);
      return NULL;
    }
    free(path);
    path = abs;
  }
  c->dir = path;
  log_msg(&c->log, IC_LOG_INFO, "kernel cache: using %s (at most %" PRIu64 " bytes)", c->dir,
         c->max_bytes);
  return c;
}

void disk_cache_close(disk_cache *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->lock);
  free(c->dir);
  free(c);
}

bool disk_cache_enabled(const disk_cache *c) { return c && c->dir; }

const char *disk_cache_dir(const disk_cache *c) { return (c && c->dir) ? c->dir : ""; }

void disk_cache_entry_path(const disk_cache *c, key128 key, char *path, size_t size) {
  if (!path || size == 0) return;
  if (!disk_cache_enabled(c)) {
    path[0] = '\0';
    return;
  }
  entry_path(c, key, path, size);
}

/* ---------------------------------------------------------------- get */

static void warn_corrupted(const disk_cache *c, const char *path, const char *why) {
  log_msg(&c->log, IC_LOG_WARN, "kernel cache: ignoring corrupted entry %s (%s)", path, why);
}

/* Why buf (a whole file of n >= ENTRY_OVERHEAD bytes) is not a valid entry for key, or
 * NULL when it is. */
static const char *entry_problem(const unsigned char *buf, size_t n, key128 key, char *why,
                                 size_t why_size) {
  if (memcmp(buf, ENTRY_MAGIC, MAGIC_BYTES) != 0) return "bad magic";
  uint32_t schema = bytes_load_u32(buf + OFF_SCHEMA);
  if (schema != DISK_CACHE_SCHEMA) {
    snprintf(why, why_size, "schema version %" PRIu32 ", want %d", schema, DISK_CACHE_SCHEMA);
    return why;
  }
  /* The checksum before the key, so that a damaged key reads as damage, not as an
   * entry renamed under another key's name. */
  uint64_t stored = bytes_load_u64(buf + n - CHECKSUM_BYTES);
  if (XXH3_64bits(buf, n - CHECKSUM_BYTES) != stored) return "checksum mismatch";
  if (bytes_load_u64(buf + OFF_KEY) != key.lo || bytes_load_u64(buf + OFF_KEY + 8) != key.hi)
    return "key mismatch";
  if (bytes_load_u64(buf + OFF_LENGTH) != n - ENTRY_OVERHEAD) return "length mismatch";
  return NULL;
}

/* Whether fd (opened from path) may be read as an entry; warns when not. *n: its size. */
static bool entry_file_ok(const disk_cache *c, int fd, const char *path, size_t *n) {
  struct stat st;
  if (sys_fstat(fd, &st) != 0) {
    log_msg(&c->log, IC_LOG_WARN, "kernel cache: cannot read entry %s: %s", path,
           strerror(errno));
    return false;
  }
  const char *why = NULL;
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_uid != geteuid()) {
    /* A planted entry would run as this user's code. */
    log_msg(&c->log, IC_LOG_WARN, "kernel cache: ignoring entry %s owned by another user (uid %u)",
           path, (unsigned)st.st_uid);
    return false;
  } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    why = "writable by group or others";
  } else if (st.st_size == 0) {
    why = "empty file";
  } else if (st.st_size < ENTRY_OVERHEAD) {
    why = "truncated";
  } else if ((uint64_t)st.st_size > MAX_PAYLOAD_BYTES + ENTRY_OVERHEAD) {
    why = "too large";
  }
  if (why) {
    warn_corrupted(c, path, why);
    return false;
  }
  *n = (size_t)st.st_size;
  return true;
}

bool disk_cache_get(disk_cache *c, key128 key, void **payload, size_t *size) {
  if (payload) *payload = NULL;
  if (size) *size = 0;
  if (!disk_cache_enabled(c) || !payload || !size) return false;
  char path[PATH_MAX];
  entry_path(c, key, path, sizeof path);
  /* O_NOFOLLOW: entries are never links. O_NONBLOCK: a FIFO in their place must not
   * hang the open; for regular files it changes nothing. */
  int fd = sys_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
  if (fd < 0) {
    if (errno == ELOOP)
      warn_corrupted(c, path, "a symbolic link");
    else if (errno != ENOENT && errno != ENOTDIR)
      log_msg(&c->log, IC_LOG_WARN, "kernel cache: cannot read entry %s: %s", path,
             strerror(errno));
    return false;
  }
  size_t n = 0;
  unsigned char *buf = NULL;
  bool hit = false;
  if (entry_file_ok(c, fd, path, &n) && (buf = sys_malloc(n)) != NULL) {
    char why[64]; /* problem may point into it */
    const char *problem = NULL;
    if (!read_all(fd, buf, n))
      problem = errno ? strerror(errno) : "truncated";
    else
      problem = entry_problem(buf, n, key, why, sizeof why);
    if (problem) {
      warn_corrupted(c, path, problem);
    } else {
      hit = true;
      /* A hit makes the entry the most recently used; failure (a read-only file system)
       * only makes its eviction earlier. */
      (void)sys_futimens(fd, NULL);
    }
  }
  sys_close(fd);
  if (!hit) {
    free(buf);
    return false;
  }
  size_t len = n - ENTRY_OVERHEAD;
  memmove(buf, buf + HEADER_BYTES, len);
  unsigned char *shrunk = sys_realloc(buf, len ? len : 1); /* on failure the larger block serves */
  if (shrunk) buf = shrunk;
  *payload = buf;
  *size = len;
  return true;
}

/* ---------------------------------------------------------------- eviction */

typedef struct scanned_entry {
  struct timespec mtime;
  uint64_t size;
  char rel[REL_PATH_BYTES]; /* ab/<32 hex>.ick */
} scanned_entry;

typedef struct scanned_list {
  scanned_entry *items;
  int32_t count, cap;
} scanned_list;

/* Walks one fan-out directory: adds its entries' sizes to *total (and to list when
 * given) and deletes stale temp files. False when out of memory. */
static bool scan_fanout(int fd, const char *fanout, time_t stale_before, scanned_list *list,
                        uint64_t *total) {
  DIR *d = fdopendir(fd);
  if (!d) {
    sys_close(fd);
    return true; /* vanished or unreadable: nothing to count */
  }
  bool ok = true;
  struct dirent *de;
  while (ok && (de = readdir(d)) != NULL) {
    const char *name = de->d_name;
    bool entry = is_entry_name(name);
    bool temp = strncmp(name, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0;
    if (!entry && !temp) continue;
    struct stat st;
    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (temp) {
      /* Fresh temp files are puts in progress; old ones were left by crashed writers. */
      if (st.st_mtim.tv_sec < stale_before) (void)unlinkat(dirfd(d), name, 0);
      continue;
    }
    *total += (uint64_t)st.st_size;
    if (list) {
      scanned_entry e = {.mtime = st.st_mtim, .size = (uint64_t)st.st_size};
      /* "ab/" + the name, whose length is_entry_name fixed. */
      memcpy(e.rel, fanout, 2);
      e.rel[2] = '/';
      memcpy(e.rel + 3, name, sizeof e.rel - 3);
      ok = VEC_PUSH(*list, e);
    }
  }
  closedir(d);
  return ok;
}

/* Measures the entries in the directory (collecting them when list is given). False when
 * the directory cannot be read or memory runs out. */
static bool scan_dir(const disk_cache *c, scanned_list *list, uint64_t *total) {
  *total = 0;
  DIR *d = sys_opendir(c->dir);
  if (!d) {
    log_msg(&c->log, IC_LOG_WARN, "kernel cache: cannot scan %s: %s", c->dir, strerror(errno));
    return false;
  }
  time_t stale_before = time(NULL) - STALE_TEMP_SECONDS;
  bool ok = true;
  struct dirent *de;
  while (ok && (de = readdir(d)) != NULL) {
    if (!is_fanout_name(de->d_name)) continue;
    int fd = sys_openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) ok = scan_fanout(fd, de->d_name, stale_before, list, total);
  }
  closedir(d);
  return ok;
}

static int compare_by_mtime(const void *a, const void *b) {
  const scanned_entry *x = a, *y = b;
  if (timespec_before(x->mtime, y->mtime)) return -1;
  if (timespec_before(y->mtime, x->mtime)) return 1;
  return strcmp(x->rel, y->rel);
}

/* Deletes least recently used entries until the directory is under 90% of the cap.
 * Other processes may be evicting at the same time: an entry already gone counts as
 * deleted. Called with c->lock held. */
static void evict(disk_cache *c) {
  scanned_list list = {0};
  uint64_t total = 0;
  if (!scan_dir(c, &list, &total)) {
    free(list.items);
    return;
  }
  int32_t deleted = 0;
  if (total > c->max_bytes) {
    qsort(list.items, (size_t)list.count, sizeof *list.items, compare_by_mtime);
    uint64_t target = evict_target(c->max_bytes);
    for (int32_t i = 0; i < list.count && total > target; i++) {
      char path[PATH_MAX];
      snprintf(path, sizeof path, "%s/%s", c->dir, list.items[i].rel);
      if (sys_unlink(path) == 0 || errno == ENOENT) {
        total -= list.items[i].size;
        deleted++;
      }
    }
  }
  free(list.items);
  log_msg(&c->log, IC_LOG_DEBUG, "kernel cache: evicted %" PRId32 " entries, %" PRIu64
         " bytes left", deleted, total);
  c->total_bytes = total;
  c->size_known = true;
  c->put_bytes_since_scan = 0;
}

/* Counts a put of `added` bytes that replaced `replaced` bytes, and evicts when the
 * directory is over the cap. The count starts with a scan on the first put and is
 * rescanned after every eighth of the cap written, which bounds how far other
 * processes' unseen puts can take the directory past the cap. */
static void account_put(disk_cache *c, uint64_t added, uint64_t replaced) {
  pthread_mutex_lock(&c->lock);
  if (!c->size_known || c->put_bytes_since_scan >= c->max_bytes / 8) {
    uint64_t total = 0;
    if (scan_dir(c, NULL, &total)) {
      c->total_bytes = total;
      c->size_known = true;
      c->put_bytes_since_scan = 0;
    }
  } else {
    c->total_bytes -= replaced < c->total_bytes ? replaced : c->total_bytes;
    c->total_bytes += added;
    c->put_bytes_since_scan += added;
  }
  if (c->size_known && c->total_bytes > c->max_bytes) evict(c);
  pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------- put */

/* Makes DIR/ab for an entry path DIR/ab/<hex>.ick. */
static bool make_fanout_dir(const disk_cache *c, const char *path) {
  char sub[PATH_MAX];
  size_t n = strlen(c->dir) + 3;
  memcpy(sub, path, n);
  sub[n] = '\0';
  if (sys_mkdir(sub, 0700) == 0 || errno == EEXIST) return true;
  /* The whole directory was removed under us (rm -rf ~/.cache/ic): make it again, ours
   * and 0700 as at open. */
  if (errno == ENOENT && sys_mkdir(c->dir, 0700) == 0 && (sys_mkdir(sub, 0700) == 0 || errno == EEXIST))
    return true;
  log_msg(&c->log, IC_LOG_WARN, "kernel cache: cannot create %s: %s", sub, strerror(errno));
  return false;
}

/* Creates a uniquely named temp file next to path; its name goes to tmp. -1 on failure. */
static int create_temp(const disk_cache *c, const char *path, char *tmp, size_t tmp_size) {
  size_t n = strlen(c->dir) + 3; /* DIR/ab */
  for (int attempt = 0; attempt < 8; attempt++) {
    struct {
      uint64_t counter;
      struct timespec now;
      long pid, tid;
    } seed;
    memset(&seed, 0, sizeof seed); /* padding too: all of it is hashed */
    seed.counter = atomic_fetch_add(&temp_counter, 1);
    seed.pid = (long)getpid();
    seed.tid = (long)gettid();
    clock_gettime(CLOCK_REALTIME, &seed.now);
    uint32_t rnd = (uint32_t)XXH3_64bits(&seed, sizeof seed);
    snprintf(tmp, tmp_size, "%.*s/" TEMP_PREFIX "%ld.%ld.%" PRIu64 ".%08" PRIx32, (int)n, path,
             seed.pid, seed.tid, seed.counter, rnd);
    int fd = sys_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/* The whole entry in one buffer: header, payload, checksum. NULL when out of memory. */
static unsigned char *encode_entry(key128 key, const void *payload, size_t size) {
  size_t n = (size_t)ENTRY_OVERHEAD + size;
  unsigned char *buf = sys_malloc(n);
  if (!buf) return NULL;
  memcpy(buf, ENTRY_MAGIC, MAGIC_BYTES);
  bytes_store_u32(buf + OFF_SCHEMA, DISK_CACHE_SCHEMA);
  bytes_store_u64(buf + OFF_KEY, key.lo);
  bytes_store_u64(buf + OFF_KEY + 8, key.hi);
  bytes_store_u64(buf + OFF_LENGTH, (uint64_t)size);
  if (size) memcpy(buf + HEADER_BYTES, payload, size);
  bytes_store_u64(buf + HEADER_BYTES + size, XXH3_64bits(buf, HEADER_BYTES + size));
  return buf;
}

void disk_cache_put(disk_cache *c, key128 key, const void *payload, size_t size) {
  if (!disk_cache_enabled(c) || (!payload && size)) return;
  uint64_t entry_bytes = (uint64_t)size + ENTRY_OVERHEAD;
  /* An entry that the cap cannot hold would be evicted by its own put. */
  if (size > MAX_PAYLOAD_BYTES || entry_bytes > evict_target(c->max_bytes)) {
    log_msg(&c->log, IC_LOG_INFO,
           "kernel cache: not storing a %zu-byte entry, too large for the %" PRIu64
           "-byte cache",
           size, c->max_bytes);
    return;
  }
  unsigned char *buf = encode_entry(key, payload, size);
  if (!buf) return; /* out of memory: the cache is best effort */
  char path[PATH_MAX], tmp[PATH_MAX];
  entry_path(c, key, path, sizeof path);
  int fd = -1;
  if (make_fanout_dir(c, path)) {
    fd = create_temp(c, path, tmp, sizeof tmp);
    if (fd < 0)
      log_msg(&c->log, IC_LOG_WARN, "kernel cache: cannot create a temp file for %s: %s", path,
             strerror(errno));
  }
  if (fd < 0) {
    free(buf);
    return;
  }
  bool written = write_all(fd, buf, (size_t)entry_bytes);
  int err = errno;
  free(buf);
  if (sys_close(fd) != 0 && written) {
    written = false;
    err = errno;
  }
  /* The size this put replaces, for the accounting; a race may make it stale, which
   * only makes the count approximate. */
  struct stat old;
  uint64_t replaced = 0;
  if (written && sys_lstat(path, &old) == 0 && S_ISREG(old.st_mode)) replaced = (uint64_t)old.st_size;
  if (!written || sys_rename(tmp, path) != 0) {
    if (written) err = errno;
    log_msg(&c->log, IC_LOG_WARN, "kernel cache: cannot write %s: %s", path, strerror(err));
    (void)sys_unlink(tmp);
    return;
  }
  account_put(c, entry_bytes, replaced);
}

void disk_cache_remove(disk_cache *c, key128 key) {
  if (!disk_cache_enabled(c)) return;
  char path[PATH_MAX];
  entry_path(c, key, path, sizeof path);
  struct stat st;
  uint64_t n = sys_lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
  if (sys_unlink(path) != 0) return;
  pthread_mutex_lock(&c->lock);
  c->total_bytes -= n < c->total_bytes ? n : c->total_bytes;
  pthread_mutex_unlock(&c->lock);
}
