// ops-attention.c: fused attention (GGML_OP_FLASH_ATTN_EXT).
//
// For query row i of head h (and batch index i3), with keys k_j and values v_j
// of the K and V heads that head h maps to (n_head / n_head_kv q heads share
// one):
//
//   s_j = scale * q.k_j                            (logit_softcap == 0)
//   s_j = softcap * tanh(scale * q.k_j / softcap)  (otherwise)
//   s_j += slope_h * mask[j, i]                    (mask given; slope_h = 1 without ALiBi)
//   out = sum_j exp(s_j - M) v_j / (sum_j exp(s_j - M) + exp(sink_h - M))
//
// where M is the largest logit and the sink term is there only when sinks are
// given. Keys whose mask is -INF take no part (their K and V rows are not
// used); a row with every key masked (and no sink) gives zeros. A NaN in any
// input of a row (its q row, the mask row, the K or V row of a key not
// masked, its sink) gives a row of NaN. The result is
// stored permuted: dst[:, h, i, i3].
//
// Work: a tile is up to ATTN_TILE_ROWS query rows that read the same K and V
// head: the batch rows of the q heads sharing that head (grouped-query
// attention), heads fastest. Threads take items (a tile, or in token
// generation a chunk of keys of every head group: attn_plan) dynamically. A
// tile walks the keys in blocks with an online softmax: each row keeps its
// running maximum M, sum S and an F32 value accumulator, rescaled when a block
// raises M. K and V rows of a block are converted to F32 once for the tile
// (F32 rows are used in place, and F16 rows too when the tile has at most
// ATTN_IN_PLACE_ROWS rows); q stays F32.
// Every output row is computed by one thread in an order fixed by the shapes,
// so results do not depend on the number of threads.

#include "kernels/attention-vec.h"

#define ATTN_TILE_ROWS      32  // query rows computed together
#define ATTN_BLOCK_MAX      64  // most keys per block of the online softmax
#define ATTN_MIN_ITEMS      16  // fewer items than this: split the keys too
#define ATTN_MIN_CHUNK      256 // fewest keys per chunk (an item per tile)
#define ATTN_WIDE_ROWS      8   // head groups of up to this many rows: an item takes every group
#define ATTN_WIDE_MIN_CHUNK 64  // fewest keys per chunk of those items
#define ATTN_LIVE_UNIT      16  // the keys of a chunk over the live keys of a padded cache: a multiple of this

// How a node is cut into work, from its shapes alone (so that the rounding
// does not depend on the number of threads).
//
// A tile is up to ATTN_TILE_ROWS query rows that read the same K and V head:
// the G heads sharing a K and V head (G = 1 when K and V heads are grouped
// differently), row rho of a group being query rho / G of head
// group*G + rho % G. An item, the unit of work a thread takes, is one tile;
// when there are fewer than ATTN_MIN_ITEMS of them, the keys are cut into
// chunks too, each item's chunks are computed apart, and their partial
// results (M, S, accumulator) combined.
//
// Token generation (a head group of at most ATTN_WIDE_ROWS rows) reads each
// K and V byte for a few rows only: its speed is that of the reads. One head
// at a time, a thread would read a KV cache (the heads of a position side by
// side) in short strided pieces over the whole cache (measured: 2-4 GB/s); so
// there an item is a chunk of keys for every head group at once, each block
// of keys taken by every group in turn: a thread reads all of a block's cache
// rows before the next block's, and the threads read different chunks. The
// block's rows are first touched in address order (attn_touch_rows), and each
// group asks for its share of the next block's rows as it computes
// (attn_ahead).
struct attn_plan {
    int64_t G;
    int64_t n_groups;   // head groups: n_head / G
    int64_t n_rows;     // G * n_batch: rows of a head group
    int64_t tile_rows;  // most rows of a tile: MIN(ATTN_TILE_ROWS, n_rows)
    int64_t n_tiles;    // tiles per head group and i3
    int64_t item_tiles; // tiles of an item: 1, or n_groups (every head group of an i3)
    int64_t n_items;    // items in all
    int64_t block;      // keys per block of the online softmax
    int64_t n_chunks;   // key chunks per item
    int64_t chunk_len;  // keys per chunk, a multiple of block

    // scratch, offsets in floats: the partial results of every (item, chunk),
    // then one area per thread (each part cache-line aligned)
    size_t partial_row; // floats per row of a partial result: M, S, DV values
    size_t partials;    // floats of all partial results (0 without chunks)
    size_t q;           // item_tiles x tile_rows x DK: the item's query rows in F32
    size_t acc;         // item_tiles x tile_rows x DV: value accumulators
    size_t state;       // item_tiles x 3 x tile_rows: each tile's running maxima M, sums S, ALiBi slopes
    size_t logit;       // tile_rows x block: logits, then probabilities, of a block
    size_t kconv;       // block x DK: K rows converted to F32 (K not F32)
    size_t vconv;       // block x DV: V rows converted to F32 (V not F32)
    size_t per_thread;  // floats per thread
};

static size_t attn_align_floats(int64_t n) {
    const size_t line = GGML_CPU_CACHE_LINE / sizeof(float);
    return ((size_t) n + line - 1) / line * line;
}

// Keys per block: a power of two from 16 to 64 such that the block's K and V
// rows in F32 fit in about 32 KiB (L1).
static int64_t attn_block_size(int64_t DK, int64_t DV) {
    const int64_t fit = 8192 / (DK + DV);
    return fit >= 64 ? 64 : fit >= 32 ? 32 : 16;
}

static struct attn_plan attn_plan_make(const struct ggml_tensor * op) {
    const struct ggml_tensor * q = op->src[0];
    const struct ggml_tensor * k = op->src[1];
    const struct ggml_tensor * v = op->src[2];
    const int64_t DK   = k->ne[0];
    const int64_t DV   = v->ne[0];
    const int64_t n_kv = k->ne[1];
    const int64_t rk2  = q->ne[2] / k->ne[2];
    const int64_t rv2  = q->ne[2] / v->ne[2];

    struct attn_plan p;
    memset(&p, 0, sizeof(p));
    p.G          = rk2 == rv2 ? rk2 : 1;
    p.n_groups   = q->ne[2] / p.G;
    p.n_rows     = p.G * q->ne[1];
    p.tile_rows  = MAX(MIN(ATTN_TILE_ROWS, p.n_rows), 1);
    p.n_tiles    = (p.n_rows + ATTN_TILE_ROWS - 1) / ATTN_TILE_ROWS;
    p.item_tiles = 1;
    p.n_items    = p.n_tiles * p.n_groups * q->ne[3];
    p.block      = attn_block_size(DK, DV);

    int64_t n_chunks = 1;
    if (p.n_items > 0 && p.n_items < ATTN_MIN_ITEMS) {
        n_chunks = MIN((ATTN_MIN_ITEMS + p.n_items - 1) / p.n_items, n_kv / ATTN_MIN_CHUNK);
        n_chunks = MAX(n_chunks, 1);
    }
    if (p.n_tiles == 1 && p.n_rows <= ATTN_WIDE_ROWS && p.n_groups > 1) {
        // every head group in an item, when that leaves as many items to share
        const int64_t wide_chunks = MAX(MIN(ATTN_MIN_ITEMS, n_kv / ATTN_WIDE_MIN_CHUNK), 1);
        if (wide_chunks * q->ne[3] >= MIN(ATTN_MIN_ITEMS, p.n_items * n_chunks)) {
            p.item_tiles = p.n_groups;
            p.n_items    = q->ne[3];
            n_chunks     = wide_chunks;
        }
    }
    // chunks of whole blocks
    p.chunk_len = (n_kv + n_chunks - 1) / n_chunks;
    p.chunk_len = MAX((p.chunk_len + p.block - 1) / p.block * p.block, p.block);
    p.n_chunks  = n_chunks == 1 ? 1 : (n_kv + p.chunk_len - 1) / p.chunk_len;

    const int64_t item_rows = p.item_tiles * p.tile_rows;
    p.partial_row = (size_t)(DV + 2);
    p.partials    = p.n_chunks == 1 ? 0 : attn_align_floats(p.n_items * p.n_chunks * item_rows * (DV + 2));
    p.q           = 0;
    p.acc         = p.q     + attn_align_floats(item_rows * DK);
    p.state       = p.acc   + attn_align_floats(item_rows * DV);
    p.logit       = p.state + attn_align_floats(item_rows * 3);
    p.kconv       = p.logit + attn_align_floats(p.tile_rows * p.block);
    p.vconv       = p.kconv + (k->type == GGML_TYPE_F32 ? 0 : attn_align_floats(p.block * DK));
    p.per_thread  = p.vconv + (v->type == GGML_TYPE_F32 ? 0 : attn_align_floats(p.block * DV));
    return p;
}

// everything a tile needs, read once per node
struct attn_job {
    const struct ggml_tensor * q;
    const struct ggml_tensor * k;
    const struct ggml_tensor * v;
    const struct ggml_tensor * mask;  // NULL: no mask
    const struct ggml_tensor * sinks; // NULL: no sinks
    struct ggml_tensor * dst;

    int64_t DK, DV, n_batch, n_kv, n_head;
    int64_t rk2, rk3, rv2, rv3; // q heads (batches) per K and V head (batch)

    float scale;        // applied to q.k (divided by softcap when softcap != 0)
    float softcap;
    float max_bias;
    float m0, m1;       // ALiBi slope bases
    uint32_t n_head_log2;

    bool use_ref;
    struct attn_plan plan;

    // the keys the chunks cover, [0, n_live) (attn_live_keys), and the keys
    // per chunk over them: plan.chunk_len when n_live = n_kv
    int64_t n_live;
    int64_t chunk_len;
};

// the ALiBi slope of head h (1 without ALiBi)
static float attn_alibi_slope(const struct attn_job * job, int64_t h) {
    if (job->max_bias <= 0.0f) {
        return 1.0f;
    }
    const uint32_t hu = (uint32_t) h;
    return hu < job->n_head_log2 ? powf(job->m0, (float)(hu + 1)) : powf(job->m1, (float)(2*(hu - job->n_head_log2) + 1));
}

static void attn_job_init(struct attn_job * job, struct ggml_tensor * dst, bool use_ref) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];

    job->q = q;
    job->k = k;
    job->v = v;
    job->mask  = dst->src[3];
    job->sinks = dst->src[4];
    job->dst   = dst;

    job->DK      = k->ne[0];
    job->DV      = v->ne[0];
    job->n_batch = q->ne[1];
    job->n_kv    = k->ne[1];
    job->n_head  = q->ne[2];
    job->rk2 = q->ne[2] / k->ne[2];
    job->rk3 = q->ne[3] / k->ne[3];
    job->rv2 = q->ne[2] / v->ne[2];
    job->rv3 = q->ne[3] / v->ne[3];

    const float scale   = ggml_get_op_params_f32(dst, 0);
    const float softcap = ggml_get_op_params_f32(dst, 2);
    job->softcap  = softcap;
    job->scale    = softcap != 0.0f ? scale / softcap : scale;
    job->max_bias = ggml_get_op_params_f32(dst, 1);

    job->n_head_log2 = 1u << (uint32_t) floor(log2((double) job->n_head));
    job->m0 = powf(2.0f, -(job->max_bias) / (float) job->n_head_log2);
    job->m1 = powf(2.0f, -(job->max_bias / 2.0f) / (float) job->n_head_log2);

    job->use_ref = use_ref;
    job->plan    = attn_plan_make(dst);

    job->n_live    = job->n_kv;
    job->chunk_len = job->plan.chunk_len;
}

// logit[j] = slope * mask[j] for the block's keys (0 without a mask); false if
// every key of the block is masked out (-inf; a NaN in the mask is not: it
// goes on into the logits and poisons the row)
static bool attn_block_mask(const struct attn_job * job, const ggml_fp16_t * mrow, int64_t nc, float slope, float * logit) {
    if (mrow == NULL) {
        memset(logit, 0, (size_t) nc * sizeof(float));
        return true;
    }
    float max;
    if (job->use_ref) {
        ggml_vec_fp16_to_fp32_ref(nc, mrow, logit);
        if (slope != 1.0f) {
            ggml_vec_scale_f32_ref(nc, logit, slope);
        }
        max = ggml_vec_max_f32_ref(nc, logit);
    } else {
        ggml_vec_fp16_to_fp32(nc, mrow, logit);
        if (slope != 1.0f) {
            ggml_vec_scale_f32(nc, logit, slope);
        }
        max = ggml_vec_max_f32(nc, logit);
    }
    return max != -INFINITY || ggml_vec_has_nan_f32(nc, logit);
}

// K or V rows of a block: row j at base + j*stride bytes, F16 or F32
struct attn_rows {
    const char * base;
    size_t stride;
    bool f16;
};

// Asks for [p, p + size) to be brought into the cache while the current keys
// are computed: K and V rows (and the tile's mask rows) are read in pieces too
// short for the hardware prefetchers to ramp up.
static void attn_prefetch(const void * p, size_t size) {
#if defined(__GNUC__) || defined(__clang__)
    for (size_t off = 0; off < size; off += GGML_CPU_CACHE_LINE) {
        __builtin_prefetch((const char *) p + off, 0, 2);
    }
#else
    (void) p;
    (void) size;
#endif
}

// rows [c0, c0 + nc) of K or V for head (i2, i3)
static void attn_prefetch_rows(const struct ggml_tensor * t, int64_t i2, int64_t i3, int64_t c0, int64_t nc) {
    const size_t row = ggml_row_size(t->type, t->ne[0]);
    const char * base = (const char *) t->data + c0*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
    for (int64_t j = 0; j < nc; j++) {
        attn_prefetch(base + j*t->nb[1], row);
    }
}

// What a tile asks for while it computes a block's logits, a few lines at a
// time spread over the block (asked for a block at a time, in one burst, they
// were not brought in sooner: measured, token generation from a KV cache):
// the rows it reads in place, ATTN_AHEAD_KEYS keys ahead; in a wide item, its
// share of the next block's rows of every head instead (tile t of T asks for
// the t-th T-th of them, so that the item's tiles ask for the block in
// address order).
#define ATTN_AHEAD_KEYS 4

struct attn_ahead {
    const char * k, * v;             // rows of the block's first key read in place (NULL: none)
    size_t k_stride, v_stride;       // bytes from one key's row to the next
    size_t k_row, v_row;             // bytes of a row
    int64_t n;                       // keys from the block's first that may be asked for
    const char * next_k, * next_v;   // wide: the share of the next block's rows (NULL: none)
    size_t next_k_len, next_v_len;   // its bytes
    int64_t nc;                      // keys of the block (over which the share is spread)
};

// lines [len*j0/nc, len*j1/nc) of the next block's K and V shares, K's and
// V's in turn
static void attn_prefetch_shares(const struct attn_ahead * a, int64_t j0, int64_t j1) {
    const size_t line = GGML_CPU_CACHE_LINE;
    const size_t k0 = (a->next_k_len * (size_t) j0 / (size_t) a->nc) & ~(line - 1);
    const size_t k1 = a->next_k_len * (size_t) j1 / (size_t) a->nc;
    const size_t v0 = (a->next_v_len * (size_t) j0 / (size_t) a->nc) & ~(line - 1);
    const size_t v1 = a->next_v_len * (size_t) j1 / (size_t) a->nc;
    for (size_t ok = k0, ov = v0; ok < k1 || ov < v1; ok += line, ov += line) {
#if defined(__GNUC__) || defined(__clang__)
        if (ok < k1) {
            __builtin_prefetch(a->next_k + ok, 0, 3);
        }
        if (ov < v1) {
            __builtin_prefetch(a->next_v + ov, 0, 3);
        }
#endif
    }
}

// keys [j, j + 4) of the block: rows ATTN_AHEAD_KEYS keys ahead, the share of the next block
static void attn_ahead_keys(const struct attn_ahead * a, int64_t j) {
    for (int64_t t = j + ATTN_AHEAD_KEYS; t < j + ATTN_AHEAD_KEYS + 4 && t < a->n; t++) {
        if (a->k != NULL) {
            attn_prefetch(a->k + t*a->k_stride, a->k_row);
        }
        if (a->v != NULL) {
            attn_prefetch(a->v + t*a->v_stride, a->v_row);
        }
    }
    if (a->next_k != NULL) {
        attn_prefetch_shares(a, j, MIN(j + 4, a->nc));
    }
}

// Part `part` of `parts` of rows [c, c + n) of every head of K or V batch
// index i3, when the heads lie side by side within the rows (a KV cache):
// then those rows are one range of memory. False otherwise.
static bool attn_rows_share(const struct ggml_tensor * t, int64_t i3, int64_t c, int64_t n, int64_t part,
                            int64_t parts, const char ** p, size_t * len) {
    const size_t span = (size_t)(t->ne[2] - 1) * t->nb[2] + ggml_row_size(t->type, t->ne[0]);
    if (n <= 0 || (t->ne[2] > 1 && (t->nb[2] >= t->nb[1] || span > t->nb[1]))) {
        return false;
    }
    const size_t all = (size_t)(n - 1) * t->nb[1] + span;
    const size_t a = all * (size_t) part / (size_t) parts;
    *p   = (const char *) t->data + c*t->nb[1] + i3*t->nb[3] + a;
    *len = all * (size_t)(part + 1) / (size_t) parts - a;
    return true;
}

// Reads one byte of every cache line of rows [c0, c0 + nc) of every head of
// K or V batch index i3, in address order (a KV cache's rows whole): a wide
// item's block, before its head groups take it one head at a time. The loads
// keep many misses in flight and the hardware prefetchers follow them; the
// groups' kernels then read the rows from the caches (measured, 16 heads of
// 128 in 4 groups, F16 cache out of the caches, 2 threads: 1.67 -> 1.44 ms a
// call at 4096 keys, 0.289 -> 0.272 at 544; asking for the lines with
// prefetch instructions instead, a block or a few keys ahead, did not help).
static void attn_touch_rows(const struct ggml_tensor * t, int64_t i3, int64_t c0, int64_t nc) {
    const size_t row = ggml_row_size(t->type, t->ne[0]);
    unsigned sum = 0;
    for (int64_t j = 0; j < nc; j++) {
        const char * base = (const char *) t->data + (c0 + j)*t->nb[1] + i3*t->nb[3];
        for (int64_t h = 0; h < t->ne[2]; h++) {
            const volatile unsigned char * r = (const volatile unsigned char *)(base + h*t->nb[2]);
            for (size_t off = 0; off < row; off += GGML_CPU_CACHE_LINE) {
                sum += r[off];
            }
            sum += r[row - 1];
        }
    }
    (void) sum;
}

// out[i][t] = q_{r+i} . k_{j+t} for i < nq, t < 4; keys past the block's end
// repeat its last, rows past nq repeat the last of them
static void attn_qk(const struct attn_job * job, const float * qf, int64_t r, int64_t nq, const struct attn_rows * k,
                    int64_t j, int64_t nc, float out[ATTN_QK_ROWS][4]) {
    const void * krows[4];
    for (int64_t t = 0; t < 4; t++) {
        krows[t] = k->base + MIN(j + t, nc - 1)*k->stride;
    }
    const ggml_fp16_t * const k16[4] = { krows[0], krows[1], krows[2], krows[3] };
    const float       * const k32[4] = { krows[0], krows[1], krows[2], krows[3] };
    if (job->use_ref) {
        for (int64_t i = 0; i < nq; i++) {
            if (k->f16) {
                attn_dot4_ref_f16(job->DK, qf + (r + i)*job->DK, k16, out[i]);
            } else {
                attn_dot4_ref_f32(job->DK, qf + (r + i)*job->DK, k32, out[i]);
            }
        }
    } else if (nq == 1) {
        if (k->f16) {
            attn_dot4_f16(job->DK, qf + r*job->DK, k16, out[0]);
        } else {
            attn_dot4_f32(job->DK, qf + r*job->DK, k32, out[0]);
        }
    } else {
        const float * qrows[ATTN_QK_ROWS];
        for (int64_t i = 0; i < ATTN_QK_ROWS; i++) {
            qrows[i] = qf + (r + MIN(i, nq - 1))*job->DK;
        }
        if (k->f16) {
            attn_qk_f16(job->DK, (int) nq, qrows, k16, out);
        } else {
            attn_qk_f32(job->DK, (int) nq, qrows, k32, out);
        }
    }
}

// logit[r*nb + j] += f(q_r . k_j) for the tile's nr rows and the block's nc
// keys; masked keys keep -INF whatever their K rows hold (rows with every key
// masked are all -INF)
static void attn_tile_logits(const struct attn_job * job, const float * qf, int64_t nr, const struct attn_rows * k,
                             int64_t nc, int64_t nb, float * logit, const struct attn_ahead * ahead) {
    float dots[ATTN_TILE_ROWS * ATTN_BLOCK_MAX];
    const int64_t qr = job->use_ref ? 1 : ATTN_QK_ROWS;
    for (int64_t j = 0; j < nc; j += 4) {
        const int64_t n4 = MIN(4, nc - j);
        attn_ahead_keys(ahead, j);
        for (int64_t r = 0; r < nr; r += qr) {
            const int64_t nq = MIN(qr, nr - r);
            bool any = false;
            for (int64_t i = 0; i < nq; i++) {
                for (int64_t t = 0; t < n4; t++) {
                    any |= logit[(r + i)*nb + j + t] != -INFINITY;
                }
            }
            float out[ATTN_QK_ROWS][4] = { { 0.0f } };
            if (any) {
                attn_qk(job, qf, r, nq, k, j, nc, out);
            }
            for (int64_t i = 0; i < nq; i++) {
                for (int64_t t = 0; t < n4; t++) {
                    const int64_t at = (r + i)*nb + j + t;
                    dots[at] = logit[at] == -INFINITY ? 0.0f : out[i][t];
                }
            }
        }
    }
    for (int64_t r = 0; r < nr; r++) {
        float * lr = logit + r*nb;
        float * dr = dots + r*nb;
        if (job->softcap != 0.0f) {
            if (job->use_ref) {
                attn_softcap_ref(nc, dr, job->scale, job->softcap);
            } else {
                attn_softcap(nc, dr, job->scale, job->softcap);
            }
            for (int64_t j = 0; j < nc; j++) {
                lr[j] += dr[j];
            }
        } else {
            for (int64_t j = 0; j < nc; j++) {
                lr[j] += job->scale * dr[j];
            }
        }
    }
}

// One row's online-softmax step over a block: logit[] becomes the
// probabilities exp(logit - M) (0 for masked keys), the accumulator and sum
// are rescaled if the block raises the maximum M. False if every key is masked.
// A NaN logit (from q, a K row or the mask) makes S NaN, and S stays NaN: the
// row's output is NaN, never the zeros of a row masked entirely.
static bool attn_block_softmax(const struct attn_job * job, float * logit, int64_t nc, float * acc, float * M, float * S) {
    const int64_t DV = job->DV;
    const float bmax = job->use_ref ? ggml_vec_max_f32_ref(nc, logit) : ggml_vec_max_f32(nc, logit);
    if (bmax == -INFINITY) {
        // the max skips NaNs: every key masked, or NaN where not
        if (ggml_vec_has_nan_f32(nc, logit)) {
            *S = NAN;
        }
        return false;
    }
    if (bmax > *M) {
        // earlier terms shrink by exp(M_old - M_new) (0 when M_old = -INF)
        const float ms = expf(*M - bmax);
        if (job->use_ref) {
            ggml_vec_scale_f32_ref(DV, acc, ms);
        } else {
            ggml_vec_scale_f32(DV, acc, ms);
        }
        *S *= ms;
        *M = bmax;
    }
    *S += job->use_ref ? attn_exp_shift_sum_ref(nc, logit, *M) : attn_exp_shift_sum(nc, logit, *M);
    return true;
}

// acc_r += sum_j p_r[j] v_j over the block's nc keys (p_r at p + r*nb) for the
// tile's rows with live[r]: four rows at a time where all four are live and
// none of their p is 0 (AVX2), else two at a time where both are live; a V
// row with p_r[j] == 0 (masked key) is not read for row r
static void attn_tile_pv(const struct attn_job * job, const float * p, const bool * live, int64_t nr, int64_t nc,
                         int64_t nb, const struct attn_rows * v, float * acc) {
    const int64_t DV = job->DV;
    for (int64_t r = 0; r < nr; r++) {
        if (!live[r]) {
            continue;
        }
#if ATTN_PV_QUADS
        // four live rows none of whose keys is masked (or weighs 0): V read once for the four
        if (!job->use_ref && r + 3 < nr && live[r + 1] && live[r + 2] && live[r + 3] &&
            attn_none_zero(nc, p + r*nb, nb, 4)) {
            if (v->f16) {
                attn_pv4_f16(nc, p + r*nb, nb, v->base, v->stride, DV, acc + r*DV, DV);
            } else {
                attn_pv4_f32(nc, p + r*nb, nb, v->base, v->stride, DV, acc + r*DV, DV);
            }
            r += 3;
            continue;
        }
#endif
        if (job->use_ref) {
            if (v->f16) {
                attn_pv_ref_f16(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            } else {
                attn_pv_ref_f32(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            }
        } else if (r + 1 < nr && live[r + 1]) {
            if (v->f16) {
                attn_pv2_f16(nc, p + r*nb, p + (r + 1)*nb, v->base, v->stride, DV, acc + r*DV, acc + (r + 1)*DV);
            } else {
                attn_pv2_f32(nc, p + r*nb, p + (r + 1)*nb, v->base, v->stride, DV, acc + r*DV, acc + (r + 1)*DV);
            }
            r++;
        } else {
            if (v->f16) {
                attn_pv_f16(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            } else {
                attn_pv_f32(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            }
        }
    }
}

// F32 rows of K or V are used in place, and so are F16 rows for tiles of up
// to ATTN_IN_PLACE_ROWS rows (converted on load by each row's kernels: fewer
// conversions than there are rows); otherwise a block's rows are converted
// to F32 once for all rows of the tile.
static bool attn_rows_in_place(const struct ggml_tensor * t, int64_t nr) {
    return t->type == GGML_TYPE_F32 || (t->type == GGML_TYPE_F16 && nr <= ATTN_IN_PLACE_ROWS);
}

// rows [c0, c0 + nc) of K or V for head (i2, i3), in place or converted into conv
static struct attn_rows attn_block_rows(const struct ggml_tensor * t, bool use_ref, int64_t nr, int64_t i2, int64_t i3,
                                        int64_t c0, int64_t nc, float * conv) {
    const int64_t n = t->ne[0];
    const char * base = (const char *) t->data + c0*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
    if (attn_rows_in_place(t, nr)) {
        return (struct attn_rows) { .base = base, .stride = t->nb[1], .f16 = t->type == GGML_TYPE_F16 };
    }
    for (int64_t j = 0; j < nc; j++) {
        const char * row = base + j*t->nb[1];
        if (t->type == GGML_TYPE_F16) {
            if (use_ref) {
                ggml_vec_fp16_to_fp32_ref(n, (const ggml_fp16_t *) row, conv + j*n);
            } else {
                ggml_vec_fp16_to_fp32(n, (const ggml_fp16_t *) row, conv + j*n);
            }
        } else {
            ggml_get_type_traits(t->type)->to_float(row, conv + j*n, n);
        }
    }
    return (struct attn_rows) { .base = (const char *) conv, .stride = (size_t) n * sizeof(float), .f16 = false };
}

// a tile: rows [rho0, rho0 + nr) of head group grp, batch i3
struct attn_tile {
    int64_t grp, i3, rho0, nr;
};

// tile t of an item (t < item_tiles)
static struct attn_tile attn_item_tile(const struct attn_job * job, int64_t item, int64_t t) {
    const struct attn_plan * p = &job->plan;
    if (p->item_tiles > 1) {
        // every head group of batch index item, whole
        return (struct attn_tile) { .grp = t, .i3 = item, .rho0 = 0, .nr = p->n_rows };
    }
    // items in the order (i3, head group, rows): consecutive items share K and V
    const int64_t rt = item % p->n_tiles;
    return (struct attn_tile) {
        .grp  = item / p->n_tiles % p->n_groups,
        .i3   = item / (p->n_tiles * p->n_groups),
        .rho0 = rt * ATTN_TILE_ROWS,
        .nr   = MIN(ATTN_TILE_ROWS, p->n_rows - rt * ATTN_TILE_ROWS),
    };
}

// head and query row of a tile's row r
static int64_t attn_row_head(const struct attn_job * job, const struct attn_tile * tile, int64_t r) {
    return tile->grp * job->plan.G + (tile->rho0 + r) % job->plan.G;
}

static int64_t attn_row_query(const struct attn_job * job, const struct attn_tile * tile, int64_t r) {
    return (tile->rho0 + r) / job->plan.G;
}

// the running state of tile t of an item, in the thread's scratch: its rows'
// query vectors in F32, value accumulators, maxima M, sums S, ALiBi slopes
struct attn_state {
    float * q, * acc, * M, * S, * slope;
};

static struct attn_state attn_state_of(const struct attn_job * job, float * scratch, int64_t t) {
    const struct attn_plan * p = &job->plan;
    const int64_t row0 = t * p->tile_rows;
    float * st = scratch + p->state + 3*row0;
    return (struct attn_state) {
        .q     = scratch + p->q + row0*job->DK,
        .acc   = scratch + p->acc + row0*job->DV,
        .M     = st,
        .S     = st + p->tile_rows,
        .slope = st + 2*p->tile_rows,
    };
}

// a tile's rows before any key: M = -INF, S = 0, acc = 0, q in F32
static void attn_tile_start(const struct attn_job * job, const struct attn_tile * tile, const struct attn_state * st) {
    const struct ggml_tensor * q = job->q;
    for (int64_t r = 0; r < tile->nr; r++) {
        const int64_t h = attn_row_head(job, tile, r);
        const int64_t i = attn_row_query(job, tile, r);
        st->slope[r] = attn_alibi_slope(job, h);
        st->M[r] = -INFINITY;
        st->S[r] = 0.0f;
        const char * qr = (const char *) q->data + i*q->nb[1] + h*q->nb[2] + tile->i3*q->nb[3];
        if (q->nb[0] == sizeof(float)) {
            memcpy(st->q + r*job->DK, qr, (size_t) job->DK * sizeof(float));
        } else {
            for (int64_t d = 0; d < job->DK; d++) {
                st->q[r*job->DK + d] = *(const float *)(qr + d*q->nb[0]);
            }
        }
        memset(st->acc + r*job->DV, 0, (size_t) job->DV * sizeof(float));
    }
}

// the mask row of a tile's row r from key c0 on (NULL without a mask)
static const ggml_fp16_t * attn_mask_row(const struct attn_job * job, const struct attn_tile * tile, int64_t r,
                                         int64_t c0) {
    const struct ggml_tensor * mask = job->mask;
    if (mask == NULL) {
        return NULL;
    }
    const int64_t h = attn_row_head(job, tile, r);
    const int64_t i = attn_row_query(job, tile, r);
    return (const ggml_fp16_t *)((const char *) mask->data + i*mask->nb[1] + (h % mask->ne[2])*mask->nb[2] +
                                 (tile->i3 % mask->ne[3])*mask->nb[3]) + c0;
}

// The online-softmax step of a tile's rows over keys [c0, c0 + nc) (nc <= the
// plan's block); the tile's next keys, up to c_end, are asked for meanwhile.
// In a wide item (touched not NULL), the first tile with a key not masked
// touches the block's rows of every head (and sets *touched), and each tile
// asks for its share of the next block.
static void attn_tile_block(const struct attn_job * job, float * scratch, const struct attn_tile * tile,
                            const struct attn_state * st, int64_t c0, int64_t nc, int64_t c_end, bool * touched) {
    const int64_t DV = job->DV;
    const int64_t nb = job->plan.block;
    const int64_t nr = tile->nr;
    float * logit = scratch + job->plan.logit;

    bool live[ATTN_TILE_ROWS];
    bool any = false;
    for (int64_t r = 0; r < nr; r++) {
        live[r] = attn_block_mask(job, attn_mask_row(job, tile, r, c0), nc, st->slope[r], logit + r*nb);
        any |= live[r];
    }
    if (!any) {
        return;
    }

    // every head of the group reads the same K and V head
    const int64_t h0  = tile->grp * job->plan.G;
    const int64_t ik2 = h0 / job->rk2, ik3 = tile->i3 / job->rk3;
    const int64_t iv2 = h0 / job->rv2, iv3 = tile->i3 / job->rv3;
    if (touched != NULL && !*touched) {
        attn_touch_rows(job->k, ik3, c0, nc);
        attn_touch_rows(job->v, iv3, c0, nc);
        *touched = true;
    }
    const struct attn_rows kb = attn_block_rows(job->k, job->use_ref, nr, ik2, ik3, c0, nc, scratch + job->plan.kconv);
    const struct attn_rows vb = attn_block_rows(job->v, job->use_ref, nr, iv2, iv3, c0, nc, scratch + job->plan.vconv);

    // the next keys (attn_ahead): in a wide item this tile's share of the next
    // block, when the heads lie side by side in the rows; otherwise the rows
    // read in place a few keys ahead. Rows converted, and the mask rows, a
    // block ahead.
    const bool k_in_place = attn_rows_in_place(job->k, nr);
    const bool v_in_place = attn_rows_in_place(job->v, nr);
    struct attn_ahead ahead = {
        .k        = k_in_place ? kb.base : NULL,
        .v        = v_in_place ? vb.base : NULL,
        .k_stride = job->k->nb[1],
        .v_stride = job->v->nb[1],
        .k_row    = ggml_row_size(job->k->type, job->DK),
        .v_row    = ggml_row_size(job->v->type, job->DV),
        .n        = c_end - c0,
    };
    const int64_t nn = MIN(nb, c_end - c0 - nb); // keys of the next block (none if <= 0)
    const char * next_k, * next_v;
    size_t next_k_len, next_v_len;
    if (touched != NULL && nn > 0 &&
        attn_rows_share(job->k, ik3, c0 + nb, nn, tile->grp, job->plan.item_tiles, &next_k, &next_k_len) &&
        attn_rows_share(job->v, iv3, c0 + nb, nn, tile->grp, job->plan.item_tiles, &next_v, &next_v_len)) {
        ahead.k          = NULL;
        ahead.v          = NULL;
        ahead.next_k     = next_k;
        ahead.next_v     = next_v;
        ahead.next_k_len = next_k_len;
        ahead.next_v_len = next_v_len;
        ahead.nc         = nc;
    }
    if (nn > 0) {
        if (!k_in_place) {
            attn_prefetch_rows(job->k, ik2, ik3, c0 + nb, nn);
        }
        if (!v_in_place) {
            attn_prefetch_rows(job->v, iv2, iv3, c0 + nb, nn);
        }
        for (int64_t r = 0; r < nr && job->mask != NULL; r++) {
            attn_prefetch(attn_mask_row(job, tile, r, c0 + nb), (size_t) nn * sizeof(ggml_fp16_t));
        }
    }

    attn_tile_logits(job, st->q, nr, &kb, nc, nb, logit, &ahead);
    for (int64_t r = 0; r < nr; r++) {
        live[r] = live[r] && attn_block_softmax(job, logit + r*nb, nc, st->acc + r*DV, &st->M[r], &st->S[r]);
    }
    attn_tile_pv(job, logit, live, nr, nc, nb, &vb, st->acc);
}

// Runs the online softmax of an item's rows over keys [c_begin, c_end): each
// tile's state starts empty and ends with its partial result. The tiles of a
// wide item take each block in turn.
static void attn_item_keys(const struct attn_job * job, float * scratch, int64_t item, int64_t c_begin, int64_t c_end) {
    const struct attn_plan * p = &job->plan;
    for (int64_t t = 0; t < p->item_tiles; t++) {
        const struct attn_tile tile = attn_item_tile(job, item, t);
        const struct attn_state st  = attn_state_of(job, scratch, t);
        attn_tile_start(job, &tile, &st);
    }
    for (int64_t c0 = c_begin; c0 < c_end; c0 += p->block) {
        const int64_t nc = MIN(p->block, c_end - c0);
        bool touched = false;
        for (int64_t t = 0; t < p->item_tiles; t++) {
            const struct attn_tile tile = attn_item_tile(job, item, t);
            const struct attn_state st  = attn_state_of(job, scratch, t);
            attn_tile_block(job, scratch, &tile, &st, c0, nc, c_end, p->item_tiles > 1 ? &touched : NULL);
        }
    }
}

// adds the head's sink to a row's softmax, normalises it and stores it
static void attn_row_finish(const struct attn_job * job, const struct attn_tile * tile, int64_t r,
                            float * acc, float M, float S) {
    const int64_t DV = job->DV;
    const int64_t h  = attn_row_head(job, tile, r);
    if (job->sinks != NULL) {
        // the sink is one more logit, with a zero value row
        const float s = *(const float *)((const char *) job->sinks->data + h*job->sinks->nb[0]);
        if (s > M) {
            const float ms = expf(M - s);
            ggml_vec_scale_f32_ref(DV, acc, ms);
            S = S*ms + 1.0f;
        } else {
            S += expf(s - M);
        }
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    float * out = (float *)((char *) job->dst->data + h*job->dst->nb[1] + attn_row_query(job, tile, r)*job->dst->nb[2] +
                            tile->i3*job->dst->nb[3]);
    for (int64_t d = 0; d < DV; d++) {
        out[d] = acc[d] * inv;
    }
}

// the whole item, all keys
static void attn_item_compute(const struct attn_job * job, float * scratch, int64_t item) {
    attn_item_keys(job, scratch, item, 0, job->n_kv);
    for (int64_t t = 0; t < job->plan.item_tiles; t++) {
        const struct attn_tile tile = attn_item_tile(job, item, t);
        const struct attn_state st  = attn_state_of(job, scratch, t);
        for (int64_t r = 0; r < tile.nr; r++) {
            attn_row_finish(job, &tile, r, st.acc + r*job->DV, st.M[r], st.S[r]);
        }
    }
}

// partial result of chunk c of an item: per row (row r of tile t) M, S and
// the DV accumulators
static float * attn_partial(const struct attn_job * job, float * partials, int64_t item, int64_t c, int64_t t,
                            int64_t r) {
    const struct attn_plan * p = &job->plan;
    return partials + (((item*p->n_chunks + c)*p->item_tiles + t)*p->tile_rows + r)*p->partial_row;
}

static void attn_chunk_compute(const struct attn_job * job, float * scratch, float * partials, int64_t item, int64_t c) {
    const int64_t c_begin = MIN(c * job->chunk_len, job->n_live);
    attn_item_keys(job, scratch, item, c_begin, MIN(job->n_live, c_begin + job->chunk_len));
    for (int64_t t = 0; t < job->plan.item_tiles; t++) {
        const struct attn_tile tile = attn_item_tile(job, item, t);
        const struct attn_state st  = attn_state_of(job, scratch, t);
        for (int64_t r = 0; r < tile.nr; r++) {
            float * part = attn_partial(job, partials, item, c, t, r);
            part[0] = st.M[r];
            part[1] = st.S[r];
            memcpy(part + 2, st.acc + r*job->DV, (size_t) job->DV * sizeof(float));
        }
    }
}

// combines an item's chunks in their order: each scaled by exp(M_c - M)
static void attn_chunks_combine(const struct attn_job * job, float * scratch, float * partials, int64_t item) {
    const int64_t DV = job->DV;
    float * acc = scratch + job->plan.acc;
    for (int64_t t = 0; t < job->plan.item_tiles; t++) {
        const struct attn_tile tile = attn_item_tile(job, item, t);
        for (int64_t r = 0; r < tile.nr; r++) {
            float M = -INFINITY;
            for (int64_t c = 0; c < job->plan.n_chunks; c++) {
                M = MAX(M, attn_partial(job, partials, item, c, t, r)[0]);
            }
            float S = 0.0f;
            memset(acc, 0, (size_t) DV * sizeof(float));
            for (int64_t c = 0; c < job->plan.n_chunks; c++) {
                const float * part = attn_partial(job, partials, item, c, t, r);
                if (part[0] == -INFINITY) {
                    S += part[1]; // 0: every key of the chunk masked; NaN: it saw a NaN logit
                    continue;
                }
                const float w = expf(part[0] - M);
                S += w * part[1];
                if (job->use_ref) {
                    ggml_vec_mad_f32_ref(DV, acc, part + 2, w);
                } else {
                    ggml_vec_mad_f32(DV, acc, part + 2, w);
                }
            }
            attn_row_finish(job, &tile, r, acc, M, S);
        }
    }
}

// The keys [0, n) that hold every key some query row of the node does not
// mask: past n the mask is -INF in every row, as in a KV cache with room to
// spare (llama.cpp pads the keys to 256: a short context's generation
// attends over 256 keys of which a few dozen are live). A NaN counts as live
// (it poisons its row). n_kv without a mask. Each row is read from its end
// down to the extent found so far, so the mask is read about once.
static int64_t attn_live_extent(const struct ggml_tensor * mask, const struct ggml_tensor * q, int64_t n_kv) {
    if (mask == NULL) {
        return n_kv;
    }
    const uint16_t neg_inf = 0xFC00; // -INF in F16
    int64_t n = 0;
    for (int64_t i3 = 0; i3 < MIN(mask->ne[3], q->ne[3]); i3++) {
        for (int64_t i2 = 0; i2 < MIN(mask->ne[2], q->ne[2]); i2++) {
            for (int64_t i1 = 0; i1 < q->ne[1] && n < n_kv; i1++) {
                const uint16_t * row = (const uint16_t *)((const char *) mask->data + i1*mask->nb[1] + i2*mask->nb[2] +
                                                          i3*mask->nb[3]);
                for (int64_t j = n_kv - 1; j >= n; j--) {
                    if (row[j] != neg_inf) {
                        n = j + 1;
                        break;
                    }
                }
            }
        }
    }
    return n;
}

static int64_t attn_live_keys(const struct attn_job * job) {
    return attn_live_extent(job->mask, job->q, job->n_kv);
}

static bool supports_flash_attn_ext(const struct ggml_tensor * op);

static void forward_flash_attn_ext(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    GGML_ASSERT(supports_flash_attn_ext(dst) && "flash_attn_ext: types or shapes the CPU kernel does not take");

    struct attn_job job;
    attn_job_init(&job, dst, params->use_ref);
    const struct attn_plan * p = &job.plan;

    GGML_ASSERT(params->wsize >= (p->partials + (size_t) params->nth * p->per_thread) * sizeof(float));
    float * partials = (float *) params->wdata;
    float * scratch  = partials + p->partials + (size_t) params->ith * p->per_thread;

    if (p->n_chunks == 1) {
        for (int64_t it = ggml_cpu_next_chunk(params); it < p->n_items; it = ggml_cpu_next_chunk(params)) {
            attn_item_compute(&job, scratch, it);
        }
        return;
    }
    // the chunks share the live keys only: past them every block would be
    // skipped, and a chunk of those would leave its thread idle while the
    // others compute (generation over a padded cache: 256 keys, 4 chunks of
    // 64, the live ones all in the first). Chunks of whole groups of
    // ATTN_LIVE_UNIT keys (40 live keys: 16, 16 and 8); in groups of 4 the
    // chunks' own costs came to more than they saved (bench-cpu-attention, 24
    // heads, 8 KV heads, 40 of 256 keys live, 2 threads: 15 us against 10).
    // Every thread finds the same extent (from the mask), so the split still
    // does not depend on the number of threads.
    job.n_live    = attn_live_keys(&job);
    job.chunk_len = (job.n_live + p->n_chunks - 1) / p->n_chunks;
    job.chunk_len = MAX((job.chunk_len + ATTN_LIVE_UNIT - 1) / ATTN_LIVE_UNIT * ATTN_LIVE_UNIT, ATTN_LIVE_UNIT);
    for (int64_t it = ggml_cpu_next_chunk(params); it < p->n_items * p->n_chunks; it = ggml_cpu_next_chunk(params)) {
        attn_chunk_compute(&job, scratch, partials, it / p->n_chunks, it % p->n_chunks);
    }
    ggml_cpu_barrier(params->threadpool);
    for (int64_t it = ggml_cpu_next_chunk(params); it < p->n_items; it = ggml_cpu_next_chunk(params)) {
        attn_chunks_combine(&job, scratch, partials, it);
    }
}

static size_t work_size_flash_attn_ext(const struct ggml_tensor * op, int n_threads) {
    const struct attn_plan p = attn_plan_make(op);
    return (p.partials + (size_t) n_threads * p.per_thread) * sizeof(float);
}

// K and V rows of any storage type are converted to F32 (attn_block_rows):
// every type with a conversion except the activation formats q8_1 and q8_K,
// which are not stored in a KV cache (upstream's kernel takes neither).
// Upstream's CPU takes every other quantized type too, the IQ and K-quant
// formats included (`-ctk iq4_nl` in llama.cpp).
static bool attn_kv_type_supported(enum ggml_type type) {
    if (type == GGML_TYPE_F32) {
        return true;
    }
    if (type == GGML_TYPE_Q8_1 || type == GGML_TYPE_Q8_K) {
        return false;
    }
    return ggml_get_type_traits(type)->to_float != NULL;
}

static bool supports_flash_attn_ext(const struct ggml_tensor * op) {
    const struct ggml_tensor * q     = op->src[0];
    const struct ggml_tensor * k     = op->src[1];
    const struct ggml_tensor * v     = op->src[2];
    const struct ggml_tensor * mask  = op->src[3];
    const struct ggml_tensor * sinks = op->src[4];

    const int32_t prec = ggml_get_op_params_i32(op, 3);
    if (prec != GGML_PREC_DEFAULT && prec != GGML_PREC_F32) {
        return false;
    }
    if (op->type != GGML_TYPE_F32 || !ggml_is_contiguous(op) || q->type != GGML_TYPE_F32) {
        return false;
    }
    // K and V rows are read in place: contiguous within a row
    if (!attn_kv_type_supported(k->type) || !attn_kv_type_supported(v->type) ||
        k->nb[0] != ggml_type_size(k->type) || v->nb[0] != ggml_type_size(v->type)) {
        return false;
    }
    if (q->ne[0] != k->ne[0] || v->ne[1] != k->ne[1] ||
        q->ne[2] % k->ne[2] != 0 || q->ne[3] % k->ne[3] != 0 ||
        q->ne[2] % v->ne[2] != 0 || q->ne[3] % v->ne[3] != 0) {
        return false;
    }
    if (mask != NULL && (mask->type != GGML_TYPE_F16 || mask->nb[0] != sizeof(ggml_fp16_t) ||
                         mask->ne[0] < k->ne[1] || mask->ne[1] < q->ne[1] ||
                         q->ne[2] % mask->ne[2] != 0 || q->ne[3] % mask->ne[3] != 0)) {
        return false;
    }
    if (sinks != NULL && (sinks->type != GGML_TYPE_F32 || sinks->ne[0] < q->ne[2])) {
        return false;
    }
    return true;
}

// What a thread waiting at a barrier before this node may ask the memory for
// (stream-lead.c): in token generation and small batches (at most
// ATTN_WIDE_ROWS query rows a head) over a KV cache (the heads of a key side
// by side in its row), the range of K and the range of V that hold the rows
// of every head of the live keys (attn_live_extent). Those rows come from
// memory (a token's weights pass through the caches between two layers'
// attentions), a few hundred lines each, and a node that starts with them
// out of the caches waits on them: bench-cpu-attention, 16 heads (4 KV) of
// 128, 40 of 256 keys live, F16, 2 threads: 7 us a call warm, 12-13 cold.
// The live keys come from the mask, read only when mask_ready (no node
// still to run, or running, writes it). Returns the ranges written: 0 or 2
// (max >= 2).
int ggml_cpu_flash_attn_lead(const struct ggml_tensor * op, bool mask_ready, const char ** starts, size_t * lens,
                             int max) {
    const struct ggml_tensor * q    = op->src[0];
    const struct ggml_tensor * k    = op->src[1];
    const struct ggml_tensor * v    = op->src[2];
    const struct ggml_tensor * mask = op->src[3];
    if (op->op != GGML_OP_FLASH_ATTN_EXT || max < 2 || !supports_flash_attn_ext(op) || q->ne[1] > ATTN_WIDE_ROWS ||
        q->ne[3] != 1 || k->data == NULL || v->data == NULL || (mask != NULL && (!mask_ready || mask->data == NULL))) {
        return 0;
    }
    const int64_t n_live = attn_live_extent(mask, q, k->ne[1]);
    if (!attn_rows_share(k, 0, 0, n_live, 0, 1, &starts[0], &lens[0]) ||
        !attn_rows_share(v, 0, 0, n_live, 0, 1, &starts[1], &lens[1])) {
        return 0;
    }
    return 2;
}

void ggml_cpu_register_ops_attention(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_FLASH_ATTN_EXT] = (struct ggml_cpu_op_impl) {
        .forward   = forward_flash_attn_ext,
        .supports  = supports_flash_attn_ext,
        .work_size = work_size_flash_attn_ext,
    };
}
