/* Small inline-SVG time-series plotting primitives (axes, lines, bands, areas) for the HTML run report. */
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include "report/svgplot.h"

#define HR__PLOT_W 1160.0

double hr__plot_px(const hr__plot *p, double x) {
  double w = p->W - p->L - p->R;
  double d = p->x1 - p->x0;
  return p->L + (d > 0 ? (x - p->x0) / d : 0.5) * w;
}

double hr__plot_py(const hr__plot *p, double y) {
  double h = p->H - p->T - p->B;
  double d = p->y1 - p->y0;
  return p->T + (1.0 - (d > 0 ? (y - p->y0) / d : 0.5)) * h;
}

double hr__nice_step(double range, int target) {
  if (!(range > 0) || target < 1) return 1;
  double raw = range / target;
  double mag = pow(10, floor(log10(raw)));
  double f = raw / mag;
  double m = f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10;
  return m * mag;
}

void hr__fmt_time(char *buf, size_t n, double ms, double span_ms) {
  double s = ms / 1000.0;
  if (span_ms < 120000) {
    if (span_ms < 3000) snprintf(buf, n, "%.1f s", s);
    else snprintf(buf, n, "%.0f s", s);
    return;
  }
  long t = lround(s);
  if (t < 0) t = 0;
  if (span_ms < 2 * 3600 * 1000.0) snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
  else snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
}

void hr__html_escape(FILE *o, const char *s) {
  if (!s) return;
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", o); break;
    case '<': fputs("&lt;", o); break;
    case '>': fputs("&gt;", o); break;
    case '"': fputs("&quot;", o); break;
    default: fputc(*s, o);
    }
  }
}

/* Decimals that make consecutive ticks `step` apart print differently. */
static int tick_decimals(double step) {
  int d = 0;
  while (d < 6 && fabs(step * pow(10, d) - round(step * pow(10, d))) > 1e-6 * pow(10, d)) d++;
  return d;
}

void hr__plot_begin(hr__plot *p, FILE *o, int id, double H, double x0, double x1, double y0,
                    double y1, const char *y_title) {
  p->o = o;
  p->id = id;
  p->x0 = x0;
  p->x1 = x1 > x0 ? x1 : x0 + 1;
  p->y0 = y0;
  p->y1 = y1 > y0 ? y1 : y0 + 1;
  p->W = HR__PLOT_W;
  p->H = H;
  p->L = 64;
  p->R = 96;
  p->T = 10;
  p->B = 26;
  double l = p->L, r = p->W - p->R, t = p->T, b = p->H - p->B;
  fprintf(o, "<svg class=\"plot\" viewBox=\"0 0 %.0f %.0f\" preserveAspectRatio=\"xMidYMid meet\" "
             "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n", p->W, p->H);
  fprintf(o, "<defs><clipPath id=\"clip%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
             "</clipPath></defs>\n", id, l, t, r - l, b - t);
  fprintf(o, "<rect class=\"bg\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", l, t, r - l, b - t);
  /* y grid and labels */
  double ys = hr__nice_step(p->y1 - p->y0, H > 150 ? 5 : 3);
  int yd = tick_decimals(ys);
  for (double v = ceil(p->y0 / ys - 1e-9) * ys; v <= p->y1 + ys * 1e-9; v += ys) {
    double y = hr__plot_py(p, v);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
               "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
            l, r, y, y, l - 6, y + 4, yd, fabs(v) < ys * 1e-9 ? 0.0 : v);
  }
  /* x grid and time labels */
  double span = p->x1 - p->x0;
  static const double steps[] = {100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000,
                                 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000,
                                 10800000, 21600000, 43200000, 86400000};
  double xs = steps[sizeof steps / sizeof steps[0] - 1];
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    if (span / steps[i] <= 12) { xs = steps[i]; break; }
  for (double v = ceil(p->x0 / xs - 1e-9) * xs; v <= p->x1 + 1e-9; v += xs) {
    double x = hr__plot_px(p, v);
    char lab[32];
    hr__fmt_time(lab, sizeof lab, v, span);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
               "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
            x, x, t, b, x, b + 17, lab);
  }
  fprintf(o, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", l, t, r - l, b - t);
  if (y_title) {
    fprintf(o, "<text class=\"ytitle\" transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            (t + b) / 2);
    hr__html_escape(o, y_title);
    fputs("</text>\n", o);
  }
  fprintf(o, "<g clip-path=\"url(#clip%d)\">\n", id);
}

void hr__plot_end(hr__plot *p) { fputs("</g>\n</svg>\n", p->o); }

static bool finite2(double a, double b) { return isfinite(a) && isfinite(b); }

void hr__plot_line(hr__plot *p, const double *xs, const double *ys, int n, const char *attrs) {
  fprintf(p->o, "<path %s fill=\"none\" d=\"", attrs ? attrs : "");
  bool pen = false;
  for (int i = 0; i < n; i++) {
    if (!finite2(xs[i], ys[i])) { pen = false; continue; }
    fprintf(p->o, "%c%.1f %.1f", pen ? 'L' : 'M', hr__plot_px(p, xs[i]), hr__plot_py(p, ys[i]));
    pen = true;
  }
  fputs("\"/>\n", p->o);
}

void hr__plot_steps(hr__plot *p, const double *xs, const double *ys, int n, double x_end,
                    const char *attrs) {
  fprintf(p->o, "<path %s fill=\"none\" d=\"", attrs ? attrs : "");
  bool pen = false;
  for (int i = 0; i < n; i++) {
    if (!finite2(xs[i], ys[i])) { pen = false; continue; }
    double xn = i + 1 < n ? xs[i + 1] : x_end;
    double y = hr__plot_py(p, ys[i]);
    if (pen) fprintf(p->o, "V%.1f", y);
    else fprintf(p->o, "M%.1f %.1f", hr__plot_px(p, xs[i]), y);
    fprintf(p->o, "H%.1f", hr__plot_px(p, xn));
    pen = true;
  }
  fputs("\"/>\n", p->o);
}

void hr__plot_band(hr__plot *p, const double *xs, const double *lo, const double *hi, int n,
                   const char *attrs) {
  fprintf(p->o, "<path %s d=\"", attrs ? attrs : "");
  int i = 0;
  while (i < n) {
    while (i < n && !(finite2(lo[i], hi[i]) && isfinite(xs[i]))) i++;
    int a = i;
    while (i < n && finite2(lo[i], hi[i]) && isfinite(xs[i])) i++;
    int b = i;   /* run [a, b) */
    if (b <= a) continue;
    double dx = b - a == 1 ? 0.8 : 0;   /* a lone bucket still shows as a sliver */
    for (int k = a; k < b; k++)
      fprintf(p->o, "%c%.1f %.1f", k == a ? 'M' : 'L', hr__plot_px(p, xs[k]) - (k == a ? dx : 0),
              hr__plot_py(p, hi[k]));
    if (dx > 0) fprintf(p->o, "L%.1f %.1f", hr__plot_px(p, xs[a]) + dx, hr__plot_py(p, hi[a]));
    for (int k = b - 1; k >= a; k--)
      fprintf(p->o, "L%.1f %.1f", hr__plot_px(p, xs[k]) + (k == a ? dx : 0), hr__plot_py(p, lo[k]));
    if (dx > 0) fprintf(p->o, "L%.1f %.1f", hr__plot_px(p, xs[a]) - dx, hr__plot_py(p, lo[a]));
    fputc('Z', p->o);
  }
  fputs("\"/>\n", p->o);
}

void hr__plot_area(hr__plot *p, const double *xs, const double *ys, int n, double base,
                   const char *attrs) {
  fprintf(p->o, "<path %s d=\"", attrs ? attrs : "");
  double yb = hr__plot_py(p, base);
  int i = 0;
  while (i < n) {
    while (i < n && !finite2(xs[i], ys[i])) i++;
    int a = i;
    while (i < n && finite2(xs[i], ys[i])) i++;
    int b = i;
    if (b <= a) continue;
    fprintf(p->o, "M%.1f %.1f", hr__plot_px(p, xs[a]), yb);
    for (int k = a; k < b; k++) fprintf(p->o, "L%.1f %.1f", hr__plot_px(p, xs[k]), hr__plot_py(p, ys[k]));
    fprintf(p->o, "L%.1f %.1fZ", hr__plot_px(p, xs[b - 1]), yb);
  }
  fputs("\"/>\n", p->o);
}

void hr__plot_hline(hr__plot *p, double y, const char *attrs, const char *label) {
  if (!isfinite(y) || y < p->y0 || y > p->y1) return;
  double py = hr__plot_py(p, y);
  fprintf(p->o, "<line %s x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", attrs ? attrs : "",
          p->L, p->W - p->R, py, py);
  if (label) {
    /* The label goes in the right margin: close the clipped group around it. */
    fprintf(p->o, "</g><text class=\"hlabel\" x=\"%.1f\" y=\"%.1f\">", p->W - p->R + 6, py + 4);
    hr__html_escape(p->o, label);
    fprintf(p->o, "</text><g clip-path=\"url(#clip%d)\">\n", p->id);
  }
}
