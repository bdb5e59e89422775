/* `headroom info` and `headroom plan`: what a model is, and what it will cost before it runs. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "capture.h"
#include "writer.h"
#include "cli.h"
#include "run.h"
#include "headroom/io.h"

static int64_t rss_now(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, res = 0;
  if (f) { if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0; fclose(f); }
  return (int64_t)res * sysconf(_SC_PAGESIZE);
}

/* Bytes of one dense frame of fmt (as hr_frame_copy lays it out: 4:2:0 chroma rounded up). */
static int64_t fmt_frame_bytes(hr_pixfmt fmt, int w, int h) {
  int64_t y = (int64_t)w * h, c = (int64_t)((w + 1) / 2) * ((h + 1) / 2);
  switch (fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO: return y + 2 * c;
    default: return y * hr_pixfmt_bpp(fmt);
  }
}

/* Bytes of one frame of a raw input format "fmt:WxH[@fps]", 0 if unknown. */
static int64_t frame_bytes(const char *spec) {
  char fmt[16] = ""; int w = 0, h = 0;
  if (!spec || sscanf(spec, "%15[a-z0-9]:%dx%d", fmt, &w, &h) != 3) return 0;
  int64_t px = (int64_t)w * h;
  if (!strncmp(fmt, "nv12", 4) || !strncmp(fmt, "i420", 4)) return px * 3 / 2;
  if (!strcmp(fmt, "bgra")) return px * 4;
  if (!strcmp(fmt, "rgb24")) return px * 3;
  if (!strcmp(fmt, "gray8")) return px;
  if (!strcmp(fmt, "depth16")) return px * 2;
  return 0;
}
#define RUN_POOL CAPTURE_POOL /* frames the run's source keeps valid; --realtime: a source pool of 1 and
                              * RUN_POOL dense copies the capture thread makes */

/* What `headroom run` holds beside the library, the source and the alpha PNGs, measured as the
 * residual of its peak RSS (VmHWM) over binary + plan + source + alpha PNGs (RVM ratio 0.25, raw
 * NV12 and JPEG input at 960x540 and 1920x1440: 1.7-2.1 MB at both sizes): code paged in by model
 * loading and inference (XNNPACK's kernels, libm: ~1.0 MB of file-backed pages at the peak), the
 * stream's health and statistics buffers and telemetry record (~0.4 MB), the capture, worker and
 * main threads' stacks, and malloc's slack above the library's own account. */
#define RUN_LOOP_BYTES (2000 * 1000)
/* What the tail every frame (run --realtime's default on the CPU) adds beyond its matte and
 * coefficient slots: the network thread's stack and what the split run pages in beyond the plan.
 * Measured, 1920x1440 r0.25 raw NV12: 139.1 MiB peak against 120.3 with --no-tail, 15.7 MB of it
 * the matte and slots. */
#define RUN_TAIL_THREAD_BYTES (4000 * 1000)

int cmd_info(int argc, char **argv) {
  const char *model = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc) model = argv[++i];
    else { fprintf(stderr, "headroom info: unknown option '%s'\nusage: headroom info --model M\n", argv[i]); return 2; }
  }
  if (!model) { fprintf(stderr, "headroom info: --model is required\n"); return 2; }
  hr_model *m = cli_load_model(model);
  if (!m) return 1;
  hr_model_info mi;
  hr_model_get_info(m, &mi);
  printf("model        %s\n", mi.name);
  printf("nodes        %d\n", mi.n_nodes);
  printf("parameters   %lld (%.1f MB as float32)\n", (long long)mi.n_params, mi.weight_bytes / 1e6);
  printf("inputs      ");
  for (int i = 0; i < mi.n_inputs; i++) printf(" %s", hr_model_input_name(m, i));
  printf("\noutputs     ");
  for (int i = 0; i < mi.n_outputs; i++) printf(" %s", hr_model_output_name(m, i));
  printf("\nstate        %d recurrent tensor(s)%s\n", mi.n_state, mi.n_state ? " (rNi -> rNo, carried frame to frame)" : " (stateless)");
  if (mi.fixed_width) printf("input size   %dx%d (fixed)\n", mi.fixed_width, mi.fixed_height);
  else printf("input size   any%s\n", mi.has_ratio ? " (downsample_ratio sets the processing size)" : "");
  printf("ops         ");
  const char *op; int cnt;
  for (int i = 0; (op = hr_model_op_hist(m, i, &cnt)); i++) printf(" %s:%d", op, cnt);
  printf("\n");
  hr_model_destroy(m);
  return 0;
}

/* Admission against a ceiling profile: candidates are the input size scaled by 1, 1/2, 1/3 times
 * the ratio ladder; the largest that fits under safe - baseline RSS - margin wins. */
static int plan_admit(hr_model *m, const hr_session_params *base, const char *profile, int json) {
  hr_gov_params gp; hr_gov_params_default(&gp);
  char err[512];
  if (hr_gov_profile_parse(profile, &gp.profile, err, sizeof err)) { fprintf(stderr, "headroom plan: --profile: %s\n", err); return 2; }
  hr_gov *g = NULL;
  if (hr_gov_create(&gp, &g, err, sizeof err)) { fprintf(stderr, "headroom plan: %s\n", err); return 1; }
  static const float scale[3] = {1.f, 0.5f, 1.f / 3.f};
  static const float rf[4] = {1.f, 0.8f, 0.64f, 0.5f};
  hr_gov_candidate c[12]; char names[12][96]; hr_session_params ps[12]; hr_plan_info pis[12];
  int n = 0;
  hr_model_info mi; hr_model_get_info(m, &mi);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < (mi.has_ratio ? 4 : 1); b++) {
      hr_session_params p = *base;
      if (!mi.fixed_width) { p.width = ((int)(base->width * scale[a]) + 1) & ~1; p.height = ((int)(base->height * scale[a]) + 1) & ~1; }
      else if (a) continue;
      int side = p.width > p.height ? p.width : p.height;
      float r0 = base->downsample_ratio > 0 ? base->downsample_ratio : (side > 512 ? 512.f / side : 1.f);
      p.downsample_ratio = r0 * rf[b];
      if (hr_model_plan(m, &p, &pis[n], err, sizeof err)) continue;
      snprintf(names[n], sizeof names[n], "%dx%d ratio %.3f (processing %dx%d)", p.width, p.height, p.downsample_ratio,
               pis[n].proc_width, pis[n].proc_height);
      c[n].name = names[n];
      c[n].planned_bytes = (uint64_t)(pis[n].total_bytes - pis[n].weight_bytes);
      ps[n] = p;
      n++;
    }
  size_t chosen = 0;
  hr_status st = hr_gov_admit_now(g, (uint64_t)mi.weight_bytes, c, (size_t)n, &chosen);
  if (json) {
    printf("{\"profile\":\"%s\",\"admitted\":%s,\"message\":\"%s\"", profile, st ? "false" : "true", hr_gov_last_error(g));
    if (!st) printf(",\"width\":%d,\"height\":%d,\"ratio\":%g,\"total_bytes\":%lld", ps[chosen].width, ps[chosen].height,
                    ps[chosen].downsample_ratio, (long long)pis[chosen].total_bytes);
    printf("}\n");
  } else {
    printf("profile      %s\n", profile);
    for (int i = 0; i < n; i++)
      printf("  %s %-44s %8.1f MB\n", !st && (size_t)i == chosen ? "->" : "  ", names[i], pis[i].total_bytes / 1e6);
    printf("%s: %s\n", st ? "refused" : "admitted", hr_gov_last_error(g));
  }
  hr_gov_destroy(g);
  return st ? 1 : 0;
}

/* Heap bytes in use now (glibc: arenas + mmapped chunks), for --measure. */
static int64_t heap_now(void) {
#ifdef __GLIBC__
  struct mallinfo2 mi = mallinfo2();
  return (int64_t)(mi.uordblks + mi.hblkhd);
#else
  return 0;
#endif
}

/* --measure: create the sessions (no frame pushed) and say what each one took, as the library
 * measured it and as the heap grew, beside what the model shares among them. */
static int plan_measure(hr_model *m, const hr_session_params *p, int n, int json) {
  hr_session *s[16] = {0};
  hr_plan_info pi[16];
  int64_t heap[17];
  double ms[16];
  int rc = 0;
  heap[0] = heap_now();
  for (int i = 0; i < n; i++) {
    double t0 = cli_now_ms();
    char cerr[512];
    hr_status st = hr_session_create_err(m, p, &s[i], cerr, sizeof cerr);
    ms[i] = cli_now_ms() - t0;
    if (st) { fprintf(stderr, "headroom plan: session %d: %s (%s)\n", i + 1, cerr, hr_status_name(st)); rc = 1; n = i; break; }
    hr_session_get_plan(s[i], &pi[i]);
    heap[i + 1] = heap_now();
  }
  hr_model_memory mm;
  hr_model_get_memory(m, &mm);
  if (json) {
    printf("{\"measured\":true,\"model_weight_bytes\":%lld,\"model_kernel_shared_bytes\":%lld,\"shared_kernels\":%d,\"sessions\":[",
           (long long)mm.weight_bytes, (long long)mm.kernel_shared_bytes, mm.n_shared_kernels);
    for (int i = 0; i < n; i++)
      printf("%s{\"session_bytes\":%lld,\"arena_bytes\":%lld,\"state_bytes\":%lld,\"io_bytes\":%lld,\"kernel_bytes\":%lld,"
             "\"kernel_shared_bytes\":%lld,\"heap_growth_bytes\":%lld,\"create_ms\":%.2f}", i ? "," : "", (long long)pi[i].session_bytes,
             (long long)pi[i].arena_bytes, (long long)pi[i].state_bytes, (long long)pi[i].io_bytes, (long long)pi[i].kernel_bytes,
             (long long)pi[i].kernel_shared_bytes, (long long)(heap[i + 1] - heap[i]), ms[i]);
    printf("]}\n");
  } else {
    printf("measured     %d session(s) created, no frame pushed\n", n);
    for (int i = 0; i < n; i++)
      printf("session %-4d heap +%7.2f MB: its own %.2f MB (arena %.2f + state %.2f + io %.2f + kernels %.2f)%s; created in %.1f ms\n",
             i + 1, (heap[i + 1] - heap[i]) / 1e6, pi[i].session_bytes / 1e6, pi[i].arena_bytes / 1e6, pi[i].state_bytes / 1e6,
             pi[i].io_bytes / 1e6, pi[i].kernel_bytes / 1e6, i ? "" : " + the shared kernels it made", ms[i]);
    printf("model        %.2f MB weights + %.2f MB shared kernels (%d XNNPACK templates), once for all sessions\n",
           mm.weight_bytes / 1e6, mm.kernel_shared_bytes / 1e6, mm.n_shared_kernels);
  }
  for (int i = 0; i < n; i++) hr_session_destroy(s[i]);
  return rc;
}

/* The peak RSS `headroom run` will reach, part by part (each a line of `plan`, a key of --json). */
typedef struct run_rss {
  int64_t baseline;      /* binary and libraries, measured at start */
  int64_t library;       /* the library's plan total, one session */
  int64_t source;        /* the source (hr_source_memory_estimate), or the raw frame pool of --input-format */
  int64_t copies;        /* --realtime: the capture thread's dense copies */
  int64_t alpha;         /* alpha PNGs: the sink's 8-bit matte + the PNG writer */
  int64_t loop;          /* the live loop's own (RUN_LOOP_BYTES) */
  int64_t tail;          /* --realtime on the CPU with a guided-filter tail: the tail every frame's
                            coefficient slots, tables and network thread (the matte is the
                            stream's bytes: the tail has no float one) */
  int64_t unwritten;     /* --realtime, tail every frame: the plan's full-resolution matte in the
                            arena, which the split run never writes (the stream's tail writes its
                            own bytes): allocated, never resident */
  int64_t replan;        /* --realtime with the controller: a rung change builds the next rung's
                            kernels and state beside the plan it replaces (its arena is touched
                            only by its first run, after the old plan is gone) */
  int64_t total;
} run_rss;

int cmd_plan(int argc, char **argv) {
  const char *model = NULL, *profile = NULL, *input_format = NULL, *input = NULL;
  int w = 0, h = 0, json = 0, sessions = 1, measure = 0, realtime = 0, adapt = -1, tail = -1, fgr = 0; float ratio = 0;
  double budget_ms = 16.7;
  hr_backend backend = HR_BACKEND_XNNPACK;
  int64_t baseline = rss_now(); /* this binary and its libraries, before the model: what `run` carries too */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc) model = argv[++i];
    else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      if (!cli_parse_size(argv[++i], &w, &h)) { fprintf(stderr, "headroom plan: --size wants WxH, got '%s'\n", argv[i]); return 2; }
    } else if (!strcmp(argv[i], "--ratio") && i + 1 < argc) {
      const char *r = argv[++i];
      ratio = !strcmp(r, "auto") ? 0 : (float)atof(r);
    } else if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--profile") && i + 1 < argc) profile = argv[++i];
    else if (!strcmp(argv[i], "--input-format") && i + 1 < argc) input_format = argv[++i];
    else if (!strcmp(argv[i], "--input") && i + 1 < argc) input = argv[++i];
    else if (!strcmp(argv[i], "--realtime")) realtime = 1;
    else if (!strcmp(argv[i], "--no-tail")) tail = 0;   /* as run: these decide its mode (run_tail_default) */
    else if (!strcmp(argv[i], "--tail-every-frame")) tail = 1;
    else if (!strcmp(argv[i], "--fixed")) adapt = 0;
    else if (!strcmp(argv[i], "--adapt")) adapt = 1;
    else if (!strcmp(argv[i], "--fgr")) fgr = 1;
    else if (!strcmp(argv[i], "--budget-ms") && i + 1 < argc) {
      budget_ms = atof(argv[++i]);
      if (!(budget_ms > 0)) { fprintf(stderr, "headroom plan: --budget-ms must be > 0\n"); return 2; }
    }
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
      const char *b = argv[++i];
      if (!strcmp(b, "xnnpack")) backend = HR_BACKEND_XNNPACK;
      else if (!strcmp(b, "reference")) backend = HR_BACKEND_REFERENCE;
      else if (!strcmp(b, "vulkan")) backend = HR_BACKEND_VULKAN;
      else { fprintf(stderr, "headroom plan: --backend wants xnnpack, reference or vulkan, got '%s'\n", b); return 2; }
    } else if (!strcmp(argv[i], "--sessions") && i + 1 < argc) {
      char *end;
      long n = strtol(argv[++i], &end, 10);
      if (*end || n < 1 || n > 16) { fprintf(stderr, "headroom plan: --sessions wants 1..16, got '%s'\n", argv[i]); return 2; }
      sessions = (int)n;
    } else if (!strcmp(argv[i], "--measure")) measure = 1;
    else { fprintf(stderr, "headroom plan: unknown option '%s'\n", argv[i]); return 2; }
  }
  if (!model) { fprintf(stderr, "headroom plan: --model is required\n"); return 2; }
  if (adapt < 0) adapt = realtime;
  if (tail < 0) tail = run_tail_default(realtime, adapt, budget_ms, fgr, backend);
  /* The source first, as run opens it: probing only (a folder: the first image's header; a video:
   * its streams and first frame). What it will take comes from the io library's model. */
  hr_source *src = NULL;
  hr_source_memory sm;
  memset(&sm, 0, sizeof sm);
  hr_pixfmt sfmt = HR_PIX_NONE;
  int fw = 0, fh = 0;
  if (input) {
    hr_source_params sp;
    hr_source_params_default(&sp);
    sp.input_format = input_format;
    sp.pool_size = realtime ? 1 : RUN_POOL;
    char serr[1024];
    if (hr_source_open(input, &sp, &src, serr, sizeof serr)) { fprintf(stderr, "headroom plan: %s\n", serr); return 1; }
    hr_source_get_format(src, &sfmt, &fw, &fh);
    hr_source_memory_estimate(src, 0, &sm);
  }
  hr_model *m = cli_load_model(model);
  if (!m) { hr_source_destroy(src); return 1; }
  hr_model_info mi;
  hr_model_get_info(m, &mi);
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio; p.backend = backend; p.want_fgr = fgr;
  if (src) {   /* as run: the model's size defaults to the frames'; other sizes are resampled on ingest */
    if (!p.width) { p.width = mi.fixed_width ? mi.fixed_width : fw; p.height = mi.fixed_height ? mi.fixed_height : fh; }
    p.frame_width = fw; p.frame_height = fh;
  }
  int rc = 0;
  if (profile) {
    if (!p.width) { p.width = mi.fixed_width; p.height = mi.fixed_height; }
    if (!p.width) { fprintf(stderr, "headroom plan: --profile needs --size or --input\n"); rc = 2; }
    else rc = plan_admit(m, &p, profile, json);
    goto out;
  }
  hr_plan_info pi;
  char err[512];
  if (hr_model_plan(m, &p, &pi, err, sizeof err)) { fprintf(stderr, "headroom plan: %s\n", err); rc = 1; goto out; }
  if (measure) { rc = plan_measure(m, &p, sessions, json); goto out; }

  run_rss r = {.baseline = baseline, .library = pi.total_bytes, .loop = RUN_LOOP_BYTES};
  int64_t frame = 0;   /* one dense frame of the source's format */
  if (src) {
    r.source = sm.total_bytes;
    frame = fmt_frame_bytes(sfmt, fw, fh);
  } else if (input_format) {
    frame = frame_bytes(input_format);
    r.source = (realtime ? 1 : RUN_POOL) * frame;
    sm.pool_bytes = r.source;
  }
  if (realtime) r.copies = RUN_POOL * frame;
  /* the stream's 8-bit matte and the output thread's slots (the matte as 8 bits each: the alpha
   * PNGs and compositors alone read it, writer_alpha8_wanted), the PNG writer */
  r.alpha = (int64_t)(WRITER_SLOTS + 1) * pi.width * pi.height + hr_png_write_memory_estimate(pi.width, pi.height, 1, 8);
  /* run --realtime's default on the CPU for RVM (stream/tail.h): three slots of the alpha's A and
   * b (bounded by the processing size), the tail's tables and the network thread's stack
   * (RUN_TAIL_THREAD_BYTES, measured); no float matte, as run takes the stream's bytes */
  if (realtime && tail && pi.tail_split) {
    r.tail = hr_stream_tail_bytes_u8(&pi) + RUN_TAIL_THREAD_BYTES;
    r.unwritten = (int64_t)pi.width * pi.height * (int64_t)sizeof(float);
  }
  if (realtime && adapt) {   /* rung 1 of the stream's ladder: 0.8 x rung 0's ratio (stream.h) */
    hr_session_params p1 = p;
    p1.downsample_ratio = 0.8f * pi.downsample_ratio;
    hr_plan_info pi1;
    if (pi.proc_width > 64 && hr_model_plan(m, &p1, &pi1, NULL, 0) == HR_OK && pi1.downsample_ratio < pi.downsample_ratio)
      r.replan = pi1.kernel_shared_bytes + pi1.kernel_bytes + pi1.state_bytes;
  }
  r.total = r.baseline + r.library + r.source + r.copies + r.alpha + r.loop + r.tail - r.unwritten + r.replan;
  int64_t n_total = pi.total_bytes + (sessions - 1) * pi.session_bytes;
  int resampled = src && (fw != pi.width || fh != pi.height);
  if (json) {
    printf("{\"process_baseline_bytes\":%lld,\"frame_pool_bytes\":%lld,\"process_total_bytes\":%lld,", (long long)r.baseline,
           (long long)(sm.pool_bytes + r.copies), (long long)r.total);
    printf("\"source_bytes\":%lld,\"source_pool_bytes\":%lld,\"source_file_bytes\":%lld,\"source_decoder_bytes\":%lld,"
           "\"source_frames_bytes\":%lld,\"source_code_bytes\":%lld,\"realtime_copy_bytes\":%lld,\"alpha_png_bytes\":%lld,"
           "\"run_loop_bytes\":%lld,\"tail_bytes\":%lld,\"arena_unwritten_bytes\":%lld,\"replan_bytes\":%lld,\"tail_split\":%s,", (long long)r.source, (long long)sm.pool_bytes, (long long)sm.file_bytes,
           (long long)sm.decoder_bytes, (long long)sm.frames_bytes, (long long)sm.code_bytes, (long long)r.copies,
           (long long)r.alpha, (long long)r.loop, (long long)r.tail, (long long)r.unwritten, (long long)r.replan, pi.tail_split ? "true" : "false");
    if (src) {
      printf("\"source\":\"");
      for (const char *c = hr_source_describe(src); *c; c++) printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
      printf("\",\"source_width\":%d,\"source_height\":%d,\"decoder_refs\":%d,\"decoder_threads\":%d,\"decoder_pictures\":%.2f,"
             "\"decoder_picture_bytes\":%lld,", fw, fh, sm.refs, sm.threads, sm.pictures, (long long)sm.picture_bytes);
    }
    printf("\"width\":%d,\"height\":%d,\"proc_width\":%d,\"proc_height\":%d,\"ratio\":%g,\"weight_bytes\":%lld,"
           "\"arena_bytes\":%lld,\"state_bytes\":%lld,\"io_bytes\":%lld,\"kernel_bytes\":%lld,\"kernel_shared_bytes\":%lld,"
           "\"session_bytes\":%lld,\"total_bytes\":%lld,\"sessions\":%d,\"sessions_total_bytes\":%lld,\"ops\":%d,\"gflop\":%.3f,"
           "\"device_bytes\":%lld,\"device_host_bytes\":%lld}\n",
           pi.width, pi.height, pi.proc_width, pi.proc_height, pi.downsample_ratio, (long long)pi.weight_bytes,
           (long long)pi.arena_bytes, (long long)pi.state_bytes, (long long)pi.io_bytes, (long long)pi.kernel_bytes,
           (long long)pi.kernel_shared_bytes, (long long)pi.session_bytes, (long long)pi.total_bytes, sessions, (long long)n_total,
           pi.n_ops, pi.gflop, (long long)pi.device_bytes, (long long)pi.device_host_bytes);
  } else {
    printf("input        %dx%d, ratio %g -> processing %dx%d\n", pi.width, pi.height, pi.downsample_ratio, pi.proc_width, pi.proc_height);
    printf("weights      %8.2f MB (shared by all sessions of the model)\n", pi.weight_bytes / 1e6);
    printf("arena        %8.2f MB (activations, liveness-planned)\n", pi.arena_bytes / 1e6);
    printf("state        %8.2f MB (recurrent, per session)\n", pi.state_bytes / 1e6);
    if (resampled)
      printf("io           %8.2f MB (input tensor / output buffers, per session; %dx%d frames are resampled into the input tensor)\n",
             pi.io_bytes / 1e6, fw, fh);
    else
      printf("io           %8.2f MB (input tensor / output buffers, per session)\n", pi.io_bytes / 1e6);
    printf("kernels      %8.2f MB (operator structs, our kernels' tables, per session; estimated)\n", pi.kernel_bytes / 1e6);
    printf("kernels, shared %5.2f MB (XNNPACK packed weights + indirection, once for all sessions at this size and ratio; estimated)\n",
           pi.kernel_shared_bytes / 1e6);
    printf("total        %8.2f MB (the library's memory, one session)\n", pi.total_bytes / 1e6);
    printf("per session  %8.2f MB (what each further session adds: arena + state + io + kernels)\n", pi.session_bytes / 1e6);
    if (pi.device_bytes || pi.device_host_bytes)
      printf("device       %8.2f MB GPU memory (Vulkan: activations, state, weights, the frame's copy) + %.2f MB pinned host memory (staging, read-back)\n",
             pi.device_bytes / 1e6, pi.device_host_bytes / 1e6);
    if (sessions > 1)
      printf("%2d sessions  %8.2f MB (weights and shared kernels once + %d x per session)\n", sessions, n_total / 1e6, sessions);
    if (src) {
      printf("source       %8.2f MB %s\n", r.source / 1e6, hr_source_describe(src));
      printf("  pool       %8.2f MB (frames the source decodes, reads or converts into: %d kept valid)\n", sm.pool_bytes / 1e6,
             realtime ? 1 : RUN_POOL);
      printf("  file       %8.2f MB (whole-file read buffer: the largest file of the list)\n", sm.file_bytes / 1e6);
      printf("  decoder    %8.2f MB (decoder and demuxer state, decoder threads, converter)\n", sm.decoder_bytes / 1e6);
      printf("  frames     %8.2f MB (the decoder's own pictures: references, in flight per thread, held)\n", sm.frames_bytes / 1e6);
      printf("  code       %8.2f MB (library code paged in: measured while opening, + first decode)\n", sm.code_bytes / 1e6);
      printf("  model      %s\n", sm.detail);
    } else if (input_format) {
      printf("source       %8.2f MB (%d frames of %s)\n", r.source / 1e6, realtime ? 1 : RUN_POOL, input_format);
    } else {
      printf("source          unknown (give --input SRC, or --input-format for raw frames)\n");
    }
    if (realtime) printf("copies       %8.2f MB (--realtime: the capture thread's %d dense frame copies)\n", r.copies / 1e6, RUN_POOL);
    printf("outputs      %8.2f MB (%d output slots of the %dx%d matte as 8 bits %.2f MB, PNG writer %.2f MB: zlib deflate, libspng, encoded file)\n",
           r.alpha / 1e6, WRITER_SLOTS, pi.width, pi.height, (double)pi.width * pi.height * WRITER_SLOTS / 1e6,
           (r.alpha - (int64_t)pi.width * pi.height * WRITER_SLOTS) / 1e6);
    printf("run loop     %8.2f MB (code paged in by inference, health and statistics, thread stacks, malloc slack; measured)\n",
           r.loop / 1e6);
    if (r.tail)
      printf("tail         %8.2f MB (--realtime, tail every frame: 3 slots of the alpha's A and b, the tail's tables for two plans, the network's thread; it writes the matte as bytes; --no-tail: none)\n",
             r.tail / 1e6);
    else if (realtime && tail)   /* as run says when it falls back */
      printf("tail             none (this plan cannot run its guided-filter tail apart: run adapts by the processing size alone)\n");
    if (r.unwritten)
      printf("unwritten   %8.2f MB (tail every frame: the plan's %dx%d float matte in the arena, never written: the tail writes the stream's bytes)\n",
             -r.unwritten / 1e6, pi.width, pi.height);
    if (r.replan)
      printf("replan       %8.2f MB (--realtime: a rung change builds the next rung's kernels and state beside this plan)\n", r.replan / 1e6);
    char copies[48] = "", tail[64] = "";
    if (realtime) snprintf(copies, sizeof copies, " + copies %.1f", r.copies / 1e6);
    if (r.tail) snprintf(tail, sizeof tail, " + tail %.1f - unwritten %.1f", r.tail / 1e6, r.unwritten / 1e6);
    if (r.replan) snprintf(tail + strlen(tail), sizeof tail - strlen(tail), " + replan %.1f", r.replan / 1e6);
    printf("headroom run %8.2f MB expected peak RSS of this CLI: %.1f MB binary and libraries (measured now) + total %.1f"
           " + source %.1f%s + alpha PNGs %.1f + run loop %.1f%s\n", r.total / 1e6, r.baseline / 1e6, r.library / 1e6,
           r.source / 1e6, copies, r.alpha / 1e6, r.loop / 1e6, tail);
    printf("ops/frame    %d, %.2f GFLOP\n", pi.n_ops, pi.gflop);
  }
out:
  hr_model_destroy(m);
  hr_source_destroy(src);
  return rc;
}
