/* Per-op shape inference and plain-C reference kernels (the test oracle and the constant folder). */
#ifndef HR_GRAPH_OPS_H
#define HR_GRAPH_OPS_H
#include "graph/ir.h"

/* Infer output dtypes and shapes. Inputs whose data is needed for the shape (sizes, paddings,
 * axes) must have data (constants); others may have data == NULL. Returns the number of outputs
 * in *n_out. On error writes a message naming the node. */
hr_status hr__op_infer(const hr__node *n, const hr__tensor *const *in, int n_in, hr__tensor *out, int *n_out,
                       char *err, size_t err_len);
/* Compute outputs (already shaped and pointing at storage) from inputs. Plain C, any dtype. */
void hr__op_exec_ref(const hr__node *n, const hr__tensor *const *in, int n_in, hr__tensor *out, int n_out);

/* Padding of a 2-D window op: SAME/VALID/EXPLICIT -> top/left amounts and output size. */
void hr__conv_geom(hr__padding pad, const int *explicit_pad, int64_t in, int k, int stride, int dil,
                   int64_t *out, int *pad_before);
/* Multiply-add count of an op with these shapes (0 for data movement), for GFLOP figures. */
double hr__op_flops(const hr__node *n, const hr__tensor *const *in, int n_in, const hr__tensor *out);
#endif
