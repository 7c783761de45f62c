// tokenizer-bpe.c: byte-level BPE: GPT-2's byte alphabet, the merge table of
// tokenizer.ggml.merges, and tokenisation of pre-tokenised words by merging
// the lowest-ranked pair first.

#include "tokenizer-impl.h"
#include "run-common.h"
#include "unicode.h"

#include "gguf.h"

#include <stdlib.h>
#include <string.h>

//
// the byte alphabet
//

// GPT-2 writes the printable bytes ('!'-'~', 0xA1-0xAC, 0xAE-0xFF) as
// themselves and the 68 others, in byte order, as U+0100 onwards: 0x00-0x20
// are U+0100-U+0120, 0x7F-0xA0 U+0121-U+0142, 0xAD U+0143.
static bool byte_is_printable(uint32_t b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

uint32_t run_bpe_byte_to_cp(uint8_t b) {
    if (byte_is_printable(b)) {
        return b;
    }
    if (b <= 0x20) {
        return 0x100 + b;
    }
    if (b >= 0x7F && b <= 0xA0) {
        return 0x121 + (uint32_t) (b - 0x7F);
    }
    return 0x143; // 0xAD
}

int run_bpe_cp_to_byte(uint32_t cp) {
    if (cp < 0x100) {
        return byte_is_printable(cp) ? (int) cp : -1;
    }
    if (cp <= 0x120) {
        return (int) (cp - 0x100);
    }
    if (cp <= 0x142) {
        return (int) (cp - 0x121 + 0x7F);
    }
    return cp == 0x143 ? 0xAD : -1;
}

//
// the merge table
//

static uint32_t merge_hash(int32_t left, int32_t right) {
    uint64_t h = ((uint64_t) (uint32_t) left << 32) | (uint32_t) right;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t) h;
}

int32_t run_vocab_merge_rank(const struct run_vocab * vocab, int32_t left, int32_t right) {
    if (vocab->merges == NULL || left < 0 || right < 0) {
        return -1;
    }
    for (uint32_t slot = merge_hash(left, right) & vocab->merges_mask;; slot = (slot + 1) & vocab->merges_mask) {
        const struct run_merge * m = &vocab->merges[slot];
        if (m->left < 0) {
            return -1;
        }
        if (m->left == left && m->right == right) {
            return m->rank;
        }
    }
}

// the first merge of a pair keeps its rank, as in upstream's map
static void merge_insert(struct run_vocab * vocab, int32_t left, int32_t right, int32_t rank) {
    uint32_t slot = merge_hash(left, right) & vocab->merges_mask;
    for (;; slot = (slot + 1) & vocab->merges_mask) {
        const struct run_merge * m = &vocab->merges[slot];
        if (m->left < 0) {
            break;
        }
        if (m->left == left && m->right == right) {
            return;
        }
    }
    vocab->merges[slot] = (struct run_merge) { .left = left, .right = right, .rank = rank };
}

bool run_bpe_load_merges(struct run_vocab * vocab, const struct gguf_context * gguf) {
    const int64_t id = gguf_find_key(gguf, "tokenizer.ggml.merges");
    if (id < 0) {
        run_error("a BPE vocabulary needs the key tokenizer.ggml.merges");
        return false;
    }
    if (gguf_get_kv_type(gguf, id) != GGUF_TYPE_ARRAY || gguf_get_arr_type(gguf, id) != GGUF_TYPE_STRING) {
        run_error("key tokenizer.ggml.merges must be an array of strings");
        return false;
    }
    const size_t n = gguf_get_arr_n(gguf, id);
    if (n > INT32_MAX / 4) {
        run_error("tokenizer.ggml.merges has %zu merges, too many", n);
        return false;
    }
    uint32_t size = 16;
    while (size < 2u * (uint32_t) n) {
        size *= 2;
    }
    vocab->merges = (struct run_merge *) run_malloc(size * sizeof(struct run_merge), "the merge table");
    if (vocab->merges == NULL) {
        return false;
    }
    memset(vocab->merges, 0xff, size * sizeof(struct run_merge));
    vocab->merges_mask = size - 1;
    vocab->n_merges    = (int32_t) n;
    for (size_t i = 0; i < n; i++) {
        const char * m = gguf_get_arr_str(gguf, id, i);
        // tokens have no ' ' (it is U+0120): the first space after the first byte separates them
        const char * sp = m[0] != '\0' ? strchr(m + 1, ' ') : NULL;
        if (sp == NULL) {
            run_error("merge %zu ('%s') is not two tokens separated by a space", i, m);
            return false;
        }
        const int32_t left  = run_vocab_find(vocab, m, (size_t) (sp - m));
        const int32_t right = run_vocab_find(vocab, sp + 1, strlen(sp + 1));
        if (left < 0 || right < 0) {
            continue; // a merge of pieces that are no tokens can never apply
        }
        merge_insert(vocab, left, right, (int32_t) i);
    }
    return true;
}

//
// tokenisation
//

struct bpe_state {
    const struct run_vocab * vocab;
    const char             * word;       // the word as given
    size_t                   word_start; // its offset in the fragment tokenised
    const char             * text; // the word in the byte alphabet
    struct run_symbol      * symbols;
    struct run_bigram_heap   heap;
};

static bool bpe_try_add_bigram(struct bpe_state * s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) {
        return true;
    }
    const int32_t rank = run_vocab_merge_rank(s->vocab, s->symbols[left].token, s->symbols[right].token);
    if (rank < 0) {
        return true;
    }
    const struct run_bigram b = {
        .left = left, .right = right, .priority = -(double) rank, .size = s->symbols[left].n + s->symbols[right].n,
    };
    return run_bigram_push(&s->heap, b);
}

static bool bpe_merge(struct bpe_state * s, int32_t n_symbols) {
    for (int32_t i = 1; i < n_symbols; i++) {
        if (!bpe_try_add_bigram(s, i - 1, i)) {
            return false;
        }
    }
    while (s->heap.n > 0) {
        const struct run_bigram b = run_bigram_pop(&s->heap);
        struct run_symbol * l = &s->symbols[b.left];
        struct run_symbol * r = &s->symbols[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size || l->next != b.right) {
            continue; // one side was merged elsewhere since the pair was queued
        }
        l->n += r->n;
        l->token = run_vocab_find(s->vocab, s->text + l->start, l->n);
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) {
            s->symbols[r->next].prev = b.left;
        }
        if (!bpe_try_add_bigram(s, l->prev, b.left) || !bpe_try_add_bigram(s, b.left, l->next)) {
            return false;
        }
    }
    return true;
}

// a symbol that is no token (a merge whose result is missing from the
// vocabulary, a character outside it) goes out character by character
static void bpe_emit_symbol(const struct bpe_state * s, const struct run_symbol * sym, struct run_token_out * out) {
    if (sym->token >= 0) {
        run_token_out_push(out, sym->token);
        return;
    }
    for (size_t i = 0; i < sym->n;) {
        uint32_t cp;
        const size_t cl = run_utf8_decode(s->text + sym->start + i, sym->n - i, &cp);
        const int32_t token = run_vocab_find(s->vocab, s->text + sym->start + i, cl);
        if (token >= 0 || s->vocab->unk >= 0) {
            run_token_out_push(out, token >= 0 ? token : s->vocab->unk);
        } else {
            // each character of the alphabet stands for one byte of the word
            size_t byte = 0;
            for (size_t m = 0; m < sym->start + i; byte++) {
                m += run_bpe_byte_to_cp((uint8_t) s->word[byte]) < 0x80 ? 1 : 2;
            }
            run_token_out_unencodable(out, s->word_start + byte);
        }
        i += cl;
    }
}

// the word's bytes in the byte alphabet, into buf (at least 2 * len bytes)
static size_t bpe_map_bytes(const char * word, size_t len, char * buf) {
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        o += run_utf8_encode(run_bpe_byte_to_cp((uint8_t) word[i]), buf + o);
    }
    return o;
}

static bool bpe_word(struct bpe_state * s, size_t len, struct run_token_out * out) {
    if (s->vocab->ignore_merges) {
        const int32_t whole = run_vocab_find(s->vocab, s->text, len);
        if (whole >= 0) {
            run_token_out_push(out, whole);
            return true;
        }
    }
    const int32_t n_symbols = run_symbols_split(s->symbols, s->text, len);
    for (int32_t i = 0; i < n_symbols; i++) {
        s->symbols[i].token = run_vocab_find(s->vocab, s->text + s->symbols[i].start, s->symbols[i].n);
    }
    s->heap.n = 0;
    if (!bpe_merge(s, n_symbols)) {
        return false;
    }
    for (int32_t i = n_symbols > 0 ? 0 : -1; i >= 0; i = s->symbols[i].next) {
        bpe_emit_symbol(s, &s->symbols[i], out);
    }
    return true;
}

bool run_bpe_tokenize(const struct run_vocab * vocab, const char * text, size_t len, struct run_token_out * out) {
    struct run_words words = { NULL, 0, 0 };
    if (!run_pretokenize(vocab->pre, text, len, &words)) {
        return false;
    }
    size_t longest = 0;
    for (size_t w = 0, start = 0; w < words.n; start = words.end[w++]) {
        longest = words.end[w] - start > longest ? words.end[w] - start : longest;
    }
    // each byte is at most 2 bytes in the alphabet
    struct bpe_state s = { .vocab = vocab, .word = NULL, .word_start = 0, .text = NULL, .symbols = NULL, .heap = { NULL, 0, 0 } };
    char * mapped = (char *) run_malloc(2 * longest + 1, "the text to tokenise");
    s.text    = mapped;
    s.symbols = (struct run_symbol *) run_malloc((2 * longest + 1) * sizeof(struct run_symbol), "the text to tokenise");
    bool ok = mapped != NULL && s.symbols != NULL;
    for (size_t w = 0, start = 0; ok && w < words.n; start = words.end[w++]) {
        const size_t n = bpe_map_bytes(text + start, words.end[w] - start, mapped);
        s.word       = text + start;
        s.word_start = start;
        ok = bpe_word(&s, n, out);
    }
    free(s.heap.items);
    free(s.symbols);
    free(mapped);
    free(words.end);
    return ok;
}
