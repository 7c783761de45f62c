// gemm-q8-neon.c: the arm64 tile kernels of the q8 panels (gemm.h).
//
// A superblock holds 8 lanes (blocks) of 32 values; group g of its codes is
// 32 bytes, lanes 0..3 in one int8x16 register and lanes 4..7 in the next,
// 4 bytes per lane: the layout SDOT sums in (quants-neon.h). A tile of RM
// weight rows x RN activation columns accumulates the integer block sums in
// int32 lanes over a superblock, then applies the block scales and constant
// terms in float lanes, as gemm-q8.c's tiles do.
//
// Three integer steps, chosen once from the CPU's capabilities (in the
// kernel configuration, kernel-config.h):
//  - SMMLA (i8mm): a 2x8 by 8x2 int8 matrix product per instruction. The
//    8 bytes of one lane in groups g and g + 1 of two rows (and two
//    columns) are zipped into one register; each lane then accumulates a
//    2x2 result, transposed into the SDOT lanes at the end of a superblock.
//  - SDOT (dotprod);
//  - widening multiplies, on every arm64 CPU.
// Weight codes are signed (gemm-q8.c packs them so on arm64); the integer
// sums are exact, so the three give the same results.

#include "kernels/gemm.h"
#include "kernels/kernel-config.h"
#include "arm-features.h"
#include "arch/arm/quants-neon.h"

#if defined(GGML_VEC_NEON)

_Static_assert(GGML_Q8P_LANES == 8, "the NEON tiles hold a group of 8 lanes in two registers");

#define Q8N_SB    GGML_Q8P_SB_BYTES
#define Q8N_CODES (GGML_Q8P_LANES * 32) // bytes of codes in a superblock
#define Q8N_W     (GGML_Q8P_LANES * 4)  // bytes of one group of codes
#define Q8N_RM 4
#define Q8N_RN 2

// the float part of a superblock: for each half h (lanes 4h..4h+3),
// facc += isum * (dA*dB) + cA*cB
static inline float32x4_t q8n_scale(float32x4_t facc, const uint8_t * a, const uint8_t * b, int h, int32x4_t isum) {
    const float32x4_t ad = vld1q_f32((const float *)(a + Q8N_CODES) + 4*h);
    const float32x4_t ac = vld1q_f32((const float *)(a + Q8N_CODES) + GGML_Q8P_LANES + 4*h);
    const float32x4_t bd = vld1q_f32((const float *)(b + Q8N_CODES) + 4*h);
    const float32x4_t bc = vld1q_f32((const float *)(b + Q8N_CODES) + GGML_Q8P_LANES + 4*h);
    facc = vfmaq_f32(facc, vcvtq_f32_s32(isum), vmulq_f32(ad, bd));
    return vfmaq_f32(facc, ac, bc);
}

static inline int32x4_t q8n_dot_widen(int32x4_t acc, int8x16_t a, int8x16_t b) {
    return vaddq_s32(acc, ggml_neon_dot4_widen(a, b));
}

#if defined(GGML_NEON_DOTPROD)
GGML_NEON_TARGET_DOTPROD
static inline int32x4_t q8n_dot_sdot(int32x4_t acc, int8x16_t a, int8x16_t b) {
    return vdotq_s32(acc, a, b);
}
#endif

// the tile with a 4-lane dot step: iacc[r][c][h] holds lanes 4h..4h+3;
// inlined into each tile below with its dot step
static GGML_GEMM_INLINE void q8n_tile_dot(int32x4_t (*dot)(int32x4_t acc, int8x16_t a, int8x16_t b), int64_t nsb,
                                          const uint8_t * const * a, const uint8_t * const * b, float out[Q8N_RM][Q8N_RN]) {
    float32x4_t facc[Q8N_RM][Q8N_RN];
    for (int r = 0; r < Q8N_RM; r++) {
        for (int c = 0; c < Q8N_RN; c++) {
            facc[r][c] = vdupq_n_f32(0.0f);
        }
    }
    for (int64_t s = 0; s < nsb; s++) {
        const size_t off = (size_t) s * Q8N_SB;
        int32x4_t iacc[Q8N_RM][Q8N_RN][2];
        for (int r = 0; r < Q8N_RM; r++) {
            for (int c = 0; c < Q8N_RN; c++) {
                iacc[r][c][0] = iacc[r][c][1] = vdupq_n_s32(0);
            }
        }
        for (int g = 0; g < 8; g++) {
            for (int h = 0; h < 2; h++) {
                int8x16_t av[Q8N_RM];
                for (int r = 0; r < Q8N_RM; r++) {
                    av[r] = vld1q_s8((const int8_t *)(a[r] + off + g*Q8N_W + 16*h));
                }
                for (int c = 0; c < Q8N_RN; c++) {
                    const int8x16_t bv = vld1q_s8((const int8_t *)(b[c] + off + g*Q8N_W + 16*h));
                    for (int r = 0; r < Q8N_RM; r++) {
                        iacc[r][c][h] = dot(iacc[r][c][h], av[r], bv);
                    }
                }
            }
        }
        for (int r = 0; r < Q8N_RM; r++) {
            for (int c = 0; c < Q8N_RN; c++) {
                for (int h = 0; h < 2; h++) {
                    facc[r][c] = q8n_scale(facc[r][c], a[r] + off, b[c] + off, h, iacc[r][c][h]);
                }
            }
        }
    }
    for (int r = 0; r < Q8N_RM; r++) {
        for (int c = 0; c < Q8N_RN; c++) {
            out[r][c] = vaddvq_f32(facc[r][c]);
        }
    }
}

static void q8n_tile_widen(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8N_RM][Q8N_RN]) {
    q8n_tile_dot(q8n_dot_widen, nsb, a, b, out);
}

#if defined(GGML_NEON_DOTPROD)
GGML_NEON_TARGET_DOTPROD
static void q8n_tile_sdot(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8N_RM][Q8N_RN]) {
    q8n_tile_dot(q8n_dot_sdot, nsb, a, b, out);
}
#endif

#define GGML_GEMM_WALK    q8n_walk
#define GGML_GEMM_WALK_RM Q8N_RM
#define GGML_GEMM_WALK_RN Q8N_RN
#define GGML_GEMM_WALK_T  uint8_t
#include "kernels/gemm-walk-tmpl.h"

#if defined(GGML_NEON_I8MM)

// the SMMLA tile: 2 rows x 4 columns
#define Q8N_MM_RM 2
#define Q8N_MM_RN 4

static inline int8x16_t q8n_zip32(int8x16_t x, int8x16_t y, bool high) {
    const int32x4_t a = vreinterpretq_s32_s8(x), b = vreinterpretq_s32_s8(y);
    return vreinterpretq_s8_s32(high ? vzip2q_s32(a, b) : vzip1q_s32(a, b));
}

static inline int8x16_t q8n_zip64(int8x16_t x, int8x16_t y, bool high) {
    const int64x2_t a = vreinterpretq_s64_s8(x), b = vreinterpretq_s64_s8(y);
    return vreinterpretq_s8_s64(high ? vzip2q_s64(a, b) : vzip1q_s64(a, b));
}

// the SMMLA operands of lanes 4h..4h+3 for two panels p, q at groups g, g + 1:
// op[t] = [8 bytes of p's lane 4h + t | 8 bytes of q's]
static inline void q8n_mm_operands(const uint8_t * p, const uint8_t * q, size_t off, int g, int h, int8x16_t op[4]) {
    const int8x16_t p0 = vld1q_s8((const int8_t *)(p + off + g*Q8N_W + 16*h));
    const int8x16_t p1 = vld1q_s8((const int8_t *)(p + off + (g + 1)*Q8N_W + 16*h));
    const int8x16_t q0 = vld1q_s8((const int8_t *)(q + off + g*Q8N_W + 16*h));
    const int8x16_t q1 = vld1q_s8((const int8_t *)(q + off + (g + 1)*Q8N_W + 16*h));
    // lanes 0, 1 (zip1) and 2, 3 (zip2) with their 8 bytes together
    const int8x16_t pl = q8n_zip32(p0, p1, false), ph = q8n_zip32(p0, p1, true);
    const int8x16_t ql = q8n_zip32(q0, q1, false), qh = q8n_zip32(q0, q1, true);
    op[0] = q8n_zip64(pl, ql, false);
    op[1] = q8n_zip64(pl, ql, true);
    op[2] = q8n_zip64(ph, qh, false);
    op[3] = q8n_zip64(ph, qh, true);
}

// four lanes of [r0c0, r0c1, r1c0, r1c1] -> for each of the four results, its four lanes
static inline void q8n_mm_transpose(const int32x4_t v[4], int32x4_t rc[4]) {
    const int32x4_t t0 = vtrn1q_s32(v[0], v[1]), t1 = vtrn2q_s32(v[0], v[1]);
    const int32x4_t t2 = vtrn1q_s32(v[2], v[3]), t3 = vtrn2q_s32(v[2], v[3]);
    rc[0] = vreinterpretq_s32_s64(vzip1q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
    rc[1] = vreinterpretq_s32_s64(vzip1q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
    rc[2] = vreinterpretq_s32_s64(vzip2q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
    rc[3] = vreinterpretq_s32_s64(vzip2q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
}

GGML_NEON_TARGET_I8MM
static void q8n_tile_mm(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8N_MM_RM][Q8N_MM_RN]) {
    float32x4_t facc[Q8N_MM_RM][Q8N_MM_RN];
    for (int r = 0; r < Q8N_MM_RM; r++) {
        for (int c = 0; c < Q8N_MM_RN; c++) {
            facc[r][c] = vdupq_n_f32(0.0f);
        }
    }
    for (int64_t s = 0; s < nsb; s++) {
        const size_t off = (size_t) s * Q8N_SB;
        int32x4_t mm[Q8N_MM_RN/2][GGML_Q8P_LANES]; // [column pair][lane]: r0c0, r0c1, r1c0, r1c1
        for (int cp = 0; cp < Q8N_MM_RN/2; cp++) {
            for (int l = 0; l < GGML_Q8P_LANES; l++) {
                mm[cp][l] = vdupq_n_s32(0);
            }
        }
        for (int g = 0; g < 8; g += 2) {
            for (int h = 0; h < 2; h++) {
                int8x16_t ao[4];
                q8n_mm_operands(a[0], a[1], off, g, h, ao);
                for (int cp = 0; cp < Q8N_MM_RN/2; cp++) {
                    int8x16_t bo[4];
                    q8n_mm_operands(b[2*cp], b[2*cp + 1], off, g, h, bo);
                    for (int t = 0; t < 4; t++) {
                        mm[cp][4*h + t] = vmmlaq_s32(mm[cp][4*h + t], ao[t], bo[t]);
                    }
                }
            }
        }
        for (int cp = 0; cp < Q8N_MM_RN/2; cp++) {
            for (int h = 0; h < 2; h++) {
                int32x4_t rc[4];
                q8n_mm_transpose(&mm[cp][4*h], rc);
                for (int i = 0; i < 4; i++) {
                    const int r = i / 2, c = 2*cp + i % 2;
                    facc[r][c] = q8n_scale(facc[r][c], a[r] + off, b[c] + off, h, rc[i]);
                }
            }
        }
    }
    for (int r = 0; r < Q8N_MM_RM; r++) {
        for (int c = 0; c < Q8N_MM_RN; c++) {
            out[r][c] = vaddvq_f32(facc[r][c]);
        }
    }
}

#define GGML_GEMM_WALK    q8n_walk_mm
#define GGML_GEMM_WALK_RM Q8N_MM_RM
#define GGML_GEMM_WALK_RN Q8N_MM_RN
#define GGML_GEMM_WALK_T  uint8_t
#include "kernels/gemm-walk-tmpl.h"

#endif

// the walks as ggml_cpu_q8p_gemm_t
#define Q8N_DEFINE_GEMM(name, walk, tile)                                                               \
    static void name(int64_t nrows, int64_t ncols, int64_t nsb, const void * A, size_t lda,            \
                     const void * const * B, float * const * C, bool accumulate) {                     \
        walk(tile, nrows, ncols, nsb, (const uint8_t *) A, lda, B, C, accumulate);                     \
    }

Q8N_DEFINE_GEMM(q8p_gemm__neon_4x2, q8n_walk, q8n_tile_widen)
#if defined(GGML_NEON_DOTPROD)
Q8N_DEFINE_GEMM(q8p_gemm__neon_sdot_4x2, q8n_walk, q8n_tile_sdot)
#endif
#if defined(GGML_NEON_I8MM)
Q8N_DEFINE_GEMM(q8p_gemm__neon_i8mm_2x4, q8n_walk_mm, q8n_tile_mm)
#endif

// the plain-form types' tile (the halves form keeps the portable one)
void ggml_cpu_add_kernels_arm_gemm_q8(struct ggml_cpu_kernel_config * cfg) {
    ggml_cpu_q8p_gemm_t gemm = q8p_gemm__neon_4x2;
    const char * isa = "neon_4x2";
#if defined(GGML_NEON_DOTPROD)
    if (ggml_arm_has_dotprod()) {
        gemm = q8p_gemm__neon_sdot_4x2;
        isa  = "neon_sdot_4x2";
    }
#endif
#if defined(GGML_NEON_I8MM)
    if (ggml_arm_has_i8mm()) {
        gemm = q8p_gemm__neon_i8mm_2x4;
        isa  = "neon_i8mm_2x4";
    }
#endif
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        if (cfg->fast[t].gemm != NULL && !ggml_q8p_has_halves((enum ggml_type) t)) {
            GGML_CPU_SET_KERNEL(cfg->fast, t, gemm, gemm, isa);
        }
    }
}

#else

void ggml_cpu_add_kernels_arm_gemm_q8(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif
