// tokenizer.c: the SentencePiece vocabulary of a GGUF model, tokenisation
// by score-ordered merging, and token pieces for printing.

#include "tokenizer.h"
#include "run-common.h"

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

// Byte fallback: "<0xXX>", else the byte as a one-character piece, else unk.
static void vocab_find_byte_tokens(struct run_vocab * vocab) {
    for (int b = 0; b < 256; b++) {
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
    vocab->bos = vocab->eos = vocab->unk = -1;
    vocab->add_bos          = true;
    vocab->add_space_prefix = true;
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
        { "bos", vocab->bos }, { "eos", vocab->eos }, { "unknown", vocab->unk },
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
    return true;
}

static bool vocab_finish(struct run_vocab * vocab) {
    for (int32_t id = 0; id < vocab->n_tokens; id++) {
        if (vocab->type[id] == RUN_TOKEN_TYPE_UNDEFINED) {
            vocab->type[id] = piece_byte_value(vocab->text[id], vocab->len[id]) >= 0 ? RUN_TOKEN_TYPE_BYTE
                                                                                      : RUN_TOKEN_TYPE_NORMAL;
        }
    }
    if (!vocab_check_special(vocab) || !vocab_build_table(vocab)) {
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

static bool vocab_check_model(const struct gguf_context * gguf) {
    const int64_t id = gguf_find_key(gguf, "tokenizer.ggml.model");
    if (id < 0) {
        run_error("the model has no vocabulary (key tokenizer.ggml.model is missing)");
        return false;
    }
    if (gguf_get_kv_type(gguf, id) != GGUF_TYPE_STRING) {
        run_error("key tokenizer.ggml.model must be a string");
        return false;
    }
    const char * model = gguf_get_val_str(gguf, id);
    if (strcmp(model, "llama") != 0) {
        run_error("tokenizer '%s' is not supported (only the SentencePiece tokenizer 'llama')", model);
        return false;
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
    if (!vocab_alloc(vocab, (int32_t) n)) {
        return false;
    }
    bool ok = true;
    const float   * scores = (const float *)   gguf_array(gguf, "tokenizer.ggml.scores",     GGUF_TYPE_FLOAT32, n, &ok);
    const int32_t * types  = (const int32_t *) gguf_array(gguf, "tokenizer.ggml.token_type", GGUF_TYPE_INT32,   n, &ok);
    for (size_t i = 0; ok && i < n; i++) {
        ok = vocab_set_piece(vocab, (int32_t) i, gguf_get_arr_str(gguf, id_tokens, i));
        vocab->score[i] = scores != NULL ? scores[i] : 0.0f;
        vocab->type[i]  = types != NULL ? types[i] : RUN_TOKEN_TYPE_UNDEFINED;
    }
    return ok &&
           gguf_token_id(gguf, "tokenizer.ggml.bos_token_id", 1, &vocab->bos) &&
           gguf_token_id(gguf, "tokenizer.ggml.eos_token_id", 2, &vocab->eos) &&
           gguf_token_id(gguf, "tokenizer.ggml.unknown_token_id", 0, &vocab->unk) &&
           gguf_bool_or(gguf, "tokenizer.ggml.add_bos_token", true, &vocab->add_bos) &&
           gguf_bool_or(gguf, "tokenizer.ggml.add_space_prefix", true, &vocab->add_space_prefix);
}

bool run_vocab_load(struct run_vocab * vocab, const struct gguf_context * gguf) {
    memset(vocab, 0, sizeof(*vocab));
    if (!vocab_check_model(gguf) || !vocab_read_keys(vocab, gguf) || !vocab_finish(vocab)) {
        run_vocab_free(vocab);
        return false;
    }
    return true;
}

//
// tokenisation
//

struct spm_symbol {
    int32_t prev;   // -1: first
    int32_t next;   // -1: last
    size_t  start;  // bytes [start, start + n) of the escaped text
    size_t  n;      // 0 once merged into its left neighbour
};

struct spm_bigram {
    int32_t left;
    int32_t right;
    float   score;
    size_t  size;   // bytes of the pair when it was queued: stale entries no longer match
};

// binary max-heap of bigrams: higher score first, then the leftmost
struct spm_heap {
    struct spm_bigram * items;
    size_t n;
    size_t cap;
};

static bool bigram_before(const struct spm_bigram * a, const struct spm_bigram * b) {
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static bool heap_push(struct spm_heap * h, struct spm_bigram item) {
    if (h->n == h->cap) {
        const size_t cap = h->cap == 0 ? 64 : 2 * h->cap;
        struct spm_bigram * items = (struct spm_bigram *) realloc(h->items, cap * sizeof(*items));
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

static struct spm_bigram heap_pop(struct spm_heap * h) {
    const struct spm_bigram top  = h->items[0];
    const struct spm_bigram last = h->items[--h->n];
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

struct spm_state {
    const struct run_vocab * vocab;
    const char         * text;     // escaped text
    struct spm_symbol  * symbols;
    struct spm_heap      heap;
};

// queues the pair (left, right) if their concatenation is a token
static bool spm_try_add_bigram(struct spm_state * s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) {
        return true;
    }
    const struct spm_symbol * l = &s->symbols[left];
    const size_t size = l->n + s->symbols[right].n;
    const int32_t token = run_vocab_find(s->vocab, s->text + l->start, size);
    if (token < 0) {
        return true;
    }
    const struct spm_bigram b = { .left = left, .right = right, .score = s->vocab->score[token], .size = size };
    return heap_push(&s->heap, b);
}

// the escaped text: a space in front (if the vocabulary wants one), every ' ' as U+2581
static char * spm_escape(const struct run_vocab * vocab, const char * text, size_t len, size_t * out_len) {
    size_t n_spaces = 0;
    for (size_t i = 0; i < len; i++) {
        n_spaces += text[i] == ' ';
    }
    // each space grows by two bytes, the prefix adds three
    const size_t size = len + 2 * n_spaces + (vocab->add_space_prefix ? RUN_SPACE_ESCAPE_LEN : 0) + 1;
    char * out = (char *) run_malloc(size, "the text to tokenise");
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    if (vocab->add_space_prefix) {
        memcpy(out + o, RUN_SPACE_ESCAPE, RUN_SPACE_ESCAPE_LEN);
        o += RUN_SPACE_ESCAPE_LEN;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(out + o, RUN_SPACE_ESCAPE, RUN_SPACE_ESCAPE_LEN);
            o += RUN_SPACE_ESCAPE_LEN;
        } else {
            out[o++] = text[i];
        }
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

// UTF-8 sequence length from the first byte (continuation bytes count as one)
static size_t utf8_len(uint8_t c) {
    static const uint8_t lens[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return lens[c >> 4];
}

static int32_t spm_split_chars(struct spm_state * s, size_t len) {
    int32_t n = 0;
    for (size_t offs = 0; offs < len; n++) {
        size_t cl = utf8_len((uint8_t) s->text[offs]);
        cl = cl < len - offs ? cl : len - offs;
        s->symbols[n] = (struct spm_symbol) { .prev = n - 1, .next = offs + cl == len ? -1 : n + 1, .start = offs, .n = cl };
        offs += cl;
    }
    return n;
}

static bool spm_merge(struct spm_state * s, int32_t n_symbols) {
    for (int32_t i = 1; i < n_symbols; i++) {
        if (!spm_try_add_bigram(s, i - 1, i)) {
            return false;
        }
    }
    while (s->heap.n > 0) {
        const struct spm_bigram b = heap_pop(&s->heap);
        struct spm_symbol * l = &s->symbols[b.left];
        struct spm_symbol * r = &s->symbols[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size) {
            continue; // one side was merged elsewhere since the pair was queued
        }
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) {
            s->symbols[r->next].prev = b.left;
        }
        if (!spm_try_add_bigram(s, l->prev, b.left) || !spm_try_add_bigram(s, b.left, l->next)) {
            return false;
        }
    }
    return true;
}

// Every merged symbol is a token (only token pairs merge); a single
// character that is no token goes out byte by byte.
static int64_t spm_emit(const struct spm_state * s, int32_t n_symbols, int32_t * out, int64_t capacity, int64_t n_out) {
    for (int32_t i = n_symbols > 0 ? 0 : -1; i >= 0; i = s->symbols[i].next) {
        const struct spm_symbol * sym = &s->symbols[i];
        const int32_t token = run_vocab_find(s->vocab, s->text + sym->start, sym->n);
        if (token >= 0) {
            if (n_out < capacity) {
                out[n_out] = token;
            }
            n_out++;
            continue;
        }
        for (size_t j = 0; j < sym->n; j++) {
            if (n_out < capacity) {
                out[n_out] = s->vocab->byte_token[(uint8_t) s->text[sym->start + j]];
            }
            n_out++;
        }
    }
    return n_out;
}

int64_t run_tokenize(const struct run_vocab * vocab, const char * text, size_t len, bool add_bos,
                     int32_t * out, int64_t capacity) {
    int64_t n_out = 0;
    if (add_bos && vocab->bos >= 0) {
        if (capacity > 0) {
            out[0] = vocab->bos;
        }
        n_out = 1;
    }
    if (len == 0) {
        return n_out;
    }
    size_t esc_len = 0;
    struct spm_state s = { .vocab = vocab, .text = NULL, .symbols = NULL, .heap = { NULL, 0, 0 } };
    char * esc = spm_escape(vocab, text, len, &esc_len);
    s.text    = esc;
    s.symbols = esc != NULL ? (struct spm_symbol *) run_malloc(esc_len * sizeof(struct spm_symbol), "the text to tokenise") : NULL;
    int64_t result = -1;
    if (s.symbols != NULL) {
        const int32_t n_symbols = spm_split_chars(&s, esc_len);
        if (spm_merge(&s, n_symbols)) {
            result = spm_emit(&s, n_symbols, out, capacity, n_out);
        }
    }
    free(s.heap.items);
    free(s.symbols);
    free(esc);
    return result;
}

//
// pieces
//

static size_t piece_copy(const char * src, size_t n, char * buf, size_t size) {
    memcpy(buf, src, n < size ? n : size);
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
                return piece_copy(text, len, buf, size);
            }
            const char c = (char) b;
            return piece_copy(&c, 1, buf, size);
        }
        case RUN_TOKEN_TYPE_CONTROL:
        case RUN_TOKEN_TYPE_UNUSED:
            return 0;
        case RUN_TOKEN_TYPE_UNKNOWN:
            return piece_copy("\xe2\x96\x85", 3, buf, size); // U+2585, as upstream prints unknown tokens
        default:
            break;
    }
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        if (len - i >= RUN_SPACE_ESCAPE_LEN && memcmp(text + i, RUN_SPACE_ESCAPE, RUN_SPACE_ESCAPE_LEN) == 0) {
            if (n < size) {
                buf[n] = ' ';
            }
            i += RUN_SPACE_ESCAPE_LEN;
        } else {
            if (n < size) {
                buf[n] = text[i];
            }
            i++;
        }
        n++;
    }
    return n;
}
