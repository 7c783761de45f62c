// test-backend-meta-cpu.c: a transformer layer split across two CPU backends
// by a meta device (the same CPU device twice), as llama.cpp's
// --split-mode tensor splits it: attention heads and FFN rows by device, the
// output projections' partial sums added across the devices. The layer
// (RMS norm, Q/K/V, RoPE, flash attention, output projection, residual,
// SiLU-gated FFN, residual) must give what the unsplit layer gives on one
// CPU backend, computed directly on the meta backend and through a
// scheduler that also has a CPU backend (once with the residual sum pinned
// to the CPU, so that a reduced product leaves the meta backend and the
// FFN's input comes back into it). And MoE experts whose down bias is a
// PARTIAL tensor (ADD_ID before the sum). Three heads split 1 + 2 and seven
// FFN rows split 3 + 4: uneven on purpose. And a feed-forward with the up and
// gate weights in one tensor (llama.cpp's phi3, chatglm, glm4), split as
// llama.cpp splits it: in one block, not at the halves, so that the GLU needs
// its source gathered and the down projection takes K columns of a whole
// input.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "testing.h"
#include "meta-testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { D = 10, HD = 4, H = 3, T = 3, FF = 7 };

// heads 1 + 2, FFN rows 3 + 4
static const int64_t head_split[2] = { 1, 2 };
static const int64_t ff_split[2]   = { 3, 4 };

static struct ggml_backend_meta_split_state split_dim(int axis, int64_t a, int64_t b) {
    return mt_split(axis, 2, (const int64_t[]) { a, b });
}

// the weights' splits, by name
static struct ggml_backend_meta_split_state layer_split(const struct ggml_tensor * t, void * user_data) {
    (void) user_data;
    if (strcmp(t->name, "wq") == 0 || strcmp(t->name, "wk") == 0 || strcmp(t->name, "wv") == 0) {
        return split_dim(1, head_split[0]*HD, head_split[1]*HD);   // output rows by head
    }
    if (strcmp(t->name, "wo") == 0) {
        return split_dim(0, head_split[0]*HD, head_split[1]*HD);   // input columns by head
    }
    if (strcmp(t->name, "wu") == 0 || strcmp(t->name, "wg") == 0) {
        return split_dim(1, ff_split[0], ff_split[1]);
    }
    if (strcmp(t->name, "wd") == 0) {
        return split_dim(0, ff_split[0], ff_split[1]);
    }
    struct ggml_backend_meta_split_state ss = split_dim(0, 0, 0);
    ss.axis = GGML_BACKEND_SPLIT_AXIS_MIRRORED;
    return ss;
}

// one device: the projections after the attention and the feed-forward split
// along their input (whole on the device), everything else mirrored: the
// products of a mirrored activation with such a weight have no rule with two
// devices, and with one any split is the whole tensor
static struct ggml_backend_meta_split_state one_device_split(const struct ggml_tensor * t, void * user_data) {
    (void) user_data;
    if (strcmp(t->name, "wo") == 0 || strcmp(t->name, "wd") == 0) {
        return mt_split(0, 1, (const int64_t[]) { t->ne[0] });
    }
    return mt_split_mirrored();
}

enum { W_Q, W_K, W_V, W_O, W_U, W_G, W_D, W_N1, W_N2, N_WEIGHTS };
static const char * weight_names[N_WEIGHTS] = { "wq", "wk", "wv", "wo", "wu", "wg", "wd", "n1", "n2" };
static const int64_t weight_ne[N_WEIGHTS][2] = {
    { D, H*HD }, { D, H*HD }, { D, H*HD }, { H*HD, D }, { D, FF }, { D, FF }, { FF, D }, { D, 1 }, { D, 1 },
};

static float g_weights[N_WEIGHTS][D*H*HD + D*FF];
static float g_x[D*T];
static int32_t g_pos[T] = { 0, 1, 2 };

static void fill(void) {
    unsigned seed = 4242u;
    for (int w = 0; w < N_WEIGHTS; w++) {
        for (int k = 0; k < weight_ne[w][0]*weight_ne[w][1]; k++) {
            seed = seed*1103515245u + 12345u;
            g_weights[w][k] = (float) ((seed >> 8) % 2001) / 2000.0f - 0.5f;
        }
    }
    for (int k = 0; k < D*T; k++) {
        seed = seed*1103515245u + 12345u;
        g_x[k] = (float) ((seed >> 8) % 2001) / 1000.0f - 1.0f;
    }
}

static struct ggml_tensor * g_residual = NULL; // the attention's residual sum, of the last graph built

static struct ggml_tensor * build_layer(struct ggml_context * ctx, struct ggml_tensor ** w, struct ggml_tensor * x, struct ggml_tensor * pos) {
    struct ggml_tensor * n = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), w[W_N1]);
    struct ggml_tensor * q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[W_Q], n), HD, H, T);
    struct ggml_tensor * k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[W_K], n), HD, H, T);
    struct ggml_tensor * v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[W_V], n), HD, H, T);
    q = ggml_rope(ctx, q, pos, HD, 0);
    k = ggml_rope(ctx, k, pos, HD, 0);
    q = ggml_permute(ctx, q, 0, 2, 1, 3);
    k = ggml_permute(ctx, k, 0, 2, 1, 3);
    v = ggml_permute(ctx, v, 0, 2, 1, 3);
    struct ggml_tensor * a = ggml_flash_attn_ext(ctx, q, k, v, NULL, 1.0f/sqrtf((float) HD), 0.0f, 0.0f);
    a = ggml_reshape_2d(ctx, a, HD*H, T);
    struct ggml_tensor * x2 = ggml_add(ctx, x, ggml_mul_mat(ctx, w[W_O], a));
    g_residual = x2;

    struct ggml_tensor * n2 = ggml_mul(ctx, ggml_rms_norm(ctx, x2, 1e-5f), w[W_N2]);
    struct ggml_tensor * up   = ggml_mul_mat(ctx, w[W_U], n2);
    struct ggml_tensor * gate = ggml_silu(ctx, ggml_mul_mat(ctx, w[W_G], n2));
    struct ggml_tensor * down = ggml_mul_mat(ctx, w[W_D], ggml_mul(ctx, gate, up));
    struct ggml_tensor * out  = ggml_add(ctx, x2, down);
    ggml_set_name(out, "out");
    ggml_set_output(out);
    return out;
}

// an input of a graph and its data
struct graph_input {
    struct ggml_tensor * t;
    const void         * data;
};

// gf allocated for backend, its inputs set, computed n_computes times (the
// later computations reuse the meta backend's device graphs), out read
static bool compute_graph(ggml_backend_t backend, struct ggml_cgraph * gf, const struct graph_input * in, int n_in,
                          int n_computes, const struct ggml_tensor * out, float * out_data) {
    bool ok = false;
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend));
    if (ggml_gallocr_alloc_graph(galloc, gf)) {
        for (int i = 0; i < n_in; i++) {
            ggml_backend_tensor_set(in[i].t, in[i].data, 0, ggml_nbytes(in[i].t));
        }
        ok = true;
        for (int c = 0; c < n_computes && ok; c++) {
            ok = ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS;
        }
        if (ok) {
            ggml_backend_tensor_get(out, out_data, 0, ggml_nbytes(out));
        }
    }
    ggml_gallocr_free(galloc);
    return ok;
}

// the layer's output on backend (with sched_other: through a scheduler over
// both; pin_residual: with the attention's residual sum on sched_other, so
// that the output projection's sum leaves the meta backend and comes back)
static bool run_layer(ggml_backend_t backend, ggml_backend_t sched_other, bool pin_residual, float * out_data) {
    const struct ggml_init_params pw = { (N_WEIGHTS + 1)*ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_w = ggml_init(pw);
    struct ggml_tensor * w[N_WEIGHTS];
    for (int i = 0; i < N_WEIGHTS; i++) {
        w[i] = ggml_new_tensor_2d(ctx_w, GGML_TYPE_F32, weight_ne[i][0], weight_ne[i][1]);
        ggml_set_name(w[i], weight_names[i]);
    }
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, ggml_backend_get_default_buffer_type(backend));
    CHECK(buf_w != NULL);
    ggml_backend_buffer_set_usage(buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS); // the scheduler runs ops where their weights are
    for (int i = 0; i < N_WEIGHTS; i++) {
        ggml_backend_tensor_set(w[i], g_weights[i], 0, ggml_nbytes(w[i]));
    }

    const struct ggml_init_params pg = { 128*ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx_g = ggml_init(pg);
    struct ggml_tensor * x   = ggml_new_tensor_2d(ctx_g, GGML_TYPE_F32, D, T);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx_g, GGML_TYPE_I32, T);
    ggml_set_input(x);
    ggml_set_input(pos);
    struct ggml_tensor * out = build_layer(ctx_g, w, x, pos);
    struct ggml_cgraph * gf = ggml_new_graph(ctx_g);
    ggml_build_forward_expand(gf, out);

    bool ok = false;
    if (sched_other == NULL) {
        const struct graph_input in[2] = { { x, g_x }, { pos, g_pos } };
        ok = compute_graph(backend, gf, in, 2, 2, out, out_data);
    } else {
        ggml_backend_t backends[2] = { backend, sched_other };
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, true);
        if (pin_residual) {
            ggml_backend_sched_set_tensor_backend(sched, g_residual, sched_other);
        }
        if (ggml_backend_sched_alloc_graph(sched, gf)) {
            if (pin_residual) {
                CHECK_MSG(ggml_backend_sched_get_n_splits(sched) >= 3, "%d splits", ggml_backend_sched_get_n_splits(sched));
                CHECK(ggml_backend_sched_get_tensor_backend(sched, g_residual) == sched_other);
            }
            ggml_backend_tensor_set(x, g_x, 0, sizeof(g_x));
            ggml_backend_tensor_set(pos, g_pos, 0, sizeof(g_pos));
            ok = ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS;
            if (ok) {
                ggml_backend_tensor_get(out, out_data, 0, ggml_nbytes(out));
            }
        }
        ggml_backend_sched_free(sched);
    }
    ggml_free(ctx_g);
    ggml_backend_buffer_free(buf_w);
    ggml_free(ctx_w);
    return ok;
}

//
// MoE experts with a PARTIAL down bias (llama.cpp's ffn_down_exps.bias):
// each device adds its share of the bias to its partial sums before they
// are added up, so the sum must come after the ADD_ID.
//

enum { E = 4, N_USED = 2, EFF = 5 };

static struct ggml_backend_meta_split_state moe_split(const struct ggml_tensor * t, void * user_data) {
    (void) user_data;
    if (strcmp(t->name, "up_exps") == 0) {
        return split_dim(1, 2, 3);     // expert rows 2 + 3
    }
    if (strcmp(t->name, "down_exps") == 0) {
        return split_dim(0, 2, 3);     // the same rows as K
    }
    struct ggml_backend_meta_split_state ss = split_dim(0, 0, 0);
    ss.axis = strcmp(t->name, "down_b") == 0 ? GGML_BACKEND_SPLIT_AXIS_PARTIAL : GGML_BACKEND_SPLIT_AXIS_MIRRORED;
    return ss;
}

static bool run_moe(ggml_backend_t backend, float * out_data) {
    const struct ggml_init_params pw = { 8*ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_w = ggml_init(pw);
    struct ggml_tensor * up   = ggml_new_tensor_3d(ctx_w, GGML_TYPE_F32, D, EFF, E);
    struct ggml_tensor * down = ggml_new_tensor_3d(ctx_w, GGML_TYPE_F32, EFF, D, E);
    struct ggml_tensor * bias = ggml_new_tensor_2d(ctx_w, GGML_TYPE_F32, D, E);
    ggml_set_name(up, "up_exps");
    ggml_set_name(down, "down_exps");
    ggml_set_name(bias, "down_b");
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, ggml_backend_get_default_buffer_type(backend));
    CHECK(buf_w != NULL);
    ggml_backend_tensor_set(up,   g_weights[W_Q], 0, ggml_nbytes(up));
    ggml_backend_tensor_set(down, g_weights[W_K], 0, ggml_nbytes(down));
    ggml_backend_tensor_set(bias, g_weights[W_V], 0, ggml_nbytes(bias));

    const struct ggml_init_params pg = { 32*ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx_g = ggml_init(pg);
    struct ggml_tensor * x   = ggml_new_tensor_3d(ctx_g, GGML_TYPE_F32, D, 1, T);
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx_g, GGML_TYPE_I32, N_USED, T);
    ggml_set_input(x);
    ggml_set_input(ids);
    struct ggml_tensor * h   = ggml_silu(ctx_g, ggml_mul_mat_id(ctx_g, up, x, ids));
    struct ggml_tensor * o   = ggml_mul_mat_id(ctx_g, down, h, ids);
    struct ggml_tensor * out = ggml_scale(ctx_g, ggml_add_id(ctx_g, o, bias, ids), 2.0f);
    ggml_set_output(out);
    struct ggml_cgraph * gf = ggml_new_graph(ctx_g);
    ggml_build_forward_expand(gf, out);

    static const int32_t ids_data[N_USED*T] = { 0, 3, 2, 1, 3, 0 };
    const struct graph_input in[2] = { { x, g_x }, { ids, ids_data } };
    const bool ok = compute_graph(backend, gf, in, 2, 1, out, out_data);
    ggml_free(ctx_g);
    ggml_backend_buffer_free(buf_w);
    ggml_free(ctx_w);
    return ok;
}

//
// Fused up+gate weights: wug [D, 2*FF] split along its rows 5 + 9 (device 0
// holds up rows 0..4, device 1 up rows 5..6 and every gate row), the down
// weight [FF, D] split along K 3 + 4. Two layers: SwiGLU, then GEGLU with
// the halves swapped.
//

static struct ggml_backend_meta_split_state fused_split(const struct ggml_tensor * t, void * user_data) {
    (void) user_data;
    if (strcmp(t->name, "wug") == 0) {
        return split_dim(1, 5, 2*FF - 5);
    }
    if (strcmp(t->name, "wd") == 0) {
        return split_dim(0, ff_split[0], ff_split[1]);
    }
    return mt_split_mirrored();
}

static bool run_fused(ggml_backend_t backend, float * out_data) {
    const struct ggml_init_params pw = { 4*ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_w = ggml_init(pw);
    struct ggml_tensor * wug = ggml_new_tensor_2d(ctx_w, GGML_TYPE_F32, D, 2*FF);
    struct ggml_tensor * wd  = ggml_new_tensor_2d(ctx_w, GGML_TYPE_F32, FF, D);
    ggml_set_name(wug, "wug");
    ggml_set_name(wd, "wd");
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, ggml_backend_get_default_buffer_type(backend));
    CHECK(buf_w != NULL);
    ggml_backend_tensor_set(wug, g_weights[W_Q], 0, ggml_nbytes(wug));
    ggml_backend_tensor_set(wd,  g_weights[W_D], 0, ggml_nbytes(wd));

    const struct ggml_init_params pg = { 32*ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx_g = ggml_init(pg);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx_g, GGML_TYPE_F32, D, T);
    ggml_set_input(x);
    struct ggml_tensor * h1  = ggml_swiglu(ctx_g, ggml_mul_mat(ctx_g, wug, x));
    struct ggml_tensor * x1  = ggml_add(ctx_g, x, ggml_mul_mat(ctx_g, wd, h1));
    struct ggml_tensor * h2  = ggml_geglu_swapped(ctx_g, ggml_mul_mat(ctx_g, wug, x1));
    struct ggml_tensor * out = ggml_add(ctx_g, x1, ggml_mul_mat(ctx_g, wd, h2));
    struct ggml_cgraph * gf = mt_output_graph(ctx_g, out);

    // twice: the second run reuses the device graphs and the gathered copies
    const struct graph_input in[1] = { { x, g_x } };
    const bool ok = compute_graph(backend, gf, in, 1, 2, out, out_data);
    ggml_free(ctx_g);
    ggml_backend_buffer_free(buf_w);
    ggml_free(ctx_w);
    return ok;
}

int main(void) {
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (cpu == NULL) {
        printf("no CPU device: skipped\n");
        return 0;
    }
    fill();

    ggml_backend_t plain = ggml_backend_dev_init(cpu, NULL);
    float want[D*T];
    CHECK(run_layer(plain, NULL, false, want));

    ggml_backend_dev_t devs[2] = { cpu, cpu };
    ggml_backend_dev_t meta = ggml_backend_meta_device(devs, 2, layer_split, NULL);
    CHECK(meta != NULL);
    CHECK(strcmp(ggml_backend_dev_name(meta), "Meta(CPU,CPU)") == 0);
    ggml_backend_t mb = ggml_backend_dev_init(meta, NULL);
    CHECK(mb != NULL);

    float got[D*T];
    memset(got, 0, sizeof(got));
    CHECK(run_layer(mb, NULL, false, got));
    CHECK_MSG(mt_max_abs_diff(got, want, D*T) <= 1e-4, "meta backend: differs from unsplit by %g", mt_max_abs_diff(got, want, D*T));

    memset(got, 0, sizeof(got));
    CHECK(run_layer(mb, plain, false, got));
    CHECK_MSG(mt_max_abs_diff(got, want, D*T) <= 1e-4, "scheduler over meta + CPU: differs from unsplit by %g", mt_max_abs_diff(got, want, D*T));

    memset(got, 0, sizeof(got));
    CHECK(run_layer(mb, plain, true, got));
    CHECK_MSG(mt_max_abs_diff(got, want, D*T) <= 1e-4, "scheduler, residual on the CPU: differs from unsplit by %g", mt_max_abs_diff(got, want, D*T));

    ggml_backend_free(mb);

    ggml_backend_dev_t one = ggml_backend_meta_device(devs, 1, one_device_split, NULL);
    ggml_backend_t one_b = one != NULL ? ggml_backend_dev_init(one, NULL) : NULL;
    CHECK(one_b != NULL);
    memset(got, 0, sizeof(got));
    CHECK(one_b != NULL && run_layer(one_b, NULL, false, got));
    CHECK_MSG(mt_max_abs_diff(got, want, D*T) <= 1e-4, "meta backend of one device: differs from unsplit by %g", mt_max_abs_diff(got, want, D*T));
    ggml_backend_free(one_b);

    float moe_want[D*N_USED*T];
    float moe_got[D*N_USED*T];
    memset(moe_got, 0, sizeof(moe_got));
    CHECK(run_moe(plain, moe_want));
    ggml_backend_dev_t moe_meta = ggml_backend_meta_device(devs, 2, moe_split, NULL);
    ggml_backend_t moe_mb = ggml_backend_dev_init(moe_meta, NULL);
    CHECK(run_moe(moe_mb, moe_got));
    CHECK_MSG(mt_max_abs_diff(moe_got, moe_want, D*N_USED*T) <= 1e-4, "MoE with a partial bias: differs from unsplit by %g",
              mt_max_abs_diff(moe_got, moe_want, D*N_USED*T));
    ggml_backend_free(moe_mb);

    float fused_want[D*T];
    float fused_got[D*T];
    memset(fused_got, 0, sizeof(fused_got));
    CHECK(run_fused(plain, fused_want));
    ggml_backend_dev_t fused_meta = ggml_backend_meta_device(devs, 2, fused_split, NULL);
    ggml_backend_t fused_mb = ggml_backend_dev_init(fused_meta, NULL);
    CHECK(run_fused(fused_mb, fused_got));
    CHECK_MSG(mt_max_abs_diff(fused_got, fused_want, D*T) <= 1e-4, "fused up+gate split in one block: differs from unsplit by %g",
              mt_max_abs_diff(fused_got, fused_want, D*T));
    ggml_backend_free(fused_mb);
    ggml_backend_free(plain);
    return TEST_RESULT();
}
