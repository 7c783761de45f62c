#pragma once

// tokenizer.h: the vocabulary of a GGUF model and its tokenizer, SentencePiece
// (tokenizer.ggml.model "llama") or byte-level BPE ("gpt2").
//
// A run_vocab holds copies of the token pieces, scores, types and merges read
// from the GGUF keys tokenizer.ggml.*; it owns them and is freed with
// run_vocab_free().
//
// Tokenisation first cuts the text at the special tokens written in it
// (control, user-defined and unknown tokens such as "<|begin_of_text|>" or
// "<|im_start|>", the longest first), which become single tokens, then
// tokenises the text between them:
// - SentencePiece (tokenizer-spm.c): spaces become U+2581 ("▁"), a space is
//   put in front of the text (and after each special token), and the
//   adjacent pair whose concatenation is the highest-scoring token (leftmost
//   on ties) is merged until no pair forms a token; characters left that are
//   no token are written as byte tokens "<0xXX>".
// - byte-level BPE (tokenizer-bpe.c): the pre-tokenizer that
//   tokenizer.ggml.pre names (pretokenize.h) cuts the text into words, each
//   word's bytes are written as the 256 characters of GPT-2's byte alphabet,
//   and the adjacent pair with the lowest rank in tokenizer.ggml.merges
//   (leftmost on ties) is merged until no pair is a merge. For llama3 and
//   tekken a word that is a token as a whole is that token.
// The bos token goes in front when the vocabulary asks for it
// (tokenizer.ggml.add_bos_token, else the tokenizer's default) and the eos
// token at the end likewise (add_eos_token).

#include "pretokenize.h"

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

enum run_vocab_kind {
    RUN_VOCAB_SPM, // SentencePiece, tokenizer.ggml.model = "llama"
    RUN_VOCAB_BPE, // byte-level BPE, tokenizer.ggml.model = "gpt2"
};

// a BPE merge: the pair (left, right) of tokens and its rank (lower merges first)
struct run_merge {
    int32_t left;   // -1 marks a free slot of the table
    int32_t right;
    int32_t rank;
};

struct run_vocab {
    enum run_vocab_kind kind;
    enum run_pretok     pre;    // BPE only
    int32_t    n_tokens;
    char    ** text;            // piece of each token, NUL-terminated
    uint32_t * len;             // its length in bytes
    float    * score;
    int32_t  * type;            // enum run_token_type
    int32_t    bos;             // -1 if none
    int32_t    eos;             // -1 if none
    int32_t    eot;             // end of turn (tokenizer.ggml.eot_token_id, else found by its text), -1 if none
    int32_t    unk;             // -1 if none
    bool       add_bos;         // put bos in front of a prompt
    bool       add_eos;         // put eos after a prompt
    bool       add_space_prefix;
    bool       ignore_merges;   // BPE: a word that is a token is that token
    int32_t    byte_token[256]; // the token of each byte value (byte fallback), -1 if none
    int32_t  * table;           // piece -> token: open addressing, -1 marks a free slot
    uint32_t   table_mask;      // table size - 1 (a power of two)
    struct run_merge * merges;  // BPE: (left, right) -> rank, open addressing
    uint32_t   merges_mask;
    int32_t    n_merges;
    int32_t  * special;         // the tokens recognised in text, longest first
    int32_t    n_special;
};

// Reads the vocabulary from gguf. Returns false (and reports why) when the
// keys are missing, malformed or name a tokenizer or pre-tokenizer that is
// not implemented.
bool run_vocab_load(struct run_vocab * vocab, const struct gguf_context * gguf);

// Builds a SentencePiece vocabulary from arrays (copied); scores and types may
// be NULL (0 and NORMAL, with "<0xXX>" pieces taken as byte tokens).
bool run_vocab_init(struct run_vocab * vocab, int32_t n_tokens, const char * const * text,
                    const float * score, const int32_t * type, int32_t bos, int32_t eos, int32_t unk);

void run_vocab_free(struct run_vocab * vocab);

// the token whose piece is text[0, len), or -1
int32_t run_vocab_find(const struct run_vocab * vocab, const char * text, size_t len);

// the rank of the BPE merge of tokens left and right, or -1
int32_t run_vocab_merge_rank(const struct run_vocab * vocab, int32_t left, int32_t right);

// whether token ends generation (eos or eot)
bool run_vocab_is_eog(const struct run_vocab * vocab, int32_t token);

struct run_tokenize_opts {
    bool add_special;   // bos and eos as the vocabulary asks (add_bos, add_eos)
    bool parse_special; // control and unknown tokens written in the text are tokens; when
                        // false they are plain text (user-defined tokens always count)
};

// Tokenises text[0, len). Writes at most capacity tokens to out and returns
// how many the text has (more than capacity: call again with a larger out),
// or -1 when memory runs out or some text cannot be encoded: a character
// with no token, no byte token (byte fallback) and no unknown token to
// stand for it (reported, naming the character and its byte offset).
int64_t run_tokenize_opts(const struct run_vocab * vocab, const char * text, size_t len,
                          const struct run_tokenize_opts * opts, int32_t * out, int64_t capacity);

// run_tokenize_opts with special tokens parsed; add_special as above
int64_t run_tokenize(const struct run_vocab * vocab, const char * text, size_t len, bool add_special,
                     int32_t * out, int64_t capacity);

// The bytes of token as they are printed: SentencePiece's "▁" becomes a
// space, byte tokens and BPE pieces their bytes (which may be part of a
// UTF-8 character), control and unused tokens nothing. Writes at most size
// bytes to buf (no NUL) and returns the piece's length.
size_t run_token_to_piece(const struct run_vocab * vocab, int32_t token, char * buf, size_t size);

// Detokenisation for printing as tokens come: the bytes of the pieces are
// released only up to the last whole UTF-8 character, so that what is
// printed is always valid UTF-8 when the tokens' bytes are.
struct run_detok {
    char * buf;
    size_t n;      // bytes held
    size_t n_out;  // bytes [0, n_out) were handed out by the last call
    size_t cap;
};

// Adds token's piece; *text and *n are set to the bytes that can be printed
// now (valid until the next call). Returns false when memory runs out (reported).
bool run_detok_push(struct run_detok * d, const struct run_vocab * vocab, int32_t token, const char ** text, size_t * n);

// the bytes still held (an unfinished character at the end of the output)
void run_detok_flush(struct run_detok * d, const char ** text, size_t * n);

void run_detok_free(struct run_detok * d);

#ifdef __cplusplus
}
#endif
