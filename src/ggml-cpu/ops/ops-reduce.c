// ops-reduce.c: reductions (SUM, SUM_ROWS, MEAN, ARGMAX, COUNT_EQUAL) and
// sorting (ARGSORT, TOP_K).
//
// Every result element is computed by one thread with a summation order that
// depends only on the shape, so results do not depend on the thread count.
// Sums are accumulated in double. Inputs may have any strides.
//
// Sorting orders floats by value with -0 equal to +0 (NaN above +inf, or below
// -inf when its sign bit is set). ARGSORT is stable: equal values keep
// ascending index order in both sort orders. TOP_K returns the indices of the
// k largest values, largest first; among equal values the lower index comes
// first (upstream documents the order of TOP_K as unspecified).

#include "simd/vec.h"
#include "ops/row-iter.h"

// row r of t, rows flattened as r = i1 + ne1*(i2 + ne2*i3) (for rows that are long)
static const char * row_ptr(const struct ggml_tensor * t, int64_t r) {
    const struct cpu_row_iter it = cpu_row_iter_at(t, r);
    return cpu_row_iter_ptr(&it, t);
}

static size_t pad_to_cache_line(size_t bytes) {
    return (bytes + GGML_CPU_CACHE_LINE - 1) / GGML_CPU_CACHE_LINE * GGML_CPU_CACHE_LINE;
}

static bool is_float_type(enum ggml_type type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

//
// sums
//

enum { SUM_BLOCK = 512 };

// n elements of type (F32, F16 or BF16) with a byte stride, as floats
static void load_floats(enum ggml_type type, const char * x, size_t stride, int64_t n, float * y, bool use_ref) {
    if (type == GGML_TYPE_F16 && stride == sizeof(ggml_fp16_t)) {
        if (use_ref) {
            ggml_vec_fp16_to_fp32_ref(n, (const ggml_fp16_t *) x, y);
        } else {
            ggml_vec_fp16_to_fp32(n, (const ggml_fp16_t *) x, y);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const char * p = x + i*stride;
        switch (type) {
            case GGML_TYPE_F32:  y[i] = *(const float *) p; break;
            case GGML_TYPE_F16:  y[i] = ggml_compute_fp16_to_fp32(*(const ggml_fp16_t *) p); break;
            case GGML_TYPE_BF16: y[i] = ggml_compute_bf16_to_fp32(*(const ggml_bf16_t *) p); break;
            default: GGML_ABORT("unsupported type %s", ggml_type_name(type));
        }
    }
}

static double sum_f32(int64_t n, const float * x, bool use_ref) {
    return use_ref ? ggml_vec_sum_f32_ref(n, x) : ggml_vec_sum_f32(n, x);
}

// the sum of the ne[0] elements of one row of t, in double
static double row_sum(const struct ggml_tensor * t, const char * row, bool use_ref) {
    const int64_t n = t->ne[0];
    const size_t stride = t->nb[0];
    if (t->type == GGML_TYPE_F32 && stride == sizeof(float)) {
        return sum_f32(n, (const float *) row, use_ref);
    }
    float buf[SUM_BLOCK];
    double sum = 0.0;
    for (int64_t i = 0; i < n; i += SUM_BLOCK) {
        const int64_t m = MIN(SUM_BLOCK, n - i);
        load_floats(t->type, row + i*stride, stride, m, buf, use_ref);
        sum += sum_f32(m, buf, use_ref);
    }
    return sum;
}

static void store_float(enum ggml_type type, void * p, double v) {
    switch (type) {
        case GGML_TYPE_F32:  *(float *) p = (float) v; break;
        case GGML_TYPE_F16:  *(ggml_fp16_t *) p = ggml_compute_fp32_to_fp16((float) v); break;
        case GGML_TYPE_BF16: *(ggml_bf16_t *) p = ggml_compute_fp32_to_bf16((float) v); break;
        default: GGML_ABORT("unsupported type %s", ggml_type_name(type));
    }
}

// SUM splits the rows into at most SUM_GROUPS groups, fixed by the shape; each
// thread sums whole groups into the scratch memory, then thread 0 adds the
// group sums in order.
enum { SUM_GROUPS = 256 };

static int64_t sum_n_groups(const struct ggml_tensor * src) {
    return MAX(1, MIN(ggml_nrows(src), SUM_GROUPS));
}

static size_t work_size_sum(const struct ggml_tensor * op, int n_threads) {
    (void) n_threads;
    return (size_t) sum_n_groups(op->src[0]) * sizeof(double);
}

static void forward_sum(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t nr       = ggml_nrows(src);
    const int64_t n_groups = sum_n_groups(src);
    const int64_t per      = (nr + n_groups - 1) / n_groups;
    double * group_sums = (double *) params->wdata;
    GGML_ASSERT(params->wsize >= (size_t) n_groups * sizeof(double));

    int64_t g0, g1;
    ggml_cpu_split_range(n_groups, params->ith, params->nth, &g0, &g1);
    for (int64_t g = g0; g < g1; g++) {
        double sum = 0.0;
        for (int64_t r = g*per; r < MIN(nr, (g + 1)*per); r++) {
            sum += row_sum(src, row_ptr(src, r), params->use_ref);
        }
        group_sums[g] = sum;
    }

    ggml_cpu_barrier(params->threadpool);

    if (params->ith == 0) {
        double sum = 0.0;
        for (int64_t g = 0; g < n_groups; g++) {
            sum += group_sums[g];
        }
        store_float(dst->type, dst->data, sum);
    }
}

// SUM_ROWS and MEAN: one output per row
static void forward_row_sums(const struct ggml_compute_params * params, struct ggml_tensor * dst, bool mean) {
    const struct ggml_tensor * src = dst->src[0];
    const double n = (double) src->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(src, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const double sum = row_sum(src, cpu_row_iter_ptr(&it, src), params->use_ref);
        store_float(dst->type, cpu_row_iter_ptr(&it, dst), mean ? sum / n : sum);
    }
}

static void forward_sum_rows(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    forward_row_sums(params, dst, false);
}

static void forward_mean(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    forward_row_sums(params, dst, true);
}

static bool supports_sum(const struct ggml_tensor * op) {
    return is_float_type(op->src[0]->type) && op->type == op->src[0]->type;
}

static bool supports_mean(const struct ggml_tensor * op) {
    return is_float_type(op->src[0]->type) && op->type == GGML_TYPE_F32;
}

//
// ARGMAX: the first index of the largest value of each row (NaN never compares larger)
//

static int64_t argmax_row(int64_t n, const char * x, size_t stride, bool use_ref) {
    if (stride == sizeof(float)) {
        const float * xf = (const float *) x;
        const float max = use_ref ? ggml_vec_max_f32_ref(n, xf) : ggml_vec_max_f32(n, xf);
        for (int64_t i = 0; i < n; i++) {
            if (xf[i] == max) {
                return i;
            }
        }
        // max is NaN (the vector max may return one): fall back to comparing
    }
    float best = -INFINITY;
    int64_t idx = 0;
    for (int64_t i = 0; i < n; i++) {
        const float v = *(const float *)(x + i*stride);
        if (v > best) {
            best = v;
            idx  = i;
        }
    }
    return idx;
}

static void forward_argmax(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t idx = argmax_row(src->ne[0], row_ptr(src, r), src->nb[0], params->use_ref);
        *(int32_t *)((char *) dst->data + r*dst->nb[0]) = (int32_t) idx;
    }
}

static bool supports_argmax(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_I32;
}

//
// COUNT_EQUAL: per-thread counts in the scratch memory, added by thread 0
//

static size_t work_size_count_equal(const struct ggml_tensor * op, int n_threads) {
    (void) op;
    return (size_t) n_threads * GGML_CPU_CACHE_LINE;
}

static void forward_count_equal(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t n = a->ne[0];
    GGML_ASSERT(params->wsize >= (size_t) params->nth * GGML_CPU_CACHE_LINE);

    int64_t count = 0;
    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(a), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(a, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const char * pa = cpu_row_iter_ptr(&it, a);
        const char * pb = cpu_row_iter_ptr(&it, b);
        if (a->nb[0] == sizeof(int32_t) && b->nb[0] == sizeof(int32_t)) {
            const int32_t * xa = (const int32_t *) pa;
            const int32_t * xb = (const int32_t *) pb;
            for (int64_t i = 0; i < n; i++) {
                count += xa[i] == xb[i];
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                count += *(const int32_t *)(pa + i*a->nb[0]) == *(const int32_t *)(pb + i*b->nb[0]);
            }
        }
    }
    int64_t * counts = (int64_t *) params->wdata;
    const size_t slot = GGML_CPU_CACHE_LINE / sizeof(int64_t);
    counts[params->ith * slot] = count;

    ggml_cpu_barrier(params->threadpool);

    if (params->ith == 0) {
        int64_t total = 0;
        for (int t = 0; t < params->nth; t++) {
            total += counts[t * slot];
        }
        *(int64_t *) dst->data = total;
    }
}

static bool supports_count_equal(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_I32 && op->src[1]->type == GGML_TYPE_I32 && op->type == GGML_TYPE_I64;
}

//
// sorting
//
// Values become unsigned keys in the same order (sign-magnitude to offset
// binary), descending order complements them, and a stable LSD radix sort
// orders (key, index) pairs: O(n) per row, ties in index order.
//

// branch-free: the signs of real data are unpredictable
static uint32_t sort_key(float v, bool descending) {
    uint32_t u;
    memcpy(&u, &v, sizeof(u));
    u &= (uint32_t)(u == 0x80000000u) - 1u;                 // -0 becomes +0
    const uint32_t negative = 0u - (u >> 31);               // all ones for negative values
    const uint32_t key = u ^ (negative | 0x80000000u);      // negative: ~u, else u | sign bit
    return key ^ (0u - (uint32_t) descending);
}

enum { SORT_INSERTION_MAX = 32 };

// sorts keys[0..n) ascending, permuting idx along; keys2/idx2 are scratch of n entries
static void sort_pairs(int64_t n, uint32_t * keys, int32_t * idx, uint32_t * keys2, int32_t * idx2) {
    if (n <= SORT_INSERTION_MAX) {
        for (int64_t i = 1; i < n; i++) {
            const uint32_t k = keys[i];
            const int32_t  v = idx[i];
            int64_t j = i;
            for (; j > 0 && keys[j - 1] > k; j--) {
                keys[j] = keys[j - 1];
                idx[j]  = idx[j - 1];
            }
            keys[j] = k;
            idx[j]  = v;
        }
        return;
    }
    // the four digit histograms in one pass, then one scatter per digit that
    // is not the same for every key, alternating between the two buffers
    int64_t count[4][256];
    memset(count, 0, sizeof(count));
    for (int64_t i = 0; i < n; i++) {
        const uint32_t k = keys[i];
        count[0][k & 0xFF]++;
        count[1][(k >> 8) & 0xFF]++;
        count[2][(k >> 16) & 0xFF]++;
        count[3][k >> 24]++;
    }
    uint32_t * src_keys = keys;
    int32_t  * src_idx  = idx;
    uint32_t * dst_keys = keys2;
    int32_t  * dst_idx  = idx2;
    for (int d = 0; d < 4; d++) {
        const int shift = 8 * d;
        if (count[d][(src_keys[0] >> shift) & 0xFF] == n) {
            continue;
        }
        int64_t pos[256];
        int64_t sum = 0;
        for (int b = 0; b < 256; b++) {
            pos[b] = sum;
            sum += count[d][b];
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t p = pos[(src_keys[i] >> shift) & 0xFF]++;
            dst_keys[p] = src_keys[i];
            dst_idx[p]  = src_idx[i];
        }
        uint32_t * tk = src_keys; src_keys = dst_keys; dst_keys = tk;
        int32_t  * ti = src_idx;  src_idx  = dst_idx;  dst_idx  = ti;
    }
    if (src_keys != keys) {
        memcpy(keys, src_keys, (size_t) n * sizeof(uint32_t));
        memcpy(idx,  src_idx,  (size_t) n * sizeof(int32_t));
    }
}

struct sort_scratch {
    uint32_t * keys;
    uint32_t * keys2;
    int32_t  * idx;
    int32_t  * idx2;
    uint64_t * heap;
};

// scratch per thread: four arrays of n 32-bit words, and k 64-bit heap entries
static size_t sort_scratch_stride(int64_t n, int64_t k) {
    return pad_to_cache_line((size_t) n * 16 + (size_t) k * 8);
}

static struct sort_scratch sort_scratch_get(const struct ggml_compute_params * params, int64_t n, int64_t k) {
    const size_t stride = sort_scratch_stride(n, k);
    GGML_ASSERT(params->wsize >= stride * (size_t) params->nth);
    char * base = (char *) params->wdata + stride * (size_t) params->ith;
    struct sort_scratch s = {
        .heap  = (uint64_t *) base,
        .keys  = (uint32_t *)(base + (size_t) k * 8),
        .keys2 = (uint32_t *)(base + (size_t) k * 8 + (size_t) n * 4),
        .idx   = (int32_t  *)(base + (size_t) k * 8 + (size_t) n * 8),
        .idx2  = (int32_t  *)(base + (size_t) k * 8 + (size_t) n * 12),
    };
    return s;
}

static void argsort_row(const struct sort_scratch * s, int64_t n, const char * x, size_t stride, bool descending) {
    for (int64_t i = 0; i < n; i++) {
        s->keys[i] = sort_key(*(const float *)(x + i*stride), descending);
        s->idx[i]  = (int32_t) i;
    }
    sort_pairs(n, s->keys, s->idx, s->keys2, s->idx2);
}

static size_t work_size_argsort(const struct ggml_tensor * op, int n_threads) {
    return sort_scratch_stride(op->src[0]->ne[0], 0) * (size_t) n_threads;
}

static void forward_argsort(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t n = src->ne[0];
    const bool descending = ggml_get_op_params_i32(dst, 0) == GGML_SORT_ORDER_DESC;
    const struct sort_scratch s = sort_scratch_get(params, n, 0);

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        argsort_row(&s, n, row_ptr(src, r), src->nb[0], descending);
        char * y = (char *) row_ptr(dst, r);
        for (int64_t i = 0; i < n; i++) {
            *(int32_t *)(y + i*dst->nb[0]) = s.idx[i];
        }
    }
}

static bool supports_argsort(const struct ggml_tensor * op) {
    const int32_t order = ggml_get_op_params_i32(op, 0);
    return op->src[0]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_I32 &&
           (order == GGML_SORT_ORDER_ASC || order == GGML_SORT_ORDER_DESC);
}

// TOP_K with k small against n: a max-heap of the k smallest (descending key,
// index) pairs seen so far; with k large, a full sort.
static bool top_k_uses_heap(int64_t n, int64_t k) {
    return k * 16 <= n;
}

static void heap_sift_down(uint64_t * heap, int64_t k, int64_t i) {
    const uint64_t v = heap[i];
    for (;;) {
        int64_t c = 2*i + 1;
        if (c >= k) {
            break;
        }
        if (c + 1 < k && heap[c + 1] > heap[c]) {
            c++;
        }
        if (heap[c] <= v) {
            break;
        }
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = v;
}

// the k smallest entries of heap order, ascending, into idx
static void top_k_heap_row(const struct sort_scratch * s, int64_t n, int64_t k, const char * x, size_t stride) {
    uint64_t * heap = s->heap;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t e = (uint64_t) sort_key(*(const float *)(x + i*stride), true) << 32 | (uint64_t) i;
        if (i < k) {
            heap[i] = e;
            if (i == k - 1) {
                for (int64_t j = k/2 - 1; j >= 0; j--) {
                    heap_sift_down(heap, k, j);
                }
            }
        } else if (e < heap[0]) {
            heap[0] = e;
            heap_sift_down(heap, k, 0);
        }
    }
    for (int64_t m = k; m > 0; m--) {
        s->idx[m - 1] = (int32_t)(heap[0] & 0xFFFFFFFFu);
        heap[0] = heap[m - 1];
        heap_sift_down(heap, m - 1, 0);
    }
}

static size_t work_size_top_k(const struct ggml_tensor * op, int n_threads) {
    return sort_scratch_stride(op->src[0]->ne[0], op->ne[0]) * (size_t) n_threads;
}

static void forward_top_k(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t n = src->ne[0];
    const int64_t k = dst->ne[0];
    const struct sort_scratch s = sort_scratch_get(params, n, k);

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        if (top_k_uses_heap(n, k)) {
            top_k_heap_row(&s, n, k, row_ptr(src, r), src->nb[0]);
        } else {
            argsort_row(&s, n, row_ptr(src, r), src->nb[0], true);
        }
        char * y = (char *) row_ptr(dst, r);
        for (int64_t i = 0; i < k; i++) {
            *(int32_t *)(y + i*dst->nb[0]) = s.idx[i];
        }
    }
}

static bool supports_top_k(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_I32 && op->ne[0] <= op->src[0]->ne[0];
}

void ggml_cpu_register_ops_reduce(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_SUM] = (struct ggml_cpu_op_impl) {
        .forward = forward_sum, .supports = supports_sum, .work_size = work_size_sum,
    };
    table[GGML_OP_SUM_ROWS] = (struct ggml_cpu_op_impl) {
        .forward = forward_sum_rows, .supports = supports_sum, .work_size = NULL,
    };
    table[GGML_OP_MEAN] = (struct ggml_cpu_op_impl) {
        .forward = forward_mean, .supports = supports_mean, .work_size = NULL,
    };
    table[GGML_OP_ARGMAX] = (struct ggml_cpu_op_impl) {
        .forward = forward_argmax, .supports = supports_argmax, .work_size = NULL,
    };
    table[GGML_OP_COUNT_EQUAL] = (struct ggml_cpu_op_impl) {
        .forward = forward_count_equal, .supports = supports_count_equal, .work_size = work_size_count_equal,
    };
    table[GGML_OP_ARGSORT] = (struct ggml_cpu_op_impl) {
        .forward = forward_argsort, .supports = supports_argsort, .work_size = work_size_argsort,
    };
    table[GGML_OP_TOP_K] = (struct ggml_cpu_op_impl) {
        .forward = forward_top_k, .supports = supports_top_k, .work_size = work_size_top_k,
    };
}
