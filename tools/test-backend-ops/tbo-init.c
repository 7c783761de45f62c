// tbo-init.c: input data for the test cases.
//
// Views are not initialised: their bytes belong to the tensor they view, which
// is. Op results are, as upstream does, so that both sides start from the same
// bytes everywhere.

#include "tbo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void set_floats(struct ggml_tensor * t, const float * data, int64_t n, struct tbo_rng * rng) {
    const enum ggml_type type = t->type;
    if (type == GGML_TYPE_F32) {
        ggml_backend_tensor_set(t, data, 0, (size_t) n * sizeof(float));
        return;
    }
    if (type == GGML_TYPE_F64) {
        double * d = tbo_malloc((size_t) n * sizeof(double));
        for (int64_t i = 0; i < n; i++) {
            d[i] = (double) data[i];
        }
        ggml_backend_tensor_set(t, d, 0, (size_t) n * sizeof(double));
        free(d);
        return;
    }

    // F16, BF16 and the quantized types go through ggml_quantize_chunk, one block per row
    const int64_t bs = ggml_blck_size(type);
    GGML_ASSERT(n % bs == 0);
    const size_t nbytes = ggml_row_size(type, n);
    uint8_t * q = tbo_malloc(nbytes);
    if (ggml_get_type_traits(type)->from_float_ref == NULL && type != GGML_TYPE_F16 && type != GGML_TYPE_BF16) {
        // a type this ggml cannot quantize: zeros are at least valid blocks
        memset(q, 0, nbytes);
    } else {
        float * imatrix = NULL;
        const bool use_imatrix = ggml_quantize_requires_imatrix(type) || (tbo_rng_next(rng) & 1);
        if (ggml_is_quantized(type) && use_imatrix) {
            imatrix = tbo_malloc((size_t) bs * sizeof(float));
            for (int64_t i = 0; i < bs; i++) {
                imatrix[i] = 1.0f;
            }
        }
        ggml_quantize_chunk(type, data, q, 0, n / bs, bs, imatrix);
        free(imatrix);
    }
    ggml_backend_tensor_set(t, q, 0, nbytes);
    free(q);
}

static void set_random_ints(struct ggml_tensor * t, struct tbo_rng * rng) {
    const int64_t n  = ggml_nelements(t);
    const size_t  es = ggml_type_size(t->type);
    uint8_t * d = tbo_malloc((size_t) n * es);
    for (int64_t i = 0; i < n; i++) {
        const uint64_t r = tbo_rng_next(rng);
        switch (t->type) {
            case GGML_TYPE_I8:  { const int8_t  v = (int8_t)  (r >> 56); memcpy(d + i*es, &v, es); } break;
            case GGML_TYPE_I16: { const int16_t v = (int16_t) (r >> 48); memcpy(d + i*es, &v, es); } break;
            case GGML_TYPE_I32: { const int32_t v = (int32_t) (r >> 32); memcpy(d + i*es, &v, es); } break;
            // 41 bits: exact in a double, so that both sides of a comparison read the same value
            case GGML_TYPE_I64: { const int64_t v = (int64_t) (r >> 23) - ((int64_t) 1 << 40); memcpy(d + i*es, &v, es); } break;
            default: GGML_ABORT("not an integer type");
        }
    }
    ggml_backend_tensor_set(t, d, 0, (size_t) n * es);
    free(d);
}

void tbo_init_uniform(struct tbo_rng * rng, struct ggml_tensor * t, float min, float max) {
    if (t->view_src != NULL) {
        return;
    }
    switch (t->type) {
        case GGML_TYPE_I8:
        case GGML_TYPE_I16:
        case GGML_TYPE_I32:
        case GGML_TYPE_I64:
            set_random_ints(t, rng);
            return;
        default:
            break;
    }
    const int64_t n = ggml_nelements(t);
    float * data = tbo_malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        data[i] = tbo_rng_uniform(rng, min, max);
    }
    set_floats(t, data, n, rng);
    free(data);
}

void tbo_init_all_uniform(struct tbo_rng * rng, struct ggml_context * ctx, float min, float max) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        tbo_init_uniform(rng, t, min, max);
    }
}

void tbo_init_kq_mask(struct tbo_rng * rng, struct ggml_tensor * t, float min, float max) {
    GGML_ASSERT(t->type == GGML_TYPE_F16);
    GGML_ASSERT(ggml_is_contiguous(t));
    const int64_t ne0 = t->ne[0], ne1 = t->ne[1], ne2 = t->ne[2], ne3 = t->ne[3];
    const int64_t n = ne0*ne1*ne2*ne3;

    float * data = tbo_malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        data[i] = tbo_rng_uniform(rng, min, max);
    }

    // blocks of -inf (masked) or 0, covering about a fifth of the mask as upstream's;
    // the first is always -inf and narrower than a row, so that small masks have one too
    const int64_t blck0 = 128;
    const int64_t blck1 = 64;
    int64_t n_blocks = (int64_t) (0.2 * (double) n / (double) (blck0 * blck1));
    if (n_blocks < 1) {
        n_blocks = 1;
    }
    for (int64_t b = 0; b < n_blocks; b++) {
        const int64_t p3 = tbo_rng_below(rng, ne3);
        const int64_t p2 = tbo_rng_below(rng, ne2);
        const int64_t p1 = tbo_rng_below(rng, ne1);
        const int64_t p0 = tbo_rng_below(rng, ne0);
        const bool    inf   = b == 0 || (tbo_rng_next(rng) & 1);
        const int64_t width = b == 0 ? (ne0 + 3) / 4 : blck0;
        for (int64_t i1 = 0; i1 < blck1 && p1 + i1 < ne1; i1++) {
            const int64_t row = ((p3*ne2 + p2)*ne1 + p1 + i1)*ne0;
            for (int64_t i0 = 0; i0 < width && p0 + i0 < ne0; i0++) {
                data[row + p0 + i0] = inf ? -INFINITY : 0.0f;
            }
        }
    }

    ggml_fp16_t * h = tbo_malloc((size_t) n * sizeof(ggml_fp16_t));
    ggml_fp32_to_fp16_row(data, h, n);
    ggml_backend_tensor_set(t, h, 0, (size_t) n * sizeof(ggml_fp16_t));
    free(h);
    free(data);
}

void tbo_init_unique_rows(struct tbo_rng * rng, struct ggml_tensor * t) {
    GGML_ASSERT(t->type == GGML_TYPE_F32);
    float * row = tbo_malloc((size_t) t->ne[0] * sizeof(float));
    for (int64_t r = 0; r < ggml_nrows(t); r++) {
        for (int64_t i = 0; i < t->ne[0]; i++) {
            row[i] = (float) i;
        }
        tbo_rng_shuffle_f32(rng, row, t->ne[0]);
        ggml_backend_tensor_set(t, row, (size_t) r * t->nb[1], (size_t) t->ne[0] * sizeof(float));
    }
    free(row);
}

void tbo_init_row_ids(struct tbo_rng * rng, struct ggml_tensor * t, int64_t num_rows) {
    GGML_ASSERT(t->type == GGML_TYPE_I32 || t->type == GGML_TYPE_I64);
    GGML_ASSERT(t->ne[0] <= num_rows);
    int64_t * ids = tbo_malloc((size_t) num_rows * sizeof(int64_t));
    int32_t * ids32 = tbo_malloc((size_t) t->ne[0] * sizeof(int32_t));
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                for (int64_t i = 0; i < num_rows; i++) {
                    ids[i] = i;
                }
                tbo_rng_shuffle_i64(rng, ids, num_rows);
                const size_t offs = i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
                if (t->type == GGML_TYPE_I32) {
                    for (int64_t i = 0; i < t->ne[0]; i++) {
                        ids32[i] = (int32_t) ids[i];
                    }
                    ggml_backend_tensor_set(t, ids32, offs, (size_t) t->ne[0] * sizeof(int32_t));
                } else {
                    ggml_backend_tensor_set(t, ids, offs, (size_t) t->ne[0] * sizeof(int64_t));
                }
            }
        }
    }
    free(ids32);
    free(ids);
}

void tbo_init_mul_mat_id(struct tbo_rng * rng, struct ggml_context * ctx, int n_mats) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (t->type != GGML_TYPE_I32) {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
            continue;
        }
        int64_t * row = tbo_malloc((size_t) t->ne[0] * sizeof(int64_t));
        int32_t * row32 = tbo_malloc((size_t) t->ne[0] * sizeof(int32_t));
        for (int64_t r = 0; r < ggml_nrows(t); r++) {
            for (int64_t i = 0; i < t->ne[0]; i++) {
                row[i] = i % n_mats;
            }
            tbo_rng_shuffle_i64(rng, row, t->ne[0]);
            for (int64_t i = 0; i < t->ne[0]; i++) {
                row32[i] = (int32_t) row[i];
            }
            ggml_backend_tensor_set(t, row32, (size_t) r * t->nb[1], (size_t) t->ne[0] * sizeof(int32_t));
        }
        free(row32);
        free(row);
    }
}

void tbo_init_i32_below(struct tbo_rng * rng, struct ggml_tensor * t, int64_t n) {
    GGML_ASSERT(t->type == GGML_TYPE_I32 && ggml_is_contiguous(t));
    const int64_t ne = ggml_nelements(t);
    int32_t * d = tbo_malloc((size_t) ne * sizeof(int32_t));
    for (int64_t i = 0; i < ne; i++) {
        d[i] = (int32_t) tbo_rng_below(rng, n);
    }
    ggml_backend_tensor_set(t, d, 0, (size_t) ne * sizeof(int32_t));
    free(d);
}
