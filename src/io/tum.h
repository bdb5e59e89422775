/* Internal API of libheadroom_io for RGB-D code (e.g. a depth aligner): the TUM RGB-D list parser,
 * the exact timestamp parser, and a reader for single 16-bit depth PNGs. */
#ifndef HR_IO_TUM_H
#define HR_IO_TUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "headroom/core.h"

/* One "timestamp path" line of a TUM list (rgb.txt, depth.txt). */
typedef struct hr_tum_entry {
  int64_t ts_ns;    /* the line's timestamp, seconds -> nanoseconds, exact (see below) */
  char *path;       /* base_dir + "/" + the listed path (the listed path alone if absolute) */
  int line;         /* 1-based line number in the list */
} hr_tum_entry;

typedef struct hr_tum_list {
  hr_tum_entry *v;
  int n;
} hr_tum_list;

/* Parse a seconds timestamp ("1700000000.005854", "-0.5", "1.7e9") into nanoseconds. Plain
 * decimals are parsed digit by digit, so every digit up to the 9th after the point is exact (a
 * double would lose ~100 ns at 1.7e9 s); further digits round half up. Exponent forms go through
 * strtod (double precision). *end (if non-NULL) is set past the number. HR_ECORRUPT if there is
 * no number, HR_ERANGE if it does not fit int64 nanoseconds. */
hr_status hr__tum_parse_timestamp(const char *s, const char **end, int64_t *ns);

/* Parse a TUM list from memory (need not be NUL-terminated). Lines: "timestamp path [more
 * columns ignored]"; blank lines and lines starting with '#' (after spaces) are skipped; a '\r'
 * before '\n' is ignored. Paths are joined to base_dir (NULL or "" = as listed). name is used in
 * messages ("rgb.txt line 7: ..."). HR_ECORRUPT for a malformed line, HR_ENOMEM. On error *out is
 * empty. This is the fuzzing entry point for lists. */
hr_status hr__tum_list_parse(const char *text, size_t len, const char *base_dir, const char *name,
                             hr_tum_list *out, char *err, size_t err_len);

/* Read and parse a list file; paths are relative to the list's folder. With check_files, every
 * listed file must exist as a regular file: HR_EIO "LIST line N: FILE: No such file or
 * directory" for the first that does not. */
hr_status hr__tum_list_load(const char *list_path, bool check_files, hr_tum_list *out, char *err,
                            size_t err_len);

/* NULL-safe; leaves *l empty. */
void hr__tum_list_free(hr_tum_list *l);

/* Read one 16-bit grayscale depth PNG into a new host-endian buffer (*px, free() it, w*h values,
 * stride w*2), in millimetres: values are kept as they are when depth_scale is exactly 1000,
 * otherwise v -> min(65535, floor(v * 1000 / depth_scale + 0.5)), 0 staying 0. HR_ENOTSUP for a
 * PNG that is not 16-bit grayscale. */
hr_status hr__depth_png_read(const char *path, double depth_scale, uint16_t **px, int *w, int *h,
                             char *err, size_t err_len);

/* Building blocks of the above, reused by the TUM source. */
hr_status hr__png_probe(const uint8_t *data, size_t len, int *w, int *h, int *bit_depth,
                        int *color_type, const char *name, char *err, size_t err_len);
/* Decode a 16-bit gray PNG into dst (dst_cap bytes). If *w > 0 on entry the size must be *w x *h
 * (HR_EMISMATCH otherwise); *w, *h are set to the image size. */
hr_status hr__png_decode_gray16(const uint8_t *data, size_t len, uint16_t *dst, size_t dst_cap,
                                int *w, int *h, const char *name, char *err, size_t err_len);
/* The depth_scale -> millimetres table: *lut = NULL when depth_scale == 1000 (no conversion),
 * else 65536 entries (free() it). */
hr_status hr__depth_lut_make(double depth_scale, uint16_t **lut);
void hr__depth_apply_lut(uint16_t *px, size_t n, const uint16_t *lut);   /* lut NULL: no-op */

#endif
