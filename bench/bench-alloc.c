// bench-alloc: the graph allocator on a llama-shaped graph.
//
// Builds the forward graph of a 7B-like decoder (n_embd 4096, 32 heads, 8
// KV heads, n_ff 11008, 32 layers, F16 weights, a KV cache of n_ctx cells)
// for a batch of n_tokens, and prints the compute buffer the allocator
// plans, the sum of all intermediate tensors it places (what it would take
// without reuse), and the time planning and placing take: placing the graph
// planned, and placing a new graph of the same shape (as for every token).
//
// Nothing is computed: weights and KV cache live in a reserved range of
// address space without memory (as an mmap'ed model would, before it is
// touched), and the compute buffer type hands out address space only.
//
//   usage: bench-alloc [n_ctx] [n_tokens...]   (default: 4096 512 1)

#define _GNU_SOURCE

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct model_dims {
    int64_t n_embd;
    int64_t n_head;
    int64_t n_head_kv;
    int64_t n_ff;
    int64_t n_layer;
    int64_t n_vocab;
    int64_t n_ctx;
};

//
// a buffer type of address space only: planning and placing never touch memory
//

struct space {
    void * base;
    size_t size;
};

static void * space_reserve(size_t size) {
    void * p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void space_buffer_free(ggml_backend_buffer_t buffer) {
    struct space * s = (struct space *) buffer->context;
    munmap(s->base, s->size);
    free(s);
}

static void * space_buffer_get_base(ggml_backend_buffer_t buffer) {
    return ((struct space *) buffer->context)->base;
}

static const char * space_buft_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "AddressSpace";
}

static ggml_backend_buffer_t space_buft_alloc(ggml_backend_buffer_type_t buft, size_t size) {
    struct space * s = (struct space *) malloc(sizeof(struct space));
    if (s == NULL) {
        return NULL;
    }
    s->size = size;
    s->base = space_reserve(size);
    if (s->base == NULL) {
        free(s);
        return NULL;
    }
    const struct ggml_backend_buffer_i iface = {
        .free_buffer = space_buffer_free,
        .get_base    = space_buffer_get_base,
    };
    return ggml_backend_buffer_init(buft, iface, s, size);
}

static size_t space_buft_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return 32;
}

static struct ggml_backend_buffer_type space_buft = {
    .iface = {
        .get_name      = space_buft_name,
        .alloc_buffer  = space_buft_alloc,
        .get_alignment = space_buft_alignment,
    },
    .device  = NULL,
    .context = NULL,
};

//
// the model
//

struct layer {
    struct ggml_tensor * attn_norm, * wq, * wk, * wv, * wo;
    struct ggml_tensor * ffn_norm, * w_gate, * w_up, * w_down;
    struct ggml_tensor * k_cache, * v_cache;
};

struct model {
    struct model_dims d;
    struct ggml_context * ctx_w;
    struct ggml_tensor * tok_embd, * output_norm, * output;
    struct layer * layers;
    ggml_backend_buffer_t buf_w; // weights and KV cache
};

static struct ggml_tensor * weight(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, const char * name, int il) {
    struct ggml_tensor * t = ne1 > 0 ? ggml_new_tensor_2d(ctx, type, ne0, ne1) : ggml_new_tensor_1d(ctx, type, ne0);
    if (il >= 0) {
        ggml_format_name(t, "blk.%d.%s", il, name);
    } else {
        ggml_set_name(t, name);
    }
    return t;
}

static bool model_init(struct model * m, struct model_dims d) {
    m->d = d;
    const int64_t n_embd_kv = d.n_embd / d.n_head * d.n_head_kv;
    struct ggml_init_params params = {
        .mem_size   = (size_t)(d.n_layer * 16 + 8) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    m->ctx_w = ggml_init(params);
    m->tok_embd    = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, d.n_vocab, "token_embd", -1);
    m->output_norm = weight(m->ctx_w, GGML_TYPE_F32, d.n_embd, 0, "output_norm", -1);
    m->output      = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, d.n_vocab, "output", -1);
    m->layers = (struct layer *) calloc((size_t) d.n_layer, sizeof(struct layer));
    for (int il = 0; il < d.n_layer; il++) {
        struct layer * l = &m->layers[il];
        l->attn_norm = weight(m->ctx_w, GGML_TYPE_F32, d.n_embd, 0, "attn_norm", il);
        l->wq        = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, d.n_embd, "attn_q", il);
        l->wk        = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, n_embd_kv, "attn_k", il);
        l->wv        = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, n_embd_kv, "attn_v", il);
        l->wo        = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, d.n_embd, "attn_output", il);
        l->ffn_norm  = weight(m->ctx_w, GGML_TYPE_F32, d.n_embd, 0, "ffn_norm", il);
        l->w_gate    = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, d.n_ff, "ffn_gate", il);
        l->w_up      = weight(m->ctx_w, GGML_TYPE_F16, d.n_embd, d.n_ff, "ffn_up", il);
        l->w_down    = weight(m->ctx_w, GGML_TYPE_F16, d.n_ff, d.n_embd, "ffn_down", il);
        l->k_cache   = weight(m->ctx_w, GGML_TYPE_F16, n_embd_kv * d.n_ctx, 0, "cache_k", il);
        l->v_cache   = weight(m->ctx_w, GGML_TYPE_F16, n_embd_kv * d.n_ctx, 0, "cache_v", il);
    }
    // like a model file mapped into memory: address space, no memory until touched
    const size_t size = ggml_backend_alloc_ctx_tensors_from_buft_size(m->ctx_w, &space_buft);
    m->buf_w = ggml_backend_alloc_ctx_tensors_from_buft(m->ctx_w, &space_buft);
    if (m->buf_w == NULL) {
        fprintf(stderr, "cannot reserve %.1f GiB of address space for the weights\n", (double) size / (1 << 30));
        return false;
    }
    ggml_backend_buffer_set_usage(m->buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    printf("weights and KV cache: %.2f GiB (address space only)\n", (double) size / (1 << 30));
    return true;
}

static void model_free(struct model * m) {
    ggml_backend_buffer_free(m->buf_w);
    ggml_free(m->ctx_w);
    free(m->layers);
}

// the forward graph of a batch of n_tokens at the start of the KV cache
static struct ggml_cgraph * build_graph(const struct model * m, struct ggml_context * ctx, int64_t n_tokens, struct ggml_tensor * inputs[3]) {
    const struct model_dims d = m->d;
    const int64_t head_dim  = d.n_embd / d.n_head;
    const int64_t n_embd_kv = head_dim * d.n_head_kv;
    const int64_t n_kv      = d.n_ctx;
    const float   eps       = 1e-5f;

    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, (size_t)(d.n_layer * 64 + 64), false);

    struct ggml_tensor * inp_tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
    struct ggml_tensor * inp_pos    = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens);
    struct ggml_tensor * kq_mask    = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_kv, n_tokens);
    ggml_set_input(inp_tokens);
    ggml_set_input(inp_pos);
    ggml_set_input(kq_mask);
    inputs[0] = inp_tokens;
    inputs[1] = inp_pos;
    inputs[2] = kq_mask;

    struct ggml_tensor * inpL = ggml_get_rows(ctx, m->tok_embd, inp_tokens);
    for (int il = 0; il < d.n_layer; il++) {
        const struct layer * l = &m->layers[il];

        struct ggml_tensor * cur = ggml_mul(ctx, ggml_rms_norm(ctx, inpL, eps), l->attn_norm);

        struct ggml_tensor * q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, l->wq, cur), head_dim, d.n_head, n_tokens);
        struct ggml_tensor * k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, l->wk, cur), head_dim, d.n_head_kv, n_tokens);
        struct ggml_tensor * v = ggml_mul_mat(ctx, l->wv, cur);
        q = ggml_rope_ext(ctx, q, inp_pos, NULL, (int) head_dim, GGML_ROPE_TYPE_NORMAL, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        k = ggml_rope_ext(ctx, k, inp_pos, NULL, (int) head_dim, GGML_ROPE_TYPE_NORMAL, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);

        // store K and V (V transposed) in the cache, cells [0, n_tokens)
        struct ggml_tensor * k_dst = ggml_view_1d(ctx, l->k_cache, n_tokens * n_embd_kv, 0);
        struct ggml_tensor * v_dst = ggml_view_2d(ctx, l->v_cache, n_tokens, n_embd_kv, (size_t) n_kv * ggml_element_size(l->v_cache), 0);
        ggml_build_forward_expand(gf, ggml_cpy(ctx, k, k_dst));
        ggml_build_forward_expand(gf, ggml_cpy(ctx, ggml_transpose(ctx, v), v_dst));

        // attention over the whole cache
        struct ggml_tensor * kc = ggml_view_3d(ctx, l->k_cache, head_dim, n_kv, d.n_head_kv,
                                               ggml_row_size(l->k_cache->type, n_embd_kv),
                                               ggml_row_size(l->k_cache->type, head_dim), 0);
        struct ggml_tensor * vc = ggml_view_3d(ctx, l->v_cache, n_kv, head_dim, d.n_head_kv,
                                               ggml_row_size(l->v_cache->type, n_kv),
                                               ggml_row_size(l->v_cache->type, n_kv * head_dim), 0);
        struct ggml_tensor * qp  = ggml_permute(ctx, q, 0, 2, 1, 3);
        struct ggml_tensor * kq  = ggml_mul_mat(ctx, kc, qp);
        kq = ggml_soft_max_ext(ctx, kq, kq_mask, 1.0f / sqrtf((float) head_dim), 0.0f);
        struct ggml_tensor * kqv = ggml_mul_mat(ctx, vc, kq);
        cur = ggml_cont_2d(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3), d.n_embd, n_tokens);
        cur = ggml_mul_mat(ctx, l->wo, cur);

        struct ggml_tensor * ffn_inp = ggml_add(ctx, cur, inpL);
        cur = ggml_mul(ctx, ggml_rms_norm(ctx, ffn_inp, eps), l->ffn_norm);
        struct ggml_tensor * gate = ggml_mul_mat(ctx, l->w_gate, cur);
        struct ggml_tensor * up   = ggml_mul_mat(ctx, l->w_up, cur);
        cur = ggml_mul_mat(ctx, l->w_down, ggml_swiglu_split(ctx, gate, up));
        inpL = ggml_add(ctx, cur, ffn_inp);
    }
    struct ggml_tensor * logits = ggml_mul_mat(ctx, m->output, ggml_mul(ctx, ggml_rms_norm(ctx, inpL, eps), m->output_norm));
    ggml_set_output(logits);
    ggml_build_forward_expand(gf, logits);
    return gf;
}

// what placing every tensor the allocator places apart would take (before allocation)
static size_t sum_of_intermediates(struct ggml_cgraph * gf, struct ggml_tensor * const inputs[3]) {
    size_t sum = 0;
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        const struct ggml_tensor * t = ggml_graph_node(gf, i);
        if (t->view_src == NULL && t->data == NULL) {
            sum += GGML_PAD(ggml_nbytes(t), 32);
        }
    }
    for (int i = 0; i < 3; i++) {
        sum += GGML_PAD(ggml_nbytes(inputs[i]), 32);
    }
    return sum;
}

static double mib(size_t bytes) {
    return (double) bytes / (1024.0 * 1024.0);
}

static void bench(const struct model * m, int64_t n_tokens) {
    struct ggml_init_params params = {
        .mem_size   = (size_t)(m->d.n_layer * 64 + 64) * ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t)(m->d.n_layer * 64 + 64), false),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * inputs[3];
    struct ggml_cgraph * gf = build_graph(m, ctx, n_tokens, inputs);
    const size_t sum = sum_of_intermediates(gf, inputs);

    ggml_gallocr_t galloc = ggml_gallocr_new(&space_buft);

    // planning only (reserve_n_size), best of a few runs
    size_t planned = 0;
    int64_t best_plan_us = INT64_MAX;
    for (int run = 0; run < 5; run++) {
        const int64_t t0 = ggml_time_us();
        ggml_gallocr_reserve_n_size(galloc, gf, NULL, NULL, &planned);
        const int64_t dt = ggml_time_us() - t0;
        best_plan_us = dt < best_plan_us ? dt : best_plan_us;
    }

    // planning and buffers, then placing the graph from the plan
    int64_t t0 = ggml_time_us();
    const bool reserved = ggml_gallocr_reserve(galloc, gf);
    const int64_t reserve_us = ggml_time_us() - t0;
    t0 = ggml_time_us();
    bool placed = ggml_gallocr_alloc_graph(galloc, gf);
    const int64_t place_us = ggml_time_us() - t0;

    // a new graph of the same shape on the plan, as for every token: best of a few
    int64_t best_again_us = INT64_MAX;
    for (int run = 0; run < 20; run++) {
        struct ggml_context * ctx2 = ggml_init(params);
        struct ggml_tensor * inputs2[3];
        struct ggml_cgraph * gf2 = build_graph(m, ctx2, n_tokens, inputs2);
        const int64_t t1 = ggml_time_us();
        placed = ggml_gallocr_alloc_graph(galloc, gf2) && placed;
        const int64_t dt = ggml_time_us() - t1;
        best_again_us = dt < best_again_us ? dt : best_again_us;
        ggml_free(ctx2);
    }

    printf("n_tokens %4lld: %5d nodes | planned compute buffer %9.2f MiB | sum of intermediates %10.2f MiB (%.1fx) | "
           "plan %7.2f ms, reserve %7.2f ms, place %6.3f ms, place a new graph %6.3f ms%s\n",
           (long long) n_tokens, ggml_graph_n_nodes(gf), mib(planned), mib(sum), (double) sum / (double) planned,
           (double) best_plan_us / 1000.0, (double) reserve_us / 1000.0, (double) place_us / 1000.0, (double) best_again_us / 1000.0,
           reserved && placed ? "" : " (FAILED)");

    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

int main(int argc, char ** argv) {
    struct model_dims d = {
        .n_embd    = 4096,
        .n_head    = 32,
        .n_head_kv = 8,
        .n_ff      = 11008,
        .n_layer   = 32,
        .n_vocab   = 32000,
        .n_ctx     = argc > 1 ? atoll(argv[1]) : 4096,
    };
    printf("llama-shaped graph: n_embd %lld, n_head %lld, n_head_kv %lld, n_ff %lld, n_layer %lld, n_vocab %lld, n_ctx %lld\n",
           (long long) d.n_embd, (long long) d.n_head, (long long) d.n_head_kv, (long long) d.n_ff,
           (long long) d.n_layer, (long long) d.n_vocab, (long long) d.n_ctx);

    struct model m;
    if (!model_init(&m, d)) {
        return 1;
    }
    if (argc > 2) {
        for (int i = 2; i < argc; i++) {
            bench(&m, atoll(argv[i]));
        }
    } else {
        bench(&m, 512);
        bench(&m, 1);
    }
    model_free(&m);
    return 0;
}
