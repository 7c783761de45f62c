#pragma once

//
// cpu-impl.h: what the CPU backend's kernels share.
//
// A graph is computed by n threads together (thread 0 is the caller). Every
// thread calls the forward function of every node with its own ith; the
// kernel takes its share of the work (rows, chunks) and returns; the threads
// then meet at one barrier before the next node. Nodes that only reinterpret
// memory (views, reshapes) run nothing and need no barrier.
//
// Each op family lives in its own file (ops-*.c) and registers its ops in
// the op table with ggml_cpu_register_ops_<family>(). An op is supported by
// the CPU backend exactly when its table entry has a forward function and
// its supports function (if any) accepts the node.
//

#include "ggml-impl.h"
#include "ggml-cpu.h"
#include "ggml-backend-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_CPU_CACHE_LINE 64

struct ggml_compute_params {
    int ith;                              // this thread
    int nth;                              // threads working on the node
    size_t wsize;                         // bytes of shared scratch memory (from ggml_graph_plan)
    void * wdata;                         // shared scratch memory, GGML_CPU_CACHE_LINE aligned
    struct ggml_threadpool * threadpool;  // for barriers and chunk counters
    bool use_ref;                         // take the portable scalar paths (see ggml_backend_cpu_set_use_ref)
};

// Wait until every thread of the current graph has reached this point. Kernels
// may use it between phases of one node (e.g. convert, then multiply).
void ggml_cpu_barrier(struct ggml_threadpool * tp);

// The same, and while this thread waits for the others, work(arg) a piece at
// a time, until it returns false or the others arrive (nothing done when
// this thread arrives last, or when the pool does not spin: more threads than
// CPUs). The work must be something that may be left undone at any piece.
typedef bool (*ggml_cpu_wait_work_t)(void * arg);
void ggml_cpu_barrier_busy(struct ggml_threadpool * tp, ggml_cpu_wait_work_t work, void * arg);

// Dynamic work sharing inside one node: returns 0, 1, 2, ... across all threads,
// each index once. The count restarts at 0 at every barrier.
int ggml_cpu_next_chunk(const struct ggml_compute_params * params);

// the share [*start, *end) of n items that thread ith of nth takes
static inline void ggml_cpu_split_range(int64_t n, int ith, int nth, int64_t * start, int64_t * end) {
    const int64_t per = (n + nth - 1) / nth;
    *start = MIN(n, per * ith);
    *end   = MIN(n, *start + per);
}

//
// op table
//

typedef void   (*ggml_cpu_forward_t)  (const struct ggml_compute_params * params, struct ggml_tensor * dst);
typedef bool   (*ggml_cpu_supports_t) (const struct ggml_tensor * op);
typedef size_t (*ggml_cpu_work_size_t)(const struct ggml_tensor * op, int n_threads);

struct ggml_cpu_op_impl {
    ggml_cpu_forward_t   forward;   // NULL: the op is not implemented
    ggml_cpu_supports_t  supports;  // NULL: every type and layout the op constructor allows
    ggml_cpu_work_size_t work_size; // NULL: no scratch memory needed
};

// the table entry of op (forward is NULL for ops the CPU does not implement)
const struct ggml_cpu_op_impl * ggml_cpu_op_get(enum ggml_op op);

// true if the CPU backend can compute this node
bool ggml_cpu_supports_op(const struct ggml_tensor * op);

// One per op family; each fills the entries of the ops it implements.
void ggml_cpu_register_ops_elementwise(struct ggml_cpu_op_impl * table); // ops-elementwise.c: binary, unary, glu, scale, clamp...
void ggml_cpu_register_ops_copy       (struct ggml_cpu_op_impl * table); // ops-copy.c: dup/cpy/cont, set, rows, repeat, concat, pad, arange
void ggml_cpu_register_ops_reduce     (struct ggml_cpu_op_impl * table); // ops-reduce.c: sums, argmax, count_equal, argsort, top_k
void ggml_cpu_register_ops_norm       (struct ggml_cpu_op_impl * table); // ops-norm.c: norms, softmax, diag mask
void ggml_cpu_register_ops_rope       (struct ggml_cpu_op_impl * table); // ops-rope.c
void ggml_cpu_register_ops_matmul     (struct ggml_cpu_op_impl * table); // ops-matmul.c: mul_mat, mul_mat_id, out_prod
void ggml_cpu_register_ops_attention  (struct ggml_cpu_op_impl * table); // ops-attention.c: flash_attn_ext
void ggml_cpu_register_ops_custom     (struct ggml_cpu_op_impl * table); // ops-custom.c: map_custom1/2/3, custom
void ggml_cpu_register_ops_misc       (struct ggml_cpu_op_impl * table); // ops-misc.c: add_id, cumsum, diag, fill, tri, solve_tri, group_norm
void ggml_cpu_register_ops_ssm        (struct ggml_cpu_op_impl * table); // ops-ssm.c: ssm_conv/scan, rwkv_wkv6/7, gla, gated_delta_net
void ggml_cpu_register_ops_conv       (struct ggml_cpu_op_impl * table); // ops-conv.c: im2col, convolutions, col2im
void ggml_cpu_register_ops_pool       (struct ggml_cpu_op_impl * table); // ops-pool.c: pool_1d, pool_2d, pool_2d_back
void ggml_cpu_register_ops_image      (struct ggml_cpu_op_impl * table); // ops-image.c: upscale, pad_reflect_1d, roll, sam ops...
void ggml_cpu_register_ops_train      (struct ggml_cpu_op_impl * table); // ops-train.c: backward ops, cross-entropy loss, optimizer steps

//
// what a thread asks the memory for while it waits at the barrier after a
// node (stream-lead.c): ggml_cpu_lead_init for the nodes from next on, then
// ggml_cpu_lead_step as the work of ggml_cpu_barrier_busy
//

// the ranges asked for: K and V of an attention (asked for whole, one after
// the other), then the streams of a product (a line of each in turn): 4
// streams of 2 chunks of a GLU pair at most
#define GGML_CPU_LEAD_FIRST  2
#define GGML_CPU_LEAD_STARTS (GGML_CPU_LEAD_FIRST + 16)
struct ggml_cpu_lead {
    const struct ggml_cgraph * g;
    int          cur;       // the first node before the barrier (the others may still compute it)
    int          next;      // the first node past the barrier
    bool         fuse;      // fusions are taken
    int          nth;
    bool         planned;   // the ranges found
    int          n_first;   // an attention's ranges: start[0, n_first)
    int          n;         // ranges in all: the product's streams start[n_first, n)
    int          s;         // the range asked for next
    size_t       off;       // at this offset
    size_t       first_len[GGML_CPU_LEAD_FIRST]; // bytes of each attention range asked for
    size_t       bytes;     // per product stream
    const char * start[GGML_CPU_LEAD_STARTS];
};
void ggml_cpu_lead_init(struct ggml_cpu_lead * lead, const struct ggml_cgraph * g, int cur, int next, bool fuse, int nth);
bool ggml_cpu_lead_step(void * lead);

//
// fusion (graph-fusion.c): consecutive nodes computed by one kernel
//

enum ggml_cpu_fusion {
    GGML_CPU_FUSION_NONE = 0,
    GGML_CPU_FUSION_RMS_NORM_MUL,     // RMS_NORM, MUL by a weight
    GGML_CPU_FUSION_ADD_RMS_NORM_MUL, // ADD, RMS_NORM of it, MUL by a weight
    GGML_CPU_FUSION_MUL_MAT_GROUP,    // 2 to GGML_CPU_MUL_MAT_GROUP_MAX MUL_MATs of the same src1 (few columns)
    GGML_CPU_FUSION_MUL_MAT_GLU,      // two such MUL_MATs (gate, up), then the GLU of their results
};

// the most products one fused node computes: a layer's Q, K and V (gate and
// up are two); longer runs of products of one input are cut into groups
#define GGML_CPU_MUL_MAT_GROUP_MAX 4

// false when GGML_CPU_DISABLE_FUSION=1 or for the reference paths
bool ggml_cpu_fusion_enabled(bool use_ref);

// the fusion that starts at nodes[i] (NONE: the node runs alone), and in
// *n_nodes the number of nodes it spans (1 for NONE; views between its
// nodes, which compute nothing, included)
enum ggml_cpu_fusion ggml_cpu_fusion_at(const struct ggml_cgraph * g, int i, bool enabled, int * n_nodes);

// computes the nodes of the fusion kind that starts at nodes[i]
void ggml_cpu_fusion_forward(const struct ggml_compute_params * params, const struct ggml_cgraph * g, int i,
                             enum ggml_cpu_fusion kind);

// "RMS_NORM+MUL", ... ("" for NONE) (cpu-profile.c)
const char * ggml_cpu_fusion_name(enum ggml_cpu_fusion kind);

// the fused kernel (ops-norm.c): add (NULL: none) = a + b, then
// mul = rms_norm(add or norm's src) * w
void ggml_cpu_forward_rms_norm_mul(const struct ggml_compute_params * params, struct ggml_tensor * add,
                                   const struct ggml_tensor * norm, struct ggml_tensor * mul);

// products of the same src1 (ops-matmul.c): whether two can be computed
// together (few columns, the same forms of src1), and computing n of them
// (2 <= n <= GGML_CPU_MUL_MAT_GROUP_MAX), each pair of which can
bool ggml_cpu_mul_mat_pair_ok(const struct ggml_tensor * a, const struct ggml_tensor * b);
void ggml_cpu_forward_mul_mat_group(const struct ggml_compute_params * params, struct ggml_tensor * const * nodes, int n);

// two products of the same src1 that can be computed together, of the same
// weight type and rows, and glu, a GLU of their results (split form, F32
// rows): each chunk of rows of both products, then of the GLU (ops-matmul.c)
void ggml_cpu_forward_mul_mat_glu(const struct ggml_compute_params * params, struct ggml_tensor * a, struct ggml_tensor * b,
                                  struct ggml_tensor * glu);

// the starts of the weight streams of the first MIN(nth, chunks) chunks of
// the product a (and b, the other product of a fused GLU pair, or NULL), at
// most max of them: their count, 0 when a does not take the row dots, and
// in *span the bytes of the shortest (stream-lead.c asks for their first
// lines; ops-matmul.c)
int ggml_cpu_mul_mat_lead(struct ggml_tensor * a, struct ggml_tensor * b, int nth, int chunks, const char ** starts, int max,
                          size_t * span);

// the K and V ranges a flash attention node in token generation reads, for
// a waiting thread to ask for (stream-lead.c; ops-attention.c): their count
// (0 or 2, never past max); mask_ready: its mask may be read
int ggml_cpu_flash_attn_lead(const struct ggml_tensor * op, bool mask_ready, const char ** starts, size_t * lens,
                             int max);

// values [r0, r1) of row i1 of a split GLU node over F32 rows, by the
// operations of the node's kernel (ops-glu.c)
void ggml_cpu_glu_span_f32(const struct ggml_tensor * glu, int64_t i1, int64_t r0, int64_t r1, bool use_ref);

//
// thread pool (threadpool.c)
//

typedef void (*ggml_cpu_job_t)(void * arg, int ith, int nth);

// Run job(arg, ith, n_threads) on threads 0..n_threads-1 of the pool (the
// caller is thread 0) and return when all have finished. n_threads must not
// exceed the pool's size. Callers sharing a pool take turns (a lock).
void ggml_threadpool_run(struct ggml_threadpool * tp, int n_threads, ggml_cpu_job_t job, void * arg);

// a pool of n_threads threads with default parameters (NULL on failure)
struct ggml_threadpool * ggml_threadpool_new_default(int n_threads);

#ifdef __cplusplus
}
#endif
