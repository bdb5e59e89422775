/* Compositing a frame over a background with the stream's matte (headroom/composite.h): the
 * background (a blur of the frame's own planes, a colour, a scaled image), the matte quantised to
 * 8 bits and kept for `hold`, and the health fallback policy. Everything is allocated at create;
 * apply writes only the output planes and the compositor's own small buffers.
 *
 * The blur is downsample-blur-upsample, per plane, at the plane's resolution: each plane is
 * averaged over s x s blocks (s = radius / 2 for that plane; every other row of a block when
 * s >= 4), blurred there with two passes of a box of half-width 1 (about a Gaussian; one 5-tap
 * pass across), widened to the plane's width by byte shuffles, and mixed vertically one output
 * row at a time while blending. The blend runs row by row over all planes at once (4:2:0 chroma
 * row y / 2 right after luma row y), so the 8-bit matte rows it reads are still in L1. */
#if defined(__GNUC__) && !defined(__clang__)
/* the per-sample loops below are written to be vectorised: -O2 in GCC 12 vectorises only loops of
 * known trip count, so this file asks for the full vectoriser */
#pragma GCC optimize("O3")
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/composite.h"

#define CP_MAX_PLANES 3

/* The per-sample kernels are built twice, for AVX2 and for the baseline, and picked at load time
 * (GCC's target_clones through an ifunc); 16-bit lanes throughout: every intermediate of a blend
 * (s x a + bg x (256 - a) + 128 <= 65408) fits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define CP_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define CP_CLONES
#endif

typedef struct cp_plane {
  int w, h, C;                 /* plane size in samples, interleaved channels */
  int sub;                     /* 1: full resolution, 2: 4:2:0 chroma */
  /* blur */
  int s, lw, lh, rl;           /* block size, low-resolution size, low-resolution box half-width */
  float *lof, *tmpf;           /* lw x lh x C: block means, then blurred; scratch for the passes */
  float *vsum;                 /* lw x C: running sums of the vertical pass */
  uint8_t *lo;                 /* the blurred low-resolution plane, 8-bit */
  uint16_t *vacc;              /* w x C: the rows of one block row, summed */
  uint8_t *hup;                /* lh rows of w x C: the blurred rows, widened to the plane's width */
  int32_t *ux0;                /* w: left low-resolution column of each output column */
  uint16_t *uwx;               /* w: weight of the right column, 0..256 */
  int32_t *vy0;                /* h: upper low-resolution row of each output row */
  uint16_t *vwy;               /* h: weight of the lower row, 0..256 */
  uint8_t *bgrow;              /* w x C: one output row of the blurred background */
  /* the widening by 16-sample chunks (byte shuffles): chunk k reads 16 bytes of a low-resolution
   * row at wofs[k] and picks its left / right neighbours by wm0 / wm1, mixed by wwt (NULL: the
   * per-sample tables above, when a chunk would span more than 16 bytes) */
  int nchunk;
  int32_t *wofs;
  uint8_t *wm0, *wm1;          /* nchunk x 16 */
  uint16_t *wwt;               /* nchunk x 16 */
  /* colour / image background in the plane's own format, w x h x C (NULL for blur / alpha) */
  uint8_t *bg;
} cp_plane;

struct hr_compositor {
  hr_composite_params p;
  int n_planes;
  cp_plane pl[CP_MAX_PLANES];
  bool yuv, video_range;
  uint8_t *matte;              /* w x h a255: the last good matte */
  bool have_matte;
  int16_t *arow;               /* w x 4: a256 of one row, one per sample */
  uint8_t *zrow;               /* w zeros: the matte of a frame without one (blur-all) */
  /* the background scaler (image / video): output column x reads source columns sx0[x] and the
   * next, weight sfx[x]; output rows orow[0..1] (w x 3 floats, a 4:2:0 pair); source rows as
   * R G B floats by parity (srow[y & 1] holds row srow_y[..]), srow_cap floats each */
  int ssw, ssh;
  double ssc, sox, soy;
  int32_t *sx0, *cx0;          /* cx0 / cfx: the same for 4:2:0 chroma (w / 2; YUV outputs) */
  float *sfx, *cfx, *orow[2], *srow[2], *vrow;   /* vrow: the two source rows mixed */
  int srow_y[2];
  size_t srow_cap;
  hr_composite_action prev;
  int prev_state;              /* health state of the previous frame shown by a fallback, -1 none */
  char reason[HR_HEALTH_REASON_LEN + 64];
  char err[256];
};

const char *hr_composite_action_name(hr_composite_action a) {
  switch (a) {
    case HR_COMPOSITE_ACTION_MATTE: return "matte";
    case HR_COMPOSITE_ACTION_HOLD: return "hold";
    case HR_COMPOSITE_ACTION_BLUR_ALL: return "blur-all";
    case HR_COMPOSITE_ACTION_PASSTHROUGH: return "passthrough";
  }
  return "unknown";
}

const char *hr_composite_mode_name(hr_composite_mode m) {
  switch (m) {
    case HR_COMPOSITE_MODE_BLUR: return "blur";
    case HR_COMPOSITE_MODE_COLOR: return "color";
    case HR_COMPOSITE_MODE_IMAGE: return "image";
    case HR_COMPOSITE_MODE_ALPHA: return "alpha";
    case HR_COMPOSITE_MODE_VIDEO: return "video";
  }
  return "unknown";
}

void hr_composite_params_default(hr_composite_params *p) {
  memset(p, 0, sizeof *p);
  p->mode = HR_COMPOSITE_MODE_BLUR;
  p->blur_radius = 24;
  p->color = 0x00B140;
  p->fallback = HR_COMPOSITE_FALLBACK_HOLD;
}

hr_status hr_composite_parse(const char *spec, hr_composite_params *p, const char **image_path, char *err, size_t err_len) {
  if (image_path) *image_path = NULL;
  if (err && err_len) err[0] = 0;
  if (!spec || !p) { if (err && err_len) snprintf(err, err_len, "no background spec"); return HR_EINVAL; }
  if (!strcmp(spec, "blur")) { p->mode = HR_COMPOSITE_MODE_BLUR; return HR_OK; }
  if (!strcmp(spec, "alpha")) { p->mode = HR_COMPOSITE_MODE_ALPHA; return HR_OK; }
  if (!strncmp(spec, "blur:", 5)) {
    char *end;
    long r = strtol(spec + 5, &end, 10);
    if (*end || end == spec + 5 || r < 1 || r > 512) goto bad;
    p->mode = HR_COMPOSITE_MODE_BLUR; p->blur_radius = (int)r;
    return HR_OK;
  }
  if (!strncmp(spec, "color:", 6) || spec[0] == '#') {
    const char *h = spec[0] == '#' ? spec + 1 : spec + 6;
    if (*h == '#') h++;
    if (strlen(h) != 6 || strspn(h, "0123456789abcdefABCDEF") != 6) goto bad;
    p->mode = HR_COMPOSITE_MODE_COLOR; p->color = (uint32_t)strtoul(h, NULL, 16);
    return HR_OK;
  }
  if ((!strncmp(spec, "image:", 6) || !strncmp(spec, "video:", 6)) && spec[6]) {
    p->mode = spec[0] == 'i' ? HR_COMPOSITE_MODE_IMAGE : HR_COMPOSITE_MODE_VIDEO;
    if (image_path) *image_path = spec + 6;
    return HR_OK;
  }
bad:
  if (err && err_len) snprintf(err, err_len, "background '%s': want blur, blur:RADIUS (1..512), color:RRGGBB, image:FILE, video:FILE or alpha", spec);
  return HR_EINVAL;
}

hr_status hr_composite_parse_fallback(const char *spec, hr_composite_params *p, char *err, size_t err_len) {
  if (err && err_len) err[0] = 0;
  if (spec && p) {
    if (!strcmp(spec, "hold")) { p->fallback = HR_COMPOSITE_FALLBACK_HOLD; return HR_OK; }
    if (!strcmp(spec, "blur-all")) { p->fallback = HR_COMPOSITE_FALLBACK_BLUR_ALL; return HR_OK; }
    if (!strcmp(spec, "passthrough")) { p->fallback = HR_COMPOSITE_FALLBACK_PASSTHROUGH; return HR_OK; }
  }
  if (err && err_len) snprintf(err, err_len, "fallback '%s': want hold, blur-all or passthrough", spec ? spec : "");
  return HR_EINVAL;
}

/* ---- create --------------------------------------------------------------------------------- */

static void cp_free_plane(cp_plane *q) {
  free(q->lof); free(q->tmpf); free(q->vsum); free(q->lo); free(q->vacc); free(q->hup);
  free(q->ux0); free(q->uwx); free(q->vy0); free(q->vwy); free(q->bgrow); free(q->bg);
  free(q->wofs); free(q->wm0); free(q->wm1); free(q->wwt);
  memset(q, 0, sizeof *q);
}

void hr_compositor_destroy(hr_compositor *c) {
  if (!c) return;
  for (int i = 0; i < CP_MAX_PLANES; i++) cp_free_plane(&c->pl[i]);
  free(c->matte);
  free(c->arow);
  free(c->zrow);
  free(c->sx0); free(c->sfx); free(c->cx0); free(c->cfx); free(c->orow[0]); free(c->orow[1]); free(c->srow[0]); free(c->srow[1]); free(c->vrow);
  free(c);
}

/* Bilinear read-back tables: output position i of n maps to low-resolution (i + 0.5) / s - 0.5. */
static void cp_uptable(int n, int s, int ln, int32_t *i0, uint16_t *w1) {
  for (int i = 0; i < n; i++) {
    double u = (i + 0.5) / s - 0.5;
    if (u < 0) u = 0;
    if (u > ln - 1) u = ln - 1;
    int k = (int)u;
    if (k > ln - 2) k = ln > 1 ? ln - 2 : 0;
    int wt = (int)lrint((u - k) * 256);
    if (ln == 1) wt = 0;
    i0[i] = k; w1[i] = (uint16_t)wt;
  }
}

static int cp_plane_blur_alloc(cp_plane *q, int radius) {
  int r = radius / q->sub;
  if (r < 1) r = 1;
  q->s = r >= 6 ? r / 2 : 1;     /* blocks of r/2 and a box of half-width 1 there, twice: sigma ~ r/2 */
  q->rl = r >= 6 ? 1 : (r + 1) / 2;
  q->lw = (q->w + q->s - 1) / q->s;
  q->lh = (q->h + q->s - 1) / q->s;
  size_t ln = (size_t)q->lw * q->lh * q->C;
  q->lof = malloc(ln * sizeof(float));
  q->tmpf = malloc(ln * sizeof(float));
  q->vsum = malloc((size_t)q->lw * q->C * sizeof(float));
  q->lo = malloc(ln + 32);      /* + 32: a chunk's 16-byte read past the last row's end */
  q->vacc = malloc((size_t)q->w * q->C * sizeof(uint16_t));
  q->hup = malloc((size_t)q->lh * q->w * q->C + 32);   /* + 32: the last chunk's 16-byte store */
  q->ux0 = malloc((size_t)q->w * sizeof(int32_t));
  q->uwx = malloc((size_t)q->w * sizeof(uint16_t));
  q->vy0 = malloc((size_t)q->h * sizeof(int32_t));
  q->vwy = malloc((size_t)q->h * sizeof(uint16_t));
  q->bgrow = malloc((size_t)q->w * q->C);
  if (!q->lof || !q->tmpf || !q->vsum || !q->lo || !q->vacc || !q->hup || !q->ux0 || !q->uwx || !q->vy0 || !q->vwy || !q->bgrow) return -1;
  cp_uptable(q->w, q->s, q->lw, q->ux0, q->uwx);
  cp_uptable(q->h, q->s, q->lh, q->vy0, q->vwy);
  /* the chunk tables: every chunk's neighbours within 16 bytes of its first one, or none at all */
  int n = q->w * q->C, C = q->C, last = q->lw - 1;
  q->nchunk = (n + 15) / 16;
  q->wofs = malloc((size_t)q->nchunk * sizeof(int32_t));
  q->wm0 = malloc((size_t)q->nchunk * 16);
  q->wm1 = malloc((size_t)q->nchunk * 16);
  q->wwt = malloc((size_t)q->nchunk * 16 * sizeof(uint16_t));
  if (!q->wofs || !q->wm0 || !q->wm1 || !q->wwt) return -1;
  bool fits = true;
  for (int k = 0; k < q->nchunk && fits; k++) {
    int i = 16 * k, x = i / C, base = q->ux0[x] * C;
    q->wofs[k] = base;
    for (int t = 0; t < 16; t++) {
      int j = i + t < n ? i + t : n - 1, xx = j / C, ch = j % C;
      int i0 = q->ux0[xx], i1 = i0 < last ? i0 + 1 : last;
      int b0 = i0 * C + ch - base, b1 = i1 * C + ch - base;
      if (b0 < 0 || b1 > 15) { fits = false; break; }
      q->wm0[16 * k + t] = (uint8_t)b0; q->wm1[16 * k + t] = (uint8_t)b1;
      q->wwt[16 * k + t] = q->uwx[xx];
      if (C == 4 && ch == 3) { q->wm0[16 * k + t] = q->wm1[16 * k + t] = (uint8_t)b0; }
    }
  }
  if (!fits) { free(q->wofs); free(q->wm0); free(q->wm1); free(q->wwt); q->wofs = NULL; q->wm0 = q->wm1 = NULL; q->wwt = NULL; }
  return 0;
}

/* Background rows (R G B floats 0..255, w x 3) into the planes' own format: row y (RGB / BGRA),
 * or rows y and y + 1 and chroma row y / 2 (4:2:0, y even; r1 is row y + 1). BT.601 in floats,
 * rounded half up and clamped (per frame for video: written to vectorise). */
static inline uint8_t cp_u8f(float v) { v = v > 0.f ? v + 0.5f : 0.f; return (uint8_t)(int)(v < 255.f ? v : 255.f); }
CP_CLONES static void cp_bg_rgb_row(uint8_t *restrict d, const float *restrict r, int w, bool bgra) {
  if (bgra)
    for (int x = 0; x < w; x++) { d[4 * x] = cp_u8f(r[3 * x + 2]); d[4 * x + 1] = cp_u8f(r[3 * x + 1]); d[4 * x + 2] = cp_u8f(r[3 * x]); d[4 * x + 3] = 255; }
  else
    for (int x = 0; x < 3 * w; x++) d[x] = cp_u8f(r[x]);
}
CP_CLONES static void cp_bg_y_row(uint8_t *restrict d, const float *restrict r, int w, float ys, float yo) {
  for (int x = 0; x < w; x++) d[x] = cp_u8f((0.299f * r[3 * x] + 0.587f * r[3 * x + 1] + 0.114f * r[3 * x + 2]) * ys + yo);
}
CP_CLONES static void cp_bg_uv_row(uint8_t *restrict u, uint8_t *restrict v, int step, const float *restrict r0, const float *restrict r1, int w2,
                                   float cs) {
  for (int x = 0; x < w2; x++) {
    float m[3];
    for (int k = 0; k < 3; k++) m[k] = (r0[6 * x + k] + r0[6 * x + 3 + k] + r1[6 * x + k] + r1[6 * x + 3 + k]) * 0.25f;
    u[step * x] = cp_u8f(128.f + (-0.168736f * m[0] - 0.331264f * m[1] + 0.5f * m[2]) * cs);
    v[step * x] = cp_u8f(128.f + (0.5f * m[0] - 0.418688f * m[1] - 0.081312f * m[2]) * cs);
  }
}
static void cp_bg_store(hr_compositor *c, int y, const float *r0, const float *r1) {
  int w = c->p.width;
  if (!c->yuv) {
    cp_plane *q = &c->pl[0];
    cp_bg_rgb_row(q->bg + (size_t)y * w * q->C, r0, w, c->p.format == HR_PIX_BGRA);
    return;
  }
  float ys = c->video_range ? 219.f / 255.f : 1.f, yo = c->video_range ? 16.f : 0.f, cs = c->video_range ? 224.f / 255.f : 1.f;
  cp_bg_y_row(c->pl[0].bg + (size_t)y * w, r0, w, ys, yo);
  cp_bg_y_row(c->pl[0].bg + (size_t)(y + 1) * w, r1, w, ys, yo);
  size_t o = (size_t)(y / 2) * (w / 2);
  if (c->n_planes == 2) cp_bg_uv_row(c->pl[1].bg + 2 * o, c->pl[1].bg + 2 * o + 1, 2, r0, r1, w / 2, cs);
  else cp_bg_uv_row(c->pl[1].bg + o, c->pl[2].bg + o, 1, r0, r1, w / 2, cs);
}

/* The colour background (mode color; video before its first frame: black). */
static void cp_bg_color(hr_compositor *c, uint32_t color) {
  float *r = c->orow[0];
  for (int x = 0; x < c->p.width; x++) { r[3 * x] = (float)((color >> 16) & 255); r[3 * x + 1] = (float)((color >> 8) & 255); r[3 * x + 2] = (float)(color & 255); }
  for (int y = 0; y < c->p.height; y += c->yuv ? 2 : 1) cp_bg_store(c, y, r, r);
}

/* Source row y as R G B floats 0..1, converted once while it stays in its parity's slot. */
static const float *cp_src_row(hr_compositor *c, const hr_frame *f, int y) {
  int k = y & 1;
  if (c->srow_y[k] != y) { hr_frame_row_rgbf(f, y, c->srow[k]); c->srow_y[k] = y; }
  return c->srow[k];
}

/* Output row y of the scaled background (cover, centred, bilinear), 0..255: the two source rows
 * mixed first (whole rows, vectorised) into vrow, then read across. */
CP_CLONES static void cp_mix_rows(float *restrict d, const float *restrict a, const float *restrict b, float fy, int n) {
  for (int i = 0; i < n; i++) d[i] = (a[i] + (b[i] - a[i]) * fy) * 255.f;
}
static void cp_scale_row(hr_compositor *c, const hr_frame *f, int y, float *out) {
  int sh = f->height, sw = f->width;
  double v = c->soy + (y + 0.5) / c->ssc - 0.5;
  if (v < 0) v = 0;
  if (v > sh - 1) v = sh - 1;
  int y0 = (int)v, y1 = y0 + 1 < sh ? y0 + 1 : y0;
  float fy = (float)(v - y0);
  const float *a = cp_src_row(c, f, y0), *b = cp_src_row(c, f, y1);
  float *m = c->vrow;
  cp_mix_rows(m, a, b, fy, sw * 3);
  for (int x = 0; x < c->p.width; x++) {
    int x0 = c->sx0[x], x1 = x0 + 1 < sw ? x0 + 1 : x0;
    float fx = c->sfx[x];
    for (int k = 0; k < 3; k++) out[3 * x + k] = m[3 * x0 + k] + (m[3 * x1 + k] - m[3 * x0 + k]) * fx;
  }
}

/* One output row of a plane from source rows r0, r1 (weight fy of r1), bilinear across by the
 * tables; samples sstep apart in the source, dstep in the output. */
static void cp_lerp_row(uint8_t *restrict d, int dstep, const uint8_t *r0, const uint8_t *r1, int sstep, float fy, const int32_t *x0, const float *fx,
                        int n, int slast) {
  for (int x = 0; x < n; x++) {
    int i0 = x0[x], i1 = i0 < slast ? i0 + 1 : slast;
    float a = r0[i0 * sstep] + (r0[i1 * sstep] - r0[i0 * sstep]) * fx[x];
    float b = r1[i0 * sstep] + (r1[i1 * sstep] - r1[i0 * sstep]) * fx[x];
    d[x * dstep] = (uint8_t)(int)(a + (b - a) * fy + 0.5f);
  }
}

/* Source row coordinate v (pixel centres), clamped to 0..n-1: the two rows and the weight. */
static void cp_rows(double v, int n, int *y0, int *y1, float *fy) {
  if (v < 0) v = 0;
  if (v > n - 1) v = n - 1;
  *y0 = (int)v; *y1 = *y0 + 1 < n ? *y0 + 1 : *y0; *fy = (float)(v - *y0);
}

/* 4:2:0 into 4:2:0 of the same range: each plane scaled on its own, no colour conversion. */
static void cp_set_bg_420(hr_compositor *c, const hr_frame *f) {
  int w = c->p.width, h = c->p.height, sw = f->width, sh = f->height;
  bool snv = f->fmt == HR_PIX_NV12_FULL || f->fmt == HR_PIX_NV12_VIDEO;
  for (int y = 0; y < h; y++) {
    int y0, y1;
    float fy;
    cp_rows(c->soy + (y + 0.5) / c->ssc - 0.5, sh, &y0, &y1, &fy);
    const uint8_t *p = f->planes[0];
    cp_lerp_row(c->pl[0].bg + (size_t)y * w, 1, p + (ptrdiff_t)y0 * f->strides[0], p + (ptrdiff_t)y1 * f->strides[0], 1, fy, c->sx0, c->sfx, w,
                sw - 1);
  }
  for (int y = 0; y < h / 2; y++) {
    int y0, y1;
    float fy;
    cp_rows((c->soy + (2 * y + 1) / c->ssc) / 2 - 0.5, sh / 2, &y0, &y1, &fy);
    for (int k = 0; k < 2; k++) {
      const uint8_t *sp = snv ? (const uint8_t *)f->planes[1] + k : f->planes[1 + k];
      ptrdiff_t ss = f->strides[snv ? 1 : 1 + k];
      uint8_t *d = c->n_planes == 2 ? c->pl[1].bg + (size_t)y * w + k : c->pl[1 + k].bg + (size_t)y * (w / 2);
      cp_lerp_row(d, c->n_planes == 2 ? 2 : 1, sp + y0 * ss, sp + y1 * ss, snv ? 2 : 1, fy, c->cx0, c->cfx, w / 2, sw / 2 - 1);
    }
  }
}

static hr_status cp_set_bg(hr_compositor *c, const hr_frame *f) {
  char why[160];
  if (hr_frame_validate(f, why, sizeof why) != HR_OK) { snprintf(c->err, sizeof c->err, "compositor: background frame: %s", why); return HR_EINVAL; }
  switch (f->fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO: case HR_PIX_BGRA: case HR_PIX_RGB24: case HR_PIX_RGBF32: break;
    default: snprintf(c->err, sizeof c->err, "compositor: background frame of %s: no colour", hr_pixfmt_name(f->fmt)); return HR_EINVAL;
  }
  int w = c->p.width, h = c->p.height, sw = f->width, sh = f->height;
  if ((size_t)sw * 3 > c->srow_cap) {
    free(c->srow[0]); free(c->srow[1]); free(c->vrow);
    c->srow[0] = malloc((size_t)sw * 3 * sizeof(float));
    c->srow[1] = malloc((size_t)sw * 3 * sizeof(float));
    c->vrow = malloc((size_t)sw * 3 * sizeof(float));
    c->srow_cap = c->srow[0] && c->srow[1] && c->vrow ? (size_t)sw * 3 : 0;
    if (!c->srow_cap) { snprintf(c->err, sizeof c->err, "compositor: out of memory"); return HR_ENOMEM; }
  }
  if (sw != c->ssw || sh != c->ssh) {
    c->ssc = fmax((double)w / sw, (double)h / sh);
    c->sox = (sw - w / c->ssc) / 2; c->soy = (sh - h / c->ssc) / 2;
    for (int x = 0; x < w; x++) {
      double u = c->sox + (x + 0.5) / c->ssc - 0.5;
      if (u < 0) u = 0;
      if (u > sw - 1) u = sw - 1;
      c->sx0[x] = (int32_t)u; c->sfx[x] = (float)(u - (int)u);
    }
    if (c->cx0)   /* 4:2:0 chroma sample x covers luma 2x..2x+1: its centre at 2x + 1 (edges) */
      for (int x = 0; x < w / 2; x++) {
        double u = (c->sox + (2 * x + 1) / c->ssc) / 2 - 0.5;
        if (u < 0) u = 0;
        if (u > sw / 2 - 1) u = sw / 2 - 1;
        c->cx0[x] = (int32_t)u; c->cfx[x] = (float)(u - (int)u);
      }
    c->ssw = sw; c->ssh = sh;
  }
  bool s420 = f->fmt == HR_PIX_NV12_FULL || f->fmt == HR_PIX_NV12_VIDEO || f->fmt == HR_PIX_I420_FULL || f->fmt == HR_PIX_I420_VIDEO;
  bool svideo = f->fmt == HR_PIX_NV12_VIDEO || f->fmt == HR_PIX_I420_VIDEO;
  if (c->cx0 && s420 && svideo == c->video_range && sw >= 2 && sh >= 2) { cp_set_bg_420(c, f); return HR_OK; }
  c->srow_y[0] = c->srow_y[1] = -1;
  int step = c->yuv ? 2 : 1;
  for (int y = 0; y < h; y += step) {
    for (int k = 0; k < step; k++) cp_scale_row(c, f, y + k, c->orow[k]);
    cp_bg_store(c, y, c->orow[0], c->orow[step - 1]);
  }
  return HR_OK;
}

hr_status hr_compositor_set_background(hr_compositor *c, const hr_frame *bg) {
  if (!c) return HR_EINVAL;
  if (c->p.mode != HR_COMPOSITE_MODE_IMAGE && c->p.mode != HR_COMPOSITE_MODE_VIDEO) {
    snprintf(c->err, sizeof c->err, "compositor: mode %s takes no background frame (image or video do)", hr_composite_mode_name(c->p.mode));
    return HR_EINVAL;
  }
  if (!bg) { snprintf(c->err, sizeof c->err, "compositor: no background frame"); return HR_EINVAL; }
  return cp_set_bg(c, bg);
}

hr_status hr_compositor_create(const hr_composite_params *p, hr_compositor **out, char *err, size_t err_len) {
  if (err && err_len) err[0] = 0;
  if (!out) return HR_EINVAL;
  *out = NULL;
#define CP_FAIL(st, ...) do { if (err && err_len) snprintf(err, err_len, __VA_ARGS__); status = st; goto fail; } while (0)
  hr_status status = HR_ENOMEM;
  hr_compositor *c = NULL;
  if (!p) { if (err && err_len) snprintf(err, err_len, "compositor: no params"); return HR_EINVAL; }
  c = calloc(1, sizeof *c);
  if (!c) CP_FAIL(HR_ENOMEM, "compositor: out of memory");
  c->p = *p;   /* image is read during create only: NULLed below */
  int w = p->width, h = p->height;
  if (w <= 0 || h <= 0 || w > 16384 || h > 16384) CP_FAIL(HR_EINVAL, "compositor: bad frame size %dx%d", w, h);
  switch (p->format) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: c->n_planes = 2; c->yuv = true; break;
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO: c->n_planes = 3; c->yuv = true; break;
    case HR_PIX_BGRA: case HR_PIX_RGB24: c->n_planes = 1; break;
    default: CP_FAIL(HR_ENOTSUP, "compositor: cannot composite %s frames (NV12, I420, BGRA or RGB24)", hr_pixfmt_name(p->format));
  }
  c->video_range = p->format == HR_PIX_NV12_VIDEO || p->format == HR_PIX_I420_VIDEO;
  if (c->yuv && ((w | h) & 1)) CP_FAIL(HR_EINVAL, "compositor: %s needs an even size, not %dx%d", hr_pixfmt_name(p->format), w, h);
  if (p->out_rgba && c->yuv) CP_FAIL(HR_ENOTSUP, "compositor: RGBA output needs a BGRA or RGB24 input, not %s", hr_pixfmt_name(p->format));
  if (p->blur_radius < 1 || p->blur_radius > 512) CP_FAIL(HR_EINVAL, "compositor: blur radius %d outside 1..512", p->blur_radius);
  if ((unsigned)p->mode > HR_COMPOSITE_MODE_VIDEO) CP_FAIL(HR_EINVAL, "compositor: unknown mode %d", (int)p->mode);
  if ((unsigned)p->fallback > HR_COMPOSITE_FALLBACK_PASSTHROUGH) CP_FAIL(HR_EINVAL, "compositor: unknown fallback %d", (int)p->fallback);
  if (p->mode == HR_COMPOSITE_MODE_IMAGE &&
      (!p->image || p->image_width <= 0 || p->image_height <= 0 || p->image_stride < (ptrdiff_t)p->image_width * 3))
    CP_FAIL(HR_EINVAL, "compositor: image mode without a valid R G B picture");
  bool has_bg = p->mode == HR_COMPOSITE_MODE_COLOR || p->mode == HR_COMPOSITE_MODE_IMAGE || p->mode == HR_COMPOSITE_MODE_VIDEO;
  for (int i = 0; i < c->n_planes; i++) {
    cp_plane *q = &c->pl[i];
    q->sub = i ? 2 : 1;
    q->w = w / q->sub; q->h = h / q->sub;
    q->C = c->n_planes == 2 && i == 1 ? 2 : !c->yuv ? (p->format == HR_PIX_BGRA ? 4 : 3) : 1;
    if (cp_plane_blur_alloc(q, p->blur_radius)) CP_FAIL(HR_ENOMEM, "compositor: out of memory");
    if (has_bg && !(q->bg = malloc((size_t)q->w * q->h * q->C))) CP_FAIL(HR_ENOMEM, "compositor: out of memory");
  }
  c->matte = malloc((size_t)w * h);
  c->arow = malloc((size_t)w * 4 * sizeof(int16_t));
  c->zrow = calloc((size_t)w, 1);
  if (!c->matte || !c->arow || !c->zrow) CP_FAIL(HR_ENOMEM, "compositor: out of memory");
  if (has_bg) {
    c->sx0 = malloc((size_t)w * sizeof(int32_t));
    c->sfx = malloc((size_t)w * sizeof(float));
    c->orow[0] = malloc((size_t)w * 3 * sizeof(float));
    c->orow[1] = malloc((size_t)w * 3 * sizeof(float));
    if (!c->sx0 || !c->sfx || !c->orow[0] || !c->orow[1]) CP_FAIL(HR_ENOMEM, "compositor: out of memory");
    if (c->yuv) {
      c->cx0 = malloc((size_t)(w / 2) * sizeof(int32_t));
      c->cfx = malloc((size_t)(w / 2) * sizeof(float));
      if (!c->cx0 || !c->cfx) CP_FAIL(HR_ENOMEM, "compositor: out of memory");
    }
    if (p->mode == HR_COMPOSITE_MODE_IMAGE) {   /* the picture as an R G B frame, scaled like a video's */
      hr_frame f;
      memset(&f, 0, sizeof f);
      f.fmt = HR_PIX_RGB24; f.width = p->image_width; f.height = p->image_height;
      f.planes[0] = p->image; f.strides[0] = p->image_stride;
      if ((status = cp_set_bg(c, &f)) != HR_OK) CP_FAIL(status, "%s", c->err);
    } else {
      cp_bg_color(c, p->mode == HR_COMPOSITE_MODE_COLOR ? p->color : 0);
    }
  }
  c->p.image = NULL;
  c->prev = HR_COMPOSITE_ACTION_MATTE;
  c->prev_state = -1;
  *out = c;
  return HR_OK;
fail:
  hr_compositor_destroy(c);
  return status;
#undef CP_FAIL
}

/* ---- blur ----------------------------------------------------------------------------------- */

CP_CLONES static void cp_acc_first(uint16_t *restrict acc, const uint8_t *restrict r, int n) {
  for (int i = 0; i < n; i++) acc[i] = r[i];
}
CP_CLONES static void cp_acc_add(uint16_t *restrict acc, const uint8_t *restrict r, int n) {
  for (int i = 0; i < n; i++) acc[i] = (uint16_t)(acc[i] + r[i]);
}

/* Block means of one plane into q->lof: the rows of a block summed sample by sample (vectorised),
 * then each block's columns. C is a constant in every call (inlined per channel count). */
static inline __attribute__((always_inline)) void cp_down(cp_plane *q, const uint8_t *src, ptrdiff_t stride, const int C) {
  int s = q->s, lw = q->lw, n = q->w * C;
  uint16_t *acc = q->vacc;
  /* blocks of 4 rows and more are averaged over every other row: half the frame is read, and the
   * blur that follows leaves no trace of it */
  int ys = s >= 4 ? 2 : 1;
  for (int j = 0; j < q->lh; j++) {
    int y0 = j * s, y1 = y0 + s < q->h ? y0 + s : q->h;
    cp_acc_first(acc, src + (ptrdiff_t)y0 * stride, n);
    for (int y = y0 + ys; y < y1; y += ys) cp_acc_add(acc, src + (ptrdiff_t)y * stride, n);
    int rows = (y1 - y0 + ys - 1) / ys;
    float *d = q->lof + (size_t)j * lw * C;
    for (int i = 0; i < lw; i++) {
      int x0 = i * s, xe = x0 + s < q->w ? x0 + s : q->w;
      uint32_t a[4] = {0, 0, 0, 0};
      for (int x = x0; x < xe; x++)
        for (int k = 0; k < C; k++) a[k] += acc[x * C + k];
      float inv = 1.f / (float)(rows * (xe - x0));
      for (int k = 0; k < C; k++) d[i * C + k] = (float)a[k] * inv;
    }
  }
}

/* One box pass of half-width r along a line of n samples spaced step floats apart (edges clamped). */
static void cp_box(const float *src, float *dst, int n, ptrdiff_t step, int r) {
  float inv = 1.f / (float)(2 * r + 1);
  float acc = 0;
  for (int k = -r; k <= r; k++) acc += src[(ptrdiff_t)(k < 0 ? 0 : k >= n ? n - 1 : k) * step];
  for (int i = 0; i < n; i++) {
    dst[(ptrdiff_t)i * step] = acc * inv;
    int out = i - r, in = i + r + 1;
    acc += src[(ptrdiff_t)(in >= n ? n - 1 : in) * step] - src[(ptrdiff_t)(out < 0 ? 0 : out) * step];
  }
}

/* One blurred row widened to the plane's width: bilinear across (C constant: inlined per count). */
static inline __attribute__((always_inline)) void cp_widen(uint8_t *restrict d, const uint8_t *restrict v, const int32_t *ux0, const uint16_t *uwx,
                                                           int w, int last, const int C) {
  for (int x = 0; x < w; x++) {
    int i0 = ux0[x], i1 = i0 < last ? i0 + 1 : last;
    unsigned wx = uwx[x], wx0 = 256 - wx;
    for (int k = 0; k < C; k++) d[x * C + k] = (uint8_t)((v[i0 * C + k] * wx0 + v[i1 * C + k] * wx + 128) >> 8);
    if (C == 4) d[x * C + 3] = 255;   /* BGRA: the A (or X) channel of the background is opaque */
  }
}

/* The same by 16-sample chunks: two byte shuffles and a 16-bit mix a chunk (pshufb where the
 * clone has SSSE3). Writes up to 15 bytes past the row (the buffer has room; the next row
 * overwrites them). */
typedef uint8_t cp_v16u8 __attribute__((vector_size(16)));
typedef uint16_t cp_v16u16 __attribute__((vector_size(32)));
CP_CLONES static void cp_widen_chunks(uint8_t *restrict d, const uint8_t *restrict v, const int32_t *restrict ofs, const uint8_t *restrict m0,
                                      const uint8_t *restrict m1, const uint16_t *restrict wt, int nchunk, bool bgra) {
  cp_v16u8 opaque = {0};
  if (bgra)
    for (int t = 3; t < 16; t += 4) opaque[t] = 255;
  for (int k = 0; k < nchunk; k++) {
    cp_v16u8 src, i0, i1;
    cp_v16u16 w1;
    memcpy(&src, v + ofs[k], 16);
    memcpy(&i0, m0 + 16 * k, 16);
    memcpy(&i1, m1 + 16 * k, 16);
    memcpy(&w1, wt + 16 * k, 32);
#if defined(__clang__)
    /* clang has no shuffle by a mask held in a vector (GCC's __builtin_shuffle): lane by lane */
    cp_v16u8 s0, s1;
    for (int t = 0; t < 16; t++) { s0[t] = src[i0[t] & 15]; s1[t] = src[i1[t] & 15]; }
    cp_v16u16 a = __builtin_convertvector(s0, cp_v16u16);
    cp_v16u16 b = __builtin_convertvector(s1, cp_v16u16);
#else
    cp_v16u16 a = __builtin_convertvector(__builtin_shuffle(src, i0), cp_v16u16);
    cp_v16u16 b = __builtin_convertvector(__builtin_shuffle(src, i1), cp_v16u16);
#endif
    cp_v16u16 r = (a * (256 - w1) + b * w1 + 128) >> 8;
    cp_v16u8 o = __builtin_convertvector(r, cp_v16u8) | opaque;
    memcpy(d + 16 * k, &o, 16);
  }
}

/* Two box passes of half-width 1 along a row of n samples C apart, at once: the 5-tap
 * [1 2 3 2 1] / 9, edges clamped. */
CP_CLONES static void cp_box5_row(const float *restrict s, float *restrict d, int lw, int C) {
  int n = lw * C;
  const float k9 = 1.f / 9.f;
  for (int i = 2 * C; i < n - 2 * C; i++) d[i] = (s[i - 2 * C] + 2.f * s[i - C] + 3.f * s[i] + 2.f * s[i + C] + s[i + 2 * C]) * k9;
  for (int x = 0; x < lw; x++) {
    if (x >= 2 && x < lw - 2) { x = lw - 3; continue; }
    for (int k = 0; k < C; k++) {
      float acc = 0;
      static const float tap[5] = {1, 2, 3, 2, 1};
      for (int t = -2; t <= 2; t++) {
        int xx = x + t < 0 ? 0 : x + t >= lw ? lw - 1 : x + t;
        acc += tap[t + 2] * s[xx * C + k];
      }
      d[x * C + k] = acc * k9;
    }
  }
}

CP_CLONES static void cp_to_u8(uint8_t *restrict d, const float *restrict s, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = (uint8_t)(int)(s[i] + 0.5f);
}

/* One vertical box pass of half-width r over lh rows of n floats (edges clamped), row by row: a
 * running sum of whole rows (vectorised) instead of a walk down each column. */
CP_CLONES static void cp_box_rows(const float *restrict src, float *restrict dst, float *restrict sum, int n, int lh, int r) {
  float inv = 1.f / (float)(2 * r + 1);
  for (int i = 0; i < n; i++) sum[i] = 0;
  for (int k = -r; k <= r; k++) {
    const float *row = src + (size_t)(k < 0 ? 0 : k >= lh ? lh - 1 : k) * n;
    for (int i = 0; i < n; i++) sum[i] += row[i];
  }
  for (int j = 0; j < lh; j++) {
    float *d = dst + (size_t)j * n;
    int out = j - r, in = j + r + 1;
    const float *ri = src + (size_t)(in >= lh ? lh - 1 : in) * n, *ro = src + (size_t)(out < 0 ? 0 : out) * n;
    for (int i = 0; i < n; i++) { d[i] = sum[i] * inv; sum[i] += ri[i] - ro[i]; }
  }
}

static void cp_blur_low(cp_plane *q) {
  int lw = q->lw, lh = q->lh, C = q->C;
  if (q->rl == 1 && lw >= 5) {   /* the usual case: both horizontal passes as one 5-tap */
    for (int j = 0; j < lh; j++) cp_box5_row(q->lof + (size_t)j * lw * C, q->tmpf + (size_t)j * lw * C, lw, C);
    cp_box_rows(q->tmpf, q->lof, q->vsum, lw * C, lh, 1);
    memcpy(q->tmpf, q->lof, (size_t)lw * lh * C * sizeof(float));
    cp_box_rows(q->tmpf, q->lof, q->vsum, lw * C, lh, 1);
  } else {
    for (int pass = 0; pass < 2; pass++) {
      for (int j = 0; j < lh; j++)
        for (int k = 0; k < C; k++) cp_box(q->lof + (size_t)j * lw * C + k, q->tmpf + (size_t)j * lw * C + k, lw, C, q->rl);
      cp_box_rows(q->tmpf, q->lof, q->vsum, lw * C, lh, q->rl);
    }
  }
  size_t n = (size_t)lw * lh * C;
  cp_to_u8(q->lo, q->lof, n);
  /* each blurred row widened to the plane's width (bilinear across): output rows then only mix
   * two of these (vectorised) */
  for (int j = 0; j < lh; j++) {
    const uint8_t *v = q->lo + (size_t)j * lw * C;
    uint8_t *d = q->hup + (size_t)j * q->w * C;
    if (q->wofs) { cp_widen_chunks(d, v, q->wofs, q->wm0, q->wm1, q->wwt, q->nchunk, C == 4); continue; }
    switch (C) {
      case 1: cp_widen(d, v, q->ux0, q->uwx, q->w, lw - 1, 1); break;
      case 2: cp_widen(d, v, q->ux0, q->uwx, q->w, lw - 1, 2); break;
      case 3: cp_widen(d, v, q->ux0, q->uwx, q->w, lw - 1, 3); break;
      default: cp_widen(d, v, q->ux0, q->uwx, q->w, lw - 1, 4); break;
    }
  }
}

static void cp_blur_plane(cp_plane *q, const uint8_t *src, ptrdiff_t stride) {
  switch (q->C) {
    case 1: cp_down(q, src, stride, 1); break;
    case 2: cp_down(q, src, stride, 2); break;
    case 3: cp_down(q, src, stride, 3); break;
    default: cp_down(q, src, stride, 4); break;
  }
  cp_blur_low(q);
}

/* ---- blend ---------------------------------------------------------------------------------- */

/* n samples: d = (s x a + bg x (256 - a) + 128) >> 8 (= bg + (((s - bg) x a + 128) >> 8)), a per
 * sample (0..256). */
CP_CLONES static void cp_blend(uint8_t *restrict d, const uint8_t *s, const uint8_t *restrict bg, const int16_t *restrict a, int n) {
  for (int i = 0; i < n; i++) {
    uint16_t al = (uint16_t)a[i];
    d[i] = (uint8_t)((uint16_t)(s[i] * al + bg[i] * (uint16_t)(256 - al) + 128) >> 8);
  }
}

/* The same over a blurred background row mixed on the fly from two widened rows A, B (weight wy of
 * B, 0..256). */
CP_CLONES static void cp_blend_lerp(uint8_t *restrict d, const uint8_t *s, const uint8_t *restrict A, const uint8_t *restrict B, unsigned wy,
                                    const int16_t *restrict a, int n) {
  uint16_t w1 = (uint16_t)wy, w0 = (uint16_t)(256 - wy);
  for (int i = 0; i < n; i++) {
    uint16_t b = (uint16_t)((uint16_t)(A[i] * w0 + B[i] * w1 + 128) >> 8);
    uint16_t al = (uint16_t)a[i];
    d[i] = (uint8_t)((uint16_t)(s[i] * al + b * (uint16_t)(256 - al) + 128) >> 8);
  }
}

/* The same two with the 8-bit matte (a255) itself, one a sample (Y planes): a256 made in the loop. */
CP_CLONES static void cp_blend8(uint8_t *restrict d, const uint8_t *s, const uint8_t *restrict bg, const uint8_t *restrict a, int n) {
  for (int i = 0; i < n; i++) {
    uint16_t al = (uint16_t)(a[i] + (a[i] >> 7));
    d[i] = (uint8_t)((uint16_t)(s[i] * al + bg[i] * (uint16_t)(256 - al) + 128) >> 8);
  }
}
CP_CLONES static void cp_blend_lerp8(uint8_t *restrict d, const uint8_t *s, const uint8_t *restrict A, const uint8_t *restrict B, unsigned wy,
                                     const uint8_t *restrict a, int n) {
  uint16_t w1 = (uint16_t)wy, w0 = (uint16_t)(256 - wy);
  for (int i = 0; i < n; i++) {
    uint16_t b = (uint16_t)((uint16_t)(A[i] * w0 + B[i] * w1 + 128) >> 8);
    uint16_t al = (uint16_t)(a[i] + (a[i] >> 7));
    d[i] = (uint8_t)((uint16_t)(s[i] * al + b * (uint16_t)(256 - al) + 128) >> 8);
  }
}

/* Row y of a blurred plane (for the RGBA output). */
static void cp_uprow(cp_plane *q, int y) {
  int n = q->w * q->C;
  int j0 = q->vy0[y], j1 = j0 + 1 < q->lh ? j0 + 1 : j0;
  unsigned wy = q->vwy[y], wy0 = 256 - wy;
  const uint8_t *a = q->hup + (size_t)j0 * n, *b = q->hup + (size_t)j1 * n;
  for (int i = 0; i < n; i++) q->bgrow[i] = (uint8_t)((a[i] * wy0 + b[i] * wy + 128) >> 8);
}

/* R G B A output from a B G R A / R G B input: map[k] is the input channel of output channel k. */
static void cp_blend_rgba(uint8_t *d, const uint8_t *s, const uint8_t *bg, const int16_t *a, const uint8_t *m255, int n, int C,
                          const int map[3]) {
  for (int x = 0; x < n; x++) {
    int al = a[x];
    for (int k = 0; k < 3; k++) {
      int b = bg[x * C + map[k]];
      d[4 * x + k] = (uint8_t)(b + (((s[x * C + map[k]] - b) * al + 128) >> 8));
    }
    d[4 * x + 3] = m255 ? m255[x] : 255;
  }
}

/* ---- apply ---------------------------------------------------------------------------------- */

/* a255 = round(alpha x 255), ties to even as lrintf (the CLI's alpha PNGs): 1.5 x 2^23 added and
 * taken away rounds a float in 0..2^22 to an integer in the current (nearest-even) mode, and
 * vectorises on every clone. */
CP_CLONES static void cp_quantise(uint8_t *restrict m, const float *restrict alpha, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float v = alpha[i] * 255.f;
    v = v > 0.f ? v : 0.f;         /* NaN -> 0 */
    v = v < 255.f ? v : 255.f;
    v = (v + 12582912.f) - 12582912.f;
    m[i] = (uint8_t)(int)v;
  }
}

CP_CLONES static void cp_alpha_y(int16_t *restrict dst, const uint8_t *restrict r, int n) {
  for (int x = 0; x < n; x++) dst[x] = (int16_t)(r[x] + (r[x] >> 7));
}

/* a256 rows, one per sample: C copies of a pixel's (RGB / BGRA, whose A sample gets 0 so the
 * output A is the background's 255), or for 4:2:0 chroma the mean of the 2x2 it covers. */
CP_CLONES static void cp_alpha_rgb(int16_t *restrict dst, const uint8_t *restrict r, int n) {
  for (int x = 0; x < n; x++) { int16_t v = (int16_t)(r[x] + (r[x] >> 7)); dst[3 * x] = v; dst[3 * x + 1] = v; dst[3 * x + 2] = v; }
}
CP_CLONES static void cp_alpha_bgra(int16_t *restrict dst, const uint8_t *restrict r, int n) {
  for (int x = 0; x < n; x++) {   /* one 8-byte store a pixel: a, a, a, 0 (little-endian lanes) */
    uint64_t v = (uint64_t)(r[x] + (r[x] >> 7)) * 0x0000000100010001ULL;
    memcpy(dst + 4 * x, &v, 8);
  }
}
static inline __attribute__((always_inline)) int16_t cp_a4(const uint8_t *r0, const uint8_t *r1, int x) {
  int s = r0[2 * x] + (r0[2 * x] >> 7) + r0[2 * x + 1] + (r0[2 * x + 1] >> 7) + r1[2 * x] + (r1[2 * x] >> 7) + r1[2 * x + 1] + (r1[2 * x + 1] >> 7);
  return (int16_t)((s + 2) >> 2);
}
CP_CLONES static void cp_alpha_c1(int16_t *restrict dst, const uint8_t *restrict r0, const uint8_t *restrict r1, int n) {
  for (int x = 0; x < n; x++) dst[x] = cp_a4(r0, r1, x);
}
CP_CLONES static void cp_alpha_c2(int16_t *restrict dst, const uint8_t *restrict r0, const uint8_t *restrict r1, int n) {
  for (int x = 0; x < n; x++) { int16_t v = cp_a4(r0, r1, x); dst[2 * x] = v; dst[2 * x + 1] = v; }
}

/* a256 of row y of a plane, one per sample. a255 = NULL: 0. */
static void cp_alpha_row(const hr_compositor *c, const cp_plane *q, int y, const uint8_t *a255, int16_t *restrict dst) {
  int C = q->C, w = c->p.width;
  if (!a255) { memset(dst, 0, (size_t)q->w * C * sizeof *dst); return; }
  if (q->sub == 1) {
    const uint8_t *r = a255 + (size_t)y * w;
    if (C == 1) cp_alpha_y(dst, r, q->w);
    else if (C == 3) cp_alpha_rgb(dst, r, q->w);
    else cp_alpha_bgra(dst, r, q->w);
  } else {
    const uint8_t *r0 = a255 + (size_t)(2 * y) * w, *r1 = r0 + w;
    if (C == 1) cp_alpha_c1(dst, r0, r1, q->w);
    else cp_alpha_c2(dst, r0, r1, q->w);
  }
}

/* RGBA output: one a256 a pixel. */
static void cp_alpha_row1(const hr_compositor *c, int y, const uint8_t *a255, int16_t *dst) {
  int w = c->p.width;
  if (!a255) { memset(dst, 0, (size_t)w * sizeof *dst); return; }
  const uint8_t *r = a255 + (size_t)y * w;
  for (int x = 0; x < w; x++) dst[x] = (int16_t)(r[x] + (r[x] >> 7));
}

static int cp_check_frame(const hr_compositor *c, const hr_frame *in, const hr_composite_out *out) {
  if (!in || !out || in->fmt != c->p.format || in->width != c->p.width || in->height != c->p.height) return -1;
  for (int i = 0; i < c->n_planes; i++) if (!in->planes[i]) return -1;
  int n_out = c->p.out_rgba ? 1 : c->n_planes;
  for (int i = 0; i < n_out; i++) if (!out->planes[i]) return -1;
  return 0;
}

/* RGBA output of the frame's own pixels (every colour kept: a256 = 256); alpha from a255 (w x h),
 * or 255 when a255 is NULL. */
static void cp_rgba_as_is(hr_compositor *c, const hr_frame *in, const hr_composite_out *out, const uint8_t *a255) {
  static const int map_bgra[3] = {2, 1, 0}, map_rgb[3] = {0, 1, 2};
  const cp_plane *q = &c->pl[0];
  const int w = in->width, h = in->height;
  for (int x = 0; x < w; x++) c->arow[x] = 256;
  for (int y = 0; y < h; y++) {
    const uint8_t *s = (const uint8_t *)in->planes[0] + (ptrdiff_t)y * in->strides[0];
    uint8_t *d = out->planes[0] + (ptrdiff_t)y * out->strides[0];
    cp_blend_rgba(d, s, s, c->arow, a255 ? a255 + (size_t)y * w : NULL, w, q->C, q->C == 4 ? map_bgra : map_rgb);
  }
}

/* The matte as floats (alpha) or as the stream's bytes (a8: a255 already, the same rounding); one of
 * them or neither (no matte). */
static hr_status apply(hr_compositor *c, const hr_frame *in, const float *alpha, const uint8_t *a8, const hr_health_verdict *health,
                       const hr_composite_out *out, hr_composite_result *res) {
  if (!c) return HR_EINVAL;
  if (cp_check_frame(c, in, out)) {
    snprintf(c->err, sizeof c->err, "compositor: frame is not %s %dx%d with its planes (input %s %dx%d)", hr_pixfmt_name(c->p.format),
             c->p.width, c->p.height, in ? hr_pixfmt_name(in->fmt) : "none", in ? in->width : 0, in ? in->height : 0);
    return HR_EINVAL;
  }
  int w = c->p.width, h = c->p.height;
  /* 1. whose matte: this frame's, the held one, or none */
  const bool have = alpha || a8;
  bool good = have && (!health || ((health->state == HR_HEALTH_HEALTHY || health->state == HR_HEALTH_WARMING_UP) && health->output_ok));
  hr_composite_action act = HR_COMPOSITE_ACTION_MATTE;
  c->reason[0] = 0;
  /* the matte quantised in one pass over the whole frame before anything else: one stream of
   * floats for the prefetcher (row by row inside the blend, interleaved with the planes' rows,
   * measured 1.9x the cycles on this pass) */
  if (good) {
    if (a8) memcpy(c->matte, a8, (size_t)w * h);   /* kept: what hold shows */
    else cp_quantise(c->matte, alpha, (size_t)w * h);
    c->have_matte = true;
  } else {
    if (!have) snprintf(c->reason, sizeof c->reason, "no matte (suspended)");
    else if (!health->output_ok && health->state != HR_HEALTH_FAILED) snprintf(c->reason, sizeof c->reason, "matte not usable: %s", health->reason ? health->reason : "");
    else snprintf(c->reason, sizeof c->reason, "health %s: %s", hr_health_state_name(health->state), health->reason ? health->reason : "");
    switch (c->p.fallback) {
      case HR_COMPOSITE_FALLBACK_HOLD: act = c->have_matte ? HR_COMPOSITE_ACTION_HOLD : HR_COMPOSITE_ACTION_BLUR_ALL; break;
      case HR_COMPOSITE_FALLBACK_BLUR_ALL: act = HR_COMPOSITE_ACTION_BLUR_ALL; break;
      case HR_COMPOSITE_FALLBACK_PASSTHROUGH: act = HR_COMPOSITE_ACTION_PASSTHROUGH; break;
    }
  }
  /* a fallback whose cause changes (suspended -> recalibrating) is a change too */
  int state = act == HR_COMPOSITE_ACTION_MATTE ? -1 : !have ? HR_HEALTH_SUSPENDED : health ? (int)health->state : -1;
  if (res) { res->action = act; res->changed = act != c->prev || state != c->prev_state; res->reason = c->reason; }
  c->prev = act;
  c->prev_state = state;
  const uint8_t *a255 = act == HR_COMPOSITE_ACTION_MATTE || act == HR_COMPOSITE_ACTION_HOLD ? c->matte : NULL;
  hr_composite_mode mode = c->p.mode;
  bool blur_bg = act == HR_COMPOSITE_ACTION_BLUR_ALL || (mode == HR_COMPOSITE_MODE_BLUR && act != HR_COMPOSITE_ACTION_PASSTHROUGH);

  /* 2. passthrough: the frame as it is (nothing to do in place) */
  if (act == HR_COMPOSITE_ACTION_PASSTHROUGH) {
    if (c->p.out_rgba) {
      cp_rgba_as_is(c, in, out, NULL);
    } else {
      for (int i = 0; i < c->n_planes; i++) {
        const cp_plane *q = &c->pl[i];
        for (int y = 0; y < q->h; y++) {
          const uint8_t *s = (const uint8_t *)in->planes[i] + (ptrdiff_t)y * in->strides[i];
          uint8_t *d = out->planes[i] + (ptrdiff_t)y * out->strides[i];
          if (d != s) memcpy(d, s, (size_t)q->w * q->C);
        }
      }
    }
    return HR_OK;
  }

  /* 3. the matte alone */
  if (mode == HR_COMPOSITE_MODE_ALPHA && act != HR_COMPOSITE_ACTION_BLUR_ALL) {
    if (c->p.out_rgba) {
      cp_rgba_as_is(c, in, out, a255);
      return HR_OK;
    }
    for (int i = 0; i < c->n_planes; i++) {
      const cp_plane *q = &c->pl[i];
      for (int y = 0; y < q->h; y++) {
        uint8_t *d = out->planes[i] + (ptrdiff_t)y * out->strides[i];
        const uint8_t *m = a255 + (size_t)y * w;
        if (!c->yuv) {
          for (int x = 0; x < q->w; x++) {
            for (int k = 0; k < 3; k++) d[x * q->C + k] = m[x];
            if (q->C == 4) d[x * 4 + 3] = 255;
          }
        } else if (i == 0) {
          memcpy(d, m, (size_t)q->w);   /* the 8-bit matte itself, whatever the range */
        } else {
          memset(d, 128, (size_t)q->w * q->C);
        }
      }
    }
    return HR_OK;
  }

  /* 4. composite over the background: blurred planes (made now, from the input, before anything is
   * written: in place is safe), or the colour / image planes made at create */
  if (blur_bg)
    for (int i = 0; i < c->n_planes; i++) cp_blur_plane(&c->pl[i], in->planes[i], in->strides[i]);
  if (c->p.out_rgba) {
    static const int map_bgra[3] = {2, 1, 0}, map_rgb[3] = {0, 1, 2};
    cp_plane *q = &c->pl[0];
    for (int y = 0; y < h; y++) {
      const uint8_t *s = (const uint8_t *)in->planes[0] + (ptrdiff_t)y * in->strides[0];
      uint8_t *d = out->planes[0] + (ptrdiff_t)y * out->strides[0];
      const uint8_t *bg;
      if (blur_bg) { cp_uprow(q, y); bg = q->bgrow; } else bg = q->bg + (size_t)y * w * q->C;
      cp_alpha_row1(c, y, a255, c->arow);
      cp_blend_rgba(d, s, bg, c->arow, a255 ? a255 + (size_t)y * w : NULL, w, q->C, q->C == 4 ? map_bgra : map_rgb);
    }
    return HR_OK;
  }
  /* row by row, all planes together: full-resolution row y, then (4:2:0, y odd) chroma row y / 2
   * from the matte rows y - 1 and y, which are still in L1 */
  cp_plane *q0 = &c->pl[0];
  const uint8_t *zrow = c->zrow;
  for (int y = 0; y < h; y++) {
    const uint8_t *s = (const uint8_t *)in->planes[0] + (ptrdiff_t)y * in->strides[0];
    uint8_t *d = out->planes[0] + (ptrdiff_t)y * out->strides[0];
    int n = q0->w * q0->C;
    if (c->yuv) {   /* Y: one matte sample a sample, widened in the blend itself */
      const uint8_t *am = a255 ? a255 + (size_t)y * w : zrow;
      if (blur_bg) {
        int j0 = q0->vy0[y], j1 = j0 + 1 < q0->lh ? j0 + 1 : j0;
        cp_blend_lerp8(d, s, q0->hup + (size_t)j0 * n, q0->hup + (size_t)j1 * n, q0->vwy[y], am, n);
      } else {
        cp_blend8(d, s, q0->bg + (size_t)y * n, am, n);
      }
    } else {
      cp_alpha_row(c, q0, y, a255, c->arow);
      if (blur_bg) {
        int j0 = q0->vy0[y], j1 = j0 + 1 < q0->lh ? j0 + 1 : j0;
        cp_blend_lerp(d, s, q0->hup + (size_t)j0 * n, q0->hup + (size_t)j1 * n, q0->vwy[y], c->arow, n);
      } else {
        cp_blend(d, s, q0->bg + (size_t)y * n, c->arow, n);
      }
      continue;
    }
    if (!(y & 1)) continue;
    int yc = y >> 1;
    cp_alpha_row(c, &c->pl[1], yc, a255, c->arow);   /* I420: U and V share it */
    for (int i = 1; i < c->n_planes; i++) {
      cp_plane *q = &c->pl[i];
      const uint8_t *sc = (const uint8_t *)in->planes[i] + (ptrdiff_t)yc * in->strides[i];
      uint8_t *dc = out->planes[i] + (ptrdiff_t)yc * out->strides[i];
      int nc = q->w * q->C;
      if (blur_bg) {
        int j0 = q->vy0[yc], j1 = j0 + 1 < q->lh ? j0 + 1 : j0;
        cp_blend_lerp(dc, sc, q->hup + (size_t)j0 * nc, q->hup + (size_t)j1 * nc, q->vwy[yc], c->arow, nc);
      } else {
        cp_blend(dc, sc, q->bg + (size_t)yc * nc, c->arow, nc);
      }
    }
  }
  return HR_OK;
}

hr_status hr_compositor_apply(hr_compositor *c, const hr_frame *in, const float *alpha, const hr_health_verdict *health,
                              const hr_composite_out *out, hr_composite_result *res) {
  return apply(c, in, alpha, NULL, health, out, res);
}

hr_status hr_compositor_apply_u8(hr_compositor *c, const hr_frame *in, const uint8_t *alpha_u8, const hr_health_verdict *health,
                                 const hr_composite_out *out, hr_composite_result *res) {
  return apply(c, in, NULL, alpha_u8, health, out, res);
}

const uint8_t *hr_compositor_matte(const hr_compositor *c) { return c && c->have_matte ? c->matte : NULL; }

const char *hr_compositor_last_error(const hr_compositor *c) { return c ? c->err : ""; }
