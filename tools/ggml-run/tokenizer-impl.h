#pragma once

// tokenizer-impl.h: what tokenizer.c, tokenizer-spm.c and tokenizer-bpe.c
// share: the output of a tokenisation, the symbols being merged and the
// priority queue of candidate pairs.

#include "tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gguf_context;

// tokens as they come: counted always, stored while they fit
struct run_token_out {
    int32_t * out;
    int64_t   capacity;
    int64_t   n;
    bool      unencodable; // some text has no token, no byte token and no unknown token to stand for it
    size_t    bad_at;      // then: the byte offset of the first such text in the fragment tokenised
};

// notes the first text (at byte offset at of the fragment) that cannot be encoded
static inline void run_token_out_unencodable(struct run_token_out * o, size_t at) {
    if (!o->unencodable) {
        o->unencodable = true;
        o->bad_at      = at;
    }
}

static inline void run_token_out_push(struct run_token_out * o, int32_t token) {
    if (o->n < o->capacity) {
        o->out[o->n] = token;
    }
    o->n++;
}

// a piece of the text being merged, in a linked list
struct run_symbol {
    int32_t prev;   // -1: first
    int32_t next;   // -1: last
    size_t  start;  // bytes [start, start + n) of the text
    size_t  n;      // 0 once merged into its left neighbour
    int32_t token;  // the token of the piece (BPE), -1 if none
};

// a pair of adjacent symbols that may merge
struct run_bigram {
    int32_t left;
    int32_t right;
    double  priority; // higher first; ties: the leftmost
    size_t  size;     // bytes of the pair when it was queued: stale entries no longer match
};

struct run_bigram_heap {
    struct run_bigram * items;
    size_t n;
    size_t cap;
};

bool run_bigram_push(struct run_bigram_heap * h, struct run_bigram item);
struct run_bigram run_bigram_pop(struct run_bigram_heap * h);

// Cuts text[0, len) into UTF-8 characters as symbols (at most len of them);
// returns their count.
int32_t run_symbols_split(struct run_symbol * symbols, const char * text, size_t len);

// SentencePiece: appends the tokens of text[0, len) (with a space in front if
// space_prefix); false when memory runs out. A character with no token and
// no byte token (nor unknown token) for a byte of it is left out and noted
// in out (run_token_out_unencodable).
bool run_spm_tokenize(const struct run_vocab * vocab, const char * text, size_t len, bool space_prefix,
                      struct run_token_out * out);

// byte-level BPE: appends the tokens of text[0, len); false when memory runs
// out. A byte with no token (nor unknown token) is noted in out as above.
bool run_bpe_tokenize(const struct run_vocab * vocab, const char * text, size_t len, struct run_token_out * out);

// reads tokenizer.ggml.merges into the vocabulary's merge table
bool run_bpe_load_merges(struct run_vocab * vocab, const struct gguf_context * gguf);

// GPT-2's byte alphabet: the character that stands for byte b, and back (-1: none)
uint32_t run_bpe_byte_to_cp(uint8_t b);
int      run_bpe_cp_to_byte(uint32_t cp);
