/* Opens the FFmpeg module (headroom-io-ffmpeg.so, ffmod.h) on first use: finds it beside the code
 * that asks (or where it was installed), checks its ABI and hands out its function table. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "ffmod.h"

#ifndef HR_FFMOD_LIBDIR
#define HR_FFMOD_LIBDIR ""       /* the configured LIBDIR/headroom, absolute */
#endif
#ifndef HR_FFMOD_BIN_TO_LIB
#define HR_FFMOD_BIN_TO_LIB ""   /* BINDIR -> LIBDIR/headroom, relative */
#endif
#ifndef HR_FFMOD_BUILD_DIR
#define HR_FFMOD_BUILD_DIR ""    /* where the build tree puts the module */
#endif

static pthread_once_t ffmod_once = PTHREAD_ONCE_INIT;
static const hr__ffmod_api *ffmod_api;
static hr_status ffmod_status = HR_ENOTSUP;
static char ffmod_err[1024];
static char ffmod_where[PATH_MAX];
static int64_t ffmod_anon;

static const hr__ffmod_host ffmod_host = {
    hr__source_fail, hr__errf, hr__pool_init, hr__pool_take, hr__frame_packed, hr__basename, hr_pixfmt_name,
};

/* The folder of the object (executable or shared library) this code was linked into. */
static int self_dir(char *dir, size_t n) {
  Dl_info info;
  struct link_map *lm = NULL;
  const char *file = NULL;
  char exe[PATH_MAX];
  if (dladdr1((void *)&self_dir, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm && lm->l_name && lm->l_name[0]) {
    file = lm->l_name;
  } else {   /* the main program: its link map has no name */
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return -1;
    exe[k] = 0;
    file = exe;
  }
  char real[PATH_MAX];
  if (!realpath(file, real)) return -1;
  char *slash = strrchr(real, '/');
  if (!slash) return -1;
  *slash = 0;
  snprintf(dir, n, "%s", real[0] ? real : "/");
  return 0;
}

static int exists(const char *p) {
  struct stat st;
  return p[0] && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void ffmod_load(void) {
  char cand[7][PATH_MAX];
  int n = 0;
  const char *env = getenv("HR_IO_FFMPEG_MODULE");
  char dir[PATH_MAX];
  int installed = -1;
  if (env && env[0]) {
    snprintf(cand[n++], PATH_MAX, "%s", env);   /* asked for: only this one */
  } else {
    if (self_dir(dir, sizeof dir) == 0) {
      snprintf(cand[n++], PATH_MAX, "%.4000s/" HR__FFMOD_NAME, dir);
      snprintf(cand[n++], PATH_MAX, "%.4000s/headroom/" HR__FFMOD_NAME, dir);
      snprintf(cand[n++], PATH_MAX, "%.4000s/../headroom/" HR__FFMOD_NAME, dir);
      if (HR_FFMOD_BIN_TO_LIB[0]) snprintf(cand[n++], PATH_MAX, "%.4000s/" HR_FFMOD_BIN_TO_LIB "/" HR__FFMOD_NAME, dir);
    }
    if (HR_FFMOD_LIBDIR[0]) {
      installed = n;
      snprintf(cand[n++], PATH_MAX, "%.4000s/" HR__FFMOD_NAME, HR_FFMOD_LIBDIR);
    }
    if (HR_FFMOD_BUILD_DIR[0]) snprintf(cand[n++], PATH_MAX, "%.4000s/" HR__FFMOD_NAME, HR_FFMOD_BUILD_DIR);
  }
  int pick = -1;
  for (int i = 0; i < n && pick < 0; i++)
    if (exists(cand[i])) pick = i;
  /* The one named in messages: the first that exists, else the installed path (else the first). */
  const char *path = pick >= 0 ? cand[pick] : installed >= 0 ? cand[installed] : n ? cand[0] : HR__FFMOD_NAME;
  if (pick < 0) {
    snprintf(ffmod_err, sizeof ffmod_err,
             "cannot open the FFmpeg module %.900s (video files need it): no such file%s", path,
             env && env[0] ? " (HR_IO_FFMPEG_MODULE)" : "; HR_IO_FFMPEG_MODULE may name it");
    return;
  }
  /* RTLD_GLOBAL: FFmpeg's symbols become visible to dlsym(RTLD_DEFAULT) (hr_version names it). */
  int64_t anon0 = hr__rss_anon_bytes();
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(ffmod_err, sizeof ffmod_err, "cannot open the FFmpeg module %.700s: %.250s", path, e ? e : "dlopen failed");
    return;
  }
  hr__ffmod_entry_fn entry;
  *(void **)&entry = dlsym(h, HR__FFMOD_ENTRY);
  const hr__ffmod_api *api = entry ? entry(HR__FFMOD_ABI, sizeof(hr_source), &ffmod_host) : NULL;
  if (!api) {
    snprintf(ffmod_err, sizeof ffmod_err, "the FFmpeg module %.900s %s (ABI %d wanted)", path,
             entry ? "was built from another version of headroom" : "has no " HR__FFMOD_ENTRY, HR__FFMOD_ABI);
    dlclose(h);
    return;
  }
  snprintf(ffmod_where, sizeof ffmod_where, "%s", path);
  int64_t grown = hr__rss_anon_bytes() - anon0;
  ffmod_anon = grown > 0 ? grown : 0;
  ffmod_status = HR_OK;
  __atomic_store_n(&ffmod_api, api, __ATOMIC_RELEASE);   /* hr__ffmod_loaded may ask from any thread */
}

hr_status hr__ffmod_get(const hr__ffmod_api **out, char *err, size_t err_len) {
  pthread_once(&ffmod_once, ffmod_load);
  *out = ffmod_api;
  if (ffmod_status) return hr__errf(err, err_len, ffmod_status, "%s", ffmod_err);
  return HR_OK;
}

const char *hr__ffmod_path(void) { return ffmod_where; }

int hr__ffmod_loaded(void) { return __atomic_load_n(&ffmod_api, __ATOMIC_ACQUIRE) != NULL; }

int64_t hr__ffmod_load_anon_bytes(void) { return hr__ffmod_loaded() ? ffmod_anon : 0; }

/* The video-file source: the module's. */
hr_status hr__video_open(hr_source *s, const char *path, char *err, size_t err_len) {
  const hr__ffmod_api *ff;
  hr_status st = hr__ffmod_get(&ff, err, err_len);
  if (st) return st;
  return ff->video_open(s, path, err, err_len);
}
