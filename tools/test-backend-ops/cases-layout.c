// cases-layout.c: ops that move data: GET_ROWS, SET_ROWS, REPEAT, DUP, SET, CPY,
// CONT, CONCAT, ACC, PAD, ARANGE and DIAG_MASK_INF.

#include "tbo.h"

#include <stdlib.h>

#include <string.h>

//
// GET_ROWS
//

struct get_rows_params {
    enum ggml_type type;
    int n;   // columns
    int m;   // rows
    int r;   // rows to get
    int be1; // batch sizes
    int be2;
    bool v;  // the row ids are a non-contiguous view
};

static struct ggml_tensor * get_rows_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct get_rows_params * p = c->p;
    struct ggml_tensor * in = tbo_new_tensor_4d(b, p->type, p->n, p->m, p->be1, p->be2);
    ggml_set_name(in, "in");
    struct ggml_tensor * rows = tbo_new_tensor_3d(b, GGML_TYPE_I32, p->r, p->be1, p->be2);
    ggml_set_name(rows, "rows");
    if (p->v) {
        rows = ggml_view_3d(b->ctx, rows, p->r/2, p->be1, p->be2, rows->nb[1], rows->nb[2], 0);
        ggml_set_name(rows, "view_of_rows");
    }
    struct ggml_tensor * out = ggml_get_rows(b->ctx, in, rows);
    ggml_set_name(out, "out");
    return out;
}

static void get_rows_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct get_rows_params * p = c->p;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (strcmp(ggml_get_name(t), "rows") == 0) {
            tbo_init_i32_below(rng, t, p->m);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static const struct tbo_case_class get_rows_class = {
    .name  = "get_rows",
    .build = get_rows_build,
    .init  = get_rows_init,
};

void tbo_add_get_rows(struct tbo_case_list * l, enum ggml_type type, int n, int m, int r, int be1, int be2, bool v) {
    const struct get_rows_params p = { .type = type, .n = n, .m = m, .r = r, .be1 = be1, .be2 = be2, .v = v };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_i64(&s, "n", n);
    tbo_var_i64(&s, "m", m);
    tbo_var_i64(&s, "r", r);
    tbo_var_i64(&s, "be1", be1);
    tbo_var_i64(&s, "be2", be2);
    tbo_var_i64(&s, "v", v);
    tbo_case_add(l, &get_rows_class, &p, sizeof(p), &s);
}

//
// SET_ROWS
//

struct set_rows_params {
    enum ggml_type type_src;
    enum ggml_type type_dst;
    enum ggml_type type_idx;
    int64_t        ne[4];
    int64_t        nr23[2]; // broadcast of the row ids over dims 2 and 3
    int            r;       // rows to set
    bool           v;       // source and row ids are views
};

static struct ggml_tensor * set_rows_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct set_rows_params * p = c->p;
    const int64_t * ne = p->ne;
    struct ggml_tensor * dst = tbo_new_tensor_4d(b, p->type_dst, ne[0], ne[1], ne[2]*p->nr23[0], ne[3]*p->nr23[1]);
    ggml_set_name(dst, "dst");
    struct ggml_tensor * src = tbo_new_tensor_4d(b, p->type_src, ne[0], p->r, ne[2]*p->nr23[0], ne[3]*p->nr23[1]);
    ggml_set_name(src, "src");
    struct ggml_tensor * row_idxs = tbo_new_tensor_3d(b, p->type_idx, p->r, ne[2], ne[3]);
    ggml_set_name(row_idxs, "row_idxs");
    if (p->v) {
        src = ggml_view_4d(b->ctx, src, ne[0], p->r/2, ne[2]*p->nr23[0], ne[3]*p->nr23[1], src->nb[1], src->nb[2], src->nb[3], 0);
        row_idxs = ggml_view_3d(b->ctx, row_idxs, p->r/2, ne[2], ne[3], row_idxs->nb[1], row_idxs->nb[2], 0);
        ggml_set_name(row_idxs, "view_of_rows");
    }
    struct ggml_tensor * out = ggml_set_rows(b->ctx, dst, src, row_idxs);
    ggml_set_name(out, "out");
    return out;
}

static void set_rows_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct set_rows_params * p = c->p;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (t->type == GGML_TYPE_I64 || t->type == GGML_TYPE_I32) {
            tbo_init_row_ids(rng, t, p->ne[1]);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

// a quantized destination may round one value to the neighbouring step: about
// (2 / 2^bits)^2 over the mean square of values in [-1, 1] (0.25) times the count
static double set_rows_max_err(const struct tbo_case * c) {
    const struct set_rows_params * p = c->p;
    const enum ggml_type t = p->type_dst;
    if (t == GGML_TYPE_Q2_0 || t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_IQ4_NL ||
        t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1 || t == GGML_TYPE_Q8_0) {
        double e = 1.0 / 8.0;
        if (p->type_src == GGML_TYPE_F16 && t == GGML_TYPE_Q2_0) {
            e *= 4.0;
        }
        if (t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1) {
            e /= 2.0;
        }
        if (t == GGML_TYPE_Q8_0) {
            e /= 8.0;
        }
        e *= e;
        if (p->type_src == GGML_TYPE_F16) {
            e *= 16.0;
        }
        e /= (double) (0.25f * (float) (p->ne[0] * p->r * p->ne[2]*p->nr23[0] * p->ne[3]*p->nr23[1]));
        return e;
    }
    return 1e-7;
}

static const struct tbo_case_class set_rows_class = {
    .name    = "set_rows",
    .build   = set_rows_build,
    .init    = set_rows_init,
    .max_err = set_rows_max_err,
};

void tbo_add_set_rows(struct tbo_case_list * l, enum ggml_type type_src, enum ggml_type type_dst, enum ggml_type type_idx,
                      const int64_t ne[4], const int64_t nr23[2], int r, bool v) {
    struct set_rows_params p = { .type_src = type_src, .type_dst = type_dst, .type_idx = type_idx, .r = r, .v = v };
    tbo_copy4(p.ne, ne);
    p.nr23[0] = nr23[0];
    p.nr23[1] = nr23[1];
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_src", type_src);
    tbo_var_type(&s, "type_dst", type_dst);
    tbo_var_type(&s, "type_idx", type_idx);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_arr(&s, "nr23", nr23, 2);
    tbo_var_i64(&s, "r", r);
    tbo_var_i64(&s, "v", v);
    tbo_case_add(l, &set_rows_class, &p, sizeof(p), &s);
}

//
// REPEAT
//

struct repeat_params {
    enum ggml_type type;
    int64_t        ne[4];
    int64_t        nr[4];
};

static struct ggml_tensor * repeat_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct repeat_params * p = c->p;
    struct ggml_tensor * target = tbo_new_tensor_4d(b, p->type, p->ne[0]*p->nr[0], p->ne[1]*p->nr[1], p->ne[2]*p->nr[2],
                                                    p->ne[3]*p->nr[3]);
    ggml_set_name(target, "target");
    struct ggml_tensor * src = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(src, "src");
    struct ggml_tensor * out = ggml_repeat(b->ctx, src, target);
    ggml_set_name(out, "out");
    return out;
}

static size_t twice_out_size(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c;
    return ggml_nbytes(out) * 2;
}

static const struct tbo_case_class repeat_class = {
    .name    = "repeat",
    .build   = repeat_build,
    .op_size = twice_out_size,
};

void tbo_add_repeat(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t nr[4]) {
    struct repeat_params p = { .type = type };
    tbo_copy4(p.ne, ne);
    tbo_copy4(p.nr, nr);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_arr(&s, "nr", nr, 4);
    tbo_case_add(l, &repeat_class, &p, sizeof(p), &s);
}

//
// DUP
//

struct dup_params {
    enum ggml_type type;
    int64_t        ne[4];
    int64_t        permute[4];
};

static struct ggml_tensor * dup_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct dup_params * p = c->p;
    struct ggml_tensor * src = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(src, "src");
    src = tbo_permute_if(b, src, p->permute, "src_permuted");
    struct ggml_tensor * out = ggml_dup(b->ctx, src);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class dup_class = {
    .name  = "dup",
    .build = dup_build,
};

void tbo_add_dup(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t permute[4]) {
    struct dup_params p = { .type = type };
    tbo_copy4(p.ne, ne);
    tbo_copy4(p.permute, permute);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    if (tbo_any_nonzero4(permute)) {
        tbo_var_arr(&s, "permute", permute, 4);
    }
    tbo_case_add(l, &dup_class, &p, sizeof(p), &s);
}

//
// SET: write a tensor into a region of a larger one
//

struct set_params {
    enum ggml_type type_src;
    enum ggml_type type_dst;
    int64_t        ne[4];
    int            dim;
    bool           inplace;
};

static struct ggml_tensor * set_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct set_params * p = c->p;
    struct ggml_tensor * src = tbo_new_tensor(b, p->type_src, 4, p->ne);
    ggml_set_name(src, "src");

    int64_t ne_dst[4];
    tbo_copy4(ne_dst, p->ne);
    for (int i = 0; i < p->dim; ++i) {
        ne_dst[i] *= 2;
    }
    struct ggml_tensor * dst = tbo_new_tensor(b, p->type_dst, 4, ne_dst);
    ggml_set_name(dst, "dst");

    size_t offset = 0;
    for (int i = 0; i < p->dim; ++i) {
        offset += (size_t) ((ne_dst[i] - p->ne[i])/2) * dst->nb[i];
    }
    struct ggml_tensor * out = p->inplace
        ? ggml_set_inplace(b->ctx, dst, src, src->nb[1], src->nb[2], src->nb[3], offset)
        : ggml_set(b->ctx, dst, src, src->nb[1], src->nb[2], src->nb[3], offset);
    ggml_set_name(out, "out");
    return out;
}

static size_t out_and_src0_size(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c;
    return ggml_nbytes(out) + ggml_nbytes(out->src[0]);
}

static const struct tbo_case_class set_class = {
    .name    = "set",
    .build   = set_build,
    .op_size = out_and_src0_size,
};

void tbo_add_set(struct tbo_case_list * l, enum ggml_type type_src, enum ggml_type type_dst, const int64_t ne[4], int dim, bool inplace) {
    struct set_params p = { .type_src = type_src, .type_dst = type_dst, .dim = dim, .inplace = inplace };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_src", type_src);
    tbo_var_type(&s, "type_dst", type_dst);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "dim", dim);
    tbo_var_i64(&s, "inplace", inplace);
    tbo_case_add(l, &set_class, &p, sizeof(p), &s);
}

//
// CPY: conversions, permuted sources and destinations, reshaping copies
//

struct cpy_params {
    enum ggml_type type_src;
    enum ggml_type type_dst;
    int64_t        ne_src[4];
    int64_t        ne_dst[4];
    int64_t        permute_src[4];
    int64_t        permute_dst[4];
    int64_t        dst_alloc[4]; // if set, dst is a view into a larger buffer
    bool           src_transpose;
    bool           ties;         // source values that quantize to exact rounding ties
};

static bool cpy_use_dst_shape(const struct cpy_params * p) {
    return p->ne_dst[0] >= 0 && p->ne_dst[1] >= 0 && p->ne_dst[2] >= 0 && p->ne_dst[3] >= 0;
}

static struct ggml_tensor * cpy_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct cpy_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * src = tbo_new_tensor(b, p->type_src, 4, p->ne_src);
    ggml_set_name(src, "src");
    if (tbo_any_nonzero4(p->permute_src)) {
        src = ggml_permute(ctx, src, (int) p->permute_src[0], (int) p->permute_src[1], (int) p->permute_src[2], (int) p->permute_src[3]);
        ggml_set_name(src, "src_permuted");
    }
    if (p->src_transpose) {
        src = ggml_transpose(ctx, src);
        ggml_set_name(src, "src_transposed");
    }

    int64_t dst_ne[4];
    if (cpy_use_dst_shape(p)) {
        tbo_copy4(dst_ne, p->ne_dst);
    } else {
        tbo_copy4(dst_ne, src->ne);
    }

    struct ggml_tensor * dst;
    if (p->dst_alloc[0] > 0) {
        struct ggml_tensor * dst_buf = tbo_new_tensor(b, p->type_dst, 4, p->dst_alloc);
        ggml_set_name(dst_buf, "dst_buf");
        dst = ggml_view_4d(ctx, dst_buf, dst_ne[0], dst_ne[1], dst_ne[2], dst_ne[3], dst_buf->nb[1], dst_buf->nb[2], dst_buf->nb[3], 0);
        ggml_set_name(dst, "dst_view");
    } else {
        dst = tbo_new_tensor(b, p->type_dst, 4, dst_ne);
        ggml_set_name(dst, "dst");
        if (tbo_any_nonzero4(p->permute_dst)) {
            dst = ggml_permute(ctx, dst, (int) p->permute_dst[0], (int) p->permute_dst[1], (int) p->permute_dst[2], (int) p->permute_dst[3]);
            ggml_set_name(dst, "dst_permuted");
        }
    }

    struct ggml_tensor * out = ggml_cpy(ctx, src, dst);
    ggml_set_name(out, "out");
    return out;
}

// Blocks of 32 whose largest magnitude is 127 (a Q8_0 scale of exactly 1)
// and whose other values are k + 1/2: every one a rounding tie, which the
// reference rounds away from zero. A kernel rounding ties to even (or
// truncating) differs on about half of them.
static void cpy_init_ties(struct ggml_tensor * t, struct tbo_rng * rng) {
    const int64_t n = ggml_nelements(t);
    float * v = tbo_malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        const float k = (float) (int) (tbo_rng_next(rng) % 251) - 125.0f; // -125..125
        v[i] = i % 32 == 0 ? (k < 0.0f ? -127.0f : 127.0f) : k + (k < 0.0f ? -0.5f : 0.5f);
    }
    ggml_backend_tensor_set(t, v, 0, (size_t) n * sizeof(float));
    free(v);
}

static void cpy_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct cpy_params * p = c->p;
    // a wide range, to compare conversions between F32 and I32
    tbo_init_all_uniform(rng, ctx, -150.0f, 150.0f);
    if (p->ties) {
        struct ggml_tensor * src = ggml_get_tensor(ctx, "src");
        GGML_ASSERT(src != NULL && src->type == GGML_TYPE_F32 && ggml_is_contiguous(src));
        cpy_init_ties(src, rng);
    }
}

// a quantized destination may round one value to the neighbouring step: about
// (150 * 2 / 2^bits)^2 over the mean square of values in [-150, 150] times the count
static double cpy_max_err(const struct tbo_case * c) {
    const struct cpy_params * p = c->p;
    const enum ggml_type t = p->type_dst;
    if (p->type_src == t || p->ties) {
        return 0.0; // ties: every backend must round as the reference does
    }
    if (t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_IQ4_NL ||
        t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1 || t == GGML_TYPE_Q8_0) {
        double e = 1.0/8.0 * 150.0;
        if (t == GGML_TYPE_IQ4_NL) {
            e *= 2.0;
        }
        if (t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1) {
            e /= 2.0;
        }
        if (t == GGML_TYPE_Q8_0) {
            e /= 8.0;
        }
        e *= e;
        const int64_t n = p->ne_src[0] * p->ne_src[1] * p->ne_src[2] * p->ne_src[3];
        e /= (double) ((150.0f*150.0f*0.25f) * (float) n);
        return e;
    }
    return 1e-6;
}

static const struct tbo_case_class cpy_class = {
    .name    = "cpy",
    .build   = cpy_build,
    .init    = cpy_init,
    .max_err = cpy_max_err,
    .op_size = out_and_src0_size,
};

void tbo_add_cpy(struct tbo_case_list * l, enum ggml_type type_src, enum ggml_type type_dst, const int64_t ne_src[4],
                 const int64_t ne_dst[4], const int64_t permute_src[4], const int64_t permute_dst[4], bool transpose_src,
                 const int64_t dst_alloc[4]) {
    struct cpy_params p = { .type_src = type_src, .type_dst = type_dst, .src_transpose = transpose_src };
    tbo_copy4(p.ne_src, ne_src);
    tbo_copy4(p.ne_dst, ne_dst);
    tbo_copy4(p.permute_src, permute_src);
    tbo_copy4(p.permute_dst, permute_dst);
    tbo_copy4(p.dst_alloc, dst_alloc);

    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_src", type_src);
    tbo_var_type(&s, "type_dst", type_dst);
    tbo_var_arr(&s, "ne_src", ne_src, 4);
    if (dst_alloc[0] > 0 || cpy_use_dst_shape(&p)) {
        tbo_var_arr(&s, "ne_dst", ne_dst, 4);
    }
    tbo_var_arr(&s, "permute_src", permute_src, 4);
    tbo_var_arr(&s, "permute_dst", permute_dst, 4);
    tbo_var_i64(&s, "_src_transpose", transpose_src);
    if (dst_alloc[0] > 0) {
        tbo_var_arr(&s, "dst_alloc", dst_alloc, 4);
    }
    tbo_case_add(l, &cpy_class, &p, sizeof(p), &s);
}

void tbo_add_cpy_ties(struct tbo_case_list * l, enum ggml_type type_dst, const int64_t ne_src[4]) {
    struct cpy_params p = { .type_src = GGML_TYPE_F32, .type_dst = type_dst, .ties = true };
    tbo_copy4(p.ne_src, ne_src);
    for (int i = 0; i < 4; i++) {
        p.ne_dst[i] = -1;
    }
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_src", GGML_TYPE_F32);
    tbo_var_type(&s, "type_dst", type_dst);
    tbo_var_arr(&s, "ne_src", ne_src, 4);
    tbo_var_i64(&s, "ties", 1);
    tbo_case_add(l, &cpy_class, &p, sizeof(p), &s);
}

//
// CONT of a transposed, view-sliced or permuted source
//

struct cont_params {
    enum ggml_type type;
    int64_t        ne[4];
    bool           use_view_slice;
    int64_t        permute[4];
};

static struct ggml_tensor * cont_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct cont_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * src = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(src, "src");

    const bool permuted = p->permute[0] != 0 || p->permute[1] != 0 || p->permute[2] != 0 || p->permute[3] != 0;
    struct ggml_tensor * dst;
    if (permuted) {
        dst = ggml_permute(ctx, src, (int) p->permute[0], (int) p->permute[1], (int) p->permute[2], (int) p->permute[3]);
        ggml_set_name(dst, "src_permuted");
    } else if (p->use_view_slice) {
        dst = ggml_view_4d(ctx, src, src->ne[0], 1, src->ne[2], src->ne[3], src->nb[1], src->nb[2], src->nb[3],
                           src->nb[0] * (size_t) (src->ne[1] - 1));
        ggml_set_name(dst, "src_view_slice");
    } else {
        dst = ggml_transpose(ctx, src);
        ggml_set_name(dst, "src_transposed");
    }
    struct ggml_tensor * out = ggml_cont(ctx, dst);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class cont_class = {
    .name  = "cont",
    .build = cont_build,
};

void tbo_add_cont(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool use_view_slice, const int64_t permute[4]) {
    struct cont_params p = { .type = type, .use_view_slice = use_view_slice };
    tbo_copy4(p.ne, ne);
    tbo_copy4(p.permute, permute);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "use_view_slice", use_view_slice);
    tbo_var_arr(&s, "permute", permute, 4);
    tbo_case_add(l, &cont_class, &p, sizeof(p), &s);
}

//
// CONCAT
//

struct concat_params {
    enum ggml_type type;
    int64_t        ne_a[4];
    int64_t        ne_b_d;
    int            dim;
    int            v; // 1, 4: a is a view (first 3 / last 2 dims); 2, 8: b is
};

static struct ggml_tensor * concat_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct concat_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    int64_t ne_b[4];
    tbo_copy4(ne_b, p->ne_a);
    ne_b[p->dim] = p->ne_b_d;

    struct ggml_tensor * a;
    if (p->v & 1) {
        const int64_t ne[4] = { p->ne_a[0]*2, p->ne_a[1]*4, p->ne_a[2]*3, p->ne_a[3] };
        a = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(a, "a");
        a = ggml_view_4d(ctx, a, p->ne_a[0], p->ne_a[1], p->ne_a[2], p->ne_a[3], a->nb[1], a->nb[2], a->nb[3], 0);
        ggml_set_name(a, "view_of_a");
    } else if (p->v & 4) {
        const int64_t ne[4] = { p->ne_a[0], p->ne_a[1], p->ne_a[2]*2, p->ne_a[3]*4 };
        a = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(a, "a");
        a = ggml_view_4d(ctx, a, p->ne_a[0], p->ne_a[1], p->ne_a[2], p->ne_a[3], a->nb[1], a->nb[2], a->nb[3], 0);
        ggml_set_name(a, "view_of_a");
    } else {
        a = tbo_new_tensor(b, p->type, 4, p->ne_a);
        ggml_set_name(a, "a");
    }

    struct ggml_tensor * bt;
    if (p->v & 2) {
        const int64_t ne[4] = { ne_b[0]*3, ne_b[1]*2, ne_b[2]*4, ne_b[3] };
        bt = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(bt, "b");
        bt = ggml_view_4d(ctx, bt, ne_b[0], ne_b[1], ne_b[2], ne_b[3], bt->nb[1], bt->nb[2], bt->nb[3], 0);
        ggml_set_name(bt, "view_of_b");
    } else if (p->v & 8) {
        const int64_t ne[4] = { ne_b[0], ne_b[1], ne_b[2]*3, ne_b[3]*2 };
        bt = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(bt, "b");
        bt = ggml_view_4d(ctx, bt, ne_b[0], ne_b[1], ne_b[2], ne_b[3], bt->nb[1], bt->nb[2], bt->nb[3], 0);
        ggml_set_name(bt, "view_of_b");
    } else {
        bt = tbo_new_tensor(b, p->type, 4, ne_b);
        ggml_set_name(bt, "b");
    }

    struct ggml_tensor * out = ggml_concat(ctx, a, bt, p->dim);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class concat_class = {
    .name  = "concat",
    .build = concat_build,
};

void tbo_add_concat(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int64_t ne_b_d, int dim, int v) {
    struct concat_params p = { .type = type, .ne_b_d = ne_b_d, .dim = dim, .v = v };
    tbo_copy4(p.ne_a, ne_a);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "ne_b_d", ne_b_d);
    tbo_var_i64(&s, "dim", dim);
    tbo_var_i64(&s, "v", v);
    tbo_case_add(l, &concat_class, &p, sizeof(p), &s);
}

//
// ACC: add a tensor into a region of another
//

struct acc_params {
    enum ggml_type type;
    int64_t        ne_a[4];
    int64_t        ne_b[4];
    int64_t        stride_dim; // 1..3: b is a view at a non-zero offset of a tensor padded in that dim
};

static struct ggml_tensor * acc_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct acc_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne_a);
    ggml_set_name(a, "a");

    struct ggml_tensor * bt;
    if (p->stride_dim == 1 || p->stride_dim == 2 || p->stride_dim == 3) {
        int64_t ne_pad[4];
        tbo_copy4(ne_pad, p->ne_b);
        ne_pad[p->stride_dim] += 1;
        struct ggml_tensor * b_pad = tbo_new_tensor(b, p->type, 4, ne_pad);
        ggml_set_name(b_pad, "b_pad");
        bt = ggml_view_4d(b->ctx, b_pad, p->ne_b[0], p->ne_b[1], p->ne_b[2], p->ne_b[3], b_pad->nb[1], b_pad->nb[2], b_pad->nb[3],
                          b_pad->nb[1]);
    } else {
        bt = tbo_new_tensor(b, p->type, 4, p->ne_b);
    }
    ggml_set_name(bt, "b");

    struct ggml_tensor * out = ggml_acc(b->ctx, a, bt, a->nb[1], a->nb[2], a->nb[3], 0);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class acc_class = {
    .name  = "acc",
    .build = acc_build,
};

void tbo_add_acc(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], const int64_t ne_b[4], int64_t stride_dim) {
    struct acc_params p = { .type = type, .stride_dim = stride_dim };
    tbo_copy4(p.ne_a, ne_a);
    tbo_copy4(p.ne_b, ne_b);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_arr(&s, "ne_b", ne_b, 4);
    tbo_var_i64(&s, "stride_dim", stride_dim);
    tbo_case_add(l, &acc_class, &p, sizeof(p), &s);
}

//
// PAD (zero padding after the data) and PAD with explicit left/right padding
//

struct pad_params {
    enum ggml_type type;
    int64_t        ne_a[4];
    int            lp_rp[8]; // left and right padding of each dim
    int            tfrm;     // 0: none, 1: a non-contiguous view, 2: a permutation
    bool           circular; // ggml_pad_circular / ggml_pad_ext_circular
};

static struct ggml_tensor * pad_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct pad_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne_a);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = p->circular ? ggml_pad_circular(b->ctx, a, p->lp_rp[1], p->lp_rp[3], 0, 0)
                                           : ggml_pad(b->ctx, a, p->lp_rp[1], p->lp_rp[3], 0, 0);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class pad_class = {
    .name  = "pad",
    .build = pad_build,
};

static void add_pad(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int pad_0, int pad_1, bool circular) {
    struct pad_params p = { .type = type, .lp_rp = { 0, pad_0, 0, pad_1, 0, 0, 0, 0 }, .circular = circular };
    tbo_copy4(p.ne_a, ne_a);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "pad_0", pad_0);
    tbo_var_i64(&s, "pad_1", pad_1);
    tbo_var_i64(&s, "circular", circular);
    tbo_case_add(l, &pad_class, &p, sizeof(p), &s);
}

void tbo_add_pad(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int pad_0, int pad_1) {
    add_pad(l, type, ne_a, pad_0, pad_1, false);
}

void tbo_add_pad_circular(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int pad_0, int pad_1) {
    add_pad(l, type, ne_a, pad_0, pad_1, true);
}

static struct ggml_tensor * pad_ext_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct pad_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne_a);
    ggml_set_name(a, "a");
    if (p->tfrm == 1) {
        a = ggml_view_4d(b->ctx, a, (a->ne[0] + 1) / 2, (a->ne[1] + 1) / 2, (a->ne[2] + 1) / 2, (a->ne[3] + 1) / 2,
                         a->nb[1], a->nb[2], a->nb[3], 0);
        ggml_set_name(a, "view of a");
    } else if (p->tfrm == 2) {
        a = ggml_permute(b->ctx, a, 2, 1, 0, 3);
        ggml_set_name(a, "permuted a");
    }
    const int * q = p->lp_rp;
    struct ggml_tensor * out = p->circular ? ggml_pad_ext_circular(b->ctx, a, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7])
                                           : ggml_pad_ext(b->ctx, a, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class pad_ext_class = {
    .name  = "pad_ext",
    .build = pad_ext_build,
};

static void add_pad_ext(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], const int lp_rp[8], int tfrm,
                        bool circular) {
    struct pad_params p = { .type = type, .tfrm = tfrm, .circular = circular };
    tbo_copy4(p.ne_a, ne_a);
    memcpy(p.lp_rp, lp_rp, sizeof(p.lp_rp));
    struct tbo_str s = { 0 };
    static const char * const names[8] = { "lp0", "rp0", "lp1", "rp1", "lp2", "rp2", "lp3", "rp3" };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    for (int i = 0; i < 8; i++) {
        tbo_var_i64(&s, names[i], lp_rp[i]);
    }
    tbo_var_i64(&s, "tfrm", tfrm);
    tbo_var_i64(&s, "circular", circular);
    tbo_case_add(l, &pad_ext_class, &p, sizeof(p), &s);
}

void tbo_add_pad_ext(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], const int lp_rp[8], int tfrm) {
    add_pad_ext(l, type, ne_a, lp_rp, tfrm, false);
}

void tbo_add_pad_ext_circular(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], const int lp_rp[8], int tfrm) {
    add_pad_ext(l, type, ne_a, lp_rp, tfrm, true);
}

//
// ARANGE
//

struct arange_params {
    enum ggml_type type;
    float          start;
    float          stop;
    float          step;
};

static struct ggml_tensor * arange_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct arange_params * p = c->p;
    struct ggml_tensor * out = ggml_arange(b->ctx, p->start, p->stop, p->step);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class arange_class = {
    .name  = "arange",
    .build = arange_build,
};

void tbo_add_arange(struct tbo_case_list * l, enum ggml_type type, float start, float stop, float step) {
    const struct arange_params p = { .type = type, .start = start, .stop = stop, .step = step };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_f32(&s, "start", start);
    tbo_var_f32(&s, "stop", stop);
    tbo_var_f32(&s, "step", step);
    tbo_case_add(l, &arange_class, &p, sizeof(p), &s);
}

//
// DIAG_MASK_INF
//

struct diag_mask_params {
    enum ggml_type type;
    int64_t        ne[4];
    int            n_past;
};

static struct ggml_tensor * diag_mask_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct diag_mask_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_diag_mask_inf(b->ctx, a, p->n_past);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class diag_mask_class = {
    .name  = "diag_mask_inf",
    .build = diag_mask_build,
};

void tbo_add_diag_mask_inf(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int n_past) {
    struct diag_mask_params p = { .type = type, .n_past = n_past };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "n_past", n_past);
    tbo_case_add(l, &diag_mask_class, &p, sizeof(p), &s);
}
