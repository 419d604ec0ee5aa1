/* A file that appears whole or not at all: written as a temporary beside
 * its path, synced, then renamed over it (rename(2) within a directory
 * replaces the target in one step). A failed write leaves the earlier file
 * as it was and no temporary. */
#ifndef BOSCH_UTIL_ATOMIC_FILE_H
#define BOSCH_UTIL_ATOMIC_FILE_H

#include <stdio.h>

typedef struct afile {
    FILE *f;    /* write here between afile_open and afile_close */
    char *tmp;  /* the temporary's path, NULL when there is none */
    char *path; /* the target */
} afile;

/* 0, or an errno value (then *a holds nothing). The file gets mode 0644. */
int afile_open(afile *a, const char *path);
/* Flushes, syncs and closes the temporary; any earlier write error counts.
 * 0, or the errno value of the first failure. */
int afile_close(afile *a);
/* Renames a closed temporary over its target. 0, or the errno value. */
int afile_rename(afile *a);
/* afile_close, afile_rename, then afile_discard (always): 0, or the errno
 * value of the first failure (the temporary removed). */
int afile_commit(afile *a);
/* Removes the temporary (unless renamed) and frees *a; safe on an emptied
 * *a, after a failed open or a commit. Keeps errno. */
void afile_discard(afile *a);

#endif
