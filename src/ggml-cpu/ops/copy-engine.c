// copy-engine.c: element conversions between types and the strided copy
// engine behind DUP, CPY and CONT (see copy-impl.h).
//
// A copy moves element k (row-major order) of src to element k of dst, for
// any two layouts with the same number of elements. Each side is first
// simplified by fusing dimensions that are laid out back to back, so that a
// contiguous tensor becomes one long row. The threads then take contiguous
// ranges of k; a range is walked as "runs": stretches that stay within one
// row of src and one row of dst, each handed to one converter call. Runs
// along a contiguous row become memcpy or a vectorised conversion.
//
// A transposed layout (one side strided along dim 0 but contiguous along
// another dim) is copied in square tiles instead, so that both sides stay in
// cache. Quantized sides are converted through F32 scratch, whole blocks at a
// time, with the reference quantizers of ggml-quants.h.

#include "ops/copy-impl.h"
#include "simd/vec-convert.h"

//
// scratch for staged conversions
//

static size_t cvt_scratch_stride(void) {
    const size_t bytes = GGML_CPU_CVT_CHUNK * sizeof(float);
    return (bytes + GGML_CPU_CACHE_LINE - 1) / GGML_CPU_CACHE_LINE * GGML_CPU_CACHE_LINE;
}

size_t ggml_cpu_cvt_work_size(int n_threads) {
    return cvt_scratch_stride() * (size_t) n_threads;
}

float * ggml_cpu_cvt_scratch(const struct ggml_compute_params * params) {
    GGML_ASSERT(params->wdata != NULL && params->wsize >= ggml_cpu_cvt_work_size(params->ith + 1) &&
                "the plan holds no conversion scratch for this node");
    return (float *)((char *) params->wdata + cvt_scratch_stride() * (size_t) params->ith);
}

//
// runs of one type: memcpy when both sides are contiguous, else element by element
//

static void copy_run(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds, int64_t n, size_t size) {
    if (ss == size && ds == size) {
        memcpy(dst, src, (size_t) n * size);
        return;
    }
    // constant sizes let the compiler turn each memcpy into one move
    switch (size) {
        case 1: for (int64_t i = 0; i < n; i++) { memcpy(dst + i*ds, src + i*ss, 1); } break;
        case 2: for (int64_t i = 0; i < n; i++) { memcpy(dst + i*ds, src + i*ss, 2); } break;
        case 4: for (int64_t i = 0; i < n; i++) { memcpy(dst + i*ds, src + i*ss, 4); } break;
        case 8: for (int64_t i = 0; i < n; i++) { memcpy(dst + i*ds, src + i*ss, 8); } break;
        default: for (int64_t i = 0; i < n; i++) { memcpy(dst + i*ds, src + i*ss, size); } break;
    }
}

void ggml_cpu_copy_run_bytes(const char * src, size_t ss, char * dst, size_t ds, int64_t n, size_t size) {
    copy_run(src, ss, dst, ds, n, size);
}

static void run_copy_1(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds, int64_t n, bool use_ref) {
    (void) use_ref;
    copy_run(src, ss, dst, ds, n, 1);
}

static void run_copy_2(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds, int64_t n, bool use_ref) {
    (void) use_ref;
    copy_run(src, ss, dst, ds, n, 2);
}

static void run_copy_4(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds, int64_t n, bool use_ref) {
    (void) use_ref;
    copy_run(src, ss, dst, ds, n, 4);
}

static void run_copy_8(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds, int64_t n, bool use_ref) {
    (void) use_ref;
    copy_run(src, ss, dst, ds, n, 8);
}

//
// runs converted between types: a vector path for contiguous runs (the
// scalar *_ref one under use_ref), element by element otherwise
//

static inline float i32_to_fp32(int32_t x) {
    return (float) x;
}

#define COPY_CVT         run_f32_to_f16
#define COPY_CVT_S       float
#define COPY_CVT_D       ggml_fp16_t
#define COPY_CVT_ONE     ggml_compute_fp32_to_fp16
#define COPY_CVT_VEC     ggml_vec_fp32_to_fp16
#define COPY_CVT_VEC_REF ggml_vec_fp32_to_fp16_ref
#include "ops/copy-cvt-tmpl.h"

#define COPY_CVT         run_f16_to_f32
#define COPY_CVT_S       ggml_fp16_t
#define COPY_CVT_D       float
#define COPY_CVT_ONE     ggml_compute_fp16_to_fp32
#define COPY_CVT_VEC     ggml_vec_fp16_to_fp32
#define COPY_CVT_VEC_REF ggml_vec_fp16_to_fp32_ref
#include "ops/copy-cvt-tmpl.h"

#define COPY_CVT         run_f32_to_bf16
#define COPY_CVT_S       float
#define COPY_CVT_D       ggml_bf16_t
#define COPY_CVT_ONE     ggml_compute_fp32_to_bf16
#define COPY_CVT_VEC     ggml_vec_fp32_to_bf16
#define COPY_CVT_VEC_REF ggml_vec_fp32_to_bf16_ref
#include "ops/copy-cvt-tmpl.h"

#define COPY_CVT         run_bf16_to_f32
#define COPY_CVT_S       ggml_bf16_t
#define COPY_CVT_D       float
#define COPY_CVT_ONE     ggml_compute_bf16_to_fp32
#define COPY_CVT_VEC     ggml_vec_bf16_to_fp32
#define COPY_CVT_VEC_REF ggml_vec_bf16_to_fp32_ref
#include "ops/copy-cvt-tmpl.h"

#define COPY_CVT         run_f32_to_i32
#define COPY_CVT_S       float
#define COPY_CVT_D       int32_t
#define COPY_CVT_ONE     ggml_cpu_fp32_to_i32_trunc
#define COPY_CVT_VEC     ggml_vec_fp32_to_i32
#define COPY_CVT_VEC_REF ggml_vec_fp32_to_i32_ref
#include "ops/copy-cvt-tmpl.h"

#define COPY_CVT         run_i32_to_f32
#define COPY_CVT_S       int32_t
#define COPY_CVT_D       float
#define COPY_CVT_ONE     i32_to_fp32
#define COPY_CVT_VEC     ggml_vec_i32_to_fp32
#define COPY_CVT_VEC_REF ggml_vec_i32_to_fp32_ref
#include "ops/copy-cvt-tmpl.h"

// F16 <-> BF16 go through F32 (exact for the widening step), a stack-sized piece at a time
#define HALF_PIECE 256

static void run_f16_to_bf16(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds, int64_t n, bool use_ref) {
    float buf[HALF_PIECE];
    for (int64_t i = 0; i < n; i += HALF_PIECE) {
        const int64_t m = MIN(HALF_PIECE, n - i);
        run_f16_to_f32(src + i*ss, ss, (char *) buf, sizeof(float), m, use_ref);
        run_f32_to_bf16((const char *) buf, sizeof(float), dst + i*ds, ds, m, use_ref);
    }
}

static void run_bf16_to_f16(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds, int64_t n, bool use_ref) {
    float buf[HALF_PIECE];
    for (int64_t i = 0; i < n; i += HALF_PIECE) {
        const int64_t m = MIN(HALF_PIECE, n - i);
        run_bf16_to_f32(src + i*ss, ss, (char *) buf, sizeof(float), m, use_ref);
        run_f32_to_f16((const char *) buf, sizeof(float), dst + i*ds, ds, m, use_ref);
    }
}

#undef HALF_PIECE

ggml_cpu_run_cvt_t ggml_cpu_run_converter(enum ggml_type src, enum ggml_type dst) {
    if (ggml_is_quantized(src) || ggml_is_quantized(dst)) {
        return NULL;
    }
    if (src == dst) {
        switch (ggml_type_size(src)) {
            case 1:  return run_copy_1;
            case 2:  return run_copy_2;
            case 4:  return run_copy_4;
            case 8:  return run_copy_8;
            default: return NULL;
        }
    }
    // the conversions upstream's CPU backend performs between these types
    switch (src) {
        case GGML_TYPE_F32:
            switch (dst) {
                case GGML_TYPE_F16:  return run_f32_to_f16;
                case GGML_TYPE_BF16: return run_f32_to_bf16;
                case GGML_TYPE_I32:  return run_f32_to_i32;
                default:             return NULL;
            }
        case GGML_TYPE_F16:
            switch (dst) {
                case GGML_TYPE_F32:  return run_f16_to_f32;
                case GGML_TYPE_BF16: return run_f16_to_bf16;
                default:             return NULL;
            }
        case GGML_TYPE_BF16:
            switch (dst) {
                case GGML_TYPE_F32:  return run_bf16_to_f32;
                case GGML_TYPE_F16:  return run_bf16_to_f16;
                default:             return NULL;
            }
        case GGML_TYPE_I32:
            return dst == GGML_TYPE_F32 ? run_i32_to_f32 : NULL;
        default:
            return NULL;
    }
}

//
// rows through F32
//

static bool type_has_blocks(enum ggml_type type) {
    return ggml_blck_size(type) > 0 && ggml_type_size(type) > 0;
}

// quantized types with reference conversions in both directions
static bool quant_to_f32_ok(enum ggml_type type) {
    return ggml_is_quantized(type) && ggml_get_type_traits(type)->to_float != NULL;
}

static bool quant_from_f32_ok(enum ggml_type type) {
    return ggml_is_quantized(type) && ggml_get_type_traits(type)->from_float_ref != NULL;
}

static bool row_to_f32_ok(enum ggml_type type) {
    return quant_to_f32_ok(type) || ggml_cpu_run_converter(type, GGML_TYPE_F32) != NULL;
}

static bool row_from_f32_ok(enum ggml_type type) {
    return quant_from_f32_ok(type) || ggml_cpu_run_converter(GGML_TYPE_F32, type) != NULL;
}

bool ggml_cpu_can_convert_row(enum ggml_type src, enum ggml_type dst) {
    if (!type_has_blocks(src) || !type_has_blocks(dst)) {
        return false;
    }
    return ggml_cpu_run_converter(src, dst) != NULL || (row_to_f32_ok(src) && row_from_f32_ok(dst));
}

// n elements of a row (n a multiple of the block size of a quantized type) into F32 at out
static void row_piece_to_f32(enum ggml_type st, const char * src, size_t ss, float * out, int64_t n, bool use_ref) {
    if (ggml_is_quantized(st)) {
        ggml_get_type_traits(st)->to_float(src, out, n);
    } else {
        ggml_cpu_run_converter(st, GGML_TYPE_F32)(src, ss, (char *) out, sizeof(float), n, use_ref);
    }
}

static void row_piece_from_f32(const float * in, enum ggml_type dt, char * dst, size_t ds, int64_t n, bool use_ref) {
    if (ggml_is_quantized(dt)) {
        ggml_get_type_traits(dt)->from_float_ref(in, dst, n);
    } else {
        ggml_cpu_run_converter(GGML_TYPE_F32, dt)((const char *) in, sizeof(float), dst, ds, n, use_ref);
    }
}

// byte offset of element i (a block boundary for quantized types) in a row of stride s
static size_t row_offset(enum ggml_type type, size_t s, int64_t i) {
    if (ggml_is_quantized(type)) {
        return (size_t)(i / ggml_blck_size(type)) * ggml_type_size(type);
    }
    return (size_t) i * s;
}

void ggml_cpu_convert_row(enum ggml_type st, const char * src, size_t ss,
                          enum ggml_type dt, char * dst, size_t ds,
                          int64_t n, float * tmp, bool use_ref) {
    const ggml_cpu_run_cvt_t direct = ggml_cpu_run_converter(st, dt);
    if (direct != NULL) {
        direct(src, ss, dst, ds, n, use_ref);
        return;
    }
    if (st == dt) {
        // quantized rows of one type: whole blocks
        memcpy(dst, src, ggml_row_size(st, n));
        return;
    }
    const bool src_f32_cont = st == GGML_TYPE_F32 && ss == sizeof(float);
    const bool dst_f32_cont = dt == GGML_TYPE_F32 && ds == sizeof(float);
    for (int64_t i = 0; i < n; i += GGML_CPU_CVT_CHUNK) {
        const int64_t m = MIN(GGML_CPU_CVT_CHUNK, n - i);
        const char * s = src + row_offset(st, ss, i);
        char       * d = dst + row_offset(dt, ds, i);
        if (src_f32_cont) {
            row_piece_from_f32((const float *) s, dt, d, ds, m, use_ref);
        } else if (dst_f32_cont) {
            row_piece_to_f32(st, s, ss, (float *) d, m, use_ref);
        } else {
            GGML_ASSERT(tmp != NULL);
            row_piece_to_f32(st, s, ss, tmp, m, use_ref);
            row_piece_from_f32(tmp, dt, d, ds, m, use_ref);
        }
    }
}

//
// strided tensors: simplification and walking in row-major element order
//

static int64_t strided_nelements(const struct ggml_cpu_strided * t) {
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

// stride units in dim d: blocks along dim 0, elements elsewhere
static int64_t dim_units(const struct ggml_cpu_strided * t, int d) {
    return d == 0 ? t->ne[0] / ggml_blck_size(t->type) : t->ne[d];
}

// The same memory in the same element order with the fewest dimensions:
// dims of size 1 are dropped and dims laid out back to back are merged.
static struct ggml_cpu_strided strided_simplify(const struct ggml_cpu_strided * t) {
    struct ggml_cpu_strided r = {
        .data = t->data,
        .type = t->type,
        .ne   = { t->ne[0], 1, 1, 1 },
        .nb   = { t->nb[0], 0, 0, 0 },
    };
    int n = 1;
    for (int d = 1; d < GGML_MAX_DIMS; d++) {
        if (t->ne[d] == 1) {
            continue;
        }
        const int last = n - 1;
        if (last == 0 && r.ne[0] == 1 && !ggml_is_quantized(t->type)) {
            // a single element per row: its stride never matters
            r.ne[0] = t->ne[d];
            r.nb[0] = t->nb[d];
        } else if ((size_t) dim_units(&r, last) * r.nb[last] == t->nb[d]) {
            r.ne[last] *= t->ne[d];
        } else {
            r.ne[n] = t->ne[d];
            r.nb[n] = t->nb[d];
            n++;
        }
    }
    for (int d = n; d < GGML_MAX_DIMS; d++) {
        r.nb[d] = r.nb[d - 1] * (size_t) dim_units(&r, d - 1);
    }
    return r;
}

struct walker {
    struct ggml_cpu_strided t;
    int64_t blck;
    int64_t i[GGML_MAX_DIMS];
};

static void walker_seek(struct walker * w, int64_t k) {
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        w->i[d] = k % w->t.ne[d];
        k /= w->t.ne[d];
    }
}

static void walker_init(struct walker * w, const struct ggml_cpu_strided * t, int64_t k) {
    w->t    = strided_simplify(t);
    w->blck = ggml_blck_size(t->type);
    walker_seek(w, k);
}

static char * walker_ptr(const struct walker * w) {
    return w->t.data + (size_t)(w->i[0] / w->blck) * w->t.nb[0] +
           (size_t) w->i[1] * w->t.nb[1] + (size_t) w->i[2] * w->t.nb[2] + (size_t) w->i[3] * w->t.nb[3];
}

static int64_t walker_row_left(const struct walker * w) {
    return w->t.ne[0] - w->i[0];
}

// n must not exceed walker_row_left
static void walker_advance(struct walker * w, int64_t n) {
    w->i[0] += n;
    if (w->i[0] < w->t.ne[0]) {
        return;
    }
    w->i[0] = 0;
    for (int d = 1; d < GGML_MAX_DIMS; d++) {
        if (++w->i[d] < w->t.ne[d] || d == GGML_MAX_DIMS - 1) {
            return;
        }
        w->i[d] = 0;
    }
}

//
// the copy engine
//

// the same memory in the same element order, whatever the shapes say (a reshape)
bool ggml_cpu_copy_is_noop(const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst) {
    if (src->data != dst->data || src->type != dst->type) {
        return false;
    }
    const struct ggml_cpu_strided s = strided_simplify(src);
    const struct ggml_cpu_strided d = strided_simplify(dst);
    for (int k = 0; k < GGML_MAX_DIMS; k++) {
        if (s.ne[k] != d.ne[k] || (s.ne[k] > 1 && s.nb[k] != d.nb[k])) {
            return false;
        }
    }
    return true;
}

bool ggml_cpu_copy_supported(const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst) {
    if (!type_has_blocks(src->type) || !type_has_blocks(dst->type) ||
        strided_nelements(src) != strided_nelements(dst)) {
        return false;
    }
    if (src->type == dst->type) {
        return true;
    }
    if (ggml_is_quantized(dst->type)) {
        // whole blocks, contiguous within each row, quantized from F32
        return quant_from_f32_ok(dst->type) && dst->nb[0] == ggml_type_size(dst->type) &&
               (src->type == GGML_TYPE_F32 || src->type == GGML_TYPE_F16 || src->type == GGML_TYPE_BF16);
    }
    if (ggml_is_quantized(src->type)) {
        return quant_to_f32_ok(src->type) && src->nb[0] == ggml_type_size(src->type) && dst->type == GGML_TYPE_F32;
    }
    return ggml_cpu_run_converter(src->type, dst->type) != NULL;
}

// Threads split the elements in ranges of whole granules: a multiple of every
// block size involved, and wide enough that neighbouring threads rarely write
// to the same cache line.
static int64_t copy_granule(const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst) {
    const int64_t blck = MAX(ggml_blck_size(src->type), ggml_blck_size(dst->type)); // powers of two
    return MAX(blck, 64);
}

// same type: runs of whole blocks (elements for non-quantized types)
static void copy_runs_same(struct walker * ws, struct walker * wd, int64_t n) {
    const size_t  size = ggml_type_size(ws->t.type);
    const int64_t blck = ws->blck;
    while (n > 0) {
        const int64_t m = MIN(n, MIN(walker_row_left(ws), walker_row_left(wd)));
        copy_run(walker_ptr(ws), ws->t.nb[0], walker_ptr(wd), wd->t.nb[0], m / blck, size);
        walker_advance(ws, m);
        walker_advance(wd, m);
        n -= m;
    }
}

static void copy_runs_convert(struct walker * ws, struct walker * wd, int64_t n, ggml_cpu_run_cvt_t cvt, bool use_ref) {
    while (n > 0) {
        const int64_t m = MIN(n, MIN(walker_row_left(ws), walker_row_left(wd)));
        cvt(walker_ptr(ws), ws->t.nb[0], walker_ptr(wd), wd->t.nb[0], m, use_ref);
        walker_advance(ws, m);
        walker_advance(wd, m);
        n -= m;
    }
}

// Quantized dst: each run is a stretch of whole blocks of one dst row; its
// source elements, which may span several src rows, are gathered into F32.
static void copy_runs_quantize(struct walker * ws, struct walker * wd, int64_t n, float * tmp, bool use_ref) {
    const ggml_from_float_t quantize = ggml_get_type_traits(wd->t.type)->from_float_ref;
    const ggml_cpu_run_cvt_t to_f32  = ggml_cpu_run_converter(ws->t.type, GGML_TYPE_F32);
    while (n > 0) {
        const int64_t m = MIN(n, MIN(walker_row_left(wd), GGML_CPU_CVT_CHUNK));
        if (ws->t.type == GGML_TYPE_F32 && ws->t.nb[0] == sizeof(float) && walker_row_left(ws) >= m) {
            quantize((const float *) walker_ptr(ws), walker_ptr(wd), m);
            walker_advance(ws, m);
        } else {
            for (int64_t j = 0; j < m; ) {
                const int64_t c = MIN(m - j, walker_row_left(ws));
                to_f32(walker_ptr(ws), ws->t.nb[0], (char *)(tmp + j), sizeof(float), c, use_ref);
                walker_advance(ws, c);
                j += c;
            }
            quantize(tmp, walker_ptr(wd), m);
        }
        walker_advance(wd, m);
        n -= m;
    }
}

// Quantized src: each run is a stretch of whole blocks of one src row,
// dequantized and scattered over as many dst rows as it covers.
static void copy_runs_dequantize(struct walker * ws, struct walker * wd, int64_t n, float * tmp, bool use_ref) {
    const ggml_to_float_t    dequantize = ggml_get_type_traits(ws->t.type)->to_float;
    const ggml_cpu_run_cvt_t from_f32   = ggml_cpu_run_converter(GGML_TYPE_F32, wd->t.type);
    while (n > 0) {
        const int64_t m = MIN(n, MIN(walker_row_left(ws), GGML_CPU_CVT_CHUNK));
        if (wd->t.type == GGML_TYPE_F32 && wd->t.nb[0] == sizeof(float) && walker_row_left(wd) >= m) {
            dequantize(walker_ptr(ws), (float *) walker_ptr(wd), m);
            walker_advance(wd, m);
        } else {
            dequantize(walker_ptr(ws), tmp, m);
            for (int64_t j = 0; j < m; ) {
                const int64_t c = MIN(m - j, walker_row_left(wd));
                from_f32((const char *)(tmp + j), sizeof(float), walker_ptr(wd), wd->t.nb[0], c, use_ref);
                walker_advance(wd, c);
                j += c;
            }
        }
        walker_advance(ws, m);
        n -= m;
    }
}

//
// transposed layouts: one side (S) is strided along dim 0 but contiguous
// along another dim dt. Tiles of TILE x TILE elements over dims 0 and dt go
// through a buffer: S is read or written in contiguous runs along dt, the
// other side in contiguous runs along dim 0, and the transposition happens
// in the buffer, which stays in L1. Large power-of-two strides would make
// element-wise strided access thrash the cache.
//

#define TILE 32

struct tiling {
    bool src_strided; // S is src (else dst)
    int dt;           // the tiled dim besides dim 0
    int o1, o2;       // the two other dims
    int64_t nt0;      // tiles along dim 0
    int64_t ntt;      // tiles along dim dt
};

// Same shape, non-quantized, exactly one side strided along dim 0 and
// contiguous along some other dim with at least two elements.
static bool tiling_plan(const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst, struct tiling * tl) {
    if (ggml_is_quantized(src->type) || ggml_is_quantized(dst->type)) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (src->ne[d] != dst->ne[d]) {
            return false;
        }
    }
    const bool src_strided = src->nb[0] != ggml_type_size(src->type);
    const bool dst_strided = dst->nb[0] != ggml_type_size(dst->type);
    if (src_strided == dst_strided || src->ne[0] < 2) {
        return false;
    }
    const struct ggml_cpu_strided * s = src_strided ? src : dst;
    for (int d = 1; d < GGML_MAX_DIMS; d++) {
        if (s->nb[d] == ggml_type_size(s->type) && s->ne[d] >= 2) {
            tl->src_strided = src_strided;
            tl->dt  = d;
            tl->o1  = d == 1 ? 2 : 1;
            tl->o2  = d == 3 ? 2 : 3;
            tl->nt0 = (s->ne[0] + TILE - 1) / TILE;
            tl->ntt = (s->ne[d] + TILE - 1) / TILE;
            return true;
        }
    }
    return false;
}

// rows x cols elements of size es: element (r, c) from src + r*sr + c*sc to dst + r*dr + c*dc
static void copy_block(const char * GGML_RESTRICT src, size_t sr, size_t sc, char * GGML_RESTRICT dst, size_t dr, size_t dc,
                       int64_t rows, int64_t cols, size_t es) {
    for (int64_t r = 0; r < rows; r++) {
        copy_run(src + (size_t) r*sr, sc, dst + (size_t) r*dr, dc, cols, es);
    }
}

static void copy_tile(const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst, const struct tiling * tl,
                      ggml_cpu_run_cvt_t cvt, bool use_ref, const int64_t i[GGML_MAX_DIMS], char * buf) {
    const size_t es = ggml_type_size(src->type);
    const size_t ed = ggml_type_size(dst->type);
    const size_t eb = tl->src_strided ? es : ed;
    const size_t bl = TILE * eb; // stride of one buf row
    const int64_t n0 = MIN(TILE, src->ne[0] - i[0]);
    const int64_t nt = MIN(TILE, src->ne[tl->dt] - i[tl->dt]);

    const char * s = src->data;
    char       * d = dst->data;
    for (int k = 0; k < GGML_MAX_DIMS; k++) {
        s += (size_t) i[k] * src->nb[k];
        d += (size_t) i[k] * dst->nb[k];
    }
    if (tl->src_strided) {
        // src runs along dt into buf columns, then buf rows converted into dst runs along dim 0
        copy_block(s, src->nb[0], es, buf, eb, bl, n0, nt, es);
        for (int64_t k = 0; k < nt; k++) {
            cvt(buf + (size_t) k*bl, es, d + (size_t) k*dst->nb[tl->dt], dst->nb[0], n0, use_ref);
        }
    } else {
        // src runs along dim 0 converted into buf rows, then buf columns into dst runs along dt
        for (int64_t k = 0; k < nt; k++) {
            cvt(s + (size_t) k*src->nb[tl->dt], src->nb[0], buf + (size_t) k*bl, ed, n0, use_ref);
        }
        copy_block(buf, eb, bl, d, dst->nb[0], ed, n0, nt, ed);
    }
}

// Threads take groups of SUPER x SUPER tiles. Within a group the tiles along
// dt come innermost, so that S is walked along its contiguous runs and
// the group's memory on both sides (a few hundred KiB and pages) stays cached.
#define SUPER 8

static void copy_tiled(const struct ggml_compute_params * params, const struct ggml_cpu_strided * src,
                       const struct ggml_cpu_strided * dst, const struct tiling * tl, ggml_cpu_run_cvt_t cvt) {
    _Alignas(64) char buf[TILE * TILE * 8]; // buf[it][i0], in the type of S
    const int64_t * ne = src->ne;
    const int64_t ng0 = (tl->nt0 + SUPER - 1) / SUPER;
    const int64_t ngt = (tl->ntt + SUPER - 1) / SUPER;

    int64_t u0, u1;
    ggml_cpu_split_range(ng0 * ngt * ne[tl->o1] * ne[tl->o2], params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        int64_t r = u;
        const int64_t gt = r % ngt; r /= ngt;
        const int64_t g0 = r % ng0; r /= ng0;
        int64_t i[GGML_MAX_DIMS];
        i[tl->o1] = r % ne[tl->o1];
        i[tl->o2] = r / ne[tl->o1];
        for (int64_t t0 = g0 * SUPER; t0 < MIN(tl->nt0, (g0 + 1) * SUPER); t0++) {
            for (int64_t tt = gt * SUPER; tt < MIN(tl->ntt, (gt + 1) * SUPER); tt++) {
                i[0]      = t0 * TILE;
                i[tl->dt] = tt * TILE;
                copy_tile(src, dst, tl, cvt, params->use_ref, i, buf);
            }
        }
    }
}

#undef SUPER
#undef TILE

void ggml_cpu_copy(const struct ggml_compute_params * params,
                   const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst, float * tmp) {
    GGML_ASSERT(ggml_cpu_copy_supported(src, dst));

    const bool same = src->type == dst->type;
    const ggml_cpu_run_cvt_t cvt = ggml_cpu_run_converter(src->type, dst->type);

    struct tiling tl;
    if (cvt != NULL && tiling_plan(src, dst, &tl)) {
        copy_tiled(params, src, dst, &tl, cvt);
        return;
    }

    const int64_t n = strided_nelements(src);
    const int64_t g = copy_granule(src, dst);
    int64_t u0, u1;
    ggml_cpu_split_range((n + g - 1) / g, params->ith, params->nth, &u0, &u1);
    const int64_t k0 = MIN(n, u0 * g);
    const int64_t k1 = MIN(n, u1 * g);
    if (k0 >= k1) {
        return;
    }

    struct walker ws, wd;
    walker_init(&ws, src, k0);
    walker_init(&wd, dst, k0);

    if (same) {
        copy_runs_same(&ws, &wd, k1 - k0);
    } else if (ggml_is_quantized(dst->type)) {
        copy_runs_quantize(&ws, &wd, k1 - k0, tmp, params->use_ref);
    } else if (ggml_is_quantized(src->type)) {
        copy_runs_dequantize(&ws, &wd, k1 - k0, tmp, params->use_ref);
    } else {
        copy_runs_convert(&ws, &wd, k1 - k0, cvt, params->use_ref);
    }
}

//
// DUP, CPY, CONT
//

// conversions between a quantized and a non-quantized type stage through scratch
static bool copy_needs_scratch(enum ggml_type src, enum ggml_type dst) {
    return src != dst && (ggml_is_quantized(src) || ggml_is_quantized(dst));
}

void ggml_cpu_forward_dup(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_cpu_strided s = ggml_cpu_strided_of(dst->src[0]);
    const struct ggml_cpu_strided d = ggml_cpu_strided_of(dst);
    if (ggml_cpu_copy_is_noop(&s, &d)) {
        return;
    }
    float * tmp = copy_needs_scratch(s.type, d.type) ? ggml_cpu_cvt_scratch(params) : NULL;
    ggml_cpu_copy(params, &s, &d, tmp);
}

bool ggml_cpu_supports_dup(const struct ggml_tensor * op) {
    const struct ggml_cpu_strided s = ggml_cpu_strided_of(op->src[0]);
    const struct ggml_cpu_strided d = ggml_cpu_strided_of(op);
    return ggml_cpu_copy_supported(&s, &d);
}

size_t ggml_cpu_work_size_dup(const struct ggml_tensor * op, int n_threads) {
    return copy_needs_scratch(op->src[0]->type, op->type) ? ggml_cpu_cvt_work_size(n_threads) : 0;
}
