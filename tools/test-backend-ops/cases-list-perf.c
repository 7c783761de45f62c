// cases-list-perf.c: the cases of perf mode.
//
// The list follows upstream's make_test_cases_perf() in order and parameters
// for the families of our op set (only forward ROPE), then adds
// matrix products at prompt sizes between upstream's n = 8 and n = 512.

#include "tbo.h"

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

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void cpy(struct tbo_case_list * l, enum ggml_type ts, enum ggml_type td, const int64_t ne[4], const int64_t perm_src[4],
                bool transpose) {
    tbo_add_cpy(l, ts, td, ne, NO_DIMS, perm_src, ZERO4, transpose, ZERO4);
}

static void fa(struct tbo_case_list * l, int64_t hs, int64_t nh, int64_t nr2, int64_t kv, int64_t nb, bool mask,
               enum ggml_type t) {
    tbo_add_flash_attn_ext(l, hs, hs, nh, NE(nr2, 1), kv, nb, mask, false, 0.0f, 0.0f, GGML_PREC_F32, t, t, ID_PERM, true, false);
}

void tbo_make_cases_perf(struct tbo_case_list * l) {
    static const enum ggml_type f16_f32[2] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    static const enum ggml_type f32_f16[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };

    // SWIGLU at a 27B-class FFN width, fused and split
    for (int ti = 0; ti < 2; ti++) {
        for (int64_t n_tokens = 512; n_tokens <= 2048; n_tokens *= 4) {
            tbo_add_glu(l, GGML_GLU_OP_SWIGLU, f16_f32[ti], NE(2*17408, n_tokens, 1, 1), 0, false);
            tbo_add_glu_split(l, GGML_GLU_OP_SWIGLU, f16_f32[ti], NE(17408, n_tokens, 1, 1), 0);
        }
    }

    // CONT of a 0<->2 permutation
    static const int64_t n_kvs[4] = { 1024, 1280, 2048, 2304 };
    for (int i = 0; i < 4; i++) {
        tbo_add_cont(l, GGML_TYPE_F32, NE(n_kvs[i], 64, 64, 1), false, NE(2, 1, 0, 3));
    }
    for (int i = 2; i < 4; i++) {
        tbo_add_cont(l, GGML_TYPE_F32, NE(n_kvs[i], 512, 64, 1), false, NE(2, 1, 0, 3));
    }

    tbo_add_conv_list(l, TBO_CONV_PERF_CONV);

    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(4096, 1, 1, 1), NE(1, 1, 1, 1), 1, false, false);
    tbo_add_bin_bcast(l, ggml_add, GGML_TYPE_F32, NE(4096, 1, 1, 1), NE(1, 512, 1, 1), 1, false, false);

    cpy(l, GGML_TYPE_F32,  GGML_TYPE_F16,  NE(512, 3072, 1, 1), ZERO4, false);
    cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(8192, 512, 2, 1), NE(0, 2, 1, 3), false);
    cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(3072, 512, 2, 1), NE(0, 2, 1, 3), false);
    cpy(l, GGML_TYPE_F32,  GGML_TYPE_Q4_0, NE(8192, 512, 2, 1), ZERO4, false);
    cpy(l, GGML_TYPE_Q4_0, GGML_TYPE_F32,  NE(8192, 512, 2, 1), ZERO4, false);

    cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(768*1024, 256, 1, 1), NE(1, 0, 2, 3), false);
    cpy(l, GGML_TYPE_F16,  GGML_TYPE_F16,  NE(768*1024, 256, 1, 1), NE(1, 0, 2, 3), false);
    cpy(l, GGML_TYPE_F16,  GGML_TYPE_F16,  NE(768, 1024, 256, 1),   NE(1, 0, 2, 3), false);
    cpy(l, GGML_TYPE_BF16, GGML_TYPE_BF16, NE(768, 1024, 256, 1),   NE(1, 0, 2, 3), false);

    cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(768*1024, 256, 1, 1), ZERO4, true);
    cpy(l, GGML_TYPE_F32,  GGML_TYPE_F32,  NE(768, 1024, 256, 1),   ZERO4, true);
    cpy(l, GGML_TYPE_F16,  GGML_TYPE_F16,  NE(768*1024, 256, 1, 1), ZERO4, true);
    cpy(l, GGML_TYPE_F16,  GGML_TYPE_F16,  NE(768, 1024, 256, 1),   ZERO4, true);
    cpy(l, GGML_TYPE_BF16, GGML_TYPE_BF16, NE(768, 1024, 256, 1),   ZERO4, true);

    static const int64_t sm_shapes[8][4] = {
        { 4096, 4096, 5, 1 }, { 12888, 256, 5, 1 }, { 77, 4096, 5, 1 }, { 1024, 1024, 10, 1 },
        { 77, 1024, 10, 1 }, { 256, 256, 20, 1 }, { 64, 64, 20, 1 }, { 77, 64, 20, 1 },
    };
    for (int i = 0; i < 8; i++) {
        tbo_add_soft_max(l, GGML_TYPE_F32, sm_shapes[i], false, false, GGML_TYPE_F32, ONE2, 1.0f, 0.0f, false);
    }

    tbo_add_argmax(l, GGML_TYPE_F32, NE(32, 10, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(1024, 10, 1, 1));
    tbo_add_argmax(l, GGML_TYPE_F32, NE(32000, 512, 1, 1));

    tbo_add_conv_list(l, TBO_CONV_PERF_REFLECT);

    tbo_add_snake_fuse(l, GGML_TYPE_F32,  NE(7680, 192, 1, 1));
    tbo_add_snake_fuse(l, GGML_TYPE_F16,  NE(7680, 192, 1, 1));
    tbo_add_snake_fuse(l, GGML_TYPE_BF16, NE(7680, 192, 1, 1));

    tbo_add_mul_mat(l, GGML_TYPE_F16, GGML_TYPE_F32, 16416, 1, 128, NE(8, 1), NE(4, 1), NE(0, 2, 1, 3), 0, 1, false);
    tbo_add_mul_mat(l, GGML_TYPE_F16, GGML_TYPE_F32, 128, 1, 16416, NE(8, 1), NE(4, 1), ID_PERM, 2*16416, 1, false);

    tbo_add_mul_mat_hadamard(l, 128, 1, 128, ONE2);
    tbo_add_mul_mat_hadamard(l, 64, 1, 64, ONE2);
    tbo_add_mul_mat_hadamard(l, 256, 1, 256, ONE2);
    tbo_add_mul_mat_hadamard(l, 128, 32, 128, ONE2);
    tbo_add_mul_mat_hadamard(l, 64, 2048, 64, ONE2);
    tbo_add_mul_mat_hadamard(l, 128, 2048, 128, ONE2);
    tbo_add_mul_mat_hadamard(l, 256, 2048, 256, ONE2);
    tbo_add_mul_mat_hadamard(l, 512, 2048, 512, ONE2);

    tbo_perf_misc_after_hadamard(l);

    // a 4096 x 14336 weight: generation (n small) and a prompt batch of 512
    static const int64_t bss[7] = { 1, 2, 3, 4, 5, 8, 512 };
    for (int bi = 0; bi < 7; bi++) {
        for (size_t ti = 0; ti < N_OF(all_types); ti++) {
            tbo_add_mul_mat(l, all_types[ti], GGML_TYPE_F32, 4096, bss[bi], 14336, ONE2, ONE2, ID_PERM, 0, 1, false);
        }
    }

    // mixtures of experts: qwen3-30b-a3b, then gpt-oss-20b
    static const enum ggml_type moe_types[7] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K,
                                                 GGML_TYPE_Q6_K, GGML_TYPE_IQ2_XS };
    static const int moe_bss[8] = { 1, 4, 8, 32, 64, 128, 256, 512 };
    for (int bi = 0; bi < 8; bi++) {
        for (int ti = 0; ti < 7; ti++) {
            tbo_add_mul_mat_id(l, moe_types[ti], GGML_TYPE_F32, 128, 8, false, 768, moe_bss[bi], 2048);
            tbo_add_mul_mat_id_fusion(l, moe_types[ti], GGML_TYPE_F32, 128, 8, false, 768, moe_bss[bi], 2048, 1, false);
        }
    }
    for (int bi = 0; bi < 8; bi++) {
        for (int ti = 0; ti < 7; ti++) {
            tbo_add_mul_mat_id(l, moe_types[ti], GGML_TYPE_F32, 32, 4, false, 1792, moe_bss[bi], 2048);
            tbo_add_mul_mat_id_fusion(l, moe_types[ti], GGML_TYPE_F32, 32, 4, false, 1792, moe_bss[bi], 2048, 1, false);
        }
    }
    static const int oss_bss[4] = { 1, 4, 8, 512 };
    for (int bi = 0; bi < 4; bi++) {
        tbo_add_mul_mat_id(l, GGML_TYPE_MXFP4, GGML_TYPE_F32, 32, 4, false, 2880, oss_bss[bi], 2880);
        tbo_add_mul_mat_id_fusion(l, GGML_TYPE_MXFP4, GGML_TYPE_F32, 32, 4, false, 2880, oss_bss[bi], 2880, 1, false);
    }

    tbo_add_conv_list(l, TBO_CONV_PERF_IM2COL);

    tbo_add_flash_attn_ext(l, 72, 72, 16, ONE2, 5776, 5776, false, false, 0.0f, 0.0f, GGML_PREC_F32, GGML_TYPE_F16, GGML_TYPE_F16,
                           ID_PERM, true, false);
    fa(l, 64, 8, 8, 7680, 1,   true, GGML_TYPE_F16);
    fa(l, 64, 8, 8, 7680, 4,   true, GGML_TYPE_F16);
    fa(l, 64, 8, 8, 7680, 1,   true, GGML_TYPE_Q4_0);
    fa(l, 64, 8, 8, 7680, 512, true, GGML_TYPE_Q4_0);
    fa(l, 64, 8, 8, 7680, 1,   true, GGML_TYPE_Q8_0);
    fa(l, 64, 8, 8, 7680, 512, true, GGML_TYPE_Q8_0);

    static const int64_t q8_kvs[7] = { 128, 512, 1024, 2048, 4096, 10000, 20000 };
    for (int i = 0; i < 7; i++) {
        fa(l, 256, 2, 16, q8_kvs[i], 1, true, GGML_TYPE_Q8_0);
    }
    fa(l, 256, 2, 16, 10000, 1,   true, GGML_TYPE_F16);
    fa(l, 256, 2, 16, 20000, 1,   true, GGML_TYPE_F16);
    fa(l, 256, 2, 16, 10000, 512, true, GGML_TYPE_Q8_0);
    fa(l, 256, 2, 16, 20000, 512, true, GGML_TYPE_Q8_0);
    fa(l, 256, 2, 16, 10000, 512, true, GGML_TYPE_F16);
    fa(l, 256, 2, 16, 20000, 512, true, GGML_TYPE_F16);

    for (int64_t kv = 4096; kv <= 16384; kv *= 2) {
        for (int64_t hs = 64; hs <= 128; hs *= 2) {
            for (int64_t nr = 1; nr <= 4; nr *= 4) {
                fa(l, hs, 8, nr, kv, 1, true, GGML_TYPE_F16);
            }
        }
    }

    for (int64_t col = 8192; col <= 524288; col *= 2) {
        for (int64_t rows = 1; rows <= 16; rows *= 4) {
            tbo_add_soft_max(l, GGML_TYPE_F32, NE(col, rows, 1, 1), false, false, GGML_TYPE_F32, ONE2, 1.0f, 0.0f, false);
        }
    }

    tbo_add_conv_list(l, TBO_CONV_PERF_TAIL);

    tbo_add_mean(l, GGML_TYPE_F32, NE(256, 256, 3, 1));

    tbo_perf_misc_add_id(l);

    // forward rope only: ROPE_BACK is outside the op set
    for (int ti = 0; ti < 2; ti++) {
        for (int ff = 0; ff <= 1; ff++) {
            for (int v = 0; v <= 1; v++) {
                const enum ggml_type type = f32_f16[ti];
                tbo_add_rope(l, type, NE(128, 32, 512, 1), 128, GGML_ROPE_TYPE_NORMAL, 512, 1.0f, 0.0f, 1.0f, ff, v, false, 0);
                tbo_add_rope(l, type, NE(128, 64, 512, 1), 128, GGML_ROPE_TYPE_NORMAL, 512, 1.0f, 0.0f, 1.0f, ff, v, false, 0);
                tbo_add_rope(l, type, NE(80, 32, 512, 1),   20, GGML_ROPE_TYPE_NEOX,   512, 1.0f, 0.0f, 1.0f, ff, v, false, 0);
                tbo_add_rope(l, type, NE(64, 8, 512, 1),    64, GGML_ROPE_TYPE_NEOX,   512, 1.0f, 0.0f, 1.0f, ff, v, false, 0);
                tbo_add_rope(l, type, NE(128, 12, 512, 1), 128, GGML_ROPE_TYPE_MROPE,  512, 1.0f, 0.0f, 1.0f, ff, v, false, 0);
                tbo_add_rope(l, type, NE(128, 12, 512, 1), 128, GGML_ROPE_TYPE_IMROPE, 512, 1.0f, 0.0f, 1.0f, ff, v, false, 0);
                tbo_add_rope(l, type, NE(80, 16, 2, 1),     80, GGML_ROPE_TYPE_VISION, 512, 1.0f, 0.0f, 1.0f, ff, v, false, 0);
            }
        }
    }

    static const int64_t reduce_shapes[3][4] = { { 8192, 1, 1, 1 }, { 8192, 8192, 1, 1 }, { 128, 8192, 1, 1 } };
    for (int i = 0; i < 3; i++) {
        tbo_add_mean(l, GGML_TYPE_F32, reduce_shapes[i]);
        tbo_add_sum_rows(l, GGML_TYPE_F32, reduce_shapes[i], false, false);
        tbo_add_sum(l, GGML_TYPE_F32, reduce_shapes[i], ZERO4);
    }

    tbo_add_argsort(l, GGML_TYPE_F32, NE(65000, 16, 1, 1), GGML_SORT_ORDER_ASC);
    tbo_add_argsort(l, GGML_TYPE_F32, NE(200000, 1, 1, 1), GGML_SORT_ORDER_ASC);
    tbo_add_argsort(l, GGML_TYPE_F32, NE(200000, 16, 1, 1), GGML_SORT_ORDER_ASC);

    tbo_add_top_k(l, GGML_TYPE_F32, NE(2, 1, 1, 1), 1, false);
    static const int top_ks[4] = { 1, 10, 40, 400 };
    for (int ki = 0; ki < 4; ki++) {
        for (int64_t nrows = 1; nrows <= 16; nrows *= 16) {
            const int64_t cols[4] = { top_ks[ki], 1000, 65000, 200000 };
            for (int ci = 0; ci < 4; ci++) {
                tbo_add_top_k(l, GGML_TYPE_F32, NE(cols[ci], nrows, 1, 1), top_ks[ki], false);
            }
        }
    }

    tbo_perf_misc_cumsum(l);
    tbo_perf_ssm_conv_scan(l);

    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 1, 1), NE(256, 16, 1, 1), -1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(256, 16, 2, 3), -1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(128, 16, 2, 3), -1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(256, 16, 2, 3), 1);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(128, 16, 2, 3), 2);
    tbo_add_acc(l, GGML_TYPE_F32, NE(256, 17, 2, 3), NE(64, 16, 2, 3), 3);

    tbo_perf_ssm_gated_delta_net(l);
    tbo_perf_misc_lightning_indexer(l);

    // ours: prompt batches between n = 8 and n = 512 for the types of the op set
    static const enum ggml_type mm_types[8] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                                                GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0 };
    for (int64_t n = 64; n <= 256; n *= 2) {
        for (int ti = 0; ti < 8; ti++) {
            tbo_add_mul_mat(l, mm_types[ti], GGML_TYPE_F32, 4096, n, 14336, ONE2, ONE2, ID_PERM, 0, 1, false);
        }
    }
}
