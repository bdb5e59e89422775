/* alpha_frames: the smallest whole program on headroom. Runs one model over the first N frames of
 * a source (video file, image folder, camera) and writes each frame's alpha matte as raw float32,
 * OUT/NNNNNN.pha.f32 (H x W, row-major), the same files `headroom run --raw` writes to OUT/raw/.
 *
 *   usage: alpha_frames MODEL SOURCE OUT [FRAMES] [WxH] [RATIO] [THREADS]
 *   e.g.   alpha_frames models/rvm.json vtest.avi /tmp/alpha 5 256x144 0.5 1
 * FRAMES default 5; WxH default the frames' size; RATIO (RVM's downsample_ratio) default 0 = auto;
 * THREADS default 0 = all CPUs.
 *
 * Build it against an installed headroom with pkg-config (pkg-config --cflags --libs headroom-io)
 * or CMake (find_package(headroom CONFIG) and headroom::io): see README, "use it from your
 * program". Uses only the public headers. */
#include <stdio.h>
#include <stdlib.h>
#include <headroom.h>
#include <headroom/io.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL SOURCE OUT [FRAMES] [WxH] [RATIO] [THREADS]\n%s\n", argv[0], hr_version());
    return 2;
  }
  int n = argc > 4 ? atoi(argv[4]) : 5, w = 0, h = 0;
  if (argc > 5 && sscanf(argv[5], "%dx%d", &w, &h) != 2) { fprintf(stderr, "size is WxH\n"); return 2; }
  float ratio = argc > 6 ? (float)atof(argv[6]) : 0;
  int threads = argc > 7 ? atoi(argv[7]) : 0;
  char err[512], path[4096];
  int rc = 1, done = 0;
  hr_model *m = NULL;
  hr_source *src = NULL;
  hr_session *s = NULL;

  if (hr_model_load(argv[1], &m, err, sizeof err)) { fprintf(stderr, "%s\n", err); goto out; }
  if (hr_source_open(argv[2], NULL, &src, err, sizeof err)) { fprintf(stderr, "%s\n", err); goto out; }
  hr_pixfmt fmt;
  int fw, fh;
  hr_source_get_format(src, &fmt, &fw, &fh);

  /* The session: model input w x h (default: the frames' size), frames of fw x fh resized to it. */
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w ? w : fw;
  p.height = h ? h : fh;
  p.frame_width = fw;
  p.frame_height = fh;
  p.downsample_ratio = ratio;
  p.threads = threads;
  hr_status st = hr_session_create(m, &p, &s);
  if (st) { fprintf(stderr, "session: %s\n", hr_status_str(st)); goto out; }

  for (; done < n; done++) {
    hr_frame f;
    hr_outputs o;
    st = hr_source_read(src, &f);
    if (st == HR_EEOF) break;
    if (st) { fprintf(stderr, "read: %s\n", hr_source_last_error(src)); goto out; }
    if (hr_session_push(s, &f, &o)) { fprintf(stderr, "push: %s\n", hr_session_last_error(s)); goto out; }
    snprintf(path, sizeof path, "%s/%06d.pha.f32", argv[3], done);
    FILE *fo = fopen(path, "wb");
    if (!fo) { perror(path); goto out; }
    size_t np = (size_t)o.width * (size_t)o.height;
    int bad = fwrite(o.alpha, sizeof(float), np, fo) != np;
    if (fclose(fo) || bad) { perror(path); goto out; }
  }
  printf("%s: %d frames of %s written to %s\n", hr_version(), done, hr_source_describe(src), argv[3]);
  rc = 0;
out:
  hr_session_destroy(s);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return rc;
}
