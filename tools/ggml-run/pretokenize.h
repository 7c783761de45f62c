#pragma once

// pretokenize.h: the pre-tokenizers of byte-level BPE vocabularies, which cut
// a text into words before merging (tokenizer.ggml.pre of a GGUF).
//
// Each is the regular expression of the model's tokenizer.json, written out as
// a table of alternatives and matched by a small backtracking matcher with the
// semantics of Rust's regex / JavaScript's regular expressions: at each
// position the first alternative that matches wins, quantifiers are greedy and
// give back characters when what follows fails, and text no alternative
// matches becomes a word of its own. \p{L}, \p{N}, ... come from unicode.h.

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum run_pretok {
    RUN_PRETOK_GPT2,         // gpt-2 (GPT-2, GPT-3, phi-2, ...)
    RUN_PRETOK_LLAMA3,       // llama-bpe, llama3, llama-v3 (Llama 3, 3.1, ...)
    RUN_PRETOK_QWEN2,        // qwen2 (Qwen 2, 2.5, 3): as llama3, numbers one digit at a time
    RUN_PRETOK_DEEPSEEK_LLM, // deepseek-llm: six expressions applied in turn
    RUN_PRETOK_TEKKEN,       // tekken (Mistral Nemo, Pixtral): case-aware words
};

// The pre-tokenizer that a tokenizer.ggml.pre value names; false for any other.
bool run_pretok_from_name(const char * name, enum run_pretok * out);

// the names run_pretok_from_name knows, for messages: "gpt-2, llama-bpe, ..."
const char * run_pretok_known_names(void);

// the words of a text: word i is bytes [end[i - 1], end[i]) (end[-1] = 0)
struct run_words {
    size_t * end;
    size_t   n;
    size_t   cap;
};

// Cuts text[0, len) into words, appended to words (which the caller frees
// with free(words->end)). Returns false when memory runs out (reported).
bool run_pretokenize(enum run_pretok kind, const char * text, size_t len, struct run_words * words);

#ifdef __cplusplus
}
#endif
