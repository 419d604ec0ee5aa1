/* A file that appears whole or not at all: written as a temporary beside
 * its path, synced, then renamed over it (rename(2) within a directory
 * replaces the target in one step). A failed write leaves the earlier file
 * as it was and no temporary. */
#ifndef BOSCH_UTIL_ATOMIC_FILE_H
#define BOSCH_UTIL_ATOMIC_FILE_H

#include <stdio.h>

typedef struct {
    FILE *f;    /* write here between afile_open and afile_commit */
    char *tmp;  /* the temporary's path */
    char *path; /* the target */
} afile;

/* 0, or an errno value (then *a holds nothing). The file gets mode 0644. */
int afile_open(afile *a, const char *path);
/* Flushes, syncs, closes and renames; any earlier write error counts.
 * 0, or the errno value of the first failure (the temporary removed). */
int afile_commit(afile *a);
/* Removes the temporary and frees *a; safe after a commit or a failed open. */
void afile_discard(afile *a);

#endif
