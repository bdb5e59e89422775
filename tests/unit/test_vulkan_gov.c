/* The governor counts a unified-memory GPU's buffers against the memory ceiling (issue 13, point 3):
 * (1) hr_gov alone, under a 1000:2000 MB profile: with 300 MB of device bytes set, the next sample
 *     reports them and its available_bytes is 300 MB lower than the sample before (the RSS moves by
 *     far less than a MB between the two), and back to 0 it is not;
 * (2) a stream on lavapipe with the governor on: lavapipe is a CPU-type device (its buffers are
 *     host memory, already in the RSS), so the governor adds nothing; with HR_VK_UNIFIED=1 (what an
 *     integrated GPU reports of itself) the samples after a push carry the plan's device_bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "hr_test_frames.h"

static void governor_alone(void) {
  hr_gov_params gp;
  hr_gov_params_default(&gp);
  char err[256];
  CHECK_EQ_INT(hr_gov_profile_parse("1000:2000", &gp.profile, err, sizeof err), HR_OK);
  hr_gov *g = NULL;
  CHECK_EQ_INT(hr_gov_create(&gp, &g, err, sizeof err), HR_OK);
  if (!g) { printf("governor: %s\n", err); return; }
  hr_gov_sample a, b, c;
  CHECK_EQ_INT(hr_gov_sample_now(g, &a), HR_OK);
  hr_gov_set_device_bytes(g, 300u << 20);
  CHECK_EQ_INT(hr_gov_sample_now(g, &b), HR_OK);
  hr_gov_set_device_bytes(g, 0);
  CHECK_EQ_INT(hr_gov_sample_now(g, &c), HR_OK);
  const int64_t drop = a.available_bytes - b.available_bytes, back = c.available_bytes - b.available_bytes;
  printf("governor: available %.1f MB, with 300 MB on the device %.1f MB (%.2f MB less), without again %.1f MB\n",
         a.available_bytes / 1048576.0, b.available_bytes / 1048576.0, drop / 1048576.0, c.available_bytes / 1048576.0);
  CHECK(a.device_bytes == 0 && b.device_bytes == (300u << 20) && c.device_bytes == 0);
  CHECKF(llabs(drop - (300ll << 20)) < (1 << 20), "available fell by %lld bytes", (long long)drop);
  CHECKF(llabs(back - (300ll << 20)) < (1 << 20), "available rose by %lld bytes", (long long)back);
  CHECK(b.rss_bytes < (300u << 20) + a.rss_bytes);   /* the RSS itself is not touched */
  hr_gov_destroy(g);
}

#ifdef HR_HAVE_VULKAN
/* device_bytes the governor saw after 2 pushes on lavapipe; *plan_bytes the plan's */
static int64_t stream_device_bytes(hr_model *m, const hr_frame *f, int64_t *plan_bytes) {
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = f->width; p.session.height = f->height; p.session.downsample_ratio = 0.5f;
  p.session.threads = 1; p.session.backend = HR_BACKEND_VULKAN;
  p.governor = true;
  char err[512];
  CHECK_EQ_INT(hr_gov_profile_parse("1000:2000", &p.profile, err, sizeof err), HR_OK);
  hr_stream *st = NULL;
  hr_status s = hr_stream_create(m, &p, &st, err, sizeof err);
  if (s == HR_ENOTSUP) SKIP("no Vulkan device named '%s' here: %s", getenv("HR_VULKAN_DEVICE"), err);
  if (s) FATAL("Vulkan stream: %s: %s", hr_status_name(s), err);
  hr_stream_result r;
  for (int i = 0; i < 2; i++) CHECK_EQ_INT(hr_stream_push(st, f, &r), HR_OK);
  hr_gov_sample gs;
  CHECK_EQ_INT(hr_gov_sample_now(hr_stream_governor(st), &gs), HR_OK);
  hr_plan_info pi;
  hr_session_get_plan(hr_stream_session(st), &pi);
  *plan_bytes = pi.device_bytes;
  hr_stream_destroy(st);
  return (int64_t)gs.device_bytes;
}
#endif

int main(void) {
  governor_alone();
#ifdef HR_HAVE_VULKAN
  hr_test_vulkan_env(1);
  hr_model *m; hr_source *src; hr_frame fr[1];
  if (!hr_test_rvm_frames(&m, &src, fr, 1)) { hr_source_destroy(src); hr_model_destroy(m); return hr_test_finish("test_vulkan_gov"); }
  /* a small frame: the top-left 128x96 of the first one, read in place (its strides kept) */
  hr_frame f = fr[0];
  f.width = 128; f.height = 96;
  int64_t plan0 = 0, plan1 = 0;
  unsetenv("HR_VK_UNIFIED");
  int64_t cpu_type = stream_device_bytes(m, &f, &plan0);
  setenv("HR_VK_UNIFIED", "1", 1);
  int64_t unified = stream_device_bytes(m, &f, &plan1);
  unsetenv("HR_VK_UNIFIED");
  printf("stream on lavapipe, 128x96 r0.5: governor counts %lld device bytes (a CPU-type device), %lld with HR_VK_UNIFIED=1 "
         "(plan device_bytes %lld)\n", (long long)cpu_type, (long long)unified, (long long)plan1);
  CHECK_EQ_INT(cpu_type, 0);
  CHECK(plan1 > 0);
  CHECKF(unified == plan1, "governor %lld, plan %lld", (long long)unified, (long long)plan1);
  hr_source_destroy(src);
  hr_model_destroy(m);
#endif
  return hr_test_finish("test_vulkan_gov");
}
