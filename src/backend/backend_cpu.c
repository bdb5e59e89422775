/* The CPU backend: the session's host arena and state, exec.c's executor (XNNPACK or reference kernels). */
#include <string.h>
#include "backend/backend.h"

static hr_status cpu_create(hr_session *s, void *prev, void **impl) {
  (void)prev; /* the kernel cache (kcache.c) already shares packed weights between plans */
  hr__exec *ex = NULL;
  hr_status st = hr__exec_create(s, &ex);
  *impl = st ? NULL : ex;
  return st;
}
static void cpu_destroy(void *impl) { hr__exec_destroy(impl); }
static hr_status cpu_run(hr_session *s, void *impl) { return hr__exec_run(s, impl); }
static void cpu_state_zero(hr_session *s, void *impl) {
  (void)impl;
  for (int k = 0; k < s->plan->n_state; k++) memset(s->state[k], 0, (size_t)s->plan->state_bytes[k]);
}
static hr_status cpu_state_read(hr_session *s, void *impl, int k, void *dst) {
  (void)impl;
  memcpy(dst, s->state[k], (size_t)s->plan->state_bytes[k]);
  return HR_OK;
}
static hr_status cpu_state_write(hr_session *s, void *impl, int k, const void *src) {
  (void)impl;
  memcpy(s->state[k], src, (size_t)s->plan->state_bytes[k]);
  return HR_OK;
}
static const float *cpu_output(hr_session *s, void *impl, int v) {
  (void)impl;
  return hr__plan_view(s->plan, v, s->arena, s->state, s->src_ptr).data;
}

const hr__backend hr__backend_cpu = {"cpu", 1, cpu_create, cpu_destroy, cpu_run, cpu_state_zero, cpu_state_read,
                                     cpu_state_write, cpu_output, NULL, NULL};

const hr__backend *hr__backend_for(const hr_session_params *p) {
  return p->backend == HR_BACKEND_VULKAN ? &hr__backend_vulkan : &hr__backend_cpu;
}
