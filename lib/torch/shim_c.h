/* What the C files of libbosch-torch (shim_checkpoint.c) call in its C++
 * shim: hidden, never exported (named outside bosch_torch_*). */
#ifndef BOSCH_TORCH_SHIM_C_H
#define BOSCH_TORCH_SHIM_C_H

#ifdef __cplusplus
extern "C" {
#endif

/* Records why a creator failed, for bosch_torch_create_status() and
 * bosch_torch_create_error() ("fn: reason"), as the C++ creators do. */
void bt_create_fail(const char *fn, int status, const char *reason);

#ifdef __cplusplus
}
#endif

#endif
