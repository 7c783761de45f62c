#pragma once

// tokenizer.h: the SentencePiece ("llama") vocabulary of a GGUF model and its
// tokenizer.
//
// A run_vocab holds copies of the token pieces, scores and types read from
// the GGUF keys tokenizer.ggml.*; it owns them and is freed with
// run_vocab_free(). Tokenisation follows SentencePiece's BPE-style merging:
// spaces become U+2581 ("▁"), a space is put in front of the text, the text
// is cut into UTF-8 characters, and the adjacent pair whose concatenation is
// the highest-scoring token (leftmost on ties) is merged until no pair forms a
// token. Characters left that are no token are written as byte tokens
// "<0xXX>".

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gguf_context;

// token types of tokenizer.ggml.token_type
enum run_token_type {
    RUN_TOKEN_TYPE_UNDEFINED    = 0,
    RUN_TOKEN_TYPE_NORMAL       = 1,
    RUN_TOKEN_TYPE_UNKNOWN      = 2,
    RUN_TOKEN_TYPE_CONTROL      = 3,
    RUN_TOKEN_TYPE_USER_DEFINED = 4,
    RUN_TOKEN_TYPE_UNUSED       = 5,
    RUN_TOKEN_TYPE_BYTE         = 6,
};

struct run_vocab {
    int32_t    n_tokens;
    char    ** text;            // piece of each token, NUL-terminated
    uint32_t * len;             // its length in bytes
    float    * score;
    int32_t  * type;            // enum run_token_type
    int32_t    bos;             // -1 if none
    int32_t    eos;             // -1 if none
    int32_t    unk;             // -1 if none
    bool       add_bos;         // put bos in front of a prompt
    bool       add_space_prefix;
    int32_t    byte_token[256]; // the token of each byte value (byte fallback), -1 if none
    int32_t  * table;           // piece -> token: open addressing, -1 marks a free slot
    uint32_t   table_mask;      // table size - 1 (a power of two)
};

// Reads the vocabulary from gguf. Returns false (and reports why) when the
// keys are missing, malformed or name a tokenizer other than "llama".
bool run_vocab_load(struct run_vocab * vocab, const struct gguf_context * gguf);

// Builds a vocabulary from arrays (copied); scores and types may be NULL
// (0 and NORMAL, with "<0xXX>" pieces taken as byte tokens).
bool run_vocab_init(struct run_vocab * vocab, int32_t n_tokens, const char * const * text,
                    const float * score, const int32_t * type, int32_t bos, int32_t eos, int32_t unk);

void run_vocab_free(struct run_vocab * vocab);

// the token whose piece is text[0, len), or -1
int32_t run_vocab_find(const struct run_vocab * vocab, const char * text, size_t len);

// Tokenises text[0, len). Writes at most capacity tokens to out and returns
// how many the text has (more than capacity: call again with a larger out),
// or -1 when memory runs out (reported).
int64_t run_tokenize(const struct run_vocab * vocab, const char * text, size_t len, bool add_bos,
                     int32_t * out, int64_t capacity);

// The text of token as it is printed: "▁" becomes a space, byte tokens
// their byte, control and unused tokens nothing. Writes at most size bytes
// to buf (no NUL) and returns the piece's length.
size_t run_token_to_piece(const struct run_vocab * vocab, int32_t token, char * buf, size_t size);

#ifdef __cplusplus
}
#endif
