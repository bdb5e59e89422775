/* `headroom run`: frames from a source through a session, alpha mattes (and raw floats) to a folder. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "headroom/io.h"
#include "session/session_impl.h"

typedef struct run_opts {
  const char *model, *input, *out, *input_format, *state_in, *state_out;
  int w, h, frames, start, raw, dump_input, stateless, threads, scene_cut, quiet;
  float ratio;
  hr_backend backend;
} run_opts;

static int mkdirs(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') { *p = 0; if (mkdir(tmp, 0755) && errno != EEXIST) return -1; *p = '/'; }
  return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

static void run_usage(void) {
  fprintf(stderr,
          "usage: headroom run --model M --input SRC --out DIR [options]\n"
          "  --size WxH          model input size (frames are resized to it; default: the source's size)\n"
          "  --ratio R|auto      RVM downsample_ratio (default auto: processing side ~512 px)\n"
          "  --frames N          stop after N frames      --start N   skip the first N input frames\n"
          "  --raw               also write DIR/raw/NNNNNN.pha.f32 (float32 LE, HxW)\n"
          "  --dump-input        write DIR/input/NNNNNN.src.f32 (the model's input tensor) + meta.json\n"
          "  --stateless         zero the state before every frame\n"
          "  --state-in FILE     load the state before the first frame   --state-out FILE  save it after the last\n"
          "  --scene-cut         reset the state at hard scene cuts\n"
          "  --input-format F    raw input, e.g. nv12:1920x1440@60 (SRC is a file or -)\n"
          "  --backend xnnpack|reference   --threads N   --quiet\n");
}

static int parse_run(int argc, char **argv, run_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = HR_BACKEND_XNNPACK;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (i++, 1))
    if (ARG("--model")) o->model = v;
    else if (ARG("--input")) o->input = v;
    else if (ARG("--out")) o->out = v;
    else if (ARG("--size")) { if (!cli_parse_size(v, &o->w, &o->h)) { fprintf(stderr, "headroom run: --size wants WxH, got '%s'\n", v); return -1; } }
    else if (ARG("--ratio")) o->ratio = !strcmp(v, "auto") ? 0 : (float)atof(v);
    else if (ARG("--frames")) o->frames = atoi(v);
    else if (ARG("--start")) o->start = atoi(v);
    else if (ARG("--threads")) o->threads = atoi(v);
    else if (ARG("--state-in")) o->state_in = v;
    else if (ARG("--state-out")) o->state_out = v;
    else if (ARG("--input-format")) o->input_format = v;
    else if (ARG("--backend")) {
      if (!strcmp(v, "reference") || !strcmp(v, "ref")) o->backend = HR_BACKEND_REFERENCE;
      else if (!strcmp(v, "xnnpack")) o->backend = HR_BACKEND_XNNPACK;
      else { fprintf(stderr, "headroom run: --backend is xnnpack or reference, not '%s'\n", v); return -1; }
    }
    else if (!strcmp(a, "--raw")) o->raw = 1;
    else if (!strcmp(a, "--dump-input")) o->dump_input = 1;
    else if (!strcmp(a, "--stateless")) o->stateless = 1;
    else if (!strcmp(a, "--scene-cut")) o->scene_cut = 1;
    else if (!strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--help")) { run_usage(); exit(0); }
    else { fprintf(stderr, "headroom run: unknown option or missing value: '%s'\n", a); run_usage(); return -1; }
#undef ARG
  }
  if (!o->model || !o->input || !o->out) { fprintf(stderr, "headroom run: --model, --input and --out are required\n"); run_usage(); return -1; }
  if (o->ratio < 0 || o->ratio > 1) { fprintf(stderr, "headroom run: --ratio must be in (0,1] or auto\n"); return -1; }
  return 0;
}

static hr_status read_file_all(const char *path, void **buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return HR_EIO;
  fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
  *buf = malloc(n > 0 ? (size_t)n : 1);
  if (!*buf) { fclose(f); return HR_ENOMEM; }
  *len = fread(*buf, 1, (size_t)n, f);
  fclose(f);
  return *len == (size_t)n ? HR_OK : HR_EIO;
}

int cmd_run(int argc, char **argv) {
  run_opts o;
  if (parse_run(argc, argv, &o)) return 2;
  int rc = 1;
  hr_model *m = NULL; hr_session *s = NULL; hr_source *src = NULL;
  uint8_t *png = NULL;
  char err[1024], path[4096];
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.input_format = o.input_format;
  hr_status st = hr_source_open(o.input, &sp, &src, err, sizeof err);
  if (st) { fprintf(stderr, "headroom run: %s\n", err); goto out; }
  m = cli_load_model(o.model);
  if (!m) goto out;
  hr_pixfmt fmt; int fw, fh;
  hr_source_get_format(src, &fmt, &fw, &fh);
  hr_session_params p;
  hr_session_params_default(&p);
  hr_model_info mi; hr_model_get_info(m, &mi);
  p.width = o.w ? o.w : (mi.fixed_width ? mi.fixed_width : fw);
  p.height = o.h ? o.h : (mi.fixed_height ? mi.fixed_height : fh);
  p.downsample_ratio = o.ratio;
  p.threads = o.threads;
  p.backend = o.backend;
  p.stateless = o.stateless;
  p.scene_cut_reset = o.scene_cut;
  st = hr_session_create(m, &p, &s);
  if (st) { fprintf(stderr, "headroom run: cannot create session: %s\n", hr_status_str(st)); goto out; }
  if (o.state_in) {
    void *buf = NULL; size_t len = 0;
    st = read_file_all(o.state_in, &buf, &len);
    if (st) { fprintf(stderr, "headroom run: %s: cannot read state file\n", o.state_in); free(buf); goto out; }
    st = hr_session_state_load(s, buf, len);
    free(buf);
    if (st) { fprintf(stderr, "headroom run: %s: %s\n", o.state_in, hr_session_last_error(s)); goto out; }
  }
  snprintf(path, sizeof path, "%s/alpha", o.out);
  if (mkdirs(path)) { fprintf(stderr, "headroom run: cannot create %s: %s\n", path, strerror(errno)); goto out; }
  if (o.raw) { snprintf(path, sizeof path, "%s/raw", o.out); mkdirs(path); }
  hr_plan_info pi; hr_session_get_plan(s, &pi);
  if (o.dump_input) {
    snprintf(path, sizeof path, "%s/input", o.out); mkdirs(path);
    snprintf(path, sizeof path, "%s/input/meta.json", o.out);
    char meta[128]; int n = snprintf(meta, sizeof meta, "{\"width\":%d,\"height\":%d}\n", pi.width, pi.height);
    hr_file_write_atomic(path, meta, (size_t)n);
  }
  if (!o.quiet)
    fprintf(stderr, "headroom run: %s -> %s, model %s at %dx%d ratio %g (processing %dx%d), plan %.1f MB\n",
            hr_source_describe(src), o.out, mi.name, pi.width, pi.height, pi.downsample_ratio, pi.proc_width,
            pi.proc_height, pi.total_bytes / 1e6);
  int64_t idx = 0, done = 0;
  for (;;) {
    if (o.frames && done >= o.frames) break;
    hr_frame f;
    st = hr_source_read(src, &f);
    if (st == HR_EEOF) break;
    if (st) { fprintf(stderr, "headroom run: %s: frame %lld: %s\n", o.input, (long long)idx, hr_source_last_error(src)); goto out; }
    if (idx++ < o.start) continue;
    hr_outputs out;
    st = hr_session_push(s, &f, &out);
    if (st) { fprintf(stderr, "headroom run: frame %lld: %s\n", (long long)idx - 1, hr_session_last_error(s)); goto out; }
    int64_t n = (int64_t)out.width * out.height;
    if (!png) png = malloc((size_t)n);
    if (!png) goto out;
    for (int64_t i = 0; i < n; i++) {
      float a = out.alpha[i];
      png[i] = (uint8_t)(a <= 0 ? 0 : a >= 1 ? 255 : lrintf(a * 255.f));
    }
    int64_t num = idx - 1;
    snprintf(path, sizeof path, "%s/alpha/%06lld.png", o.out, (long long)num);
    if ((st = hr_png_write_gray8(path, out.width, out.height, png, out.width))) { fprintf(stderr, "headroom run: cannot write %s\n", path); goto out; }
    if (o.raw) {
      snprintf(path, sizeof path, "%s/raw/%06lld.pha.f32", o.out, (long long)num);
      if ((st = hr_file_write_atomic(path, out.alpha, (size_t)n * 4))) { fprintf(stderr, "headroom run: cannot write %s\n", path); goto out; }
      if (mi.n_state == 0) { /* stateless segmenters: also the raw output tensor, all channels */
        snprintf(path, sizeof path, "%s/raw/%06lld.out.f32", o.out, (long long)num);
        if ((st = hr_file_write_atomic(path, out.raw, (size_t)n * out.raw_channels * 4))) { fprintf(stderr, "headroom run: cannot write %s\n", path); goto out; }
      }
    }
    if (o.dump_input) {
      snprintf(path, sizeof path, "%s/input/%06lld.src.f32", o.out, (long long)num);
      hr_file_write_atomic(path, s->src_ptr, (size_t)pi.width * pi.height * 12);
    }
    if (out.events && !o.quiet)
      fprintf(stderr, "headroom run: frame %lld:%s%s%s\n", (long long)num, out.events & HR_EVENT_STATE_RESET ? " state reset" : "",
              out.events & HR_EVENT_SCENE_CUT ? " (scene cut)" : "", out.events & HR_EVENT_REPLANNED ? " (replanned)" : "");
    done++;
  }
  if (o.state_out) {
    size_t sz = hr_session_state_size(s), wr = 0;
    void *buf = malloc(sz);
    if (!buf || hr_session_state_save(s, buf, sz, &wr) || hr_file_write_atomic(o.state_out, buf, wr)) {
      fprintf(stderr, "headroom run: cannot save state to %s\n", o.state_out); free(buf); goto out;
    }
    free(buf);
  }
  if (!o.quiet) fprintf(stderr, "headroom run: %lld frames written to %s\n", (long long)done, o.out);
  rc = 0;
out:
  free(png);
  hr_session_destroy(s);
  hr_model_destroy(m);
  hr_source_destroy(src);
  return rc;
}
