/* Internal: small inline-SVG time-series plotting primitives for the HTML run report. */
#ifndef HR_TELEMETRY_SVGPLOT_H
#define HR_TELEMETRY_SVGPLOT_H
#include <stdio.h>

/* One plot: data ranges mapped onto an SVG of W x H user units with margins L, R, T, B. */
typedef struct hr__plot {
  FILE *o;
  int id;                       /* unique per page: names the clip path */
  double x0, x1, y0, y1;        /* data ranges (x: ms since start) */
  double W, H, L, R, T, B;
} hr__plot;

/* Open <svg>: background, horizontal grid with y tick labels (value * y_scale printed with
 * y_unit appended to the axis title), x grid with time labels, and a clip path for the data. */
void hr__plot_begin(hr__plot *p, FILE *o, int id, double H, double x0, double x1, double y0,
                    double y1, const char *y_title);
/* Close the data group and the <svg>. */
void hr__plot_end(hr__plot *p);
double hr__plot_px(const hr__plot *p, double x);
double hr__plot_py(const hr__plot *p, double y);

/* A polyline through (xs[i], ys[i]); NaN in ys breaks it. attrs: extra SVG attributes. */
void hr__plot_line(hr__plot *p, const double *xs, const double *ys, int n, const char *attrs);
/* A step line (value held until the next x); NaN breaks it. */
void hr__plot_steps(hr__plot *p, const double *xs, const double *ys, int n, double x_end,
                    const char *attrs);
/* A filled band between lo[i] and hi[i]; NaN in either breaks it. */
void hr__plot_band(hr__plot *p, const double *xs, const double *lo, const double *hi, int n,
                   const char *attrs);
/* A filled area from `base` up to ys[i]; NaN breaks it. */
void hr__plot_area(hr__plot *p, const double *xs, const double *ys, int n, double base,
                   const char *attrs);
/* A horizontal reference line across the plot, with an optional label at its right end. */
void hr__plot_hline(hr__plot *p, double y, const char *attrs, const char *label);

/* 1, 2 or 5 times a power of ten, giving about `target` steps over `range`. */
double hr__nice_step(double range, int target);
/* Time label for ms since start: "42 s", "3:05", "1:02:03" depending on the span. */
void hr__fmt_time(char *buf, size_t n, double ms, double span_ms);
/* Write s with &, <, >, " escaped. NULL writes nothing. */
void hr__html_escape(FILE *o, const char *s);

#endif
