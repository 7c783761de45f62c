// tokenizer-spm.c: SentencePiece tokenisation by score-ordered merging, with
// byte fallback for characters that are no token.

#include "tokenizer-impl.h"
#include "run-common.h"

#include <stdlib.h>
#include <string.h>

#define RUN_SPACE_ESCAPE     "\xe2\x96\x81" // U+2581, what SentencePiece writes for a space
#define RUN_SPACE_ESCAPE_LEN 3

struct spm_state {
    const struct run_vocab * vocab;
    const char             * orig; // the text as given
    bool                     space_prefix;
    const char             * text; // escaped text
    struct run_symbol      * symbols;
    struct run_bigram_heap   heap;
};

// queues the pair (left, right) if their concatenation is a token
static bool spm_try_add_bigram(struct spm_state * s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) {
        return true;
    }
    const struct run_symbol * l = &s->symbols[left];
    const size_t size = l->n + s->symbols[right].n;
    const int32_t token = run_vocab_find(s->vocab, s->text + l->start, size);
    if (token < 0) {
        return true;
    }
    const struct run_bigram b = { .left = left, .right = right, .priority = (double) s->vocab->score[token], .size = size };
    return run_bigram_push(&s->heap, b);
}

// the escaped text: a space in front if asked, every ' ' as U+2581
static char * spm_escape(const char * text, size_t len, bool space_prefix, size_t * out_len) {
    size_t n_spaces = 0;
    for (size_t i = 0; i < len; i++) {
        n_spaces += text[i] == ' ';
    }
    // each space grows by two bytes, the prefix adds three
    const size_t size = len + 2 * n_spaces + (space_prefix ? RUN_SPACE_ESCAPE_LEN : 0) + 1;
    char * out = (char *) run_malloc(size, "the text to tokenise");
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    if (space_prefix) {
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

static bool spm_merge(struct spm_state * s, int32_t n_symbols) {
    for (int32_t i = 1; i < n_symbols; i++) {
        if (!spm_try_add_bigram(s, i - 1, i)) {
            return false;
        }
    }
    while (s->heap.n > 0) {
        const struct run_bigram b = run_bigram_pop(&s->heap);
        struct run_symbol * l = &s->symbols[b.left];
        struct run_symbol * r = &s->symbols[b.right];
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

// the offset in the text as given of byte at of the escaped text (the
// prefix's space stands at 0, before the text)
static size_t spm_orig_offset(const struct spm_state * s, size_t at) {
    size_t e = s->space_prefix ? RUN_SPACE_ESCAPE_LEN : 0, i = 0;
    for (; e < at; i++) { // at starts a character: some i starts there
        e += s->orig[i] == ' ' ? RUN_SPACE_ESCAPE_LEN : 1;
    }
    return i;
}

// Every merged symbol is a token (only token pairs merge); a single
// character that is no token goes out byte by byte.
static void spm_emit(const struct spm_state * s, int32_t n_symbols, struct run_token_out * out) {
    for (int32_t i = n_symbols > 0 ? 0 : -1; i >= 0; i = s->symbols[i].next) {
        const struct run_symbol * sym = &s->symbols[i];
        const int32_t token = run_vocab_find(s->vocab, s->text + sym->start, sym->n);
        if (token >= 0) {
            run_token_out_push(out, token);
            continue;
        }
        for (size_t j = 0; j < sym->n; j++) {
            const int32_t byte_token = s->vocab->byte_token[(uint8_t) s->text[sym->start + j]];
            if (byte_token < 0) {
                run_token_out_unencodable(out, spm_orig_offset(s, sym->start));
                break;
            }
            run_token_out_push(out, byte_token);
        }
    }
}

bool run_spm_tokenize(const struct run_vocab * vocab, const char * text, size_t len, bool space_prefix,
                      struct run_token_out * out) {
    size_t esc_len = 0;
    struct spm_state s = { .vocab = vocab, .orig = text, .space_prefix = space_prefix, .text = NULL, .symbols = NULL,
                           .heap = { NULL, 0, 0 } };
    char * esc = spm_escape(text, len, space_prefix, &esc_len);
    s.text    = esc;
    s.symbols = esc != NULL && esc_len > 0
        ? (struct run_symbol *) run_malloc(esc_len * sizeof(struct run_symbol), "the text to tokenise") : NULL;
    bool ok = esc != NULL && (esc_len == 0 || s.symbols != NULL);
    if (ok && esc_len > 0) {
        const int32_t n_symbols = run_symbols_split(s.symbols, esc, esc_len);
        ok = spm_merge(&s, n_symbols);
        if (ok) {
            spm_emit(&s, n_symbols, out);
        }
    }
    free(s.heap.items);
    free(s.symbols);
    free(esc);
    return ok;
}
