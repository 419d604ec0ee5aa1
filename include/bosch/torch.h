/*
 * libbosch-torch: the libtorch backend. Loads a Qwen3 checkpoint in the
 * Hugging Face layout and scores unit masks on long-context retrieval tasks,
 * so that libbosch can select sliding-window heads of a real model.
 *
 * A separate library (libbosch-torch.so.0) that depends on libbosch; the
 * core never depends on it. C API only: no C++ type or exception crosses
 * this boundary.
 *
 * Errors follow the core's conventions (bosch/bosch.h):
 *  - A function that creates a handle (bosch_torch_model_open[_device],
 *    bosch_torch_task_read_jsonl, bosch_torch_task_create_niah[_ids],
 *    bosch_torch_evaluator_open, bosch_torch_model_problem) returns it, or
 *    NULL; then bosch_torch_create_status() and bosch_torch_create_error()
 *    say why, per thread.
 *  - A function on a handle returns an int status (BOSCH_OK or a negative
 *    enum bosch_error) and keeps the message in the handle:
 *    bosch_torch_model_last_error(), bosch_torch_evaluator_last_error().
 *    A NULL handle gives BOSCH_E_INVALID and no message.
 *  - Tasks are immutable: bosch_torch_task_write_jsonl() takes a const task
 *    and reports by status only (BOSCH_E_INVALID, BOSCH_E_IO).
 * Statuses: bad arguments or input data (a malformed checkpoint or task)
 * BOSCH_E_INVALID, a file that cannot be opened, read or written BOSCH_E_IO,
 * out of (device) memory BOSCH_E_NOMEM, a non-finite static score
 * BOSCH_E_BAD_SCORE, any other libtorch failure BOSCH_E_EVALUATOR.
 *
 * Naming: handles are made by _create (or _open / _read for what loads or
 * prepares data) and released by _free. The pre-1.0 functions that wrote
 * into an `err` buffer (err_len bytes) are kept until 1.0 as deprecated
 * wrappers with unchanged behaviour and messages, listed at the end.
 * bosch_torch_evaluator_create keeps its old signature, so the evaluator's
 * new creator is named bosch_torch_evaluator_open.
 *
 * Threads: a model may be used by one thread at a time (its forward uses
 * libtorch's own intra-op threads). Tasks are immutable after creation and
 * may be shared. An evaluator holds a model and a task by reference: both
 * must outlive it.
 */
#ifndef BOSCH_TORCH_H
#define BOSCH_TORCH_H

#include "bosch/bosch.h"
#include "bosch/text.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Export and deprecation macros (own ones: this is another shared object).  */
/* A packager or a static build may define them before including this        */
/* header. BOSCH_TORCH_BUILDING is defined only while building               */
/* libbosch-torch.                                                           */
/* ------------------------------------------------------------------------ */
#ifndef BOSCH_TORCH_API
#if defined(BOSCH_TORCH_BUILDING) && defined(__GNUC__)
#define BOSCH_TORCH_API __attribute__((visibility("default")))
#else
#define BOSCH_TORCH_API
#endif
#endif

/* Marks the pre-1.0 names kept until 1.0; BOSCH_NO_DEPRECATION_WARNINGS
 * silences the warnings, as for the core's BOSCH_DEPRECATED. */
#ifndef BOSCH_TORCH_DEPRECATED
#if defined(__GNUC__) && !defined(BOSCH_TORCH_BUILDING) && !defined(BOSCH_NO_DEPRECATION_WARNINGS)
#define BOSCH_TORCH_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#else
#define BOSCH_TORCH_DEPRECATED(replacement)
#endif
#endif

typedef struct bosch_torch_model bosch_torch_model;
typedef struct bosch_torch_task bosch_torch_task;
typedef struct bosch_torch_evaluator bosch_torch_evaluator;

enum bosch_torch_device {
    BOSCH_TORCH_DEVICE_AUTO = 0, /* CUDA when available, else CPU */
    BOSCH_TORCH_DEVICE_CPU = 1,
    BOSCH_TORCH_DEVICE_CUDA = 2
};

enum bosch_torch_dtype {
    BOSCH_TORCH_DTYPE_AUTO = 0, /* bf16 on CUDA, f32 on CPU */
    BOSCH_TORCH_DTYPE_F32 = 1,
    BOSCH_TORCH_DTYPE_BF16 = 2,
    BOSCH_TORCH_DTYPE_F16 = 3
};

/* Non-zero when this build can use CUDA (built against a CUDA libtorch and
 * a device is visible). */
BOSCH_TORCH_API int bosch_torch_cuda_available(void);
/* CUDA devices this process sees ("cuda:0" .. "cuda:N-1"); 0 without CUDA.
 * The ranks of an MPI job on one node take one each (docs/mpi.md). */
BOSCH_TORCH_API uint32_t bosch_torch_cuda_device_count(void);

/* libtorch's intra-op threads (at::set_num_threads: what OMP_NUM_THREADS
 * sets at start-up) for the whole process: every model and evaluator of it.
 * Results do not depend on the count. BOSCH_E_INVALID for 0. Not to be
 * called while a forward runs on another thread. The library never changes
 * the count (nor any thread setting) on its own: on the CPU, more threads
 * help only with OMP_WAIT_POLICY=PASSIVE and OPENBLAS_THREAD_TIMEOUT set
 * before libtorch loads, as the bosch command and the Python package do
 * (docs/torch.md, "Threads"). */
BOSCH_TORCH_API int bosch_torch_set_threads(uint32_t threads);
/* The current count (at::get_num_threads). */
BOSCH_TORCH_API uint32_t bosch_torch_threads(void);

/* Why the last function of libbosch-torch that creates a handle returned
 * NULL on the calling thread: the status (a negative enum bosch_error) and a
 * message "<function>: <reason>". Same semantics as the core's
 * bosch_create_status()/bosch_create_error(), kept apart from them: each
 * thread has its own; a successful creation does not clear it; the message
 * stays valid until the next failing creation on that thread; BOSCH_OK and
 * "" when nothing failed yet. */
BOSCH_TORCH_API int bosch_torch_create_status(void);
BOSCH_TORCH_API const char *bosch_torch_create_error(void);

/* ------------------------------------------------------------------------ */
/* Model                                                                     */
/* ------------------------------------------------------------------------ */
/* Loads `dir`/config.json and `dir`/model.safetensors (or the shards listed
 * in `dir`/model.safetensors.index.json) onto `device` (enum
 * bosch_torch_device) in `dtype` (enum bosch_torch_dtype). Reads
 * Qwen3ForCausalLM and Qwen3MoeForCausalLM (experts one tensor each, as
 * published, or fused as transformers 5 holds them); refuses, by name, other
 * architectures and missing config fields (docs/torch.md lists the fields).
 * Tensors stored as f32, bf16 or f16 are converted to `dtype`; a tensor
 * already in `dtype` on the CPU is kept as read (a bf16 checkpoint opened
 * as bf16 holds no f32 copy). A dtype the device's kernels lack is refused
 * at open, by name (f16 on the CPU with libtorch 1.x: BOSCH_E_INVALID,
 * "dtype f16 is not supported on cpu ..."). Returns NULL on failure
 * (bosch_torch_create_error(): BOSCH_E_IO for a missing or unreadable file,
 * BOSCH_E_INVALID for a bad argument, config or weights). */
BOSCH_TORCH_API bosch_torch_model *bosch_torch_model_open(const char *dir, int device, int dtype);
/* As bosch_torch_model_open, with the device named: "auto" (CUDA device 0
 * when available, else the CPU), "cpu", "cuda" (device 0) or "cuda:N".
 * BOSCH_E_INVALID, naming the string, for any other spelling, and for a
 * CUDA device that is not available or not visible. */
BOSCH_TORCH_API bosch_torch_model *bosch_torch_model_open_device(const char *dir,
                                                                 const char *device, int dtype);
/* Bytes of the model's parameters as held on its device (lm_head tied to
 * the embeddings counted once; RoPE tables and caches not included) and the
 * dtype in use (enum bosch_torch_dtype, never AUTO). Either pointer may be
 * NULL. BOSCH_E_INVALID for a NULL model. */
BOSCH_TORCH_API int bosch_torch_model_memory(const bosch_torch_model *m, uint64_t *param_bytes,
                                             int *dtype);
/* The model's device as libtorch names it ("cpu", "cuda:0"); "" for NULL.
 * Owned by the model. */
BOSCH_TORCH_API const char *bosch_torch_model_device(const bosch_torch_model *m);
/* "auto", "f32", "bf16", "f16"; NULL for other values. */
BOSCH_TORCH_API const char *bosch_torch_dtype_name(int dtype);
/* NULL is a no-op. */
BOSCH_TORCH_API void bosch_torch_model_free(bosch_torch_model *m);
/* Message of the last failing bosch_torch_model_forward() or
 * bosch_torch_model_scores() on this model; "" if none, or if the last of
 * them succeeded (they clear it). Owned by the model; valid until the next
 * call on it. "" for NULL. */
BOSCH_TORCH_API const char *bosch_torch_model_last_error(const bosch_torch_model *m);
/* Shape: layers, KV groups (KV heads) per layer, query heads per group, vocabulary
 * (each pointer may be NULL). BOSCH_E_INVALID for a NULL model. */
BOSCH_TORCH_API int bosch_torch_model_shape(const bosch_torch_model *m, uint32_t *layers,
                                            uint32_t *kv_groups, uint32_t *heads_per_group,
                                            uint32_t *vocab);
/* A problem of the model's shape (target ratio 0.5), owned by the caller,
 * with the units of the config's sliding layers (below) fixed to SWA; NULL
 * (with bosch_torch_create_error()) for a NULL model or no memory. */
BOSCH_TORCH_API bosch_problem *bosch_torch_model_problem(const bosch_torch_model *m);
/* Hybrid checkpoints: a config.json with use_sliding_window = true and
 * sliding_window W makes some layers sliding-window attention, those named
 * "sliding_attention" in layer_types or, without layer_types, the layers
 * from max_window_layers (default 28) on, as transformers' Qwen3 reads it.
 * Every KV group of such a layer attends to the last W tokens (itself
 * included) with no sink tokens, whatever mask, window and sink a forward
 * is given: the model is run as the config defines it, and a search treats
 * those units as fixed SWA. The config's W when at least one layer slides,
 * else 0 (also for NULL). */
BOSCH_TORCH_API uint32_t bosch_torch_model_sliding_window(const bosch_torch_model *m);
/* The config's max_position_embeddings: the positions a sequence may take
 * (bosch_torch_generate refuses a prompt + max_new beyond them); 0 when the
 * config gives none, and for NULL. */
BOSCH_TORCH_API uint64_t bosch_torch_model_max_positions(const bosch_torch_model *m);
/* 1 when the config makes `layer` sliding, 0 when it is full attention;
 * BOSCH_E_INVALID for a NULL model or a layer out of range. */
BOSCH_TORCH_API int bosch_torch_model_layer_sliding(const bosch_torch_model *m, uint32_t layer);
/* A mixture-of-experts model (Qwen3MoeForCausalLM): the experts of each
 * sparse layer, how many each token is routed to, and how many layers are
 * sparse (the others have a dense MLP); all 0 for a dense model. Any
 * pointer may be NULL. BOSCH_E_INVALID for a NULL model. */
BOSCH_TORCH_API int bosch_torch_model_experts(const bosch_torch_model *m, uint32_t *experts,
                                              uint32_t *per_token, uint32_t *sparse_layers);

/* One forward pass of `batch` sequences of `len` tokens, each with its own
 * unit mask (masks: batch x units bytes, 1 = that (layer, KV group) attends
 * to a sliding window of `window` tokens — itself and the window-1 before —
 * plus the first `sink` tokens; 0 = full causal attention; masks may be NULL
 * for all-full). Writes fp32 logits at the `npos` positions `positions`
 * (same for every sequence) into logits[batch][npos][vocab]. The message
 * of a failure is in bosch_torch_model_last_error(m). */
BOSCH_TORCH_API int bosch_torch_model_forward(bosch_torch_model *m, const int32_t *tokens,
                                              size_t batch, size_t len, const uint8_t *masks,
                                              uint32_t window, uint32_t sink,
                                              const int32_t *positions, size_t npos,
                                              float *logits);

/* ------------------------------------------------------------------------ */
/* Generation through a hybrid KV cache                                      */
/* ------------------------------------------------------------------------ */
/* What bosch_torch_generate held and took. */
struct bosch_torch_generation {
    size_t struct_size;     /* sizeof(struct bosch_torch_generation) */
    uint64_t kv_bytes;      /* keys and values held: every position of the full
                             * units, sink + window of the sliding ones */
    uint64_t kv_bytes_full; /* a full cache of the same capacity */
    double prefill_seconds, decode_seconds;
    uint32_t new_tokens;
};

/* Greedy continuation of `prompt` (n_prompt ids) under a unit mask (`units`
 * bytes, nonzero = SWA with `window` + `sink`; NULL = all full): the prompt
 * runs once, then each new token is one step through a KV cache in which
 * every (layer, KV group) keeps either every position (full) or only its
 * sink and last `window` positions (sliding), so the memory held is what
 * the mask says; each step's logits are the masked forward's over the whole
 * sequence (bosch_torch_model_forward), up to rounding. Stops after
 * `max_new` tokens or a token of `stop` (kept; bosch_tokenizer_stop_ids
 * gives the stop list of RULER's match metric). out: max_new ids; *n_out
 * the count. `info` (may be NULL; struct_size set) receives the bytes and
 * times. BOSCH_E_INVALID for bad arguments, n_prompt + max_new above the
 * config's max_position_embeddings among them, before any forward (message
 * in bosch_torch_model_last_error), BOSCH_E_NOMEM, BOSCH_E_EVALUATOR. A
 * layer the config makes sliding (bosch_torch_model_layer_sliding) keeps
 * the config's window and no sink, whatever the mask says. */
BOSCH_TORCH_API int bosch_torch_generate(bosch_torch_model *m, const uint8_t *mask, size_t units,
                                         uint32_t window, uint32_t sink, const int32_t *prompt,
                                         size_t n_prompt, uint32_t max_new, const int32_t *stop,
                                         size_t n_stop, int32_t *out, size_t *n_out,
                                         struct bosch_torch_generation *info);
/* The reference bosch_torch_generate must reproduce: the same greedy
 * continuation (same arguments, same stop rule), each token from the masked
 * forward over the whole sequence (bosch_torch_model_forward), no cache.
 * Costs a whole forward per token; for checks and tests. */
BOSCH_TORCH_API int bosch_torch_generate_reference(bosch_torch_model *m, const uint8_t *mask,
                                                   size_t units, uint32_t window, uint32_t sink,
                                                   const int32_t *prompt, size_t n_prompt,
                                                   uint32_t max_new, const int32_t *stop,
                                                   size_t n_stop, int32_t *out, size_t *n_out);

/* ------------------------------------------------------------------------ */
/* Tasks: token sequences with answer spans                                  */
/* ------------------------------------------------------------------------ */
/* A sample is a prompt (token ids) followed by an answer span; it is scored
 * by greedy exact match of the answer tokens, or by their mean
 * log-probability under teacher forcing. */
enum bosch_torch_metric {
    BOSCH_TORCH_METRIC_EXACT = 0,  /* share of samples whose answer is reproduced exactly */
    BOSCH_TORCH_METRIC_LOGPROB = 1, /* mean log-probability of the answer tokens */
    /* RULER's scoring, for tasks made from text: the prompt is continued
     * greedily by the sample's max_new_tokens (stopping at a special token),
     * decoded, and scored by the share of its answer strings it contains
     * (bosch_text_match_all). The prompts run once, then each new token is
     * one step through a hybrid KV cache that keeps what the mask lets each
     * unit see (BOSCH_TORCH_GENERATE=recompute: each token re-runs the whole
     * sequence, the earlier path); no prefix cache. */
    BOSCH_TORCH_METRIC_MATCH = 2
};

/* Pre-tokenized tasks, one JSON object per line:
 *   {"prompt": [int, ...], "answer": [int, ...]}
 * Prompts (and answers) may differ in length: the evaluator and the static
 * scorers score each sample as if alone (see bosch_torch_evaluator_set_buckets). NULL
 * on failure (bosch_torch_create_error() gives the line number for bad
 * data: BOSCH_E_INVALID; BOSCH_E_IO when the file cannot be read). */
BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_read_jsonl(const char *path);
/* Synthetic needle-in-a-haystack task. Token ids 0, 1, 2 are the markers
 * KEY, VAL and QRY; filler tokens are uniform in [3, vocab). Each prompt of
 * `context` tokens holds `needles` needles "KEY k_1..k_K VAL v_1..v_V"
 * (K = key_len, V = value_len, random tokens) at depths drawn uniformly in
 * [depth_min, depth_max] (fractions of the context), and ends with the query
 * "QRY k_1..k_K VAL" of one of them; the answer is its value tokens. Use
 * different seeds for calibration and held-out sets. NULL for impossible
 * parameters (bosch_torch_create_error() says which, BOSCH_E_INVALID). */
BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_create_niah(
    uint32_t vocab, uint32_t context, uint32_t samples, uint32_t needles, uint32_t key_len,
    uint32_t value_len, double depth_min, double depth_max, uint64_t seed);
/* The same task drawn from real vocabulary rows: filler, key and value
 * tokens are uniform over the `n_filler` ids of `filler` (distinct, >= 0;
 * e.g. a tokenizer's ordinary tokens, without special or unused rows), and
 * the markers KEY, VAL and QRY are the ids key_marker, value_marker and
 * query_marker (distinct, not in `filler`). The random draws are those of
 * bosch_torch_task_create_niah with the list in place of [3, vocab), so the
 * list {3, ..., vocab-1} with markers 0, 1, 2 gives its task exactly. Ids
 * are checked against a model by the evaluator. NULL for impossible
 * parameters (BOSCH_E_INVALID, naming which). */
BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_create_niah_ids(
    const int32_t *filler, size_t n_filler, int32_t key_marker, int32_t value_marker,
    int32_t query_marker, uint32_t context, uint32_t samples, uint32_t needles, uint32_t key_len,
    uint32_t value_len, double depth_min, double depth_max, uint64_t seed);
/* A text task (libbosch-text: JSON Lines with "text"/"messages", or
 * bosch_text_ruler_create) encoded with `tok`: each prompt is rendered
 * (bosch_text_task_prompt with `chat_flags`, enum bosch_chat_flags; 0 =
 * Qwen3's non-thinking generation prompt) and encoded with its chat markup as
 * special ids; the answer is bosch_text_task_target encoded as plain text
 * (the LOGPROB and EXACT metrics score it); the answer strings and
 * max_new_tokens are kept for BOSCH_TORCH_METRIC_MATCH. The task keeps `tok`
 * by reference: it must outlive the task (the text task need not). NULL on
 * failure (bosch_torch_create_error()). */
BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_from_text(const bosch_text_task *text,
                                                             const bosch_tokenizer *tok,
                                                             unsigned chat_flags);
/* Writes the task as JSON Lines (the format read above). BOSCH_E_INVALID for
 * NULL arguments, BOSCH_E_IO when the file cannot be written; the task is
 * read-only here, so there is no message. */
BOSCH_TORCH_API int bosch_torch_task_write_jsonl(const bosch_torch_task *t, const char *path);
BOSCH_TORCH_API size_t bosch_torch_task_samples(const bosch_torch_task *t);
/* Length in tokens of the longest prompt (of every prompt, when they are
 * of one length); 0 for NULL or empty. */
BOSCH_TORCH_API size_t bosch_torch_task_prompt_len(const bosch_torch_task *t);
/* Prompt length of sample i; 0 for NULL or i out of range. */
BOSCH_TORCH_API size_t bosch_torch_task_prompt_len_of(const bosch_torch_task *t, size_t i);
/* Sample i, lent (valid while the task lives; any pointer may be NULL):
 * its prompt and answer ids, and the tokens the match metric generates for
 * it at most (a text task's max_new_tokens, else the answer's length + 16).
 * BOSCH_E_INVALID for a NULL task or i out of range. */
BOSCH_TORCH_API int bosch_torch_task_sample(const bosch_torch_task *t, size_t i,
                                            const int32_t **prompt, size_t *n_prompt,
                                            const int32_t **answer, size_t *n_answer,
                                            uint32_t *max_new);
/* The tokenizer a text task was encoded with (lent: the caller's, kept by
 * reference); NULL for a task of ids or a NULL task. */
BOSCH_TORCH_API const bosch_tokenizer *bosch_torch_task_tokenizer(const bosch_torch_task *t);
/* NULL is a no-op. */
BOSCH_TORCH_API void bosch_torch_task_free(bosch_torch_task *t);

/* ------------------------------------------------------------------------ */
/* Evaluator: model + task, ready to plug into the optimizer                 */
/* ------------------------------------------------------------------------ */
/* Scores masks of `m` on `t` with sliding windows of `window` tokens plus
 * `sink` sink tokens, by `metric` (enum bosch_torch_metric). Checks the task
 * against the model (tokens in [0, vocab), non-empty prompts and answers;
 * prompts of any length) and window >= 1. NULL on failure
 * (bosch_torch_create_error()). (Named _open because
 * bosch_torch_evaluator_create, deprecated, keeps its old signature.) */
BOSCH_TORCH_API bosch_torch_evaluator *bosch_torch_evaluator_open(bosch_torch_model *m,
                                                                  const bosch_torch_task *t,
                                                                  uint32_t window, uint32_t sink,
                                                                  int metric);
/* NULL is a no-op. */
BOSCH_TORCH_API void bosch_torch_evaluator_free(bosch_torch_evaluator *e);
/* Candidates scored per forward pass (default 1; K candidates x all samples
 * go into one batch). BOSCH_E_INVALID (and a message) for 0. */
BOSCH_TORCH_API int bosch_torch_evaluator_set_batch(bosch_torch_evaluator *e,
                                                    uint32_t candidates);
/* Length buckets for prompts of different lengths. Each sample's sequence
 * is right-padded to the longest of its bucket; causal attention keeps pads
 * from influencing real positions (SWA windows are relative, RoPE positions
 * start at 0 in every row), so every setting gives each sample's score as if
 * it were scored alone, up to floating-point rounding. `buckets`:
 *   1     one bucket: every sample padded to the task's longest (one
 *         forward per batch of candidates)
 *   n>=2  at most n buckets of consecutive lengths, chosen to minimise the
 *         padded tokens (fewer when that costs no padding; tasks of one
 *         length always use one); one forward per bucket
 *   0     the default, 8 buckets (docs/torch.md, "Prompts of any length",
 *         has the bench_buckets figures; on a shared CPU they did not
 *         settle which policy is faster); one bucket on tasks of one length.
 * Drops the prefix cache (rebuilt on the next evaluation). BOSCH_OK, or
 * BOSCH_E_NOMEM / BOSCH_E_EVALUATOR with the message in
 * bosch_torch_evaluator_last_error(). */
BOSCH_TORCH_API int bosch_torch_evaluator_set_buckets(bosch_torch_evaluator *e, uint32_t buckets);
/* Prefix cache on/off (default on): hidden states below the lowest layer
 * whose mask differs from the all-full reference are computed once. */
BOSCH_TORCH_API int bosch_torch_evaluator_set_prefix_cache(bosch_torch_evaluator *e, int on);
/* The reference of the prefix cache (`units` bytes, nonzero = SWA, units =
 * layers x kv_heads; NULL = all full, the default): the cache holds the
 * reference's hidden states, and a candidate starts at the highest cached
 * layer not above the first layer where it differs from the reference.
 * Scores do not change (up to the kernels' rounding); work does. Set it to
 * the search's incumbent so that its neighbours skip the layers below
 * their first change; each call drops the cache, which the next evaluation
 * rebuilds (one forward of the task through the cached layers). The mask
 * is copied. BOSCH_OK, or BOSCH_E_INVALID (NULL evaluator, or `units` not
 * the model's, with the message in bosch_torch_evaluator_last_error()).
 * Same thread rules as the other setters. */
BOSCH_TORCH_API int bosch_torch_evaluator_set_reference(bosch_torch_evaluator *e,
                                                        const uint8_t *mask, size_t units);
/* What identifies a model's scores: "xxh3:<config>-<weights>", hashes of
 * the config fields the forward reads and of every weight tensor (name,
 * dtype, shape, bytes) as stored; the same weights sharded differently, or
 * a config.json laid out differently, give the same identity. Valid while
 * the model lives; "" for NULL. */
BOSCH_TORCH_API const char *bosch_torch_model_identity(const bosch_torch_model *m);
/* Sets the run identity of `opt` (bosch_set_run_identity) to what changes
 * this evaluator's scores: torch.model (bosch_torch_model_identity),
 * torch.task (a hash of every sample's prompt, answer and answer strings,
 * and the sample count), torch.metric, torch.window, torch.sink and
 * torch.dtype, and torch.screen_task (the same hash) when a screen task is
 * set. With a journal, a resume with another model, task, metric,
 * window, sink or dtype is then BOSCH_E_MISMATCH naming the key. The
 * device is not part of it (a run may resume on another machine). Before
 * the run starts; the status of bosch_set_run_identity. */
BOSCH_TORCH_API int bosch_torch_evaluator_identify(const bosch_torch_evaluator *e,
                                                   bosch_optimizer *opt);
/* What this evaluator evaluates, for an MPI job's check that its ranks
 * agree (struct bosch_mpi_evaluator's `identity`, bosch/mpi.h): lines of
 * "key=value" separated by '\n' - the run identity's keys
 * (bosch_torch_evaluator_identify) and what decides a score's rounding:
 * torch.forward_samples, torch.batch, torch.buckets, torch.prefix_cache,
 * torch.last_layer (BOSCH_TORCH_LAST_LAYER) and torch.attention
 * (BOSCH_TORCH_ATTENTION, or the fused kernel of this libtorch). Not the
 * device. `evaluator` is a bosch_torch_evaluator (the signature of a
 * bosch_mpi_identity_fn: pass the evaluator as its `user`). The text lives
 * in the evaluator until the next call or its free; NULL for NULL or out
 * of memory. Same thread rules as the setters (the model's lock is
 * taken). */
BOSCH_TORCH_API const char *bosch_torch_evaluator_identity(void *evaluator);
/* Scores n masks (bosch_batch_eval_fn signature; pass the evaluator as
 * `user`): bosch_set_batch_evaluator(opt, bosch_torch_batch_eval, e). The
 * message of a failure is in bosch_torch_evaluator_last_error(e). */
BOSCH_TORCH_API int bosch_torch_batch_eval(const uint8_t *masks, size_t n, size_t units,
                                           double *scores, void *evaluator);
/* Scores n requests (bosch_request_batch_eval_fn signature; pass the
 * evaluator as `user`): bosch_set_request_batch_evaluator(opt,
 * bosch_torch_request_batch_eval, e), for multi-fidelity screening and
 * confirmation draws. Request i at fidelity f in (0, 1] is scored on
 * k = max(1, ceil(f * samples)) samples: those from sample
 * (draws[i] * k) mod samples on, cyclically, so the draws of a screened
 * candidate see different samples. At f = 1 every draw scores the whole
 * task, the same score (the model is deterministic). With a screen task
 * (bosch_torch_evaluator_set_screen_task), a request at f < 1 is scored on
 * every sample of the screen task instead. BOSCH_E_INVALID for a
 * fidelity outside (0, 1]; failures as bosch_torch_batch_eval. */
BOSCH_TORCH_API int bosch_torch_request_batch_eval(const uint8_t *masks, const double *fidelity,
                                                   const uint32_t *draws, size_t n,
                                                   size_t units, double *scores,
                                                   void *evaluator);
/* Length as a fidelity: requests below fidelity 1 (the optimizer's
 * screen_fidelity, bosch_set_screen_fidelity) are scored on every sample of
 * `screen` instead of a share of the evaluator's own samples, so a
 * candidate is screened on the same needles, questions and answers in a
 * shorter haystack (a RULER task generated with the same seed and samples
 * at a shorter context: bosch_torch_checkpoint_task_at, or
 * bosch_text_ruler_create). Requests at fidelity 1, bosch_torch_batch_eval
 * and the noise stay on the evaluator's task. `screen` is checked against
 * the task: as many samples, each with the same answers, none with a longer
 * prompt, fewer tokens in all; else BOSCH_E_INVALID naming the sample (the
 * message in bosch_torch_evaluator_last_error), and nothing changes. The
 * screen evaluator takes this one's settings now (batch, buckets, prefix
 * cache and its reference, forward bounds, last layer) and follows the
 * setters called later. Its digest enters the run identity as
 * torch.screen_task (bosch_torch_evaluator_identify; MPI ranks must agree
 * on it). Set the optimizer's screen_fidelity to the screen task's cost
 * relative to the task's (e.g. its share of the tokens): the budget counts
 * a screened request at that fidelity. `screen` is borrowed: it must
 * outlive the evaluator or the next call; NULL removes it. Same thread
 * rules as the other setters. */
BOSCH_TORCH_API int bosch_torch_evaluator_set_screen_task(bosch_torch_evaluator *e,
                                                          const bosch_torch_task *screen);
/* At most `samples` samples of a candidate in one forward pass (0, the
 * default: a whole length bucket, within the device's token bound,
 * BOSCH_TORCH_FORWARD_TOKENS). Forwards of other sizes round differently
 * (the CPU's matrix kernels too), so with 1 every sample is computed in a
 * forward of its own, padded to its bucket's length, and its value is the
 * same bit for bit whichever samples a request is scored on: a request
 * scored in parts (bosch_torch_sample_eval, MPI ranks) then gives exactly
 * its whole score. Drops the prefix cache (its forwards follow the same
 * cut). BOSCH_OK; BOSCH_E_INVALID for NULL. */
BOSCH_TORCH_API int bosch_torch_evaluator_set_forward_samples(bosch_torch_evaluator *e,
                                                              uint32_t samples);
/* A request's score is the mean of its samples' values (per sample: the
 * metric's 0/1, mean log-probability or match share), added one by one in
 * double in ascending sample order, then divided by their count; so a
 * request may be scored in parts. The samples a request at `fidelity` is
 * scored on (k above); 0 for NULL or a fidelity outside (0, 1]. Matches
 * libbosch-mpi's bosch_mpi_sample_count_fn. */
BOSCH_TORCH_API size_t bosch_torch_request_samples(double fidelity, void *evaluator);
/* The values of samples [first, first + count) of one request (its k
 * samples in ascending order, as above) into values[0 .. count): added in
 * that order after the values of samples [0, first), divided by k, they
 * give bosch_torch_request_batch_eval's score: bit for bit with one
 * sample per forward (bosch_torch_evaluator_set_forward_samples), else up
 * to the rounding of forwards of another size. Matches
 * libbosch-mpi's bosch_mpi_sample_eval_fn. BOSCH_E_INVALID for a range
 * outside [0, k), a bad fidelity or units; failures as
 * bosch_torch_batch_eval. */
BOSCH_TORCH_API int bosch_torch_sample_eval(const uint8_t *mask, double fidelity, uint32_t draw,
                                            size_t first, size_t count, size_t units,
                                            double *values, void *evaluator);
/* The evaluator's numerical noise: how far its scores move by rounding
 * alone. Measured on the first call (then kept): the two anchors (all
 * units full, all SWA) are scored through the evaluator's attention kernels
 * and again through the other attention path (the masked reference: every
 * unit over all causal keys, the window as a mask; the kernels when
 * BOSCH_TORCH_ATTENTION=masked), every layer recomputed; *noise = 2 x the
 * sum of the two disagreements + 4 f32 ulps of the larger anchor. Pass it
 * to bosch_set_anchor_tolerance: anchors that differ by no more than this
 * would normalise every score by rounding error (the bosch command does so).
 * Costs four evaluations of the whole task. BOSCH_OK; BOSCH_E_INVALID for
 * NULL arguments; failures as bosch_torch_batch_eval (message in
 * bosch_torch_evaluator_last_error). Not concurrently with other calls on
 * the same evaluator's model (they share its lock). */
BOSCH_TORCH_API int bosch_torch_evaluator_noise(bosch_torch_evaluator *e, double *noise);
/* Message of the last failure of this evaluator: of the last
 * bosch_torch_batch_eval() ("" after one that succeeded), or of a later
 * failing setter. "" if none, or for NULL. Owned by the evaluator; valid
 * until the next call on it. */
BOSCH_TORCH_API const char *bosch_torch_evaluator_last_error(const bosch_torch_evaluator *e);

/* ------------------------------------------------------------------------ */
/* Checkpoint directory: model, tokenizer, bosch.json and task in one call   */
/* ------------------------------------------------------------------------ */
/* A model directory opened the way the bosch command opens it: the model
 * (config.json and weights), its tokenizer, the settings its bosch.json
 * suggests, and the task to score on. The checkpoint owns all of them; the
 * getters lend them (valid until bosch_torch_checkpoint_free). Open an
 * evaluator on its model and task (bosch_torch_evaluator_open) with the
 * suggested window, sink and metric, or your own.
 *
 * bosch.json (optional; any other key is an error, so a typo is not a
 * silent default):
 *   {"calib": "calib.jsonl", "heldout": "heldout.jsonl",
 *    "heldout_multi": FILE, "heldout_two_hop": FILE,
 *    "window": 32, "sink": 4, "metric": "exact"|"logprob", "budget": 300}
 * Task files are relative to the directory (absolute paths are kept). */
typedef struct bosch_torch_checkpoint bosch_torch_checkpoint;

/* Which of bosch.json's tasks is the default: calibration (search and
 * baselines) or held-out (evaluation of a selection). */
enum bosch_torch_task_role { BOSCH_TORCH_TASK_CALIB = 0, BOSCH_TORCH_TASK_HELDOUT = 1 };

struct bosch_torch_checkpoint_params {
    size_t struct_size;    /* sizeof(struct bosch_torch_checkpoint_params) */
    const char *device;    /* as bosch_torch_model_open_device ("auto") */
    int dtype;             /* enum bosch_torch_dtype (AUTO) */
    const char *tokenizer; /* a tokenizer.json; NULL: DIR/tokenizer.json when present */
    /* NULL: bosch.json's task for `role`, else the built-in NIAH;
     * "niah": the built-in NIAH; "ruler:NAME": a RULER task as text
     * (bosch_text_ruler_create, needs a tokenizer); anything else a JSON
     * Lines file, of token ids (bosch_torch_task_read_jsonl) or of text
     * ("text"/"messages" lines, encoded with the tokenizer). */
    const char *task;
    int role;              /* enum bosch_torch_task_role (CALIB) */
    /* Generated tasks (NIAH and RULER): prompt length in tokens (1024),
     * samples (8), NIAH needles per prompt (1), key and value tokens (2,
     * 2), seed (0). samples x context is at most 2^26 tokens. */
    uint32_t context, samples, needles, key_len, value_len;
    uint64_t seed;
};
/* Fills the defaults above. */
BOSCH_TORCH_API void bosch_torch_checkpoint_params_init(struct bosch_torch_checkpoint_params *p);

/* Opens `dir` with `p` (NULL: the defaults). The built-in NIAH draws its
 * filler, key and value tokens from the tokenizer's ordinary tokens below
 * the model's vocabulary (bosch_tokenizer_is_ordinary, from id 3), markers
 * 0, 1, 2; without a tokenizer, from the ids between 3 and the lowest of
 * config.json's bos/eos/pad token ids (Qwen3: 151643; the rows above are
 * special or unused), or from [3, vocab) when it names none below the
 * vocabulary or the lowest is under 5 (bosch_torch_task_create_niah). NULL
 * on failure, with bosch_torch_create_error() naming what failed: "cannot
 * load the model in DIR: ...", "DIR/bosch.json: ...", "tokenizer FILE:
 * ...", "task T: ..." (BOSCH_E_IO for an unreadable file, BOSCH_E_INVALID
 * for bad data or parameters, BOSCH_E_NOMEM). */
BOSCH_TORCH_API bosch_torch_checkpoint *
bosch_torch_checkpoint_open(const char *dir, const struct bosch_torch_checkpoint_params *p);
/* NULL is a no-op. Frees the model, tokenizer and task it lent. */
BOSCH_TORCH_API void bosch_torch_checkpoint_free(bosch_torch_checkpoint *c);
/* What it holds, lent (NULL for a NULL checkpoint; the tokenizer is NULL
 * when there is none). The model is not const: forwards and evaluators use
 * it (one thread at a time, as any model). */
BOSCH_TORCH_API bosch_torch_model *bosch_torch_checkpoint_model(const bosch_torch_checkpoint *c);
BOSCH_TORCH_API const bosch_tokenizer *
bosch_torch_checkpoint_tokenizer(const bosch_torch_checkpoint *c);
BOSCH_TORCH_API const bosch_torch_task *
bosch_torch_checkpoint_task(const bosch_torch_checkpoint *c);
/* What was chosen, as text owned by the checkpoint ("" for NULL):
 *   _dir        the directory as given
 *   _task_source  "niah" (the built-in), "ruler:NAME", or the task file's
 *                 path (bosch.json's resolved against the directory)
 *   _tokenizer_path  the tokenizer file, "" when there is none
 *   _describe   the model: "f32 on cpu, 3.4 MiB of parameters, 2 CPU
 *               threads", then "; MoE: E experts (K per token) in N of L
 *               layers" and "; config: layers 1,3 slide over W tokens
 *               (fixed SWA)" where they apply */
BOSCH_TORCH_API const char *bosch_torch_checkpoint_dir(const bosch_torch_checkpoint *c);
BOSCH_TORCH_API const char *bosch_torch_checkpoint_task_source(const bosch_torch_checkpoint *c);
BOSCH_TORCH_API const char *
bosch_torch_checkpoint_tokenizer_path(const bosch_torch_checkpoint *c);
BOSCH_TORCH_API const char *bosch_torch_checkpoint_describe(const bosch_torch_checkpoint *c);
/* The checkpoint's task rendered at another, shorter prompt length: the
 * same generator, seed and samples at `context` tokens, so the same
 * needles, questions and answers in a shorter haystack (for
 * bosch_torch_evaluator_set_screen_task). Only a RULER task ("ruler:NAME")
 * can be: its samples are drawn from the seed before their haystack is
 * fitted to the length. NULL with bosch_torch_create_error() naming why for
 * any other task (a task file's prompts are fixed; the built-in NIAH draws
 * its needles with its haystack), a context not below the task's, or a
 * failure of the generator. The caller owns the task (bosch_torch_task_free)
 * and frees it after the evaluators that borrow it and before the
 * checkpoint (a text task borrows its tokenizer). */
BOSCH_TORCH_API bosch_torch_task *bosch_torch_checkpoint_task_at(const bosch_torch_checkpoint *c,
                                                                uint32_t context);
/* A task file read as the checkpoint reads its own: JSON Lines of token ids,
 * or of text encoded with the checkpoint's tokenizer (e.g. the same samples
 * rendered shorter, for bosch_torch_evaluator_set_screen_task). NULL with
 * bosch_torch_create_error() naming the file and why. The caller owns the
 * task and frees it after the evaluators that borrow it and before the
 * checkpoint (a text task borrows its tokenizer). */
BOSCH_TORCH_API bosch_torch_task *bosch_torch_checkpoint_read_task(const bosch_torch_checkpoint *c,
                                                                  const char *path);
/* A number bosch.json suggests: "window", "sink", "budget" or "metric"
 * (enum bosch_torch_metric). 1 with *value set when suggested, 0 when not
 * (*value untouched); BOSCH_E_INVALID for a NULL argument or another key. */
BOSCH_TORCH_API int bosch_torch_checkpoint_suggested(const bosch_torch_checkpoint *c,
                                                     const char *key, int64_t *value);
/* A task file bosch.json suggests: "calib", "heldout", "heldout_multi" or
 * "heldout_two_hop", as a path (resolved against the directory) owned by
 * the checkpoint; NULL when not suggested, for a NULL argument or another
 * key. */
BOSCH_TORCH_API const char *bosch_torch_checkpoint_suggested_file(const bosch_torch_checkpoint *c,
                                                                  const char *key);

/* ------------------------------------------------------------------------ */
/* Static head-level scores (the baselines BOSCH is compared with)           */
/* ------------------------------------------------------------------------ */
/* Each scorer measures, on the task's prompts with full attention, how much
 * a query head needs attention beyond the window; higher = more important =
 * keep full (the convention of bosch_baseline_static / _static_heads).
 *   LOCALITY        1 - share of the head's attention mass that falls inside
 *                   the sliding window + sink, averaged over every query
 *                   position t >= window of every prompt
 *   RETRIEVAL       share of answer tokens (teacher-forced, each predicted at
 *                   the position before it) for which the head's top-1
 *                   attention lies on a prompt token equal to that answer
 *                   token outside the window (the token being copied);
 *                   Wu et al.'s retrieval score
 *   ECHO_INDUCTION  RazorAttention: on sequences of random tokens repeated
 *                   twice (each half of the sample's prompt length, a fixed internal
 *                   seed), the mean attention a query in the second copy puts
 *                   on the earlier occurrence of its own token (echo) plus on
 *                   the token after it (induction)
 *   FISHER          squared gradient of the answer tokens' negative
 *                   log-likelihood with respect to a per-unit gate g that
 *                   mixes the unit's outputs as g * full + (1 - g) * SWA,
 *                   at g = 1, averaged over samples (one score per unit,
 *                   copied to each of its query heads)
 *   DUO_ON_THE_FLY  NVIDIA kvpress's DuoAttention on-the-fly score
 *                   (duo_attention_on_the_fly), on the task's prompts: per
 *                   layer, the head's normed query and its KV head's normed
 *                   key averaged over the prompt's positions, both repeated
 *                   over 500 positions with RoPE; the mean over those
 *                   positions of the cumulative attention of the last query
 *                   (high when its mass sits on distant positions), averaged
 *                   over samples. Window and sink are not used. Its unit
 *                   score is the mean over the unit's heads, as in kvpress.
 * Single-unit ablation needs evaluations, not statistics: score each unit
 * alone SWA with the evaluator and pass the drops to bosch_baseline_static. */
enum bosch_torch_scorer {
    BOSCH_TORCH_SCORER_LOCALITY = 0,
    BOSCH_TORCH_SCORER_RETRIEVAL = 1,
    BOSCH_TORCH_SCORER_ECHO_INDUCTION = 2,
    BOSCH_TORCH_SCORER_FISHER = 3,
    BOSCH_TORCH_SCORER_DUO_ON_THE_FLY = 4
};
/* "locality", "retrieval", "echo-induction", "fisher", "duo-on-the-fly";
 * NULL for others. */
BOSCH_TORCH_API const char *bosch_torch_scorer_name(int scorer);
/* Computes a scorer on every sample of `t`, one sample at a time, so prompts
 * may differ in length: the statistics are pooled over all samples' query
 * positions (LOCALITY, ECHO_INDUCTION) or answer tokens (RETRIEVAL), FISHER
 * averages over samples; ECHO_INDUCTION's sequences take each sample's own
 * prompt length (attention is materialised per
 * sample: memory ~ heads x prompt_len^2 x 4 bytes). head_scores (may be NULL)
 * receives layers x kv_groups x heads_per_group values in query-head order
 * (head h of layer l at l * query_heads + h); unit_scores (may be NULL)
 * receives layers x kv_groups values, the maximum over each unit's query
 * heads (a unit can only go SWA if none of its heads needs the far past;
 * DUO_ON_THE_FLY: the mean).
 * Deterministic for a given model, task and arguments. The model is locked
 * for the duration, like a forward. On failure the outputs are untouched and
 * the message is in bosch_torch_model_last_error(m) (BOSCH_E_BAD_SCORE for a
 * non-finite score). */
BOSCH_TORCH_API int bosch_torch_model_scores(bosch_torch_model *m, const bosch_torch_task *t,
                                             int scorer, uint32_t window, uint32_t sink,
                                             double *head_scores, double *unit_scores);

/* ------------------------------------------------------------------------ */
/* Pre-1.0 names, kept until 1.0                                             */
/* ------------------------------------------------------------------------ */
/* EXPERIMENTAL TIER (docs/abi.md): deprecated and not promised; visible only
 * with BOSCH_EXPERIMENTAL_API defined, symbols in the version node
 * LIBBOSCH_TORCH_EXPERIMENTAL_0. */
#if defined(BOSCH_EXPERIMENTAL_API) && !defined(BOSCH_TORCH_H_EXPERIMENTAL)
#define BOSCH_TORCH_H_EXPERIMENTAL
/* Each returns a status, sets *out (NULL on failure) where it has one, and
 * writes a NUL-terminated message into `err` (err_len bytes, truncated;
 * may be NULL): the reason on failure (the text of the replacement's
 * message, without its "<function>: " prefix), "" on success. Failures of
 * the creators are recorded for bosch_torch_create_error() too (under the
 * old name); bosch_torch_forward and bosch_torch_scores set the model's last
 * error like their replacements. */
BOSCH_TORCH_API BOSCH_TORCH_DEPRECATED("bosch_torch_model_open") int bosch_torch_model_load(
    const char *dir, int device, int dtype, bosch_torch_model **out, char *err, size_t err_len);
BOSCH_TORCH_API BOSCH_TORCH_DEPRECATED("bosch_torch_model_forward") int bosch_torch_forward(
    bosch_torch_model *m, const int32_t *tokens, size_t batch, size_t len, const uint8_t *masks,
    uint32_t window, uint32_t sink, const int32_t *positions, size_t npos, float *logits,
    char *err, size_t err_len);
BOSCH_TORCH_API BOSCH_TORCH_DEPRECATED("bosch_torch_task_read_jsonl") int
bosch_torch_task_load_jsonl(const char *path, bosch_torch_task **out, char *err, size_t err_len);
BOSCH_TORCH_API BOSCH_TORCH_DEPRECATED("bosch_torch_task_create_niah") int bosch_torch_task_niah(
    uint32_t vocab, uint32_t context, uint32_t samples, uint32_t needles, uint32_t key_len,
    uint32_t value_len, double depth_min, double depth_max, uint64_t seed, bosch_torch_task **out,
    char *err, size_t err_len);
BOSCH_TORCH_API BOSCH_TORCH_DEPRECATED("bosch_torch_evaluator_open") int
bosch_torch_evaluator_create(bosch_torch_model *m, const bosch_torch_task *t, uint32_t window,
                             uint32_t sink, int metric, bosch_torch_evaluator **out, char *err,
                             size_t err_len);
BOSCH_TORCH_API BOSCH_TORCH_DEPRECATED("bosch_torch_model_scores") int bosch_torch_scores(
    bosch_torch_model *m, const bosch_torch_task *t, int scorer, uint32_t window, uint32_t sink,
    double *head_scores, double *unit_scores, char *err, size_t err_len);
#endif /* BOSCH_EXPERIMENTAL_API */

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_TORCH_H */
