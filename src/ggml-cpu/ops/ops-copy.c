// ops-copy.c: the copy op family (see copy-impl.h): SET, REPEAT, CONCAT,
// PAD, ARANGE here, and the registration of the whole family.
//
// The row-wise ops split the rows of dst among the threads; each dst row is
// written by one thread.

#include "ops/copy-impl.h"

// the share of the rows of t (all dims but 0) that this thread writes
static void split_rows(const struct ggml_compute_params * params, const struct ggml_tensor * t, int64_t * r0, int64_t * r1) {
    ggml_cpu_split_range(t->ne[1] * t->ne[2] * t->ne[3], params->ith, params->nth, r0, r1);
}

static void row_coords(const struct ggml_tensor * t, int64_t r, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

static char * row_ptr(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
}

// n elements of row src into row dst, both of t's type (whole blocks if quantized)
static void copy_row(enum ggml_type type, const char * src, size_t ss, char * dst, size_t ds, int64_t n) {
    ggml_cpu_copy_run_bytes(src, ss, dst, ds, n / ggml_blck_size(type), ggml_type_size(type));
}

static void zero_run(char * dst, size_t ds, int64_t n, size_t size) {
    if (n <= 0) {
        return;
    }
    if (ds == size) {
        memset(dst, 0, (size_t) n * size);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        memset(dst + i*ds, 0, size);
    }
}

static bool type_is_plain(enum ggml_type type) {
    return !ggml_is_quantized(type) && ggml_type_size(type) > 0 && ggml_blck_size(type) == 1;
}

//
// SET: dst = src0, then the view of dst at offset with strides (element
// size, nb1, nb2, nb3) and src1's shape = src1
//

static bool supports_set(const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    return src0->type == op->type && type_is_plain(op->type) && type_is_plain(src1->type) &&
           ggml_cpu_run_converter(src1->type, op->type) != NULL;
}

static void forward_set(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];

    const size_t nb1     = (size_t) ggml_get_op_params_i32(dst, 0);
    const size_t nb2     = (size_t) ggml_get_op_params_i32(dst, 1);
    const size_t nb3     = (size_t) ggml_get_op_params_i32(dst, 2);
    const size_t offset  = (size_t) ggml_get_op_params_i32(dst, 3);
    const bool   inplace = ggml_get_op_params_i32(dst, 4) != 0;
    GGML_ASSERT(supports_set(dst) && "set: unsupported types");

    if (!inplace) {
        const struct ggml_cpu_strided s = ggml_cpu_strided_of(src0);
        const struct ggml_cpu_strided d = ggml_cpu_strided_of(dst);
        if (!ggml_cpu_copy_is_noop(&s, &d)) {
            ggml_cpu_copy(params, &s, &d, NULL);
        }
        // every thread's part of dst = src0 lands before any part of the window
        ggml_cpu_barrier(params->threadpool);
    }

    if (ggml_nelements(src1) == 0) {
        return;
    }

    const size_t es = ggml_type_size(dst->type);
    const size_t last = offset + (size_t)(src1->ne[0] - 1)*es + (size_t)(src1->ne[1] - 1)*nb1 +
                        (size_t)(src1->ne[2] - 1)*nb2 + (size_t)(src1->ne[3] - 1)*nb3;
    GGML_ASSERT(last + es <= ggml_nbytes(dst) && "set: the window lies outside the destination");

    const struct ggml_cpu_strided window = {
        .data = (char *) dst->data + offset,
        .type = dst->type,
        .ne   = { src1->ne[0], src1->ne[1], src1->ne[2], src1->ne[3] },
        .nb   = { es, nb1, nb2, nb3 },
    };
    const struct ggml_cpu_strided s1 = ggml_cpu_strided_of(src1);
    ggml_cpu_copy(params, &s1, &window, NULL);
}

//
// REPEAT: dst[i0, i1, i2, i3] = src0[i0 % ne00, i1 % ne01, i2 % ne02, i3 % ne03]
//

static bool supports_repeat(const struct ggml_tensor * op) {
    return op->src[0]->type == op->type && type_is_plain(op->type);
}

static void forward_repeat(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_ASSERT(supports_repeat(dst) && "repeat: unsupported type");
    GGML_ASSERT(!ggml_is_empty(src0) && "repeat: an empty tensor cannot fill a non-empty one");

    const size_t  es   = ggml_type_size(dst->type);
    const int64_t ne00 = src0->ne[0];
    const int64_t ne0  = dst->ne[0];

    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        const char * s = row_ptr(src0, i1 % src0->ne[1], i2 % src0->ne[2], i3 % src0->ne[3]);
        char       * d = row_ptr(dst, i1, i2, i3);

        copy_row(dst->type, s, src0->nb[0], d, dst->nb[0], ne00);
        if (dst->nb[0] == es) {
            // double the filled prefix until the row is full
            for (int64_t k = ne00; k < ne0; ) {
                const int64_t c = MIN(k, ne0 - k);
                memcpy(d + (size_t) k*es, d, (size_t) c*es);
                k += c;
            }
        } else {
            for (int64_t k = ne00; k < ne0; k += ne00) {
                copy_row(dst->type, s, src0->nb[0], d + (size_t) k*dst->nb[0], dst->nb[0], ne00);
            }
        }
    }
}

//
// CONCAT: src0 followed by src1 along dim (op_params[0])
//

static bool supports_concat(const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    if (src0->type != op->type || src1->type != op->type || ggml_blck_size(op->type) <= 0 || ggml_type_size(op->type) == 0) {
        return false;
    }
    if (ggml_is_quantized(op->type)) {
        // whole blocks, contiguous within each row
        const size_t ts = ggml_type_size(op->type);
        return src0->nb[0] == ts && src1->nb[0] == ts && op->nb[0] == ts;
    }
    return true;
}

static void forward_concat(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int dim = ggml_get_op_params_i32(dst, 0);
    GGML_ASSERT(dim >= 0 && dim < GGML_MAX_DIMS);
    GGML_ASSERT(supports_concat(dst) && "concat: unsupported type or layout");

    const enum ggml_type type = dst->type;
    // byte offset in a dst row where src1's part starts when joining along dim 0
    const size_t split0 = (size_t)(src0->ne[0] / ggml_blck_size(type)) * dst->nb[0];

    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i[GGML_MAX_DIMS] = { 0 };
        row_coords(dst, r, &i[1], &i[2], &i[3]);
        char * d = row_ptr(dst, i[1], i[2], i[3]);

        if (dim == 0) {
            copy_row(type, row_ptr(src0, i[1], i[2], i[3]), src0->nb[0], d,          dst->nb[0], src0->ne[0]);
            copy_row(type, row_ptr(src1, i[1], i[2], i[3]), src1->nb[0], d + split0, dst->nb[0], src1->ne[0]);
            continue;
        }
        const struct ggml_tensor * src = src0;
        if (i[dim] >= src0->ne[dim]) {
            i[dim] -= src0->ne[dim];
            src = src1;
        }
        copy_row(type, row_ptr(src, i[1], i[2], i[3]), src->nb[0], d, dst->nb[0], dst->ne[0]);
    }
}

//
// PAD: op_params lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3, circular.
// dst[i] = src0[i - lp] where that lies inside src0, zero elsewhere; circular
// padding wraps the index around each dimension instead. Negative padding
// crops.
//

static int64_t wrap_index(int64_t i, int64_t n) {
    const int64_t r = i % n;
    return r < 0 ? r + n : r;
}

static void pad_row_zero(const struct ggml_tensor * dst, const char * s, size_t ss, int64_t ne00, int64_t lp0, char * d) {
    const size_t  es  = ggml_type_size(dst->type);
    const int64_t ne0 = dst->ne[0];
    const int64_t a   = MIN(ne0, MAX(0, lp0));          // first element taken from src
    const int64_t b   = MAX(a, MIN(ne0, lp0 + ne00));   // end of the elements taken from src
    zero_run(d, dst->nb[0], a, es);
    if (s != NULL && b > a) {
        copy_row(dst->type, s + (size_t)(a - lp0)*ss, ss, d + (size_t) a*dst->nb[0], dst->nb[0], b - a);
    } else {
        zero_run(d + (size_t) a*dst->nb[0], dst->nb[0], b - a, es);
    }
    zero_run(d + (size_t) b*dst->nb[0], dst->nb[0], ne0 - b, es);
}

static void pad_row_circular(const struct ggml_tensor * dst, const char * s, size_t ss, int64_t ne00, int64_t lp0, char * d) {
    const int64_t ne0 = dst->ne[0];
    for (int64_t i0 = 0; i0 < ne0; ) {
        const int64_t j = wrap_index(i0 - lp0, ne00);
        const int64_t c = MIN(ne00 - j, ne0 - i0);
        copy_row(dst->type, s + (size_t) j*ss, ss, d + (size_t) i0*dst->nb[0], dst->nb[0], c);
        i0 += c;
    }
}

static bool supports_pad(const struct ggml_tensor * op) {
    return op->src[0]->type == op->type && type_is_plain(op->type);
}

static void forward_pad(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    int64_t lp[GGML_MAX_DIMS];
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        lp[d] = ggml_get_op_params_i32(dst, 2*d);
    }
    const bool circular = ggml_get_op_params_i32(dst, 8) != 0;
    GGML_ASSERT(supports_pad(dst) && "pad: unsupported type");
    GGML_ASSERT((!circular || !ggml_is_empty(src0)) && "pad: circular padding of an empty tensor");

    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i[GGML_MAX_DIMS] = { 0 };
        row_coords(dst, r, &i[1], &i[2], &i[3]);
        char * d = row_ptr(dst, i[1], i[2], i[3]);

        int64_t j[GGML_MAX_DIMS] = { 0 };
        bool inside = true;
        for (int k = 1; k < GGML_MAX_DIMS; k++) {
            j[k] = circular ? wrap_index(i[k] - lp[k], src0->ne[k]) : i[k] - lp[k];
            inside = inside && j[k] >= 0 && j[k] < src0->ne[k];
        }
        const char * s = inside ? row_ptr(src0, j[1], j[2], j[3]) : NULL;
        if (circular) {
            pad_row_circular(dst, s, src0->nb[0], src0->ne[0], lp[0], d);
        } else {
            pad_row_zero(dst, s, src0->nb[0], src0->ne[0], lp[0], d);
        }
    }
}

//
// ARANGE: dst[i] = start + step*i, in F32 (op_params start, stop, step)
//

static bool supports_arange(const struct ggml_tensor * op) {
    return op->type == GGML_TYPE_F32;
}

static void forward_arange(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const float start = ggml_get_op_params_f32(dst, 0);
    const float step  = ggml_get_op_params_f32(dst, 2);
    GGML_ASSERT(supports_arange(dst) && "arange: unsupported type");

    int64_t i0, i1;
    ggml_cpu_split_range(dst->ne[0], params->ith, params->nth, &i0, &i1);
    for (int64_t i = i0; i < i1; i++) {
        *(float *)((char *) dst->data + i*dst->nb[0]) = start + step * (float) i;
    }
}

//
// registration
//

void ggml_cpu_register_ops_copy(struct ggml_cpu_op_impl * table) {
    const struct ggml_cpu_op_impl dup = {
        .forward   = ggml_cpu_forward_dup,
        .supports  = ggml_cpu_supports_dup,
        .work_size = ggml_cpu_work_size_dup,
    };
    table[GGML_OP_DUP]  = dup;
    table[GGML_OP_CPY]  = dup;
    table[GGML_OP_CONT] = dup;

    table[GGML_OP_GET_ROWS] = (struct ggml_cpu_op_impl) {
        .forward   = ggml_cpu_forward_get_rows,
        .supports  = ggml_cpu_supports_get_rows,
        .work_size = ggml_cpu_work_size_get_rows,
    };
    table[GGML_OP_SET_ROWS] = (struct ggml_cpu_op_impl) {
        .forward   = ggml_cpu_forward_set_rows,
        .supports  = ggml_cpu_supports_set_rows,
        .work_size = ggml_cpu_work_size_set_rows,
    };
    table[GGML_OP_SET]    = (struct ggml_cpu_op_impl) { .forward = forward_set,    .supports = supports_set,    .work_size = NULL };
    table[GGML_OP_REPEAT] = (struct ggml_cpu_op_impl) { .forward = forward_repeat, .supports = supports_repeat, .work_size = NULL };
    table[GGML_OP_CONCAT] = (struct ggml_cpu_op_impl) { .forward = forward_concat, .supports = supports_concat, .work_size = NULL };
    table[GGML_OP_PAD]    = (struct ggml_cpu_op_impl) { .forward = forward_pad,    .supports = supports_pad,    .work_size = NULL };
    table[GGML_OP_ARANGE] = (struct ggml_cpu_op_impl) { .forward = forward_arange, .supports = supports_arange, .work_size = NULL };
}
