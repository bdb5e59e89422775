/* Device memory of the Vulkan backend, beside the host memory `headroom plan` prints (issue 13,
 * point 3). Both functions exist in every build: without Vulkan they answer HR_ENOTSUP. */
#ifndef HR_VK_MEMORY_H
#define HR_VK_MEMORY_H
#include <stdint.h>
#include "headroom.h"

struct hr__plan;

typedef struct hr__vk_memory {
  int64_t device_local;   /* the device buffer (activations, state, input, weights, split-K scratch) and the frame's copy on the device */
  int64_t host_visible;   /* pinned host memory the driver maps: frame staging, alpha/fgr read-back, state read-back */
} hr__vk_memory;

/* What a Vulkan session at this plan allocates, from the plan alone (no device is opened): the
 * buffers' sizes as the backend lays them out, fp32 storage or fp16 (HR_VK_FP16=1: activations and
 * state fp16, weights and the guided filter's tail fp32). The driver may round each of the five
 * allocations up to its own granularity; hr__vk_session_memory says what it took. */
hr_status hr__vk_plan_memory(const struct hr__plan *p, int fp16, hr__vk_memory *out);

/* What the session's Vulkan backend allocated (the drivers' allocation sizes); HR_EINVAL when the
 * session does not run on Vulkan. `requested`, when not NULL, gets the sizes the backend asked for
 * (equal to hr__vk_plan_memory's for the same plan and storage). */
hr_status hr__vk_session_memory(const hr_session *s, hr__vk_memory *out, hr__vk_memory *requested);

#endif
