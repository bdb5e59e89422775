/* Admission: the largest processing configuration that fits under the safe ceiling, or a refusal
 * that names the numbers. */
#include "gov/gov_internal.h"

#include <stdio.h>

hr_status hr_gov_admit(const hr_gov_admit_input *in, const hr_gov_candidate *cands, size_t n,
                       size_t *chosen, char *msg, size_t msg_len) {
  if (msg && msg_len) msg[0] = '\0';
  if (!in || !cands || n == 0 || !chosen) {
    if (msg && msg_len) snprintf(msg, msg_len, "admission: no candidates given");
    return HR_EINVAL;
  }
  bool limited = in->safe_bytes > 0;
  uint64_t used = in->baseline_rss_bytes + in->margin_bytes;
  uint64_t budget = !limited ? UINT64_MAX : (in->safe_bytes > used ? in->safe_bytes - used : 0);
  size_t best = n, smallest = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t need = in->fixed_bytes + cands[i].planned_bytes;
    if (cands[i].planned_bytes < cands[smallest].planned_bytes) smallest = i;
    if (need <= budget && (best == n || cands[i].planned_bytes > cands[best].planned_bytes)) best = i;
  }
  char bud[160];
  if (limited)
    snprintf(bud, sizeof bud, "budget %.1f MB (safe %.1f - baseline %.1f - margin %.1f)",
             hr__gov_mb((double)budget), hr__gov_mb((double)in->safe_bytes),
             hr__gov_mb((double)in->baseline_rss_bytes), hr__gov_mb((double)in->margin_bytes));
  else
    snprintf(bud, sizeof bud, "no ceiling");
  if (best == n) {
    const hr_gov_candidate *c = &cands[smallest];
    if (msg && msg_len)
      snprintf(msg, msg_len,
               "no configuration fits: smallest '%s' needs %.1f MB (fixed %.1f + %.1f) > %s",
               c->name ? c->name : "?", hr__gov_mb((double)(in->fixed_bytes + c->planned_bytes)),
               hr__gov_mb((double)in->fixed_bytes), hr__gov_mb((double)c->planned_bytes), bud);
    return HR_ENOFIT;
  }
  *chosen = best;
  if (msg && msg_len)
    snprintf(msg, msg_len, "admitted '%s': %.1f MB (fixed %.1f + %.1f) within %s",
             cands[best].name ? cands[best].name : "?",
             hr__gov_mb((double)(in->fixed_bytes + cands[best].planned_bytes)),
             hr__gov_mb((double)in->fixed_bytes), hr__gov_mb((double)cands[best].planned_bytes), bud);
  return HR_OK;
}
