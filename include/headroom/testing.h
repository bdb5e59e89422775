/* headroom testing hooks: the pieces that play the world in tests and demos, not promises of the
 * runtime API. A memory-pressure generator (the host app growing: hr_ballast) and a fault injector
 * (bad input, NaN state, stuck output, memory pressure: hr_fault). Not included by headroom.h;
 * they may change between versions without notice. */
#ifndef HEADROOM_TESTING_H
#define HEADROOM_TESTING_H
#include "headroom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Ballast: a memory-pressure generator that plays the host app in tests and demos. It allocates
 * with mmap directly (1 MB chunks, every page written so it is resident), outside any accounting
 * of the library's own allocations. Not for production use.
 * ------------------------------------------------------------------------------------------- */
typedef struct hr_ballast hr_ballast;

typedef struct hr_ballast_params {
  double rate_mb_s;        /* growth in MB per second, >= 0 */
  uint64_t max_mb;         /* stop growing here; default (when parsed without ":MAX") 65536 */
  double hold_s;           /* after reaching max, hold this long, then release everything (the
                              host app freed its memory: the recovery half of a pressure test);
                              0 = hold forever (default) */
} hr_ballast_params;

/* Parse "RATE[:MAX[:HOLD_S]]" (MB/s, MB, s), e.g. "50:300", "12.5", "50:250:10". HR_EINVAL with a message on error. */
HR_API hr_status hr_ballast_parse(const char *s, hr_ballast_params *out, char *err, size_t err_len);
/* Allocates only the chunk table (max_mb pointers). */
HR_API hr_status hr_ballast_create(const hr_ballast_params *p, hr_ballast **out);
/* Grow to min(max, floor(rate x elapsed_s)) MB, elapsed_s = seconds since the ballast started
 * (the caller's clock). Never shrinks. HR_ENOMEM if mmap fails (what was reached is kept). */
HR_API hr_status hr_ballast_tick(hr_ballast *b, double elapsed_s);
/* MB currently held. */
HR_API uint64_t hr_ballast_mb(const hr_ballast *b);
/* NULL-safe; unmaps everything. */
HR_API void hr_ballast_destroy(hr_ballast *b);

/* ---------------------------------------------------------------------------------------------
 * Fault injection, for tests and demos (headroom run --inject SPEC).
 *
 * SPEC is a comma-separated list of KIND@FRAME[:LEN]: fault KIND is active on frames
 * FRAME .. FRAME+LEN-1 (LEN default 1, >= 1), frame indices 0-based as the caller counts them.
 * Kinds:
 *   nan-state        write NaN into a state tensor (hr_fault_apply_state)
 *   freeze-input     the input repeats the frame before the fault (hr_fault_apply_input)
 *   black-input      the input is black
 *   white-input      the input is saturated white
 *   noise-input      the input is uniform noise (xorshift, fixed seed: reproducible)
 *   stuck-output     the caller keeps returning the alpha of the frame before the fault
 *                    (hr_fault_apply_output)
 *   memory-pressure  the caller's governor sees pressure: it is only reported by hr_fault_active,
 *                    what it means is the governor's business (e.g. a tightened ceiling)
 * Example: "black-input@60:20,nan-state@120,stuck-output@150:10".
 * ------------------------------------------------------------------------------------------- */
typedef enum hr_fault_kind {
  HR_FAULT_NONE = 0,
  HR_FAULT_NAN_STATE,
  HR_FAULT_FREEZE_INPUT,
  HR_FAULT_BLACK_INPUT,
  HR_FAULT_WHITE_INPUT,
  HR_FAULT_NOISE_INPUT,
  HR_FAULT_STUCK_OUTPUT,
  HR_FAULT_MEMORY_PRESSURE,
  HR_FAULT_N_KINDS
} hr_fault_kind;
#define HR_FAULT_BIT(kind) (1u << (kind))
#define HR_FAULT_MAX 16    /* entries in one spec */

typedef struct hr_fault_spec {
  hr_fault_kind kind;
  int64_t frame;           /* first frame */
  int64_t len;             /* frames, >= 1 */
} hr_fault_spec;

/* "nan-state", ...; "none" / "unknown". Static strings. */
HR_API const char *hr_fault_kind_name(hr_fault_kind k);
/* Parse SPEC into out[0..*n). Pure, no allocation. HR_EINVAL with a one-line message naming the
 * offending entry and listing the kinds; *n and out untouched on error. HR_ERANGE for more than max
 * entries. */
HR_API hr_status hr_fault_parse(const char *spec, hr_fault_spec *out, int max, int *n, char *err, size_t err_len);

typedef struct hr_fault_injector hr_fault_injector;
/* Parse SPEC and create an injector; seed drives noise-input. Allocates the small object only; the
 * copies that freeze-input and stuck-output replay are allocated on the frame before such a fault
 * starts (once per fault, when the held size grows), never otherwise. */
HR_API hr_status hr_fault_create(const char *spec, uint64_t seed, hr_fault_injector **out, char *err, size_t err_len);
HR_API void hr_fault_destroy(hr_fault_injector *inj);   /* NULL-safe */
/* HR_FAULT_BIT(kind) bits of the faults active at frame. 0 for NULL inj. */
HR_API uint32_t hr_fault_active(const hr_fault_injector *inj, int64_t frame);
/* Human-readable list of the faults active at frame ("black-input, nan-state") into buf; "" when
 * none. Returns buf. */
HR_API const char *hr_fault_describe(const hr_fault_injector *inj, int64_t frame, char *buf, size_t len);
/* Apply the input-side faults of frame to f, writing through f->planes (the caller's buffer must be
 * writable and stay the same format and size while a freeze replays). Call once per frame, in order,
 * also on frames without faults (it keeps the frame a freeze will replay). Priority when several
 * are active: freeze, black, white, noise. HR_ENOMEM if the held copy cannot be allocated (the
 * frame is left as it was). */
HR_API hr_status hr_fault_apply_input(hr_fault_injector *inj, int64_t frame, hr_frame *f);
/* Output side: returns the alpha the caller should use for frame: the held copy while stuck-output
 * is active, else alpha itself. Call once per frame, in order. Returns alpha on allocation failure
 * (and the fault then does nothing). */
HR_API const float *hr_fault_apply_output(hr_fault_injector *inj, int64_t frame, const float *alpha, int w, int h);
/* State side: while nan-state is active, writes NaN into every 64th element (from 0) of tensor
 * (frame mod n_state). Returns the tensor index written, or -1 if none. */
HR_API int hr_fault_apply_state(const hr_fault_injector *inj, int64_t frame, float *const *state,
                         const size_t *state_len, int n_state);

#ifdef __cplusplus
}
#endif
#endif
