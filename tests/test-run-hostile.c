// test-run-hostile: ggml-run (tools/ggml-run) against hostile use: inputs
// and options that made it abort, grow without bound, compute NaN or give a
// wrong or no message. Each case ends in a clear message and exit status,
// checked here through the program or the library (messages read from
// stderr):
//
// - a gemma3 model whose every layer has a sliding window (fewer layers than
//   the window pattern) runs: the unused full mask is not written (it aborted);
// - a synthetic model whose weights overflow the address space is refused
//   with "cannot allocate" (gguf aborted on the overflowing offsets);
// - -cnv reads no more of a message than the context left can hold: an
//   endless line (no newline) is refused early, an unreadable input (a
//   directory) is an error (it was the end of the input, status 0);
// - hyperparameters whose products overflow (phi3 heads of 2^31-1) and float
//   keys that are not finite, subnormal or out of range are refused naming the key;
// - text neither tokenizer can encode (no token, byte token or unknown
//   token) is an error naming the character and its byte offset (SPM gave
//   token -1, BPE dropped it);
// - token_embd stored as I32 is refused as a GET_ROWS the model cannot use;
// - -c too small: no room for any token is an error, a context that fills
//   during generation a note (status 0);
// - the generated text ends with its newline before the statistics; the
//   extra buffer type's own name is kept (and printed);
// - -t beyond what the system can start (threads of a stack no mapping can
//   hold) is refused before any work;
// - (--vulkan) a KV cache larger than the device's largest buffer is
//   reported with the sizes.

#include "testing.h"
#include "run-program.h"

#include "arch.h"
#include "kv-cache.h"
#include "model.h"
#include "synthetic.h"
#include "tokenizer.h"

#include "ggml-backend.h"
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SP "\xe2\x96\x81" // SentencePiece's space

//
// stderr of library calls
//

static FILE * g_capture;
static int    g_saved_stderr = -1;

static void capture_begin(void) {
    fflush(stderr);
    g_capture = tmpfile();
    g_saved_stderr = dup(STDERR_FILENO);
    if (g_capture != NULL) {
        dup2(fileno(g_capture), STDERR_FILENO);
    }
}

static void capture_end(char * buf, size_t size) {
    fflush(stderr);
    dup2(g_saved_stderr, STDERR_FILENO);
    close(g_saved_stderr);
    buf[0] = '\0';
    if (g_capture != NULL) {
        rewind(g_capture);
        const size_t n = fread(buf, 1, size - 1, g_capture);
        buf[n] = '\0';
        fclose(g_capture);
    }
    fputs(buf, stderr); // for the log of the test
}

//
// a tiny llama file
//

enum { H_N_EMBD = 32, H_N_HEAD = 2, H_N_HEAD_KV = 1, H_HEAD_DIM = 16, H_N_FF = 64, H_N_VOCAB = 8 };

static const char * const h_pieces[H_N_VOCAB] = { "<unk>", "<s>", "</s>", SP, "a", "b", "c", SP "a" };

static char g_dir[256];

static void temp_path(char * out, size_t size, const char * name) {
    snprintf(out, size, "%s/%s", g_dir, name);
}

static uint64_t g_rng = 0x243f6a8885a308d3ull;

static float rng_small(void) { // [-0.1, 0.1)
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float) ((double) (g_rng >> 40) / (double) (1ull << 24) * 0.2 - 0.1);
}

static void add_tensor(struct ggml_context * ctx, struct gguf_context * gguf, const char * name, enum ggml_type type,
                       int64_t ne0, int64_t ne1) {
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, type, ne0, ne1);
    ggml_set_name(t, name);
    for (int64_t i = 0; i < ne0 * ne1; i++) {
        if (type == GGML_TYPE_I32) {
            ((int32_t *) t->data)[i] = (int32_t) (i % 7);
        } else {
            ((float *) t->data)[i] = ne1 == 1 ? 1.0f : rng_small();
        }
    }
    gguf_add_tensor(gguf, t);
}

static void set_llama_keys(struct gguf_context * gguf) {
    gguf_set_val_str(gguf, "general.architecture", "llama");
    gguf_set_val_u32(gguf, "llama.context_length", 64);
    gguf_set_val_u32(gguf, "llama.embedding_length", H_N_EMBD);
    gguf_set_val_u32(gguf, "llama.block_count", 1);
    gguf_set_val_u32(gguf, "llama.feed_forward_length", H_N_FF);
    gguf_set_val_u32(gguf, "llama.attention.head_count", H_N_HEAD);
    gguf_set_val_u32(gguf, "llama.attention.head_count_kv", H_N_HEAD_KV);
    gguf_set_val_f32(gguf, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    gguf_set_val_f32(gguf, "llama.rope.freq_base", 10000.0f);
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(gguf, "tokenizer.ggml.tokens", (const char **) h_pieces, H_N_VOCAB);
    gguf_set_val_u32(gguf, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(gguf, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_val_u32(gguf, "tokenizer.ggml.unknown_token_id", 0);
}

// a llama of one layer, its token embeddings of type embd_type
static bool write_llama(const char * path, enum ggml_type embd_type) {
    const struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    set_llama_keys(gguf);
    const int64_t q = H_N_HEAD * H_HEAD_DIM, kv = H_N_HEAD_KV * H_HEAD_DIM;
    add_tensor(ctx, gguf, "token_embd.weight", embd_type, H_N_EMBD, H_N_VOCAB);
    add_tensor(ctx, gguf, "output_norm.weight", GGML_TYPE_F32, H_N_EMBD, 1);
    add_tensor(ctx, gguf, "output.weight", GGML_TYPE_F32, H_N_EMBD, H_N_VOCAB);
    add_tensor(ctx, gguf, "blk.0.attn_norm.weight", GGML_TYPE_F32, H_N_EMBD, 1);
    add_tensor(ctx, gguf, "blk.0.attn_q.weight", GGML_TYPE_F32, H_N_EMBD, q);
    add_tensor(ctx, gguf, "blk.0.attn_k.weight", GGML_TYPE_F32, H_N_EMBD, kv);
    add_tensor(ctx, gguf, "blk.0.attn_v.weight", GGML_TYPE_F32, H_N_EMBD, kv);
    add_tensor(ctx, gguf, "blk.0.attn_output.weight", GGML_TYPE_F32, q, H_N_EMBD);
    add_tensor(ctx, gguf, "blk.0.ffn_norm.weight", GGML_TYPE_F32, H_N_EMBD, 1);
    add_tensor(ctx, gguf, "blk.0.ffn_gate.weight", GGML_TYPE_F32, H_N_EMBD, H_N_FF);
    add_tensor(ctx, gguf, "blk.0.ffn_up.weight", GGML_TYPE_F32, H_N_EMBD, H_N_FF);
    add_tensor(ctx, gguf, "blk.0.ffn_down.weight", GGML_TYPE_F32, H_N_FF, H_N_EMBD);
    const bool ok = gguf_write_to_file(gguf, path, false);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

//
// the program
//

// runs ggml-run with args (NULL-terminated), stdin from stdin_path when not NULL
static void run_tool(const char * const * args, const char * stdin_path, struct program_result * r) {
    char * argv[32];
    int n = 0;
    argv[n++] = (char *) GGML_RUN_BIN;
    for (int i = 0; args[i] != NULL && n < 31; i++) {
        argv[n++] = (char *) args[i];
    }
    argv[n] = NULL;
    int saved = -1, fd = -1;
    if (stdin_path != NULL) {
        fd = open(stdin_path, O_RDONLY);
        saved = dup(STDIN_FILENO);
        dup2(fd, STDIN_FILENO);
    }
    if (!run_program(argv, 0, r)) {
        r->exited = false;
        r->status = -1;
    }
    if (stdin_path != NULL) {
        dup2(saved, STDIN_FILENO);
        close(saved);
        close(fd);
    }
}

static bool ended(const struct program_result * r, int status) {
    return r->exited && r->status == status;
}

static void test_all_layers_in_window(void) {
    // tiny has 4 layers, gemma3's pattern 6: every layer slides, the full mask is in no graph
    const char * args[] = { "--size", "tiny", "--arch", "gemma3", "-pp", "4", "-tg", "2", "-dev", "none", "-t", "2", NULL };
    struct program_result r;
    run_tool(args, NULL, &r);
    char e[32];
    CHECK_MSG(ended(&r, 0) && strstr(r.output, "generation:") != NULL, "gemma3 of 4 layers ended by %s:\n%s",
              program_ending(&r, e, sizeof(e)), r.output);
}

// --profile: the per-token table, its rows for the products and the weights'
// bandwidth, then the 3 tokens paired with reads of 64 MiB per thread, each
// token's share of the read after it a positive, finite percentage
static void test_profile_option(void) {
    const char * args[] = { "--size", "tiny", "-pp", "4", "-tg", "3", "-r", "2", "--profile", "-dev", "none", "-t", "2", NULL };
    struct program_result r;
    run_tool(args, NULL, &r);
    char e[32];
    CHECK_MSG(ended(&r, 0) && strstr(r.output, "generation profile: 6 tokens, 2 threads") != NULL &&
              strstr(r.output, "MUL_MAT q8_0") != NULL && strstr(r.output, "weights read:") != NULL,
              "--profile ended by %s:\n%s", program_ending(&r, e, sizeof(e)), r.output);
    const char * paired = strstr(r.output, "paired: 3 tokens, each followed by a read of 128 MiB (2 threads, ");
    const char * share  = paired != NULL ? strstr(paired, "each token reads the weights at ") : NULL;
    double pct = -1.0;
    CHECK_MSG(share != NULL && sscanf(share, "each token reads the weights at %lf%%", &pct) == 1 && pct > 0.0 &&
              isfinite(pct), "--profile's paired reads (share %g):\n%s", pct, r.output);
}

static void test_address_space(void) {
    const char * args[] = { "--size", "tiny", "--n-embd", "2000000000", "-dev", "none", "-t", "2", NULL };
    struct program_result r;
    run_tool(args, NULL, &r);
    char e[32];
    CHECK_MSG(ended(&r, 1) && strstr(r.output, "cannot allocate") != NULL, "--n-embd 2000000000 ended by %s:\n%s",
              program_ending(&r, e, sizeof(e)), r.output);
}

static void test_unreadable_input(void) {
    const char * args[] = { "--size", "tiny", "-cnv", "--chat-template", "chatml", "-dev", "none", "-t", "2", NULL };
    struct program_result r;
    run_tool(args, "/", &r);
    char e[32];
    CHECK_MSG(ended(&r, 1) && strstr(r.output, "cannot read") != NULL, "-cnv < / ended by %s:\n%s",
              program_ending(&r, e, sizeof(e)), r.output);
}

// An endless message: bytes without a newline written to the program's
// input until it stops reading. It must stop on its own (the context of 64
// tokens holds a few hundred bytes) long before 64 MiB; it read on before.
static void test_endless_message(void) {
    int to[2], from[2];
    CHECK(pipe(to) == 0 && pipe(from) == 0);
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(to[0], STDIN_FILENO);
        dup2(from[1], STDOUT_FILENO);
        dup2(from[1], STDERR_FILENO);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        char * argv[] = { (char *) GGML_RUN_BIN, (char *) "--size", (char *) "tiny", (char *) "-cnv", (char *) "--chat-template",
                          (char *) "chatml", (char *) "-c", (char *) "64", (char *) "-dev", (char *) "none", (char *) "-t",
                          (char *) "2", NULL };
        execv(argv[0], argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    static char chunk[1 << 16];
    memset(chunk, 'a', sizeof(chunk));
    size_t written = 0;
    const size_t most = (size_t) 64 << 20;
    char out[8192];
    size_t len = 0;
    while (written < most) {
        const ssize_t n = write(to[1], chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; // EPIPE: it stopped reading and ended
        }
        written += (size_t) n;
        // keep its output pipe drained (the first bytes kept)
        struct pollfd pfd = { .fd = from[0], .events = POLLIN, .revents = 0 };
        char sink[4096];
        ssize_t got;
        while (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN) && (got = read(from[0], sink, sizeof(sink))) > 0) {
            const size_t keep = (size_t) got < sizeof(out) - 1 - len ? (size_t) got : sizeof(out) - 1 - len;
            memcpy(out + len, sink, keep);
            len += keep;
        }
    }
    close(to[1]);
    for (ssize_t n; len + 1 < sizeof(out) && (n = read(from[0], out + len, sizeof(out) - 1 - len)) > 0;) {
        len += (size_t) n;
    }
    out[len] = '\0';
    close(from[0]);
    if (written >= most) {
        kill(pid, SIGKILL);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    signal(SIGPIPE, old);
    CHECK_MSG(written < most, "-cnv read %zu bytes of one message without stopping", written);
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 1 && strstr(out, "cannot fit") != NULL,
              "-cnv with an endless message (%zu bytes written):\n%s", written, out);
}

static void test_cli_model(const char * path) {
    char e[32];
    struct program_result r;
    // the prompt "" is bos alone: with -c 1 no token can follow
    const char * full[] = { "-m", path, "-p", "", "-c", "1", "-n", "4", "-dev", "none", "-t", "1", NULL };
    run_tool(full, NULL, &r);
    CHECK_MSG(ended(&r, 1) && strstr(r.output, "no room to generate") != NULL, "-c 1 ended by %s:\n%s",
              program_ending(&r, e, sizeof(e)), r.output);
    // "a" is bos and "▁a": 2 tokens generated of 10, then the note
    const char * fills[] = { "-m", path, "-p", "a", "-c", "4", "-n", "10", "--ignore-eos", "-dev", "none", "-t", "1", NULL };
    run_tool(fills, NULL, &r);
    CHECK_MSG(ended(&r, 0) && strstr(r.output, "(the context of 4 tokens is full: 2 of 10 tokens generated") != NULL &&
              strstr(r.output, "generation:      2 tokens") != NULL, "-c 4 -n 10 ended by %s:\n%s",
              program_ending(&r, e, sizeof(e)), r.output);
    // the text's newline comes before the statistics, even through a pipe
    const char * text[] = { "-m", path, "-p", "a", "-n", "3", "--ignore-eos", "-dev", "none", "-t", "1", NULL };
    run_tool(text, NULL, &r);
    const char * splits = strstr(r.output, "splits:");
    CHECK_MSG(ended(&r, 0) && splits != NULL && splits > r.output && splits[-1] == '\n' &&
              strstr(r.output, "context:") < splits, "the text and the statistics:\n%s", r.output);
}

static void test_i32_embeddings(void) {
    char path[400];
    temp_path(path, sizeof(path), "i32.gguf");
    CHECK(write_llama(path, GGML_TYPE_I32));
    const char * args[] = { "-m", path, "-p", "a", "-n", "1", "-dev", "none", "-t", "1", NULL };
    struct program_result r;
    run_tool(args, NULL, &r);
    char e[32];
    CHECK_MSG(ended(&r, 1) && strstr(r.output, "GET_ROWS") != NULL && strstr(r.output, "token_embd.weight") != NULL &&
              strstr(r.output, "compute buffers") == NULL, "token_embd of I32 ended by %s:\n%s",
              program_ending(&r, e, sizeof(e)), r.output);
    remove(path);
}

static void test_threads(void) {
    // More threads than the system starts. Not by running into its limits:
    // threads draw on the machine's process ids (pid_max, often 32768) and
    // would starve every other program meanwhile. A thread's default stack
    // is the stack limit (glibc): at 1 TiB no mapping for one is granted.
    struct rlimit old, huge;
    const rlim_t tib = (rlim_t) 1 << 40;
    if (getrlimit(RLIMIT_STACK, &old) != 0 || (old.rlim_max != RLIM_INFINITY && old.rlim_max < tib)) {
        printf("the stack limit cannot be raised to 1 TiB: -t beyond the system not checked\n");
        return;
    }
    huge = old;
    huge.rlim_cur = tib;
    CHECK(setrlimit(RLIMIT_STACK, &huge) == 0);
    // OpenBLAS, where the BLAS backend is built into the library, starts its
    // threads when it is loaded, and under that limit could not: it is told
    // to start none
    const char * blas_threads = getenv("OPENBLAS_NUM_THREADS");
    char * blas_threads_was = blas_threads != NULL ? strdup(blas_threads) : NULL;
    CHECK(setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0);
    const char * args[] = { "--size", "tiny", "-t", "100000", "-pp", "2", "-tg", "1", "-dev", "none", NULL };
    struct program_result r;
    run_tool(args, NULL, &r);
    CHECK(setrlimit(RLIMIT_STACK, &old) == 0);
    CHECK((blas_threads_was != NULL ? setenv("OPENBLAS_NUM_THREADS", blas_threads_was, 1) : unsetenv("OPENBLAS_NUM_THREADS")) == 0);
    free(blas_threads_was);
    char e[32];
    CHECK_MSG(ended(&r, 1) && strstr(r.output, "cannot start 100000 threads") != NULL &&
              strstr(r.output, "prompt:") == NULL && strstr(r.output, "computing the graph failed") == NULL,
              "-t 100000 ended by %s:\n%s", program_ending(&r, e, sizeof(e)), r.output);
}

//
// hyperparameters
//

// run_hparams_load on gguf, its message in msg
static bool load_hparams(const struct gguf_context * gguf, char * msg, size_t size) {
    struct run_hparams hp;
    capture_begin();
    const bool ok = run_hparams_load(&hp, gguf);
    capture_end(msg, size);
    return ok;
}

static void test_overflowing_heads(void) {
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_str(gguf, "general.architecture", "phi3");
    gguf_set_val_u32(gguf, "phi3.context_length", 64);
    gguf_set_val_u32(gguf, "phi3.embedding_length", 256);
    gguf_set_val_u32(gguf, "phi3.block_count", 1);
    gguf_set_val_u32(gguf, "phi3.feed_forward_length", 256);
    gguf_set_val_u32(gguf, "phi3.attention.head_count", INT32_MAX);
    gguf_set_val_u32(gguf, "phi3.attention.head_count_kv", INT32_MAX);
    gguf_set_val_u32(gguf, "phi3.attention.key_length", INT32_MAX);
    gguf_set_val_u32(gguf, "phi3.rope.dimension_count", 64); // even, as the filer's: the shapes were computed
    gguf_set_val_f32(gguf, "phi3.attention.layer_norm_rms_epsilon", 1e-5f);
    char msg[1024];
    CHECK_MSG(!load_hparams(gguf, msg, sizeof(msg)) && strstr(msg, "phi3.*") != NULL &&
              strstr(msg, "attention.key_length") != NULL, "phi3 heads of 2^31-1: \"%s\"", msg);
    gguf_free(gguf);
}

static void test_float_keys(void) {
    static const struct { const char * key; double value; bool f64; } cases[] = {
        { "llama.attention.layer_norm_rms_epsilon", (double) INFINITY, false },
        { "llama.attention.layer_norm_rms_epsilon", (double) NAN, false },
        { "llama.attention.layer_norm_rms_epsilon", 1e-40, false },  // subnormal
        { "llama.attention.layer_norm_rms_epsilon", 1e-40, true },   // normal as a double, not as a float
        { "llama.attention.layer_norm_rms_epsilon", 2.0, false },    // beyond 1
        { "llama.attention.layer_norm_rms_epsilon", -1e-5, false },
        { "llama.rope.freq_base", 1e300, true },                     // no float
        { "llama.rope.freq_base", -10000.0, false },
        { "llama.rope.scaling.factor", 1e-40, false },
        { "llama.rope.scaling.factor", -(double) INFINITY, false },
        { "llama.rope.scaling.factor", 1e30, false },
        { "llama.rope.scale_linear", 1e-40, false },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gguf_context * gguf = gguf_init_empty();
        set_llama_keys(gguf);
        gguf_set_val_str(gguf, "llama.rope.scaling.type", "linear");
        if (cases[i].f64) {
            gguf_set_val_f64(gguf, cases[i].key, cases[i].value);
        } else {
            gguf_set_val_f32(gguf, cases[i].key, (float) cases[i].value);
        }
        char msg[1024];
        CHECK_MSG(!load_hparams(gguf, msg, sizeof(msg)) && strstr(msg, cases[i].key) != NULL,
                  "%s = %g (%s): \"%s\"", cases[i].key, cases[i].value, cases[i].f64 ? "f64" : "f32", msg);
        gguf_free(gguf);
    }
    // the usual values load, a factor of 0 means none
    struct gguf_context * gguf = gguf_init_empty();
    set_llama_keys(gguf);
    gguf_set_val_str(gguf, "llama.rope.scaling.type", "linear");
    gguf_set_val_f32(gguf, "llama.rope.scaling.factor", 0.0f);
    char msg[1024];
    CHECK_MSG(load_hparams(gguf, msg, sizeof(msg)), "usual keys: \"%s\"", msg);
    gguf_set_val_f32(gguf, "llama.rope.scaling.factor", 8.0f);
    CHECK_MSG(load_hparams(gguf, msg, sizeof(msg)), "a factor of 8: \"%s\"", msg);
    gguf_free(gguf);
}

//
// tokenizers
//

// tokenising text must fail, naming what (U+....) at which byte
static void check_unencodable(const struct run_vocab * v, const char * text, const char * what, const char * at) {
    char msg[1024];
    capture_begin();
    const int64_t n = run_tokenize(v, text, strlen(text), false, NULL, 0);
    capture_end(msg, sizeof(msg));
    CHECK_MSG(n == -1 && strstr(msg, what) != NULL && strstr(msg, at) != NULL, "\"%s\": %lld tokens, \"%s\"", text,
              (long long) n, msg);
}

static void test_spm_unencodable(void) {
    // no byte tokens, no unknown token
    const char * pieces[] = { "<s>", "</s>", SP, "a", "b" };
    struct run_vocab v;
    CHECK(run_vocab_init(&v, 5, pieces, NULL, NULL, 0, 1, -1));
    check_unencodable(&v, "ab \xc3\xa9", "U+00E9", "at byte 3");
    check_unencodable(&v, "a\x01", "U+0001", "at byte 1");
    check_unencodable(&v, "ab\xff", "0xFF", "at byte 2");
    const int64_t ok = run_tokenize(&v, "ab ab", 5, false, NULL, 0);
    CHECK(ok > 0);
    run_vocab_free(&v);
    // with an unknown token the character is that token
    const char * with_unk[] = { "<unk>", "<s>", "</s>", SP, "a", "b" };
    CHECK(run_vocab_init(&v, 6, with_unk, NULL, NULL, 1, 2, 0));
    int32_t tokens[16];
    const int64_t n = run_tokenize(&v, "ab \xc3\xa9", 5, false, tokens, 16);
    CHECK(n > 0 && n <= 16);
    for (int64_t i = 0; i < n && i < 16; i++) {
        CHECK(tokens[i] >= 0 && tokens[i] < 6);
    }
    run_vocab_free(&v);
}

static void test_bpe_unencodable(void) {
    // the byte alphabet's 'a', 'b' and space (U+0120), one merge; no unknown token
    const char * pieces[] = { "a", "b", "\xc4\xa0", "ab" };
    const char * merges[] = { "a b" };
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "gpt2");
    gguf_set_val_str(gguf, "tokenizer.ggml.pre", "gpt-2");
    gguf_set_arr_str(gguf, "tokenizer.ggml.tokens", pieces, 4);
    gguf_set_arr_str(gguf, "tokenizer.ggml.merges", merges, 1);
    struct run_vocab v;
    CHECK(run_vocab_load(&v, gguf));
    check_unencodable(&v, "ab \xc3\xa9", "U+00E9", "at byte 3");
    check_unencodable(&v, "ba\n", "U+000A", "at byte 2");
    int32_t tokens[8];
    // "ab" and " ab": the merged word, then the space and the merged word
    CHECK(run_tokenize(&v, "ab ab", 5, false, tokens, 8) == 3 && tokens[0] == 3 && tokens[1] == 2 && tokens[2] == 3);
    run_vocab_free(&v);
    gguf_free(gguf);
}

//
// placement and devices
//

// BF16 weights go to the CPU's extra buffer type where it has one: the model keeps that type, with its name
static void test_repack_buft_name(void) {
    struct run_synth_params p;
    CHECK(run_synth_preset("tiny", &p));
    p.wtype = GGML_TYPE_BF16;
    p.n_layer = 1;
    p.n_threads = 2;
    struct run_weight_source src;
    CHECK(run_synth_source(&p, &src));
    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_from_source(&src, &mp);
    CHECK(model != NULL);
    if (model == NULL) {
        return;
    }
    if (model->repack_bytes > 0) {
        CHECK(model->repack_buft != NULL && ggml_backend_buft_name(model->repack_buft) != NULL);
        // and ggml-run prints that name
        char name[64];
        snprintf(name, sizeof(name), "in %s,", ggml_backend_buft_name(model->repack_buft));
        const char * args[] = { "--size", "tiny", "--type", "bf16", "--n-layer", "1", "-pp", "2", "-tg", "1", "-dev", "none",
                                "-t", "2", NULL };
        struct program_result r;
        run_tool(args, NULL, &r);
        CHECK_MSG(ended(&r, 0) && strstr(r.output, name) != NULL, "the extra buffer type's name (%s):\n%s", name, r.output);
    } else {
        CHECK(model->repack_buft == NULL);
        printf("the CPU has no extra buffer type for BF16 here: its name is not checked\n");
    }
    run_model_free(model);
}

// a KV cache whose layers each exceed the device's largest buffer: the warning says so, with sizes
static int test_vulkan_kv_size(void) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("Vulkan0");
    if (dev == NULL) {
        printf("no Vulkan device: skipped\n");
        return 77;
    }
    const size_t max = ggml_backend_buft_get_max_size(ggml_backend_dev_buffer_type(dev));
    if (max > ((size_t) 1 << 30)) {
        printf("Vulkan0's largest buffer (%zu bytes) is too large for a cache in this test's memory: skipped\n", max);
        return 77;
    }
    struct run_synth_params p;
    CHECK(run_synth_preset("tiny", &p));
    p.n_layer = 1;
    p.n_threads = 2;
    struct run_weight_source src;
    CHECK(run_synth_source(&p, &src));
    struct run_model_params mp = run_model_default_params();
    mp.devices = "Vulkan0";
    struct run_model * model = run_model_from_source(&src, &mp);
    CHECK(model != NULL);
    if (model == NULL) {
        return 1;
    }
    const size_t row = ggml_row_size(GGML_TYPE_F16, model->hp.n_head_kv * model->hp.head_dim);
    const int64_t n_ctx = (int64_t) (max / row) + 1;
    struct run_kv_cache kv;
    char msg[1024];
    capture_begin();
    const bool ok = run_kv_cache_init(&kv, model, n_ctx, GGML_TYPE_F16, true);
    capture_end(msg, sizeof(msg));
    CHECK_MSG(strstr(msg, "largest buffer") != NULL && strstr(msg, "cannot write") == NULL, "a cache of %lld tokens: \"%s\"",
              (long long) n_ctx, msg);
    if (ok) {
        run_kv_cache_free(&kv);
    }
    run_model_free(model);
    return TEST_RESULT();
}

int main(int argc, char ** argv) {
    if (argc > 1 && strcmp(argv[1], "--vulkan") == 0) {
        setenv("GGML_VK_VISIBLE_DEVICES", "0", 0); // lavapipe, a CPU device, listed
        ggml_backend_load_all();
        return test_vulkan_kv_size();
    }
    ggml_backend_load_all();
    const char * tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof(g_dir), "%s/test-run-hostile-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(g_dir) == NULL) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    test_overflowing_heads();
    test_float_keys();
    test_spm_unencodable();
    test_bpe_unencodable();
    test_all_layers_in_window();
    test_profile_option();
    test_address_space();
    test_unreadable_input();
    test_endless_message();
    char path[400];
    temp_path(path, sizeof(path), "llama.gguf");
    CHECK(write_llama(path, GGML_TYPE_F32));
    test_cli_model(path);
    remove(path);
    test_i32_embeddings();
    test_repack_buft_name();
    test_threads();
    rmdir(g_dir);
    return TEST_RESULT();
}
