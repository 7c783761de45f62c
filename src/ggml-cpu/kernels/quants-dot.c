// quants-dot.c: activation quantizers and row dot products (see quants-dot.h)
// of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and of the float types.
//
// Quantized rows meet Q8 activation rows block by block: the integer dot
// product of the 32 codes of a block, scaled by the two block scales. Here
// is the portable path of the quantized types (the x86 vector one is in
// arch/x86/quants-dot-avx2.c, the arm64 one in arch/arm/quants-dot-neon.c),
// and both paths of the float types, whose vector path is written on the
// float vocabulary of simd-f32.h.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "simd/simd-f32.h"
#include "simd/stream-prefetch.h"
#include "ggml-quants.h"

//
// fp32 -> Q8_0 / Q8_1 / Q8_K: the configuration's quantizers (the type traits'
// from_float; the vector ones are in arch/x86/quants-dot-avx2.c)
//

void ggml_cpu_quantize_row_q8_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    ggml_cpu_kconf.act_fast[GGML_TYPE_Q8_0](x, vy, k);
}

void ggml_cpu_quantize_row_q8_1(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    ggml_cpu_kconf.act_fast[GGML_TYPE_Q8_1](x, vy, k);
}

void ggml_cpu_quantize_row_q8_K(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    ggml_cpu_kconf.act_fast[GGML_TYPE_Q8_K](x, vy, k);
}

//
// quantized rows . Q8 rows: portable path
//

// one weight row . one activation row: sum over blocks of dx*dy*isum (+ mx*sy)
static QD_INLINE float qd_dot_row_ref(enum ggml_type type, int64_t nb, const char * x, const char * y) {
    const size_t bsx = qd_block_size(type);
    const bool affine = qd_is_affine(type);
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; b++) {
        int v[32];
        float dx, mx;
        qd_block_codes_ref(type, x + b*bsx, v, &dx, &mx);
        float dy, sy = 0.0f;
        const int8_t * yq;
        if (affine) {
            const block_q8_1 * yb = (const block_q8_1 *) y + b;
            dy = GGML_FP16_TO_FP32(yb->d);
            sy = GGML_FP16_TO_FP32(yb->s);
            yq = yb->qs;
        } else {
            const block_q8_0 * yb = (const block_q8_0 *) y + b;
            dy = GGML_FP16_TO_FP32(yb->d);
            yq = yb->qs;
        }
        int isum = 0;
        for (int j = 0; j < 32; j++) {
            isum += v[j] * yq[j];
        }
        sum += (dx*dy) * (float) isum;
        if (affine) {
            sum += mx*sy;
        }
    }
    return sum;
}

// the portable rows of one type, specialized for it by the kernels below
static QD_INLINE void qd_rows_ref(enum ggml_type type, int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                  const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t r = 0; r < nr; r++) {
            s[c][r] = qd_dot_row_ref(type, n / 32, (const char *) x + r*bx, (const char *) y[c]);
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q4_0_dot__scalar, qd_rows_ref, GGML_TYPE_Q4_0)
GGML_CPU_DEFINE_DOT_ROWS(q4_1_dot__scalar, qd_rows_ref, GGML_TYPE_Q4_1)
GGML_CPU_DEFINE_DOT_ROWS(q5_0_dot__scalar, qd_rows_ref, GGML_TYPE_Q5_0)
GGML_CPU_DEFINE_DOT_ROWS(q5_1_dot__scalar, qd_rows_ref, GGML_TYPE_Q5_1)
GGML_CPU_DEFINE_DOT_ROWS(q8_0_dot__scalar, qd_rows_ref, GGML_TYPE_Q8_0)

//
// float rows . F32 rows
//

static QD_INLINE float qd_bf16_to_f32(ggml_bf16_t h) {
    return ggml_compute_bf16_to_fp32(h);
}

static void f32_dot__scalar(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                            const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t r = 0; r < nr; r++) {
            s[c][r] = ggml_vec_dot_f32_ref(n, (const float *)((const char *) x + r*bx), (const float *) y[c]);
        }
    }
}

static void f16_dot__scalar(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                            const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        const float * yf = (const float *) y[c];
        for (int64_t r = 0; r < nr; r++) {
            const ggml_fp16_t * xr = (const ggml_fp16_t *)((const char *) x + r*bx);
            float sum = 0.0f;
            for (int64_t i = 0; i < n; i++) {
                sum += ggml_compute_fp16_to_fp32(xr[i]) * yf[i];
            }
            s[c][r] = sum;
        }
    }
}

static void bf16_dot__scalar(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                             const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        const float * yf = (const float *) y[c];
        for (int64_t r = 0; r < nr; r++) {
            const ggml_bf16_t * xr = (const ggml_bf16_t *)((const char *) x + r*bx);
            float sum = 0.0f;
            for (int64_t i = 0; i < n; i++) {
                sum += qd_bf16_to_f32(xr[i]) * yf[i];
            }
            s[c][r] = sum;
        }
    }
}

#if defined(GGML_VF_WIDTH)

// the vector path, on ggml_vf_* (simd-f32.h): GGML_VF_WIDTH values per vector
#define QD_FW GGML_VF_WIDTH

enum qd_ftype { QD_F32, QD_F16, QD_BF16 };

// m <= QD_FW values of an F32 row (the rest zero)
static QD_INLINE ggml_vf qd_load_f32(const float * p, int64_t m) {
    return m == QD_FW ? ggml_vf_load(p) : ggml_vf_load_part(p, (int) m);
}

// m <= QD_FW values of a weight row from value i, as floats (the rest zero)
static QD_INLINE ggml_vf qd_load_row(enum qd_ftype ft, const char * row, int64_t i, int64_t m) {
    switch (ft) {
        case QD_F32: return qd_load_f32((const float *) row + i, m);
        case QD_F16: return m == QD_FW ? ggml_vf_load_f16((const ggml_fp16_t *) row + i)
                                       : ggml_vf_load_part_f16((const ggml_fp16_t *) row + i, (int) m);
        default:     return m == QD_FW ? ggml_vf_load_bf16((const ggml_bf16_t *) row + i)
                                       : ggml_vf_load_part_bf16((const ggml_bf16_t *) row + i, (int) m);
    }
}

// columns a step meets at once (two with 32 vector registers)
#if QD_FW >= 16
#define QD_FCOLS 2
#else
#define QD_FCOLS 1
#endif

// One step: R rows (R <= 4), x + r*xs, . C F32 columns (C <= QD_FCOLS) into
// s[c][i0 + r*is], two accumulators per result; each result is formed by the
// same operations whatever R and C are
static QD_INLINE void qd_frows_step(enum qd_ftype ft, const int R, const int C, int64_t n,
                                    const char * x, size_t xs, const float * const * y,
                                    float * const * s, int64_t i0, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    ggml_vf acc0[4][QD_FCOLS], acc1[4][QD_FCOLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc0[r][c] = ggml_vf_set1(0.0f);
            acc1[r][c] = ggml_vf_set1(0.0f);
        }
    }
    int64_t i = 0;
    for (; i + 2*QD_FW <= n; i += 2*QD_FW) {
        ggml_vf y0[QD_FCOLS], y1[QD_FCOLS];
        for (int c = 0; c < C; c++) {
            y0[c] = ggml_vf_load(y[c] + i);
            y1[c] = ggml_vf_load(y[c] + i + QD_FW);
        }
        const size_t es = ft == QD_F32 ? sizeof(float) : sizeof(ggml_fp16_t);
        for (int r = 0; r < R; r++) {
            ggml_cpu_stream_prefetch(x + r*xs + (size_t) i*es, 2*QD_FW*es, ahead);
            const ggml_vf x0 = qd_load_row(ft, x + r*xs, i,         QD_FW);
            const ggml_vf x1 = qd_load_row(ft, x + r*xs, i + QD_FW, QD_FW);
            for (int c = 0; c < C; c++) {
                acc0[r][c] = ggml_vf_fma(x0, y0[c], acc0[r][c]);
                acc1[r][c] = ggml_vf_fma(x1, y1[c], acc1[r][c]);
            }
        }
    }
    for (; i < n; i += QD_FW) {
        const int64_t m = MIN(n - i, QD_FW);
        for (int r = 0; r < R; r++) {
            const ggml_vf xv = qd_load_row(ft, x + r*xs, i, m);
            for (int c = 0; c < C; c++) {
                acc0[r][c] = ggml_vf_fma(xv, qd_load_f32(y[c] + i, m), acc0[r][c]);
            }
        }
    }
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            s[c][i0 + r*is] = ggml_vf_reduce_add(ggml_vf_add(acc0[r][c], acc1[r][c]));
        }
    }
}

// the rows of a step from four quarters of the block, so that each is one
// long sequential stream (the prefetchers follow long streams)
static QD_INLINE void qd_frows_cols(enum qd_ftype ft, const int C, int64_t n, const char * x, size_t bx,
                                    int64_t nr, const float * const * y, float * const * s) {
    const int64_t q = nr / 4;
    for (int64_t r = 0; r < q; r++) {
        qd_frows_step(ft, 4, C, n, x + r*bx, q*bx, y, s, r, q);
    }
    for (int64_t r = 4*q; r < nr; r++) {
        qd_frows_step(ft, 1, C, n, x + r*bx, bx, y, s, r, 0);
    }
}

static QD_INLINE void qd_frows(enum qd_ftype ft, int64_t n, const void * x, size_t bx, int64_t nr,
                               const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QD_FCOLS) {
        const float * const * yc = (const float * const *) y + c0;
#if QD_FCOLS > 1
        if (nc - c0 >= 2) {
            qd_frows_cols(ft, 2, n, (const char *) x, bx, nr, yc, s + c0);
            continue;
        }
#endif
        qd_frows_cols(ft, 1, n, (const char *) x, bx, nr, yc, s + c0);
    }
}

#define QD_DEFINE_FROWS(name, ft)                                                                      \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        qd_frows(ft, n, x, bx, nr, y, s, nc);                                                          \
    }

QD_DEFINE_FROWS(f32_dot__vf,  QD_F32)
QD_DEFINE_FROWS(f16_dot__vf,  QD_F16)
QD_DEFINE_FROWS(bf16_dot__vf, QD_BF16)

#else

#define f32_dot__vf  f32_dot__scalar
#define f16_dot__vf  f16_dot__scalar
#define bf16_dot__vf bf16_dot__scalar

#endif

#if defined(GGML_VF_WIDTH)
#define QD_F_ISA GGML_CPU_ISA_TAG
#else
#define QD_F_ISA "scalar"
#endif

void ggml_cpu_add_kernels_quants_dot(struct ggml_cpu_kernel_config * cfg) {
#define QD_ADD(type, f, r, isa)                                                   \
    GGML_CPU_SET_KERNEL(cfg->fast, type, dot_rows, f, isa);                      \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, dot_rows, r, "scalar")
    QD_ADD(GGML_TYPE_F32,  f32_dot__vf,      f32_dot__scalar,  QD_F_ISA);
    QD_ADD(GGML_TYPE_F16,  f16_dot__vf,      f16_dot__scalar,  QD_F_ISA);
    QD_ADD(GGML_TYPE_BF16, bf16_dot__vf,     bf16_dot__scalar, QD_F_ISA);
    QD_ADD(GGML_TYPE_Q4_0, q4_0_dot__scalar, q4_0_dot__scalar, "scalar");
    QD_ADD(GGML_TYPE_Q4_1, q4_1_dot__scalar, q4_1_dot__scalar, "scalar");
    QD_ADD(GGML_TYPE_Q5_0, q5_0_dot__scalar, q5_0_dot__scalar, "scalar");
    QD_ADD(GGML_TYPE_Q5_1, q5_1_dot__scalar, q5_1_dot__scalar, "scalar");
    QD_ADD(GGML_TYPE_Q8_0, q8_0_dot__scalar, q8_0_dot__scalar, "scalar");
#undef QD_ADD

    // the activation quantizers (Q8_K has only the reference one)
    cfg->act_fast[GGML_TYPE_Q8_0] = quantize_row_q8_0_ref;
    cfg->act_fast[GGML_TYPE_Q8_1] = quantize_row_q8_1_ref;
    cfg->act_fast[GGML_TYPE_Q8_K] = quantize_row_q8_K_ref;
    cfg->act_ref[GGML_TYPE_Q8_0]  = quantize_row_q8_0_ref;
    cfg->act_ref[GGML_TYPE_Q8_1]  = quantize_row_q8_1_ref;
    cfg->act_ref[GGML_TYPE_Q8_K]  = quantize_row_q8_K_ref;
    cfg->act_fast_isa[GGML_TYPE_Q8_0] = "scalar";
    cfg->act_fast_isa[GGML_TYPE_Q8_1] = "scalar";
    cfg->act_fast_isa[GGML_TYPE_Q8_K] = "scalar";
}

//
// ggml_vec_dot_t kernels of the type traits
//

void ggml_vec_dot_f32_row(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                          const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    *s = ggml_vec_dot_f32(n, (const float *) x, (const float *) y);
}

void ggml_vec_dot_f16_row(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                          const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    *s = ggml_vec_dot_f16(n, (const ggml_fp16_t *) x, (const ggml_fp16_t *) y);
}

void ggml_vec_dot_bf16_row(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                           const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    const ggml_bf16_t * xb = (const ggml_bf16_t *) x;
    const ggml_bf16_t * yb = (const ggml_bf16_t *) y;
#if defined(GGML_VF_WIDTH)
    ggml_vf acc0 = ggml_vf_set1(0.0f), acc1 = ggml_vf_set1(0.0f);
    int64_t i = 0;
    for (; i + 2*QD_FW <= n; i += 2*QD_FW) {
        acc0 = ggml_vf_fma(ggml_vf_load_bf16(xb + i),         ggml_vf_load_bf16(yb + i),         acc0);
        acc1 = ggml_vf_fma(ggml_vf_load_bf16(xb + i + QD_FW), ggml_vf_load_bf16(yb + i + QD_FW), acc1);
    }
    for (; i < n; i += QD_FW) {
        const int m = (int) MIN(n - i, QD_FW);
        acc0 = ggml_vf_fma(ggml_vf_load_part_bf16(xb + i, m), ggml_vf_load_part_bf16(yb + i, m), acc0);
    }
    *s = ggml_vf_reduce_add(ggml_vf_add(acc0, acc1));
#else
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        sum += qd_bf16_to_f32(xb[i]) * qd_bf16_to_f32(yb[i]);
    }
    *s = sum;
#endif
}

void ggml_cpu_vec_dot_quant(enum ggml_type type, int n, float * GGML_RESTRICT s, size_t bs,
                            const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_ASSERT(n % ggml_blck_size(type) == 0);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    const void * yc[1] = { y };
    float *      sc[1] = { s };
    ggml_cpu_type_kernels(type, false)->dot_rows(n, x, 0, 1, yc, sc, 1);
}

void ggml_vec_dot_q4_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q4_0, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q4_1_q8_1(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q4_1, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q5_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q5_0, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q5_1_q8_1(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q5_1, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q8_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q8_0, n, s, bs, x, bx, y, by, nrc);
}

// Q8_1 is an activation format: no matrix product reads it as weights, but
// the type traits offer a dot product for every type that has to_float, so
// that code walking the table (as upstream's quantization tests do) finds a
// consistent entry. Plain integer sums per block; speed does not matter here.
void ggml_vec_dot_q8_1_q8_1(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_ASSERT(n % QK8_1 == 0);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    const block_q8_1 * xb = (const block_q8_1 *) x;
    const block_q8_1 * yb = (const block_q8_1 *) y;
    float sum = 0.0f;
    for (int i = 0; i < n / QK8_1; i++) {
        int32_t acc = 0;
        for (int j = 0; j < QK8_1; j++) {
            acc += (int32_t) xb[i].qs[j] * (int32_t) yb[i].qs[j];
        }
        sum += GGML_FP16_TO_FP32(xb[i].d) * GGML_FP16_TO_FP32(yb[i].d) * (float) acc;
    }
    *s = sum;
}
