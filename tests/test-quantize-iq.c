// test-quantize-iq: the grid types IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S.
//
//   - block sizes (bits per weight) and grid facts: every point's values are
//     the type's levels, no point twice, the sign rule (an even count of
//     negative values) of the 7-bit sign groups;
//   - the search tables ggml_quantize_init builds: every code vector a
//     quantizer can produce maps to its grid point or to the list of grid
//     points at its nearest distinct distances, checked against a brute-force
//     search over the grid;
//   - dequantization of hand-built blocks against the layout written out here;
//   - round trips (with and without an importance matrix where allowed), the
//     types that need one refusing without, all-zero sub-blocks;
//   - ggml_validate_row_data on non-finite scales;
//   - extreme inputs do not abort the searches: a weight of 1e15 (its
//     distances square past FLT_MAX), NaN or inf weights, NaN, inf, zero or
//     negative importances in one block; the other block of the row gets the
//     bytes it gets alone;
//   - MUL_MAT against a double-precision sum over the dequantized weights and
//     the Q8_K activations (both kernel families, 1 and 2 threads, odd shapes,
//     1 to 9 and 17 columns, strided src1), the
//     traits' vec_dot, GET_ROWS;
//   - ggml_quantize_init / ggml_quantize_free and quantization from several
//     threads at once giving the same bytes.
//
// Byte identity with upstream's quantizers is checked outside the test suite
// (against an upstream build), see the branch notes.

#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-quants-iq.h"
#include "cpu-testing.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const enum ggml_type iq_types[] = {
    GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
    GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
};
#define N_IQ_TYPES (int)(sizeof(iq_types)/sizeof(iq_types[0]))

static uint64_t g_rng = 0x0123456789abcdefull;

static double rnd_uniform(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

static float rnd_gauss(void) {
    const double u = rnd_uniform() + 1e-12, v = rnd_uniform();
    return (float)(sqrt(-2.0*log(u)) * cos(6.283185307179586*v));
}

//
// layouts and grids
//

static void test_layouts(void) {
    // bytes per 256 weights: bits per weight * 32
    CHECK_EQ_INT(ggml_type_size(GGML_TYPE_IQ2_XXS), 66);  // 2.0625 bpw
    CHECK_EQ_INT(ggml_type_size(GGML_TYPE_IQ2_XS),  74);  // 2.3125
    CHECK_EQ_INT(ggml_type_size(GGML_TYPE_IQ2_S),   82);  // 2.5625
    CHECK_EQ_INT(ggml_type_size(GGML_TYPE_IQ3_XXS), 98);  // 3.0625
    CHECK_EQ_INT(ggml_type_size(GGML_TYPE_IQ3_S),   110); // 3.4375
    CHECK_EQ_INT(ggml_type_size(GGML_TYPE_IQ1_S),   50);  // 1.5625
    CHECK_EQ_INT(ggml_type_size(GGML_TYPE_IQ1_M),   56);  // 1.75
    for (int i = 0; i < N_IQ_TYPES; i++) {
        CHECK_EQ_INT(ggml_blck_size(iq_types[i]), QK_K);
        CHECK(ggml_get_type_traits(iq_types[i])->to_float != NULL);
    }
    // upstream's reference row quantizers: only the types that work without an imatrix, IQ1_M aside
    CHECK(ggml_get_type_traits(GGML_TYPE_IQ2_XXS)->from_float_ref == NULL);
    CHECK(ggml_get_type_traits(GGML_TYPE_IQ1_M)->from_float_ref == NULL);
    CHECK(ggml_get_type_traits(GGML_TYPE_IQ3_S)->from_float_ref != NULL);
    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XXS));
    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XS));
    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ1_S));
    CHECK(!ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_S));
    CHECK(!ggml_quantize_requires_imatrix(GGML_TYPE_IQ3_XXS));
    CHECK(!ggml_quantize_requires_imatrix(GGML_TYPE_IQ1_M));
}

// n points of `dim` bytes each: every byte one of `levels`, no point twice
static void check_grid(const char * name, const uint8_t * g, int n, int dim, const uint8_t * levels, int nlevels) {
    int bad_level = 0, dup = 0;
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < dim; i++) {
            bool ok = false;
            for (int l = 0; l < nlevels; l++) {
                ok |= g[dim*p + i] == levels[l];
            }
            bad_level += !ok;
        }
        for (int q = 0; q < p; q++) {
            dup += memcmp(g + dim*p, g + dim*q, (size_t) dim) == 0;
        }
    }
    CHECK_MSG(bad_level == 0 && dup == 0, "%s: %d values off the levels, %d repeated points", name, bad_level, dup);
}

static void test_grids(void) {
    const struct ggml_iq_grids * g = ggml_iq_grids();
    static const uint8_t l2[]  = { 8, 25, 43 };
    static const uint8_t l1[]  = { 0xff, 0, 1 };
    static const uint8_t l3x[] = { 4, 12, 20, 28, 36, 44, 52, 62 };
    static const uint8_t l3s[] = { 1, 3, 5, 7, 9, 11, 13, 15 };
    check_grid("iq2_xxs", (const uint8_t *) g->iq2xxs, 256,  8, l2, 3);
    check_grid("iq2_xs",  (const uint8_t *) g->iq2xs,  512,  8, l2, 3);
    check_grid("iq2_s",   (const uint8_t *) g->iq2s,   1024, 8, l2, 3);
    check_grid("iq1_s",   (const uint8_t *) g->iq1s,   2048, 8, l1, 3);
    check_grid("iq3_xxs", (const uint8_t *) g->iq3xxs, 256,  4, l3x, 8);
    check_grid("iq3_s",   (const uint8_t *) g->iq3s,   512,  4, l3s, 8);
    // first points of upstream's tables (ggml-common.h): all lowest, then one value at the third level
    CHECK(g->iq2xxs[0] == 0x0808080808080808ull);
    CHECK(g->iq2xxs[1] == 0x080808080808082bull);
    CHECK(g->iq3s[0] == 0x01010101u && g->iq3xxs[0] == 0x04040404u);
    CHECK(g->iq1s[0] == 0xffffffffffffffffull);
    // the eighth sign makes the count of negative values even
    int bad = 0;
    for (uint32_t s = 0; s < 128; s++) {
        const uint8_t b = ggml_iq_signs7(s);
        int pop = 0;
        for (int j = 0; j < 8; j++) pop += (b >> j) & 1;
        bad += (b & 127) != s || pop % 2 != 0;
    }
    CHECK(bad == 0);
}

// every reachable code vector: on the grid, or a neighbour list equal to
// the brute-force one (the points at the n_nearest smallest distinct
// squared distances, by distance then index)
static void check_search(enum ggml_type t, int max_code, int n_nearest) {
    ggml_quantize_init(t);
    const struct ggml_iq_search * s = ggml_iq_search_get(t);
    CHECK(s != NULL);
    if (!s) {
        return;
    }
    const int nvec = 1 << (s->bits*s->dim);
    int * d2 = malloc(sizeof(int) * (size_t) s->n_points);
    int bad = 0, checked = 0;
    for (int u = 0; u < nvec; u++) {
        bool reachable = true;
        int pos[8];
        for (int i = 0; i < s->dim; i++) {
            const int c = (u >> s->bits*i) & ((1 << s->bits) - 1);
            reachable &= c < max_code;
            pos[i] = 2*c + 1;
        }
        if (!reachable) {
            continue;
        }
        checked++;
        int on_grid = -1;
        for (int p = 0; p < s->n_points; p++) {
            d2[p] = 0;
            for (int i = 0; i < s->dim; i++) {
                const int diff = s->points[s->dim*p + i] - pos[i];
                d2[p] += diff*diff;
            }
            if (d2[p] == 0) on_grid = p;
        }
        if (on_grid >= 0) {
            bad += s->map[u] != on_grid;
            continue;
        }
        if (s->map[u] >= 0) {
            bad++;
            continue;
        }
        const uint16_t * nb = s->neighbours + (-s->map[u] - 1);
        // walk the distances upwards, n_nearest distinct ones, listing points by index
        int at = 1, last = -1;
        for (int k = 0; k < n_nearest; k++) {
            int next = -1;
            for (int p = 0; p < s->n_points; p++) {
                if (d2[p] > last && (next < 0 || d2[p] < next)) next = d2[p];
            }
            if (next < 0) break;
            for (int p = 0; p < s->n_points; p++) {
                if (d2[p] == next) {
                    bad += at > nb[0] || nb[at] != p;
                    at++;
                }
            }
            last = next;
        }
        bad += at - 1 != nb[0];
    }
    CHECK_MSG(bad == 0 && checked > 0, "%s: %d of %d code vectors with the wrong map entry or list", ggml_type_name(t), bad, checked);
    free(d2);
}

static void test_search_tables(void) {
    check_search(GGML_TYPE_IQ2_XXS, 3, 2);
    check_search(GGML_TYPE_IQ2_S,   3, 1);
    check_search(GGML_TYPE_IQ3_XXS, 8, 2);
    check_search(GGML_TYPE_IQ3_S,   8, 3);
    check_search(GGML_TYPE_IQ1_M,   3, 3);
    ggml_quantize_free();
    CHECK(ggml_iq_search_get(GGML_TYPE_IQ2_XXS) == NULL);
    ggml_quantize_free();
}

//
// hand-built blocks
//

static void test_dequantize_blocks(void) {
    const struct ggml_iq_grids * g = ggml_iq_grids();
    float y[QK_K];

    // iq2_xxs: d = 1; sub-block 0 has points 0 and 1 in groups 0 and 1, sign
    // group 0 = 1 (value 0 negative, so value 7 too), scale 3: 1 * 3.5 / 4
    block_iq2_xxs b2;
    memset(&b2, 0, sizeof(b2));
    b2.d = ggml_fp32_to_fp16(1.0f);
    const uint32_t aux[2] = { 0x00000100u, 1u | (3u << 28) };
    memcpy(b2.qs, aux, sizeof(aux));
    dequantize_row_iq2_xxs(&b2, y, QK_K);
    CHECK(y[0] == -7.0f && y[7] == -7.0f && y[1] == 7.0f && y[6] == 7.0f);
    CHECK(y[8] == 43*0.875f && y[9] == 7.0f);
    CHECK(y[32] == 8*0.125f); // sub-block 1: all zero bits, scale 0: d * 0.5 / 4 per level unit

    // iq3_s: d = 0.5; sub-block 0 scale 2 (d * 5), value group 1 uses point
    // 256 + 3 (ninth bit in qh), signs byte 0 = 0x10 (value 4 negative)
    block_iq3_s b3;
    memset(&b3, 0, sizeof(b3));
    b3.d = ggml_fp32_to_fp16(0.5f);
    b3.scales[0] = 2;
    b3.qs[1] = 3;
    b3.qh[0] = 2;
    b3.signs[0] = 0x10;
    dequantize_row_iq3_s(&b3, y, QK_K);
    const uint8_t * p = (const uint8_t *) (g->iq3s + 259);
    CHECK(y[0] == 2.5f*1 && y[3] == 2.5f*1);
    CHECK(y[4] == -2.5f*p[0] && y[5] == 2.5f*p[1] && y[7] == 2.5f*p[3]);
    CHECK(y[32] == 0.5f*1); // sub-block 1: scale nibble 0: d * 1

    // iq1_s: d = 2; sub-block 0: point 5 + 256 in group 1 (qh bits 3..5 = 1),
    // scale 1 (d*3), negative shift: values (g - 1/8) * 6
    block_iq1_s b1;
    memset(&b1, 0, sizeof(b1));
    b1.d = ggml_fp32_to_fp16(2.0f);
    b1.qs[1] = 5;
    b1.qh[0] = (uint16_t) ((1 << 3) | (1 << 12) | 0x8000);
    dequantize_row_iq1_s(&b1, y, QK_K);
    const int8_t * q1 = (const int8_t *) (g->iq1s + 261);
    CHECK(y[0] == 6*(-1 - 0.125f));
    CHECK(y[8] == 6*(q1[0] - 0.125f) && y[15] == 6*(q1[7] - 0.125f));
    CHECK(y[32] == 2*(-1 + 0.125f)); // sub-block 1: scale 0, positive shift

    // iq1_m: super-block scale 1.0 (fp16 0x3c00) spread over the top nibbles;
    // sub-block 0 scale 2 (5), sub-block 1 scale 1 (3); group 1 shifted down
    block_iq1_m bm;
    memset(&bm, 0, sizeof(bm));
    uint16_t sc[4] = { 2 | (1 << 3), 0, 0, 0 };
    const uint16_t h = 0x3c00;
    sc[0] |= (uint16_t) ((h & 0x000f) << 12);
    sc[1] |= (uint16_t) ((h & 0x00f0) << 8);
    sc[2] |= (uint16_t) ((h & 0x0f00) << 4);
    sc[3] |= (uint16_t) (h & 0xf000);
    memcpy(bm.scales, sc, sizeof(sc));
    bm.qh[0] = 0x80;
    CHECK(ggml_iq1_m_scale(&bm) == 1.0f);
    dequantize_row_iq1_m(&bm, y, QK_K);
    CHECK(y[0] == 5*(-1 + 0.125f) && y[8] == 5*(-1 - 0.125f) && y[16] == 3*(-1 + 0.125f));
}

//
// round trips
//

static double rms_bound(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_IQ1_S:
        case GGML_TYPE_IQ1_M:   return 0.75;
        case GGML_TYPE_IQ2_XXS: return 0.55;
        case GGML_TYPE_IQ2_XS:  return 0.50;
        case GGML_TYPE_IQ2_S:   return 0.45;
        case GGML_TYPE_IQ3_XXS: return 0.35;
        default:                return 0.30;
    }
}

static void test_round_trips(void) {
    enum { NR = 16, NPR = 2*QK_K };
    float * x  = malloc(sizeof(float) * NR * NPR);
    float * y  = malloc(sizeof(float) * NR * NPR);
    float * im = malloc(sizeof(float) * NPR);
    char  * q  = malloc(NR * ggml_row_size(GGML_TYPE_IQ3_S, NPR));
    for (int i = 0; i < NR*NPR; i++) {
        x[i] = rnd_gauss();
    }
    for (int i = 0; i < NPR; i++) {
        im[i] = (float)(rnd_uniform() < 0.25 ? 20.0 : 0.5 + rnd_uniform());
    }
    for (int ti = 0; ti < N_IQ_TYPES; ti++) {
        const enum ggml_type t = iq_types[ti];
        const size_t rs = ggml_row_size(t, NPR);
        const bool needs = ggml_quantize_requires_imatrix(t);
        double werr[2] = { 0, 0 };
        for (int with_im = needs ? 1 : 0; with_im < 2; with_im++) {
            const size_t got = ggml_quantize_chunk(t, x, q, 0, NR, NPR, with_im ? im : NULL);
            CHECK(got == NR * rs);
            CHECK(ggml_validate_row_data(t, q, got));
            ggml_get_type_traits(t)->to_float(q, y, NR*NPR);
            double e2 = 0, x2 = 0;
            for (int i = 0; i < NR*NPR; i++) {
                const double d = (double) y[i] - x[i];
                e2 += d*d;
                x2 += (double) x[i]*x[i];
                werr[with_im] += im[i % NPR] * d*d;
            }
            const double rel = sqrt(e2 / x2);
            CHECK_MSG(rel < rms_bound(t), "%s imatrix %d: relative rms error %.4f", ggml_type_name(t), with_im, rel);
        }
        if (!needs) {
            CHECK_MSG(werr[1] < werr[0], "%s: weighted error %.4g with imatrix, %.4g without", ggml_type_name(t), werr[1], werr[0]);
        }
        // a row of zeros decodes to zeros; so do zero sub-blocks between others
        for (int i = 0; i < NPR; i++) {
            x[i] = (i/32) % 3 == 0 ? 0.0f : rnd_gauss();
        }
        memset(x + NPR, 0, sizeof(float) * NPR);
        ggml_quantize_chunk(t, x, q, 0, 2, NPR, im);
        ggml_get_type_traits(t)->to_float(q, y, 2*NPR);
        int nonzero = 0;
        double e2 = 0, x2 = 0;
        for (int i = 0; i < NPR; i++) {
            nonzero += y[NPR + i] != 0.0f;
            if ((i/32) % 3 != 0) {
                e2 += ((double) y[i] - x[i])*((double) y[i] - x[i]);
                x2 += (double) x[i]*x[i];
            }
        }
        // IQ1 levels are shifted by 1/8 and IQ2/IQ3 have no zero level: a zero
        // sub-block is zero only through a zero scale, hence the check on the zero row
        CHECK_MSG(nonzero == 0, "%s: %d nonzero values from a zero row", ggml_type_name(t), nonzero);
        // IQ3_S keeps upstream's packing quirk (bytes must be upstream's): the
        // sub-blocks after an all-zero one are stored one slot early, so they
        // do not decode to their values; the others keep their accuracy
        if (t == GGML_TYPE_IQ3_S) {
            CHECK_MSG(sqrt(e2/x2) > 0.5, "iq3_s: zero sub-blocks: rms %.4f, upstream's packing gives more", sqrt(e2/x2));
        } else {
            CHECK_MSG(sqrt(e2/x2) < rms_bound(t) * 1.3, "%s: zero sub-blocks: rms %.4f elsewhere", ggml_type_name(t), sqrt(e2/x2));
        }
        for (int i = 0; i < NR*NPR; i++) {
            x[i] = rnd_gauss();
        }
    }
    free(x); free(y); free(im); free(q);
}

//
// validation
//

struct log_count {
    int errors;
};

// Row of two 256-value halves: half 0 holds one extreme weight (or importance) at
// position pos, block 1 ordinary values. Each type quantizes block by block,
// so half 1's bytes must be those it gets quantized alone.
static void check_extreme(enum ggml_type t, float weight, float importance, int pos) {
    float x[2*QK_K], im[2*QK_K];
    for (int i = 0; i < 2*QK_K; i++) {
        x[i]  = rnd_gauss();
        im[i] = 0.5f + (float) rnd_uniform();
    }
    x[pos]  = weight;
    im[pos] = importance;
    const size_t bs = ggml_row_size(t, QK_K);
    uint8_t * both  = (uint8_t *) malloc(2*bs);
    uint8_t * alone = (uint8_t *) malloc(bs);
    ggml_quantize_chunk(t, x, both, 0, 1, 2*QK_K, im);
    ggml_quantize_chunk(t, x + QK_K, alone, 0, 1, QK_K, im + QK_K);
    if (memcmp(both + bs, alone, bs) != 0) {
        fprintf(stderr, "  %s: weight %g importance %g at %d: the ordinary block changed\n", ggml_type_name(t),
                (double) weight, (double) importance, pos);
        CHECK(false);
    }
    free(both);
    free(alone);
}

static void test_extreme_inputs(void) {
    static const enum ggml_type types[] = {
        GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
        GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
        GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
    };
    const float big[] = { 1e15f, -1e15f, 1e30f, 3e38f, NAN, INFINITY, -INFINITY };
    const float bad_importance[] = { NAN, INFINITY, 0.0f, -1.0f, 1e30f };
    for (size_t it = 0; it < sizeof(types)/sizeof(types[0]); it++) {
        for (int pos = 0; pos < QK_K; pos += 37) {
            for (size_t k = 0; k < sizeof(big)/sizeof(big[0]); k++) {
                check_extreme(types[it], big[k], 1.0f, pos);
            }
            for (size_t k = 0; k < sizeof(bad_importance)/sizeof(bad_importance[0]); k++) {
                check_extreme(types[it], 1.0f, bad_importance[k], pos);
            }
        }
    }
}

static void count_log(enum ggml_log_level level, const char * text, void * user) {
    (void) text;
    if (level == GGML_LOG_LEVEL_ERROR) {
        ((struct log_count *) user)->errors++;
    }
}

static void test_validate(void) {
    struct log_count c = { 0 };
    ggml_log_set(count_log, &c);
    for (int ti = 0; ti < N_IQ_TYPES; ti++) {
        const enum ggml_type t = iq_types[ti];
        const size_t bs = ggml_type_size(t);
        uint8_t blocks[2*128];
        memset(blocks, 0, sizeof(blocks));
        CHECK(ggml_validate_row_data(t, blocks, 2*bs));
        c.errors = 0;
        CHECK(!ggml_validate_row_data(t, blocks, 2*bs - 1) && c.errors == 1);
        // a NaN scale in the second block
        const ggml_half nan = 0x7e00;
        if (t == GGML_TYPE_IQ1_M) {
            uint16_t sc[4];
            memcpy(sc, blocks + bs + offsetof(block_iq1_m, scales), sizeof(sc));
            for (int k = 0; k < 4; k++) sc[k] |= (uint16_t) (((nan >> 4*k) & 15) << 12);
            memcpy(blocks + bs + offsetof(block_iq1_m, scales), sc, sizeof(sc));
        } else {
            memcpy(blocks + bs, &nan, sizeof(nan)); // d opens every other block
        }
        c.errors = 0;
        CHECK_MSG(!ggml_validate_row_data(t, blocks, 2*bs) && c.errors == 1, "%s: NaN scale accepted", ggml_type_name(t));
    }
    ggml_log_set(NULL, NULL);
}

//
// MUL_MAT, vec_dot, GET_ROWS
//

static void check_mul_mat(enum ggml_type t, int64_t k, int64_t nr, int64_t nc, bool strided) {
    struct ggml_init_params ip = { 64*1024*1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, t, k, nr);
    struct ggml_tensor * xs = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, strided ? 2*nc : nc);
    struct ggml_tensor * x = strided ? ggml_view_2d(ctx, xs, k, nc, 2*xs->nb[1], 0) : xs;

    float * wf = malloc(sizeof(float) * (size_t)(k * nr));
    float * im = malloc(sizeof(float) * (size_t) k);
    for (int64_t i = 0; i < k*nr; i++) wf[i] = rnd_gauss();
    for (int64_t i = 0; i < k; i++) im[i] = (float) (0.5 + rnd_uniform());
    ggml_quantize_chunk(t, wf, w->data, 0, nr, k, im);
    ggml_get_type_traits(t)->to_float(w->data, wf, k*nr);
    for (int64_t i = 0; i < ggml_nelements(xs); i++) ((float *) xs->data)[i] = rnd_gauss();

    struct ggml_tensor * out = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    CHECK(ggml_get_type_traits_cpu(t)->vec_dot_type == GGML_TYPE_Q8_K);
    float * xq = malloc(sizeof(float) * (size_t) k);
    block_q8_K * yq = malloc(sizeof(block_q8_K) * (size_t)(k / QK_K));
    float * first = malloc(sizeof(float) * (size_t)(nr * nc));
    // both kernel families (the vector one where the build has it), 1 and 2 threads
    for (int run = 0; run < 4; run++) {
        const bool use_ref = run >= 2;
        const int  nth = run % 2 + 1;
        struct ggml_cplan plan = ggml_graph_plan(gf, nth, NULL);
        plan.use_ref = use_ref;
        void * work = malloc(plan.work_size + 1);
        plan.work_data = work;
        CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
        free(work);
        double worst = 0;
        for (int64_t c = 0; c < nc; c++) {
            quantize_row_q8_K_ref((const float *)((const char *) x->data + c*x->nb[1]), yq, k);
            dequantize_row_q8_K(yq, xq, k);
            for (int64_t r = 0; r < nr; r++) {
                double ref = 0, mag = 0;
                for (int64_t i = 0; i < k; i++) {
                    ref += (double) wf[r*k + i] * xq[i];
                    mag += fabs((double) wf[r*k + i] * xq[i]);
                }
                const float got = ((const float *) out->data)[c*nr + r];
                const double e = fabs(got - ref) / (mag * 4e-6 + 1e-30);
                worst = e > worst ? e : worst;
                if (nth == 2) {
                    CHECK(got == first[c*nr + r]);
                } else {
                    first[c*nr + r] = got;
                }
            }
        }
        CHECK_MSG(worst <= 1.0, "%s k=%lld nr=%lld nc=%lld%s %s: error %.3g of the tolerance", ggml_type_name(t),
                  (long long) k, (long long) nr, (long long) nc, strided ? " strided" : "",
                  use_ref ? "portable" : "vector", worst);
    }

    // the traits' vec_dot on one row
    quantize_row_q8_K_ref((const float *) x->data, yq, k);
    dequantize_row_q8_K(yq, xq, k);
    float s = 0;
    ggml_get_type_traits_cpu(t)->vec_dot((int) k, &s, 0, w->data, 0, yq, 0, 1);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < k; i++) {
        ref += (double) wf[i] * xq[i];
        mag += fabs((double) wf[i] * xq[i]);
    }
    CHECK_NEAR(s, ref, mag * 4e-6);

    free(first); free(yq); free(xq); free(wf); free(im);
    ggml_free(ctx);
}

// the traits' vec_dot on blocks of random bytes (every index, sign and scale
// bit pattern, not only those a quantizer writes; the scale set to a random
// finite value) against a double sum over their dequantized values
static void test_random_blocks_dot(void) {
    enum { NB = 3, K = NB*QK_K, TRIALS = 40 };
    for (int ti = 0; ti < N_IQ_TYPES; ti++) {
        const enum ggml_type t = iq_types[ti];
        const size_t bs = ggml_type_size(t);
        uint8_t w[NB*sizeof(block_iq3_s)];
        block_q8_K yq[NB];
        float x[K], wf[K], xq[K];
        for (int trial = 0; trial < TRIALS; trial++) {
            for (size_t i = 0; i < NB*bs; i++) {
                w[i] = (uint8_t) (rnd_uniform() * 256.0);
            }
            for (int b = 0; b < NB; b++) {
                const ggml_fp16_t d = ggml_fp32_to_fp16((float) (0.01 + rnd_uniform()));
                if (t == GGML_TYPE_IQ1_M) {
                    // the fp16 scale is the top 4 bits of the four uint16 scales
                    uint16_t sc[4];
                    memcpy(sc, ((block_iq1_m *)(w + b*bs))->scales, sizeof(sc));
                    for (int i = 0; i < 4; i++) {
                        sc[i] = (uint16_t) ((sc[i] & 0x0fff) | ((d >> 4*i) & 15) << 12);
                    }
                    memcpy(((block_iq1_m *)(w + b*bs))->scales, sc, sizeof(sc));
                } else {
                    memcpy(w + b*bs, &d, sizeof(d)); // d is the first member of the others
                }
            }
            for (int i = 0; i < K; i++) {
                x[i] = rnd_gauss();
            }
            quantize_row_q8_K_ref(x, yq, K);
            dequantize_row_q8_K(yq, xq, K);
            tt_check_vec_dot(t, K, w, yq, xq, wf);
        }
    }
}

static void test_mul_mat(void) {
    for (int ti = 0; ti < N_IQ_TYPES; ti++) {
        const enum ggml_type t = iq_types[ti];
        check_mul_mat(t, QK_K,   1,  1, false);
        check_mul_mat(t, 3*QK_K, 7,  2, true);
        check_mul_mat(t, 2*QK_K, 13, 5, false);
        // 1..9 columns: one block decode shared by up to 8 columns, then the rest
        for (int nc = 1; nc <= 9; nc++) {
            check_mul_mat(t, QK_K, 3, nc, nc % 3 == 0);
        }
        check_mul_mat(t, 5*QK_K, 9, 17, false);

        struct ggml_init_params ip = { 4*1024*1024, NULL, false };
        struct ggml_context * ctx = ggml_init(ip);
        struct ggml_tensor * w = ggml_new_tensor_2d(ctx, t, 2*QK_K, 3);
        struct ggml_tensor * ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
        float wf[3*2*QK_K], im[2*QK_K], want[2*QK_K];
        for (int i = 0; i < 3*2*QK_K; i++) wf[i] = rnd_gauss();
        for (int i = 0; i < 2*QK_K; i++) im[i] = 1.0f;
        ggml_quantize_chunk(t, wf, w->data, 0, 3, 2*QK_K, im);
        ((int32_t *) ids->data)[0] = 2;
        ((int32_t *) ids->data)[1] = 0;
        struct ggml_tensor * g = ggml_get_rows(ctx, w, ids);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, g);
        CHECK(ggml_graph_compute_with_ctx(ctx, gf, 1) == GGML_STATUS_SUCCESS);
        ggml_get_type_traits(t)->to_float((const char *) w->data + 2*w->nb[1], want, 2*QK_K);
        CHECK(memcmp(g->data, want, sizeof(want)) == 0);
        ggml_get_type_traits(t)->to_float(w->data, want, 2*QK_K);
        CHECK(memcmp((const char *) g->data + g->nb[1], want, sizeof(want)) == 0);
        ggml_free(ctx);
    }
}

//
// threads
//

struct thread_job {
    enum ggml_type type;
    const float  * x;
    const float  * im;
    uint8_t        q[2*110];
};

static void * quantize_thread(void * arg) {
    struct thread_job * job = arg;
    ggml_quantize_chunk(job->type, job->x, job->q, 0, 1, 2*QK_K, job->im);
    return NULL;
}

static void test_threads(void) {
    float x[2*QK_K], im[2*QK_K];
    for (int i = 0; i < 2*QK_K; i++) {
        x[i]  = rnd_gauss();
        im[i] = (float) (0.5 + rnd_uniform());
    }
    ggml_quantize_free();
    enum { NT = 6 };
    struct thread_job jobs[NT];
    pthread_t threads[NT];
    for (int i = 0; i < NT; i++) {
        jobs[i].type = i % 2 ? GGML_TYPE_IQ2_XS : GGML_TYPE_IQ1_M;
        jobs[i].x  = x;
        jobs[i].im = im;
        CHECK(pthread_create(&threads[i], NULL, quantize_thread, &jobs[i]) == 0);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(threads[i], NULL);
    }
    for (int i = 2; i < NT; i++) {
        CHECK(memcmp(jobs[i].q, jobs[i % 2].q, ggml_row_size(jobs[i].type, 2*QK_K)) == 0);
    }
    ggml_quantize_free();
}

int main(void) {
    test_layouts();
    test_grids();
    test_search_tables();
    test_dequantize_blocks();
    test_round_trips();
    test_validate();
    test_extreme_inputs();
    test_mul_mat();
    test_random_blocks_dot();
    test_threads();
    return TEST_RESULT();
}
