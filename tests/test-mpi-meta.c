// test-mpi-meta: the meta device over MPI devices, run by ctest as
//     mpirun --oversubscribe -np 3|4 test-mpi-meta
// Ranks other than 0 are workers; rank 0 checks, on meta devices whose
// weights are split along the reduction axis so that MUL_MAT gives PARTIAL
// sums:
//
// - over MPI1:CPU and MPI2:CPU the partial sums are added by the MPI
//   backend's collective between the two workers (the allreduce counter of
//   ggml_backend_mpi_allreduce_stats goes up by one per reduction, by the
//   bytes of the reduced tensor), and the result equals a double-precision
//   reference and the unsplit run on MPI1:CPU: an FFN (rows split, then K
//   split, the residual added after the reduction) and a product that is the
//   graph's output, each computed twice (the second time on the kept graphs),
//   and an FFN with up and gate in one weight split in one block (the
//   SwiGLU's source gathered through the host, down on its K columns);
//   with 4 ranks also over MPI3:CPU, MPI1:CPU and MPI2:CPU (a communicator
//   of three, its members in another order than their ranks);
// - where the collective does not apply (MPI1:CPU twice, MPI1:CPU with the
//   CPU) the meta device adds through the host: same results, counter still.

#include "testing.h"
#include "meta-testing.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEAVES 3

// the split of each weight by name; anything else mirrored
struct split_rule {
    const char * name;
    int          axis;
    int64_t      ne[2][3];   // per device along axis: over 2 devices, over 3
};

struct mpi_meta_case {
    const char *      name;
    int               n_leaves;
    const char *      leaf_names[MAX_LEAVES];
    int64_t           leaf_ne[MAX_LEAVES][2];
    struct split_rule rules[MAX_LEAVES];
    int               n_rules;
    struct ggml_tensor * (*build)(struct ggml_context * ctx, struct ggml_tensor ** leaves);
    // the output from the leaves' data, products in double (mt_ref_mul_mat); returns the element count
    int64_t (*reference)(float * const * data, const int64_t (*ne)[2], float * out);
};

static const struct mpi_meta_case * g_case;
static size_t                       g_n_devs;

static struct ggml_backend_meta_split_state split_by_rule(const struct ggml_tensor * tensor, void * user_data) {
    (void) user_data;
    for (int i = 0; i < g_case->n_rules; i++) {
        if (strcmp(tensor->name, g_case->rules[i].name) == 0) {
            return mt_split(g_case->rules[i].axis, g_n_devs, g_case->rules[i].ne[g_n_devs - 2]);
        }
    }
    return mt_split_mirrored();
}

// up [d, ff] split by rows, x [d, T] mirrored, down [ff, d] split along K:
// out = down . (up . x) + x, the second product PARTIAL
static struct ggml_tensor * build_ffn(struct ggml_context * ctx, struct ggml_tensor ** l) {
    struct ggml_tensor * h = ggml_mul_mat(ctx, l[0], l[2]);
    struct ggml_tensor * o = ggml_mul_mat(ctx, l[1], h);
    return ggml_add(ctx, o, l[2]);
}

static int64_t ref_ffn(float * const * data, const int64_t (*ne)[2], float * out) {
    const int64_t d = ne[0][0], ff = ne[0][1], T = ne[2][1];
    float * h = malloc((size_t) (ff * T) * sizeof(float));
    mt_ref_mul_mat(data[0], data[2], d, ff, T, h);
    mt_ref_mul_mat(data[1], h, ff, d, T, out);
    for (int64_t i = 0; i < d * T; i++) {
        out[i] += data[2][i];
    }
    free(h);
    return d * T;
}

// up and gate in one weight ug [d, 2 ff] split by rows in one block (not at
// the halves: the SwiGLU's source is gathered through the host), down [ff, d]
// split along K with the SwiGLU's result whole (each device takes its K
// columns): out = down . swiglu(ug . x) + x
static struct ggml_tensor * build_fused_ffn(struct ggml_context * ctx, struct ggml_tensor ** l) {
    struct ggml_tensor * h = ggml_swiglu(ctx, ggml_mul_mat(ctx, l[0], l[2]));
    return ggml_add(ctx, ggml_mul_mat(ctx, l[1], h), l[2]);
}

static int64_t ref_fused_ffn(float * const * data, const int64_t (*ne)[2], float * out) {
    const int64_t d = ne[0][0], ff = ne[1][0], T = ne[2][1];
    float * ug = malloc((size_t) (2 * ff * T) * sizeof(float));
    float * h  = malloc((size_t) (ff * T) * sizeof(float));
    mt_ref_mul_mat(data[0], data[2], d, 2 * ff, T, ug);
    for (int64_t t = 0; t < T; t++) {
        for (int64_t i = 0; i < ff; i++) {
            const double a = ug[t * 2 * ff + i];
            h[t * ff + i] = (float) (a / (1.0 + exp(-a)) * ug[t * 2 * ff + ff + i]);
        }
    }
    mt_ref_mul_mat(data[1], h, ff, d, T, out);
    for (int64_t i = 0; i < d * T; i++) {
        out[i] += data[2][i];
    }
    free(ug);
    free(h);
    return d * T;
}

// w [K, R] and x [K, T] both split along K: the PARTIAL product is the output
static struct ggml_tensor * build_k_split(struct ggml_context * ctx, struct ggml_tensor ** l) {
    return ggml_mul_mat(ctx, l[0], l[1]);
}

static int64_t ref_k_split(float * const * data, const int64_t (*ne)[2], float * out) {
    mt_ref_mul_mat(data[0], data[1], ne[0][0], ne[0][1], ne[1][1], out);
    return ne[0][1] * ne[1][1];
}

static const struct mpi_meta_case g_cases[] = {
    {
        .name = "ffn", .n_leaves = 3, .leaf_names = { "up", "down", "x" },
        .leaf_ne = { { 67, 96 }, { 96, 67 }, { 67, 5 } },
        .rules = { { "up", 1, { { 40, 56 }, { 30, 30, 36 } } }, { "down", 0, { { 40, 56 }, { 30, 30, 36 } } } }, .n_rules = 2,
        .build = build_ffn, .reference = ref_ffn,
    },
    {
        // the first device's slices are empty: it skips the products, and the
        // collective must add nothing for it (not what its memory holds)
        .name = "ffn, an empty slice", .n_leaves = 3, .leaf_names = { "up", "down", "x" },
        .leaf_ne = { { 67, 96 }, { 96, 67 }, { 67, 5 } },
        .rules = { { "up", 1, { { 0, 96 }, { 0, 40, 56 } } }, { "down", 0, { { 0, 96 }, { 0, 40, 56 } } } }, .n_rules = 2,
        .build = build_ffn, .reference = ref_ffn,
    },
    {
        .name = "fused up+gate", .n_leaves = 3, .leaf_names = { "ug", "down", "x" },
        .leaf_ne = { { 67, 96 }, { 48, 67 }, { 67, 5 } },
        .rules = { { "ug", 1, { { 40, 56 }, { 30, 30, 36 } } }, { "down", 0, { { 20, 28 }, { 10, 16, 22 } } } }, .n_rules = 2,
        .build = build_fused_ffn, .reference = ref_fused_ffn,
    },
    {
        .name = "K split output", .n_leaves = 2, .leaf_names = { "w", "x" },
        .leaf_ne = { { 1031, 129 }, { 1031, 7 } },
        .rules = { { "w", 0, { { 500, 531 }, { 300, 331, 400 } } }, { "x", 0, { { 500, 531 }, { 300, 331, 400 } } } },
        .n_rules = 2,
        .build = build_k_split, .reference = ref_k_split,
    },
};

static float * g_data[MAX_LEAVES];

static void fill_leaves(const struct mpi_meta_case * c, unsigned seed) {
    for (int i = 0; i < c->n_leaves; i++) {
        const int64_t n = c->leaf_ne[i][0] * c->leaf_ne[i][1];
        free(g_data[i]);
        g_data[i] = malloc((size_t) n * sizeof(float));
        for (int64_t k = 0; k < n; k++) {
            seed = seed * 1103515245u + 12345u;
            g_data[i][k] = (float) ((seed >> 8) % 2001) / 1000.0f - 1.0f;
        }
    }
}

// the case's output computed twice on backend (NULL if anything failed)
static float * run_case(const struct mpi_meta_case * c, ggml_backend_t backend, int64_t * n_out) {
    const struct ggml_init_params pw = { (size_t) (MAX_LEAVES + 1) * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_w = ggml_init(pw);
    struct ggml_tensor * leaves[MAX_LEAVES];
    for (int i = 0; i < c->n_leaves; i++) {
        leaves[i] = ggml_new_tensor_2d(ctx_w, GGML_TYPE_F32, c->leaf_ne[i][0], c->leaf_ne[i][1]);
        ggml_set_name(leaves[i], c->leaf_names[i]);
    }
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, ggml_backend_get_default_buffer_type(backend));
    CHECK(buf_w != NULL);
    float * result = NULL;
    if (buf_w != NULL) {
        for (int i = 0; i < c->n_leaves; i++) {
            ggml_backend_tensor_set(leaves[i], g_data[i], 0, ggml_nbytes(leaves[i]));
        }
        const struct ggml_init_params pg = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
        struct ggml_context * ctx_g = ggml_init(pg);
        struct ggml_tensor * out = c->build(ctx_g, leaves);
        struct ggml_cgraph * gf = mt_output_graph(ctx_g, out);
        ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend));
        if (ggml_gallocr_alloc_graph(galloc, gf) && ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS &&
            ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS) {
            result = malloc(ggml_nbytes(out));
            ggml_backend_tensor_get(out, result, 0, ggml_nbytes(out));
            *n_out = ggml_nelements(out);
        }
        ggml_gallocr_free(galloc);
        ggml_free(ctx_g);
        ggml_backend_buffer_free(buf_w);
    }
    ggml_free(ctx_w);
    return result;
}

// the largest difference relative to the largest value wanted
static double max_rel_diff(const float * got, const float * want, int64_t n) {
    double scale = 1e-3;
    for (int64_t i = 0; i < n; i++) {
        scale = fmax(scale, fabs((double) want[i]));
    }
    return mt_max_abs_diff(got, want, n) / scale;
}

static ggml_backend_dev_t dev_named(const char * name) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
    CHECK_MSG(dev != NULL, "no device %s", name);
    return dev;
}

// the case on a meta device over devs; whether the collective must add its partial sums
static void check_case(const struct mpi_meta_case * c, ggml_backend_dev_t * devs, size_t n_devs, const char * devs_text,
                       bool collective) {
    g_case   = c;
    g_n_devs = n_devs;
    fill_leaves(c, 4321u);
    float * want = malloc(65536 * sizeof(float));
    int64_t n_ref = c->reference(g_data, (const int64_t (*)[2]) c->leaf_ne, want);

    // unsplit on the first device
    ggml_backend_t plain = ggml_backend_dev_init(devs[0], NULL);
    int64_t n_plain = 0;
    float * one = plain != NULL ? run_case(c, plain, &n_plain) : NULL;
    ggml_backend_free(plain);
    CHECK_MSG(one != NULL, "%s: unsplit run on %s failed", c->name, ggml_backend_dev_name(devs[0]));

    ggml_backend_dev_t meta = ggml_backend_meta_device(devs, n_devs, split_by_rule, NULL);
    CHECK(meta != NULL);
    ggml_backend_t mb = meta != NULL ? ggml_backend_dev_init(meta, NULL) : NULL;
    CHECK(mb != NULL);
    uint64_t n0 = 0, bytes0 = 0, n1 = 0, bytes1 = 0;
    ggml_backend_mpi_allreduce_stats(&n0, &bytes0);
    int64_t n_meta = 0;
    float * got = mb != NULL ? run_case(c, mb, &n_meta) : NULL;
    ggml_backend_mpi_allreduce_stats(&n1, &bytes1);
    ggml_backend_free(mb);
    CHECK_MSG(got != NULL, "%s on %s: meta run failed", c->name, devs_text);

    // one reduction per computation, of the product's floats (as many as the output's)
    const int64_t reduced = n_ref;
    if (collective) {
        CHECK_MSG(n1 - n0 == 2, "%s on %s: %llu allreduces between the workers, expected 2", c->name, devs_text,
                  (unsigned long long) (n1 - n0));
        CHECK_MSG(bytes1 - bytes0 == 2 * (uint64_t) reduced * sizeof(float), "%s on %s: %llu bytes reduced", c->name,
                  devs_text, (unsigned long long) (bytes1 - bytes0));
    } else {
        CHECK_MSG(n1 == n0, "%s on %s: the collective was used where it cannot be", c->name, devs_text);
    }
    if (got != NULL && one != NULL) {
        CHECK_EQ_INT(n_meta, n_ref);
        CHECK_EQ_INT(n_plain, n_ref);
        const double e_meta = max_rel_diff(got, want, n_ref);
        const double e_one  = max_rel_diff(one, want, n_ref);
        printf("%-15s on %-22s (%s): relative error %.2e split, %.2e unsplit\n", c->name, devs_text,
               collective ? "MPI allreduce" : "through the host", e_meta, e_one);
        CHECK_MSG(e_meta <= 1e-5, "%s on %s: split result off by %g", c->name, devs_text, e_meta);
        CHECK_MSG(e_one <= 1e-5, "%s: unsplit result off by %g", c->name, e_one);
    }
    free(got);
    free(one);
    free(want);
}

int main(void) {
    ggml_backend_load_all();
    if (ggml_backend_mpi_rank() != 0) {
        return ggml_backend_mpi_worker(1) == GGML_STATUS_SUCCESS ? 0 : 1;
    }
    ggml_backend_dev_t d1  = dev_named("MPI1:CPU");
    ggml_backend_dev_t d2  = dev_named("MPI2:CPU");
    ggml_backend_dev_t d3  = ggml_backend_dev_by_name("MPI3:CPU"); // with -np 4
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (d1 == NULL || d2 == NULL || cpu == NULL) {
        return TEST_RESULT();
    }
    for (size_t i = 0; i < sizeof(g_cases) / sizeof(g_cases[0]); i++) {
        check_case(&g_cases[i], (ggml_backend_dev_t[]) { d1, d2 }, 2, "MPI1:CPU + MPI2:CPU", true);
        check_case(&g_cases[i], (ggml_backend_dev_t[]) { d1, d1 }, 2, "MPI1:CPU twice", false);
        check_case(&g_cases[i], (ggml_backend_dev_t[]) { d2, cpu }, 2, "MPI2:CPU + CPU", false);
        if (d3 != NULL) {
            // a communicator of three, in another order than the ranks'
            check_case(&g_cases[i], (ggml_backend_dev_t[]) { d3, d1, d2 }, 3, "MPI3:CPU + MPI1:CPU + MPI2:CPU", true);
        }
    }
    CHECK(!ggml_backend_mpi_failed());
    for (int i = 0; i < MAX_LEAVES; i++) {
        free(g_data[i]);
    }
    return TEST_RESULT();
}
