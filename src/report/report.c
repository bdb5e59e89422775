/* The self-contained HTML run report: two streaming passes over telemetry JSONL, then SVG plots, summary tables and embedded images. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom/report.h"
#include "headroom/telemetry.h"
#include "report/svgplot.h"

#define NST 4
static const char *const ST_KEY[NST] = {"ingest_ms", "infer_ms", "post_ms", "output_ms"};
static const char *const ST_NAME[NST] = {"ingest", "infer", "post", "output"};
static const char *const ST_COLOR[NST] = {"#9ec5ea", "#3f7fc9", "#f0a945", "#7cc48a"};

#define MAX_NAMES 16     /* distinct health states / governor actions / sizes kept by name */
#define MAX_EVENTS 300   /* governor actions and resets drawn as markers */
#define MAX_TRANS 40     /* health transitions listed */
#define MAX_SIZE_EV 64   /* processing-size changes labelled */

/* Fields whose presence is counted, to say "n/a" and list fields that never appeared. */
enum { F_T, F_LAT, F_ST0, F_ST1, F_ST2, F_ST3, F_RSS, F_HEAD, F_SAFE, F_KILL, F_GOV, F_RESET,
       F_PROC, F_RATIO, F_HEALTH, F_CONF, F_DEPTH, F_FUSED, F_DROP, F_COPY, F_COUNT };
static const char *const FIELD_NAME[F_COUNT] = {"t_ms", "latency_ms", "ingest_ms", "infer_ms",
  "post_ms", "output_ms", "rss_bytes", "headroom_bytes", "ceiling_safe_bytes", "ceiling_kill_bytes",
  "governor_action", "state_reset", "proc_w/proc_h", "ratio", "health", "confidence", "depth_dt_ms",
  "depth_fused", "dropped", "bytes_copied"};

/* One telemetry line. NaN / NULL / -1 / 0 where absent or null. Strings borrow from the cJSON tree. */
typedef struct line {
  double frame, t_ms, latency, st[NST], total, rss, headroom, safe, kill, ratio, conf, depth_dt;
  double dropped, copied;
  const char *gov, *health, *reason;
  int reset, fused;   /* -1 absent */
  int pw, ph;         /* 0 absent */
  double x;           /* plot time, ms: t_ms, or the previous x + budget when t_ms is absent */
} line;

typedef struct reader {
  FILE *fp;
  char *buf;
  size_t cap;
  int64_t lineno, bad, first_bad, blank;
  double prev_x, budget;
  cJSON *j;
} reader;

static double jnum(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jbool(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

/* Next valid line into *l: 1, or 0 at end of file. Unparsable lines are counted and skipped. */
static int reader_next(reader *r, line *l) {
  for (;;) {
    if (r->j) { cJSON_Delete(r->j); r->j = NULL; }
    ssize_t k = getline(&r->buf, &r->cap, r->fp);
    if (k < 0) return 0;
    r->lineno++;
    char *s = r->buf;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    if (!*s) { r->blank++; continue; }
    r->j = cJSON_Parse(s);
    if (!r->j || !cJSON_IsObject(r->j)) {
      r->bad++;
      if (!r->first_bad) r->first_bad = r->lineno;
      continue;
    }
    const cJSON *o = r->j;
    l->frame = jnum(o, "frame");
    l->t_ms = jnum(o, "t_ms");
    l->latency = jnum(o, "latency_ms");
    l->total = NAN;
    for (int i = 0; i < NST; i++) {
      l->st[i] = jnum(o, ST_KEY[i]);
      if (isfinite(l->st[i])) l->total = (isfinite(l->total) ? l->total : 0) + l->st[i];
    }
    l->rss = jnum(o, "rss_bytes");
    l->headroom = jnum(o, "headroom_bytes");
    l->safe = jnum(o, "ceiling_safe_bytes");
    l->kill = jnum(o, "ceiling_kill_bytes");
    l->ratio = jnum(o, "ratio");
    l->conf = jnum(o, "confidence");
    l->depth_dt = jnum(o, "depth_dt_ms");
    l->dropped = jnum(o, "dropped");
    l->copied = jnum(o, "bytes_copied");
    l->gov = jstr(o, "governor_action");
    if (l->gov && (!*l->gov || strcmp(l->gov, "none") == 0)) l->gov = NULL;
    l->health = jstr(o, "health");
    l->reason = jstr(o, "health_reason");
    l->reset = jbool(o, "state_reset");
    l->fused = jbool(o, "depth_fused");
    double pw = jnum(o, "proc_w"), ph = jnum(o, "proc_h");
    l->pw = pw >= 1 && pw < 1e6 ? (int)pw : 0;
    l->ph = ph >= 1 && ph < 1e6 ? (int)ph : 0;
    if (!l->pw || !l->ph) l->pw = l->ph = 0;
    l->x = isfinite(l->t_ms) ? l->t_ms : r->prev_x + r->budget;
    r->prev_x = l->x;
    return 1;
  }
}

static void reader_rewind(reader *r) {
  rewind(r->fp);
  r->lineno = r->bad = r->first_bad = r->blank = 0;
  r->prev_x = -r->budget;
}

/* ------------------------------------------------------------------------------------------- */

typedef struct names {
  char *name[MAX_NAMES];
  int64_t count[MAX_NAMES];
  int n;
  int64_t other;   /* samples whose name did not fit */
} names;

/* Index of s, adding it if there is room; -1 if the table is full (counted in other). */
static int names_add(names *t, const char *s, int64_t add, bool *oom) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->name[i], s) == 0) { t->count[i] += add; return i; }
  if (t->n == MAX_NAMES) { t->other += add; return -1; }
  char *d = strdup(s);
  if (!d) { *oom = true; return -1; }
  t->name[t->n] = d;
  t->count[t->n] = add;
  return t->n++;
}

static int names_find(const names *t, const char *s) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->name[i], s) == 0) return i;
  return -1;
}

static void names_free(names *t) {
  for (int i = 0; i < t->n; i++) free(t->name[i]);
  t->n = 0;
}

/* Health states: severity rank (worst wins inside a plot bucket) and colour. */
static const struct { const char *name; int rank; const char *color; } HEALTH_KNOWN[] = {
  {"healthy", 1, "#4cb27a"}, {"ok", 1, "#4cb27a"}, {"warming-up", 2, "#a9cbe8"},
  {"recalibrating", 3, "#9b8be0"}, {"degraded", 4, "#f2b33d"}, {"suspended", 5, "#8f96a3"},
  {"failed", 6, "#d64b4b"}, {"lost", 6, "#d64b4b"}};
static const char *const EXTRA_COLORS[] = {"#e07bb5", "#58b5b0", "#c9a46b", "#7d8fd1"};

static int health_rank(const char *s) {
  for (size_t i = 0; i < sizeof HEALTH_KNOWN / sizeof HEALTH_KNOWN[0]; i++)
    if (strcmp(s, HEALTH_KNOWN[i].name) == 0) return HEALTH_KNOWN[i].rank;
  return 4;
}

static const char *health_color(const char *s, int idx) {
  for (size_t i = 0; i < sizeof HEALTH_KNOWN / sizeof HEALTH_KNOWN[0]; i++)
    if (strcmp(s, HEALTH_KNOWN[i].name) == 0) return HEALTH_KNOWN[i].color;
  return EXTRA_COLORS[idx % 4];
}

static const char *gov_color(const char *a) {
  if (strcmp(a, "step_down") == 0) return "#e4572e";
  if (strcmp(a, "step_up") == 0) return "#2e9e5b";
  if (strcmp(a, "release_caches") == 0) return "#9aa3b0";
  if (strcmp(a, "suspend") == 0) return "#222222";
  if (strcmp(a, "resume") == 0) return "#2b7bd6";
  return "#a05fd0";
}

typedef struct event { double x, frame; int idx; } event;
typedef struct trans { double x, frame; int from, to; char *reason; } trans;   /* idx -1: null */
typedef struct size_ev { double x, ratio; int w, h; } size_ev;

/* Everything the first pass learns. */
typedef struct summary {
  int64_t n;
  double x_min, x_max, frame_first, frame_last;
  hr_stats *st[NST], *total, *latency, *depth;
  int64_t over_budget, lat_over_budget;
  double rss_peak, headroom_min, safe_max, kill_max, ratio_min, ratio_max;
  int64_t headroom_neg;
  names gov, health, sizes;
  int64_t health_null;
  int64_t gov_actions, resets, transitions;
  event gov_ev[MAX_EVENTS];
  int n_gov_ev;
  double reset_x[MAX_EVENTS];
  int n_reset;
  trans tr[MAX_TRANS];
  int n_tr;
  size_ev sz[MAX_SIZE_EV];
  int n_sz;
  double dropped_first, dropped_last;
  double copied_sum;
  int64_t fused, present[F_COUNT];
  bool oom;
} summary;

static void summary_free(summary *s) {
  for (int i = 0; i < NST; i++) hr_stats_destroy(s->st[i]);
  hr_stats_destroy(s->total);
  hr_stats_destroy(s->latency);
  hr_stats_destroy(s->depth);
  names_free(&s->gov);
  names_free(&s->health);
  names_free(&s->sizes);
  for (int i = 0; i < s->n_tr; i++) free(s->tr[i].reason);
}

static void fmax_nan(double *acc, double v) { if (isfinite(v) && (!isfinite(*acc) || v > *acc)) *acc = v; }
static void fmin_nan(double *acc, double v) { if (isfinite(v) && (!isfinite(*acc) || v < *acc)) *acc = v; }

static void scan(reader *r, summary *s, double budget) {
  line l;
  int prev_h = -3;            /* -3: no line yet, -2: null, -1: name table full, else index */
  int prev_w = 0, prev_ph = 0;
  while (reader_next(r, &l)) {
    if (s->n == 0) { s->x_min = s->x_max = l.x; s->frame_first = l.frame; }
    s->n++;
    fmin_nan(&s->x_min, l.x);
    fmax_nan(&s->x_max, l.x);
    s->frame_last = l.frame;
    s->present[F_T] += isfinite(l.t_ms);
    s->present[F_LAT] += isfinite(l.latency);
    for (int i = 0; i < NST; i++) {
      s->present[F_ST0 + i] += isfinite(l.st[i]);
      hr_stats_add(s->st[i], l.st[i]);
    }
    if (isfinite(l.total)) {
      hr_stats_add(s->total, l.total);
      s->over_budget += l.total > budget;
    }
    if (isfinite(l.latency)) {
      hr_stats_add(s->latency, l.latency);
      s->lat_over_budget += l.latency > budget;
    }
    s->present[F_RSS] += isfinite(l.rss);
    fmax_nan(&s->rss_peak, l.rss);
    s->present[F_HEAD] += isfinite(l.headroom);
    fmin_nan(&s->headroom_min, l.headroom);
    s->headroom_neg += isfinite(l.headroom) && l.headroom < 0;
    s->present[F_SAFE] += isfinite(l.safe);
    fmax_nan(&s->safe_max, l.safe);
    s->present[F_KILL] += isfinite(l.kill);
    fmax_nan(&s->kill_max, l.kill);
    if (l.gov) {
      s->present[F_GOV]++;
      s->gov_actions++;
      int gi = names_add(&s->gov, l.gov, 1, &s->oom);
      if (s->n_gov_ev < MAX_EVENTS && gi >= 0)
        s->gov_ev[s->n_gov_ev++] = (event){l.x, l.frame, gi};
    } else if (cJSON_GetObjectItemCaseSensitive(r->j, "governor_action")) {
      s->present[F_GOV]++;
    }
    if (l.reset >= 0) s->present[F_RESET]++;
    if (l.reset == 1) {
      s->resets++;
      if (s->n_reset < MAX_EVENTS) s->reset_x[s->n_reset++] = l.x;
    }
    if (l.pw) {
      s->present[F_PROC]++;
      if (l.pw != prev_w || l.ph != prev_ph) {
        if (s->n_sz < MAX_SIZE_EV) s->sz[s->n_sz++] = (size_ev){l.x, l.ratio, l.pw, l.ph};
        prev_w = l.pw;
        prev_ph = l.ph;
      }
      char nm[32];
      snprintf(nm, sizeof nm, "%dx%d", l.pw, l.ph);
      names_add(&s->sizes, nm, 1, &s->oom);
    }
    s->present[F_RATIO] += isfinite(l.ratio);
    fmin_nan(&s->ratio_min, l.ratio);
    fmax_nan(&s->ratio_max, l.ratio);
    int h = -2;
    if (l.health) {
      s->present[F_HEALTH]++;
      h = names_add(&s->health, l.health, 1, &s->oom);
    } else {
      s->health_null++;
    }
    if (prev_h != -3 && h != prev_h) {
      s->transitions++;
      if (s->n_tr < MAX_TRANS) {
        trans *t = &s->tr[s->n_tr++];
        *t = (trans){l.x, l.frame, prev_h, h, l.reason ? strdup(l.reason) : NULL};
      }
    }
    prev_h = h;
    s->present[F_CONF] += isfinite(l.conf);
    s->present[F_DEPTH] += isfinite(l.depth_dt);
    hr_stats_add(s->depth, l.depth_dt);
    if (l.fused >= 0) s->present[F_FUSED]++;
    s->fused += l.fused == 1;
    if (isfinite(l.dropped)) {
      if (!s->present[F_DROP]) s->dropped_first = l.dropped;
      s->present[F_DROP]++;
      fmax_nan(&s->dropped_last, l.dropped);
    }
    if (isfinite(l.copied)) { s->present[F_COPY]++; s->copied_sum += l.copied; }
  }
}

/* ------------------------------------------------------------------------------------------- */

/* What the second pass accumulates per time bucket. */
typedef struct bucket {
  int64_t n, over;
  double st_sum[NST];
  int64_t st_n[NST];
  double tot_min, tot_max, lat_sum, lat_max;
  int64_t lat_n;
  double rss_min, rss_max, hr_min, hr_max, ratio_min, ratio_max, ph_min, ph_max;
  int health;          /* worst state's index, -2 null, -4 nothing */
  int health_rank;
  double conf_min, conf_max, conf_sum;
  int64_t conf_n;
  double drop_max, dt_min, dt_max, dt_sum;
  int64_t dt_n;
  double x_first, x_last;   /* earliest and latest frame time in the bucket */
} bucket;

static void bucket_init(bucket *b) {
  memset(b, 0, sizeof *b);
  b->tot_min = b->tot_max = b->lat_max = NAN;
  b->rss_min = b->rss_max = b->hr_min = b->hr_max = NAN;
  b->ratio_min = b->ratio_max = b->ph_min = b->ph_max = NAN;
  b->conf_min = b->conf_max = b->drop_max = b->dt_min = b->dt_max = NAN;
  b->x_first = b->x_last = NAN;
  b->health = -4;
  b->health_rank = -1;
}

static void fill_buckets(reader *r, const summary *s, bucket *bk, int nb, double budget) {
  line l;
  double span = s->x_max - s->x_min;
  while (reader_next(r, &l)) {
    int i = span > 0 ? (int)((l.x - s->x_min) / span * nb) : 0;
    if (i < 0) i = 0;
    if (i >= nb) i = nb - 1;
    bucket *b = &bk[i];
    b->n++;
    fmin_nan(&b->x_first, l.x);
    fmax_nan(&b->x_last, l.x);
    for (int k = 0; k < NST; k++)
      if (isfinite(l.st[k])) { b->st_sum[k] += l.st[k]; b->st_n[k]++; }
    fmin_nan(&b->tot_min, l.total);
    fmax_nan(&b->tot_max, l.total);
    b->over += isfinite(l.total) && l.total > budget;
    if (isfinite(l.latency)) { b->lat_sum += l.latency; b->lat_n++; fmax_nan(&b->lat_max, l.latency); }
    fmin_nan(&b->rss_min, l.rss);
    fmax_nan(&b->rss_max, l.rss);
    fmin_nan(&b->hr_min, l.headroom);
    fmax_nan(&b->hr_max, l.headroom);
    fmin_nan(&b->ratio_min, l.ratio);
    fmax_nan(&b->ratio_max, l.ratio);
    if (l.ph) { fmin_nan(&b->ph_min, l.ph); fmax_nan(&b->ph_max, l.ph); }
    int h = -2, rank = 0;
    if (l.health) {
      h = names_find(&s->health, l.health);
      rank = health_rank(l.health);
      if (h < 0) h = -1;
    }
    if (rank > b->health_rank) { b->health_rank = rank; b->health = h; }
    if (isfinite(l.conf)) {
      fmin_nan(&b->conf_min, l.conf);
      fmax_nan(&b->conf_max, l.conf);
      b->conf_sum += l.conf;
      b->conf_n++;
    }
    fmax_nan(&b->drop_max, l.dropped);
    if (isfinite(l.depth_dt)) {
      fmin_nan(&b->dt_min, l.depth_dt);
      fmax_nan(&b->dt_max, l.depth_dt);
      b->dt_sum += l.depth_dt;
      b->dt_n++;
    }
  }
}

/* ------------------------------------------------------------------------------------------- */
/* Formatting helpers. */

static const char *fmt_ms(char *b, size_t n, double v) {
  if (!isfinite(v)) snprintf(b, n, "n/a");
  else if (v < 10) snprintf(b, n, "%.2f", v);
  else if (v < 1000) snprintf(b, n, "%.1f", v);
  else snprintf(b, n, "%.0f", v);
  return b;
}

static const char *fmt_mib(char *b, size_t n, double bytes) {
  if (!isfinite(bytes)) snprintf(b, n, "n/a");
  else if (fabs(bytes) >= 10.0 * 1073741824.0) snprintf(b, n, "%.1f GiB", bytes / 1073741824.0);
  else snprintf(b, n, "%.1f MiB", bytes / 1048576.0);
  return b;
}

static const char *fmt_count(char *b, size_t n, double v) {
  if (!isfinite(v)) { snprintf(b, n, "n/a"); return b; }
  char t[32];
  long long x = llround(fabs(v));
  int k = snprintf(t, sizeof t, "%lld", x);
  size_t o = 0;
  if (v < 0 && o + 1 < n) b[o++] = '-';
  for (int i = 0; i < k && o + 2 < n; i++) {
    b[o++] = t[i];
    if ((k - 1 - i) % 3 == 0 && i != k - 1) b[o++] = ',';
  }
  b[o] = 0;
  return b;
}

/* Clock time of an event for the tables: "m:ss.s" (or "h:mm:ss.s"). */
static const char *fmt_clock(char *b, size_t n, double ms) {
  if (!isfinite(ms)) { snprintf(b, n, "n/a"); return b; }
  long ds = lround(fmax(ms, 0) / 100.0);   /* tenths of a second */
  long sec = ds / 10, m = sec / 60;
  if (m >= 60) snprintf(b, n, "%ld:%02ld:%02ld.%ld", m / 60, m % 60, sec % 60, ds % 10);
  else snprintf(b, n, "%ld:%02ld.%ld", m, sec % 60, ds % 10);
  return b;
}

static const char *fmt_pct(char *b, size_t n, double num, double den) {
  if (!(den > 0)) snprintf(b, n, "n/a");
  else if (num > 0 && num / den < 0.001) snprintf(b, n, "<0.1%%");
  else snprintf(b, n, "%.1f%%", 100.0 * num / den);
  return b;
}

/* ------------------------------------------------------------------------------------------- */
/* Plots. */

typedef struct ctx {
  FILE *o;
  const summary *s;
  const bucket *bk;
  int nb;
  double *xs, *a, *b, *c;   /* nb each: bucket centres and scratch series */
  double budget, safe, kill;
  int plot_id;
} ctx;

static void legend_begin(FILE *o) { fputs("<div class=\"legend\">", o); }
static void legend_end(FILE *o) { fputs("</div>\n", o); }
static void legend_box(FILE *o, const char *color, const char *label) {
  fprintf(o, "<span><i style=\"background:%s\"></i>", color);
  hr__html_escape(o, label);
  fputs("</span>", o);
}
static void legend_line(FILE *o, const char *color, bool dashed, const char *label) {
  fprintf(o, "<span><i class=\"ln%s\" style=\"border-color:%s\"></i>", dashed ? " dash" : "", color);
  hr__html_escape(o, label);
  fputs("</span>", o);
}

static void card_begin(FILE *o, const char *title, const char *note) {
  fputs("<section class=\"card\"><h2>", o);
  hr__html_escape(o, title);
  fputs("</h2>", o);
  if (note) { fputs("<p class=\"note\">", o); hr__html_escape(o, note); fputs("</p>", o); }
  fputc('\n', o);
}

static void gov_markers(ctx *c, hr__plot *p) {
  const summary *s = c->s;
  for (int i = 0; i < s->n_gov_ev; i++) {
    const event *e = &s->gov_ev[i];
    double x = hr__plot_px(p, e->x);
    char t[32];
    hr__fmt_time(t, sizeof t, e->x, s->x_max - s->x_min);
    fprintf(c->o, "<line class=\"gev\" stroke=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\">"
                  "<title>%s, frame %.0f: ", gov_color(s->gov.name[e->idx]), x, x, p->T, p->H - p->B, t,
            e->frame);
    hr__html_escape(c->o, s->gov.name[e->idx]);
    fputs("</title></line>\n", c->o);
  }
}

static void gov_legend(ctx *c) {
  for (int i = 0; i < c->s->gov.n; i++) {
    char lab[96];
    snprintf(lab, sizeof lab, "governor: %s", c->s->gov.name[i]);
    legend_line(c->o, gov_color(c->s->gov.name[i]), true, lab);
  }
}

static double nice_top(double v) {
  if (!(v > 0)) return 1;
  double st = hr__nice_step(v, 5);
  return ceil(v / st - 1e-9) * st;
}

static void plot_frame_time(ctx *c) {
  const summary *s = c->s;
  FILE *o = c->o;
  int nb = c->nb;
  double p99 = hr_stats_quantile(s->total, 0.99), mx = hr_stats_max(s->total);
  double lat_p99 = hr_stats_quantile(s->latency, 0.99);
  if (!isfinite(p99)) { p99 = lat_p99; mx = hr_stats_max(s->latency); }
  double top = c->budget * 1.25;
  if (isfinite(mx)) {
    double cap = fmax(c->budget * 2, p99 * 1.5);
    top = fmax(top, fmin(mx * 1.05, cap));
  }
  top = nice_top(top);
  char note[200];
  snprintf(note, sizeof note, "Mean time per stage in each time bucket (stacked), the slowest frame of the "
           "bucket (line) and the %.2f ms budget.%s", c->budget,
           isfinite(mx) && mx > top ? " Peaks above the top of the plot are clipped (see the table)." : "");
  card_begin(o, "Frame time per stage", note);
  hr__plot p;
  hr__plot_begin(&p, o, c->plot_id++, 270, s->x_min, s->x_max, 0, top, "ms");
  /* Over-budget rug along the top: opacity = share of frames over budget in the bucket. */
  double bw = (p.W - p.L - p.R) / nb;
  for (int i = 0; i < nb; i++) {
    const bucket *b = &c->bk[i];
    if (!b->over) continue;
    double f = (double)b->over / (double)b->n;
    fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"6\" fill=\"#d64b4b\" "
               "fill-opacity=\"%.2f\"/>", hr__plot_px(&p, c->xs[i]) - bw / 2, p.T, fmax(bw, 1.0),
            0.25 + 0.75 * f);
  }
  fputc('\n', o);
  /* Stacked means, drawn from the full stack down so each area is one outline. */
  for (int top_st = NST - 1; top_st >= 0; top_st--) {
    bool any = false;
    for (int i = 0; i < nb; i++) {
      const bucket *b = &c->bk[i];
      if (!b->n) { c->a[i] = NAN; continue; }
      double sum = 0;
      bool has = false;
      for (int k = 0; k <= top_st; k++)
        if (b->st_n[k]) { sum += b->st_sum[k] / (double)b->st_n[k]; has = true; }
      c->a[i] = has ? sum : NAN;
      any |= has && b->st_n[top_st] > 0;
    }
    if (!any) continue;
    char attr[64];
    snprintf(attr, sizeof attr, "fill=\"%s\" stroke=\"none\"", ST_COLOR[top_st]);
    hr__plot_area(&p, c->xs, c->a, nb, 0, attr);
  }
  for (int i = 0; i < nb; i++) c->a[i] = c->bk[i].tot_max;
  hr__plot_line(&p, c->xs, c->a, nb, "stroke=\"#1d2433\" stroke-width=\"1\" stroke-opacity=\"0.75\"");
  bool has_lat = s->present[F_LAT] > 0;
  if (has_lat) {
    for (int i = 0; i < nb; i++) c->a[i] = c->bk[i].lat_n ? c->bk[i].lat_sum / (double)c->bk[i].lat_n : NAN;
    hr__plot_line(&p, c->xs, c->a, nb, "stroke=\"#7a3db8\" stroke-width=\"1\" stroke-opacity=\"0.8\"");
  }
  gov_markers(c, &p);
  for (int i = 0; i < s->n_reset; i++) {
    double x = hr__plot_px(&p, s->reset_x[i]), y = p.H - p.B;
    fprintf(o, "<path class=\"reset\" d=\"M%.1f %.1fl-4 -7h8z\"><title>state reset</title></path>", x, y);
  }
  char lab[64];
  snprintf(lab, sizeof lab, "budget %.1f", c->budget);
  hr__plot_hline(&p, c->budget, "stroke=\"#d64b4b\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"", lab);
  hr__plot_end(&p);
  legend_begin(o);
  for (int k = 0; k < NST; k++)
    if (s->present[F_ST0 + k]) legend_box(o, ST_COLOR[k], ST_NAME[k]);
  legend_line(o, "#1d2433", false, "slowest frame (stages)");
  if (has_lat) legend_line(o, "#7a3db8", false, "latency capture\xe2\x86\x92output (mean)");
  legend_line(o, "#d64b4b", true, "budget");
  legend_box(o, "#d64b4b", "frames over budget");
  if (s->n_reset) fputs("<span><i class=\"tri\"></i>state reset</span>", o);
  gov_legend(c);
  legend_end(o);
  fputs("</section>\n", o);
}

static void plot_throughput(ctx *c) {
  const summary *s = c->s;
  FILE *o = c->o;
  int nb = c->nb;
  double span = s->x_max - s->x_min;
  if (!(span > 0) || s->n < 16) return;
  /* Merge buckets so each group holds about 24 frames or more; the rate of a group is its frame
   * count over the time its frames span (plus one mean frame interval), which does not alias
   * the way counting frames per fixed-width bucket does. */
  int k = (int)ceil(24.0 * nb / (double)s->n);
  if (k < 1) k = 1;
  int ng = (nb + k - 1) / k;
  double fmax_v = 0, prev_drop = isfinite(s->dropped_first) ? s->dropped_first : NAN;
  double prev_last = NAN;
  bool any_drop = false;
  for (int g = 0; g < ng; g++) {
    int64_t n = 0;
    double first = NAN, last = NAN, dmax = NAN;
    for (int i = g * k; i < (g + 1) * k && i < nb; i++) {
      n += c->bk[i].n;
      fmin_nan(&first, c->bk[i].x_first);
      fmax_nan(&last, c->bk[i].x_last);
      fmax_nan(&dmax, c->bk[i].drop_max);
    }
    c->a[g] = isfinite(first) ? (first + last) / 2 : NAN;
    /* Time covered: from the previous group's last frame (or n-1 intervals for the first). */
    double dur_ms = isfinite(prev_last) && isfinite(last) ? last - prev_last
                    : n > 1 ? (last - first) * n / (double)(n - 1) : NAN;
    if (isfinite(last)) prev_last = last;
    c->b[g] = n > 0 && dur_ms > 0 ? n / (dur_ms / 1000.0) : NAN;
    if (isfinite(dmax) && isfinite(prev_drop) && dur_ms > 0) {
      c->c[g] = fmax(0, dmax - prev_drop) / (dur_ms / 1000.0);
      any_drop |= c->c[g] > 0;
    } else {
      c->c[g] = NAN;
    }
    if (isfinite(dmax)) prev_drop = dmax;
    if (isfinite(c->b[g])) fmax_v = fmax(fmax_v, c->b[g]);
    if (isfinite(c->c[g])) fmax_v = fmax(fmax_v, c->c[g]);
  }
  double target = 1000.0 / c->budget;
  double top = nice_top(fmax(fmax_v, target) * 1.15);
  card_begin(o, "Delivered frame rate and drops",
             "Frames delivered per second and frames dropped per second (flow limiter and governor), "
             "against the rate the budget allows.");
  hr__plot p;
  hr__plot_begin(&p, o, c->plot_id++, 170, s->x_min, s->x_max, 0, top, "frames/s");
  if (any_drop) {
    double gw = (p.W - p.L - p.R) / ng;
    for (int g = 0; g < ng; g++) {
      if (!(c->c[g] > 0)) continue;
      double y = hr__plot_py(&p, c->c[g]);
      fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#e4572e\" "
                 "fill-opacity=\"0.8\"/>", hr__plot_px(&p, c->a[g]) - gw / 2, y, fmax(gw - 0.5, 0.8),
              p.H - p.B - y);
    }
    fputc('\n', o);
  }
  hr__plot_line(&p, c->a, c->b, ng, "stroke=\"#3f7fc9\" stroke-width=\"1.6\"");
  char lab[64];
  snprintf(lab, sizeof lab, "%.0f fps", target);
  hr__plot_hline(&p, target, "stroke=\"#4cb27a\" stroke-width=\"1.2\" stroke-dasharray=\"6 3\"", lab);
  hr__plot_end(&p);
  legend_begin(o);
  legend_line(o, "#3f7fc9", false, "delivered fps");
  legend_box(o, "#e4572e", "dropped / s");
  legend_line(o, "#4cb27a", true, "budget rate");
  legend_end(o);
  fputs("</section>\n", o);
}

static void plot_resolution(ctx *c) {
  const summary *s = c->s;
  FILE *o = c->o;
  int nb = c->nb;
  bool use_ratio = s->present[F_RATIO] > 0;
  if (!use_ratio && !s->present[F_PROC]) return;
  double top;
  if (use_ratio) {
    for (int i = 0; i < nb; i++) { c->a[i] = c->bk[i].ratio_min; c->b[i] = c->bk[i].ratio_max; }
    top = s->ratio_max > 0 ? nice_top(s->ratio_max * 1.25) : 1;
    if (top > 1 && s->ratio_max <= 1) top = 1;
  } else {
    double mx = 0;
    for (int i = 0; i < nb; i++) {
      c->a[i] = c->bk[i].ph_min;
      c->b[i] = c->bk[i].ph_max;
      fmax_nan(&mx, c->b[i]);
    }
    top = nice_top(mx * 1.25);
  }
  card_begin(o, "Processing resolution",
             use_ratio ? "Downsample ratio in effect (band: min\xe2\x80\x93max in the bucket), labelled "
                         "with the processing size at each change; dashed lines: governor actions."
                       : "Processing height in pixels, labelled with the size at each change.");
  hr__plot p;
  hr__plot_begin(&p, o, c->plot_id++, 160, s->x_min, s->x_max, 0, top, use_ratio ? "ratio" : "px");
  gov_markers(c, &p);
  hr__plot_band(&p, c->xs, c->a, c->b, nb, "fill=\"#3f7fc9\" fill-opacity=\"0.25\" stroke=\"none\"");
  for (int i = 0; i < nb; i++) c->a[i] = isfinite(c->a[i]) ? (c->a[i] + c->b[i]) / 2 : NAN;
  hr__plot_steps(&p, c->xs, c->a, nb, s->x_max, "stroke=\"#3f7fc9\" stroke-width=\"1.8\"");
  fputs("</g>", o);
  double last_x = -1e9;
  for (int i = 0; i < s->n_sz; i++) {
    const size_ev *e = &s->sz[i];
    double x = hr__plot_px(&p, e->x);
    if (x - last_x < 70) continue;
    double v = use_ratio ? e->ratio : e->h;
    if (!isfinite(v)) continue;
    double y = hr__plot_py(&p, v) - 6;
    if (y < p.T + 10) y = p.T + 10;
    fprintf(o, "<text class=\"vlabel\" x=\"%.1f\" y=\"%.1f\">%dx%d</text>", x + 3, y, e->w, e->h);
    last_x = x;
  }
  fprintf(o, "<g>\n");
  hr__plot_end(&p);
  if (s->gov.n) { legend_begin(o); gov_legend(c); legend_end(o); }
  fputs("</section>\n", o);
}

static void plot_memory(ctx *c) {
  const summary *s = c->s;
  FILE *o = c->o;
  int nb = c->nb;
  if (!s->present[F_RSS] && !s->present[F_HEAD]) return;
  const double MiB = 1048576.0;
  double mx = 0;
  fmax_nan(&mx, s->rss_peak);
  fmax_nan(&mx, c->kill);
  fmax_nan(&mx, c->safe);
  for (int i = 0; i < nb; i++) fmax_nan(&mx, c->bk[i].hr_max);
  double lo = 0;
  if (isfinite(s->headroom_min) && s->headroom_min < 0) lo = -nice_top(-s->headroom_min / MiB * 1.2);
  double top = nice_top(mx / MiB * 1.12);
  card_begin(o, "Memory", "Resident set size (band: min\xe2\x80\x93max in the bucket) and the governor's "
             "headroom to the kill ceiling, against the safe and kill ceilings.");
  hr__plot p;
  hr__plot_begin(&p, o, c->plot_id++, 230, s->x_min, s->x_max, lo, top, "MiB");
  gov_markers(c, &p);
  if (lo < 0) hr__plot_hline(&p, 0, "stroke=\"#98a2b3\" stroke-width=\"1\"", NULL);
  for (int i = 0; i < nb; i++) { c->a[i] = c->bk[i].rss_min / MiB; c->b[i] = c->bk[i].rss_max / MiB; }
  hr__plot_band(&p, c->xs, c->a, c->b, nb, "fill=\"#3f7fc9\" fill-opacity=\"0.3\" stroke=\"none\"");
  hr__plot_line(&p, c->xs, c->b, nb, "stroke=\"#3f7fc9\" stroke-width=\"1.6\"");
  for (int i = 0; i < nb; i++) c->a[i] = c->bk[i].hr_min / MiB;
  hr__plot_line(&p, c->xs, c->a, nb, "stroke=\"#2e9e5b\" stroke-width=\"1.6\"");
  char lab[64], v[32];
  if (isfinite(c->safe)) {
    snprintf(lab, sizeof lab, "safe %s", fmt_mib(v, sizeof v, c->safe));
    hr__plot_hline(&p, c->safe / MiB, "stroke=\"#f0a945\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"", lab);
  }
  if (isfinite(c->kill)) {
    snprintf(lab, sizeof lab, "kill %s", fmt_mib(v, sizeof v, c->kill));
    hr__plot_hline(&p, c->kill / MiB, "stroke=\"#d64b4b\" stroke-width=\"1.8\"", lab);
  }
  hr__plot_end(&p);
  legend_begin(o);
  if (s->present[F_RSS]) legend_line(o, "#3f7fc9", false, "RSS (max)");
  if (s->present[F_HEAD]) legend_line(o, "#2e9e5b", false, "headroom (min)");
  if (isfinite(c->safe)) legend_line(o, "#f0a945", true, "safe ceiling");
  if (isfinite(c->kill)) legend_line(o, "#d64b4b", false, "kill ceiling");
  gov_legend(c);
  legend_end(o);
  fputs("</section>\n", o);
}

static void plot_health(ctx *c) {
  const summary *s = c->s;
  FILE *o = c->o;
  int nb = c->nb;
  if (!s->present[F_HEALTH] && !s->present[F_CONF]) return;
  card_begin(o, "Health", "The worst health state in each time bucket (colour) and the mean "
             "confidence (line, 0\xe2\x80\x93" "1). Hover a band for the state.");
  hr__plot p;
  hr__plot_begin(&p, o, c->plot_id++, 120, s->x_min, s->x_max, 0, 1, "confidence");
  double span = s->x_max - s->x_min, bw = span > 0 ? span / nb : 1;
  int i = 0;
  while (i < nb) {
    if (c->bk[i].n == 0 || c->bk[i].health == -4) { i++; continue; }
    int h = c->bk[i].health, j = i;
    while (j < nb && c->bk[j].n && c->bk[j].health == h) j++;
    const char *color = h >= 0 ? health_color(s->health.name[h], h) : h == -2 ? "#e4e7ec" : "#c0c4cc";
    double x0 = hr__plot_px(&p, s->x_min + i * bw), x1 = hr__plot_px(&p, s->x_min + j * bw);
    fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
            x0, p.T, fmax(x1 - x0, 0.8), p.H - p.T - p.B, color);
    hr__html_escape(o, h >= 0 ? s->health.name[h] : h == -2 ? "no health data" : "other");
    fputs("</title></rect>", o);
    i = j;
  }
  fputc('\n', o);
  for (int k = 0; k < s->n_reset; k++) {
    double x = hr__plot_px(&p, s->reset_x[k]);
    fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#5b3fa8\" stroke-width=\"1\">"
               "<title>state reset</title></line>", x, x, p.T, p.H - p.B);
  }
  if (s->present[F_CONF]) {
    for (int k = 0; k < nb; k++) c->a[k] = c->bk[k].conf_n ? c->bk[k].conf_sum / (double)c->bk[k].conf_n : NAN;
    hr__plot_line(&p, c->xs, c->a, nb, "stroke=\"#1d2433\" stroke-width=\"1.4\"");
  }
  hr__plot_end(&p);
  legend_begin(o);
  for (int k = 0; k < s->health.n; k++) legend_box(o, health_color(s->health.name[k], k), s->health.name[k]);
  if (s->health_null) legend_box(o, "#e4e7ec", "no data");
  if (s->present[F_CONF]) legend_line(o, "#1d2433", false, "confidence (mean)");
  if (s->n_reset) legend_line(o, "#5b3fa8", false, "state reset");
  legend_end(o);
  fputs("</section>\n", o);
}

static void plot_depth(ctx *c) {
  const summary *s = c->s;
  FILE *o = c->o;
  int nb = c->nb;
  if (!s->present[F_DEPTH]) return;
  char note[200], pct[16];
  snprintf(note, sizeof note, "Time between the fused depth frame and the colour frame (band: min\xe2\x80\x93max; "
           "line: mean). Depth fused into %s of outputs.", fmt_pct(pct, sizeof pct, (double)s->fused, (double)s->n));
  card_begin(o, "Depth synchronisation", note);
  double mx = hr_stats_max(s->depth);
  hr__plot p;
  hr__plot_begin(&p, o, c->plot_id++, 150, s->x_min, s->x_max, 0, nice_top(mx * 1.15), "|\xce\x94t| ms");
  for (int i = 0; i < nb; i++) { c->a[i] = c->bk[i].dt_min; c->b[i] = c->bk[i].dt_max; }
  hr__plot_band(&p, c->xs, c->a, c->b, nb, "fill=\"#58b5b0\" fill-opacity=\"0.3\" stroke=\"none\"");
  for (int i = 0; i < nb; i++) c->a[i] = c->bk[i].dt_n ? c->bk[i].dt_sum / (double)c->bk[i].dt_n : NAN;
  hr__plot_line(&p, c->xs, c->a, nb, "stroke=\"#2f8f8a\" stroke-width=\"1.5\"");
  hr__plot_end(&p);
  fputs("</section>\n", o);
}

/* ------------------------------------------------------------------------------------------- */
/* Tables. */

static void stage_row(FILE *o, const char *name, const hr_stats *st, double budget, bool judge) {
  char b[32];
  fputs("<tr><td>", o);
  hr__html_escape(o, name);
  fprintf(o, "</td><td>%s</td>", fmt_count(b, sizeof b, (double)hr_stats_count(st)));
  double v[5] = {hr_stats_mean(st), hr_stats_quantile(st, 0.5), hr_stats_quantile(st, 0.95),
                 hr_stats_quantile(st, 0.99), hr_stats_max(st)};
  for (int i = 0; i < 5; i++)
    fprintf(o, "<td%s>%s</td>", judge && v[i] > budget ? " class=\"bad\"" : "", fmt_ms(b, sizeof b, v[i]));
  fputs("</tr>\n", o);
}

static void kv(FILE *o, const char *k, const char *v, bool bad) {
  fprintf(o, "<tr><td>%s</td><td%s>", k, bad ? " class=\"bad\"" : "");
  hr__html_escape(o, v);
  fputs("</td></tr>\n", o);
}

static void kpi(FILE *o, const char *value, const char *label, int verdict) {
  fprintf(o, "<div class=\"kpi%s\"><b>", verdict > 0 ? " good" : verdict < 0 ? " bad" : "");
  hr__html_escape(o, value);
  fputs("</b><span>", o);
  hr__html_escape(o, label);
  fputs("</span></div>\n", o);
}

static const char *name_or(const names *t, int idx, const char *dflt) {
  return idx >= 0 ? t->name[idx] : dflt;
}

/* ------------------------------------------------------------------------------------------- */
/* Images. */

static void write_image(FILE *o, const hr_report_image *im) {
  static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const char *path = im->path ? im->path : "";
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *cap = im->caption ? im->caption : base;
  fputs("<figure>", o);
  FILE *fp = *path ? fopen(path, "rb") : NULL;
  unsigned char head[4] = {0};
  size_t hn = fp ? fread(head, 1, 4, fp) : 0;
  const char *mime = NULL;
  if (hn == 4 && head[0] == 0x89 && head[1] == 'P' && head[2] == 'N' && head[3] == 'G') mime = "image/png";
  else if (hn >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) mime = "image/jpeg";
  if (!mime) {
    fputs("<div class=\"missing\">image not available: ", o);
    hr__html_escape(o, path);
    fputs(fp ? " (not a PNG or JPEG file)" : " (cannot be read)", o);
    fputs("</div>", o);
  } else {
    rewind(fp);
    fprintf(o, "<img alt=\"");
    hr__html_escape(o, cap);
    fprintf(o, "\" src=\"data:%s;base64,", mime);
    unsigned char in[3 * 4096];
    char out[4 * 4096];
    size_t k;
    while ((k = fread(in, 1, sizeof in, fp)) > 0) {
      size_t w = 0;
      for (size_t i = 0; i < k; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < k ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < k ? in[i + 2] : 0);
        out[w++] = tbl[v >> 18 & 63];
        out[w++] = tbl[v >> 12 & 63];
        out[w++] = i + 1 < k ? tbl[v >> 6 & 63] : '=';
        out[w++] = i + 2 < k ? tbl[v & 63] : '=';
      }
      fwrite(out, 1, w, o);
      if (k < sizeof in) break;   /* a short read is the end (or an error): padding was written */
    }
    fputs("\"/>", o);
  }
  if (fp) fclose(fp);
  fputs("<figcaption>", o);
  hr__html_escape(o, cap);
  fputs("</figcaption></figure>\n", o);
}

/* ------------------------------------------------------------------------------------------- */

static const char CSS[] =
  ":root{--fg:#1d2433;--muted:#667085;--line:#e4e7ec;--bg:#f4f5f7}\n"
  "*{box-sizing:border-box}\n"
  "body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,'Segoe UI',"
  "Roboto,'DejaVu Sans',Arial,sans-serif}\n"
  "main{max-width:1220px;margin:0 auto;padding:22px 24px 40px}\n"
  "h1{font-size:22px;margin:0 0 2px}h2{font-size:15px;margin:0 0 2px}\n"
  ".sub{color:var(--muted);margin:0 0 14px;font-size:13px}\n"
  ".card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 16px 10px;margin:0 0 12px}\n"
  ".kpis{display:grid;grid-template-columns:repeat(4,1fr);gap:10px;margin:0 0 12px}\n"
  ".kpi{background:#fff;border:1px solid var(--line);border-radius:8px;padding:9px 14px}\n"
  ".kpi b{display:block;font-size:21px;font-weight:650}.kpi span{color:var(--muted);font-size:12px}\n"
  ".kpi.bad{border-left:4px solid #d64b4b}.kpi.bad b{color:#b93333}\n"
  ".kpi.good{border-left:4px solid #4cb27a}\n"
  "svg.plot{width:100%;height:auto;display:block;margin-top:4px}\n"
  "svg .bg{fill:#fcfcfd}svg .frame{fill:none;stroke:#cfd4dc}svg .grid{stroke:#edf0f3;stroke-width:1}\n"
  "svg text{font-family:inherit}svg .tick{font-size:11px;fill:#667085}\n"
  "svg .ytitle,svg .hlabel{font-size:11px;fill:#475467}svg .vlabel{font-size:11px;fill:#1d4f8f}\n"
  "svg .gev{stroke-width:1.3;stroke-dasharray:3 3;stroke-opacity:.85}svg .reset{fill:#5b3fa8}\n"
  ".legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;color:#475467;margin:4px 0 0 64px}\n"
  ".legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-2px}\n"
  ".legend i.ln{height:0;width:18px;border-top:2px solid;border-radius:0;vertical-align:3px}\n"
  ".legend i.dash{border-top-style:dashed}\n"
  ".legend i.tri{width:0;height:0;border:5px solid transparent;border-bottom:8px solid #5b3fa8;border-top:0;"
  "border-radius:0;vertical-align:0}\n"
  "table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}\n"
  "th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}\n"
  "th:first-child,td:first-child{text-align:left}th{color:var(--muted);font-weight:600}\n"
  "td.bad{color:#b93333;font-weight:600}th.l,td.l{text-align:left}\n"
  ".cols{display:grid;grid-template-columns:1fr 1fr;gap:12px;margin:0 0 12px}.cols .card{margin:0}\n"
  ".samples{display:grid;grid-template-columns:repeat(4,1fr);gap:12px 10px}\n"
  "figure{margin:0}figure img{width:100%;display:block;border-radius:4px;border:1px solid var(--line);"
  "background:#eee}figcaption{font-size:12px;color:var(--muted);margin-top:3px}\n"
  ".missing{padding:30px 10px;background:#f9fafb;border:1px dashed #cfd4dc;color:var(--muted);font-size:12px}\n"
  ".note{color:var(--muted);font-size:12px;margin:0 0 4px}\n"
  ".warn{background:#fff8e8;border-color:#f2d39b}\n"
  ".sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}\n"
  "footer{color:var(--muted);font-size:12px;margin-top:16px}\n";

static void set_err(const hr_report_opts *o, const char *fmt, ...) {
  if (!o || !o->err || !o->err_len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->err, o->err_len, fmt, ap);
  va_end(ap);
}

void hr_report_opts_default(hr_report_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->title = "headroom run report";
  o->budget_ms = 1000.0 / 60.0;
  o->max_points = 480;
}

static void write_html(FILE *o, const char *src, const hr_report_opts *op, summary *s, ctx *c,
                       int64_t bad, int64_t first_bad) {
  char b1[48], b2[48], b3[48], t[48];
  double span = s->x_max - s->x_min;
  double dur_s = span / 1000.0;
  double fps = dur_s > 0 ? (double)(s->n - 1) / dur_s : NAN;
  double target = 1000.0 / c->budget;
  double drops = isfinite(s->dropped_last) ? s->dropped_last : NAN;

  fputs("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>", o);
  hr__html_escape(o, op->title);
  fprintf(o, "</title>\n<style>\n%s</style>\n</head><body><main>\n<h1>", CSS);
  hr__html_escape(o, op->title);
  fputs("</h1>\n<p class=\"sub\">", o);
  hr__html_escape(o, src);
  fmt_clock(t, sizeof t, span);
  fprintf(o, " &middot; %s frames &middot; duration %s &middot; budget %.2f ms (%.0f fps)", fmt_count(b1, sizeof b1, (double)s->n),
          t, c->budget, target);
  {
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) && strftime(b2, sizeof b2, "%Y-%m-%d %H:%M UTC", &tm))
      fprintf(o, " &middot; generated %s", b2);
  }
  fputs("</p>\n", o);

  /* Headline numbers. */
  fputs("<div class=\"kpis\">\n", o);
  snprintf(b1, sizeof b1, "%.1f fps", fps);
  kpi(o, isfinite(fps) ? b1 : "n/a", "delivered frame rate", isfinite(fps) ? (fps >= 0.95 * target ? 1 : -1) : 0);
  double p95 = hr_stats_quantile(s->total, 0.95);
  snprintf(b1, sizeof b1, "%s ms", fmt_ms(b2, sizeof b2, p95));
  kpi(o, isfinite(p95) ? b1 : "n/a", "frame time p95 (all stages)", isfinite(p95) ? (p95 <= c->budget ? 1 : -1) : 0);
  fmt_pct(b1, sizeof b1, (double)s->over_budget, (double)hr_stats_count(s->total));
  snprintf(b2, sizeof b2, "frames over budget (%s)", fmt_count(b3, sizeof b3, (double)s->over_budget));
  kpi(o, b1, b2, hr_stats_count(s->total) ? (s->over_budget * 100 <= hr_stats_count(s->total) ? 1 : -1) : 0);
  fmt_count(b1, sizeof b1, drops);
  snprintf(b2, sizeof b2, "frames dropped (%s of captured)", fmt_pct(b3, sizeof b3, drops, drops + (double)s->n));
  kpi(o, b1, b2, isfinite(drops) ? (drops <= 0.01 * s->n ? 1 : -1) : 0);
  kpi(o, fmt_mib(b1, sizeof b1, s->rss_peak), "peak RSS",
      isfinite(s->rss_peak) && isfinite(c->kill) ? (s->rss_peak < c->kill ? 1 : -1) : 0);
  kpi(o, fmt_mib(b1, sizeof b1, s->headroom_min), "minimum headroom",
      isfinite(s->headroom_min) ? (s->headroom_min > 0 ? 1 : -1) : 0);
  fmt_count(b1, sizeof b1, (double)s->gov_actions);
  snprintf(b2, sizeof b2, "governor actions, %s state resets", fmt_count(b3, sizeof b3, (double)s->resets));
  kpi(o, b1, b2, 0);
  int64_t healthy = 0;
  for (int i = 0; i < s->health.n; i++)
    if (health_rank(s->health.name[i]) == 1) healthy += s->health.count[i];
  kpi(o, s->present[F_HEALTH] ? fmt_pct(b1, sizeof b1, (double)healthy, (double)s->n) : "n/a",
      "frames healthy", s->present[F_HEALTH] ? (healthy >= 0.95 * s->n ? 1 : -1) : 0);
  fputs("</div>\n", o);

  if (bad || s->oom) {
    fputs("<section class=\"card warn\"><h2>Input problems</h2><p class=\"note\">", o);
    if (bad) fprintf(o, "%lld line(s) of the telemetry file could not be parsed and were skipped (the first at "
                        "line %lld); a run that was killed usually leaves one cut-off last line. ",
                     (long long)bad, (long long)first_bad);
    if (s->oom) fputs("Out of memory while collecting names: some tables are incomplete.", o);
    fputs("</p></section>\n", o);
  }

  plot_frame_time(c);
  plot_throughput(c);
  plot_resolution(c);
  plot_memory(c);
  plot_health(c);
  plot_depth(c);

  /* Stage table. */
  card_begin(o, "Stage timing (ms)", "Percentiles from a log histogram (within 0.5%); mean and max are exact. "
             "Red: above the budget.");
  fputs("<table><tr><th>stage</th><th>frames</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>\n", o);
  for (int i = 0; i < NST; i++) stage_row(o, ST_NAME[i], s->st[i], c->budget, false);
  stage_row(o, "all stages", s->total, c->budget, true);
  stage_row(o, "latency (capture\xe2\x86\x92output)", s->latency, c->budget, false);
  if (s->present[F_DEPTH]) stage_row(o, "depth |\xce\x94t|", s->depth, c->budget, false);
  fputs("</table></section>\n", o);

  /* Run summary and memory. */
  fputs("<div class=\"cols\">\n", o);
  card_begin(o, "Run", NULL);
  fputs("<table>\n", o);
  kv(o, "frames", fmt_count(b1, sizeof b1, (double)s->n), false);
  if (isfinite(s->frame_first) && isfinite(s->frame_last)) {
    snprintf(b1, sizeof b1, "%.0f \xe2\x80\x93 %.0f", s->frame_first, s->frame_last);
    kv(o, "frame indices", b1, false);
  }
  snprintf(b1, sizeof b1, "%.1f s", dur_s);
  kv(o, "duration", b1, false);
  snprintf(b1, sizeof b1, "%.2f fps (target %.0f)", fps, target);
  kv(o, "delivered frame rate", isfinite(fps) ? b1 : "n/a", isfinite(fps) && fps < 0.95 * target);
  snprintf(b1, sizeof b1, "%s (%s)", fmt_count(b2, sizeof b2, (double)s->over_budget),
           fmt_pct(b3, sizeof b3, (double)s->over_budget, (double)hr_stats_count(s->total)));
  kv(o, "frames over budget (stages)", b1, s->over_budget * 100 > hr_stats_count(s->total));
  snprintf(b1, sizeof b1, "%s (%s)", fmt_count(b2, sizeof b2, (double)s->lat_over_budget),
           fmt_pct(b3, sizeof b3, (double)s->lat_over_budget, (double)hr_stats_count(s->latency)));
  kv(o, "frames over budget (latency)", s->present[F_LAT] ? b1 : "n/a", false);
  kv(o, "frames dropped", fmt_count(b1, sizeof b1, drops), isfinite(drops) && drops > 0.01 * s->n);
  kv(o, "state resets", fmt_count(b1, sizeof b1, (double)s->resets), false);
  if (s->present[F_COPY]) {
    snprintf(b1, sizeof b1, "%s total, %s / frame", fmt_mib(b2, sizeof b2, s->copied_sum),
             fmt_count(b3, sizeof b3, s->copied_sum / (double)s->present[F_COPY]));
    kv(o, "bytes copied", b1, false);
  }
  if (s->present[F_FUSED]) kv(o, "depth fused", fmt_pct(b1, sizeof b1, (double)s->fused, (double)s->n), false);
  for (int i = 0; i < s->sizes.n; i++) {
    snprintf(b1, sizeof b1, "%s frames (%s)", fmt_count(b2, sizeof b2, (double)s->sizes.count[i]),
             fmt_pct(b3, sizeof b3, (double)s->sizes.count[i], (double)s->n));
    snprintf(b2, sizeof b2, "processing %s", s->sizes.name[i]);
    kv(o, b2, b1, false);
  }
  fputs("</table></section>\n", o);

  card_begin(o, "Memory and governor", NULL);
  fputs("<table>\n", o);
  kv(o, "peak RSS", fmt_mib(b1, sizeof b1, s->rss_peak), isfinite(c->kill) && s->rss_peak >= c->kill);
  kv(o, "minimum headroom", fmt_mib(b1, sizeof b1, s->headroom_min), s->headroom_min < 0);
  if (s->headroom_neg) kv(o, "frames with negative headroom", fmt_count(b1, sizeof b1, (double)s->headroom_neg), true);
  kv(o, "safe ceiling", fmt_mib(b1, sizeof b1, c->safe), false);
  kv(o, "kill ceiling", fmt_mib(b1, sizeof b1, c->kill), false);
  kv(o, "governor actions", fmt_count(b1, sizeof b1, (double)s->gov_actions), false);
  for (int i = 0; i < s->gov.n; i++) {
    fprintf(o, "<tr><td>&nbsp;&nbsp;<span class=\"sw\" style=\"background:%s\"></span>", gov_color(s->gov.name[i]));
    hr__html_escape(o, s->gov.name[i]);
    fprintf(o, "</td><td>%s</td></tr>\n", fmt_count(b1, sizeof b1, (double)s->gov.count[i]));
  }
  if (s->gov.other) kv(o, "&nbsp;&nbsp;other", fmt_count(b1, sizeof b1, (double)s->gov.other), false);
  fputs("</table></section>\n</div>\n", o);

  /* Health states beside the governor's action log; health transitions below, full width. */
  bool has_health = s->present[F_HEALTH] || s->transitions;
  if (has_health || s->n_gov_ev) {
    fputs(has_health && s->n_gov_ev ? "<div class=\"cols\">\n" : "<div>\n", o);
    if (has_health) {
      card_begin(o, "Health states", NULL);
      fputs("<table><tr><th>state</th><th>frames</th><th>share</th></tr>\n", o);
      for (int i = 0; i < s->health.n; i++) {
        fprintf(o, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>", health_color(s->health.name[i], i));
        hr__html_escape(o, s->health.name[i]);
        fprintf(o, "</td><td>%s</td><td>%s</td></tr>\n", fmt_count(b1, sizeof b1, (double)s->health.count[i]),
                fmt_pct(b2, sizeof b2, (double)s->health.count[i], (double)s->n));
      }
      if (s->health.other)
        fprintf(o, "<tr><td>other</td><td>%s</td><td>%s</td></tr>\n", fmt_count(b1, sizeof b1, (double)s->health.other),
                fmt_pct(b2, sizeof b2, (double)s->health.other, (double)s->n));
      if (s->health_null)
        fprintf(o, "<tr><td><span class=\"sw\" style=\"background:#e4e7ec\"></span>no data</td><td>%s</td><td>%s</td></tr>\n",
                fmt_count(b1, sizeof b1, (double)s->health_null), fmt_pct(b2, sizeof b2, (double)s->health_null, (double)s->n));
      fprintf(o, "<tr><td>transitions</td><td>%s</td><td></td></tr>\n", fmt_count(b1, sizeof b1, (double)s->transitions));
      fputs("</table></section>\n", o);
    }
    if (s->n_gov_ev) {
      int show = s->n_gov_ev < 40 ? s->n_gov_ev : 40;
      card_begin(o, "Governor actions", s->gov_actions > show ? "The first actions only." : NULL);
      fputs("<table><tr><th>time</th><th>frame</th><th class=\"l\">action</th></tr>\n", o);
      for (int i = 0; i < show; i++) {
        const event *e = &s->gov_ev[i];
        fmt_clock(t, sizeof t, e->x);
        fprintf(o, "<tr><td>%s</td><td>%.0f</td><td class=\"l\"><span class=\"sw\" style=\"background:%s\"></span>",
                t, e->frame, gov_color(s->gov.name[e->idx]));
        hr__html_escape(o, s->gov.name[e->idx]);
        fputs("</td></tr>\n", o);
      }
      fputs("</table></section>\n", o);
    }
    fputs("</div>\n", o);
  }
  if (s->n_tr) {
    card_begin(o, "Health transitions", s->transitions > s->n_tr ? "The first transitions only." : NULL);
    fputs("<table><tr><th>time</th><th>frame</th><th class=\"l\">change</th><th class=\"l\">reason</th></tr>\n", o);
    for (int i = 0; i < s->n_tr; i++) {
      const trans *tr = &s->tr[i];
      fmt_clock(t, sizeof t, tr->x);
      fprintf(o, "<tr><td>%s</td><td>%.0f</td><td class=\"l\">", t, tr->frame);
      hr__html_escape(o, tr->from == -2 ? "no data" : name_or(&s->health, tr->from, "other"));
      fputs(" \xe2\x86\x92 ", o);
      hr__html_escape(o, tr->to == -2 ? "no data" : name_or(&s->health, tr->to, "other"));
      fputs("</td><td class=\"l\">", o);
      hr__html_escape(o, tr->reason ? tr->reason : "");
      fputs("</td></tr>\n", o);
    }
    fputs("</table></section>\n", o);
  }

  if (op->n_images > 0) {
    card_begin(o, "Samples", op->n_images > 1 ? "Input frames and mattes, in the order given." : NULL);
    fputs("<div class=\"samples\">\n", o);
    for (int i = 0; i < op->n_images; i++) write_image(o, &op->images[i]);
    fputs("</div></section>\n", o);
  }

  /* Fields that never appeared: say so rather than leave a plot silently missing. */
  bool any_missing = false;
  for (int i = 0; i < F_COUNT; i++) any_missing |= s->present[i] == 0;
  fputs("<footer>", o);
  if (any_missing) {
    fputs("Fields absent or null in every frame: ", o);
    bool first = true;
    for (int i = 0; i < F_COUNT; i++)
      if (!s->present[i]) { fprintf(o, "%s%s", first ? "" : ", ", FIELD_NAME[i]); first = false; }
    fputs(". ", o);
  }
  fprintf(o, "Plots: %d time buckets of %.0f ms; markers show the first %d governor actions and resets. "
             "Generated by headroom.</footer>\n", c->nb, span / c->nb, MAX_EVENTS);
  fputs("</main></body></html>\n", o);
}

hr_status hr_report_write_html(const char *telemetry_jsonl_path, const char *html_out,
                               const hr_report_opts *opts) {
  hr_report_opts def;
  hr_report_opts_default(&def);
  const hr_report_opts *op = opts ? opts : &def;
  if (op->err && op->err_len) op->err[0] = 0;
  if (!telemetry_jsonl_path || !html_out) { set_err(op, "report: NULL path"); return HR_EINVAL; }
  if (op->n_images < 0 || op->n_images > HR_REPORT_MAX_IMAGES) {
    set_err(op, "report: n_images %d not in 0..%d", op->n_images, HR_REPORT_MAX_IMAGES);
    return HR_EINVAL;
  }
  double budget = op->budget_ms > 0 && isfinite(op->budget_ms) ? op->budget_ms : 1000.0 / 60.0;
  int max_points = op->max_points ? op->max_points : 480;
  if (max_points < 50) max_points = 50;
  if (max_points > 2000) max_points = 2000;
  hr_report_opts o2 = *op;
  if (!o2.title) o2.title = def.title;

  reader r = {0};
  r.budget = budget;
  r.prev_x = -budget;
  r.fp = fopen(telemetry_jsonl_path, "r");
  if (!r.fp) { set_err(op, "%s: %s", telemetry_jsonl_path, strerror(errno)); return HR_EIO; }

  hr_status st = HR_OK;
  summary *s = calloc(1, sizeof *s);
  bucket *bk = NULL;
  double *arr = NULL;
  FILE *out = NULL;
  char *tmp = NULL;
  if (!s) { st = HR_ENOMEM; goto done; }
  s->rss_peak = s->headroom_min = s->safe_max = s->kill_max = s->ratio_min = s->ratio_max = NAN;
  s->dropped_first = s->dropped_last = NAN;
  for (int i = 0; i < NST; i++)
    if (hr_stats_create(&s->st[i]) != HR_OK) { st = HR_ENOMEM; goto done; }
  if (hr_stats_create(&s->total) || hr_stats_create(&s->latency) || hr_stats_create(&s->depth)) {
    st = HR_ENOMEM;
    goto done;
  }

  scan(&r, s, budget);
  if (ferror(r.fp)) { set_err(op, "%s: read error", telemetry_jsonl_path); st = HR_EIO; goto done; }
  int64_t bad = r.bad, first_bad = r.first_bad;
  if (s->n == 0) {
    set_err(op, "%s: no valid telemetry line (%lld unparsable)", telemetry_jsonl_path, (long long)bad);
    st = HR_ECORRUPT;
    goto done;
  }
  int nb = s->n < max_points ? (int)s->n : max_points;
  bk = malloc(sizeof *bk * (size_t)nb);
  arr = malloc(sizeof *arr * (size_t)nb * 4);
  if (!bk || !arr) { st = HR_ENOMEM; goto done; }
  for (int i = 0; i < nb; i++) bucket_init(&bk[i]);
  reader_rewind(&r);
  fill_buckets(&r, s, bk, nb, budget);

  ctx c = {0};
  c.s = s;
  c.bk = bk;
  c.nb = nb;
  c.xs = arr;
  c.a = arr + nb;
  c.b = arr + 2 * nb;
  c.c = arr + 3 * nb;
  c.budget = budget;
  c.safe = op->ceiling_safe_bytes > 0 ? (double)op->ceiling_safe_bytes : s->safe_max;
  c.kill = op->ceiling_kill_bytes > 0 ? (double)op->ceiling_kill_bytes : s->kill_max;
  double span = s->x_max - s->x_min;
  for (int i = 0; i < nb; i++) c.xs[i] = s->x_min + (i + 0.5) * span / nb;

  size_t tl = strlen(html_out) + 8;
  tmp = malloc(tl);
  if (!tmp) { st = HR_ENOMEM; goto done; }
  snprintf(tmp, tl, "%s.tmp", html_out);
  out = fopen(tmp, "w");
  if (!out) { set_err(op, "%s: %s", tmp, strerror(errno)); st = HR_EIO; goto done; }
  c.o = out;
  write_html(out, telemetry_jsonl_path, &o2, s, &c, bad, first_bad);
  int werr = ferror(out);
  int cerr = fclose(out);
  out = NULL;
  if (werr || cerr) {
    set_err(op, "%s: write failed: %s", tmp, strerror(errno));
    remove(tmp);
    st = HR_EIO;
    goto done;
  }
  if (rename(tmp, html_out) != 0) {
    set_err(op, "%s: %s", html_out, strerror(errno));
    remove(tmp);
    st = HR_EIO;
  }

done:
  if (out) { fclose(out); remove(tmp); }
  free(tmp);
  free(bk);
  free(arr);
  if (s) { summary_free(s); free(s); }
  if (r.j) cJSON_Delete(r.j);
  free(r.buf);
  fclose(r.fp);
  if (st == HR_ENOMEM) set_err(op, "report: out of memory");
  return st;
}
