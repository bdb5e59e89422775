/* The CPU engine's fusions (exec.c, issue 15) change no float: RVM on real frames, the fused
 * engine (ConvGRU gates after the sigmoid, tanh + output arithmetic, both in the epilogue of the 3x3
 * Winograd convolution before them where it runs, the low-resolution guided filter as one kernel, resize
 * with the concats around it, per-channel binary ops and their pairs, our AvgPool and channel
 * mean, a convolution with the HardSwish after it band by band, a pointwise convolution after a
 * banded one on its bands, a resize with the crop and concat after it, a resize-concat made band by
 * band in the tasks of the banded convolution that reads it, or row by row in the tasks of the
 * Winograd convolution that reads it, a split and the concat after it in a Winograd convolution's
 * epilogue, the last pointwise convolution in the epilogue of the Winograd one before it) against
 * every op on its own kernel (HR_EXEC_FUSE=0), at four sizes (the third with odd sizes in the decoder, as most of the live loop's rungs have), alpha and foreground
 * compared bit for bit over frames with the recurrent state carried, the fused session on two
 * threads and the plain one on one (the split over the pool must not matter either). Also checks
 * that each fusion happened (a plan that stopped matching would silently test nothing) and that
 * the guided-filter group's kernel and the per-channel pair are where the plan says. Also: the
 * means over the pixels on our kernel in both engines (gap), and the banded
 * convolutions cut into 3x as many bands (HR_BAND_SPLIT=3, what a 16-thread pool gets) give the
 * same bits as the plan's bands (with the output block on XNNPACK's bands, HR_WINO_OUT=0: where the
 * Winograd runs it takes those convolutions); and without the foreground (only the alpha's channel of the
 * guided filter's A and b made: fgflr1) the mattes the same bits as the plain engine's; and on 8
 * threads (the expansions' HardSwish apart) the same bits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test_frames.h"

#define NF 3
static int no_wino_epi;   /* the next session made without the Winograd epilogues (HR_WINO_EPI=0) */
static int wino_out_off;  /* the next session made with the output block on XNNPACK's bands (HR_WINO_OUT=0) */

static hr_session *make_fgr(hr_model *m, int w, int h, int threads, int fuse, const char *band_split, int fgr) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = 0.25f; p.threads = threads; p.backend = HR_BACKEND_XNNPACK;
  p.want_fgr = fgr;
  if (!fuse) setenv("HR_EXEC_FUSE", "0", 1);
  if (band_split) setenv("HR_BAND_SPLIT", band_split, 1);
  if (no_wino_epi) setenv("HR_WINO_EPI", "0", 1);
  if (wino_out_off) setenv("HR_WINO_OUT", "0", 1);
  hr_session *s = NULL;
  char err[512] = "";
  hr_status st = hr_session_create_err(m, &p, &s, err, sizeof err);
  unsetenv("HR_EXEC_FUSE");
  unsetenv("HR_BAND_SPLIT");
  unsetenv("HR_WINO_EPI");
  unsetenv("HR_WINO_OUT");
  CHECKF(st == HR_OK, "create (fuse %d): %s", fuse, err);
  return s;
}
static hr_session *make(hr_model *m, int w, int h, int threads, int fuse, const char *band_split) {
  return make_fgr(m, w, h, threads, fuse, band_split, 1);
}

/* How many ops run on kernel kind `kind` (the first word of hr_session_op_detail, up to an '@' that
 * says where a measured pool choice left it). */
static int count_kind(const hr_session *s, const char *kind) {
  hr_plan_info pi;
  hr_session_get_plan(s, &pi);
  int n = 0;
  size_t l = strlen(kind);
  for (int i = 0; i < pi.n_ops; i++) {
    const char *d = hr_session_op_detail(s, i);
    n += d && !strncmp(d, kind, l) && (d[l] == ' ' || d[l] == '@');
  }
  return n;
}

/* Push the NF frames to both sessions; the frames whose matte (and foreground, with fgr) differ. */
static int frames_differ(hr_session *a, hr_session *b, const hr_frame *fr, int w, int h, int fgr) {
  int d = 0;
  for (int i = 0; i < NF; i++) {
    hr_outputs oa, ob;
    CHECK_EQ_INT(hr_session_push(a, &fr[i], &oa), HR_OK);
    CHECK_EQ_INT(hr_session_push(b, &fr[i], &ob), HR_OK);
    d += memcmp(oa.alpha, ob.alpha, (size_t)w * h * 4) != 0 || (fgr && memcmp(oa.fgr, ob.fgr, (size_t)w * h * 12) != 0);
  }
  return d;
}

int main(void) {
  hr_model *m; hr_source *src; hr_frame fr[NF];
  if (!hr_test_rvm_frames(&m, &src, fr, NF)) { hr_source_destroy(src); hr_model_destroy(m); return hr_test_finish("test_exec_fuse"); }
  /* 980x736: processing 245x184, the live loop's 0.128 rung at 1920x1440, odd sizes in the decoder */
  /* 1920x1080: processing 480x270, bands of ~13 rows, where a resize-concat is made in its
   * convolution's bands (fuse_resize_conv) */
  int sizes[4][2] = {{fr[0].width, fr[0].height}, {640, 480}, {980, 736}, {1920, 1080}};
  for (int z = 0; z < 4; z++) {
    int w = sizes[z][0], h = sizes[z][1];
    hr_session *a = make(m, w, h, 2, 1, NULL), *b = make(m, w, h, 1, 0, NULL), *c = make(m, w, h, 2, 1, "3");
    if (!a || !b || !c) { hr_session_destroy(a); hr_session_destroy(b); hr_session_destroy(c); break; }
    int ga = count_kind(a, "gap"), gb = count_kind(b, "gap");
    printf("%dx%d: gap       fused engine %2d ops, plain %d\n", w, h, ga, gb);
    CHECK_EQ_INT(ga, 9); /* RVM's eight squeeze-excitation means and LR-ASPP's */
    CHECK_EQ_INT(gb, 9);
    /* the cut bands are operators of other shapes: more band operators, other templates (where the
     * output block is banded: below) */
    hr_plan_info pa, pc;
    hr_session_get_plan(a, &pa);
    hr_session_get_plan(c, &pc);
    printf("%dx%d: kernels %lld + shared %lld bytes, bands cut in 3: %lld + %lld\n", w, h, (long long)pa.kernel_bytes,
           (long long)pa.kernel_shared_bytes, (long long)pc.kernel_bytes, (long long)pc.kernel_shared_bytes);
    /* RVM's four ConvGRUs: the sigmoid and gates, and the tanh and output arithmetic, each as one
     * kernel (grugates, tanhgru) or, where the Winograd runs, in the epilogue of the 3x3 convolution
     * before them (winogates, winotgru: fuse_wino_epi); below, a fused session without the
     * epilogues gives the same bits as well */
    const int wino = count_kind(b, "wino") > 0;
    const int wg = count_kind(a, "winogates"), wt = count_kind(a, "winotgru");
    printf("%dx%d: winogates %d winotgru %d (Winograd %s)\n", w, h, wg, wt, wino ? "on" : "off");
    CHECK_EQ_INT(wg, wino ? 4 : 0);
    CHECK_EQ_INT(wt, wino ? 4 : 0);
    CHECK_EQ_INT(count_kind(a, "tanhgru") + wt, 4);
    CHECK_EQ_INT(count_kind(a, "grugates") + wg, 4);
    const char *kinds[] = {"fgflr", "bcast", "avgpool", "fused"};
    for (int k = 0; k < 4; k++) {
      int na = count_kind(a, kinds[k]), nb = count_kind(b, kinds[k]);
      printf("%dx%d: %-9s fused engine %2d ops, plain %d\n", w, h, kinds[k], na, nb);
      CHECKF(na > 0, "%s never used at %dx%d", kinds[k], w, h);
      CHECK_EQ_INT(nb, 0);
    }
    CHECK_EQ_INT(count_kind(a, "fgflr"), 1);
    /* depthwise convolutions with the batch norm and HardSwish after them in their epilogue (fuse_dw_epi):
     * RVM's 5 FusedDepthwiseConv2dNative + HardSwish and 3 DepthwiseConv2dNative + Mul, Add, HardSwish;
     * only where our depthwise kernel runs (AVX-512: elsewhere XNNPACK's, and there is no epilogue) */
    int dwa = count_kind(a, "dwepi"), dwo = count_kind(a, "dwconv");
    printf("%dx%d: dwepi     fused engine %2d ops (%d without an epilogue), plain %d\n", w, h, dwa, dwo, count_kind(b, "dwepi"));
    if (dwa + dwo > 0) CHECK_EQ_INT(dwa, 8);
    /* convolutions with the HardSwish after them done band by band (fuse_conv_hswish): MobileNetV3's
     * 10 expansions, and the first convolution where the plan bands it; AVX-512 only, as above */
    /* on AVX-512 the pointwise ones on our matrix product with the HardSwish in its epilogue
     * (use_pwg: pwghswish), the 3x3 first one on XNNPACK's bands; the other pointwise ones on it too (pwg) */
    int hsa = count_kind(a, "xnnhswish"), pgh = count_kind(a, "pwghswish"), pg = count_kind(a, "pwg");
    printf("%dx%d: xnnhswish fused engine %2d ops (pwghswish %d, pwg %d), plain %d\n", w, h, hsa, pgh, pg, count_kind(b, "xnnhswish"));
    if (dwa + dwo > 0) CHECK(hsa + pgh == 10 || hsa + pgh == 11);
    if (dwa + dwo > 0) CHECK(pgh == 10 && hsa <= 1 && pg >= 20);
    CHECK_EQ_INT(count_kind(b, "xnnhswish") + count_kind(b, "pwghswish") + count_kind(b, "pwg"), 0);
    CHECK_EQ_INT(count_kind(b, "dwepi"), 0);
    /* the 1x1 convolution after the last 3x3 one at the processing size, run band by band on the
     * 3x3's bands (fuse_conv_pw): RVM's output 16 -> 4 */
    int pwa = count_kind(a, "xnnpw");
    printf("%dx%d: xnnpw     fused engine %2d ops, plain %d\n", w, h, pwa, count_kind(b, "xnnpw"));
    CHECK_EQ_INT(pwa, wino ? 0 : 1);   /* where the Winograd runs it takes both (hr__plan_wino); HR_WINO_OUT=0 below */
    CHECK_EQ_INT(count_kind(b, "xnnpw"), 0);
    /* where the Winograd runs the 3x3, that 16 -> 4 in its epilogue (fuse_wino_pw) */
    const int wpa = count_kind(a, "winopw");
    printf("%dx%d: winopw    fused engine %2d ops, plain %d\n", w, h, wpa, count_kind(b, "winopw"));
    CHECK_EQ_INT(wpa, wino ? 1 : 0);
    CHECK_EQ_INT(count_kind(b, "winopw"), 0);
    /* a resize, the crop after it and the concat after that in one pass (crop_cat): RVM's decoder
     * crops where an upsampled size is odd; at 245x184 two such chains are adjacent ops */
    int rca = count_kind(a, "resizecrop"), rcc = count_kind(a, "xnnrccrop"), rwc = count_kind(a, "winorccrop") + count_kind(a, "winorccropsplit");
    printf("%dx%d: resizecrop fused engine %2d ops (%d more in a convolution's bands, %d in a Winograd's tasks), plain %d\n", w, h, rca, rcc,
           rwc, count_kind(b, "resizecrop"));
    if (w == 980) CHECK_EQ_INT(rca + rcc + rwc, 2);
    CHECK_EQ_INT(count_kind(b, "resizecrop"), 0);
    /* resize-concats made band by band in the banded 3x3 convolution after them (fuse_resize_conv):
     * the decoder's output block where its bands are tall enough (at 1920x1080; the halo rows made
     * twice would add over a quarter at the smaller sizes), its slots at the start of the concat's
     * bytes, two threads: two slots in use at once */
    int rcv = count_kind(a, "xnnrc") + rcc;
    printf("%dx%d: xnnrc     fused engine %2d ops, plain %d\n", w, h, rcv, count_kind(b, "xnnrc") + count_kind(b, "xnnrccrop"));
    CHECK_EQ_INT(rcv, !wino && w == 1920 ? 1 : 0);
    CHECK_EQ_INT(count_kind(b, "xnnrc") + count_kind(b, "xnnrccrop"), 0);
    /* resize-concats made row by row in the tasks of the Winograd convolution after them
     * (fuse_resize_wino): the decoder's three inner blocks where each of the 2 threads gets 3 tile
     * rows or more (at 1920x1440 r0.25 180x240 and 90x120; 45x60 has a crop and a concat between) */
    int rwa = count_kind(a, "winorc") + count_kind(a, "winorcsplit") + rwc, rsa = count_kind(a, "resizecat");
    printf("%dx%d: winorc    fused engine %2d ops (resizecat %d), plain %d\n", w, h, rwa, rsa, count_kind(b, "winorc") + count_kind(b, "winorccrop"));
    CHECK(wino ? rwa >= 2 : rwa == 0);
    CHECK(rsa + rca + rcv + rwa >= 3);   /* the decoder's 4 resize-concats fused one way or another (one may be in xnnrc) */
    CHECK_EQ_INT(count_kind(b, "winorc") + count_kind(b, "winorccrop") + count_kind(b, "resizecat"), 0);
    /* the Split and ConcatV2 after the decoder's 3 inner Winograd convolutions (the block's output
     * cut in two, the ConvGRU's half joined with its state) in their epilogue (fuse_wino_split);
     * the bottleneck's split reads the encoder's output and stays a split-concat */
    const int wsp = count_kind(a, "winosplit") + count_kind(a, "winorcsplit") + count_kind(a, "winorccropsplit");
    printf("%dx%d: winosplit fused engine %2d ops (splitcat %d)\n", w, h, wsp, count_kind(a, "splitcat"));
    CHECK_EQ_INT(wsp, wino ? 3 : 0);
    CHECK_EQ_INT(count_kind(a, "splitcat") + wsp, 4);
    int da = 0, df = 0, dc = 0;
    for (int i = 0; i < NF; i++) {
      hr_outputs oa, ob;
      CHECK_EQ_INT(hr_session_push(a, &fr[i], &oa), HR_OK);
      CHECK_EQ_INT(hr_session_push(b, &fr[i], &ob), HR_OK);
      size_t n = (size_t)w * h;
      da += memcmp(oa.alpha, ob.alpha, n * 4) != 0;
      CHECK(oa.fgr && ob.fgr);
      if (oa.fgr && ob.fgr) df += memcmp(oa.fgr, ob.fgr, n * 12) != 0;
      hr_outputs oc;
      CHECK_EQ_INT(hr_session_push(c, &fr[i], &oc), HR_OK);
      dc += memcmp(oa.alpha, oc.alpha, n * 4) != 0 || (oa.fgr && oc.fgr && memcmp(oa.fgr, oc.fgr, n * 12) != 0);
    }
    printf("%dx%d: %d of %d frames differ with the bands cut in 3 (HR_BAND_SPLIT=3)\n", w, h, dc, NF);
    CHECK_EQ_INT(dc, 0);
    printf("%dx%d: %d of %d mattes and %d foregrounds differ (fused, 2 threads, vs plain, 1 thread)\n", w, h, da, NF, df);
    CHECK_EQ_INT(da, 0);
    CHECK_EQ_INT(df, 0);
    hr_session_destroy(a);
    hr_session_destroy(b);
    hr_session_destroy(c);
  }
  /* the output block on XNNPACK's bands (HR_WINO_OUT=0; what a CPU without the Winograd runs):
   * the resize-concat made in the first convolution's bands (xnnrc), the pointwise convolution on
   * the second's (xnnpw), the bands cut in 3 as well; the same bits as the plain engine */
  {
    const int w = 1920, h = 1080;
    wino_out_off = 1;
    hr_session *a = make(m, w, h, 2, 1, NULL), *c = make(m, w, h, 2, 1, "3"), *b = make(m, w, h, 1, 0, NULL);
    wino_out_off = 0;
    if (a && b && c) {
      const int pw = count_kind(a, "xnnpw"), rc = count_kind(a, "xnnrc") + count_kind(a, "xnnrccrop");
      hr_plan_info pa, pc;
      hr_session_get_plan(a, &pa);
      hr_session_get_plan(c, &pc);
      printf("%dx%d output block on XNNPACK: xnnpw %d, xnnrc %d, kernels %lld bytes, bands cut in 3: %lld\n", w, h, pw, rc,
             (long long)pa.kernel_bytes, (long long)pc.kernel_bytes);
      CHECK_EQ_INT(pw, 1);
      CHECK_EQ_INT(rc, 1);
      CHECK(pc.kernel_bytes > pa.kernel_bytes);
      int da = 0, dc = 0;   /* the three sessions frame by frame, each with its state carried */
      for (int i = 0; i < NF; i++) {
        hr_outputs oa, ob, oc;
        CHECK_EQ_INT(hr_session_push(a, &fr[i], &oa), HR_OK);
        CHECK_EQ_INT(hr_session_push(b, &fr[i], &ob), HR_OK);
        CHECK_EQ_INT(hr_session_push(c, &fr[i], &oc), HR_OK);
        da += memcmp(oa.alpha, ob.alpha, (size_t)w * h * 4) != 0 || memcmp(oa.fgr, ob.fgr, (size_t)w * h * 12) != 0;
        dc += memcmp(oc.alpha, ob.alpha, (size_t)w * h * 4) != 0 || memcmp(oc.fgr, ob.fgr, (size_t)w * h * 12) != 0;
      }
      printf("%dx%d output block on XNNPACK: %d (bands cut in 3: %d) of %d frames differ from the plain engine\n", w, h, da, dc, NF);
      CHECK_EQ_INT(da, 0);
      CHECK_EQ_INT(dc, 0);
    }
    hr_session_destroy(a);
    hr_session_destroy(b);
    hr_session_destroy(c);
  }
  /* the fused engine without the Winograd epilogues: the gates and tanh-GRU kernels on their own
   * (what a CPU without the Winograd runs), the same bits again */
  {
    const int w = fr[0].width, h = fr[0].height;
    no_wino_epi = 1;
    hr_session *a = make(m, w, h, 2, 1, NULL);
    no_wino_epi = 0;
    hr_session *b = make(m, w, h, 1, 0, NULL);
    if (a && b) {
      printf("%dx%d without the Winograd epilogues: grugates %d, tanhgru %d, winogates %d\n", w, h, count_kind(a, "grugates"),
             count_kind(a, "tanhgru"), count_kind(a, "winogates"));
      CHECK_EQ_INT(count_kind(a, "grugates"), 4);
      CHECK_EQ_INT(count_kind(a, "tanhgru"), 4);
      const int da = frames_differ(a, b, fr, w, h, 1);
      printf("%dx%d without the Winograd epilogues: %d of %d frames differ from the plain engine\n", w, h, da, NF);
      CHECK_EQ_INT(da, 0);
    }
    hr_session_destroy(a);
    hr_session_destroy(b);
  }
  /* on 8 threads the expansions' 1x1 convolutions run on XNNPACK's own split and their HardSwish
   * apart (hs_bands): the same bits as the plain engine's on one thread */
  {
    const int w = fr[0].width, h = fr[0].height;
    hr_session *a = make(m, w, h, 8, 1, NULL), *b = make(m, w, h, 1, 0, NULL);
    if (a && b) {
      const int xhs = count_kind(a, "xnnhswish"), dw = count_kind(a, "dwepi");
      printf("%dx%d on 8 threads: xnnhswish %d ops, pwghswish %d\n", w, h, xhs, count_kind(a, "pwghswish"));
      if (dw > 0) CHECK(xhs <= 1);   /* only the first convolution (3x3) may keep its bands */
      const int da = frames_differ(a, b, fr, w, h, 1);
      printf("%dx%d on 8 threads: %d of %d frames differ from the plain engine\n", w, h, da, NF);
      CHECK_EQ_INT(da, 0);
    }
    hr_session_destroy(a);
    hr_session_destroy(b);
  }
  /* without the foreground only the alpha's channel of the guided filter's A and b is made
   * (fgflr1): the mattes the same bits as the plain engine's */
  {
    const int w = fr[0].width, h = fr[0].height;
    hr_session *a = make_fgr(m, w, h, 2, 1, NULL, 0), *b = make_fgr(m, w, h, 1, 0, NULL, 0);
    if (a && b) {
      printf("%dx%d without the foreground: fgflr1 %d ops, fgflr %d\n", w, h, count_kind(a, "fgflr1"), count_kind(a, "fgflr"));
      CHECK_EQ_INT(count_kind(a, "fgflr1"), 1);
      const int da = frames_differ(a, b, fr, w, h, 0);
      printf("%dx%d without the foreground: %d of %d mattes differ (fused, 2 threads, vs plain, 1 thread)\n", w, h, da, NF);
      CHECK_EQ_INT(da, 0);
    }
    hr_session_destroy(a);
    hr_session_destroy(b);
  }
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_exec_fuse");
}
