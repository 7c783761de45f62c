// ref-eval.c: the reference evaluator's memory model and dispatch.
//
// Each buffer-backed tensor that is not a view owns an image: one double per
// element slot of its memory, so that views, in-place ops and overlapping
// sources read and write the same values a backend would. Slot of a byte
// offset: (offset / type size) * block size (+ index in the block).

#include "ref-eval.h"
#include "ref-ops.h"

#include <math.h>
#include <stdlib.h>

//
// memory (shared with the rest of test-backend-ops, which links this library)
//

void * tbo_malloc(size_t size) {
    void * p = malloc(size > 0 ? size : 1);
    if (p == NULL) {
        GGML_ABORT("test-backend-ops: out of memory allocating %zu bytes", size);
    }
    return p;
}

void * tbo_calloc(size_t n, size_t size) {
    void * p = calloc(n > 0 ? n : 1, size > 0 ? size : 1);
    if (p == NULL) {
        GGML_ABORT("test-backend-ops: out of memory allocating %zu x %zu bytes", n, size);
    }
    return p;
}

void * tbo_realloc(void * p, size_t size) {
    void * q = realloc(p, size > 0 ? size : 1);
    if (q == NULL) {
        GGML_ABORT("test-backend-ops: out of memory allocating %zu bytes", size);
    }
    return q;
}

struct ref_image {
    const struct ggml_tensor * base;
    double *                   v;
    int64_t                    n;
    uint8_t *                  raw; // quantized types: the blocks, so that copies stay bit exact
};

struct tbo_ref {
    struct ref_image * images;
    int                n_images;
};

static const struct ggml_tensor * base_of(const struct ggml_tensor * t) {
    while (t->view_src != NULL) {
        t = t->view_src;
    }
    return t;
}

static struct ref_image * image_of(struct tbo_ref * r, const struct ggml_tensor * t) {
    const struct ggml_tensor * base = base_of(t);
    for (int i = 0; i < r->n_images; i++) {
        if (r->images[i].base == base) {
            return &r->images[i];
        }
    }
    GGML_ABORT("reference: tensor '%s' has no buffer", t->name);
}

// the byte offset of t's data in its base tensor
static size_t offset_in_base(const struct ggml_tensor * t) {
    return t->view_src != NULL ? t->view_offs : 0;
}

static bool scalar_type(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16: case GGML_TYPE_F64:
        case GGML_TYPE_I8:  case GGML_TYPE_I16: case GGML_TYPE_I32:  case GGML_TYPE_I64:
            return true;
        default:
            return false;
    }
}

static bool readable_type(enum ggml_type type) {
    return scalar_type(type) || (ggml_is_quantized(type) && ggml_get_type_traits(type)->to_float != NULL);
}

// quantized values are written through the type's reference quantizer
static bool writable_type(enum ggml_type type) {
    return scalar_type(type) || (ggml_is_quantized(type) && ggml_get_type_traits(type)->to_float != NULL &&
                                 ggml_get_type_traits(type)->from_float_ref != NULL);
}

static double read_scalar(enum ggml_type type, const uint8_t * p) {
    switch (type) {
        case GGML_TYPE_F32:  { float v;   memcpy(&v, p, sizeof(v)); return (double) v; }
        case GGML_TYPE_F64:  { double v;  memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_F16:  { ggml_fp16_t v; memcpy(&v, p, sizeof(v)); return (double) ggml_fp16_to_fp32(v); }
        case GGML_TYPE_BF16: { ggml_bf16_t v; memcpy(&v, p, sizeof(v)); return (double) ggml_bf16_to_fp32(v); }
        case GGML_TYPE_I8:   { int8_t v;  memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I16:  { int16_t v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I32:  { int32_t v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I64:  { int64_t v; memcpy(&v, p, sizeof(v)); return (double) v; }
        default: GGML_ABORT("reference: no scalar type %s", ggml_type_name(type));
    }
}

// a value as stored in a tensor of the given (non-quantized) type
static double round_scalar(enum ggml_type type, double x) {
    switch (type) {
        case GGML_TYPE_F32:  return (double) (float) x;
        case GGML_TYPE_F64:  return x;
        case GGML_TYPE_F16:  return (double) ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) x));
        case GGML_TYPE_BF16: return (double) ggml_bf16_to_fp32(ggml_fp32_to_bf16((float) x));
        // integers truncate toward zero, as a C conversion; out of range stays as computed
        case GGML_TYPE_I8:   return x >= INT8_MIN  && x <= INT8_MAX  ? (double) (int8_t)  x : x;
        case GGML_TYPE_I16:  return x >= INT16_MIN && x <= INT16_MAX ? (double) (int16_t) x : x;
        case GGML_TYPE_I32:  return x >= INT32_MIN && x <= INT32_MAX ? (double) (int32_t) x : x;
        case GGML_TYPE_I64:  return fabs(x) < 9.2e18 ? (double) (int64_t) x : x;
        default: GGML_ABORT("reference: no scalar type %s", ggml_type_name(type));
    }
}

// Q8_0 written here rather than by the library's reference quantizer, which
// the CPU backend's copies use too (a bug shared by both would pass): blocks
// of 32 (a F16 scale d = amax/127, then 32 int8 codes), the codes x/d rounded
// half away from zero, in F32 arithmetic as upstream's reference does.
static void quantize_q8_0_own(const float * x, uint8_t * q, int64_t n) {
    for (int64_t b = 0; b < n / 32; b++) {
        const float * xb = x + b*32;
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) {
            amax = fmaxf(amax, fabsf(xb[j]));
        }
        const float d  = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint8_t * block = q + b*(sizeof(ggml_fp16_t) + 32);
        const ggml_fp16_t dh = ggml_fp32_to_fp16(d);
        memcpy(block, &dh, sizeof(dh));
        for (int j = 0; j < 32; j++) {
            const int8_t c = (int8_t) roundf(xb[j] * id);
            memcpy(block + sizeof(dh) + j, &c, 1);
        }
    }
}

// blocks of a quantized type: quantized with the type's reference quantizer into q, then read back
static void round_blocks(enum ggml_type type, const double * in, double * out, uint8_t * q, int64_t n) {
    const struct ggml_type_traits * tt = ggml_get_type_traits(type);
    float * f = tbo_malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        f[i] = (float) in[i];
    }
    if (type == GGML_TYPE_Q8_0) {
        quantize_q8_0_own(f, q, n);
    } else {
        tt->from_float_ref(f, q, n);
    }
    tt->to_float(q, f, n);
    for (int64_t i = 0; i < n; i++) {
        out[i] = (double) f[i];
    }
    free(f);
}

static struct ref_image read_image(const struct ggml_tensor * t) {
    const enum ggml_type type = t->type;
    const size_t  nbytes = ggml_nbytes(t);
    const size_t  ts     = ggml_type_size(type);
    const int64_t bs     = ggml_blck_size(type);
    const int64_t nslots = (int64_t) (nbytes / ts) * bs;

    uint8_t * buf = tbo_malloc(nbytes);
    ggml_backend_tensor_get(t, buf, 0, nbytes);
    double * v = tbo_malloc((size_t) nslots * sizeof(double));
    if (ggml_is_quantized(type)) {
        float * blk = tbo_malloc((size_t) bs * sizeof(float));
        for (int64_t b = 0; b < nslots / bs; b++) {
            ggml_get_type_traits(type)->to_float(buf + (size_t) b * ts, blk, bs);
            for (int64_t j = 0; j < bs; j++) {
                v[b*bs + j] = (double) blk[j];
            }
        }
        free(blk);
        return (struct ref_image) { .base = t, .v = v, .n = nslots, .raw = buf };
    }
    for (int64_t i = 0; i < nslots; i++) {
        v[i] = read_scalar(type, buf + (size_t) i * ts);
    }
    free(buf);
    return (struct ref_image) { .base = t, .v = v, .n = nslots, .raw = NULL };
}

struct tbo_ref * tbo_ref_new(struct ggml_context * ctx) {
    struct tbo_ref * r = tbo_calloc(1, sizeof(*r));
    int cap = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL || t->buffer == NULL) {
            continue;
        }
        if (!readable_type(t->type)) {
            fprintf(stderr, "reference: cannot read tensor '%s' of type %s\n", t->name, ggml_type_name(t->type));
            tbo_ref_free(r);
            return NULL;
        }
        if (r->n_images == cap) {
            cap = cap > 0 ? 2 * cap : 32;
            r->images = tbo_realloc(r->images, (size_t) cap * sizeof(r->images[0]));
        }
        r->images[r->n_images++] = read_image(t);
    }
    return r;
}

void tbo_ref_free(struct tbo_ref * r) {
    if (r == NULL) {
        return;
    }
    for (int i = 0; i < r->n_images; i++) {
        free(r->images[i].v);
        free(r->images[i].raw);
    }
    free(r->images);
    free(r);
}

// the slot of element (i0, i1, i2, i3) of t in its image
static int64_t slot_of(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const size_t  ts = ggml_type_size(t->type);
    const int64_t bs = ggml_blck_size(t->type);
    const size_t byte = offset_in_base(t) + (size_t) (i0/bs)*t->nb[0] + (size_t) i1*t->nb[1] + (size_t) i2*t->nb[2] + (size_t) i3*t->nb[3];
    GGML_ASSERT(byte % ts == 0);
    return (int64_t) (byte / ts) * bs + i0 % bs;
}

double * ref_get(struct tbo_ref * r, const struct ggml_tensor * t) {
    struct ref_image * img = image_of(r, t);
    GGML_ASSERT(img->base->type == t->type);
    double * out = tbo_malloc((size_t) ggml_nelements(t) * sizeof(double));
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                const int64_t s0 = slot_of(t, 0, i1, i2, i3);
                const bool contiguous_row = ggml_is_quantized(t->type) || t->nb[0] == ggml_type_size(t->type);
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                    const int64_t s = contiguous_row ? s0 + i0 : slot_of(t, i0, i1, i2, i3);
                    GGML_ASSERT(s >= 0 && s < img->n);
                    out[k++] = img->v[s];
                }
            }
        }
    }
    return out;
}

double * tbo_ref_values(struct tbo_ref * r, const struct ggml_tensor * t) {
    return ref_get(r, t);
}

void ref_put_row(struct tbo_ref * r, const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, const double * row) {
    struct ref_image * img = image_of(r, t);
    const int64_t ne0 = t->ne[0];
    if (ggml_is_quantized(t->type)) {
        const int64_t bs = ggml_blck_size(t->type);
        GGML_ASSERT(t->nb[0] == ggml_type_size(t->type) && ne0 % bs == 0);
        const int64_t s0 = slot_of(t, 0, i1, i2, i3);
        GGML_ASSERT(s0 >= 0 && s0 + ne0 <= img->n);
        round_blocks(t->type, row, img->v + s0, img->raw + (size_t) (s0 / bs) * ggml_type_size(t->type), ne0);
        return;
    }
    for (int64_t i0 = 0; i0 < ne0; i0++) {
        const int64_t s = slot_of(t, i0, i1, i2, i3);
        GGML_ASSERT(s >= 0 && s < img->n);
        img->v[s] = round_scalar(t->type, row[i0]);
    }
}

void ref_put(struct tbo_ref * r, const struct ggml_tensor * t, const double * v) {
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                ref_put_row(r, t, i1, i2, i3, v + ref_idx(t->ne, 0, i1, i2, i3));
            }
        }
    }
}

// block k (in logical order) of src goes to block k of dst, bytes and all
void ref_copy_blocks(struct tbo_ref * r, const struct ggml_tensor * dst, const struct ggml_tensor * src) {
    GGML_ASSERT(dst->type == src->type && ggml_is_quantized(dst->type));
    GGML_ASSERT(ggml_nelements(dst) == ggml_nelements(src));
    struct ref_image * di = image_of(r, dst);
    struct ref_image * si = image_of(r, src);
    const int64_t bs = ggml_blck_size(dst->type);
    const size_t  ts = ggml_type_size(dst->type);
    const int64_t n_blocks = ggml_nelements(dst) / bs;
    // blocks are copied through a buffer: the two tensors may overlap
    uint8_t * raw = tbo_malloc((size_t) n_blocks * ts);
    double  * val = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < src->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < src->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < src->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < src->ne[0]; i0 += bs, k++) {
                    const int64_t s = slot_of(src, i0, i1, i2, i3);
                    GGML_ASSERT(s >= 0 && s + bs <= si->n);
                    memcpy(raw + (size_t) k * ts, si->raw + (size_t) (s / bs) * ts, ts);
                    memcpy(val + k * bs, si->v + s, (size_t) bs * sizeof(double));
                }
            }
        }
    }
    k = 0;
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0 += bs, k++) {
                    const int64_t s = slot_of(dst, i0, i1, i2, i3);
                    GGML_ASSERT(s >= 0 && s + bs <= di->n);
                    memcpy(di->raw + (size_t) (s / bs) * ts, raw + (size_t) k * ts, ts);
                    memcpy(di->v + s, val + k * bs, (size_t) bs * sizeof(double));
                }
            }
        }
    }
    free(val);
    free(raw);
}

// one block of src at (s0, s1, s2, s3) to dst at (d0, d1, d2, d3); i0 indices are multiples of the block size
void ref_copy_block(struct tbo_ref * r, const struct ggml_tensor * dst, const int64_t d[4], const struct ggml_tensor * src,
                    const int64_t s[4]) {
    struct ref_image * di = image_of(r, dst);
    struct ref_image * si = image_of(r, src);
    const int64_t bs = ggml_blck_size(dst->type);
    const size_t  ts = ggml_type_size(dst->type);
    const int64_t ds = slot_of(dst, d[0], d[1], d[2], d[3]);
    const int64_t ss = slot_of(src, s[0], s[1], s[2], s[3]);
    GGML_ASSERT(ds >= 0 && ds + bs <= di->n && ss >= 0 && ss + bs <= si->n);
    memmove(di->raw + (size_t) (ds / bs) * ts, si->raw + (size_t) (ss / bs) * ts, ts);
    memmove(di->v + ds, si->v + ss, (size_t) bs * sizeof(double));
}

// the distance between neighbouring values of a block, from its values
static bool block_step(enum ggml_type type, const double * v, int64_t n, double * step) {
    double amax = 0.0, vmin = v[0], vmax = v[0];
    for (int64_t i = 0; i < n; i++) {
        amax = fmax(amax, fabs(v[i]));
        vmin = fmin(vmin, v[i]);
        vmax = fmax(vmax, v[i]);
    }
    switch (type) {
        case GGML_TYPE_Q8_0: *step = amax / 127.0; return true;
        case GGML_TYPE_Q4_0: *step = amax / 8.0;   return true;
        case GGML_TYPE_Q5_0: *step = amax / 16.0;  return true;
        case GGML_TYPE_Q4_1: *step = (vmax - vmin) / 15.0; return true;
        case GGML_TYPE_Q5_1: *step = (vmax - vmin) / 31.0; return true;
        default: return false;
    }
}

bool tbo_ref_quant_ties_ok(enum ggml_type type, const double * ref, const double * tested, size_t n) {
    if (!ggml_is_quantized(type)) {
        return false;
    }
    const int64_t bs = ggml_blck_size(type);
    size_t n_diff = 0;
    for (size_t b = 0; b + (size_t) bs <= n; b += (size_t) bs) {
        double step;
        if (!block_step(type, ref + b, bs, &step)) {
            return false;
        }
        for (size_t i = b; i < b + (size_t) bs; i++) {
            if (tested[i] != ref[i]) {
                if (fabs(tested[i] - ref[i]) > step * (1.0 + 1e-3)) {
                    return false;
                }
                n_diff++;
            }
        }
    }
    return n_diff <= (n / 50 > 0 ? n / 50 : 1);
}

double ref_alibi_slope(double max_bias, uint32_t n_head, uint32_t h) {
    if (max_bias <= 0.0) {
        return 1.0;
    }
    // the largest power of two not above n_head
    uint32_t n_head_log2 = 1;
    while (n_head_log2 * 2 <= n_head) {
        n_head_log2 *= 2;
    }
    const double m0 = pow(2.0, -max_bias / n_head_log2);
    const double m1 = pow(2.0, -(max_bias / 2.0) / n_head_log2);
    return h < n_head_log2 ? pow(m0, h + 1) : pow(m1, 2*(h - n_head_log2) + 1);
}

//
// what the evaluator implements
//

static bool types_readable(const struct ggml_tensor * node) {
    if (!writable_type(node->type)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (node->src[i] != NULL && !readable_type(node->src[i]->type)) {
            return false;
        }
    }
    return true;
}

static bool op_implemented(const struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_NONE:
        case GGML_OP_VIEW:
        case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
        case GGML_OP_DUP:
        case GGML_OP_CONT:
        case GGML_OP_CPY:
        case GGML_OP_ADD1:
        case GGML_OP_ACC:
        case GGML_OP_SET:
        case GGML_OP_SUM:
        case GGML_OP_SUM_ROWS:
        case GGML_OP_MEAN:
        case GGML_OP_ARGMAX:
        case GGML_OP_COUNT_EQUAL:
        case GGML_OP_REPEAT:
        case GGML_OP_CONCAT:
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_L2_NORM:
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID:
        case GGML_OP_OUT_PROD:
        case GGML_OP_GET_ROWS:
        case GGML_OP_SET_ROWS:
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_SOFT_MAX:
        case GGML_OP_ROPE:
        case GGML_OP_ROPE_BACK:
        case GGML_OP_PAD:
        case GGML_OP_ARANGE:
        case GGML_OP_ARGSORT:
        case GGML_OP_TOP_K:
        case GGML_OP_FLASH_ATTN_EXT:
        case GGML_OP_IM2COL:
        case GGML_OP_IM2COL_3D:
        case GGML_OP_IM2COL_BACK:
        case GGML_OP_COL2IM_1D:
        case GGML_OP_CONV_2D:
        case GGML_OP_CONV_3D:
        case GGML_OP_CONV_2D_DW:
        case GGML_OP_CONV_TRANSPOSE_1D:
        case GGML_OP_CONV_TRANSPOSE_2D:
        case GGML_OP_POOL_1D:
        case GGML_OP_POOL_2D:
        case GGML_OP_POOL_2D_BACK:
        case GGML_OP_UPSCALE:
        case GGML_OP_PAD_REFLECT_1D:
        case GGML_OP_ROLL:
        case GGML_OP_TIMESTEP_EMBEDDING:
        case GGML_OP_WIN_PART:
        case GGML_OP_WIN_UNPART:
        case GGML_OP_GET_REL_POS:
        case GGML_OP_ADD_REL_POS:
            return true;
        // ref-eval-train.c
        case GGML_OP_REPEAT_BACK:
        case GGML_OP_SILU_BACK:
        case GGML_OP_RMS_NORM_BACK:
        case GGML_OP_GET_ROWS_BACK:
        case GGML_OP_SOFT_MAX_BACK:
        case GGML_OP_CROSS_ENTROPY_LOSS:
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK:
        case GGML_OP_OPT_STEP_ADAMW:
        case GGML_OP_OPT_STEP_SGD:
        // ref-eval-misc.c
        case GGML_OP_ADD_ID:
        case GGML_OP_CUMSUM:
        case GGML_OP_DIAG:
        case GGML_OP_DIAG_MASK_ZERO:
        case GGML_OP_FILL:
        case GGML_OP_TRI:
        case GGML_OP_SOLVE_TRI:
        case GGML_OP_GROUP_NORM:
        case GGML_OP_LIGHTNING_INDEXER:
        case GGML_OP_DSV4_HC_COMB:
        case GGML_OP_DSV4_HC_PRE:
        case GGML_OP_DSV4_HC_POST:
        // ref-eval-ssm.c
        case GGML_OP_SSM_CONV:
        case GGML_OP_SSM_SCAN:
        case GGML_OP_RWKV_WKV6:
        case GGML_OP_GATED_LINEAR_ATTN:
        case GGML_OP_RWKV_WKV7:
        case GGML_OP_GATED_DELTA_NET:
            return true;
        case GGML_OP_GLU:
            return (unsigned) ggml_get_glu_op(node) < GGML_GLU_OP_COUNT; // the list holds every GLU op
        default:
            // the element-wise lists of ggml-op-list.h
            return ggml_ref_has_binary(node->op) ||
                   ggml_ref_has_unary(node->op, node->op == GGML_OP_UNARY ? ggml_get_unary_op(node) : GGML_UNARY_OP_COUNT);
    }
}

bool tbo_ref_supports(const struct ggml_tensor * node, const char ** why) {
    if (!op_implemented(node)) {
        *why = "op not implemented by the reference";
        return false;
    }
    if (node->op != GGML_OP_NONE && !types_readable(node)) {
        *why = "type not readable by the reference";
        return false;
    }
    return true;
}

void tbo_ref_compute(struct tbo_ref * r, const struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_NONE:
        case GGML_OP_VIEW:
        case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
            break;
        case GGML_OP_DUP:
        case GGML_OP_CONT:
        case GGML_OP_CPY:            ref_op_copy(r, node); break;
        case GGML_OP_ADD1:           ref_op_add1(r, node); break;
        case GGML_OP_ACC:
        case GGML_OP_SET:            ref_op_set_acc(r, node); break;
        case GGML_OP_SUM:            ref_op_sum(r, node); break;
        case GGML_OP_SUM_ROWS:
        case GGML_OP_MEAN:           ref_op_sum_rows(r, node); break;
        case GGML_OP_ARGMAX:         ref_op_argmax(r, node); break;
        case GGML_OP_COUNT_EQUAL:    ref_op_count_equal(r, node); break;
        case GGML_OP_REPEAT:         ref_op_repeat(r, node); break;
        case GGML_OP_CONCAT:         ref_op_concat(r, node); break;
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_L2_NORM:        ref_op_norm(r, node); break;
        case GGML_OP_MUL_MAT:        ref_op_mul_mat(r, node); break;
        case GGML_OP_MUL_MAT_ID:     ref_op_mul_mat_id(r, node); break;
        case GGML_OP_OUT_PROD:       ref_op_out_prod(r, node); break;
        case GGML_OP_GET_ROWS:       ref_op_get_rows(r, node); break;
        case GGML_OP_SET_ROWS:       ref_op_set_rows(r, node); break;
        case GGML_OP_DIAG_MASK_INF:  ref_op_diag_mask_inf(r, node); break;
        case GGML_OP_SOFT_MAX:       ref_op_soft_max(r, node); break;
        case GGML_OP_ROPE:
        case GGML_OP_ROPE_BACK:      ref_op_rope(r, node); break;
        case GGML_OP_PAD:            ref_op_pad(r, node); break;
        case GGML_OP_ARANGE:         ref_op_arange(r, node); break;
        case GGML_OP_ARGSORT:
        case GGML_OP_TOP_K:          ref_op_argsort(r, node); break;
        case GGML_OP_FLASH_ATTN_EXT: ref_op_flash_attn_ext(r, node); break;
        case GGML_OP_IM2COL:             ref_op_im2col(r, node); break;
        case GGML_OP_IM2COL_3D:          ref_op_im2col_3d(r, node); break;
        case GGML_OP_IM2COL_BACK:        ref_op_im2col_back(r, node); break;
        case GGML_OP_COL2IM_1D:          ref_op_col2im_1d(r, node); break;
        case GGML_OP_CONV_2D:
        case GGML_OP_CONV_3D:            ref_op_conv(r, node); break;
        case GGML_OP_CONV_2D_DW:         ref_op_conv_2d_dw(r, node); break;
        case GGML_OP_CONV_TRANSPOSE_1D:
        case GGML_OP_CONV_TRANSPOSE_2D:  ref_op_conv_transpose(r, node); break;
        case GGML_OP_POOL_1D:
        case GGML_OP_POOL_2D:            ref_op_pool(r, node); break;
        case GGML_OP_POOL_2D_BACK:       ref_op_pool_2d_back(r, node); break;
        case GGML_OP_UPSCALE:            ref_op_upscale(r, node); break;
        case GGML_OP_PAD_REFLECT_1D:     ref_op_pad_reflect_1d(r, node); break;
        case GGML_OP_ROLL:               ref_op_roll(r, node); break;
        case GGML_OP_TIMESTEP_EMBEDDING: ref_op_timestep_embedding(r, node); break;
        case GGML_OP_WIN_PART:           ref_op_win_part(r, node); break;
        case GGML_OP_WIN_UNPART:         ref_op_win_unpart(r, node); break;
        case GGML_OP_GET_REL_POS:        ref_op_get_rel_pos(r, node); break;
        case GGML_OP_ADD_REL_POS:        ref_op_add_rel_pos(r, node); break;
        case GGML_OP_GLU:            ref_op_glu(r, node); break;
        case GGML_OP_REPEAT_BACK:
        case GGML_OP_SILU_BACK:
        case GGML_OP_RMS_NORM_BACK:
        case GGML_OP_GET_ROWS_BACK:
        case GGML_OP_SOFT_MAX_BACK:
        case GGML_OP_CROSS_ENTROPY_LOSS:
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK:
        case GGML_OP_OPT_STEP_ADAMW:
        case GGML_OP_OPT_STEP_SGD:   ref_op_train(r, node); break;
        case GGML_OP_ADD_ID:         ref_op_add_id(r, node); break;
        case GGML_OP_CUMSUM:         ref_op_cumsum(r, node); break;
        case GGML_OP_DIAG:           ref_op_diag(r, node); break;
        case GGML_OP_DIAG_MASK_ZERO: ref_op_diag_mask_inf(r, node); break;
        case GGML_OP_FILL:           ref_op_fill(r, node); break;
        case GGML_OP_TRI:            ref_op_tri(r, node); break;
        case GGML_OP_SOLVE_TRI:      ref_op_solve_tri(r, node); break;
        case GGML_OP_GROUP_NORM:     ref_op_group_norm(r, node); break;
        case GGML_OP_LIGHTNING_INDEXER: ref_op_lightning_indexer(r, node); break;
        case GGML_OP_DSV4_HC_COMB:
        case GGML_OP_DSV4_HC_PRE:
        case GGML_OP_DSV4_HC_POST:   ref_op_dsv4_hc(r, node); break;
        case GGML_OP_SSM_CONV:       ref_op_ssm_conv(r, node); break;
        case GGML_OP_SSM_SCAN:       ref_op_ssm_scan(r, node); break;
        case GGML_OP_RWKV_WKV6:
        case GGML_OP_GATED_LINEAR_ATTN:
        case GGML_OP_RWKV_WKV7:      ref_op_wkv(r, node); break;
        case GGML_OP_GATED_DELTA_NET: ref_op_gated_delta_net(r, node); break;
        default:
            if (ggml_ref_has_binary(node->op)) {
                ref_op_binary(r, node);
            } else if (ggml_ref_has_unary(node->op, node->op == GGML_OP_UNARY ? ggml_get_unary_op(node) : GGML_UNARY_OP_COUNT)) {
                ref_op_map(r, node); // UNARY too
            } else {
                GGML_ABORT("reference: op %s not implemented", ggml_op_desc(node));
            }
    }
}
