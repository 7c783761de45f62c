// stream-lead.c: what a thread asks the memory for while it waits at the
// barrier after a node: the first weights of the next matrix product.
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

#include "cpu-impl.h"
#include "simd/stream-prefetch.h"

// computing nodes past the barrier looked at for a product
#define LEAD_NODES 6
// lines asked for between looks at the barrier
#define LEAD_LINES 4
// chunks of the product whose streams are asked for (with more threads,
// the first two: asking for every thread's would only spread the wait)
#define LEAD_CHUNKS 2

static bool lead_computes(const struct ggml_tensor * node) {
    return !ggml_op_is_empty(node->op) && (node->flags & GGML_TENSOR_FLAG_COMPUTE) && !ggml_is_empty(node);
}

void ggml_cpu_lead_init(struct ggml_cpu_lead * lead, const struct ggml_cgraph * g, int next, bool fuse, int nth) {
    lead->g       = g;
    lead->next    = next;
    lead->fuse    = fuse;
    lead->nth     = nth;
    lead->planned = false;
    lead->n       = 0;
    lead->s       = 0;
    lead->off     = 0;
    lead->bytes   = 0;
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

static void lead_plan(struct ggml_cpu_lead * lead) {
    const struct ggml_cgraph * g = lead->g;
    lead->planned = true;
    int seen = 0;
    size_t span = 0;
    for (int j = lead->next; j < g->n_nodes && seen < LEAD_NODES; j++) {
        struct ggml_tensor * node = g->nodes[j];
        if (!lead_computes(node)) {
            continue;
        }
        seen++;
        if (node->op == GGML_OP_MUL_MAT) {
            struct ggml_tensor * b = lead->fuse ? lead_glu_partner(g, j) : NULL;
            lead->n = ggml_cpu_mul_mat_lead(node, b, lead->nth, LEAD_CHUNKS, lead->start, GGML_CPU_LEAD_STARTS, &span);
            break;
        }
        if (node->op == GGML_OP_MUL_MAT_ID) {
            break;
        }
    }
    // the lead shared by the streams, none asked for past its own stream
    const size_t total = ggml_cpu_stream_lead_now();
    lead->bytes = lead->n > 0 ? MIN(total / (size_t) lead->n, span) / 64 * 64 : 0;
}

bool ggml_cpu_lead_step(void * arg) {
    struct ggml_cpu_lead * lead = (struct ggml_cpu_lead *) arg;
    if (!lead->planned) {
        lead_plan(lead);
        return lead->bytes > 0;
    }
    // a line of every stream, then the next line of every stream, ...
    for (int l = 0; l < LEAD_LINES; l++) {
        if (lead->off >= lead->bytes) {
            return false;
        }
#if defined(__GNUC__)
        __builtin_prefetch(lead->start[lead->s] + lead->off, 0, 3);
#endif
        if (++lead->s >= lead->n) {
            lead->s = 0;
            lead->off += 64;
        }
    }
    return true;
}
