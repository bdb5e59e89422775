/* The Vulkan compute backend: the plan's ops as compute dispatches over one device buffer (arena at
 * the plan's offsets, recurrent state, weights), recorded once per plan and replayed per frame; the
 * frame uploaded through a host-visible staging buffer and converted on the GPU; alpha read back
 * into a mapped buffer that is the borrowed output. Values are stored as fp32, or as fp16 where the
 * device has 16-bit storage and HR_VK_FP16=1 asks for it (default off: on the H200 it bought no
 * speed, 3.58 vs 3.52 ms a 1920x1440 frame, and its alpha is 8x further from XNNPACK's, max 0.018),
 * at the same element offsets (the plan's byte offsets / 4): every sum is fp32 in the shaders, and
 * the host converts weights, state and read-back outputs (alpha and fgr are fp32 on the host). */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <vulkan/vulkan.h>
#include "backend/backend.h"
#include "backend/vulkan/vk_memory.h"
#include "graph/ops.h"
#include "ingest/ingest_kernels.h"

/* SPIR-V, compiled by glslc at build time (cmake/vulkan.cmake) */
static const uint32_t spv_conv[] =
#include "conv.spv.h"
    ;
static const uint32_t spv_conv_h[] =
#include "conv_h.spv.h"
    ;
static const uint32_t spv_conv4[] =
#include "conv4.spv.h"
    ;
static const uint32_t spv_conv4_h[] =
#include "conv4_h.spv.h"
    ;
static const uint32_t spv_convdw4[] =
#include "convdw4.spv.h"
    ;
static const uint32_t spv_convdw4_h[] =
#include "convdw4_h.spv.h"
    ;
static const uint32_t spv_convsk[] =
#include "convsk.spv.h"
    ;
static const uint32_t spv_convsk_h[] =
#include "convsk_h.spv.h"
    ;
static const uint32_t spv_convt[] =
#include "convt.spv.h"
    ;
static const uint32_t spv_convt_h[] =
#include "convt_h.spv.h"
    ;
static const uint32_t spv_convtk[] =
#include "convtk.spv.h"
    ;
static const uint32_t spv_convtk_h[] =
#include "convtk_h.spv.h"
    ;
static const uint32_t spv_convmma[] =
#include "convmma.spv.h"
    ;
static const uint32_t spv_convmma_h[] =
#include "convmma_h.spv.h"
    ;
static const uint32_t spv_convred[] =
#include "convred.spv.h"
    ;
static const uint32_t spv_convred_h[] =
#include "convred_h.spv.h"
    ;
static const uint32_t spv_convd3[] =
#include "convd3.spv.h"
    ;
static const uint32_t spv_convd3_h[] =
#include "convd3_h.spv.h"
    ;
static const uint32_t spv_meansk[] =
#include "meansk.spv.h"
    ;
static const uint32_t spv_meansk_h[] =
#include "meansk_h.spv.h"
    ;
static const uint32_t spv_binary[] =
#include "binary.spv.h"
    ;
static const uint32_t spv_binary_h[] =
#include "binary_h.spv.h"
    ;
static const uint32_t spv_unary[] =
#include "unary.spv.h"
    ;
static const uint32_t spv_unary_h[] =
#include "unary_h.spv.h"
    ;
static const uint32_t spv_mean[] =
#include "mean.spv.h"
    ;
static const uint32_t spv_mean_h[] =
#include "mean_h.spv.h"
    ;
static const uint32_t spv_avgpool[] =
#include "avgpool.spv.h"
    ;
static const uint32_t spv_avgpool_h[] =
#include "avgpool_h.spv.h"
    ;
static const uint32_t spv_resize[] =
#include "resize.spv.h"
    ;
static const uint32_t spv_resize_h[] =
#include "resize_h.spv.h"
    ;
static const uint32_t spv_copy[] =
#include "copy.spv.h"
    ;
static const uint32_t spv_copy_h[] =
#include "copy_h.spv.h"
    ;
static const uint32_t spv_srcresize[] =
#include "srcresize.spv.h"
    ;
static const uint32_t spv_srcresize_h[] =
#include "srcresize_h.spv.h"
    ;
static const uint32_t spv_fgf[] =
#include "fgf.spv.h"
    ;
static const uint32_t spv_fgf_h[] =
#include "fgf_h.spv.h"
    ;
static const uint32_t spv_cvt[] =
#include "cvt.spv.h"
    ;
static const uint32_t spv_cvt_h[] =
#include "cvt_h.spv.h"
    ;
static const uint32_t spv_concat[] =
#include "concat.spv.h"
    ;
static const uint32_t spv_concat_h[] =
#include "concat_h.spv.h"
    ;
static const uint32_t spv_fgflr[] =
#include "fgflr.spv.h"
    ;
static const uint32_t spv_fgflr_h[] =
#include "fgflr_h.spv.h"
    ;

enum { P_CONV, P_CONV4, P_CONVSK, P_CONVT, P_CONVT32, P_CONVT16, P_CONVT2_32, P_CONVT2_16, P_CONVTK, P_CONVMMA, P_CONVMMA16, P_CONVTS, P_CONVD16, P_CONVD32, P_CONVSK8, P_CONVDW4, P_CONVDS16, P_CONVDS32, P_CONVRED, P_MEANSK, P_MEANSK2, P_BINARY, P_UNARY, P_MEAN, P_AVGPOOL, P_RESIZE, P_RESIZE4, P_COPY, P_SRCRESIZE, P_FGF, P_CVT, P_CONCAT, P_FGFLR, P__COUNT };
/* spec: specialisation constant 0 (the tiled convolution's tile width), 0 = none; code16: the
 * fp16-storage variant */
#define SH(n, name, spec) {spv_##n, sizeof spv_##n, spv_##n##_h, sizeof spv_##n##_h, name, spec, 4, 0}
#define SH2(n, name, spec) {spv_##n, sizeof spv_##n, spv_##n##_h, sizeof spv_##n##_h, name, spec, 2, 0}
#define SHS(n, name, spec) {spv_##n, sizeof spv_##n, spv_##n##_h, sizeof spv_##n##_h, name, spec, 2, 1}
#define SHD(n, name, spec) {spv_##n, sizeof spv_##n, spv_##n##_h, sizeof spv_##n##_h, name, spec, 4, 1}
/* tm: the tiled convolution's per-thread tile (specialisation constant 3); split: split-K across
 * workgroups (constant 4) */
static const struct { const uint32_t *code; size_t size; const uint32_t *code16; size_t size16; const char *name; int spec, tm, split; } shaders[P__COUNT] = {
    SH(conv, "conv", 0),       SH(conv4, "conv4", 0),     SH(convsk, "convsk", 32),   SH(convt, "convt", 64),
    SH(convt, "convt32", 32),  SH(convt, "convt16", 16),  SH2(convt, "convt2_32", 32), SH2(convt, "convt2_16", 16), SH(convtk, "convtk", 0), SH(convmma, "convmma", 32), SH(convmma, "convmma16", 16), SHS(convt, "convts", 32), SH(convd3, "convd16", 16), SH(convd3, "convd32", 32), SH(convsk, "convsk8", 8), SH(convdw4, "convdw4", 0), SHD(convd3, "convds16", 16), SHD(convd3, "convds32", 32), SH(convred, "convred", 0), SH(meansk, "meansk", 8), SH(meansk, "meansk2", 2),   SH(binary, "binary", 0),
    SH(unary, "unary", 0),     SH(mean, "mean", 0),       SH(avgpool, "avgpool", 0), SH(resize, "resize", 1), SH(resize, "resize4", 4),
    SH(copy, "copy", 0),       SH(srcresize, "srcresize", 0), SH(fgf, "fgf", 0),  SH(cvt, "cvt", 0),
    SH(concat, "concat", 0),   SH(fgflr, "fgflr", 0),
};
#undef SH
#undef SH2
#undef SHS
#undef SHD

#define LOCAL 256
/* fp16 storage: which of push constants 1..4 (a dispatch's offsets) lie in the fp32 range, bit k
 * for p[k]: a specialisation constant (common.glsl FMASK), so each pipeline's loads and stores
 * are of one kind with no branch (a branch per access, even uniform, halved the H200's speed) */
#define MAX_PIPES 512
#define FRAME_HDR 64 /* bytes of header before the planes in the staging buffer */

#define NCK 18 /* convolution kernels: one output per thread, 4x4-blocked, split reduction (32 outputs a workgroup), tiled 64/32/16 (4x4 a thread),
                 tiled 32x32 / 64x16 (2x2 a thread), tiled 32x32 split 4 ways along K in the workgroup, tensor-core
                 128x32 / 128x16 (convmma.comp: HR_VK_MMA=1 where the device has VK_NV_cooperative_matrix's 16x16x16 fp16 -> fp32),
                 tiled 32x32 split along K across workgroups then a reduction (convt.comp SPLIT + convred.comp: two dispatches),
                 direct 3x3 stride 1 from a staged input patch, 16 / 32 channels a workgroup (convd3.comp),
                 split reduction with 8 outputs a workgroup (convsk.comp OPW = 8: the single-pixel layers),
                 depthwise four pixels a thread (convdw4.comp; the tuner chooses between it and one output a
                 thread, HR_VK_DW4=0: the latter only), direct 3x3 split along the input channels across
                 workgroups then a reduction (convd3.comp SPLIT + convred.comp) */
/* One dispatch: pipeline, its op, grid, push constants, and the byte ranges it reads and writes
 * (for barriers only where a dispatch depends on one since the last barrier). */
typedef struct vdisp {
  int pipe, rop;
  uint32_t gx, gy;
  int32_t pc[32];
  int nr, nw;
  int64_t r[HR_ROP_MAX_IN][2], w[HR_MAX_OUT][2];
  /* dense convolutions: threads of each kernel (CK_*), -1 where it does not apply; n_out; the
   * split kinds' workgroups a tile (p[31] once one is picked: P_CONVTS, P_CONVDS16, P_CONVDS32) */
  int64_t alt[NCK], n_out;
  int split_s[3];
} vdisp;

/* A buffer and its memory. refs: NULL when this plan alone holds it, else the count of the
 * session's plans that share it (buf_take: a replan's frame staging, frame and read-back buffers,
 * whose sizes depend on the frame's size only); the last buf_free frees it. */
typedef struct vbuf { VkBuffer b; VkDeviceMemory m; void *map; VkDeviceSize size, alloc; int *refs; } vbuf;

/* A convolution's choice by the tuner, kept for the session's later plans: what the dispatch does
 * (its push constants without the buffer offsets, its fp32-range mask, the kernels that apply and
 * their grids) and the kernel (index into conv_kinds) the timing picked. */
typedef struct tune_key { int32_t pc[21]; int32_t split, mask; int64_t alt[NCK]; } tune_key;
typedef struct tune_pick { tune_key key; int pick; } tune_pick;

/* What a session's successive plans share: the instance, the device, the pipeline layout, the
 * pipelines (none of them depends on the plan's shapes or offsets: those are push constants) and
 * the tuner's picks. A live loop's replan (a new rung, a resume after suspend is not one: that
 * released everything) made all of them anew: on the H200 350-460 ms a replan, 70 ms of it the
 * device, 15-90 the pipelines, 190-255 the tuning, so tens of frames dropped at 60 fps. The plan
 * that replaces another takes them over (vk_create's prev) when the device still works and the
 * settings that chose it are the same (HR_VK_SHARE=0: never); the last plan to go destroys them.
 * The vk structs keep copies of the handles; only the table, the picks and the count live here. */
typedef struct vk_dev {
  int refs;
  char wants[192];            /* the settings the device was made for (dev_wants) */
  struct { int k, mask, epi; VkPipeline pl; } ptab[MAX_PIPES];
  int n_ptab;
  tune_pick *picks;
  int n_picks, cap_picks;
  /* host memory imported for zero-copy frames (hr_session_register_memory; VK_EXT_external_memory_host):
   * the registered range (p, n), the buffer over its pages [lo, lo + len) */
  int hostimp;                /* the device has the extension (enabled at creation) */
  VkDeviceSize imp_align;     /* minImportedHostPointerAlignment */
  PFN_vkGetMemoryHostPointerPropertiesEXT get_hpp;
  struct { const void *p; size_t n; uintptr_t lo; VkDeviceSize len; VkBuffer b; VkDeviceMemory m; } imp[16];
  int n_imp;
} vk_dev;

typedef struct vk {
  vk_dev *sh;                 /* shared with the session's other plans (refcounted) */
  int shared;                 /* 1: taken over from the plan this one replaced */
  int consts_copied;          /* the weights came from the replaced plan's device buffer (same_consts) */
  int tuned_timed, tuned_kept, tuned_same; /* the tuning: convolutions timed, picks taken from sh, picks of a same one timed here */
  VkInstance inst;
  VkDebugUtilsMessengerEXT msgr; /* validation messages (HR_VULKAN_VALIDATION=1) */
  VkPhysicalDevice pd;
  VkDevice dev;
  VkQueue q;
  uint32_t qf;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties mem;
  VkDescriptorSetLayout dsl;
  VkPipelineLayout pl;
  /* pipelines (sh->ptab) per shader, fp32-range mask (dmask) and convolution epilogue (p[25],
   * common.glsl EPI): both specialisation constants, so a pipeline has no branch for what it does
   * not do */
  VkDescriptorPool dpool;
  VkDescriptorSet ds;
  VkCommandPool cpool;
  VkCommandBuffer cb_main, cb_zero, cb_tmp;
  VkCommandBuffer cb_prof;    /* cb_main with a timestamp after every op: replayed while profiling */
  VkFence fence;
  VkQueryPool qp;
  int ts_ok, op_times;         /* op_times: the last run wrote every op's timestamp */
  uint64_t *ts;               /* n_rops + 1 timestamps of the last run */
  double device_ms;
  double host_ms[2];          /* last run: frame copy into the staging buffer, submit to fence */
  vbuf dbuf;                  /* arena | state | src | weights */
  vbuf stage;                 /* frame upload (host visible) */
  vbuf fbuf;                  /* the frame on the device, copied from stage per frame (shaders read it) */
  int frame_dev;              /* 0: shaders read the staging buffer itself (HR_VK_FRAME=host) */
  /* The frame beside the network (HR_VK_XQ; frame_dev, not while profiling): the ingest reads the
   * frame where it lies (host memory the device imported, or the staging buffer) in cb_up, recorded
   * per frame with the frame's header in its push constants, while a transfer queue (a family of
   * its own: the copy engines) copies it to fbuf for the guided-filter tail, the one reader of the
   * device copy, which waits for it on xsem. Without it the copy precedes the whole network: on the
   * H200 0.11 ms of a 2.11 ms frame at 1920x1440 NV12. xq_on: 0 off, 1 a queue family of its own,
   * 2 the compute queue itself (where no such family: nothing overlaps, the path is the same; the
   * tests run it on lavapipe). HR_VK_XQ=1 turns it on; off: on an H100 it was no faster
   * (2.15 ms against 2.14, the ingest's reads over PCIe costing the copy it hides; bench/vulkan_h200.sh). */
  int xq_on;
  VkQueue xq;
  uint32_t xqf, fams[2];
  VkCommandPool xpool;
  VkCommandBuffer cb_x;       /* re-recorded per frame on xq: the frame's header and planes to fbuf */
  VkCommandBuffer cb_xa, cb_xb; /* cb_main without the ingest, cut before the tail's first dispatch */
  VkSemaphore xsem;
  VkDescriptorSet ds_up;      /* ds with binding 4 at the frame's bytes (updated per frame) */
  int n_ing, d_fgf;           /* the leading ingest dispatches; the first tail dispatch (n_disp: none) */
  int xq_plan;                /* this plan's dispatches allow it (the ingests first, none later) */
  VkDescriptorBufferInfo up_bi; /* binding 4 of ds_up as last written */
  int64_t n_xq, n_xq_zc;      /* frames run so, and of them read in imported memory */
  int tune;                   /* the convolutions' kernels are timed at create (tune_convs) */
  VkCommandBuffer cb_up;      /* re-recorded per frame: the copy of the frame's bytes */
  vbuf rback;                 /* alpha (and fgr) read back (host visible) */
  /* the state read back (host visible, made at create): filled by a one-off copy at the first
   * state read after a run, then by the frame's own command buffer (re-recorded once with the copy
   * at its end: the stream's health monitor reads the state every frame), so a read is a host
   * conversion, never an allocation or a submit of its own; state writes go through it too */
  vbuf sback;
  int64_t sback_off[8];       /* bytes into sback */
  int sback_rec;              /* cb_main / cb_prof copy the state into sback */
  int sback_valid;            /* sback holds the device's state (no run or write since) */
  /* the frame's wait and copy. The frame's rows are copied over a pool of HR_VK_COPY_THREADS
   * threads of the backend's own (default 4, the caller's included; 1: the caller alone), not over
   * the session's: in the live loop on the H200 (16 vCPUs, the capture and PNG threads busy) the
   * session's 16-thread pool took 2.1 ms median, 15.9 ms p99 (a worker waiting for a CPU), one
   * thread 1.04 / 1.35 ms. The wait: by default asleep for the shorter of the last two frames'
   * waits less HR_VK_SPIN_MS (0.3), then polling the fence (a blocking wait woke 0.15 ms late on
   * the H200: 3.31 vs 3.15 ms a frame); HR_VK_WAIT=block: the blocking wait alone; =spin: polling
   * all along (it cost the live loop 1 ms of latency there: a CPU taken for the whole frame).
   * HR_VK_TRACE=1: each frame's copy / submit-to-fence / GPU ms on stderr. */
  int spin, trace;            /* spin: 0 block, 1 poll (HR_VK_WAIT=spin), 2 sleep then poll (default) */
  double spin_ms, wait_ms[2];  /* the last two plain frames' submit-to-fence ms (0: none) */
  pthreadpool_t copy_pool;
  int64_t state_off[8];       /* bytes into dbuf */
  int64_t src_off;            /* materialised model input, -1 if none */
  int64_t const_off0, const_bytes;
  /* the constants as uploaded, in layout order: where (bytes from const_off0), how many floats,
   * from where (the plan's data): a replan whose block is the same copies it on the device */
  struct cdesc { int64_t rel, n; const float *data; } *cdesc;
  int n_cdesc;
  int w32;                    /* fp16 storage with the weights (every constant) fp32, at c32 in the fp32 range */
  int64_t c32;
  int64_t *voff;              /* per value: byte offset of a float constant in dbuf, -1 */
  int n_disp, cap_disp;
  vdisp *disp;
  int64_t out_off[2];         /* alpha, fgr: byte offsets in rback, -1 */
  int out_val[2];
  int zero_pending;
  int mma;                    /* tensor-core convolutions (convmma.comp): VK_NV_cooperative_matrix, 16x16x16 fp16 -> fp32 */
  int alpha_direct;           /* the guided-filter tail writes alpha into rback itself (fgf.comp EPI 1) */
  int alpha8;                 /* ... as 8 bits (alpha_u8, fgf.comp EPI 2), a NaN/Inf word after them, then their sum */
  int64_t alpha8_flag;        /* that word's byte offset in rback (the sum's: + 4) */
  char *fused;                /* per op: 1 = its activation runs in the previous op's (a convolution's) epilogue; 3 = inside op host[i] (backend.h) */
  int *host;
  int n_barriers;             /* in the frame's command buffer */
  int elide;                  /* barriers only between dependent dispatches (HR_VK_BARRIERS=all: after each) */
  int frame_w, frame_h;
  int fp16;                   /* the device buffer holds fp16 values (es = 2 bytes an element) */
  int64_t es;
  int64_t *f32off;            /* fp16: per value, its root's element offset in the fp32 range, -1 */
  int64_t *remap;             /* per value: its root's own slot (layout bytes, chain_slots), -1 */
  /* views (find_views): per value, the value whose storage it is read from (-1: its own), the
   * float offset into it and the pixel stride: element (pixel, c) at voff(par) + del + pixel * ps + c */
  int *vpar;
  int64_t *vdel, *vps;
  int pro;                    /* while lowering a binary op: the Sub folded into it (sub_fold), -1 */
  /* squeeze-excitation folds (se_folds): the excitation's last convolution f also writes W' (at
   * wq, floats: cin rows of ocp) = the weights of the 1x1 convolution j after x * s scaled by s
   * per input channel; the Mul m (x * s) has no dispatch, j reads x and W' */
  int n_sew;
  struct sew { int f, m, j, x, ocp; int64_t wq, cin; } sew[16];
  int64_t scr_off, scr_n;     /* the split-K scratch (split_scratch): layout bytes into dbuf, floats; 0 floats: none */
  int64_t f32_bytes;          /* the fp32 range: bytes, and where it starts in dbuf */
  VkDeviceSize f32_base;
} vk;

/* Bytes in the device buffer of a layout offset (the layout is in fp32 bytes: the plan's). */
static VkDeviceSize phys(const vk *v, int64_t logical) { return (VkDeviceSize)(logical / 4 * v->es); }
/* Element indices from F32_BIT on are in the fp32 range (common.glsl F32) */
#define F32_BIT ((int64_t)0x40000000)
static VkDeviceSize idx_bytes(const vk *v, int64_t idx) { return idx >= F32_BIT ? v->f32_base + (VkDeviceSize)(idx - F32_BIT) * 4 : (VkDeviceSize)(idx * v->es); }
static int dmask(const int32_t *pc) {
  int m = 0;
  for (int k = 1; k <= 4; k++) if (pc[k] >= F32_BIT) m |= 1 << k;
  if (pc[29] >= F32_BIT) m |= 1; /* a convolution epilogue's residual (bit 0) */
  return m;
}

/* IEEE binary16 <-> binary32, round to nearest even (host side of fp16 storage). */
static uint16_t f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
  if (e == 0xffu) return (uint16_t)(sign | 0x7c00u | (m ? 0x200u | (m >> 13) : 0));
  int32_t he = (int32_t)e - 127 + 15;
  if (he >= 31) return (uint16_t)(sign | 0x7c00u);
  if (he <= 0) {
    if (he < -10) return (uint16_t)sign;
    m |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - he), h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)he << 10) | (m >> 13), rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* a carry into the exponent is right */
  return (uint16_t)(sign | h);
}
static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0) {
    if (!m) x = sign;
    else { /* subnormal */
      e = 113;
      while (!(m & 0x400u)) { m <<= 1; e--; }
      x = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
  } else if (e == 31) x = sign | 0x7f800000u | (m << 13);
  else x = sign | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}
/* n floats to the device buffer's format at dst / from it at src */
static void to_dev(int fp16, void *dst, const float *src, int64_t n) {
  if (!fp16) { memcpy(dst, src, (size_t)n * 4); return; }
  uint16_t *h = dst;
  for (int64_t i = 0; i < n; i++) h[i] = f2h(src[i]);
}
static void from_dev(int fp16, float *dst, const void *src, int64_t n) {
  if (!fp16) { memcpy(dst, src, (size_t)n * 4); return; }
  const uint16_t *h = src;
  for (int64_t i = 0; i < n; i++) dst[i] = h2f(h[i]);
}

/* ---- helpers ---- */
static hr_status fail(hr_session *s, hr_status st, const char *what, VkResult r) {
  snprintf(s->err, sizeof s->err, "Vulkan: %s (VkResult %d%s)", what, (int)r,
           r == VK_ERROR_DEVICE_LOST ? ": device lost" : r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? ": out of device memory"
           : r == VK_ERROR_OUT_OF_HOST_MEMORY ? ": out of host memory" : "");
  return st;
}
#define VKTRY(call, what)                                                                           \
  do {                                                                                             \
    VkResult r_ = (call);                                                                          \
    if (r_ != VK_SUCCESS)                                                                          \
      return fail(s, r_ == VK_ERROR_OUT_OF_HOST_MEMORY || r_ == VK_ERROR_OUT_OF_DEVICE_MEMORY ? HR_ENOMEM : HR_EIO, what, r_); \
  } while (0)

static int mem_type(vk *v, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
  int best = -1;
  for (uint32_t i = 0; i < v->mem.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = v->mem.memoryTypes[i].propertyFlags;
    if (!(bits & (1u << i)) || (f & want) != want) continue;
    if ((f & prefer) == prefer) return (int)i;
    if (best < 0) best = (int)i;
  }
  return best;
}

/* With a transfer queue of a family of its own, every buffer is shared by the two families
 * (concurrent: no ownership transfers; the same speed for buffers). */
static void share_families(vk *v, VkBufferCreateInfo *bi) {
  if (v->xq_on != 1) return;
  v->fams[0] = v->qf; v->fams[1] = v->xqf;
  bi->sharingMode = VK_SHARING_MODE_CONCURRENT; bi->queueFamilyIndexCount = 2; bi->pQueueFamilyIndices = v->fams;
}
static hr_status buf_make(hr_session *s, vk *v, vbuf *b, VkDeviceSize size, VkBufferUsageFlags use, VkMemoryPropertyFlags want,
                          VkMemoryPropertyFlags prefer, const char *what) {
  memset(b, 0, sizeof *b);
  b->size = size ? size : 256;
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = b->size, .usage = use,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  share_families(v, &bi);
  VKTRY(vkCreateBuffer(v->dev, &bi, NULL, &b->b), what);
  VkMemoryRequirements mr;
  vkGetBufferMemoryRequirements(v->dev, b->b, &mr);
  int t = mem_type(v, mr.memoryTypeBits, want, prefer);
  if (t < 0) { snprintf(s->err, sizeof s->err, "Vulkan: no memory type for the %s", what); return HR_ENOTSUP; }
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = mr.size, .memoryTypeIndex = (uint32_t)t};
  b->alloc = mr.size;
  VkResult r = vkAllocateMemory(v->dev, &ai, NULL, &b->m);
  if (r != VK_SUCCESS) {
    snprintf(s->err, sizeof s->err, "Vulkan: cannot allocate %.1f MB of device memory for the %s (VkResult %d)",
             (double)mr.size / 1e6, what, (int)r);
    return HR_ENOMEM;
  }
  VKTRY(vkBindBufferMemory(v->dev, b->b, b->m, 0), what);
  if (want & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) VKTRY(vkMapMemory(v->dev, b->m, 0, VK_WHOLE_SIZE, 0, &b->map), what);
  return HR_OK;
}
static void buf_free(vk *v, vbuf *b) {
  if (b->refs && --*b->refs > 0) { memset(b, 0, sizeof *b); return; } /* another plan still has it */
  free(b->refs);
  if (b->map) vkUnmapMemory(v->dev, b->m);
  if (b->b) vkDestroyBuffer(v->dev, b->b, NULL);
  if (b->m) vkFreeMemory(v->dev, b->m, NULL);
  memset(b, 0, sizeof *b);
}

/* b is the replaced plan's buffer from (same device) when it has the size wanted: shared, not made
 * again (a replan between rungs keeps the frame's size: the 33 MB staging and frame buffers and the
 * 11 MB read-back at 1920x1440 were allocated, pinned and freed at every rung change); else made. */
static hr_status buf_take(hr_session *s, vk *v, vbuf *b, vbuf *from, VkDeviceSize size, VkBufferUsageFlags use, VkMemoryPropertyFlags want,
                          VkMemoryPropertyFlags prefer, const char *what) {
  const char *e = getenv("HR_VK_SHARE_BUFS");
  if (from && from->b && from->size == (size ? size : 256) && !(e && *e == '0')) {
    if (!from->refs) {
      if (!(from->refs = malloc(sizeof *from->refs))) return HR_ENOMEM;
      *from->refs = 1;
    }
    ++*from->refs;
    *b = *from;
    return HR_OK;
  }
  return buf_make(s, v, b, size, use, want, prefer, what);
}

/* Submit command buffers and wait. spin 0: block on the fence; 1: poll it, then block after 100 ms;
 * 2: sleep sleep_ms first, then poll (the frame: a blocking wait wakes ~0.15 ms after the GPU is
 * done on the H200, polling all along takes a CPU for the whole frame). */
static hr_status submit_wait_si(hr_session *s, vk *v, const VkSubmitInfo *si, uint32_t nsi, int spin, double sleep_ms) {
  VKTRY(vkResetFences(v->dev, 1, &v->fence), "fence reset");
  VKTRY(vkQueueSubmit(v->q, nsi, si, v->fence), "queue submit");
  if (spin) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (spin == 2 && sleep_ms > 0) {
      struct timespec until = t0;
      long ns = (long)(sleep_ms * 1e6);
      until.tv_sec += ns / 1000000000L; until.tv_nsec += ns % 1000000000L;
      if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {}
    }
    for (;;) {
      VkResult r = vkGetFenceStatus(v->dev, v->fence);
      if (r == VK_SUCCESS) return HR_OK;
      if (r != VK_NOT_READY) VKTRY(r, "waiting for the GPU");
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 100000000L) break;
    }
  }
  VKTRY(vkWaitForFences(v->dev, 1, &v->fence, VK_TRUE, UINT64_MAX), "waiting for the GPU");
  return HR_OK;
}
static hr_status submit_wait(hr_session *s, vk *v, const VkCommandBuffer *cbs, uint32_t n, int spin, double sleep_ms) {
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = cbs};
  return submit_wait_si(s, v, &si, 1, spin, sleep_ms);
}
static hr_status submit(hr_session *s, vk *v, const VkCommandBuffer *cbs, uint32_t n) { return submit_wait(s, v, cbs, n, 0, 0); }
static hr_status tmp_begin(hr_session *s, vk *v) {
  VKTRY(vkResetCommandBuffer(v->cb_tmp, 0), "command buffer reset");
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VKTRY(vkBeginCommandBuffer(v->cb_tmp, &bi), "command buffer begin");
  return HR_OK;
}
static hr_status tmp_end(hr_session *s, vk *v) {
  VKTRY(vkEndCommandBuffer(v->cb_tmp), "command buffer end");
  return submit(s, v, &v->cb_tmp, 1);
}
static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags sa, VkPipelineStageFlags dst, VkAccessFlags da) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = sa, .dstAccessMask = da};
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}
#define ST_ALL (VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT)
#define AC_ALL (VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT)

/* ---- the plan as dispatches ---- */
static const hr__attrs *attrs_of(const hr__rop *r) { return r->node ? &r->node->a : &r->syn.a; }
static int64_t align256(int64_t x) { return (x + 255) & ~(int64_t)255; }

/* Float offset of value v's data in dbuf, -1 if it has none there. */
static int64_t voff(const vk *v, const hr__plan *p, int id) {
  if (v->vpar && v->vpar[id] >= 0) return voff(v, p, v->vpar[id]) + v->vdel[id];
  const hr__val *x = &p->vals[id];
  if (x->kind == V_CONST) {
    if (v->voff[id] < 0) return -1;
    return v->w32 ? F32_BIT + v->c32 + (v->voff[id] - v->const_off0) / 4 : v->voff[id] / 4;
  }
  const hr__val *r = &p->vals[x->root];
  switch (r->storage) {
    case S_ARENA: return v->f32off[x->root] >= 0 ? F32_BIT + v->f32off[x->root] : v->remap[x->root] >= 0 ? v->remap[x->root] / 4 : r->offset / 4;
    case S_STATE: return v->state_off[r->slot] / 4;
    case S_SRC: return v->src_off >= 0 ? v->src_off / 4 : -1;
    default: return -1;
  }
}

/* Shape right-aligned to 4 dims; contiguous strides. Returns 0 if rank > 4. */
static int dims4(const hr__tensor *t, int64_t d[4], int64_t st[4]) {
  if (t->rank > 4) return 0;
  for (int k = 0; k < 4; k++) d[k] = k >= 4 - t->rank ? t->dims[k - (4 - t->rank)] : 1;
  int64_t s = 1;
  for (int k = 3; k >= 0; k--) { st[k] = s; s *= d[k]; }
  return 1;
}

static void set_grid(vdisp *d, int64_t n) {
  uint64_t groups = ((uint64_t)n + LOCAL - 1) / LOCAL;
  if (!groups) groups = 1;
  d->gx = (uint32_t)(groups > 65535 ? 65535 : groups);
  d->gy = (uint32_t)((groups + d->gx - 1) / d->gx);
}

/* The convolution kernels, in the order of vdisp.alt. */
static const int conv_kinds[NCK] = {P_CONV, P_CONV4, P_CONVSK, P_CONVT, P_CONVT32, P_CONVT16, P_CONVT2_32, P_CONVT2_16, P_CONVTK, P_CONVMMA, P_CONVMMA16, P_CONVTS, P_CONVD16, P_CONVD32, P_CONVSK8, P_CONVDW4, P_CONVDS16, P_CONVDS32};
/* the kinds that are two dispatches: slices of the reduction into the scratch, then convred.comp */
static int split_kind(int k) { return k == P_CONVTS || k == P_CONVDS16 || k == P_CONVDS32; }
/* Split-K across workgroups (P_CONVTS): the small layers, whose 32x32 tiles fill few of the GPU's
 * workgroup slots over a long reduction (23x30 pixels x 960 -> 160: 110 tiles, K = 960), get S
 * workgroups a tile, each over a slice of K (at least 64 long), S * tiles about 528 (4 a
 * multiprocessor on the H200's 132), their raw sums S * outputs floats in a scratch of at most
 * SPLIT_CAP floats at the end of the arena, added by convred.comp. fp32 storage only;
 * HR_VK_SPLIT=0 turns it off. 0 = no split for this shape. */
#define SPLIT_CAP ((int64_t)1 << 20)
static int split_ways(int64_t npx, int64_t oc, int64_t red) {
  const char *e = getenv("HR_VK_SPLIT_WG"); /* the workgroups aimed at (default 528) */
  int64_t want = e && atoi(e) > 0 ? atoi(e) : 528;
  int64_t tiles = ((npx + 31) / 32) * ((oc + 31) / 32), S = want / (tiles ? tiles : 1);
  if (S > 16) S = 16;
  if (S > red / 64) S = red / 64;
  while (S >= 2 && S * npx * oc > SPLIT_CAP) S--;
  return S >= 2 ? (int)S : 0;
}
/* The direct 3x3 kernel split along the input channels (P_CONVDS16/32): S workgroups a tile of
 * `tiles`, S * tiles about 384 (3 a multiprocessor on a 132-SM GPU; the tuner keeps it only where
 * it wins), at least 16 input channels a slice, the scratch at most DSPLIT_CAP floats.
 * 0 = no split. */
#define DSPLIT_CAP ((int64_t)3 << 20)
static int dsplit_ways(int64_t tiles, int64_t n_out, int64_t c) {
  int64_t S = 384 / (tiles ? tiles : 1);
  if (S > 16) S = 16;
  if (S > c / 16) S = c / 16;
  while (S >= 2 && S * n_out > DSPLIT_CAP) S--;
  return S >= 2 ? (int)S : 0;
}
static int d3_tiles(const hr__tensor *o, int bn) { /* the direct kernel's workgroups (convd3.comp: 128 / bn rows x 32 pixels x bn channels) */
  int64_t r = 128 / bn;
  return (int)(((o->dims[3] + bn - 1) / bn) * ((o->dims[2] + 31) / 32) * ((o->dims[1] + r - 1) / r));
}
static int is_d3(const hr__rop *r, const hr__plan *p) { /* stride 1, dilation 1, batch 1, 3x3 */
  const hr__attrs *a = attrs_of(r);
  const hr__tensor *w = &p->vals[r->in[1]].t, *o = &p->vals[r->out[0]].t, *x = &p->vals[r->in[0]].t;
  return w->rank == 4 && w->dims[0] == 3 && w->dims[1] == 3 && a->strides[1] == 1 && a->strides[2] == 1 && a->dilations[1] == 1 &&
         a->dilations[2] == 1 && o->dims[0] == 1 && x->dims[0] == 1;
}
static int split_on(int fp16) {
  const char *e = getenv("HR_VK_SPLIT");
  return !fp16 && !(e && *e == '0');
}
/* The direct 3x3 kernels (whole and split) are offered at all (HR_VK_DIRECT=0: not): read by
 * lower_rop and by split_scratch, so that the scratch is not sized for a split that cannot run. */
static int direct_on(void) {
  const char *e = getenv("HR_VK_DIRECT");
  return !(e && *e == '0');
}
/* The split scratch a plan needs (floats): the largest S * outputs over its dense convolutions
 * (the direct kernel's split counted only where it is offered). */
static int64_t split_scratch(const hr__plan *p, int fp16) {
  int64_t n = 0;
  if (!split_on(fp16)) return 0;
  const int direct = direct_on();
  for (int i = 0; i < p->n_rops; i++) {
    const hr__rop *r = &p->rops[i];
    if (r->op != HR_OP_CONV2D && r->op != HR_OP_FUSED_CONV2D) continue;
    const hr__tensor *o = &p->vals[r->out[0]].t, *w = &p->vals[r->in[1]].t, *x = &p->vals[r->in[0]].t;
    if (o->rank != 4 || x->rank != 4) continue;
    int64_t npx = hr__numel(o) / o->dims[3], red = w->dims[0] * w->dims[1] * x->dims[3];
    int S = split_ways(npx, o->dims[3], red);
    if (S * npx * o->dims[3] > n) n = S * npx * o->dims[3];
    if (!direct || !is_d3(r, p)) continue;
    for (int bn = 16; bn <= 32; bn += 16) {
      int Sd = dsplit_ways(d3_tiles(o, bn), hr__numel(o), x->dims[3]);
      if (Sd * hr__numel(o) > n) n = Sd * hr__numel(o);
    }
  }
  return n;
}
static void set_conv_kind(vdisp *d, int c) {
  d->pipe = conv_kinds[c];
  if (split_kind(d->pipe)) d->pc[31] = d->split_s[d->pipe == P_CONVTS ? 0 : d->pipe == P_CONVDS16 ? 1 : 2];
  set_grid(d, d->alt[c]);
  d->pc[0] = (int32_t)(conv_kinds[c] == P_CONV4 ? d->alt[c] : d->n_out);
}

static vdisp *add_disp(vk *v, int pipe, int rop, int64_t n) {
  if (v->n_disp == v->cap_disp) {
    int cap = v->cap_disp ? v->cap_disp * 2 : 256;
    vdisp *d = realloc(v->disp, sizeof *d * (size_t)cap);
    if (!d) return NULL;
    v->disp = d; v->cap_disp = cap;
  }
  vdisp *d = &v->disp[v->n_disp++];
  memset(d, 0, sizeof *d);
  d->pipe = pipe; d->rop = rop;
  set_grid(d, n);
  d->pc[0] = (int32_t)n;
  for (int c = 0; c < NCK; c++) d->alt[c] = -1;
  return d;
}

static int32_t fbits(float f) { int32_t i; memcpy(&i, &f, 4); return i; }

/* A strided 4-D copy: region dims rd, src (float offset, -1 = zeros) with strides ss, dst with ds. */
static int add_copy(vk *v, int rop, int64_t src, const int64_t ss[4], int64_t dst, const int64_t ds[4], const int64_t rd[4]) {
  vdisp *d = add_disp(v, P_COPY, rop, rd[0] * rd[1] * rd[2] * rd[3]);
  if (!d) return 0;
  d->pc[1] = (int32_t)src; d->pc[2] = (int32_t)dst;
  for (int k = 0; k < 4; k++) { d->pc[3 + k] = (int32_t)rd[k]; d->pc[7 + k] = (int32_t)ss[k]; d->pc[11 + k] = (int32_t)ds[k]; }
  return 1;
}

static int bop_code(hr__op op) {
  switch (op) {
    case HR_OP_SUB: return 1;
    case HR_OP_MUL: return 2;
    case HR_OP_REALDIV: return 3;
    case HR_OP_MINIMUM: return 4;
    case HR_OP_MAXIMUM: return 5;
    default: return 0;
  }
}
static int uop_code(hr__op op) {
  switch (op) {
    case HR_OP_RELU: return 0;
    case HR_OP_RELU6: return 1;
    case HR_OP_SIGMOID: return 2;
    case HR_OP_TANH: return 3;
    case HR_OP_HARDSWISH: return 4;
    default: return 5;
  }
}

static int axis_norm(int a, int rank) { return a < 0 ? a + rank : a; }
/* The channel axis of a concat or split (rank 4, last axis), else -1. */
static int last_axis(const hr__plan *p, int av, int rank) {
  const hr__val *a = &p->vals[av];
  if (a->kind != V_CONST || a->t.dt != HR_DT_INT32 || !a->t.data || rank != 4) return -1;
  return axis_norm(((const int32_t *)a->t.data)[0], rank) == 3 ? 3 : -1;
}
static int is_binary(hr__op op) {
  return op == HR_OP_MUL || op == HR_OP_ADD || op == HR_OP_ADDV2 || op == HR_OP_SUB || op == HR_OP_REALDIV || op == HR_OP_MINIMUM || op == HR_OP_MAXIMUM;
}
static int plain(const hr__plan *p, int x);
/* The dispatch folds of 2026-12-02 (HR_VK_FGFLR, HR_VK_VIEWMUL, HR_VK_SUBFOLD, HR_VK_MULCAT) and
 * of 2026-12-03 (HR_VK_GRUMIX: gru_mix, HR_VK_SEW: se_folds, HR_VK_CATRESIZE: cat_resize; 127 ->
 * 111 dispatches for RVM): on unless HR_VK_<NAME>=0, or HR_VK_FOLDS=0 for all of them
 * (HR_VK_<NAME>=1 still turns one back on).
 * Timed on the H200 the same day (1920x1440 NV12 r0.25, fp32, 300 frames, alternating in one run,
 * bench/vulkan_h200.sh): all four on, 127 dispatches, median 2.629 / 2.628 ms, GPU 2.342 / 2.340 ms;
 * off (views only), 166 dispatches, median 2.763-2.783 ms, GPU 2.513-2.515 ms; alpha vs XNNPACK
 * max 2.56e-3 vs 2.2e-3. The first session on a cold shader cache compiles more pipelines with
 * them (over threads: make_pipes). None applies on fp16 storage (FGFLR and SUBFOLD
 * ask fp32, VIEWMUL and MULCAT read views, which fp16 and HR_VK_VIEWS=0 turn off). */
static int fold_on(const char *name) {
  const char *e = getenv(name), *all = getenv("HR_VK_FOLDS");
  if (e && *e) return *e != '0';
  return !(all && *all == '0');
}

/* Whether Mul op i (two dynamic operands of its output's shape, no broadcast) can be computed inside
 * the concat after it, its only reader, as a source's product (concat.comp: a GRU's r * h);
 * unless HR_VK_MULCAT=0 (fold_on). The concat then writes its output at op i: lowering checks that it does
 * not lie over the Mul's operands. */
static int concat_one(const hr__plan *p, int fp16, int i);
static int mul_concat(const hr__plan *p, int fp16, int i) {
  if (!fold_on("HR_VK_MULCAT") || i + 1 >= p->n_rops || !concat_one(p, fp16, i + 1)) return 0;
  const hr__rop *r = &p->rops[i], *m = &p->rops[i + 1];
  if (r->op != HR_OP_MUL || r->n_in != 2 || r->n_out != 1) return 0;
  int o = r->out[0], seen = 0;
  if (p->vals[o].root != o || !plain(p, o) || p->vals[o].n_readers != 1) return 0;
  for (int k = 0; k < m->n_in - 1; k++)
    if (m->in[k] == o) { seen++; if (m->in_place_mask & (1u << k)) return 0; }
  if (seen != 1) return 0;
  const hr__tensor *ot = &p->vals[o].t;
  for (int k = 0; k < 2; k++) {
    const hr__val *x = &p->vals[r->in[k]];
    if (x->kind == V_CONST || x->t.dt != HR_DT_FLOAT || x->t.rank != 4 || ot->rank != 4 || memcmp(x->t.dims, ot->dims, sizeof ot->dims)) return 0;
  }
  return 1;
}
/* Whether Sub op i (one operand a float constant, a scalar or one per channel of the last dim, the
 * other dynamic of the output's shape) can be computed inside binary op i + 1, its only reader, on
 * fp32 storage (a GRU's (1 - z) * h, the input's (x - mean) * scale): the mode for binary.comp's
 * EPI (1 K - x, 2 x - K; 16 the Sub feeds operand b; 32 K per channel), 0 if not; 0 with
 * HR_VK_SUBFOLD=0 (fold_on). */
static int sub_fold(const hr__plan *p, int fp16, int i) {
  if (fp16 || !fold_on("HR_VK_SUBFOLD") || i + 1 >= p->n_rops) return 0;
  const hr__rop *r = &p->rops[i], *m = &p->rops[i + 1];
  if (r->op != HR_OP_SUB || r->n_in != 2 || r->n_out != 1 || !is_binary(m->op) || m->n_in != 2) return 0;
  int o = r->out[0];
  if (p->vals[o].root != o || !plain(p, o) || p->vals[o].n_readers != 1) return 0;
  int kc = p->vals[r->in[0]].kind == V_CONST ? 0 : p->vals[r->in[1]].kind == V_CONST ? 1 : -1;
  if (kc < 0 || p->vals[r->in[1 - kc]].kind == V_CONST) return 0;
  const hr__tensor *K = &p->vals[r->in[kc]].t, *x = &p->vals[r->in[1 - kc]].t, *ot = &p->vals[o].t;
  if (K->dt != HR_DT_FLOAT || !K->data || x->dt != HR_DT_FLOAT || x->rank != ot->rank || ot->rank > 4 || ot->rank < 1 ||
      memcmp(x->dims, ot->dims, sizeof(int64_t) * (size_t)ot->rank))
    return 0;
  int64_t nk = hr__numel(K);
  int per = nk == 1 ? 0 : K->rank >= 1 && nk == ot->dims[ot->rank - 1] && K->dims[K->rank - 1] == nk ? 1 : -1;
  if (per < 0) return 0;
  int q = m->in[0] == o ? 0 : m->in[1] == o ? 1 : -1;
  if (q < 0 || m->in[1 - q] == o) return 0;
  return (kc == 0 ? 1 : 2) | (q << 4) | (per << 5);
}
static int views_off(void) {
  const char *e = getenv("HR_VK_VIEWS");
  return e && *e == '0';
}
/* Whether concat op i, two sources along the channels, is read by the bilinear resize after it
 * alone, so that the resize reads the sources where they lie and the concat has no dispatch
 * (resize.comp p[12..15]; a RVM decoder block's passed-through half and its GRU's new state):
 * fp32 storage, views on; HR_VK_CATRESIZE=0 turns it off. */
static int cat_resize(const hr__plan *p, int fp16, int i) {
  if (fp16 || views_off() || !fold_on("HR_VK_CATRESIZE") || i + 1 >= p->n_rops) return 0;
  const hr__rop *r = &p->rops[i], *z = &p->rops[i + 1];
  if (r->op != HR_OP_CONCAT || r->n_in != 3 || r->in_place_mask || z->op != HR_OP_RESIZE_BILINEAR || z->in[0] != r->out[0]) return 0;
  int o = r->out[0];
  if (p->vals[o].root != o || !plain(p, o) || p->vals[o].n_readers != 1 || p->vals[o].t.rank != 4 || last_axis(p, r->in[2], 4) != 3) return 0;
  for (int k = 0; k < 2; k++) {
    const hr__val *x = &p->vals[r->in[k]];
    if (x->kind == V_CONST || x->t.dt != HR_DT_FLOAT || x->t.rank != 4 || x->t.dims[3] % 4) return 0;
  }
  return 1;
}
/* Whether resize op i reads the sources of the concat before it (cat_resize, marked at create). */
static int reads_cat(const vk *v, const hr__plan *p, int i) {
  return i > 0 && p->rops[i].op == HR_OP_RESIZE_BILINEAR && p->rops[i - 1].op == HR_OP_CONCAT && v->fused[i - 1] == 3 && v->host[i - 1] == i;
}
/* Whether concat op i runs as one dispatch (concat.comp): fp32 storage, views on, rank 4 along the
 * channels, at most 4 sources. */
static int concat_one(const hr__plan *p, int fp16, int i) {
  const hr__rop *r = &p->rops[i];
  return r->op == HR_OP_CONCAT && !fp16 && !views_off() && p->vals[r->out[0]].t.rank == 4 && r->n_in - 1 <= 4 &&
         last_axis(p, r->in[r->n_in - 1], 4) == 3;
}

/* What a convolution's epilogue computes beyond its own bias and clamp (common.glsl epi): the ops
 * after it that read only its result, folded in (each intermediate value has that op as its only
 * reader, so it is never written), and a zero Pad before it read as the convolution's padding. */
typedef struct vchain {
  int end;        /* the last op folded in (= the convolution when none) */
  int out;        /* the value the epilogue writes */
  int act;        /* 1 hardswish, 2 sigmoid, 3 tanh right after the clamp */
  int flags;      /* common.glsl epi: p[25] */
  int mul1, add, mul2, res; /* value ids, -1 */
  int pad;        /* the Pad op folded in before, -1 */
  int pad_in, pad_t, pad_l;
  int gsub, gmul; /* a GRU's (1 - z) and (1 - z) * h, computed in the epilogue (flags 2048): no dispatch of their own; -1 */
} vchain;

/* Translate rop i into dispatches. Returns HR_ENOTSUP (s->err set) for what has no kernel here. */
static hr_status lower_rop(hr_session *s, vk *v, int i, const vchain *ch) {
  const hr__plan *p = s->plan;
  const hr__rop *r = &p->rops[i];
  const hr__attrs *a = attrs_of(r);
  const hr__node *nd = r->node ? r->node : &r->syn;
  const hr__tensor *o = &p->vals[r->out[0]].t, *x = &p->vals[r->in[0]].t;
  int64_t od[4], os[4], xd[4], xs[4];
  vdisp *d;
#define NEED(c, why)                                                                                 \
  do {                                                                                              \
    if (!(c)) {                                                                                     \
      snprintf(s->err, sizeof s->err, "Vulkan backend: no kernel for op %s (%s): %s", hr__op_name(r->op), nd->name ? nd->name : "?", why); \
      return HR_ENOTSUP;                                                                            \
    }                                                                                               \
  } while (0)
#define ADD(pipe, n) do { d = add_disp(v, pipe, i, n); if (!d) return HR_ENOMEM; } while (0)
  for (int k = 0; k < r->n_out; k++) NEED(p->vals[r->out[k]].t.dt == HR_DT_FLOAT, "non-float output");
  NEED(dims4(o, od, os), "rank > 4");
  int64_t n_out = hr__numel(o);
  switch (r->op) {
    case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D: case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV: {
      const hr__tensor *w = &p->vals[r->in[1]].t;
      NEED(p->vals[r->in[1]].kind == V_CONST && (!a->fused_bias || p->vals[r->in[2]].kind == V_CONST), "weights not constant");
      NEED(x->rank == 4 && !r->out_c_total, "shape");
      int dw = r->op == HR_OP_DWCONV || r->op == HR_OP_FUSED_DWCONV;
      int KH = (int)w->dims[0], KW = (int)w->dims[1];
      int64_t oh, ow; int pt, pl;
      hr__conv_geom(a->padding, a->explicit_pad + 2, x->dims[1], KH, a->strides[1], a->dilations[1], &oh, &pt);
      hr__conv_geom(a->padding, a->explicit_pad + 4, x->dims[2], KW, a->strides[2], a->dilations[2], &ow, &pl);
      /* which kernel: the tiled implicit GEMM where it has enough tiles to fill the GPU, a split
       * reduction for few outputs over long reductions, else one output per thread
       * (HR_VK_CONV=naive|conv4|sk|sk8|dw4|tiled|tiled32|tiled16|tiled2x32|tiled2x16|tiledk|mma|mma16|split|direct|direct16|direct32|dsplit forces one,
       * cycle takes each in turn) */
      const char *cv = getenv("HR_VK_CONV"), *dw4 = getenv("HR_VK_DW4");
      int can4 = !dw && o->dims[3] % 4 == 0 && v->voff[r->in[1]] % 16 == 0;
      int64_t t4 = o->dims[0] * o->dims[1] * ((o->dims[2] + 3) / 4) * (o->dims[3] / 4), red = (int64_t)KH * KW * x->dims[3];
      int64_t npx = n_out / o->dims[3], tiles = ((npx + 63) / 64) * ((o->dims[3] + 63) / 64);
      int64_t tiles32 = ((npx + 127) / 128) * ((o->dims[3] + 31) / 32), tiles16 = ((npx + 255) / 256) * ((o->dims[3] + 15) / 16);
      int kind = !dw && tiles >= 128 && red >= 16 ? P_CONVT : !dw && red >= 64 ? P_CONVSK : P_CONV;
      if (cv && !strcmp(cv, "naive")) kind = P_CONV;
      else if (cv && !strcmp(cv, "conv4") && can4) kind = P_CONV4;
      else if (cv && !strcmp(cv, "sk") && !dw) kind = P_CONVSK;
      else if (cv && !strcmp(cv, "sk8") && !dw) kind = P_CONVSK8;
      else if (cv && !strcmp(cv, "dw4") && dw) kind = P_CONVDW4;
      else if (cv && !strcmp(cv, "tiled") && !dw) kind = P_CONVT;
      else if (cv && !strcmp(cv, "tiled32") && !dw) kind = P_CONVT32;
      else if (cv && !strcmp(cv, "tiled16") && !dw) kind = P_CONVT16;
      else if (cv && !strcmp(cv, "tiled2x32") && !dw) kind = P_CONVT2_32;
      else if (cv && !strcmp(cv, "tiled2x16") && !dw) kind = P_CONVT2_16;
      else if (cv && !strcmp(cv, "tiledk") && !dw) kind = P_CONVTK;
      else if (cv && !strcmp(cv, "mma") && !dw && v->mma) kind = P_CONVMMA;
      else if (cv && !strcmp(cv, "mma16") && !dw && v->mma) kind = P_CONVMMA16;
      int S = !dw && v->scr_n ? split_ways(npx, o->dims[3], red) : 0;
      /* the direct 3x3 kernel (convd3.comp): stride 1, dilation 1, batch 1; offered to the tuner
       * (HR_VK_DIRECT=0: not), whole or split along the input channels. Its first version (a chunk
       * of 8 channels unrolled whole) took NVIDIA's compiler 49-58 s a pipeline and won 1 of 63
       * convolutions; the 2026-12-06 one compiles with the rest (107 pipelines in 0.78 s cold on the
       * H200) and the tuner takes it for 13 of RVM's 55 at 1920x1440 r0.25 (bench/vulkan_h200.sh). */
      int d3 = direct_on() && !dw && is_d3(r, p);
      if (cv && strstr(cv, "split") && S) kind = P_CONVTS; /* tests: "split,direct" takes the direct kernel where it applies, else the split */
      /* "direct" alternates the 16- and 32-channel workgroups over the ops (the tests cover both);
       * "direct16" / "direct32" force one */
      if (cv && strstr(cv, "direct") && d3)
        kind = strstr(cv, "direct32") ? P_CONVD32 : strstr(cv, "direct16") ? P_CONVD16 : (i & 1) ? P_CONVD32 : P_CONVD16;
      /* the direct kernel split along the input channels (S16 / S32 workgroups a tile; "dsplit"
       * takes it where it applies, 16 and 32 channels in turn over the ops) */
      int S16 = d3 && v->scr_n ? dsplit_ways(d3_tiles(o, 16), n_out, x->dims[3]) : 0;
      int S32 = d3 && v->scr_n ? dsplit_ways(d3_tiles(o, 32), n_out, x->dims[3]) : 0;
      if (cv && strstr(cv, "dsplit") && (S16 || S32)) kind = ((i & 1) && S32) || !S16 ? P_CONVDS32 : P_CONVDS16;
      ADD(P_CONV, n_out);
      d->n_out = n_out;
      if (!dw) {
        d->alt[0] = n_out; d->alt[1] = can4 ? t4 : -1; d->alt[2] = n_out * 8; d->alt[3] = tiles * LOCAL;
        d->alt[4] = tiles32 * LOCAL; d->alt[5] = tiles16 * LOCAL;
        d->alt[6] = ((npx + 31) / 32) * ((o->dims[3] + 31) / 32) * LOCAL; d->alt[7] = ((npx + 63) / 64) * ((o->dims[3] + 15) / 16) * LOCAL;
        d->alt[8] = d->alt[6];
        d->alt[14] = n_out * 32;
        if (v->mma) {
          d->alt[9] = ((npx + 127) / 128) * ((o->dims[3] + 31) / 32) * LOCAL;
          d->alt[10] = ((npx + 127) / 128) * ((o->dims[3] + 15) / 16) * LOCAL;
        }
        if (S) { d->alt[11] = d->alt[6] * S; d->pc[30] = (int32_t)(v->scr_off / 4); d->pc[31] = S; d->split_s[0] = S; }
        if (d3) {
          d->alt[12] = (int64_t)d3_tiles(o, 16) * LOCAL;
          d->alt[13] = (int64_t)d3_tiles(o, 32) * LOCAL;
          if (S16) { d->alt[16] = d->alt[12] * S16; d->split_s[1] = S16; d->pc[30] = (int32_t)(v->scr_off / 4); }
          if (S32) { d->alt[17] = d->alt[13] * S32; d->split_s[2] = S32; d->pc[30] = (int32_t)(v->scr_off / 4); }
        }
      }
      else if (!(dw4 && *dw4 == '0') || cv) {
        /* depthwise: one output a thread, or four pixels of a row (convdw4.comp), the tuner choosing
         * (HR_VK_DW4=0: the first only). H200, 1920x1440 r0.25, 2026-12-03, two rounds alternating:
         * depthwise 0.310 -> 0.209 ms of GPU, the frame 2.603 -> 2.510 ms median. */
        d->alt[0] = n_out;
        d->alt[15] = (n_out / o->dims[2]) * ((o->dims[2] + 3) / 4);
      }
      if (ch && (ch->flags & 1024)) { /* a squeeze-excitation's s (se_folds): the split reduction, whose workgroup writes W' together */
        for (int c = 0; c < NCK; c++) if (c != 2 && c != 14) d->alt[c] = -1;
        kind = P_CONVSK8;
      }
      for (int c = 0; c < NCK; c++) if (conv_kinds[c] == kind && d->alt[c] >= 0) set_conv_kind(d, c);
      if (cv && !strcmp(cv, "cycle") && d->alt[0] >= 0) { /* tests: each kernel in turn, so one plan runs them all */
        int c = i % NCK;
        while (d->alt[c] < 0) c = (c + 1) % NCK;
        set_conv_kind(d, c);
      }
      d->pc[1] = (int32_t)voff(v, p, ch && ch->pad >= 0 ? ch->pad_in : r->in[0]); d->pc[2] = (int32_t)voff(v, p, r->in[1]);
      d->pc[3] = a->fused_bias ? (int32_t)voff(v, p, r->in[2]) : -1;
      d->pc[4] = (int32_t)voff(v, p, ch ? ch->out : r->out[0]);
      d->pc[24] = ch ? ch->act : 0;
      d->pc[5] = (int32_t)x->dims[1]; d->pc[6] = (int32_t)x->dims[2]; d->pc[7] = (int32_t)x->dims[3];
      d->pc[8] = (int32_t)o->dims[1]; d->pc[9] = (int32_t)o->dims[2]; d->pc[10] = (int32_t)o->dims[3];
      d->pc[11] = KH; d->pc[12] = KW; d->pc[13] = a->strides[1]; d->pc[14] = a->strides[2];
      d->pc[15] = a->dilations[1]; d->pc[16] = a->dilations[2]; d->pc[17] = pt; d->pc[18] = pl;
      d->pc[19] = dw ? (int32_t)w->dims[3] : 0;
      float lo = -INFINITY, hi = INFINITY;
      if (a->act == HR_ACT_RELU) lo = 0;
      else if (a->act == HR_ACT_RELU6) { lo = 0; hi = 6; }
      d->pc[20] = fbits(lo); d->pc[21] = fbits(hi);
      d->pc[22] = (int32_t)o->dims[3]; d->pc[23] = 0;
      if (ch && ch->pad >= 0) { /* the Pad's input, its zeros as the convolution's own padding */
        const hr__tensor *pi = &p->vals[ch->pad_in].t;
        d->pc[5] = (int32_t)pi->dims[1]; d->pc[6] = (int32_t)pi->dims[2];
        d->pc[17] += ch->pad_t; d->pc[18] += ch->pad_l;
      }
      if (ch) {
        d->pc[25] = ch->flags;
        d->pc[26] = ch->mul1 >= 0 ? (int32_t)voff(v, p, ch->mul1) : 0;
        d->pc[27] = ch->add >= 0 ? (int32_t)voff(v, p, ch->add) : 0;
        d->pc[28] = ch->mul2 >= 0 ? (int32_t)voff(v, p, ch->mul2) : 0;
        d->pc[29] = ch->res >= 0 ? (int32_t)voff(v, p, ch->res) : 0;
      }
      return HR_OK;
    }
    case HR_OP_MUL: case HR_OP_ADD: case HR_OP_ADDV2: case HR_OP_SUB: case HR_OP_REALDIV: case HR_OP_MINIMUM: case HR_OP_MAXIMUM: {
      int in2[2] = {r->in[0], r->in[1]}, mode = 0;
      int32_t kofs = 0;
      if (v->pro >= 0) { /* the Sub before (sub_fold) computed here: its dynamic input read in place of its output */
        const hr__rop *sr = &p->rops[v->pro];
        mode = sub_fold(p, v->fp16, v->pro);
        int kc = p->vals[sr->in[0]].kind == V_CONST ? 0 : 1;
        NEED(mode, "folded Sub");
        in2[(mode >> 4) & 1] = sr->in[1 - kc];
        kofs = (int32_t)voff(v, p, sr->in[kc]);
        NEED(kofs >= 0, "constant without storage");
        x = &p->vals[in2[0]].t;
      }
      const hr__tensor *y = &p->vals[in2[1]].t;
      int64_t yd[4], ys[4];
      NEED(dims4(x, xd, xs) && dims4(y, yd, ys), "rank > 4");
      NEED(x->dt == HR_DT_FLOAT && y->dt == HR_DT_FLOAT, "non-float input");
      for (int q = 0; q < 2; q++) { /* a view: its pixels ps floats apart (find_views) */
        int64_t *dd = q ? yd : xd, *ss = q ? ys : xs, ps = v->vpar[in2[q]] >= 0 ? v->vps[in2[q]] : 0;
        if (ps) { ss[3] = 1; ss[2] = ps; ss[1] = dd[2] * ps; ss[0] = dd[1] * dd[2] * ps; }
      }
      ADD(P_BINARY, n_out);
      d->pc[25] = mode; d->pc[18] = kofs;
      d->pc[1] = (int32_t)voff(v, p, in2[0]); d->pc[2] = (int32_t)voff(v, p, in2[1]);
      d->pc[3] = (int32_t)voff(v, p, r->out[0]); d->pc[4] = bop_code(r->op);
      for (int k = 0; k < 4; k++) {
        d->pc[5 + k] = (int32_t)od[k];
        d->pc[9 + k] = xd[k] == 1 ? 0 : (int32_t)xs[k];
        d->pc[13 + k] = yd[k] == 1 ? 0 : (int32_t)ys[k];
      }
      return HR_OK;
    }
    case HR_OP_RELU: case HR_OP_RELU6: case HR_OP_SIGMOID: case HR_OP_TANH: case HR_OP_HARDSWISH: case HR_OP_SQUARE:
      ADD(P_UNARY, n_out);
      d->pc[1] = (int32_t)voff(v, p, r->in[0]); d->pc[2] = (int32_t)voff(v, p, r->out[0]); d->pc[3] = uop_code(r->op);
      return HR_OK;
    case HR_OP_IDENTITY: case HR_OP_RESHAPE: case HR_OP_SQUEEZE: {
      if (p->vals[r->in[0]].root == p->vals[r->out[0]].root) return HR_OK;
      int64_t one[4] = {1, 1, 1, n_out}, st[4] = {0, 0, 0, 1};
      NEED(add_copy(v, i, voff(v, p, r->in[0]), st, voff(v, p, r->out[0]), st, one), "memory");
      return HR_OK;
    }
    case HR_OP_MEAN: {
      const hr__tensor *ax = &p->vals[r->in[1]].t;
      NEED(p->vals[r->in[1]].kind == V_CONST && ax->dt == HR_DT_INT32, "axes not constant");
      int red[HR_MAX_RANK] = {0};
      for (int64_t k = 0; k < hr__numel(ax); k++) red[axis_norm(((const int32_t *)ax->data)[k], x->rank)] = 1;
      int first = -1, last = -1;
      for (int k = 0; k < x->rank; k++) if (red[k]) { if (first < 0) first = k; last = k; }
      for (int k = first; k >= 0 && k <= last; k++) NEED(red[k], "non-contiguous axes");
      int64_t outer = 1, R = 1, inner = 1;
      for (int k = 0; k < x->rank; k++) {
        if (first >= 0 && k < first) outer *= x->dims[k];
        else if (first >= 0 && k <= last) R *= x->dims[k];
        else inner *= x->dims[k];
      }
      /* few outputs over long reductions: 8 outputs a workgroup (meansk.comp), 2 from 512 values on
       * (45x60 -> 1: 60 workgroups of 21 loads a thread, not 15 of 85); HR_VK_MEANSK=8 or =2 takes
       * that one at any length (tests, A/B) */
      const char *me = getenv("HR_VK_MEANSK");
      int two = me && *me ? !strcmp(me, "2") : R >= 512;
      if (outer * inner < 65536 && R >= 64) { ADD(two ? P_MEANSK2 : P_MEANSK, outer * inner * (two ? 128 : 32)); d->pc[0] = (int32_t)(outer * inner); }
      else ADD(P_MEAN, outer * inner);
      d->pc[1] = (int32_t)voff(v, p, r->in[0]); d->pc[2] = (int32_t)voff(v, p, r->out[0]);
      d->pc[3] = (int32_t)R; d->pc[4] = (int32_t)inner;
      return HR_OK;
    }
    case HR_OP_AVGPOOL: {
      int64_t t; int pt, pl;
      NEED(x->rank == 4, "shape");
      hr__conv_geom(a->padding, NULL, x->dims[1], a->ksize[1], a->strides[1], 1, &t, &pt);
      hr__conv_geom(a->padding, NULL, x->dims[2], a->ksize[2], a->strides[2], 1, &t, &pl);
      ADD(P_AVGPOOL, n_out);
      d->pc[1] = (int32_t)voff(v, p, r->in[0]); d->pc[2] = (int32_t)voff(v, p, r->out[0]);
      d->pc[3] = (int32_t)x->dims[1]; d->pc[4] = (int32_t)x->dims[2]; d->pc[5] = (int32_t)x->dims[3];
      d->pc[6] = (int32_t)o->dims[1]; d->pc[7] = (int32_t)o->dims[2];
      d->pc[8] = a->ksize[1]; d->pc[9] = a->ksize[2]; d->pc[10] = a->strides[1]; d->pc[11] = a->strides[2];
      d->pc[12] = pt; d->pc[13] = pl;
      return HR_OK;
    }
    case HR_OP_RESIZE_BILINEAR: {
      NEED(x->rank == 4, "shape");
      int C = (int)x->dims[3];
      /* four channels a thread where they come in fours (HR_VK_RESIZE4=0: one) */
      const char *r4 = getenv("HR_VK_RESIZE4");
      int four = C % 4 == 0 && !(r4 && *r4 == '0');
      ADD(four ? P_RESIZE4 : P_RESIZE, o->dims[0] * o->dims[1] * o->dims[2] * (four ? C / 4 : C));
      d->pc[1] = (int32_t)voff(v, p, r->in[0]); d->pc[2] = (int32_t)voff(v, p, r->out[0]);
      d->pc[3] = (int32_t)x->dims[1]; d->pc[4] = (int32_t)x->dims[2]; d->pc[5] = C;
      d->pc[6] = (int32_t)o->dims[1]; d->pc[7] = (int32_t)o->dims[2];
      d->pc[8] = a->half_pixel; d->pc[9] = a->align_corners;
      d->pc[10] = r->out_c_total > 0 ? r->out_c_total : C; d->pc[11] = r->out_c_total > 0 ? r->out_c_off : 0;
      if (reads_cat(v, p, i)) { /* the concat before (cat_resize): its two sources where they lie */
        const hr__rop *c = &p->rops[i - 1];
        int a0 = c->in[0], a1 = c->in[1];
        d->pc[1] = (int32_t)voff(v, p, a0); d->pc[12] = (int32_t)p->vals[a0].t.dims[3];
        d->pc[13] = (int32_t)(v->vpar[a0] >= 0 ? v->vps[a0] : p->vals[a0].t.dims[3]);
        d->pc[14] = (int32_t)voff(v, p, a1); d->pc[15] = (int32_t)(v->vpar[a1] >= 0 ? v->vps[a1] : p->vals[a1].t.dims[3]);
        NEED(d->pc[1] >= 0 && d->pc[14] >= 0, "input without storage");
      }
      return HR_OK;
    }
    case HR_OP_SRC_RESIZE:
      ADD(P_SRCRESIZE, o->dims[1] * o->dims[2]);
      d->pc[1] = (int32_t)voff(v, p, r->out[0]); d->pc[2] = (int32_t)o->dims[2]; d->pc[3] = (int32_t)o->dims[1];
      return HR_OK;
    case HR_OP_FGF_TAIL: {
      const hr__tensor *A = &p->vals[r->in[0]].t;
      ADD(P_FGF, o->dims[1] * o->dims[2]);
      /* alpha also straight into the read-back buffer (at float 0 there), which then needs no copy
       * (HR_VK_ALPHA=copy: the copy after the frame) */
      const char *am = getenv("HR_VK_ALPHA");
      if (!(am && !strcmp(am, "copy")) && p->vals[r->out[0]].root == p->vals[p->alpha_val].root && hr__numel(o) == hr__numel(&p->vals[p->alpha_val].t)) {
        d->pc[25] = 1; d->pc[10] = 0; v->alpha_direct = 1;
        /* alpha_u8: only the 8-bit alpha crosses to the host (a quarter of the bytes), four pixels
         * a thread, and after it a word saying whether one was NaN or Inf and one with their sum
         * (exact up to 16.8 M pixels: see vk_output_u8) */
        if (s->p.alpha_u8 && r->n_out == 1) {
          const int64_t n = hr__numel(o);
          d->pc[25] = 2; d->pc[11] = (int32_t)((n + 3) / 4); v->alpha8 = 1;
          set_grid(d, (n + 3) / 4);
        }
      }
      d->pc[1] = (int32_t)voff(v, p, r->in[0]); d->pc[2] = (int32_t)voff(v, p, r->in[1]);
      d->pc[3] = (int32_t)voff(v, p, r->out[0]); d->pc[4] = r->n_out > 1 ? (int32_t)voff(v, p, r->out[1]) : -1;
      d->pc[5] = (int32_t)A->dims[1]; d->pc[6] = (int32_t)A->dims[2]; d->pc[7] = (int32_t)o->dims[1]; d->pc[8] = (int32_t)o->dims[2];
      d->pc[9] = r->syn.a.keep_dims;
      return HR_OK;
    }
    case HR_OP_CONCAT: {
      const hr__tensor *axt = &p->vals[r->in[r->n_in - 1]].t;
      NEED(p->vals[r->in[r->n_in - 1]].kind == V_CONST, "axis not constant");
      if (concat_one(p, v->fp16, i)) {
        /* one dispatch for the sources not written in place (concat.comp), views read where they
         * lie; the Mul before (v->pro, mul_concat) computed as its source's product */
        int32_t src[4][6];
        int ns = 0;
        int64_t c0 = 0, cs = 0;
        for (int k = 0; k < r->n_in - 1; k++) {
          int xv = r->in[k], mv = -1;
          int64_t cn = p->vals[xv].t.dims[p->vals[xv].t.rank - 1];
          if (v->pro >= 0 && xv == p->rops[v->pro].out[0]) { xv = p->rops[v->pro].in[0]; mv = p->rops[v->pro].in[1]; }
          int64_t b = voff(v, p, xv);
          if (!(r->in_place_mask & (1u << k))) {
            NEED(b >= 0 && p->vals[xv].t.rank == 4 && (mv < 0 || voff(v, p, mv) >= 0), "input without storage");
            src[ns][0] = (int32_t)b; src[ns][1] = (int32_t)(v->vpar[xv] >= 0 ? v->vps[xv] : cn); src[ns][2] = (int32_t)c0; src[ns][3] = (int32_t)cn;
            src[ns][4] = mv < 0 ? -1 : (int32_t)voff(v, p, mv); src[ns][5] = mv < 0 ? 0 : (int32_t)(v->vpar[mv] >= 0 ? v->vps[mv] : cn);
            ns++; cs += cn;
          }
          c0 += cn;
        }
        if (!ns) return HR_OK;
        ADD(P_CONCAT, (n_out / od[3]) * cs);
        d->pc[1] = (int32_t)voff(v, p, r->out[0]); d->pc[2] = (int32_t)od[3]; d->pc[3] = ns; d->pc[4] = (int32_t)cs;
        for (int k = 0; k < ns; k++) for (int q = 0; q < 6; q++) d->pc[5 + 6 * k + q] = src[k][q];
        return HR_OK;
      }
      int ax = axis_norm(((const int32_t *)axt->data)[0], o->rank) + (4 - o->rank);
      int64_t off = 0, dst = voff(v, p, r->out[0]);
      for (int k = 0; k < r->n_in - 1; k++) {
        const hr__tensor *t = &p->vals[r->in[k]].t;
        int64_t td[4], ts[4];
        NEED(dims4(t, td, ts), "rank > 4");
        if (!(r->in_place_mask & (1u << k))) {
          int64_t src = voff(v, p, r->in[k]);
          NEED(src >= 0, "input without storage");
          NEED(add_copy(v, i, src, ts, dst + off * os[ax], os, td), "memory");
        }
        off += td[ax];
      }
      return HR_OK;
    }
    case HR_OP_SPLIT: case HR_OP_SPLITV: {
      int xv = r->op == HR_OP_SPLIT ? r->in[1] : r->in[0], av = r->op == HR_OP_SPLIT ? r->in[0] : r->in[2];
      x = &p->vals[xv].t;
      NEED(dims4(x, xd, xs) && p->vals[av].kind == V_CONST, "shape");
      int ax = axis_norm(((const int32_t *)p->vals[av].t.data)[0], x->rank) + (4 - x->rank);
      int64_t off = 0, src = voff(v, p, xv);
      for (int k = 0; k < r->n_out; k++) {
        const hr__tensor *t = &p->vals[r->out[k]].t;
        int64_t td[4], ts[4];
        dims4(t, td, ts);
        if (v->vpar[r->out[k]] >= 0) { off += td[ax]; continue; } /* a view: read where it lies */
        NEED(add_copy(v, i, src + off * xs[ax], xs, voff(v, p, r->out[k]), ts, td), "memory");
        off += td[ax];
      }
      return HR_OK;
    }
    case HR_OP_SLICE: {
      if (v->vpar[r->out[0]] >= 0) return HR_OK; /* a view */
      NEED(dims4(x, xd, xs) && p->vals[r->in[1]].kind == V_CONST, "begin not constant");
      const int32_t *b = p->vals[r->in[1]].t.data;
      int64_t src = voff(v, p, r->in[0]);
      for (int k = 0; k < x->rank; k++) src += b[k] * xs[k + 4 - x->rank];
      NEED(add_copy(v, i, src, xs, voff(v, p, r->out[0]), os, od), "memory");
      return HR_OK;
    }
    case HR_OP_PAD: {
      NEED(dims4(x, xd, xs) && p->vals[r->in[1]].kind == V_CONST, "paddings not constant");
      const int32_t *pd = p->vals[r->in[1]].t.data;
      int64_t dst = voff(v, p, r->out[0]);
      NEED(add_copy(v, i, -1, os, dst, os, od), "memory");
      for (int k = 0; k < x->rank; k++) dst += pd[2 * k] * os[k + 4 - x->rank];
      NEED(add_copy(v, i, voff(v, p, r->in[0]), xs, dst, os, xd), "memory");
      return HR_OK;
    }
    default:
      NEED(0, "not implemented on the GPU");
  }
#undef NEED
#undef ADD
  return HR_OK;
}

static int is_conv(hr__op op) { return op == HR_OP_CONV2D || op == HR_OP_FUSED_CONV2D || op == HR_OP_DWCONV || op == HR_OP_FUSED_DWCONV; }
static int act_code(hr__op op) { return op == HR_OP_HARDSWISH ? 1 : op == HR_OP_SIGMOID ? 2 : op == HR_OP_TANH ? 3 : 0; }

/* Whether value x's root may stay unwritten / be written by the epilogue: an arena value, not an
 * output the session reads back. */
static int plain(const hr__plan *p, int x) {
  const hr__val *o = &p->vals[p->vals[x].root];
  if (o->storage != S_ARENA) return 0;
  if (o == &p->vals[p->vals[p->alpha_val].root] || (p->fgr_val >= 0 && o == &p->vals[p->vals[p->fgr_val].root])) return 0;
  return 1;
}
/* Whether op j's output x may end a convolution i's chain though it is a state slot (a GRU's new
 * state, written over the old): none of ops i..j reads that slot, so writing it at op i is safe. */
static int state_out(const hr__plan *p, int x, int i, int j) {
  const hr__val *o = &p->vals[p->vals[x].root];
  if (o->storage != S_STATE) return 0;
  for (int q = i; q <= j; q++)
    for (int k = 0; k < p->rops[q].n_in; k++) {
      const hr__val *y = &p->vals[p->vals[p->rops[q].in[k]].root];
      if (y->storage == S_STATE && y->slot == o->slot) return 0;
    }
  return 1;
}
/* Byte range of value x's root: its arena place, or its own slot (remap, see chain_slots) */
static int64_t bytes_lo(const hr__plan *p, const int64_t *remap, int x) {
  int root = p->vals[x].root;
  return remap && remap[root] >= 0 ? remap[root] : p->vals[root].offset;
}
static int64_t bytes_hi(const hr__plan *p, const int64_t *remap, int x) { return bytes_lo(p, remap, x) + hr__numel(&p->vals[p->vals[x].root].t) * 4; }

/* The op before op `before` that writes value x, -1. */
static int producer(const hr__plan *p, int x, int before) {
  for (int j = before - 1; j >= 0; j--)
    for (int k = 0; k < p->rops[j].n_out; k++)
      if (p->rops[j].out[k] == x) return j;
  return -1;
}
/* A GRU's new state is (1 - z) * h + z * c: whether value `other`, added after the candidate
 * convolution's z * tanh(..) (z the view zv), is (1 - z) * h computed by a Sub and a Mul read by
 * nothing else, so that the epilogue can compute it from z and h (flags 2048) and those two ops
 * need no dispatch (HR_VK_GRUMIX=0: not). Returns h (then *sub, *mul: the two ops), else -1. */
static int gru_mix(const hr__plan *p, int other, int zv, int64_t n, int before, int *sub, int *mul) {
  if (!fold_on("HR_VK_GRUMIX") || other < 0 || p->vals[other].root != other || !plain(p, other) || p->vals[other].n_readers != 1) return -1;
  int m = producer(p, other, before);
  if (m < 0 || p->rops[m].op != HR_OP_MUL || p->rops[m].n_in != 2 || p->rops[m].n_out != 1) return -1;
  for (int q = 0; q < 2; q++) {
    int u = p->rops[m].in[q], h = p->rops[m].in[1 - q];
    if (u == h || p->vals[u].root != u || !plain(p, u) || p->vals[u].n_readers != 1) continue;
    int sb = producer(p, u, m);
    if (sb < 0 || p->rops[sb].op != HR_OP_SUB || p->rops[sb].n_in != 2 || p->rops[sb].in[1] != zv) continue;
    const hr__val *one = &p->vals[p->rops[sb].in[0]];
    if (one->kind != V_CONST || one->t.dt != HR_DT_FLOAT || !one->t.data || hr__numel(&one->t) != 1 || ((const float *)one->t.data)[0] != 1.f) continue;
    const hr__val *hv = &p->vals[h], *hr = &p->vals[hv->root];
    if (hv->kind == V_CONST || hv->t.dt != HR_DT_FLOAT || hr__numel(&hv->t) != n || hv->t.rank != 4 || (hr->storage != S_ARENA && hr->storage != S_STATE) ||
        memcmp(hv->t.dims, p->vals[other].t.dims, sizeof hv->t.dims))
      continue;
    *sub = sb; *mul = m;
    return h;
  }
  return -1;
}

/* A constant operand an epilogue can apply per output channel: a scalar or [..., OC]. 2 = scalar. */
static int chan_const(const hr__plan *p, int x, int64_t OC) {
  const hr__val *c = &p->vals[x];
  if (c->kind != V_CONST || c->t.dt != HR_DT_FLOAT || !c->t.data) return 0;
  int64_t n = hr__numel(&c->t);
  if (n == 1) return 2;
  return n == OC && c->t.rank >= 1 && c->t.dims[c->t.rank - 1] == OC;
}

/* The ops after convolution i (and a Pad before it) that its epilogue can compute (HR_VK_FUSE=0:
 * none; =act: the activation only). remap: roots moved to slots of their own (NULL: none). Where
 * the chain's output lies over an input, *want (when given) gets the output's root: with that
 * root in a slot of its own the chain holds (chain_slots). */
static void conv_chain(const hr__plan *p, const int64_t *remap, const int *vpar, const int64_t *vps, int i, vchain *c, int *want) {
  if (want) *want = -1;
  memset(c, 0, sizeof *c);
  c->end = i; c->out = p->rops[i].out[0];
  c->mul1 = c->add = c->mul2 = c->res = c->pad = c->pad_in = c->gsub = c->gmul = -1;
  const hr__rop *r = &p->rops[i];
  const char *fz = getenv("HR_VK_FUSE");
  if ((fz && *fz == '0') || !is_conv(r->op) || r->out_c_total) return;
  int only_act = fz && !strcmp(fz, "act");
  const hr__tensor *ot = &p->vals[r->out[0]].t;
  int64_t n = hr__numel(ot), OC = ot->dims[ot->rank - 1];
  /* a zero Pad of H and W right before, read by this convolution alone */
  if (!only_act && i > 0 && p->rops[i - 1].op == HR_OP_PAD) {
    const hr__rop *pr = &p->rops[i - 1];
    const hr__val *pv = &p->vals[pr->in[1]];
    if (p->vals[pr->out[0]].root == p->vals[r->in[0]].root && p->vals[pr->out[0]].root == pr->out[0] && plain(p, pr->out[0]) &&
        p->vals[pr->out[0]].n_readers == 1 && p->vals[pr->in[0]].t.rank == 4 && pv->kind == V_CONST && pv->t.dt == HR_DT_INT32 &&
        hr__numel(&pv->t) == 8 && (pr->n_in < 3 || p->vals[pr->in[2]].kind == V_CONST)) {
      const int32_t *pd = pv->t.data;
      int zero = pr->n_in < 3 || (p->vals[pr->in[2]].t.dt == HR_DT_FLOAT && ((const float *)p->vals[pr->in[2]].t.data)[0] == 0.f);
      if (zero && !pd[0] && !pd[1] && !pd[6] && !pd[7] && pd[2] >= 0 && pd[4] >= 0 && pd[3] >= 0 && pd[5] >= 0) {
        c->pad = i - 1; c->pad_in = pr->in[0]; c->pad_t = pd[2]; c->pad_l = pd[4];
      }
    }
  }
  /* stages in the epilogue's order: act 1, mul1 2, add 3, relu/relu6 4, mul2 5, act2 6, residual 7 */
  int cur = r->out[0], stage = 0;
  const int to_state = fold_on("HR_VK_VIEWMUL");   /* a chain may end in a state slot with that fold only */
  for (int j = i + 1; j < p->n_rops && stage < 7; j++) {
    const hr__rop *a = &p->rops[j];
    if (!plain(p, cur) || p->vals[p->vals[cur].root].n_readers != 1 || !(plain(p, a->out[0]) || (to_state && state_out(p, a->out[0], i, j))) ||
        a->n_out != 1)
      break;
    if (hr__numel(&p->vals[a->out[0]].t) != n) break;
    int reads = -1;
    for (int k = 0; k < a->n_in; k++) if (p->vals[a->in[k]].root == p->vals[cur].root) reads = k;
    if (reads < 0) break;
    int other = a->n_in == 2 ? a->in[1 - reads] : -1, ac = act_code(a->op), cc = other >= 0 ? chan_const(p, other, OC) : 0;
    if (a->n_in == 1 && ac && stage == 0) { c->act = ac; stage = 1; }
    else if (only_act) break;
    else if (a->n_in == 1 && ac && stage < 6) { c->flags |= ac << 12; stage = 6; }
    else if (a->n_in == 1 && (a->op == HR_OP_RELU || a->op == HR_OP_RELU6) && stage < 4) { c->flags |= a->op == HR_OP_RELU ? 4 : 8; stage = 4; }
    else if (a->op == HR_OP_MUL && cc && stage < 2) { c->mul1 = other; c->flags |= 1 | (cc == 2 ? 16 : 0); stage = 2; }
    else if (a->op == HR_OP_MUL && cc && stage < 5) { c->mul2 = other; c->flags |= 256 | (cc == 2 ? 64 : 0); stage = 5; }
    else if (a->op == HR_OP_MUL && vps && other >= 0 && vpar[other] >= 0 && stage < 5 && p->vals[other].t.rank == 4 && ot->rank == 4 &&
             !memcmp(p->vals[other].t.dims, ot->dims, sizeof ot->dims) && vps[other] < 32768) {
      /* times a view (a GRU's z, read where the split's input lies): its pixel stride in the flags */
      c->mul2 = other; c->flags |= 512 | (int)(vps[other] << 16); stage = 5;
    }
    else if ((a->op == HR_OP_ADD || a->op == HR_OP_ADDV2) && cc && stage < 3) { c->add = other; c->flags |= 2 | (cc == 2 ? 32 : 0); stage = 3; }
    else if ((a->op == HR_OP_ADD || a->op == HR_OP_ADDV2) && (c->flags & 512) && !(c->flags & (15 << 12)) &&
             (c->res = gru_mix(p, other, c->mul2, n, i, &c->gsub, &c->gmul)) >= 0) {
      c->flags |= 128 | 2048; stage = 7; /* (1 - z) * h + z * c, h read at the output's index */
    }
    else if ((a->op == HR_OP_ADD || a->op == HR_OP_ADDV2) && other >= 0 && p->vals[other].kind != V_CONST && p->vals[other].t.dt == HR_DT_FLOAT &&
             hr__numel(&p->vals[other].t) == n && p->vals[p->vals[other].root].storage == S_ARENA && p->vals[other].root != p->vals[cur].root &&
             !(vpar && vpar[other] >= 0)) { /* the residual is read at the output's index: never a view */
      c->res = other; c->flags |= 128; stage = 7;
    } else break;
    cur = a->out[0]; c->end = j;
  }
  c->out = cur;
  if (c->end == i && c->pad < 0) return;
  /* the epilogue writes c->out while the convolution still reads its input: only where they are
   * apart (the planner may have put a later value over the input, dead by then) */
  int64_t lo = bytes_lo(p, remap, c->out), hi = bytes_hi(p, remap, c->out);
  for (int k = 0; k < r->n_in + 1; k++) {
    int x = k == r->n_in ? ((c->flags & 512) ? vpar[c->mul2] : -1) : k == 0 && c->pad >= 0 ? c->pad_in : r->in[k];
    if (x < 0 || p->vals[x].kind == V_CONST || p->vals[p->vals[x].root].storage != S_ARENA) continue;
    if (bytes_lo(p, remap, x) < hi && lo < bytes_hi(p, remap, x)) {
      if (want && c->end != i && p->vals[c->out].root != p->vals[x].root) *want = p->vals[c->out].root;
      if (c->end != i) { /* retry with the Pad alone */
        vchain keep = *c;
        memset(c, 0, sizeof *c);
        c->end = i; c->out = r->out[0]; c->mul1 = c->add = c->mul2 = c->res = c->gsub = c->gmul = -1;
        c->pad = keep.pad; c->pad_in = keep.pad_in; c->pad_t = keep.pad_t; c->pad_l = keep.pad_l;
        if (c->pad >= 0) { lo = bytes_lo(p, remap, c->out); hi = bytes_hi(p, remap, c->out); k = -1; continue; }
      }
      c->pad = -1; c->pad_in = -1;
      return;
    }
  }
}

static void chain_of(const vk *v, const hr__plan *p, int i, vchain *ch);
/* MobileNetV3's squeeze-excitation ends in x * s (s one value a channel, from a chain of 1x1
 * convolutions on the mean of x) read by a 1x1 convolution alone: sum_c W[c][o] (x[c] s[c]) =
 * sum_c (W[c][o] s[c]) x[c], so the convolution that makes s also writes W' = W scaled by s per row
 * (common.glsl epi, flags 1024) and the projection reads x and W': no dispatch for the Mul, nor its
 * full-size output written and read. fp32 storage; HR_VK_SEW=0 turns it off. Fills v->sew, places
 * the W' after off (bytes) and returns the end. */
static int64_t se_folds(vk *v, const hr__plan *p, int64_t off) {
  v->n_sew = 0;
  if (v->fp16 || views_off() || !fold_on("HR_VK_SEW")) return off;
  for (int m = 0; m + 1 < p->n_rops && v->n_sew < (int)(sizeof v->sew / sizeof *v->sew); m++) {
    const hr__rop *r = &p->rops[m], *c = &p->rops[m + 1];
    if (r->op != HR_OP_MUL || r->n_in != 2 || r->n_out != 1) continue;
    int o = r->out[0];
    if (p->vals[o].root != o || !plain(p, o) || p->vals[o].n_readers != 1) continue;
    if ((c->op != HR_OP_CONV2D && c->op != HR_OP_FUSED_CONV2D) || c->in[0] != o || c->out_c_total || p->vals[c->in[1]].kind != V_CONST) continue;
    const hr__attrs *a = attrs_of(c);
    const hr__tensor *w = &p->vals[c->in[1]].t;
    if (w->rank != 4 || w->dims[0] != 1 || w->dims[1] != 1 || a->strides[1] != 1 || a->strides[2] != 1) continue;
    for (int q = 0; q < 2; q++) {
      int x = r->in[q], sv = r->in[1 - q];
      const hr__tensor *xt = &p->vals[x].t, *st = &p->vals[sv].t;
      if (p->vals[x].kind == V_CONST || p->vals[sv].kind == V_CONST || xt->rank != 4 || st->rank != 4 || xt->dt != HR_DT_FLOAT ||
          v->vpar[x] >= 0 || v->vpar[sv] >= 0 || st->dims[0] != 1 || st->dims[1] != 1 || st->dims[2] != 1 || st->dims[3] != xt->dims[3] ||
          w->dims[2] != xt->dims[3] || xt->dims[0] != 1 || p->vals[p->vals[x].root].storage != S_ARENA)
        continue;
      /* the convolution whose epilogue chain ends in s, p[26] and p[29] free there */
      int f = -1;
      vchain ch;
      for (int k = m - 1; k >= 0 && f < 0; k--) {
        if (!is_conv(p->rops[k].op) || p->rops[k].op == HR_OP_DWCONV || p->rops[k].op == HR_OP_FUSED_DWCONV) continue;
        chain_of(v, p, k, &ch);
        if (ch.out == sv) f = k;
      }
      if (f < 0 || (ch.flags & (1 | 128 | 512 | 1024 | 2048)) || hr__numel(&p->vals[p->rops[f].out[0]].t) != st->dims[3] || w->dims[3] >= 32768) continue;
      /* the projection (its chain) must not write over x, which it now reads (the planner may have
       * put it there, x being dead after the Mul): else its output gets a slot of its own */
      vchain cj;
      chain_of(v, p, m + 1, &cj);
      int cr = p->vals[cj.out].root;
      if (bytes_lo(p, v->remap, cj.out) < bytes_hi(p, v->remap, x) && bytes_lo(p, v->remap, x) < bytes_hi(p, v->remap, cj.out)) {
        if (v->remap[cr] >= 0 || p->vals[cr].storage != S_ARENA || cr == p->vals[x].root) continue;
        off = align256(off);
        v->remap[cr] = off;
        off += hr__numel(&p->vals[cr].t) * 4;
      }
      off = align256(off);
      v->sew[v->n_sew++] = (struct sew){f, m, m + 1, x, (int)w->dims[3], off / 4, w->dims[2]};
      off += w->dims[2] * w->dims[3] * 4;
      break;
    }
  }
  return off;
}

/* Slots of their own for the outputs of epilogue chains that the plan put over the convolution's
 * input (the planner reuses a value's bytes once its last reader runs, and a convolution's output
 * written over its own input races with it): each such root gets a slot from logical byte offset
 * off on, in remap (per value, -1 = the plan's place), shared with other such roots whose lives do
 * not meet (1920x1440 r0.25: 8.3 MB; 25.8 MB a root each, with the same 201 dispatches and 190
 * barriers); returns the end. Its readers read it there (voff), so the ops folded into the
 * epilogue need no dispatch of their own (17 chains of RVM: a HardSwish, a batch norm's Mul/Add
 * after a depthwise convolution, a GRU's Sigmoid). fp16: not past the last dense convolution (the fp32 tail keeps its places).
 * HR_VK_SLOTS=0: none. */
static int64_t chain_slots(const hr__plan *p, int fp16, int64_t *remap, int64_t off) {
  for (int k = 0; k < p->n_vals; k++) remap[k] = -1;
  const char *e = getenv("HR_VK_SLOTS");
  if (e && *e == '0') return off;
  int last = p->n_rops;
  if (fp16)
    for (int i = 0; i < p->n_rops; i++)
      if (p->rops[i].op == HR_OP_CONV2D || p->rops[i].op == HR_OP_FUSED_CONV2D) last = i;
  /* slots shared by roots whose lives (the convolution to the root's last reader) do not meet:
   * chains come in op order, so a slot is free once its last occupant's last reader came before */
  enum { MAXS = 64 };
  int64_t s_off[MAXS], s_size[MAXS];
  int s_until[MAXS], ns = 0;
  for (int i = 0; i < p->n_rops; i++) {
    vchain c;
    int want;
    conv_chain(p, remap, NULL, NULL, i, &c, &want);
    if (want < 0 || remap[want] >= 0) continue;
    int64_t need = (hr__numel(&p->vals[want].t) * 4 + 255) & ~(int64_t)255;
    int until = i;
    for (int j = i + 1; j < p->n_rops; j++)
      for (int k = 0; k < p->rops[j].n_in; k++)
        if (p->vals[p->rops[j].in[k]].root == want) until = j;
    int pick = -1;
    for (int q = 0; q < ns; q++) /* the smallest free slot that holds it */
      if (s_until[q] < i && s_size[q] >= need && (pick < 0 || s_size[q] < s_size[pick])) pick = q;
    if (pick < 0 && ns == MAXS) continue;
    int fresh = pick < 0, keep_until = fresh ? 0 : s_until[pick];
    if (fresh) { pick = ns++; s_off[pick] = off; s_size[pick] = need; off += need; }
    remap[want] = s_off[pick];
    s_until[pick] = until;
    conv_chain(p, remap, NULL, NULL, i, &c, NULL);
    int bad = c.end == i || c.end > last || p->vals[c.out].root != want;
    if (bad) { /* a value in the tail's fp32 range (fp16) stays put */
      remap[want] = -1;
      if (fresh) { ns--; off -= need; } else s_until[pick] = keep_until;
    }
  }
  return off;
}

/* RVM's low-resolution guided filter (plan.h hr__fgf_lr: from the split of the network's output to
 * A and b, ~23 dispatches) as one (fgflr.comp): fp32 storage, the plan's shapes (y 1 x H x W x 4,
 * the image 1 x H x W x 3, boxes of KH x 1 and 1 x KW, A and b 1 x (H-KH+1) x (W-KW+1) x 4);
 * With HR_VK_FGFLR=0 (fold_on): the ops one by one. */
static int lr_fused(const hr__plan *p, int fp16) {
  const hr__fgf_lr *f = &p->fgf_lr;
  if (fp16 || !fold_on("HR_VK_FGFLR") || f->first < 0 || f->last < f->first) return 0;
  const hr__tensor *y = &p->vals[f->y].t, *x = &p->vals[f->src].t, *A = &p->vals[f->A].t, *b = &p->vals[f->b].t;
  if (y->rank != 4 || x->rank != 4 || A->rank != 4 || b->rank != 4 || y->dims[0] != 1 || y->dims[3] != 4 || x->dims[3] != 3 ||
      x->dims[0] != 1 || x->dims[1] != y->dims[1] || x->dims[2] != y->dims[2] || memcmp(A->dims, b->dims, sizeof A->dims) || A->dims[3] != 4)
    return 0;
  for (int q = 0; q < 4; q++) {
    const hr__val *wv = &p->vals[f->wv[q]], *wh = &p->vals[f->wh[q]];
    if (wv->kind != V_CONST || wh->kind != V_CONST || wv->t.dt != HR_DT_FLOAT || wh->t.dt != HR_DT_FLOAT || wv->t.rank != 4 || wh->t.rank != 4 ||
        wv->t.dims[1] != 1 || wv->t.dims[2] != 4 || wh->t.dims[0] != 1 || wh->t.dims[2] != 4 || wv->t.dims[0] != p->vals[f->wv[0]].t.dims[0] ||
        wh->t.dims[1] != p->vals[f->wh[0]].t.dims[1])
      return 0;
  }
  int KH = (int)p->vals[f->wv[0]].t.dims[0], KW = (int)p->vals[f->wh[0]].t.dims[1];
  return A->dims[1] == y->dims[1] - KH + 1 && A->dims[2] == y->dims[2] - KW + 1;
}
/* Whether op j can read value x as a view (a pixel stride wider than x's channels): the binary
 * ops (strided operands) and a channel concat of at most 4 sources (concat.comp). */
static int view_reader(const hr__plan *p, int j, int x) {
  const hr__rop *r = &p->rops[j];
  if (is_binary(r->op)) return p->vals[r->in[0]].t.rank <= 4 && p->vals[r->in[1]].t.rank <= 4;
  if (r->op != HR_OP_CONCAT || r->n_in - 1 > 4) return 0;
  (void)x;
  return last_axis(p, r->in[r->n_in - 1], p->vals[r->out[0]].t.rank) == 3;
}
/* Views instead of copies (fp32 storage; HR_VK_VIEWS=0: none): the outputs of a channel split, and
 * a slice of whole rows, are read where their input lies (vpar, vdel, vps) when every reader can
 * take a pixel stride (view_reader), so the split or slice has no dispatch. The input must then
 * stay intact until the views' last reader: where a value written in between lies over it, the
 * input's root moves to a slot of its own from logical byte offset off on (in remap; slots shared
 * by roots whose lives do not meet), unless it already has one (then no view). Returns the end. */
static int64_t find_views(const hr__plan *p, int fp16, int64_t *remap, int *vpar, int64_t *vdel, int64_t *vps, int64_t off) {
  for (int k = 0; k < p->n_vals; k++) { vpar[k] = -1; vdel[k] = 0; vps[k] = 0; }
  if (fp16 || views_off()) return off;
  enum { MAXS = 64 };
  int64_t s_off[MAXS], s_size[MAXS];
  int s_until[MAXS], ns = 0;
  for (int i = 0; i < p->n_rops; i++) {
    const hr__rop *r = &p->rops[i];
    if (lr_fused(p, fp16) && i >= p->fgf_lr.first && i <= p->fgf_lr.last) continue; /* one dispatch (fgflr.comp) */
    int xv, is_split = r->op == HR_OP_SPLIT || r->op == HR_OP_SPLITV;
    if (is_split) xv = r->op == HR_OP_SPLIT ? r->in[1] : r->in[0];
    else if (r->op == HR_OP_SLICE) xv = r->in[0];
    else continue;
    const hr__val *x = &p->vals[xv];
    const hr__tensor *xt = &x->t;
    if (x->kind != V_DYN || xt->dt != HR_DT_FLOAT || xt->rank != 4 || xt->dims[0] != 1 || !plain(p, xv) || vpar[xv] >= 0) continue;
    int64_t del[HR_MAX_OUT] = {0};
    if (is_split) {
      if (last_axis(p, r->op == HR_OP_SPLIT ? r->in[0] : r->in[2], 4) != 3) continue;
      int64_t c = 0;
      for (int k = 0; k < r->n_out; k++) { del[k] = c; c += p->vals[r->out[k]].t.dims[3]; }
    } else {
      const hr__val *b = &p->vals[r->in[1]];
      const hr__tensor *o = &p->vals[r->out[0]].t;
      if (b->kind != V_CONST || b->t.dt != HR_DT_INT32 || hr__numel(&b->t) != 4 || o->rank != 4) continue;
      const int32_t *bb = b->t.data;
      if (bb[0] || bb[2] || bb[3] || o->dims[2] != xt->dims[2] || o->dims[3] != xt->dims[3]) continue;
      del[0] = (int64_t)bb[1] * xt->dims[2] * xt->dims[3];
    }
    /* the outputs whose readers all take a view, and the last of those readers */
    int ok[HR_MAX_OUT] = {0}, any = 0, last = i;
    for (int k = 0; k < r->n_out; k++) {
      int o = r->out[k], good = p->vals[o].root == o && plain(p, o) && p->vals[o].t.rank == 4, lk = i;
      for (int j = i + 1; good && j < p->n_rops; j++)
        for (int q = 0; q < p->rops[j].n_in; q++) {
          int y = p->rops[j].in[q];
          if (p->vals[y].root != o) continue;
          if (y != o || !view_reader(p, j, o)) good = 0;
          lk = j;
        }
      if (good && lk > i) { ok[k] = 1; any = 1; if (lk > last) last = lk; }
    }
    if (!any) continue;
    /* a value written in (i, last] over the input? A convolution writes its epilogue chain's
     * output (at most 7 ops later) already: a root counts from 7 ops before its definition. */
    int xr = x->root, clash = 0;
    int64_t lo = bytes_lo(p, remap, xv), hi = bytes_hi(p, remap, xv);
    for (int k = 0; k < p->n_vals && !clash; k++) {
      const hr__val *y = &p->vals[k];
      if (k == xr || y->root != k || y->storage != S_ARENA || y->kind == V_CONST) continue;
      if (y->def + 7 <= i || y->def > last + 7) continue;
      if (bytes_lo(p, remap, k) < hi && lo < bytes_hi(p, remap, k)) clash = 1;
    }
    if (clash) {
      if (remap[xr] >= 0) continue;
      int64_t need = (hr__numel(&p->vals[xr].t) * 4 + 255) & ~(int64_t)255;
      int from = p->vals[xr].def - 7, pick = -1;
      for (int q = 0; q < ns; q++)
        if (s_until[q] < from && s_size[q] >= need && (pick < 0 || s_size[q] < s_size[pick])) pick = q;
      if (pick < 0 && ns == MAXS) continue;
      if (pick < 0) { pick = ns++; s_off[pick] = off; s_size[pick] = need; off += need; }
      remap[xr] = s_off[pick];
      s_until[pick] = last;
    }
    for (int k = 0; k < r->n_out; k++)
      if (ok[k]) { vpar[r->out[k]] = xv; vdel[r->out[k]] = del[k]; vps[r->out[k]] = xt->dims[3]; }
  }
  return off;
}

/* Convolution i's epilogue chain as lowered: with a view multiplier (a GRU's z) where that holds
 * unless HR_VK_VIEWMUL=0 (fold_on), else the chain without one (the longer). */
static void chain_of(const vk *v, const hr__plan *p, int i, vchain *ch) {
  vchain nd;
  conv_chain(p, v->remap, v->vpar, fold_on("HR_VK_VIEWMUL") ? v->vps : NULL, i, ch, NULL);
  if (!(ch->flags & 512)) return;
  conv_chain(p, v->remap, v->vpar, NULL, i, &nd, NULL);
  if (nd.end >= ch->end || (nd.pad >= 0 && ch->pad < 0)) *ch = nd;
}

/* A dispatch reads value x: its byte range (a view's: the whole of what it reads from) added to
 * d's reads, unless a constant, without storage, or no room is left. */
static void add_read(const vk *v, const hr__plan *p, vdisp *d, int x) {
  while (v->vpar[x] >= 0) x = v->vpar[x];
  int64_t o = voff(v, p, x);
  if (p->vals[x].kind == V_CONST || o < 0 || d->nr >= HR_ROP_MAX_IN) return;
  d->r[d->nr][0] = o * 4; d->r[d->nr][1] = o * 4 + hr__numel(&p->vals[x].t) * 4; d->nr++;
}
/* The byte ranges of a dispatch: every non-constant input and output value of its op. */
static void annotate(const vk *v, const hr__plan *p, vdisp *d, const hr__rop *r) {
  d->nr = d->nw = 0;
  for (int k = 0; k < r->n_in; k++) add_read(v, p, d, r->in[k]);
  for (int k = 0; k < r->n_out; k++) {
    int64_t o = voff(v, p, r->out[k]);
    if (o < 0) continue;
    d->w[d->nw][0] = o * 4; d->w[d->nw][1] = o * 4 + hr__numel(&p->vals[r->out[k]].t) * 4; d->nw++;
  }
}

/* ---- device ---- */
/* The Khronos validation layer's errors and warnings (HR_VULKAN_VALIDATION=1), counted for tests. */
static _Atomic int validation_msgs;
static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT sev, VkDebugUtilsMessageTypeFlagsEXT type,
                                                    const VkDebugUtilsMessengerCallbackDataEXT *d, void *user) {
  (void)type; (void)user;
  if (sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    validation_msgs++;
    fprintf(stderr, "headroom vulkan: validation %s: %s\n", sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
            d && d->pMessage ? d->pMessage : "?");
  }
  return VK_FALSE;
}
int hr__vk_validation_messages(void) { return validation_msgs; }

static int want_device(const VkPhysicalDeviceProperties *pr, const char *name) {
  if (name && *name) return strcasestr(pr->deviceName, name) != NULL;
  return pr->deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
}
static int type_rank(VkPhysicalDeviceType t) {
  return t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? 3 : t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 2 : 1;
}

/* The device this backend takes on inst: the best-ranked one HR_VULKAN_DEVICE names, else the
 * best GPU type (never a CPU device unless named). The ICDs are kept loaded to process exit (their
 * allocations stay reachable for LeakSanitizer). Returns the number of devices seen; *pd is
 * VK_NULL_HANDLE when none fits; seen lists them all ("NAME (CPU), ..."). */
static uint32_t pick_device(VkInstance inst, VkPhysicalDevice *pd, VkPhysicalDeviceProperties *props, char *seen, size_t seen_n) {
  const char *icds[] = {"libvulkan_lvp.so", "libGLX_nvidia.so.0", "libvulkan_radeon.so", "libvulkan_intel.so"};
  for (size_t k = 0; k < sizeof icds / sizeof *icds; k++) dlopen(icds[k], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(inst, &n, NULL);
  VkPhysicalDevice pds[16];
  if (n > 16) n = 16;
  vkEnumeratePhysicalDevices(inst, &n, pds);
  const char *want = getenv("HR_VULKAN_DEVICE");
  int best_rank = 0;
  *pd = VK_NULL_HANDLE;
  seen[0] = 0;
  for (uint32_t k = 0; k < n; k++) {
    VkPhysicalDeviceProperties pr;
    vkGetPhysicalDeviceProperties(pds[k], &pr);
    size_t l = strlen(seen);
    snprintf(seen + l, seen_n - l, "%s%.60s%s", l ? ", " : "", pr.deviceName, pr.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? " (CPU)" : "");
    if (want_device(&pr, want) && type_rank(pr.deviceType) > best_rank) { *pd = pds[k]; best_rank = type_rank(pr.deviceType); *props = pr; }
  }
  return n;
}

/* Whether the device runs convmma.comp: both extensions, their features, the 16x16x16 fp16 -> fp32
 * shape at subgroup scope, and 32-thread subgroups. */
static int mma_ok(vk *v) {
  uint32_t ne = 0;
  vkEnumerateDeviceExtensionProperties(v->pd, NULL, &ne, NULL);
  VkExtensionProperties *ep = calloc(ne ? ne : 1, sizeof *ep);
  if (!ep) return 0;
  vkEnumerateDeviceExtensionProperties(v->pd, NULL, &ne, ep);
  int have = 0;
  for (uint32_t k = 0; k < ne; k++)
    have |= (!strcmp(ep[k].extensionName, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) ? 1 : 0) |
            (!strcmp(ep[k].extensionName, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME) ? 2 : 0);
  free(ep);
  if (have != 3) return 0;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR, .pNext = &cm};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f16};
  vkGetPhysicalDeviceFeatures2(v->pd, &f2);
  if (!cm.cooperativeMatrix || !f16.shaderFloat16) return 0;
  VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
  vkGetPhysicalDeviceProperties2(v->pd, &p2);
  if (sg.subgroupSize != 32 || p2.properties.limits.maxComputeSharedMemorySize < 40000) return 0;
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV gp =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(v->inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
  if (!gp) return 0;
  uint32_t n = 0;
  gp(v->pd, &n, NULL);
  VkCooperativeMatrixPropertiesNV cp[64];
  if (n > 64) n = 64;
  for (uint32_t k = 0; k < n; k++) cp[k] = (VkCooperativeMatrixPropertiesNV){.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV};
  gp(v->pd, &n, cp);
  for (uint32_t k = 0; k < n; k++)
    if (cp[k].MSize == 16 && cp[k].NSize == 16 && cp[k].KSize == 16 && cp[k].AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        cp[k].BType == VK_COMPONENT_TYPE_FLOAT16_NV && cp[k].CType == VK_COMPONENT_TYPE_FLOAT32_NV && cp[k].DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        cp[k].scope == VK_SCOPE_SUBGROUP_NV)
      return 1;
  return 0;
}

static hr_status make_device(hr_session *s, vk *v) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "headroom", .apiVersion = VK_API_VERSION_1_1};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"}, *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  const char *val = getenv("HR_VULKAN_VALIDATION");
  int validate = val && *val == '1';
  VkDebugUtilsMessengerCreateInfoEXT mi = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
                                           .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                                           .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
                                           .pfnUserCallback = on_validation};
  VkInstanceCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  if (validate) { /* the messenger also covers instance creation and destruction (pNext) */
    ii.enabledLayerCount = 1; ii.ppEnabledLayerNames = layers;
    ii.enabledExtensionCount = 1; ii.ppEnabledExtensionNames = exts;
    ii.pNext = &mi;
  }
  VkResult r = vkCreateInstance(&ii, NULL, &v->inst);
  if (r != VK_SUCCESS) {
    v->inst = NULL;
    snprintf(s->err, sizeof s->err, "Vulkan: no instance (VkResult %d%s)", (int)r,
             r == VK_ERROR_INCOMPATIBLE_DRIVER ? ": no Vulkan driver (ICD) installed or loadable"
             : r == VK_ERROR_LAYER_NOT_PRESENT ? ": validation layer requested but not installed" : "");
    return HR_ENOTSUP;
  }
  if (validate) {
    PFN_vkCreateDebugUtilsMessengerEXT mk = (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(v->inst, "vkCreateDebugUtilsMessengerEXT");
    if (mk) mk(v->inst, &mi, NULL, &v->msgr);
  }
  char seen[400];
  uint32_t n = pick_device(v->inst, &v->pd, &v->props, seen, sizeof seen);
  if (v->pd == VK_NULL_HANDLE) {
    const char *want = getenv("HR_VULKAN_DEVICE");
    if (want && *want)
      snprintf(s->err, sizeof s->err, "Vulkan: no device named like HR_VULKAN_DEVICE='%s' (devices: %s)", want, n ? seen : "none");
    else
      snprintf(s->err, sizeof s->err, "Vulkan: no GPU device (devices: %s; CPU devices such as llvmpipe are used only when "
               "HR_VULKAN_DEVICE names them)", n ? seen : "none");
    return HR_ENOTSUP;
  }
  vkGetPhysicalDeviceMemoryProperties(v->pd, &v->mem);
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(v->pd, &nq, NULL);
  VkQueueFamilyProperties qfp[16];
  if (nq > 16) nq = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(v->pd, &nq, qfp);
  int qf = -1;
  for (uint32_t k = 0; k < nq && qf < 0; k++) if (qfp[k].queueFlags & VK_QUEUE_COMPUTE_BIT) qf = (int)k;
  if (qf < 0) { snprintf(s->err, sizeof s->err, "Vulkan: device %s has no compute queue", v->props.deviceName); return HR_ENOTSUP; }
  v->qf = (uint32_t)qf;
  v->ts_ok = qfp[qf].timestampValidBits > 0 && v->props.limits.timestampPeriod > 0;
  float prio = 1.f;
  /* the frame's copy beside the network (see xq_on), HR_VK_XQ=1: on a transfer-only family (the
   * copy engines) where the device has one, else on the compute queue. Off by default until it is
   * timed on a GPU (it was written on a day no GPU was lent: bench/vulkan_h200.sh run-xq) */
  const char *xe = getenv("HR_VK_XQ");
  int xqf = -1;
  for (uint32_t k = 0; k < nq && xqf < 0; k++)
    if ((qfp[k].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(qfp[k].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) && qfp[k].queueCount)
      xqf = (int)k;
  v->xq_on = xe && *xe == '1' ? (xqf >= 0 ? 1 : 2) : 0;
  v->xqf = v->xq_on == 1 ? (uint32_t)xqf : v->qf;
  VkDeviceQueueCreateInfo qis[2] = {{.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = v->qf, .queueCount = 1, .pQueuePriorities = &prio},
                                    {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = v->xqf, .queueCount = 1, .pQueuePriorities = &prio}};
  /* fp16 storage: HR_VK_FP16=1 asks for it (fails where the device lacks 16-bit storage); off by
   * default: no speed gained on the H200 (the frame is bound by dispatches and the convolutions'
   * quality, not by memory), alpha 8x further from XNNPACK's (tests ask for it on lavapipe) */
  VkPhysicalDevice16BitStorageFeatures f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f16};
  vkGetPhysicalDeviceFeatures2(v->pd, &f2);
  const char *h = getenv("HR_VK_FP16");
  v->fp16 = h && *h == '1';
  if (v->fp16 && !f16.storageBuffer16BitAccess) {
    snprintf(s->err, sizeof s->err, "Vulkan: HR_VK_FP16=1 but device %s has no 16-bit storage (storageBuffer16BitAccess)", v->props.deviceName);
    return HR_ENOTSUP;
  }
  v->es = v->fp16 ? 2 : 4;
  VkPhysicalDevice16BitStorageFeatures en16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, .storageBuffer16BitAccess = VK_TRUE};
  VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = v->fp16 ? &en16 : NULL, .queueCreateInfoCount = v->xq_on == 1 ? 2u : 1u, .pQueueCreateInfos = qis};
  /* tensor cores (HR_VK_MMA=1, off by default): VK_NV_cooperative_matrix with 16x16x16 fp16 x
   * fp16 -> fp32 at subgroup scope, 32-thread subgroups and fp16 arithmetic; convmma.comp then
   * joins the tuner's candidates. On the H200 (2026-12-02) it lost to the SIMT kernels on every
   * layer (the tuner picked it 0 times of 63; forced everywhere the 1920x1440 r0.25 frame took
   * 6.15 ms of GPU, conv3x3 2.43 + conv1x1 2.65 ms vs 0.93 + 0.74) and its alpha was 2.5e-5 from
   * XNNPACK's on average (fp32 storage; past the 1e-5 bound even with the split operands) */
  VkPhysicalDeviceCooperativeMatrixFeaturesNV encm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV, .cooperativeMatrix = VK_TRUE};
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR enf16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR, .shaderFloat16 = VK_TRUE};
  const char *dexts[3] = {VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME};
  const char *mm = getenv("HR_VK_MMA");
  if (mm && *mm == '1' && mma_ok(v)) {
    v->mma = 1;
    encm.pNext = (void *)di.pNext; enf16.pNext = &encm; di.pNext = &enf16;
    di.enabledExtensionCount = 2;
  }
  /* host memory import, for frames in registered memory (hr_session_register_memory) */
  uint32_t ne = 0;
  vkEnumerateDeviceExtensionProperties(v->pd, NULL, &ne, NULL);
  VkExtensionProperties *ep = ne ? malloc(sizeof *ep * ne) : NULL;
  if (ep && vkEnumerateDeviceExtensionProperties(v->pd, NULL, &ne, ep) == VK_SUCCESS)
    for (uint32_t k = 0; k < ne; k++)
      if (!strcmp(ep[k].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) v->sh->hostimp = 1;
  free(ep);
  if (v->sh->hostimp) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &hp};
    vkGetPhysicalDeviceProperties2(v->pd, &p2);
    v->sh->imp_align = hp.minImportedHostPointerAlignment ? hp.minImportedHostPointerAlignment : 4096;
    dexts[di.enabledExtensionCount++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  }
  if (di.enabledExtensionCount) di.ppEnabledExtensionNames = dexts;
  VKTRY(vkCreateDevice(v->pd, &di, NULL, &v->dev), "device creation");
  vkGetDeviceQueue(v->dev, v->qf, 0, &v->q);
  v->xq = v->q;
  if (v->xq_on == 1) vkGetDeviceQueue(v->dev, v->xqf, 0, &v->xq);
  if (v->sh->hostimp) {
    v->sh->get_hpp = (PFN_vkGetMemoryHostPointerPropertiesEXT)vkGetDeviceProcAddr(v->dev, "vkGetMemoryHostPointerPropertiesEXT");
    if (!v->sh->get_hpp) v->sh->hostimp = 0;
  }
  return HR_OK;
}

static int is_conv_kind(int k) { for (int c = 0; c < NCK; c++) if (conv_kinds[c] == k) return 1; return 0; }
static int pipe_epi(int k, const int32_t *pc) { return is_conv_kind(k) || k == P_CONVRED || k == P_FGF || k == P_BINARY ? pc[25] : 0; }
static int pipe_at(const vk *v, int k, int mask, int epi) {
  for (int q = 0; q < v->sh->n_ptab; q++)
    if (v->sh->ptab[q].k == k && v->sh->ptab[q].mask == mask && v->sh->ptab[q].epi == epi) return q;
  return -1;
}
static VkPipeline find_pipe(const vk *v, int k, const int32_t *pc) {
  int q = pipe_at(v, k, dmask(pc), pipe_epi(k, pc));
  return q < 0 ? VK_NULL_HANDLE : v->sh->ptab[q].pl;
}
/* The pipeline of shader k for a dispatch's push constants pc entered in ptab, without a handle
 * yet, if no entry has that shader, mask and epilogue (made by make_pipes). */
static hr_status want_pipe(hr_session *s, vk *v, int k, const int32_t *pc) {
  int mask = dmask(pc), epi = pipe_epi(k, pc);
  if (pipe_at(v, k, mask, epi) >= 0) return HR_OK;
  if (v->sh->n_ptab == MAX_PIPES) { snprintf(s->err, sizeof s->err, "Vulkan: more than %d pipelines", MAX_PIPES); return HR_ENOTSUP; }
  v->sh->ptab[v->sh->n_ptab].k = k; v->sh->ptab[v->sh->n_ptab].mask = mask; v->sh->ptab[v->sh->n_ptab].epi = epi; v->sh->ptab[v->sh->n_ptab].pl = VK_NULL_HANDLE;
  v->sh->n_ptab++;
  return HR_OK;
}

/* Compiling the pipelines is most of a session's create on a cold shader cache (the driver's own
 * disk cache: on the H200 70 s to 200 s for RVM with the kernels tuned, 0.4 s once cached), one
 * pipeline at a time before 2026-12-02. They are independent: each is made on a pool of threads
 * (vkCreateComputePipelines with no pipeline cache, vkCreateShaderModule and the shared modules
 * and layout have no externally synchronised parameter). HR_VK_COMPILE_THREADS=N: N threads (1:
 * one after another on the caller's thread); default the CPUs this process may run on, at most 16.
 * On lavapipe (2 busy CPUs) it changes little: llvmpipe compiles a shader to machine code at its
 * first dispatch, not here. No VkPipelineCache of our own on disk: the NVIDIA and Mesa drivers keep
 * theirs, and ours would be as cold as theirs on a fresh machine. */
static double mono_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
typedef struct pjob {
  vk *v;
  int n0;
  VkShaderModule mod[P__COUNT];
  VkResult r[MAX_PIPES];
  double ms[MAX_PIPES];     /* each pipeline's compile time (HR_VK_VERBOSE=2 lists the slow ones) */
} pjob;
static void make_one(void *ctx, size_t i) {
  pjob *j = ctx;
  vk *v = j->v;
  int q = j->n0 + (int)i, k = v->sh->ptab[q].k;
  int32_t spec[5] = {shaders[k].spec, v->sh->ptab[q].mask, v->sh->ptab[q].epi, shaders[k].tm, shaders[k].split};
  VkSpecializationMapEntry me[5] = {{.constantID = 0, .offset = 0, .size = 4}, {.constantID = 1, .offset = 4, .size = 4},
                                    {.constantID = 2, .offset = 8, .size = 4}, {.constantID = 3, .offset = 12, .size = 4},
                                    {.constantID = 4, .offset = 16, .size = 4}};
  VkSpecializationInfo si = {.mapEntryCount = shaders[k].split ? 5 : 4, .pMapEntries = me, .dataSize = 20, .pData = spec};
  VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                    .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                              .module = j->mod[k], .pName = "main", .pSpecializationInfo = &si},
                                    .layout = v->pl};
  VkPipeline pl = VK_NULL_HANDLE;
  double t0 = mono_ms();
  j->r[q] = vkCreateComputePipelines(v->dev, VK_NULL_HANDLE, 1, &ci, NULL, &pl);
  j->ms[q] = mono_ms() - t0;
  v->sh->ptab[q].pl = j->r[q] == VK_SUCCESS ? pl : VK_NULL_HANDLE;
}

static int compile_threads(void) {
  const char *e = getenv("HR_VK_COMPILE_THREADS");
  int n = e && *e ? atoi(e) : hr_cpu_count();
  if (!(e && *e) && n > 16) n = 16;
  return n < 1 ? 1 : n > 64 ? 64 : n;
}
/* Make the pipelines entered from ptab[n0] on (want_pipe). On an error the first failed one's is
 * reported; the handles made stay in ptab (vk_destroy destroys them, and skips the null ones). */
static hr_status make_pipes(hr_session *s, vk *v, int n0) {
  if (n0 >= v->sh->n_ptab) return HR_OK;
  pjob *j = calloc(1, sizeof *j);
  if (!j) return HR_ENOMEM;
  j->v = v; j->n0 = n0;
  hr_status st = HR_OK;
  for (int q = n0; q < v->sh->n_ptab && !st; q++) {
    int k = v->sh->ptab[q].k;
    if (j->mod[k]) continue;
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = v->fp16 ? shaders[k].size16 : shaders[k].size,
                                   .pCode = v->fp16 ? shaders[k].code16 : shaders[k].code};
    VkResult r = vkCreateShaderModule(v->dev, &mi, NULL, &j->mod[k]);
    if (r != VK_SUCCESS) { j->mod[k] = VK_NULL_HANDLE; st = fail(s, HR_EIO, "shader module", r); }
  }
  int n = v->sh->n_ptab - n0, nt = compile_threads();
  double t0 = mono_ms();
  pthreadpool_t pool = NULL;
  if (!st) {
    if (nt > n) nt = n;
    if (nt > 1) pool = pthreadpool_create((size_t)nt);
    if (pool) pthreadpool_parallelize_1d(pool, make_one, j, (size_t)n, 0);
    else for (int i = 0; i < n; i++) make_one(j, (size_t)i);
    if (pool) pthreadpool_destroy(pool);
    for (int q = n0; q < v->sh->n_ptab && !st; q++)
      if (j->r[q] != VK_SUCCESS) st = fail(s, HR_EIO, shaders[v->sh->ptab[q].k].name, j->r[q]);
  }
  for (int k = 0; k < P__COUNT; k++) if (j->mod[k]) vkDestroyShaderModule(v->dev, j->mod[k], NULL);
  if (!st && getenv("HR_VK_VERBOSE")) {
    fprintf(stderr, "headroom vulkan: %d pipelines compiled in %.1f ms over %d thread%s\n", n, mono_ms() - t0, pool ? nt : 1, pool ? "s" : "");
    if (atoi(getenv("HR_VK_VERBOSE")) >= 2) /* each pipeline that took more than 100 ms (a cold driver cache) */
      for (int q = n0; q < v->sh->n_ptab; q++)
        if (j->ms[q] > 100)
          fprintf(stderr, "headroom vulkan:   %-10s mask %d epi %d: %.0f ms\n", shaders[v->sh->ptab[q].k].name, v->sh->ptab[q].mask, v->sh->ptab[q].epi, j->ms[q]);
  }
  free(j);
  return st;
}

static hr_status make_pipelines(hr_session *s, vk *v) {
  /* 0: the device buffer, 1: the frame, 2: the read-back buffer (cvt.comp), 3: the fp32 range of
   * the device buffer (fp16 storage) */
  VkDescriptorSetLayoutBinding b[5];
  for (int k = 0; k < 5; k++)
    b[k] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)k, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = 5, .pBindings = b};
  if (!v->dsl) VKTRY(vkCreateDescriptorSetLayout(v->dev, &li, NULL, &v->dsl), "descriptor set layout"); /* else the replaced plan's */
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 128};
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1, .pSetLayouts = &v->dsl,
                                    .pushConstantRangeCount = 1, .pPushConstantRanges = &pcr};
  if (!v->pl) VKTRY(vkCreatePipelineLayout(v->dev, &pli, NULL, &v->pl), "pipeline layout");
  hr_status st;
  int n0 = v->sh->n_ptab;
  if (v->fp16) { /* the outputs' read-back conversion */
    const hr__plan *p = s->plan;
    for (int k = 0; k < 2; k++)
      if (v->out_val[k] >= 0 && (st = want_pipe(s, v, P_CVT, (int32_t[32]){0, (int32_t)voff(v, p, v->out_val[k])}))) return st;
  }
  /* each dispatch's pipeline, and where the kernels are tuned every kernel that applies (without
   * tuning those are never used: on lavapipe under ASan, compiling them all grew the process by
   * enough MB that test_vulkan_gov's 1000 MB profile refused the stream); listed first, then made
   * all at once over threads (make_pipes) */
  for (int k = 0; k < v->n_disp; k++) {
    if ((st = want_pipe(s, v, v->disp[k].pipe, v->disp[k].pc))) return st;
    for (int c = 0; v->tune && c < NCK; c++) if (v->disp[k].alt[c] >= 0 && (st = want_pipe(s, v, conv_kinds[c], v->disp[k].pc))) return st;
    if ((split_kind(v->disp[k].pipe) || (v->tune && (v->disp[k].alt[11] >= 0 || v->disp[k].alt[16] >= 0 || v->disp[k].alt[17] >= 0))) &&
        (st = want_pipe(s, v, P_CONVRED, v->disp[k].pc))) return st;
  }
  if ((st = make_pipes(s, v, n0))) return st;
  /* two sets of the same layout: ds for the recorded frame, ds_up for the ingest recorded per
   * frame (binding 4 then at the frame's bytes where they lie: see xq_on) */
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 10};
  VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 2, .poolSizeCount = 1, .pPoolSizes = &ps};
  VKTRY(vkCreateDescriptorPool(v->dev, &dpi, NULL, &v->dpool), "descriptor pool");
  VkDescriptorSetLayout dsls[2] = {v->dsl, v->dsl};
  VkDescriptorSet sets[2];
  VkDescriptorSetAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, .descriptorPool = v->dpool, .descriptorSetCount = 2, .pSetLayouts = dsls};
  VKTRY(vkAllocateDescriptorSets(v->dev, &dai, sets), "descriptor sets");
  v->ds = sets[0]; v->ds_up = sets[1];
  VkDescriptorBufferInfo bi[5] = {{v->dbuf.b, 0, VK_WHOLE_SIZE}, {v->frame_dev ? v->fbuf.b : v->stage.b, 0, VK_WHOLE_SIZE},
                                  {v->rback.b, 0, VK_WHOLE_SIZE}, {v->dbuf.b, v->f32_base < v->dbuf.size ? v->f32_base : 0, VK_WHOLE_SIZE},
                                  {v->frame_dev ? v->fbuf.b : v->stage.b, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet w[10];
  for (int k = 0; k < 10; k++)
    w[k] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = sets[k / 5], .dstBinding = (uint32_t)(k % 5),
                                  .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &bi[k % 5]};
  vkUpdateDescriptorSets(v->dev, 10, w, 0, NULL);
  v->up_bi = bi[4];
  return HR_OK;
}

/* Record dispatches [d0, d1) into cb (pipeline and set bound here). ts > 0: the plan's op count,
 * and timestamps are written after each op (query i + 1 = the end of op i). */
#define MAX_PENDING 64
static int hits(const int64_t (*a)[2], int na, const int64_t (*b)[2], int nb) {
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++)
      if (a[i][0] < b[j][1] && b[j][0] < a[i][1]) return 1;
  return 0;
}
/* One dispatch; a split convolution (split_kind) is two: its slices, a barrier, their reduction
 * (convred.comp, one output a thread, the same push constants). Returns the barriers it put in. */
static int emit_disp(vk *v, VkCommandBuffer cb, const vdisp *d, VkPipeline *cur) {
  VkPipeline pm = find_pipe(v, d->pipe, d->pc);
  if (pm != *cur) { vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pm); *cur = pm; }
  vkCmdPushConstants(cb, v->pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 128, d->pc);
  vkCmdDispatch(cb, d->gx, d->gy, 1);
  if (!split_kind(d->pipe)) return 0;
  barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  vdisp r;
  set_grid(&r, d->n_out);
  *cur = find_pipe(v, P_CONVRED, d->pc);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, *cur);
  vkCmdDispatch(cb, r.gx, r.gy, 1);
  return 1;
}
static void record_disp(vk *v, VkCommandBuffer cb, int d0, int d1, int ts) {
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, v->pl, 0, 1, &v->ds, 0, NULL);
  VkPipeline cur = VK_NULL_HANDLE;
  int64_t W[MAX_PENDING][2], R[MAX_PENDING][2];
  int nW = 0, nR = 0, pending = 0, scr = 0;
  for (int k = d0; k < d1; k++) {
    const vdisp *d = &v->disp[k];
    /* a barrier before this dispatch if it reads or writes what was written since the last one,
     * or writes what was read since (or always, with HR_VK_BARRIERS=all); a split-K convolution
     * after another one since the last barrier (the scratch is reused: scr) */
    if (pending && (!v->elide || nW + d->nw > MAX_PENDING || nR + d->nr > MAX_PENDING || hits(d->r, d->nr, (const int64_t (*)[2])W, nW) ||
                    hits(d->w, d->nw, (const int64_t (*)[2])W, nW) || hits(d->w, d->nw, (const int64_t (*)[2])R, nR) ||
                    (scr && split_kind(d->pipe)))) {
      barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      nW = nR = 0; scr = 0;
      v->n_barriers++;
    }
    for (int q = 0; q < d->nw; q++) { W[nW][0] = d->w[q][0]; W[nW][1] = d->w[q][1]; nW++; }
    for (int q = 0; q < d->nr; q++) { R[nR][0] = d->r[q][0]; R[nR][1] = d->r[q][1]; nR++; }
    pending = 1;
    if (emit_disp(v, cb, d, &cur)) { /* its own barrier: what came before is ordered, this one's reduction pending */
      v->n_barriers++;
      nW = nR = 0;
      for (int q = 0; q < d->nw; q++) { W[nW][0] = d->w[q][0]; W[nW][1] = d->w[q][1]; nW++; }
      for (int q = 0; q < d->nr; q++) { R[nR][0] = d->r[q][0]; R[nR][1] = d->r[q][1]; nR++; }
      scr = 1;
    }
    if (ts && (k + 1 == d1 || v->disp[k + 1].rop != d->rop)) {
      /* the end of this op, and of the ops up to the next dispatch's that have none (zero time) */
      int next = k + 1 < d1 ? v->disp[k + 1].rop : ts;
      for (int q = d->rop; q < next; q++) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, v->qp, (uint32_t)q + 1);
    }
  }
  barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, ST_ALL, AC_ALL);
}

/* Copies of every state slot between dbuf and sback (to_dev: sback -> dbuf), in the device's format. */
static void state_copies(hr_session *s, vk *v, VkCommandBuffer cb, int to_dev) {
  const hr__plan *p = s->plan;
  VkBufferCopy c[8];
  for (int k = 0; k < p->n_state; k++) {
    VkDeviceSize d = idx_bytes(v, v->state_off[k] / 4), h = (VkDeviceSize)v->sback_off[k];
    c[k] = (VkBufferCopy){.srcOffset = to_dev ? h : d, .dstOffset = to_dev ? d : h, .size = (VkDeviceSize)(p->state_bytes[k] / 4 * v->es)};
  }
  if (p->n_state) vkCmdCopyBuffer(cb, to_dev ? v->sback.b : v->dbuf.b, to_dev ? v->dbuf.b : v->sback.b, (uint32_t)p->n_state, c);
}

/* The frame's command buffer: op_times = a timestamp after every op (for profiles: on the H200 they
 * cost 0.35 ms of a 3.8 ms frame), else the frame's first and last only. part 0: the whole frame;
 * with the frame beside the network (xq_on), 1: the dispatches after the ingest up to the tail's
 * (cb_xa; the ingest and the first timestamp are in cb_up), 2: the tail on (cb_xb, after the wait
 * for the frame's copy). */
static hr_status record_frame(hr_session *s, vk *v, VkCommandBuffer cb, int op_times, int part) {
  const hr__plan *p = s->plan;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKTRY(vkBeginCommandBuffer(cb, &bi), "recording");
  if (v->ts_ok && part == 0) {
    vkCmdResetQueryPool(cb, v->qp, 0, (uint32_t)p->n_rops + 1);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, v->qp, 0);
  }
  if (part != 2)
    barrier(cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  v->n_barriers = 0;
  op_times = op_times && v->ts_ok && part == 0;
  if (op_times) /* ops before the first dispatch (none has one) end at once */
    for (int q = 0; q < (v->n_disp ? v->disp[0].rop : p->n_rops); q++) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, v->qp, (uint32_t)q + 1);
  const int d0 = part == 0 ? 0 : part == 1 ? v->n_ing : v->d_fgf, d1 = part == 1 ? v->d_fgf : v->n_disp;
  if (d1 > d0) record_disp(v, cb, d0, d1, op_times ? p->n_rops : 0);
  if (part == 1) {
    VKTRY(vkEndCommandBuffer(cb), "recording");
    return HR_OK;
  }
  if (v->ts_ok && !op_times) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, v->qp, (uint32_t)p->n_rops);
  if (!op_times && part == 0 && getenv("HR_VK_VERBOSE")) {
    int nsplit = 0, nd3 = 0;
    for (int k = 0; k < v->n_disp; k++) { nsplit += split_kind(v->disp[k].pipe); nd3 += v->disp[k].pipe == P_CONVD16 || v->disp[k].pipe == P_CONVD32 || v->disp[k].pipe == P_CONVDS16 || v->disp[k].pipe == P_CONVDS32; }
    fprintf(stderr, "headroom vulkan: %s, %d ops, %d dispatches (%d convolutions split: one more each), %d direct 3x3, %d barriers, buffer %.1f MB\n",
            v->props.deviceName, p->n_rops, v->n_disp, nsplit, nd3, v->n_barriers, (double)v->dbuf.size / 1e6);
  }
  for (int k = 0; k < 2; k++) {
    if (v->out_val[k] < 0 || (k == 0 && v->alpha_direct)) continue;
    int64_t n = hr__numel(&p->vals[v->out_val[k]].t);
    int64_t o = voff(v, p, v->out_val[k]);
    if (v->fp16 && o < F32_BIT) { /* converted to fp32 on the way out */
      vdisp d;
      memset(&d, 0, sizeof d);
      set_grid(&d, n);
      d.pc[0] = (int32_t)n; d.pc[1] = (int32_t)voff(v, p, v->out_val[k]); d.pc[2] = (int32_t)(v->out_off[k] / 4);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, find_pipe(v, P_CVT, d.pc));
      vkCmdPushConstants(cb, v->pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 128, d.pc);
      vkCmdDispatch(cb, d.gx, d.gy, 1);
      continue;
    }
    VkBufferCopy c = {.srcOffset = idx_bytes(v, o), .dstOffset = (VkDeviceSize)v->out_off[k],
                      .size = (VkDeviceSize)n * 4};
    vkCmdCopyBuffer(cb, v->dbuf.b, v->rback.b, 1, &c);
  }
  if (v->sback_rec) state_copies(s, v, cb, 0);
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  VKTRY(vkEndCommandBuffer(cb), "recording");
  return HR_OK;
}

/* The frame's recorded command buffers: whole (cb_main), profiled (cb_prof), and cut for the frame
 * beside the network (cb_xa, cb_xb). */
static hr_status record_frames(hr_session *s, vk *v) {
  hr_status st = record_frame(s, v, v->cb_main, 0, 0);
  if (!st && v->ts_ok) st = record_frame(s, v, v->cb_prof, 1, 0);
  if (!st && v->xq_plan) st = record_frame(s, v, v->cb_xa, 0, 1);
  if (!st && v->xq_plan) st = record_frame(s, v, v->cb_xb, 0, 2);
  return st;
}
static hr_status record_main(hr_session *s, vk *v) {
  const hr__plan *p = s->plan;
  hr_status st = record_frames(s, v);
  if (st) return st;
  /* the state-zeroing command buffer */
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKTRY(vkBeginCommandBuffer(v->cb_zero, &bi), "recording");
  for (int k = 0; k < p->n_state; k++) /* sizes rounded up to 4 bytes: slots are 256-byte aligned (128 in fp16) */
    vkCmdFillBuffer(v->cb_zero, v->dbuf.b, phys(v, v->state_off[k]), (phys(v, p->state_bytes[k]) + 3) & ~(VkDeviceSize)3, 0);
  barrier(v->cb_zero, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, ST_ALL, AC_ALL);
  VKTRY(vkEndCommandBuffer(v->cb_zero), "recording");
  return HR_OK;
}

/* A dispatch's tuning key (tune_key). */
static void tune_key_of(const vdisp *d, tune_key *key) {
  memset(key, 0, sizeof *key);
  memcpy(key->pc, d->pc + 5, sizeof key->pc); /* pc[5..25]: shapes, geometry, bounds, epilogue; not the offsets */
  key->split = d->split_s[0] | d->split_s[1] << 8 | d->split_s[2] << 16;
  key->mask = dmask(d->pc);
  memcpy(key->alt, d->alt, sizeof key->alt);
}
static int tune_find(const vk_dev *sh, const tune_key *key) {
  for (int q = 0; q < sh->n_picks; q++)
    if (!memcmp(&sh->picks[q].key, key, sizeof *key)) return sh->picks[q].pick;
  return -1;
}

/* Time every applicable kernel of every dense convolution on this device (3 runs each, after one
 * warm-up, timestamp queries) and keep the fastest. Before the first frame: the buffer's contents
 * do not matter yet (it is zeroed and the weights uploaded afterwards). One dispatch, one kernel: a
 * convolution the same as another but for its offsets takes the pick of the first (RVM repeats its
 * blocks' shapes; timed apart, noise could give two of them different kernels, so a plan's output
 * would depend on that noise), and one the session's earlier plans timed (a rung visited before)
 * takes that pick without timing (HR_VK_TUNE_KEEP=0: timed again). */
static hr_status tune_convs(hr_session *s, vk *v) {
  int T = 0;
  v->tuned_timed = v->tuned_kept = v->tuned_same = 0;
  const char *keep = getenv("HR_VK_TUNE_KEEP");
  /* timed[k]: nonzero for a dispatch timed here (after the timing: its pick + 1); same[k]: the
   * timed dispatch whose pick k takes, or -1 */
  unsigned char *timed = calloc((size_t)v->n_disp + 1, 1);
  int *same = malloc(sizeof *same * ((size_t)v->n_disp + 1));
  tune_key *keys = malloc(sizeof *keys * ((size_t)v->n_disp + 1));
  uint64_t *ts = NULL;
  VkQueryPool qp = VK_NULL_HANDLE;
  hr_status st = timed && same && keys ? HR_OK : HR_ENOMEM;
  for (int k = 0; !st && k < v->n_disp; k++) {
    same[k] = -1;
    if (v->disp[k].alt[0] < 0) continue;
    tune_key_of(&v->disp[k], &keys[k]);
    int c = keep && *keep == '0' ? -1 : tune_find(v->sh, &keys[k]);
    if (c >= 0) { set_conv_kind(&v->disp[k], c); v->tuned_kept++; continue; }
    for (int j = 0; j < k && same[k] < 0; j++)
      if (timed[j] && !memcmp(&keys[j], &keys[k], sizeof *keys)) same[k] = j;
    if (same[k] < 0) { timed[k] = 1; T++; } else v->tuned_same++;
  }
  if (st || !T || !v->ts_ok) goto out;
  /* room for this plan's picks, made before the timing (nothing to undo after it) */
  if (v->sh->n_picks + T > v->sh->cap_picks) {
    int cap = v->sh->n_picks + T + 64;
    tune_pick *np = realloc(v->sh->picks, sizeof *np * (size_t)cap);
    if (!np) { st = HR_ENOMEM; goto out; }
    v->sh->picks = np; v->sh->cap_picks = cap;
  }
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = (uint32_t)T * 2 * NCK};
  VkResult qr = vkCreateQueryPool(v->dev, &qi, NULL, &qp);
  if (qr != VK_SUCCESS) {
    qp = VK_NULL_HANDLE;
    st = fail(s, qr == VK_ERROR_OUT_OF_HOST_MEMORY || qr == VK_ERROR_OUT_OF_DEVICE_MEMORY ? HR_ENOMEM : HR_EIO, "tuning query pool", qr);
    goto out;
  }
  if (!(ts = calloc((size_t)T * 2 * NCK, sizeof *ts))) { st = HR_ENOMEM; goto out; }
  /* twice, the first pass only warming the GPU up: an idle H200 starts at 345 MHz, and timings
   * taken while its clock ramps picked a 2x slower kernel for a large layer (191 us, 106 us tuned
   * warm); but not on a device taken over from a replaced plan (a replan: the device was just
   * running frames, or tuning at a stream's create): on the H200 the replans to 3 new rungs took
   * 92-114 ms without the warm-up pass against 157-261 ms with it, and the kernels picked ran as
   * fast (back to back 2.19 / 1.91 / 1.67 ms a frame against 2.15 / 1.91 / 1.65).
   * HR_VK_TUNE_WARM=1: always warm up first; =0: never. */
  const char *warm = getenv("HR_VK_TUNE_WARM");
  const int skip_warm = warm && *warm ? *warm == '0' : v->shared;
  for (int pass = skip_warm ? 1 : 0; !st && pass < 2; pass++) {
    st = tmp_begin(s, v);
    if (st) break;
    VkCommandBuffer cb = v->cb_tmp;
    vkCmdResetQueryPool(cb, qp, 0, (uint32_t)T * 2 * NCK);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, v->pl, 0, 1, &v->ds, 0, NULL);
    int t = 0;
    for (int k = 0; k < v->n_disp; k++) {
      if (!timed[k]) continue;
      for (int c = 0; c < NCK; c++) {
        vdisp e = v->disp[k];
        uint32_t q = (uint32_t)(t * 2 * NCK + c * 2);
        if (e.alt[c] < 0) { /* not applicable: an empty interval */
          vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, q);
          vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, q + 1);
          continue;
        }
        set_conv_kind(&e, c);
        VkPipeline cur = VK_NULL_HANDLE;
        for (int rep = 0; rep < 4; rep++) {
          if (rep == 1) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, q);
          emit_disp(v, cb, &e, &cur);
          barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                  VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        }
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, q + 1);
      }
      t++;
    }
    st = tmp_end(s, v);
  }
  if (!st) {
    VkResult r = vkGetQueryPoolResults(v->dev, qp, 0, (uint32_t)T * 2 * NCK, sizeof(uint64_t) * (size_t)T * 2 * NCK, ts, sizeof(uint64_t),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) st = fail(s, HR_EIO, "tuning results", r);
  }
  if (st) goto out;
  int picks[NCK] = {0};
  for (int k = 0, t = 0; k < v->n_disp; k++) {
    if (!timed[k]) continue;
    int best = -1;
    uint64_t bt = 0;
    for (int c = 0; c < NCK; c++) {
      if (v->disp[k].alt[c] < 0) continue;
      uint64_t dt = ts[t * 2 * NCK + c * 2 + 1] - ts[t * 2 * NCK + c * 2];
      if (best < 0 || dt < bt) { best = c; bt = dt; }
    }
    set_conv_kind(&v->disp[k], best);
    timed[k] = (unsigned char)(best + 1);
    picks[best]++;
    t++;
    v->sh->picks[v->sh->n_picks++] = (tune_pick){keys[k], best};
  }
  for (int k = 0; k < v->n_disp; k++) /* the same dispatch elsewhere: the same kernel */
    if (same[k] >= 0) set_conv_kind(&v->disp[k], timed[same[k]] - 1);
  v->tuned_timed = T;
  if (getenv("HR_VK_VERBOSE"))
    fprintf(stderr, "headroom vulkan: tuned %d convolutions: %d one-per-thread, %d 4x4-blocked, %d split-reduction, %d/%d/%d tiled 64/32/16, "
            "%d/%d tiled 2x2 32x32/64x16, %d tiled split-K, %d/%d tensor-core 128x32/128x16, %d split-K across workgroups, %d/%d direct 3x3 16/32, %d split-reduction 8 a workgroup, %d depthwise 4 pixels a thread, %d/%d direct 3x3 split 16/32\n",
            T, picks[0], picks[1], picks[2], picks[3], picks[4], picks[5], picks[6], picks[7], picks[8], picks[9], picks[10], picks[11], picks[12],
            picks[13], picks[14], picks[15], picks[16], picks[17]);
out:
  free(ts); free(timed); free(same); free(keys);
  if (qp) vkDestroyQueryPool(v->dev, qp, NULL);
  return st;
}

static void vk_destroy(void *impl) {
  vk *v = impl;
  if (!v) return;
  /* the last plan of the session to go takes the shared device, pipelines and picks with it */
  const int last = !v->sh || --v->sh->refs == 0;
  if (v->dev) {
    vkDeviceWaitIdle(v->dev);
    if (last) {
      for (int k = 0; v->sh && k < v->sh->n_ptab; k++) vkDestroyPipeline(v->dev, v->sh->ptab[k].pl, NULL);
      if (v->pl) vkDestroyPipelineLayout(v->dev, v->pl, NULL);
      if (v->dsl) vkDestroyDescriptorSetLayout(v->dev, v->dsl, NULL);
    }
    if (v->dpool) vkDestroyDescriptorPool(v->dev, v->dpool, NULL);
    if (v->cpool) vkDestroyCommandPool(v->dev, v->cpool, NULL);
    if (v->xpool) vkDestroyCommandPool(v->dev, v->xpool, NULL);
    if (v->xsem) vkDestroySemaphore(v->dev, v->xsem, NULL);
    if (v->fence) vkDestroyFence(v->dev, v->fence, NULL);
    if (v->qp) vkDestroyQueryPool(v->dev, v->qp, NULL);
    if (v->copy_pool) pthreadpool_destroy(v->copy_pool);
    buf_free(v, &v->dbuf); buf_free(v, &v->stage); buf_free(v, &v->rback); buf_free(v, &v->fbuf); buf_free(v, &v->sback);
    for (int k = 0; last && v->sh && k < v->sh->n_imp; k++) { vkDestroyBuffer(v->dev, v->sh->imp[k].b, NULL); vkFreeMemory(v->dev, v->sh->imp[k].m, NULL); }
    if (last) vkDestroyDevice(v->dev, NULL);
  }
  if (last) {
    if (v->msgr) {
      PFN_vkDestroyDebugUtilsMessengerEXT rm = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(v->inst, "vkDestroyDebugUtilsMessengerEXT");
      if (rm) rm(v->inst, v->msgr, NULL);
    }
    if (v->inst) vkDestroyInstance(v->inst, NULL);
    if (v->sh) free(v->sh->picks);
    free(v->sh);
  }
  free(v->voff); free(v->cdesc); free(v->f32off); free(v->remap); free(v->vpar); free(v->vdel); free(v->vps); free(v->disp); free(v->ts); free(v->fused); free(v->host);
  free(v);
}

/* The settings a device is made for: a plan takes over another's device only where they agree. */
static void dev_wants(char *w, size_t n) {
  const char *e[5] = {getenv("HR_VK_FP16"), getenv("HR_VK_MMA"), getenv("HR_VULKAN_VALIDATION"), getenv("HR_VULKAN_DEVICE"), getenv("HR_VK_XQ")};
  snprintf(w, n, "fp16=%.8s mma=%.8s validation=%.8s xq=%.4s device=%.100s", e[0] ? e[0] : "", e[1] ? e[1] : "", e[2] ? e[2] : "",
           e[4] ? e[4] : "", e[3] ? e[3] : "");
}

/* Take over the device of prev, the plan this one replaces (see vk_dev). 1: taken. */
static int adopt(vk *v, vk *prev) {
  const char *sh = getenv("HR_VK_SHARE");
  if (!prev || !prev->sh || !prev->dev || !prev->pl || (sh && *sh == '0')) return 0;
  char w[sizeof prev->sh->wants];
  dev_wants(w, sizeof w);
  if (strcmp(w, prev->sh->wants)) return 0;
  if (vkDeviceWaitIdle(prev->dev) != VK_SUCCESS) return 0; /* lost: the new plan makes a device of its own */
  v->sh = prev->sh; v->sh->refs++; v->shared = 1;
  v->inst = prev->inst; v->msgr = prev->msgr; v->pd = prev->pd; v->dev = prev->dev; v->q = prev->q; v->qf = prev->qf;
  v->xq_on = prev->xq_on; v->xq = prev->xq; v->xqf = prev->xqf;
  v->props = prev->props; v->mem = prev->mem; v->ts_ok = prev->ts_ok; v->fp16 = prev->fp16; v->es = prev->es; v->mma = prev->mma;
  v->dsl = prev->dsl; v->pl = prev->pl;
  return 1;
}


/* The constant block of v is that of pv, the plan it replaces: the same values at the same places
 * in the same storage (each constant the same data, or equal data where a plan made its own).
 * HR_VK_SHARE_CONSTS=0: never (each plan uploads its weights). */
static int same_consts(const vk *v, const vk *pv) {
  const char *e = getenv("HR_VK_SHARE_CONSTS");
  if ((e && *e == '0') || !pv->dbuf.b || pv->const_bytes != v->const_bytes || pv->fp16 != v->fp16 || pv->w32 != v->w32 ||
      pv->n_cdesc != v->n_cdesc)
    return 0;
  for (int i = 0; i < v->n_cdesc; i++) {
    const struct cdesc *a = &v->cdesc[i], *b = &pv->cdesc[i];
    if (a->rel != b->rel || a->n != b->n) return 0;
    if (a->data != b->data && memcmp(a->data, b->data, sizeof(float) * (size_t)a->n)) return 0;
  }
  return 1;
}

static hr_status vk_create_(hr_session *s, vk *v, vk *prev) {
  const hr__plan *p = s->plan;
  hr_status st;
  v->pro = -1;
  const double tc0 = mono_ms();
  if (!adopt(v, prev)) { /* first: the layout depends on fp16 storage */
    if (!(v->sh = calloc(1, sizeof *v->sh))) return HR_ENOMEM;
    v->sh->refs = 1;
    dev_wants(v->sh->wants, sizeof v->sh->wants);
    if ((st = make_device(s, v))) return st;
  }
  const double tc_dev = mono_ms();
  /* layout of the device buffer: arena | state | src | constants, and in fp16 the fp32 range */
  int64_t off = align256(p->arena_bytes);
  for (int k = 0; k < p->n_state; k++) { v->state_off[k] = off; off = align256(off + p->state_bytes[k]); }
  v->src_off = -1;
  if (p->src_val >= 0 && !p->vals[p->vals[p->src_val].root].src_virtual) {
    v->src_off = off; off = align256(off + (int64_t)p->width * p->height * 12);
  }
  v->voff = malloc(sizeof *v->voff * (size_t)p->n_vals);
  if (!v->voff) return HR_ENOMEM;
  for (int k = 0; k < p->n_vals; k++) v->voff[k] = -1;
  v->const_off0 = off;
  if (!(v->cdesc = malloc(sizeof *v->cdesc * (size_t)(p->n_vals > 0 ? p->n_vals : 1)))) return HR_ENOMEM;
  for (int i = 0; i < p->n_rops; i++)
    for (int k = 0; k < p->rops[i].n_in; k++) {
      int id = p->rops[i].in[k];
      const hr__val *x = &p->vals[id];
      if (x->kind != V_CONST || x->t.dt != HR_DT_FLOAT || !x->t.data || v->voff[id] >= 0) continue;
      v->cdesc[v->n_cdesc++] = (struct cdesc){off - v->const_off0, hr__numel(&x->t), x->t.data};
      v->voff[id] = off; off = align256(off + hr__numel(&x->t) * 4);
    }
  v->const_bytes = off - v->const_off0;
  /* fp16: the values after the last dense convolution (the guided filter's low-resolution
   * statistics, its output) stay fp32, each root in its own slot of the fp32 range: var =
   * mean(x^2) - mean(x)^2 rounded to fp16 can fall below -eps, and alpha keeps fp32 */
  v->f32off = malloc(sizeof *v->f32off * (size_t)p->n_vals);
  if (!v->f32off) return HR_ENOMEM;
  for (int k = 0; k < p->n_vals; k++) v->f32off[k] = -1;
  const char *tail32 = getenv("HR_VK_F32TAIL");
  const char *w32 = getenv("HR_VK_W32");
  v->w32 = v->fp16 && !(w32 && *w32 == '0');
  int64_t n32 = 0;
  if (v->w32) { /* weights fp32: they are read from the caches, not memory, and fp16 doubles the error */
    v->c32 = 0; n32 = v->const_bytes / 4; off = v->const_off0;
  }
  if (!(v->remap = malloc(sizeof *v->remap * (size_t)p->n_vals))) return HR_ENOMEM;
  off = chain_slots(p, v->fp16, v->remap, off);
  v->vpar = malloc(sizeof *v->vpar * (size_t)p->n_vals);
  v->vdel = malloc(sizeof *v->vdel * (size_t)p->n_vals);
  v->vps = malloc(sizeof *v->vps * (size_t)p->n_vals);
  if (!v->vpar || !v->vdel || !v->vps) return HR_ENOMEM;
  off = find_views(p, v->fp16, v->remap, v->vpar, v->vdel, v->vps, off);
  if ((v->scr_n = split_scratch(p, v->fp16))) { off = align256(off); v->scr_off = off; off += v->scr_n * 4; }
  off = se_folds(v, p, off);
  if (v->fp16 && !(tail32 && *tail32 == '0')) {
    int last = -1, ok = 1;
    for (int i = 0; i < p->n_rops; i++)
      if (p->rops[i].op == HR_OP_CONV2D || p->rops[i].op == HR_OP_FUSED_CONV2D) last = i;
    for (int i = last + 1; i < p->n_rops; i++) /* slices written in place stay where the planner put them */
      if (p->rops[i].out_c_total || p->rops[i].in_place_mask) ok = 0;
    for (int i = last + 1; ok && last >= 0 && i < p->n_rops; i++)
      for (int k = 0; k < p->rops[i].n_out; k++) {
        int root = p->vals[p->rops[i].out[k]].root;
        if (p->vals[root].storage != S_ARENA || v->f32off[root] >= 0) continue;
        v->f32off[root] = n32; n32 += (hr__numel(&p->vals[root].t) + 63) & ~(int64_t)63;
      }
  }
  v->f32_bytes = n32 * 4;
  /* dispatches */
  if (v->src_off >= 0) {
    vdisp *d = add_disp(v, P_SRCRESIZE, 0, (int64_t)p->width * p->height);
    if (!d) return HR_ENOMEM;
    d->pc[1] = (int32_t)(v->src_off / 4); d->pc[2] = p->width; d->pc[3] = p->height;
  }
  v->fused = calloc((size_t)p->n_rops + 1, 1);
  v->host = calloc((size_t)p->n_rops + 1, sizeof *v->host);
  if (!v->fused || !v->host) return HR_ENOMEM;
  /* a Pad folded into the convolution after it comes out of the op list afterwards */
  char *pad_folded = calloc((size_t)p->n_rops + 1, 1);
  if (!pad_folded) return HR_ENOMEM;
  for (int i = 0; i < p->n_rops; i++) {
    vchain ch;
    chain_of(v, p, i, &ch);
    if (ch.pad >= 0) pad_folded[ch.pad] = 1;
    if (ch.flags & 2048) { /* computed in the candidate's epilogue */
      v->fused[ch.gsub] = v->fused[ch.gmul] = 3;
      v->host[ch.gsub] = v->host[ch.gmul] = i;
    }
  }
  for (int k = 0; k < v->n_sew; k++) { v->fused[v->sew[k].m] = 3; v->host[v->sew[k].m] = v->sew[k].j; } /* x * s: in the projection's weights */
  for (int i = 0; i < p->n_rops; i++)
    if (!v->fused[i] && !v->fused[i + 1] && cat_resize(p, v->fp16, i)) { v->fused[i] = 3; v->host[i] = i + 1; } /* read by the resize */
  /* lowered in order; a folded Pad's dispatches are dropped below */
  int lr = lr_fused(p, v->fp16);
  for (int i = 0; i < p->n_rops; i++) {
    if (v->fused[i]) continue;
    if (lr && i == p->fgf_lr.first) { /* the low-resolution guided filter: one dispatch, the group's other ops marked fused */
      const hr__fgf_lr *f = &p->fgf_lr;
      const hr__tensor *y = &p->vals[f->y].t, *A = &p->vals[f->A].t;
      int64_t oy = voff(v, p, f->y), ox = voff(v, p, f->src), oa = voff(v, p, f->A), ob = voff(v, p, f->b);
      if (oy < 0 || ox < 0 || oa < 0 || ob < 0) {
        snprintf(s->err, sizeof s->err, "Vulkan backend: the guided filter's values have no storage");
        free(pad_folded);
        return HR_ENOTSUP;
      }
      vdisp *d = add_disp(v, P_FGFLR, i, hr__numel(A));
      if (!d) { free(pad_folded); return HR_ENOMEM; }
      d->pc[1] = (int32_t)oy; d->pc[2] = (int32_t)ox; d->pc[3] = (int32_t)oa; d->pc[4] = (int32_t)ob;
      d->pc[5] = (int32_t)y->dims[1]; d->pc[6] = (int32_t)y->dims[2]; d->pc[7] = (int32_t)A->dims[1]; d->pc[8] = (int32_t)A->dims[2];
      d->pc[9] = (int32_t)p->vals[f->wv[0]].t.dims[0]; d->pc[10] = (int32_t)p->vals[f->wh[0]].t.dims[1];
      for (int q = 0; q < 4; q++) { d->pc[11 + q] = (int32_t)voff(v, p, f->wv[q]); d->pc[15 + q] = (int32_t)voff(v, p, f->wh[q]); }
      d->pc[19] = fbits(f->eps);
      d->nr = 2; d->nw = 2;
      d->r[0][0] = oy * 4; d->r[0][1] = (oy + hr__numel(y)) * 4; d->r[1][0] = ox * 4; d->r[1][1] = (ox + hr__numel(&p->vals[f->src].t)) * 4;
      d->w[0][0] = oa * 4; d->w[0][1] = (oa + hr__numel(A)) * 4; d->w[1][0] = ob * 4; d->w[1][1] = (ob + hr__numel(A)) * 4;
      for (int j = i + 1; j <= f->last; j++) v->fused[j] = 1;
      continue;
    }
    int d0 = v->n_disp;
    vchain ch;
    chain_of(v, p, i, &ch);
    if (pad_folded[i]) { v->fused[i] = 2; continue; }
    if (mul_concat(p, v->fp16, i) && !v->fused[i + 1]) { /* this Mul inside the concat after it, unless the concat's output lies over an operand */
      const hr__rop *mr = &p->rops[i], *cr = &p->rops[i + 1];
      int64_t olo = voff(v, p, cr->out[0]) * 4, ohi = olo + hr__numel(&p->vals[cr->out[0]].t) * 4, rr[2][2];
      int clash = 0;
      for (int k = 0; k < 2; k++) {
        int x = mr->in[k];
        while (v->vpar[x] >= 0) x = v->vpar[x];
        rr[k][0] = voff(v, p, x) * 4; rr[k][1] = rr[k][0] + hr__numel(&p->vals[x].t) * 4;
        if (rr[k][0] < 0 || (rr[k][0] < ohi && olo < rr[k][1])) clash = 1;
      }
      if (!clash) {
        v->pro = i;
        st = lower_rop(s, v, i + 1, NULL);
        v->pro = -1;
        if (st) { free(pad_folded); return st; }
        for (int k = d0; k < v->n_disp; k++) {
          vdisp *d = &v->disp[k];
          annotate(v, p, d, cr);
          for (int q = 0; q < 2 && d->nr < HR_ROP_MAX_IN; q++) { d->r[d->nr][0] = rr[q][0]; d->r[d->nr][1] = rr[q][1]; d->nr++; }
        }
        v->fused[i + 1] = 1;
        continue;
      }
    }
    if (!is_conv(p->rops[i].op) && sub_fold(p, v->fp16, i) && !v->fused[i + 1]) { /* this Sub inside the binary op after it */
      v->pro = i;
      st = lower_rop(s, v, i + 1, NULL);
      v->pro = -1;
      if (st) { free(pad_folded); return st; }
      const hr__rop *sr = &p->rops[i];
      const int xin = sr->in[p->vals[sr->in[0]].kind == V_CONST ? 1 : 0];
      for (int k = d0; k < v->n_disp; k++) {
        annotate(v, p, &v->disp[k], &p->rops[i + 1]);
        add_read(v, p, &v->disp[k], xin);
      }
      v->fused[i + 1] = 1;
      continue;
    }
    if (ch.pad >= 0 && !pad_folded[ch.pad]) ch.pad = -1;
    int act = ch.end > i;
    const struct sew *sf = NULL, *sj = NULL; /* this op makes an excitation's s / is its projection */
    for (int k = 0; k < v->n_sew; k++) {
      if (v->sew[k].f == i) sf = &v->sew[k];
      if (v->sew[k].j == i) sj = &v->sew[k];
    }
    if (sf) ch.flags |= 1024 | (sf->ocp << 16);
    st = lower_rop(s, v, i, is_conv(p->rops[i].op) ? &ch : NULL);
    if (st) { free(pad_folded); return st; }
    for (int k = d0; k < v->n_disp; k++) {
      annotate(v, p, &v->disp[k], &p->rops[i]);
      vdisp *d = &v->disp[k];
      if (is_conv(p->rops[i].op) && (act || ch.pad >= 0)) { /* reads its input (or the Pad's) and the residual, writes the chain's output */
        int ins[3] = {ch.pad >= 0 ? ch.pad_in : p->rops[i].in[0], ch.res, (ch.flags & 512) ? v->vpar[ch.mul2] : -1};
        d->nr = 0;
        for (int q = 0; q < 3; q++) {
          int64_t o = ins[q] >= 0 ? voff(v, p, ins[q]) : -1;
          if (o < 0) continue;
          d->r[d->nr][0] = o * 4; d->r[d->nr][1] = o * 4 + hr__numel(&p->vals[ins[q]].t) * 4; d->nr++;
        }
        int64_t o = voff(v, p, ch.out);
        d->nw = 1; d->w[0][0] = o * 4; d->w[0][1] = o * 4 + hr__numel(&p->vals[ch.out].t) * 4;
      }
      if (sf) { /* also writes W' from the projection's weights */
        d->pc[26] = (int32_t)voff(v, p, p->rops[sf->j].in[1]); d->pc[29] = (int32_t)sf->wq;
        d->w[d->nw][0] = sf->wq * 4; d->w[d->nw][1] = (sf->wq + sf->cin * sf->ocp) * 4; d->nw++;
      }
      if (reads_cat(v, p, i)) { /* reads the concat's sources, not its output */
        d->nr = 0;
        for (int q = 0; q < 2; q++) add_read(v, p, d, p->rops[i - 1].in[q]);
      }
      if (sj) { /* reads x (not x * s) and W' */
        int64_t xo = voff(v, p, sj->x), mo = voff(v, p, p->rops[sj->m].out[0]);
        d->pc[1] = (int32_t)xo; d->pc[2] = (int32_t)sj->wq;
        for (int q = 0; q < d->nr; q++)
          if (d->r[q][0] == mo * 4) { d->r[q][0] = xo * 4; d->r[q][1] = (xo + hr__numel(&p->vals[sj->x].t)) * 4; }
        if (d->nr < HR_ROP_MAX_IN) { d->r[d->nr][0] = sj->wq * 4; d->r[d->nr][1] = (sj->wq + sj->cin * sj->ocp) * 4; d->nr++; }
      }
    }
    for (int j = i + 1; act && j <= ch.end; j++) v->fused[j] = 1;
  }
  free(pad_folded);
  if (getenv("HR_VK_DUMP")) /* the dispatch list, one a line (stderr) */
    for (int k = 0; k < v->n_disp; k++) {
      const vdisp *d = &v->disp[k];
      const hr__rop *r = &p->rops[d->rop];
      fprintf(stderr, "disp %3d op %3d %-16s %-10s n %9d out", k, d->rop, hr__op_name(r->op), shaders[d->pipe].name, d->pc[0]);
      for (int q = 0; q < r->n_out; q++) {
        const hr__tensor *t = &p->vals[r->out[q]].t;
        fprintf(stderr, " [");
        for (int a = 0; a < t->rank; a++) fprintf(stderr, "%s%lld", a ? "x" : "", (long long)t->dims[a]);
        fprintf(stderr, "]");
      }
      fprintf(stderr, " in");
      for (int q = 0; q < r->n_in; q++) if (p->vals[r->in[q]].kind != V_CONST) fprintf(stderr, " v%d<-op%d", r->in[q], p->vals[p->vals[r->in[q]].root].def);
      fprintf(stderr, "\n");
    }
  if (v->src_off >= 0 && v->n_disp) { /* the input materialisation writes the src region */
    v->disp[0].nw = 1; v->disp[0].w[0][0] = v->src_off; v->disp[0].w[0][1] = v->src_off + (int64_t)p->width * p->height * 12;
  }
  const char *bar = getenv("HR_VK_BARRIERS");
  v->elide = !(bar && !strcmp(bar, "all"));
  VkDeviceSize salign = v->props.limits.minStorageBufferOffsetAlignment > 256 ? v->props.limits.minStorageBufferOffsetAlignment : 256;
  v->f32_base = (phys(v, off) + salign - 1) / salign * salign;
  VkDeviceSize dbytes = v->f32_base + (VkDeviceSize)v->f32_bytes;
  if ((uint64_t)dbytes > v->props.limits.maxStorageBufferRange || off / 4 >= F32_BIT || v->f32_bytes / 4 >= F32_BIT) {
    snprintf(s->err, sizeof s->err, "Vulkan: the plan needs a %.1f MB buffer, the device binds at most %.1f MB", (double)dbytes / 1e6,
             (double)v->props.limits.maxStorageBufferRange / 1e6);
    return HR_ENOTSUP;
  }
  VkBufferUsageFlags use = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if ((st = buf_make(s, v, &v->dbuf, dbytes, use, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "activation arena, state and weights")))
    return st;
  v->frame_w = p->width; v->frame_h = p->height;
  VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const char *sm = getenv("HR_VK_STAGE"); /* "wc": the first host-visible type, not a cached one (for comparison) */
  VkMemoryPropertyFlags stage_pref = sm && !strcmp(sm, "wc") ? 0 : VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  vk *pv = v->shared ? prev : NULL;   /* the replaced plan, on this same device: its buffers may be shared */
  if ((st = buf_take(s, v, &v->stage, pv ? &pv->stage : NULL, (VkDeviceSize)(FRAME_HDR + (int64_t)p->width * p->height * 12 + 256), use, hv,
                     stage_pref, "frame staging buffer")))
    return st;
  const char *wm = getenv("HR_VK_WAIT"), *ct = getenv("HR_VK_COPY_THREADS"), *tr = getenv("HR_VK_TRACE");
  v->spin = wm && !strcmp(wm, "spin") ? 1 : wm && !strcmp(wm, "block") ? 0 : 2;
  int ncopy = ct && *ct ? atoi(ct) : 4;
  if (ncopy > 1 && !(v->copy_pool = pthreadpool_create((size_t)ncopy))) return HR_ENOMEM;
  v->trace = tr && *tr && strcmp(tr, "0");
  const char *sp = getenv("HR_VK_SPIN_MS");
  v->spin_ms = sp && *sp ? atof(sp) : 0.3;
  const char *fm = getenv("HR_VK_FRAME");
  v->frame_dev = !(fm && !strcmp(fm, "host"));
  /* the frame beside the network: the ingests lead the dispatches, none comes later */
  v->n_ing = 0;
  while (v->n_ing < v->n_disp && v->disp[v->n_ing].pipe == P_SRCRESIZE) v->n_ing++;
  v->d_fgf = v->n_ing;
  while (v->d_fgf < v->n_disp && v->disp[v->d_fgf].pipe != P_FGF) v->d_fgf++;
  v->xq_plan = v->xq_on && v->frame_dev && v->n_ing > 0;
  for (int k = v->n_ing; k < v->n_disp; k++) if (v->disp[k].pipe == P_SRCRESIZE) v->xq_plan = 0;
  if (v->frame_dev &&
      (st = buf_take(s, v, &v->fbuf, pv ? &pv->fbuf : NULL, v->stage.size, use, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "frame buffer on the device")))
    return st;
  v->out_val[0] = p->alpha_val; v->out_val[1] = p->fgr_val;
  int64_t rb = 0;
  for (int k = 0; k < 2; k++) {
    v->out_off[k] = -1;
    if (v->out_val[k] < 0) continue;
    const int64_t n = hr__numel(&p->vals[v->out_val[k]].t);
    v->out_off[k] = rb;
    if (k == 0 && v->alpha8) v->alpha8_flag = rb + (n + 3) / 4 * 4;
    rb = align256(rb + (k == 0 && v->alpha8 ? (n + 3) / 4 * 4 + 8 : n * 4));
  }
  if ((st = buf_take(s, v, &v->rback, pv ? &pv->rback : NULL, (VkDeviceSize)rb, use, hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "output read-back buffer")))
    return st;
  int64_t sb = 0;
  for (int k = 0; k < p->n_state; k++) { v->sback_off[k] = sb; sb = align256(sb + p->state_bytes[k] / 4 * v->es); }
  if ((st = buf_make(s, v, &v->sback, (VkDeviceSize)(sb ? sb : 256), use, hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "state read-back buffer"))) return st;
  VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = v->qf};
  VKTRY(vkCreateCommandPool(v->dev, &cpi, NULL, &v->cpool), "command pool");
  VkCommandBuffer cbs[7];
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = v->cpool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 7};
  VKTRY(vkAllocateCommandBuffers(v->dev, &cai, cbs), "command buffers");
  v->cb_main = cbs[0]; v->cb_zero = cbs[1]; v->cb_tmp = cbs[2]; v->cb_up = cbs[3]; v->cb_prof = cbs[4]; v->cb_xa = cbs[5]; v->cb_xb = cbs[6];
  if (v->xq_plan) {
    cpi.queueFamilyIndex = v->xqf;
    VKTRY(vkCreateCommandPool(v->dev, &cpi, NULL, &v->xpool), "transfer command pool");
    cai.commandPool = v->xpool; cai.commandBufferCount = 1;
    VKTRY(vkAllocateCommandBuffers(v->dev, &cai, &v->cb_x), "transfer command buffer");
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VKTRY(vkCreateSemaphore(v->dev, &sci, NULL, &v->xsem), "semaphore");
  }
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VKTRY(vkCreateFence(v->dev, &fi, NULL, &v->fence), "fence");
  if (v->ts_ok) {
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = (uint32_t)p->n_rops + 1};
    VKTRY(vkCreateQueryPool(v->dev, &qi, NULL, &v->qp), "timestamp query pool");
    v->ts = calloc((size_t)p->n_rops + 1, sizeof *v->ts);
    if (!v->ts) return HR_ENOMEM;
  }
  /* pick each convolution's kernel by timing them all here: on by default on GPUs, off on CPU
   * devices (lavapipe: slow, and the heuristic is as good); HR_VK_TUNE=0/1 forces; HR_VK_CONV
   * (a forced kernel) turns it off */
  const char *tune = getenv("HR_VK_TUNE");
  v->tune = (tune ? *tune == '1' : v->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) && !getenv("HR_VK_CONV");
  const double tc_pre = mono_ms();
  if ((st = make_pipelines(s, v))) return st;
  const double tc_pipe = mono_ms();
  if (v->tune && (st = tune_convs(s, v))) return st;
  const double tc_tune = mono_ms();
  /* zero everything, then the weights: from the replaced plan's device buffer when its constant
   * block is this one (the same values at the same places: a rung change), else uploaded through a
   * temporary staging buffer */
  vbuf up;
  memset(&up, 0, sizeof up);
  int cfp16 = v->fp16 && !v->w32;
  VkDeviceSize cbytes = cfp16 ? phys(v, v->const_bytes) : (VkDeviceSize)v->const_bytes;
  const int from_prev = pv && v->const_bytes && same_consts(v, pv);
  if (!from_prev) {
    if ((st = buf_make(s, v, &up, v->const_bytes ? cbytes : 256, use, hv, 0, "weight upload buffer"))) return st;
    for (int k = 0; k < p->n_vals; k++)
      if (v->voff[k] >= 0)
        to_dev(cfp16, (char *)up.map + (cfp16 ? phys(v, v->voff[k] - v->const_off0) : (VkDeviceSize)(v->voff[k] - v->const_off0)),
               p->vals[k].t.data, hr__numel(&p->vals[k].t));
  }
  v->consts_copied = from_prev;
  st = tmp_begin(s, v);
  if (!st) {
    vkCmdFillBuffer(v->cb_tmp, v->dbuf.b, 0, VK_WHOLE_SIZE, 0);
    barrier(v->cb_tmp, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    if (v->const_bytes) {
      VkBufferCopy c = {.srcOffset = from_prev ? idx_bytes(pv, pv->w32 ? F32_BIT + pv->c32 : pv->const_off0 / 4) : 0,
                        .dstOffset = idx_bytes(v, v->w32 ? F32_BIT + v->c32 : v->const_off0 / 4), .size = cbytes};
      vkCmdCopyBuffer(v->cb_tmp, from_prev ? pv->dbuf.b : up.b, v->dbuf.b, 1, &c);
    }
    barrier(v->cb_tmp, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, ST_ALL, AC_ALL);
    st = tmp_end(s, v);
  }
  buf_free(v, &up);
  if (st) return st;
  st = record_main(s, v);
  if (!st && getenv("HR_VK_VERBOSE")) /* where a create (or a live loop's replan) spends its time */
    fprintf(stderr, "headroom vulkan: created in %.1f ms: instance and device %.1f (%s), buffers %.1f, pipelines %.1f, tuning %.1f "
            "(%d convolutions timed, %d as a same one, %d picks kept), weights (%s) and recording %.1f; the frame beside the network: %s %u\n",
            mono_ms() - tc0, tc_dev - tc0,
            v->shared ? "the replaced plan's" : "new", tc_pre - tc_dev, tc_pipe - tc_pre, tc_tune - tc_pipe, v->tuned_timed, v->tuned_same, v->tuned_kept,
            v->consts_copied ? "copied on the device" : "uploaded", mono_ms() - tc_tune,
            !v->xq_plan ? "off" : v->xq_on == 1 ? "transfer queue family" : "on the compute queue, family", v->xqf);
  return st;
}

static hr_status vk_sync_memory(hr_session *s, void *impl);
static hr_status vk_create(hr_session *s, void *prev, void **impl) {
  *impl = NULL;
  vk *v = calloc(1, sizeof *v);
  if (!v) return HR_ENOMEM;
  s->kernel_bytes = s->kernel_shared_bytes = 0;
  hr_status st = vk_create_(s, v, prev);
  if (st) {
    if (st == HR_ENOMEM && !s->err[0]) snprintf(s->err, sizeof s->err, "Vulkan: out of host memory building the plan's dispatches");
    if (getenv("HR_VK_VERBOSE")) fprintf(stderr, "headroom vulkan: %s\n", s->err);
    vk_destroy(v);
    return st;
  }
  s->kernel_bytes = (int64_t)(sizeof *v + sizeof *v->disp * (size_t)v->cap_disp + sizeof *v->voff * 2 * (size_t)s->plan->n_vals);
  /* the session's registered memory, on a device of its own (an adopted one has it): best effort,
   * a range not imported only means its frames are copied */
  if (s->n_reg && vk_sync_memory(s, v)) s->err[0] = 0;
  *impl = v;
  return HR_OK;
}

typedef struct copy_job { char *dst; size_t dst_stride; const void *src; ptrdiff_t src_stride; size_t row_bytes, rows, per; } copy_job;
static void copy_rows(void *ctx, size_t b) {
  const copy_job *j = ctx;
  size_t y1 = (b + 1) * j->per < j->rows ? (b + 1) * j->per : j->rows;
  for (size_t y = b * j->per; y < y1; y++)
    memcpy(j->dst + y * j->dst_stride, (const char *)j->src + (ptrdiff_t)y * j->src_stride, j->row_bytes);
}

/* The frame's copy to fbuf into cb: the staging buffer's header and planes (off bytes), or, zero
 * copy (zc), its header and each plane from the import zi[k] where it lies. */
static void copy_to_fbuf(vk *v, VkCommandBuffer cb, const hr_frame *f, int zc, const int *zi, const uint32_t *h, int np, const size_t *rows,
                         size_t off) {
  VkBufferCopy c = {.srcOffset = 0, .dstOffset = 0, .size = zc ? FRAME_HDR : (VkDeviceSize)off};
  vkCmdCopyBuffer(cb, v->stage.b, v->fbuf.b, 1, &c);
  for (int k = 0; k < np && zc; k++) {
    VkBufferCopy pc = {.srcOffset = (VkDeviceSize)((uintptr_t)f->planes[k] - v->sh->imp[zi[k]].lo), .dstOffset = h[3 + k],
                       .size = (VkDeviceSize)h[6 + k] * rows[k]};
    vkCmdCopyBuffer(cb, v->sh->imp[zi[k]].b, v->fbuf.b, 1, &pc);
  }
}
static hr_status record_up_xq(hr_session *s, vk *v, int zc, const int *zi, const uintptr_t *span, const uint32_t *h, int np,
                              const size_t *rows, size_t off);
/* Copy the frame into the staging buffer: header, then each plane's rows densely (unless its planes
 * lie in imported memory: zero copy). xq 0: cb_up copies them to fbuf; 1: the frame beside the
 * network (see xq_on), record_up_xq. */
static hr_status upload_frame(hr_session *s, vk *v, int xq) {
  const hr_frame *f = &s->cur;
  if (f->width != v->frame_w || f->height != v->frame_h) {
    snprintf(s->err, sizeof s->err, "Vulkan: frame %dx%d, plan %dx%d", f->width, f->height, v->frame_w, v->frame_h);
    return HR_EMISMATCH;
  }
  uint32_t *h = v->stage.map;
  memset(h, 0, FRAME_HDR);
  int w = f->width, H = f->height, np = 1;
  size_t rowb[3] = {0}, rows[3] = {(size_t)H, 0, 0};
  switch (f->fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO:
      np = 2; rowb[0] = (size_t)w; rowb[1] = (size_t)((w + 1) / 2) * 2; rows[1] = (size_t)(H + 1) / 2; break;
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO:
      np = 3; rowb[0] = (size_t)w; rowb[1] = rowb[2] = (size_t)(w + 1) / 2; rows[1] = rows[2] = (size_t)(H + 1) / 2; break;
    case HR_PIX_BGRA: rowb[0] = (size_t)w * 4; break;
    case HR_PIX_RGB24: rowb[0] = (size_t)w * 3; break;
    case HR_PIX_GRAY8: rowb[0] = (size_t)w; break;
    case HR_PIX_RGBF32: rowb[0] = (size_t)w * 12; break;
    default:
      snprintf(s->err, sizeof s->err, "Vulkan: cannot ingest %s frames", hr_pixfmt_name(f->fmt));
      return HR_EINVAL;
  }
  h[0] = (uint32_t)f->fmt; h[1] = (uint32_t)w; h[2] = (uint32_t)H;
  size_t stride[3];   /* rows packed in the staging and frame buffers */
  for (int k = 0; k < np; k++) stride[k] = (rowb[k] + 3) & ~(size_t)3;
  /* zero copy: every plane, rows packed, inside memory the device imported (registered) */
  int zc = v->frame_dev && v->sh->n_imp > 0;
  int zi[3] = {-1, -1, -1};
  for (int k = 0; k < np && zc; k++) {
    const uintptr_t a = (uintptr_t)f->planes[k], e = a + stride[k] * rows[k];
    for (int q = 0; q < v->sh->n_imp && zi[k] < 0; q++)
      if (a >= v->sh->imp[q].lo && e <= v->sh->imp[q].lo + v->sh->imp[q].len) zi[k] = q;
    zc = zi[k] >= 0 && f->strides[k] == (ptrdiff_t)stride[k];
  }
  uintptr_t span[2] = {UINTPTR_MAX, 0};   /* the planes' bytes [lo, hi) */
  if (zc && xq) { /* the ingest reads the planes through one descriptor: one import, a range it can bind */
    for (int k = 0; k < np; k++) {
      const uintptr_t a = (uintptr_t)f->planes[k];
      if (a < span[0]) span[0] = a;
      if (a + stride[k] * rows[k] > span[1]) span[1] = a + stride[k] * rows[k];
      if (zi[k] != zi[0]) zc = 0;
    }
    if (span[1] - span[0] + 256 > v->props.limits.maxStorageBufferRange) zc = 0;
  }
  size_t off = FRAME_HDR;
  for (int k = 0; k < np; k++) {
    h[3 + k] = (uint32_t)off; h[6 + k] = (uint32_t)stride[k];
    if (!zc) {
      /* rows in blocks over the copy pool (one thread copies 3-8 GB/s: 0.5-1.3 ms for a 1920x1440
       * NV12 frame; see copy_pool) */
      copy_job j = {(char *)v->stage.map + off, stride[k], f->planes[k], f->strides[k], rowb[k], rows[k], (rows[k] + 31) / 32};
      size_t blocks = (rows[k] + j.per - 1) / j.per;
      if (v->copy_pool && rows[k] * rowb[k] >= ((size_t)1 << 20)) pthreadpool_parallelize_1d(v->copy_pool, copy_rows, &j, blocks, 0);
      else for (size_t b = 0; b < blocks; b++) copy_rows(&j, b);
    }
    off += stride[k] * rows[k];
  }
  if (hr__fmt_is_yuv(f->fmt)) {
    hr__yuv_k k = hr__yuv_coeffs(f->fmt);
    h[9] = (uint32_t)k.yo;
    memcpy(&h[10], &k.ys, 4); memcpy(&h[11], &k.rv, 4); memcpy(&h[12], &k.gu, 4); memcpy(&h[13], &k.gv, 4); memcpy(&h[14], &k.bu, 4);
  }
  if (!zc) s->bytes_copied += (int64_t)(off - FRAME_HDR);
  if (!v->frame_dev) return HR_OK;
  if (xq) return record_up_xq(s, v, zc, zi, span, h, np, rows, off);
  /* the copy of exactly these bytes to the device (re-recorded: the format may change per frame) */
  VKTRY(vkResetCommandBuffer(v->cb_up, 0), "command buffer reset");
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VKTRY(vkBeginCommandBuffer(v->cb_up, &bi), "recording the upload");
  barrier(v->cb_up, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  copy_to_fbuf(v, v->cb_up, f, zc, zi, h, np, rows, off);
  barrier(v->cb_up, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  VKTRY(vkEndCommandBuffer(v->cb_up), "recording the upload");
  return HR_OK;
}

/* The frame beside the network: cb_x (the transfer queue) copies the header and planes to fbuf
 * for the tail; cb_up writes the first timestamp and runs the ingests on the frame where it lies
 * (the import zi[0] when zc, else the staging buffer), their header in push constants with the
 * planes' offsets from binding 4's start in ds_up. */
static hr_status record_up_xq(hr_session *s, vk *v, int zc, const int *zi, const uintptr_t *span, const uint32_t *h, int np,
                              const size_t *rows, size_t off) {
  const hr_frame *f = &s->cur;
  const hr__plan *p = s->plan;
  VkDescriptorBufferInfo bi = {v->stage.b, 0, (VkDeviceSize)off};
  uint32_t po[3] = {h[3], h[4], h[5]};
  if (zc) {
    const VkDeviceSize al = v->props.limits.minStorageBufferOffsetAlignment ? v->props.limits.minStorageBufferOffsetAlignment : 1;
    VkDeviceSize a0 = (VkDeviceSize)(span[0] - v->sh->imp[zi[0]].lo), a1 = (VkDeviceSize)(span[1] - v->sh->imp[zi[0]].lo);
    a0 -= a0 % al;
    bi = (VkDescriptorBufferInfo){v->sh->imp[zi[0]].b, a0, ((a1 - a0) + 3) & ~(VkDeviceSize)3};
    if (bi.offset + bi.range > v->sh->imp[zi[0]].len) bi.range = v->sh->imp[zi[0]].len - bi.offset;
    for (int k = 0; k < np; k++) po[k] = (uint32_t)((uintptr_t)f->planes[k] - v->sh->imp[zi[0]].lo - a0);
  }
  if (bi.buffer != v->up_bi.buffer || bi.offset != v->up_bi.offset || bi.range != v->up_bi.range) {
    /* ds_up is in no pending command buffer (the last frame's fence was waited for); cb_up is
     * recorded after this */
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = v->ds_up, .dstBinding = 4, .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &bi};
    vkUpdateDescriptorSets(v->dev, 1, &w, 0, NULL);
    v->up_bi = bi;
  }
  VkCommandBufferBeginInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  if (v->d_fgf < v->n_disp) {
    VKTRY(vkResetCommandBuffer(v->cb_x, 0), "command buffer reset");
    VKTRY(vkBeginCommandBuffer(v->cb_x, &cbi), "recording the frame's copy");
    copy_to_fbuf(v, v->cb_x, f, zc, zi, h, np, rows, off);
    VKTRY(vkEndCommandBuffer(v->cb_x), "recording the frame's copy");
  }
  VKTRY(vkResetCommandBuffer(v->cb_up, 0), "command buffer reset");
  VKTRY(vkBeginCommandBuffer(v->cb_up, &cbi), "recording the ingest");
  if (v->ts_ok) {
    vkCmdResetQueryPool(v->cb_up, v->qp, 0, (uint32_t)p->n_rops + 1);
    vkCmdWriteTimestamp(v->cb_up, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, v->qp, 0);
  }
  barrier(v->cb_up, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  vkCmdBindDescriptorSets(v->cb_up, VK_PIPELINE_BIND_POINT_COMPUTE, v->pl, 0, 1, &v->ds_up, 0, NULL);
  for (int k = 0; k < v->n_ing; k++) {
    const vdisp *d = &v->disp[k];
    int32_t pc[32];
    memcpy(pc, d->pc, sizeof pc);
    for (int q = 0; q < 15; q++) pc[4 + q] = (int32_t)h[q];
    for (int q = 0; q < 3; q++) pc[4 + 3 + q] = (int32_t)po[q];
    vkCmdBindPipeline(v->cb_up, VK_PIPELINE_BIND_POINT_COMPUTE, find_pipe(v, d->pipe, d->pc));
    vkCmdPushConstants(v->cb_up, v->pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 128, pc);
    vkCmdDispatch(v->cb_up, d->gx, d->gy, 1);
  }
  barrier(v->cb_up, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  VKTRY(vkEndCommandBuffer(v->cb_up), "recording the ingest");
  return HR_OK;
}

static hr_status vk_run(hr_session *s, void *impl) {
  vk *v = impl;
  double t0 = mono_ms();
  v->op_times = v->ts_ok && s->profiling;
  const int xq = v->xq_plan && !v->op_times;   /* profiles time every op in one command buffer */
  hr_status st = upload_frame(s, v, xq);
  if (st) return st;
  double t1 = mono_ms();
  VkCommandBuffer cbs[3];
  uint32_t n = 0;
  const int plain = !v->op_times && !v->zero_pending;
  if (xq && v->zero_pending) cbs[n++] = v->cb_zero; /* before the ingest: cb_zero's barrier is for what follows */
  if (v->frame_dev) cbs[n++] = v->cb_up;
  if (!xq && v->zero_pending) cbs[n++] = v->cb_zero;
  cbs[n++] = xq ? v->cb_xa : v->op_times ? v->cb_prof : v->cb_main;
  if (v->alpha8) { /* coherent: seen by the submit */
    volatile uint32_t *w = (volatile uint32_t *)((char *)v->rback.map + v->alpha8_flag);
    w[0] = 0; w[1] = 0;
  }
  /* hybrid wait: asleep for the last frame's wait less HR_VK_SPIN_MS (default 0.3 ms), then polling */
  double last = v->wait_ms[0] < v->wait_ms[1] ? v->wait_ms[0] : v->wait_ms[1];
  VkSubmitInfo si[2] = {{.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = cbs},
                        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &v->cb_xb}};
  const VkPipelineStageFlags wst = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  if (xq && v->d_fgf < v->n_disp) { /* the copy for the tail, on the transfer queue; the tail waits for it */
    VkSubmitInfo xs = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &v->cb_x,
                       .signalSemaphoreCount = 1, .pSignalSemaphores = &v->xsem};
    VKTRY(vkQueueSubmit(v->xq, 1, &xs, VK_NULL_HANDLE), "transfer queue submit");
    si[1].waitSemaphoreCount = 1; si[1].pWaitSemaphores = &v->xsem; si[1].pWaitDstStageMask = &wst;
  }
  if ((st = submit_wait_si(s, v, si, xq ? 2u : 1u, v->spin, last - v->spin_ms))) return st;
  v->host_ms[0] = t1 - t0;
  v->host_ms[1] = mono_ms() - t1;
  v->wait_ms[1] = v->wait_ms[0]; v->wait_ms[0] = plain ? v->host_ms[1] : 0;
  if (xq) { v->n_xq++; v->n_xq_zc += v->up_bi.buffer != v->stage.b; }
  v->zero_pending = 0;
  v->sback_valid = v->sback_rec;
  if (v->ts_ok) {
    const hr__plan *p = s->plan;
    VkResult r;
    if (v->op_times)
      r = vkGetQueryPoolResults(v->dev, v->qp, 0, (uint32_t)p->n_rops + 1, sizeof(uint64_t) * ((size_t)p->n_rops + 1), v->ts,
                                sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    else { /* the first and the last only */
      r = vkGetQueryPoolResults(v->dev, v->qp, 0, 1, sizeof(uint64_t), v->ts, sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      if (r == VK_SUCCESS)
        r = vkGetQueryPoolResults(v->dev, v->qp, (uint32_t)p->n_rops, 1, sizeof(uint64_t), v->ts + p->n_rops, sizeof(uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    }
    if (r == VK_SUCCESS) {
      double per = v->props.limits.timestampPeriod * 1e-3; /* ns -> us */
      v->device_ms = (double)(v->ts[p->n_rops] - v->ts[0]) * per * 1e-3;
      if (s->profiling && s->op_us && v->op_times)
        for (int i = 0; i < p->n_rops; i++) s->op_us[i] = (double)(v->ts[i + 1] - v->ts[i]) * per;
    }
  }
  if (v->trace) fprintf(stderr, "headroom vulkan: frame copy %.3f ms, submit to fence %.3f ms, GPU %.3f ms\n", v->host_ms[0], v->host_ms[1], v->device_ms);
  return HR_OK;
}

static void vk_state_zero(hr_session *s, void *impl) { (void)s; ((vk *)impl)->zero_pending = 1; }

/* Copy nbytes of fp32 values between dbuf at (layout) offset doff and host memory, through a
 * temporary host-visible buffer (converted from / to fp16 where the device buffer holds it). */
static hr_status xfer(hr_session *s, vk *v, int64_t idx, int64_t n, void *dst, const void *src) {
  vbuf t;
  VkBufferUsageFlags use = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  int fp16 = v->fp16 && idx < F32_BIT;
  VkDeviceSize pb = (VkDeviceSize)(n * (fp16 ? 2 : 4)), doff = idx_bytes(v, idx);
  hr_status st = buf_make(s, v, &t, pb, use, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0, "state transfer buffer");
  if (st) { buf_free(v, &t); return st; }
  if (src) to_dev(fp16, t.map, src, n);
  st = tmp_begin(s, v);
  if (!st) {
    barrier(v->cb_tmp, ST_ALL, AC_ALL, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy c = {.srcOffset = src ? 0 : doff, .dstOffset = src ? doff : 0, .size = pb};
    vkCmdCopyBuffer(v->cb_tmp, src ? t.b : v->dbuf.b, src ? v->dbuf.b : t.b, 1, &c);
    barrier(v->cb_tmp, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, ST_ALL | VK_PIPELINE_STAGE_HOST_BIT, AC_ALL | VK_ACCESS_HOST_READ_BIT);
    st = tmp_end(s, v);
  }
  if (!st && dst) from_dev(fp16, dst, t.map, n);
  buf_free(v, &t);
  return st;
}

static hr_status vk_state_read(hr_session *s, void *impl, int k, void *dst) {
  vk *v = impl;
  if (v->zero_pending) { memset(dst, 0, (size_t)s->plan->state_bytes[k]); return HR_OK; }
  if (!v->sback_valid) {
    /* the state since the last run: one copy of every slot now, and the frame's command buffers
     * re-recorded once so that every later run leaves it in sback by itself */
    hr_status st = tmp_begin(s, v);
    if (st) return st;
    barrier(v->cb_tmp, ST_ALL, AC_ALL, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    state_copies(s, v, v->cb_tmp, 0);
    barrier(v->cb_tmp, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, ST_ALL | VK_PIPELINE_STAGE_HOST_BIT, AC_ALL | VK_ACCESS_HOST_READ_BIT);
    if ((st = tmp_end(s, v))) return st;
    v->sback_valid = 1;
    if (!v->sback_rec) {
      v->sback_rec = 1;
      if ((st = record_frames(s, v))) return st;
    }
  }
  from_dev(v->fp16, dst, (const char *)v->sback.map + v->sback_off[k], s->plan->state_bytes[k] / 4);
  return HR_OK;
}
static hr_status vk_state_write(hr_session *s, void *impl, int k, const void *src) {
  vk *v = impl;
  if (v->zero_pending) { /* apply the pending reset now: the other slots must read zero too */
    hr_status st = submit(s, v, &v->cb_zero, 1);
    if (st) return st;
    v->zero_pending = 0;
    v->sback_valid = 0;
  }
  /* through sback: slot k there becomes the new state, the others stay what they were */
  const int64_t n = s->plan->state_bytes[k] / 4;
  to_dev(v->fp16, (char *)v->sback.map + v->sback_off[k], src, n);
  hr_status st = tmp_begin(s, v);
  if (st) return st;
  barrier(v->cb_tmp, ST_ALL, AC_ALL, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  VkBufferCopy c = {.srcOffset = (VkDeviceSize)v->sback_off[k], .dstOffset = idx_bytes(v, v->state_off[k] / 4), .size = (VkDeviceSize)(n * v->es)};
  vkCmdCopyBuffer(v->cb_tmp, v->sback.b, v->dbuf.b, 1, &c);
  barrier(v->cb_tmp, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, ST_ALL, AC_ALL);
  return tmp_end(s, v);
}
static const float *vk_output(hr_session *s, void *impl, int id) {
  vk *v = impl;
  for (int k = 0; k < 2; k++)
    if (v->out_val[k] == id && !(k == 0 && v->alpha8)) return (const float *)((char *)v->rback.map + v->out_off[k]);
  (void)s;
  return NULL;
}
/* The 8-bit alpha fgf.comp wrote into the read-back buffer, its NaN/Inf word and its sum (zeroed by
 * vk_run; -1 where the 32-bit sum could have wrapped: over 16843009 pixels). */
static const uint8_t *vk_output_u8(hr_session *s, void *impl, int id, int64_t *nonfinite, int64_t *sum) {
  vk *v = impl;
  if (!v->alpha8 || id != v->out_val[0]) return NULL;
  const volatile uint32_t *w = (const volatile uint32_t *)((const char *)v->rback.map + v->alpha8_flag);
  if (nonfinite) *nonfinite = w[0] != 0;
  if (sum) *sum = hr__numel(&s->plan->vals[id].t) <= (int64_t)(UINT32_MAX / 255) ? (int64_t)w[1] : -1;
  return (const uint8_t *)v->rback.map + v->out_off[0];
}

/* The device's imports of host memory made to match s->reg: those no longer registered released
 * (after the GPU is idle), the new ones imported over their whole pages. */
static int imported(const vk_dev *d, const void *p, size_t n) {
  for (int k = 0; k < d->n_imp; k++)
    if (d->imp[k].p == p && d->imp[k].n == n) return 1;
  return 0;
}
static int registered(const hr_session *s, const void *p, size_t n) {
  for (int j = 0; j < s->n_reg; j++)
    if (s->reg[j].p == p && s->reg[j].n == n) return 1;
  return 0;
}
static hr_status vk_sync_memory(hr_session *s, void *impl) {
  vk *v = impl;
  vk_dev *d = v->sh;
  for (int k = 0; k < d->n_imp;) {
    if (registered(s, d->imp[k].p, d->imp[k].n)) { k++; continue; }
    vkDeviceWaitIdle(v->dev);
    vkDestroyBuffer(v->dev, d->imp[k].b, NULL);
    vkFreeMemory(v->dev, d->imp[k].m, NULL);
    d->imp[k] = d->imp[--d->n_imp];
  }
  for (int j = 0; j < s->n_reg; j++) {
    if (imported(d, s->reg[j].p, s->reg[j].n)) continue;
    if (!d->hostimp) {
      snprintf(s->err, sizeof s->err, "Vulkan: %s cannot import host memory (no %s): frames are copied", v->props.deviceName,
               VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
      return HR_ENOTSUP;
    }
    const uintptr_t a = (uintptr_t)d->imp_align, lo = (uintptr_t)s->reg[j].p & ~(a - 1);
    const uintptr_t hi = ((uintptr_t)s->reg[j].p + s->reg[j].n + a - 1) & ~(a - 1);
    VkMemoryHostPointerPropertiesEXT hp = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    VkResult r = d->get_hpp(v->dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, (void *)lo, &hp);
    if (r != VK_SUCCESS || !hp.memoryTypeBits) {
      snprintf(s->err, sizeof s->err, "Vulkan: the device cannot import %zu bytes at %p (VkResult %d)", s->reg[j].n, s->reg[j].p, (int)r);
      return HR_EIO;
    }
    VkExternalMemoryBufferCreateInfo eb = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                           .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .pNext = &eb, .size = hi - lo,
                             .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    share_families(v, &bi);
    VkBuffer b = VK_NULL_HANDLE;
    VkDeviceMemory m = VK_NULL_HANDLE;
    VKTRY(vkCreateBuffer(v->dev, &bi, NULL, &b), "a buffer over registered memory");
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(v->dev, b, &mr);
    const int t = mem_type(v, mr.memoryTypeBits & hp.memoryTypeBits, 0, 0);
    VkImportMemoryHostPointerInfoEXT ih = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
                                           .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, .pHostPointer = (void *)lo};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &ih, .allocationSize = hi - lo,
                               .memoryTypeIndex = (uint32_t)t};
    r = t < 0 || mr.size > hi - lo ? VK_ERROR_FEATURE_NOT_PRESENT : vkAllocateMemory(v->dev, &ai, NULL, &m);
    if (r == VK_SUCCESS) r = vkBindBufferMemory(v->dev, b, m, 0);
    if (r != VK_SUCCESS) {
      if (m) vkFreeMemory(v->dev, m, NULL);
      vkDestroyBuffer(v->dev, b, NULL);
      snprintf(s->err, sizeof s->err, "Vulkan: importing %zu bytes of host memory at %p failed (VkResult %d)", s->reg[j].n, s->reg[j].p, (int)r);
      return HR_EIO;
    }
    d->imp[d->n_imp].p = s->reg[j].p; d->imp[d->n_imp].n = s->reg[j].n;
    d->imp[d->n_imp].lo = lo; d->imp[d->n_imp].len = hi - lo;
    d->imp[d->n_imp].b = b; d->imp[d->n_imp].m = m;
    d->n_imp++;
  }
  return HR_OK;
}

const hr__backend hr__backend_vulkan = {"vulkan", 0, vk_create, vk_destroy, vk_run, vk_state_zero, vk_state_read, vk_state_write, vk_output,
                                        vk_output_u8, vk_sync_memory};

/* ---- test hooks ---- */
hr_status hr__vk_run_range(hr_session *s, void *impl, int i0, int i1) {
  vk *v = impl;
  v->sback_valid = 0;
  hr_status st = upload_frame(s, v, 0);
  if (!st && v->frame_dev) st = submit(s, v, &v->cb_up, 1);
  if (st) return st;
  int d0 = 0, d1;
  while (d0 < v->n_disp && v->disp[d0].rop < i0) d0++;
  if (v->src_off >= 0 && i0 > 0) while (d0 < v->n_disp && v->disp[d0].rop < i0) d0++;
  d1 = d0;
  while (d1 < v->n_disp && v->disp[d1].rop < i1) d1++;
  if (i0 == 0 && v->src_off >= 0) d0 = 0; /* the input materialisation counts as op 0's */
  if ((st = tmp_begin(s, v))) return st;
  barrier(v->cb_tmp, ST_ALL | VK_PIPELINE_STAGE_HOST_BIT, AC_ALL | VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  record_disp(v, v->cb_tmp, d0, d1, 0);
  return tmp_end(s, v);
}
/* A view's values gathered from (or scattered into) what it is read from. */
static hr_status view_xfer(hr_session *s, vk *v, int id, float *dst, const float *src) {
  const hr__plan *p = s->plan;
  int par = v->vpar[id];
  int64_t np = hr__numel(&p->vals[par].t), n = hr__numel(&p->vals[id].t), C = p->vals[id].t.dims[p->vals[id].t.rank - 1];
  float *b = malloc(sizeof(float) * (size_t)np);
  if (!b) return HR_ENOMEM;
  hr_status st = v->vpar[par] >= 0 ? view_xfer(s, v, par, b, NULL) : xfer(s, v, voff(v, p, par), np, b, NULL);
  for (int64_t k = 0; !st && k < n; k++) {
    float *e = &b[v->vdel[id] + k / C * v->vps[id] + k % C];
    if (dst) dst[k] = *e; else *e = src[k];
  }
  if (!st && src) st = v->vpar[par] >= 0 ? view_xfer(s, v, par, NULL, b) : xfer(s, v, voff(v, p, par), np, NULL, b);
  free(b);
  return st;
}
hr_status hr__vk_value_read(hr_session *s, void *impl, int id, void *dst) {
  vk *v = impl;
  if (v->vpar[id] >= 0) return view_xfer(s, v, id, dst, NULL);
  int64_t o = voff(v, s->plan, id);
  if (o < 0) return HR_EINVAL;
  return xfer(s, v, o, hr__numel(&s->plan->vals[id].t), dst, NULL);
}
hr_status hr__vk_value_write(hr_session *s, void *impl, int id, const void *src) {
  vk *v = impl;
  v->sback_valid = 0;
  if (v->vpar[id] >= 0) return view_xfer(s, v, id, NULL, src);
  int64_t o = voff(v, s->plan, id);
  if (o < 0) return HR_EINVAL;
  return xfer(s, v, o, hr__numel(&s->plan->vals[id].t), NULL, src);
}
void hr__vk_host_ms(void *impl, double *copy_ms, double *submit_ms) {
  *copy_ms = ((vk *)impl)->host_ms[0];
  *submit_ms = ((vk *)impl)->host_ms[1];
}
int hr__vk_fused(void *impl, int i) { return ((vk *)impl)->fused[i]; }
int hr__vk_host(void *impl, int i) { return ((vk *)impl)->fused[i] == 3 ? ((vk *)impl)->host[i] : -1; }
int hr__vk_unified_memory(void *impl) {
  const char *e = getenv("HR_VK_UNIFIED");
  if (e && *e) return atoi(e) != 0;
  return impl && ((vk *)impl)->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
}
double hr__vk_device_ms(void *impl) { return impl && ((vk *)impl)->ts_ok ? ((vk *)impl)->device_ms : -1; }
int hr__vk_fp16(void *impl) { return impl && ((vk *)impl)->fp16; }
int hr__vk_tunes(void *impl) { return impl && ((vk *)impl)->tune && ((vk *)impl)->ts_ok; }

int hr__vk_create_stats(void *impl, int *timed, int *kept, int *same) {
  const vk *v = impl;
  *timed = v ? v->tuned_timed : 0; *kept = v ? v->tuned_kept : 0; *same = v ? v->tuned_same : 0;
  return v && v->shared;
}

int hr__vk_consts_copied(void *impl) { const vk *v = impl; return v && v->consts_copied; }
int64_t hr__vk_frames_beside(void *impl, int *mode, int64_t *in_place) {
  const vk *v = impl;
  if (mode) *mode = v ? v->xq_plan * v->xq_on : 0;
  if (in_place) *in_place = v ? v->n_xq_zc : 0;
  return v ? v->n_xq : 0;
}

int hr__vk_shared_bufs(void *impl, int *n_bufs) {
  const vk *v = impl;
  const vbuf *b[3] = {v ? &v->stage : NULL, v ? &v->fbuf : NULL, v ? &v->rback : NULL};
  int n = 0, sh = 0;
  for (int k = 0; k < 3; k++) if (b[k] && b[k]->b) { n++; sh += b[k]->refs != NULL; }
  if (n_bufs) *n_bufs = n;
  return sh;
}

/* For an automatic backend choice: whether a Vulkan device this backend would take exists (a GPU
 * type, never a CPU one such as llvmpipe unless HR_VULKAN_DEVICE names it), without making a
 * device (instance and enumeration only, ~10-100 ms). desc gets "NAME (type)" or why not. */
hr_status hr__vk_probe(char *desc, size_t n) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "headroom", .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance inst;
  VkResult r = vkCreateInstance(&ii, NULL, &inst);
  if (r != VK_SUCCESS) {
    snprintf(desc, n, "Vulkan: no instance (VkResult %d%s)", (int)r, r == VK_ERROR_INCOMPATIBLE_DRIVER ? ": no Vulkan driver (ICD)" : "");
    return HR_ENOTSUP;
  }
  VkPhysicalDevice pd;
  VkPhysicalDeviceProperties bp = {0};
  char seen[400];
  uint32_t nd = pick_device(inst, &pd, &bp, seen, sizeof seen);
  vkDestroyInstance(inst, NULL);
  if (pd == VK_NULL_HANDLE) {
    snprintf(desc, n, "Vulkan: no GPU device (devices: %s)", nd ? seen : "none");
    return HR_ENOTSUP;
  }
  static const char *types[] = {"other", "integrated GPU", "discrete GPU", "virtual GPU", "CPU"};
  snprintf(desc, n, "%s (%s)", bp.deviceName, bp.deviceType <= VK_PHYSICAL_DEVICE_TYPE_CPU ? types[bp.deviceType] : "?");
  return HR_OK;
}

/* ---- device memory (vk_memory.h) ---- */
/* The layout vk_create_ makes, from the plan alone: keep the two in step (test_vulkan_memory checks
 * that the sizes asked for are equal). */
hr_status hr__vk_plan_memory(const hr__plan *p, int fp16, hr__vk_memory *out) {
  if (!p || !out) return HR_EINVAL;
  const int64_t es = fp16 ? 2 : 4;
  int64_t off = align256(p->arena_bytes);
  for (int k = 0; k < p->n_state; k++) off = align256(off + p->state_bytes[k]);
  if (p->src_val >= 0 && !p->vals[p->vals[p->src_val].root].src_virtual) off = align256(off + (int64_t)p->width * p->height * 12);
  /* float constants read by an op, each once */
  char *seen = calloc((size_t)p->n_vals + 1, 1);
  if (!seen) return HR_ENOMEM;
  const int64_t c0 = off;
  for (int i = 0; i < p->n_rops; i++)
    for (int k = 0; k < p->rops[i].n_in; k++) {
      int id = p->rops[i].in[k];
      const hr__val *x = &p->vals[id];
      if (x->kind != V_CONST || x->t.dt != HR_DT_FLOAT || !x->t.data || seen[id]) continue;
      seen[id] = 1; off = align256(off + hr__numel(&x->t) * 4);
    }
  memset(seen, 0, (size_t)p->n_vals + 1);
  int64_t n32 = 0;
  const char *tail32 = getenv("HR_VK_F32TAIL"), *w32e = getenv("HR_VK_W32");
  if (fp16 && !(w32e && *w32e == '0')) { n32 = (off - c0) / 4; off = c0; }
  int64_t *remap = malloc(sizeof *remap * ((size_t)p->n_vals + 1));
  if (!remap) { free(seen); return HR_ENOMEM; }
  off = chain_slots(p, fp16, remap, off);
  int *vpar = malloc(sizeof *vpar * ((size_t)p->n_vals + 1));
  int64_t *vdel = malloc(sizeof *vdel * ((size_t)p->n_vals + 1)), *vps = malloc(sizeof *vps * ((size_t)p->n_vals + 1));
  if (vpar && vdel && vps) off = find_views(p, fp16, remap, vpar, vdel, vps, off);
  vk *t = calloc(1, sizeof *t);
  int bad = !vpar || !vdel || !vps || !t;
  if (!bad) {
    int64_t scr = split_scratch(p, fp16);
    if (scr) off = align256(off) + scr * 4;
    t->fp16 = fp16; t->remap = remap; t->vpar = vpar; t->vdel = vdel; t->vps = vps;
    off = se_folds(t, p, off);
  }
  free(t);
  free(vpar); free(vdel); free(vps);
  free(remap);
  if (bad) { free(seen); return HR_ENOMEM; }
  if (fp16 && !(tail32 && *tail32 == '0')) {
    int last = -1, ok = 1;
    for (int i = 0; i < p->n_rops; i++)
      if (p->rops[i].op == HR_OP_CONV2D || p->rops[i].op == HR_OP_FUSED_CONV2D) last = i;
    for (int i = last + 1; i < p->n_rops; i++)
      if (p->rops[i].out_c_total || p->rops[i].in_place_mask) ok = 0;
    for (int i = last + 1; ok && last >= 0 && i < p->n_rops; i++)
      for (int k = 0; k < p->rops[i].n_out; k++) {
        int root = p->vals[p->rops[i].out[k]].root;
        if (p->vals[root].storage != S_ARENA || seen[root]) continue;
        seen[root] = 1; n32 += (hr__numel(&p->vals[root].t) + 63) & ~(int64_t)63;
      }
  }
  free(seen);
  /* the fp32 range starts at a storage-buffer offset alignment: 256 bytes or the device's larger one */
  int64_t dev = (off / 4 * es + 255) / 256 * 256 + n32 * 4;
  int64_t frame = FRAME_HDR + (int64_t)p->width * p->height * 12 + 256;
  int64_t rb = 0, sb = 0;
  const int ov[2] = {p->alpha_val, p->fgr_val};
  for (int k = 0; k < 2; k++) if (ov[k] >= 0) rb = align256(rb + hr__numel(&p->vals[ov[k]].t) * 4);
  for (int k = 0; k < p->n_state; k++) sb = align256(sb + p->state_bytes[k] / 4 * es);
  const char *fm = getenv("HR_VK_FRAME");
  int frame_dev = !(fm && !strcmp(fm, "host"));
  out->device_local = dev + (frame_dev ? frame : 0);
  out->host_visible = frame + (rb ? rb : 256) + (sb ? sb : 256);
  return HR_OK;
}

hr_status hr__vk_session_memory(const hr_session *s, hr__vk_memory *out, hr__vk_memory *requested) {
  if (!s || !out || s->bk != &hr__backend_vulkan || !s->bimpl) return HR_EINVAL;
  const vk *v = s->bimpl;
  out->device_local = (int64_t)(v->dbuf.alloc + v->fbuf.alloc);
  out->host_visible = (int64_t)(v->stage.alloc + v->rback.alloc + v->sback.alloc);
  if (requested) {
    requested->device_local = (int64_t)(v->dbuf.size + (v->fbuf.b ? v->fbuf.size : 0));
    requested->host_visible = (int64_t)(v->stage.size + v->rback.size + v->sback.size);
  }
  return HR_OK;
}
