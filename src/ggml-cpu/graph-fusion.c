// graph-fusion.c: consecutive nodes that the CPU computes as one.
//
// A node computed alone ends at a barrier where every thread waits for the
// slowest; a run of small nodes on one row (generation: one token) costs
// more in those hand-offs than in its arithmetic. Where the graph has one of
// these patterns, the nodes are computed by one kernel, with one barrier:
//
//   RMS_NORM, MUL            the norm times a weight (every norm of a llama
//                            layer, of the output)
//   ADD, RMS_NORM, MUL       the residual sum, then the norm of it times a
//                            weight (the sum is written out: the next
//                            residual sum reads it too)
//   MUL_MAT, MUL_MAT, ...    two to GGML_CPU_MUL_MAT_GROUP_MAX products of
//                            the same activations, few columns (Q, K and V,
//                            gate and up of a generated token): the
//                            activations converted once, the products'
//                            chunks one space (ops-matmul.c); views between
//                            them (they compute nothing) are skipped
//   MUL_MAT, MUL_MAT, GLU    a pair of such products of one weight type and
//                            size (gate and up) and the GLU (split form, F32)
//                            of their results: each chunk of rows of both,
//                            then the GLU of those rows (the products are
//                            still written: anything else may read them)
//
// The fused kernel computes every value by the same operations as the nodes
// one after the other: results are the same, bit for bit. A norm pattern is
// taken only when it is safe: the intermediate norm is read by the MUL alone (the
// whole graph's use counts, ggml_can_fuse), is no output and no view, every
// tensor is F32 with contiguous rows, and the result does not overlap what
// the kernel still reads (except the exact in-place cases, which it computes
// row by row as the nodes do); a group of products when none reads another's
// result, the results overlap nothing they read or each other, and all take
// the same forms of the activations. GGML_CPU_DISABLE_FUSION=1 turns fusion off,
// as upstream's variable of the same name; the reference paths (use_ref)
// never fuse.

#include "cpu-impl.h"

#include <pthread.h>
#include <stdlib.h>

static bool           g_fusion_disabled;
static pthread_once_t g_fusion_once = PTHREAD_ONCE_INIT;

static void fusion_read_env(void) {
    const char * env = getenv("GGML_CPU_DISABLE_FUSION");
    g_fusion_disabled = env != NULL && atoi(env) == 1;
}

bool ggml_cpu_fusion_enabled(bool use_ref) {
    pthread_once(&g_fusion_once, fusion_read_env);
    return !use_ref && !g_fusion_disabled;
}

static bool is_f32_rows(const struct ggml_tensor * t) {
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float);
}

static bool overlap(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const char * a0 = (const char *) a->data, * b0 = (const char *) b->data;
    return a0 < b0 + ggml_nbytes(b) && b0 < a0 + ggml_nbytes(a);
}

// a written tensor against one read in the same row pass: apart, or the same
// memory with the same layout (in place)
static bool apart_or_same(const struct ggml_tensor * w, const struct ggml_tensor * r) {
    if (!overlap(w, r)) {
        return true;
    }
    return w->data == r->data && ggml_are_same_shape(w, r) && w->nb[1] == r->nb[1] && w->nb[2] == r->nb[2] &&
           w->nb[3] == r->nb[3];
}

// nodes[i] RMS_NORM and nodes[i + 1] MUL by a weight, fusable
static bool norm_mul_at(const struct ggml_cgraph * g, int i) {
    static const enum ggml_op ops[2] = { GGML_OP_RMS_NORM, GGML_OP_MUL };
    if (!ggml_can_fuse(g, i, ops, 2)) {
        return false;
    }
    const struct ggml_tensor * norm = g->nodes[i];
    const struct ggml_tensor * mul  = g->nodes[i + 1];
    const struct ggml_tensor * x    = norm->src[0];
    const struct ggml_tensor * w    = mul->src[0] == norm ? mul->src[1] : mul->src[0];
    if (ggml_is_empty(mul) || w == norm || !is_f32_rows(x) || !is_f32_rows(norm) || !is_f32_rows(mul) ||
        !is_f32_rows(w) || w->ne[0] != mul->ne[0] || !ggml_can_repeat(w, mul)) {
        return false;
    }
    return x->data != NULL && w->data != NULL && mul->data != NULL && !overlap(mul, w) && apart_or_same(mul, x);
}

// nodes[i] and the products right after it (only views, which compute
// nothing, between them: llama.cpp reshapes V before it computes K) that read
// the same activations and can be fused with it and with each other: their
// count (1: none) and in *j_last the index of the last
static int mul_mat_group_at(const struct ggml_cgraph * g, int i, int * j_last) {
    const struct ggml_tensor * a = g->nodes[i];
    const struct ggml_tensor * x = a->src[1];
    *j_last = i;
    if (ggml_is_empty(a) || a->data == NULL || overlap(a, x)) {
        return 1;
    }
    const struct ggml_tensor * m[GGML_CPU_MUL_MAT_GROUP_MAX] = { a };
    int n = 1;
    for (int j = i + 1; n < GGML_CPU_MUL_MAT_GROUP_MAX; j++) {
        while (j < g->n_nodes && ggml_op_is_empty(g->nodes[j]->op)) {
            j++;
        }
        if (j >= g->n_nodes) {
            break;
        }
        const struct ggml_tensor * b = g->nodes[j];
        if (b->op != GGML_OP_MUL_MAT || b->src[1] != x || (b->flags & GGML_TENSOR_FLAG_COMPUTE) == 0 ||
            ggml_is_empty(b) || b->data == NULL || overlap(b, x) || !ggml_cpu_mul_mat_pair_ok(a, b)) {
            break;
        }
        bool apart = true;
        for (int k = 0; k < n && apart; k++) {
            apart = b->src[0] != m[k] && !overlap(m[k], b) && !overlap(m[k], b->src[0]) && !overlap(b, m[k]->src[0]);
        }
        if (!apart) {
            break;
        }
        m[n++]  = b;
        *j_last = j;
    }
    return n;
}

// nodes[i] and one more product a group of two (mul_mat_group_at), then
// (views between) a GLU of their two results that the pair's kernel can
// compute chunk by chunk: its index in *j_glu
static bool mul_mat_glu_at(const struct ggml_cgraph * g, int i, int * j_glu) {
    int j;
    if (mul_mat_group_at(g, i, &j) != 2) {
        return false;
    }
    const struct ggml_tensor * a = g->nodes[i];
    const struct ggml_tensor * b = g->nodes[j];
    int k = j + 1;
    while (k < g->n_nodes && ggml_op_is_empty(g->nodes[k]->op)) {
        k++;
    }
    if (k >= g->n_nodes) {
        return false;
    }
    const struct ggml_tensor * z = g->nodes[k];
    if (z->op != GGML_OP_GLU || (z->flags & GGML_TENSOR_FLAG_COMPUTE) == 0 || z->src[1] == NULL ||
        !((z->src[0] == a && z->src[1] == b) || (z->src[0] == b && z->src[1] == a))) {
        return false;
    }
    const struct ggml_tensor * wa = a->src[0], * wb = b->src[0], * x = a->src[1];
    // one split for both: the same weight type and rows; F32 rows of one shape, one matrix
    if (wa->type != wb->type || wa->ne[1] != wb->ne[1] || !ggml_are_same_shape(a, b) || !ggml_are_same_shape(a, z) ||
        !ggml_is_contiguous(a) || !ggml_is_contiguous(b) || !ggml_is_contiguous(z) || a->type != GGML_TYPE_F32 ||
        b->type != GGML_TYPE_F32 || z->type != GGML_TYPE_F32 || a->ne[2] != 1 || a->ne[3] != 1 || z->data == NULL) {
        return false;
    }
    // the GLU writes rows a chunk's products have just written, in place or
    // apart, and nothing the later chunks read
    if (!apart_or_same(z, a) || !apart_or_same(z, b) || overlap(z, wa) || overlap(z, wb) || overlap(z, x)) {
        return false;
    }
    *j_glu = k;
    return true;
}

enum ggml_cpu_fusion ggml_cpu_fusion_at(const struct ggml_cgraph * g, int i, bool enabled, int * n_nodes) {
    *n_nodes = 1;
    if (!enabled || i + 1 >= g->n_nodes) {
        return GGML_CPU_FUSION_NONE;
    }
    const struct ggml_tensor * node = g->nodes[i];
    if (node->op == GGML_OP_MUL_MAT) {
        int j;
        if (mul_mat_glu_at(g, i, &j)) {
            *n_nodes = j - i + 1;
            return GGML_CPU_FUSION_MUL_MAT_GLU;
        }
        if (mul_mat_group_at(g, i, &j) > 1) {
            *n_nodes = j - i + 1;
            return GGML_CPU_FUSION_MUL_MAT_GROUP;
        }
        return GGML_CPU_FUSION_NONE;
    }
    if (node->op == GGML_OP_RMS_NORM) {
        if (norm_mul_at(g, i)) {
            *n_nodes = 2;
            return GGML_CPU_FUSION_RMS_NORM_MUL;
        }
        return GGML_CPU_FUSION_NONE;
    }
    if (node->op != GGML_OP_ADD || i + 2 >= g->n_nodes || g->nodes[i + 1]->op != GGML_OP_RMS_NORM ||
        g->nodes[i + 1]->src[0] != node || (node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
        return GGML_CPU_FUSION_NONE;
    }
    const struct ggml_tensor * a   = node->src[0];
    const struct ggml_tensor * b   = node->src[1];
    const struct ggml_tensor * mul = g->nodes[i + 2];
    if (!is_f32_rows(node) || !is_f32_rows(a) || !is_f32_rows(b) || !ggml_are_same_shape(a, node) ||
        !ggml_are_same_shape(b, node) || node->data == NULL || a->data == NULL || b->data == NULL ||
        !norm_mul_at(g, i + 1)) {
        return GGML_CPU_FUSION_NONE;
    }
    const struct ggml_tensor * w = mul->src[0] == g->nodes[i + 1] ? mul->src[1] : mul->src[0];
    if (!apart_or_same(node, a) || !apart_or_same(node, b) || !apart_or_same(mul, node) || !apart_or_same(mul, a) ||
        !apart_or_same(mul, b) || overlap(node, w)) {
        return GGML_CPU_FUSION_NONE;
    }
    *n_nodes = 3;
    return GGML_CPU_FUSION_ADD_RMS_NORM_MUL;
}

void ggml_cpu_fusion_forward(const struct ggml_compute_params * params, const struct ggml_cgraph * g, int i,
                             enum ggml_cpu_fusion kind) {
    switch (kind) {
        case GGML_CPU_FUSION_RMS_NORM_MUL:
            ggml_cpu_forward_rms_norm_mul(params, NULL, g->nodes[i], g->nodes[i + 1]);
            return;
        case GGML_CPU_FUSION_ADD_RMS_NORM_MUL:
            ggml_cpu_forward_rms_norm_mul(params, g->nodes[i], g->nodes[i + 1], g->nodes[i + 2]);
            return;
        case GGML_CPU_FUSION_MUL_MAT_GROUP: {
            // the products are the nodes of [i, j] that compute something
            struct ggml_tensor * m[GGML_CPU_MUL_MAT_GROUP_MAX];
            int j, n = 0;
            mul_mat_group_at(g, i, &j);
            for (int k = i; k <= j; k++) {
                if (!ggml_op_is_empty(g->nodes[k]->op)) {
                    m[n++] = g->nodes[k];
                }
            }
            ggml_cpu_forward_mul_mat_group(params, m, n);
            return;
        }
        case GGML_CPU_FUSION_MUL_MAT_GLU: {
            int j, k;
            mul_mat_group_at(g, i, &j);
            mul_mat_glu_at(g, i, &k);
            ggml_cpu_forward_mul_mat_glu(params, g->nodes[i], g->nodes[j], g->nodes[k]);
            return;
        }
        case GGML_CPU_FUSION_NONE:
            break;
    }
    GGML_ABORT("no fused kernel for kind %d", (int) kind);
}
