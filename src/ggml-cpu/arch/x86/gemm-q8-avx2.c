// gemm-q8-avx2.c: the x86 packers and tile kernels of the q8 panels (gemm.h),
// on AVX2, or AVX-512 where the variant has it, with VNNI where it has that.
//
// The packers decode 32 weight values per 256-bit register (nibbles, fifth
// bits, table look-ups) and transpose 8 (or 16) blocks into the interleaved
// panel layout (gemm-q8-layout.h). With VNNI the weight codes are stored
// unsigned, u = v + o, with -o*d folded into the block's constant term,
// because vpdpbusd multiplies unsigned by signed bytes; without it they are
// signed and the tiles take |a| . sign(b, a). The tiles are RM rows x RN
// columns (AVX-512: 4x3, AVX2: 2x2), accumulating each superblock's block
// dot products in integer lanes, then scaling them in float lanes.
//
// Entered in the kernel configuration over the portable ones of
// kernels/gemm-q8.c as <type>_pack__<isa> and q8p[2]_gemm__<isa>_<tile>.

#include "kernels/gemm-q8-layout.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "simd/simd-f32.h"
#include "ggml-quants.h"

#if defined(QD_SIMD)

// unsigned weight codes with offsets: the vector kernels with VNNI
#if defined(QD_SIMD) && ((defined(GGML_VEC_AVX512) && defined(__AVX512VNNI__)) || (!defined(GGML_VEC_AVX512) && defined(QD_VNNI256)))
#define Q8P_UNSIGNED 1
#endif

// the table values of 32 codes in the vector kernels' form (signed, or
// offset by 128 for the unsigned kernels), with d and c
static GGML_GEMM_INLINE __m256i q8p_table_codes(const uint8_t * qs, const int8_t * values, float dx, float * d, float * c) {
    const __m128i t = _mm_loadu_si128((const __m128i *) values);
    const __m256i v = _mm256_shuffle_epi8(_mm256_setr_m128i(t, t), qd_unpack_nibbles(qs));
    *d = dx;
#if defined(Q8P_UNSIGNED)
    *c = -128.0f * dx;
    return _mm256_xor_si256(v, _mm256_set1_epi8((char) 0x80)); // v + 128
#else
    *c = 0.0f;
    return v;
#endif
}

// the codes of 32-value block b of a row in the vector kernels' form, with d and c
static GGML_GEMM_INLINE __m256i q8p_decode(enum ggml_type type, const char * row, int64_t bi, float * d, float * c) {
    const char * blk = row + bi*qd_block_size(type);
    switch (type) {
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: {
            // the unsigned codes of the affine types suit both kernel families
            const int j = (int)(bi % (QK_K/32));
            const uint8_t * scales, * qs, * qh = NULL;
            ggml_half hd, hdmin;
            if (type == GGML_TYPE_Q4_K) {
                const block_q4_K * x = (const block_q4_K *) row + bi / (QK_K/32);
                scales = x->scales; qs = x->qs; hd = x->d; hdmin = x->dmin;
            } else {
                const block_q5_K * x = (const block_q5_K *) row + bi / (QK_K/32);
                scales = x->scales; qs = x->qs; qh = x->qh; hd = x->d; hdmin = x->dmin;
            }
            int sc, m;
            ggml_k_scale_min(j, scales, &sc, &m);
            *d = qd_h2f(hd) * (float) sc;
            *c = -qd_h2f(hdmin) * (float) m;
            const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32*(j/2)));
            __m256i u = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(4*(j % 2))), _mm256_set1_epi8(0x0F));
            if (qh != NULL) {
                const __m256i h = _mm256_loadu_si256((const __m256i *) qh);
                const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(h, _mm_cvtsi32_si128(j)), _mm256_set1_epi8(1));
                u = _mm256_or_si256(u, _mm256_slli_epi16(bit, 4));
            }
            return u;
        }
        case GGML_TYPE_IQ4_NL: {
            const block_iq4_nl * x = (const block_iq4_nl *) row + bi;
            return q8p_table_codes(x->qs, ggml_kvalues_iq4nl(), qd_h2f(x->d), d, c);
        }
        case GGML_TYPE_MXFP4: {
            const block_mxfp4 * x = (const block_mxfp4 *) row + bi;
            return q8p_table_codes(x->qs, ggml_kvalues_mxfp4(), ggml_e8m0_to_fp32_half(x->e), d, c);
        }
        case GGML_TYPE_IQ4_XS: {
            const block_iq4_xs * x = (const block_iq4_xs *) row + bi / (QK_K/32);
            const int ib = (int)(bi % (QK_K/32));
            return q8p_table_codes(x->qs + 16*ib, ggml_kvalues_iq4nl(), qd_h2f(x->d) * (float)(ggml_iq4_xs_scale(x, ib) - 32), d, c);
        }
        case GGML_TYPE_Q4_0: {
            const block_q4_0 * b = (const block_q4_0 *) blk;
            const __m256i u = qd_unpack_nibbles(b->qs);
            *d = qd_h2f(b->d);
#if defined(Q8P_UNSIGNED)
            *c = -8.0f * *d;
            return u;
#else
            *c = 0.0f;
            return _mm256_sub_epi8(u, _mm256_set1_epi8(8));
#endif
        }
        case GGML_TYPE_Q4_1: {
            const block_q4_1 * b = (const block_q4_1 *) blk;
            *d = qd_h2f(b->d);
            *c = qd_h2f(b->m);
            return qd_unpack_nibbles(b->qs);
        }
        case GGML_TYPE_Q5_0: {
            const block_q5_0 * b = (const block_q5_0 *) blk;
            const __m256i u = _mm256_or_si256(qd_unpack_nibbles(b->qs), qd_unpack_fifth_bits(b->qh));
            *d = qd_h2f(b->d);
#if defined(Q8P_UNSIGNED)
            *c = -16.0f * *d;
            return u;
#else
            *c = 0.0f;
            return _mm256_sub_epi8(u, _mm256_set1_epi8(16));
#endif
        }
        case GGML_TYPE_Q5_1: {
            const block_q5_1 * b = (const block_q5_1 *) blk;
            *d = qd_h2f(b->d);
            *c = qd_h2f(b->m);
            return _mm256_or_si256(qd_unpack_nibbles(b->qs), qd_unpack_fifth_bits(b->qh));
        }
        default: { // GGML_TYPE_Q8_0
            const block_q8_0 * b = (const block_q8_0 *) blk;
            const __m256i x = _mm256_loadu_si256((const __m256i *) b->qs);
            *d = qd_h2f(b->d);
#if defined(Q8P_UNSIGNED)
            *c = -128.0f * *d;
            return _mm256_xor_si256(x, _mm256_set1_epi8((char) 0x80)); // x + 128
#else
            *c = 0.0f;
            return x;
#endif
        }
    }
}

// the integer register of the packers and tiles (512 bits where the variant
// has AVX-512), and the unpacks of its dwords and qwords: o[0] low, o[1] high
#if defined(GGML_VEC_AVX512)
typedef __m512i q8p_ivec;
static GGML_GEMM_INLINE void q8p_unpack32(q8p_ivec a, q8p_ivec b, q8p_ivec o[2]) { o[0] = _mm512_unpacklo_epi32(a, b); o[1] = _mm512_unpackhi_epi32(a, b); }
static GGML_GEMM_INLINE void q8p_unpack64(q8p_ivec a, q8p_ivec b, q8p_ivec o[2]) { o[0] = _mm512_unpacklo_epi64(a, b); o[1] = _mm512_unpackhi_epi64(a, b); }
#else
typedef __m256i q8p_ivec;
static GGML_GEMM_INLINE void q8p_unpack32(q8p_ivec a, q8p_ivec b, q8p_ivec o[2]) { o[0] = _mm256_unpacklo_epi32(a, b); o[1] = _mm256_unpackhi_epi32(a, b); }
static GGML_GEMM_INLINE void q8p_unpack64(q8p_ivec a, q8p_ivec b, q8p_ivec o[2]) { o[0] = _mm256_unpacklo_epi64(a, b); o[1] = _mm256_unpackhi_epi64(a, b); }
#endif

// 8 x 8 transposes of dwords within each 256-bit half: rows r[j] -> columns
// (in the order 0, 4, 1, 5, 2, 6, 3, 7 of u[], lanes still to be paired)
static GGML_GEMM_INLINE void q8p_transpose_steps(const q8p_ivec r[8], q8p_ivec u[8]) {
    q8p_ivec t[8];
    for (int j = 0; j < 8; j += 2) {
        q8p_unpack32(r[j], r[j + 1], &t[j]);
    }
    q8p_unpack64(t[0], t[2], &u[0]);
    q8p_unpack64(t[1], t[3], &u[2]);
    q8p_unpack64(t[4], t[6], &u[4]);
    q8p_unpack64(t[5], t[7], &u[6]);
}

#if defined(GGML_VEC_AVX512)

// blocks 0..15 (one register each, value order) -> groups of the superblock
static GGML_GEMM_INLINE void q8p_store_codes(uint8_t * sb, const __m256i * blk) {
    __m512i r[8], u[8];
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_inserti64x4(_mm512_castsi256_si512(blk[j]), blk[j + 8], 1);
    }
    q8p_transpose_steps(r, u);
    // u[j] (j = 0..3 for rows 0-3, 4..7 for rows 4-7) holds, in 128-bit lane
    // 2h+q, the column j%4 + 4q of the rows of half h
    const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    for (int g = 0; g < 4; g++) {
        _mm512_storeu_si512(sb + (g    )*Q8P_W, _mm512_permutex2var_epi64(u[g], lo, u[g + 4]));
        _mm512_storeu_si512(sb + (g + 4)*Q8P_W, _mm512_permutex2var_epi64(u[g], hi, u[g + 4]));
    }
}

#else

// blocks 0..7 -> groups of the superblock
static GGML_GEMM_INLINE void q8p_store_codes(uint8_t * sb, const __m256i * blk) {
    __m256i u[8];
    q8p_transpose_steps(blk, u);
    for (int g = 0; g < 4; g++) {
        _mm256_storeu_si256((__m256i *)(sb + (g    )*Q8P_W), _mm256_permute2x128_si256(u[g], u[g + 4], 0x20));
        _mm256_storeu_si256((__m256i *)(sb + (g + 4)*Q8P_W), _mm256_permute2x128_si256(u[g], u[g + 4], 0x31));
    }
}

#endif

static GGML_GEMM_INLINE void q8p_pack_weights_simd(enum ggml_type type, const char * row, int64_t k, uint8_t * panel) {
    const int64_t nb  = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = panel + s*Q8P_SB;
        __m256i blk[Q8P_LANES];
        float d[Q8P_LANES], c[Q8P_LANES];
        const int64_t n = MIN(Q8P_LANES, nb - s*Q8P_LANES);
        for (int64_t l = 0; l < n; l++) {
            blk[l] = q8p_decode(type, row, s*Q8P_LANES + l, &d[l], &c[l]);
        }
        for (int64_t l = n; l < Q8P_LANES; l++) {
            blk[l] = _mm256_setzero_si256();
            d[l] = 0.0f;
            c[l] = 0.0f;
        }
        q8p_store_codes(sb, blk);
        q8p_store_scales(sb, d, c);
    }
}

// scale i of a Q3_K block, minus 32 (ggml_q3_K_scales, one at a time)
static GGML_GEMM_INLINE int q8p_q3_K_scale(const uint8_t * scales, int i) {
    const int low  = i < 8 ? scales[i] & 0x0F : scales[i - 8] >> 4;
    const int high = (scales[8 + i%4] >> (2*(i/4))) & 3;
    return (low | (high << 4)) - 32;
}

// the codes of 32-value block bi of a Q2_K, Q3_K or Q6_K row in the vector
// kernels' form (signed, or offset to unsigned for the unsigned kernels),
// with the scale and constant term of each half
static GGML_GEMM_INLINE __m256i q8p2_decode(enum ggml_type type, const char * row, int64_t bi, float * d, float * c) {
    const int j = (int)(bi % (QK_K/32));
    const int n = j / 4;
    const int m = j % 4;
    const __m256i mask2 = _mm256_set1_epi8(3);
    switch (type) {
        case GGML_TYPE_Q2_K: {
            const block_q2_K * x = (const block_q2_K *) row + bi / (QK_K/32);
            const float xd = qd_h2f(x->d), xm = qd_h2f(x->dmin);
            for (int h = 0; h < 2; h++) {
                const int sc = x->scales[2*j + h];
                d[h] =  xd * (float)(sc & 0x0F);
                c[h] = -xm * (float)(sc >> 4);
            }
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32*n));
            return _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2*m)), mask2);
        }
        case GGML_TYPE_Q3_K: {
            const block_q3_K * x = (const block_q3_K *) row + bi / (QK_K/32);
            const float xd = qd_h2f(x->d);
            const __m256i q  = _mm256_loadu_si256((const __m256i *)(x->qs + 32*n));
            const __m256i hm = _mm256_loadu_si256((const __m256i *) x->hmask);
            const __m256i lo = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2*m)), mask2);
            const __m256i hi = _mm256_and_si256(_mm256_srl_epi16(hm, _mm_cvtsi32_si128(j)), _mm256_set1_epi8(1));
            const __m256i u  = _mm256_or_si256(lo, _mm256_slli_epi16(hi, 2)); // v + 4
            for (int h = 0; h < 2; h++) {
                d[h] = xd * (float) q8p_q3_K_scale(x->scales, 2*j + h);
                c[h] = 0.0f;  // the offset is in the activation panel
            }
#if defined(Q8P_UNSIGNED)
            return u;
#else
            return _mm256_sub_epi8(u, _mm256_set1_epi8(4));
#endif
        }
        default: { // GGML_TYPE_Q6_K
            const block_q6_K * x = (const block_q6_K *) row + bi / (QK_K/32);
            const float xd = qd_h2f(x->d);
            for (int h = 0; h < 2; h++) {
                d[h] = xd * (float) x->scales[2*j + h];
                c[h] = 0.0f;  // the offset is in the activation panel
            }
            const __m256i ql = _mm256_loadu_si256((const __m256i *)(x->ql + 64*n + 32*(m % 2)));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(x->qh + 32*n));
            const __m256i lo = _mm256_and_si256(_mm256_srl_epi16(ql, _mm_cvtsi32_si128(4*(m/2))), _mm256_set1_epi8(0x0F));
            const __m256i hi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2*m)), mask2);
            const __m256i u  = _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4)); // v + 32
#if defined(Q8P_UNSIGNED)
            return u;
#else
            return _mm256_sub_epi8(u, _mm256_set1_epi8(32));
#endif
        }
    }
}

static GGML_GEMM_INLINE void q8p2_pack_weights_simd(enum ggml_type type, const char * row, int64_t k, uint8_t * panel) {
    const int64_t nb  = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = panel + s*Q8P2_SB;
        __m256i blk[Q8P_LANES];
        float d[2][Q8P_LANES], c[2][Q8P_LANES];
        const int64_t n = MIN(Q8P_LANES, nb - s*Q8P_LANES);
        for (int64_t l = 0; l < n; l++) {
            float dl[2], cl[2];
            blk[l] = q8p2_decode(type, row, s*Q8P_LANES + l, dl, cl);
            for (int h = 0; h < 2; h++) {
                d[h][l] = dl[h];
                c[h][l] = cl[h];
            }
        }
        for (int64_t l = n; l < Q8P_LANES; l++) {
            blk[l] = _mm256_setzero_si256();
            for (int h = 0; h < 2; h++) {
                d[h][l] = 0.0f;
                c[h][l] = 0.0f;
            }
        }
        q8p_store_codes(sb, blk);
        q8p2_store_scales(sb, &d[0][0], &c[0][0]);
    }
}

#define Q8P2_DEFINE_PACK(name, type)                                                                   \
    static void name(const void * row, int64_t k, void * panel) {                                      \
        GGML_ASSERT(k % 32 == 0);                                                                      \
        q8p2_pack_weights_simd(type, (const char *) row, k, (uint8_t *) panel);                        \
    }

Q8P2_DEFINE_PACK(q2_K_pack__avx2, GGML_TYPE_Q2_K)
Q8P2_DEFINE_PACK(q3_K_pack__avx2, GGML_TYPE_Q3_K)
Q8P2_DEFINE_PACK(q6_K_pack__avx2, GGML_TYPE_Q6_K)

#define Q8P_DEFINE_PACK(name, type)                                                                    \
    static void name(const void * row, int64_t k, void * panel) {                                      \
        GGML_ASSERT(k % 32 == 0);                                                                      \
        q8p_pack_weights_simd(type, (const char *) row, k, (uint8_t *) panel);                         \
    }

Q8P_DEFINE_PACK(q4_0_pack__avx2, GGML_TYPE_Q4_0)
Q8P_DEFINE_PACK(q4_1_pack__avx2, GGML_TYPE_Q4_1)
Q8P_DEFINE_PACK(q5_0_pack__avx2, GGML_TYPE_Q5_0)
Q8P_DEFINE_PACK(q5_1_pack__avx2, GGML_TYPE_Q5_1)
Q8P_DEFINE_PACK(q8_0_pack__avx2, GGML_TYPE_Q8_0)
Q8P_DEFINE_PACK(q4_K_pack__avx2, GGML_TYPE_Q4_K)
Q8P_DEFINE_PACK(q5_K_pack__avx2, GGML_TYPE_Q5_K)
Q8P_DEFINE_PACK(iq4_nl_pack__avx2, GGML_TYPE_IQ4_NL)
Q8P_DEFINE_PACK(iq4_xs_pack__avx2, GGML_TYPE_IQ4_XS)
Q8P_DEFINE_PACK(mxfp4_pack__avx2, GGML_TYPE_MXFP4)

#if defined(QD_SIMD) && defined(GGML_VEC_AVX512)

#define Q8P_RM 4
#define Q8P_RN 3

static GGML_GEMM_INLINE q8p_ivec q8p_iload(const uint8_t * p) { return _mm512_loadu_si512(p); }
static GGML_GEMM_INLINE q8p_ivec q8p_izero(void) { return _mm512_setzero_si512(); }
static GGML_GEMM_INLINE ggml_vf q8p_cvt(q8p_ivec a) { return _mm512_cvtepi32_ps(a); }
static GGML_GEMM_INLINE q8p_ivec q8p_idot(q8p_ivec acc, q8p_ivec a, q8p_ivec b) {
#if defined(Q8P_UNSIGNED)
    return _mm512_dpbusd_epi32(acc, a, b);
#else
    // signed weight codes: |a| times b with the sign of a
    const __m512i sb = _mm512_mask_sub_epi8(b, _mm512_movepi8_mask(a), _mm512_setzero_si512(), b);
    const __m512i p  = _mm512_maddubs_epi16(_mm512_abs_epi8(a), sb);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(p, _mm512_set1_epi16(1)));
#endif
}

#elif defined(QD_SIMD)

#define Q8P_RM 2
#define Q8P_RN 2

static GGML_GEMM_INLINE q8p_ivec q8p_iload(const uint8_t * p) { return _mm256_loadu_si256((const __m256i *) p); }
static GGML_GEMM_INLINE q8p_ivec q8p_izero(void) { return _mm256_setzero_si256(); }
static GGML_GEMM_INLINE ggml_vf q8p_cvt(q8p_ivec a) { return _mm256_cvtepi32_ps(a); }
static GGML_GEMM_INLINE q8p_ivec q8p_idot(q8p_ivec acc, q8p_ivec a, q8p_ivec b) {
#if defined(Q8P_UNSIGNED)
    return qd_dot_u8s8(acc, a, b);
#else
    return qd_dot_u8s8(acc, _mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
#endif
}

#endif

#if defined(Q8P_RM)

static GGML_GEMM_INLINE void q8p_tile_form(enum q8p_form form, int64_t nsb, const uint8_t * const * a, const uint8_t * const * b,
                                           float out[Q8P_RM][Q8P_RN]) {
    const int    nh       = form == Q8P_PLAIN ? 1 : 2;
    const size_t sb_bytes = (size_t) Q8P_LANES * (32 + 2*nh*sizeof(float));
    const int    gh       = 8 / nh;
    const size_t cofs     = Q8P_CODES + (size_t) nh*Q8P_LANES*sizeof(float);  // constant terms
    ggml_vf facc[Q8P_RM][Q8P_RN];
    for (int r = 0; r < Q8P_RM; r++) {
        for (int c = 0; c < Q8P_RN; c++) {
            facc[r][c] = ggml_vf_set1(0.0f);
        }
    }
    for (int64_t s = 0; s < nsb; s++) {
        const size_t off = (size_t) s * sb_bytes;
        for (int h = 0; h < nh; h++) {
            q8p_ivec iacc[Q8P_RM][Q8P_RN];
            for (int c = 0; c < Q8P_RN; c++) {
                q8p_ivec i0 = q8p_izero();
#if defined(Q8P_UNSIGNED)
                if (form == Q8P_HALVES_OFS) {
                    i0 = q8p_iload(b[c] + off + cofs + (size_t) h*Q8P_LANES*sizeof(float));
                }
#endif
                for (int r = 0; r < Q8P_RM; r++) {
                    iacc[r][c] = i0;
                }
            }
            for (int g = h*gh; g < (h + 1)*gh; g++) {
                q8p_ivec av[Q8P_RM];
                for (int r = 0; r < Q8P_RM; r++) {
                    av[r] = q8p_iload(a[r] + off + g*Q8P_W);
                }
                for (int c = 0; c < Q8P_RN; c++) {
                    q8p_ivec bv = q8p_iload(b[c] + off + g*Q8P_W);
                    GGML_GEMM_KEEP_IN_REG(bv);
                    for (int r = 0; r < Q8P_RM; r++) {
                        iacc[r][c] = q8p_idot(iacc[r][c], av[r], bv);
                    }
                }
            }
            const size_t dofs = off + Q8P_CODES + (size_t) h*Q8P_LANES*sizeof(float);
            ggml_vf ad[Q8P_RM];
            for (int r = 0; r < Q8P_RM; r++) {
                ad[r] = ggml_vf_load((const float *) (a[r] + dofs));
            }
            for (int c = 0; c < Q8P_RN; c++) {
                const ggml_vf bd = ggml_vf_load((const float *) (b[c] + dofs));
                for (int r = 0; r < Q8P_RM; r++) {
                    facc[r][c] = ggml_vf_fma(q8p_cvt(iacc[r][c]), ggml_vf_mul(ad[r], bd), facc[r][c]);
                }
            }
        }
        for (int h = 0; h < nh && form != Q8P_HALVES_OFS; h++) {
            const size_t hofs = off + cofs + (size_t) h*Q8P_LANES*sizeof(float);
            ggml_vf ac[Q8P_RM];
            for (int r = 0; r < Q8P_RM; r++) {
                ac[r] = ggml_vf_load((const float *) (a[r] + hofs));
            }
            for (int c = 0; c < Q8P_RN; c++) {
                const ggml_vf bc = ggml_vf_load((const float *) (b[c] + hofs));
                for (int r = 0; r < Q8P_RM; r++) {
                    facc[r][c] = ggml_vf_fma(ac[r], bc, facc[r][c]);
                }
            }
        }
    }
    for (int r = 0; r < Q8P_RM; r++) {
        for (int c = 0; c < Q8P_RN; c++) {
            out[r][c] = ggml_vf_reduce_add(facc[r][c]);
        }
    }
}

static void q8p_tile(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_RM][Q8P_RN]) {
    q8p_tile_form(Q8P_PLAIN, nsb, a, b, out);
}

static void q8p2_tile(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_RM][Q8P_RN]) {
    q8p_tile_form(Q8P_HALVES, nsb, a, b, out);
}

static void q8p2o_tile(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_RM][Q8P_RN]) {
    q8p_tile_form(Q8P_HALVES_OFS, nsb, a, b, out);
}

#endif

#define GGML_GEMM_WALK    q8p_walk
#define GGML_GEMM_WALK_RM Q8P_RM
#define GGML_GEMM_WALK_RN Q8P_RN
#define GGML_GEMM_WALK_T  uint8_t
#include "kernels/gemm-walk-tmpl.h"

// the walks as ggml_cpu_q8p_gemm_t
#define Q8P_DEFINE_GEMM(name, tile)                                                                    \
    static void name(int64_t nrows, int64_t ncols, int64_t nsb, const void * A, size_t lda,            \
                     const void * const * B, float * const * C, bool accumulate) {                     \
        q8p_walk(tile, nrows, ncols, nsb, (const uint8_t *) A, lda, B, C, accumulate);                 \
    }

Q8P_DEFINE_GEMM(q8p_gemm__avx2,   q8p_tile)
Q8P_DEFINE_GEMM(q8p2_gemm__avx2,  q8p2_tile)
Q8P_DEFINE_GEMM(q8p2o_gemm__avx2, q8p2o_tile)

#if defined(GGML_VEC_AVX512)
#define Q8P_TILE_ISA GGML_CPU_ISA_TAG "_4x3"
#else
#define Q8P_TILE_ISA GGML_CPU_ISA_TAG "_2x2"
#endif

void ggml_cpu_add_kernels_x86_gemm_q8(struct ggml_cpu_kernel_config * cfg) {
#define Q8P_ADD(type, pk, tile)                                                                   \
    GGML_CPU_SET_KERNEL(cfg->fast, type, pack_weights, pk,   GGML_CPU_ISA_TAG);                \
    GGML_CPU_SET_KERNEL(cfg->fast, type, gemm,         tile, Q8P_TILE_ISA)
    Q8P_ADD(GGML_TYPE_Q4_0,   q4_0_pack__avx2,   q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q4_1,   q4_1_pack__avx2,   q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q5_0,   q5_0_pack__avx2,   q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q5_1,   q5_1_pack__avx2,   q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q8_0,   q8_0_pack__avx2,   q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q4_K,   q4_K_pack__avx2,   q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q5_K,   q5_K_pack__avx2,   q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_IQ4_NL, iq4_nl_pack__avx2, q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_IQ4_XS, iq4_xs_pack__avx2, q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_MXFP4,  mxfp4_pack__avx2,  q8p_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q2_K,   q2_K_pack__avx2,   q8p2_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q3_K,   q3_K_pack__avx2,   q8p2o_gemm__avx2);
    Q8P_ADD(GGML_TYPE_Q6_K,   q6_K_pack__avx2,   q8p2o_gemm__avx2);
#undef Q8P_ADD
}

#else

void ggml_cpu_add_kernels_x86_gemm_q8(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif // QD_SIMD
