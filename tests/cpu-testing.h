#pragma once

// cpu-testing.h: helpers for the CPU kernel tests.
//
//   tt_fill_uniform  fill a tensor of any type with seeded uniform values
//   tt_get           read element (i0, i1, i2, i3) of any type as a double
//                    (quantized rows are dequantized with the type's reference)
//   tt_compute       compute a graph on the CPU with n threads
//   tt_same_bits     compare two tensors byte for byte
//   tt_max_err       the largest |got - ref| relative to a tolerance scale
//   tt_check_vec_dot the traits' vec_dot of one weight row against a double sum
//
// Tensors are in context memory (no backend buffers), so kernels can be
// tested with ggml_graph_compute alone. References are computed by the test
// itself in double precision from the input values read back with tt_get.

#include "ggml.h"
#include "ggml-cpu.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// xorshift64*: small, seedable, identical on every platform
static inline uint64_t tt_rand_u64(uint64_t * state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static inline double tt_rand_uniform(uint64_t * state, double lo, double hi) {
    return lo + (hi - lo) * (double)(tt_rand_u64(state) >> 11) / 9007199254740992.0;
}

static inline struct ggml_context * tt_ctx_new(size_t mem_mib) {
    struct ggml_init_params params = { mem_mib * 1024 * 1024, NULL, false };
    return ggml_init(params);
}

// Fill every element of t (which may be a non-contiguous view) with values
// uniform in [lo, hi). Quantized tensors must be contiguous: whole rows are
// quantized with the type's reference quantizer, or, for the IQ types that
// have none (iq2_xxs, iq2_xs, iq1_s, iq1_m), by ggml_quantize_chunk with a
// uniform importance matrix.
static inline void tt_fill_uniform(struct ggml_tensor * t, double lo, double hi, uint64_t seed) {
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
    const struct ggml_type_traits * tr = ggml_get_type_traits(t->type);
    if (ggml_is_quantized(t->type)) {
        const int64_t n = t->ne[0];
        float * row = (float *) malloc(sizeof(float) * (size_t) n);
        float * ones = NULL;
        if (tr->from_float_ref == NULL) {
            ones = (float *) malloc(sizeof(float) * (size_t) n);
            for (int64_t i0 = 0; i0 < n; i0++) {
                ones[i0] = 1.0f;
            }
        }
        for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
            for (int64_t i0 = 0; i0 < n; i0++) {
                row[i0] = (float) tt_rand_uniform(&state, lo, hi);
            }
            char * dst = (char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
            if (ones != NULL) {
                ggml_quantize_chunk(t->type, row, dst, 0, 1, n, ones);
            } else {
                tr->from_float_ref(row, dst, n);
            }
        }
        free(ones);
        free(row);
        return;
    }
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
        const double v = tt_rand_uniform(&state, lo, hi);
        ggml_set_f32_nd(t, (int) i0, (int) i1, (int) i2, (int) i3, (float) v);
    }
}

// fill an I32 tensor with integers in [lo, hi]
static inline void tt_fill_int(struct ggml_tensor * t, int64_t lo, int64_t hi, uint64_t seed) {
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 7;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
        const int64_t v = lo + (int64_t)(tt_rand_u64(&state) % (uint64_t)(hi - lo + 1));
        char * p = (char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
        switch (t->type) {
            case GGML_TYPE_I32: *(int32_t *) p = (int32_t) v; break;
            case GGML_TYPE_I64: *(int64_t *) p = v;           break;
            case GGML_TYPE_I16: *(int16_t *) p = (int16_t) v; break;
            case GGML_TYPE_I8:  *(int8_t  *) p = (int8_t)  v; break;
            default:            ggml_set_f32_nd(t, (int) i0, (int) i1, (int) i2, (int) i3, (float) v); break;
        }
    }
}

// element (i0, i1, i2, i3) of t as a double, for any type
static inline double tt_get(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * base = (const char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
    if (ggml_is_quantized(t->type)) {
        const int64_t blck = ggml_blck_size(t->type);
        float vals[256];
        const char * block = base + (i0 / blck) * (int64_t) ggml_type_size(t->type);
        ggml_get_type_traits(t->type)->to_float(block, vals, blck);
        return vals[i0 % blck];
    }
    const char * p = base + i0*t->nb[0];
    switch (t->type) {
        case GGML_TYPE_F32:  return *(const float *) p;
        case GGML_TYPE_F16:  return ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
        case GGML_TYPE_BF16: return ggml_bf16_to_fp32(*(const ggml_bf16_t *) p);
        case GGML_TYPE_F64:  return *(const double *) p;
        case GGML_TYPE_I8:   return *(const int8_t *) p;
        case GGML_TYPE_I16:  return *(const int16_t *) p;
        case GGML_TYPE_I32:  return *(const int32_t *) p;
        case GGML_TYPE_I64:  return (double) *(const int64_t *) p;
        default:             return NAN;
    }
}

static inline enum ggml_status tt_compute(struct ggml_context * ctx, struct ggml_tensor * out, int n_threads) {
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(gf, out);
    return ggml_graph_compute_with_ctx(ctx, gf, n_threads);
}

static inline bool tt_same_bits(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (!ggml_are_same_shape(a, b) || a->type != b->type) {
        return false;
    }
    const size_t row = ggml_row_size(a->type, a->ne[0]);
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
        const char * pa = (const char *) a->data + i1*a->nb[1] + i2*a->nb[2] + i3*a->nb[3];
        const char * pb = (const char *) b->data + i1*b->nb[1] + i2*b->nb[2] + i3*b->nb[3];
        if (ggml_is_contiguous_rows(a) && ggml_is_contiguous_rows(b)) {
            if (memcmp(pa, pb, row) != 0) {
                return false;
            }
        } else {
            for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
                if (memcmp(pa + i0*a->nb[0], pb + i0*b->nb[0], ggml_type_size(a->type)) != 0) {
                    return false;
                }
            }
        }
    }
    return true;
}

// max over elements of |got - ref| / (atol + rtol*|ref|); <= 1 means within
// tolerance. ref(i0, i1, i2, i3, user) returns the reference value.
typedef double (*tt_ref_fn)(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user);

static inline double tt_max_err(const struct ggml_tensor * got, tt_ref_fn ref, void * user, double atol, double rtol) {
    double worst = 0.0;
    for (int64_t i3 = 0; i3 < got->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < got->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < got->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < got->ne[0]; i0++) {
        const double r = ref(i0, i1, i2, i3, user);
        const double g = tt_get(got, i0, i1, i2, i3);
        double e;
        if (isnan(r) || isnan(g)) {
            e = isnan(r) && isnan(g) ? 0.0 : INFINITY;
        } else if (isinf(r) || isinf(g)) {
            e = r == g ? 0.0 : INFINITY;
        } else {
            e = fabs(g - r) / (atol + rtol * fabs(r));
        }
        worst = e > worst ? e : worst;
    }
    return worst;
}

// The CPU traits' vec_dot of one row of k weights of type t (w) with the
// activation row yq, whose dequantized values are xq, checked against the
// double sum of the weights' dequantized values (the type's to_float) times
// xq, within 4e-6 of the sum of the magnitudes; wf: k floats of scratch
static inline void tt_check_vec_dot(enum ggml_type t, int64_t k, const void * w, const void * yq, const float * xq, float * wf) {
    ggml_get_type_traits(t)->to_float(w, wf, k);
    double ref = 0.0, mag = 0.0;
    for (int64_t i = 0; i < k; i++) {
        ref += (double) wf[i] * xq[i];
        mag += fabs((double) wf[i] * xq[i]);
    }
    float got = 0.0f;
    ggml_get_type_traits_cpu(t)->vec_dot((int) k, &got, 0, w, 0, yq, 0, 1);
    CHECK_MSG(fabs(got - ref) <= mag * 4e-6, "%s random blocks: %g, want %g", ggml_type_name(t), got, ref);
}
