// cases-list-eval.c: the cases of test and support mode.
//
// The list follows upstream's make_test_cases_eval() in order and parameters,
// for every family whose graph consists of ops of our op set, so that the
// outputs of the two tools can be compared line by line. Left out, because
// their constructors are outside the op set: the MUL_MAT_VEC_FUSION cases with biases on expert matrices
// (ADD_ID), the circular PAD cases (ggml_pad circular) and every family of other ops. Cases of ours follow at the end.

#include "tbo.h"
#include "ggml-op-list.h"

#include <math.h>

#define NE(...) ((const int64_t[]) { __VA_ARGS__ })

static const int64_t NO_DIMS[4] = { -1, -1, -1, -1 };
static const int64_t ZERO4[4]   = { 0, 0, 0, 0 };
static const int64_t ID_PERM[4] = { 0, 1, 2, 3 };
static const int64_t ONE2[2]    = { 1, 1 };

static const enum ggml_type all_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16,
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
    GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    GGML_TYPE_Q8_0,
    GGML_TYPE_Q1_0,
    GGML_TYPE_Q2_0,
    GGML_TYPE_MXFP4, GGML_TYPE_NVFP4,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
    GGML_TYPE_Q4_K, GGML_TYPE_Q5_K,
    GGML_TYPE_Q6_K,
    GGML_TYPE_TQ2_0,
    GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
    GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ3_S, GGML_TYPE_IQ4_XS,
};

static const enum ggml_type base_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16,
    GGML_TYPE_Q8_0,
    GGML_TYPE_Q1_0,
    GGML_TYPE_Q2_0,
    GGML_TYPE_Q4_0,
    GGML_TYPE_Q4_1,
    GGML_TYPE_Q4_K,
    GGML_TYPE_MXFP4, GGML_TYPE_NVFP4,
    GGML_TYPE_IQ2_XXS,
};

static const enum ggml_type other_types[] = {
    GGML_TYPE_Q4_1,
    GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    GGML_TYPE_Q8_0,
    GGML_TYPE_Q1_0,
    GGML_TYPE_Q2_0,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
    GGML_TYPE_Q5_K,
    GGML_TYPE_Q6_K,
    GGML_TYPE_TQ2_0,
    GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
    GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ3_S, GGML_TYPE_IQ4_XS,
    GGML_TYPE_BF16,
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void mm(struct tbo_case_list * l, enum ggml_type ta, enum ggml_type tb, int64_t m, int64_t n, int64_t k,
               int64_t bs0, int64_t bs1, int64_t nr0, int64_t nr1) {
    tbo_add_mul_mat(l, ta, tb, m, n, k, NE(bs0, bs1), NE(nr0, nr1), ID_PERM, 0, 1, false);
}

static void mm_per(struct tbo_case_list * l, enum ggml_type ta, enum ggml_type tb, int64_t m, int64_t n, int64_t k,
                   int64_t bs0, int64_t bs1, int64_t nr0, int64_t nr1, const int64_t per[4]) {
    tbo_add_mul_mat(l, ta, tb, m, n, k, NE(bs0, bs1), NE(nr0, nr1), per, 0, 1, false);
}

static void fa(struct tbo_case_list * l, int64_t hsk, int64_t hsv, int64_t nh, int64_t nr2, int64_t nr3, int64_t kv, int64_t nb,
               bool mask, bool sinks, float max_bias, float softcap, enum ggml_prec prec, enum ggml_type tk, enum ggml_type tv,
               const int64_t perm[4], bool kv_view, bool v_is_view_of_k) {
    tbo_add_flash_attn_ext(l, hsk, hsv, nh, NE(nr2, nr3), kv, nb, mask, sinks, max_bias, softcap, prec, tk, tv, perm, kv_view,
                           v_is_view_of_k);
}

static void fa_simple(struct tbo_case_list * l, int64_t hsk, int64_t hsv, int64_t nh, int64_t nr2, int64_t nr3, int64_t kv,
                      int64_t nb, bool mask, enum ggml_type tk, enum ggml_type tv) {
    fa(l, hsk, hsv, nh, nr2, nr3, kv, nb, mask, false, 0.0f, 0.0f, GGML_PREC_F32, tk, tv, ID_PERM, true, false);
}

// the next permutation in lexicographic order, as std::next_permutation; false after the last
static bool next_permutation4(int64_t v[4]) {
    int i = 2;
    while (i >= 0 && v[i] >= v[i + 1]) {
        i--;
    }
    if (i < 0) {
        for (int a = 0, b = 3; a < b; a++, b--) {
            const int64_t t = v[a]; v[a] = v[b]; v[b] = t;
        }
        return false;
    }
    int j = 3;
    while (v[j] <= v[i]) {
        j--;
    }
    int64_t t = v[i]; v[i] = v[j]; v[j] = t;
    for (int a = i + 1, b = 3; a < b; a++, b--) {
        t = v[a]; v[a] = v[b]; v[b] = t;
    }
    return true;
}

static bool eq4(const int64_t a[4], const int64_t b[4]) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

static void add_bin_bcast_all(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t nr[4], bool perm1,
                              bool src_overlap) {
    // the binary list of ggml-op-list.h
#define X(NAME, ctor, ...) tbo_add_bin_bcast(l, ctor, type, ne, nr, 1, perm1, src_overlap);
    GGML_OP_LIST_BINARY(X)
#undef X
}

static void make_elementwise(struct tbo_case_list * l) {
    static const enum ggml_type f16_f32[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };

    for (int ti = 0; ti < 2; ti++) {
        for (int v = 0; v <= 1; v++) {
            for (int op = 0; op < GGML_UNARY_OP_COUNT; op++) {
                if (op == GGML_UNARY_OP_XIELU) {
                    continue; // extra parameters, a family of its own
                }
                tbo_add_unary(l, (enum ggml_unary_op) op, f16_f32[ti], NE(128, 2, 2, 2), v);
                tbo_add_unary(l, (enum ggml_unary_op) op, f16_f32[ti], NE(5, 7, 11, 13), v);
            }
        }
    }
    // ours: the GELU family where its constants matter, to a strict threshold
    tbo_add_unary_narrow(l, GGML_UNARY_OP_GELU,       NE(5, 7, 11, 13));
    tbo_add_unary_narrow(l, GGML_UNARY_OP_GELU_ERF,   NE(5, 7, 11, 13));
    tbo_add_unary_narrow(l, GGML_UNARY_OP_GELU_QUICK, NE(5, 7, 11, 13));

    for (int ti = 0; ti < 2; ti++) {
        tbo_add_relu_sqr(l, f16_f32[ti], NE(128, 2, 2, 2));
        tbo_add_relu_sqr(l, f16_f32[ti], NE(5, 7, 11, 13));
    }

    static const enum ggml_unary_op mul_ops[3] = { GGML_UNARY_OP_SILU, GGML_UNARY_OP_SIGMOID, GGML_UNARY_OP_SOFTPLUS };
    for (int oi = 0; oi < 3; oi++) {
        for (int ti = 0; ti < 2; ti++) {
            const enum ggml_unary_op op = mul_ops[oi];
            const enum ggml_type type = f16_f32[ti];
            for (int swap = 0; swap <= 1; swap++) {
                tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), swap, "packed", "");
            }
            tbo_add_unary_mul(l, op, type, NE(5, 7, 11, 13), false, "packed", "");
            tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), false, "pad_unary", "");
            tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), true, "pad_other", "");
            tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), true, "halves", "");
            tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), false, "packed", "consumer");
            tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), false, "strided_dim1", "");
            tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), false, "bcast", "");
            tbo_add_unary_mul(l, op, type, NE(128, 2, 2, 2), false, "packed", "reuse");
        }
    }

    static const enum ggml_type snake_types[3] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    for (int ti = 0; ti < 3; ti++) {
        const enum ggml_type type = snake_types[ti];
        tbo_add_snake_fuse(l, type, NE(5, 7, 1, 1));
        tbo_add_snake_fuse(l, type, NE(33, 32, 1, 1));
        tbo_add_snake_fuse(l, type, NE(1025, 13, 1, 1));
        tbo_add_snake_fuse(l, type, NE(128, 16, 1, 1));
        tbo_add_snake_fuse(l, type, NE(256, 192, 1, 1));
        tbo_add_snake_fuse(l, type, NE(64, 32, 2, 1));
        tbo_add_snake_fuse(l, type, NE(64, 32, 1, 2));
        tbo_add_snake_fuse(l, type, NE(64, 32, 2, 3));
    }

    tbo_list_misc_dsv4(l);

    for (int ti = 0; ti < 2; ti++) {
        for (int v = 0; v <= 1; v++) {
            for (int op = 0; op < GGML_GLU_OP_COUNT; op++) {
                if (op == GGML_GLU_OP_SWIGLU_OAI) {
                    continue; // a family of its own, outside the op set
                }
                for (int swapped = 0; swapped <= 1; swapped++) {
                    tbo_add_glu(l, (enum ggml_glu_op) op, f16_f32[ti], NE(128, 2, 2, 2), v, swapped);
                    tbo_add_glu(l, (enum ggml_glu_op) op, f16_f32[ti], NE(5, 7, 11, 13), v, swapped);
                }
                tbo_add_glu_split(l, (enum ggml_glu_op) op, f16_f32[ti], NE(128, 2, 2, 2), v);
                tbo_add_glu_split(l, (enum ggml_glu_op) op, f16_f32[ti], NE(5, 7, 11, 13), v);
            }
        }
    }

    for (int v = 0; v <= 1; v++) {
        static const float alphas[2] = { 0.5f, 1.702f };
        static const float limits[2] = { 2.0f, 7.0f };
        for (int ai = 0; ai < 2; ai++) {
            for (int li = 0; li < 2; li++) {
                tbo_add_swiglu_oai(l, GGML_TYPE_F32, NE(128, 2, 2, 2), v, alphas[ai], limits[li]);
            }
        }
    }
}

static void make_rows(struct tbo_case_list * l) {
    static const enum ggml_type gr_types[2] = { GGML_TYPE_F32, GGML_TYPE_Q4_0 };
    for (int ti = 0; ti < 2; ti++) {
        tbo_add_get_rows(l, gr_types[ti], 300*256, 5, 4, 1, 2, false);
        tbo_add_get_rows(l, gr_types[ti], 256, 80000, 70000, 2, 1, false);
        tbo_add_get_rows(l, gr_types[ti], 256, 5, 4, 700, 100, false);
    }
    tbo_add_get_rows(l, GGML_TYPE_F32, 1, 8, 2, 1, 1, false);
    for (size_t ti = 0; ti < N_OF(all_types); ti++) {
        for (int b = 1; b <= 7; b += 6) {
            for (int v = 0; v <= 1; v++) {
                tbo_add_get_rows(l, all_types[ti], 256, 5, 4, b, 1, v);
            }
        }
    }
    for (int b = 1; b <= 7; b += 6) {
        for (int v = 0; v <= 1; v++) {
            tbo_add_get_rows(l, GGML_TYPE_I32, 256, 5, 4, b, 1, v);
        }
    }

    tbo_add_get_rows_back(l, GGML_TYPE_F32, 1, 8, 2, 1, false);
    tbo_add_get_rows_back(l, GGML_TYPE_F32, 1, 70000, 4, 1, false);
    for (size_t ti = 0; ti < N_OF(all_types); ti++) {
        for (int v = 0; v <= 1; v++) {
            tbo_add_get_rows_back(l, all_types[ti], 256, 5, 4, 1, v);
        }
    }
    for (int v = 0; v <= 1; v++) {
        tbo_add_get_rows_back(l, GGML_TYPE_I32, 256, 5, 4, 1, v);
    }

    tbo_add_set_rows(l, GGML_TYPE_F32, GGML_TYPE_F32,  GGML_TYPE_I64, NE(1, 8, 1, 3), ONE2, 2, false);
    tbo_add_set_rows(l, GGML_TYPE_F32, GGML_TYPE_F32,  GGML_TYPE_I32, NE(1, 8, 1, 3), ONE2, 2, false);
    tbo_add_set_rows(l, GGML_TYPE_F32, GGML_TYPE_Q8_0, GGML_TYPE_I32, NE(256, 5, 1, 3), ONE2, 1, false);
    static const enum ggml_type src_types[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    for (int si = 0; si < 2; si++) {
        for (size_t ti = 0; ti < N_OF(all_types); ti++) {
            const enum ggml_type src = src_types[si];
            const enum ggml_type type = all_types[ti];
            for (int b = 1; b <= 7; b += 6) {
                for (int v = 0; v <= 1; v++) {
                    tbo_add_set_rows(l, src, type, GGML_TYPE_I64, NE(256, 5, b, 3), ONE2, 1, v);
                    tbo_add_set_rows(l, src, type, GGML_TYPE_I64, NE(256, 11, 1, b), NE(2, 3), 7, v);
                    tbo_add_set_rows(l, src, type, GGML_TYPE_I64, NE(3*ggml_blck_size(type), 3, b, 1), NE(2, 3), 2, v);
                    if (ggml_blck_size(type) == 1) {
                        tbo_add_set_rows(l, src, type, GGML_TYPE_I64, NE(31, 3, b, 1), NE(2, 3), 2, v);
                        tbo_add_set_rows(l, src, type, GGML_TYPE_I64, NE(33, 5, 1, b), NE(2, 3), 1, v);
                    }
                }
            }
        }
    }
    tbo_add_set_rows(l, GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_I64, NE(1, 8, 1, 3), ONE2, 2, false);
    tbo_add_set_rows(l, GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_I32, NE(1, 8, 1, 3), ONE2, 2, false);
    tbo_add_set_rows(l, GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_I64, NE(1, 8, 1, 3), ONE2, 2, true);
    tbo_add_set_rows(l, GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_I32, NE(1, 8, 1, 3), ONE2, 2, true);

    static const int rope_modes[4] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX, GGML_ROPE_TYPE_MROPE, GGML_ROPE_TYPE_VISION };
    static const enum ggml_type f16_f32[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    static const int64_t ne2s[3] = { 1, 8, 512 };
    for (int mi = 0; mi < 4; mi++) {
        for (int ti = 0; ti < 2; ti++) {
            for (int ni = 0; ni < 3; ni++) {
                tbo_add_rope_set_rows(l, f16_f32[ti], GGML_TYPE_I64, NE(128, 32, ne2s[ni], 1), rope_modes[mi]);
                tbo_add_rope_set_rows(l, f16_f32[ti], GGML_TYPE_I64, NE(128, 32, ne2s[ni], 3), rope_modes[mi]);
            }
        }
    }
}

static void make_copies(struct tbo_case_list * l) {
    tbo_add_count_equal(l, GGML_TYPE_F32, NE(4, 500, 1, 1));
    tbo_add_count_equal(l, GGML_TYPE_F32, NE(4, 5000, 1, 1));

    tbo_add_argmax(l, GGML_TYPE_F32, NE(32, 1, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(32, 513, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(100, 10, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(1024, 10, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(1024, 12, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(2000, 10, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(5438, 3, 1, 1));

    for (int64_t ne3 = 1; ne3 <= 3; ne3 += 2) {
        tbo_add_repeat(l, GGML_TYPE_F32,  NE(10, 5, 4, ne3), NE(1, 1, 1, 1));
        tbo_add_repeat(l, GGML_TYPE_F32,  NE(10, 5, 4, ne3), NE(2, 1, 1, 1));
        tbo_add_repeat(l, GGML_TYPE_F32,  NE(10, 5, 4, ne3), NE(1, 2, 1, 1));
        tbo_add_repeat(l, GGML_TYPE_F32,  NE(10, 5, 4, ne3), NE(1, 1, 2, 1));
        tbo_add_repeat(l, GGML_TYPE_F32,  NE(10, 5, 4, ne3), NE(1, 1, 1, 2));
        tbo_add_repeat(l, GGML_TYPE_F16,  NE(10, 5, 4, ne3), NE(2, 1, 1, 1));
        tbo_add_repeat(l, GGML_TYPE_I32,  NE(10, 5, 4, ne3), NE(2, 1, 1, 1));
        tbo_add_repeat(l, GGML_TYPE_I16,  NE(10, 5, 4, ne3), NE(1, 1, 1, 2));
        tbo_add_repeat(l, GGML_TYPE_BF16, NE(10, 5, 4, ne3), NE(2, 1, 1, 1));
    }
    for (int v = 0; v <= 1; v++) {
        static const int64_t rb_nr[5][4] = { { 1, 1, 1, 1 }, { 2, 1, 1, 1 }, { 1, 2, 1, 1 }, { 1, 1, 2, 1 }, { 1, 1, 1, 2 } };
        for (int k = 0; k < 5; k++) {
            tbo_add_repeat_back(l, GGML_TYPE_F32, NE(8, 6, 4, 2), rb_nr[k], v);
        }
    }

    static const int64_t dup_ne[4] = { 10, 10, 20, 1 };
    tbo_add_dup(l, GGML_TYPE_F32, dup_ne, ZERO4);
    tbo_add_dup(l, GGML_TYPE_F16, dup_ne, ZERO4);
    tbo_add_dup(l, GGML_TYPE_I32, dup_ne, ZERO4);
    tbo_add_dup(l, GGML_TYPE_I16, dup_ne, ZERO4);
    tbo_add_dup(l, GGML_TYPE_F32, NE(10, 10, 5, 1), NE(0, 2, 1, 3));
    tbo_add_dup(l, GGML_TYPE_F16, NE(10, 10, 5, 1), NE(0, 2, 1, 3));
    tbo_add_dup(l, GGML_TYPE_F32, NE(10, 10, 5, 1), NE(1, 0, 2, 3));
    tbo_add_dup(l, GGML_TYPE_F16, NE(10, 10, 5, 1), NE(1, 0, 2, 3));
    tbo_add_dup(l, GGML_TYPE_I16, NE(10, 8, 3, 1), NE(0, 2, 1, 3));
    tbo_add_dup(l, GGML_TYPE_I16, NE(10, 8, 3, 1), NE(1, 2, 0, 3));

    for (int dim = 1; dim < GGML_MAX_DIMS; ++dim) {
        tbo_add_set(l, GGML_TYPE_F32, GGML_TYPE_F32, NE(6, 5, 4, 3), dim, false);
        tbo_add_set(l, GGML_TYPE_F32, GGML_TYPE_F32, NE(6, 5, 4, 3), dim, true);
    }
    for (int dim = 1; dim < GGML_MAX_DIMS; ++dim) {
        tbo_add_set(l, GGML_TYPE_I32, GGML_TYPE_I32, NE(6, 5, 4, 3), dim, false);
        tbo_add_set(l, GGML_TYPE_I32, GGML_TYPE_I32, NE(6, 5, 4, 3), dim, true);
    }

    // same-type copies
    for (size_t ti = 0; ti < N_OF(all_types); ti++) {
        const enum ggml_type type = all_types[ti];
        const int64_t nk = ggml_blck_size(type);
        for (int64_t k = 1; k < 4; ++k) {
            tbo_add_cpy(l, type, type, NE(k*nk, 2, 3, 4), NO_DIMS, ZERO4, ZERO4, false, ZERO4);
            tbo_add_cpy(l, type, type, NE(k*nk, 2, 3, 4), NO_DIMS, NE(0, 2, 1, 3), ZERO4, false, ZERO4);
            tbo_add_cpy(l, type, type, NE(k*nk, 2, 3, 4), NO_DIMS, NE(0, 3, 1, 2), NE(0, 2, 1, 3), false, ZERO4);
        }
    }
    static const enum ggml_type float_types[3] = { GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_F32 };
    for (int si = 0; si < 3; si++) {
        for (size_t di = 0; di < N_OF(all_types); di++) {
            tbo_add_cpy(l, float_types[si], all_types[di], NE(256, 4, 4, 4), NO_DIMS, ZERO4, ZERO4, false, ZERO4);
            tbo_add_cpy(l, float_types[si], all_types[di], NE(256, 2, 3, 4), NO_DIMS, NE(0, 2, 1, 3), ZERO4, false, ZERO4);
        }
    }
    // ours: Q8_0 rounding ties, exactly (--quick keeps it: see run.c)
    tbo_add_cpy_ties(l, GGML_TYPE_Q8_0, NE(96, 5, 1, 1));
    for (size_t si = 0; si < N_OF(all_types); si++) {
        tbo_add_cpy(l, all_types[si], GGML_TYPE_F32, NE(256, 4, 4, 4), NO_DIMS, ZERO4, ZERO4, false, ZERO4);
        tbo_add_cpy(l, all_types[si], GGML_TYPE_F32, NE(256, 2, 3, 4), NO_DIMS, NE(0, 2, 1, 3), ZERO4, false, ZERO4);
    }
    static const enum ggml_type f16_f32[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    for (int si = 0; si < 2; si++) {
        for (int di = 0; di < 2; di++) {
            tbo_add_cpy(l, f16_f32[si], f16_f32[di], NE(256, 2, 3, 4), NO_DIMS, NE(1, 0, 2, 3), ZERO4, false, ZERO4);
        }
    }
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_Q4_0, NE(96, 1, 1, 1),   NO_DIMS, ZERO4, ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_Q4_0, GGML_TYPE_F32,  NE(96, 1, 1, 1),   NO_DIMS, ZERO4, ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_I32,  NE(256, 2, 3, 4),  NO_DIMS, ZERO4, ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_I32,  NE(256, 2, 3, 4),  NO_DIMS, NE(1, 0, 2, 3), ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_I32,  GGML_TYPE_F32,  NE(256, 2, 3, 4),  NO_DIMS, ZERO4, ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_I32,  GGML_TYPE_F32,  NE(256, 2, 3, 4),  NO_DIMS, NE(1, 0, 2, 3), ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F16,  GGML_TYPE_F16,  NE(256, 4, 3, 1),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(256, 4, 3, 1),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(256, 4, 3, 3),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_BF16, GGML_TYPE_BF16, NE(256, 4, 3, 1),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F16,  GGML_TYPE_F16,  NE(256, 4, 1, 1),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(256, 4, 1, 1),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_BF16, GGML_TYPE_BF16, NE(256, 4, 1, 1),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_I32,  GGML_TYPE_I32,  NE(256, 4, 1, 1),  NO_DIMS, ZERO4, ZERO4, true, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_I32,  GGML_TYPE_I32,  NE(256, 1, 4, 1),  NO_DIMS, NE(1, 2, 0, 3), ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(256, 1, 4, 1),  NO_DIMS, NE(1, 2, 0, 3), ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(2, 2097121, 1, 1), NO_DIMS, NE(1, 0, 2, 3), ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(2, 2, 524281, 1),  NO_DIMS, NE(1, 0, 2, 3), ZERO4, false, ZERO4);
    tbo_add_cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(128, 2, 3, 1), NE(128, 2, 3, 1), ZERO4, ZERO4, false, NE(128, 4, 3, 1));
    tbo_add_cpy(l, GGML_TYPE_F16,  GGML_TYPE_F16,  NE(128, 2, 3, 1), NE(128, 2, 3, 1), ZERO4, ZERO4, false, NE(128, 4, 3, 1));

    // copies that reshape: every permutation of {3, 5, 7, 32} into the sorted and the reversed shape
    {
        const int64_t canonical[4] = { 3, 5, 7, 32 };
        const int64_t reversed[4]  = { 32, 7, 5, 3 };
        static const enum ggml_type types[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
        for (int ti = 0; ti < 2; ti++) {
            const enum ggml_type type = types[ti];
            int64_t cur[4] = { 3, 5, 7, 32 };
            do {
                if (!eq4(cur, canonical)) {
                    tbo_add_cpy(l, type, type, cur, canonical, ZERO4, ZERO4, false, ZERO4);
                }
                if (!eq4(cur, reversed)) {
                    tbo_add_cpy(l, type, type, cur, reversed, ZERO4, ZERO4, false, ZERO4);
                }
                if (cur[0] == 32 && type == GGML_TYPE_F32) {
                    if (canonical[0] == 32) {
                        tbo_add_cpy(l, GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, cur, canonical, ZERO4, ZERO4, false, ZERO4);
                    }
                    if (reversed[0] == 32) {
                        tbo_add_cpy(l, GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, cur, reversed, ZERO4, ZERO4, false, ZERO4);
                    }
                }
                next_permutation4(cur);
            } while (!eq4(cur, canonical));
        }
    }

    static const enum ggml_type cont_types[4] = { GGML_TYPE_F32, GGML_TYPE_I32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    static const int64_t cont_nes[6][4] = { { 2, 1, 1, 1 }, { 2, 1, 3, 5 }, { 2, 3, 5, 7 }, { 1, 4, 4, 1 }, { 1, 8, 17, 1 }, { 10, 10, 10, 1 } };
    for (int ti = 0; ti < 4; ti++) {
        for (int vs = 1; vs >= 0; vs--) {
            for (int ni = 0; ni < 6; ni++) {
                if (vs && (cont_types[ti] == GGML_TYPE_F16 || cont_types[ti] == GGML_TYPE_BF16)) {
                    continue;
                }
                tbo_add_cont(l, cont_types[ti], cont_nes[ni], vs, ZERO4);
            }
        }
    }
    static const int64_t cont_perm_nes[7][4] = { { 10, 10, 10, 1 }, { 33, 5, 7, 1 }, { 64, 3, 65, 1 }, { 2, 3, 5, 7 },
                                                 { 1024, 64, 64, 1 }, { 2304, 64, 64, 1 }, { 1000, 33, 65, 1 } };
    static const int64_t cont_perms[3][4] = { { 2, 1, 0, 3 }, { 1, 2, 0, 3 }, { 0, 2, 1, 3 } };
    static const enum ggml_type f32_f16[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    for (int ti = 0; ti < 2; ti++) {
        for (int ni = 0; ni < 7; ni++) {
            for (int pi = 0; pi < 3; pi++) {
                tbo_add_cont(l, f32_f16[ti], cont_perm_nes[ni], false, cont_perms[pi]);
            }
        }
    }
}

static void make_binary(struct tbo_case_list * l) {
    static const enum ggml_type f16_f32[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    static const int64_t shapes[13][2][4] = {
        { { 1, 1, 8, 1 },     { 1, 1, 1, 1 } },
        { { 1, 1, 1, 1 },     { 32, 1, 1, 1 } },
        { { 1, 1, 320, 320 }, { 1, 1, 1, 1 } },
        { { 10, 5, 1, 1 },    { 1, 1, 1, 1 } },
        { { 10, 5, 4, 1 },    { 1, 1, 1, 1 } },
        { { 10, 5, 4, 3 },    { 1, 1, 1, 1 } },
        { { 10, 5, 4, 3 },    { 2, 1, 1, 1 } },
        { { 10, 5, 4, 3 },    { 1, 2, 1, 1 } },
        { { 10, 5, 4, 3 },    { 1, 1, 2, 1 } },
        { { 10, 5, 4, 3 },    { 1, 1, 1, 2 } },
        { { 10, 5, 4, 3 },    { 1, 1, 2, 2 } },
        { { 10, 5, 4, 3 },    { 1, 2, 2, 2 } },
        { { 10, 5, 4, 3 },    { 2, 2, 2, 2 } },
    };
    static const int64_t sd_shapes[14][2][4] = {
        { { 1280, 1, 1, 1 },   { 1, 1, 1, 1 } },
        { { 1280, 1, 1, 1 },   { 1, 16, 16, 1 } },
        { { 1280, 16, 16, 1 }, { 1, 1, 1, 1 } },
        { { 1280, 1, 1, 1 },   { 1, 256, 1, 1 } },
        { { 1, 1, 1280, 1 },   { 16, 16, 1, 1 } },
        { { 16, 16, 1280, 1 }, { 1, 1, 1, 1 } },
        { { 1, 1, 1920, 1 },   { 16, 16, 1, 1 } },
        { { 1, 1, 2560, 1 },   { 16, 16, 1, 1 } },
        { { 1, 1, 1280, 1 },   { 32, 32, 1, 1 } },
        { { 1, 1, 1920, 1 },   { 32, 32, 1, 1 } },
        { { 1, 1, 640, 1 },    { 32, 32, 1, 1 } },
        { { 5120, 1, 1, 1 },   { 1, 256, 1, 1 } },
        { { 640, 1, 1, 1 },    { 1, 1, 1, 1 } },
        { { 64, 262144, 1, 1 }, { 1, 1, 1, 1 } },
    };
    for (int ti = 0; ti < 2; ti++) {
        const enum ggml_type type = f16_f32[ti];
        for (int perm1 = 0; perm1 <= 1; perm1++) {
            for (int si = 0; si < 13; si++) {
                add_bin_bcast_all(l, type, shapes[si][0], shapes[si][1], perm1, false);
            }
        }
        add_bin_bcast_all(l, type, NE(10, 5, 4, 6), NE(1, 1, 1, 1), false, true);
        add_bin_bcast_all(l, type, NE(10, 5, 4, 5), NE(1, 1, 1, 1), false, true);
        add_bin_bcast_all(l, type, NE(1, 1, 120, 120), NE(1, 1, 1, 1), false, true);
        add_bin_bcast_all(l, type, NE(1, 1, 4, 320), NE(1, 1, 1, 1), false, true);
        add_bin_bcast_all(l, type, NE(1, 1, 65536, 1), NE(256, 1, 1, 1), false, false);
        for (int si = 0; si < 14; si++) {
            add_bin_bcast_all(l, type, sd_shapes[si][0], sd_shapes[si][1], false, false);
        }
    }

    // one in-place case per op, then chains of ADDs (fusion)
    tbo_add_bin_bcast(l, ggml_add_inplace, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(1, 1, 1, 1), 16, false, false);
    tbo_add_bin_bcast(l, ggml_mul_inplace, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(1, 1, 1, 1), 16, false, false);
    tbo_add_bin_bcast(l, ggml_sub_inplace, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(1, 1, 1, 1), 16, false, false);
    tbo_add_bin_bcast(l, ggml_div_inplace, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(1, 1, 1, 1), 16, false, false);

    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(10, 5, 4, 3), NE(2, 1, 1, 1), 2, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(1, 2, 1, 1), 3, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(10, 5, 4, 3), NE(1, 1, 2, 1), 4, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(1, 1, 1, 2), 5, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(10, 5, 4, 3), NE(1, 1, 2, 2), 6, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(10, 5, 4, 3), NE(1, 2, 2, 2), 7, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(2, 2, 2, 2), 8, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(16, 5, 4, 3), NE(1, 1, 1, 1), 16, false, false);

    static const int64_t scale_ne[4] = { 10, 10, 10, 10 };
    tbo_add_scale(l, GGML_TYPE_F32, scale_ne, 2.0f, 0.0f, false);
    tbo_add_scale(l, GGML_TYPE_F32, scale_ne, 2.0f, 1.0f, false);
    tbo_add_scale(l, GGML_TYPE_F32, scale_ne, 2.0f, 1.0f, true);
    tbo_add_scale(l, GGML_TYPE_F32, NE(100, 10, 10, 10), 2.0f, 1.0f, false);
    tbo_add_softcap(l, GGML_TYPE_F32, scale_ne, 50.0f);
    tbo_add_silu_back(l, GGML_TYPE_F32, NE(64, 5, 4, 3), 1e-6f);
}

static void make_norms(struct tbo_case_list * l) {
    static const float eps_list[5] = { 0.0f, 1e-6f, 1e-4f, 1e-1f, 10.0f };
    for (int ei = 0; ei < 5; ei++) {
        const float eps = eps_list[ei];
        static const int64_t ns[2] = { 64, 1025 };
        for (int ni = 0; ni < 2; ni++) {
            const int64_t n = ns[ni];
            for (int v = 0; v <= 1; v++) {
                tbo_add_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), v, eps, false);
                tbo_add_rms_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), v, eps, false);
            }
            tbo_add_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), false, eps, true);
            tbo_add_rms_norm_back(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps);
            tbo_add_l2_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps, false, false);
            tbo_add_l2_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps, true, false);
            tbo_add_l2_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps, false, true);
        }
        // row lengths that are not a multiple of 32
        static const int64_t odd_ns[3] = { 33, 132, 260 };
        for (int ni = 0; ni < 3; ni++) {
            for (int v = 0; v <= 1; v++) {
                tbo_add_norm(l, GGML_TYPE_F32, NE(odd_ns[ni], 5, 4, 3), v, eps, false);
                tbo_add_rms_norm(l, GGML_TYPE_F32, NE(odd_ns[ni], 5, 4, 3), v, eps, false);
            }
        }
    }

    tbo_add_rms_norm(l, GGML_TYPE_F32, NE(64, 5, 4, 3), false, 1e-6f, true);

    static const float eps_fused[5] = { 0.0f, 1e-6f, 1e-4f, 1e-1f, 1.0f };
    for (int ei = 0; ei < 5; ei++) {
        static const int64_t fused_ns[2] = { 64, 1025 };
        for (int ni = 0; ni < 2; ni++) {
            const int64_t n = fused_ns[ni];
            tbo_add_rms_norm_mul_add(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps_fused[ei], false, false);
            tbo_add_rms_norm_mul_add(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps_fused[ei], true, false);
            tbo_add_norm_mul_add(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps_fused[ei], false);
            tbo_add_norm_mul_add(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps_fused[ei], true);
            tbo_add_add_rms_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps_fused[ei], false);
            tbo_add_add_rms_norm(l, GGML_TYPE_F32, NE(n, 5, 4, 3), eps_fused[ei], true);
        }
    }
    static const int64_t long_ns[5] = { 1, 511, 1025, 8192, 33*512 };
    for (int ni = 0; ni < 5; ni++) {
        for (int multi_add = 0; multi_add <= 1; multi_add++) {
            tbo_add_rms_norm_mul_add(l, GGML_TYPE_F32, NE(long_ns[ni], 1, 1, 1), 1e-6f, false, multi_add);
        }
        tbo_add_add_rms_norm(l, GGML_TYPE_F32, NE(long_ns[ni], 1, 1, 1), 1e-6f, false);
    }

    static const int64_t rope_shapes[9][4] = {
        { 768, 1, 1, 1 }, { 768, 3, 1, 1 }, { 768, 3, 5, 1 }, { 128, 32, 2, 1 }, { 128, 4, 2, 1 },
        { 128, 32, 50, 1 }, { 128, 4, 50, 1 }, { 8192, 2, 2, 1 }, { 8192, 2, 2, 1 },
    };
    static const int rope_modes[2] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX };
    for (int multi_add = 0; multi_add <= 1; multi_add++) {
        for (int set_rows = 0; set_rows <= 1; set_rows++) {
            for (int broadcast = 0; broadcast <= 1; broadcast++) {
                for (int mi = 0; mi < 2; mi++) {
                    for (int si = 0; si < 9; si++) {
                        tbo_add_rms_norm_mul_rope(l, rope_shapes[si], 1e-6f, multi_add, set_rows, broadcast, rope_modes[mi]);
                    }
                }
            }
        }
    }

    tbo_list_ssm_after_norms(l);
}

static void make_matmul(struct tbo_case_list * l) {
    tbo_add_mul_mat_hadamard(l, 128, 1, 128, ONE2);
    tbo_add_mul_mat_hadamard(l, 64, 1, 64, ONE2);
    tbo_add_mul_mat_hadamard(l, 256, 1, 256, ONE2);
    tbo_add_mul_mat_hadamard(l, 512, 1, 512, ONE2);
    tbo_add_mul_mat_hadamard(l, 128, 32, 128, ONE2);
    tbo_add_mul_mat_hadamard(l, 128, 4, 128, NE(2, 3));
    tbo_add_mul_mat_hadamard(l, 256, 512, 256, ONE2);
    tbo_add_mul_mat_hadamard(l, 32, 1, 32, ONE2);
    tbo_add_mul_mat_hadamard(l, 1024, 1, 1024, ONE2);

    for (size_t ti = 0; ti < N_OF(all_types); ti++) {
        for (int i = 1; i < 10; ++i) {
            mm(l, all_types[ti], GGML_TYPE_F32, 16, i, 256, 1, 1, 1, 1);
        }
    }
    mm(l, GGML_TYPE_Q4_0,  GGML_TYPE_F32, 2880, 32, 2880, 1, 1, 1, 1);
    mm(l, GGML_TYPE_Q8_0,  GGML_TYPE_F32, 2880, 32, 2880, 1, 1, 1, 1);
    mm(l, GGML_TYPE_MXFP4, GGML_TYPE_F32, 2880, 32, 2880, 1, 1, 1, 1);
    static const int64_t m1_ns[7] = { 1, 7, 8, 9, 16, 128, 512 };
    for (int i = 0; i < 7; i++) {
        mm(l, GGML_TYPE_F32, GGML_TYPE_F32, 1, m1_ns[i], 2048, 1, 1, 1, 1);
    }

    static const enum ggml_type f32_f16[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    for (size_t ai = 0; ai < N_OF(base_types); ai++) {
        for (int bi = 0; bi < 2; bi++) {
            const enum ggml_type ta = base_types[ai];
            const enum ggml_type tb = f32_f16[bi];
            const int nks = ggml_blck_size(ta) == 1 ? 2 : 1;
            static const int64_t ks[2] = { 256, 4 };
            for (int ki = 0; ki < nks; ki++) {
                const int64_t k = ks[ki];
                // without permutation
                mm(l, ta, tb, 16,  1, k, 1, 1, 1, 1);
                mm(l, ta, tb, 16,  1, k, 1, 1, 2, 1);
                mm(l, ta, tb, 16,  1, k, 1, 1, 1, 2);
                mm(l, ta, tb, 16,  1, k, 3, 1, 1, 1);
                mm(l, ta, tb, 16,  1, k, 3, 1, 2, 1);
                mm(l, ta, tb, 16,  1, k, 3, 2, 1, 1);
                mm(l, ta, tb, 16,  1, k, 3, 2, 2, 1);
                mm(l, ta, tb, 16,  1, k, 3, 2, 1, 2);
                mm(l, ta, tb, 16,  1, k, 3, 2, 2, 2);
                mm(l, ta, tb, 16,  4, k, 3, 2, 2, 2);

                mm(l, ta, tb, 16, 16, k, 1, 1, 1, 1);
                mm(l, ta, tb, 16, 16, k, 1, 1, 2, 1);
                mm(l, ta, tb, 16, 16, k, 1, 1, 1, 2);
                mm(l, ta, tb, 16, 16, k, 3, 1, 1, 1);
                mm(l, ta, tb, 16, 16, k, 3, 1, 2, 1);
                mm(l, ta, tb, 16, 16, k, 3, 2, 1, 1);
                mm(l, ta, tb, 16, 16, k, 3, 2, 2, 1);
                mm(l, ta, tb, 16, 16, k, 3, 2, 1, 2);
                mm(l, ta, tb, 16, 16, k, 3, 2, 2, 2);

                // with permutation
                mm_per(l, ta, tb, 16,  1, k, 2, 3, 1, 1, NE(0, 2, 1, 3));
                mm_per(l, ta, tb, 16,  1, k, 2, 3, 1, 1, NE(0, 1, 3, 2));
                mm_per(l, ta, tb, 16,  1, k, 2, 3, 1, 1, NE(0, 3, 2, 1));

                mm_per(l, ta, tb, 16,  4, k, 2, 3, 1, 1, NE(0, 3, 2, 1));
                mm_per(l, ta, tb, 16,  8, k, 2, 3, 1, 1, NE(0, 2, 1, 3));
                mm_per(l, ta, tb, 16,  8, k, 2, 3, 1, 1, NE(0, 1, 3, 2));
                mm_per(l, ta, tb, 16,  8, k, 2, 3, 1, 1, NE(0, 3, 2, 1));

                mm_per(l, ta, tb, 16, 16, k, 2, 3, 1, 1, NE(0, 2, 1, 3));
                mm_per(l, ta, tb, 16, 16, k, 2, 3, 1, 1, NE(0, 1, 3, 2));
                mm_per(l, ta, tb, 16, 16, k, 2, 3, 1, 1, NE(0, 3, 2, 1));
            }
            // large k
            mm(l, ta, tb, 16,  1, 1024, 3, 2, 1, 1);
            mm(l, ta, tb, 16,  8, 1024, 3, 2, 1, 1);
            mm(l, ta, tb, 16, 16, 1024, 3, 2, 1, 1);
            // large batch
            mm(l, ta, tb, 16, 8, 256, 1536, 1, 1, 1);
        }
    }

    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16,  1, 256, 2, 3, 1, 1, NE(0, 2, 1, 3));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16,  1, 256, 2, 3, 1, 1, NE(0, 1, 3, 2));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16,  1, 256, 2, 3, 1, 1, NE(0, 3, 2, 1));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16,  8, 256, 2, 3, 1, 1, NE(0, 2, 1, 3));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16,  8, 256, 2, 3, 1, 1, NE(0, 1, 3, 2));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16,  8, 256, 2, 3, 1, 1, NE(0, 3, 2, 1));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16, 16, 256, 2, 3, 1, 1, NE(0, 2, 1, 3));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16, 16, 256, 2, 3, 1, 1, NE(0, 1, 3, 2));
    mm_per(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16, 16, 256, 2, 3, 1, 1, NE(0, 3, 2, 1));

    for (size_t ai = 0; ai < N_OF(other_types); ai++) {
        const enum ggml_type ta = other_types[ai];
        if (ggml_blck_size(ta) != 256) {
            mm(l, ta, GGML_TYPE_F32, 16, 1, ggml_blck_size(ta), 1, 1, 1, 1);
        }
        mm(l, ta, GGML_TYPE_F32, 16, 1, 256, 1, 1, 1, 1);
    }

    mm(l, GGML_TYPE_F16, GGML_TYPE_F32,  64,  2, 128, 8, 1, 1, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F32,  83,  2, 128, 8, 1, 4, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F32,  64,  2,  64, 8, 1, 4, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F32,  83,  2,  64, 8, 1, 4, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F32,  64, 45, 128, 8, 1, 4, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F32, 128, 45,  64, 8, 1, 4, 1);
    mm_per(l, GGML_TYPE_F16, GGML_TYPE_F32, 1056, 1, 193, 1, 1, 4, 1, NE(0, 2, 1, 3));
    mm_per(l, GGML_TYPE_F16, GGML_TYPE_F32, 1056, 1,  67, 1, 1, 4, 1, NE(0, 2, 1, 3));
    tbo_add_mul_mat(l, GGML_TYPE_F32, GGML_TYPE_F32, 16, 32, 32, ONE2, ONE2, ID_PERM, 64, 3, false);
    mm(l, GGML_TYPE_F32, GGML_TYPE_F32, 64, 77, 77, 12, 1, 1, 1);
    tbo_add_mul_mat(l, GGML_TYPE_F32, GGML_TYPE_F32, 32, 4, 96, NE(3, 2), ONE2, ID_PERM, 0, 1, true);

    mm(l, GGML_TYPE_Q4_0, GGML_TYPE_F32, 576, 512, 576, 1, 1, 1, 1);
    mm(l, GGML_TYPE_Q4_0, GGML_TYPE_F32, 1, 2048, 8192, 1, 1, 1, 1);
    for (size_t ti = 0; ti < N_OF(all_types); ti++) {
        mm(l, all_types[ti], GGML_TYPE_F32, 1, 64, 256, 1, 1, 1, 1);
    }
    mm(l, GGML_TYPE_Q8_0, GGML_TYPE_F32, 6, 4096, 5120, 1, 1, 1, 1);

    // k not a multiple of 32
    mm(l, GGML_TYPE_F16, GGML_TYPE_F16, 64, 32,  65, 1, 1, 1, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F16, 64, 32,  80, 1, 1, 1, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F32, 64, 32,  80, 1, 1, 1, 1);
    mm(l, GGML_TYPE_F32, GGML_TYPE_F32, 64, 32,  80, 1, 1, 1, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F16, 64, 32, 588, 1, 1, 1, 1);
    mm(l, GGML_TYPE_F16, GGML_TYPE_F16, 64, 32,  80, 4, 1, 1, 1);

    static const enum ggml_type bf_types[3] = { GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_F32 };
    for (int64_t bs2 = 1; bs2 <= 3; bs2 += 2) {
        for (int64_t bs = 1; bs <= 8; bs *= 2) {
            for (int64_t nr = 1; nr <= 4; nr *= 4) {
                for (int64_t m = 0; m < 2; ++m) {
                    for (int64_t k = 0; k < 2; ++k) {
                        for (int ti = 0; ti < 3; ti++) {
                            tbo_add_mul_mat(l, bf_types[ti], GGML_TYPE_F32, 1056 + m, 1, 128 + k, NE(bs, bs2), NE(nr, 1),
                                            NE(0, 2, 1, 3), 0, 1, false);
                            tbo_add_mul_mat(l, bf_types[ti], GGML_TYPE_F32, 128 + m, 1, 1056 + k, NE(bs, bs2), NE(nr, 1),
                                            ID_PERM, 2*1056 + k, 1, false);
                        }
                    }
                }
            }
        }
    }

    for (int b = 0; b <= 1; b++) {
        tbo_add_mul_mat_id(l, GGML_TYPE_F16,  GGML_TYPE_F32, 16, 16, b, 32, 1024, 16);
        tbo_add_mul_mat_id(l, GGML_TYPE_F16,  GGML_TYPE_F32, 2, 2, b, 32, 8192, 64);
        tbo_add_mul_mat_id(l, GGML_TYPE_F16,  GGML_TYPE_F32, 16, 16, b, 50, 200, 64);
        tbo_add_mul_mat_id(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16, 16, b, 32, 1024, 16);
        tbo_add_mul_mat_id(l, GGML_TYPE_BF16, GGML_TYPE_F32, 16, 16, b, 50, 200, 64);
    }
    tbo_add_mul_mat_id(l, GGML_TYPE_F16, GGML_TYPE_F32, 1, 1, false, 8, 16, 1);
    tbo_add_mul_mat_id_fusion(l, GGML_TYPE_F16, GGML_TYPE_F32, 16, 16, false, 32, 32, 32, 3, false);
    tbo_add_mul_mat_id(l, GGML_TYPE_MXFP4, GGML_TYPE_F32, 32, 2, false, 2880, 32, 2880);
    tbo_add_mul_mat_id(l, GGML_TYPE_Q4_0,  GGML_TYPE_F32, 32, 2, false, 2880, 32, 2880);
    for (size_t ti = 0; ti < N_OF(all_types); ti++) {
        tbo_add_mul_mat_id(l, all_types[ti], GGML_TYPE_F32, 4, 2, false, 64, 16, 3*ggml_blck_size(all_types[ti]));
    }
    static const int id_ns[6] = { 1, 4, 5, 17, 32, 129 };
    static const int n_useds[3] = { 1, 2, 4 };
    for (size_t ai = 0; ai < N_OF(base_types); ai++) {
        for (int n_mats = 4; n_mats <= 8; n_mats *= 2) {
            for (int ui = 0; ui < 3; ui++) {
                for (int b = 0; b <= 1; b++) {
                    for (int ni = 0; ni < 6; ni++) {
                        tbo_add_mul_mat_id(l, base_types[ai], GGML_TYPE_F32, n_mats, n_useds[ui], b, 512, id_ns[ni], 256);
                    }
                }
            }
        }
    }
    for (size_t ai = 0; ai < N_OF(other_types); ai++) {
        tbo_add_mul_mat_id(l, other_types[ai], GGML_TYPE_F32, 4, 2, false, 512, 1, 256);
        tbo_add_mul_mat_id(l, other_types[ai], GGML_TYPE_F32, 4, 2, false, 512, 32, 256);
    }
    static const int fusion_bs[3] = { 1, 4, 512 };
    static const enum ggml_type fusion_types[4] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K };
    for (int bi = 0; bi < 3; bi++) {
        for (int ti = 0; ti < 4; ti++) {
            tbo_add_mul_mat_id_fusion(l, fusion_types[ti], GGML_TYPE_F32, 128, 8, false, 768, fusion_bs[bi], 2048, 1, true);
        }
    }

    for (size_t ai = 0; ai < N_OF(base_types); ai++) {
        for (int bi = 0; bi < 2; bi++) {
            for (int64_t n = 1; n <= 16; n *= 16) {
                for (int64_t k = 1; k <= 16; k *= 16) {
                    for (int64_t bs2 = 1; bs2 <= 3; bs2 += 2) {
                        for (int64_t bs3 = 1; bs3 <= 3; bs3 += 2) {
                            for (int64_t nr2 = 1; nr2 <= 2; nr2++) {
                                for (int64_t nr3 = 1; nr3 <= 2; nr3++) {
                                    tbo_add_out_prod(l, base_types[ai], f32_f16[bi], 256, n, k, NE(bs2, bs3), NE(nr2, nr3), false);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    static const int64_t ne2s[4] = { 1, 8, 16, 32 };
    for (int i = 0; i < 4; i++) {
        tbo_add_out_prod(l, GGML_TYPE_F32, GGML_TYPE_F32, 256, 16, 16, NE(ne2s[i], 1), ONE2, false);
    }
    static const int64_t nr2s[3] = { 8, 16, 32 };
    for (int i = 0; i < 3; i++) {
        tbo_add_out_prod(l, GGML_TYPE_F32, GGML_TYPE_F32, 256, 16, 16, ONE2, NE(nr2s[i], 1), false);
    }

    tbo_list_misc_add_id(l);
}

static void make_simple(struct tbo_case_list * l) {
    static const enum ggml_type f16_f32[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    static const int64_t small[4] = { 7, 1, 5, 3 };
    static const int64_t large[4] = { 1024, 1024, 1, 1 };
    for (int ti = 0; ti < 2; ti++) {
        const enum ggml_type type = f16_f32[ti];
        tbo_add_simple(l, TBO_SQR,  type, NE(10, 5, 4, 3));
        tbo_add_simple(l, TBO_SQRT, type, NE(10, 3, 3, 2));
        tbo_add_simple(l, TBO_LOG,  type, NE(10, 5, 4, 3));
        tbo_add_simple(l, TBO_SIN,  type, NE(10, 2, 2, 2));
        tbo_add_simple(l, TBO_COS,  type, NE(10, 2, 2, 2));
        tbo_add_clamp(l, type, NE(10, 5, 4, 3), -0.5f, 0.5f);
        tbo_add_leaky_relu(l, type, NE(10, 5, 4, 3), 0.1f);
        tbo_add_simple(l, TBO_FLOOR, type, NE(10, 2, 2, 2));
        tbo_add_simple(l, TBO_CEIL,  type, NE(10, 2, 2, 2));
        tbo_add_simple(l, TBO_ROUND, type, NE(10, 2, 2, 2));
        tbo_add_simple(l, TBO_TRUNC, type, NE(10, 2, 2, 2));
        tbo_add_simple(l, TBO_SQR,  type, small);
        tbo_add_simple(l, TBO_SQR,  type, large);
        tbo_add_simple(l, TBO_SQRT, type, small);
        tbo_add_simple(l, TBO_SQRT, type, large);
        tbo_add_simple(l, TBO_LOG,  type, small);
        tbo_add_simple(l, TBO_LOG,  type, large);
        tbo_add_simple(l, TBO_SIN,  type, small);
        tbo_add_simple(l, TBO_SIN,  type, large);
        tbo_add_simple(l, TBO_COS,  type, small);
        tbo_add_simple(l, TBO_COS,  type, large);
        tbo_add_clamp(l, type, small, -0.5f, 0.5f);
        tbo_add_clamp(l, type, large, -0.5f, 0.5f);
        tbo_add_leaky_relu(l, type, small, 0.1f);
        tbo_add_leaky_relu(l, type, large, 0.1f);
        static const enum tbo_simple_op rounding[4] = { TBO_FLOOR, TBO_CEIL, TBO_ROUND, TBO_TRUNC };
        for (int ri = 0; ri < 4; ri++) {
            tbo_add_simple(l, rounding[ri], type, small);
            tbo_add_simple(l, rounding[ri], type, large);
        }
    }

    tbo_add_diag_mask_inf(l, GGML_TYPE_F32, NE(10, 10, 1, 1), 5);
    tbo_add_diag_mask_inf(l, GGML_TYPE_F32, NE(10, 10, 3, 1), 5);
    tbo_add_diag_mask_inf(l, GGML_TYPE_F32, NE(10, 10, 3, 2), 5);
}

static void make_soft_max(struct tbo_case_list * l) {
    static const enum ggml_type m_precs[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    for (int mask = 0; mask <= 1; mask++) {
        for (int sinks = 0; sinks <= 1; sinks++) {
            for (int bi = 0; bi < 2; bi++) {
                const float max_bias = bi == 0 ? 0.0f : 8.0f;
                if (!mask && max_bias > 0.0f) {
                    continue;
                }
                for (int si = 0; si < 2; si++) {
                    const float scale = si == 0 ? 1.0f : 0.1f;
                    for (int64_t ne0 = 16; ne0 <= 1024; ne0 *= 64) {
                        for (int64_t ne1 = 16; ne1 <= 1024; ne1 *= 64) {
                            if (mask) {
                                for (int pi = 0; pi < 2; pi++) {
                                    tbo_add_soft_max(l, GGML_TYPE_F32, NE(ne0, ne1, 1, 1), mask, sinks, m_precs[pi], ONE2, scale, max_bias, false);
                                    tbo_add_soft_max(l, GGML_TYPE_F32, NE(ne0-1, ne1-1, 1, 1), mask, sinks, m_precs[pi], ONE2, scale, max_bias, false);
                                    if (ne0 <= 32 && ne1 <= 32) {
                                        tbo_add_soft_max(l, GGML_TYPE_F32, NE(ne0, ne1, 1, 3), mask, sinks, m_precs[pi], NE(3, 1), scale, max_bias, false);
                                        tbo_add_soft_max(l, GGML_TYPE_F32, NE(ne0-1, ne1-1, 1, 1), mask, sinks, m_precs[pi], NE(2, 3), scale, max_bias, false);
                                    }
                                }
                            } else {
                                tbo_add_soft_max(l, GGML_TYPE_F32, NE(ne0, ne1, 1, 1), mask, sinks, GGML_TYPE_F32, ONE2, scale, max_bias, false);
                                tbo_add_soft_max(l, GGML_TYPE_F32, NE(ne0-1, ne1-1, 1, 1), mask, sinks, GGML_TYPE_F32, ONE2, scale, max_bias, false);
                            }
                        }
                    }
                }
            }
            tbo_add_soft_max(l, GGML_TYPE_F32, NE(16, 2, 32, 1), mask, sinks, GGML_TYPE_F32, ONE2, 0.1f, 0.0f, true);
            tbo_add_soft_max(l, GGML_TYPE_F32, NE(16, 2, 32, 1), mask, sinks, GGML_TYPE_F16, ONE2, 0.1f, 0.0f, true);
        }
    }
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(16, 2, 32, 1), true,  true,  GGML_TYPE_F32, ONE2, 0.1f, 0.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(16, 2, 32, 1), true,  false, GGML_TYPE_F16, ONE2, 0.1f, 0.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(16, 2, 32, 1), false, true,  GGML_TYPE_F32, ONE2, 0.1f, 0.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(32, 2, 32, 1), true,  true,  GGML_TYPE_F32, ONE2, 0.1f, 0.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(32, 2, 32, 1), true,  false, GGML_TYPE_F16, ONE2, 0.1f, 0.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(32, 2, 32, 1), true,  true,  GGML_TYPE_F32, ONE2, 0.1f, 8.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(32, 2, 32, 1), true,  true,  GGML_TYPE_F16, ONE2, 0.1f, 8.0f, false);

    tbo_add_soft_max(l, GGML_TYPE_F32, NE(200001, 2, 3, 1), true,  true,  GGML_TYPE_F32, ONE2, 0.1f, 8.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(200001, 2, 3, 1), true,  true,  GGML_TYPE_F16, ONE2, 0.1f, 8.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(200000, 1, 1, 1), false, false, GGML_TYPE_F32, ONE2, 1.0f, 0.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(200000, 4, 1, 1), false, false, GGML_TYPE_F32, ONE2, 1.0f, 0.0f, false);
    tbo_add_soft_max(l, GGML_TYPE_F32, NE(643251, 3, 1, 1), false, false, GGML_TYPE_F32, ONE2, 1.0f, 0.0f, false);

    for (int bi = 0; bi < 2; bi++) {
        for (int si = 0; si < 2; si++) {
            for (int64_t ne0 = 16; ne0 <= 1024; ne0 *= 64) {
                for (int64_t ne1 = 16; ne1 <= 1024; ne1 *= 64) {
                    const float scale = si == 0 ? 1.0f : 0.1f, max_bias = bi == 0 ? 0.0f : 8.0f;
                    tbo_add_soft_max_back(l, GGML_TYPE_F32, NE(ne0, ne1, 1, 1), scale, max_bias);
                    tbo_add_soft_max_back(l, GGML_TYPE_F32, NE(ne0 - 1, ne1 - 1, 1, 1), scale, max_bias);
                    tbo_add_soft_max_back(l, GGML_TYPE_F32, NE(ne0, ne1, 2, 3), scale, max_bias);
                }
            }
        }
    }
}

static void make_rope(struct tbo_case_list * l) {
    // ours: sections of other sizes than upstream's thirds, all four used, so
    // that every boundary of the section walk falls on a pair (10 pairs; the
    // walk wraps after 10 or 7 of them)
    {
        static const int secs[2][4] = { { 2, 3, 1, 4 }, { 3, 1, 2, 1 } };
        for (int si = 0; si < 2; si++) {
            tbo_add_rope_sections(l, NE(24, 5, 3, 1), 20, GGML_ROPE_TYPE_MROPE, secs[si]);
            tbo_add_rope_sections(l, NE(24, 5, 3, 1), 20, GGML_ROPE_TYPE_IMROPE, secs[si]);
        }
    }
    bool all = true;
    static const float fss[2] = { 1.0f, 1.4245f };
    static const float efs[2] = { 0.0f, 0.7465f };
    static const float afs[2] = { 1.0f, 1.4245f };
    static const enum ggml_type f32_f16[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    static const int all_modes[5] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX, GGML_ROPE_TYPE_MROPE, GGML_ROPE_TYPE_IMROPE,
                                      GGML_ROPE_TYPE_VISION };
    const int N = GGML_ROPE_TYPE_NORMAL, X = GGML_ROPE_TYPE_NEOX, M = GGML_ROPE_TYPE_MROPE, I = GGML_ROPE_TYPE_IMROPE,
              V = GGML_ROPE_TYPE_VISION;
    // forward (ROPE), then backward (ROPE_BACK), as upstream
    for (int fw = 1; fw >= 0; fw--) {
    all = true;
    for (int fi = 0; fi < 2; fi++) {
        for (int ei = 0; ei < 2; ei++) {
            for (int ai = 0; ai < 2; ai++) {
                for (int ti = 0; ti < 2; ti++) {
                    const float fs = fss[fi], ef = efs[ei], af = afs[ai];
                    const enum ggml_type type = f32_f16[ti];
                    for (int ff = 0; ff <= 1; ff++) {
                        for (int v = 0; v <= 1; v++) {
#define ROPE(ne0, ne1, ne2, nd, mode) (fw ? tbo_add_rope(l, type, NE(ne0, ne1, ne2, 1), nd, mode, 512, fs, ef, af, ff, v, false, 0) \
                                         : tbo_add_rope_back(l, type, NE(ne0, ne1, ne2, 1), nd, mode, 512, fs, ef, af, ff, v))
                            ROPE(128, 32, 2, 128, N);
                            if (all) {
                                ROPE(128, 40, 2, 128, N);
                                ROPE(128, 52, 2, 128, N);
                                ROPE(128, 64, 2, 128, N);
                                ROPE(16, 16, 8192, 16, N);
                                ROPE(64, 1, 2, 64, X);
                                ROPE(64, 71, 2, 64, X);
                                ROPE(64, 8, 2, 64, X);
                                ROPE(80, 32, 2, 20, N);
                                ROPE(80, 32, 2, 32, N);
                                ROPE(80, 32, 4, 32, N);
                                ROPE(80, 32, 2, 20, X);
                                ROPE(80, 32, 2, 32, X);
                                ROPE(80, 32, 4, 32, X);
                                ROPE(16, 16, 8192, 16, X);
                                ROPE(128, 12, 2, 128, M);
                                ROPE(128, 28, 2, 128, M);
                                ROPE(128, 12, 2, 20, M);
                                ROPE(128, 28, 2, 32, M);
                                ROPE(128, 12, 2, 128, I);
                                ROPE(128, 28, 2, 128, I);
                                ROPE(128, 12, 2, 20, I);
                                ROPE(128, 28, 2, 32, I);
                                ROPE(80, 16, 2, 80, V);
                                ROPE(128, 16, 2, 128, I);
                                ROPE(16, 16, 8192, 16, I);
                            }
                            ROPE(64, 128, 2, 64, X);
#undef ROPE
                        }
                        // a view at an offset along dim 0, as a 2D rope of an image
                        for (int mi = 0; mi < 5; mi++) {
                            if (fw) {
                                tbo_add_rope(l, type, NE(36, 16, 2457, 1), 36, all_modes[mi], 512, fs, ef, af, ff, 2, false, 0);
                            } else {
                                tbo_add_rope_back(l, type, NE(36, 16, 2457, 1), 36, all_modes[mi], 512, fs, ef, af, ff, 2);
                            }
                        }
                    }
                    all = false;
                }
            }
        }
    }
    }

    for (int ti = 0; ti < 2; ti++) {
        for (int mi = 0; mi < 5; mi++) {
            for (int ff = 0; ff <= 1; ff++) {
                const enum ggml_type type = f32_f16[ti];
                const int mode = all_modes[mi];
                tbo_add_rope(l, type, NE(128, 32, 2, 1), 128, mode, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, true, 0);
                tbo_add_rope(l, type, NE(128, 32, 2, 1), 128, mode, 512, 1.4245f, 0.7465f, 1.4245f, ff, 1, true, 0);
                tbo_add_rope(l, type, NE(128, 32, 2, 3), 128, mode, 512, 1.4245f, 0.7465f, 1.4245f, ff, 1, true, 0);
            }
        }
    }

    // the rotated dims at an offset (ggml_rope_set_offset)
    for (int ti = 0; ti < 2; ti++) {
        const enum ggml_type type = f32_f16[ti];
        for (int ff = 0; ff <= 1; ff++) {
            tbo_add_rope(l, type, NE(128, 32, 2, 1), 32, N, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32);
            tbo_add_rope(l, type, NE(128, 32, 2, 1), 32, X, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32);
            tbo_add_rope(l, type, NE(128, 12, 2, 1), 24, M, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32);
            tbo_add_rope(l, type, NE(128, 12, 2, 1), 24, I, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32);
        }
        tbo_add_rope(l, type, NE(128, 32, 2, 1), 32, X, 512, 1.4245f, 0.7465f, 1.4245f, false, 0, true, 32);
    }
}

static void make_concat_sort(struct tbo_case_list * l) {
    static const enum ggml_type concat_types[7] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I8, GGML_TYPE_I16,
                                                    GGML_TYPE_I32, GGML_TYPE_I64 };
    for (int v = 0; v < 4; v++) {
        for (int dim = 0; dim < 4; dim++) {
            for (int ti = 0; ti < 7; ti++) {
                tbo_add_concat(l, concat_types[ti], NE(11, 12, 13, 14), 7, dim, v);
            }
        }
    }
    static const enum ggml_type q_types[5] = { GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0 };
    for (int ti = 0; ti < 5; ti++) {
        for (int v = 0; v <= 12; v += 4) {
            for (int dim = 0; dim < 4; dim++) {
                tbo_add_concat(l, q_types[ti], NE(128, 12, 13, 14), dim == 0 ? 256 : 7, dim, v);
            }
        }
    }

    static const enum ggml_sort_order orders[2] = { GGML_SORT_ORDER_ASC, GGML_SORT_ORDER_DESC };
    for (int oi = 0; oi < 2; oi++) {
        const enum ggml_sort_order order = orders[oi];
        for (int64_t i = 4; i <= 1024*1024; i *= 2) {
            // upstream passes no order here: ascending in both passes
            tbo_add_argsort(l, GGML_TYPE_F32, NE(i-1, 1, 1, 1), GGML_SORT_ORDER_ASC);
            tbo_add_argsort(l, GGML_TYPE_F32, NE(i, 1, 1, 1), GGML_SORT_ORDER_ASC);
        }
        tbo_add_argsort(l, GGML_TYPE_F32, NE(16, 10, 10, 10), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(60, 10, 10, 10), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(1023, 2, 1, 3), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(1024, 2, 1, 3), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(1025, 2, 1, 3), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(1025, 256, 1, 1), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(2047, 2, 1, 3), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(2048, 2, 1, 3), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(2049, 2, 1, 3), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(2, 8, 8192, 1), order);
        tbo_add_argsort(l, GGML_TYPE_F32, NE(2048, 512, 1, 1), order);
    }

    for (int n = 1; n < 5; ++n) {
        for (int k = 1; k <= n; ++k) {
            tbo_add_top_k(l, GGML_TYPE_F32, NE(n, 2, 1, 3), k, true);
        }
    }
    static const int ks[9] = { 1, 2, 3, 7, 15, 100, 500, 1023, 9999 };
    for (int i = 0; i < 20; ++i) {
        for (int ki = 0; ki < 9; ki++) {
            const int k = ks[ki];
            if (k <= 1 << i) {
                tbo_add_top_k(l, GGML_TYPE_F32, NE(1 << i, 1, 1, 1), k, false);
                tbo_add_top_k(l, GGML_TYPE_F32, NE((1 << i) + 11, 1, 2, 1), k, false);
                tbo_add_top_k(l, GGML_TYPE_F32, NE((1 << i) + 11, 1, 2, 1), k, true);
            }
        }
    }
    for (int ki = 0; ki < 5; ki++) {
        const int k = ks[ki];
        tbo_add_top_k(l, GGML_TYPE_F32, NE(16, 10, 10, 10), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(60, 10, 10, 10), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(1023, 2, 1, 3), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(1024, 2, 1, 3), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(1025, 2, 1, 3), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(16384, 1, 1, 1), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(2047, 2, 1, 3), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(2048, 2, 1, 3), k, false);
        tbo_add_top_k(l, GGML_TYPE_F32, NE(2049, 2, 1, 3), k, false);
    }
}

static void make_reduce_pad(struct tbo_case_list * l) {
    static const int64_t def_ne[4] = { 10, 5, 4, 3 };
    tbo_add_sum(l, GGML_TYPE_F32, def_ne, ZERO4);
    tbo_add_sum(l, GGML_TYPE_F32, NE(11, 5, 6, 3), NE(0, 2, 1, 3));
    tbo_add_sum(l, GGML_TYPE_F32, NE(11, 5, 6, 3), NE(0, 3, 2, 1));
    tbo_add_sum(l, GGML_TYPE_F32, NE(11, 5, 6, 3), NE(0, 1, 3, 2));
    tbo_add_mean(l, GGML_TYPE_F32, def_ne);
    tbo_add_mean(l, GGML_TYPE_F32, NE(33, 1, 1, 1));
    tbo_add_mean(l, GGML_TYPE_F32, NE(33, 256, 1, 1));
    tbo_add_mean(l, GGML_TYPE_F32, NE(32769, 1, 1, 1));
    tbo_add_mean(l, GGML_TYPE_F32, NE(32, 1, 1, 1));
    tbo_add_mean(l, GGML_TYPE_F32, NE(32, 256, 1, 1));
    tbo_add_mean(l, GGML_TYPE_F32, NE(32768, 1, 1, 1));
    tbo_add_sum(l, GGML_TYPE_F32, NE(33, 1, 1, 1), ZERO4);
    tbo_add_sum(l, GGML_TYPE_F32, NE(33, 1024, 1, 1), ZERO4);
    tbo_add_sum(l, GGML_TYPE_F32, NE(33, 256, 1, 1), ZERO4);
    tbo_add_sum(l, GGML_TYPE_F32, NE(33, 256, 1, 1), NE(1, 0, 2, 3));
    tbo_add_sum_rows(l, GGML_TYPE_F32, def_ne, false, false);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(11, 5, 6, 3), true, false);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(11, 5, 6, 3), false, true);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(11, 5, 6, 3), true, true);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(16, 5, 6, 3), true, false);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(16, 5, 6, 3), false, true);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(16, 5, 6, 3), true, true);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(33, 1, 1, 1), false, false);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(33, 1024, 1, 1), false, false);
    tbo_add_sum_rows(l, GGML_TYPE_F32, NE(33, 256, 1, 1), false, false);
    tbo_list_misc_group_norm(l);

    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 1, 1), NE(256, 16, 1, 1), -1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(256, 16, 2, 3), -1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(128, 16, 2, 3), -1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(256, 16, 2, 3), 1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(128, 16, 2, 3), 2);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(64, 16, 2, 3), 3);

    tbo_add_pad(l, GGML_TYPE_F32, NE(512, 512, 1, 1), 1, 1);
    tbo_add_pad_circular(l, GGML_TYPE_F32, NE(33, 17, 2, 1), 4, 3);
    static const int pad_ext_default[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    tbo_add_pad_ext(l, GGML_TYPE_F32, NE(512, 512, 3, 1), pad_ext_default, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(1024, 1, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(1024, 2, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(1024, 16, 1, 1), 0, 1);
    tbo_add_pad(l, GGML_TYPE_F32, NE(1023, 1, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(1023, 8, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(1025, 1, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(1025, 8, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(2048, 1, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(2048, 4, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(2049, 1, 1, 1), 1, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(100, 1, 1, 1), 100, 0);
    tbo_add_pad(l, GGML_TYPE_F32, NE(100, 1, 1, 1), 0, 100);
    tbo_add_pad(l, GGML_TYPE_F32, NE(100, 100, 1, 1), 50, 50);

    tbo_add_pad_reflect_1d(l, GGML_TYPE_F32, NE(512, 34, 2, 1), 10, 9);
    tbo_add_pad_reflect_1d(l, GGML_TYPE_F32, NE(3000, 384, 4, 1), 10, 9);
    tbo_add_roll(l, 3, -2, 1, -1, false);
    tbo_add_roll(l, 3, -2, 1, -1, true);
    tbo_add_arange(l, GGML_TYPE_F32, 0.0f, 10.0f, 1.0f);
    tbo_add_arange(l, GGML_TYPE_F32, 0.0f, 1048576.0f, 1.0f);
    tbo_add_timestep_embedding(l, GGML_TYPE_F32, NE(2, 1, 1, 1), 320, 10000);
    tbo_add_leaky_relu(l, GGML_TYPE_F32, def_ne, 0.1f);

    tbo_list_misc_after_leaky_relu(l);

    static const int pad_a[8] = { 0, 1, 0, 1, 0, 0, 0, 0 };
    static const int pad_b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    for (int tfrm = 0; tfrm < 3; tfrm++) {
        tbo_add_pad_ext(l, GGML_TYPE_F32, NE(512, 512, 1, 1), pad_a, tfrm);
        tbo_add_pad_ext(l, GGML_TYPE_F32, NE(11, 22, 33, 44), pad_b, tfrm);
        tbo_add_pad_ext_circular(l, GGML_TYPE_F32, NE(512, 512, 1, 1), pad_a, tfrm);
        tbo_add_pad_ext_circular(l, GGML_TYPE_F32, NE(11, 22, 33, 44), pad_b, tfrm);
    }
}

static void make_flash_attn(struct tbo_case_list * l) {
    // ours: ALiBi with 3 heads, the third past the largest power of 2 (slope m1^1 = 1/4)
    fa(l, 64, 64, 3, 1, 1, 113, 3, true, false, 8.0f, 0.0f, GGML_PREC_F32, GGML_TYPE_F16, GGML_TYPE_F16, ID_PERM, true, false);
    static const enum ggml_type prefill_types[3] = { GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0 };
    for (int64_t kv = 1024; kv <= 2048; kv *= 2) {
        for (int64_t hs = 64; hs <= 256; hs *= 2) {
            for (int64_t nb = 32; nb <= 64; nb *= 2) {
                for (int ti = 0; ti < 3; ti++) {
                    fa_simple(l, hs, hs, 8, 4, 1, kv, nb, true, prefill_types[ti], prefill_types[ti]);
                }
            }
        }
    }

    static const int64_t hsks[11] = { 40, 64, 72, 80, 96, 128, 192, 256, 320, 512, 576 };
    static const int64_t hsvs[9]  = { 40, 64, 72, 80, 96, 128, 192, 256, 512 };
    static const int64_t nhs[2]   = { 1, 4 };
    static const int64_t nr3s[2]  = { 1, 3 };
    static const int64_t nr2s[7]  = { 1, 4, 8, 12, 16, 20, 32 };
    static const int64_t kvs[3]   = { 113, 512, 1024 };
    static const int64_t nbs[4]   = { 1, 3, 32, 75 };
    static const enum ggml_prec precs[2] = { GGML_PREC_F32, GGML_PREC_DEFAULT };
    static const enum ggml_type kv_types[9] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q5_1,
                                                GGML_TYPE_Q5_0, GGML_TYPE_Q4_1, GGML_TYPE_Q4_0, GGML_TYPE_IQ4_NL };
    for (int a = 0; a < 11; a++) {
      const int64_t hsk = hsks[a];
      for (int b = 0; b < 9; b++) {
        const int64_t hsv = hsvs[b];
        if (hsk != 192 && hsk != 320 && hsk != 576 && hsk != hsv) continue;
        if (hsk == 192 && (hsv != 128 && hsv != 192)) continue;
        if (hsk == 576 && hsv != 512) continue; // DeepSeek MLA
        if (hsk == 320 && hsv != 256) continue; // Mistral4 MLA
        for (int mask = 1; mask >= 0; mask--) {
          for (int sinks = 1; sinks >= 0; sinks--) {
            for (int bi = 0; bi < 2; bi++) {
              const float max_bias = bi == 0 ? 0.0f : 8.0f;
              if (!mask && max_bias > 0.0f) continue;
              for (int si = 0; si < 2; si++) {
                const float softcap = si == 0 ? 0.0f : 10.0f;
                if (hsk != 128 && softcap != 0.0f) continue;
                for (int hi = 0; hi < 2; hi++) {
                  const int64_t nh = nhs[hi];
                  if (nh == 1 && hsk != 320 && hsk != 576) continue;
                  for (int r3 = 0; r3 < 2; r3++) {
                    const int64_t nr3 = nr3s[r3];
                    if (hsk > 64 && nr3 > 1) continue; // no broadcast for large heads
                    for (int r2 = 0; r2 < 7; r2++) {
                      const int64_t nr2 = nr2s[r2];
                      if (nr2 ==  8 && hsk != 192) continue;
                      if (nr2 == 12 && hsk != 128) continue;
                      if (nr2 == 16 && hsk != 192) continue;
                      if (nr2 == 20 && (nh != 1 || hsk != 576)) continue;
                      if (nr2 == 32 && (nh != 1 || hsk != 320)) continue;
                      for (int ki = 0; ki < 3; ki++) {
                        const int64_t kv = kvs[ki];
                        if (nr2 != 1 && kv != 512) continue;
                        for (int ni = 0; ni < 4; ni++) {
                          for (int pi = 0; pi < 2; pi++) {
                            if (hsk != 128 && precs[pi] == GGML_PREC_DEFAULT) continue;
                            for (int ti = 0; ti < 9; ti++) {
                              const enum ggml_type t = kv_types[ti];
                              if (t != GGML_TYPE_F16 && hsk != 64 && hsk != 72) continue;
                              const bool v_is_view_of_k = hsk == 576; // DeepSeek MLA: V is a view of K
                              fa(l, hsk, hsv, nh, nr2, nr3, kv, nbs[ni], mask, sinks, max_bias, softcap, precs[pi], t, t,
                                 ID_PERM, true, v_is_view_of_k);
                              if (mask && max_bias == 0.0f && softcap == 0.0f && kv == 512) {
                                fa(l, hsk, hsv, nh, nr2, nr3, kv, nbs[ni], mask, sinks, max_bias, softcap, precs[pi], t, t,
                                   NE(0, 2, 1, 3), true, v_is_view_of_k);
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }

    // mixed types
    fa_simple(l, 64, 64, 4, 1, 1, 128, 2, true, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0);
    fa_simple(l, 64, 64, 4, 1, 1, 128, 2, true, GGML_TYPE_Q4_0, GGML_TYPE_F16);
    fa_simple(l, 72, 72, 4, 1, 1, 96, 2, true, GGML_TYPE_Q4_0, GGML_TYPE_Q8_0);
    fa_simple(l, 64, 64, 4, 1, 1, 96, 2, true, GGML_TYPE_F16, GGML_TYPE_F32);
    fa_simple(l, 128, 128, 4, 1, 1, 256, 1, false, GGML_TYPE_F16, GGML_TYPE_Q4_0);
    fa_simple(l, 128, 128, 4, 1, 1, 96, 2, true, GGML_TYPE_Q1_0, GGML_TYPE_Q1_0);
    fa_simple(l, 128, 64, 4, 1, 1, 128, 2, true, GGML_TYPE_Q1_0, GGML_TYPE_Q4_0);
    fa_simple(l, 64, 128, 4, 1, 1, 128, 2, true, GGML_TYPE_Q4_0, GGML_TYPE_Q1_0);
    fa_simple(l, 128, 64, 4, 1, 1, 64, 2, true, GGML_TYPE_Q1_0, GGML_TYPE_F16);
    fa_simple(l, 128, 128, 4, 1, 1, 96, 2, true, GGML_TYPE_Q2_0, GGML_TYPE_Q2_0);
    fa_simple(l, 128, 64, 4, 1, 1, 128, 2, true, GGML_TYPE_Q2_0, GGML_TYPE_Q4_0);
    fa_simple(l, 64, 128, 4, 1, 1, 128, 2, true, GGML_TYPE_Q4_0, GGML_TYPE_Q2_0);
    fa_simple(l, 128, 64, 4, 1, 1, 64, 2, true, GGML_TYPE_Q2_0, GGML_TYPE_F16);

    // Q8_0 K/V: decode and prompt, padding, permuted, with the options, long context
    const enum ggml_type q8 = GGML_TYPE_Q8_0;
    fa_simple(l, 256, 256, 2, 16, 1, 113, 1, true, q8, q8);
    fa_simple(l, 256, 256, 2, 16, 1, 1024, 1, true, q8, q8);
    fa(l, 256, 256, 2, 16, 1, 1024, 1, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, NE(0, 2, 1, 3), true, false);
    fa(l, 256, 256, 2, 16, 2, 1025, 1, true, true, 8.0f, 30.0f, GGML_PREC_F32, q8, q8, ID_PERM, true, false);
    fa(l, 256, 256, 2, 16, 1, 1025, 64, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, NE(0, 2, 1, 3), true, false);
    fa_simple(l, 256, 256, 2, 16, 1, 16384, 1, true, q8, q8);

    // MLA: V a sub-view of K
    fa(l, 576, 512, 1, 20, 1, 113, 1, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, ID_PERM, true, true);
    fa(l, 576, 512, 1, 20, 1, 1024, 1, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, ID_PERM, true, true);
    fa(l, 576, 512, 1, 20, 1, 1024, 64, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, ID_PERM, true, true);
    const enum ggml_type f16 = GGML_TYPE_F16;
    fa(l, 320, 256, 1, 32, 1, 512, 1, true, false, 0.0f, 0.0f, GGML_PREC_F32, f16, f16, ID_PERM, true, true);
    fa(l, 192, 128, 4, 8, 1, 512, 1, true, false, 0.0f, 0.0f, GGML_PREC_F32, f16, f16, ID_PERM, true, true);
    fa(l, 128, 128, 8, 4, 1, 512, 8, true, false, 0.0f, 0.0f, GGML_PREC_F32, f16, f16, ID_PERM, true, true);
    fa(l, 64, 64, 4, 1, 1, 512, 1, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, ID_PERM, true, true);

    // long F16 K/V
    for (int64_t kv = 4096; kv <= 16384; kv *= 4) {
        fa_simple(l, 256, 256, 4, 6, 1, kv, 512, true, f16, f16);
        fa_simple(l, 128, 128, 8, 4, 1, kv, 512, true, f16, f16);
    }

    // dense (not viewed) quantized K/V, batch >= 64
    fa(l, 64, 64, 4, 1, 1, 512, 75, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, NE(0, 2, 1, 3), false, false);
    fa(l, 64, 64, 4, 4, 1, 512, 75, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, NE(0, 2, 1, 3), false, false);
    fa(l, 64, 64, 4, 1, 1, 1024, 75, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, NE(0, 2, 1, 3), false, false);
    fa(l, 64, 64, 4, 1, 1, 512, 75, true, false, 0.0f, 0.0f, GGML_PREC_F32, q8, q8, ID_PERM, false, false);

    tbo_add_train_step_cases(l);
}

static void make_fusions(struct tbo_case_list * l) {
    static const enum ggml_glu_op glu_ops[2] = { GGML_GLU_OP_SWIGLU, GGML_GLU_OP_GEGLU };
    static const int64_t bd11[2] = { 1, 1 };
    static const int64_t bd42[2] = { 4, 2 };
    for (size_t ti = 0; ti < N_OF(base_types); ti++) {
        const enum ggml_type type = base_types[ti];
        for (int with_gate = 0; with_gate <= 1; with_gate++) {
            for (int use_id = 0; use_id <= 1; use_id++) {
                for (int b = 0; b <= 1; b++) {
                    if (!use_id && b) {
                        continue;
                    }
                    for (int with_bias = 0; with_bias <= 1; with_bias++) {
                        if (!with_gate && !with_bias) {
                            continue;
                        }
                        for (int gi = 0; gi < 2; gi++) {
                            const enum ggml_glu_op glu_op = glu_ops[gi];
                            if (!with_gate && glu_op != GGML_GLU_OP_SWIGLU) {
                                continue;
                            }
                            for (int lane = 0; lane <= 1; lane++) {
                                if (lane && type != GGML_TYPE_NVFP4) {
                                    continue;
                                }
                                tbo_add_mul_mat_vec_fusion(l, type, glu_op, 1, 32, 256, use_id, 16, 8, b, with_bias, with_gate, lane, bd42);
                                tbo_add_mul_mat_vec_fusion(l, type, glu_op, 1, 32, 256, use_id, 16, 8, b, with_bias, with_gate, lane, bd11);
                                if (!use_id && with_gate && !with_bias) {
                                    for (int64_t m_batch = 2; m_batch <= 8; m_batch *= 2) {
                                        tbo_add_mul_mat_vec_fusion(l, type, glu_op, m_batch, 32, 256, use_id, 16, 8, b, with_bias,
                                                                   with_gate, lane, bd11);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    static const enum tbo_moe_gating gates[4] = { TBO_GATING_SOFTMAX, TBO_GATING_SIGMOID, TBO_GATING_SOFTMAX_WEIGHT,
                                                  TBO_GATING_SQRT_SOFTPLUS };
    for (int gi = 0; gi < 4; gi++) {
        for (int with_norm = 0; with_norm <= 1; with_norm++) {
            for (int bias_probs = 0; bias_probs <= 1; bias_probs++) {
                for (int si = 0; si < 2; si++) {
                    const float scale_w = si == 0 ? 0.0f : 2.0f;
                    const enum tbo_moe_gating g = gates[gi];
                    tbo_add_topk_moe(l, NE(8, 22, 1, 1), 4, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(31, 22, 1, 1), 8, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(32, 22, 1, 1), 8, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(40, 22, 1, 1), 8, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(71, 22, 1, 1), 8, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(128, 1, 1, 1), 128, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(129, 1, 1, 1), 128, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(160, 4, 1, 1), 160, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(256, 22, 1, 1), 6, with_norm, bias_probs, g, scale_w);
                    tbo_add_topk_moe(l, NE(288, 22, 1, 1), 8, with_norm, bias_probs, g, scale_w);
                }
            }
        }
    }

    tbo_list_ssm_gated_delta_net(l);
    tbo_list_misc_lightning_indexer(l);
}

// cases of ours, for ops and inputs upstream's list does not cover
static void make_ours(struct tbo_case_list * l) {
    static const enum ggml_type f16_f32[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    for (int ti = 0; ti < 2; ti++) {
        tbo_add_add1(l, f16_f32[ti], NE(10, 5, 4, 3));
        tbo_add_add1(l, f16_f32[ti], NE(257, 7, 1, 1));
    }
    tbo_add_soft_max_inf_mask(l, NE(16, 8, 4, 1), 1.0f, 0.0f);
    tbo_add_soft_max_inf_mask(l, NE(1000, 5, 2, 1), 0.5f, 0.0f);
    tbo_add_soft_max_inf_mask(l, NE(257, 33, 8, 1), 0.5f, 8.0f);
    for (int kind = 1; kind <= 4; kind++) {
        tbo_add_custom(l, kind, NE(17, 5, 3, 2), GGML_N_TASKS_MAX, false);
        tbo_add_custom(l, kind, NE(256, 33, 1, 1), 3, false);
        if (kind < 4) {
            tbo_add_custom(l, kind, NE(17, 5, 3, 2), 1, true);
        }
    }
    tbo_list_misc_ours(l);
}

void tbo_make_cases_eval(struct tbo_case_list * l) {
    make_elementwise(l);
    make_rows(l);
    tbo_add_conv_list(l, TBO_CONV_EVAL_CONV);
    make_copies(l);
    make_binary(l);
    make_norms(l);
    make_matmul(l);
    make_simple(l);
    make_soft_max(l);
    make_rope(l);
    make_concat_sort(l);
    tbo_add_conv_list(l, TBO_CONV_EVAL_UPSCALE);
    make_reduce_pad(l);
    make_flash_attn(l);
    make_fusions(l);
    make_ours(l);
}
