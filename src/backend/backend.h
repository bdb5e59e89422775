/* The backend seam: one small vtable through which a session runs its plan on the CPU (XNNPACK or
 * the reference kernels) or on a GPU (Vulkan compute). The plan (op list, value shapes, arena
 * offsets) is backend-neutral; a backend owns where the arena and the recurrent state live.
 *
 * Phases, as elsewhere: create (everything allocated, kernels/pipelines made, weights uploaded) ->
 * run per frame (no allocation in our code) -> destroy. A backend handle is made for one plan and
 * keeps no pointer to the hr_session it was made in (it is handed the session at every call), so a
 * plan bundle may move between hr_session structs (see session.c's build()). */
#ifndef HR_BACKEND_BACKEND_H
#define HR_BACKEND_BACKEND_H
#include "session/session_impl.h"

typedef struct hr__backend {
  const char *name;
  /* the session's arena (plan->arena_bytes) and state buffers are host memory the kernels use */
  int host_arena;
  /* Make the backend's kernels for s->plan (s->arena / s->state allocated when host_arena). prev:
   * the handle of the plan this one replaces in the same session (a replan), NULL otherwise; it
   * stays in use until destroyed, and a backend may share with it what does not depend on the plan
   * (the Vulkan backend: device, pipelines, tuned kernels). On error s->err names what failed and
   * *impl is NULL. */
  hr_status (*create)(hr_session *s, void *prev, void **impl);
  void (*destroy)(void *impl);
  /* Run every op for the frame in s->cur (planes valid for the call). No allocation. */
  hr_status (*run)(hr_session *s, void *impl);
  /* Zero the recurrent state (takes effect before the next run). */
  void (*state_zero)(hr_session *s, void *impl);
  /* Copy state tensor k (plan->state_bytes[k] bytes) out of / into the backend. */
  hr_status (*state_read)(hr_session *s, void *impl, int k, void *dst);
  hr_status (*state_write)(hr_session *s, void *impl, int k, const void *src);
  /* Host pointer to value v's data after the last run (alpha, fgr): borrowed until the next run. */
  const float *(*output)(hr_session *s, void *impl, int v);
  /* params.alpha_u8: the backend's own 8-bit alpha (value v) of the last run, in *nonfinite how
   * many values were NaN or Inf (or only whether some were: 0 or 1) and in *sum the bytes' sum (-1:
   * not known); with nonfinite NULL (at create) whether it makes one. NULL (the pointer or what it
   * returns): the session converts output(). */
  const uint8_t *(*output_u8)(hr_session *s, void *impl, int v, int64_t *nonfinite, int64_t *sum);
  /* Make the backend's imports of host memory match s->reg (hr_session_register_memory): import
   * the ranges it lacks, release those no longer there. NULL: the backend reads frames in place. */
  hr_status (*sync_memory)(hr_session *s, void *impl);
} hr__backend;

extern const hr__backend hr__backend_cpu;    /* XNNPACK and reference: exec.c's executor */
extern const hr__backend hr__backend_vulkan; /* HR_HAVE_VULKAN; otherwise create says HR_ENOTSUP */

/* The backend for a session's parameters. */
const hr__backend *hr__backend_for(const hr_session_params *p);

#ifdef HR_HAVE_VULKAN
/* Test hooks of the Vulkan backend (tests/unit/test_vulkan*.c): run ops [i0, i1) of the plan alone
 * (records a one-off command buffer: allocates), and copy value v (numel * 4 bytes) out of / into
 * the device (allocates a staging buffer). */
hr_status hr__vk_run_range(hr_session *s, void *impl, int i0, int i1);
hr_status hr__vk_value_read(hr_session *s, void *impl, int v, void *dst);
hr_status hr__vk_value_write(hr_session *s, void *impl, int v, const void *src);
/* 1 when op i runs inside op i - 1 (an activation fused into a convolution's epilogue): run and
 * compare them together; 2: a Pad read as the next convolution's padding; 3: computed inside a
 * later op, hr__vk_host(impl, i) (a GRU's (1 - z) * h in the candidate convolution's epilogue, a
 * squeeze-excitation's x * s in the projection's weights, a concat whose sources the resize after
 * it reads): its output is never written. */
int hr__vk_fused(void *impl, int i);
int hr__vk_host(void *impl, int i);
/* Host time of the last run: the frame's copy into the staging buffer, and submit to fence. */
void hr__vk_host_ms(void *impl, double *copy_ms, double *submit_ms);
/* Warnings and errors the Khronos validation layer reported so far (HR_VULKAN_VALIDATION=1). */
int hr__vk_validation_messages(void);
/* GPU time of the last run, ms (timestamp queries; -1 when the queue has none). */
double hr__vk_device_ms(void *impl);
/* 1 when the device shares the host's RAM (an integrated GPU; HR_VK_UNIFIED=1 says so of any
 * device, for tests): its device memory counts against the process's memory ceiling. */
int hr__vk_unified_memory(void *impl);
/* 1 when the plan's convolutions were timed on the device to pick their kernels (HR_VK_TUNE). */
int hr__vk_tunes(void *impl);
/* 1 when the device buffer holds fp16 values (HR_VK_FP16; fp32 sums in the shaders). */
int hr__vk_fp16(void *impl);
/* How this plan was made: 1 when it took over the device and pipelines of the plan it replaced
 * (vk_dev); *timed, *kept, *same: convolutions the tuner timed, those that kept a pick of an
 * earlier plan of the session, and those that took the pick of a same one timed here. */
int hr__vk_create_stats(void *impl, int *timed, int *kept, int *same);
/* How many of the plan's frame staging, frame and read-back buffers were taken over from the plan
 * it replaced (buf_take) or handed on to one, and how many it has. */
int hr__vk_shared_bufs(void *impl, int *n_bufs);
/* 1 when the plan's weights were copied on the device from the plan it replaced (same constants). */
int hr__vk_consts_copied(void *impl);
/* Frames run with the frame beside the network (HR_VK_XQ: the ingest reading the frame where it
 * lies, the copy for the tail on a transfer queue); *mode: 0 off for this plan, 1 a transfer queue
 * family of its own, 2 the compute queue; *in_place: of the frames, those read in imported memory. */
int64_t hr__vk_frames_beside(void *impl, int *mode, int64_t *in_place);
/* A device the Vulkan backend would take exists (GPU types only unless HR_VULKAN_DEVICE names one):
 * HR_OK and "NAME (type)" in desc, else HR_ENOTSUP and why. No device is made: for a backend
 * choice such as --backend auto, which must never pick a CPU device (llvmpipe). */
hr_status hr__vk_probe(char *desc, size_t n);
#endif
#endif
