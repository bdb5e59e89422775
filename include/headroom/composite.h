/* headroom composite: the picture a video call or a recorder wants, made from a frame and the
 * stream's matte: the person over a blurred copy of the frame, a solid colour or an image, or the
 * matte alone; and what to show when the matte cannot be trusted (the health fallback policy).
 * Included by headroom.h.
 *
 * Phases, as everywhere in headroom: hr_compositor_create allocates everything (the background
 * picture for color/image/video, the blur's low-resolution planes and row tables, the 8-bit matte it
 * keeps for `hold`); hr_compositor_apply allocates nothing and copies no whole frame: it reads the
 * input and the matte and writes the output frame, which may be the input frame itself (in place).
 *
 * Blending, per sample: a = the matte quantised to 8 bits (a255 = round(alpha x 255), as the CLI's
 * alpha PNGs), widened to a256 = a255 + (a255 >> 7) in 0..256; out = bg + (((in - bg) x a256 + 128)
 * >> 8). So a matte of 1 gives the input sample exactly and a matte of 0 the background exactly.
 * 4:2:0 chroma uses the mean of the 2x2 a256 it covers ((sum + 2) >> 2).
 *
 * Colours: YUV outputs take a colour or an image through BT.601 (full or video range, as the
 * frame's format says); the blur runs on the planes themselves (Y, and the chroma planes at their
 * own resolution), so no colour conversion happens per frame.
 *
 * Threads: one compositor is driven by one thread at a time. */
#ifndef HEADROOM_COMPOSITE_H
#define HEADROOM_COMPOSITE_H
#include "headroom/core.h"
#include "headroom/health.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_compositor hr_compositor;

/* What is drawn behind the person. */
typedef enum hr_composite_mode {
  HR_COMPOSITE_MODE_BLUR = 0,      /* the frame itself, blurred (blur_radius) */
  HR_COMPOSITE_MODE_COLOR,         /* one colour (color) */
  HR_COMPOSITE_MODE_IMAGE,         /* a picture (image), scaled to cover the frame, centred */
  HR_COMPOSITE_MODE_ALPHA,         /* the matte alone, its 8-bit values unscaled (a255): Y = matte
                                      and chroma 128 whatever the format's range; R = G = B = matte
                                      (BGRA's A 255); with out_rgba the input's colours, A = matte */
  HR_COMPOSITE_MODE_VIDEO,         /* frames the caller hands over with hr_compositor_set_background
                                      (e.g. a looped video file), each scaled to cover the frame as
                                      image is; black until the first */
} hr_composite_mode;

/* What a frame whose matte is not to be trusted shows (health not HEALTHY / WARMING_UP, no matte
 * because the stream was suspended, or the verdict says output_ok = false). */
typedef enum hr_composite_fallback {
  HR_COMPOSITE_FALLBACK_HOLD = 0,  /* the last good matte over this frame (before any good matte:
                                      blur-all) */
  HR_COMPOSITE_FALLBACK_BLUR_ALL,  /* the whole frame blurred: nothing shows sharply */
  HR_COMPOSITE_FALLBACK_PASSTHROUGH, /* the frame unchanged: nothing is hidden */
} hr_composite_fallback;

/* What a frame actually showed: the caller announces a change (never silent). */
typedef enum hr_composite_action {
  HR_COMPOSITE_ACTION_MATTE = 0,   /* this frame's matte */
  HR_COMPOSITE_ACTION_HOLD,        /* the last good matte (fallback hold) */
  HR_COMPOSITE_ACTION_BLUR_ALL,    /* fallback blur-all */
  HR_COMPOSITE_ACTION_PASSTHROUGH, /* fallback passthrough */
} hr_composite_action;

/* "matte", "hold", "blur-all", "passthrough"; "unknown" otherwise. Static strings. */
HR_API const char *hr_composite_action_name(hr_composite_action a);
/* "blur", "color", "image", "alpha", "video". Static strings. */
HR_API const char *hr_composite_mode_name(hr_composite_mode m);

typedef struct hr_composite_params {
  int width, height;           /* frame size in pixels (4:2:0 formats: even). No default. */
  hr_pixfmt format;            /* input frame format: NV12 / I420 (either range), BGRA, RGB24.
                                  No default. */
  bool out_rgba;               /* write R G B A (4 bytes a pixel, A = the matte shown, 255 where none)
                                  instead of the input's format. Needs a BGRA or RGB24 input.
                                  Default false. */
  hr_composite_mode mode;      /* Default HR_COMPOSITE_MODE_BLUR. */
  int blur_radius;             /* blur strength in pixels of the frame (about twice the Gaussian
                                  sigma), 1..512. Used by mode blur and by the blur-all fallback.
                                  Default 24. */
  uint32_t color;              /* 0xRRGGBB for mode color. Default 0x00B140 (a chroma green). */
  const uint8_t *image;        /* mode image: R G B pixels (image_width x image_height, image_stride
                                  bytes a row), read during create only (scaled and converted
                                  there). Default NULL. */
  int image_width, image_height;
  ptrdiff_t image_stride;
  hr_composite_fallback fallback; /* Default HR_COMPOSITE_FALLBACK_HOLD. */
} hr_composite_params;

/* Defaults as documented above (width, height, format left 0). */
HR_API void hr_composite_params_default(hr_composite_params *p);

/* Parse a background spec into p->mode (and its value): "blur", "blur:RADIUS", "color:RRGGBB"
 * (or "#RRGGBB"), "image:FILE", "video:FILE", "alpha". For image and video the file is not read
 * here (the core library decodes no images or video): *image_path points into spec (FILE), and
 * the caller decodes it: an image into p->image*, a video's frames through
 * hr_compositor_set_background; otherwise *image_path is NULL. HR_EINVAL with a one-line message
 * in err. */
HR_API hr_status hr_composite_parse(const char *spec, hr_composite_params *p, const char **image_path, char *err, size_t err_len);
/* "hold", "blur-all", "passthrough" into p->fallback. HR_EINVAL with a message otherwise. */
HR_API hr_status hr_composite_parse_fallback(const char *spec, hr_composite_params *p, char *err, size_t err_len);

/* Allocate everything for frames of p's size and format. On failure *out is NULL, err holds one
 * line: HR_EINVAL (bad size, radius, missing image), HR_ENOTSUP (a format it cannot composite, or
 * out_rgba from YUV), HR_ENOMEM. */
HR_API hr_status hr_compositor_create(const hr_composite_params *p, hr_compositor **out, char *err, size_t err_len);
/* NULL-safe. */
HR_API void hr_compositor_destroy(hr_compositor *c);

/* Where the output goes: planes of the output format (input's format, or R G B A), writable. The
 * output may be the input frame's own planes (in place). */
typedef struct hr_composite_out {
  uint8_t *planes[3];
  ptrdiff_t strides[3];
} hr_composite_out;

/* One frame's outcome. */
typedef struct hr_composite_result {
  hr_composite_action action;  /* what this frame showed */
  bool changed;                /* action differs from the previous frame's, or a fallback's cause
                                  (the health state) changed, e.g. suspended -> recalibrating (the
                                  first frame: true when it is not MATTE): announce it */
  const char *reason;          /* why a fallback ("health degraded", "suspended: no matte", ...),
                                  "" for MATTE. Owned by the compositor, valid until the next apply. */
} hr_composite_result;

/* Composite one frame. in: a frame of the created size and format. alpha: width x height floats in
 * [0,1] (the stream's alpha at frame size), or NULL (no matte this frame). health: the stream's
 * verdict for this frame, or NULL (treated as HEALTHY). The matte is used when alpha is non-NULL
 * and health is HEALTHY or WARMING_UP with output_ok; otherwise the fallback applies. No
 * allocation. HR_EINVAL (nothing written) for a frame of another size or format, or NULL planes. */
HR_API hr_status hr_compositor_apply(hr_compositor *c, const hr_frame *in, const float *alpha, const hr_health_verdict *health,
                                     const hr_composite_out *out, hr_composite_result *res);
/* The same with the stream's 8-bit matte (hr_stream_result.alpha_u8: width x height bytes, a255 =
 * round(alpha x 255), ties to even), or NULL: the same output as hr_compositor_apply given the floats
 * those bytes were made from, without a float matte (a stream with alpha_u8_only) and without the
 * pass that quantises one (11 MB of floats read at 1920x1440). */
HR_API hr_status hr_compositor_apply_u8(hr_compositor *c, const hr_frame *in, const uint8_t *alpha_u8, const hr_health_verdict *health,
                                        const hr_composite_out *out, hr_composite_result *res);

/* The 8-bit matte (width x height, a255) of the last frame that had a good one, or NULL before any:
 * what `hold` shows. Owned by the compositor, changed by the next apply. */
HR_API const uint8_t *hr_compositor_matte(const hr_compositor *c);

/* The background for the frames that follow (modes image and video): bg, a frame of any colour
 * format and size (NV12, I420, BGRA, RGB24, ...), scaled to cover the compositor's frame size
 * (the larger of the two scales, centred, bilinear) and converted into the output's format now;
 * bg is not read after the call. Call it before hr_compositor_apply whenever the background
 * changes (e.g. once per output frame with the next frame of a looped video). Allocation: the
 * first call, and a call with a wider frame than any before, allocates two rows of bg's width;
 * otherwise none. HR_EINVAL (message in hr_compositor_last_error) for another mode or a frame
 * hr_frame_validate refuses or without colour. */
HR_API hr_status hr_compositor_set_background(hr_compositor *c, const hr_frame *bg);

/* Last error message ("" if none). */
HR_API const char *hr_compositor_last_error(const hr_compositor *c);

#ifdef __cplusplus
}
#endif
#endif
