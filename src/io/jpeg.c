/* JPEG through libjpeg-turbo's TurboJPEG API, and the PNG-or-JPEG image probe and decode that
 * the image-folder, TUM and V4L2 MJPEG sources share. */
#include <stdlib.h>
#include <turbojpeg.h>
#include "io_internal.h"
#include "tum.h"

/* DCT: libjpeg-turbo's default for decompression, the accurate integer DCT (JDCT_ISLOW, SIMD);
 * neither TJFLAG_FASTDCT nor TJFLAG_ACCURATEDCT is passed. Chroma upsampling: the default
 * ("fancy", smooth) one. Measured on a 960x540 4:2:0 frame (x86-64, libjpeg-turbo 2.1.5, best of
 * 7x50): islow 1.04 ms, ifast 1.00 ms, ifast + fast upsampling 0.91 ms: not worth the accuracy. */
#ifndef HR__TJ_FLAGS
#define HR__TJ_FLAGS 0
#endif

struct hr__jpeg {
  tjhandle tj;
};

hr_status hr__jpeg_create(hr__jpeg **out) {
  *out = NULL;
  hr__jpeg *j = calloc(1, sizeof *j);
  if (!j) return HR_ENOMEM;
  j->tj = tjInitDecompress();
  if (!j->tj) { free(j); return HR_ENOMEM; }
  *out = j;
  return HR_OK;
}

void hr__jpeg_destroy(hr__jpeg *j) {
  if (!j) return;
  if (j->tj) tjDestroy(j->tj);
  free(j);
}

static hr_status jpeg_header(hr__jpeg *j, const uint8_t *data, size_t len, int *w, int *h,
                             const char *name, char *err, size_t err_len) {
  int sub = 0, cs = 0;
  if (len > (size_t)0xffffffffu || tjDecompressHeader3(j->tj, data, (unsigned long)len, w, h, &sub, &cs) != 0)
    return hr__errf(err, err_len, HR_ECORRUPT, "bad JPEG %s: %s", name, tjGetErrorStr2(j->tj));
  if (*w <= 0 || *h <= 0 || *w > 16384 || *h > 16384)
    return hr__errf(err, err_len, HR_ECORRUPT, "JPEG %s: size %dx%d out of range (1..16384)", name, *w, *h);
  return HR_OK;
}

hr_status hr__jpeg_decode_rgb24(hr__jpeg *j, const uint8_t *data, size_t len, uint8_t *dst,
                                size_t dst_cap, int want_w, int want_h, int *warned,
                                const char *name, char *err, size_t err_len) {
  int w, h;
  *warned = 0;
  hr_status st = jpeg_header(j, data, len, &w, &h, name, err, err_len);
  if (st) return st;
  if (w != want_w || h != want_h)
    return hr__errf(err, err_len, HR_EMISMATCH, "%s is %dx%d, expected %dx%d", name, w, h, want_w, want_h);
  if ((size_t)w * (size_t)h * 3 > dst_cap)
    return hr__errf(err, err_len, HR_EINVAL, "%s: %dx%d does not fit the buffer", name, w, h);
  if (tjDecompress2(j->tj, data, (unsigned long)len, dst, w, w * 3, h, TJPF_RGB, HR__TJ_FLAGS) != 0) {
    if (tjGetErrorCode(j->tj) == TJERR_WARNING) {
      *warned = 1;   /* decoded; the damaged part is left as the decoder filled it */
      return HR_OK;
    }
    return hr__errf(err, err_len, HR_ECORRUPT, "bad JPEG %s: %s", name, tjGetErrorStr2(j->tj));
  }
  return HR_OK;
}

hr_status hr__image_probe(hr__jpeg *j, const uint8_t *data, size_t len, int *w, int *h,
                          const char *name, char *err, size_t err_len) {
  if (hr__is_png(data, len)) return hr__png_probe(data, len, w, h, NULL, NULL, name, err, err_len);
  if (hr__is_jpeg(data, len)) return jpeg_header(j, data, len, w, h, name, err, err_len);
  return hr__errf(err, err_len, HR_ECORRUPT, "%s is neither PNG nor JPEG (bad signature)", name);
}

hr_status hr__image_decode_rgb24(hr__jpeg *j, const uint8_t *data, size_t len, uint8_t *dst,
                                 size_t dst_cap, int want_w, int want_h, int *warned,
                                 const char *name, char *err, size_t err_len) {
  *warned = 0;
  if (hr__is_png(data, len))
    return hr__png_decode_rgb24(data, len, dst, dst_cap, want_w, want_h, name, err, err_len);
  if (hr__is_jpeg(data, len))
    return hr__jpeg_decode_rgb24(j, data, len, dst, dst_cap, want_w, want_h, warned, name, err, err_len);
  return hr__errf(err, err_len, HR_ECORRUPT, "%s is neither PNG nor JPEG (bad signature)", name);
}

/* ---- memory -------------------------------------------------------------------------------- */

/* The frame header's marker: walk the segments from SOI to the first SOFn (each segment is FF xx
 * and a big-endian length that counts itself). Multi-scan (progressive) SOFs: 2, 6, 10, 14. */
static int jpeg_sof(const uint8_t *b, size_t n) {
  size_t i = 2;
  while (i + 4 <= n) {
    if (b[i] != 0xff) return -1;
    uint8_t m = b[i + 1];
    if (m == 0xff) { i++; continue; }                     /* fill byte */
    if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) return m - 0xc0;
    if (m == 0xd9 || m == 0xda) return -1;                /* EOI / SOS before any SOF */
    i += 2 + (size_t)((b[i + 2] << 8) | b[i + 3]);
  }
  return -1;
}

int64_t hr__jpeg_decode_memory(hr__jpeg *j, const uint8_t *data, size_t len, int *progressive) {
  int w = 0, h = 0, sub = TJSAMP_420, cs = 0;
  *progressive = 0;
  if (len > (size_t)0xffffffffu || tjDecompressHeader3(j->tj, data, (unsigned long)len, &w, &h, &sub, &cs) != 0)
    return 0;
  int sof = jpeg_sof(data, len);
  *progressive = sof == 2 || sof == 6 || sof == 10 || sof == 14;
  /* Chroma samples per luma sample, in quarters, of each subsampling (gray: none). */
  int chroma4 = sub == TJSAMP_444 ? 8 : sub == TJSAMP_422 || sub == TJSAMP_440 ? 4 : sub == TJSAMP_GRAY ? 0 : 2;
  int64_t px = (int64_t)w * h;
  /* Persistent state (the decompressor, Huffman and quantisation tables, ~64 KB), the main and
   * upsampling buffers (two context groups of up to 16 rows of each component, and the colour
   * converter's rows: ~48 bytes a pixel of width) and tjDecompress2's row pointers. Measured at
   * 1920x1440 4:2:0 baseline: 0.12-0.17 MB. */
  int64_t m = 64 * 1024 + 48 * (int64_t)w + 8 * (int64_t)h;
  /* Multi-scan: every component's DCT coefficients for the whole image, 2 bytes a sample. */
  if (*progressive) m += px * 2 * (4 + chroma4) / 4;
  return m;
}
