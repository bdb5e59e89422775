/* hr_version: the library's version and the versions of the libraries it runs on, as one line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>
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

int hr_cpu_count(void) {
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}
