/* The C library's calls that can fail, through the fault table (base/fault.h): lib/ calls
 * these, never malloc, open, rename, ... directly (scripts/check-fault-points.sh). Each
 * behaves as the call it is named after; an injected fault makes it fail as that call
 * fails (NULL or -1, errno set). */
#ifndef IC_BASE_SYS_H
#define IC_BASE_SYS_H

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

void *sys_malloc(size_t size);
void *sys_calloc(size_t n, size_t size);
void *sys_realloc(void *p, size_t size);
char *sys_strdup(const char *s);

int sys_open(const char *path, int flags, mode_t mode);
int sys_openat(int dirfd, const char *path, int flags);
ssize_t sys_read(int fd, void *buf, size_t n);
ssize_t sys_write(int fd, const void *buf, size_t n);
int sys_close(int fd);
int sys_rename(const char *from, const char *to);
int sys_unlink(const char *path);
int sys_mkdir(const char *path, mode_t mode);
int sys_stat(const char *path, struct stat *st);
int sys_lstat(const char *path, struct stat *st);
int sys_fstat(int fd, struct stat *st);
DIR *sys_opendir(const char *path);
int sys_futimens(int fd, const struct timespec times[2]);
FILE *sys_fopen(const char *path, const char *mode);

#endif
