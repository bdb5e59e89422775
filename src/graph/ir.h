/* Internal graph IR: tensors, ops, nodes and the loaded model, shared by loader, planner and kernels. */
#ifndef HR_GRAPH_IR_H
#define HR_GRAPH_IR_H

#include <stdint.h>
#include <stddef.h>
#include "headroom.h"

#define HR_MAX_RANK 6
#define HR_MAX_OUT 4

typedef enum hr__dtype { HR_DT_FLOAT = 0, HR_DT_INT32 = 1, HR_DT_BOOL = 2 } hr__dtype;

/* A tensor view: dtype, shape and a data pointer owned elsewhere (model, arena, or plan). */
typedef struct hr__tensor {
  hr__dtype dt;
  int rank;
  int64_t dims[HR_MAX_RANK];
  void *data;
} hr__tensor;

static inline int64_t hr__numel(const hr__tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}
static inline size_t hr__dtsize(hr__dtype dt) { return dt == HR_DT_BOOL ? 1 : 4; }

/* Every op the engine knows, with its TF name. X(enum, "TfName"). */
#define HR_OP_LIST(X)                                                                 \
  X(CONST, "Const") X(PLACEHOLDER, "Placeholder") X(IDENTITY, "Identity")             \
  X(NOOP, "NoOp") X(SWITCH, "Switch") X(MERGE, "Merge") X(EQUAL, "Equal")             \
  X(SQUEEZE, "Squeeze") X(SHAPE, "Shape") X(CAST, "Cast")                             \
  X(STRIDED_SLICE, "StridedSlice") X(PACK, "Pack") X(FLOORMOD, "FloorMod")           \
  X(MUL, "Mul") X(ADDV2, "AddV2") X(ADD, "Add") X(SUB, "Sub") X(REALDIV, "RealDiv")   \
  X(SQUARE, "Square") X(MINIMUM, "Minimum") X(MAXIMUM, "Maximum")                     \
  X(RELU6, "Relu6") X(RELU, "Relu") X(SIGMOID, "Sigmoid") X(TANH, "Tanh")             \
  X(FUSED_CONV2D, "_FusedConv2D") X(CONV2D, "Conv2D")                                 \
  X(FUSED_DWCONV, "FusedDepthwiseConv2dNative") X(DWCONV, "DepthwiseConv2dNative")    \
  X(PAD, "Pad") X(MEAN, "Mean") X(CONCAT, "ConcatV2") X(SPLIT, "Split")              \
  X(SPLITV, "SplitV") X(SLICE, "Slice") X(RESIZE_BILINEAR, "ResizeBilinear")          \
  X(AVGPOOL, "AvgPool") X(BROADCAST_TO, "BroadcastTo")                                \
  X(SPACE_TO_BATCH, "SpaceToBatchND") X(BATCH_TO_SPACE, "BatchToSpaceND")             \
  X(RESHAPE, "Reshape") X(MATMUL, "MatMul") X(BIAS_ADD, "BiasAdd") X(ADDN, "AddN")    \
  X(DECONV2D, "Conv2DBackpropInput")                                                  \
  /* ops made by our own lowering passes (not in TF graphs) */                        \
  X(HARDSWISH, "hr.HardSwish") X(FGF_TAIL, "hr.GuidedFilterTail")                     \
  X(SRC_RESIZE, "hr.SrcResize")

typedef enum hr__op {
#define HR__OPE(e, s) HR_OP_##e,
  HR_OP_LIST(HR__OPE)
#undef HR__OPE
  HR_OP__COUNT
} hr__op;

const char *hr__op_name(hr__op op);
int hr__op_from_name(const char *tf_name); /* -1 if unknown */

typedef enum hr__padding { HR_PAD_VALID = 0, HR_PAD_SAME = 1, HR_PAD_EXPLICIT = 2 } hr__padding;
typedef enum hr__act { HR_ACT_NONE = 0, HR_ACT_RELU = 1, HR_ACT_RELU6 = 2 } hr__act;

/* Parsed attributes: the union of what the supported ops use. */
typedef struct hr__attrs {
  int strides[4], dilations[4], ksize[4];
  hr__padding padding;
  int explicit_pad[8];
  int fused_bias;           /* fused_ops has BiasAdd */
  hr__act act;              /* fused activation */
  int keep_dims;
  int num_split;
  int axis;                 /* Pack axis */
  int half_pixel, align_corners;
  int begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
  int squeeze_dims[HR_MAX_RANK], n_squeeze;
  hr__dtype dst_type;       /* Cast */
  int transpose_a, transpose_b;
} hr__attrs;

typedef struct hr__edge { int node; int port; } hr__edge;

typedef struct hr__node {
  char *name;
  hr__op op;
  int n_in;                 /* data inputs */
  hr__edge *in;
  int n_ctrl;               /* control inputs (^name) */
  int *ctrl;
  hr__attrs a;
  hr__tensor value;         /* Const: the (dequantised) value; data owned by the model */
} hr__node;

typedef struct hr__sig { char *key; char *tensor; int node; int port; } hr__sig;

struct hr_model {
  char *path, *name;
  int n_nodes;
  hr__node *nodes;
  int n_inputs, n_outputs;
  hr__sig *inputs, *outputs;
  void *weights;            /* one block: all Const data */
  size_t weights_size;
  int64_t n_params;
  int op_count[HR_OP__COUNT];
  uint64_t fingerprint;     /* FNV-1a over the json + bin bytes */
  /* RVM-style roles, found by name */
  int in_src, in_ratio;     /* node ids or -1 */
  int n_state;
  int state_in[8], state_out[8]; /* signature index pairs rNi <-> rNo */
  int out_alpha, out_fgr;   /* signature output index, -1 if none */
  int fixed_w, fixed_h;
  struct hr__kcache *kcache; /* XNNPACK operators shared by the sessions (the one mutable part, locked) */
};

int hr__model_find_node(const hr_model *m, const char *name); /* -1 if none */
/* p points into the model's weight block (immutable while the model lives). */
static inline int hr__model_owns(const hr_model *m, const void *p) {
  return p && (const char *)p >= (const char *)m->weights && (const char *)p < (const char *)m->weights + m->weights_size;
}

#endif
