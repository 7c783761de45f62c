#pragma once

// chat.h: conversations (ggml-run -cnv): chat templates and the loop that
// reads the user's messages and streams the model's answers.
//
// A template is one of the common families, recognised from the GGUF's
// tokenizer.chat_template text by the marks llama.cpp looks for (a Jinja
// template is not interpreted): chatml ("<|im_start|>"), llama3
// ("<|start_header_id|>"), gemma ("<start_of_turn>"), phi3 ("<|assistant|>"
// and "<|end|>"), mistral ("[INST]": v1, v3, v3-tekken, v7 told apart as
// llama.cpp does). Each turn is formatted as the difference llama.cpp's
// formatting of the conversation grows by: the end of the previous answer,
// the system message (first turn), the user's message and the opening of
// the answer. The special pieces of a template ("<|im_start|>", ...) become
// their tokens when the vocabulary has them; the text between them is
// tokenised as text.
//
// Ctrl-C (SIGINT) during an answer stops that answer; the conversation goes
// on with the next message. Ctrl-C while waiting for a message, or the end
// of the input, ends the program.

#include "context.h"
#include "sampling.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum run_chat_template {
    RUN_CHAT_UNKNOWN = -1,
    RUN_CHAT_CHATML,
    RUN_CHAT_LLAMA3,
    RUN_CHAT_GEMMA,
    RUN_CHAT_PHI3,
    RUN_CHAT_MISTRAL_V1,
    RUN_CHAT_MISTRAL_V3,
    RUN_CHAT_MISTRAL_V3_TEKKEN,
    RUN_CHAT_MISTRAL_V7,
    RUN_CHAT_MISTRAL_V7_TEKKEN,
    RUN_CHAT_COUNT,
};

// A template by name ("chatml", "llama3", "gemma", "phi3", "mistral-v1",
// "mistral-v3", "mistral-v3-tekken", "mistral-v7", "mistral-v7-tekken";
// "mistral" is mistral-v3), else recognised in a template's text as
// llama.cpp does; RUN_CHAT_UNKNOWN when neither.
enum run_chat_template run_chat_template_detect(const char * name_or_text);

const char * run_chat_template_name(enum run_chat_template tmpl);

// the names, comma-separated, for messages
const char * run_chat_template_names(void);

// The text of one turn (malloc'd; NULL when memory runs out, reported):
// the end of the previous answer unless first, the system message (may be
// NULL) when first, the user's message and the opening of the answer.
char * run_chat_format_turn(enum run_chat_template tmpl, bool first, const char * system, const char * user);

// the piece that ends an answer ("<|im_end|>"): its token ends generation too
const char * run_chat_end_of_turn(enum run_chat_template tmpl);

// Tokens of a formatted turn: the template's special pieces that are tokens
// of the vocabulary as those tokens, the rest as text; bos first when
// add_bos and the vocabulary has one. NULL when memory runs out (reported).
int32_t * run_chat_tokenize(const struct run_vocab * vocab, enum run_chat_template tmpl, const char * text,
                            bool add_bos, int64_t * n_tokens);

struct run_chat_params {
    enum run_chat_template tmpl;
    const char * system;        // system message, or NULL
    int64_t      n_predict;     // most tokens per answer (< 0: until the context is full)
    bool         ignore_eos;    // go on after the end-of-sequence and end-of-turn tokens
};

// The conversation: messages read line by line from in, answers written to
// out as they are generated, a "> " prompt before each message. Returns the
// exit status: 0 at the end of the input or on Ctrl-C while waiting, 1 when
// a decode fails, the context is full, the input cannot be read, or a
// message is longer than the context left can hold (more bytes than the
// tokens left times the vocabulary's longest piece: reading stops there).
int run_chat_loop(struct run_context * rc, struct run_sampler * sampler, const struct run_chat_params * params,
                  FILE * in, FILE * out);

#ifdef __cplusplus
}
#endif
