// ops-custom.c: user-defined operations (ggml_map_custom1/2/3, ggml_custom_4d).
// The user's function runs on min(n_tasks, threads) threads, each told its
// index and the number of tasks; n_tasks == GGML_N_TASKS_MAX means all threads.

#include "cpu-impl.h"

static int custom_n_tasks(int n_tasks, int nth) {
    return n_tasks == GGML_N_TASKS_MAX || n_tasks > nth ? nth : MAX(n_tasks, 1);
}

static void forward_map_custom1(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct ggml_map_custom1_op_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int n = custom_n_tasks(p.n_tasks, params->nth);
    if (params->ith < n) {
        p.fun(dst, dst->src[0], params->ith, n, p.userdata);
    }
}

static void forward_map_custom2(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct ggml_map_custom2_op_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int n = custom_n_tasks(p.n_tasks, params->nth);
    if (params->ith < n) {
        p.fun(dst, dst->src[0], dst->src[1], params->ith, n, p.userdata);
    }
}

static void forward_map_custom3(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct ggml_map_custom3_op_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int n = custom_n_tasks(p.n_tasks, params->nth);
    if (params->ith < n) {
        p.fun(dst, dst->src[0], dst->src[1], dst->src[2], params->ith, n, p.userdata);
    }
}

static void forward_custom(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct ggml_custom_op_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int n = custom_n_tasks(p.n_tasks, params->nth);
    if (params->ith < n) {
        p.fun(dst, params->ith, n, p.userdata);
    }
}

void ggml_cpu_register_ops_custom(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_MAP_CUSTOM1] = (struct ggml_cpu_op_impl) { .forward = forward_map_custom1 };
    table[GGML_OP_MAP_CUSTOM2] = (struct ggml_cpu_op_impl) { .forward = forward_map_custom2 };
    table[GGML_OP_MAP_CUSTOM3] = (struct ggml_cpu_op_impl) { .forward = forward_map_custom3 };
    table[GGML_OP_CUSTOM]      = (struct ggml_cpu_op_impl) { .forward = forward_custom };
}
