/* The Vulkan backend's stand-in for builds without Vulkan (no libvulkan-dev or glslc at configure time). */
#ifndef HR_HAVE_VULKAN
#include <stdio.h>
#include "backend/backend.h"

static hr_status vk_absent(hr_session *s, void *prev, void **impl) {
  (void)prev;
  *impl = NULL;
  snprintf(s->err, sizeof s->err,
           "the Vulkan backend is not in this build (configure found no Vulkan headers/loader or no glslc: "
           "install libvulkan-dev and glslc, then reconfigure)");
  return HR_ENOTSUP;
}
const hr__backend hr__backend_vulkan = {"vulkan", 0, vk_absent, NULL, NULL, NULL, NULL, NULL, NULL};

#include "backend/vulkan/vk_memory.h"
hr_status hr__vk_plan_memory(const struct hr__plan *p, int fp16, hr__vk_memory *out) { (void)p; (void)fp16; (void)out; return HR_ENOTSUP; }
hr_status hr__vk_session_memory(const hr_session *s, hr__vk_memory *out, hr__vk_memory *requested) {
  (void)s; (void)out; (void)requested;
  return HR_ENOTSUP;
}
#endif
