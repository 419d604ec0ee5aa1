/* Fuzz targets of the parsers of untrusted input (issue 15; zstd's
 * tests/fuzz/ is the model). Each target defines LLVMFuzzerTestOneInput;
 * built with -Dfuzz=enabled under clang it links libFuzzer, otherwise
 * driver.c runs it over every file of its seed corpus (test/fuzz/corpus/
 * NAME/) as a regression test. A target must never crash, hang or leak on
 * any input: a bad input is an error status. */
#ifndef BOSCH_TEST_FUZZ_H
#define BOSCH_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The parsers read files: writes data to this process's scratch file
 * NAME (under $TMPDIR) and returns its path (static storage), or NULL. */
const char *fuzz_file(const char *name, const uint8_t *data, size_t size);
/* A scratch directory of this process (created once), or NULL. */
const char *fuzz_dir(void);

#ifdef __cplusplus
}
#endif

#endif
