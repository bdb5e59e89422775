/* Sessions: own the plan, arena and recurrent state of one stream over a shared model; push frames. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "session/session_impl.h"
#include "session/kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "session/kcache.h"
#include "backend/backend.h"
#include "ingest/ingest.h"

static hr_status serr(hr_session *s, hr_status st, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt);
  vsnprintf(s->err, sizeof s->err, fmt, ap);
  va_end(ap);
  return st;
}

void hr_session_params_default(hr_session_params *p) {
  memset(p, 0, sizeof *p);
  p->backend = HR_BACKEND_XNNPACK;
  p->scene_cut_threshold = 0.25f;
}

const char *hr_session_last_error(const hr_session *s) { return s ? s->err : ""; }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* State tensors [0, n) into s->state: on a device backend its host shadows are refreshed (Vulkan
 * serves them from the copy its frame command buffer makes; each tensor tried, the first error
 * returned); the CPU's state is those buffers. */
static hr_status state_to_host(const hr_session *s, int n) {
  hr_status first = HR_OK;
  for (int k = 0; k < n && !s->bk->host_arena; k++) {
    hr_status st = s->bk->state_read((hr_session *)s, s->bimpl, k, s->state[k]);
    if (st && !first) first = st;
  }
  return first;
}

int hr_session_state_views(const hr_session *s, const float **ptrs, size_t *lens, int max) {
  if (!s || !s->plan) return 0;
  int n = s->plan->n_state < max ? s->plan->n_state : max;
  state_to_host(s, n); /* the stream reads them every frame */
  for (int k = 0; k < n; k++) { ptrs[k] = s->state[k]; lens[k] = (size_t)(s->plan->state_bytes[k] / 4); }
  return n;
}

/* Auto ratio: processing side about 512 px, as RVM's authors recommend per resolution. */
static float auto_ratio(int w, int h) {
  int side = w > h ? w : h;
  float r = 512.f / (float)side;
  return r >= 1.f ? 1.f : r;
}

/* Frames arrive at the model's input size (so the input may be read in place, never copied). */
static int frame_matches(const hr_session_params *p, int w, int h) {
  return !p->frame_width || (p->frame_width == w && p->frame_height == h);
}

static unsigned plan_flags(const hr_session_params *p, int w, int h) {
  return (p->backend == HR_BACKEND_REFERENCE ? HR__PLAN_NO_LOWER : 0) | (frame_matches(p, w, h) ? HR__PLAN_VIRTUAL_SRC : 0);
}

/* The session's own io buffers a plan needs: the resampled float input (unless the input is read
 * in place from frames of the planned size), and an alpha plane for multi-channel outputs (meet). */
static int64_t src_buf_bytes(const hr__plan *p, const hr_session_params *prm) {
  return p->vals[p->src_val].src_virtual && frame_matches(prm, p->width, p->height) ? 0 : (int64_t)p->width * p->height * 12;
}
static int64_t alpha_buf_bytes(const hr__plan *p) {
  const hr__tensor *a = &p->vals[p->alpha_val].t;
  return a->rank == 4 && a->dims[3] > 1 ? a->dims[1] * a->dims[2] * 4 : 0;
}
/* params.alpha_u8: the 8-bit plane (counted for every backend; a GPU one reads it back into its
 * own mapped buffer and the session then allocates none). */
static int64_t alpha8_bytes(const hr__plan *p, const hr_session_params *prm) {
  const hr__tensor *a = &p->vals[p->alpha_val].t;
  return prm->alpha_u8 ? a->dims[1] * a->dims[2] : 0;
}

/* The one rule for a session's kernel threads: params.threads, or every CPU this process may use. */
static int session_threads(const hr_session_params *p) { return p->threads > 0 ? p->threads : (int)hr_cpu_count(); }

static void plan_info(const hr_model *m, const hr__plan *p, const hr_session_params *prm, int64_t kernel_bytes,
                      int64_t kernel_shared_bytes, hr_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->width = p->width; info->height = p->height;
  info->proc_width = p->proc_w; info->proc_height = p->proc_h;
  info->downsample_ratio = p->ratio;
  info->threads = session_threads(prm);
  info->weight_bytes = m->n_params * 4;
  info->arena_bytes = p->arena_bytes;
  for (int k = 0; k < p->n_state; k++) info->state_bytes += p->state_bytes[k];
  info->io_bytes = src_buf_bytes(p, prm) + alpha_buf_bytes(p) + alpha8_bytes(p, prm);
  info->kernel_bytes = kernel_bytes + p->meta_bytes;
  info->kernel_shared_bytes = kernel_shared_bytes;
  info->session_bytes = info->arena_bytes + info->state_bytes + info->io_bytes + info->kernel_bytes;
  info->total_bytes = info->weight_bytes + info->kernel_shared_bytes + info->session_bytes;
  info->n_ops = p->n_rops;
  info->gflop = p->flops / 1e9;
}

/* ---- the plan bundle --------------------------------------------------------------------------
 * A session's plan comes with everything made for it: the arena, the state, the io buffers, the
 * per-op timings, the scene-cut row scratch, the executor (its kernels, and references to the
 * model's shared kernel templates) and what the kernels measured. These are the per-plan fields of
 * hr_session. build() makes a complete new bundle in a scratch hr_session beside the session's
 * own, so that a failure anywhere leaves the session exactly as it was; on success the bundles are
 * swapped and the old one released. The executor keeps no pointer to the hr_session it was made
 * with (it is handed the session at every run), so a bundle may move from one hr_session to another.
 * The ingest tables (ing) belong to the bundle only when the session declared frames of another
 * size (they are then made with the plan); otherwise they are push's, kept across plans. */

/* Free a bundle's memory and clear its fields (ing excepted). Cannot fail. */
static void bundle_free(hr_session *b) {
  if (b->bk && b->bimpl) b->bk->destroy(b->bimpl); /* CPU: releases the kernel templates its kernels held */
  b->bimpl = NULL; b->bk = NULL;
  free(b->arena); b->arena = NULL;
  for (int k = 0; k < 8; k++) { free(b->state[k]); b->state[k] = NULL; }
  free(b->src_buf); b->src_buf = NULL;
  free(b->alpha_buf); b->alpha_buf = NULL;
  free(b->alpha8); b->alpha8 = NULL;
  free(b->op_us); b->op_us = NULL;
  free(b->row_scratch); b->row_scratch = NULL;
  hr__plan_free(b->plan); b->plan = NULL;
  b->src_ptr = NULL;
  b->kernel_bytes = b->kernel_shared_bytes = 0;
}

/* Move the bundle of `from` into `to` (whose own bundle fields must be clear or already saved);
 * `from`'s fields are cleared. ing is not moved. */
static void bundle_move(hr_session *to, hr_session *from) {
  to->plan = from->plan;
  to->arena = from->arena;
  memcpy(to->state, from->state, sizeof to->state);
  to->src_buf = from->src_buf;
  to->src_ptr = NULL; /* set again by the next push */
  to->alpha_buf = from->alpha_buf;
  to->alpha8 = from->alpha8;
  to->bk = from->bk; to->bimpl = from->bimpl;
  to->op_us = from->op_us;
  to->row_scratch = from->row_scratch;
  to->kernel_bytes = from->kernel_bytes;
  to->kernel_shared_bytes = from->kernel_shared_bytes;
  from->plan = NULL; from->arena = NULL; memset(from->state, 0, sizeof from->state);
  from->src_buf = NULL; from->src_ptr = NULL; from->alpha_buf = NULL; from->alpha8 = NULL; from->bk = NULL; from->bimpl = NULL;
  from->op_us = NULL; from->row_scratch = NULL; from->kernel_bytes = from->kernel_shared_bytes = 0;
}

static void trim_heap(void) {
#ifdef __GLIBC__
  /* XNNPACK's many mid-sized blocks come from the heap (glibc raises its mmap threshold after big
   * frees); give what was just freed back to the OS, so shedding really lowers RSS. */
  malloc_trim(0);
#endif
}

/* Release the session's plan bundle (suspend, destroy). Cannot fail. */
static void release_plan(hr_session *s) {
  int had = s->plan != NULL;
  bundle_free(s);
  if (had) trim_heap();
}

static void *alloc_aligned(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 64)) return NULL;
  return p;
}

/* One state tensor (1 x ih x iw x C floats) resampled to 1 x oh x ow x C: bilinear with half-pixel
 * centres, TF's ResizeBilinear arithmetic (the source coordinate clamped at 0 and the last row and
 * column); the same size is a copy. Not the executor's hr__k_resize: that one needs a column table
 * made first, an allocation here, after the new plan is made, where a failure could no longer undo
 * the replan (test_engine_allocfail fails every allocation of it). */
static void resample_state(const float *x, int ih, int iw, float *y, int oh, int ow, int64_t C) {
  if (ih == oh && iw == ow) { memcpy(y, x, sizeof(float) * (size_t)((int64_t)ih * iw * C)); return; }
  const float sy = (float)ih / (float)oh, sx = (float)iw / (float)ow;
  for (int oy = 0; oy < oh; oy++) {
    float fy = ((float)oy + 0.5f) * sy - 0.5f;
    if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < ih ? y0 + 1 : ih - 1;
    float ly = fy - (float)y0;
    for (int ox = 0; ox < ow; ox++) {
      float fx = ((float)ox + 0.5f) * sx - 0.5f;
      if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
      float lx = fx - (float)x0;
      const float *a = x + ((int64_t)y0 * iw + x0) * C, *b = x + ((int64_t)y0 * iw + x1) * C;
      const float *c = x + ((int64_t)y1 * iw + x0) * C, *d = x + ((int64_t)y1 * iw + x1) * C;
      float *o = y + ((int64_t)oy * ow + ox) * C;
      for (int64_t k = 0; k < C; k++) {
        float top = a[k] + (b[k] - a[k]) * lx, bot = c[k] + (d[k] - c[k]) * lx;
        o[k] = top + (bot - top) * ly;
      }
    }
  }
}

/* The current plan's recurrent state carried into the new bundle n, each tensor resampled to its
 * new height and width (the channels are the model's, the same at every size). Returns 1 when done;
 * 0 when the shapes do not allow it or the old state cannot be read (n's state stays zero). */
static int carry_state(hr_session *s, hr_session *n) {
  const hr__plan *a = s->plan, *b = n->plan;
  if (!a || a->n_state != b->n_state || a->n_state < 1) return 0;
  for (int k = 0; k < a->n_state; k++) {
    const hr__tensor *ta = &a->vals[a->state_val[k]].t, *tb = &b->vals[b->state_val[k]].t;
    if (ta->rank != 4 || tb->rank != 4 || ta->dims[0] != 1 || tb->dims[0] != 1 || ta->dims[3] != tb->dims[3] ||
        ta->dt != HR_DT_FLOAT || tb->dt != HR_DT_FLOAT || ta->dims[1] < 1 || ta->dims[2] < 1)
      return 0;
  }
  if (state_to_host(s, a->n_state)) return 0;
  for (int k = 0; k < a->n_state; k++) {
    const hr__tensor *ta = &a->vals[a->state_val[k]].t, *tb = &b->vals[b->state_val[k]].t;
    resample_state(s->state[k], (int)ta->dims[1], (int)ta->dims[2], n->state[k], (int)tb->dims[1], (int)tb->dims[2], ta->dims[3]);
  }
  /* a device backend takes it from the host buffers; the CPU's state is those buffers */
  for (int k = 0; k < b->n_state && !n->bk->host_arena; k++)
    if (n->bk->state_write(n, n->bimpl, k, n->state[k])) {
      n->bk->state_zero(n, n->bimpl);
      return 0;
    }
  return 1;
}

/* Plan (w, h, ratio) and make everything the plan needs, then put it in place of the session's
 * current plan (if any), which is released. Failure-atomic: on any error the session keeps its
 * plan, state contents, pending events and parameters, nothing made here is left allocated, and
 * s->err names what failed. For a moment both plans are held (peak = old + new). The new state
 * is the old one resampled when carry is set and that works (*carried = 1), else zeroed; the
 * caller raises the events. */
static hr_status build(hr_session *s, int w, int h, float ratio, int carry, int *carried, int keep_heap) {
  if (carried) *carried = 0;
  hr_session scratch; /* the new bundle is made here: what the executor reads, nothing of the stream */
  memset(&scratch, 0, sizeof scratch);
  hr_session *n = &scratch;
  n->m = s->m; n->p = s->p; n->pool = s->pool; n->profiling = s->profiling;
  memcpy(n->reg, s->reg, sizeof n->reg); n->n_reg = s->n_reg;   /* the backend imports them at create */
  hr_session old; /* then the session's current bundle, released once the new one is in place */
  memset(&old, 0, sizeof old);
  int own_ing = !frame_matches(&s->p, w, h);
  const char *what = NULL;
  int64_t what_bytes = 0;
  char perr[400] = "";
  hr_status st = hr__plan_build(s->m, w, h, ratio, s->p.want_fgr, plan_flags(&s->p, w, h), &n->plan, perr, sizeof perr);
  if (st) {
    snprintf(n->err, sizeof n->err, "planning %dx%d at ratio %g: %s", w, h, (double)ratio,
             perr[0] ? perr : st == HR_ENOMEM ? "out of memory" : hr_status_name(st));
    goto fail;
  }
  const hr__plan *plan = n->plan;
  n->bk = hr__backend_for(&s->p);
  what = "arena"; what_bytes = plan->arena_bytes;
  /* a device backend keeps the arena on the device; the host state buffers are its views' shadows */
  n->arena = n->bk->host_arena ? alloc_aligned((size_t)plan->arena_bytes) : NULL;
  if (n->bk->host_arena && !n->arena) goto nomem;
  what = "recurrent state";
  for (int k = 0; k < plan->n_state; k++) {
    what_bytes = plan->state_bytes[k];
    n->state[k] = alloc_aligned((size_t)plan->state_bytes[k]);
    if (!n->state[k]) goto nomem;
    memset(n->state[k], 0, (size_t)plan->state_bytes[k]);
  }
  what = "input buffer"; what_bytes = src_buf_bytes(plan, &s->p);
  if (what_bytes && !(n->src_buf = alloc_aligned((size_t)what_bytes))) goto nomem;
  what = "alpha buffer"; what_bytes = alpha_buf_bytes(plan);
  if (what_bytes && !(n->alpha_buf = alloc_aligned((size_t)what_bytes))) goto nomem;
  what = "per-op timings"; what_bytes = ((int64_t)plan->n_rops + 1) * (int64_t)sizeof(double);
  n->op_us = calloc((size_t)plan->n_rops + 1, sizeof(double));
  if (!n->op_us) goto nomem;
  what = "scene-cut row"; what_bytes = (int64_t)w * 3 * (int64_t)sizeof(float);
  n->row_scratch = alloc_aligned((size_t)what_bytes);
  if (!n->row_scratch) goto nomem;
  if (own_ing) {
    /* frames of a declared other size: their resampling tables are made here, not in the first push */
    what = "frame resampling tables"; what_bytes = 0;
    st = hr__ingest_plan_init(&n->ing, s->p.frame_width, s->p.frame_height, w, h);
    if (st == HR_ENOMEM) goto nomem;
    if (st) {
      snprintf(n->err, sizeof n->err, "cannot plan ingest %dx%d -> %dx%d", s->p.frame_width, s->p.frame_height, w, h);
      goto fail;
    }
  }
  n->err[0] = 0;
  st = n->bk->create(n, s->bk == n->bk ? s->bimpl : NULL, &n->bimpl);
  if (st) {
    if (!n->err[0])
      snprintf(n->err, sizeof n->err, "%s creating the kernels of the plan (%d ops)",
               st == HR_ENOMEM ? "out of memory" : hr_status_name(st), plan->n_rops);
    goto fail;
  }
  what = "8-bit alpha"; what_bytes = alpha8_bytes(plan, &s->p);
  if (what_bytes && !(n->bk->output_u8 && n->bk->output_u8(n, n->bimpl, plan->alpha_val, NULL, NULL)) &&
      !(n->alpha8 = alloc_aligned((size_t)what_bytes)))
    goto nomem;
  if (carry && carried) *carried = carry_state(s, n);
  /* success: the new bundle takes the session's place, then the old one is released */
  bundle_move(&old, s);
  bundle_move(s, n);
  if (own_ing) {
    hr__ingest_plan_free(&s->ing);
    s->ing = n->ing;
    memset(&n->ing, 0, sizeof n->ing);
  }
  s->p.width = w; s->p.height = h; s->p.downsample_ratio = s->plan->ratio;
  if (keep_heap) bundle_free(&old);   /* its pages stay in the heap for the next build */
  else release_plan(&old);
  return HR_OK;
nomem:
  st = HR_ENOMEM;
  if (!strcmp(what, "arena") || !what_bytes)
    snprintf(n->err, sizeof n->err, "out of memory allocating the %dx%d plan's %s (arena %lld bytes)", w, h, what,
             (long long)n->plan->arena_bytes);
  else
    snprintf(n->err, sizeof n->err, "out of memory allocating the %dx%d plan's %s (%lld bytes; arena %lld bytes)", w, h, what,
             (long long)what_bytes, (long long)n->plan->arena_bytes);
fail:
  serr(s, st, "%s", n->err);
  bundle_free(n);
  hr__ingest_plan_free(&n->ing);
  trim_heap();
  return st;
}

/* The backend in words; HR_BACKEND_AUTO resolved here, once, with its reason. */
static void pick_backend(hr_session *s) {
  char d[200] = "";
  switch (s->p.backend) {
    case HR_BACKEND_REFERENCE: snprintf(s->backend_desc, sizeof s->backend_desc, "reference"); return;
    case HR_BACKEND_XNNPACK: snprintf(s->backend_desc, sizeof s->backend_desc, "xnnpack"); return;
    case HR_BACKEND_VULKAN: snprintf(s->backend_desc, sizeof s->backend_desc, "vulkan"); return;
    case HR_BACKEND_AUTO: break;
    default: snprintf(s->backend_desc, sizeof s->backend_desc, "backend %d", (int)s->p.backend); return;
  }
#ifdef HR_HAVE_VULKAN
  hr_status st = hr__vk_probe(d, sizeof d);
#else
  hr_status st = HR_ENOTSUP;
  snprintf(d, sizeof d, "this build has no Vulkan backend");
#endif
  s->p.backend = st ? HR_BACKEND_XNNPACK : HR_BACKEND_VULKAN;
  if (st) snprintf(s->backend_desc, sizeof s->backend_desc, "xnnpack (auto: no Vulkan GPU: %s)", d);
  else snprintf(s->backend_desc, sizeof s->backend_desc, "vulkan: %s (auto)", d);
}

const char *hr_session_backend(const hr_session *s) { return s ? s->backend_desc : ""; }

int hr__session_threads(const hr_session *s, int i0, int i1) {
  if (s->bk != &hr__backend_cpu) return 0;
  int t = hr__exec_threads(s->bimpl, i0, i1);
  return t ? t : s->p.threads;
}

hr_status hr_session_create_err(hr_model *m, const hr_session_params *p, hr_session **out, char *err, size_t err_len) {
  if (err && err_len) err[0] = 0;
  if (!m || !out) { if (err && err_len) snprintf(err, err_len, "no model or no output pointer"); return HR_EINVAL; }
  *out = NULL;
  hr_session *s = calloc(1, sizeof *s);
  if (!s) { if (err && err_len) snprintf(err, err_len, "out of memory for the session"); return HR_ENOMEM; }
  s->m = m;
  if (p) s->p = *p; else hr_session_params_default(&s->p);
  pick_backend(s);
  int w = s->p.width, h = s->p.height;
  if (m->fixed_w) { if (!w) w = m->fixed_w; if (!h) h = m->fixed_h; }
  hr_status st = HR_OK;
  if (w <= 0 || h <= 0) st = serr(s, HR_EINVAL, "no input size (%dx%d): the model has no fixed size, set width and height", w, h);
  int threads = session_threads(&s->p);
  s->p.threads = threads;
  if (!st) s->pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
  if (!st && threads > 1 && !s->pool) st = serr(s, HR_ENOMEM, "cannot create a pool of %d threads", threads);
  if (!st) s->prev_luma = calloc(32 * 18, 1);
  if (!st && !s->prev_luma) st = serr(s, HR_ENOMEM, "out of memory for the session");
  if (!st) st = build(s, w, h, s->p.downsample_ratio > 0 ? s->p.downsample_ratio : auto_ratio(w, h), 0, NULL, 0);
  if (st) {
    if (err && err_len) snprintf(err, err_len, "%s", s->err[0] ? s->err : hr_status_str(st));
    hr_session_destroy(s);
    return st;
  }
  *out = s;
  return HR_OK;
}

hr_status hr_session_create(hr_model *m, const hr_session_params *p, hr_session **out) {
  return hr_session_create_err(m, p, out, NULL, 0);
}

void hr_session_destroy(hr_session *s) {
  if (!s) return;
  release_plan(s);
  if (s->pool) pthreadpool_destroy(s->pool);
  hr__ingest_plan_free(&s->ing);
  free(s->prev_luma);
  free(s);
}

hr_status hr_session_register_memory(hr_session *s, const void *ptr, size_t len) {
  if (!s) return HR_EINVAL;
  if (!ptr || !len) return serr(s, HR_EINVAL, "register memory: %s", ptr ? "0 bytes" : "NULL pointer");
  for (int k = 0; k < s->n_reg; k++)
    if (s->reg[k].p == ptr && s->reg[k].n == len) return HR_OK;
  if (s->n_reg == (int)(sizeof s->reg / sizeof s->reg[0]))
    return serr(s, HR_ERANGE, "register memory: %d ranges registered already", s->n_reg);
  s->reg[s->n_reg].p = ptr; s->reg[s->n_reg].n = len; s->n_reg++;
  hr_status st = s->plan && s->bk->sync_memory ? s->bk->sync_memory(s, s->bimpl) : HR_OK;
  if (st) s->n_reg--;   /* not registered: the backend said why in s->err */
  return st;
}

hr_status hr_session_unregister_memory(hr_session *s, const void *ptr) {
  if (!s) return HR_EINVAL;
  int k = 0;
  while (k < s->n_reg && s->reg[k].p != ptr) k++;
  if (k == s->n_reg) return serr(s, HR_EINVAL, "unregister memory: %p was not registered", ptr);
  s->reg[k] = s->reg[--s->n_reg];
  return s->plan && s->bk->sync_memory ? s->bk->sync_memory(s, s->bimpl) : HR_OK;
}

hr_status hr_session_reset(hr_session *s) {
  if (!s) return HR_EINVAL;
  if (!s->plan) return HR_OK; /* suspended: the state is gone already */
  s->bk->state_zero(s, s->bimpl);
  s->pending_events |= HR_EVENT_STATE_RESET;
  return HR_OK;
}

bool hr_session_is_suspended(const hr_session *s) { return s && !s->plan; }

hr_status hr_session_suspend(hr_session *s) {
  if (!s) return HR_EINVAL;
  if (!s->plan) return HR_OK;
  release_plan(s); /* only frees: nothing here can fail */
  hr__ingest_plan_free(&s->ing);
  return HR_OK;
}

/* Append to the session's error message what the failed call left behind. */
static hr_status say_after(hr_session *s, hr_status st, const char *what) {
  size_t l = strlen(s->err);
  snprintf(s->err + l, sizeof s->err - l, "; %s", what);
  return st;
}

hr_status hr_session_resume(hr_session *s, int w, int h, float ratio) {
  if (!s) return HR_EINVAL;
  if (s->plan) return HR_OK;
  if (!w || !h) { w = s->p.width; h = s->p.height; }
  if (ratio <= 0) ratio = s->p.downsample_ratio > 0 ? s->p.downsample_ratio : auto_ratio(w, h);
  hr_status st = build(s, w, h, ratio, 0, NULL, 0);
  if (st) return say_after(s, st, "the session stays suspended");
  s->pending_events |= HR_EVENT_REPLANNED | HR_EVENT_STATE_RESET;
  return HR_OK;
}

static hr_status replan(hr_session *s, int w, int h, float ratio, int keep_heap) {
  if (!s) return HR_EINVAL;
  if (!s->plan) return hr_session_resume(s, w, h, ratio);
  if (ratio <= 0) ratio = auto_ratio(w, h);
  if (w == s->plan->width && h == s->plan->height && ratio == s->plan->ratio) return HR_OK;
  int carried = 0;
  hr_status st = build(s, w, h, ratio, !s->p.replan_resets_state, &carried, keep_heap); /* validates before it changes anything */
  if (st) return say_after(s, st, "the previous plan and its state are kept");
  s->pending_events |= HR_EVENT_REPLANNED | (carried ? 0u : (unsigned)HR_EVENT_STATE_RESET);
  return HR_OK;
}

hr_status hr_session_replan(hr_session *s, int w, int h, float ratio) { return replan(s, w, h, ratio, 0); }

hr_status hr__session_replan_keep(hr_session *s, int w, int h, float ratio) {
  const char *e = getenv("HR_REPLAN_TRIM");   /* 1: give the pages back as hr_session_replan does (for A/B) */
  return replan(s, w, h, ratio, !(e && atoi(e)));
}

void hr__heap_trim(void) { trim_heap(); }

hr_status hr__session_replan_quiet(hr_session *s, int w, int h, float ratio) {
  if (!s || !s->plan) return HR_EINVAL;
  uint32_t ev = s->pending_events;
  char err[sizeof s->err];
  memcpy(err, s->err, sizeof err);
  hr_status st = hr_session_replan(s, w, h, ratio);
  s->pending_events = ev;
  memcpy(s->err, err, sizeof err);
  return st;
}

/* Scene-cut detector: mean |luma difference| on a 32x18 thumbnail of the model input. */
static int scene_cut(hr_session *s, const hr_frame *f) {
  uint8_t th[32 * 18];
  int w = f->width, h = f->height;
  for (int ty = 0; ty < 18; ty++) {
    const float *row = hr__ingest_row_view(f, ty * h / 18 + h / 36, s->row_scratch);
    for (int tx = 0; tx < 32; tx++) {
      const float *px = row + (int64_t)(tx * w / 32 + w / 64) * 3;
      float y = 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
      th[ty * 32 + tx] = (uint8_t)(y < 0 ? 0 : y > 1 ? 255 : y * 255.f + 0.5f);
    }
  }
  int cut = 0;
  if (s->have_prev_luma) {
    long sum = 0;
    for (int i = 0; i < 32 * 18; i++) sum += abs((int)th[i] - (int)s->prev_luma[i]);
    cut = (float)sum / (32 * 18 * 255.f) > s->p.scene_cut_threshold;
  }
  memcpy(s->prev_luma, th, sizeof th);
  s->have_prev_luma = 1;
  return cut;
}

hr_status hr_session_push(hr_session *s, const hr_frame *f, hr_outputs *out) {
  if (!s || !f || !out) return HR_EINVAL;
  if (!s->plan) return serr(s, HR_EMISUSE, "session is suspended (hr_session_resume first)");
  char why[256];
  if (hr_frame_validate(f, why, sizeof why)) return serr(s, HR_EINVAL, "bad frame: %s", why);
  hr__plan *p = s->plan;
  int w = p->width, h = p->height;
  s->bytes_copied = 0;
  double t_start = now_ms();
  /* input: read in place when the frame already is the model's float input, else convert once */
  int virt = p->vals[p->src_val].src_virtual;
  if (f->width == w && f->height == h && (virt || hr__ingest_borrow_rgbf(f, w, h))) {
    /* read in place: the model's input is the caller's frame (virtual src reads its rows directly) */
    s->cur = *f;
    s->src_ptr = hr__ingest_borrow_rgbf(f, w, h);
  } else {
    if (!s->src_buf) {
      /* frames of another size than planned: one allocation, the first time only */
      s->src_buf = alloc_aligned((size_t)w * h * 3 * sizeof(float));
      if (!s->src_buf) return serr(s, HR_ENOMEM, "out of memory for the resized input (%dx%d)", w, h);
    }
    if (s->ing.in_w != f->width || s->ing.in_h != f->height || s->ing.out_w != w || s->ing.out_h != h) {
      /* a new frame size: the one allocation outside create/replan (tables for the new size pair) */
      hr__ingest_plan_free(&s->ing);
      hr_status st = hr__ingest_plan_init(&s->ing, f->width, f->height, w, h);
      if (st) return serr(s, st, "cannot plan ingest %dx%d -> %dx%d", f->width, f->height, w, h);
    }
    hr_status st = hr__ingest_resample_rgbf(&s->ing, f, s->src_buf, (ptrdiff_t)w * 3);
    if (st) return serr(s, st, "cannot convert %s frame %dx%d to model input", hr_pixfmt_name(f->fmt), f->width, f->height);
    s->src_ptr = s->src_buf;
    s->bytes_copied += (int64_t)w * h * 12;
    hr_frame wf = {.fmt = HR_PIX_RGBF32, .width = w, .height = h, .planes = {s->src_buf}, .strides = {(ptrdiff_t)w * 12}, .ts_ns = f->ts_ns};
    s->cur = wf;
  }
  double t_ingest = now_ms();
  uint32_t ev = s->pending_events;
  s->pending_events = 0;
  if (s->p.scene_cut_reset && p->n_state > 0 && scene_cut(s, &s->cur)) {
    ev |= HR_EVENT_SCENE_CUT | HR_EVENT_STATE_RESET;
    s->bk->state_zero(s, s->bimpl);
  }
  if (s->p.stateless && p->n_state > 0) s->bk->state_zero(s, s->bimpl);
  unsigned csr = hr__ftz_begin();
  s->alpha8_made = 0;
  s->alpha8_bsum = -1;
  hr_status run_st = s->bk->run(s, s->bimpl);
  hr__ftz_end(csr);
  if (run_st) return run_st;
  hr__tensor a = p->vals[p->alpha_val].t;
  a.data = (void *)s->bk->output(s, s->bimpl, p->alpha_val);
  memset(out, 0, sizeof *out);
  out->height = (int)a.dims[1]; out->width = (int)a.dims[2];
  out->raw = a.data; out->raw_channels = (int)a.dims[3];
  if (s->alpha_buf) {
    /* two-channel segmenters (meet): person probability = softmax(logits)[1] */
    int64_t n = a.dims[1] * a.dims[2]; int64_t C = a.dims[3];
    const float *x = a.data;
    for (int64_t i = 0; i < n; i++) s->alpha_buf[i] = 1.f / (1.f + expf(x[i * C] - x[i * C + 1]));
    out->alpha = s->alpha_buf;
  } else {
    out->alpha = a.data;
  }
  out->threads = hr__session_threads(s, 0, p->n_rops);
  if (s->p.alpha_u8) {
    int64_t bad = 0;
    if (s->alpha8_made) { /* the CPU's guided-filter tail made them (into alpha8) */
      bad = s->alpha8_bad;
      out->alpha_u8 = s->alpha8;
    } else if (s->alpha8) { /* the backend makes no 8-bit matte: converted here, on the threads the frame ran on */
      bad = hr__k_alpha_u8(out->threads > 1 ? s->pool : NULL, out->alpha, s->alpha8, (int64_t)out->width * out->height);
      out->alpha_u8 = s->alpha8;
    } else {
      out->alpha_u8 = s->bk->output_u8(s, s->bimpl, p->alpha_val, &bad, &s->alpha8_bsum);
    }
    out->alpha = NULL; out->raw = NULL;
    s->alpha8_bad = bad;
    if (bad) ev |= HR_EVENT_NONFINITE;
  }
  if (p->fgr_val >= 0) out->fgr = s->bk->output(s, s->bimpl, p->fgr_val);
  s->cur.planes[0] = NULL; /* the caller's frame is not kept */
  out->ts_ns = f->ts_ns;
  out->ingest_ms = t_ingest - t_start;
  out->infer_ms = now_ms() - t_ingest;
  out->bytes_copied = s->bytes_copied;
  out->frame_index = s->frame_index++;
  out->events = ev;
  return HR_OK;
}

void hr_session_get_plan(const hr_session *s, hr_plan_info *info) {
  memset(info, 0, sizeof *info);
  if (s->plan) plan_info(s->m, s->plan, &s->p, s->kernel_bytes, s->kernel_shared_bytes, info); /* nothing while suspended */
  hr__split_info si;
  info->tail_split = hr__split_query(s, &si);
  hr__vk_memory vm;   /* what the Vulkan backend allocated (HR_EINVAL on the CPU backends) */
  if (s->plan && hr__vk_session_memory(s, &vm, NULL) == HR_OK) { info->device_bytes = vm.device_local; info->device_host_bytes = vm.host_visible; }
}

void hr_model_get_memory(const hr_model *m, hr_model_memory *mem) {
  memset(mem, 0, sizeof *mem);
  if (!m) return;
  mem->weight_bytes = m->n_params * 4;
  mem->kernel_shared_bytes = hr__kcache_bytes(m->kcache, &mem->n_shared_kernels);
}

hr_status hr_model_plan(hr_model *m, const hr_session_params *prm, hr_plan_info *info, char *err, size_t err_len) {
  hr_session_params d;
  if (!prm) { hr_session_params_default(&d); prm = &d; }
  int w = prm->width ? prm->width : m->fixed_w, h = prm->height ? prm->height : m->fixed_h;
  float r = prm->downsample_ratio > 0 ? prm->downsample_ratio : auto_ratio(w, h);
  hr__plan *p = NULL;
  hr_status st = hr__plan_build(m, w, h, r, prm->want_fgr, plan_flags(prm, w, h), &p, err, err_len);
  if (st) return st;
  plan_info(m, p, prm, p->kernel_bytes_est + hr__exec_table_bytes(p->n_rops), p->kernel_shared_est, info);
  hr__split_info si;
  info->tail_split = (prm->backend == HR_BACKEND_XNNPACK || prm->backend == HR_BACKEND_REFERENCE) &&   /* auto: not probed */
                     hr__split_plan_query(p, &si);
  if (prm->backend == HR_BACKEND_VULKAN) {   /* the backend's buffers from the plan alone (no device opened) */
    const char *h16 = getenv("HR_VK_FP16");
    hr__vk_memory vm;
    if (hr__vk_plan_memory(p, h16 && *h16 == '1', &vm) == HR_OK) { info->device_bytes = vm.device_local; info->device_host_bytes = vm.host_visible; }
  }
  hr__plan_free(p);
  return HR_OK;
}

void hr_session_set_profiling(hr_session *s, bool on) { if (s) s->profiling = on; }

bool hr_session_op_profile(const hr_session *s, int i, const char **op, const char **kclass, double *us, double *mflop) {
  if (!s || !s->plan || i < 0 || i >= s->plan->n_rops) return false;
  const hr__rop *r = &s->plan->rops[i];
  if (op) *op = hr__op_name(r->op);
  if (kclass) {
    const char *k = "other";
    switch (r->op) {
      case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D: {
        const hr__tensor *w = &s->plan->vals[r->in[1]].t;
        k = (w->dims[0] == 1 && w->dims[1] == 1) ? "conv1x1" : "conv3x3";
        break;
      }
      case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV: k = "depthwise"; break;
      case HR_OP_DECONV2D: k = "deconv"; break;
      case HR_OP_RESIZE_BILINEAR: case HR_OP_SRC_RESIZE: k = "resize"; break;
      case HR_OP_FGF_TAIL: k = "refiner"; break;
      case HR_OP_CONCAT: case HR_OP_SPLIT: case HR_OP_SPLITV: case HR_OP_SLICE: case HR_OP_PAD:
      case HR_OP_SPACE_TO_BATCH: case HR_OP_BATCH_TO_SPACE: k = "copy"; break;
      default: k = "elementwise"; break;
    }
    *kclass = k;
  }
  if (us) *us = s->op_us ? s->op_us[i] : 0;
  if (mflop) *mflop = r->flops / 1e6;
  return !r->dead;
}
