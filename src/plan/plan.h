/* The plan: a static op list for one (input size, ratio), value storage and the liveness-planned arena. */
#ifndef HR_PLAN_PLAN_H
#define HR_PLAN_PLAN_H
#include "graph/ir.h"

typedef enum hr__vkind { V_UNSET = 0, V_CONST, V_DYN, V_DEAD, V_CTRL, V_VISITING } hr__vkind;
typedef enum hr__storage { S_NONE = 0, S_ARENA, S_STATE, S_SRC, S_CONST } hr__storage;

typedef struct hr__val {
  hr__vkind kind;
  hr__tensor t;        /* dtype and shape; data for constants */
  int root;            /* value that owns the storage (self for owners, else alias target) */
  hr__storage storage; /* for roots */
  int slot;            /* S_STATE: state index */
  int64_t offset;      /* S_ARENA: byte offset */
  int def, last;       /* op index of definition and last read (roots), for liveness */
  int n_readers;       /* runtime ops reading this value (through aliases too, counted on the root) */
  int src_virtual;     /* S_SRC value that is never materialised (read through the ingest row reader) */
} hr__val;

#define HR_ROP_MAX_IN 8
typedef struct hr__rop {
  hr__op op;
  const hr__node *node;    /* the TF node, or NULL for synthesized ops */
  hr__node syn;            /* storage for synthesized ops' attributes */
  int n_in, n_out;
  int in[HR_ROP_MAX_IN];   /* value ids */
  int out[HR_MAX_OUT];
  double flops;
  int dead;                /* removed by a lowering pass */
  int out_c_off, out_c_total; /* resize writing into a channel slice of a concat's output (0 = dense) */
  uint32_t in_place_mask;  /* concat: inputs already written into their slice by their producer */
} hr__rop;

/* RVM's low-resolution guided filter, found by lower.c (pass_fgf_lowres): the ops [first, last]
 * compute A and b (the tail's coefficients) from the network's 4-channel output y and the image
 * at processing size (x = its 3 channels and their mean):
 *   box(v) = H(V(v)), V a KHx1 and H a 1xKW VALID depthwise convolution (per-channel weights);
 *   mx = box(x), my = box(y), mxy = box(x*y), mxx = box(x*x);
 *   A = (mxy - mx*my) / (mxx + (eps - mx*mx)),  b = my - A*mx.
 * The op list keeps every op (other backends run them); the CPU backend runs the group as one
 * kernel at op last (exec.c), so the plan keeps y and the image alive through op last.
 * first < 0: not found. */
typedef struct hr__fgf_lr {
  int first, last;
  int y, src, A, b;            /* value ids */
  int wv[4], wh[4];            /* the boxes' weight constants, in the order x*y, x, y, x*x */
  float eps;
} hr__fgf_lr;

typedef struct hr__plan {
  const hr_model *m;
  int width, height;       /* src size */
  float ratio;
  int proc_w, proc_h;      /* processing size (r1 is at half of it) */
  int n_vals;
  hr__val *vals;           /* n_nodes * HR_MAX_OUT */
  int n_rops, cap_rops;
  hr__rop *rops;
  int64_t arena_bytes;
  int n_state;
  int state_val[8];        /* value id of rNi (root) */
  int64_t state_bytes[8];
  int state_inplace[8];    /* rNo written over rNi */
  int alpha_val, fgr_val;  /* value ids of outputs */
  int src_val;
  double flops;
  hr__fgf_lr fgf_lr;         /* see hr__fgf_lr */
  int64_t kernel_bytes_est;  /* estimate of a session's own kernel memory (operator structs, our tables) */
  int64_t kernel_shared_est; /* estimate of the shareable part (XNNPACK packed weights, indirection) */
  int n_const_alloc;
  void **const_alloc;      /* folded constants, owned by the plan */
  int64_t const_bytes;     /* their bytes */
  int64_t meta_bytes;      /* the plan's own memory: this struct, value and op tables, folded constants */
  char err[512];
} hr__plan;

enum {
  HR__PLAN_VIRTUAL_SRC = 1u, /* frames arrive at the input size: the input may be read in place */
  HR__PLAN_NO_LOWER = 2u,    /* keep the graph's own ops (the reference oracle runs this) */
};

/* Build a plan for src WxH and ratio (ignored if the model has none). Allocates the plan only
 * (no arena). want_fgr: also compute the foreground output. */
hr_status hr__plan_build(const hr_model *m, int width, int height, float ratio, int want_fgr, unsigned flags,
                         hr__plan **out, char *err, size_t err_len);
void hr__plan_free(hr__plan *p);
/* Horizontal bands of a large convolution (issue 15). XNNPACK's indirection buffer holds a pointer
 * per output pixel and kernel tap (12.4 MB for a 3x3 convolution at 480x360), built at setup and
 * kept by the operator. A (non-depthwise) convolution whose buffer would exceed HR__BAND_MIN_BYTES
 * runs instead as horizontal bands of output rows, each an operator set up on the band's own input
 * rows with the padding that band sees. The first band holds the rows that read the top padding
 * and the rows left over by the even division, the last the rows that read the bottom padding;
 * the bands between have one shape, about HR__BAND_BYTES of indirection each, and there are
 * HR__BAND_MIN_COUNT to HR__BAND_MAX of them. Operators of one band shape are clones of one
 * kernel-cache template (shared by the bands and by the sessions), so three bands' buffers are
 * held instead of the image's. The bands are the thread pool's tasks, one dispatch for the
 * convolution (exec.c). Results are those of the whole convolution, bit for bit: every output
 * pixel sums the same taps in the same order. */
#define HR__BAND_MIN_BYTES (512 << 10)
#define HR__BAND_BYTES (512 << 10)
#define HR__BAND_MIN_COUNT 24
#define HR__BAND_MAX 128
typedef struct hr__band {
  int64_t out0, out_rows;  /* output rows [out0, out0 + out_rows) */
  int64_t in0, in_rows;    /* the input rows they read (within the image) */
  int pt, pb;              /* the padding rows above and below those, as the band's operator sees them */
} hr__band;
/* The bands of a convolution of batch n, input height ih, output oh x ow, kernel kh x kw, vertical
 * stride sh, dilation dh and top padding pt: their count (0: it runs whole); with b, also the
 * bands (b has room for the count: call once without b to know it). */
int hr__conv_bands(int64_t n, int64_t ih, int64_t oh, int64_t ow, int kh, int kw, int sh, int dh, int pt, hr__band *b);
/* A resize-concat is made inside the tasks of the banded convolution that reads it (exec.c,
 * fuse_resize_conv; the plan keeps its sources alive for it) only where the input rows the bands
 * read, each band's halo included, are at most 5/4 of the image's rows: a halo row is made twice. */
static inline int hr__bands_halo_ok(int64_t rows_read, int64_t rows) { return 4 * rows_read <= 5 * rows; }

/* Op i is a convolution the CPU engine runs as Winograd F(4x4, 3x3) (session/wino.h, exec.c): a
 * float 3x3 one of stride 1 with one pixel of padding around (the output the input's size), constant
 * weights, on a CPU with AVX-512F (hr__wino_ok), its input not the caller's frame; not one whose only
 * reader is the next op where that is a HardSwish or a pointwise convolution, nor one whose input a
 * resize-concat just before makes, in bands with a small halo (exec.c runs those with XNNPACK's
 * bands and the other op on each band's rows: fuse_conv_hswish, fuse_conv_pw, fuse_resize_conv).
 * The estimate of kernel memory and the engine both ask this. */
int hr__plan_wino(const hr__plan *p, int i);

/* Tensor view of value v given the arena base and state buffers. */
hr__tensor hr__plan_view(const hr__plan *p, int v, void *arena, float *const *state, const float *src);
#endif
