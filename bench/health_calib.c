/* Health calibration on real model output: record RVM's alpha, state and the input thumbnails of a
 * clip once (slow: the engine runs), then replay the recording through the health monitor with any
 * thresholds (fast), printing per-frame signals and the share of DEGRADED frames after warm-up.
 *
 *   health_calib record --model M --input SRC --size WxH [--ratio R] [--frames N] [--start N]
 *                       [--inject SPEC] [--threads N] [--no-state] --out FILE.hrc
 *   health_calib replay FILE.hrc [--inject SPEC] [--verbose] [--csv] [--set NAME=VALUE ...]
 *
 * Record applies the input-side faults of --inject (freeze, black, white, noise) before the push;
 * replay applies stuck-output (and nan-state into the recorded state: the monitor's reset request
 * is then honoured by zeroing nothing, so use the CLI for nan-state end to end). Replay --set takes
 * hr_health_params fields by name (mad_base, iou_base, ...). Built by bench/health_calib.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "headroom/testing.h"

#define MAGIC 0x43485248u   /* "HRHC" */

typedef struct rec_hdr {
  uint32_t magic, version;
  int32_t tw, th, aw, ah, n_state, n_frames;
  uint64_t lens[HR_HEALTH_MAX_STATE];
} rec_hdr;

static int record(int argc, char **argv) {
  const char *model = NULL, *input = NULL, *out = NULL, *inject = NULL;
  int w = 0, h = 0, frames = 0, start = 0, threads = 1, no_state = 0;
  float ratio = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--model") && v) model = argv[++i];
    else if (!strcmp(a, "--input") && v) input = argv[++i];
    else if (!strcmp(a, "--out") && v) out = argv[++i];
    else if (!strcmp(a, "--inject") && v) inject = argv[++i];
    else if (!strcmp(a, "--size") && v) { if (sscanf(argv[++i], "%dx%d", &w, &h) != 2) return 2; }
    else if (!strcmp(a, "--ratio") && v) ratio = (float)atof(argv[++i]);
    else if (!strcmp(a, "--frames") && v) frames = atoi(argv[++i]);
    else if (!strcmp(a, "--start") && v) start = atoi(argv[++i]);
    else if (!strcmp(a, "--threads") && v) threads = atoi(argv[++i]);
    else if (!strcmp(a, "--no-state")) no_state = 1;
    else { fprintf(stderr, "record: bad argument %s\n", a); return 2; }
  }
  if (!model || !input || !out || !w || !h) { fprintf(stderr, "record: --model --input --size --out required\n"); return 2; }
  char err[512];
  hr_model *m = NULL;
  if (hr_model_load(model, &m, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
  hr_source_params sp;
  hr_source_params_default(&sp);
  hr_source *src = NULL;
  if (hr_source_open(input, &sp, &src, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
  hr_pixfmt fmt; int fw, fh;
  hr_source_get_format(src, &fmt, &fw, &fh);
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.frame_width = fw; p.frame_height = fh;
  p.downsample_ratio = ratio; p.threads = threads;
  hr_session *s = NULL;
  if (hr_session_create(m, &p, &s)) { fprintf(stderr, "cannot create session\n"); return 1; }
  hr_fault_injector *inj = NULL;
  if (inject && hr_fault_create(inject, 42, &inj, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
  hr_plan_info pi;
  hr_session_get_plan(s, &pi);
  fprintf(stderr, "record: %s at %dx%d ratio %g (processing %dx%d)\n", input, w, h, pi.downsample_ratio, pi.proc_width, pi.proc_height);
  FILE *fo = fopen(out, "wb");
  if (!fo) { perror(out); return 1; }
  rec_hdr H;
  memset(&H, 0, sizeof H);
  H.magic = MAGIC; H.version = 1; H.tw = 64; H.th = 48; H.aw = w; H.ah = h;
  const float *sv[HR_HEALTH_MAX_STATE]; size_t sl[HR_HEALTH_MAX_STATE];
  H.n_state = no_state ? 0 : hr_session_state_views(s, sv, sl, HR_HEALTH_MAX_STATE);
  for (int i = 0; i < H.n_state; i++) H.lens[i] = sl[i];
  fwrite(&H, sizeof H, 1, fo);
  float thumb[64 * 48];
  uint8_t *copy = NULL; size_t copy_cap = 0;
  int64_t idx = 0, n = 0;
  for (;;) {
    if (frames && n >= frames) break;
    hr_frame f;
    hr_status st = hr_source_read(src, &f);
    if (st == HR_EEOF) break;
    if (st) { fprintf(stderr, "read: %s\n", hr_source_last_error(src)); return 1; }
    if (idx++ < start) continue;
    if (inj) {   /* writable copy (packed single-plane formats only: the sources here give RGB24) */
      size_t need = (size_t)f.strides[0] * f.height;
      if (f.fmt != HR_PIX_RGB24 && f.fmt != HR_PIX_BGRA && f.fmt != HR_PIX_GRAY8) { fprintf(stderr, "inject: format\n"); return 1; }
      if (need > copy_cap) { free(copy); copy = malloc(need); copy_cap = need; }
      memcpy(copy, f.planes[0], need);
      f.planes[0] = copy;
      hr_fault_apply_input(inj, n, &f);
    }
    float hf = -1;
    hr_health_thumb_from_frame(&f, thumb, 64, 48, &hf);
    hr_outputs o;
    if (hr_session_push(s, &f, &o)) { fprintf(stderr, "push: %s\n", hr_session_last_error(s)); return 1; }
    fwrite(&f.ts_ns, 8, 1, fo);
    fwrite(&hf, 4, 1, fo);
    fwrite(thumb, 4, 64 * 48, fo);
    fwrite(o.alpha, 4, (size_t)w * h, fo);
    hr_session_state_views(s, sv, sl, HR_HEALTH_MAX_STATE);
    for (int i = 0; i < H.n_state; i++) fwrite(sv[i], 4, sl[i], fo);
    n++;
    if (n % 50 == 0) fprintf(stderr, "record: %lld frames\n", (long long)n);
  }
  H.n_frames = (int32_t)n;
  fseek(fo, 0, SEEK_SET);
  fwrite(&H, sizeof H, 1, fo);
  fclose(fo);
  fprintf(stderr, "record: %lld frames to %s\n", (long long)n, out);
  free(copy);
  hr_fault_destroy(inj);
  hr_session_destroy(s);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return 0;
}

static int set_param(hr_health_params *p, const char *kv) {
  char name[64];
  const char *eq = strchr(kv, '=');
  if (!eq || eq - kv >= (int)sizeof name) return -1;
  memcpy(name, kv, (size_t)(eq - kv));
  name[eq - kv] = 0;
  const double v = atof(eq + 1);
#define F(fld) if (!strcmp(name, #fld)) { p->fld = (float)v; return 0; }
#define I(fld) if (!strcmp(name, #fld)) { p->fld = (int)v; return 0; }
  F(band_lo) F(band_hi) F(uncertain_max) F(mad_base) F(mad_gain) F(iou_base) F(iou_gain) F(stuck_eps)
  F(stuck_input_min) F(black_level) F(white_level) F(noise_hf) F(state_bound) F(state_sat_max) F(runaway_factor) F(motion_level)
  I(warmup_frames) I(recover_frames) I(settle_frames) I(input_frames) I(frozen_frames) I(max_samples)
#undef F
#undef I
  return -1;
}

static int replay(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *path = argv[2], *inject = NULL;
  int verbose = 0, csv = 0;
  hr_health_params p;
  hr_health_params_default(&p);
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (!strcmp(argv[i], "--csv")) csv = 1;
    else if (!strcmp(argv[i], "--inject") && i + 1 < argc) inject = argv[++i];
    else if (!strcmp(argv[i], "--set") && i + 1 < argc) { if (set_param(&p, argv[++i])) { fprintf(stderr, "bad --set %s\n", argv[i]); return 2; } }
    else { fprintf(stderr, "replay: bad argument %s\n", argv[i]); return 2; }
  }
  FILE *fi = fopen(path, "rb");
  if (!fi) { perror(path); return 1; }
  rec_hdr H;
  if (fread(&H, sizeof H, 1, fi) != 1 || H.magic != MAGIC) { fprintf(stderr, "%s: not a recording\n", path); return 1; }
  const size_t tn = (size_t)H.tw * H.th, an = (size_t)H.aw * H.ah;
  float *thumb = malloc(4 * tn), *alpha = malloc(4 * an);
  float *st[HR_HEALTH_MAX_STATE]; size_t lens[HR_HEALTH_MAX_STATE];
  for (int i = 0; i < H.n_state; i++) { lens[i] = (size_t)H.lens[i]; st[i] = malloc(4 * lens[i]); }
  static const char *const names[] = {"r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"};
  p.state_names = names;
  char err[256];
  hr_health *hm = NULL;
  if (hr_health_create(&p, H.aw, H.ah, &hm, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
  hr_fault_injector *inj = NULL;
  if (inject && hr_fault_create(inject, 42, &inj, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
  int counts[6] = {0}, after_warm = 0, degraded_after = 0, resets = 0;
  uint32_t cause_frames[HR_HEALTH_N_CAUSES] = {0};
  int first_flag[HR_HEALTH_N_CAUSES];
  for (int i = 0; i < HR_HEALTH_N_CAUSES; i++) first_flag[i] = -1;
  double cost = 0;
  float sat_max = 0, maxabs_max = 0, drift_max = 0, conf_min = 1;
  if (csv) printf("frame,state,in_mad,hf,unc,fg,mad,mad_allow,iou,iou_allow,maxdiff,flags,causes,conf,iou_still,moving\n");
  for (int f = 0; f < H.n_frames; f++) {
    int64_t ts; float hf;
    if (fread(&ts, 8, 1, fi) != 1 || fread(&hf, 4, 1, fi) != 1 || fread(thumb, 4, tn, fi) != tn || fread(alpha, 4, an, fi) != an) break;
    for (int i = 0; i < H.n_state; i++) if (fread(st[i], 4, lens[i], fi) != lens[i]) return 1;
    hr_health_observe_thumb(hm, thumb, H.tw, H.th, hf, ts);
    if (inj) hr_fault_apply_state(inj, f, st, lens, H.n_state);
    const float *a = inj ? hr_fault_apply_output(inj, f, alpha, H.aw, H.ah) : alpha;
    hr_health_verdict v;
    hr_health_observe_output(hm, a, H.aw, H.ah, (const float *const *)st, lens, H.n_state, &v);
    if (v.action == HR_HEALTH_ACTION_RESET_STATE) resets++;
    counts[v.state]++;
    cost += v.signals.cost_us;
    if (f >= p.warmup_frames) { after_warm++; degraded_after += v.state == HR_HEALTH_DEGRADED; }
    for (int c = 0; c < HR_HEALTH_N_CAUSES; c++) {
      if (v.causes & (1u << c)) cause_frames[c]++;
      if ((v.signals.flags & (1u << c)) && first_flag[c] < 0) first_flag[c] = f;
    }
    const hr_health_signals *s = &v.signals;
    for (int i = 0; i < s->n_state; i++) {
      if (s->state_sat[i] > sat_max) sat_max = s->state_sat[i];
      if (s->state_maxabs[i] > maxabs_max) maxabs_max = s->state_maxabs[i];
      if (f >= p.warmup_frames && s->state_drift[i] > drift_max) drift_max = s->state_drift[i];
    }
    if (f >= p.warmup_frames && v.confidence < conf_min) conf_min = v.confidence;
    if (csv)
      printf("%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f,%.3f,%x,%x,%.3f,%.3f,%.3f\n", f, hr_health_state_name(v.state), s->input_mad, s->hf,
             s->uncertain_share, s->fg_share, s->alpha_mad, s->mad_allow, s->mask_iou, s->iou_allow, s->alpha_maxdiff, s->flags, v.causes,
             v.confidence, s->mask_iou_still, s->moving_share);
    else if (verbose || (v.changed))
      printf("%4d %-13s %s\n", f, hr_health_state_name(v.state), v.reason);
  }
  printf("%s: %d frames %dx%d; states:", path, H.n_frames, H.aw, H.ah);
  for (int k = 0; k < 6; k++) if (counts[k]) printf(" %s %d", hr_health_state_name((hr_health_state)k), counts[k]);
  printf("; DEGRADED after warm-up %d of %d (%.2f%%); resets %d; mean cost %.0f us\n", degraded_after, after_warm,
         after_warm ? 100.0 * degraded_after / after_warm : 0.0, resets, cost / (H.n_frames ? H.n_frames : 1));
  printf("  state: saturated share max %.4f, max |x| %.3f, RMS drift max %+.2f; confidence after warm-up min %.3f\n", sat_max,
         maxabs_max, drift_max, conf_min);
  for (int c = 0; c < HR_HEALTH_N_CAUSES; c++)
    if (cause_frames[c] || first_flag[c] >= 0)
      printf("  %-16s on %4u frames, first flagged at %d\n", hr_health_cause_name(1u << c), cause_frames[c], first_flag[c]);
  hr_health_destroy(hm);
  hr_fault_destroy(inj);
  fclose(fi);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "record")) return record(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "replay")) return replay(argc, argv);
  fprintf(stderr, "usage: health_calib record|replay ... (see the top of bench/health_calib.c)\n");
  return 2;
}
