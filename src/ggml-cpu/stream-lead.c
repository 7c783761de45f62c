// stream-lead.c: what a thread asks the memory for while it waits at the
// barrier after a node: the first weights of the next matrix product, and
// the K and V rows of the next attention of token generation.
//
// The threads of a product finish its chunks at different times (the last
// chunks are MM_ROWS_TAIL_BYTES of weights, ops-matmul.c), and the first to
// finish waits at the barrier while the memory serves only the other. That
// wait (0.17 ms of an 8.8 ms token of a 2048x8 llama in Q4_K_M on the 2-core
// Zen 4 host, GGML_CPU_PROFILE) can fetch the lines the next product starts
// its weight streams with: a waiting thread asks for the first lines of the
// streams of the product's first chunks (any of which may be its own, as
// the chunks go to the threads in the order they come), a line of each stream
// in turn, ggml_cpu_stream_lead bytes in all, a few lines between looks at
// the barrier; what the barrier leaves undone is dropped. Asking changes no
// result: only which lines are in the cache when the product starts.
//
// Measured on the Zen 4 host, 2 threads, llama-bench tg64 through llama.cpp
// with GGML_CPU_PROFILE=paired (each token's weights against the read right
// after it; runs with reads of 45 GB/s or more, the host's fast minutes,
// apart), 12-25 runs a setting, alternated: 2048x8 Q4_K_M 95.0-95.3% without,
// 95.8% at 16-32 KiB, 95.9-96.3% at 128-256 KiB; Q4_0 96.7% without, 97.8%
// at 256 KiB, 97.1% at 512 KiB; Q8_0 95.7% without, 97.1-97.7% at 16-64 KiB.
// 30 runs of 2048x8 Q4_K_M: 94.8% without, 96.2% at 256 KiB; 20 of 3072x16
// Q4_K_M (larger products: fewer waits per byte): 95.8% and 96.0%. Each
// thread's first chunk fixed (chunk ith), so that a waiting thread asks for
// its own chunk's lines alone, did worse: 95.2% (30 runs).
//
// An attention of token generation reads its K and V rows from memory too
// (the weights of a layer pass through the caches between two of them), a
// few hundred lines that its threads wait on (ggml_cpu_flash_attn_lead,
// ops-attention.c). A waiting thread asks for those of the live keys of a
// KV cache first, whole, one range after the other, then for the product's
// streams; it looks past the next product for the attention, so that the
// wait after a layer's Q product asks for them some 15 us before they are
// read. llama-bench tg64, 2048x8 Q4_K_M, GGML_CPU_PROFILE (the attention's
// time per token): 0.094-0.098 ms without, 0.083-0.088 asking only where no
// product comes first, 0.075-0.076 so; ggml-run --bench --profile:
// 0.101-0.111 -> 0.079 ms.

#include "cpu-impl.h"
#include "simd/stream-prefetch.h"

// computing nodes past the barrier looked at for a product and an attention
// (8: from a layer's Q product to its attention past K, V, two RoPEs and
// two cache writes)
#define LEAD_NODES 8
// lines asked for between looks at the barrier
#define LEAD_LINES 4
// chunks of the product whose streams are asked for (with more threads,
// the first two: asking for every thread's would only spread the wait)
#define LEAD_CHUNKS 2

static bool lead_computes(const struct ggml_tensor * node) {
    return !ggml_op_is_empty(node->op) && (node->flags & GGML_TENSOR_FLAG_COMPUTE) && !ggml_is_empty(node);
}

void ggml_cpu_lead_init(struct ggml_cpu_lead * lead, const struct ggml_cgraph * g, int cur, int next, bool fuse, int nth) {
    lead->g       = g;
    lead->cur     = cur;
    lead->next    = next;
    lead->fuse    = fuse;
    lead->nth     = nth;
    lead->planned = false;
    lead->n_first = 0;
    lead->n       = 0;
    lead->s       = 0;
    lead->off     = 0;
    lead->bytes   = 0;
}

// the tensor that owns t's memory (the end of its views' sources)
static const struct ggml_tensor * lead_owner(const struct ggml_tensor * t) {
    while (t->view_src != NULL) {
        t = t->view_src;
    }
    return t;
}

// whether a computing node of [from, to) writes t's memory (t itself, an
// in-place result or a view's source)
static bool lead_written(const struct ggml_cgraph * g, const struct ggml_tensor * t, int from, int to) {
    const struct ggml_tensor * owner = lead_owner(t);
    for (int k = from; k < to; k++) {
        if (lead_computes(g->nodes[k]) && lead_owner(g->nodes[k]) == owner) {
            return true;
        }
    }
    return false;
}

// the next computing node past i, or -1
static int lead_next_computing(const struct ggml_cgraph * g, int i) {
    for (int j = i + 1; j < g->n_nodes; j++) {
        if (lead_computes(g->nodes[j])) {
            return j;
        }
    }
    return -1;
}

// the product a fused GLU pair (graph-fusion.c) reads beside the one at j:
// the next computing node, a product of the same activations and weights of
// the same type and rows, followed by a GLU; NULL otherwise
static struct ggml_tensor * lead_glu_partner(const struct ggml_cgraph * g, int j) {
    const struct ggml_tensor * a = g->nodes[j];
    const int k = lead_next_computing(g, j);
    if (k < 0) {
        return NULL;
    }
    struct ggml_tensor * b = g->nodes[k];
    const int z = lead_next_computing(g, k);
    if (b->op != GGML_OP_MUL_MAT || b->src[1] != a->src[1] || b->src[0]->type != a->src[0]->type ||
        b->src[0]->ne[1] != a->src[0]->ne[1] || z < 0 || g->nodes[z]->op != GGML_OP_GLU) {
        return NULL;
    }
    return b;
}

// The ranges to ask for, from the next LEAD_NODES computing nodes: the first
// attention's K and V rows (those of the live keys of a KV cache; its mask
// is read only when no node before it, the ones still computing included,
// writes it), then the first product's streams, up to ggml_cpu_stream_lead
// bytes for each of the two. The attention may come after the product: the
// thread waiting after a layer's Q product asks for its K and V rows as
// well, some 15 us before the attention reads them.
static void lead_plan(struct ggml_cpu_lead * lead) {
    const struct ggml_cgraph * g = lead->g;
    lead->planned = true;
    const size_t total = ggml_cpu_stream_lead_now();
    if (total == 0) {
        return;
    }
    const char * prod[GGML_CPU_LEAD_STARTS - GGML_CPU_LEAD_FIRST];
    int n_prod = 0;
    bool have_prod = false;
    int seen = 0;
    for (int j = lead->next; j < g->n_nodes && seen < LEAD_NODES; j++) {
        struct ggml_tensor * node = g->nodes[j];
        if (!lead_computes(node)) {
            continue;
        }
        seen++;
        if (node->op == GGML_OP_FLASH_ATTN_EXT && lead->n_first == 0) {
            const struct ggml_tensor * mask = node->src[3];
            const bool ready = mask == NULL || !lead_written(g, mask, lead->cur, j);
            lead->n_first = ggml_cpu_flash_attn_lead(node, ready, lead->start, lead->first_len, GGML_CPU_LEAD_FIRST);
            for (int r = 0; r < lead->n_first; r++) {
                lead->first_len[r] = MIN(lead->first_len[r], total / (size_t) lead->n_first);
            }
            if (have_prod) {
                break;
            }
            continue;
        }
        if (node->op == GGML_OP_MUL_MAT && !have_prod) {
            have_prod = true;
            struct ggml_tensor * b = lead->fuse ? lead_glu_partner(g, j) : NULL;
            size_t span = 0;
            n_prod = ggml_cpu_mul_mat_lead(node, b, lead->nth, LEAD_CHUNKS, prod, GGML_CPU_LEAD_STARTS - GGML_CPU_LEAD_FIRST, &span);
            // the lead shared by the streams, none asked for past its own stream
            lead->bytes = n_prod > 0 ? MIN(total / (size_t) n_prod, span) / 64 * 64 : 0;
            n_prod = lead->bytes > 0 ? n_prod : 0;
            if (lead->n_first > 0) {
                break;
            }
            continue;
        }
        if (node->op == GGML_OP_MUL_MAT_ID) {
            break;
        }
    }
    for (int r = 0; r < n_prod; r++) {
        lead->start[lead->n_first + r] = prod[r];
    }
    lead->n = lead->n_first + n_prod;
}

// The next line to ask for: the attention's ranges whole, one after the
// other, then a line of every product stream in turn, then the next line of
// every stream, ...; NULL when all are asked for.
static const char * lead_next_line(struct ggml_cpu_lead * lead) {
    while (lead->s < lead->n_first) {
        if (lead->off < lead->first_len[lead->s]) {
            const char * p = lead->start[lead->s] + lead->off;
            lead->off += 64;
            return p;
        }
        lead->s++;
        lead->off = 0;
    }
    if (lead->s >= lead->n || lead->off >= lead->bytes) {
        return NULL;
    }
    const char * p = lead->start[lead->s] + lead->off;
    if (++lead->s >= lead->n) {
        lead->s = lead->n_first;
        lead->off += 64;
    }
    return p;
}

bool ggml_cpu_lead_step(void * arg) {
    struct ggml_cpu_lead * lead = (struct ggml_cpu_lead *) arg;
    if (!lead->planned) {
        lead_plan(lead);
        return lead->n > 0;
    }
    for (int l = 0; l < LEAD_LINES; l++) {
        const char * p = lead_next_line(lead);
        if (p == NULL) {
            return false;
        }
#if defined(__GNUC__)
        __builtin_prefetch(p, 0, 3);
#else
        (void) p;
#endif
    }
    return true;
}
