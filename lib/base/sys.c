/* The C library's calls through the fault table (sys.h). The only file of lib/ that calls
 * them directly. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fault.h"
#include "base/sys.h"

/* An injected failure of a call that reports through errno. */
static bool fs_fails(const char *name) {
  if (!fault_hit(FAULT_FS, name)) return false;
  errno = fault_code();
  return true;
}

static bool alloc_fails(const char *name) {
  if (!fault_hit(FAULT_ALLOC, name)) return false;
  errno = ENOMEM;
  return true;
}

void *sys_malloc(size_t size) { return alloc_fails("malloc") ? NULL : malloc(size); }
void *sys_calloc(size_t n, size_t size) { return alloc_fails("calloc") ? NULL : calloc(n, size); }
void *sys_realloc(void *p, size_t size) { return alloc_fails("realloc") ? NULL : realloc(p, size); }
char *sys_strdup(const char *s) { return alloc_fails("strdup") ? NULL : strdup(s); }

int sys_open(const char *path, int flags, mode_t mode) { return fs_fails("open") ? -1 : open(path, flags, mode); }
int sys_openat(int dirfd, const char *path, int flags) {
  return fs_fails("openat") ? -1 : openat(dirfd, path, flags);
}
ssize_t sys_read(int fd, void *buf, size_t n) { return fs_fails("read") ? -1 : read(fd, buf, n); }
ssize_t sys_write(int fd, const void *buf, size_t n) { return fs_fails("write") ? -1 : write(fd, buf, n); }
/* An injected close failure still closes the descriptor, as Linux's close does. */
int sys_close(int fd) {
  if (!fault_hit(FAULT_FS, "close")) return close(fd);
  int code = fault_code();
  (void)close(fd);
  errno = code;
  return -1;
}
int sys_rename(const char *from, const char *to) { return fs_fails("rename") ? -1 : rename(from, to); }
int sys_unlink(const char *path) { return fs_fails("unlink") ? -1 : unlink(path); }
int sys_mkdir(const char *path, mode_t mode) { return fs_fails("mkdir") ? -1 : mkdir(path, mode); }
int sys_stat(const char *path, struct stat *st) { return fs_fails("stat") ? -1 : stat(path, st); }
int sys_lstat(const char *path, struct stat *st) { return fs_fails("lstat") ? -1 : lstat(path, st); }
int sys_fstat(int fd, struct stat *st) { return fs_fails("fstat") ? -1 : fstat(fd, st); }
DIR *sys_opendir(const char *path) { return fs_fails("opendir") ? NULL : opendir(path); }
int sys_futimens(int fd, const struct timespec times[2]) { return fs_fails("futimens") ? -1 : futimens(fd, times); }
FILE *sys_fopen(const char *path, const char *mode) { return fs_fails("fopen") ? NULL : fopen(path, mode); }
