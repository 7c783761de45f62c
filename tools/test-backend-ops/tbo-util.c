// tbo-util.c: strings, the vars printer, random numbers, errors, reading tensors.

#include "tbo.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

// tbo_malloc, tbo_calloc, tbo_realloc: ref-eval.c (library ggml-ref)

char * tbo_strdup(const char * s) {
    const size_t n = strlen(s) + 1;
    char * d = tbo_malloc(n);
    memcpy(d, s, n);
    return d;
}

//
// strings
//

void tbo_str_printf(struct tbo_str * s, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    GGML_ASSERT(n >= 0);
    if (s->len + (size_t) n + 1 > s->cap) {
        size_t cap = s->cap > 0 ? s->cap : 64;
        while (cap < s->len + (size_t) n + 1) {
            cap *= 2;
        }
        s->s   = tbo_realloc(s->s, cap);
        s->cap = cap;
    }
    vsnprintf(s->s + s->len, s->cap - s->len, fmt, ap2);
    va_end(ap2);
    s->len += (size_t) n;
}

void tbo_str_free(struct tbo_str * s) {
    free(s->s);
    *s = (struct tbo_str) { 0 };
}

static void var_begin(struct tbo_str * s, const char * name) {
    tbo_str_printf(s, "%s%s=", s->len > 0 ? "," : "", name);
}

void tbo_var_i64(struct tbo_str * s, const char * name, int64_t v) {
    var_begin(s, name);
    tbo_str_printf(s, "%lld", (long long) v);
}

// upstream prints floats with std::to_string, which is "%f"
void tbo_var_f32(struct tbo_str * s, const char * name, float v) {
    var_begin(s, name);
    tbo_str_printf(s, "%f", (double) v);
}

void tbo_var_type(struct tbo_str * s, const char * name, enum ggml_type v) {
    var_begin(s, name);
    tbo_str_printf(s, "%s", ggml_type_name(v));
}

void tbo_var_prec(struct tbo_str * s, const char * name, enum ggml_prec v) {
    var_begin(s, name);
    tbo_str_printf(s, "%s", v == GGML_PREC_F32 ? "f32" : "def");
}

void tbo_var_str(struct tbo_str * s, const char * name, const char * v) {
    var_begin(s, name);
    tbo_str_printf(s, "%s", v);
}

void tbo_var_arr(struct tbo_str * s, const char * name, const int64_t * v, int n) {
    var_begin(s, name);
    tbo_str_printf(s, "[");
    for (int i = 0; i < n; i++) {
        tbo_str_printf(s, "%s%lld", i > 0 ? "," : "", (long long) v[i]);
    }
    tbo_str_printf(s, "]");
}

//
// random numbers: xoshiro256** seeded through splitmix64
//

static uint64_t splitmix64(uint64_t * x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tbo_rng_seed(struct tbo_rng * rng, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        rng->s[i] = splitmix64(&x);
    }
}

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

uint64_t tbo_rng_next(struct tbo_rng * rng) {
    uint64_t * s = rng->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

float tbo_rng_uniform(struct tbo_rng * rng, float min, float max) {
    // 24 random bits: a float in [0, 1) with every value equally likely
    const float u = (float) (tbo_rng_next(rng) >> 40) * (1.0f / 16777216.0f);
    float v = min + (max - min) * u;
    if (v >= max) {
        v = min; // rounding can reach max for wide ranges; keep the interval half-open
    }
    return v;
}

int64_t tbo_rng_below(struct tbo_rng * rng, int64_t n) {
    GGML_ASSERT(n > 0);
    return (int64_t) (tbo_rng_next(rng) % (uint64_t) n);
}

void tbo_rng_shuffle_f32(struct tbo_rng * rng, float * v, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = tbo_rng_below(rng, i + 1);
        const float t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

void tbo_rng_shuffle_i64(struct tbo_rng * rng, int64_t * v, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = tbo_rng_below(rng, i + 1);
        const int64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

//
// errors
//

static bool inf_or_max(double v) {
    return isinf(v) || fabs(v) >= (double) FLT_MAX;
}

// normalised mean squared error, mse(a, b) / mse(a, 0), with a the trusted values.
// Positions where both hold the same infinity (FLT_MAX counts as one) are equal
// and left out; the caller has already rejected NaNs and mismatched infinities.
double tbo_nmse(const double * a, const double * b, size_t n) {
    double mse_a_b = 0.0;
    double mse_a_0 = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (inf_or_max(a[i]) || inf_or_max(b[i])) {
            continue;
        }
        const double d = a[i] - b[i];
        mse_a_b += d * d;
        mse_a_0 += a[i] * a[i];
    }
    if (mse_a_0 == 0.0) {
        return mse_a_b == 0.0 ? 0.0 : (double) INFINITY;
    }
    return mse_a_b / mse_a_0;
}

static int cmp_double(const void * pa, const void * pb) {
    const double a = *(const double *) pa;
    const double b = *(const double *) pb;
    return a < b ? -1 : a > b ? 1 : 0;
}

// difference between two multisets: 0 when equal, 1 when disjoint
double tbo_jaccard_distance(const double * a, const double * b, size_t n) {
    if (n == 0) {
        return 0.0;
    }
    double * sa = tbo_malloc(n * sizeof(double));
    double * sb = tbo_malloc(n * sizeof(double));
    memcpy(sa, a, n * sizeof(double));
    memcpy(sb, b, n * sizeof(double));
    qsort(sa, n, sizeof(double), cmp_double);
    qsort(sb, n, sizeof(double), cmp_double);

    // size of the multiset intersection by merging the sorted lists
    size_t i = 0, j = 0, common = 0;
    while (i < n && j < n) {
        if (sa[i] == sb[j]) {
            common++; i++; j++;
        } else if (sa[i] < sb[j]) {
            i++;
        } else {
            j++;
        }
    }
    free(sa);
    free(sb);
    return (double) (n - common) / (double) n;
}

//
// reading tensors
//

static double scalar_to_double(enum ggml_type type, const uint8_t * p) {
    switch (type) {
        case GGML_TYPE_F32:  { float v;   memcpy(&v, p, sizeof(v)); return (double) v; }
        case GGML_TYPE_F64:  { double v;  memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_F16:  { ggml_fp16_t v; memcpy(&v, p, sizeof(v)); return (double) ggml_fp16_to_fp32(v); }
        case GGML_TYPE_BF16: { ggml_bf16_t v; memcpy(&v, p, sizeof(v)); return (double) ggml_bf16_to_fp32(v); }
        case GGML_TYPE_I8:   { int8_t v;  memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I16:  { int16_t v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I32:  { int32_t v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I64:  { int64_t v; memcpy(&v, p, sizeof(v)); return (double) v; }
        default: GGML_ABORT("test-backend-ops: cannot read type %s as a scalar", ggml_type_name(type));
    }
}

double * tbo_tensor_to_double(const struct ggml_tensor * t) {
    const size_t nbytes = ggml_nbytes(t);
    uint8_t * buf = tbo_malloc(nbytes);
    ggml_backend_tensor_get(t, buf, 0, nbytes);

    const int64_t n  = ggml_nelements(t);
    const int64_t bs = ggml_blck_size(t->type);
    double * out = tbo_malloc((size_t) n * sizeof(double));
    float * blk = ggml_is_quantized(t->type) ? tbo_malloc((size_t) bs * sizeof(float)) : NULL;
    const ggml_to_float_t to_float = ggml_get_type_traits(t->type)->to_float;
    if (blk != NULL && to_float == NULL) {
        GGML_ABORT("test-backend-ops: type %s has no to_float", ggml_type_name(t->type));
    }

    // element by element through the strides, so that views with gaps read right
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < t->ne[0]; i0 += bs) {
                    const size_t off = i3*t->nb[3] + i2*t->nb[2] + i1*t->nb[1] + (i0/bs)*t->nb[0];
                    if (blk != NULL) {
                        to_float(buf + off, blk, bs);
                        for (int64_t j = 0; j < bs; j++) {
                            out[k++] = (double) blk[j];
                        }
                    } else {
                        out[k++] = scalar_to_double(t->type, buf + off);
                    }
                }
            }
        }
    }
    free(blk);
    free(buf);
    return out;
}
