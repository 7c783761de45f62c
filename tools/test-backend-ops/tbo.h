#pragma once

//
// tbo.h: the parts of test-backend-ops, the conformance and performance tool.
//
// A test case is a small graph (usually one op) described by a struct tbo_case:
// a class (functions shared by one family of cases, e.g. "binary op with
// broadcasting") and that case's parameters. The case list reproduces
// upstream's test-backend-ops case list for the ops we implement, in the same
// order and with the same names, so that outputs can be compared line by line.
//
// In test mode each case is run on the backend under test and on a second
// evaluator: the CPU backend for every other backend, and the reference
// evaluator (ref-eval*.c, naive double precision, sharing no code with the CPU
// backend) for the CPU backend itself and for the cases the CPU backend does
// not support. Results are compared node by node (or, for fusion cases, on
// the outputs of the whole graph) with the normalised mean squared error and
// the case's threshold.
//
// Everything here is written against the public headers only, so that the tool
// also builds against any ggml that provides them.
//

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tbo_mode {
    TBO_MODE_TEST,
    TBO_MODE_PERF,
    TBO_MODE_GRAD,
    TBO_MODE_SUPPORT,
};

//
// growable strings (tbo-util.c)
//

struct tbo_str {
    char * s;    // always NUL-terminated once anything was appended
    size_t len;
    size_t cap;
};

GGML_ATTRIBUTE_FORMAT(2, 3)
void   tbo_str_printf(struct tbo_str * s, const char * fmt, ...);
void   tbo_str_free(struct tbo_str * s);
char * tbo_strdup(const char * s);

// the pieces of a case's "vars" string, written as upstream writes them:
// name=value pairs separated by commas; floats as "%f", bools as 0/1,
// arrays as [a,b,...], types by their name
void tbo_var_i64 (struct tbo_str * s, const char * name, int64_t v);
void tbo_var_f32 (struct tbo_str * s, const char * name, float v);
void tbo_var_type(struct tbo_str * s, const char * name, enum ggml_type v);
void tbo_var_prec(struct tbo_str * s, const char * name, enum ggml_prec v);
void tbo_var_str (struct tbo_str * s, const char * name, const char * v);
void tbo_var_arr (struct tbo_str * s, const char * name, const int64_t * v, int n);

// allocation that aborts on failure: the tool cannot do anything useful without it
void * tbo_malloc(size_t size);
void * tbo_calloc(size_t n, size_t size);
void * tbo_realloc(void * p, size_t size);

//
// random numbers (tbo-util.c): xoshiro256**, so that a run is reproducible from its seed
//

struct tbo_rng {
    uint64_t s[4];
};

void     tbo_rng_seed(struct tbo_rng * rng, uint64_t seed);
uint64_t tbo_rng_next(struct tbo_rng * rng);
float    tbo_rng_uniform(struct tbo_rng * rng, float min, float max); // in [min, max)
int64_t  tbo_rng_below(struct tbo_rng * rng, int64_t n);              // in [0, n)
void     tbo_rng_shuffle_f32(struct tbo_rng * rng, float * v, int64_t n);
void     tbo_rng_shuffle_i64(struct tbo_rng * rng, int64_t * v, int64_t n);

//
// building a case's graph (tbo-build.c)
//

struct tbo_build {
    struct ggml_context * ctx;
    enum tbo_mode         mode;        // sentinels are only added in test mode

    struct ggml_tensor ** sentinels;   // F32 tensors between the others, to catch out-of-bounds writes
    int                   n_sentinels;
    int                   cap_sentinels;

    // filled by the case's build function where it needs them
    struct ggml_tensor *  test_nodes[4]; // nodes to compare when the whole graph is run at once (else: the output)
    int                   n_test_nodes;
    struct ggml_tensor *  input;         // a tensor the case's err function reads (top_k with ties)
};

void tbo_build_init(struct tbo_build * b, struct ggml_context * ctx, enum tbo_mode mode);
void tbo_build_free(struct tbo_build * b);
void tbo_add_sentinel(struct tbo_build * b);

// tensor constructors that add a sentinel after each tensor, as upstream's test cases do
struct ggml_tensor * tbo_new_tensor   (struct tbo_build * b, enum ggml_type type, int n_dims, const int64_t * ne);
struct ggml_tensor * tbo_new_tensor_1d(struct tbo_build * b, enum ggml_type type, int64_t ne0);
struct ggml_tensor * tbo_new_tensor_2d(struct tbo_build * b, enum ggml_type type, int64_t ne0, int64_t ne1);
struct ggml_tensor * tbo_new_tensor_3d(struct tbo_build * b, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2);

// small helpers of the case files
static inline void tbo_copy4(int64_t dst[4], const int64_t src[4]) {
    memcpy(dst, src, 4 * sizeof(int64_t));
}

// upstream's cases write an all-zero permutation for "not permuted"
static inline bool tbo_any_nonzero4(const int64_t v[4]) {
    return v[0] + v[1] + v[2] + v[3] > 0;
}

// t permuted by perm and named name, or t itself when perm is all zeros
static inline struct ggml_tensor * tbo_permute_if(struct tbo_build * b, struct ggml_tensor * t, const int64_t perm[4], const char * name) {
    if (!tbo_any_nonzero4(perm)) {
        return t;
    }
    t = ggml_permute(b->ctx, t, (int) perm[0], (int) perm[1], (int) perm[2], (int) perm[3]);
    ggml_set_name(t, name);
    return t;
}
struct ggml_tensor * tbo_new_tensor_4d(struct tbo_build * b, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);

bool tbo_is_view_op(enum ggml_op op);

//
// initialising tensors (tbo-init.c)
//

// uniform values in [min, max), converted (quantized) to the tensor's type;
// integer tensors get random integers of their width
void tbo_init_uniform(struct tbo_rng * rng, struct ggml_tensor * t, float min, float max);
// every tensor of the context with tbo_init_uniform
void tbo_init_all_uniform(struct tbo_rng * rng, struct ggml_context * ctx, float min, float max);
// an F16 attention mask: uniform values with random blocks of -inf and of 0
void tbo_init_kq_mask(struct tbo_rng * rng, struct ggml_tensor * t, float min, float max);
// each row holds a shuffled permutation of 0..ne0-1 (no ties), as F32
void tbo_init_unique_rows(struct tbo_rng * rng, struct ggml_tensor * t);
// each row holds distinct row indices < num_rows (I32 or I64), for SET_ROWS
void tbo_init_row_ids(struct tbo_rng * rng, struct ggml_tensor * t, int64_t num_rows);
// each row holds shuffled i % n_mats (I32), for MUL_MAT_ID; other tensors uniform
void tbo_init_mul_mat_id(struct tbo_rng * rng, struct ggml_context * ctx, int n_mats);
// I32 values rand() % n, in order
void tbo_init_i32_below(struct tbo_rng * rng, struct ggml_tensor * t, int64_t n);

//
// test cases
//

struct tbo_case;
struct tbo_ref;

// functions shared by one family of cases; NULL members take the default
struct tbo_case_class {
    const char * name;

    // builds the graph in b->ctx and returns its output (required)
    struct ggml_tensor * (*build)(const struct tbo_case * c, struct tbo_build * b);

    // fills the tensors of ctx with input data (default: uniform in [-1, 1))
    void (*init)(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng);

    // the largest error accepted (default 1e-7)
    double (*max_err)(const struct tbo_case * c);

    // the error between the trusted values a and the tested values b (default: NMSE)
    double (*err)(const struct tbo_case * c, const struct tbo_build * b, const double * a, const double * b_vals, size_t n);

    // floating point operations of the output op, for perf mode (default 0: report bandwidth instead)
    uint64_t (*flops)(const struct tbo_case * c, const struct ggml_tensor * out);

    // bytes read and written by the output op, for perf mode (default: output and its sources)
    size_t (*op_size)(const struct tbo_case * c, const struct ggml_tensor * out);

    // the op name printed and matched by -o (default ggml_op_desc(out))
    const char * (*op_desc)(const struct tbo_case * c, const struct ggml_tensor * out);

    // run the whole graph at once and compare only the test nodes (default false: node by node)
    bool (*run_whole_graph)(const struct tbo_case * c);

    // the reference for nodes the generic evaluator cannot know: custom ops, whose
    // meaning is the case's own function (NULL: none)
    bool (*ref_supports)(const struct tbo_case * c, const struct ggml_tensor * node);
    void (*ref_compute)(const struct tbo_case * c, struct tbo_ref * ref, const struct ggml_tensor * node);
};

struct tbo_case {
    const struct tbo_case_class * cls;
    char * vars;   // the parameters as printed between the parentheses
    void * p;      // the family's parameter struct, owned by the case
};

struct tbo_case_list {
    struct tbo_case * v;
    size_t            n;
    size_t            cap;
};

// appends a case; copies the parameters and takes the vars string
void tbo_case_add(struct tbo_case_list * list, const struct tbo_case_class * cls, const void * params, size_t size, struct tbo_str * vars);
void tbo_case_list_free(struct tbo_case_list * list);

// the case lists (cases-list-eval.c, cases-list-perf.c)
void tbo_make_cases_eval(struct tbo_case_list * list);
void tbo_make_cases_perf(struct tbo_case_list * list);

// defaults of the case class functions
double       tbo_case_max_err(const struct tbo_case * c);
size_t       tbo_case_op_size(const struct tbo_case * c, const struct ggml_tensor * out);
uint64_t     tbo_case_flops(const struct tbo_case * c, const struct ggml_tensor * out);
const char * tbo_case_op_desc(const struct tbo_case * c, const struct ggml_tensor * out);
bool         tbo_case_run_whole_graph(const struct tbo_case * c);

// errors
double tbo_nmse(const double * a, const double * b, size_t n);
double tbo_jaccard_distance(const double * a, const double * b, size_t n);

// reads any tensor (views included) into doubles, in logical order (i0 fastest)
double * tbo_tensor_to_double(const struct ggml_tensor * t);

//
// the families of cases: constructors that append to a list (cases-*.c)
//

typedef struct ggml_tensor * (*tbo_binary_fn)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);

// cases-elementwise.c
void tbo_add_unary(struct tbo_case_list * l, enum ggml_unary_op op, enum ggml_type type, const int64_t ne[4], int v);
// ours: F32 inputs in [-3, 3], threshold 1e-12 (a wrong constant in GELU-like formulas fails)
void tbo_add_unary_narrow(struct tbo_case_list * l, enum ggml_unary_op op, const int64_t ne[4]);
void tbo_add_relu_sqr(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_unary_mul(struct tbo_case_list * l, enum ggml_unary_op op, enum ggml_type type, const int64_t ne[4], bool swap,
                       const char * layout, const char * tail);
void tbo_add_snake_fuse(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_glu(struct tbo_case_list * l, enum ggml_glu_op op, enum ggml_type type, const int64_t ne[4], int v, bool swapped);
void tbo_add_glu_split(struct tbo_case_list * l, enum ggml_glu_op op, enum ggml_type type, const int64_t ne[4], int v);
void tbo_add_bin_bcast(struct tbo_case_list * l, tbo_binary_fn op, enum ggml_type type, const int64_t ne[4], const int64_t nr[4],
                       int nf, bool perm1, bool src_overlap);
void tbo_add_scale(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float scale, float bias, bool inplace);
void tbo_add_softcap(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float softcap);
// FLOOR, CEIL, ROUND and TRUNC are unary ops outside the op set, in upstream's list with these cases
enum tbo_simple_op { TBO_SQR, TBO_SQRT, TBO_LOG, TBO_SIN, TBO_COS, TBO_FLOOR, TBO_CEIL, TBO_ROUND, TBO_TRUNC };
void tbo_add_simple(struct tbo_case_list * l, enum tbo_simple_op op, enum ggml_type type, const int64_t ne[4]);
void tbo_add_clamp(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float min, float max);
void tbo_add_leaky_relu(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float negative_slope);
void tbo_add_add1(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);

// cases-activ.c
void tbo_add_xielu(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_swiglu_oai(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int v, float alpha, float limit);

// cases-misc.c
void tbo_add_add_id(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int64_t n_embd, int64_t n_experts,
                    int64_t n_experts_used, int64_t n_token);
void tbo_add_cumsum(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_diag(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_tri(struct tbo_case_list * l, enum ggml_tri_type tri_type, enum ggml_type type, const int64_t ne[4]);
void tbo_add_fill(struct tbo_case_list * l, float c, enum ggml_type type, const int64_t ne[4]);
void tbo_add_diag_mask_zero(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int n_past);
void tbo_add_solve_tri(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_lhs[4], const int64_t ne_rhs[4]);
// the parts of the list: ADD_ID (after OUT_PROD), GROUP_NORM[_MUL_ADD] (after
// SUM_ROWS), CUMSUM XIELU TRI FILL DIAG SOLVE_TRI (after LEAKY_RELU), ours
void tbo_list_misc_add_id(struct tbo_case_list * l);
void tbo_list_misc_group_norm(struct tbo_case_list * l);
void tbo_list_misc_after_leaky_relu(struct tbo_case_list * l);
void tbo_list_misc_ours(struct tbo_case_list * l);
// DSV4_HC_COMB/PRE/POST (after SNAKE_FUSE) and LIGHTNING_INDEXER (the end of upstream's list)
void tbo_list_misc_dsv4(struct tbo_case_list * l);
void tbo_list_misc_lightning_indexer(struct tbo_case_list * l);

// cases-ssm.c: SSM_CONV[_BIAS_SILU], SSM_SCAN[_ROLLBACK], RWKV_WKV6/7, GLA (after the
// norm fusions) and GATED_DELTA_NET (after TOPK_MOE)
void tbo_list_ssm_after_norms(struct tbo_case_list * l);
void tbo_list_ssm_gated_delta_net(struct tbo_case_list * l);

// the parts of the perf list (cases-misc.c, cases-ssm.c), named for what precedes them upstream
void tbo_perf_misc_after_hadamard(struct tbo_case_list * l);   // SOLVE_TRI, TRI, CUMSUM
void tbo_perf_misc_add_id(struct tbo_case_list * l);           // after MEAN
void tbo_perf_misc_cumsum(struct tbo_case_list * l);           // after TOP_K
void tbo_perf_ssm_conv_scan(struct tbo_case_list * l);         // after the CUMSUM sweep
void tbo_perf_ssm_gated_delta_net(struct tbo_case_list * l);   // after ACC
void tbo_perf_misc_lightning_indexer(struct tbo_case_list * l); // after GATED_DELTA_NET

// cases-custom.c: MAP_CUSTOM1..3 (kind 1..3) and CUSTOM (kind 4), with functions of the tool's own
void tbo_add_custom(struct tbo_case_list * l, int kind, const int64_t ne[4], int n_tasks, bool inplace);

// cases-layout.c
void tbo_add_get_rows(struct tbo_case_list * l, enum ggml_type type, int n, int m, int r, int be1, int be2, bool v);
void tbo_add_set_rows(struct tbo_case_list * l, enum ggml_type type_src, enum ggml_type type_dst, enum ggml_type type_idx,
                      const int64_t ne[4], const int64_t nr23[2], int r, bool v);
void tbo_add_repeat(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t nr[4]);
void tbo_add_dup(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t permute[4]);
void tbo_add_set(struct tbo_case_list * l, enum ggml_type type_src, enum ggml_type type_dst, const int64_t ne[4], int dim, bool inplace);
void tbo_add_cpy(struct tbo_case_list * l, enum ggml_type type_src, enum ggml_type type_dst, const int64_t ne_src[4],
                 const int64_t ne_dst[4], const int64_t permute_src[4], const int64_t permute_dst[4], bool transpose_src,
                 const int64_t dst_alloc[4]);
// F32 -> type_dst (Q8_0) of values that are rounding ties (ours: not upstream's)
void tbo_add_cpy_ties(struct tbo_case_list * l, enum ggml_type type_dst, const int64_t ne_src[4]);
void tbo_add_cont(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool use_view_slice, const int64_t permute[4]);
void tbo_add_concat(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int64_t ne_b_d, int dim, int v);
void tbo_add_acc(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], const int64_t ne_b[4], int64_t stride_dim);
void tbo_add_pad(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int pad_0, int pad_1);
void tbo_add_pad_ext(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], const int lp_rp[8], int tfrm);
void tbo_add_pad_circular(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int pad_0, int pad_1);
void tbo_add_pad_ext_circular(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], const int lp_rp[8], int tfrm);
void tbo_add_arange(struct tbo_case_list * l, enum ggml_type type, float start, float stop, float step);
void tbo_add_diag_mask_inf(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int n_past);

// cases-reduce.c
void tbo_add_argmax(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_count_equal(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_sum(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t permute[4]);
void tbo_add_sum_rows(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool permute, bool slice);
void tbo_add_mean(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]);
void tbo_add_argsort(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], enum ggml_sort_order order);
void tbo_add_top_k(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int k, bool ties);
enum tbo_moe_gating { TBO_GATING_SOFTMAX, TBO_GATING_SIGMOID, TBO_GATING_SOFTMAX_WEIGHT, TBO_GATING_SQRT_SOFTPLUS };
void tbo_add_topk_moe(struct tbo_case_list * l, const int64_t ne[4], int n_expert_used, bool with_norm, bool bias_probs,
                      enum tbo_moe_gating gating, float scale_w);

// cases-norm.c
void tbo_add_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool v, float eps, bool noncontig_rows);
void tbo_add_rms_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool v, float eps, bool inplace);
void tbo_add_l2_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool v, bool noncontig_rows);
void tbo_add_norm_mul_add(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool broadcast);
void tbo_add_rms_norm_mul_add(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool broadcast,
                              bool multi_add);
void tbo_add_add_rms_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool broadcast);

// cases-matmul.c
void tbo_add_mul_mat(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int64_t m, int64_t n, int64_t k,
                     const int64_t bs[2], const int64_t nr[2], const int64_t per[4], int64_t k_v, int o, bool src_overlap);
void tbo_add_mul_mat_hadamard(struct tbo_case_list * l, int64_t m, int64_t n, int64_t k, const int64_t bs[2]);
void tbo_add_mul_mat_id(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int n_mats, int n_used, bool b,
                        int64_t m, int64_t n, int64_t k);
void tbo_add_mul_mat_id_fusion(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int n_mats, int n_used,
                               bool b, int64_t m, int64_t n, int64_t k, int o, bool mul);
void tbo_add_out_prod(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int64_t m, int64_t n, int64_t k,
                      const int64_t bs[2], const int64_t nr[2], bool trans_b);
void tbo_add_mul_mat_vec_fusion(struct tbo_case_list * l, enum ggml_type type, enum ggml_glu_op glu_op, int64_t m, int64_t n,
                                int64_t k, bool use_id, int n_mats, int n_used, bool b, bool with_bias, bool with_gate,
                                bool with_lane_scale, const int64_t batch_dims[2]);

// cases-attn.c
void tbo_add_soft_max(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool mask, bool sinks,
                      enum ggml_type m_prec, const int64_t nr23[2], float scale, float max_bias, bool inplace);
void tbo_add_soft_max_inf_mask(struct tbo_case_list * l, const int64_t ne[4], float scale, float max_bias);
void tbo_add_rope(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int n_dims, int mode, int n_ctx,
                  float fs, float ef, float af, bool ff, int v, bool inplace, int n_offs);
// ROPE_BACK (upstream's test_rope with forward = false; same name and vars)
void tbo_add_rope_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int n_dims, int mode, int n_ctx,
                       float fs, float ef, float af, bool ff, int v);
// ours: MROPE/IMROPE with the given sections (each bound of the section walk reachable)
void tbo_add_rope_sections(struct tbo_case_list * l, const int64_t ne_a[4], int n_dims, int mode, const int sections[4]);
void tbo_add_rope_set_rows(struct tbo_case_list * l, enum ggml_type type, enum ggml_type type_idx, const int64_t ne_a[4], int mode);
void tbo_add_rms_norm_mul_rope(struct tbo_case_list * l, const int64_t ne[4], float eps, bool multi_add, bool set_rows,
                               bool broadcast, int mode);
void tbo_add_flash_attn_ext(struct tbo_case_list * l, int64_t hsk, int64_t hsv, int64_t nh, const int64_t nr23[2], int64_t kv,
                            int64_t nb, bool mask, bool sinks, float max_bias, float logit_softcap, enum ggml_prec prec,
                            enum ggml_type type_k, enum ggml_type type_v, const int64_t permute[4], bool kv_view,
                            bool v_is_view_of_k);

// cases-train.c: the backward ops, the loss and the optimizer steps
void tbo_add_get_rows_back(struct tbo_case_list * l, enum ggml_type type, int n, int m, int r, int b, bool v);
void tbo_add_repeat_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t nr[4], bool v);
void tbo_add_silu_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps);
void tbo_add_rms_norm_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps);
void tbo_add_soft_max_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float scale, float max_bias);
void tbo_add_train_step_cases(struct tbo_case_list * l); // CROSS_ENTROPY_LOSS(_BACK), OPT_STEP_ADAMW, OPT_STEP_SGD

// cases-conv.c
void tbo_add_pool2d(struct tbo_case_list * l, enum ggml_op_pool pool_type, enum ggml_type type_input, const int64_t ne[4],
                    int k0, int k1, int s0, int s1, int p0, int p1);
void tbo_add_pool1d(struct tbo_case_list * l, enum ggml_op_pool pool_type, enum ggml_type type_input, const int64_t ne[4],
                    int k0, int s0, int p0);
void tbo_add_im2col(struct tbo_case_list * l, enum ggml_type type_input, enum ggml_type type_kernel, enum ggml_type dst_type,
                    const int64_t ne_input[4], const int64_t ne_kernel[4], int s0, int s1, int p0, int p1, int d0, int d1,
                    bool is_2D);
void tbo_add_im2col_3d(struct tbo_case_list * l, enum ggml_type type_input, enum ggml_type type_kernel, enum ggml_type dst_type,
                       const int64_t ne_input[4], const int64_t ne_kernel[4], int64_t IC, const int s[3], const int p[3],
                       const int d[3], bool v);
void tbo_add_conv_2d(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], enum ggml_type type_kernel,
                     int s0, int s1, int p0, int p1, int d0, int d1, bool cwhn);
void tbo_add_conv_2d_dw(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], enum ggml_type type_kernel,
                        int stride, int padding, int dilation, bool cwhn);
struct tbo_conv3d {
    int64_t        N, IC, ID, IH, IW, OC, KD, KH, KW;
    int            s0, s1, s2, p0, p1, p2, d0, d1, d2;
    enum ggml_type type_kernel;
};
void tbo_add_conv_3d(struct tbo_case_list * l, const struct tbo_conv3d * p);
void tbo_add_conv_transpose_1d(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], int s0, int p0, int d0);
void tbo_add_conv_transpose_2d(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], int stride,
                               enum ggml_type kernel_type);
void tbo_add_col2im_1d(struct tbo_case_list * l, enum ggml_type type, int64_t K, int64_t OC, int64_t T_in, int s0, int p0);
void tbo_add_upscale(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int scale_factor, uint32_t mode, bool transpose);
void tbo_add_interpolate(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t ne_tgt[4], uint32_t mode);
void tbo_add_pad_reflect_1d(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int pad_0, int pad_1);
void tbo_add_roll(struct tbo_case_list * l, int shift0, int shift1, int shift3, int shift4, bool permute);
void tbo_add_timestep_embedding(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int dim, int max_period);

// cases-list-conv.c: the parts of upstream's lists with these families, each
// appended where upstream has it
enum tbo_conv_list {
    TBO_CONV_EVAL_CONV,     // pool2d .. conv_transpose_2d, after rope_set_rows
    TBO_CONV_EVAL_UPSCALE,  // upscale, interpolate, after top_k
    TBO_CONV_PERF_CONV,     // conv_2d and conv_3d, after the CONT cases
    TBO_CONV_PERF_REFLECT,  // pad_reflect_1d, after argmax
    TBO_CONV_PERF_IM2COL,   // im2col, after the mul_mat_id cases
    TBO_CONV_PERF_TAIL,     // conv_2d_dw, conv_transpose_2d, col2im_1d, after the soft_max rows
};
void tbo_add_conv_list(struct tbo_case_list * l, enum tbo_conv_list which);

//
// the reference evaluator (ref-eval*.c)
//
// Holds a double-precision image of every buffer of a case's context, read
// from the backend after initialisation, and applies graph nodes to it in
// order. Values are rounded to the destination type when stored, as a backend
// stores them. It shares no code with the CPU backend: quantized data is read
// with the type's to_float and written with its from_float_ref (ggml-base).
//

struct tbo_ref;

// whether the reference evaluator implements node; if not, *why says what is missing
bool tbo_ref_supports(const struct ggml_tensor * node, const char ** why);

// reads every allocated tensor of ctx; NULL (with a message) if a type cannot be read
struct tbo_ref * tbo_ref_new(struct ggml_context * ctx);
void             tbo_ref_free(struct tbo_ref * ref);

// Whether values of a quantized result (a conversion of float data) differ from
// the reference's only as another rounding of ties would: by one quantization
// step, in at most 2% of the values. Upstream's quantizers round ties away from
// zero, SIMD ones often to even; both are correct. False for types without a
// known step.
bool tbo_ref_quant_ties_ok(enum ggml_type type, const double * ref, const double * tested, size_t n);

// applies one node (views and NONE are no-ops)
void     tbo_ref_compute(struct tbo_ref * ref, const struct ggml_tensor * node);
// the current values of a tensor, in logical order; free() the result
double * tbo_ref_values(struct tbo_ref * ref, const struct ggml_tensor * t);

#ifdef __cplusplus
}
#endif
