// ops-glu.c: gated linear units, dst = act(x) * g with act = relu (REGLU),
// gelu (GEGLU, the tanh form), silu (SWIGLU), gelu_erf (GEGLU_ERF) or
// gelu_quick (GEGLU_QUICK); and SWIGLU_OAI, min(x, l) sigmoid(alpha min(x, l))
// (clamp(g, -l, l) + 1) with alpha and l in op_params[2], [3].
//
// Fused form (src[1] == NULL): each row of src0 holds x in its first half and
// g in its second, or the other way round when op_params[1] ("swapped") is
// set; an odd last element is unused. Split form: x is src0, g is src[1].
// Any float types (F32, F16, BF16) in and out, rows strided or not. The ops
// and their expressions are the GLU list of ggml-op-list.h.

#include "cpu-impl.h"
#include "ops/elementwise.h"
#include "simd/vec-math.h"
#include "ggml-op-list.h"

// EW_<NAME> for every GLU op of the list (ggml-op-list.h), in the order of enum ggml_glu_op
enum ew_glu_kind {
#define X(NAME, ...) EW_##NAME,
    GGML_OP_LIST_GLU(X)
#undef X
    EW_GLU_COUNT,
};

#define X(NAME, ...) _Static_assert((int) EW_##NAME == (int) GGML_GLU_OP_##NAME, "GLU list order");
GGML_OP_LIST_GLU(X)
#undef X

// the parameters of SWIGLU_OAI (unused by the others)
struct glu_par {
    float alpha, limit;
};

static inline float ggml_ew_swiglu_oai_sf(struct glu_par p, float x, float g) {
    const float xc = fminf(x, p.limit);
    const float gc = fminf(fmaxf(g, -p.limit), p.limit);
    return ggml_sf_mul_sigmoid(xc, p.alpha * xc) * (gc + 1.0f);
}

static inline float glu_scalar(enum ew_glu_kind kind, struct glu_par gp, float x, float g) {
    (void) gp;
    switch (kind) {
#define X(NAME, f32, ...) case EW_##NAME: return f32;
        GGML_OP_LIST_GLU(X)
#undef X
        case EW_GLU_COUNT: break;
    }
    return 0.0f;
}

#ifdef GGML_VF_WIDTH
static inline ggml_vf ggml_ew_swiglu_oai_vf(struct glu_par p, ggml_vf x, ggml_vf g) {
    const ggml_vf xc = ggml_vf_min(x, ggml_vf_set1(p.limit));
    const ggml_vf gc = ggml_vf_min(ggml_vf_max(g, ggml_vf_set1(-p.limit)), ggml_vf_set1(p.limit));
    const ggml_vf s  = ggml_vf_mul_sigmoid(xc, ggml_vf_mul(ggml_vf_set1(p.alpha), xc));
    return ggml_vf_mul(s, ggml_vf_add(gc, ggml_vf_set1(1.0f)));
}

static inline ggml_vf glu_vector(enum ew_glu_kind kind, struct glu_par gp, ggml_vf x, ggml_vf g) {
    (void) gp;
    switch (kind) {
#define X(NAME, f32, vec, ...) case EW_##NAME: return vec;
        GGML_OP_LIST_GLU(X)
#undef X
        case EW_GLU_COUNT: break;
    }
    return x;
}
#endif

// z[i] = act(x[i]) * g[i], called with a constant kind; z may be x or g
static inline void glu_rows(enum ew_glu_kind kind, struct glu_par p, int64_t n, float * z, const float * x, const float * g,
                            bool ref) {
    (void) ref; // without a vector path, every call takes the scalar loop
    int64_t i = 0;
#ifdef GGML_VF_WIDTH
    if (!ref) {
        for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
            ggml_vf_store(z + i, glu_vector(kind, p, ggml_vf_load(x + i), ggml_vf_load(g + i)));
        }
        if (i < n) {
            const int rest = (int)(n - i);
            const ggml_vf v = glu_vector(kind, p, ggml_vf_load_part(x + i, rest), ggml_vf_load_part(g + i, rest));
            ggml_vf_store_part(z + i, v, rest);
        }
        return;
    }
#endif
    for (; i < n; i++) {
        z[i] = glu_scalar(kind, p, x[i], g[i]);
    }
}

static void glu_apply(enum ew_glu_kind kind, struct glu_par p, int64_t n, float * z, const float * x, const float * g, bool ref) {
    switch (kind) {
#define X(NAME, ...) case EW_##NAME: glu_rows(EW_##NAME, p, n, z, x, g, ref); break;
        GGML_OP_LIST_GLU(X)
#undef X
        case EW_GLU_COUNT: break;
    }
}

// the list follows enum ggml_glu_op
static bool glu_kind_of(const struct ggml_tensor * node, enum ew_glu_kind * kind) {
    const enum ggml_glu_op op = ggml_get_glu_op(node);
    if ((unsigned) op >= (unsigned) EW_GLU_COUNT) {
        return false;
    }
    *kind = (enum ew_glu_kind) op;
    return true;
}

static void glu_span(enum ew_glu_kind kind, struct glu_par p, struct ggml_ew_row d, struct ggml_ew_row x, struct ggml_ew_row g,
                     int64_t c0, int64_t c1, bool ref) {
    float xbuf[GGML_EW_CHUNK];
    float gbuf[GGML_EW_CHUNK];
    float zbuf[GGML_EW_CHUNK];
    const bool direct = ggml_ew_row_is_direct(d) && ggml_ew_row_is_direct(x) && ggml_ew_row_is_direct(g);
    for (int64_t j = c0; j < c1; ) {
        const int64_t n = direct ? c1 - j : MIN(GGML_EW_CHUNK, c1 - j);
        const float * xv = ggml_ew_read(x, j, n, xbuf, ref);
        const float * gv = ggml_ew_read(g, j, n, gbuf, ref);
        float * z = ggml_ew_out(d, j, zbuf);
        glu_apply(kind, p, n, z, xv, gv, ref);
        ggml_ew_write(d, j, n, z, ref);
        j += n;
    }
}

// the row of src starting at element `first`
static struct ggml_ew_row row_from(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, int64_t first) {
    struct ggml_ew_row row = ggml_ew_row_of(t, i1, i2, i3);
    row.p += first * (int64_t) row.nb;
    return row;
}

static void forward_glu(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];

    enum ew_glu_kind kind;
    if (!glu_kind_of(dst, &kind)) {
        GGML_ABORT("%s: op %s is not implemented", __func__, ggml_op_desc(dst));
    }
    const int64_t nc      = dst->ne[0];
    const bool    swapped = ggml_get_op_params_i32(dst, 1) != 0;
    const struct glu_par par = { ggml_get_op_params_f32(dst, 2), ggml_get_op_params_f32(dst, 3) };
    GGML_ASSERT(src1 != NULL ? src0->ne[0] == nc : src0->ne[0] / 2 == nc);

    const struct ggml_ew_split split = ggml_ew_split_make(dst, params->nth);
    int64_t u0, u1;
    ggml_cpu_split_range(split.nrows * split.nblk, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        int64_t i1, i2, i3, c0, c1;
        ggml_ew_split_unit(&split, dst, u, &i1, &i2, &i3, &c0, &c1);
        struct ggml_ew_row x, g;
        if (src1 != NULL) {
            x = ggml_ew_row_of(src0, i1, i2, i3);
            g = ggml_ew_row_of(src1, i1, i2, i3);
        } else {
            x = row_from(src0, i1, i2, i3, swapped ? nc : 0);
            g = row_from(src0, i1, i2, i3, swapped ? 0 : nc);
        }
        glu_span(kind, par, ggml_ew_row_of(dst, i1, i2, i3), x, g, c0, c1, params->use_ref);
    }
}

void ggml_cpu_glu_span_f32(const struct ggml_tensor * glu, int64_t i1, int64_t r0, int64_t r1, bool use_ref) {
    enum ew_glu_kind kind;
    if (!glu_kind_of(glu, &kind) || glu->src[1] == NULL) {
        GGML_ABORT("%s: %s is no split GLU", __func__, ggml_op_desc(glu));
    }
    const struct glu_par par = { ggml_get_op_params_f32(glu, 2), ggml_get_op_params_f32(glu, 3) };
    glu_span(kind, par, ggml_ew_row_of(glu, i1, 0, 0), ggml_ew_row_of(glu->src[0], i1, 0, 0),
             ggml_ew_row_of(glu->src[1], i1, 0, 0), r0, r1, use_ref);
}

static bool supports_glu(const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    enum ew_glu_kind kind;
    if (!glu_kind_of(op, &kind) || !ggml_ew_is_float(src0->type) || !ggml_ew_is_float(op->type)) {
        return false;
    }
    if (src1 != NULL) {
        return ggml_ew_is_float(src1->type) && ggml_are_same_shape(src0, src1) && ggml_are_same_shape(src0, op);
    }
    return op->ne[0] == src0->ne[0] / 2 && op->ne[1] == src0->ne[1] && op->ne[2] == src0->ne[2] && op->ne[3] == src0->ne[3];
}

void ggml_cpu_register_ops_glu(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_GLU] = (struct ggml_cpu_op_impl) { .forward = forward_glu, .supports = supports_glu, .work_size = NULL };
}
