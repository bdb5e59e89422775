/* State snapshots: a versioned blob (magic, version, model fingerprint, shapes, checksum) saved and loaded all-or-nothing. */
#include <stdio.h>
#include <string.h>
#include "session/session_impl.h"
#include "backend/backend.h"

#define HR_STATE_MAGIC "HRSTATE1"
#define HR_STATE_VERSION 1u

typedef struct blob_hdr {
  char magic[8];
  uint32_t version, n_state;
  uint64_t fingerprint;
  int32_t width, height;
  float ratio;
  uint32_t reserved;
  int64_t frame_index;
  uint64_t checksum;          /* FNV-1a over this header (checksum field zeroed) and the state bytes */
  int64_t dims[8][4];
} blob_hdr;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

size_t hr_session_state_size(const hr_session *s) {
  if (!s || !s->plan) return 0;
  size_t n = sizeof(blob_hdr);
  for (int k = 0; k < s->plan->n_state; k++) n += (size_t)s->plan->state_bytes[k];
  return n;
}

static void fill_hdr(const hr_session *s, blob_hdr *h) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, HR_STATE_MAGIC, 8);
  h->version = HR_STATE_VERSION;
  h->n_state = (uint32_t)s->plan->n_state;
  h->fingerprint = s->m->fingerprint;
  h->width = s->plan->width; h->height = s->plan->height; h->ratio = s->plan->ratio;
  h->frame_index = s->frame_index;
  for (int k = 0; k < s->plan->n_state; k++) {
    const hr__tensor *t = &s->plan->vals[s->plan->state_val[k]].t;
    for (int d = 0; d < 4 && d < t->rank; d++) h->dims[k][d] = t->dims[d];
  }
}

hr_status hr_session_state_save(const hr_session *s, void *buf, size_t len, size_t *written) {
  if (!s || !buf) return HR_EINVAL;
  if (!s->plan) return HR_EMISUSE;
  size_t need = hr_session_state_size(s);
  if (len < need) return HR_ERANGE;
  blob_hdr h;
  fill_hdr(s, &h);
  uint64_t cs = 1469598103934665603ull;
  char *p = (char *)buf + sizeof h;
  for (int k = 0; k < s->plan->n_state; k++) {
    hr_status st = s->bk->state_read((hr_session *)s, s->bimpl, k, p);
    if (st) return st;
    p += s->plan->state_bytes[k];
  }
  cs = fnv(cs, (char *)buf + sizeof h, need - sizeof h);
  h.checksum = 0;
  h.checksum = fnv(cs, &h, sizeof h);
  memcpy(buf, &h, sizeof h);
  if (written) *written = need;
  return HR_OK;
}

hr_status hr_session_state_load(hr_session *s, const void *buf, size_t len) {
  if (!s || !buf) return HR_EINVAL;
  if (!s->plan) { snprintf(s->err, sizeof s->err, "session is suspended"); return HR_EMISUSE; }
#define REFUSE(st, ...) do { snprintf(s->err, sizeof s->err, __VA_ARGS__); return st; } while (0)
  blob_hdr h, mine;
  if (len < sizeof h) REFUSE(HR_ECORRUPT, "state blob truncated: %zu bytes, header alone is %zu", len, sizeof h);
  memcpy(&h, buf, sizeof h);
  if (memcmp(h.magic, HR_STATE_MAGIC, 8)) REFUSE(HR_ECORRUPT, "not a headroom state blob (bad magic)");
  if (h.version != HR_STATE_VERSION) REFUSE(HR_EMISMATCH, "state blob version %u, this build reads %u", h.version, HR_STATE_VERSION);
  /* the blob's own length, from its header's shapes; then integrity over header + payload, so no
   * corrupted field is trusted below; then model and configuration */
  if (h.n_state > 8) REFUSE(HR_ECORRUPT, "state blob header is corrupt (%u state tensors)", h.n_state);
  size_t claimed = sizeof h;
  for (uint32_t k = 0; k < h.n_state; k++) {
    int64_t n = 1;
    for (int d = 0; d < 4; d++) {
      if (h.dims[k][d] < 0 || h.dims[k][d] > (1 << 20)) REFUSE(HR_ECORRUPT, "state blob header is corrupt (shape)");
      n *= h.dims[k][d] ? h.dims[k][d] : 1;
      if (n > ((int64_t)1 << 32)) REFUSE(HR_ECORRUPT, "state blob header is corrupt (shape)");
    }
    claimed += (size_t)n * 4;
  }
  if (len != claimed) REFUSE(HR_ECORRUPT, "state blob is %zu bytes but its header describes %zu (truncated or padded)", len, claimed);
  uint64_t cs = 1469598103934665603ull;
  cs = fnv(cs, (const char *)buf + sizeof h, len - sizeof h);
  blob_hdr hz = h;
  hz.checksum = 0;
  if (fnv(cs, &hz, sizeof hz) != h.checksum) REFUSE(HR_ECORRUPT, "state blob checksum mismatch (corrupted bytes)");
  fill_hdr(s, &mine);
  if (h.fingerprint != mine.fingerprint) REFUSE(HR_EMISMATCH, "state blob is from another model (fingerprint %016llx, this model %016llx)",
                                                (unsigned long long)h.fingerprint, (unsigned long long)mine.fingerprint);
  if (h.n_state != mine.n_state || memcmp(h.dims, mine.dims, sizeof h.dims) || h.width != mine.width ||
      h.height != mine.height || h.ratio != mine.ratio)
    REFUSE(HR_EMISMATCH, "state blob is for input %dx%d ratio %g; this session runs %dx%d ratio %g",
           h.width, h.height, h.ratio, mine.width, mine.height, mine.ratio);
  /* everything checked: now change the session */
  const char *p = (const char *)buf + sizeof h;
  for (int k = 0; k < s->plan->n_state; k++) {
    hr_status st = s->bk->state_write(s, s->bimpl, k, p);
    if (st) return st; /* only a device lost: the session is unusable anyway */
    p += s->plan->state_bytes[k];
  }
  s->frame_index = h.frame_index;
  return HR_OK;
#undef REFUSE
}
