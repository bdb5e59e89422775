/* `headroom info` and `headroom plan`: what a model is, and what it will cost before it runs. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "cli.h"

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

int cmd_plan(int argc, char **argv) {
  const char *model = NULL; int w = 0, h = 0, json = 0; float ratio = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc) model = argv[++i];
    else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      if (!cli_parse_size(argv[++i], &w, &h)) { fprintf(stderr, "headroom plan: --size wants WxH, got '%s'\n", argv[i]); return 2; }
    } else if (!strcmp(argv[i], "--ratio") && i + 1 < argc) {
      const char *r = argv[++i];
      ratio = !strcmp(r, "auto") ? 0 : (float)atof(r);
    } else if (!strcmp(argv[i], "--json")) json = 1;
    else { fprintf(stderr, "headroom plan: unknown option '%s'\n", argv[i]); return 2; }
  }
  if (!model) { fprintf(stderr, "headroom plan: --model is required\n"); return 2; }
  hr_model *m = cli_load_model(model);
  if (!m) return 1;
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio;
  hr_plan_info pi;
  char err[512];
  hr_status st = hr_model_plan(m, &p, &pi, err, sizeof err);
  if (st) { fprintf(stderr, "headroom plan: %s\n", err); hr_model_destroy(m); return 1; }
  if (json) {
    printf("{\"width\":%d,\"height\":%d,\"proc_width\":%d,\"proc_height\":%d,\"ratio\":%g,\"weight_bytes\":%lld,"
           "\"arena_bytes\":%lld,\"state_bytes\":%lld,\"io_bytes\":%lld,\"kernel_bytes\":%lld,\"total_bytes\":%lld,\"ops\":%d,\"gflop\":%.3f}\n",
           pi.width, pi.height, pi.proc_width, pi.proc_height, pi.downsample_ratio, (long long)pi.weight_bytes,
           (long long)pi.arena_bytes, (long long)pi.state_bytes, (long long)pi.io_bytes, (long long)pi.kernel_bytes, (long long)pi.total_bytes,
           pi.n_ops, pi.gflop);
  } else {
    printf("input        %dx%d, ratio %g -> processing %dx%d\n", pi.width, pi.height, pi.downsample_ratio, pi.proc_width, pi.proc_height);
    printf("weights      %8.2f MB (shared by all sessions of the model)\n", pi.weight_bytes / 1e6);
    printf("arena        %8.2f MB (activations, liveness-planned)\n", pi.arena_bytes / 1e6);
    printf("state        %8.2f MB (recurrent, per session)\n", pi.state_bytes / 1e6);
    printf("io           %8.2f MB (input tensor / output buffers, per session)\n", pi.io_bytes / 1e6);
    printf("kernels      %8.2f MB (XNNPACK packed weights + indirection buffers, per session; estimated)\n", pi.kernel_bytes / 1e6);
    printf("total        %8.2f MB\n", pi.total_bytes / 1e6);
    printf("ops/frame    %d, %.2f GFLOP\n", pi.n_ops, pi.gflop);
  }
  hr_model_destroy(m);
  return 0;
}
