// split-tensor.c: --split-mode tensor (see split-tensor.h).

#include "split-tensor.h"
#include "model.h"
#include "run-common.h"

#include <stdlib.h>
#include <string.h>

struct run_split_plan {
    int     n_devs;
    int64_t kv_rows[GGML_BACKEND_META_MAX_DEVICES];  // rows of K and V, of the cache
    int64_t q_rows[GGML_BACKEND_META_MAX_DEVICES];
    int64_t ff_rows[GGML_BACKEND_META_MAX_DEVICES];  // rows of gate and up, the input of down
};

void run_split_plan_free(struct run_split_plan * plan) {
    free(plan);
}

// n_units units of granule spread by share (largest remainders), as counts of elements
static void spread(int64_t n_units, int64_t granule, const float * share, double total, int n, int64_t * out) {
    int64_t given = 0;
    double  rest[GGML_BACKEND_META_MAX_DEVICES];
    for (int j = 0; j < n; j++) {
        const double exact = (double) n_units * (double) share[j] / total;
        out[j]  = (int64_t) exact;
        rest[j] = exact - (double) out[j];
        given  += out[j];
    }
    for (; given < n_units; given++) {
        int best = 0;
        for (int j = 1; j < n; j++) {
            best = rest[j] > rest[best] ? j : best;
        }
        out[best]++;
        rest[best] = -1.0;
    }
    for (int j = 0; j < n; j++) {
        out[j] *= granule;
    }
}

static struct ggml_backend_meta_split_state split_of(int axis, const struct run_split_plan * p, const int64_t * ne) {
    struct ggml_backend_meta_split_state ss;
    memset(&ss, 0, sizeof(ss));
    ss.axis       = (enum ggml_backend_meta_split_axis) axis;
    ss.nr[0]      = 1;
    ss.n_segments = 1;
    for (int j = 0; j < p->n_devs && ne != NULL; j++) {
        ss.ne[j] = ne[j];
    }
    return ss;
}

// by the names of the GGUF tensors ("blk.N.attn_q.weight") and of the cache ("cache_k_lN")
static struct ggml_backend_meta_split_state split_by_name(const struct ggml_tensor * t, void * user_data) {
    const struct run_split_plan * p = (const struct run_split_plan *) user_data;
    const char * name = t->name;
    if (strncmp(name, "cache_k_l", 9) == 0 || strncmp(name, "cache_v_l", 9) == 0) {
        return split_of(0, p, p->kv_rows);
    }
    const char * dot = strncmp(name, "blk.", 4) == 0 ? strchr(name + 4, '.') : NULL;
    if (dot != NULL) {
        static const struct { const char * suffix; int axis; int rows; } rules[] = {
            { "attn_q.weight",      1, 0 }, { "attn_q.bias", 0, 0 },
            { "attn_k.weight",      1, 1 }, { "attn_k.bias", 0, 1 },
            { "attn_v.weight",      1, 1 }, { "attn_v.bias", 0, 1 },
            { "attn_output.weight", 0, 0 },
            { "ffn_gate.weight",    1, 2 }, { "ffn_up.weight", 1, 2 },
            { "ffn_down.weight",    0, 2 },
        };
        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
            if (strcmp(dot + 1, rules[i].suffix) == 0) {
                const int64_t * rows = rules[i].rows == 0 ? p->q_rows : rules[i].rows == 1 ? p->kv_rows : p->ff_rows;
                return split_of(rules[i].axis, p, rows);
            }
        }
    }
    return split_of(GGML_BACKEND_SPLIT_AXIS_MIRRORED, p, NULL);
}

// the largest block size of the tensors split along their input (a split must fall between blocks)
static int64_t input_block(const struct run_model * model, size_t field_offset) {
    int64_t blck = 1;
    for (int64_t il = 0; il < model->hp.n_layer; il++) {
        const struct ggml_tensor * t = *(struct ggml_tensor * const *) ((const char *) &model->layers[il] + field_offset);
        if (t != NULL && ggml_blck_size(t->type) > blck) {
            blck = ggml_blck_size(t->type);
        }
    }
    return blck;
}

bool run_split_tensor_setup(struct run_model * model, const char * tensor_split) {
    const struct run_hparams * hp = &model->hp;
    if (hp->arch->moe || strcmp(hp->arch->name, "phi3") == 0) {
        run_error("--split-mode tensor: %s is not split yet (%s); use --split-mode layer", hp->arch->name,
                  hp->arch->moe ? "routed experts" : "fused QKV and gate-up matrices");
        return false;
    }
    const int n = model->devs.n_layer - 1;
    if (n < 2 || n > GGML_BACKEND_META_MAX_DEVICES) {
        run_error("--split-mode tensor needs 2 to %d devices besides the CPU (-dev), not %d", GGML_BACKEND_META_MAX_DEVICES, n);
        return false;
    }
    float share[GGML_BACKEND_META_MAX_DEVICES];
    double total = 0.0;
    if (!run_devices_shares(&model->devs, tensor_split, share, &total)) {
        return false;
    }
    if (!(total > 0.0)) {
        run_error("--tensor-split gives no device a share");
        return false;
    }
    struct run_split_plan * p = (struct run_split_plan *) run_calloc(1, sizeof(*p), "the tensor split");
    if (p == NULL) {
        return false;
    }
    p->n_devs = n;
    // whole KV-head groups per device: a group's Q heads with their K and V head
    const int64_t q_per_kv = hp->n_head / hp->n_head_kv;
    int64_t groups[GGML_BACKEND_META_MAX_DEVICES];
    spread(hp->n_head_kv, 1, share, total, n, groups);
    for (int j = 0; j < n; j++) {
        p->kv_rows[j] = groups[j] * hp->head_dim;
        p->q_rows[j]  = groups[j] * q_per_kv * hp->head_dim;
    }
    const int64_t blck_o = input_block(model, offsetof(struct run_layer, wo));
    const int64_t blck_d = input_block(model, offsetof(struct run_layer, ffn_down));
    if ((q_per_kv * hp->head_dim) % blck_o != 0 || hp->n_ff % blck_d != 0) {
        run_error("--split-mode tensor: the attention output (%lld per KV head) or the feed-forward (%lld) cannot be "
                  "split between blocks of %lld and %lld", (long long) (q_per_kv * hp->head_dim), (long long) hp->n_ff,
                  (long long) blck_o, (long long) blck_d);
        free(p);
        return false;
    }
    spread(hp->n_ff / blck_d, blck_d, share, total, n, p->ff_rows);
    if (!run_devices_make_meta(&model->devs, split_by_name, p)) {
        free(p);
        return false;
    }
    model->split_plan = p;
    return true;
}
