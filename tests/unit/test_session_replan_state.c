/* A replan carries the recurrent state over (hr_session_params.replan_resets_state false, the
 * default): RVM on real bedroom frames at 256x256, four frames at ratio 0.5, then a replan to 0.25,
 * where every state tensor halves in height and width. Checks:
 *  - the first push after it raises HR_EVENT_REPLANNED and not HR_EVENT_STATE_RESET;
 *  - each carried tensor is the old one resampled: at exactly half the size, bilinear with
 *    half-pixel centres is the mean of each 2x2 block (within 1e-6 of the block's magnitude);
 *  - the carried state is not zero, and the matte differs from a fresh session's at 0.25;
 *  - with replan_resets_state the state is zero, both events are raised, and the matte equals a
 *    fresh session's bit for bit;
 *  - back up (0.25 -> 0.5, each tensor doubled): every value lies between its 2x2 source
 *    neighbourhood's min and max (an interpolation, not an extrapolation), none is NaN;
 *  - the stream's replans for a change of speed (hr__session_replan_keep) give the same matte. */
#include <math.h>
#include <string.h>
#include "hr_test_frames.h"
#include "session/session_impl.h"

#define NF 6
#define S 256

static hr_session *make(hr_model *m, float ratio, bool resets) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = S; p.height = S; p.downsample_ratio = ratio; p.threads = 1; p.replan_resets_state = resets;
  hr_session *s = NULL;
  char err[400] = "";
  hr_status st = hr_session_create_err(m, &p, &s, err, sizeof err);
  CHECKF(st == HR_OK, "create at ratio %g: %s", (double)ratio, err);
  return s;
}

/* The state tensors' copies and their sides (square: S x S frames), RVM's channels found from the
 * lengths: r1..r4 at 1/2, 1/4, 1/8, 1/16 of the processing side. */
typedef struct snap { int n; float *v[8]; size_t len[8]; int side[8]; int64_t ch[8]; } snap;
static void take(const hr_session *s, int proc_side, snap *o) {
  const float *ptr[8];
  memset(o, 0, sizeof *o);
  o->n = hr_session_state_views(s, ptr, o->len, 8);
  for (int k = 0; k < o->n; k++) {
    o->v[k] = malloc(o->len[k] * sizeof(float));
    memcpy(o->v[k], ptr[k], o->len[k] * sizeof(float));
    o->side[k] = proc_side >> (k + 1);
    o->ch[k] = (int64_t)(o->len[k] / ((size_t)o->side[k] * (size_t)o->side[k]));
    CHECKF((size_t)o->ch[k] * o->side[k] * o->side[k] == o->len[k], "state %d: %zu floats is not %d x %d x C", k, o->len[k], o->side[k],
           o->side[k]);
  }
}
static void drop(snap *o) { for (int k = 0; k < o->n; k++) free(o->v[k]); }
static double absmax(const float *v, size_t n) { double m = 0; for (size_t i = 0; i < n; i++) m = fmax(m, fabs(v[i])); return m; }

int main(void) {
  hr_model *m; hr_source *src; hr_frame fr[NF];
  if (!hr_test_rvm_frames(&m, &src, fr, NF)) { hr_source_destroy(src); hr_model_destroy(m); return hr_test_finish("test_session_replan_state"); }
  /* the bedroom frames are 960x540: pushed to a 256x256 session they are resampled on ingest */
  hr_session *a = make(m, 0.5f, false), *b = make(m, 0.5f, true);
  hr_outputs o;
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_INT(hr_session_push(a, &fr[i], &o), HR_OK);
    CHECK_EQ_INT(hr_session_push(b, &fr[i], &o), HR_OK);
  }
  snap before;
  take(a, S / 2, &before);
  CHECK_EQ_INT(before.n, 4);

  /* down: 0.5 -> 0.25, carried */
  CHECK_EQ_INT(hr_session_replan(a, S, S, 0.25f), HR_OK);
  snap down;
  take(a, S / 4, &down);
  CHECK_EQ_INT(down.n, before.n);
  double worst = 0;
  for (int k = 0; k < down.n && k < before.n; k++) {
    CHECK_EQ_INT(down.ch[k], before.ch[k]);
    CHECK_EQ_INT(down.side[k] * 2, before.side[k]);
    const int is = before.side[k], os = down.side[k];
    const int64_t C = before.ch[k];
    double scale = absmax(before.v[k], before.len[k]);
    CHECKF(scale > 0, "state %d was zero before the replan (4 frames pushed)", k);
    for (int y = 0; y < os; y++)
      for (int x = 0; x < os; x++)
        for (int64_t c = 0; c < C; c++) {
          const float *p = before.v[k];
          double mean = ((double)p[((int64_t)(2 * y) * is + 2 * x) * C + c] + p[((int64_t)(2 * y) * is + 2 * x + 1) * C + c] +
                         p[((int64_t)(2 * y + 1) * is + 2 * x) * C + c] + p[((int64_t)(2 * y + 1) * is + 2 * x + 1) * C + c]) / 4;
          double d = fabs(down.v[k][((int64_t)y * os + x) * C + c] - mean) / (scale > 0 ? scale : 1);
          if (d > worst) worst = d;
        }
  }
  printf("0.5 -> 0.25, carried: state tensors vs the 2x2 means of the old ones: worst |d| %.3g of each tensor's max\n", worst);
  CHECK(worst <= 1e-6);
  CHECK_EQ_INT(hr_session_push(a, &fr[4], &o), HR_OK);
  CHECKF((o.events & HR_EVENT_REPLANNED) && !(o.events & HR_EVENT_STATE_RESET), "events 0x%x after a carried replan", o.events);
  /* a fresh session at 0.25 has a zero state: its matte must differ from the carried one */
  hr_session *fresh = make(m, 0.25f, false);
  hr_outputs of;
  CHECK_EQ_INT(hr_session_push(fresh, &fr[4], &of), HR_OK);
  size_t npx = (size_t)o.width * o.height, ndiff = 0;
  for (size_t i = 0; i < npx; i++) ndiff += o.alpha[i] != of.alpha[i];
  printf("first matte after the carried replan: %zu of %zu pixels differ from a fresh session's\n", ndiff, npx);
  CHECK(ndiff > npx / 100);

  /* the same replan with replan_resets_state: zero state, both events, a fresh session's matte */
  CHECK_EQ_INT(hr_session_replan(b, S, S, 0.25f), HR_OK);
  snap z;
  take(b, S / 4, &z);
  for (int k = 0; k < z.n; k++) CHECKF(absmax(z.v[k], z.len[k]) == 0, "state %d not zero after a replan that resets", k);
  hr_outputs ob;
  CHECK_EQ_INT(hr_session_push(b, &fr[4], &ob), HR_OK);
  CHECKF((ob.events & HR_EVENT_REPLANNED) && (ob.events & HR_EVENT_STATE_RESET), "events 0x%x after a resetting replan", ob.events);
  CHECK(ob.width == of.width && ob.height == of.height && !memcmp(ob.alpha, of.alpha, npx * sizeof(float)));

  /* up: 0.25 -> 0.5 after one more frame; every carried value within its source neighbourhood */
  snap mid;
  take(a, S / 4, &mid);
  CHECK_EQ_INT(hr_session_replan(a, S, S, 0.5f), HR_OK);
  snap up;
  take(a, S / 2, &up);
  long outside = 0, nan = 0, total = 0;
  for (int k = 0; k < up.n && k < mid.n; k++) {
    const int is = mid.side[k], os = up.side[k];
    const int64_t C = mid.ch[k];
    CHECK_EQ_INT(os, 2 * is);
    for (int y = 0; y < os; y++)
      for (int x = 0; x < os; x++) {
        /* half-pixel centres: output y samples the source at y / 2 - 0.25, between rows y0 and y1 */
        int y0 = y == 0 ? 0 : (y - 1) / 2, y1 = y0 + 1 < is ? y0 + 1 : is - 1;
        int x0 = x == 0 ? 0 : (x - 1) / 2, x1 = x0 + 1 < is ? x0 + 1 : is - 1;
        for (int64_t c = 0; c < C; c++) {
          const float *p = mid.v[k];
          float q[4] = {p[((int64_t)y0 * is + x0) * C + c], p[((int64_t)y0 * is + x1) * C + c], p[((int64_t)y1 * is + x0) * C + c],
                        p[((int64_t)y1 * is + x1) * C + c]};
          float lo = fminf(fminf(q[0], q[1]), fminf(q[2], q[3])), hi = fmaxf(fmaxf(q[0], q[1]), fmaxf(q[2], q[3]));
          float v = up.v[k][((int64_t)y * os + x) * C + c];
          nan += v != v;
          outside += v < lo - 1e-6f * fabsf(lo) || v > hi + 1e-6f * fabsf(hi);
          total++;
        }
      }
  }
  printf("0.25 -> 0.5, carried: %ld of %ld values outside their 2x2 source neighbourhood, %ld NaN\n", outside, total, nan);
  CHECK_EQ_INT(outside, 0);
  CHECK_EQ_INT(nan, 0);
  CHECK_EQ_INT(hr_session_push(a, &fr[5], &o), HR_OK);
  CHECK((o.events & HR_EVENT_REPLANNED) && !(o.events & HR_EVENT_STATE_RESET));

  /* the stream's replan for a change of speed (hr__session_replan_keep: the replaced plan's pages
   * stay in the heap) is the same replan: the same events and, over the same frames and changes,
   * the same matte bit for bit (ASan's leak check sees the replaced plan freed) */
  hr_session *k = make(m, 0.5f, false);
  hr_outputs ok;
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(hr_session_push(k, &fr[i], &ok), HR_OK);
  CHECK_EQ_INT(hr__session_replan_keep(k, S, S, 0.25f), HR_OK);
  CHECK_EQ_INT(hr_session_push(k, &fr[4], &ok), HR_OK);
  CHECKF((ok.events & HR_EVENT_REPLANNED) && !(ok.events & HR_EVENT_STATE_RESET), "events 0x%x after a kept-heap replan", ok.events);
  CHECK_EQ_INT(hr__session_replan_keep(k, S, S, 0.5f), HR_OK);
  CHECK_EQ_INT(hr_session_push(k, &fr[5], &ok), HR_OK);
  CHECK(ok.width == o.width && ok.height == o.height && !memcmp(ok.alpha, o.alpha, (size_t)o.width * o.height * sizeof(float)));
  printf("replans keeping the heap: the matte after 0.5 -> 0.25 -> 0.5 %s the plain replans'\n",
         ok.alpha && !memcmp(ok.alpha, o.alpha, (size_t)o.width * o.height * sizeof(float)) ? "equals" : "DIFFERS from");
  hr_session_destroy(k);

  drop(&before); drop(&down); drop(&z); drop(&mid); drop(&up);
  hr_session_destroy(a); hr_session_destroy(b); hr_session_destroy(fresh);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_session_replan_state");
}
