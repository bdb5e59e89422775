/* Every op the planner emits for RVM, one at a time on the Vulkan backend (lavapipe here), against
 * the reference kernels on the same inputs: the plan's ops are run in order, each alone; before an
 * op its inputs are read back from the device, after it its outputs, and the reference op computes
 * from those inputs (the image ingest against the naive ingest, the guided-filter tail against the
 * CPU kernel; ops folded into a convolution's dispatch, a Pad before it and the activations, affine
 * ops, a multiply by a view (a GRU's z) and residual adds after it, are run with it and checked
 * against the reference ops in turn, the last one's output compared; likewise the low-resolution
 * guided filter, one dispatch on fp32 storage, its values inside the group taken from the
 * reference's own outputs and A checked too). Splits and slices read as views of their input
 * are read back through the view. Three odd shapes:
 * 62x46 NV12 at ratio 0.6, processing 37x27 (the frame resampled on the GPU, read in place by the
 * tail; kernels as the size heuristic picks them); 75x53 RGB24 at ratio 1 (the input materialised
 * on the GPU), with the convolution kernels taken in turn (4x4-blocked, split reduction, tiled
 * 64/32/16, 2x2-a-thread 32x32/64x16 (K in chunks of 32), 32x32 split 4 ways along K in the
 * workgroup, one output per thread: the heuristic and the device tuning pick some only at large
 * shapes), then again with the direct 3x3 kernel on every stride-1 3x3 convolution and split-K
 * across workgroups (slices into a scratch, a reduction dispatch) on the other convolutions it
 * applies to; 46x34 NV12 at ratio 0.6 with the kernels tuned on the device. Under the validation layer
 * where it is installed. Bound: max |d| <= 1e-4 * max(1, max |ref|) per op. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "hr_test.h"
#ifdef HR_HAVE_VULKAN
#include "backend/backend.h"
#include "graph/ops.h"
#include "session/kernels.h"
#include "backend/vulkan/vk_memory.h"

static int tested[HR_OP__COUNT];

static float *vread(hr_session *s, int v) {
  int64_t n = hr__numel(&s->plan->vals[v].t);
  float *b = malloc(sizeof(float) * (size_t)(n ? n : 1));
  hr_status st = hr__vk_value_read(s, s->bimpl, v, b);
  if (st) FATAL("value %d read: %s", v, hr_session_last_error(s));
  return b;
}

static void run_plan(hr_model *m, int w, int h, float ratio, const hr_frame *f, const char *what) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio; p.threads = 1; p.backend = HR_BACKEND_VULKAN;
  hr_session *s;
  hr_status st = hr_session_create(m, &p, &s);
  if (st == HR_ENOTSUP) SKIP("no Vulkan device named '%s' here", getenv("HR_VULKAN_DEVICE"));
  if (st) FATAL("Vulkan session %dx%d: %s", w, h, hr_status_name(st));
  const char *cv = getenv("HR_VK_CONV");
  if (cv && strstr(cv, "split")) { /* the split-K scratch exists, so some convolution here takes it */
    hr__vk_memory on, off;
    CHECK_EQ_INT(hr__vk_plan_memory(s->plan, 0, &on), HR_OK);
    setenv("HR_VK_SPLIT", "0", 1);
    CHECK_EQ_INT(hr__vk_plan_memory(s->plan, 0, &off), HR_OK);
    unsetenv("HR_VK_SPLIT");
    CHECKF(on.device_local > off.device_local, "%s: no split-K scratch (%lld vs %lld bytes)", what, (long long)on.device_local,
           (long long)off.device_local);
    printf("%s: split-K scratch %.2f MB\n", what, (double)(on.device_local - off.device_local) / 1e6);
  }
  /* one frame through the whole plan first, so the state is not zero */
  hr_outputs o;
  CHECK_EQ_INT(hr_session_push(s, f, &o), HR_OK);
  s->cur = *f;
  const hr__plan *pl = s->plan;
  int n_cmp = 0, n_fused = 0;
  if (!pl->vals[pl->vals[pl->src_val].root].src_virtual) {
    /* the model input materialised on the GPU (frame converted at its own size) vs the CPU's */
    float *g = vread(s, pl->src_val), *ref = malloc(sizeof(float) * (size_t)w * h * 3), *tmp = malloc(sizeof(float) * (size_t)w * h * 3);
    CHECK_EQ_INT(hr__ingest_naive_rgbf(f, tmp, w, h, ref), HR_OK);
    double mx = 0;
    for (int64_t j = 0; j < (int64_t)w * h * 3; j++) { double d = fabs((double)g[j] - ref[j]); if (d > mx || d != d) mx = d; }
    CHECKF(mx <= 1e-6, "%s: input conversion max |d| %g", what, mx);
    free(g); free(ref); free(tmp);
    n_cmp++;
  }
  for (int i = 0; i < pl->n_rops; i++) {
    const hr__rop *r = &pl->rops[i];
    const hr__node *nd = r->node ? r->node : &r->syn;
    /* ops the backend runs as one dispatch (a Pad read as a convolution's padding, the ops folded
     * into its epilogue): run together, the reference op by op, the last one's output compared */
    int g1 = i;
    if (hr__vk_fused(s->bimpl, i) == 2) g1++;
    for (;;) { /* and an op computed inside a later one (fused 3): through that one and its chain */
      while (g1 + 1 < pl->n_rops && hr__vk_fused(s->bimpl, g1 + 1) == 1) g1++;
      int h = g1;
      for (int q = i; q <= g1 + 1 && q < pl->n_rops; q++)
        if (hr__vk_fused(s->bimpl, q) == 3 && hr__vk_host(s->bimpl, q) > h) h = hr__vk_host(s->bimpl, q);
      if (h == g1) break;
      g1 = h;
    }
    if (g1 > i) {
      /* values made inside the group come from the reference's own outputs (the device never
       * writes them); the others are read back before the group runs */
      enum { G = 32 };
      static float *pre[G][HR_ROP_MAX_IN];
      static hr__tensor ref[G][HR_MAX_OUT];
      memset(pre, 0, sizeof pre);
      memset(ref, 0, sizeof ref);
      CHECK(g1 - i < G);
      for (int q = i; q <= g1 && q - i < G; q++)
        for (int k = 0; k < pl->rops[q].n_in; k++) {
          int x = pl->rops[q].in[k], qq, oo;
          int chained = 0;
          for (qq = i; qq < q && !chained; qq++)
            for (oo = 0; oo < pl->rops[qq].n_out; oo++) if (pl->vals[x].root == pl->vals[pl->rops[qq].out[oo]].root) chained = 1;
          if (pl->vals[x].kind != V_CONST && !chained) pre[q - i][k] = vread(s, x);
        }
      st = hr__vk_run_range(s, s->bimpl, i, g1 + 1);
      CHECKF(st == HR_OK, "%s ops %d-%d: %s", what, i, g1, hr_session_last_error(s));
      float *g = vread(s, pl->rops[g1].out[0]);
      for (int q = i; q <= g1 && q - i < G; q++) {
        const hr__rop *a = &pl->rops[q];
        hr__node na = a->node ? *a->node : a->syn;
        na.op = a->op;
        hr__tensor ai[HR_ROP_MAX_IN];
        const hr__tensor *aip[HR_ROP_MAX_IN];
        for (int k = 0; k < a->n_in; k++) {
          int x = a->in[k];
          ai[k] = pl->vals[x].t; aip[k] = &ai[k];
          if (pre[q - i][k]) { ai[k].data = pre[q - i][k]; continue; }
          for (int qq = i; qq < q; qq++) /* the latest reference output with that root */
            for (int oo = 0; oo < pl->rops[qq].n_out; oo++)
              if (pl->vals[x].root == pl->vals[pl->rops[qq].out[oo]].root) ai[k].data = ref[qq - i][oo].data;
        }
        for (int o = 0; o < a->n_out; o++) {
          ref[q - i][o] = pl->vals[a->out[o]].t;
          ref[q - i][o].data = calloc((size_t)hr__numel(&ref[q - i][o]) + 1, sizeof(float));
        }
        hr__op_exec_ref(&na, aip, a->n_in, ref[q - i], a->n_out);
        tested[a->op]++;
      }
      /* the last op's output, and the guided filter's A where the group makes it (fgflr.comp) */
      for (int q = g1; q >= i; q--) {
        int fa = pl->fgf_lr.first >= 0 && pl->vals[pl->rops[q].out[0]].root == pl->vals[pl->fgf_lr.A].root;
        if (q != g1 && !fa) continue;
        const hr__tensor *last = &ref[q - i][0];
        float *gq = q == g1 ? g : vread(s, pl->rops[q].out[0]);
        int64_t n = hr__numel(last);
        double mx = 0, mref = 1;
        for (int64_t j = 0; j < n; j++) {
          double d = fabs((double)gq[j] - ((float *)last->data)[j]);
          if (d > mx || d != d) mx = d;
          if (fabs(((float *)last->data)[j]) > mref) mref = fabs(((float *)last->data)[j]);
        }
        CHECKF(mx <= 1e-4 * mref, "%s ops %d-%d %s..%s (%s): max |d| %g (ref magnitude %g)", what, i, q, hr__op_name(r->op),
               hr__op_name(pl->rops[q].op), nd->name ? nd->name : "", mx, mref);
        if (fa) printf("%s: guided filter group ops %d-%d (one dispatch: %d), A max |d| %g\n", what, i, g1, g1 - i >= 8, mx);
        if (gq != g) free(gq);
      }
      for (int q = 0; q <= g1 - i; q++) {
        for (int k = 0; k < HR_ROP_MAX_IN; k++) free(pre[q][k]);
        for (int o = 0; o < HR_MAX_OUT; o++) free(ref[q][o].data);
      }
      free(g);
      n_cmp += g1 - i + 1; n_fused += g1 - i;
      i = g1;
      continue;
    }
    hr__tensor in[HR_ROP_MAX_IN], out[HR_MAX_OUT];
    const hr__tensor *inp[HR_ROP_MAX_IN];
    float *inb[HR_ROP_MAX_IN] = {0}, *vk_out[HR_MAX_OUT] = {0};
    for (int k = 0; k < r->n_in; k++) {
      const hr__val *x = &pl->vals[r->in[k]];
      in[k] = x->t; inp[k] = &in[k];
      int is_src = pl->vals[x->root].storage == S_SRC;
      if (x->kind != V_CONST && !(is_src && pl->vals[x->root].src_virtual) && !(r->in_place_mask & (1u << k)))
        in[k].data = inb[k] = vread(s, r->in[k]);
    }
    int pair = 0;
    st = hr__vk_run_range(s, s->bimpl, i, i + 1);
    CHECKF(st == HR_OK, "%s op %d %s: %s", what, i, hr__op_name(r->op), hr_session_last_error(s));
    for (int k = 0; k < r->n_out; k++) vk_out[k] = vread(s, r->out[k]);
    /* the reference on the same inputs */
    int64_t n0 = hr__numel(&pl->vals[r->out[0]].t);
    for (int k = 0; k < r->n_out; k++) {
      out[k] = pl->vals[r->out[k]].t;
      out[k].data = calloc((size_t)hr__numel(&out[k]) + 1, sizeof(float));
    }
    int64_t cmp_off = 0, cmp_stride = 0, cmp_c = 0; /* resize into a slice: compare the slice */
    if (r->op == HR_OP_SRC_RESIZE) {
      float *tmp = malloc(sizeof(float) * (size_t)f->width * f->height * 3);
      CHECK_EQ_INT(hr__ingest_naive_rgbf(f, tmp, (int)out[0].dims[2], (int)out[0].dims[1], out[0].data), HR_OK);
      free(tmp);
    } else if (r->op == HR_OP_FGF_TAIL) {
      hr__fgf g;
      CHECK_EQ_INT(hr__fgf_init(&g, (int)in[0].dims[1], (int)in[0].dims[2], (int)out[0].dims[1], (int)out[0].dims[2], 1, r->n_out > 1), HR_OK);
      hr__k_fgf_tail(s, NULL, &g, r, inp, out, r->n_out);
      hr__fgf_free(&g);
    } else {
      if (r->op == HR_OP_CONCAT && r->in_place_mask) {
        /* inputs already written into the output by their producer: take them from the output */
        int64_t C = out[0].dims[3], off = 0, px = n0 / C;
        for (int k = 0; k < r->n_in - 1; k++) {
          int64_t ck = in[k].dims[3];
          if (r->in_place_mask & (1u << k)) {
            in[k].data = inb[k] = malloc(sizeof(float) * (size_t)(px * ck));
            for (int64_t q = 0; q < px; q++) memcpy(inb[k] + q * ck, vk_out[0] + q * C + off, sizeof(float) * (size_t)ck);
          }
          off += ck;
        }
      }
      if (r->op == HR_OP_RESIZE_BILINEAR && r->out_c_total) {
        /* the reference resizes densely; the GPU wrote channels [off, off + C) of a wider tensor */
        cmp_c = in[0].dims[3]; cmp_off = r->out_c_off; cmp_stride = r->out_c_total;
        free(out[0].data);
        out[0].dims[3] = cmp_c;
        out[0].data = calloc((size_t)hr__numel(&out[0]), sizeof(float));
      }
      hr__node nref = *nd;
      nref.op = r->op; /* lowered ops (hardswish) keep the graph node's attributes under a new op */
      hr__op_exec_ref(&nref, inp, r->n_in, out, r->n_out);
    }
    for (int k = 0; k < r->n_out; k++) {
      int64_t n = hr__numel(&out[k]);
      double mx = 0, mref = 1;
      const float *ref = out[k].data;
      for (int64_t j = 0; j < n; j++) {
        float g = cmp_c ? vk_out[k][(j / cmp_c) * cmp_stride + cmp_off + j % cmp_c] : vk_out[k][j];
        double d = fabs((double)g - ref[j]);
        if (d > mx || d != d) mx = d;
        if (fabs(ref[j]) > mref) mref = fabs(ref[j]);
      }
      if (getenv("HR_VK_DEBUG") && !(mx <= 1e-4 * mref)) {
        for (int64_t j = 0, c = 0; j < n && c < 5; j++) {
          float g = cmp_c ? vk_out[k][(j / cmp_c) * cmp_stride + cmp_off + j % cmp_c] : vk_out[k][j];
          if (fabs(g - ref[j]) > 1e-4 * mref) { printf("  [%lld] gpu %g ref %g in %g\n", (long long)j, g, ref[j], in[0].data ? ((float *)in[0].data)[j] : 0.f); c++; }
        }
      }
      CHECKF(mx <= 1e-4 * mref, "%s op %d %s (%s) output %d: max |d| %g (ref magnitude %g)", what, i, hr__op_name(r->op),
             nd->name ? nd->name : "", k, mx, mref);
      free(out[k].data);
      free(vk_out[k]);
    }
    for (int k = 0; k < r->n_in; k++) free(inb[k]);
    tested[r->op]++;
    n_cmp += 1 + pair;
  }
  printf("%s: %d ops compared (%d run inside another op's dispatch: Pads, activations, per-channel affine, view multipliers and residual adds in convolutions; the low-resolution guided filter)\n", what, n_cmp, n_fused);
  CHECK(n_fused > 0);
  hr_session_destroy(s);
}
#endif

int main(void) {
  char mp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
#ifndef HR_HAVE_VULKAN
  (void)err;
  SKIP("this build has no Vulkan backend (libvulkan-dev / glslc absent at configure time)");
#else
  hr_test_vulkan_env(1);   /* lavapipe, under the validation layer: no message allowed */
  hr_model *m;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("cannot load %s: %s", mp, err);
  /* deterministic textured frames: RGB24 75x53, NV12 (full range) 62x46 (NV12 needs even sizes) */
  static uint8_t rgb[75 * 53 * 3], nv[62 * 46 * 2];
  uint32_t seed = 12345;
  for (size_t k = 0; k < sizeof rgb; k++) { seed = seed * 1664525u + 1013904223u; rgb[k] = (uint8_t)((k / 3 % 75) * 3 + (seed >> 27)); }
  for (size_t k = 0; k < sizeof nv; k++) { seed = seed * 1664525u + 1013904223u; nv[k] = (uint8_t)(seed >> 24); }
  hr_frame f1 = {.fmt = HR_PIX_RGB24, .width = 75, .height = 53, .planes = {rgb}, .strides = {75 * 3}};
  hr_frame f2 = {.fmt = HR_PIX_NV12_FULL, .width = 62, .height = 46, .planes = {nv, nv + 62 * 46}, .strides = {62, 62}};
  /* the default (the dispatch folds on: vk_backend.c fold_on) in the first two shapes, the folds
   * off (HR_VK_FOLDS=0) in the other two */
  run_plan(m, 62, 46, 0.6f, &f2, "62x46 r0.6 nv12 (processing 37x27)");
  static uint8_t nv3[46 * 34 * 3 / 2];
  memcpy(nv3, nv, sizeof nv3);
  hr_frame f3 = {.fmt = HR_PIX_NV12_FULL, .width = 46, .height = 34, .planes = {nv3, nv3 + 46 * 34}, .strides = {46, 46}};
  /* every convolution kernel the size heuristic or the tuner may pick, in turn over the ops */
  setenv("HR_VK_CONV", "cycle", 1); /* op i takes kernel i mod 16 (where it applies; depthwise ones: one output a thread or four pixels) */
  setenv("HR_VK_MEANSK", "2", 1);   /* the means' kernel for long reductions (2 outputs a workgroup) */
  run_plan(m, 75, 53, 1.f, &f1, "75x53 r1 rgb24, every convolution kernel in turn, HR_VK_MEANSK=2");
  unsetenv("HR_VK_MEANSK");
  unsetenv("HR_VK_CONV");
  setenv("HR_VK_FOLDS", "0", 1);
  /* the direct 3x3 kernel (stride 1) where it applies, its 16- and 32-channel workgroups in turn
   * over the ops, else split-K across workgroups (two dispatches: slices into a scratch, then
   * their sum and the epilogue) where that applies */
  setenv("HR_VK_CONV", "split,direct", 1);
  run_plan(m, 75, 53, 1.f, &f1, "75x53 r1 rgb24, direct 3x3 and split-K convolutions, HR_VK_FOLDS=0");
  unsetenv("HR_VK_FOLDS");
  /* the direct 3x3 kernel split along the input channels across workgroups, then the reduction */
  setenv("HR_VK_CONV", "dsplit", 1);
  run_plan(m, 75, 53, 1.f, &f1, "75x53 r1 rgb24, direct 3x3 split along the input channels");
  setenv("HR_VK_FOLDS", "0", 1);
  unsetenv("HR_VK_CONV");
  /* kernels picked by timing them on the device (the default on GPUs) */
  setenv("HR_VK_TUNE", "1", 1);
  run_plan(m, 46, 34, 0.6f, &f3, "46x34 r0.6 nv12, convolution kernels tuned on the device, HR_VK_FOLDS=0");
  unsetenv("HR_VK_TUNE");
  unsetenv("HR_VK_FOLDS");
  /* every op type the planner emitted was compared */
  for (int k = 0; k < HR_OP__COUNT; k++) if (tested[k]) printf("  %-28s %d\n", hr__op_name(k), tested[k]);
  CHECK(tested[HR_OP_FUSED_CONV2D] && tested[HR_OP_FUSED_DWCONV] && tested[HR_OP_DWCONV] && tested[HR_OP_CONV2D]);
  CHECK(tested[HR_OP_SRC_RESIZE] && tested[HR_OP_FGF_TAIL] && tested[HR_OP_HARDSWISH] && tested[HR_OP_CONCAT]);
  CHECK(tested[HR_OP_AVGPOOL] && tested[HR_OP_MEAN] && tested[HR_OP_RESIZE_BILINEAR] && tested[HR_OP_TANH] && tested[HR_OP_SIGMOID]);
  CHECKF(hr__vk_validation_messages() == 0, "%d validation messages", hr__vk_validation_messages());
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_ops");
#endif
}
