/* headroom report: the self-contained HTML run report made from a telemetry JSONL file, in its own
 * library (libheadroom_report): the runtime does not carry an HTML/SVG renderer. Not included by
 * headroom.h. */
#ifndef HEADROOM_REPORT_H
#define HEADROOM_REPORT_H
#include "headroom/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Run report: one self-contained HTML file (no network, no scripts) from a telemetry JSONL file:
 * inline SVG plots over time (stage times stacked against the budget, delivered fps, processing
 * ratio/resolution, RSS and headroom against the ceilings, health band with confidence, drops,
 * depth sync when present), governor/reset markers, a summary table with p50/p95/p99 per stage,
 * and up to HR_REPORT_MAX_IMAGES sample images embedded as data URIs.
 * Plots are decimated to at most max_points buckets (min/max/mean per bucket), so a 10-minute run
 * at 60 fps (36,000 frames) and a 10-hour one make reports of the same size. Missing fields are
 * left out of the plots and the table says "n/a". Reads the file twice (streaming; memory does not
 * grow with the number of frames). May allocate: it runs after the loop.
 * ------------------------------------------------------------------------------------------- */
#define HR_REPORT_MAX_IMAGES 6

typedef struct hr_report_image {
  const char *path;     /* PNG (or JPEG) file; a missing/unreadable file shows as a note */
  const char *caption;  /* NULL = the file name */
} hr_report_image;

typedef struct hr_report_opts {
  const char *title;            /* page title; default "headroom run report" */
  double budget_ms;             /* frame budget; default 1000/60 (16.667 ms) */
  int64_t ceiling_safe_bytes;   /* drawn on the memory plot; 0 = the largest seen in telemetry */
  int64_t ceiling_kill_bytes;   /* as above */
  hr_report_image images[HR_REPORT_MAX_IMAGES];
  int n_images;                 /* 0..HR_REPORT_MAX_IMAGES; default 0 */
  int max_points;               /* time buckets per plot, 50..2000; default 480 */
  char *err;                    /* if non-NULL, receives a one-line message on failure */
  size_t err_len;
} hr_report_opts;

HR_API void hr_report_opts_default(hr_report_opts *o);

/* Write the report. opts may be NULL for defaults. The HTML is written to html_out + ".tmp" and
 * renamed, so html_out is either the old file or the complete new one.
 * Returns HR_OK; HR_EINVAL (NULL paths, bad opts); HR_EIO (cannot read/write; opts->err says
 * which file); HR_ECORRUPT (no valid telemetry line at all; malformed lines among valid ones are
 * skipped and counted in the report); HR_ENOMEM. */
HR_API hr_status hr_report_write_html(const char *telemetry_jsonl_path, const char *html_out,
                               const hr_report_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
