/* headroom CLI entry point: dispatches to subcommands (info, plan, run, bench). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "../../src/io/ffmod.h"

/* A model named by name (rvm): HR_MODEL_DIR/NAME.json when that is set; else ./models/NAME.json,
 * or, when ./models lacks it, the cache headroom-fetch-models fills
 * (${XDG_CACHE_HOME:-~/.cache}/headroom/models/NAME.json). */
const char *cli_model_path(const char *arg, char *buf, size_t n) {
  struct stat st;
  if (strchr(arg, '/') || strstr(arg, ".json") || stat(arg, &st) == 0) return arg;
  const char *dir = getenv("HR_MODEL_DIR");
  snprintf(buf, n, "%s/%s.json", dir && *dir ? dir : "models", arg);
  if ((dir && *dir) || stat(buf, &st) == 0) return buf;
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char cached[1024];
  if (xdg && *xdg) snprintf(cached, sizeof cached, "%s/headroom/models/%s.json", xdg, arg);
  else if (home && *home) snprintf(cached, sizeof cached, "%s/.cache/headroom/models/%s.json", home, arg);
  else return buf;
  if (stat(cached, &st) == 0) snprintf(buf, n, "%s", cached);
  return buf;
}

double cli_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Set by the handler, read by the capture, writer and main threads: a lock-free atomic (a volatile
 * sig_atomic_t is only for the thread the signal lands on; TSan reported the race) */
static _Atomic int stop_signal;

static void on_stop_signal(int sig) {
  const int e = errno;
  if (atomic_load_explicit(&stop_signal, memory_order_relaxed)) _exit(128 + sig);   /* the second one: at once */
  atomic_store_explicit(&stop_signal, sig, memory_order_relaxed);
  errno = e;
}

void cli_catch_stop_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;   /* no SA_RESTART: sleeps and waits return early */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int cli_stop_requested(void) { return atomic_load_explicit(&stop_signal, memory_order_relaxed) != 0; }
int cli_stop_signal(void) { return atomic_load_explicit(&stop_signal, memory_order_relaxed); }

hr_status cli_read_file(const char *path, void **buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return HR_EIO;
  fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
  *buf = malloc(n > 0 ? (size_t)n : 1);
  if (!*buf) { fclose(f); return HR_ENOMEM; }
  *len = fread(*buf, 1, (size_t)n, f);
  fclose(f);
  return *len == (size_t)n ? HR_OK : HR_EIO;
}

bool cli_parse_size(const char *s, int *w, int *h) {
  char x;
  return s && sscanf(s, "%d%c%d", w, &x, h) == 3 && (x == 'x' || x == 'X') && *w > 0 && *h > 0;
}

hr_model *cli_load_model(const char *arg) {
  char buf[1024], err[1024];
  hr_model *m = NULL;
  hr_status st = hr_model_load(cli_model_path(arg, buf, sizeof buf), &m, err, sizeof err);
  if (st) { fprintf(stderr, "headroom: %s (%s)\n", err, hr_status_name(st)); return NULL; }
  return m;
}

static void usage(void) {
  fprintf(stderr,
          "usage: headroom COMMAND [options]\n"
          "  info  --model M                         inputs, outputs, state, parameters, op histogram\n"
          "  plan  --model M --size WxH [--ratio R] [--backend B] [--profile P] [--sessions N [--measure]] [--json]\n"
          "        [--input SRC [--input-format F]] [--realtime [--budget-ms MS] [--fixed] [--no-tail|--tail-every-frame]] [--fgr]\n"
          "                                                memory plan before running\n"
          "  run   --model M --input SRC --out DIR [--size WxH] [--ratio R|auto] [--frames N] [--raw] ...\n"
          "  bench --model M --size WxH [--ratio R] [--format rgbf32|nv12|i420|bgra|rgb24] [--frames N] [--threads N] [--backend B] [--alpha-u8] [--register] [--json] [--ops]\n"
          "Models: a TF.js graph-model .json, a folder holding one, or rvm|meet|selfie (from models/,\n"
          "  else from ~/.cache/headroom/models, which headroom-fetch-models fills).\n"
          "'headroom --version' prints the versions of headroom, XNNPACK and FFmpeg.\n"
          "'headroom COMMAND --help' lists a command's options.\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) { usage(); return argc < 2 ? 2 : 0; }
  if (!strcmp(argv[1], "--version")) {
    const hr__ffmod_api *ff;   /* FFmpeg is a module (src/io/ffmod.h): loaded here, so the line names its version */
    char e[8];
    hr__ffmod_get(&ff, e, sizeof e);
    printf("%s\n", hr_version());
    return 0;
  }
  const char *c = argv[1];
  if (!strcmp(c, "info")) return cmd_info(argc - 1, argv + 1);
  if (!strcmp(c, "plan")) return cmd_plan(argc - 1, argv + 1);
  if (!strcmp(c, "run")) return cmd_run(argc - 1, argv + 1);
  if (!strcmp(c, "bench")) return cmd_bench(argc - 1, argv + 1);
  fprintf(stderr, "headroom: unknown command '%s'\n", c);
  usage();
  return 2;
}
