// test-run-chat: conversations with ggml-run (tools/ggml-run/chat.c).
//
// - chat templates recognised from template texts written like the
//   families' published ones (Qwen's chatml, Llama 3, Gemma 3, Phi-3,
//   Mistral v1/v3/v3-tekken/v7) and by name; look-alikes of other families
//   (Phi-4, Zephyr, Llama 2) not taken for ours;
// - each template's first turn (with a system message) and next turn, as
//   the text llama.cpp's formatting of the whole conversation grows by;
// - the special pieces of a turn as single tokens, the text between them
//   tokenised as text, pieces missing from the vocabulary as text;
// - the ggml-run program driven through its input: -cnv answers two
//   messages and ends at the end of the input; Ctrl-C (SIGINT) during an
//   answer stops that answer and the conversation goes on; Ctrl-C while it
//   waits for a message ends it with status 0; an unknown template name and
//   a model without a template are refused with a message.

#include "testing.h"

#include "chat.h"
#include "tokenizer.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

//
// templates
//

static void test_detect(void) {
    static const struct { const char * text; enum run_chat_template want; } cases[] = {
        { "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}"
          "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}", RUN_CHAT_CHATML },
        { "{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
          " + message['content'] | trim + '<|eot_id|>' }}{%- endfor %}", RUN_CHAT_LLAMA3 },
        { "{{ bos_token }}{%- for message in loop_messages -%}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim"
          " + '<end_of_turn>\\n' }}{%- endfor -%}{%- if add_generation_prompt -%}{{'<start_of_turn>model\\n'}}{%- endif -%}",
          RUN_CHAT_GEMMA },
        { "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\\n' + message['content'] + '<|end|>\\n'}}"
          "{% elif message['role'] == 'user' %}{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}{% elif message['role'] =="
          " 'assistant' %}{{'<|assistant|>\\n' + message['content'] + '<|end|>\\n'}}{% endif %}{% endfor %}", RUN_CHAT_PHI3 },
        { "{{ bos_token }}{% for message in messages %}{% if loop.first and system_message is defined %}"
          "{{ ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}{% endif %}{% endfor %}",
          RUN_CHAT_MISTRAL_V1 },
        { "{%- if tools is not none %}{{- '[AVAILABLE_TOOLS] [' }}{%- endif %}{{- '[INST] ' + message['content'] + '[/INST]' }}",
          RUN_CHAT_MISTRAL_V3 },
        { "{%- if tools is not none %}{{- '[AVAILABLE_TOOLS]' }}{%- endif %}{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}",
          RUN_CHAT_MISTRAL_V3_TEKKEN },
        { "{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}{{- '[INST]' + message['content'] + '[/INST]' }}",
          RUN_CHAT_MISTRAL_V7 },
        // other families that share a mark
        { "{{'<|im_start|>' + message['role'] + '<|im_sep|>' + message['content'] + '<|im_end|>'}}", RUN_CHAT_UNKNOWN }, // Phi-4
        { "{{ '<|user|>\\n' + message['content'] + '<|endoftext|>' }}", RUN_CHAT_UNKNOWN },                               // Zephyr
        { "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}", RUN_CHAT_UNKNOWN },                               // Llama 2
        { "{{ message['content'] }}", RUN_CHAT_UNKNOWN },
        // names
        { "chatml", RUN_CHAT_CHATML }, { "llama3", RUN_CHAT_LLAMA3 }, { "gemma", RUN_CHAT_GEMMA }, { "phi3", RUN_CHAT_PHI3 },
        { "mistral", RUN_CHAT_MISTRAL_V3 }, { "mistral-v7-tekken", RUN_CHAT_MISTRAL_V7_TEKKEN }, { "vicuna", RUN_CHAT_UNKNOWN },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const enum run_chat_template got = run_chat_template_detect(cases[i].text);
        CHECK_MSG(got == cases[i].want, "case %zu: %s, expected %s", i, run_chat_template_name(got),
                  run_chat_template_name(cases[i].want));
    }
    CHECK(run_chat_template_detect(NULL) == RUN_CHAT_UNKNOWN);
}

static void check_turn(enum run_chat_template t, bool first, const char * system, const char * user, const char * want) {
    char * got = run_chat_format_turn(t, first, system, user);
    CHECK_MSG(got != NULL && strcmp(got, want) == 0, "%s %s turn: got \"%s\"", run_chat_template_name(t),
              first ? "first" : "next", got != NULL ? got : "(null)");
    free(got);
}

static void test_format(void) {
    check_turn(RUN_CHAT_CHATML, true, "Be brief.", "Hi!",
               "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n");
    check_turn(RUN_CHAT_CHATML, false, "Be brief.", "And?", "<|im_end|>\n<|im_start|>user\nAnd?<|im_end|>\n<|im_start|>assistant\n");
    check_turn(RUN_CHAT_CHATML, true, NULL, "Hi!", "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n");
    // Llama 3 and Gemma trim the messages
    check_turn(RUN_CHAT_LLAMA3, true, " Be brief. ", " Hi!\n",
               "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    check_turn(RUN_CHAT_LLAMA3, false, NULL, "And?",
               "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnd?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    check_turn(RUN_CHAT_GEMMA, true, "Be brief. ", " Hi!",
               "<start_of_turn>user\nBe brief.\n\nHi!<end_of_turn>\n<start_of_turn>model\n");
    check_turn(RUN_CHAT_GEMMA, false, NULL, "And?", "<end_of_turn>\n<start_of_turn>user\nAnd?<end_of_turn>\n<start_of_turn>model\n");
    check_turn(RUN_CHAT_PHI3, true, "Be brief.", "Hi!", "<|system|>\nBe brief.<|end|>\n<|user|>\nHi!<|end|>\n<|assistant|>\n");
    check_turn(RUN_CHAT_PHI3, false, NULL, "And?", "<|end|>\n<|user|>\nAnd?<|end|>\n<|assistant|>\n");
    check_turn(RUN_CHAT_MISTRAL_V1, true, "Be brief.", "Hi!", " [INST] Be brief.\n\nHi! [/INST]");
    check_turn(RUN_CHAT_MISTRAL_V1, false, NULL, "And?", "</s> [INST] And? [/INST]");
    check_turn(RUN_CHAT_MISTRAL_V3, true, "Be brief.", "Hi!", "[INST] Be brief.\n\nHi![/INST]");
    check_turn(RUN_CHAT_MISTRAL_V3, false, "Be brief.", "And?", "</s>[INST] And?[/INST]");
    check_turn(RUN_CHAT_MISTRAL_V3_TEKKEN, true, NULL, "Hi!", "[INST]Hi![/INST]");
    check_turn(RUN_CHAT_MISTRAL_V7, true, "Be brief.", "Hi!", "[SYSTEM_PROMPT] Be brief.[/SYSTEM_PROMPT][INST] Hi![/INST]");
    check_turn(RUN_CHAT_MISTRAL_V7_TEKKEN, false, NULL, "And?", "</s>[INST]And?[/INST]");
    CHECK(run_chat_format_turn(RUN_CHAT_UNKNOWN, true, NULL, "Hi!") == NULL);
    CHECK(strcmp(run_chat_end_of_turn(RUN_CHAT_LLAMA3), "<|eot_id|>") == 0);
    CHECK(strcmp(run_chat_end_of_turn(RUN_CHAT_GEMMA), "<end_of_turn>") == 0);
}

static int64_t text_tokens(const struct run_vocab * v, const char * s, int32_t * out, int64_t cap) {
    return run_tokenize(v, s, strlen(s), false, out, cap);
}

static void test_tokens(void) {
    const char * pieces[] = { "<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "\xe2\x96\x81", "a", "b", "u", "s", "e", "r",
                              "<0x0A>", "<", "|", ">", "n", "d" };
    const int n_pieces = (int) (sizeof(pieces) / sizeof(pieces[0]));
    struct run_vocab v;
    CHECK(run_vocab_init(&v, n_pieces, pieces, NULL, NULL, 1, 2, 0));
    int64_t n = 0;
    int32_t * got = run_chat_tokenize(&v, RUN_CHAT_CHATML, "<|im_start|>user\nab<|im_end|>\n", true, &n);
    int32_t want[64];
    int64_t k = 0;
    want[k++] = 1;
    want[k++] = 3;
    k += text_tokens(&v, "user\nab", want + k, 64 - k);
    want[k++] = 4;
    k += text_tokens(&v, "\n", want + k, 64 - k);
    CHECK(got != NULL && n == k && memcmp(got, want, (size_t) k * sizeof(int32_t)) == 0);
    free(got);
    // Phi-3's pieces are no tokens here: all text
    got = run_chat_tokenize(&v, RUN_CHAT_PHI3, "<|end|>\nab", false, &n);
    k = text_tokens(&v, "<|end|>\nab", want, 64);
    CHECK(got != NULL && n == k && k > 0 && memcmp(got, want, (size_t) k * sizeof(int32_t)) == 0);
    free(got);
    run_vocab_free(&v);
}

//
// the program through its input
//

struct child {
    pid_t  pid;
    int    in;       // its stdin
    int    out;      // its stdout and stderr
    char   buf[1 << 16];
    size_t len;
    bool   eof;
};

static bool child_start(struct child * c, char * const * argv) {
    memset(c, 0, sizeof(*c));
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0) {
        return false;
    }
    fflush(stdout);
    fflush(stderr);
    c->pid = fork();
    if (c->pid < 0) {
        return false;
    }
    if (c->pid == 0) {
        dup2(to[0], STDIN_FILENO);
        dup2(from[1], STDOUT_FILENO);
        dup2(from[1], STDERR_FILENO);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    c->in  = to[1];
    c->out = from[0];
    signal(SIGPIPE, SIG_IGN);
    return true;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

// reads until the output holds `count` occurrences of mark after offset
// `from` and then at least `extra` more bytes; false after the time limit
// (a generous one: sanitizer builds are slow) or at the end of the output
static bool child_wait(struct child * c, size_t from, const char * mark, int count, size_t extra) {
    const double deadline = now_s() + 120.0;
    for (;;) {
        int seen = 0;
        size_t end = 0;
        for (const char * p = c->buf + from; (p = strstr(p, mark)) != NULL; p += strlen(mark)) {
            if (++seen == count) {
                end = (size_t) (p - c->buf) + strlen(mark);
                break;
            }
        }
        if (seen == count && c->len >= end + extra) {
            return true;
        }
        if (c->eof || now_s() > deadline || c->len + 1 >= sizeof(c->buf)) {
            return false;
        }
        struct pollfd pfd = { .fd = c->out, .events = POLLIN, .revents = 0 };
        if (poll(&pfd, 1, 1000) > 0) {
            const ssize_t n = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
            if (n <= 0) {
                c->eof = true;
            } else {
                c->len += (size_t) n;
            }
            c->buf[c->len] = '\0';
        }
    }
}

// the exit: true and status when it exited, false when killed or still running at the limit
static bool child_finish(struct child * c, int * status) {
    close(c->in);
    child_wait(c, 0, "\x01never\x01", 1, 0); // to the end of its output (or the time limit)
    close(c->out);
    int ws = 0;
    const double deadline = now_s() + 60.0;
    pid_t r;
    while ((r = waitpid(c->pid, &ws, WNOHANG)) == 0 && now_s() < deadline) {
        usleep(10000);
    }
    if (r == 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, &ws, 0);
        return false;
    }
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
    return WIFEXITED(ws);
}

static void child_say(struct child * c, const char * line) {
    const ssize_t n = write(c->in, line, strlen(line));
    CHECK(n == (ssize_t) strlen(line));
}

// a small synthetic model with a chatml conversation: fast answers, long with --ignore-eos
#define CHAT_MODEL (char *) "--size", (char *) "tiny", (char *) "--n-embd", (char *) "64", (char *) "--n-head", (char *) "2", \
    (char *) "--n-head-kv", (char *) "1", (char *) "--n-ff", (char *) "128", (char *) "--n-layer", (char *) "2", \
    (char *) "--n-vocab", (char *) "400", (char *) "-t", (char *) "2", (char *) "-dev", (char *) "none"

static void test_program_two_messages(void) {
    char * argv[] = { (char *) GGML_RUN_BIN, CHAT_MODEL, (char *) "-cnv", (char *) "--chat-template", (char *) "chatml",
                      (char *) "--system", (char *) "be brief", (char *) "-n", (char *) "5", NULL };
    struct child c;
    CHECK(child_start(&c, argv));
    CHECK_MSG(child_wait(&c, 0, "> ", 1, 0), "no first prompt:\n%s", c.buf);
    child_say(&c, "hello\n");
    child_say(&c, "kaba\n");
    int status = -1;
    const bool exited = child_finish(&c, &status);
    CHECK_MSG(exited && status == 0, "ggml-run -cnv ended with %d:\n%s", status, c.buf);
    // three prompts: two messages answered, then the end of the input
    int prompts = 0;
    for (const char * p = c.buf; (p = strstr(p, "\n> ")) != NULL; p++) {
        prompts++;
    }
    CHECK_MSG(prompts >= 2 && strstr(c.buf, "template chatml") != NULL && strstr(c.buf, "\n> \n") != NULL,
              "ggml-run -cnv printed:\n%s", c.buf);
}

static void test_program_ctrl_c(void) {
    char * argv[] = { (char *) GGML_RUN_BIN, CHAT_MODEL, (char *) "-cnv", (char *) "--chat-template", (char *) "chatml",
                      (char *) "--ignore-eos", (char *) "-c", (char *) "60000", NULL };
    struct child c;
    CHECK(child_start(&c, argv));
    CHECK_MSG(child_wait(&c, 0, "> ", 1, 0), "no first prompt:\n%s", c.buf);
    // an answer that would run for 60000 tokens, stopped once it has begun
    size_t mark = c.len;
    child_say(&c, "hello\n");
    CHECK_MSG(child_wait(&c, mark, "", 1, 40), "no answer:\n%s", c.buf);
    kill(c.pid, SIGINT);
    // the answer's end, then the prompt (a random answer may hold "> " itself)
    CHECK_MSG(child_wait(&c, mark, "(answer interrupted)\n> ", 1, 0),
              "Ctrl-C did not stop the answer for the next message:\n%s", c.buf);
    // the conversation goes on: a second answer, stopped too
    mark = c.len;
    child_say(&c, "kaba\n");
    CHECK_MSG(child_wait(&c, mark, "", 1, 40), "no second answer:\n%s", c.buf);
    kill(c.pid, SIGINT);
    CHECK_MSG(child_wait(&c, mark, "(answer interrupted)\n> ", 1, 0), "Ctrl-C did not stop the second answer:\n%s", c.buf);
    // Ctrl-C at the prompt ends the program, normally
    usleep(100000);
    kill(c.pid, SIGINT);
    int status = -1;
    const bool exited = child_finish(&c, &status);
    CHECK_MSG(exited && status == 0, "ggml-run -cnv after Ctrl-C at the prompt ended with %d:\n%s", status, c.buf);
}

static void test_program_refusals(void) {
    // the synthetic model has no tokenizer.chat_template
    char * none[] = { (char *) GGML_RUN_BIN, CHAT_MODEL, (char *) "-cnv", NULL };
    struct child c;
    CHECK(child_start(&c, none));
    int status = -1;
    CHECK(child_finish(&c, &status) && status == 1 && strstr(c.buf, "--chat-template") != NULL);
    char * unknown[] = { (char *) GGML_RUN_BIN, CHAT_MODEL, (char *) "-cnv", (char *) "--chat-template", (char *) "vicuna", NULL };
    CHECK(child_start(&c, unknown));
    CHECK(child_finish(&c, &status) && status == 1 && strstr(c.buf, "vicuna") != NULL);
}

int main(void) {
    test_detect();
    test_format();
    test_tokens();
    test_program_two_messages();
    test_program_ctrl_c();
    test_program_refusals();
    return TEST_RESULT();
}
