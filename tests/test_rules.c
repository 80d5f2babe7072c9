/* test_rules.c — rules with one owner each (issue 40): a tensor's element
 * count (op/plan.c, rotor_tensor_extents), the alpha-beta shift formula
 * (op/cost.c, rotor_cost_shift_s), and a stage's micro-batch expression as
 * a structured copy (op/expr.c, rotor_expr_with_extent). */
#include <criterion/criterion.h>

#include "rotor/compile/segment.h"
#include "rotor/op/cost.h"
#include "rotor/op/emu.h"
#include "rotor/op/plan.h"
#include "fixtures.h"

/* A 3 x 3 convolution window over a 6 x 6 output reads an 8 x 8 input:
 * I[b,c,h+kh,w+kw] with b 1, c 3 holds 1 x 3 x 8 x 8 = 192 elements. */
Test(rules, a_3x3_convolutions_input_over_a_6x6_output_holds_192_elements) {
    rotor_expr e = make_expr("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=1,f=8,h=6,w=6,c=3,kh=3,kw=3");
    int64_t dims[ROTOR_MAX_DIMS];
    cr_assert_eq(rotor_tensor_extents(&e, 1, dims), 192);
    cr_assert_eq(dims[0], 1);
    cr_assert_eq(dims[1], 3);
    cr_assert_eq(dims[2], 8);
    cr_assert_eq(dims[3], 8);
    cr_assert_eq(rotor_tensor_elements(&e, 1), 192);
    cr_assert_eq(rotor_emu_tensor_elems(&e, 1, NULL), 192, "the emulator counts by the same rule");
    cr_assert_eq(rotor_tensor_elements(&e, 2), 8 * 3 * 3 * 3);
}

/* An element count past int64 saturates, and every dimension's extent is
 * still reported. */
Test(rules, an_element_count_past_int64_is_int64_max_with_every_extent_reported) {
    rotor_expr e = make_expr("Y[a,b,c] = X[a,b,c]", "a=1,b=1,c=1");
    int64_t dims[ROTOR_MAX_DIMS];
    /* bind refuses such an iteration space, so the extents are set by hand */
    e.extent[0] = e.extent[1] = e.extent[2] = 4294967296;
    cr_assert_eq(rotor_tensor_extents(&e, 0, dims), INT64_MAX);
    cr_assert_eq(dims[2], 4294967296);
}

/* cost-model-v1.md "Time": the model's communication is the shift formula
 * over the plan's moved bytes and T - 1 latencies.  MatMul 1024^3 with
 * F_op (4, 1, 4) and f_t rotating A along k 4 ways: its shifts. */
Test(rules, the_models_communication_is_the_shift_formula_over_moved_bytes_and_t_minus_1_latencies) {
    rotor_chip chip = mk2();
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=1024,k=1024,n=1024");
    rotor_plan p;
    rotor_plan_init(&e, &p);
    p.fop[0] = 4, p.fop[1] = 1, p.fop[2] = 4;
    p.ft[1][1] = 4, p.ft[2][1] = 4; /* A and B cut along k into 4: they rotate */
    rotor_plan_info info;
    rotor_cost cost;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &e, &chip, &p, &info, &cost, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_gt(info.total_steps, 1);
    int64_t moved = 0;
    for (int t = 0; t < e.ntensors; t++) moved += info.shifts[t] * info.bytes[t];
    cr_assert_gt(moved, 0);
    double beta = 5.5e9, alpha = rotor_chip_link_latency(&chip);
    cr_assert_eq(rotor_chip_link_bw(&chip), beta, "ipu-mk2: 5.5 GB/s per link");
    cr_assert_eq(cost.comm, rotor_cost_shift_s(&chip, moved, info.total_steps - 1));
    cr_assert_eq(cost.comm, (double)moved / beta + (double)(info.total_steps - 1) * alpha);
    cr_assert_eq(rotor_compile_setup_s(&chip, moved, 3), rotor_cost_shift_s(&chip, moved, 3));
    cr_assert_eq(rotor_cost_reduction_s(&chip, 1000, 1), 0.0);
    cr_assert_eq(rotor_cost_reduction_s(&chip, 1000, 4), 0.75 * 1000 / beta + 3 * alpha);
}

/* A stage's run of a MatMul streamed along m in 4 runs is the operator's
 * expression with m at 256 / 4 = 64, every other field as parsed. */
Test(rules, a_micro_batch_expression_is_the_operators_with_one_extent_divided) {
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=256,k=64,n=32");
    rotor_expr micro, parsed = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=64,n=32");
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_micro_expr(&e, 0, 4, &micro, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(micro.extent[0], 64);
    cr_assert_eq(micro.extent[1], 64);
    cr_assert_eq(micro.extent[2], 32);
    cr_assert_str_eq(micro.text, parsed.text);
    cr_assert_eq(micro.flops_per_point, parsed.flops_per_point);
    cr_assert_eq(micro.op_class, parsed.op_class);
    cr_assert_eq(micro.nnodes, parsed.nnodes);
    for (int t = 0; t < e.ntensors; t++) {
        cr_assert_str_eq(micro.tensors[t].name, parsed.tensors[t].name);
        cr_assert_eq(rotor_tensor_elements(&micro, t), rotor_tensor_elements(&parsed, t));
    }
    cr_assert_eq(rotor_segment_micro_expr(&e, 0, 512, &micro, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "dims: m=0: extent must be at least 1", "as binding \"m=0\" says");
}
