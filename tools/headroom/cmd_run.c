/* `headroom run`: a source, a stream (hr_stream: the live loop's policy) and the output sinks.
 * A capture thread feeds a newest-frame-wins mailbox; this thread pushes each frame it takes into
 * the stream and hands the result to every sink before the next push. Every stop is clean: the
 * source's end, --frames, Ctrl-C / SIGTERM (exit 130 / 143), a write that fails, a source error:
 * the frames delivered keep their files and telemetry lines, the report and --state-out are
 * attempted and their outcome said, and a summary is printed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture.h"
#include "cli.h"
#include "headroom/io.h"
#include "headroom/testing.h"
#include "run.h"
#include "writer.h"

static int save_state(hr_session *s, const char *path) {
  size_t sz = hr_session_state_size(s), wr = 0;
  void *buf = malloc(sz);
  int ok = buf && !hr_session_state_save(s, buf, sz, &wr) && !hr_file_write_atomic(path, buf, wr);
  int e = errno;
  free(buf);
  if (ok) return 0;
  fprintf(stderr, "headroom run: cannot save state to %s: %s\n", path, buf ? strerror(e) : "out of memory");
  return -1;
}

/* The stream; where the tail every frame was chosen by default (TAIL_AUTO) and this model or
 * backend cannot run it, the processing size alone adapts, and the first line says why. */
static hr_stream *stream_create(hr_model *m, hr_stream_params *p, const run_opts *o, char *err, size_t err_len) {
  hr_stream *s = NULL;
  hr_status st = hr_stream_create(m, p, &s, err, err_len);
  if (st == HR_ENOTSUP && o->tail_every_frame == TAIL_AUTO) {
    if (!o->quiet) fprintf(stderr, "headroom run: %s: adapting by the processing size alone\n", err);
    p->tail_every_frame = false;
    st = hr_stream_create(m, p, &s, err, err_len);
  }
  return st ? NULL : s;
}

int cmd_run(int argc, char **argv) {
  run_opts o;
  if (run_parse(argc, argv, &o)) return 2;
  cli_catch_stop_signals();
  int rc = 1;
  hr_model *m = NULL; hr_stream *stream = NULL; hr_source *src = NULL; hr_flow *flow = NULL; hr_ballast *ballast = NULL;
  hr_stats *st_frame = NULL, *st_out = NULL, *st_lat = NULL;
  capture cap; memset(&cap, 0, sizeof cap);
  writer wr; memset(&wr, 0, sizeof wr);
  void *sink_ctx[2][8] = {{0}};
  run_cfg cfg; memset(&cfg, 0, sizeof cfg); cfg.o = &o;
  char err[1024];
  const char *stop_why = NULL;   /* set when the loop ends before the source does */
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.input_format = o.input_format;
  sp.pool_size = o.realtime ? 1 : CAPTURE_POOL; /* realtime copies each frame out at once */
  if (hr_source_open(o.input, &sp, &src, err, sizeof err)) { fprintf(stderr, "headroom run: %s\n", err); goto out; }
  if (!(m = cli_load_model(o.model))) goto out;
  hr_pixfmt fmt; int fw, fh;
  hr_source_get_format(src, &fmt, &fw, &fh);
  hr_model_info mi; hr_model_get_info(m, &mi);
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = o.w ? o.w : (mi.fixed_width ? mi.fixed_width : fw);
  p.session.height = o.h ? o.h : (mi.fixed_height ? mi.fixed_height : fh);
  p.session.frame_width = fw; p.session.frame_height = fh;
  p.session.downsample_ratio = o.ratio;
  /* Live, the capture and output threads need a core of their own: kernel threads default to one
   * fewer than the CPUs (on 2 CPUs the pool's spinning workers and the capture thread otherwise
   * wait on each other: p99 latency 16.1 ms on 1 thread against 71.1 on 2 here, outputs off). */
  long ncpu = hr_cpu_count();
  p.session.threads = o.threads ? o.threads : o.realtime && ncpu > 1 ? (int)ncpu - 1 : 0;
  p.session.threads_fixed = o.threads > 0;   /* asked for: exactly that; else one thread when faster */
  p.session.backend = o.backend;
  p.session.stateless = o.stateless; p.session.scene_cut_reset = o.scene_cut; p.session.want_fgr = o.fgr;
  p.budget_ms = o.budget_ms; p.adapt = o.adapt; p.inject = o.inject;
  p.tail_every_frame = o.tail_every_frame != 0; p.net_budget_ms = o.net_budget_ms;
  /* the alpha PNGs alone read the matte (or nothing does, --no-alpha): as 8 bits and no float matte
   * at all (the health monitor reads the bytes) */
  p.session.alpha_u8 = p.alpha_u8_only = writer_float_unread(&o);
  p.governor = o.profile || o.ballast; p.governor_observe_only = o.no_governor;
  if (o.profile && hr_gov_profile_parse(o.profile, &p.profile, err, sizeof err)) { fprintf(stderr, "headroom run: --profile: %s\n", err); goto out; }
  if (depth_open(&cfg.depth, &o, &p, err, sizeof err)) { fprintf(stderr, "headroom run: --depth: %s\n", err); goto out; }
  if (!(stream = stream_create(m, &p, &o, err, sizeof err))) { fprintf(stderr, "headroom run: %s\n", err); goto out; }
  hr_session *s = hr_stream_session(stream);
  if (o.state_in) {
    void *buf = NULL; size_t len = 0;
    hr_status st = cli_read_file(o.state_in, &buf, &len);
    if (!st) st = hr_session_state_load(s, buf, len);
    free(buf);
    if (st) { fprintf(stderr, "headroom run: %s: %s\n", o.state_in, st == HR_EIO ? strerror(errno) : hr_session_last_error(s)); goto out; }
  }
  if (o.ballast) {
    hr_ballast_params bp;
    if (hr_ballast_parse(o.ballast, &bp, err, sizeof err) || hr_ballast_create(&bp, &ballast)) { fprintf(stderr, "headroom run: --ballast: %s\n", err); goto out; }
  }
  if (hr_mkdirs(o.out)) { fprintf(stderr, "headroom run: cannot create %s: %s\n", o.out, strerror(errno)); goto out; }
  hr_plan_info pi; hr_session_get_plan(s, &pi);
  cfg.model_name = mi.name; cfg.frame_w = fw; cfg.frame_h = fh; cfg.width = pi.width; cfg.height = pi.height;
  cfg.n_state = mi.n_state; cfg.stream = stream;
  const sink_ops *const *tables[2] = {run_data_sinks, run_record_sinks};
  for (int t = 0; t < 2; t++)
    for (int k = 0; tables[t][k]; k++)
      if (tables[t][k]->open(&sink_ctx[t][k], &cfg, err, sizeof err)) { fprintf(stderr, "headroom run: %s\n", err); goto out; }
  if (hr_stats_create(&st_frame) || hr_stats_create(&st_out) || hr_stats_create(&st_lat) || hr_flow_create(&flow)) goto out;
  const int nthr = pi.threads;
  if (!o.quiet)
    fprintf(stderr, "headroom run: %s -> %s, model %s at %dx%d ratio %g (processing %dx%d), plan %.1f MB, %s, %d thread%s%s%s%s\n",
            hr_source_describe(src), o.out, mi.name, pi.width, pi.height, pi.downsample_ratio, pi.proc_width,
            pi.proc_height, pi.total_bytes / 1e6, hr_session_backend(s), nthr, nthr == 1 ? "" : "s",
            o.realtime ? ", realtime" : "", o.adapt ? ", adaptive" : "", p.tail_every_frame ? ", tail every frame" : "");
  if (capture_start(&cap, src, flow, o.realtime, o.start)) { fprintf(stderr, "headroom run: cannot start capture thread\n"); goto out; }
  if (writer_start(&wr, &cfg, sink_ctx[0], sink_ctx[1], st_out)) { fprintf(stderr, "headroom run: out of memory for the output slots\n"); goto out; }
  double t_start = cli_now_ms(), last_status = 0;
  int64_t done = 0, out_dropped = 0;
  while (!o.frames || done < o.frames) {
    if (cli_stop_requested()) { stop_why = "interrupted"; break; }
    if (writer_failed(&wr, err, sizeof err)) { stop_why = err; break; }
    hr_status st;
    capture_slot *sl = capture_take(&cap, 100, &st);
    if (!sl) { if (st == HR_EAGAIN) continue; break; }
    /* a frame is only run when it can be delivered: with --realtime, one that finds the output
     * slots full is dropped now (newest wins); otherwise the loop waits for the writer */
    writer_slot *ws = writer_acquire(&wr, !o.realtime);
    if (!ws) { out_dropped++; capture_release(&cap); continue; }
    double t_take = cli_now_ms();
    if (ballast) hr_ballast_tick(ballast, (t_take - t_start) / 1e3);
    hr_stream_result r;
    depth_feed(cfg.depth, sl->f.ts_ns);   /* depth up to the first frame beyond this one's window */
    if ((st = hr_stream_push(stream, &sl->f, &r))) {
      snprintf(err, sizeof err, "frame %lld: %s", (long long)sl->index, hr_stream_last_error(stream));
      stop_why = err; capture_release(&cap); break;
    }
    if (r.events & HR_STREAM_EVENT_CHANGE_FAILED) fprintf(stderr, "headroom run: frame %lld: %s\n", (long long)sl->index, hr_stream_last_error(stream));
    depth_take(cfg.depth, &r, sl->index);   /* the stream's depth decisions to the output thread */
    hr_telemetry_record *rec = &r.record;
    rec->frame = sl->index;
    hr_flow_stats fs; hr_flow_get_stats(flow, &fs);
    rec->dropped = fs.dropped + out_dropped;
    const int wf = writer_fill(&wr, ws, &r, sl->index, done);
    if (wf) {
      stop_why = wf == -2 ? "internal error: the stream gave no 8-bit matte for the alpha PNGs" : "out of memory copying a frame for the outputs";
      capture_release(&cap);
      break;
    }
    /* delivered: the outputs are in the writer's hands (latency ends here; output_ms is the writer's) */
    double t_end = cli_now_ms();
    ws->res.record.latency_ms = t_end - sl->t_cap;
    ws->res.record.t_ms = t_end - t_start;
    writer_submit(&wr);
    hr_stats_add(st_frame, t_end - t_take);
    hr_stats_add(st_lat, t_end - sl->t_cap);
    if (r.health.state == HR_HEALTH_FAILED && r.health.changed)
      fprintf(stderr, "headroom run: frame %lld: health FAILED: %s\n", (long long)sl->index, r.health.reason);
    if (r.events & (HR_EVENT_STATE_RESET | HR_EVENT_SCENE_CUT) && !o.quiet && !o.status)
      fprintf(stderr, "headroom run: frame %lld: state reset%s%s\n", (long long)sl->index, r.events & HR_EVENT_SCENE_CUT ? " (scene cut)" : "",
              r.events & HR_EVENT_REPLANNED ? " (replanned)" : "");
    else if (r.events & HR_EVENT_REPLANNED && !o.quiet && !o.status)
      fprintf(stderr, "headroom run: frame %lld: replanned to %dx%d, state carried over\n", (long long)sl->index, rec->proc_w, rec->proc_h);
    if (o.status && t_end - last_status > 250) {
      last_status = t_end;
      fprintf(stderr, "\r\033[K frame %lld  %.1f ms  %dx%d  %s  rss %.0f MB  dropped %lld ", (long long)sl->index, t_end - t_take,
              rec->proc_w, rec->proc_h, rec->health, rec->rss_bytes / 1e6, (long long)rec->dropped);
    }
    capture_release(&cap); done++;
  }
  if (o.status) fprintf(stderr, "\n");
  capture_stop(&cap);
  writer_finish(&wr);   /* every delivered frame written (or the writer failed on one) */
  if (!stop_why && writer_failed(&wr, err, sizeof err)) stop_why = err;
  if (!stop_why && cli_stop_requested()) stop_why = "interrupted";
  if (!stop_why && cap.error) { snprintf(err, sizeof err, "%s", cap.errmsg); stop_why = err; }
  /* the end, whatever ended it: outputs, state, summary */
  int damaged = 0;
  if (!stop_why && !o.frames) {
    /* a damaged input must not pass silently: decoder errors, or far fewer frames than announced */
    hr_source_stats ss; hr_source_get_stats(src, &ss);
    int64_t announced = hr_source_frame_count(src);
    if (ss.warnings > 0 || (announced > 0 && cap.read < announced - announced / 20 - 1)) {
      fprintf(stderr, "headroom run: %s: damaged input: %lld frame(s) decoded with errors, %lld of %lld announced frames read "
              "(outputs written are valid)\n", o.input, (long long)ss.warnings, (long long)cap.read, (long long)announced);
      damaged = 1;
    }
  }
  if (stop_why) fprintf(stderr, "headroom run: stopped after %lld frames written: %s (outputs written so far are valid)\n", (long long)wr.written, stop_why);
  run_end end = {stop_why != NULL};
  int sink_failed = 0;
  for (int t = 0; t < 2; t++)
    for (int k = 0; tables[t][k]; k++) {
      if (sink_ctx[t][k] && tables[t][k]->close && tables[t][k]->close(sink_ctx[t][k], &end, err, sizeof err)) {
        fprintf(stderr, "headroom run: %s\n", err); sink_failed = 1;
      }
      sink_ctx[t][k] = NULL;
    }
  int state_failed = o.state_out && save_state(hr_stream_session(stream), o.state_out);
  if (!o.quiet) {
    double wall = cli_now_ms() - t_start;
    hr_flow_stats fs; hr_flow_get_stats(flow, &fs);
    hr_stream_stats ss; hr_stream_get_stats(stream, &ss);
    fprintf(stderr, "headroom run: %lld frames in %.1f s (%.1f fps delivered), dropped %lld (%lld with the outputs busy), frame p50 %.1f / p99 %.1f ms, "
            "latency p50 %.1f / p99 %.1f ms\n", (long long)done, wall / 1e3, done / (wall / 1e3), (long long)(fs.dropped + out_dropped),
            (long long)out_dropped, hr_stats_quantile(st_frame, 0.5), hr_stats_quantile(st_frame, 0.99), hr_stats_quantile(st_lat, 0.5),
            hr_stats_quantile(st_lat, 0.99));
    fprintf(stderr, "headroom run: output p50 %.2f ms; replans %lld (%lld failed), governor actions %lld, suspended frames %lld, "
            "health resets %lld, rebuilds %lld\n", hr_stats_quantile(st_out, 0.5), (long long)ss.replans, (long long)ss.change_failures,
            (long long)ss.governor_actions, (long long)ss.suspended_frames, (long long)ss.health_resets, (long long)ss.rebuilds);
    fprintf(stderr, "headroom run: health frames:");
    for (int k = 0; k < 6; k++) if (ss.health_frames[k]) fprintf(stderr, " %s %lld", hr_health_state_name((hr_health_state)k), (long long)ss.health_frames[k]);
    if (ss.tail_every_frame) fprintf(stderr, "; tail every frame, network runs %lld (%.1f per s)", (long long)ss.net_runs, ss.net_runs / (wall / 1e3));
    fprintf(stderr, "\n");
    if (cfg.depth) { char buf[1024]; depth_summary(cfg.depth, buf, sizeof buf); fprintf(stderr, "headroom run: depth: %s\n", buf); }
    if (o.state_out && !state_failed) fprintf(stderr, "headroom run: state saved to %s\n", o.state_out);
    fprintf(stderr, "headroom run: %lld frames written to %s\n", (long long)wr.written, o.out);
  }
  int sig = cli_stop_signal();
  rc = sig ? 128 + sig : (stop_why || damaged || sink_failed || state_failed) ? 1 : 0;
out:
  capture_stop(&cap);
  writer_finish(&wr);
  for (int t = 0; t < 2; t++)   /* only after an early failure: a clean end closed them above */
    for (int k = 0; k < 8; k++)
      if (sink_ctx[t][k]) { run_end e = {1}; const sink_ops *const *tb = t ? run_record_sinks : run_data_sinks; if (tb[k]->close) tb[k]->close(sink_ctx[t][k], &e, err, sizeof err); }
  hr_stats_destroy(st_frame); hr_stats_destroy(st_out); hr_stats_destroy(st_lat); depth_close(cfg.depth);
  hr_ballast_destroy(ballast); hr_flow_destroy(flow);
  hr_stream_destroy(stream);
  hr_model_destroy(m);
  hr_source_destroy(src);
  return rc;
}
