/*
 * libbosch-torch: the libtorch backend. Loads a Qwen3 checkpoint in the
 * Hugging Face layout and scores unit masks on long-context retrieval tasks,
 * so that libbosch can select sliding-window heads of a real model.
 *
 * A separate library (libbosch-torch.so.0) that depends on libbosch; the
 * core never depends on it. C API only: no C++ type or exception crosses
 * this boundary. Every function returns a status (enum bosch_error) and,
 * where given, writes a NUL-terminated message into `err` (err_len bytes).
 *
 * Threads: a model may be used by one thread at a time (its forward uses
 * libtorch's own intra-op threads). Tasks are immutable after creation and
 * may be shared. An evaluator holds a model and a task by reference: both
 * must outlive it.
 */
#ifndef BOSCH_TORCH_H
#define BOSCH_TORCH_H

#include "bosch/bosch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Export macro (its own: this is another shared object). A packager or a    */
/* static build may define it before including this header.                  */
/* BOSCH_TORCH_BUILDING is defined only while building libbosch-torch.       */
/* ------------------------------------------------------------------------ */
#ifndef BOSCH_TORCH_API
#if defined(BOSCH_TORCH_BUILDING) && defined(__GNUC__)
#define BOSCH_TORCH_API __attribute__((visibility("default")))
#else
#define BOSCH_TORCH_API
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

/* ------------------------------------------------------------------------ */
/* Model                                                                     */
/* ------------------------------------------------------------------------ */
/* Loads `dir`/config.json and `dir`/model.safetensors (or the shards listed
 * in `dir`/model.safetensors.index.json). Refuses, by name, architectures
 * other than Qwen3ForCausalLM and missing config fields. Tensors stored as
 * f32, bf16 or f16 are converted to `dtype`. */
BOSCH_TORCH_API int bosch_torch_model_load(const char *dir, int device, int dtype,
                                     bosch_torch_model **out, char *err, size_t err_len);
BOSCH_TORCH_API void bosch_torch_model_free(bosch_torch_model *m);
/* Shape: layers, KV heads per layer, query heads per KV head, vocabulary. */
BOSCH_TORCH_API int bosch_torch_model_shape(const bosch_torch_model *m, uint32_t *layers,
                                      uint32_t *kv_heads, uint32_t *heads_per_group,
                                      uint32_t *vocab);
/* A problem of the model's shape (target ratio 0.5), owned by the caller. */
BOSCH_TORCH_API bosch_problem *bosch_torch_model_problem(const bosch_torch_model *m);

/* One forward pass of `batch` sequences of `len` tokens, each with its own
 * unit mask (masks: batch x units bytes, 1 = that (layer, KV group) attends
 * to a sliding window of `window` tokens — itself and the window-1 before —
 * plus the first `sink` tokens; 0 = full causal attention; masks may be NULL
 * for all-full). Writes fp32 logits at the `npos` positions `positions`
 * (same for every sequence) into logits[batch][npos][vocab]. */
BOSCH_TORCH_API int bosch_torch_forward(bosch_torch_model *m, const int32_t *tokens, size_t batch,
                                  size_t len, const uint8_t *masks, uint32_t window,
                                  uint32_t sink, const int32_t *positions, size_t npos,
                                  float *logits, char *err, size_t err_len);

/* ------------------------------------------------------------------------ */
/* Tasks: token sequences with answer spans                                  */
/* ------------------------------------------------------------------------ */
/* A sample is a prompt (token ids) followed by an answer span; it is scored
 * by greedy exact match of the answer tokens, or by their mean
 * log-probability under teacher forcing. */
enum bosch_torch_metric {
    BOSCH_TORCH_METRIC_EXACT = 0,  /* share of samples whose answer is reproduced exactly */
    BOSCH_TORCH_METRIC_LOGPROB = 1 /* mean log-probability of the answer tokens */
};

/* Pre-tokenized tasks, one JSON object per line:
 *   {"prompt": [int, ...], "answer": [int, ...]}
 * All prompts of a task must have the same length (they are batched). */
BOSCH_TORCH_API int bosch_torch_task_load_jsonl(const char *path, bosch_torch_task **out, char *err,
                                          size_t err_len);
/* Synthetic needle-in-a-haystack task. Token ids 0, 1, 2 are the markers
 * KEY, VAL and QRY; filler tokens are uniform in [3, vocab). Each prompt of
 * `context` tokens holds `needles` needles "KEY k_1..k_K VAL v_1..v_V"
 * (K = key_len, V = value_len, random tokens) at depths drawn uniformly in
 * [depth_min, depth_max] (fractions of the context), and ends with the query
 * "QRY k_1..k_K VAL" of one of them; the answer is its value tokens. Use
 * different seeds for calibration and held-out sets. */
BOSCH_TORCH_API int bosch_torch_task_niah(uint32_t vocab, uint32_t context, uint32_t samples,
                                    uint32_t needles, uint32_t key_len, uint32_t value_len,
                                    double depth_min, double depth_max, uint64_t seed,
                                    bosch_torch_task **out, char *err, size_t err_len);
/* Writes the task as JSON Lines (the format read above). */
BOSCH_TORCH_API int bosch_torch_task_write_jsonl(const bosch_torch_task *t, const char *path);
BOSCH_TORCH_API size_t bosch_torch_task_samples(const bosch_torch_task *t);
/* Prompt length in tokens (equal for all samples); 0 for NULL or empty. */
BOSCH_TORCH_API size_t bosch_torch_task_prompt_len(const bosch_torch_task *t);
BOSCH_TORCH_API void bosch_torch_task_free(bosch_torch_task *t);

/* ------------------------------------------------------------------------ */
/* Evaluator: model + task, ready to plug into the optimizer                 */
/* ------------------------------------------------------------------------ */
BOSCH_TORCH_API int bosch_torch_evaluator_create(bosch_torch_model *m, const bosch_torch_task *t,
                                           uint32_t window, uint32_t sink, int metric,
                                           bosch_torch_evaluator **out, char *err,
                                           size_t err_len);
BOSCH_TORCH_API void bosch_torch_evaluator_free(bosch_torch_evaluator *e);
/* Candidates scored per forward pass (default 1; K candidates x all samples
 * go into one batch). */
BOSCH_TORCH_API int bosch_torch_evaluator_set_batch(bosch_torch_evaluator *e, uint32_t candidates);
/* Prefix cache on/off (default on): hidden states below the lowest layer
 * whose mask differs from the all-full reference are computed once. */
BOSCH_TORCH_API int bosch_torch_evaluator_set_prefix_cache(bosch_torch_evaluator *e, int on);
/* Scores n masks (bosch_batch_eval_fn signature; pass the evaluator as
 * `user`): bosch_set_batch_evaluator(opt, bosch_torch_batch_eval, e). */
BOSCH_TORCH_API int bosch_torch_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores,
                                     void *evaluator);
/* Message of the last failure of this evaluator ("" if none). */
BOSCH_TORCH_API const char *bosch_torch_evaluator_last_error(const bosch_torch_evaluator *e);

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
 *                   twice (each of the task's prompt length, a fixed internal
 *                   seed), the mean attention a query in the second copy puts
 *                   on the earlier occurrence of its own token (echo) plus on
 *                   the token after it (induction)
 *   FISHER          squared gradient of the answer tokens' negative
 *                   log-likelihood with respect to a per-unit gate g that
 *                   mixes the unit's outputs as g * full + (1 - g) * SWA,
 *                   at g = 1, averaged over samples (one score per unit,
 *                   copied to each of its query heads)
 * Single-unit ablation needs evaluations, not statistics: score each unit
 * alone SWA with the evaluator and pass the drops to bosch_baseline_static. */
enum bosch_torch_scorer {
    BOSCH_TORCH_SCORER_LOCALITY = 0,
    BOSCH_TORCH_SCORER_RETRIEVAL = 1,
    BOSCH_TORCH_SCORER_ECHO_INDUCTION = 2,
    BOSCH_TORCH_SCORER_FISHER = 3
};
/* "locality", "retrieval", "echo-induction", "fisher"; NULL for others. */
BOSCH_TORCH_API const char *bosch_torch_scorer_name(int scorer);
/* Computes a scorer on every sample of `t` (attention is materialised per
 * sample: memory ~ heads x prompt_len^2 x 4 bytes). head_scores (may be NULL)
 * receives layers x kv_heads x heads_per_group values in query-head order
 * (head h of layer l at l * query_heads + h); unit_scores (may be NULL)
 * receives layers x kv_heads values, the maximum over each unit's query
 * heads (a unit can only go SWA if none of its heads needs the far past).
 * Deterministic for a given model, task and arguments. The model is locked
 * for the duration, like a forward. */
BOSCH_TORCH_API int bosch_torch_scores(bosch_torch_model *m, const bosch_torch_task *t, int scorer,
                                 uint32_t window, uint32_t sink, double *head_scores,
                                 double *unit_scores, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_TORCH_H */
