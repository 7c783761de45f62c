// synthetic.c: a model of any architecture with deterministic weights, built in memory.

#include "synthetic.h"
#include "run-common.h"

#include "gguf.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct run_synth_params run_synth_default_params(void) {
    struct run_synth_params p;
    run_synth_preset("default", &p);
    return p;
}

bool run_synth_preset(const char * name, struct run_synth_params * p) {
    static const struct {
        const char * name;
        int64_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab;
    } presets[] = {
        { "tiny",     256,  4,  4, 2,   704,  4096 },
        { "small",   1024,  8, 16, 4,  2816, 32000 },
        { "default", 2048,  8, 16, 4,  5632, 32000 },
        { "large",   4096,  8, 32, 8, 11008, 32000 },
    };
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        if (strcmp(name, presets[i].name) == 0) {
            *p = (struct run_synth_params) {
                .arch      = "llama",
                .n_embd    = presets[i].n_embd,
                .n_layer   = presets[i].n_layer,
                .n_head    = presets[i].n_head,
                .n_head_kv = presets[i].n_head_kv,
                .n_ff      = presets[i].n_ff,
                .n_vocab   = presets[i].n_vocab,
                .n_expert  = 8,
                .n_expert_used = 2,
                .n_ff_exp  = presets[i].n_ff / 2,
                .n_swa     = 128,
                .n_ctx     = 4096,
                .wtype     = GGML_TYPE_Q8_0,
                .seed      = 1234,
                .n_threads = 1,
            };
            return true;
        }
    }
    return false;
}

//
// deterministic values
//

// one generator per (tensor, row): the bytes do not depend on the threads
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float next_uniform(uint64_t * state) { // [-1, 1)
    *state += 0x9e3779b97f4a7c15ull;
    return (float) ((double) (mix64(*state) >> 40) * (2.0 / 16777216.0) - 1.0);
}

//
// vocabulary: specials, bytes, letters, syllables, words of syllables
//

static const char * const synth_consonants = "bdfghjklmnprstvz";
static const char * const synth_vowels     = "aeiou";
#define SYNTH_N_SYLLABLES 80 // 16 consonants x 5 vowels
#define SYNTH_SPACE "\xe2\x96\x81"

static void synth_syllable(int i, char * out) {
    out[0] = synth_consonants[i / 5];
    out[1] = synth_vowels[i % 5];
    out[2] = '\0';
}

// piece number k after the specials and bytes
static void synth_word_piece(int64_t k, char * out, size_t size) {
    char s1[3], s2[3], s3[3];
    if (k == 0) {
        snprintf(out, size, SYNTH_SPACE);
        return;
    }
    k -= 1;
    if (k < 26) {
        snprintf(out, size, "%c", (char) ('a' + k));
        return;
    }
    k -= 26;
    if (k < SYNTH_N_SYLLABLES) {
        synth_syllable((int) k, s1);
        snprintf(out, size, "%s", s1);
        return;
    }
    k -= SYNTH_N_SYLLABLES;
    if (k < SYNTH_N_SYLLABLES) {
        synth_syllable((int) k, s1);
        snprintf(out, size, SYNTH_SPACE "%s", s1);
        return;
    }
    k -= SYNTH_N_SYLLABLES;
    if (k < SYNTH_N_SYLLABLES * SYNTH_N_SYLLABLES) {
        synth_syllable((int) (k / SYNTH_N_SYLLABLES), s1);
        synth_syllable((int) (k % SYNTH_N_SYLLABLES), s2);
        snprintf(out, size, SYNTH_SPACE "%s%s", s1, s2);
        return;
    }
    k -= SYNTH_N_SYLLABLES * SYNTH_N_SYLLABLES;
    synth_syllable((int) (k / (SYNTH_N_SYLLABLES * SYNTH_N_SYLLABLES) % SYNTH_N_SYLLABLES), s1);
    synth_syllable((int) (k / SYNTH_N_SYLLABLES % SYNTH_N_SYLLABLES), s2);
    synth_syllable((int) (k % SYNTH_N_SYLLABLES), s3);
    snprintf(out, size, SYNTH_SPACE "%s%s%s", s1, s2, s3);
}

#define SYNTH_N_FIXED 259 // <unk> <s> </s> and 256 bytes
#define SYNTH_N_WORDS_MAX (1 + 26 + 2 * SYNTH_N_SYLLABLES + SYNTH_N_SYLLABLES * SYNTH_N_SYLLABLES + \
                           SYNTH_N_SYLLABLES * SYNTH_N_SYLLABLES * SYNTH_N_SYLLABLES)

static bool synth_set_vocab(struct gguf_context * gguf, int64_t n_vocab) {
    char  ** text  = (char **)  run_calloc((size_t) n_vocab, sizeof(char *), "the vocabulary");
    float  * score = (float *)  run_calloc((size_t) n_vocab, sizeof(float), "the vocabulary");
    int32_t * type = (int32_t *) run_calloc((size_t) n_vocab, sizeof(int32_t), "the vocabulary");
    bool ok = text != NULL && score != NULL && type != NULL;
    for (int64_t i = 0; ok && i < n_vocab; i++) {
        char piece[32];
        if (i == 0) {
            snprintf(piece, sizeof(piece), "<unk>");
            type[i] = RUN_TOKEN_TYPE_UNKNOWN;
        } else if (i < 3) {
            snprintf(piece, sizeof(piece), i == 1 ? "<s>" : "</s>");
            type[i] = RUN_TOKEN_TYPE_CONTROL;
        } else if (i < SYNTH_N_FIXED) {
            snprintf(piece, sizeof(piece), "<0x%02X>", (unsigned) (i - 3));
            type[i] = RUN_TOKEN_TYPE_BYTE;
        } else {
            synth_word_piece(i - SYNTH_N_FIXED, piece, sizeof(piece));
            type[i] = RUN_TOKEN_TYPE_NORMAL;
        }
        score[i] = -(float) i; // shorter pieces come first and merge first
        text[i] = run_strdup(piece);
        ok = text[i] != NULL;
    }
    if (ok) {
        gguf_set_val_str(gguf, "tokenizer.ggml.model", "llama");
        gguf_set_arr_str(gguf, "tokenizer.ggml.tokens", (const char **) text, (size_t) n_vocab);
        gguf_set_arr_data(gguf, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, score, (size_t) n_vocab);
        gguf_set_arr_data(gguf, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, type, (size_t) n_vocab);
        gguf_set_val_u32(gguf, "tokenizer.ggml.unknown_token_id", 0);
        gguf_set_val_u32(gguf, "tokenizer.ggml.bos_token_id", 1);
        gguf_set_val_u32(gguf, "tokenizer.ggml.eos_token_id", 2);
        gguf_set_val_bool(gguf, "tokenizer.ggml.add_bos_token", true);
    }
    for (int64_t i = 0; text != NULL && i < n_vocab; i++) {
        free(text[i]);
    }
    free(text);
    free(score);
    free(type);
    return ok;
}

static void synth_set_u32(struct gguf_context * gguf, const char * arch, const char * key, int64_t v) {
    char full[128];
    snprintf(full, sizeof(full), "%s.%s", arch, key);
    gguf_set_val_u32(gguf, full, (uint32_t) v);
}

static void synth_set_hparams(struct gguf_context * gguf, const struct run_synth_params * p, const struct run_arch * arch) {
    const char * a = arch->name;
    char key[128];
    gguf_set_val_str(gguf, "general.architecture", a);
    gguf_set_val_str(gguf, "general.name", "synthetic");
    synth_set_u32(gguf, a, "context_length", p->n_ctx);
    synth_set_u32(gguf, a, "embedding_length", p->n_embd);
    synth_set_u32(gguf, a, "block_count", p->n_layer);
    synth_set_u32(gguf, a, "feed_forward_length", p->n_ff);
    synth_set_u32(gguf, a, "attention.head_count", p->n_head);
    synth_set_u32(gguf, a, "attention.head_count_kv", p->n_head_kv);
    synth_set_u32(gguf, a, "rope.dimension_count", p->n_embd / p->n_head);
    snprintf(key, sizeof(key), "%s.attention.layer_norm_rms_epsilon", a);
    gguf_set_val_f32(gguf, key, 1e-5f);
    snprintf(key, sizeof(key), "%s.rope.freq_base", a);
    gguf_set_val_f32(gguf, key, 10000.0f);
    if (arch->moe) {
        synth_set_u32(gguf, a, "expert_count", p->n_expert);
        synth_set_u32(gguf, a, "expert_used_count", p->n_expert_used);
        synth_set_u32(gguf, a, "expert_feed_forward_length", p->n_ff_exp);
    }
    if (arch->swa_pattern > 0) {
        synth_set_u32(gguf, a, "attention.sliding_window", p->n_swa);
    }
}

// the hyperparameters the loader will read from these parameters (for shapes)
static struct run_hparams synth_hparams(const struct run_synth_params * p, const struct run_arch * arch) {
    return (struct run_hparams) {
        .arch = arch, .n_vocab = p->n_vocab, .n_embd = p->n_embd, .n_layer = p->n_layer, .n_ff = p->n_ff,
        .n_head = p->n_head, .n_head_kv = p->n_head_kv, .head_dim = p->n_embd / p->n_head,
        .n_expert = arch->moe ? p->n_expert : 0, .n_expert_used = arch->moe ? p->n_expert_used : 0,
        .n_ff_exp = arch->moe ? p->n_ff_exp : 0,
    };
}

//
// tensors
//

static bool synth_check(const struct run_synth_params * p, const struct run_arch ** arch) {
    *arch = run_arch_find(p->arch != NULL ? p->arch : "llama");
    if (*arch == NULL) {
        run_error("no synthetic model of architecture '%s' (%s)", p->arch, run_arch_names());
        return false;
    }
    const int64_t blck = ggml_blck_size(p->wtype);
    const bool sizes_ok = p->n_embd > 0 && p->n_layer > 0 && p->n_head > 0 && p->n_head_kv > 0 && p->n_ff > 0 &&
                          p->n_ctx > 0 && p->n_embd <= INT32_MAX && p->n_ff <= INT32_MAX && p->n_ctx <= INT32_MAX &&
                          p->n_layer <= 100000 && p->n_embd % p->n_head == 0 && p->n_head % p->n_head_kv == 0 &&
                          (p->n_embd / p->n_head) % 2 == 0;
    if (!sizes_ok) {
        run_error("invalid synthetic model: embedding %lld, layers %lld, heads %lld/%lld, feed-forward %lld "
                  "(heads must divide the embedding into even head sizes, key/value heads the heads)",
                  (long long) p->n_embd, (long long) p->n_layer, (long long) p->n_head, (long long) p->n_head_kv,
                  (long long) p->n_ff);
        return false;
    }
    if ((*arch)->moe && (p->n_expert <= 0 || p->n_expert > 256 || p->n_expert_used <= 0 || p->n_expert_used > p->n_expert ||
                         p->n_ff_exp <= 0 || p->n_ff_exp > INT32_MAX)) {
        run_error("invalid synthetic experts: %lld used of %lld, feed-forward length %lld", (long long) p->n_expert_used,
                  (long long) p->n_expert, (long long) p->n_ff_exp);
        return false;
    }
    if ((*arch)->swa_pattern > 0 && (p->n_swa <= 0 || p->n_swa > INT32_MAX)) {
        run_error("invalid synthetic sliding window %lld", (long long) p->n_swa);
        return false;
    }
    if (p->n_vocab < SYNTH_N_FIXED + 1 || p->n_vocab > SYNTH_N_FIXED + SYNTH_N_WORDS_MAX) {
        run_error("a synthetic vocabulary has %d to %d tokens, not %lld", SYNTH_N_FIXED + 1,
                  SYNTH_N_FIXED + SYNTH_N_WORDS_MAX, (long long) p->n_vocab);
        return false;
    }
    if (p->wtype != GGML_TYPE_F32 && p->wtype != GGML_TYPE_F16 && p->wtype != GGML_TYPE_BF16 &&
        p->wtype != GGML_TYPE_Q8_0 && p->wtype != GGML_TYPE_Q4_0 && p->wtype != GGML_TYPE_Q4_1 &&
        p->wtype != GGML_TYPE_Q5_0 && p->wtype != GGML_TYPE_Q5_1 &&
        p->wtype != GGML_TYPE_Q2_K && p->wtype != GGML_TYPE_Q3_K && p->wtype != GGML_TYPE_Q4_K &&
        p->wtype != GGML_TYPE_Q5_K && p->wtype != GGML_TYPE_Q6_K &&
        p->wtype != GGML_TYPE_IQ4_NL && p->wtype != GGML_TYPE_IQ4_XS && p->wtype != GGML_TYPE_MXFP4 &&
        p->wtype != GGML_TYPE_TQ1_0 && p->wtype != GGML_TYPE_TQ2_0 &&
        p->wtype != GGML_TYPE_IQ2_S && p->wtype != GGML_TYPE_IQ3_XXS && p->wtype != GGML_TYPE_IQ3_S &&
        p->wtype != GGML_TYPE_IQ1_M && p->wtype != GGML_TYPE_NVFP4 && p->wtype != GGML_TYPE_Q1_0 &&
        p->wtype != GGML_TYPE_Q2_0 && p->wtype != GGML_TYPE_IQ1_S && p->wtype != GGML_TYPE_IQ2_XXS &&
        p->wtype != GGML_TYPE_IQ2_XS) {
        run_error("synthetic weights of type %s are not supported", ggml_type_name(p->wtype));
        return false;
    }
    if (p->n_embd % blck != 0 || p->n_ff % blck != 0 || ((*arch)->moe && p->n_ff_exp % blck != 0)) {
        run_error("type %s needs the embedding (%lld) and feed-forward (%lld, experts %lld) lengths to be multiples of %lld",
                  ggml_type_name(p->wtype), (long long) p->n_embd, (long long) p->n_ff, (long long) p->n_ff_exp, (long long) blck);
        return false;
    }
    return true;
}

static struct ggml_tensor * synth_new(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[3], const char * name) {
    const int n_dims = ne[2] > 1 ? 3 : ne[1] > 1 ? 2 : 1;
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, n_dims, ne);
    ggml_set_name(t, name);
    return t;
}

// the matrices get the weight type, the 1-D tensors (norms, biases) F32
static enum ggml_type synth_tensor_type(const struct run_synth_params * p, enum run_weight_use use) {
    return use == RUN_USE_MATMUL || use == RUN_USE_MATMUL_ID || use == RUN_USE_ROWS ? p->wtype : GGML_TYPE_F32;
}

// Adds the bytes of a tensor of type and shape ne, padded as a GGUF file
// pads them, to *total; false when the tensor's elements overflow int64_t
// or the bytes size_t (no tensor is created from such sizes).
static bool synth_count_bytes(size_t * total, enum ggml_type type, const int64_t ne[3]) {
    // every dimension is positive (checked before)
    if (ne[1] > INT64_MAX / ne[2]) {
        return false;
    }
    const int64_t rows = ne[1] * ne[2];
    if (ne[0] > INT64_MAX / rows) {
        return false;
    }
    const size_t row = ggml_row_size(type, ne[0]);
    const size_t align = GGUF_DEFAULT_ALIGNMENT;
    if ((uint64_t) rows > SIZE_MAX / row) {
        return false;
    }
    const size_t bytes = row * (size_t) rows;
    if (bytes > SIZE_MAX - (align - 1)) {
        return false;
    }
    const size_t padded = (bytes + align - 1) / align * align;
    if (padded > SIZE_MAX - *total) {
        return false;
    }
    *total += padded;
    return true;
}

// Adds every tensor of the model to ctx and gguf, in file order (with ctx
// NULL only counts them), and sets *bytes to their data's size as the GGUF
// holds it. False when that size overflows size_t: checked before any tensor
// is made, since nothing of such a model can be allocated.
static bool synth_tensors(struct ggml_context * ctx, struct gguf_context * gguf, const struct run_synth_params * p,
                          const struct run_arch * arch, size_t * bytes) {
    const struct run_hparams hp = synth_hparams(p, arch);
    const int64_t embd[3] = { p->n_embd, p->n_vocab, 1 }, norm[3] = { p->n_embd, 1, 1 };
    *bytes = 0;
    bool ok = synth_count_bytes(bytes, p->wtype, embd) && synth_count_bytes(bytes, GGML_TYPE_F32, norm) &&
              synth_count_bytes(bytes, p->wtype, embd);
    for (int64_t il = 0; ok && il < p->n_layer; il++) {
        for (int i = 0; ok && i < arch->n_layer_tensors; i++) {
            const struct run_tensor_desc * d = &arch->layer[i];
            const int64_t ne[3] = { run_dim_size(&hp, d->ne[0]), run_dim_size(&hp, d->ne[1]), run_dim_size(&hp, d->ne[2]) };
            ok = !d->required || synth_count_bytes(bytes, synth_tensor_type(p, d->use), ne);
        }
    }
    if (!ok || ctx == NULL) {
        return ok;
    }
    gguf_add_tensor(gguf, synth_new(ctx, p->wtype, embd, "token_embd.weight"));
    gguf_add_tensor(gguf, synth_new(ctx, GGML_TYPE_F32, norm, "output_norm.weight"));
    gguf_add_tensor(gguf, synth_new(ctx, p->wtype, embd, "output.weight"));
    for (int64_t il = 0; il < p->n_layer; il++) {
        for (int i = 0; i < arch->n_layer_tensors; i++) {
            const struct run_tensor_desc * d = &arch->layer[i];
            if (!d->required) {
                continue;
            }
            const int64_t ne[3] = { run_dim_size(&hp, d->ne[0]), run_dim_size(&hp, d->ne[1]), run_dim_size(&hp, d->ne[2]) };
            char name[GGML_MAX_NAME];
            snprintf(name, sizeof(name), "blk.%lld.%s", (long long) il, d->name);
            gguf_add_tensor(gguf, synth_new(ctx, synth_tensor_type(p, d->use), ne, name));
        }
    }
    return true;
}

//
// filling the data, rows split over threads
//

struct synth_fill_job {
    const struct run_synth_params * p;
    struct gguf_context * gguf;
    struct ggml_tensor ** tensors; // by GGUF tensor id
    uint8_t * data;
    int ith;
    int nth;
    bool ok;
};

static void synth_fill_row(float * row, int64_t n, uint64_t state, const char * name) {
    const bool is_norm  = strstr(name, "norm") != NULL;
    const bool is_bias  = strstr(name, ".bias") != NULL;
    const bool is_embd  = strcmp(name, "token_embd.weight") == 0;
    const float a = is_norm || is_embd ? 1.0f : is_bias ? 0.1f : sqrtf(3.0f / (float) n);
    for (int64_t i = 0; i < n; i++) {
        const float u = next_uniform(&state);
        row[i] = is_norm ? 1.0f + 0.1f * u : a * u;
    }
}

static void * synth_fill_worker(void * arg) {
    struct synth_fill_job * job = (struct synth_fill_job *) arg;
    float * row = NULL;
    float * ones = NULL; // a flat importance matrix, for the types that need one (random weights have no better)
    int64_t row_cap = 0;
    for (int64_t id = 0; id < gguf_get_n_tensors(job->gguf); id++) {
        const char * name = gguf_get_tensor_name(job->gguf, id);
        const struct ggml_tensor * t = job->tensors[id];
        const int64_t ne0 = t->ne[0], nrows = ggml_nrows(t);
        if (ne0 > row_cap) {
            free(row);
            free(ones);
            row  = (float *) malloc((size_t) ne0 * sizeof(float));
            ones = (float *) malloc((size_t) ne0 * sizeof(float));
            row_cap = ne0;
            if (row == NULL || ones == NULL) {
                free(row);
                free(ones);
                job->ok = false;
                return NULL;
            }
            for (int64_t i = 0; i < ne0; i++) {
                ones[i] = 1.0f;
            }
        }
        uint8_t * dst = job->data + gguf_get_tensor_offset(job->gguf, id);
        const size_t row_size = ggml_row_size(t->type, ne0);
        for (int64_t r = job->ith; r < nrows; r += job->nth) {
            const uint64_t state = mix64(job->p->seed ^ mix64(((uint64_t) id << 32) + (uint64_t) r));
            synth_fill_row(row, ne0, state, name);
            ggml_quantize_chunk(t->type, row, dst + (size_t) r * row_size, 0, 1, ne0,
                                ggml_quantize_requires_imatrix(t->type) ? ones : NULL);
        }
    }
    free(row);
    free(ones);
    return NULL;
}

static bool synth_fill(const struct run_synth_params * p, struct gguf_context * gguf, struct ggml_tensor ** tensors, uint8_t * data) {
    // the bytes do not depend on the count: no more threads than cores (-t may ask for more than can start)
    const long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
    const int nth = p->n_threads <= 0 ? 1 : n_cpu > 0 && p->n_threads > n_cpu ? (int) n_cpu : p->n_threads;
    struct synth_fill_job * jobs = (struct synth_fill_job *) run_calloc((size_t) nth, sizeof(*jobs), "the weight generator");
    pthread_t * threads = (pthread_t *) run_calloc((size_t) nth, sizeof(pthread_t), "the weight generator");
    bool * started = (bool *) run_calloc((size_t) nth, sizeof(bool), "the weight generator");
    bool ok = jobs != NULL && threads != NULL && started != NULL;
    for (int i = 0; ok && i < nth; i++) {
        jobs[i] = (struct synth_fill_job) { .p = p, .gguf = gguf, .tensors = tensors, .data = data, .ith = i, .nth = nth, .ok = true };
    }
    for (int i = 1; ok && i < nth; i++) {
        started[i] = pthread_create(&threads[i], NULL, synth_fill_worker, &jobs[i]) == 0;
    }
    // jobs are independent (rows ith, ith + nth, ...): those without a thread run here
    for (int i = 0; ok && i < nth; i++) {
        if (!started[i]) {
            synth_fill_worker(&jobs[i]);
        }
    }
    for (int i = 0; started != NULL && i < nth; i++) {
        if (started[i]) {
            pthread_join(threads[i], NULL);
        }
    }
    for (int i = 0; ok && i < nth; i++) {
        ok = jobs[i].ok;
    }
    if (!ok) {
        run_error("out of memory generating the synthetic weights");
    }
    free(jobs);
    free(threads);
    free(started);
    return ok;
}

size_t run_synth_weight_bytes(const struct run_synth_params * p) {
    const struct run_arch * arch = run_arch_find(p->arch != NULL ? p->arch : "llama");
    const int64_t blck = ggml_blck_size(p->wtype);
    // sizes the type cannot hold: run_synth_source says why
    if (arch == NULL || blck <= 0 || p->n_embd <= 0 || p->n_ff <= 0 || p->n_embd % blck != 0 || p->n_ff % blck != 0 ||
        (arch->moe && (p->n_ff_exp <= 0 || p->n_ff_exp % blck != 0))) {
        return 0;
    }
    size_t bytes = 0;
    return synth_tensors(NULL, NULL, p, arch, &bytes) ? bytes : 0;
}

static void synth_release(void * base, size_t size) {
    (void) size;
    free(base);
}

bool run_synth_source(const struct run_synth_params * p, struct run_weight_source * src) {
    memset(src, 0, sizeof(*src));
    src->name = "synthetic";
    const struct run_arch * arch = NULL;
    if (!synth_check(p, &arch)) {
        return false;
    }
    size_t bytes = 0;
    if (!synth_tensors(NULL, NULL, p, arch, &bytes)) {
        run_error("cannot allocate the synthetic weights: with embedding %lld, feed-forward %lld, %lld layers and vocabulary %lld "
                  "they exceed the address space (%zu bytes)", (long long) p->n_embd, (long long) p->n_ff,
                  (long long) p->n_layer, (long long) p->n_vocab, (size_t) SIZE_MAX);
        return false;
    }
    const size_t n_tensors = (size_t) (3 + arch->n_layer_tensors * p->n_layer);
    const struct ggml_init_params ip = { .mem_size = n_tensors * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    src->meta = ggml_init(ip);
    src->gguf = gguf_init_empty();
    if (src->meta == NULL || src->gguf == NULL) {
        run_error("out of memory creating the synthetic model");
        run_weight_source_free(src);
        return false;
    }
    synth_set_hparams(src->gguf, p, arch);
    bool ok = synth_set_vocab(src->gguf, p->n_vocab);
    if (ok) {
        ok = synth_tensors(src->meta, src->gguf, p, arch, &bytes) && run_source_index_tensors(src);
    }
    if (ok) {
        const int64_t last = gguf_get_n_tensors(src->gguf) - 1;
        const size_t align = gguf_get_alignment(src->gguf);
        src->size = (gguf_get_tensor_offset(src->gguf, last) + gguf_get_tensor_size(src->gguf, last) + align - 1) / align * align;
        void * mem = NULL;
        if (posix_memalign(&mem, (size_t) sysconf(_SC_PAGESIZE), src->size) != 0) {
            char sz[32];
            run_error("cannot allocate %s for the synthetic weights", run_fmt_size(src->size, sz, sizeof(sz)));
            ok = false;
        } else {
            src->base    = mem;
            src->release = synth_release;
            ok = synth_fill(p, src->gguf, src->tensors, (uint8_t *) mem);
        }
    }
    if (!ok) {
        run_weight_source_free(src);
    }
    return ok;
}
