// chat.c: chat templates (recognition, formatting of a turn, tokens) and
// the conversation loop of ggml-run -cnv.

#include "chat.h"
#include "run-common.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct chat_template_info {
    const char * name;
    const char * end_of_turn;
    const char * specials[6];   // pieces that are tokens in the models of this family (NULL-terminated)
};

static const struct chat_template_info chat_templates[RUN_CHAT_COUNT] = {
    [RUN_CHAT_CHATML]            = { "chatml", "<|im_end|>", { "<|im_start|>", "<|im_end|>", NULL } },
    [RUN_CHAT_LLAMA3]            = { "llama3", "<|eot_id|>", { "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", NULL } },
    [RUN_CHAT_GEMMA]             = { "gemma", "<end_of_turn>", { "<start_of_turn>", "<end_of_turn>", NULL } },
    [RUN_CHAT_PHI3]              = { "phi3", "<|end|>", { "<|system|>", "<|user|>", "<|assistant|>", "<|end|>", NULL } },
    [RUN_CHAT_MISTRAL_V1]        = { "mistral-v1", "</s>", { "[INST]", "[/INST]", "</s>", NULL } },
    [RUN_CHAT_MISTRAL_V3]        = { "mistral-v3", "</s>", { "[INST]", "[/INST]", "</s>", NULL } },
    [RUN_CHAT_MISTRAL_V3_TEKKEN] = { "mistral-v3-tekken", "</s>", { "[INST]", "[/INST]", "</s>", NULL } },
    [RUN_CHAT_MISTRAL_V7]        = { "mistral-v7", "</s>", { "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "</s>", NULL } },
    [RUN_CHAT_MISTRAL_V7_TEKKEN] = { "mistral-v7-tekken", "</s>", { "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "</s>", NULL } },
};

const char * run_chat_template_name(enum run_chat_template tmpl) {
    return tmpl > RUN_CHAT_UNKNOWN && tmpl < RUN_CHAT_COUNT ? chat_templates[tmpl].name : "unknown";
}

const char * run_chat_template_names(void) {
    return "chatml, llama3, gemma, phi3, mistral-v1, mistral-v3 (or mistral), mistral-v3-tekken, mistral-v7, mistral-v7-tekken";
}

const char * run_chat_end_of_turn(enum run_chat_template tmpl) {
    return tmpl > RUN_CHAT_UNKNOWN && tmpl < RUN_CHAT_COUNT ? chat_templates[tmpl].end_of_turn : "";
}

//
// recognition: llama.cpp's marks, in its order of tests
//

static bool contains(const char * text, const char * mark) {
    return strstr(text, mark) != NULL;
}

static enum run_chat_template detect_mistral(const char * t) {
    if (contains(t, "[SYSTEM_PROMPT]")) {
        return RUN_CHAT_MISTRAL_V7;
    }
    // the official v1, v3 and v3-tekken templates; llama.cpp's llama2 variants are not among ours
    if (contains(t, "' [INST] ' + system_message") || contains(t, "[AVAILABLE_TOOLS]")) {
        if (contains(t, " [INST]")) {
            return RUN_CHAT_MISTRAL_V1;
        }
        return contains(t, "\"[INST]\"") ? RUN_CHAT_MISTRAL_V3_TEKKEN : RUN_CHAT_MISTRAL_V3;
    }
    return RUN_CHAT_UNKNOWN;
}

enum run_chat_template run_chat_template_detect(const char * t) {
    if (t == NULL) {
        return RUN_CHAT_UNKNOWN;
    }
    for (int i = 0; i < RUN_CHAT_COUNT; i++) {
        if (strcmp(t, chat_templates[i].name) == 0) {
            return (enum run_chat_template) i;
        }
    }
    if (strcmp(t, "mistral") == 0) {
        return RUN_CHAT_MISTRAL_V3;
    }
    if (contains(t, "<|im_start|>")) {
        // Phi-4 (<|im_sep|>) and SmolVLM (<end_of_utterance>) use the mark too but are no chatml
        return contains(t, "<|im_sep|>") || contains(t, "<end_of_utterance>") ? RUN_CHAT_UNKNOWN : RUN_CHAT_CHATML;
    }
    if (strncmp(t, "mistral", 7) == 0 || contains(t, "[INST]")) {
        return detect_mistral(t);
    }
    if (contains(t, "<|assistant|>") && contains(t, "<|end|>")) {
        return RUN_CHAT_PHI3;
    }
    // the marks llama.cpp tests between phi3 and gemma belong to other families
    if (contains(t, "<|user|>") || contains(t, "[gMASK]") || contains(t, "bos_token + message['role']")) {
        return RUN_CHAT_UNKNOWN;
    }
    if (contains(t, "<start_of_turn>")) {
        return RUN_CHAT_GEMMA;
    }
    if (contains(t, "<|start_header_id|>") && contains(t, "<|end_header_id|>")) {
        return RUN_CHAT_LLAMA3;
    }
    return RUN_CHAT_UNKNOWN;
}

//
// formatting
//

struct strbuf {
    char * s;
    size_t len, cap;
    bool   ok;
};

static void sb_add_n(struct strbuf * b, const char * s, size_t n) {
    if (!b->ok) {
        return;
    }
    if (b->len + n + 1 > b->cap) {
        const size_t cap = (b->len + n + 1) * 2;
        char * grown = (char *) realloc(b->s, cap);
        if (grown == NULL) {
            b->ok = false;
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_add(struct strbuf * b, const char * s) {
    sb_add_n(b, s, strlen(s));
}

// s without the white space around it
static void sb_add_trimmed(struct strbuf * b, const char * s) {
    size_t start = 0, end = strlen(s);
    while (start < end && isspace((unsigned char) s[start])) {
        start++;
    }
    while (end > start && isspace((unsigned char) s[end - 1])) {
        end--;
    }
    sb_add_n(b, s + start, end - start);
}

static void format_mistral(struct strbuf * b, enum run_chat_template tmpl, bool first, const char * system, const char * user) {
    if (tmpl == RUN_CHAT_MISTRAL_V7 || tmpl == RUN_CHAT_MISTRAL_V7_TEKKEN) {
        const char * space = tmpl == RUN_CHAT_MISTRAL_V7 ? " " : "";
        if (system != NULL) {
            sb_add(b, "[SYSTEM_PROMPT]");
            sb_add(b, space);
            sb_add(b, system);
            sb_add(b, "[/SYSTEM_PROMPT]");
        }
        sb_add(b, "[INST]");
        sb_add(b, space);
        sb_add(b, user);
        sb_add(b, "[/INST]");
        return;
    }
    const char * leading  = tmpl == RUN_CHAT_MISTRAL_V1 ? " " : "";
    const char * trailing = tmpl == RUN_CHAT_MISTRAL_V3_TEKKEN ? "" : " ";
    sb_add(b, leading);
    sb_add(b, "[INST]");
    sb_add(b, trailing);
    if (first && system != NULL) {
        sb_add(b, system);
        sb_add(b, "\n\n");
    }
    sb_add(b, user);
    sb_add(b, leading);
    sb_add(b, "[/INST]");
}

char * run_chat_format_turn(enum run_chat_template tmpl, bool first, const char * system, const char * user) {
    if (tmpl <= RUN_CHAT_UNKNOWN || tmpl >= RUN_CHAT_COUNT) {
        run_error("no chat template to format the message with");
        return NULL;
    }
    struct strbuf b = { .s = NULL, .len = 0, .cap = 0, .ok = true };
    if (!first) {
        sb_add(&b, chat_templates[tmpl].end_of_turn);
    }
    system = first && system != NULL && system[0] != '\0' ? system : NULL;
    switch (tmpl) {
        case RUN_CHAT_CHATML:
            if (!first) {
                sb_add(&b, "\n");
            }
            if (system != NULL) {
                sb_add(&b, "<|im_start|>system\n");
                sb_add(&b, system);
                sb_add(&b, "<|im_end|>\n");
            }
            sb_add(&b, "<|im_start|>user\n");
            sb_add(&b, user);
            sb_add(&b, "<|im_end|>\n<|im_start|>assistant\n");
            break;
        case RUN_CHAT_LLAMA3:
            if (system != NULL) {
                sb_add(&b, "<|start_header_id|>system<|end_header_id|>\n\n");
                sb_add_trimmed(&b, system);
                sb_add(&b, "<|eot_id|>");
            }
            sb_add(&b, "<|start_header_id|>user<|end_header_id|>\n\n");
            sb_add_trimmed(&b, user);
            sb_add(&b, "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
            break;
        case RUN_CHAT_GEMMA: // no system role: the system message opens the first user message
            if (!first) {
                sb_add(&b, "\n");
            }
            sb_add(&b, "<start_of_turn>user\n");
            if (system != NULL) {
                sb_add_trimmed(&b, system);
                sb_add(&b, "\n\n");
            }
            sb_add_trimmed(&b, user);
            sb_add(&b, "<end_of_turn>\n<start_of_turn>model\n");
            break;
        case RUN_CHAT_PHI3:
            if (!first) {
                sb_add(&b, "\n");
            }
            if (system != NULL) {
                sb_add(&b, "<|system|>\n");
                sb_add(&b, system);
                sb_add(&b, "<|end|>\n");
            }
            sb_add(&b, "<|user|>\n");
            sb_add(&b, user);
            sb_add(&b, "<|end|>\n<|assistant|>\n");
            break;
        case RUN_CHAT_MISTRAL_V1:
        case RUN_CHAT_MISTRAL_V3:
        case RUN_CHAT_MISTRAL_V3_TEKKEN:
        case RUN_CHAT_MISTRAL_V7:
        case RUN_CHAT_MISTRAL_V7_TEKKEN:
            format_mistral(&b, tmpl, first, system, user);
            break;
        case RUN_CHAT_UNKNOWN:
        case RUN_CHAT_COUNT:
            break;
    }
    if (!b.ok) {
        run_error("out of memory formatting a chat message");
        free(b.s);
        return NULL;
    }
    return b.s;
}

//
// tokens
//

struct token_list {
    int32_t * t;
    int64_t   n, cap;
    bool      ok;
    bool      reported; // the failure was reported (text that cannot be encoded)
};

static void tl_push(struct token_list * l, const int32_t * t, int64_t n) {
    if (!l->ok || n <= 0) {
        return;
    }
    if (l->n + n > l->cap) {
        const int64_t cap = (l->n + n) * 2;
        int32_t * grown = (int32_t *) realloc(l->t, (size_t) cap * sizeof(int32_t));
        if (grown == NULL) {
            l->ok = false;
            return;
        }
        l->t = grown;
        l->cap = cap;
    }
    memcpy(l->t + l->n, t, (size_t) n * sizeof(int32_t));
    l->n += n;
}

static void tl_push_text(struct token_list * l, const struct run_vocab * vocab, const char * text, size_t len) {
    if (!l->ok || len == 0) {
        return;
    }
    const int64_t n = run_tokenize(vocab, text, len, false, NULL, 0);
    int32_t * t = n > 0 ? (int32_t *) malloc((size_t) n * sizeof(int32_t)) : NULL;
    if (n < 0 || (n > 0 && t == NULL)) {
        l->ok = false;
        l->reported = n < 0;
        return;
    }
    if (n > 0) {
        run_tokenize(vocab, text, len, false, t, n);
        tl_push(l, t, n);
    }
    free(t);
}

// the token of the longest special piece of tmpl at text, or -1; *len its length
static int32_t special_at(const struct run_vocab * vocab, enum run_chat_template tmpl, const char * text, size_t * len) {
    int32_t best = -1;
    *len = 0;
    if (tmpl <= RUN_CHAT_UNKNOWN || tmpl >= RUN_CHAT_COUNT) {
        return -1;
    }
    for (const char * const * s = chat_templates[tmpl].specials; *s != NULL; s++) {
        const size_t n = strlen(*s);
        if (n > *len && strncmp(text, *s, n) == 0) {
            const int32_t id = run_vocab_find(vocab, *s, n);
            if (id >= 0) {
                best = id;
                *len = n;
            }
        }
    }
    return best;
}

int32_t * run_chat_tokenize(const struct run_vocab * vocab, enum run_chat_template tmpl, const char * text,
                            bool add_bos, int64_t * n_tokens) {
    struct token_list l = { .t = NULL, .n = 0, .cap = 0, .ok = true, .reported = false };
    if (add_bos && vocab->bos >= 0) {
        tl_push(&l, &vocab->bos, 1);
    }
    const char * frag = text;
    for (const char * p = text; *p != '\0';) {
        size_t len = 0;
        const int32_t id = special_at(vocab, tmpl, p, &len);
        if (id < 0) {
            p++;
            continue;
        }
        tl_push_text(&l, vocab, frag, (size_t) (p - frag));
        tl_push(&l, &id, 1);
        p += len;
        frag = p;
    }
    tl_push_text(&l, vocab, frag, strlen(frag));
    if (!l.ok) {
        if (!l.reported) {
            run_error("out of memory tokenizing a chat message");
        }
        free(l.t);
        return NULL;
    }
    *n_tokens = l.n;
    return l.t;
}

//
// the conversation
//

// Set by SIGINT, cleared before each message. A signal handler can only
// talk to the program through a static volatile sig_atomic_t; one flag for
// the process is right since a process has one terminal to interrupt it.
static volatile sig_atomic_t chat_interrupted;

static void chat_on_sigint(int sig) {
    (void) sig;
    chat_interrupted = 1;
}

// writes what token completes of the answer's text: whole UTF-8 characters only
static bool write_piece(struct run_detok * detok, const struct run_vocab * vocab, int32_t token, FILE * out) {
    const char * text = NULL;
    size_t n = 0;
    if (!run_detok_push(detok, vocab, token, &text, &n)) {
        return false;
    }
    fwrite(text, 1, n, out);
    fflush(out);
    return true;
}

// Generates until the end of the answer (the end-of-sequence or end-of-turn
// token, or the template's own), the limit, a full context or Ctrl-C. False
// when a decode or the sampler fails.
static bool chat_answer(struct run_context * rc, struct run_sampler * sampler, const struct run_chat_params * params,
                        int32_t end_of_turn, FILE * out) {
    const struct run_model * model = rc->model;
    struct run_detok detok = { NULL, 0, 0, 0 };
    bool ok = true;
    for (int64_t n_gen = 0; ok && !chat_interrupted && (params->n_predict < 0 || n_gen < params->n_predict); n_gen++) {
        if (rc->n_past >= rc->kv.n_ctx) {
            fprintf(stderr, "\n(the context of %lld tokens is full)\n", (long long) rc->kv.n_ctx);
            break;
        }
        const int32_t next = run_sample(sampler, run_get_logits(rc, rc->n_outputs - 1), model->hp.n_vocab);
        if (next < 0) {
            ok = false;
            break;
        }
        if (!params->ignore_eos && (run_vocab_is_eog(&model->vocab, next) || next == end_of_turn)) {
            break;
        }
        ok = write_piece(&detok, &model->vocab, next, out) && run_decode(rc, &next, 1);
    }
    const char * rest = NULL;
    size_t n_rest = 0;
    run_detok_flush(&detok, &rest, &n_rest);
    fwrite(rest, 1, n_rest, out);
    fflush(out);
    run_detok_free(&detok);
    return ok;
}

// one message: formatted, decoded, answered. False on a failure (reported).
static bool chat_turn(struct run_context * rc, struct run_sampler * sampler, const struct run_chat_params * params,
                      bool first, const char * message, int32_t end_of_turn, FILE * out) {
    const struct run_vocab * vocab = &rc->model->vocab;
    char * text = run_chat_format_turn(params->tmpl, first, params->system, message);
    int64_t n = 0;
    int32_t * tokens = text != NULL ? run_chat_tokenize(vocab, params->tmpl, text, first && vocab->add_bos, &n) : NULL;
    free(text);
    if (tokens == NULL) {
        return false;
    }
    if (n > rc->kv.n_ctx - rc->n_past) {
        run_error("the message of %lld tokens does not fit in the context (%lld of %lld tokens used; see -c)",
                  (long long) n, (long long) rc->n_past, (long long) rc->kv.n_ctx);
        free(tokens);
        return false;
    }
    bool ok = n == 0 || run_decode(rc, tokens, n);
    free(tokens);
    ok = ok && chat_answer(rc, sampler, params, end_of_turn, out);
    fputc('\n', out);
    fflush(out);
    if (chat_interrupted) {
        fprintf(stderr, "(answer interrupted)\n");
    }
    return ok;
}

// The most bytes a message may have: each token stands for at most the
// longest piece of the vocabulary, so a longer message cannot fit the
// tokens left in the context (and is not read on, whatever its length).
static size_t chat_message_limit(const struct run_context * rc, size_t * longest) {
    const struct run_vocab * vocab = &rc->model->vocab;
    *longest = 1;
    for (int32_t i = 0; i < vocab->n_tokens; i++) {
        *longest = vocab->len[i] > *longest ? vocab->len[i] : *longest;
    }
    const size_t room = rc->kv.n_ctx > rc->n_past ? (size_t) (rc->kv.n_ctx - rc->n_past) : 0;
    return room > SIZE_MAX / *longest ? SIZE_MAX : room * *longest;
}

enum chat_read { CHAT_READ_LINE, CHAT_READ_END, CHAT_READ_TOO_LONG, CHAT_READ_ERROR };

// One line of in (its newline dropped) into *line, at most limit bytes;
// CHAT_READ_END at the end of the input or on Ctrl-C, CHAT_READ_ERROR
// (errno set) when the input cannot be read or memory runs out.
static enum chat_read chat_read_line(FILE * in, size_t limit, char ** line, size_t * cap, size_t * len) {
    size_t n = 0;
    for (;;) {
        const int c = getc(in);
        if (c == EOF) {
            if (ferror(in) && !chat_interrupted) {
                return CHAT_READ_ERROR;
            }
            if (n == 0 || chat_interrupted) {
                return CHAT_READ_END;
            }
            break; // a last line without its newline
        }
        if (c == '\n') {
            break;
        }
        if (n >= limit) {
            return CHAT_READ_TOO_LONG;
        }
        if (n + 1 >= *cap) {
            const size_t grown = *cap < 64 ? 128 : *cap * 2;
            char * p = (char *) realloc(*line, grown);
            if (p == NULL) {
                errno = ENOMEM;
                return CHAT_READ_ERROR;
            }
            *line = p;
            *cap  = grown;
        }
        (*line)[n++] = (char) c;
    }
    (*line)[n] = '\0';
    *len = n;
    return CHAT_READ_LINE;
}

int run_chat_loop(struct run_context * rc, struct run_sampler * sampler, const struct run_chat_params * params,
                  FILE * in, FILE * out) {
    const char * eot_piece = run_chat_end_of_turn(params->tmpl);
    const int32_t end_of_turn = run_vocab_find(&rc->model->vocab, eot_piece, strlen(eot_piece));
    // no SA_RESTART: Ctrl-C while reading a message ends the read, and the program
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = chat_on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);

    char * line = NULL;
    size_t cap = 0;
    bool first = true;
    int status = 0;
    for (;;) {
        fputs("> ", out);
        fflush(out);
        chat_interrupted = 0;
        size_t longest = 1;
        const size_t limit = chat_message_limit(rc, &longest);
        size_t n = 0;
        const enum chat_read got = chat_read_line(in, limit, &line, &cap, &n);
        if (got == CHAT_READ_END) {
            fputc('\n', out);
            break;
        }
        if (got == CHAT_READ_ERROR) {
            fputc('\n', out);
            fflush(out);
            run_error("cannot read a message from the input: %s", strerror(errno));
            status = 1;
            break;
        }
        if (got == CHAT_READ_TOO_LONG) {
            fputc('\n', out);
            fflush(out);
            run_error("a message of more than %zu bytes cannot fit the %lld tokens left in the context "
                      "(a token is at most %zu bytes of text here; see -c)", limit,
                      (long long) (rc->kv.n_ctx - rc->n_past), longest);
            status = 1;
            break;
        }
        while (n > 0 && line[n - 1] == '\r') {
            line[--n] = '\0';
        }
        if (n == 0) {
            continue;
        }
        if (!chat_turn(rc, sampler, params, first, line, end_of_turn, out)) {
            status = 1;
            break;
        }
        first = false;
    }
    free(line);
    sigaction(SIGINT, &old, NULL);
    return status;
}
