// ops-rows.c: GET_ROWS and SET_ROWS, rows selected by an index tensor.
//
// Each selected row is converted in one call of ggml_cpu_convert_row; the
// threads split the selected rows. An index outside the indexed dimension is
// API misuse and aborts, as upstream does.

#include "ops/copy-impl.h"

static float * rows_scratch(const struct ggml_compute_params * params, enum ggml_type src, enum ggml_type dst) {
    return ggml_cpu_run_converter(src, dst) != NULL ? NULL : ggml_cpu_cvt_scratch(params);
}

static size_t rows_work_size(enum ggml_type src, enum ggml_type dst, int n_threads) {
    return ggml_cpu_run_converter(src, dst) != NULL ? 0 : ggml_cpu_cvt_work_size(n_threads);
}

static int64_t read_index(const struct ggml_tensor * idx, int64_t i0, int64_t i1, int64_t i2) {
    const char * p = (const char *) idx->data + i0*idx->nb[0] + i1*idx->nb[1] + i2*idx->nb[2];
    if (idx->type == GGML_TYPE_I64) {
        return *(const int64_t *) p;
    }
    return *(const int32_t *) p;
}

static void check_index(const char * op, int64_t r, int64_t n) {
    if (r < 0 || r >= n) {
        GGML_ABORT("%s: row index %lld out of range [0, %lld)", op, (long long) r, (long long) n);
    }
}

// a quantized side must hold its blocks contiguously along each row
static bool rows_layout_ok(const struct ggml_tensor * t) {
    return !ggml_is_quantized(t->type) || t->nb[0] == ggml_type_size(t->type);
}

//
// GET_ROWS: dst[:, i10, i11, i12] = src0[:, src1[i10, i11, i12], i11, i12]
//

void ggml_cpu_forward_get_rows(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_ASSERT(ggml_cpu_supports_get_rows(dst) && "get_rows: unsupported types or layout");

    const int64_t ne10 = src1->ne[0];
    const int64_t ne11 = src1->ne[1];
    const int64_t n_rows = ne10 * ne11 * src1->ne[2];

    float * tmp = rows_scratch(params, src0->type, dst->type);

    int64_t r0, r1;
    ggml_cpu_split_range(n_rows, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i10 = r % ne10;
        const int64_t i11 = (r / ne10) % ne11;
        const int64_t i12 = r / (ne10 * ne11);
        const int64_t i01 = read_index(src1, i10, i11, i12);
        check_index("get_rows", i01, src0->ne[1]);

        const char * s = (const char *) src0->data + i01*src0->nb[1] + i11*src0->nb[2] + i12*src0->nb[3];
        char       * d = (char *)        dst->data + i10*dst->nb[1]  + i11*dst->nb[2]  + i12*dst->nb[3];
        ggml_cpu_convert_row(src0->type, s, src0->nb[0], dst->type, d, dst->nb[0], src0->ne[0], tmp, params->use_ref);
    }
}

bool ggml_cpu_supports_get_rows(const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    // rows come out as F32, except I32 rows, which are copied
    const enum ggml_type want = src0->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    return src1->type == GGML_TYPE_I32 && op->type == want &&
           ggml_cpu_can_convert_row(src0->type, op->type) && rows_layout_ok(src0);
}

size_t ggml_cpu_work_size_get_rows(const struct ggml_tensor * op, int n_threads) {
    return rows_work_size(op->src[0]->type, op->type, n_threads);
}

//
// SET_ROWS: dst[:, src1[i, i02 % ne11, i03 % ne12], i02, i03] = src0[:, i, i02, i03]
//
// With repeated indices the row written last by one thread wins; which one
// wins across threads is not specified (as upstream).
//

void ggml_cpu_forward_set_rows(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_ASSERT(ggml_cpu_supports_set_rows(dst) && "set_rows: unsupported types or layout");

    const int64_t nr   = src0->ne[1];
    const int64_t ne02 = src0->ne[2];
    const int64_t n_rows = nr * ne02 * src0->ne[3];

    float * tmp = rows_scratch(params, src0->type, dst->type);

    int64_t r0, r1;
    ggml_cpu_split_range(n_rows, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i   = r % nr;
        const int64_t i02 = (r / nr) % ne02;
        const int64_t i03 = r / (nr * ne02);
        const int64_t i1  = read_index(src1, i, i02 % src1->ne[1], i03 % src1->ne[2]);
        check_index("set_rows", i1, dst->ne[1]);

        const char * s = (const char *) src0->data + i*src0->nb[1] + i02*src0->nb[2] + i03*src0->nb[3];
        char       * d = (char *)        dst->data + i1*dst->nb[1] + i02*dst->nb[2]  + i03*dst->nb[3];
        ggml_cpu_convert_row(src0->type, s, src0->nb[0], dst->type, d, dst->nb[0], src0->ne[0], tmp, params->use_ref);
    }
}

bool ggml_cpu_supports_set_rows(const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    return (src1->type == GGML_TYPE_I32 || src1->type == GGML_TYPE_I64) &&
           !ggml_is_quantized(src0->type) &&
           ggml_cpu_can_convert_row(src0->type, op->type) && rows_layout_ok(op);
}

size_t ggml_cpu_work_size_set_rows(const struct ggml_tensor * op, int n_threads) {
    return rows_work_size(op->src[0]->type, op->type, n_threads);
}
