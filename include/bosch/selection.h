/*
 * libbosch selection: the result file of a head selection (the "bosch-mask"
 * format, docs/result-format.md): a unit mask with the model shape, the
 * scores, the KV-cache saving, the settings it was made with and the
 * evaluation counts, read from and written to PREFIX.json, and written as a
 * DuoAttention-style TSV and an SVG heatmap; exported as a DuoAttention /
 * kvpress pattern directory and a Hugging Face config with per-layer
 * sliding windows.
 * Include <bosch/bosch.h> rather than this file.
 *
 * Ownership: whoever creates a bosch_selection (create, from_result,
 * read_json) frees it with bosch_selection_free(). Every string and array
 * passed in is copied; strings returned are owned by the selection and stay
 * valid until the field is set again or the selection is freed.
 * Threads: a selection may be used by one thread at a time (writing one
 * records its last error in it); different selections are independent.
 * Errors: functions on a selection return a status (enum bosch_error) and
 * keep a message in bosch_selection_last_error(); creators return NULL and
 * say why through bosch_create_status() / bosch_create_error().
 */
#ifndef BOSCH_SELECTION_H
#define BOSCH_SELECTION_H

#include "bosch/bosch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bosch_selection: opaque type declared in <bosch/bosch.h>. */

/* The "format" member of every file, and the newest format_version this
 * library writes and reads. A reader refuses a larger format_version. */
#define BOSCH_SELECTION_FORMAT "bosch-mask"
#define BOSCH_SELECTION_FORMAT_VERSION 1

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */
/* ------------------------------------------------------------------------ */
/* An all-full selection of a model with `layers` layers, `kv_groups` KV
 * heads per layer and `heads_per_group` query heads per KV head, with no
 * other field set. NULL on an invalid shape (any zero, or more than 2^24
 * units) or out of memory. */
BOSCH_API bosch_selection *bosch_selection_create(uint32_t layers, uint32_t kv_groups,
                                                  uint32_t heads_per_group);
/* A selection holding a search result: shape of `p` (which must be the
 * problem the search ran on: same units and layers as `r`), the best mask,
 * method "bosch", status bosch_err_name(bosch_result_status(r)), target
 * ratio of `p`, the scores (raw, normalised, objective, both anchors; NaN
 * when unknown) and the evaluation counts per stage, in total and replayed.
 * The metric, model path, KV saving and settings are the caller's to add.
 * An infeasible result gives its mask and NaN scores, as bosch_result does. */
BOSCH_API bosch_selection *bosch_selection_from_result(const bosch_result *r,
                                                       const bosch_problem *p);
/* Reads a bosch-mask JSON file. NULL when the file cannot be read
 * (BOSCH_E_IO), is not a JSON object or has a member of a wrong type,
 * length or content (BOSCH_E_CORRUPT), has a format_version newer than
 * BOSCH_SELECTION_FORMAT_VERSION (BOSCH_E_MISMATCH), or memory runs out.
 * bosch_create_error() is then "bosch_selection_read_json: PATH: REASON",
 * REASON being the system's error text, "not a JSON object (malformed mask
 * file)", "malformed mask file: WHAT" (WHAT names the member) or
 * "unsupported format_version N (this libbosch reads up to V)". Members a
 * writer derives from the mask (head_mask, layer_ratios, swa_units, ratio,
 * kv_saving.fraction) are type-checked and otherwise recomputed; unknown
 * members are ignored. */
BOSCH_API bosch_selection *bosch_selection_read_json(const char *path);
/* NULL is a no-op. */
BOSCH_API void bosch_selection_free(bosch_selection *s);
/* Message of the last failed call on `s` ("" if none); owned by `s`. */
BOSCH_API const char *bosch_selection_last_error(const bosch_selection *s);

/* ------------------------------------------------------------------------ */
/* Shape and mask (1 = SWA, unit u = (layer u / kv_groups, group u % kv_groups)) */
/* ------------------------------------------------------------------------ */
/* 0 for NULL. */
BOSCH_API uint32_t bosch_selection_layers(const bosch_selection *s);
BOSCH_API uint32_t bosch_selection_kv_groups(const bosch_selection *s);
BOSCH_API uint32_t bosch_selection_heads_per_group(const bosch_selection *s);
BOSCH_API size_t bosch_selection_units(const bosch_selection *s); /* layers * kv_groups */
/* `mask` holds `units` bytes (bosch_selection_units); any non-zero byte is SWA. */
BOSCH_API int bosch_selection_set_mask(bosch_selection *s, const uint8_t *mask, size_t units);
BOSCH_API int bosch_selection_mask(const bosch_selection *s, uint8_t *out, size_t units);
BOSCH_API size_t bosch_selection_swa_units(const bosch_selection *s);
/* swa_units / units; NaN for NULL. */
BOSCH_API double bosch_selection_ratio(const bosch_selection *s);
/* SWA share of each layer; `out` has `layers` entries. */
BOSCH_API int bosch_selection_layer_ratios(const bosch_selection *s, double *out, size_t layers);

/* The overlap of the full (non-SWA) units of two selections of one shape,
 * as the paper compares selections across SWA ratios: the Jaccard index
 * |F_a ∩ F_b| / |F_a ∪ F_b| of their sets of full units, for each layer
 * (`per_layer`: `layers` entries, may be NULL) and over the model
 * (`overall`, may be NULL). Two empty sets (a layer all SWA in both) are
 * the same set: 1. BOSCH_E_INVALID (message on `a`) for a NULL selection,
 * shapes that differ (layers, KV groups, heads per group) or `layers` not
 * the selections'. */
BOSCH_API int bosch_selection_overlap(const bosch_selection *a, const bosch_selection *b,
                                      double *per_layer, size_t layers, double *overall);

/* ------------------------------------------------------------------------ */
/* Descriptive fields. A string getter returns NULL when the field is unset; */
/* a setter given NULL unsets it.                                            */
/* ------------------------------------------------------------------------ */
/* How the mask was made: "bosch", "baseline:KIND", ... */
BOSCH_API int bosch_selection_set_method(bosch_selection *s, const char *method);
BOSCH_API const char *bosch_selection_method(const bosch_selection *s);
/* Why the run ended, as bosch_err_name() gives it ("BOSCH_DONE", ...). */
BOSCH_API int bosch_selection_set_status(bosch_selection *s, const char *status);
BOSCH_API const char *bosch_selection_status(const bosch_selection *s);
/* The model's directory. */
BOSCH_API int bosch_selection_set_model_path(bosch_selection *s, const char *path);
BOSCH_API const char *bosch_selection_model_path(const bosch_selection *s);
/* library_version of a file read (NULL for a selection made in memory);
 * writing always records the running library's bosch_version_string(). */
BOSCH_API const char *bosch_selection_library_version(const bosch_selection *s);

/* Target SWA ratio in [0, 1]; NaN unsets it (and is what the getter gives
 * when unset). */
BOSCH_API int bosch_selection_set_target_ratio(bosch_selection *s, double rho);
BOSCH_API double bosch_selection_target_ratio(const bosch_selection *s);

/* Per-unit importance (higher = keep full), one double per unit; NaN or
 * infinite values are written as null and read back as NaN. NULL unsets. */
BOSCH_API int bosch_selection_set_importance(bosch_selection *s, const double *scores,
                                             size_t units);
/* BOSCH_E_NOT_FOUND when no importance is recorded. */
BOSCH_API int bosch_selection_importance(const bosch_selection *s, double *out, size_t units);

/* ------------------------------------------------------------------------ */
/* Score block                                                               */
/* ------------------------------------------------------------------------ */
enum bosch_score_kind {
    BOSCH_SCORE_RAW = 0,        /* S(z) on the task */
    BOSCH_SCORE_NORMALIZED = 1, /* (S - S_allSWA) / (S_full - S_allSWA) */
    BOSCH_SCORE_OBJECTIVE = 2,  /* the search objective (NaN for baselines) */
    BOSCH_SCORE_FULL = 3,       /* S_full, all units full */
    BOSCH_SCORE_ALL_SWA = 4,    /* S_allSWA, all units SWA */
    BOSCH_SCORE_COUNT = 5
};
/* Sets one score (NaN or infinite = unknown, written as null). Any score or
 * metric set makes the file carry a score block. */
BOSCH_API int bosch_selection_set_score(bosch_selection *s, int kind, double value);
/* The score, NaN when unknown, unset or `kind` is out of range. */
BOSCH_API double bosch_selection_score(const bosch_selection *s, int kind);
/* The score's metric ("exact", "logprob", ...). */
BOSCH_API int bosch_selection_set_metric(bosch_selection *s, const char *metric);
BOSCH_API const char *bosch_selection_metric(const bosch_selection *s);

/* ------------------------------------------------------------------------ */
/* KV-cache saving: bosch_kv_saving(ratio, context, window, sink), derived   */
/* from the mask                                                             */
/* ------------------------------------------------------------------------ */
/* Values up to INT64_MAX. */
BOSCH_API int bosch_selection_set_kv_saving(bosch_selection *s, uint64_t context, uint64_t window,
                                            uint64_t sink);
/* Any output may be NULL; BOSCH_E_NOT_FOUND when not recorded. */
BOSCH_API int bosch_selection_kv_saving(const bosch_selection *s, uint64_t *context,
                                        uint64_t *window, uint64_t *sink, double *fraction);

/* ------------------------------------------------------------------------ */
/* Settings: free key/value pairs, kept in the order they were first set     */
/* ------------------------------------------------------------------------ */
/* A key is 1..255 bytes; "GROUP.NAME" (one dot, both parts non-empty)
 * puts NAME into the nested object GROUP (e.g. "niah.context"), which takes
 * the place of its first member. Setting an existing key replaces its value
 * and type in place. BOSCH_E_INVALID for a bad key, a key that is also a
 * group (or the reverse), or a non-finite double. */
enum bosch_setting_type {
    BOSCH_SETTING_STRING = 1,
    BOSCH_SETTING_INT = 2,
    BOSCH_SETTING_DOUBLE = 3,
    BOSCH_SETTING_BOOL = 4
};
BOSCH_API int bosch_selection_setting_set_string(bosch_selection *s, const char *key,
                                                 const char *value);
BOSCH_API int bosch_selection_setting_set_int(bosch_selection *s, const char *key, int64_t value);
BOSCH_API int bosch_selection_setting_set_double(bosch_selection *s, const char *key,
                                                 double value);
BOSCH_API int bosch_selection_setting_set_bool(bosch_selection *s, const char *key, int value);
/* Number of settings and the key of setting i (in order; NULL past the end). */
BOSCH_API size_t bosch_selection_setting_count(const bosch_selection *s);
BOSCH_API const char *bosch_selection_setting_key(const bosch_selection *s, size_t i);
/* enum bosch_setting_type of `key`, or BOSCH_E_NOT_FOUND. */
BOSCH_API int bosch_selection_setting_type(const bosch_selection *s, const char *key);
/* The value; NULL when absent or not a string. */
BOSCH_API const char *bosch_selection_setting_string(const bosch_selection *s, const char *key);
/* BOSCH_OK, BOSCH_E_NOT_FOUND (absent) or BOSCH_E_INVALID (another type; the
 * double getter also accepts an integer setting). */
BOSCH_API int bosch_selection_setting_int(const bosch_selection *s, const char *key,
                                          int64_t *out);
BOSCH_API int bosch_selection_setting_double(const bosch_selection *s, const char *key,
                                             double *out);
BOSCH_API int bosch_selection_setting_bool(const bosch_selection *s, const char *key, int *out);

/* ------------------------------------------------------------------------ */
/* Evaluation counts                                                         */
/* ------------------------------------------------------------------------ */
/* per_stage: BOSCH_STAGE_COUNT counts (enum bosch_stage order), or NULL
 * when the run has no stages (a baseline); values up to INT64_MAX. */
BOSCH_API int bosch_selection_set_evaluations(bosch_selection *s, const uint64_t *per_stage,
                                              uint64_t total, uint64_t replayed);
/* Count of one stage, or the total for stage = -1. BOSCH_E_NOT_FOUND when
 * no counts (or, for a stage, no per-stage counts) are recorded. */
BOSCH_API int bosch_selection_evaluations(const bosch_selection *s, int stage, uint64_t *out);
BOSCH_API int bosch_selection_replayed(const bosch_selection *s, uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Writing. BOSCH_E_IO when the file cannot be written (errno is left as the */
/* failing call set it, and the last error names the file).                 */
/* ------------------------------------------------------------------------ */
/* PREFIX.json: json-c's pretty printer, members in the documented order,
 * unset optional members left out. */
BOSCH_API int bosch_selection_write_json(const bosch_selection *s, const char *path);
/* One line per layer, one tab-separated value per KV group, 1 = full
 * attention, 0 = SWA (DuoAttention's full_attention_heads.tsv:
 * np.loadtxt gives a (layers, kv_groups) array). */
BOSCH_API int bosch_selection_write_tsv(const bosch_selection *s, const char *path);
/* Heatmap: layers top to bottom, KV groups left to right, green = full,
 * orange = SWA, a tooltip per cell; a title (method, SWA ratio, target),
 * the recorded fields (model, shape, window and sink, KV saving, metric
 * and scores, evaluations), layer and KV-group numbers, each layer's SWA
 * ratio as a bar, a legend. Cells shrink with the shape and the canvas
 * holds every text (docs/result-format.md). */
BOSCH_API int bosch_selection_write_svg(const bosch_selection *s, const char *path);

/* ------------------------------------------------------------------------ */
/* Exports for inference code (docs/export.md). Window and sink come from    */
/* the KV-saving record (bosch_selection_set_kv_saving): libbosch's window W */
/* lets query i see keys j with i - j < W (itself and W - 1 before), plus   */
/* the first `sink` tokens. Files are replaced atomically: written under a   */
/* temporary name (".NAME.XXXXXX") in the target's directory, synced, then  */
/* renamed, so no reader sees half a file and a failure leaves none behind. */
/* ------------------------------------------------------------------------ */
/* Non-zero when every layer is all SWA or all full (what a per-layer
 * sliding window, as serving engines have, can serve); 0 for a head-level
 * mask or NULL. */
BOSCH_API int bosch_selection_is_layer_level(const bosch_selection *s);
/* The nearest layer-level mask with the SWA ratio of `s`: k =
 * round(swa_units / kv_groups) layers (halves round up) are all SWA, the
 * others all full. The k layers are those with the most SWA KV heads in
 * `s`; ties go to the layer with the lower summed importance when `s`
 * records an importance whose values are all finite, then to the higher
 * layer index. A layer-level `s` gives its own mask back.
 * The new selection has method "layer-projection:METHOD" ("layer-projection"
 * when `s` names none), the model path, target ratio, importance and
 * settings of `s` (a "sink" setting set to 0), the KV-saving context and
 * window of `s` with sink 0 (a sliding layer of Hugging Face models keeps
 * no sink tokens), and no score, metric, status or evaluation counts: its
 * score is unmeasured. The caller frees it. NULL (bosch_create_error())
 * when `s` is NULL (BOSCH_E_INVALID) or memory runs out. */
BOSCH_API bosch_selection *bosch_selection_project_layers(const bosch_selection *s);
/* A DuoAttention attention-pattern directory, as DuoAttention's
 * load_attn_pattern() and kvpress's DuoAttentionPress read it:
 *   DIR/full_attention_heads.tsv  the bosch_selection_write_tsv() layout
 *                                 (layers lines, kv_groups values, 1 = full)
 *   DIR/config.json               {"sink_size": sink, "recent_size": window,
 *                                 then provenance: producer, method,
 *                                 model_name, num_layers, num_key_value_heads,
 *                                 num_attention_heads, streaming_heads, ratio,
 *                                 sparsity and head_compression_ratio (both
 *                                 the SWA ratio: the value to give DuoAttention's
 *                                 --sparsity and kvpress's press), threshold
 *                                 0.5, context, kv_saving}
 * DIR is made (one level) when missing, and removed again when the export
 * then fails (both files are written before either replaces anything). With
 * 1 layer or 1 KV head per layer
 * np.loadtxt() squeezes the table to a 1-D (or 0-D) array, which both
 * loaders index wrongly for 1 layer and kvpress's press for 1 KV head; the
 * files are still written (np.loadtxt(..., ndmin=2) reads them right) and
 * the caller should warn. BOSCH_E_INVALID for NULL or an empty
 * dir, no KV-saving record or a window of 0; BOSCH_E_IO when DIR cannot be
 * made, is not a directory (errno ENOTDIR) or a file cannot be written. */
BOSCH_API int bosch_selection_export_duo(const bosch_selection *s, const char *dir);
/* A Hugging Face config.json that slides the SWA layers of a layer-level
 * selection: the JSON object of `source_config` (the model's config.json)
 * with every member kept in place and the window members its family reads
 * set (docs/export.md, "Families"; the family from architectures and
 * model_type: Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen2ForCausalLM,
 * MistralForCausalLM, LlamaForCausalLM). Qwen3 and Qwen2: use_sliding_window
 * true, sliding_window = the recorded window, layer_types one
 * "sliding_attention" or "full_attention" per layer, max_window_layers =
 * the number of leading full layers (ignored when layer_types is given);
 * Qwen3-MoE: the same, use_sliding_window true only when every layer slides;
 * Mistral: sliding_window only (the window, or null when no layer slides);
 * Llama: none (the config as it was). Written
 * to `out_config` (which may be `source_config`). No sink tokens are kept:
 * the served KV saving is bosch_kv_saving(ratio, context, window, 0).
 * BOSCH_E_INVALID for NULL arguments, no KV-saving record, a window of 0 or
 * above 2^31-1, a window not below the source's max_position_embeddings
 * (when present) while some layer slides (such a window sees every key),
 * a head-level selection (export bosch_selection_project_layers() of it),
 * an architecture or model_type of no family above (named, with the
 * supported ones), or a selection the family's config cannot express
 * (Qwen3-MoE and Mistral: some layers sliding but not all; Llama: any
 * sliding layer; the message names why and what serves it);
 * BOSCH_E_IO when a file cannot be read or written; BOSCH_E_CORRUPT when
 * the source is not a JSON object, has no integer num_hidden_layers, or
 * an architectures or model_type member of the wrong type;
 * BOSCH_E_MISMATCH (the message naming both shapes) when its
 * num_hidden_layers, num_key_value_heads or num_attention_heads (the last
 * two when present) differ from the selection's shape. Nothing is written
 * on failure. */
BOSCH_API int bosch_selection_export_hf(const bosch_selection *s, const char *source_config,
                                        const char *out_config);
/* Flags of bosch_selection_export_hf_dir. */
enum bosch_export_flags {
    BOSCH_EXPORT_CONFIG_ONLY = 1 /* write config.json and bosch-mask.json, link nothing */
};
/* A directory that loads as the model with the selection's sliding layers
 * (what `bosch export --format hf` writes): out_dir/config.json
 * (bosch_selection_export_hf of model_dir/config.json), out_dir/
 * bosch-mask.json (bosch_selection_write_json: the served layer-level
 * mask, for measuring it) and, unless BOSCH_EXPORT_CONFIG_ONLY, a symbolic
 * link by absolute path to every other regular file of model_dir (hidden
 * files, config.json and bosch-mask.json excepted). A link already in
 * out_dir is replaced in one step; a file there that is not a link is kept
 * (counted in *kept). out_dir is made (one level) when missing. `s` must be
 * layer-level, as for bosch_selection_export_hf (export
 * bosch_selection_project_layers() of a head-level one). *linked and *kept
 * (each may be NULL) receive the files linked and kept (0 on failure).
 * BOSCH_E_INVALID for NULL or empty arguments, unknown flags, or out_dir
 * being model_dir itself; BOSCH_E_IO (errno set) when a directory cannot be
 * made, read or linked into; the statuses of bosch_selection_export_hf.
 * Every check comes first, and every file and link is staged under a
 * temporary name before any is renamed into place: a failure leaves out_dir
 * as it was, and removes it when this call made it. The message is in
 * bosch_selection_last_error(s). */
BOSCH_API int bosch_selection_export_hf_dir(const bosch_selection *s, const char *model_dir,
                                            const char *out_dir, unsigned flags,
                                            size_t *linked, size_t *kept);

/* TensorRT-LLM's per-layer attention windows for a layer-level selection:
 * a YAML file for trtllm-serve's --extra_llm_api_options (the LLM API's
 * KvCacheConfig) holding kv_cache_config: max_attention_window, one entry
 * per layer: the recorded window W for a sliding layer (TensorRT-LLM's W
 * keeps the query's own key and the W - 1 before it, as Hugging Face's
 * sliding_window does), max_seq_len for a full one. `max_seq_len` 0 takes
 * the model's max_position_embeddings from `model_config` (its
 * config.json; may be NULL when max_seq_len is given). A `model_config`
 * given is checked against the selection's shape and family, as by
 * bosch_selection_export_hf (BOSCH_E_MISMATCH naming both shapes;
 * BOSCH_E_INVALID for an unknown family); every known family is served,
 * its config's own sliding layers and window giving way to the mask's. No sink
 * tokens (the PyTorch backend serves none): the served KV saving is
 * bosch_kv_saving(ratio, context, window, 0). Written atomically; nothing
 * is written on failure.
 * BOSCH_E_INVALID for NULL, no max_seq_len nor config, max_seq_len above
 * 2^31-1, a window not below max_seq_len while some layer slides (it would
 * see every key: full attention counted as sliding), no KV-saving record
 * or a head-level selection (export bosch_selection_project_layers() of
 * it); BOSCH_E_CORRUPT when the config is not a JSON object with an integer
 * num_hidden_layers, or (max_seq_len 0) a positive integer
 * max_position_embeddings; BOSCH_E_IO when a file cannot be read or
 * written. The message is in bosch_selection_last_error(s). */
BOSCH_API int bosch_selection_export_trtllm(const bosch_selection *s, const char *model_config,
                                            uint64_t max_seq_len, const char *path);

/* ------------------------------------------------------------------------ */
/* History of evaluations made without an optimizer (e.g. a baseline)        */
/* ------------------------------------------------------------------------ */
/* Writes n records in bosch_result_write_history's JSON Lines format:
 * record i has mask i (masks: n x units bytes, non-zero = SWA), scores[i],
 * stage name stages[i], "normalized" (score - s_allswa) / (s_full -
 * s_allswa) when s_full > s_allswa (null otherwise, e.g. NaN anchors) and
 * "wall_s" null. BOSCH_E_INVALID for NULL arrays (n > 0) or path, units 0,
 * a NULL stage name; BOSCH_E_IO (errno set) when the file cannot be
 * written. Replaced atomically, as bosch_result_write_history. */
BOSCH_API int bosch_history_write(const char *path, size_t units, size_t n, const uint8_t *masks,
                                  const double *scores, const char *const *stages, double s_full,
                                  double s_allswa);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_SELECTION_H */
