/* The health monitor's entry points for the library's own callers (the stream). */
#ifndef HR_HEALTH_INTERNAL_H
#define HR_HEALTH_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>
#include "headroom.h"

/* hr_health_observe_output with the full scan's figures made by the caller in a pass of its own over
 * the matte (kernels.h hr__k_alpha_scan: its sum and NaN/Inf count): the monitor then reads only
 * its sampled rows. Same verdicts as hr_health_observe_output up to the sum's rounding. */
hr_status hr__health_observe_output_scanned(hr_health *h, const float *alpha, int width, int height, double sum,
                                            int64_t nonfinite, const float *const *state, const size_t *state_len,
                                            int n_state, hr_health_verdict *out);
/* The same on the 8-bit matte (alpha8, width x height: the value k / 255), with the caller's sum of
 * its bytes and count of the NaN/Inf values it was made from (NaN shows as 0), in every mode: the
 * stream's when no float matte is made (hr_stream_params.alpha_u8_only). */
hr_status hr__health_observe_output_u8(hr_health *h, const uint8_t *alpha8, int width, int height, int64_t byte_sum,
                                       int64_t nonfinite, const float *const *state, const size_t *state_len, int n_state,
                                       hr_health_verdict *out);
/* Whether the monitor wants every pixel (hr_health_params.full_scan). */
bool hr__health_full_scan(const hr_health *h);
#endif
