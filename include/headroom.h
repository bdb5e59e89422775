/* headroom: run a stateful neural network over a live camera / RGB-D stream at frame rate, under a
 * hard memory ceiling, and never degrade silently.
 *
 * This header is the reference manual. Phases: load a model (allocates, parses, packs nothing yet)
 * -> create a session (plans memory, allocates exactly the plan; kernels are packed once per model
 * and plan, shared by its sessions) -> push frames (no heap allocation, no copies of whole frames).
 * Every function returns an hr_status;
 * on error, handles keep their previous state unless the function says otherwise, and the last
 * error message of a handle is available from *_last_error().
 *
 * Threads: an hr_model may be shared by any number of sessions on any threads once loaded (it is
 * read-only after load, but for its cache of shared kernels, which is locked and touched only by
 * session create, replan, resume, suspend and destroy, never by push). One hr_session must be
 * driven by one thread at a time; sessions are independent and may run concurrently on different
 * threads. */
#ifndef HEADROOM_H
#define HEADROOM_H

#include "headroom/core.h"
#include "headroom/sync.h"
#include "headroom/gov.h"
#include "headroom/health.h"
#include "headroom/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Model: a TensorFlow.js graph model (model.json + weight shards), loaded once, shared.
 * ------------------------------------------------------------------------------------------- */
typedef struct hr_model hr_model;

/* Load a TF.js graph model. path: a model .json file, or a folder holding exactly one .json.
 * Verifies every weight shard exists and has the bytes the manifest says, dequantises uint8
 * (min/scale) and float16 weights to float32, and checks every op is supported (all unsupported
 * op names are listed in one message). On failure *out is NULL and err (if non-NULL) holds a
 * one-line message naming the file and the problem. */
HR_API hr_status hr_model_load(const char *path, hr_model **out, char *err, size_t err_len);
/* NULL-safe. Sessions must be destroyed first (HR_EMISUSE is not returned: it is the caller's bug,
 * caught by an assertion in debug builds). */
HR_API void hr_model_destroy(hr_model *m);

/* Facts about a loaded model, for `headroom info`. Strings are owned by the model. */
typedef struct hr_model_info {
  const char *name;            /* file stem, e.g. "rvm" */
  int n_nodes;                 /* graph nodes including constants */
  int n_inputs, n_outputs;     /* signature inputs / outputs */
  int n_state;                 /* recurrent state pairs (input rNi <-> output rNo), 0 if stateless */
  int64_t n_params;            /* float parameters (weights) */
  int64_t weight_bytes;        /* float32 bytes of weights after dequantisation */
  bool has_ratio;              /* takes a downsample_ratio input */
  int fixed_width, fixed_height; /* fixed input size, 0 if any size is accepted */
} hr_model_info;
HR_API void hr_model_get_info(const hr_model *m, hr_model_info *info);
/* i-th input / output signature name and dims (-1 = any); n_dims = -1 for unknown rank. */
HR_API const char *hr_model_input_name(const hr_model *m, int i);
HR_API const char *hr_model_output_name(const hr_model *m, int i);
/* Op histogram: i-th distinct op type and its count (i < number of distinct ops); NULL past end. */
HR_API const char *hr_model_op_hist(const hr_model *m, int i, int *count);

/* What a model holds for its sessions now, in bytes. */
typedef struct hr_model_memory {
  int64_t weight_bytes;        /* dequantised weights (from load to destroy) */
  int64_t kernel_shared_bytes; /* kernels shared by its live sessions: one copy per distinct plan
                                  (size, ratio), freed with the last session using it */
  int n_shared_kernels;        /* XNNPACK operators held that way */
} hr_model_memory;
HR_API void hr_model_get_memory(const hr_model *m, hr_model_memory *mem);

/* ---------------------------------------------------------------------------------------------
 * Session: one stream through one model, owning its recurrent state and its activation arena.
 * ------------------------------------------------------------------------------------------- */
typedef struct hr_session hr_session;

typedef enum hr_backend {
  HR_BACKEND_XNNPACK = 0,      /* shipped fast path */
  HR_BACKEND_REFERENCE = 1,    /* plain C, slow: the test oracle */
  HR_BACKEND_VULKAN = 2,       /* GPU compute through Vulkan (fp32; HR_VK_FP16=1: fp16 storage). Only GPU-type devices are picked;
                                  HR_VULKAN_DEVICE=<name substring> picks a device by name (also a
                                  CPU one such as llvmpipe, for tests). HR_ENOTSUP when the build
                                  has no Vulkan or no device is found; the error says which. */
  HR_BACKEND_AUTO = 3,         /* Vulkan when a GPU-type device answers, else XNNPACK (never a CPU
                                  Vulkan device such as lavapipe); hr_session_backend says which
                                  and why. */
} hr_backend;

typedef struct hr_session_params {
  int width, height;           /* model input (src) size in pixels; frames of another size are
                                  resized to it on ingest. 0 = the model's fixed size, or the first
                                  frame's size. Default 0. */
  int frame_width, frame_height; /* size of the frames that will be pushed, if it differs from
                                  width x height (they are then resampled into a planned buffer).
                                  0 = frames arrive at width x height and are read in place. */
  float downsample_ratio;      /* RVM's downsample_ratio in (0,1]; 0 = auto (processing side
                                  ~512 px). Ignored by models without it. Default 0. */
  int threads;                 /* worker threads for kernels; 0 = hr_cpu_count(). Default 0. */
  hr_backend backend;          /* Default HR_BACKEND_XNNPACK. */
  bool stateless;              /* zero the state before every frame (for comparison). Default false. */
  bool want_fgr;               /* also produce RVM's foreground colour output. Default false. */
  bool scene_cut_reset;        /* reset state when a hard scene cut is detected. Default false. */
  float scene_cut_threshold;   /* mean |luma difference| (0..1) that counts as a cut. Default 0.25. */
  bool threads_fixed;          /* true: every frame runs on `threads` threads. false: with more than
                                  one thread, a frame runs on the calling thread alone while that is
                                  measured faster than the pool (the machine's other work taking the
                                  cores: each op's join then waits for a descheduled worker), and the
                                  pool is tried again later; hr_outputs.threads says which ran.
                                  Results are the same either way. Default false. */
  bool replan_resets_state;    /* true: a replan (hr_session_replan) zeroes the recurrent state, as a
                                  reset does. false: the state is carried over, each tensor resampled
                                  to the new plan's size (bilinear, half-pixel centres), so the
                                  matte does not start over at a rung change of the live loop.
                                  Default false. */
  bool alpha_u8;               /* the matte as 8 bits (hr_outputs.alpha_u8: round(clamp(a, 0, 1) x
                                  255), ties to even as lrintf, as headroom run's alpha PNGs; what a
                                  display or a video encoder takes) instead of floats:
                                  alpha and raw are then NULL. A GPU backend reads back a quarter of
                                  the bytes (1920x1440: 2.8 MB, not 11). NaN and Inf, which the 8
                                  bits cannot show, raise HR_EVENT_NONFINITE. Default false. */
} hr_session_params;

HR_API void hr_session_params_default(hr_session_params *p);

/* Create a session: plans shapes and memory for (width, height, ratio), allocates the arena, the
 * state (zeroed) and the kernels once. The dequantised weights are shared with the model's other
 * sessions, and so are the kernels' packed weights and indirection buffers of sessions planned at
 * the same size and ratio (hr_plan_info.kernel_shared_bytes): a second such session costs its
 * session_bytes only. The first session at a plan packs them (the create that takes time). 
 * On failure *out is NULL; HR_ENOMEM, or a planning error whose message hr_model_plan gives for the
 * same params (HR_EINVAL, HR_ERANGE, HR_ENOTSUP). */
HR_API hr_status hr_session_create(hr_model *m, const hr_session_params *p, hr_session **out);
/* The same, and on failure err (if not NULL) holds one line saying why (the planner's message, the
 * backend's: "no Vulkan device ...", the allocation that failed). */
HR_API hr_status hr_session_create_err(hr_model *m, const hr_session_params *p, hr_session **out, char *err, size_t err_len);
/* NULL-safe; sets nothing through the pointer (pass &s to hr_session_destroyp to NULL it). */
HR_API void hr_session_destroy(hr_session *s);

/* Outputs of one frame: borrowed views into session memory, valid until the next call on the
 * session (push, reset, replan, state load, destroy). */
typedef struct hr_outputs {
  const float *alpha;          /* H x W alpha matte / person probability in [0,1], row-major */
  int width, height;           /* size of alpha (the session's input size) */
  const float *fgr;            /* H x W x 3 foreground, NULL unless want_fgr and the model has it */
  const float *raw;            /* the model's own primary output, H x W x raw_channels (for meet: the
                                  two logits alpha is computed from; for RVM it equals alpha) */
  int raw_channels;
  int64_t ts_ns;               /* timestamp of the frame these outputs belong to */
  int64_t frame_index;         /* frames pushed since create (counts dropped-by-caller frames not) */
  uint32_t events;             /* HR_EVENT_* bits raised by this frame */
  double ingest_ms;            /* time spent converting / resampling the frame into the model input */
  double infer_ms;             /* time spent running the model */
  int64_t bytes_copied;        /* bytes the library copied for this frame (0 when read in place) */
  int threads;                 /* CPU threads the model ran on for this frame: the pool's, or 1 when
                                  the session fell back to the calling thread (threads_fixed); 0 on
                                  a GPU backend */
  const uint8_t *alpha_u8;     /* H x W, with params.alpha_u8 (else NULL): 0..255, row-major */
} hr_outputs;

enum {
  HR_EVENT_STATE_RESET = 1u << 0,  /* state was zeroed before this frame (reset, cut, replan) */
  HR_EVENT_REPLANNED   = 1u << 1,  /* resolution / ratio changed: new plan, the state carried over
                                      resampled (HR_EVENT_STATE_RESET too when it was zeroed) */
  HR_EVENT_SCENE_CUT   = 1u << 2,  /* a hard cut was detected on this frame's input */
  HR_EVENT_NONFINITE   = 1u << 3,  /* alpha_u8: the matte held NaN or Inf (NaN shows as 0) */
};

/* Run one frame through the model, carrying state. Performs no heap allocation once the session
 * is planned for the frame's format. On error the state is unchanged. */
HR_API hr_status hr_session_push(hr_session *s, const hr_frame *f, hr_outputs *out);

/* Zero the recurrent state (next frame starts fresh). */
HR_API hr_status hr_session_reset(hr_session *s);
/* Change the model input size and/or ratio: re-plans the arena (allocation happens here, not in
 * push), carries the state over resampled to the new size (or zeroes it: replan_resets_state, or
 * when the old state cannot be read, and then also raises HR_EVENT_STATE_RESET), and raises
 * HR_EVENT_REPLANNED on the next frame. ratio <= 0 = auto.
 * Returns HR_OK at once when the size and ratio are the current ones; on a suspended session it
 * is hr_session_resume. Failure-atomic: the new plan, arena, state, buffers and kernels are all
 * made before the old ones are released, so on any error (HR_ENOMEM, or a planning error such as
 * HR_EINVAL / HR_ERANGE / HR_ENOTSUP) the session keeps its previous plan, state contents and
 * pending events, and the next push runs as if replan had not been called; the last error says
 * what failed. Memory: for a moment both plans are held, so the peak is the old plan plus the new
 * one (its session_bytes, and its kernel_shared_bytes unless another session of the model already
 * holds those kernels; see hr_plan_info). A caller short of memory should release first:
 * hr_session_suspend, then hr_session_resume at the smaller size (peak = the new plan only). */
HR_API hr_status hr_session_replan(hr_session *s, int width, int height, float downsample_ratio);

/* Release the arena, the kernels and the state (the governor's "suspend": memory goes back to the
 * OS). Only frees: it cannot fail halfway (HR_OK, or HR_EINVAL for NULL; HR_OK when suspended
 * already). Pushing then fails with HR_EMISUSE until hr_session_resume, which plans and allocates
 * again (at the given size/ratio, or the previous ones when 0) with a zeroed state, and raises
 * HR_EVENT_REPLANNED | HR_EVENT_STATE_RESET on the next frame. resume returns HR_OK at once when
 * the session is not suspended. A failed resume (HR_ENOMEM, or a planning error) frees whatever it
 * made and leaves the session suspended (the last error ends "the session stays suspended"); it
 * may be called again, and retries in full. */
HR_API hr_status hr_session_suspend(hr_session *s);
HR_API hr_status hr_session_resume(hr_session *s, int width, int height, float downsample_ratio);
/* Whether the session holds no plan (suspended, or after a failed resume). false for NULL. */
HR_API bool hr_session_is_suspended(const hr_session *s);

/* Zero-copy frames on a GPU backend. Memory that the application's frames will lie in (a camera's
 * buffer pool, a mapped file) registered here is imported by the device (Vulkan:
 * VK_EXT_external_memory_host). A frame whose planes all lie inside registered ranges, rows packed
 * (each stride the row's bytes rounded up to 4), is then copied to the device by the GPU from where
 * it lies: the CPU copies nothing (hr_outputs.bytes_copied 0). Other frames go through the staging
 * buffer as before. A range is rounded out to the device's import alignment (whole pages, which
 * must belong to one mapping) and must stay mapped until unregistered or the session destroyed; a
 * frame in it must not be written while a push reads it. Up to 16 ranges; they survive replans.
 * Returns HR_OK on the CPU backends (they read frames in place anyway) and for a range registered
 * already; HR_ENOTSUP when the device cannot import host memory (frames are then copied as
 * before); HR_EINVAL for NULL or 0 bytes; HR_ERANGE past 16 ranges; HR_ENOMEM / HR_EIO when the
 * import fails. The last error says which. */
HR_API hr_status hr_session_register_memory(hr_session *s, const void *ptr, size_t len);
/* Forget the range registered at ptr (HR_EINVAL when none was); the device lets go of it once the
 * GPU is done with it. */
HR_API hr_status hr_session_unregister_memory(hr_session *s, const void *ptr);

/* State snapshot, llama.cpp style: ask the size, save into the caller's buffer, load validates
 * everything (magic, version, model fingerprint, shapes, checksum) before changing anything. */
HR_API size_t hr_session_state_size(const hr_session *s);
HR_API hr_status hr_session_state_save(const hr_session *s, void *buf, size_t len, size_t *written);
HR_API hr_status hr_session_state_load(hr_session *s, const void *buf, size_t len);

/* Read-only views of the recurrent state tensors (for health monitoring): up to max tensors,
 * ptrs[i] valid until the next replan / destroy, lens[i] in floats. Returns the number of tensors. */
HR_API int hr_session_state_views(const hr_session *s, const float **ptrs, size_t *lens, int max);

/* Last error message for this session ("" if none). Owned by the session. */
HR_API const char *hr_session_last_error(const hr_session *s);
/* The backend the session runs on, in words: "xnnpack", "reference", "vulkan: NVIDIA H200
 * (discrete GPU)", or for HR_BACKEND_AUTO the choice and its reason ("xnnpack (auto: no Vulkan GPU:
 * ...)"). Owned by the session. */
HR_API const char *hr_session_backend(const hr_session *s);

/* Memory plan of a session, in bytes; known before the first frame. */
typedef struct hr_plan_info {
  int width, height;           /* model input size */
  int proc_width, proc_height; /* processing size inside the model (after downsample_ratio) */
  float downsample_ratio;
  int64_t weight_bytes;        /* dequantised weights (one copy per model, shared by its sessions) */
  int64_t arena_bytes;         /* activations, liveness-planned */
  int64_t state_bytes;         /* recurrent state (per session) */
  int64_t io_bytes;            /* input tensor + output buffers (per session) */
  int64_t kernel_bytes;        /* kernels' memory of this session alone: XNNPACK operator structs,
                                  our kernels' tables and scratch, operators that cannot be shared,
                                  and the plan's own tables (values, ops, folded constants) */
  int64_t kernel_shared_bytes; /* kernels' memory shared by every session of the model planned at
                                  the same size and ratio: XNNPACK packed weights, indirection
                                  buffers, resize tables. Made by the first such session, freed
                                  with the last; a further session adds none of it. */
  int64_t session_bytes;       /* what one more session at this plan adds beside the model's shared
                                  memory: arena + state + io + kernel_bytes */
  int64_t total_bytes;         /* a first session's memory: weight_bytes + kernel_shared_bytes +
                                  session_bytes. hr_model_plan estimates the kernel figures;
                                  hr_session_get_plan reports what was allocated. */
  int64_t device_bytes;        /* GPU backend (Vulkan): device-local memory, the activations, state,
                                  weights and the frame's copy on the device; 0 on the CPU backends.
                                  Not in total_bytes (host memory). */
  int64_t device_host_bytes;   /* GPU backend: pinned host memory the driver maps (frame staging,
                                  alpha and state read-back); host memory too, beside total_bytes */
  int n_ops;                   /* ops run per frame */
  double gflop;                /* floating-point work per frame, 1e9 FLOP (multiply-add = 2) */
  bool tail_split;             /* the guided-filter tail can run apart from the network, so a stream
                                  can run it on every frame (hr_stream_params.tail_every_frame): RVM
                                  below ratio 1, alpha only, on XNNPACK */
  int threads;                 /* kernel threads: the session's pool (params.threads, 0 there meaning
                                  hr_cpu_count()); 1 when it has none. hr_model_plan: what a session
                                  made with those params gets. */
} hr_plan_info;
HR_API void hr_session_get_plan(const hr_session *s, hr_plan_info *info);

/* Plan without allocating anything big: for admission control and `headroom plan`. */
HR_API hr_status hr_model_plan(hr_model *m, const hr_session_params *p, hr_plan_info *info, char *err, size_t err_len);

/* Per-op timing of the last frame (for bench): i-th op's type name, kernel class and microseconds.
 * Returns false past the end. Only filled when timing is enabled. */
HR_API void hr_session_set_profiling(hr_session *s, bool on);
HR_API bool hr_session_op_profile(const hr_session *s, int i, const char **op, const char **kclass, double *us, double *mflop);
/* One line about op i for a profile listing: the kernel that runs it, its first input's and its
 * output's shapes, the graph node's name (its last 60 characters). Thread-local buffer, valid until
 * the next call on this thread; NULL when i is out of range or the session is suspended. */
HR_API const char *hr_session_op_detail(const hr_session *s, int i);

#ifdef __cplusplus
}
#endif
/* The live loop (hr_stream) builds on everything above. */
#include "headroom/stream.h"
#include "headroom/composite.h"
#endif
