/* File-list sources: a folder of PNG/JPEG images (or one image), and a TUM RGB-D folder's color
 * or depth list; each file is decoded into a pool buffer on read. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "io_internal.h"
#include "tum.h"

typedef struct flist {
  char **paths;        /* owned */
  int64_t *ts;         /* NULL: frame i at i / fps */
  int *line;           /* list line of each file (TUM), or NULL */
  int n, next;
  char *list_name;     /* "DIR/rgb.txt" (TUM) or NULL */
  int depth;           /* decode 16-bit gray to HR_PIX_DEPTH16_MM */
  uint16_t *lut;       /* depth_scale -> mm, NULL when values are kept */
  hr__jpeg *jpg;
  uint8_t *fbuf;       /* file bytes, grown to the largest file once */
  size_t fcap;
  int npng, njpg;      /* files of each kind (by extension; a single file: by content) */
  int64_t jpeg_mem;    /* libjpeg-turbo's working memory for the first JPEG (header-derived), 0 none */
  int progressive;     /* the first JPEG is progressive */
} flist;

static void flist_destroy(hr_source *s) {
  flist *L = s->impl;
  if (!L) return;
  for (int i = 0; L->paths && i < L->n; i++) free(L->paths[i]);
  free(L->paths);
  free(L->ts);
  free(L->line);
  free(L->list_name);
  free(L->lut);
  hr__jpeg_destroy(L->jpg);
  free(L->fbuf);
  free(L);
  s->impl = NULL;
}

static hr_status flist_read(hr_source *s, hr_frame *out) {
  flist *L = s->impl;
  if (L->next >= L->n) return HR_EEOF;
  int i = L->next++;
  const char *path = L->paths[i];
  char e[400];
  size_t len = 0, fb = hr__frame_bytes(s->fmt, s->width, s->height);
  int warned = 0;
  uint8_t *dst = NULL;
  hr_status st = hr__file_read_all(path, &L->fbuf, &L->fcap, &len, e, sizeof e);
  if (!st && !(dst = hr__pool_take(&s->pool, fb))) st = hr__errf(e, sizeof e, HR_ENOMEM, "out of memory");
  if (!st) {
    if (L->depth) {
      int w = s->width, h = s->height;
      st = hr__png_decode_gray16(L->fbuf, len, (uint16_t *)dst, fb, &w, &h, path, e, sizeof e);
      if (!st && L->lut) {
        hr__depth_apply_lut((uint16_t *)dst, (size_t)w * (size_t)h, L->lut);
        s->stats.converted++;
      }
    } else {
      st = hr__image_decode_rgb24(L->jpg, L->fbuf, len, dst, fb, s->width, s->height, &warned,
                                  path, e, sizeof e);
    }
  }
  if (st) {
    if (L->line) return hr__source_fail(s, st, "%s line %d: %s", L->list_name, L->line[i], e);
    return hr__source_fail(s, st, "%s", e);
  }
  int64_t ts = L->ts ? L->ts[i] : (int64_t)llround((double)i * 1e9 / s->params.fps);
  hr__frame_packed(out, s->fmt, s->width, s->height, dst, ts);
  s->stats.pooled++;
  s->stats.bytes_pooled += (int64_t)fb;
  if (warned) {
    s->stats.warnings++;
    snprintf(s->err, sizeof s->err, "warning: %s decoded with errors in the data", path);
  }
  return HR_OK;
}

/* Decoder code first touched at the first decode (the open reads headers only), measured as the
 * growth of file-backed RSS over a run's first frame on x86-64 Debian 12: libjpeg-turbo's Huffman
 * decoder, IDCT, upsampling and colour conversion (SIMD) 0.16 MB; zlib's inflate and libspng's
 * unfiltering 0.05 MB. */
#define HR__JPEG_DECODE_CODE (160 * 1024)
#define HR__PNG_DECODE_CODE (48 * 1024)

static void flist_memory(const hr_source *s, int pool, hr_source_memory *m) {
  const flist *L = s->impl;
  size_t fb = hr__frame_bytes(s->fmt, s->width, s->height);
  m->pool_bytes = (int64_t)pool * (int64_t)fb;
  /* The read buffer grows to the largest file read (realloc: only the bytes read are touched). */
  int64_t big = (int64_t)L->fcap;
  for (int i = 0; i < L->n; i++) {
    struct stat st;
    if (stat(L->paths[i], &st) == 0 && st.st_size > big) big = st.st_size;
  }
  m->file_bytes = big;
  int64_t png = L->npng || L->depth ? hr__png_decode_memory(s->width, L->depth ? 2 : 1) : 0;
  int64_t jpg = L->njpg ? L->jpeg_mem : 0;
  m->decoder_bytes = png > jpg ? png : jpg;
  if (L->lut) m->decoder_bytes += 65536 * (int64_t)sizeof *L->lut;
  m->code_bytes = (L->njpg ? HR__JPEG_DECODE_CODE : 0) + (L->npng || L->depth ? HR__PNG_DECODE_CODE : 0);
  snprintf(m->detail, sizeof m->detail, "%d x %dx%d %s decoded into the pool; largest file %.2f MB%s",
           pool, s->width, s->height, hr_pixfmt_name(s->fmt), (double)big / 1e6,
           L->progressive ? "; progressive JPEG: whole-image coefficients" : "");
}

static const hr__source_ops flist_ops = {"images", flist_read, flist_destroy, NULL, flist_memory};
static const hr__source_ops tum_ops = {"tum", flist_read, flist_destroy, NULL, flist_memory};

/* Probe the first file, set the source's format and size, allocate the pool. */
static hr_status flist_begin(hr_source *s, flist *L, char *err, size_t err_len) {
  const char *path = L->paths[0];
  char e[400];
  size_t len = 0;
  hr_status st = hr__file_read_all(path, &L->fbuf, &L->fcap, &len, e, sizeof e);
  int w = 0, h = 0;
  if (!st) {
    if (L->depth) {
      int bd = 0, ct = 0;
      st = hr__png_probe(L->fbuf, len, &w, &h, &bd, &ct, path, e, sizeof e);
      if (!st && (bd != 16 || ct != 0))
        st = hr__errf(e, sizeof e, HR_ENOTSUP, "%s is not a 16-bit grayscale PNG (colour type %d, %d bits): not a depth map",
                      path, ct, bd);
    } else {
      st = hr__image_probe(L->jpg, L->fbuf, len, &w, &h, path, e, sizeof e);
      if (!st && hr__is_jpeg(L->fbuf, len)) L->jpeg_mem = hr__jpeg_decode_memory(L->jpg, L->fbuf, len, &L->progressive);
    }
  }
  if (st) {
    if (L->line) return hr__errf(err, err_len, st, "%s line %d: %s", L->list_name, L->line[0], e);
    return hr__errf(err, err_len, st, "%s", e);
  }
  s->fmt = L->depth ? HR_PIX_DEPTH16_MM : HR_PIX_RGB24;
  s->width = w;
  s->height = h;
  s->frame_count = L->n;
  if (hr__pool_init(&s->pool, s->params.pool_size, hr__frame_bytes(s->fmt, w, h)))
    return hr__errf(err, err_len, HR_ENOMEM, "out of memory for %d frames of %dx%d", s->params.pool_size, w, h);
  return HR_OK;
}

static int image_ext(const char *name) {
  const char *dot = strrchr(name, '.');
  if (!dot) return 0;
  if (strcasecmp(dot, ".png") == 0) return 1;
  if (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0) return 2;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name) {
  size_t dl = strlen(dir), nl = strlen(name);
  while (dl > 1 && dir[dl - 1] == '/') dl--;
  char *p = malloc(dl + nl + 2);
  if (!p) return NULL;
  memcpy(p, dir, dl);
  p[dl] = '/';
  memcpy(p + dl + 1, name, nl + 1);
  return p;
}

hr_status hr__images_open(hr_source *s, const char *path, int is_dir, char *err, size_t err_len) {
  flist *L = calloc(1, sizeof *L);
  if (!L) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  s->impl = L;
  s->ops = &flist_ops;
  if (hr__jpeg_create(&L->jpg)) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  int npng = 0, njpg = 0;
  if (is_dir) {
    DIR *d = opendir(path);
    if (!d) return hr__errf(err, err_len, HR_EIO, "cannot open folder %s", path);
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
      int k = de->d_name[0] == '.' ? 0 : image_ext(de->d_name);
      if (!k) continue;
      if (L->n == cap) {
        int nc = cap ? cap * 2 : 256;
        char **np = realloc(L->paths, (size_t)nc * sizeof *np);
        if (!np) { closedir(d); return hr__errf(err, err_len, HR_ENOMEM, "out of memory"); }
        L->paths = np;
        cap = nc;
      }
      if (!(L->paths[L->n] = join(path, de->d_name))) { closedir(d); return hr__errf(err, err_len, HR_ENOMEM, "out of memory"); }
      L->n++;
      if (k == 1) npng++; else njpg++;
    }
    closedir(d);
    if (L->n == 0) return hr__errf(err, err_len, HR_EINVAL, "folder %s has no .png, .jpg or .jpeg files", path);
    qsort(L->paths, (size_t)L->n, sizeof *L->paths, cmp_str);
  } else {
    L->paths = malloc(sizeof *L->paths);
    if (!L->paths || !(L->paths[0] = strdup(path))) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
    L->n = 1;
  }
  hr_status st = flist_begin(s, L, err, err_len);
  if (st) return st;
  if (!is_dir) {
    if (hr__is_png(L->fbuf, 8)) npng = 1; else njpg = 1;
  }
  L->npng = npng;
  L->njpg = njpg;
  const char *kind = npng && njpg ? "PNG+JPEG" : npng ? "PNG" : "JPEG";
  snprintf(s->desc, sizeof s->desc, "images %s %d %s %dx%d rgb24 %g fps (%s%s, decoded into a pool of %d)",
           hr__basename(path), L->n, L->n == 1 ? "frame" : "frames", s->width, s->height,
           s->params.fps, kind, njpg ? " islow DCT" : "", s->params.pool_size);
  return HR_OK;
}

hr_status hr__tum_open(hr_source *s, const char *dir, char *err, size_t err_len) {
  flist *L = calloc(1, sizeof *L);
  if (!L) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  s->impl = L;
  s->ops = &tum_ops;
  L->depth = s->params.stream == HR_SOURCE_STREAM_DEPTH;
  if (hr__jpeg_create(&L->jpg)) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  if (!(L->list_name = join(dir, L->depth ? "depth.txt" : "rgb.txt")))
    return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  hr_tum_list tl;
  hr_status st = hr__tum_list_load(L->list_name, true, &tl, err, err_len);
  if (st) return st;
  if (tl.n == 0) {
    hr__tum_list_free(&tl);
    return hr__errf(err, err_len, HR_ECORRUPT, "%s lists no frames", L->list_name);
  }
  L->paths = calloc((size_t)tl.n, sizeof *L->paths);
  L->ts = malloc((size_t)tl.n * sizeof *L->ts);
  L->line = malloc((size_t)tl.n * sizeof *L->line);
  if (!L->paths || !L->ts || !L->line) {
    hr__tum_list_free(&tl);
    return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  }
  for (int i = 0; i < tl.n; i++) {
    L->paths[i] = tl.v[i].path;   /* ownership moves to L */
    tl.v[i].path = NULL;
    L->ts[i] = tl.v[i].ts_ns;
    L->line[i] = tl.v[i].line;
  }
  L->n = tl.n;
  hr__tum_list_free(&tl);
  if (L->depth && hr__depth_lut_make(s->params.depth_scale, &L->lut))
    return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  if ((st = flist_begin(s, L, err, err_len))) return st;
  if (hr__is_jpeg(L->fbuf, L->fcap)) L->njpg = L->n; else L->npng = L->n;   /* as the first file */
  double span = (double)(L->ts[L->n - 1] - L->ts[0]) / 1e9;
  char scale[96] = "";
  if (L->depth) {
    if (L->lut) snprintf(scale, sizeof scale, ", %g units/m rescaled to mm", s->params.depth_scale);
    else snprintf(scale, sizeof scale, ", 1000 units/m = mm, as stored");
  }
  snprintf(s->desc, sizeof s->desc, "tum %s %s %dx%d %s %d frames over %.3f s (%s%s)",
           hr__basename(dir), L->depth ? "depth" : "color", s->width, s->height,
           hr_pixfmt_name(s->fmt), L->n, span, hr__basename(L->list_name), scale);
  return HR_OK;
}
