#pragma once

// attention-vec.h: the vector kernels of fused attention (ops-attention.c):
// logits of several query rows against four keys, probability-weighted sums
// of V rows for one, two or four query rows, exp of shifted logits, softcap.
//
// Each has a scalar version (*_ref) for ggml_backend_cpu_set_use_ref that is
// also the portable fallback, and one vector version written on the float
// vectors of simd-f32.h (AVX-512, AVX2 + FMA + F16C, arm64 NEON); only the
// tile shapes below depend on the width. K and V rows are F32 or F16 (the
// suffix); one kernel serves both, through a row type argument that is a
// constant wherever it is inlined, so the F16 versions convert on load and
// otherwise do exactly what the F32 ones do: a row gives the same bits
// either way.

#include "simd/vec.h"
#include "simd/vec-math.h"

#include <math.h>

// out[t] = q . k_t for four K rows of n elements (rows may repeat)
static inline void attn_dot4_ref_f32(int64_t n, const float * q, const float * const k[4], float out[4]) {
    for (int t = 0; t < 4; t++) {
        out[t] = ggml_vec_dot_f32_ref(n, q, k[t]);
    }
}

static inline void attn_dot4_ref_f16(int64_t n, const float * q, const ggml_fp16_t * const k[4], float out[4]) {
    for (int t = 0; t < 4; t++) {
        float sum = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            sum += q[i] * ggml_compute_fp16_to_fp32(k[t][i]);
        }
        out[t] = sum;
    }
}

// acc[0:n] += sum_j p[j] v_j[0:n] over the nc rows v_j at v + j*stride bytes,
// skipping those with p[j] == 0 (masked keys: their rows are never read)
static inline void attn_pv_ref_f32(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    for (int64_t j = 0; j < nc; j++) {
        if (p[j] != 0.0f) {
            ggml_vec_mad_f32_ref(n, acc, (const float *)(v + j*stride), p[j]);
        }
    }
}

static inline void attn_pv_ref_f16(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    for (int64_t j = 0; j < nc; j++) {
        if (p[j] != 0.0f) {
            ggml_vec_mad_f16_ref(n, acc, (const ggml_fp16_t *)(v + j*stride), p[j]);
        }
    }
}

// x[j] = exp(x[j] - m) for x[j] <= m; returns the sum
static inline float attn_exp_shift_sum_ref(int64_t n, float * x, float m) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        x[i] = expf(x[i] - m);
        s += x[i];
    }
    return s;
}

// x[j] = cap * tanh(x[j] * scale)
static inline void attn_softcap_ref(int64_t n, float * x, float scale, float cap) {
    for (int64_t i = 0; i < n; i++) {
        x[i] = cap * tanhf(x[i] * scale);
    }
}

#ifdef GGML_VF_WIDTH

#define ATTN_W ((int64_t) GGML_VF_WIDTH)

// Tile shapes, by the vector registers there are. The logit kernel keeps
// ATTN_QK_ROWS x 4 accumulators; the paired weighted sum keeps two rows' 4
// vectors each (AVX-512 only: with 16 registers, AVX2 would spill; arm64 is
// unmeasured and keeps the shapes it had). F16 K and V rows are read in
// place, converted on load by each row's kernels, by tiles of up to
// ATTN_IN_PLACE_ROWS rows (more rows: converted to F32 once per block); on
// AVX2, 4 rows in place (a GQA group of token generation) computed a KV cache
// 1.7x as fast as converted (Zen 3).
#if GGML_VF_WIDTH == 16
#define ATTN_QK_ROWS       4
#define ATTN_PV_PAIRS      1
#define ATTN_IN_PLACE_ROWS 4
#define ATTN_QK_KEY_PAIRS  0
#define ATTN_PV_QUADS      0
#elif GGML_VF_WIDTH == 8
// AVX2: 4 rows against 2 keys at a time (8 of the 16 registers accumulate),
// and the weighted sum of V for 4 rows at once, 2 vectors wide: each K and
// V vector is converted from F16 once for the 4 rows of a GQA group. A
// conversion (vcvtph2ps) issues at half the FMAs' rate on Zen 3 (measured:
// 0.29-0.34 ns per converted FMA against 0.18-0.23 loaded); 2 rows against 4
// keys and V per row converted each vector 2 and 4 times.
#define ATTN_QK_ROWS       4
#define ATTN_QK_KEY_PAIRS  1
#define ATTN_PV_PAIRS      0
#define ATTN_PV_QUADS      1
#define ATTN_IN_PLACE_ROWS 4
#else
#define ATTN_QK_ROWS       1
#define ATTN_QK_KEY_PAIRS  0
#define ATTN_PV_PAIRS      0
#define ATTN_PV_QUADS      0
#define ATTN_IN_PLACE_ROWS 1
#endif

// v, kept in a register. A loaded vector used by several FMAs is otherwise
// folded by GCC into each of them as a memory operand: in the logit tile,
// every q vector was loaded four times (20 loads per 16 FMAs on AVX-512),
// and the loads, not the FMAs, set the pace (measured: the logits 20%
// slower than with the per-ISA kernels, whose masked loads could not be
// folded). The same as gemm.h's GGML_GEMM_KEEP_IN_REG; x86 only (an arm64
// instruction takes no memory operand).
static GGML_VF_INLINE ggml_vf attn_in_reg(ggml_vf v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+v"(v));
#endif
    return v;
}

// lanes i.. of a K or V row, F16 rows converted
static GGML_VF_INLINE ggml_vf attn_row_load(const void * row, int64_t i, bool f16) {
    return f16 ? ggml_vf_load_f16((const ggml_fp16_t *) row + i) : ggml_vf_load((const float *) row + i);
}
static GGML_VF_INLINE ggml_vf attn_row_load_part(const void * row, int64_t i, int n, bool f16) {
    return f16 ? ggml_vf_load_part_f16((const ggml_fp16_t *) row + i, n) : ggml_vf_load_part((const float *) row + i, n);
}

// out[r][t] = q_r . k_t for nq rows q_r; the tail is a partial vector (zeros
// beyond n), so row r gets the same bits for any nq
static GGML_VF_INLINE void attn_qk_rows(int64_t n, int nq, const float * const * q, const void * const k[4], bool f16,
                                        float out[][4]) {
    ggml_vf a[ATTN_QK_ROWS][4];
    for (int r = 0; r < nq; r++) {
        for (int t = 0; t < 4; t++) {
            a[r][t] = ggml_vf_zero();
        }
    }
    int64_t i = 0;
    for (; i + ATTN_W <= n; i += ATTN_W) {
        ggml_vf kv[4];
        for (int t = 0; t < 4; t++) {
            kv[t] = attn_in_reg(attn_row_load(k[t], i, f16));
        }
        for (int r = 0; r < nq; r++) {
            const ggml_vf qv = attn_in_reg(ggml_vf_load(q[r] + i));
            for (int t = 0; t < 4; t++) {
                a[r][t] = ggml_vf_fma(kv[t], qv, a[r][t]);
            }
        }
    }
    if (i < n) {
        const int m = (int)(n - i);
        ggml_vf kv[4];
        for (int t = 0; t < 4; t++) {
            kv[t] = attn_row_load_part(k[t], i, m, f16);
        }
        for (int r = 0; r < nq; r++) {
            const ggml_vf qv = ggml_vf_load_part(q[r] + i, m);
            for (int t = 0; t < 4; t++) {
                a[r][t] = ggml_vf_fma(kv[t], qv, a[r][t]);
            }
        }
    }
    for (int r = 0; r < nq; r++) {
        ggml_vf_reduce_add4(a[r][0], a[r][1], a[r][2], a[r][3], out[r]);
    }
}

// The same sums as attn_qk_rows (the same bits for every (r, t)), in two
// passes over the key pairs t = 0, 1 and 2, 3: 2*nq accumulators, each K
// vector loaded (converted) once for the nq rows
static GGML_VF_INLINE void attn_qk_rows_pairs(int64_t n, int nq, const float * const * q, const void * const k[4],
                                              bool f16, float out[][4]) {
    ggml_vf a[ATTN_QK_ROWS][4];
    for (int t0 = 0; t0 < 4; t0 += 2) {
        ggml_vf b[ATTN_QK_ROWS][2];
        for (int r = 0; r < nq; r++) {
            b[r][0] = ggml_vf_zero();
            b[r][1] = ggml_vf_zero();
        }
        int64_t i = 0;
        for (; i + ATTN_W <= n; i += ATTN_W) {
            const ggml_vf k0 = attn_in_reg(attn_row_load(k[t0],     i, f16));
            const ggml_vf k1 = attn_in_reg(attn_row_load(k[t0 + 1], i, f16));
            for (int r = 0; r < nq; r++) {
                const ggml_vf qv = attn_in_reg(ggml_vf_load(q[r] + i));
                b[r][0] = ggml_vf_fma(k0, qv, b[r][0]);
                b[r][1] = ggml_vf_fma(k1, qv, b[r][1]);
            }
        }
        if (i < n) {
            const int m = (int)(n - i);
            const ggml_vf k0 = attn_row_load_part(k[t0],     i, m, f16);
            const ggml_vf k1 = attn_row_load_part(k[t0 + 1], i, m, f16);
            for (int r = 0; r < nq; r++) {
                const ggml_vf qv = ggml_vf_load_part(q[r] + i, m);
                b[r][0] = ggml_vf_fma(k0, qv, b[r][0]);
                b[r][1] = ggml_vf_fma(k1, qv, b[r][1]);
            }
        }
        for (int r = 0; r < nq; r++) {
            a[r][t0]     = b[r][0];
            a[r][t0 + 1] = b[r][1];
        }
    }
    for (int r = 0; r < nq; r++) {
        ggml_vf_reduce_add4(a[r][0], a[r][1], a[r][2], a[r][3], out[r]);
    }
}

// out[t] = q . k_t for one row q, every step a partial load (where those
// are masked loads, AVX-512). For F16 rows read in place (decode without
// head groups) this runs at the pace of the per-ISA kernel it replaces,
// whose loads were all masked; attn_qk_rows' full-width steps (vcvtph2ps
// from memory) made the whole tile 20-30% slower, the time showing up in
// the stalls of the V rows' loads that follow (measured on Zen 4, 32 heads
// of 128, 4096 keys: 2.9 -> 3.7 ms per call). Same bits as attn_qk_rows.
static GGML_VF_INLINE void attn_dot4_part(int64_t n, const float * q, const void * const k[4], bool f16,
                                          float out[4]) {
    ggml_vf a[4] = { ggml_vf_zero(), ggml_vf_zero(), ggml_vf_zero(), ggml_vf_zero() };
    for (int64_t i = 0; i < n; i += ATTN_W) {
        const int m = (int) MIN(ATTN_W, n - i);
        const ggml_vf qv = attn_in_reg(ggml_vf_load_part(q + i, m));
        for (int t = 0; t < 4; t++) {
            a[t] = ggml_vf_fma(attn_row_load_part(k[t], i, m, f16), qv, a[t]);
        }
    }
    ggml_vf_reduce_add4(a[0], a[1], a[2], a[3], out);
}

// acc[0 : NV*W] += sum_j p[j] v_j[0 : NV*W]: NV independent chains, acc in
// registers over all keys (NV is 4 or 8, a constant where inlined)
static GGML_VF_INLINE void attn_pv_block(int64_t nc, const float * p, const char * v, size_t stride, bool f16,
                                         int nv, float * acc) {
    ggml_vf a[8];
    for (int q = 0; q < nv; q++) {
        a[q] = ggml_vf_load(acc + q*ATTN_W);
    }
    for (int64_t j = 0; j < nc; j++) {
        if (p[j] == 0.0f) {
            continue;
        }
        const ggml_vf pj = ggml_vf_set1(p[j]);
        const char * vj = v + j*stride;
        for (int q = 0; q < nv; q++) {
            a[q] = ggml_vf_fma(attn_row_load(vj, q*ATTN_W, f16), pj, a[q]);
        }
    }
    for (int q = 0; q < nv; q++) {
        ggml_vf_store(acc + q*ATTN_W, a[q]);
    }
}

// the same on 4W elements for two rows of p and acc, loading V once; a row
// whose p is 0 is left alone, as in the one-row kernel
static GGML_VF_INLINE void attn_pv_block4x2(int64_t nc, const float * p0, const float * p1, const char * v,
                                            size_t stride, bool f16, float * acc0, float * acc1) {
    ggml_vf a[4], b[4];
    for (int q = 0; q < 4; q++) {
        a[q] = ggml_vf_load(acc0 + q*ATTN_W);
        b[q] = ggml_vf_load(acc1 + q*ATTN_W);
    }
    for (int64_t j = 0; j < nc; j++) {
        if (p0[j] == 0.0f && p1[j] == 0.0f) {
            continue;
        }
        const char * vj = v + j*stride;
        ggml_vf vv[4];
        for (int q = 0; q < 4; q++) {
            vv[q] = attn_in_reg(attn_row_load(vj, q*ATTN_W, f16));
        }
        if (p0[j] != 0.0f) {
            const ggml_vf w0 = ggml_vf_set1(p0[j]);
            for (int q = 0; q < 4; q++) {
                a[q] = ggml_vf_fma(vv[q], w0, a[q]);
            }
        }
        if (p1[j] != 0.0f) {
            const ggml_vf w1 = ggml_vf_set1(p1[j]);
            for (int q = 0; q < 4; q++) {
                b[q] = ggml_vf_fma(vv[q], w1, b[q]);
            }
        }
    }
    for (int q = 0; q < 4; q++) {
        ggml_vf_store(acc0 + q*ATTN_W, a[q]);
        ggml_vf_store(acc1 + q*ATTN_W, b[q]);
    }
}

// acc[0:n] += sum_j p[j] v_j[0:n] for n <= W; keys alternate between four
// accumulators so that the chains overlap
static GGML_VF_INLINE void attn_pv_part(int64_t nc, const float * p, const char * v, size_t stride, bool f16,
                                        int n, float * acc) {
    ggml_vf a[4] = { ggml_vf_load_part(acc, n), ggml_vf_zero(), ggml_vf_zero(), ggml_vf_zero() };
    for (int64_t j = 0; j < nc; j++) {
        if (p[j] != 0.0f) {
            a[j & 3] = ggml_vf_fma(attn_row_load_part(v + j*stride, 0, n, f16), ggml_vf_set1(p[j]), a[j & 3]);
        }
    }
    ggml_vf_store_part(acc, ggml_vf_add(ggml_vf_add(a[0], a[1]), ggml_vf_add(a[2], a[3])), n);
}

// acc[0:n] += sum_j p[j] v_j[0:n]. Elements below a multiple of 4W take the
// keys in order (whichever block), the rest alternate (attn_pv_part): a row
// gives the same bits alone or paired (attn_pv2_rows).
static GGML_VF_INLINE void attn_pv_row(int64_t nc, const float * p, const char * v, size_t stride, bool f16,
                                       int64_t n, float * acc) {
    const size_t esize = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
    int64_t d = 0;
    for (; d + 8*ATTN_W <= n; d += 8*ATTN_W) {
        attn_pv_block(nc, p, v + d*esize, stride, f16, 8, acc + d);
    }
    if (d + 4*ATTN_W <= n) {
        attn_pv_block(nc, p, v + d*esize, stride, f16, 4, acc + d);
        d += 4*ATTN_W;
    }
    for (; d < n; d += ATTN_W) {
        attn_pv_part(nc, p, v + d*esize, stride, f16, (int) MIN(ATTN_W, n - d), acc + d);
    }
}

static GGML_VF_INLINE void attn_pv2_rows(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,
                                         bool f16, int64_t n, float * acc0, float * acc1) {
#if ATTN_PV_PAIRS
    const size_t esize = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
    int64_t d = 0;
    for (; d + 4*ATTN_W <= n; d += 4*ATTN_W) {
        attn_pv_block4x2(nc, p0, p1, v + d*esize, stride, f16, acc0 + d, acc1 + d);
    }
    for (; d < n; d += ATTN_W) {
        attn_pv_part(nc, p0, v + d*esize, stride, f16, (int) MIN(ATTN_W, n - d), acc0 + d);
        attn_pv_part(nc, p1, v + d*esize, stride, f16, (int) MIN(ATTN_W, n - d), acc1 + d);
    }
#else
    attn_pv_row(nc, p0, v, stride, f16, n, acc0);
    attn_pv_row(nc, p1, v, stride, f16, n, acc1);
#endif
}

#if ATTN_PV_QUADS

// acc_r[0:n] += sum_j p_r[j] v_j[0:n] for the four rows r (p_r at p + r*ps,
// acc_r at acc + r*as), 2W elements at a time: each V vector loaded once for
// the four. No p_r[j] may be 0 (every V row is read: attn_none_zero). Per
// row the same operations as attn_pv_row (elements below a multiple of 4W
// take the keys in order, the rest attn_pv_part): the same bits.
static GGML_VF_INLINE void attn_pv4_rows(int64_t nc, const float * p, int64_t ps, const char * v, size_t stride,
                                         bool f16, int64_t n, float * acc, int64_t as) {
    const size_t esize = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
    const int64_t n4 = n / (4*ATTN_W) * (4*ATTN_W);
    for (int64_t d = 0; d < n4; d += 2*ATTN_W) {
        ggml_vf a[4][2];
        for (int r = 0; r < 4; r++) {
            a[r][0] = ggml_vf_load(acc + r*as + d);
            a[r][1] = ggml_vf_load(acc + r*as + d + ATTN_W);
        }
        const char * vd = v + (size_t) d*esize;
        for (int64_t j = 0; j < nc; j++) {
            const char * vj = vd + j*stride;
            const ggml_vf v0 = attn_in_reg(attn_row_load(vj, 0,      f16));
            const ggml_vf v1 = attn_in_reg(attn_row_load(vj, ATTN_W, f16));
            for (int r = 0; r < 4; r++) {
                const ggml_vf w = ggml_vf_set1(p[r*ps + j]);
                a[r][0] = ggml_vf_fma(v0, w, a[r][0]);
                a[r][1] = ggml_vf_fma(v1, w, a[r][1]);
            }
        }
        for (int r = 0; r < 4; r++) {
            ggml_vf_store(acc + r*as + d,          a[r][0]);
            ggml_vf_store(acc + r*as + d + ATTN_W, a[r][1]);
        }
    }
    for (int64_t d = n4; d < n; d += ATTN_W) {
        for (int r = 0; r < 4; r++) {
            attn_pv_part(nc, p + r*ps, v + (size_t) d*esize, stride, f16, (int) MIN(ATTN_W, n - d), acc + r*as + d);
        }
    }
}

// true if none of p_r[0:nc] (rows r < nr at p + r*ps, each >= 0 or NaN) is
// 0. x86's max returns its second operand where either is NaN: NaN lanes are
// passed over.
static GGML_VF_INLINE bool attn_none_zero(int64_t nc, const float * p, int64_t ps, int nr) {
    ggml_vf m = ggml_vf_set1(-INFINITY);
    for (int r = 0; r < nr; r++) {
        const float * pr = p + r*ps;
        int64_t j = 0;
        for (; j + ATTN_W <= nc; j += ATTN_W) {
            m = ggml_vf_max(ggml_vf_sub(ggml_vf_zero(), ggml_vf_load(pr + j)), m);
        }
        for (; j < nc; j++) {
            if (pr[j] == 0.0f) {
                return false;
            }
        }
    }
    return ggml_vf_reduce_max(m) < 0.0f;
}

#endif // ATTN_PV_QUADS

// the entry points of ops-attention.c, per row type

static inline void attn_dot4_f32(int64_t n, const float * q, const float * const k[4], float out[4]) {
    const void * const kk[4] = { k[0], k[1], k[2], k[3] };
    attn_qk_rows(n, 1, &q, kk, false, (float (*)[4]) out);
}
static inline void attn_dot4_f16(int64_t n, const float * q, const ggml_fp16_t * const k[4], float out[4]) {
    const void * const kk[4] = { k[0], k[1], k[2], k[3] };
#if GGML_VF_WIDTH == 16
    attn_dot4_part(n, q, kk, true, out);
#else
    attn_qk_rows(n, 1, &q, kk, true, (float (*)[4]) out);
#endif
}
// nq (> 1) rows of q, ATTN_QK_ROWS pointers (the last repeated)
static GGML_VF_INLINE void attn_qk_any(int64_t n, int nq, const float * const q[ATTN_QK_ROWS], const void * const k[4],
                                       bool f16, float out[ATTN_QK_ROWS][4]) {
#if ATTN_QK_KEY_PAIRS
    if (nq <= 2) {
        attn_qk_rows(n, 2, q, k, f16, out);
        return;
    }
    attn_qk_rows_pairs(n, ATTN_QK_ROWS, q, k, f16, out);
#else
    (void) nq;
    attn_qk_rows(n, ATTN_QK_ROWS, q, k, f16, out);
#endif
}
static inline void attn_qk_f32(int64_t n, int nq, const float * const q[ATTN_QK_ROWS], const float * const k[4],
                               float out[ATTN_QK_ROWS][4]) {
    const void * const kk[4] = { k[0], k[1], k[2], k[3] };
    attn_qk_any(n, nq, q, kk, false, out);
}
static inline void attn_qk_f16(int64_t n, int nq, const float * const q[ATTN_QK_ROWS], const ggml_fp16_t * const k[4],
                               float out[ATTN_QK_ROWS][4]) {
    const void * const kk[4] = { k[0], k[1], k[2], k[3] };
    attn_qk_any(n, nq, q, kk, true, out);
}
static inline void attn_pv_f32(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    attn_pv_row(nc, p, v, stride, false, n, acc);
}
static inline void attn_pv_f16(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    attn_pv_row(nc, p, v, stride, true, n, acc);
}
static inline void attn_pv2_f32(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,
                                int64_t n, float * acc0, float * acc1) {
    attn_pv2_rows(nc, p0, p1, v, stride, false, n, acc0, acc1);
}
static inline void attn_pv2_f16(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,
                                int64_t n, float * acc0, float * acc1) {
    attn_pv2_rows(nc, p0, p1, v, stride, true, n, acc0, acc1);
}
#if ATTN_PV_QUADS
static inline void attn_pv4_f32(int64_t nc, const float * p, int64_t ps, const char * v, size_t stride, int64_t n,
                                float * acc, int64_t as) {
    attn_pv4_rows(nc, p, ps, v, stride, false, n, acc, as);
}
static inline void attn_pv4_f16(int64_t nc, const float * p, int64_t ps, const char * v, size_t stride, int64_t n,
                                float * acc, int64_t as) {
    attn_pv4_rows(nc, p, ps, v, stride, true, n, acc, as);
}
#endif

// exp(d) by vec-math.h's exp, with results below FLT_MIN (d < ln FLT_MIN)
// taken as 0, as the per-ISA kernels did: no subnormal weights in the
// weighted sum of V rows, and a 0 skips the V row. NaN is kept.
static inline ggml_vf attn_exp_flushed(ggml_vf d) {
    return ggml_vf_select(ggml_vf_lt(d, ggml_vf_set1(-87.33654f)), ggml_vf_zero(), ggml_vf_exp(d));
}

// x[j] = exp(x[j] - m) for x[j] <= m; returns the sum
static inline float attn_exp_shift_sum(int64_t n, float * x, float m) {
    const ggml_vf mv = ggml_vf_set1(m);
    ggml_vf sum = ggml_vf_zero();
    int64_t i = 0;
    for (; i + ATTN_W <= n; i += ATTN_W) {
        const ggml_vf e = attn_exp_flushed(ggml_vf_sub(ggml_vf_load(x + i), mv));
        ggml_vf_store(x + i, e);
        sum = ggml_vf_add(sum, e);
    }
    float s = ggml_vf_reduce_add(sum);
    if (i < n) {
        ggml_vf_store_part(x + i, attn_exp_flushed(ggml_vf_sub(ggml_vf_load_part(x + i, (int)(n - i)), mv)), (int)(n - i));
        for (; i < n; i++) {
            s += x[i];
        }
    }
    return s;
}

// x[j] = cap * tanh(x[j] * scale), by vec-math.h's tanh
static inline void attn_softcap(int64_t n, float * x, float scale, float cap) {
    const ggml_vf sv = ggml_vf_set1(scale);
    const ggml_vf cv = ggml_vf_set1(cap);
    int64_t i = 0;
    for (; i + ATTN_W <= n; i += ATTN_W) {
        ggml_vf_store(x + i, ggml_vf_mul(cv, ggml_vf_tanh(ggml_vf_mul(ggml_vf_load(x + i), sv))));
    }
    if (i < n) {
        const int m = (int)(n - i);
        ggml_vf_store_part(x + i, ggml_vf_mul(cv, ggml_vf_tanh(ggml_vf_mul(ggml_vf_load_part(x + i, m), sv))), m);
    }
}

#else // portable

#define ATTN_QK_ROWS       1
#define ATTN_PV_QUADS      0
#define ATTN_IN_PLACE_ROWS 1

static inline void attn_qk_f32(int64_t n, int nq, const float * const q[1], const float * const k[4], float out[1][4]) {
    (void) nq;
    attn_dot4_ref_f32(n, q[0], k, out[0]);
}
static inline void attn_qk_f16(int64_t n, int nq, const float * const q[1], const ggml_fp16_t * const k[4], float out[1][4]) {
    (void) nq;
    attn_dot4_ref_f16(n, q[0], k, out[0]);
}
static inline void attn_dot4_f32(int64_t n, const float * q, const float * const k[4], float out[4]) {
    attn_dot4_ref_f32(n, q, k, out);
}
static inline void attn_dot4_f16(int64_t n, const float * q, const ggml_fp16_t * const k[4], float out[4]) {
    attn_dot4_ref_f16(n, q, k, out);
}
static inline void attn_pv_f32(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    attn_pv_ref_f32(nc, p, v, stride, n, acc);
}
static inline void attn_pv_f16(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    attn_pv_ref_f16(nc, p, v, stride, n, acc);
}
static inline void attn_pv2_f32(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,
                                int64_t n, float * acc0, float * acc1) {
    attn_pv_ref_f32(nc, p0, v, stride, n, acc0);
    attn_pv_ref_f32(nc, p1, v, stride, n, acc1);
}
static inline void attn_pv2_f16(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,
                                int64_t n, float * acc0, float * acc1) {
    attn_pv_ref_f16(nc, p0, v, stride, n, acc0);
    attn_pv_ref_f16(nc, p1, v, stride, n, acc1);
}
static inline float attn_exp_shift_sum(int64_t n, float * x, float m) {
    return attn_exp_shift_sum_ref(n, x, m);
}
static inline void attn_softcap(int64_t n, float * x, float scale, float cap) {
    attn_softcap_ref(n, x, scale, cap);
}

#endif
