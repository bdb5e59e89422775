/* two_sessions: one model, two independent streams. Shows the session API end to end: load a
 * model once, run two sessions side by side on two videos (or image folders), reset one of them,
 * and move a stream's recurrent state into a new session with save/load.
 *
 *   usage: two_sessions MODEL SOURCE_A SOURCE_B [FRAMES] [WxH]
 *   e.g.   two_sessions models/rvm.json ../shared/data/sam2-bedroom/frames vtest.avi 40 256x144
 *
 * Prints, per frame, the mean alpha of each stream (the share of the picture that is person) and
 * the events the library raised. Uses only the public headers. */
#include <stdio.h>
#include <stdlib.h>
#include <headroom.h>    /* models, sessions, outputs, state snapshots */
#include <headroom/io.h> /* frame sources: image folders, video files, cameras */

/* Mean of an alpha matte: a cheap summary worth printing. */
static double mean_alpha(const hr_outputs *o) {
  double sum = 0;
  for (int i = 0; i < o->width * o->height; i++) sum += o->alpha[i];
  return sum / ((double)o->width * o->height);
}

/* Create a session of size w x h on model m. The params struct is filled with defaults first,
 * then only what matters here is set; everything else keeps its documented default. */
static hr_session *open_session(hr_model *m, int w, int h) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w;               /* model input size: frames of any size are resized to it */
  p.height = h;
  p.downsample_ratio = 0;    /* 0 = auto (RVM processes at about 512 px on the long side) */
  p.threads = 1;             /* one thread per stream: two streams, two cores */
  hr_session *s = NULL;
  hr_status st = hr_session_create(m, &p, &s);
  if (st) fprintf(stderr, "cannot create a %dx%d session: %s\n", w, h, hr_status_str(st));
  return s;
}

/* Read the next frame of src and push it through session s. Returns 1 with *o filled, 0 at the end
 * of the source or on error. The frame is borrowed from the source and the outputs from the
 * session: *o stays valid until the next call on s, whatever happens to the other session. */
static int step(hr_source *src, hr_session *s, hr_outputs *o) {
  hr_frame f;
  hr_status st = hr_source_read(src, &f);
  if (st == HR_EEOF) return 0;
  if (st) { fprintf(stderr, "read: %s\n", hr_source_last_error(src)); return 0; }
  st = hr_session_push(s, &f, o);
  if (st) { fprintf(stderr, "push: %s\n", hr_session_last_error(s)); return 0; }
  return 1;
}

static const char *events(uint32_t ev) {
  if (ev & HR_EVENT_SCENE_CUT) return " [scene cut: state reset]";
  if (ev & HR_EVENT_STATE_RESET) return " [state reset]";
  return "";
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL SOURCE_A SOURCE_B [FRAMES] [WxH]\n", argv[0]);
    return 2;
  }
  int n = argc > 4 ? atoi(argv[4]) : 40, w = 256, h = 144;
  if (argc > 5 && sscanf(argv[5], "%dx%d", &w, &h) != 2) { fprintf(stderr, "size is WxH\n"); return 2; }
  int rc = 1;
  char err[512];
  hr_model *m = NULL;
  hr_source *a = NULL, *b = NULL;
  hr_session *sa = NULL, *sb = NULL;
  void *blob = NULL;

  /* 1. Load the model once. Its weights are shared by every session created from it. */
  if (hr_model_load(argv[1], &m, err, sizeof err)) { fprintf(stderr, "%s\n", err); goto out; }

  /* 2. Two frame sources. NULL params = defaults (a pool of 3 frames kept valid at once). */
  if (hr_source_open(argv[2], NULL, &a, err, sizeof err) || hr_source_open(argv[3], NULL, &b, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    goto out;
  }
  printf("A: %s\nB: %s\n", hr_source_describe(a), hr_source_describe(b));

  /* 3. Two sessions on the one model. Each owns its recurrent state and activation memory, so
   *    the streams never see each other: A's outputs here are what A alone would give. */
  sa = open_session(m, w, h);
  sb = open_session(m, w, h);
  if (!sa || !sb) goto out;
  /* The plan, known before the first frame. The model holds the weights and, for sessions of the
   * same size and ratio, the kernels' packed weights and indirection buffers: the first session
   * made them, the second reuses them, so each session's own memory is mostly arena + state. */
  hr_plan_info pi;
  hr_model_memory mm;
  hr_session_get_plan(sa, &pi);
  hr_model_get_memory(m, &mm);
  printf("each session: %dx%d, processing %dx%d; %.1f MB of its own (arena %.1f + state %.1f + io %.1f + kernels %.1f)\n",
         pi.width, pi.height, pi.proc_width, pi.proc_height, pi.session_bytes / 1e6, pi.arena_bytes / 1e6,
         pi.state_bytes / 1e6, pi.io_bytes / 1e6, pi.kernel_bytes / 1e6);
  printf("the model, once for both: weights %.1f MB + shared kernels %.1f MB\n", mm.weight_bytes / 1e6,
         mm.kernel_shared_bytes / 1e6);

  for (int i = 0; i < n; i++) {
    /* 4. Half way, B starts afresh, as after a cut the caller knows about (a new shot, a camera
     *    switch). The next output of B carries HR_EVENT_STATE_RESET. */
    if (i == n / 2) {
      hr_session_reset(sb);
      printf("-- B: state reset\n");
    }
    /* 5. At three quarters, A moves to a new session: the state is saved into a caller buffer
     *    (ask the size, then save), the old session destroyed, a new one created and the state
     *    loaded into it. The stream goes on exactly as if nothing had happened; the same blob
     *    could go to a file and to another process (`headroom run --state-out / --state-in`). */
    if (i == 3 * n / 4) {
      size_t len = hr_session_state_size(sa), written = 0;
      blob = malloc(len);
      if (!blob || hr_session_state_save(sa, blob, len, &written)) { fprintf(stderr, "cannot save the state\n"); goto out; }
      hr_session_destroy(sa);
      sa = open_session(m, w, h);
      if (!sa) goto out;
      /* Loading checks everything (model, shapes, checksum) before changing anything: a blob
       * that does not fit is refused with a message and the session keeps its own state. */
      if (hr_session_state_load(sa, blob, written)) { fprintf(stderr, "load: %s\n", hr_session_last_error(sa)); goto out; }
      printf("-- A: %zu bytes of state moved into a new session\n", written);
      free(blob);
      blob = NULL;
    }
    hr_outputs oa, ob;
    if (!step(a, sa, &oa) || !step(b, sb, &ob)) break;
    /* oa is still valid here although sb ran after it: outputs are per session. */
    printf("frame %3lld: A alpha %.4f%s   B alpha %.4f%s\n", (long long)oa.frame_index, mean_alpha(&oa), events(oa.events),
           mean_alpha(&ob), events(ob.events));
  }
  rc = 0;
out:
  /* 6. Tear down: sessions before the model. Every destroy is NULL-safe. */
  free(blob);
  hr_session_destroy(sa);
  hr_session_destroy(sb);
  hr_source_destroy(a);
  hr_source_destroy(b);
  hr_model_destroy(m);
  return rc;
}
