/* HR_BACKEND_AUTO and hr_session_backend: auto takes the Vulkan backend only when a GPU-type device
 * answers, never a CPU device (lavapipe) unless HR_VULKAN_DEVICE names it, and says which and why;
 * on a machine without a GPU it runs XNNPACK, bit for bit the same mattes as asking for XNNPACK
 * (3 real frames, state carried). Explicit backends name themselves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test_frames.h"

#define NF 3

static hr_session *make(hr_model *m, hr_backend be, int w, int h) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = 0.25f; p.threads = 1; p.backend = be;
  hr_session *s = NULL;
  char err[512] = "";
  hr_status st = hr_session_create_err(m, &p, &s, err, sizeof err);
  CHECKF(st == HR_OK, "create backend %d: %s", (int)be, err);
  return s;
}

int main(void) {
  unsetenv("HR_VULKAN_DEVICE");
  hr_model *m; hr_source *src; hr_frame fr[NF];
  if (!hr_test_rvm_frames(&m, &src, fr, NF)) { hr_source_destroy(src); hr_model_destroy(m); return hr_test_finish("test_session_backend"); }
  int w = fr[0].width, h = fr[0].height;
  hr_session *x = make(m, HR_BACKEND_XNNPACK, w, h), *a = make(m, HR_BACKEND_AUTO, w, h);
  if (x && a) {
    const char *d = hr_session_backend(a);
    printf("auto: %s\n", d);
    CHECK(!strcmp(hr_session_backend(x), "xnnpack"));
    /* a CPU device is never taken by auto; a GPU is, and is named */
    CHECKF(!(!strncmp(d, "vulkan", 6) && (strstr(d, "llvmpipe") || strstr(d, "(CPU)"))), "auto took a CPU device: %s", d);
    CHECKF(!strncmp(d, "xnnpack (auto: no Vulkan GPU: ", 30) || !strncmp(d, "vulkan: ", 8), "auto said: %s", d);
    if (!strncmp(d, "xnnpack", 7)) {
      int differ = 0;
      size_t n = (size_t)w * h;
      for (int i = 0; i < NF; i++) {
        hr_outputs ox, oa;
        CHECK_EQ_INT(hr_session_push(x, &fr[i], &ox), HR_OK);
        CHECK_EQ_INT(hr_session_push(a, &fr[i], &oa), HR_OK);
        differ += memcmp(ox.alpha, oa.alpha, n * 4) != 0;
      }
      printf("auto on XNNPACK vs XNNPACK: %d of %d mattes differ\n", differ, NF);
      CHECK_EQ_INT(differ, 0);
    }
  }
  hr_session_destroy(x);
  hr_session_destroy(a);
#ifdef HR_HAVE_VULKAN
  /* asked for by name, a CPU device is taken (what the Vulkan tests do) */
  setenv("HR_VULKAN_DEVICE", "llvmpipe", 1);
  hr_session *l = make(m, HR_BACKEND_AUTO, 64, 48);
  if (l) {
    printf("auto with HR_VULKAN_DEVICE=llvmpipe: %s\n", hr_session_backend(l));
    CHECK(strstr(hr_session_backend(l), "llvmpipe") != NULL);
  }
  hr_session_destroy(l);
  unsetenv("HR_VULKAN_DEVICE");
#endif
  hr_session *r = make(m, HR_BACKEND_REFERENCE, 64, 48);
  if (r) CHECK(!strcmp(hr_session_backend(r), "reference"));
  hr_session_destroy(r);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_session_backend");
}
