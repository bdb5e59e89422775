/* hr_version: the library's version and the versions of the libraries it runs on, as one line. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "headroom/core.h"
#include "headroom/version.h"
#include "core/build_info.h"

static char version_line[256];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void version_make(void) {
  /* FFmpeg belongs to libheadroom_io, not to the core: the core asks the process whether libavutil
   * is loaded (av_version_info) instead of linking it, so the core still builds without FFmpeg. */
  const char *ff = "not loaded";
  void *sym = dlsym(RTLD_DEFAULT, "av_version_info");
  if (sym) {
    const char *(*av_version_info)(void);
    *(void **)&av_version_info = sym;
    ff = av_version_info();
  }
  snprintf(version_line, sizeof version_line, "headroom %s (XNNPACK %s, FFmpeg %s)", HR_VERSION_STRING,
           HR__XNNPACK_VERSION, ff);
}

const char *hr_version(void) {
  pthread_once(&version_once, version_make);
  return version_line;
}
