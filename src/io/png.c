/* PNG through libspng: decoding to RGB24 and to 16-bit depth, and the atomic PNG writers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <spng.h>
#include "io_internal.h"
#include "tum.h"

/* Limits for untrusted files: the frame size limit of hr_frame, and generous chunk limits. */
static spng_ctx *png_ctx(const uint8_t *data, size_t len) {
  spng_ctx *c = spng_ctx_new(0);
  if (!c) return NULL;
  spng_set_image_limits(c, 16384, 16384);
  spng_set_chunk_limits(c, (size_t)1 << 26, (size_t)1 << 26);
  if (spng_set_png_buffer(c, data, len)) { spng_ctx_free(c); return NULL; }
  return c;
}

static hr_status png_header(spng_ctx *c, struct spng_ihdr *ih, const char *name, char *err, size_t err_len) {
  int r = spng_get_ihdr(c, ih);
  if (r) return hr__errf(err, err_len, HR_ECORRUPT, "bad PNG %s: %s", name, spng_strerror(r));
  return HR_OK;
}

hr_status hr__png_probe(const uint8_t *data, size_t len, int *w, int *h, int *bit_depth,
                        int *color_type, const char *name, char *err, size_t err_len) {
  spng_ctx *c = png_ctx(data, len);
  if (!c) return hr__errf(err, err_len, HR_ENOMEM, "out of memory decoding %s", name);
  struct spng_ihdr ih;
  hr_status st = png_header(c, &ih, name, err, err_len);
  spng_ctx_free(c);
  if (st) return st;
  *w = (int)ih.width;
  *h = (int)ih.height;
  if (bit_depth) *bit_depth = ih.bit_depth;
  if (color_type) *color_type = ih.color_type;
  return HR_OK;
}

/* Every PNG colour type becomes RGB8 through spng's own conversion: gray g -> (g,g,g), palette
 * expanded, alpha dropped (not composited), 16-bit samples reduced to their high byte (v >> 8),
 * gAMA / iCCP ignored. */
hr_status hr__png_decode_rgb24(const uint8_t *data, size_t len, uint8_t *dst, size_t dst_cap,
                               int want_w, int want_h, const char *name, char *err, size_t err_len) {
  spng_ctx *c = png_ctx(data, len);
  if (!c) return hr__errf(err, err_len, HR_ENOMEM, "out of memory decoding %s", name);
  struct spng_ihdr ih;
  hr_status st = png_header(c, &ih, name, err, err_len);
  if (st) goto done;
  if ((int)ih.width != want_w || (int)ih.height != want_h) {
    st = hr__errf(err, err_len, HR_EMISMATCH, "%s is %ux%u, expected %dx%d", name,
                  (unsigned)ih.width, (unsigned)ih.height, want_w, want_h);
    goto done;
  }
  size_t need;
  int r = spng_decoded_image_size(c, SPNG_FMT_RGB8, &need);
  if (r || need > dst_cap) {
    st = hr__errf(err, err_len, HR_ECORRUPT, "bad PNG %s: %s", name, r ? spng_strerror(r) : "size");
    goto done;
  }
  r = spng_decode_image(c, dst, need, SPNG_FMT_RGB8, 0);
  if (r) st = hr__errf(err, err_len, HR_ECORRUPT, "bad PNG %s: %s", name, spng_strerror(r));
done:
  spng_ctx_free(c);
  return st;
}

hr_status hr__png_decode_gray16(const uint8_t *data, size_t len, uint16_t *dst, size_t dst_cap,
                                int *w, int *h, const char *name, char *err, size_t err_len) {
  spng_ctx *c = png_ctx(data, len);
  if (!c) return hr__errf(err, err_len, HR_ENOMEM, "out of memory decoding %s", name);
  struct spng_ihdr ih;
  hr_status st = png_header(c, &ih, name, err, err_len);
  if (st) goto done;
  if (ih.color_type != SPNG_COLOR_TYPE_GRAYSCALE || ih.bit_depth != 16) {
    st = hr__errf(err, err_len, HR_ENOTSUP,
                  "%s is not a 16-bit grayscale PNG (colour type %d, %d bits): not a depth map",
                  name, ih.color_type, ih.bit_depth);
    goto done;
  }
  size_t need = (size_t)ih.width * ih.height * 2;
  if (*w > 0 && ((int)ih.width != *w || (int)ih.height != *h)) {
    st = hr__errf(err, err_len, HR_EMISMATCH, "%s is %ux%u, expected %dx%d", name,
                  (unsigned)ih.width, (unsigned)ih.height, *w, *h);
    goto done;
  }
  if (need > dst_cap) {
    st = hr__errf(err, err_len, HR_EINVAL, "%s: %ux%u does not fit the buffer", name,
                  (unsigned)ih.width, (unsigned)ih.height);
    goto done;
  }
  /* SPNG_FMT_PNG: the file's own format, 16-bit samples in host byte order. */
  int r = spng_decode_image(c, dst, need, SPNG_FMT_PNG, 0);
  if (r) { st = hr__errf(err, err_len, HR_ECORRUPT, "bad PNG %s: %s", name, spng_strerror(r)); goto done; }
  *w = (int)ih.width;
  *h = (int)ih.height;
done:
  spng_ctx_free(c);
  return st;
}

/* libspng 0.7 decoding: the context (~8 KB), zlib's inflate state (7 KB) and 32 KB window, the
 * current and previous scanline and a row in the output format (up to 4 samples): 48 KB + 4 rows.
 * Measured at 1920x1440 RGB: under 0.1 MB. */
int64_t hr__png_decode_memory(int w, int bytes_per_sample) {
  if (w <= 0) return 0;
  return 48 * 1024 + 4 * ((int64_t)w * 4 * bytes_per_sample + 1);
}

/* ---- depth --------------------------------------------------------------------------------- */

hr_status hr__depth_lut_make(double depth_scale, uint16_t **lut) {
  *lut = NULL;
  if (depth_scale == 1000.0) return HR_OK;
  uint16_t *t = malloc(65536 * sizeof *t);
  if (!t) return HR_ENOMEM;
  double k = 1000.0 / depth_scale;
  for (uint32_t v = 0; v < 65536; v++) {
    double mm = (double)v * k + 0.5;
    t[v] = mm >= 65535.0 ? 65535 : (uint16_t)mm;
  }
  *lut = t;
  return HR_OK;
}

void hr__depth_apply_lut(uint16_t *px, size_t n, const uint16_t *lut) {
  if (!lut) return;
  for (size_t i = 0; i < n; i++) px[i] = lut[px[i]];
}

hr_status hr__depth_png_read(const char *path, double depth_scale, uint16_t **px, int *w, int *h,
                             char *err, size_t err_len) {
  *px = NULL;
  *w = *h = 0;
  if (!(depth_scale > 0)) return hr__errf(err, err_len, HR_EINVAL, "depth_scale %g must be > 0", depth_scale);
  uint8_t *buf = NULL;
  size_t cap = 0, len = 0;
  hr_status st = hr__file_read_all(path, &buf, &cap, &len, err, err_len);
  if (st) { free(buf); return st; }
  int bd, ct;
  st = hr__png_probe(buf, len, w, h, &bd, &ct, path, err, err_len);
  uint16_t *out = NULL, *lut = NULL;
  if (!st) {
    out = malloc((size_t)*w * (size_t)*h * 2);
    if (!out) st = hr__errf(err, err_len, HR_ENOMEM, "out of memory reading %s", path);
  }
  if (!st) st = hr__png_decode_gray16(buf, len, out, (size_t)*w * (size_t)*h * 2, w, h, path, err, err_len);
  if (!st) st = hr__depth_lut_make(depth_scale, &lut);
  if (!st) hr__depth_apply_lut(out, (size_t)*w * (size_t)*h, lut);
  free(lut);
  free(buf);
  if (st) { free(out); *w = *h = 0; return st; }
  *px = out;
  return HR_OK;
}

/* ---- writers ------------------------------------------------------------------------------- */

/* Encode rows (row_bytes each, stride apart) to a PNG in memory and write it atomically. 16-bit
 * rows are host-endian (SPNG_FMT_PNG); spng writes them big-endian. */
static hr_status png_write(const char *path, int w, int h, int color_type, int bit_depth,
                           const uint8_t *px, ptrdiff_t stride, size_t row_bytes) {
  if (!path || !*path || !px || w <= 0 || h <= 0 || w > 65535 || h > 65535 ||
      stride < (ptrdiff_t)row_bytes)
    return HR_EINVAL;
  spng_ctx *c = spng_ctx_new(SPNG_CTX_ENCODER);
  if (!c) return HR_ENOMEM;
  hr_status st = HR_OK;
  struct spng_ihdr ih = {(uint32_t)w, (uint32_t)h, (uint8_t)bit_depth, (uint8_t)color_type, 0, 0, 0};
  int r = spng_set_option(c, SPNG_ENCODE_TO_BUFFER, 1);
  /* Masks are written every frame, at camera sizes: zlib level 1 with run-length matching and no
   * row filter. A 1920x1440 matte encodes in ~5.6 ms (174 KB) this way, against ~36 ms (133 KB) at
   * level 3 with adaptive filters (measured on an RVM matte of sam2-bedroom, one core). */
  if (!r) r = spng_set_option(c, SPNG_IMG_COMPRESSION_LEVEL, 1);
  if (!r) r = spng_set_option(c, SPNG_IMG_COMPRESSION_STRATEGY, 3 /* Z_RLE */);
  if (!r) r = spng_set_option(c, SPNG_FILTER_CHOICE, SPNG_FILTER_CHOICE_NONE);
  if (!r) r = spng_set_ihdr(c, &ih);
  if (!r) r = spng_encode_image(c, NULL, 0, SPNG_FMT_PNG, SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE);
  for (int y = 0; !r && y < h; y++) {
    r = spng_encode_row(c, px + (ptrdiff_t)y * stride, row_bytes);
    if (r == SPNG_EOI) { r = 0; break; }
  }
  if (r) { st = r == SPNG_EMEM ? HR_ENOMEM : HR_EIO; goto done; }
  size_t len = 0;
  int e = 0;
  void *png = spng_get_png_buffer(c, &len, &e);
  if (!png || e) { free(png); st = HR_EIO; goto done; }
  st = hr_file_write_atomic(path, png, len);
  free(png);
done:
  spng_ctx_free(c);
  return st;
}

int64_t hr_png_write_memory_estimate(int w, int h, int channels, int bit_depth) {
  if (w <= 0 || h <= 0 || w > 65535 || h > 65535 || channels < 1 || channels > 4 ||
      (bit_depth != 8 && bit_depth != 16))
    return 0;
  int64_t row = (int64_t)w * channels * (bit_depth / 8) + 1;
  /* zlib deflate at windowBits 15, memLevel 8: window 2 x 32 KB, prev 64 KB, head 64 KB, pending
   * 64 KB (zlib's "(1 << (windowBits + 2)) + (1 << (memLevel + 9))"), and its ~6 KB state. */
  int64_t z = ((int64_t)1 << 17) + ((int64_t)1 << 17) + 6 * 1024;
  /* libspng: context (~8 KB), its 8 KB stream buffer, the scanline and the previous one (filters),
   * the filtered row. */
  int64_t spng = 16 * 1024 + 3 * row;
  /* The encoded file: libspng grows its buffer from 16 KB to the next power of two that holds it. */
  int64_t want = row * h / 8, out = 16 * 1024;
  while (out < want) out *= 2;
  return z + spng + out;
}

hr_status hr_png_write_gray8(const char *path, int w, int h, const uint8_t *px, ptrdiff_t stride) {
  return png_write(path, w, h, SPNG_COLOR_TYPE_GRAYSCALE, 8, px, stride, (size_t)(w > 0 ? w : 0));
}

hr_status hr_png_write_gray16(const char *path, int w, int h, const uint16_t *px, ptrdiff_t stride_bytes) {
  return png_write(path, w, h, SPNG_COLOR_TYPE_GRAYSCALE, 16, (const uint8_t *)px, stride_bytes,
                   (size_t)(w > 0 ? w : 0) * 2);
}

hr_status hr_png_write_rgb24(const char *path, int w, int h, const uint8_t *px, ptrdiff_t stride) {
  return png_write(path, w, h, SPNG_COLOR_TYPE_TRUECOLOR, 8, px, stride, (size_t)(w > 0 ? w : 0) * 3);
}
