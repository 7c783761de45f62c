// quants-dot-k-avx2.c: the x86 row dots of the K-quants (Q2_K .. Q6_K) .
// Q8_K rows (quants-dot-k.c explains the arithmetic; its portable path is
// the reference these follow). 256-bit code for the AVX2 variants and, for
// Q4_K, Q5_K and Q6_K, a 512-bit step where the variant has AVX-512. The two paths
// differ only in the order of the float sums of a row. The Q4_K, Q5_K and
// Q6_K paths (generation: they must keep up with the memory) meet several
// rows and up to 4 activation columns per pass, sharing the activation loads
// between rows and the decoded weights between columns.

#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "simd/stream-prefetch.h"
#include "ggml-quants.h"

#if defined(QD_SIMD)

// sum over 16-bit lanes of (unsigned u . signed y pairs) * scale, as int32 lanes
static QD_INLINE __m256i qk_scaled_dot(__m256i u, __m256i y, __m256i scale16) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), scale16);
}

// Q4_K, Q5_K and Q6_K: a step meets R weight rows (x + r*xs) and C
// activation columns (R*C <= 4) superblock by superblock. The activation
// loads and group sums are shared by the R rows, the decoded weights by the
// C columns. The scales of a weight superblock are decoded once into int16
// lanes and broadcast to the groups by byte shuffles; the minimums (Q4_K,
// Q5_K) and the code offset (Q6_K) meet the activations' group sums (bsums)
// in one int16 multiply-add. Each result s[c][i0 + r*is] is formed by the
// same operations whatever R and C are, so whatever the row count and the
// threads' chunks.

// rows of a step meeting one column: the accumulators and the per-row
// scales of 4 rows need the 32 vector registers of AVX-512
#if defined(GGML_VEC_AVX512)
#define QK_STEP_ROWS 4
#else
#define QK_STEP_ROWS 2
#endif
#define QK_MAX_COLS 4

// a column's activations laid out for the AVX-512 Q4_K / Q5_K step
// (qk_relay_y): its values, and the sums of its groups of 32
struct qk_relaid {
    const int8_t *  q;
    const int16_t * gsum;
};

// rows of a step meeting one column: four streams of weights per thread.
// With two (AVX2 took two rows a step before), the products of Q4_K and
// Q6_K weights read 5-9% slower, paired with a plain read of the same bytes
// (2 threads, Zen 3), than with four; the step then takes its rows two at a
// time within each superblock.
#define QK_COL_ROWS 4

// byte-shuffle control broadcasting int16 lane j0 to the low 128-bit half
// and lane j1 to the high half (within each half)
static QD_INLINE __m256i qk_bcast16(__m256i v, int j0, int j1) {
    const __m256i ctrl = _mm256_setr_m128i(_mm_set1_epi16((short)(0x0100 + 0x0202*j0)),
                                           _mm_set1_epi16((short)(0x0100 + 0x0202*j1)));
    return _mm256_shuffle_epi8(v, ctrl);
}

// the 12 packed bytes of 6-bit scales and minimums of the Q4_K / Q5_K
// superblocks at p0 and p1 (16 readable bytes each) as bytes: 8 scales then 8
// minimums, p0's in the low 128-bit half and p1's in the high one. With a,
// b, c the three 32-bit words: scales 0..3 = a & 63, minimums 0..3 = b & 63;
// scales 4..7 are the low nibbles of c with the top two bits of a, minimums
// 4..7 the high nibbles of c with the top two bits of b.
static QD_INLINE __m256i qk_scales_mins_bytes(const uint8_t * p0, const uint8_t * p1) {
    const __m256i v    = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) p0)),
                                                 _mm_loadu_si128((const __m128i *) p1), 1);
    const __m256i acbc = _mm256_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));   // a c b c
    const __m256i aabb = _mm256_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));   // a a b b
    const __m256i low  = _mm256_and_si256(_mm256_srlv_epi32(acbc, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4)),
                                          _mm256_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f,
                                                            0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m256i top  = _mm256_and_si256(_mm256_srli_epi32(aabb, 2),
                                          _mm256_setr_epi32(0, 0x30303030, 0, 0x30303030, 0, 0x30303030, 0, 0x30303030));
    return _mm256_or_si256(low, top);
}

// the scales and minimums of one superblock (p) as 8 int16 each: the scales
// returned, the minimums in *mn
static QD_INLINE __m128i qk_scales_mins_45(const uint8_t * p, __m128i * mn) {
    const __m256i w = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(qk_scales_mins_bytes(p, p)));
    *mn = _mm256_extracti128_si256(w, 1);
    return _mm256_castsi256_si128(w);
}

// the sums of the activation groups of 32 (8 int16) of a Q8_K block
static QD_INLINE __m128i qk_bsums32(const block_q8_K * yb) {
    const __m256i bs = _mm256_loadu_si256((const __m256i *) yb->bsums);
    return _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
}

// the two halves d, dmin that start a Q4_K / Q5_K block as floats (lanes 0, 1)
static QD_INLINE __m128 qk_d_dmin(const ggml_half * d) {
    uint32_t v;
    memcpy(&v, d, sizeof(v));
    return _mm_cvtph_ps(_mm_cvtsi32_si128((int) v));
}

#if !defined(GGML_VEC_AVX512)

// The float sums of Q4_K / Q5_K rows: 4 float lanes per row (and column),
// lane i taking at each superblock its int32 sum of the values 4i .. 4i + 3
// and 16 + 4i .. 16 + 4i + 3 of every group (exact in float: below 2^24)
// times d*dy, less its sum of minimums times group sums (groups 2i, 2i + 1)
// times dmin*dy; then (l0 + l2) + (l1 + l3). Every step below forms each
// lane by these operations, so every row gets the same bits whatever step
// (rows and columns at once) computes it.

// acc + isum * fd - msum * fm, lane by lane
static QD_INLINE __m128 qk_accumulate(__m128 acc, __m128i isum, __m128 fd, __m128i msum, __m128 fm) {
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), fd, acc);
    return _mm_fnmadd_ps(_mm_cvtepi32_ps(msum), fm, acc);
}

// the sum of a row's 4 lanes
static QD_INLINE float qk_hsum4(__m128 v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    v = _mm_add_ss(v, _mm_movehdup_ps(v));
    return _mm_cvtss_f32(v);
}

// the 64 values 64h .. 64h + 63 of a Q4_K / Q5_K superblock: groups 2h and
// 2h + 1 (low and high nibbles of qs[32h ..]; the fifth bits are bits 2h and
// 2h + 1 of qh, which arrives here shifted right by 2h)
static QD_INLINE void qk_codes_45(const uint8_t * qs, const bool q5, __m256i qh, int h, __m256i * lo, __m256i * hi) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i q  = _mm256_loadu_si256((const __m256i *)(qs + 32*h));
    *lo = _mm256_and_si256(q, m4);
    *hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    if (q5) {
        // bit 0 (1) of each byte to bit 4; the 16-bit shifts bring no other bit there
        const __m256i m10 = _mm256_set1_epi8(0x10);
        *lo = _mm256_or_si256(*lo, _mm256_and_si256(_mm256_slli_epi16(qh, 4), m10));
        *hi = _mm256_or_si256(*hi, _mm256_and_si256(_mm256_slli_epi16(qh, 3), m10));
    }
}

static QD_INLINE void qk_step_45(const bool q5, const int R, const int C, int64_t nb, const char * x, size_t xs,
                                 const block_q8_K * const * y, float * const * s, int64_t i0, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const size_t bsx = q5 ? sizeof(block_q5_K) : sizeof(block_q4_K);
    __m128 acc[QK_STEP_ROWS][QK_MAX_COLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc[r][c] = _mm_setzero_ps();
        }
    }
    for (int64_t b = 0; b < nb; b++) {
        __m128i ysum[QK_MAX_COLS];
        float   dy[QK_MAX_COLS];
        for (int c = 0; c < C; c++) {
            ysum[c] = qk_bsums32(y[c] + b);
            dy[c]   = y[c][b].d;
        }
        const uint8_t * qs[QK_STEP_ROWS];
        __m256i qh[QK_STEP_ROWS], sc[QK_STEP_ROWS], isum[QK_STEP_ROWS][QK_MAX_COLS];
        __m128i msum[QK_STEP_ROWS][QK_MAX_COLS];
        __m128  dm[QK_STEP_ROWS];   // d, dmin of the weight block
        for (int r = 0; r < R; r++) {
            const char * blk = x + r*xs + b*bsx;
            ggml_cpu_stream_prefetch(blk, bsx, ahead);
            __m128i mn;
            if (q5) {
                const block_q5_K * xb = (const block_q5_K *) blk;
                sc[r] = _mm256_broadcastsi128_si256(qk_scales_mins_45(xb->scales, &mn));
                qs[r] = xb->qs;
                qh[r] = _mm256_loadu_si256((const __m256i *) xb->qh);
                dm[r] = qk_d_dmin(&xb->d);
            } else {
                const block_q4_K * xb = (const block_q4_K *) blk;
                sc[r] = _mm256_broadcastsi128_si256(qk_scales_mins_45(xb->scales, &mn));
                qs[r] = xb->qs;
                qh[r] = _mm256_setzero_si256();
                dm[r] = qk_d_dmin(&xb->d);
            }
            for (int c = 0; c < C; c++) {
                msum[r][c] = _mm_madd_epi16(mn, ysum[c]);
                isum[r][c] = _mm256_setzero_si256();
            }
        }
        for (int h = 0; h < QK_K/64; h++) {
            __m256i y0[QK_MAX_COLS], y1[QK_MAX_COLS];
            for (int c = 0; c < C; c++) {
                y0[c] = _mm256_loadu_si256((const __m256i *)(y[c][b].qs + 64*h));
                y1[c] = _mm256_loadu_si256((const __m256i *)(y[c][b].qs + 64*h + 32));
            }
            for (int r = 0; r < R; r++) {
                __m256i lo, hi;
                qk_codes_45(qs[r], q5, qh[r], h, &lo, &hi);
                if (q5) {
                    qh[r] = _mm256_srli_epi16(qh[r], 2);
                }
                const __m256i s0 = qk_bcast16(sc[r], 2*h, 2*h);
                const __m256i s1 = qk_bcast16(sc[r], 2*h + 1, 2*h + 1);
                for (int c = 0; c < C; c++) {
                    // codes <= 31, |y| <= 128: the byte-pair sums fit in int16
                    const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0[c]), s0);
                    const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1[c]), s1);
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_add_epi32(p0, p1));
                }
            }
        }
        for (int r = 0; r < R; r++) {
            for (int c = 0; c < C; c++) {
                // the int32 lanes of the values 0..15 and 16..31 of each group side by side
                const __m128i i4 = _mm_add_epi32(_mm256_castsi256_si128(isum[r][c]), _mm256_extracti128_si256(isum[r][c], 1));
                const __m128  f  = _mm_mul_ps(dm[r], _mm_set1_ps(dy[c]));
                acc[r][c] = qk_accumulate(acc[r][c], i4, _mm_broadcastss_ps(f), msum[r][c], _mm_permute_ps(f, 0x55));
            }
        }
    }
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            s[c][i0 + r*is] = qk_hsum4(acc[r][c]);
        }
    }
}

// Q4_K and Q5_K against one activation column (generation): two rows in one
// register, row 0 in the low 128-bit half and row 1 in the high one, so that
// the activations are loaded once for both (128-bit broadcasts), the group
// scales of both rows come from one byte shuffle, and the values 0..15 and
// 16..31 of a group, under the same scale, are added in int16 before it (pair
// sums of codes <= 31 and |y| <= 128: |sum| <= 15872). The lanes of the step
// above, bit for bit.

// byte-shuffle controls: byte j of each half zero-extended to all 16-bit
// lanes (the scale of group j, j < 8), and bytes 8..15 zero-extended to 16
// bits (the minimums)
#define QK_Z 0x80
#define QK_BC(j) { j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, \
                   j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z, j, QK_Z }
static const uint8_t qk_scale_ctrl[9][32] __attribute__((aligned(32))) = {
    QK_BC(0), QK_BC(1), QK_BC(2), QK_BC(3), QK_BC(4), QK_BC(5), QK_BC(6), QK_BC(7),
    { 8, QK_Z, 9, QK_Z, 10, QK_Z, 11, QK_Z, 12, QK_Z, 13, QK_Z, 14, QK_Z, 15, QK_Z,
      8, QK_Z, 9, QK_Z, 10, QK_Z, 11, QK_Z, 12, QK_Z, 13, QK_Z, 14, QK_Z, 15, QK_Z },
};
#undef QK_BC
#undef QK_Z

static QD_INLINE __m256i qk_scale_ctrl_of(int j) {
    return _mm256_load_si256((const __m256i *) qk_scale_ctrl[j]);
}

static QD_INLINE __m256i qk_bcast_y(const int8_t * y) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) y));
}

// the scaled int32 lanes of the Q4_K / Q5_K superblocks with codes q0 (low
// half) and q1 (high half), fifth bits h0 and h1 (Q5_K), scale bytes sm,
// against the activations y
static QD_INLINE __m256i qk45_isum_pair(const bool q5, const uint8_t * q0, const uint8_t * q1,
                                        const uint8_t * h0, const uint8_t * h1, __m256i sm, const int8_t * y) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i ha = _mm256_setzero_si256(), hb = _mm256_setzero_si256();
    if (q5) {
        ha = qd_load_halves(h0, h1);             // the fifth bits of values 0..15 of every group
        hb = qd_load_halves(h0 + 16, h1 + 16);   // of values 16..31
    }
    __m256i isum = _mm256_setzero_si256();
    // unrolled: the shifts of qd_move_bit are constants then (GCC keeps the
    // loop of Q5_K otherwise, with a jump table for them)
#if defined(__GNUC__)
#pragma GCC unroll 4
#endif
    for (int h = 0; h < QK_K/64; h++) {
        const __m256i a = qd_load_halves(q0 + 32*h, q1 + 32*h);             // values 0..15 of groups 2h, 2h + 1
        const __m256i b = qd_load_halves(q0 + 32*h + 16, q1 + 32*h + 16);   // values 16..31
        __m256i al = _mm256_and_si256(a, m4), ah = _mm256_and_si256(_mm256_srli_epi16(a, 4), m4);
        __m256i bl = _mm256_and_si256(b, m4), bh = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
        if (q5) {
            // group 2h takes bit 2h of qh, group 2h + 1 bit 2h + 1
            al = _mm256_or_si256(al, qd_move_bit(ha, 2*h, 4));
            ah = _mm256_or_si256(ah, qd_move_bit(ha, 2*h + 1, 4));
            bl = _mm256_or_si256(bl, qd_move_bit(hb, 2*h, 4));
            bh = _mm256_or_si256(bh, qd_move_bit(hb, 2*h + 1, 4));
        }
        const __m256i pl = _mm256_add_epi16(_mm256_maddubs_epi16(al, qk_bcast_y(y + 64*h)),
                                            _mm256_maddubs_epi16(bl, qk_bcast_y(y + 64*h + 16)));
        const __m256i ph = _mm256_add_epi16(_mm256_maddubs_epi16(ah, qk_bcast_y(y + 64*h + 32)),
                                            _mm256_maddubs_epi16(bh, qk_bcast_y(y + 64*h + 48)));
        isum = _mm256_add_epi32(isum, _mm256_add_epi32(_mm256_madd_epi16(pl, _mm256_shuffle_epi8(sm, qk_scale_ctrl_of(2*h))),
                                                       _mm256_madd_epi16(ph, _mm256_shuffle_epi8(sm, qk_scale_ctrl_of(2*h + 1)))));
    }
    return isum;
}

// rows x + r*xs, r < R: R = 2 or 4 (the pairs of rows 0, 1 and 2, 3 in one
// register each: four streams), or x alone (R = 1: computed as both rows)
static QD_INLINE void qk_step_45_1col(const bool q5, const int R, int64_t nb, const char * x, size_t xs,
                                      const block_q8_K * y, float * s, int64_t i0, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const size_t  bsx     = q5 ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const int     P       = R == 4 ? 2 : 1;
    const __m256i lanes_d = _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2);
    const __m256i lanes_m = _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3);
    __m256 acc[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
    for (int64_t b = 0; b < nb; b++) {
        for (int p = 0; p < P; p++) {
            const char * x0 = x + 2*p*xs + b*bsx;
            const char * x1 = R >= 2 ? x0 + xs : x0;
            ggml_cpu_stream_prefetch(x0, bsx, ahead);
            if (R >= 2) {
                ggml_cpu_stream_prefetch(x1, bsx, ahead);
            }
            // both block types: d, dmin, the 12 bytes of scales; then Q5_K's qh
            const size_t o_sc = offsetof(block_q4_K, scales);
            const size_t o_qh = offsetof(block_q5_K, qh);
            const size_t o_qs = q5 ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
            const __m256i sm   = qk_scales_mins_bytes((const uint8_t *) x0 + o_sc, (const uint8_t *) x1 + o_sc);
            const __m256i isum = qk45_isum_pair(q5, (const uint8_t *) x0 + o_qs, (const uint8_t *) x1 + o_qs,
                                                (const uint8_t *) x0 + o_qh, (const uint8_t *) x1 + o_qh, sm, y[b].qs);
            const __m256i ysum = _mm256_broadcastsi128_si256(qk_bsums32(y + b));
            const __m256i msum = _mm256_madd_epi16(_mm256_shuffle_epi8(sm, qk_scale_ctrl_of(8)), ysum);
            // d, dmin of both rows, times dy
            uint32_t dm0, dm1;
            memcpy(&dm0, x0, sizeof(dm0));
            memcpy(&dm1, x1, sizeof(dm1));
            const __m128 f  = _mm_mul_ps(_mm_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128((int) dm0), (int) dm1, 1)),
                                         _mm_set1_ps(y[b].d));
            const __m256 f8 = _mm256_castps128_ps256(f);
            acc[p] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_permutevar8x32_ps(f8, lanes_d), acc[p]);
            acc[p] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_permutevar8x32_ps(f8, lanes_m), acc[p]);
        }
    }
    for (int p = 0; p < P; p++) {
        s[i0 + 2*p*is] = qk_hsum4(_mm256_castps256_ps128(acc[p]));
        if (R >= 2) {
            s[i0 + (2*p + 1)*is] = qk_hsum4(_mm256_extractf128_ps(acc[p], 1));
        }
    }
}

#else

// AVX-512: 128 values per step of the row, groups 4p, 4p + 2 (low nibbles
// of qs[64p ..]) and 4p + 1, 4p + 3 (high nibbles), against the activations
// regrouped the same way. On Zen 4 every 512-bit multiply, shuffle, shift or
// conversion takes the same pair of pipes, one a cycle (only the logic
// operations go beside them): the step is written for the fewest of those.
// The codes meet the activations 4 at a time (dpbusd: int32 sums of 4), the
// sums of two rows are packed to int16 side by side and scaled in one
// dpwssd (3 instructions per 128 values of a row instead of 4 with maddubs,
// and one conversion and multiply-add per superblock for two rows); the
// scales and minimums of a step's rows (up to 4) are decoded together, row r
// in 128-bit lane r of one register, and the minimums of all the rows meet a
// column's group sums, are scaled and accumulated in one register.
// In L2, 1 thread (Zen 4): 25.3 GB/s of Q4_K weights before this step, 34.0
// after (31.5 with the pack of one row's two registers instead of two rows),
// 35.0 with the activations laid out once per call (qk_relay_y).

// byte-shuffle control for the scales of a pair of rows' packed sums of
// group g (128-bit lanes 0, 1) and g + 2 (lanes 2, 3): byte g (g + 2) of each
// 128-bit lane, row A's scale, zero-extended to 16-bit lanes 0..3 and byte 8
// + g (8 + g + 2), row B's, to lanes 4..7
static QD_INLINE __m512i qk_pair_ctrl_512(int g) {
    const __m128i c01 = _mm_setr_epi16((short)(0x8000 | g),       (short)(0x8000 | g),       (short)(0x8000 | g),       (short)(0x8000 | g),
                                       (short)(0x8000 | (8 + g)), (short)(0x8000 | (8 + g)), (short)(0x8000 | (8 + g)), (short)(0x8000 | (8 + g)));
    const __m128i c23 = _mm_add_epi16(c01, _mm_set1_epi16(2));
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(c01)), _mm256_broadcastsi128_si256(c23), 1);
}

// the sums of 4 products of unsigned u and signed y bytes as int32 lanes: one
// VNNI instruction where the variant has it (the same integers)
static QD_INLINE __m512i qk_dot4_512(__m512i u, __m512i y) {
#if defined(__AVX512VNNI__)
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y);
#else
    return _mm512_madd_epi16(_mm512_maddubs_epi16(u, y), _mm512_set1_epi16(1));
#endif
}

// 128-bit lane r of v
static QD_INLINE __m128 qk_lane_ps(__m512 v, int r) {
    switch (r) {
        case 0:  return _mm512_castps512_ps128(v);
        case 1:  return _mm512_extractf32x4_ps(v, 1);
        case 2:  return _mm512_extractf32x4_ps(v, 2);
        default: return _mm512_extractf32x4_ps(v, 3);
    }
}

// qk_scales_mins_bytes in each 128-bit lane: a superblock's first 16 bytes
// in each lane of v (d, dmin, then the 12 packed bytes of scales and
// minimums: words a, b, c are 32-bit lanes 1, 2, 3) as 8 scales (bytes 0..7)
// and 8 minimums (bytes 8..15)
static QD_INLINE __m512i qk_scales_mins_512(__m512i v) {
    const __m512i acbc = _mm512_shuffle_epi32(v, (_MM_PERM_ENUM) _MM_SHUFFLE(3, 2, 3, 1));   // a c b c
    const __m512i aabb = _mm512_shuffle_epi32(v, (_MM_PERM_ENUM) _MM_SHUFFLE(2, 2, 1, 1));   // a a b b
    const __m512i low  = _mm512_and_si512(_mm512_srlv_epi32(acbc, _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0, 0, 4))),
                                          _mm512_broadcast_i32x4(_mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f)));
    const __m512i top  = _mm512_and_si512(_mm512_srli_epi32(aabb, 2),
                                          _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0x30303030, 0, 0x30303030)));
    return _mm512_or_si512(low, top);
}

// the sum of the 8 float lanes of row h (0: A, 1: B) of a pair's register
// (A: 32-bit lanes 0, 1 of each 128-bit lane, B: 2, 3), in the same order
// for both
static QD_INLINE float qk_pair_row_sum(__m512 acc, int h) {
    const __m512i split = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m512  v  = _mm512_permutexvar_ps(split, acc);
    const __m256  a8 = h == 0 ? _mm512_castps512_ps256(v) : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_add_ss(a, _mm_movehdup_ps(a)));
}

// isum + the int16 pair sums of ps times the int16 scales sc, as int32 lanes:
// one VNNI instruction where the variant has it (the same integers)
static QD_INLINE __m512i qk_dot_scaled_512(__m512i isum, __m512i ps, __m512i sc) {
#if defined(__AVX512VNNI__)
    return _mm512_dpwssd_epi32(isum, ps, sc);
#else
    return _mm512_add_epi32(isum, _mm512_madd_epi16(ps, sc));
#endif
}

// Each row's float sums: 8 lanes of its scaled integer sums times d*dy, and
// 4 lanes of its minimums' sums times dmin*dy, whatever R and C. The rows go
// in pairs (a row alone with itself): the sums of 4 values of both rows'
// registers are packed to int16 side by side (row A's in 16-bit lanes 0..3 of
// each 128-bit lane, B's in 4..7) and scaled in one dpwssd, so that one
// register holds the integer sums of both (A in 32-bit lanes 0, 1 of each
// 128-bit lane, B in 2, 3) and one conversion and one multiply-add a
// superblock serve two rows. A row's lanes and their operations are the same
// whichever row it is paired with; the 4 lanes of its minimums sit in lane r
// of the columns' register.
static QD_INLINE void qk_step_45(const bool q5, const int R, const int C, int64_t nb, const char * x, size_t xs,
                                 const block_q8_K * const * y, const struct qk_relaid * yr,
                                 float * const * s, int64_t i0, int64_t is) {
    const size_t  ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const size_t  bsx   = q5 ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const int     P     = (R + 1) / 2;                    // pairs of rows
    const __m512i m4    = _mm512_set1_epi8(0x0F);
    const __m512i m10   = _mm512_set1_epi8(0x10);
    // the minimums (bytes 8..15 of each lane) as int16
    const __m512i mctrl = _mm512_broadcast_i32x4(_mm_setr_epi16((short) 0x8008, (short) 0x8009, (short) 0x800a, (short) 0x800b,
                                                                (short) 0x800c, (short) 0x800d, (short) 0x800e, (short) 0x800f));
    // float lanes 1, 3, 5, 7 (dmin*dy of rows 0..3) to 128-bit lanes 0..3
    const __m512i midx  = _mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7);
    // 32-bit lane 0 of each 128-bit lane (d, dmin of rows 0..3) to lanes 0..3
    const __m512i didx  = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512 acc[QK_STEP_ROWS/2][QK_MAX_COLS];
    __m512 macc[QK_MAX_COLS];
    for (int c = 0; c < C; c++) {
        for (int j = 0; j < P; j++) {
            acc[j][c] = _mm512_setzero_ps();
        }
        macc[c] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        const char * x0 = x + b*bsx;
        // the first 16 bytes of the step's rows' superblocks (d, dmin,
        // scales and minimums), row r in lane r
        __m512i v = _mm512_zextsi128_si512(_mm_loadu_si128((const __m128i *) x0));
        for (int r = 1; r < R; r++) {
            const __m128i sr = _mm_loadu_si128((const __m128i *)(x0 + r*xs));
            switch (r) {
                case 1:  v = _mm512_inserti32x4(v, sr, 1); break;
                case 2:  v = _mm512_inserti32x4(v, sr, 2); break;
                default: v = _mm512_inserti32x4(v, sr, 3); break;
            }
        }
        const __m512i sm  = qk_scales_mins_512(v);
        const __m512i mn  = _mm512_shuffle_epi8(sm, mctrl);
        // d, dmin of rows 0..3
        const __m256  dm8 = _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi32(didx, v)));
        __m512 f[QK_MAX_COLS];                       // d*dy, dmin*dy of rows 0..3
        for (int c = 0; c < C; c++) {
            f[c] = _mm512_castps256_ps512(_mm256_mul_ps(dm8, _mm256_set1_ps(y[c][b].d)));
            const __m512i ysum = _mm512_broadcast_i32x4(yr != NULL ? _mm_load_si128((const __m128i *)(yr[c].gsum + 8*b))
                                                                   : qk_bsums32(y[c] + b));
            macc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(mn, ysum)), _mm512_permutexvar_ps(midx, f[c]), macc[c]);
        }
        const uint8_t * qs[QK_STEP_ROWS];
        __m512i qh[QK_STEP_ROWS], sc[QK_STEP_ROWS/2], isum[QK_STEP_ROWS/2][QK_MAX_COLS];
        for (int r = 0; r < R; r++) {
            const char * blk = x0 + r*xs;
            ggml_cpu_stream_prefetch(blk, bsx, ahead);
            if (q5) {
                const block_q5_K * xb = (const block_q5_K *) blk;
                qs[r] = xb->qs;
                // bytes 0..31: the bits of groups 4p, 4p + 1 from bit 0; bytes 32..63: of 4p + 2, 4p + 3
                const __m256i h = _mm256_loadu_si256((const __m256i *) xb->qh);
                qh[r] = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
            } else {
                qs[r] = ((const block_q4_K *) blk)->qs;
                qh[r] = _mm512_setzero_si512();
            }
        }
        for (int j = 0; j < P; j++) {
            // the 8 scales of row A (bytes 0..7 of each lane) and of row B (8..15)
            const int ra = 2*j, rb = 2*j + 1 < R ? 2*j + 1 : 2*j;
            sc[j] = _mm512_permutexvar_epi64(_mm512_setr_epi64(2*ra, 2*rb, 2*ra, 2*rb, 2*ra, 2*rb, 2*ra, 2*rb), sm);
            for (int c = 0; c < C; c++) {
                isum[j][c] = _mm512_setzero_si512();
            }
        }
        for (int p = 0; p < QK_K/128; p++) {
            __m512i ylo[QK_MAX_COLS], yhi[QK_MAX_COLS];
            for (int c = 0; c < C; c++) {
                if (yr != NULL) {
                    ylo[c] = _mm512_load_si512((const void *)(yr[c].q + QK_K*b + 128*p));
                    yhi[c] = _mm512_load_si512((const void *)(yr[c].q + QK_K*b + 128*p + 64));
                } else {
                    const __m512i ya = _mm512_loadu_si512((const void *)(y[c][b].qs + 128*p));
                    const __m512i yb = _mm512_loadu_si512((const void *)(y[c][b].qs + 128*p + 64));
                    ylo[c] = _mm512_shuffle_i64x2(ya, yb, 0x44);   // values 0..31, 64..95
                    yhi[c] = _mm512_shuffle_i64x2(ya, yb, 0xEE);   // values 32..63, 96..127
                }
            }
            // the scales of the low nibbles' groups 4p (128-bit lanes 0, 1)
            // and 4p + 2 (lanes 2, 3), of the high nibbles' 4p + 1, 4p + 3
            const __m512i clo = qk_pair_ctrl_512(4*p);
            const __m512i chi = qk_pair_ctrl_512(4*p + 1);
            __m512i lo[QK_STEP_ROWS], hi[QK_STEP_ROWS];
            for (int r = 0; r < R; r++) {
                const __m512i q = _mm512_loadu_si512((const void *)(qs[r] + 64*p));
                lo[r] = _mm512_and_si512(q, m4);
                hi[r] = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                if (q5) {
                    // bit 0 (1) of each byte to bit 4; the 16-bit shifts bring no other bit there
                    lo[r] = _mm512_or_si512(lo[r], _mm512_and_si512(_mm512_slli_epi16(qh[r], 4), m10));
                    hi[r] = _mm512_or_si512(hi[r], _mm512_and_si512(_mm512_slli_epi16(qh[r], 3), m10));
                    qh[r] = _mm512_srli_epi16(qh[r], 4);
                }
            }
            for (int j = 0; j < P; j++) {
                const int ra = 2*j;
                const bool two = 2*j + 1 < R;
                const __m512i slo = _mm512_shuffle_epi8(sc[j], clo);
                const __m512i shi = _mm512_shuffle_epi8(sc[j], chi);
                for (int c = 0; c < C; c++) {
                    // the sums of 4 values: codes <= 31, |y| <= 128, |sum| <= 15872: int16 after all
                    const __m512i la = qk_dot4_512(lo[ra], ylo[c]);
                    const __m512i ha = qk_dot4_512(hi[ra], yhi[c]);
                    const __m512i lb = two ? qk_dot4_512(lo[ra + 1], ylo[c]) : la;
                    const __m512i hb = two ? qk_dot4_512(hi[ra + 1], yhi[c]) : ha;
                    isum[j][c] = qk_dot_scaled_512(isum[j][c], _mm512_packs_epi32(la, lb), slo);
                    isum[j][c] = qk_dot_scaled_512(isum[j][c], _mm512_packs_epi32(ha, hb), shi);
                }
            }
        }
        for (int j = 0; j < P; j++) {
            const int ra = 2*j, rb = 2*j + 1 < R ? 2*j + 1 : 2*j;
            // d*dy of row A under 32-bit lanes 0, 1 of each 128-bit lane, of B under 2, 3
            const __m512i fidx = _mm512_setr_epi32(2*ra, 2*ra, 2*rb, 2*rb, 2*ra, 2*ra, 2*rb, 2*rb,
                                                   2*ra, 2*ra, 2*rb, 2*rb, 2*ra, 2*ra, 2*rb, 2*rb);
            for (int c = 0; c < C; c++) {
                acc[j][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[j][c]), _mm512_permutexvar_ps(fidx, f[c]), acc[j][c]);
            }
        }
    }
    for (int j = 0; j < P; j++) {
        for (int c = 0; c < C; c++) {
            for (int h = 0; h < 2 && 2*j + h < R; h++) {
                const int r = 2*j + h;
                __m128 m = qk_lane_ps(macc[c], r);
                m = _mm_add_ps(m, _mm_movehl_ps(m, m));
                s[c][i0 + r*is] = qk_pair_row_sum(acc[j][c], h) - _mm_cvtss_f32(_mm_add_ss(m, _mm_movehdup_ps(m)));
            }
        }
    }
}

// The activations of a column as the step above meets them: per superblock
// the values 0..31, 64..95, then 32..63, 96..127, then the same of the second
// 128, and the sums of its 8 groups of 32 as int16 (one shuffle per 64 values
// and one horizontal add per superblock per call instead of per step; a
// step's rows then load them as they are)
#define QK_RELAID 1
static QD_INLINE void qk_relay_y(const block_q8_K * y, int64_t nb, int8_t * q, int16_t * gsum) {
    for (int64_t b = 0; b < nb; b++) {
        for (int p = 0; p < QK_K/128; p++) {
            const __m512i ya = _mm512_loadu_si512((const void *)(y[b].qs + 128*p));
            const __m512i yb = _mm512_loadu_si512((const void *)(y[b].qs + 128*p + 64));
            _mm512_store_si512((void *)(q + QK_K*b + 128*p),      _mm512_shuffle_i64x2(ya, yb, 0x44));
            _mm512_store_si512((void *)(q + QK_K*b + 128*p + 64), _mm512_shuffle_i64x2(ya, yb, 0xEE));
        }
        _mm_store_si128((__m128i *)(gsum + 8*b), qk_bsums32(y + b));
    }
}

#endif

// the 32 unsigned 6-bit codes 128h + 32q .. + 31 of a Q6_K superblock: the
// low nibbles (q < 2) or high nibbles of ql[64h + 32(q % 2) ..] with bits
// 2q, 2q + 1 of qh[32h ..] on top
static QD_INLINE __m256i qk_codes_6(const block_q6_K * xb, int h, int q) {
    const __m256i ql = _mm256_loadu_si256((const __m256i *)(xb->ql + 64*h + 32*(q % 2)));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(xb->qh + 32*h));
    const __m256i lo = _mm256_and_si256(q < 2 ? ql : _mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0x0F));
    // bits 2q, 2q + 1 of each byte to bits 4, 5 (the 16-bit shifts bring no other bit there)
    __m256i hb;
    switch (q) {
        case 0:  hb = _mm256_slli_epi16(qh, 4); break;
        case 1:  hb = _mm256_slli_epi16(qh, 2); break;
        case 2:  hb = qh;                       break;
        default: hb = _mm256_srli_epi16(qh, 2); break;
    }
    return _mm256_or_si256(lo, _mm256_and_si256(hb, _mm256_set1_epi8(0x30)));
}

#if defined(GGML_VEC_AVX512)

// Q6_K in 512-bit steps: the 64 bytes ql[64h ..] hold in their low nibbles
// the values 128h .. + 63 (q = 0, 1) and in their high nibbles 128h + 64 ..
// + 127 (q = 2, 3), in the order of the activations, so that one load and
// one shift give 64 codes; the 32 bytes qh[32h ..] in both 256-bit halves
// bring the top bits with one variable shift per half. 128-bit lane j of
// such a register meets group 8h + j (low nibbles) or 8h + 4 + j (high).
// As for Q4_K (above): the codes meet the activations 4 at a time, the two
// registers' sums are packed to int16 and scaled in one dpwssd (in L2, 1
// thread, Zen 4: 36.2 GB/s of Q6_K weights before, 37.8 after).
static QD_INLINE void qk_step_6(const int R, const int C, int64_t nb, const char * x, size_t xs,
                                const block_q8_K * const * y, float * const * s, int64_t i0, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const __m512i m4  = _mm512_set1_epi8(0x0F);
    const __m512i m30 = _mm512_set1_epi8(0x30);
    // bits 0, 1 (low half) and 2, 3 (high half) of qh to bits 4, 5; then bits 4, 5 and 6, 7
    const __m512i shl_lo = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i shr_hi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    __m512 acc[QK_STEP_ROWS][QK_MAX_COLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc[r][c] = _mm512_setzero_ps();
        }
    }
    for (int64_t b = 0; b < nb; b++) {
        const block_q6_K * xb[QK_STEP_ROWS];
        __m512i sc[QK_STEP_ROWS], isum[QK_STEP_ROWS][QK_MAX_COLS];
        for (int r = 0; r < R; r++) {
            xb[r] = (const block_q6_K *)(x + r*xs) + b;
            ggml_cpu_stream_prefetch(xb[r], sizeof(block_q6_K), ahead);
            const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) xb[r]->scales));
            sc[r] = _mm512_castsi256_si512(sc16);
            for (int c = 0; c < C; c++) {
                // the codes are u - 32 with u in 0..63: sum sc*u*y - 32 * sum sc*bsums
                const __m256i off = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *) y[c][b].bsums));
                isum[r][c] = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(off, 5)));
            }
        }
        for (int h = 0; h < QK_K/128; h++) {
            __m512i ylo[QK_MAX_COLS], yhi[QK_MAX_COLS];
            for (int c = 0; c < C; c++) {
                ylo[c] = _mm512_loadu_si512((const void *)(y[c][b].qs + 128*h));
                yhi[c] = _mm512_loadu_si512((const void *)(y[c][b].qs + 128*h + 64));
            }
            // int16 lanes 0..3 of 128-bit lane j: the scale of group 8h + j,
            // lanes 4..7: of group 8h + 4 + j (the packed sums below)
            const __m512i g   = _mm512_setr_epi64(0x0000000000000000, 0x0004000400040004,
                                                  0x0001000100010001, 0x0005000500050005,
                                                  0x0002000200020002, 0x0006000600060006,
                                                  0x0003000300030003, 0x0007000700070007);
            const __m512i idx = _mm512_add_epi16(g, _mm512_set1_epi16((short)(8*h)));
            for (int r = 0; r < R; r++) {
                const __m512i ql = _mm512_loadu_si512((const void *)(xb[r]->ql + 64*h));
                const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(xb[r]->qh + 32*h)));
                const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, m4),
                                                   _mm512_and_si512(_mm512_sllv_epi16(qh, shl_lo), m30));
                const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                                   _mm512_and_si512(_mm512_srlv_epi16(qh, shr_hi), m30));
                const __m512i sp = _mm512_permutexvar_epi16(idx, sc[r]);
                for (int c = 0; c < C; c++) {
                    // the sums of 4 values: u <= 63, |y| <= 128, |sum| <= 32256: int16 after all
                    const __m512i a = qk_dot4_512(lo, ylo[c]);   // 128-bit lane j: group 8h + j
                    const __m512i b4 = qk_dot4_512(hi, yhi[c]);  // group 8h + 4 + j
                    isum[r][c] = qk_dot_scaled_512(isum[r][c], _mm512_packs_epi32(a, b4), sp);
                }
            }
        }
        for (int r = 0; r < R; r++) {
            const float dx = qd_h2f(xb[r]->d);
            for (int c = 0; c < C; c++) {
                acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r][c]), _mm512_set1_ps(dx * y[c][b].d), acc[r][c]);
            }
        }
    }
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            s[c][i0 + r*is] = _mm512_reduce_add_ps(acc[r][c]);
        }
    }
}

#else

static QD_INLINE void qk_step_6(const int R, const int C, int64_t nb, const char * x, size_t xs,
                                const block_q8_K * const * y, float * const * s, int64_t i0, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    // R = 4 (one column): two groups of two rows, one after the other in
    // each superblock (four streams, the registers of two rows at a time:
    // arrays of 4 made the loop of 2 rows about 40% slower)
    const int RG = R > QK_STEP_ROWS ? QK_STEP_ROWS : R;
    __m256 acc[QK_COL_ROWS][QK_MAX_COLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc[r][c] = _mm256_setzero_ps();
        }
    }
    for (int64_t b = 0; b < nb; b++) {
        for (int g = 0; g < R; g += RG) {
            const block_q6_K * xb[QK_STEP_ROWS];
            __m256i sc[QK_STEP_ROWS], isum[QK_STEP_ROWS][QK_MAX_COLS];
            for (int r = 0; r < RG; r++) {
                xb[r] = (const block_q6_K *)(x + (g + r)*xs) + b;
                ggml_cpu_stream_prefetch(xb[r], sizeof(block_q6_K), ahead);
                sc[r] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) xb[r]->scales));
                for (int c = 0; c < C; c++) {
                    // the codes are u - 32 with u in 0..63: sum sc*u*y - 32 * sum sc*bsums
                    const __m256i off = _mm256_madd_epi16(sc[r], _mm256_loadu_si256((const __m256i *) y[c][b].bsums));
                    isum[r][c] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(off, 5));
                }
            }
            for (int h = 0; h < QK_K/128; h++) {
                __m256i sh[QK_STEP_ROWS];
                for (int r = 0; r < RG; r++) {
                    // the 8 scales of this half in both 128-bit halves
                    sh[r] = h == 0 ? _mm256_permute2x128_si256(sc[r], sc[r], 0x00)
                                   : _mm256_permute2x128_si256(sc[r], sc[r], 0x11);
                }
                for (int q = 0; q < 4; q++) {
                    __m256i yv[QK_MAX_COLS];
                    for (int c = 0; c < C; c++) {
                        yv[c] = _mm256_loadu_si256((const __m256i *)(y[c][b].qs + 128*h + 32*q));
                    }
                    for (int r = 0; r < RG; r++) {
                        const __m256i u = qk_codes_6(xb[r], h, q);
                        // groups 8h + 2q (values 0..15 of u) and 8h + 2q + 1 (16..31)
                        const __m256i scale = qk_bcast16(sh[r], 2*q, 2*q + 1);
                        for (int c = 0; c < C; c++) {
                            // u <= 63, |y| <= 128: the byte-pair sums fit in int16
                            isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(_mm256_maddubs_epi16(u, yv[c]), scale));
                        }
                    }
                }
            }
            for (int r = 0; r < RG; r++) {
                const float dx = qd_h2f(xb[r]->d);
                for (int c = 0; c < C; c++) {
                    acc[g + r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][c]), _mm256_set1_ps(dx * y[c][b].d), acc[g + r][c]);
                }
            }
        }
    }
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            s[c][i0 + r*is] = qd_hsum256(acc[r][c]);
        }
    }
}

#endif

enum qk_kind { QK_Q4, QK_Q5, QK_Q6 };

static QD_INLINE void qk_step(enum qk_kind kind, const int R, const int C, int64_t nb, const char * x, size_t xs,
                              const block_q8_K * const * y, const struct qk_relaid * yr,
                              float * const * s, int64_t i0, int64_t is) {
    if (kind == QK_Q6) {
        qk_step_6(R, C, nb, x, xs, y, s, i0, is);
#if !defined(GGML_VEC_AVX512)
    } else if (C == 1) {
        (void) yr;
        qk_step_45_1col(kind == QK_Q5, R, nb, x, xs, y[0], s[0], i0, is);
    } else {
        qk_step_45(kind == QK_Q5, R, C, nb, x, xs, y, s, i0, is);
#else
    } else {
        qk_step_45(kind == QK_Q5, R, C, nb, x, xs, y, yr, s, i0, is);
#endif
    }
}

// C columns: the R rows of a step come from R equal parts of the block, so
// that each is one long sequential stream (the prefetchers follow long
// streams; R short ones that restart at every row they do not)
static QD_INLINE void qk_rows_cols(enum qk_kind kind, const int C, int64_t n, const char * x, size_t bx,
                                   int64_t nr, const block_q8_K * const * y, float * const * s) {
    const int R = C == 1 ? QK_COL_ROWS : QK_STEP_ROWS / C > 1 ? QK_STEP_ROWS / C : 1;
    const int64_t nb = n / QK_K;
    const int64_t q  = nr / R;
#if defined(QK_RELAID)
    // the Q4_K / Q5_K step's activations laid out once per call, where
    // they fit this buffer (k up to 16384 for one column); else the step
    // shuffles them itself
    _Alignas(64) int8_t  yrbuf[16384];
    _Alignas(64) int16_t gsbuf[16384/QK_K*8];
    struct qk_relaid yr[QK_MAX_COLS];
    if (kind != QK_Q6 && (size_t) C * (size_t) nb * QK_K <= sizeof(yrbuf)) {
        for (int c = 0; c < C; c++) {
            yr[c].q    = yrbuf + (size_t) c * (size_t) nb * QK_K;
            yr[c].gsum = gsbuf + (size_t) c * (size_t) nb * 8;
            qk_relay_y(y[c], nb, yrbuf + (size_t) c * (size_t) nb * QK_K, gsbuf + (size_t) c * (size_t) nb * 8);
        }
        for (int64_t r = 0; R > 1 && r < q; r++) {
            qk_step(kind, R, C, nb, x + r*bx, q*bx, y, yr, s, r, q);
        }
        for (int64_t r = R > 1 ? R*q : 0; r < nr; r++) {
            qk_step(kind, 1, C, nb, x + r*bx, bx, y, yr, s, r, 0);
        }
        return;
    }
#endif
    for (int64_t r = 0; R > 1 && r < q; r++) {
        qk_step(kind, R, C, nb, x + r*bx, q*bx, y, NULL, s, r, q);
    }
    for (int64_t r = R > 1 ? R*q : 0; r < nr; r++) {
        qk_step(kind, 1, C, nb, x + r*bx, bx, y, NULL, s, r, 0);
    }
}

static QD_INLINE void qk_rows_456(enum qk_kind kind, int64_t n, const void * x, size_t bx, int64_t nr,
                                  const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QK_MAX_COLS) {
        const block_q8_K * const * yc = (const block_q8_K * const *) y + c0;
        switch (MIN(QK_MAX_COLS, nc - c0)) {
            case 1:  qk_rows_cols(kind, 1, n, (const char *) x, bx, nr, yc, s + c0); break;
            case 2:  qk_rows_cols(kind, 2, n, (const char *) x, bx, nr, yc, s + c0); break;
            case 3:  qk_rows_cols(kind, 3, n, (const char *) x, bx, nr, yc, s + c0); break;
            default: qk_rows_cols(kind, 4, n, (const char *) x, bx, nr, yc, s + c0); break;
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q4_K_dot__avx2, qk_rows_456, QK_Q4)
GGML_CPU_DEFINE_DOT_ROWS(q5_K_dot__avx2, qk_rows_456, QK_Q5)
GGML_CPU_DEFINE_DOT_ROWS(q6_K_dot__avx2, qk_rows_456, QK_Q6)

// Q2_K and Q3_K: 16 groups of 16 values, their scales decoded with vector
// instructions into 16 int16 lanes once per superblock; the values 128h + 32s
// + l (l < 32) are the 2-bit field s of qs[32h + l] (and for Q3_K bit 4h + s
// of hmask[l] above it), groups 8h + 2s (l < 16) and 8h + 2s + 1, whose
// scales one byte shuffle puts under the lanes of a maddubs over the 32
// values. The loops are unrolled so that the shifts are immediates.

// the scales of groups 8h .. 8h + 7 (int16 lanes) in both 128-bit halves
static QD_INLINE __m256i qk_half_scales(__m256i sc16, int h) {
    return h == 0 ? _mm256_permute2x128_si256(sc16, sc16, 0x00) : _mm256_permute2x128_si256(sc16, sc16, 0x11);
}

// the 2-bit field s of every byte of q (0..3)
static QD_INLINE __m256i qk_field2(__m256i q, int s) {
    const __m256i m = _mm256_set1_epi8(0x03);
    switch (s) {
        case 0:  return _mm256_and_si256(q, m);
        case 1:  return _mm256_and_si256(_mm256_srli_epi16(q, 2), m);
        case 2:  return _mm256_and_si256(_mm256_srli_epi16(q, 4), m);
        default: return _mm256_and_si256(_mm256_srli_epi16(q, 6), m);
    }
}

// the 16 signed 6-bit scales of a Q3_K superblock (ggml_q3_K_scales) as int16
// lanes: low nibbles of bytes 0..7 (groups 0..7) and their high nibbles
// (8..15); the top two bits of group j are bits 2(j/4), 2(j/4) + 1 of byte
// 8 + j%4, which a shift of the 32-bit word by 2(j/4) brings to the bottom
// of byte j%4 of the word for group j
static QD_INLINE __m256i qk3_scales16(const uint8_t * scales) {
    uint64_t a;
    uint32_t c;
    memcpy(&a, scales, sizeof(a));
    memcpy(&c, scales + 8, sizeof(c));
    const __m128i va   = _mm_cvtsi64_si128((long long) a);
    const __m128i low  = _mm_and_si128(_mm_unpacklo_epi64(va, _mm_srli_epi16(va, 4)), _mm_set1_epi8(0x0F));
    const __m128i vc   = _mm_srlv_epi32(_mm_set1_epi32((int) c), _mm_setr_epi32(0, 2, 4, 6));
    const __m128i high = _mm_slli_epi16(_mm_and_si128(vc, _mm_set1_epi8(0x03)), 4);
    return _mm256_cvtepi8_epi16(_mm_sub_epi8(_mm_or_si128(low, high), _mm_set1_epi8(32)));
}

// isum + the scaled int32 lanes of a Q2_K (q3 false) or Q3_K superblock's
// 256 codes (2-bit fields of qs, and for Q3_K the bits of hm above them)
// against the activations y, the group scales in sc16
static QD_INLINE __m256i qk23_isum(const bool q3, __m256i isum, const uint8_t * qs, __m256i hm, __m256i sc16, const int8_t * y) {
#if defined(__GNUC__)
#pragma GCC unroll 2
#endif
    for (int h = 0; h < QK_K/128; h++) {
        const __m256i q  = _mm256_loadu_si256((const __m256i *)(qs + 32*h));
        const __m256i sh = qk_half_scales(sc16, h);
#if defined(__GNUC__)
#pragma GCC unroll 4
#endif
        for (int s4 = 0; s4 < 4; s4++) {
            __m256i u = qk_field2(q, s4);
            if (q3) {
                u = _mm256_or_si256(u, qd_move_bit(hm, 4*h + s4, 2));
            }
            const __m256i yv = _mm256_loadu_si256((const __m256i *)(y + 128*h + 32*s4));
            isum = _mm256_add_epi32(isum, qk_scaled_dot(u, yv, qk_bcast16(sh, 2*s4, 2*s4 + 1)));
        }
    }
    return isum;
}

// Q2_K: codes 0..3; the minimums meet the bsums in one int16 multiply-add.
// Q3_K: unsigned codes u = low | hbit << 2 in 0..7, the value u - 4; the
// offset goes into the scaled bsums. One superblock of a row into its sums
// (Q3_K uses acc alone).
static QD_INLINE void qk23_superblock(const bool q3, const char * xb, const block_q8_K * yb, __m256 * acc, __m256 * macc) {
    if (!q3) {
        const block_q2_K * x = (const block_q2_K *) xb;
        const __m128i sm   = _mm_loadu_si128((const __m128i *) x->scales);
        const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(sm, _mm_set1_epi8(0x0F)));
        const __m256i mn   = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(0x0F)));
        const __m256i msum = _mm256_madd_epi16(mn, _mm256_loadu_si256((const __m256i *) yb->bsums));
        const __m256i isum = qk23_isum(false, _mm256_setzero_si256(), x->qs, _mm256_setzero_si256(), sc16, yb->qs);
        const float dy = yb->d;
        *acc  = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qd_h2f(x->d) * dy), *acc);
        *macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(qd_h2f(x->dmin) * dy), *macc);
    } else {
        const block_q3_K * x = (const block_q3_K *) xb;
        const __m256i sc16 = qk3_scales16(x->scales);
        const __m256i off  = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *) yb->bsums));
        const __m256i hm   = _mm256_loadu_si256((const __m256i *) x->hmask);
        // sum sc*(u - 4)*y = sum sc*u*y - 4 * sum sc*bsums
        const __m256i isum = qk23_isum(true, _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(off, 2)),
                                       x->qs, hm, sc16, yb->qs);
        *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qd_h2f(x->d) * yb->d), *acc);
    }
}

// rows x + r*xs (r < R) against one column, superblock by superblock: R
// streams (four, as the other row dots: one long stream read more slowly);
// each row's sums formed as by a step of one row
static QD_INLINE void qk23_step(const bool q3, const int R, int64_t nb, const char * x, size_t xs,
                                const block_q8_K * y, float * s, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const size_t bsx = q3 ? sizeof(block_q3_K) : sizeof(block_q2_K);
    __m256 acc[4], macc[4];
    for (int r = 0; r < R; r++) {
        acc[r]  = _mm256_setzero_ps();
        macc[r] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        for (int r = 0; r < R; r++) {
            const char * xb = x + r*xs + b*bsx;
            ggml_cpu_stream_prefetch(xb, bsx, ahead);
            qk23_superblock(q3, xb, y + b, &acc[r], &macc[r]);
        }
    }
    for (int r = 0; r < R; r++) {
        s[r*is] = q3 ? qd_hsum256(acc[r]) : qd_hsum256(acc[r]) - qd_hsum256(macc[r]);
    }
}

// the rows of Q2_K or Q3_K, column by column: the four rows of a step from
// four quarters of the block
static QD_INLINE void qk_rows_23(const bool q3, int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                 const void * const * y, float * const * s, int64_t nc) {
    const int64_t nb = n / QK_K;
    const int64_t q  = nr / 4;
    for (int64_t c = 0; c < nc; c++) {
        const block_q8_K * yc = (const block_q8_K *) y[c];
        for (int64_t r = 0; r < q; r++) {
            qk23_step(q3, 4, nb, (const char *) x + r*bx, q*bx, yc, s[c] + r, q);
        }
        for (int64_t r = 4*q; r < nr; r++) {
            qk23_step(q3, 1, nb, (const char *) x + r*bx, bx, yc, s[c] + r, 0);
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q2_K_dot__avx2, qk_rows_23, false)
GGML_CPU_DEFINE_DOT_ROWS(q3_K_dot__avx2, qk_rows_23, true)

void ggml_cpu_add_kernels_x86_quants_dot_k(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q2_K, dot_rows, q2_K_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q3_K, dot_rows, q3_K_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q4_K, dot_rows, q4_K_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q5_K, dot_rows, q5_K_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q6_K, dot_rows, q6_K_dot__avx2, GGML_CPU_ISA_TAG);
}

#else

void ggml_cpu_add_kernels_x86_quants_dot_k(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif // QD_SIMD
