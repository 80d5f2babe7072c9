/* rotor — training graphs (docs/training.md): a forward graph extended with
 * a loss, the backward pass and the optimizer's update, as one graph that
 * the compile, the simulator, the HBM schedule and rotor run all take as
 * they take an inference graph.
 *
 * rotor_train is a pass over the lowered graph: every expression operator
 * (T10 §4.2) is differentiated through its right-hand side, so MatMul/Gemm,
 * convolution, the element-wise operators, softmax, LayerNorm, attention,
 * pooling and BatchNormalization (lowered in training mode, onnx.h's
 * train) need no rule of their own; the gradient of each input tensor is
 * one more expression operator (a contraction for a product), followed by
 * a ViewGrad vendor op where the tensor reads its value through a window
 * or a view.  Vendor ops with a gradient: Gather (an embedding's rows,
 * GatherGrad), MaxPool (MaxPoolGrad), Identity and Dropout; a softmax's
 * ReduceMax stabiliser passes none (its gradient is exactly 0).  Any other
 * operator on a path from a parameter to the loss is refused naming it.
 *
 * Parameters are the float32 weights that operators read; the loss is the
 * sum over the float32 outputs of their mean squared error against a
 * target input "<output>.target" of the same shape.  Kept activations are
 * the forward values a backward operator reads: they stay live until it,
 * and the compile's memory counts them there.
 *
 * After an error, out and info are freed (nothing to free). */
#ifndef ROTOR_TRAIN_H
#define ROTOR_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"

typedef enum rotor_optimizer {
    ROTOR_OPTIM_SGD = 0,
    ROTOR_OPTIM_ADAM
} rotor_optimizer;

typedef struct rotor_train_options {
    rotor_optimizer optimizer;
    double lr;                 /* learning rate; 0: 1e-3 */
    double beta1, beta2, eps;  /* Adam; 0: 0.9, 0.999, 1e-8 */
    bool no_update;            /* forward, loss and backward only (the gradient check) */
    bool loss_only;            /* forward and loss only (the finite differences' graph): no backward,
                                * no parameters; values numbered as in the full graph */
} rotor_train_options;

typedef struct rotor_train_info {
    rotor_optimizer optimizer; /* the update's (as asked) */
    bool no_update;
    int forward_ops, loss_ops, backward_ops, update_ops;
    int nparams;               /* parameters with a gradient */
    int *param;                /* nparams: each parameter's value in the training graph */
    int *grad;                 /* nparams: its gradient's value */
    int loss;                  /* the loss value (1 element) */
    int ntargets;
    int *target;               /* ntargets: the target inputs, one per output in the loss */
    int64_t param_bytes;       /* the parameters' bytes */
    int64_t grad_bytes;        /* their gradients' bytes */
    int64_t state_bytes;       /* the optimizer's state (Adam's two moments) */
    int64_t kept_bytes;        /* forward activations a backward operator reads */
    int64_t write_elements;    /* what the update writes: W', and Adam's M' and V' (to HBM, in a schedule) */
    int kept_values;
} rotor_train_info;

/* The training graph of g into out (initialised either way). */
rotor_status rotor_train(const rotor_graph *g, const rotor_train_options *opt, rotor_graph *out,
                         rotor_train_info *info, rotor_error *err);
void rotor_train_info_free(rotor_train_info *info);

/* "sgd" or "adam" into *out; false for another name. */
bool rotor_optimizer_parse(const char *name, rotor_optimizer *out);
const char *rotor_optimizer_name(rotor_optimizer o);

#endif
