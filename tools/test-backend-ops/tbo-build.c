// tbo-build.c: graph building helpers, the case list and the defaults of case classes.

#include "tbo.h"

#include <stdlib.h>
#include <string.h>

void tbo_build_init(struct tbo_build * b, struct ggml_context * ctx, enum tbo_mode mode) {
    *b = (struct tbo_build) {
        .ctx  = ctx,
        .mode = mode,
    };
}

void tbo_build_free(struct tbo_build * b) {
    free(b->sentinels);
    b->sentinels     = NULL;
    b->n_sentinels   = 0;
    b->cap_sentinels = 0;
}

enum { TBO_SENTINEL_SIZE = 1024 };

void tbo_add_sentinel(struct tbo_build * b) {
    if (b->mode != TBO_MODE_TEST) {
        return;
    }
    if (b->n_sentinels == b->cap_sentinels) {
        b->cap_sentinels = b->cap_sentinels > 0 ? 2 * b->cap_sentinels : 16;
        b->sentinels = tbo_realloc(b->sentinels, (size_t) b->cap_sentinels * sizeof(b->sentinels[0]));
    }
    struct ggml_tensor * s = ggml_new_tensor_1d(b->ctx, GGML_TYPE_F32, TBO_SENTINEL_SIZE);
    ggml_format_name(s, "sent_%d", b->n_sentinels);
    b->sentinels[b->n_sentinels++] = s;
}

struct ggml_tensor * tbo_new_tensor(struct tbo_build * b, enum ggml_type type, int n_dims, const int64_t * ne) {
    struct ggml_tensor * t = ggml_new_tensor(b->ctx, type, n_dims, ne);
    tbo_add_sentinel(b);
    return t;
}

struct ggml_tensor * tbo_new_tensor_1d(struct tbo_build * b, enum ggml_type type, int64_t ne0) {
    const int64_t ne[1] = { ne0 };
    return tbo_new_tensor(b, type, 1, ne);
}

struct ggml_tensor * tbo_new_tensor_2d(struct tbo_build * b, enum ggml_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return tbo_new_tensor(b, type, 2, ne);
}

struct ggml_tensor * tbo_new_tensor_3d(struct tbo_build * b, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return tbo_new_tensor(b, type, 3, ne);
}

struct ggml_tensor * tbo_new_tensor_4d(struct tbo_build * b, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return tbo_new_tensor(b, type, 4, ne);
}

bool tbo_is_view_op(enum ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

//
// the case list
//

void tbo_case_add(struct tbo_case_list * list, const struct tbo_case_class * cls, const void * params, size_t size,
                  struct tbo_str * vars) {
    if (list->n == list->cap) {
        list->cap = list->cap > 0 ? 2 * list->cap : 256;
        list->v = tbo_realloc(list->v, list->cap * sizeof(list->v[0]));
    }
    void * p = tbo_malloc(size);
    memcpy(p, params, size);
    list->v[list->n++] = (struct tbo_case) {
        .cls  = cls,
        .vars = vars->s != NULL ? vars->s : tbo_strdup(""),
        .p    = p,
    };
    *vars = (struct tbo_str) { 0 };
}

void tbo_case_list_free(struct tbo_case_list * list) {
    for (size_t i = 0; i < list->n; i++) {
        free(list->v[i].vars);
        free(list->v[i].p);
    }
    free(list->v);
    *list = (struct tbo_case_list) { 0 };
}

//
// defaults
//

double tbo_case_max_err(const struct tbo_case * c) {
    return c->cls->max_err != NULL ? c->cls->max_err(c) : 1e-7;
}

size_t tbo_case_op_size(const struct tbo_case * c, const struct ggml_tensor * out) {
    if (c->cls->op_size != NULL) {
        return c->cls->op_size(c, out);
    }
    size_t size = ggml_nbytes(out);
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (out->src[i] != NULL) {
            size += ggml_nbytes(out->src[i]);
        }
    }
    return size;
}

uint64_t tbo_case_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    return c->cls->flops != NULL ? c->cls->flops(c, out) : 0;
}

const char * tbo_case_op_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    return c->cls->op_desc != NULL ? c->cls->op_desc(c, out) : ggml_op_desc(out);
}

bool tbo_case_run_whole_graph(const struct tbo_case * c) {
    return c->cls->run_whole_graph != NULL && c->cls->run_whole_graph(c);
}
