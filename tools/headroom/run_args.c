/* `headroom run` options: usage text and parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "run.h"

static void run_usage(void) {
  fprintf(stderr,
          "usage: headroom run --model M --input SRC --out DIR [options]\n"
          "input and model\n"
          "  --size WxH            model input size (frames are resized to it; default: the source's size)\n"
          "  --ratio R|auto        RVM downsample_ratio (default auto: processing side ~512 px)\n"
          "  --frames N            stop after N processed frames     --start N  skip the first N input frames\n"
          "  --input-format F      raw input, e.g. nv12:1920x1440@60 (SRC is a file or -)\n"
          "  --backend xnnpack|reference|vulkan|auto (auto: Vulkan on a GPU, else XNNPACK; says which)\n"
          "  --threads N           kernel threads, exactly N on every frame (default: one per CPU, with --realtime\n"
          "                        one fewer; a frame then runs on one thread while that is measured faster;\n"
          "                        with the tail every frame the count includes the tail's thread)\n"
          "state\n"
          "  --stateless           zero the state before every frame\n"
          "  --state-in FILE       load the state before the first frame   --state-out FILE  save it after the last\n"
          "  --scene-cut           reset the state at hard scene cuts\n"
          "live loop\n"
          "  --realtime            replay at the source's own rate; late frames are dropped (newest wins)\n"
          "  --budget-ms MS        frame budget (default 16.7)\n"
          "  --adapt               move the processing resolution to keep p99 within the budget (on with --realtime)\n"
          "  --fixed               never adapt\n"
          "  --tail-every-frame    run the network on its own thread at the rate it reaches, and the full-resolution\n"
          "                        guided-filter tail on every frame with its newest coefficients (RVM on the CPU;\n"
          "                        the default with --realtime when adapting to a budget under 50 ms, where the model\n"
          "                        and backend allow it)\n"
          "  --no-tail             adapt by the processing size alone (the network runs on every delivered frame)\n"
          "  --net-budget-ms MS    in that mode, adapting: the network's run-time budget (default 4 x budget up to 66.8 ms,\n"
          "                        at least 0.8 x budget; a run that fits the frame is waited for: no lag)\n"
          "memory\n"
          "  --profile P           ceiling profile: a14 a15 a16 m1 cgroup none SAFE:KILL (MB)\n"
          "  --ballast R[:MAX]     play the host app: allocate R MB/s up to MAX MB in this process\n"
          "  --no-governor         measure, but take no action (for the kill test)\n"
          "health\n"
          "  --inject KIND@FRAME[:LEN][,...]  nan-state freeze-input black-input noise-input stuck-output memory-pressure\n"
          "depth\n"
          "  --depth SRC           depth stream (a TUM folder) fused within the window\n"
          "  --depth-scale U       depth units per metre (TUM 5000, RealSense 1000; default 1000)\n"
          "  --depth-window-ms MS  pairing window (default 16)      --occlude-at METRES  occlusion mask\n"
          "outputs\n"
          "  --raw                 also DIR/raw/NNNNNN.pha.f32     --dump-input  DIR/input/NNNNNN.src.f32\n"
          "  --no-alpha            do not write alpha PNGs\n"
          "  --fgr                 also DIR/raw/NNNNNN.fgr.f32: RVM's foreground colour (H x W x 3 float32)\n"
          "  --telemetry FILE      one JSON line per frame   --report FILE.html   --overlay FILE.mp4\n"
          "  --composite B         composite the person over B: blur, blur:RADIUS, color:RRGGBB, image:FILE, video:FILE (looped), alpha\n"
          "  --fallback F          what a frame without a trusted matte shows: hold (default), blur-all, passthrough\n"
          "  --out-video FILE      the composite as a video (.mp4: H.264; .mkv: lossless FFV1), source timestamps kept\n"
          "  --v4l2-out /dev/videoN  the composite to a V4L2 output device (v4l2loopback), YUYV\n"
          "  --quiet\n"
          "Ctrl-C (or SIGTERM) ends the run at a frame boundary with every output written (exit 130 / 143);\n"
          "a second one exits at once.\n");
}

int run_parse(int argc, char **argv, run_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = HR_BACKEND_XNNPACK;
  o->budget_ms = 16.7;
  o->depth_scale = 1000;
  o->depth_window_ms = 16;
  o->adapt = -1;
  o->tail_every_frame = -1;
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
    else if (ARG("--telemetry")) o->telemetry = v;
    else if (ARG("--report")) o->report = v;
    else if (ARG("--overlay")) o->overlay = v;
    else if (ARG("--profile")) o->profile = v;
    else if (ARG("--ceiling")) o->profile = v;
    else if (ARG("--ballast")) o->ballast = v;
    else if (ARG("--inject")) o->inject = v;
    else if (ARG("--depth")) o->depth = v;
    else if (ARG("--composite")) o->composite = v;
    else if (ARG("--fallback")) o->fallback = v;
    else if (ARG("--out-video")) o->out_video = v;
    else if (ARG("--v4l2-out")) o->v4l2_out = v;
    else if (ARG("--depth-scale")) o->depth_scale = atof(v);
    else if (ARG("--depth-window-ms")) o->depth_window_ms = atof(v);
    else if (ARG("--occlude-at")) o->occlude_m = atof(v);
    else if (ARG("--budget-ms")) o->budget_ms = atof(v);
    else if (ARG("--net-budget-ms")) o->net_budget_ms = atof(v);
    else if (ARG("--backend")) {
      if (!strcmp(v, "reference") || !strcmp(v, "ref")) o->backend = HR_BACKEND_REFERENCE;
      else if (!strcmp(v, "xnnpack")) o->backend = HR_BACKEND_XNNPACK;
      else if (!strcmp(v, "vulkan")) o->backend = HR_BACKEND_VULKAN;
      else if (!strcmp(v, "auto")) o->backend = HR_BACKEND_AUTO;
      else { fprintf(stderr, "headroom run: --backend is xnnpack, reference, vulkan or auto, not '%s'\n", v); return -1; }
    }
    else if (!strcmp(a, "--raw")) o->raw = 1;
    else if (!strcmp(a, "--dump-input")) o->dump_input = 1;
    else if (!strcmp(a, "--stateless")) o->stateless = 1;
    else if (!strcmp(a, "--scene-cut")) o->scene_cut = 1;
    else if (!strcmp(a, "--realtime")) o->realtime = 1;
    else if (!strcmp(a, "--adapt")) o->adapt = 1;
    else if (!strcmp(a, "--fixed")) o->adapt = 0;
    else if (!strcmp(a, "--tail-every-frame")) o->tail_every_frame = 1;
    else if (!strcmp(a, "--no-tail")) o->tail_every_frame = 0;
    else if (!strcmp(a, "--no-governor")) o->no_governor = 1;
    else if (!strcmp(a, "--no-alpha")) o->no_alpha = 1;
    else if (!strcmp(a, "--fgr")) o->fgr = 1;
    else if (!strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--help")) { run_usage(); exit(0); }
    else { fprintf(stderr, "headroom run: unknown option or missing value: '%s'\n", a); run_usage(); return -1; }
#undef ARG
  }
  if (!o->model || !o->input || !o->out) { fprintf(stderr, "headroom run: --model, --input and --out are required\n"); run_usage(); return -1; }
  if (o->ratio < 0 || o->ratio > 1) { fprintf(stderr, "headroom run: --ratio must be in (0,1] or auto\n"); return -1; }
  if (!(o->budget_ms > 0)) { fprintf(stderr, "headroom run: --budget-ms must be > 0\n"); return -1; }
  if (o->net_budget_ms < 0) { fprintf(stderr, "headroom run: --net-budget-ms must be > 0\n"); return -1; }
  if (o->adapt < 0) o->adapt = o->realtime;
  if (o->tail_every_frame < 0) o->tail_every_frame = run_tail_default(o->realtime, o->adapt, o->budget_ms, o->fgr, o->backend);
  /* telemetry is always written when a report is asked (the report is made from it) */
  if (o->report && !o->telemetry) { snprintf(o->tel_path, sizeof o->tel_path, "%s/telemetry.jsonl", o->out); o->telemetry = o->tel_path; }
  o->status = !o->quiet && isatty(2);
  return 0;
}

int run_tail_default(int realtime, int adapt, double budget_ms, int fgr, hr_backend backend) {
  /* Live and adapting on the CPU at camera rates (a budget under 50 ms), the tail on every frame is
   * the first answer to a frame that does not fit. Measured with bench/live_quality.c on 2 CPUs of
   * an idle Xeon, 1 kernel thread, 1920x1440, pixels off > 0.1 against the base matte (tuning
   * clips bedroom and vtest 0-119): at 60 fps the processing-size ladder misses the budget (p99
   * 35-36 ms, 5-6% dropped) where the tail keeps it (p99 10.5-11.7, none dropped) at about the same
   * quality (7.3 vs 7.5%, 2.0 vs 1.7%); at 30 fps the same quality (4.4 vs 4.3%, 1.9 vs 1.7%) at
   * half the latency (p99 12.3-12.5 vs 22-26 ms); at 15 fps a tie (2.37 vs 2.36%, p99 ~60 ms both);
   * at 10 fps (768x576, budget 100 ms) the ladder is better (0.80 vs 1.34%): the network fits every
   * frame at a larger size. With the motion warp (later) the tail mode gained further at 60 fps:
   * bedroom 4.3-5.1% against the ladder's 7.4% (p99 38 ms, 22% dropped); held-out vtest 1.4 vs 1.9%.
   * Where the model or backend cannot run it, cmd_run falls back to the ladder and says so (TAIL_AUTO). */
  return realtime && adapt && budget_ms < 50 && !fgr && backend != HR_BACKEND_VULKAN && backend != HR_BACKEND_REFERENCE
             ? TAIL_AUTO : 0;
}
