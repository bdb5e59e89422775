/* What a replan does to the matte (hr_session_replan, replan_resets_state): on a raw NV12 clip, a
 * reference session runs every frame at ratio A (state carried). At frames k (--at), a copy of
 * its state goes to a new session at A, which is replanned to ratio B, once with the state carried
 * over (resampled: the default) and once zeroed (replan_resets_state), and each runs the next M
 * frames (--after). Also a session at B from frame 0 that never replans (B's own quality: the floor
 * a replan can reach). Then the other way: that session's state at k, replanned from B to A. Every
 * matte is compared with the reference's of the same frame, both quantised to 8 bits as
 * bench/live_quality.c counts: the share of pixels off by > 0.1 (|d| > 25 of 255), per frame after
 * the replan (frames 1-5 after it and 6-M apart) and over all.
 *
 *   replan_state MODEL CLIP.nv12 WxH [--a 0.25] [--b 0.2] [--at 40,100,160] [--after 20]
 *     [--frames N] [--threads 2] [--label NAME]
 *
 * Public API only. One JSON line per direction on stdout, a table on stderr. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "headroom.h"

#define MAXK 16

static uint8_t q8(float a) { return (uint8_t)(a <= 0.f ? 0 : a >= 1.f ? 255 : a * 255.f + 0.5f); }
static double off_share(const float *a, const uint8_t *ref, size_t n) {
  long long o = 0;
  for (size_t i = 0; i < n; i++) o += abs((int)q8(a[i]) - (int)ref[i]) > 25;
  return (double)o / (double)n;
}

static hr_session *make(hr_model *m, int W, int H, float ratio, int threads, int resets) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = ratio; p.threads = threads; p.threads_fixed = true;
  p.replan_resets_state = resets;
  hr_session *s = NULL;
  char err[400] = "";
  if (hr_session_create_err(m, &p, &s, err, sizeof err)) { fprintf(stderr, "replan_state: session: %s\n", err); exit(1); }
  return s;
}

static hr_frame frame_at(const uint8_t *base, int W, int H, int i) {
  hr_frame f = {0};
  f.fmt = HR_PIX_NV12_VIDEO; /* ffmpeg -pix_fmt nv12: video range */
  f.width = W; f.height = H;
  const uint8_t *y = base + (size_t)i * W * H * 3 / 2;
  f.planes[0] = y; f.planes[1] = y + (size_t)W * H;
  f.strides[0] = W; f.strides[1] = W;
  return f;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: replan_state MODEL CLIP.nv12 WxH [options]\n"); return 2; }
  int W = 0, H = 0, frames = 0, threads = 2, after = 20, at[MAXK], nat = 0;
  float ra = 0.25f, rb = 0.2f;
  const char *atstr = "40,100,160", *label = "";
  if (sscanf(argv[3], "%dx%d", &W, &H) != 2 || W <= 0 || H <= 0 || (W | H) & 1) { fprintf(stderr, "replan_state: bad size '%s'\n", argv[3]); return 2; }
  for (int i = 4; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--a")) ra = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--b")) rb = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--at")) atstr = argv[i + 1];
    else if (!strcmp(argv[i], "--after")) after = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--frames")) frames = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--label")) label = argv[i + 1];
    else { fprintf(stderr, "replan_state: unknown option %s\n", argv[i]); return 2; }
  }
  for (const char *c = atstr; *c && nat < MAXK; c = strchr(c, ',') ? strchr(c, ',') + 1 : c + strlen(c)) at[nat++] = atoi(c);
  int fd = open(argv[2], O_RDONLY);
  struct stat stt;
  if (fd < 0 || fstat(fd, &stt)) { fprintf(stderr, "replan_state: cannot open %s\n", argv[2]); return 1; }
  size_t fb = (size_t)W * H * 3 / 2;
  int avail = (int)(stt.st_size / (off_t)fb);
  if (!frames || frames > avail) frames = avail;
  const uint8_t *clip = mmap(NULL, (size_t)stt.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (clip == MAP_FAILED) { fprintf(stderr, "replan_state: cannot map %s\n", argv[2]); return 1; }
  hr_model *m = NULL;
  char merr[300] = "";
  if (hr_model_load(argv[1], &m, merr, sizeof merr)) { fprintf(stderr, "replan_state: cannot load %s: %s\n", argv[1], merr); return 1; }
  for (int k = 0; k < nat; k++)
    if (at[k] < 1 || at[k] + after > frames) { fprintf(stderr, "replan_state: --at %d + --after %d past the clip's %d frames\n", at[k], after, frames); return 2; }

  const size_t npx = (size_t)W * H;
  uint8_t *ref = malloc(npx * (size_t)frames);   /* the reference's mattes (ratio A), 8 bits */
  /* the run at each ratio without replans, its state saved at each k */
  hr_session *sa = make(m, W, H, ra, threads, 0), *sb = make(m, W, H, rb, threads, 0);
  size_t slen_a = hr_session_state_size(sa), slen_b = hr_session_state_size(sb);
  uint8_t *st_a = malloc(slen_a * (size_t)nat), *st_b = malloc(slen_b * (size_t)nat);
  double *floor_b = calloc((size_t)frames, sizeof(double));
  if (!ref || !st_a || !st_b || !floor_b) return 1;
  for (int i = 0; i < frames; i++) {
    hr_frame f = frame_at(clip, W, H, i);
    hr_outputs oa, ob;
    if (hr_session_push(sa, &f, &oa) || hr_session_push(sb, &f, &ob)) { fprintf(stderr, "replan_state: push failed\n"); return 1; }
    for (size_t p = 0; p < npx; p++) ref[(size_t)i * npx + p] = q8(oa.alpha[p]);
    floor_b[i] = off_share(ob.alpha, ref + (size_t)i * npx, npx);
    for (int k = 0; k < nat; k++)
      if (at[k] == i + 1) { /* the state after frame i: what a replan before frame at[k] finds */
        size_t wr;
        hr_session_state_save(sa, st_a + slen_a * (size_t)k, slen_a, &wr);
        hr_session_state_save(sb, st_b + slen_b * (size_t)k, slen_b, &wr);
      }
  }
  /* dir 0: A -> B (a step down), dir 1: B -> A (back up); modes: carried, zeroed */
  for (int dir = 0; dir < 2; dir++) {
    float from = dir ? rb : ra, to = dir ? ra : rb;
    double sum[2][3] = {{0}}, flo[3] = {0};
    int cnt[3] = {0};
    for (int k = 0; k < nat; k++) {
      for (int mode = 0; mode < 2; mode++) {
        hr_session *s = make(m, W, H, from, threads, mode);
        if (hr_session_state_load(s, (dir ? st_b + slen_b * (size_t)k : st_a + slen_a * (size_t)k), dir ? slen_b : slen_a)) {
          fprintf(stderr, "replan_state: state load failed\n"); return 1;
        }
        if (hr_session_replan(s, W, H, to)) { fprintf(stderr, "replan_state: replan: %s\n", hr_session_last_error(s)); return 1; }
        for (int j = 0; j < after; j++) {
          int i = at[k] + j;
          hr_frame f = frame_at(clip, W, H, i);
          hr_outputs o;
          if (hr_session_push(s, &f, &o)) { fprintf(stderr, "replan_state: push failed\n"); return 1; }
          if (j == 0 && !(o.events & HR_EVENT_REPLANNED)) { fprintf(stderr, "replan_state: no replan event\n"); return 1; }
          if (j == 0 && !!(o.events & HR_EVENT_STATE_RESET) != mode) { fprintf(stderr, "replan_state: state-reset event %s\n", mode ? "missing" : "raised"); return 1; }
          double e = off_share(o.alpha, ref + (size_t)i * npx, npx);
          int g = j < 5 ? 0 : 1;
          sum[mode][g] += e; sum[mode][2] += e;
          if (!mode) {
            /* the floor: at B the run without a replan; at A the reference itself (0) */
            double fl = dir ? 0 : floor_b[i];
            flo[g] += fl; flo[2] += fl;
            cnt[g]++; cnt[2]++;
          }
        }
        hr_session_destroy(s);
      }
    }
    fprintf(stderr, "%s %s %.3g -> %.3g, %d replans x %d frames: pixels off by > 0.1 (frames 1-5 / 6-%d / all)\n", label, dir ? "up" : "down",
            (double)from, (double)to, nat, after, after);
    const char *names[3] = {"carried (resampled)", "zeroed (reset)", "no replan at the new ratio"};
    for (int r = 0; r < 3; r++) {
      const double *v = r < 2 ? sum[r] : flo;
      fprintf(stderr, "  %-28s %6.2f%% / %6.2f%% / %6.2f%%\n", names[r], 100 * v[0] / cnt[0], 100 * v[1] / cnt[1], 100 * v[2] / cnt[2]);
    }
    printf("{\"label\":\"%s\",\"dir\":\"%s\",\"from\":%g,\"to\":%g,\"replans\":%d,\"after\":%d,\"carried\":[%.5f,%.5f,%.5f],"
           "\"zeroed\":[%.5f,%.5f,%.5f],\"no_replan\":[%.5f,%.5f,%.5f]}\n",
           label, dir ? "up" : "down", (double)from, (double)to, nat, after, sum[0][0] / cnt[0], sum[0][1] / cnt[1], sum[0][2] / cnt[2],
           sum[1][0] / cnt[0], sum[1][1] / cnt[1], sum[1][2] / cnt[2], flo[0] / cnt[0], flo[1] / cnt[1], flo[2] / cnt[2]);
  }
  hr_session_destroy(sa); hr_session_destroy(sb);
  hr_model_destroy(m);
  free(ref); free(st_a); free(st_b); free(floor_b);
  munmap((void *)clip, (size_t)stt.st_size);
  close(fd);
  return 0;
}
