/* A scratch directory per test process and small text-file helpers, for
 * tests that write and read files (test_selection, test_export). */
#ifndef BOSCH_TEST_SCRATCH_H
#define BOSCH_TEST_SCRATCH_H

/* Makes the directory on the first call (mkdtemp of /tmp/PREFIX-XXXXXX);
 * later calls do nothing. Call it from each test case's setup. */
void scratch_setup(const char *prefix);
/* The directory ("" before scratch_setup). */
const char *scratch_dir(void);
/* scratch_dir()/name, in one of 8 rotating static buffers. */
const char *scratch_path(const char *name);
/* Writes `text` to `path` (truncating); fails the test on error. */
void scratch_write_text(const char *path, const char *text);
/* The whole file, malloc'ed and NUL-terminated; fails the test when it
 * cannot be opened. */
char *scratch_read_text(const char *path);

#endif
