// tokenizer.c: the vocabulary of a GGUF model (pieces, types, special
// tokens, merges), the cutting of a text at the special tokens written in it
// before the SentencePiece or BPE tokenizer sees it, token pieces and
// streaming detokenisation. The merging itself is in tokenizer-spm.c and
// tokenizer-bpe.c.

#include "tokenizer-impl.h"
#include "run-common.h"
#include "unicode.h"

#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_SPACE_ESCAPE     "\xe2\x96\x81" // U+2581, what SentencePiece writes for a space
#define RUN_SPACE_ESCAPE_LEN 3

//
// piece -> token table
//

static uint32_t vocab_hash(const char * s, size_t n) {
    uint32_t h = 2166136261u; // FNV-1a
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t) s[i];
        h *= 16777619u;
    }
    return h;
}

int32_t run_vocab_find(const struct run_vocab * vocab, const char * text, size_t len) {
    if (vocab->table == NULL) {
        return -1;
    }
    for (uint32_t slot = vocab_hash(text, len) & vocab->table_mask;; slot = (slot + 1) & vocab->table_mask) {
        const int32_t id = vocab->table[slot];
        if (id < 0) {
            return -1;
        }
        if (vocab->len[id] == len && memcmp(vocab->text[id], text, len) == 0) {
            return id;
        }
    }
}

// the later of two tokens with the same piece wins, as in upstream's map
static bool vocab_build_table(struct run_vocab * vocab) {
    uint32_t size = 16;
    while (size < 2u * (uint32_t) vocab->n_tokens) {
        size *= 2;
    }
    vocab->table = (int32_t *) run_malloc(size * sizeof(int32_t), "the vocabulary table");
    if (vocab->table == NULL) {
        return false;
    }
    memset(vocab->table, 0xff, size * sizeof(int32_t));
    vocab->table_mask = size - 1;
    for (int32_t id = 0; id < vocab->n_tokens; id++) {
        uint32_t slot = vocab_hash(vocab->text[id], vocab->len[id]) & vocab->table_mask;
        for (;; slot = (slot + 1) & vocab->table_mask) {
            const int32_t other = vocab->table[slot];
            if (other < 0 || (vocab->len[other] == vocab->len[id] &&
                              memcmp(vocab->text[other], vocab->text[id], vocab->len[id]) == 0)) {
                break;
            }
        }
        vocab->table[slot] = id;
    }
    return true;
}

//
// byte tokens
//

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

// the byte a "<0xXX>" piece stands for, or -1
static int piece_byte_value(const char * text, size_t len) {
    if (len != 6 || text[0] != '<' || text[1] != '0' || text[2] != 'x' || text[5] != '>') {
        return -1;
    }
    const int hi = hex_digit(text[3]);
    const int lo = hex_digit(text[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Byte fallback: "<0xXX>", else the byte as a one-character piece, else unk;
// for BPE the byte's character in GPT-2's byte alphabet.
static void vocab_find_byte_tokens(struct run_vocab * vocab) {
    for (int b = 0; b < 256; b++) {
        if (vocab->kind == RUN_VOCAB_BPE) {
            char piece[4];
            const size_t n = run_utf8_encode(run_bpe_byte_to_cp((uint8_t) b), piece);
            const int32_t id = run_vocab_find(vocab, piece, n);
            vocab->byte_token[b] = id >= 0 ? id : vocab->unk;
            continue;
        }
        char piece[8];
        snprintf(piece, sizeof(piece), "<0x%02X>", b);
        int32_t id = run_vocab_find(vocab, piece, 6);
        if (id < 0) {
            const char c = (char) b;
            id = run_vocab_find(vocab, &c, 1);
        }
        vocab->byte_token[b] = id >= 0 ? id : vocab->unk;
    }
}

//
// construction
//

static bool vocab_alloc(struct run_vocab * vocab, int32_t n_tokens) {
    memset(vocab, 0, sizeof(*vocab));
    vocab->n_tokens = n_tokens;
    vocab->text  = (char **)    run_calloc((size_t) n_tokens, sizeof(char *), "the vocabulary");
    vocab->len   = (uint32_t *) run_calloc((size_t) n_tokens, sizeof(uint32_t), "the vocabulary");
    vocab->score = (float *)    run_calloc((size_t) n_tokens, sizeof(float), "the vocabulary");
    vocab->type  = (int32_t *)  run_calloc((size_t) n_tokens, sizeof(int32_t), "the vocabulary");
    vocab->kind = RUN_VOCAB_SPM;
    vocab->pre  = RUN_PRETOK_GPT2;
    vocab->bos = vocab->eos = vocab->eot = vocab->unk = -1;
    vocab->add_bos          = true;
    vocab->add_eos          = false;
    vocab->add_space_prefix = true;
    vocab->ignore_merges    = false;
    return vocab->text != NULL && vocab->len != NULL && vocab->score != NULL && vocab->type != NULL;
}

static bool vocab_set_piece(struct run_vocab * vocab, int32_t id, const char * text) {
    const size_t n = strlen(text);
    if (n > UINT32_MAX - 1) {
        run_error("token %d is too long", (int) id);
        return false;
    }
    vocab->text[id] = run_strdup(text);
    vocab->len[id]  = (uint32_t) n;
    return vocab->text[id] != NULL;
}

static bool vocab_check_special(const struct run_vocab * vocab) {
    const struct { const char * name; int32_t id; } special[] = {
        { "bos", vocab->bos }, { "eos", vocab->eos }, { "end-of-turn", vocab->eot }, { "unknown", vocab->unk },
    };
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
        if (special[i].id < -1 || special[i].id >= vocab->n_tokens) {
            run_error("the %s token id %d is outside the vocabulary of %d tokens",
                      special[i].name, (int) special[i].id, (int) vocab->n_tokens);
            return false;
        }
    }
    if (vocab->add_bos && vocab->bos < 0) {
        run_error("the vocabulary asks for a bos token but has none");
        return false;
    }
    if (vocab->add_eos && vocab->eos < 0) {
        run_error("the vocabulary asks for an eos token but has none");
        return false;
    }
    return true;
}

struct special_entry {
    uint32_t len;
    int32_t  id;
};

static int special_longest_first(const void * a, const void * b) {
    const struct special_entry * x = (const struct special_entry *) a;
    const struct special_entry * y = (const struct special_entry *) b;
    if (x->len != y->len) {
        return x->len > y->len ? -1 : 1;
    }
    return x->id < y->id ? -1 : x->id > y->id;
}

static bool token_is_special(const struct run_vocab * vocab, int32_t id) {
    const int32_t t = vocab->type[id];
    return t == RUN_TOKEN_TYPE_CONTROL || t == RUN_TOKEN_TYPE_USER_DEFINED || t == RUN_TOKEN_TYPE_UNKNOWN;
}

// the tokens matched in text: control, user-defined and unknown ones, longest first
static bool vocab_collect_special(struct run_vocab * vocab) {
    int32_t n = 0;
    for (int32_t id = 0; id < vocab->n_tokens; id++) {
        n += token_is_special(vocab, id) && vocab->len[id] > 0;
    }
    if (n == 0) {
        return true;
    }
    struct special_entry * e = (struct special_entry *) run_malloc((size_t) n * sizeof(*e), "the special tokens");
    vocab->special = (int32_t *) run_malloc((size_t) n * sizeof(int32_t), "the special tokens");
    if (e == NULL || vocab->special == NULL) {
        free(e);
        return false;
    }
    int32_t k = 0;
    for (int32_t id = 0; id < vocab->n_tokens; id++) {
        if (token_is_special(vocab, id) && vocab->len[id] > 0) {
            e[k++] = (struct special_entry) { .len = vocab->len[id], .id = id };
        }
    }
    qsort(e, (size_t) n, sizeof(*e), special_longest_first);
    for (int32_t i = 0; i < n; i++) {
        vocab->special[i] = e[i].id;
    }
    vocab->n_special = n;
    free(e);
    return true;
}

static bool vocab_finish(struct run_vocab * vocab) {
    for (int32_t id = 0; id < vocab->n_tokens; id++) {
        if (vocab->type[id] == RUN_TOKEN_TYPE_UNDEFINED) {
            vocab->type[id] = piece_byte_value(vocab->text[id], vocab->len[id]) >= 0 ? RUN_TOKEN_TYPE_BYTE
                                                                                      : RUN_TOKEN_TYPE_NORMAL;
        }
    }
    if (!vocab_check_special(vocab) || !vocab_build_table(vocab) || !vocab_collect_special(vocab)) {
        return false;
    }
    vocab_find_byte_tokens(vocab);
    return true;
}

bool run_vocab_init(struct run_vocab * vocab, int32_t n_tokens, const char * const * text,
                    const float * score, const int32_t * type, int32_t bos, int32_t eos, int32_t unk) {
    if (n_tokens <= 0) {
        run_error("a vocabulary needs at least one token");
        memset(vocab, 0, sizeof(*vocab));
        return false;
    }
    if (!vocab_alloc(vocab, n_tokens)) {
        run_vocab_free(vocab);
        return false;
    }
    for (int32_t id = 0; id < n_tokens; id++) {
        if (!vocab_set_piece(vocab, id, text[id])) {
            run_vocab_free(vocab);
            return false;
        }
        vocab->score[id] = score != NULL ? score[id] : 0.0f;
        vocab->type[id]  = type != NULL ? type[id] : RUN_TOKEN_TYPE_UNDEFINED;
    }
    vocab->bos = bos;
    vocab->eos = eos;
    vocab->unk = unk;
    vocab->add_bos = bos >= 0;
    if (!vocab_finish(vocab)) {
        run_vocab_free(vocab);
        return false;
    }
    return true;
}

void run_vocab_free(struct run_vocab * vocab) {
    if (vocab->text != NULL) {
        for (int32_t id = 0; id < vocab->n_tokens; id++) {
            free(vocab->text[id]);
        }
    }
    free(vocab->text);
    free(vocab->len);
    free(vocab->score);
    free(vocab->type);
    free(vocab->table);
    free(vocab->merges);
    free(vocab->special);
    memset(vocab, 0, sizeof(*vocab));
}

//
// reading the GGUF keys
//

// an array key of n elements of type elem_type; absent: NULL without error
static const void * gguf_array(const struct gguf_context * gguf, const char * key, enum gguf_type elem_type,
                               size_t n, bool * ok) {
    const int64_t id = gguf_find_key(gguf, key);
    if (id < 0) {
        return NULL;
    }
    if (gguf_get_kv_type(gguf, id) != GGUF_TYPE_ARRAY || gguf_get_arr_type(gguf, id) != elem_type ||
        gguf_get_arr_n(gguf, id) != n) {
        run_error("key %s must be an array of %zu %s values", key, n, gguf_type_name(elem_type));
        *ok = false;
        return NULL;
    }
    return elem_type == GGUF_TYPE_STRING ? NULL : gguf_get_arr_data(gguf, id);
}

// an integer key that fits in int32 (any integer type), or def if absent
static bool gguf_token_id(const struct gguf_context * gguf, const char * key, int32_t def, int32_t * out) {
    *out = def;
    const int64_t id = gguf_find_key(gguf, key);
    if (id < 0) {
        return true;
    }
    int64_t v;
    switch (gguf_get_kv_type(gguf, id)) {
        case GGUF_TYPE_UINT32: v = gguf_get_val_u32(gguf, id); break;
        case GGUF_TYPE_INT32:  v = gguf_get_val_i32(gguf, id); break;
        case GGUF_TYPE_UINT64: v = gguf_get_val_u64(gguf, id) > INT32_MAX ? -2 : (int64_t) gguf_get_val_u64(gguf, id); break;
        case GGUF_TYPE_INT64:  v = gguf_get_val_i64(gguf, id); break;
        default:
            run_error("key %s must be an integer", key);
            return false;
    }
    if (v < -1 || v > INT32_MAX) {
        run_error("key %s has an invalid token id", key);
        return false;
    }
    *out = (int32_t) v;
    return true;
}

static bool gguf_bool_or(const struct gguf_context * gguf, const char * key, bool def, bool * out) {
    *out = def;
    const int64_t id = gguf_find_key(gguf, key);
    if (id < 0) {
        return true;
    }
    if (gguf_get_kv_type(gguf, id) != GGUF_TYPE_BOOL) {
        run_error("key %s must be a bool", key);
        return false;
    }
    *out = gguf_get_val_bool(gguf, id);
    return true;
}

// the string value of key, NULL if absent; *ok = false if it is no string
static const char * gguf_str_or_null(const struct gguf_context * gguf, const char * key, bool * ok) {
    const int64_t id = gguf_find_key(gguf, key);
    if (id < 0) {
        return NULL;
    }
    if (gguf_get_kv_type(gguf, id) != GGUF_TYPE_STRING) {
        run_error("key %s must be a string", key);
        *ok = false;
        return NULL;
    }
    return gguf_get_val_str(gguf, id);
}

// tokenizer.ggml.model and, for BPE, tokenizer.ggml.pre, with the defaults they imply
static bool vocab_read_model(struct run_vocab * vocab, const struct gguf_context * gguf) {
    bool ok = true;
    const char * model = gguf_str_or_null(gguf, "tokenizer.ggml.model", &ok);
    if (!ok) {
        return false;
    }
    if (model == NULL) {
        run_error("the model has no vocabulary (key tokenizer.ggml.model is missing)");
        return false;
    }
    if (strcmp(model, "llama") == 0) {
        vocab->kind             = RUN_VOCAB_SPM;
        vocab->add_bos          = true;
        vocab->add_space_prefix = true;
        return true;
    }
    if (strcmp(model, "gpt2") != 0) {
        run_error("tokenizer '%s' is not supported (only 'llama', SentencePiece, and 'gpt2', byte-level BPE)", model);
        return false;
    }
    vocab->kind = RUN_VOCAB_BPE;
    const char * pre = gguf_str_or_null(gguf, "tokenizer.ggml.pre", &ok);
    if (!ok) {
        return false;
    }
    if (pre == NULL) {
        run_error("the BPE vocabulary does not say its pre-tokenizer (key tokenizer.ggml.pre; known: %s)",
                  run_pretok_known_names());
        return false;
    }
    if (!run_pretok_from_name(pre, &vocab->pre)) {
        run_error("pre-tokenizer '%s' is not supported (known: %s)", pre, run_pretok_known_names());
        return false;
    }
    const bool llama3_like = vocab->pre == RUN_PRETOK_LLAMA3 || vocab->pre == RUN_PRETOK_TEKKEN;
    vocab->ignore_merges    = llama3_like;
    vocab->add_bos          = llama3_like;
    vocab->add_space_prefix = false;
    return true;
}

// the end-of-turn token: the key, else a token with one of the usual texts
static bool vocab_find_eot(struct run_vocab * vocab, const struct gguf_context * gguf) {
    if (!gguf_token_id(gguf, "tokenizer.ggml.eot_token_id", -1, &vocab->eot)) {
        return false;
    }
    static const char * const texts[] = { "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>" };
    for (size_t i = 0; vocab->eot < 0 && i < sizeof(texts) / sizeof(texts[0]); i++) {
        vocab->eot = run_vocab_find(vocab, texts[i], strlen(texts[i]));
    }
    return true;
}

static bool vocab_read_keys(struct run_vocab * vocab, const struct gguf_context * gguf) {
    const int64_t id_tokens = gguf_find_key(gguf, "tokenizer.ggml.tokens");
    if (id_tokens < 0) {
        run_error("key tokenizer.ggml.tokens is missing");
        return false;
    }
    if (gguf_get_kv_type(gguf, id_tokens) != GGUF_TYPE_ARRAY || gguf_get_arr_type(gguf, id_tokens) != GGUF_TYPE_STRING) {
        run_error("key tokenizer.ggml.tokens must be an array of strings");
        return false;
    }
    const size_t n = gguf_get_arr_n(gguf, id_tokens);
    if (n == 0 || n > INT32_MAX) {
        run_error("the vocabulary has %zu tokens", n);
        return false;
    }
    const struct run_vocab model = *vocab; // what vocab_read_model found
    if (!vocab_alloc(vocab, (int32_t) n)) {
        return false;
    }
    vocab->kind             = model.kind;
    vocab->pre              = model.pre;
    vocab->ignore_merges    = model.ignore_merges;
    vocab->add_bos          = model.add_bos;
    vocab->add_space_prefix = model.add_space_prefix;
    const bool spm = vocab->kind == RUN_VOCAB_SPM;
    bool ok = true;
    const float   * scores = (const float *)   gguf_array(gguf, "tokenizer.ggml.scores",     GGUF_TYPE_FLOAT32, n, &ok);
    const int32_t * types  = (const int32_t *) gguf_array(gguf, "tokenizer.ggml.token_type", GGUF_TYPE_INT32,   n, &ok);
    for (size_t i = 0; ok && i < n; i++) {
        ok = vocab_set_piece(vocab, (int32_t) i, gguf_get_arr_str(gguf, id_tokens, i));
        vocab->score[i] = scores != NULL ? scores[i] : 0.0f;
        vocab->type[i]  = types != NULL ? types[i] : RUN_TOKEN_TYPE_UNDEFINED;
    }
    // SentencePiece's usual ids when the keys are absent; BPE vocabularies have no usual ids
    return ok &&
           gguf_token_id(gguf, "tokenizer.ggml.bos_token_id", spm ? 1 : -1, &vocab->bos) &&
           gguf_token_id(gguf, "tokenizer.ggml.eos_token_id", spm ? 2 : -1, &vocab->eos) &&
           gguf_token_id(gguf, "tokenizer.ggml.unknown_token_id", spm ? 0 : -1, &vocab->unk) &&
           gguf_bool_or(gguf, "tokenizer.ggml.add_bos_token", vocab->add_bos, &vocab->add_bos) &&
           gguf_bool_or(gguf, "tokenizer.ggml.add_eos_token", false, &vocab->add_eos) &&
           gguf_bool_or(gguf, "tokenizer.ggml.add_space_prefix", vocab->add_space_prefix, &vocab->add_space_prefix);
}

bool run_vocab_load(struct run_vocab * vocab, const struct gguf_context * gguf) {
    memset(vocab, 0, sizeof(*vocab));
    if (!vocab_read_model(vocab, gguf) || !vocab_read_keys(vocab, gguf) || !vocab_finish(vocab) ||
        !vocab_find_eot(vocab, gguf) || !vocab_check_special(vocab) ||
        (vocab->kind == RUN_VOCAB_BPE && !run_bpe_load_merges(vocab, gguf))) {
        run_vocab_free(vocab);
        return false;
    }
    return true;
}

//
// what the tokenizers share: the queue of pairs, characters as symbols
//

static bool bigram_before(const struct run_bigram * a, const struct run_bigram * b) {
    return a->priority > b->priority || (a->priority == b->priority && a->left < b->left);
}

bool run_bigram_push(struct run_bigram_heap * h, struct run_bigram item) {
    if (h->n == h->cap) {
        const size_t cap = h->cap == 0 ? 64 : 2 * h->cap;
        struct run_bigram * items = (struct run_bigram *) realloc(h->items, cap * sizeof(*items));
        if (items == NULL) {
            run_error("out of memory while tokenising");
            return false;
        }
        h->items = items;
        h->cap   = cap;
    }
    size_t i = h->n++;
    while (i > 0 && bigram_before(&item, &h->items[(i - 1) / 2])) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = item;
    return true;
}

struct run_bigram run_bigram_pop(struct run_bigram_heap * h) {
    const struct run_bigram top  = h->items[0];
    const struct run_bigram last = h->items[--h->n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n) {
            break;
        }
        if (child + 1 < h->n && bigram_before(&h->items[child + 1], &h->items[child])) {
            child++;
        }
        if (!bigram_before(&h->items[child], &last)) {
            break;
        }
        h->items[i] = h->items[child];
        i = child;
    }
    if (h->n > 0) {
        h->items[i] = last;
    }
    return top;
}

// UTF-8 sequence length from the first byte (continuation bytes count as one)
static size_t utf8_len(uint8_t c) {
    static const uint8_t lens[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return lens[c >> 4];
}

int32_t run_symbols_split(struct run_symbol * symbols, const char * text, size_t len) {
    int32_t n = 0;
    for (size_t offs = 0; offs < len; n++) {
        size_t cl = utf8_len((uint8_t) text[offs]);
        cl = cl < len - offs ? cl : len - offs;
        symbols[n] = (struct run_symbol) {
            .prev = n - 1, .next = offs + cl == len ? -1 : n + 1, .start = offs, .n = cl, .token = -1,
        };
        offs += cl;
    }
    return n;
}

//
// tokenisation: special tokens first, then the vocabulary's tokenizer
//

// a piece of the text: raw text [start, start + len), or a special token
struct fragment {
    size_t  start;
    size_t  len;
    int32_t token; // -1: raw text
};

struct fragment_list {
    struct fragment * items;
    size_t n;
    size_t cap;
};

static bool fragment_push(struct fragment_list * l, struct fragment f) {
    if (l->n == l->cap) {
        const size_t cap = l->cap == 0 ? 16 : 2 * l->cap;
        struct fragment * items = (struct fragment *) realloc(l->items, cap * sizeof(*items));
        if (items == NULL) {
            run_error("out of memory while tokenising");
            return false;
        }
        l->items = items;
        l->cap   = cap;
    }
    l->items[l->n++] = f;
    return true;
}

// cuts the raw fragments of in at every occurrence of token, into out
static bool split_at_token(const struct run_vocab * vocab, const char * text, int32_t token,
                           const struct fragment_list * in, struct fragment_list * out) {
    const char * piece = vocab->text[token];
    const size_t plen  = vocab->len[token];
    for (size_t f = 0; f < in->n; f++) {
        const struct fragment frag = in->items[f];
        if (frag.token >= 0 || frag.len < plen) {
            if (!fragment_push(out, frag)) {
                return false;
            }
            continue;
        }
        const size_t end = frag.start + frag.len;
        size_t raw = frag.start;
        for (size_t pos = frag.start; pos + plen <= end;) {
            const char * first = (const char *) memchr(text + pos, piece[0], end - plen + 1 - pos);
            if (first == NULL) {
                break;
            }
            pos = (size_t) (first - text);
            if (memcmp(text + pos, piece, plen) != 0) {
                pos++;
                continue;
            }
            if ((pos > raw && !fragment_push(out, (struct fragment) { raw, pos - raw, -1 })) ||
                !fragment_push(out, (struct fragment) { pos, plen, token })) {
                return false;
            }
            pos += plen;
            raw = pos;
        }
        if (raw < end && !fragment_push(out, (struct fragment) { raw, end - raw, -1 })) {
            return false;
        }
    }
    return true;
}

// The text cut at the special tokens, the longest first (as upstream): a
// token found inside a longer one's match is not seen. Without parse_special
// only user-defined tokens count.
static bool partition_special(const struct run_vocab * vocab, const char * text, size_t len, bool parse_special,
                              struct fragment_list * frags) {
    struct fragment_list other = { NULL, 0, 0 };
    bool ok = fragment_push(frags, (struct fragment) { 0, len, -1 });
    for (int32_t i = 0; ok && i < vocab->n_special; i++) {
        const int32_t token = vocab->special[i];
        if (!parse_special && vocab->type[token] != RUN_TOKEN_TYPE_USER_DEFINED) {
            continue;
        }
        other.n = 0;
        ok = split_at_token(vocab, text, token, frags, &other);
        const struct fragment_list tmp = *frags;
        *frags = other;
        other  = tmp;
    }
    free(other.items);
    return ok;
}

// "the character 'é' (U+00E9) at byte 5" for the character holding byte at,
// or "the byte 0xFF at byte 5" where the bytes are no UTF-8
static void report_unencodable(const struct run_vocab * vocab, const char * text, size_t len, size_t at) {
    size_t start = at;
    while (start > 0 && at - start < 3 && ((uint8_t) text[start] & 0xC0) == 0x80) {
        start--;
    }
    uint32_t cp = 0;
    size_t n = run_utf8_decode(text + start, len - start, &cp);
    char again[4];
    if (n > 4 || run_utf8_encode(cp, again) != n || memcmp(again, text + start, n) != 0) {
        n = 0; // no UTF-8 there (the decoder gave U+FFFD for it)
    }
    char what[64];
    if (n > 0 && start + n > at && cp >= 0x20 && cp != 0x7F) {
        snprintf(what, sizeof(what), "the character '%.*s' (U+%04X)", (int) n, text + start, (unsigned) cp);
    } else if (n > 0 && start + n > at) {
        snprintf(what, sizeof(what), "the character U+%04X", (unsigned) cp);
    } else {
        snprintf(what, sizeof(what), "the byte 0x%02X", (unsigned) (uint8_t) text[at]);
        start = at;
    }
    run_error("the text cannot be encoded: %s at byte %zu has no token, and the vocabulary has %s",
              what, start, vocab->kind == RUN_VOCAB_SPM ? "no byte tokens for it and no unknown token"
                                                        : "no token for its bytes and no unknown token");
}

int64_t run_tokenize_opts(const struct run_vocab * vocab, const char * text, size_t len,
                          const struct run_tokenize_opts * opts, int32_t * out, int64_t capacity) {
    struct run_token_out o = { .out = out, .capacity = capacity, .n = 0, .unencodable = false, .bad_at = 0 };
    if (opts->add_special && vocab->add_bos && vocab->bos >= 0) {
        run_token_out_push(&o, vocab->bos);
    }
    struct fragment_list frags = { NULL, 0, 0 };
    bool ok = len == 0 || partition_special(vocab, text, len, opts->parse_special, &frags);
    // SentencePiece puts a space in front of the text and after each special token
    bool after_special = true;
    for (size_t f = 0; ok && f < frags.n; f++) {
        const struct fragment * frag = &frags.items[f];
        if (frag->token >= 0) {
            run_token_out_push(&o, frag->token);
            after_special = true;
            continue;
        }
        if (vocab->kind == RUN_VOCAB_SPM) {
            ok = run_spm_tokenize(vocab, text + frag->start, frag->len, vocab->add_space_prefix && after_special, &o);
        } else {
            ok = run_bpe_tokenize(vocab, text + frag->start, frag->len, &o);
        }
        if (ok && o.unencodable) {
            report_unencodable(vocab, text, len, frag->start + (o.bad_at < frag->len ? o.bad_at : 0));
            ok = false;
        }
        after_special = false;
    }
    free(frags.items);
    if (ok && opts->add_special && vocab->add_eos && vocab->eos >= 0) {
        run_token_out_push(&o, vocab->eos);
    }
    return ok ? o.n : -1;
}

int64_t run_tokenize(const struct run_vocab * vocab, const char * text, size_t len, bool add_special,
                     int32_t * out, int64_t capacity) {
    const struct run_tokenize_opts opts = { .add_special = add_special, .parse_special = true };
    return run_tokenize_opts(vocab, text, len, &opts, out, capacity);
}

bool run_vocab_is_eog(const struct run_vocab * vocab, int32_t token) {
    return token >= 0 && (token == vocab->eos || token == vocab->eot);
}

//
// pieces
//

static size_t piece_copy(const char * src, size_t n, char * buf, size_t size) {
    if (size > 0) {
        memcpy(buf, src, n < size ? n : size);
    }
    return n;
}

static void piece_put(char * buf, size_t size, size_t at, char c) {
    if (at < size) {
        buf[at] = c;
    }
}

// a BPE piece: each character of the byte alphabet is its byte, others stay as they are
static size_t bpe_piece(const char * text, size_t len, char * buf, size_t size) {
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        const size_t cl = run_utf8_decode(text + i, len - i, &cp);
        const int b = run_bpe_cp_to_byte(cp);
        if (b >= 0) {
            piece_put(buf, size, n++, (char) b);
        } else {
            for (size_t j = 0; j < cl; j++) {
                piece_put(buf, size, n++, text[i + j]);
            }
        }
        i += cl;
    }
    return n;
}

// a SentencePiece piece: "▁" is a space
static size_t spm_piece(const char * text, size_t len, char * buf, size_t size) {
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        if (len - i >= RUN_SPACE_ESCAPE_LEN && memcmp(text + i, RUN_SPACE_ESCAPE, RUN_SPACE_ESCAPE_LEN) == 0) {
            piece_put(buf, size, n++, ' ');
            i += RUN_SPACE_ESCAPE_LEN;
        } else {
            piece_put(buf, size, n++, text[i++]);
        }
    }
    return n;
}

size_t run_token_to_piece(const struct run_vocab * vocab, int32_t token, char * buf, size_t size) {
    if (token < 0 || token >= vocab->n_tokens) {
        return 0;
    }
    const char * text = vocab->text[token];
    const size_t len  = vocab->len[token];
    switch (vocab->type[token]) {
        case RUN_TOKEN_TYPE_BYTE: {
            const int b = piece_byte_value(text, len);
            if (b < 0) {
                break;
            }
            const char c = (char) b;
            return piece_copy(&c, 1, buf, size);
        }
        case RUN_TOKEN_TYPE_CONTROL:
        case RUN_TOKEN_TYPE_UNUSED:
            return 0;
        case RUN_TOKEN_TYPE_USER_DEFINED:
            return piece_copy(text, len, buf, size);
        case RUN_TOKEN_TYPE_UNKNOWN:
            if (vocab->kind == RUN_VOCAB_SPM) {
                return piece_copy("\xe2\x96\x85", 3, buf, size); // U+2585, as upstream prints unknown tokens
            }
            return piece_copy(text, len, buf, size);
        default:
            break;
    }
    return vocab->kind == RUN_VOCAB_BPE ? bpe_piece(text, len, buf, size) : spm_piece(text, len, buf, size);
}

//
// streaming detokenisation
//

bool run_detok_push(struct run_detok * d, const struct run_vocab * vocab, int32_t token, const char ** text, size_t * n) {
    // drop what the last call handed out
    if (d->n_out > 0) {
        memmove(d->buf, d->buf + d->n_out, d->n - d->n_out);
        d->n -= d->n_out;
        d->n_out = 0;
    }
    const size_t len = run_token_to_piece(vocab, token, NULL, 0);
    if (d->n + len > d->cap) {
        size_t cap = d->cap == 0 ? 64 : d->cap;
        while (cap < d->n + len) {
            cap *= 2;
        }
        char * buf = (char *) realloc(d->buf, cap);
        if (buf == NULL) {
            run_error("out of memory while detokenising");
            return false;
        }
        d->buf = buf;
        d->cap = cap;
    }
    if (len > 0) { // an empty piece (a control token) before any text leaves buf NULL
        d->n += run_token_to_piece(vocab, token, d->buf + d->n, len);
    }
    d->n_out = d->buf != NULL ? run_utf8_complete_prefix(d->buf, d->n) : 0;
    *text = d->buf != NULL ? d->buf : "";
    *n    = d->n_out;
    return true;
}

void run_detok_flush(struct run_detok * d, const char ** text, size_t * n) {
    *text = d->buf != NULL ? d->buf + d->n_out : "";
    *n    = d->n - d->n_out;
    d->n = d->n_out = 0;
}

void run_detok_free(struct run_detok * d) {
    free(d->buf);
    memset(d, 0, sizeof(*d));
}
