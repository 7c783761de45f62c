// ggml-run: runs a model (llama, qwen2, qwen3, qwen3moe, gemma3, phi3) from a
// GGUF file, or benchmarks a synthetic one, on every device of the registry.
//
// This file holds the options and the output; the work is done by the
// ggml-run-core library (model, tokenizer, graph, context, sampling, bench).

#include "bench.h"
#include "chat.h"
#include "context.h"
#include "model.h"
#include "run-common.h"
#include "sampling.h"
#include "synthetic.h"

#include "ggml-backend.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

struct options {
    const char * model_path;
    const char * prompt;
    int64_t      n_predict;      // -1: the mode's default
    bool         bench;
    bool         conversation;   // -cnv
    const char * chat_template;  // a name, or a template's text; NULL: the GGUF's
    const char * system;
    bool         ignore_eos;
    bool         list_devices;
    bool         verbose_prompt; // print the prompt's tokens first
    bool         parse_special;  // special tokens written in the prompt are tokens
    struct run_sampler_params sampler;
    struct run_synth_params   synth;
    struct run_model_params   model;
    struct run_context_params ctx;
    struct run_bench_params   bp;
};

static void print_usage(const char * argv0) {
    printf("usage: %s [options]\n"
           "\n"
           "Runs a GGUF model (-m) of architecture llama, qwen2, qwen3, qwen3moe, gemma3 or\n"
           "phi3, or with no model benchmarks a synthetic model built in memory: prompt and\n"
           "generation tokens/s.\n"
           "\n"
           "text generation:\n"
           "  -m,   --model FILE        GGUF model (SentencePiece or byte-level BPE vocabulary)\n"
           "  -p,   --prompt TEXT       prompt (default with -m: \"Once upon a time\")\n"
           "  -n,   --n-predict N       tokens to generate (default 64)\n"
           "        --temp T            temperature; 0 is greedy (default 0)\n"
           "        --top-k N           keep the N most likely tokens, 0: all (default 40)\n"
           "        --top-p P           keep the most likely tokens up to probability P (default 0.95)\n"
           "  -s,   --seed N            sampling seed (default 42)\n"
           "        --ignore-eos        go on after the end-of-sequence (and end-of-turn) token\n"
           "        --verbose-prompt    print the prompt's tokens (\"prompt tokens: 1 15043 ...\") before\n"
           "                            anything is computed; with -n 0 nothing else is done\n"
           "        --no-parse-special  special tokens written in the prompt (<|im_start|>, ...) are plain text\n"
           "\n"
           "conversation:\n"
           "  -cnv, --conversation      chat: messages read from the input line by line, answered\n"
           "                            with the model's chat template; Ctrl-C stops an answer\n"
           "        --chat-template NAME  chatml, llama3, gemma, phi3, mistral-v1, mistral-v3,\n"
           "                            mistral-v3-tekken, mistral-v7, mistral-v7-tekken\n"
           "                            (default: recognised from the GGUF's template)\n"
           "        --system TEXT       system message (-p also gives it with -cnv)\n"
           "  -n with -cnv: most tokens per answer (default: until the context is full)\n"
           "\n"
           "benchmark (the default without -m and -p; --bench with a model file):\n"
           "        --bench             benchmark the model given with -m\n"
           "        --size NAME         synthetic model: tiny, small, default, large (default: default)\n"
           "        --type TYPE         synthetic weights: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1\n"
           "                            q2_K q3_K q4_K q5_K q6_K iq4_nl iq4_xs mxfp4\n"
           "                            iq1_s iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s\n"
           "                            nvfp4 q1_0 q2_0\n"
           "                            tq1_0 tq2_0 (default q8_0)\n"
           "        --arch NAME         synthetic architecture: llama qwen2 qwen3 qwen3moe gemma3 phi3 (default llama)\n"
           "        --n-embd N, --n-layer N, --n-head N, --n-head-kv N, --n-ff N, --n-vocab N\n"
           "                            synthetic sizes, overriding --size\n"
           "  -pp,  --n-prompt N        prompt tokens, decoded in batches of -b (default 128)\n"
           "  -tg,  --n-gen N           generated tokens (default 32)\n"
           "  -r,   --repetitions N     timed runs (default 1)\n"
           "        --no-progress       no progress bar (there is none unless stdout is a terminal)\n"
           "        --profile           where a generated token's time goes: per kind of node, the CPU's\n"
           "                            time in kernels, waiting and hand-offs, bytes moved and GB/s;\n"
           "                            then the read bandwidth, measured with 256 MiB per thread,\n"
           "                            and the tokens again, each followed by a read of 64 MiB\n"
           "                            per thread: each token's share of the read after it\n"
           "\n", argv0);
    // (two parts: ISO C promises string literals of 4095 characters only)
    printf("devices and memory:\n"
           "        --list-devices      list the devices of the registry and exit\n"
           "  -dev, --device LIST       devices for the layers, comma-separated, in order\n"
           "                            (default: every GPU; none: the CPU only); accelerators\n"
           "                            on host memory (BLAS) help the CPU unless none\n"
           "  -ngl, --n-gpu-layers N    layers given to those devices, counting the output layer;\n"
           "                            the others run on the CPU (default: all)\n"
           "  -ts,  --tensor-split L    shares of those layers per device, e.g. 3,1 (default: by free memory)\n"
           "  -sm,  --split-mode MODE   layer: whole layers per device (default); tensor: every layer split\n"
           "                            across the devices (attention heads, feed-forward rows), partial\n"
           "                            sums added between them (over MPI devices by MPI among the workers)\n"
           "  -t,   --threads N         CPU threads (default: every core)\n"
           "  -c,   --ctx-size N        context length (default: prompt + generated tokens)\n"
           "  -b,   --batch-size N      most tokens per graph (default 512)\n"
           "  -fa,  --flash-attn MODE   fused attention: on, off, auto (default auto)\n"
           "  -ctk, --cache-type TYPE   KV cache type: f16, f32 (default f16)\n"
           "  -nkvo, --no-kv-offload    keep the KV cache in host memory\n"
           "        --no-mmap           read the model file instead of mapping it\n"
           "        --no-repack         keep the CPU's matrices as they are in the file (default: a copy in\n"
           "                            the layout of the CPU kernels where they have one: BF16 with AVX512_BF16)\n"
           "  -h,   --help\n");
}

//
// option parsing
//

static bool missing_value(const char * opt, const char * s) {
    if (s == NULL) {
        run_error("%s needs a value", opt);
        return true;
    }
    return false;
}

static bool parse_str(const char * opt, const char * s, const char ** out) {
    if (missing_value(opt, s)) {
        return false;
    }
    *out = s;
    return true;
}

static bool parse_int(const char * opt, const char * s, int64_t min, int64_t max, int64_t * out) {
    if (missing_value(opt, s)) {
        return false;
    }
    char * end = NULL;
    const long long v = s != NULL ? strtoll(s, &end, 10) : 0;
    if (s == NULL || end == s || *end != '\0' || v < min || v > max) {
        run_error("%s expects an integer from %lld to %lld, not '%s'", opt, (long long) min, (long long) max, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

static bool parse_float(const char * opt, const char * s, double min, double max, float * out) {
    if (missing_value(opt, s)) {
        return false;
    }
    char * end = NULL;
    const double v = s != NULL ? strtod(s, &end) : 0.0;
    if (s == NULL || end == s || *end != '\0' || !(v >= min && v <= max)) {
        run_error("%s expects a number from %g to %g, not '%s'", opt, min, max, s ? s : "");
        return false;
    }
    *out = (float) v;
    return true;
}

static bool parse_type(const char * opt, const char * s, enum ggml_type * out) {
    if (missing_value(opt, s)) {
        return false;
    }
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * name = ggml_type_name((enum ggml_type) t);
        if (name != NULL && strcasecmp(name, s) == 0) {
            *out = (enum ggml_type) t;
            return true;
        }
    }
    run_error("%s: unknown type '%s'", opt, s);
    return false;
}

static bool is_opt(const char * arg, const char * a, const char * b) {
    return strcmp(arg, a) == 0 || (b != NULL && strcmp(arg, b) == 0);
}

// the options that take a value; false on a bad value or an unknown option
static bool parse_valued(const char * arg, const char * val, struct options * o, bool * known) {
    int64_t v = 0;
    *known = true;
    if (is_opt(arg, "-m", "--model"))          { return parse_str(arg, val, &o->model_path); }
    if (is_opt(arg, "-p", "--prompt"))         { return parse_str(arg, val, &o->prompt); }
    if (is_opt(arg, "-n", "--n-predict"))      { return parse_int(arg, val, 0, INT32_MAX, &o->n_predict); }
    if (is_opt(arg, "--temp", NULL))           { return parse_float(arg, val, 0.0, 1e6, &o->sampler.temp); }
    if (is_opt(arg, "--top-k", NULL))          { bool ok = parse_int(arg, val, 0, INT32_MAX, &v); o->sampler.top_k = (int32_t) v; return ok; }
    if (is_opt(arg, "--top-p", NULL))          { return parse_float(arg, val, 0.0, 1.0, &o->sampler.top_p); }
    if (is_opt(arg, "-s", "--seed"))           { bool ok = parse_int(arg, val, 0, INT64_MAX, &v); o->sampler.seed = (uint64_t) v; return ok; }
    if (is_opt(arg, "--size", NULL)) {
        if (missing_value(arg, val)) {
            return false;
        }
        const int n_threads = o->synth.n_threads;
        const char * arch = o->synth.arch;
        if (!run_synth_preset(val, &o->synth)) {
            run_error("--size: unknown size '%s' (tiny, small, default, large)", val);
            return false;
        }
        o->synth.n_threads = n_threads;
        o->synth.arch = arch;
        return true;
    }
    if (is_opt(arg, "--type", NULL))           { return parse_type(arg, val, &o->synth.wtype); }
    if (is_opt(arg, "--arch", NULL))           { return parse_str(arg, val, &o->synth.arch); }
    if (is_opt(arg, "--chat-template", NULL))  { return parse_str(arg, val, &o->chat_template); }
    if (is_opt(arg, "--system", NULL))         { return parse_str(arg, val, &o->system); }
    if (is_opt(arg, "--n-embd", NULL))         { return parse_int(arg, val, 1, INT32_MAX, &o->synth.n_embd); }
    if (is_opt(arg, "--n-layer", NULL))        { return parse_int(arg, val, 1, 100000, &o->synth.n_layer); }
    if (is_opt(arg, "--n-head", NULL))         { return parse_int(arg, val, 1, INT32_MAX, &o->synth.n_head); }
    if (is_opt(arg, "--n-head-kv", NULL))      { return parse_int(arg, val, 1, INT32_MAX, &o->synth.n_head_kv); }
    if (is_opt(arg, "--n-ff", NULL))           { return parse_int(arg, val, 1, INT32_MAX, &o->synth.n_ff); }
    if (is_opt(arg, "--n-vocab", NULL))        { return parse_int(arg, val, 1, INT32_MAX, &o->synth.n_vocab); }
    if (is_opt(arg, "-pp", "--n-prompt"))      { return parse_int(arg, val, 1, INT32_MAX, &o->bp.n_prompt); }
    if (is_opt(arg, "-tg", "--n-gen"))         { return parse_int(arg, val, 0, INT32_MAX, &o->bp.n_gen); }
    if (is_opt(arg, "-r", "--repetitions"))    { bool ok = parse_int(arg, val, 1, 1000000, &v); o->bp.n_reps = (int) v; return ok; }
    if (is_opt(arg, "-dev", "--device"))       { return parse_str(arg, val, &o->model.devices); }
    if (is_opt(arg, "-ngl", "--n-gpu-layers")) { return parse_int(arg, val, -1, INT32_MAX, &o->model.n_gpu_layers); }
    if (is_opt(arg, "-ts", "--tensor-split"))  { return parse_str(arg, val, &o->model.tensor_split); }
    if (is_opt(arg, "-sm", "--split-mode")) {
        if (strcmp(val, "layer") != 0 && strcmp(val, "tensor") != 0) {
            run_error("invalid %s '%s': layer or tensor", arg, val);
            return false;
        }
        o->model.split_tensor = strcmp(val, "tensor") == 0;
        return true;
    }
    if (is_opt(arg, "-t", "--threads"))        { bool ok = parse_int(arg, val, 1, INT32_MAX, &v); o->ctx.n_threads = (int) v; o->synth.n_threads = (int) v; return ok; }
    if (is_opt(arg, "-c", "--ctx-size"))       { return parse_int(arg, val, 0, INT32_MAX, &o->ctx.n_ctx); }
    if (is_opt(arg, "-b", "--batch-size"))     { return parse_int(arg, val, 1, INT32_MAX, &o->ctx.n_batch); }
    if (is_opt(arg, "-ctk", "--cache-type")) {
        if (!parse_type(arg, val, &o->ctx.kv_type)) {
            return false;
        }
        if (o->ctx.kv_type != GGML_TYPE_F16 && o->ctx.kv_type != GGML_TYPE_F32) {
            run_error("%s: the KV cache is f16 or f32", arg);
            return false;
        }
        return true;
    }
    if (is_opt(arg, "-fa", "--flash-attn")) {
        if (missing_value(arg, val)) {
            return false;
        }
        if ((strcmp(val, "on") == 0 || strcmp(val, "off") == 0 || strcmp(val, "auto") == 0)) {
            o->ctx.flash_attn = strcmp(val, "on") == 0 ? 1 : strcmp(val, "off") == 0 ? 0 : -1;
            return true;
        }
        run_error("--flash-attn expects on, off or auto");
        return false;
    }
    *known = false;
    return false;
}

static bool parse_flag(const char * arg, struct options * o) {
    if (is_opt(arg, "--bench", NULL))            { o->bench = true; return true; }
    if (is_opt(arg, "--ignore-eos", NULL))       { o->ignore_eos = true; return true; }
    if (is_opt(arg, "-cnv", "--conversation"))   { o->conversation = true; return true; }
    if (is_opt(arg, "--no-progress", NULL))      { o->bp.progress = false; return true; }
    if (is_opt(arg, "--profile", NULL))          { o->bp.profile = true; return true; }
    if (is_opt(arg, "--list-devices", NULL))     { o->list_devices = true; return true; }
    if (is_opt(arg, "--verbose-prompt", NULL))   { o->verbose_prompt = true; return true; }
    if (is_opt(arg, "--no-parse-special", NULL)) { o->parse_special = false; return true; }
    if (is_opt(arg, "-nkvo", "--no-kv-offload")) { o->ctx.kv_offload = false; return true; }
    if (is_opt(arg, "--no-mmap", NULL))          { o->model.use_mmap = false; return true; }
    if (is_opt(arg, "--no-repack", NULL))        { o->model.repack = false; return true; }
    return false;
}

// 0: run, 1: error, 2: help shown
static int parse_options(int argc, char ** argv, struct options * o) {
    *o = (struct options) {
        .model_path = NULL,
        .prompt     = NULL,
        .n_predict  = -1,
        .parse_special = true,
        .sampler    = run_sampler_default_params(),
        .synth      = run_synth_default_params(),
        .model      = run_model_default_params(),
        .ctx        = run_context_default_params(),
        .bp         = { .n_prompt = 128, .n_gen = 32, .n_reps = 1, .progress = isatty(STDOUT_FILENO) != 0, .seed = 7 },
    };
    o->synth.n_threads = o->ctx.n_threads;
    for (int i = 1; i < argc; i++) {
        const char * arg = argv[i];
        if (is_opt(arg, "-h", "--help")) {
            print_usage(argv[0]);
            return 2;
        }
        if (parse_flag(arg, o)) {
            continue;
        }
        bool known = false;
        const char * val = i + 1 < argc ? argv[i + 1] : NULL;
        if (parse_valued(arg, val, o, &known)) {
            i++;
            continue;
        }
        if (!known) {
            run_error("unknown option '%s' (see --help)", arg);
        }
        return 1; // a known option has reported its bad value
    }
    return 0;
}

//
// output
//

static void print_devices(void) {
    printf("devices of the registry:\n");
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        size_t free_mem = 0, total = 0;
        ggml_backend_dev_memory(dev, &free_mem, &total);
        char a[32], b[32];
        printf("  %-12s %-40s %s free of %s\n", ggml_backend_dev_name(dev), ggml_backend_dev_description(dev),
               run_fmt_size(free_mem, a, sizeof(a)), run_fmt_size(total, b, sizeof(b)));
    }
}

static void print_model(const struct run_model * model) {
    const struct run_hparams * hp = &model->hp;
    char sz[32], experts[96] = "";
    if (hp->n_expert > 0) {
        snprintf(experts, sizeof(experts), ", %lld of %lld experts", (long long) hp->n_expert_used, (long long) hp->n_expert);
    }
    if (hp->n_swa > 0) {
        const size_t n = strlen(experts);
        snprintf(experts + n, sizeof(experts) - n, ", sliding window %lld", (long long) hp->n_swa);
    }
    fprintf(stderr, "model:     %s: %s, %lld layers, embedding %lld, heads %lld (key/value %lld) of %lld, "
                    "feed-forward %lld%s, vocabulary %lld, %s, %s\n",
            model->src.name, hp->arch->name, (long long) hp->n_layer, (long long) hp->n_embd, (long long) hp->n_head,
            (long long) hp->n_head_kv, (long long) hp->head_dim, (long long) (hp->n_expert > 0 ? hp->n_ff_exp : hp->n_ff),
            experts, (long long) hp->n_vocab, ggml_type_name(model->ftype), run_fmt_size(run_model_weight_bytes(model), sz, sizeof(sz)));
}

// "CPU 0-3, Test 4-8 (+output)"
static void print_layers(const struct run_model * model) {
    fprintf(stderr, "layers:   ");
    const int64_t n_all = model->hp.n_layer + 1;
    for (int64_t il = 0; il < n_all;) {
        int64_t end = il;
        while (end + 1 < n_all && model->layer_dev[end + 1] == model->layer_dev[il]) {
            end++;
        }
        const int64_t last = end < model->hp.n_layer ? end : model->hp.n_layer - 1;
        fprintf(stderr, " %s", ggml_backend_dev_name(run_model_layer_device(model, il)));
        if (il < last) {
            fprintf(stderr, " %lld-%lld", (long long) il, (long long) last);
        } else if (il == last) {
            fprintf(stderr, " %lld", (long long) il);
        }
        fprintf(stderr, "%s%s", end == model->hp.n_layer ? " +output" : "", end + 1 < n_all ? "," : "\n");
        il = end + 1;
    }
}

static void print_buffers(const struct run_context * rc) {
    const struct run_model * model = rc->model;
    fprintf(stderr, "buffers:   %-12s %12s %12s %12s\n", "device", "weights", "KV cache", "compute");
    for (int i = 0; i < rc->n_backends; i++) {
        ggml_backend_dev_t dev = ggml_backend_get_device(rc->backends[i]);
        size_t weights = 0, kv = 0;
        for (int d = 0; d < model->devs.n_layer; d++) {
            if (model->devs.layer[d] == dev) {
                weights = model->weight_bytes[d];
                kv      = rc->kv.bytes[d];
            }
        }
        char a[32], b[32], c[32];
        fprintf(stderr, "           %-12s %12s %12s %12s\n", ggml_backend_dev_name(dev), run_fmt_size(weights, a, sizeof(a)),
                run_fmt_size(kv, b, sizeof(b)),
                run_fmt_size(ggml_backend_sched_get_buffer_size(rc->sched, rc->backends[i]), c, sizeof(c)));
    }
    if (model->repack_bytes > 0 && model->repack_buft != NULL) {
        char r[32];
        fprintf(stderr, "           (CPU weights: %s of matrices in %s, the layout of the CPU kernels)\n",
                run_fmt_size(model->repack_bytes, r, sizeof(r)), ggml_backend_buft_name(model->repack_buft));
    }
    fprintf(stderr, "context:   %lld tokens, batch %lld, KV cache %s, attention %s, %d CPU threads\n",
            (long long) rc->kv.n_ctx, (long long) rc->params.n_batch, ggml_type_name(rc->params.kv_type),
            rc->flash_attn ? "fused (flash_attn_ext)" : "mul_mat + soft_max", rc->params.n_threads);
}

static void print_peak_memory(FILE * f) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        char sz[32];
        fprintf(f, "peak memory (RSS): %s\n", run_fmt_size((size_t) ru.ru_maxrss * 1024, sz, sizeof(sz)));
    }
}

//
// modes
//

static int run_benchmark(struct run_context * rc, const struct options * o) {
    struct run_bench_result r;
    if (!run_bench(rc, &o->bp, &r)) {
        return 1;
    }
    fprintf(stderr, "splits:    %d in the generation graph\n", rc->n_splits);
    if (o->bp.n_reps > 1) {
        printf("prompt:     %6lld tokens  %10.2f +- %.2f tokens/s\n", (long long) o->bp.n_prompt, r.pp_mean, r.pp_std);
        printf("generation: %6lld tokens  %10.2f +- %.2f tokens/s\n", (long long) o->bp.n_gen, r.tg_mean, r.tg_std);
    } else {
        printf("prompt:     %6lld tokens  %10.2f tokens/s\n", (long long) o->bp.n_prompt, r.pp_mean);
        printf("generation: %6lld tokens  %10.2f tokens/s\n", (long long) o->bp.n_gen, r.tg_mean);
    }
    print_peak_memory(stdout);
    return 0;
}

// prints token's piece as far as it ends a UTF-8 character (the rest waits for the next)
static bool print_piece(struct run_detok * detok, const struct run_vocab * vocab, int32_t token) {
    const char * text = NULL;
    size_t n = 0;
    if (!run_detok_push(detok, vocab, token, &text, &n)) {
        return false;
    }
    fwrite(text, 1, n, stdout);
    fflush(stdout);
    return true;
}

static int run_generation(struct run_context * rc, const int32_t * prompt, int64_t n_prompt, const struct options * o) {
    const struct run_model * model = rc->model;
    // the context ends generation when it is full
    const int64_t n_predict = run_generation_length(rc->kv.n_ctx, n_prompt, o->n_predict);
    if (n_predict < 0) {
        run_error("the prompt of %lld tokens does not fit the context of %lld (see -c)", (long long) n_prompt, (long long) rc->kv.n_ctx);
        return 1;
    }
    if (n_predict == 0 && o->n_predict > 0) {
        run_error("the prompt of %lld tokens fills the context of %lld: no room to generate (see -c)",
                  (long long) n_prompt, (long long) rc->kv.n_ctx);
        return 1;
    }
    struct run_sampler * sampler = run_sampler_new(&o->sampler);
    if (sampler == NULL) {
        return 1;
    }
    fputs(o->prompt, stdout);
    fflush(stdout);
    const int64_t t0 = ggml_time_us();
    bool ok = run_decode(rc, prompt, n_prompt);
    const int64_t t1 = ggml_time_us();
    const int prompt_splits = rc->n_splits;
    int64_t n_gen = 0;
    struct run_detok detok = { NULL, 0, 0, 0 };
    while (ok && n_gen < n_predict) {
        const int32_t next = run_sample(sampler, run_get_logits(rc, 0), model->hp.n_vocab);
        if (next < 0 || (run_vocab_is_eog(&model->vocab, next) && !o->ignore_eos)) {
            ok = next >= 0;
            break;
        }
        ok = print_piece(&detok, &model->vocab, next);
        n_gen++;
        if (n_gen < n_predict) {
            ok = run_decode(rc, &next, 1);
        }
    }
    const int64_t t2 = ggml_time_us();
    // a full context ends the text as -n does (status 0), but says so
    const bool context_full = ok && n_gen == n_predict && n_predict < o->n_predict;
    const char * rest = NULL;
    size_t n_rest = 0;
    run_detok_flush(&detok, &rest, &n_rest);
    fwrite(rest, 1, n_rest, stdout);
    run_detok_free(&detok);
    // the text ends with its line, out before the statistics on stderr
    printf("\n");
    fflush(stdout);
    run_sampler_free(sampler);
    if (!ok) {
        return 1;
    }
    if (context_full) {
        fprintf(stderr, "(the context of %lld tokens is full: %lld of %lld tokens generated; see -c)\n",
                (long long) rc->kv.n_ctx, (long long) n_gen, (long long) o->n_predict);
    }
    const double pp_s = (double) (t1 - t0) * 1e-6, tg_s = (double) (t2 - t1) * 1e-6;
    fprintf(stderr, "splits:    %d in the prompt graph, %d in the last graph\n", prompt_splits, rc->n_splits);
    fprintf(stderr, "prompt:     %6lld tokens  %10.2f tokens/s\n", (long long) n_prompt, pp_s > 0.0 ? (double) n_prompt / pp_s : 0.0);
    fprintf(stderr, "generation: %6lld tokens  %10.2f tokens/s\n", (long long) n_gen, tg_s > 0.0 && n_gen > 1 ? (double) (n_gen - 1) / tg_s : 0.0);
    print_peak_memory(stderr);
    return 0;
}

static int32_t * tokenize_prompt(const struct run_model * model, const char * text, bool parse_special, int64_t * n_out) {
    const size_t len = strlen(text);
    const struct run_tokenize_opts opts = { .add_special = true, .parse_special = parse_special };
    int64_t n = run_tokenize_opts(&model->vocab, text, len, &opts, NULL, 0);
    int32_t * tokens = n >= 0 ? (int32_t *) run_malloc((size_t) (n > 0 ? n : 1) * sizeof(int32_t), "the prompt") : NULL;
    if (tokens == NULL) {
        return NULL;
    }
    run_tokenize_opts(&model->vocab, text, len, &opts, tokens, n);
    if (model->vocab.add_bos && n >= 2 && tokens[0] == model->vocab.bos && tokens[1] == model->vocab.bos) {
        run_warn("the prompt starts with two bos tokens: the model adds one and the prompt has one "
                 "(drop it from the prompt, or use --no-parse-special)");
    }
    if (n == 0) {
        run_error("the prompt is empty and the vocabulary has no bos token to start from");
        free(tokens);
        return NULL;
    }
    *n_out = n;
    return tokens;
}

static struct run_model * load_model(const struct options * o) {
    if (o->model_path != NULL) {
        return run_model_load(o->model_path, &o->model);
    }
    char sz[32];
    const size_t bytes = run_synth_weight_bytes(&o->synth); // 0: sizes the type cannot hold, reported below
    if (bytes > 0) {
        fprintf(stderr, "building a synthetic model (%s of %s weights)...\n", run_fmt_size(bytes, sz, sizeof(sz)),
                ggml_type_name(o->synth.wtype));
    }
    struct run_weight_source src;
    if (!run_synth_source(&o->synth, &src)) {
        return NULL;
    }
    return run_model_from_source(&src, &o->model);
}

// --chat-template's name or text, else the GGUF's template; RUN_CHAT_UNKNOWN (reported) when none is recognised
static enum run_chat_template choose_chat_template(const struct run_model * model, const char * option) {
    if (option != NULL) {
        const enum run_chat_template t = run_chat_template_detect(option);
        if (t == RUN_CHAT_UNKNOWN) {
            run_error("--chat-template: '%s' is no template ggml-run knows (%s)", option, run_chat_template_names());
        }
        return t;
    }
    const int64_t id = gguf_find_key(model->src.gguf, "tokenizer.chat_template");
    if (id < 0 || gguf_get_kv_type(model->src.gguf, id) != GGUF_TYPE_STRING) {
        run_error("the model has no chat template (tokenizer.chat_template): name one with --chat-template (%s)",
                  run_chat_template_names());
        return RUN_CHAT_UNKNOWN;
    }
    const enum run_chat_template t = run_chat_template_detect(gguf_get_val_str(model->src.gguf, id));
    if (t == RUN_CHAT_UNKNOWN) {
        run_error("the model's chat template is not one ggml-run recognises: name one with --chat-template (%s)",
                  run_chat_template_names());
    }
    return t;
}

// -cnv: the conversation on stdin and stdout
static int run_conversation(struct options * o) {
    struct run_model * model = load_model(o);
    if (model == NULL) {
        return 1;
    }
    print_model(model);
    print_layers(model);
    const struct run_chat_params cp = {
        .tmpl       = choose_chat_template(model, o->chat_template),
        .system     = o->system != NULL ? o->system : o->prompt, // as llama.cpp's -cnv takes -p
        .n_predict  = o->n_predict,
        .ignore_eos = o->ignore_eos,
    };
    if (o->ctx.n_ctx == 0) { // a long conversation, but not the 128k-token caches some models were trained for
        o->ctx.n_ctx = model->hp.n_ctx_train < 4096 ? model->hp.n_ctx_train : 4096;
    }
    struct run_context * rc = cp.tmpl != RUN_CHAT_UNKNOWN ? run_context_new(model, &o->ctx) : NULL;
    struct run_sampler * sampler = rc != NULL ? run_sampler_new(&o->sampler) : NULL;
    int status = 1;
    if (sampler != NULL) {
        print_buffers(rc);
        fprintf(stderr, "chat:      template %s; Ctrl-C stops an answer, Ctrl-D (end of input) ends\n",
                run_chat_template_name(cp.tmpl));
        status = run_chat_loop(rc, sampler, &cp, stdin, stdout);
    }
    run_sampler_free(sampler);
    run_context_free(rc);
    run_model_free(model);
    return status;
}

// a registry function by name, or NULL
static void * reg_proc(const char * reg_name, const char * name) {
    ggml_backend_reg_t reg = ggml_backend_reg_by_name(reg_name);
    return reg != NULL ? ggml_backend_reg_get_proc_address(reg, name) : NULL;
}

// Under mpirun, the ranks other than 0 serve their devices to rank 0 (the
// MPI backend) instead of running the model: true, with the exit code, there.
static bool run_mpi_worker(int n_threads, int * exit_code) {
    void * rank_sym   = reg_proc("MPI", "ggml_backend_mpi_rank");
    void * worker_sym = reg_proc("MPI", "ggml_backend_mpi_worker");
    int (*rank)(void) = NULL;
    enum ggml_status (*worker)(int) = NULL;
    // ISO C has no object-to-function pointer conversion; POSIX makes the bits agree
    memcpy(&rank, &rank_sym, sizeof(rank_sym));
    memcpy(&worker, &worker_sym, sizeof(worker_sym));
    if (rank == NULL || worker == NULL || rank() == 0) {
        return false;
    }
    *exit_code = worker(n_threads) == GGML_STATUS_SUCCESS ? 0 : 1;
    return true;
}

static int run_main(struct options * o) {
    ggml_backend_load_all();
    int worker_exit = 0;
    if (run_mpi_worker(o->ctx.n_threads, &worker_exit)) {
        return worker_exit;
    }
    if (o->list_devices) {
        print_devices();
        return 0;
    }
    if (o->conversation) {
        return run_conversation(o);
    }
    const bool bench = o->bench || (o->model_path == NULL && o->prompt == NULL);
    if (!bench && o->prompt == NULL) {
        o->prompt = "Once upon a time";
    }
    if (o->n_predict < 0) {
        o->n_predict = 64;
    }
    struct run_model * model = load_model(o);
    if (model == NULL) {
        return 1;
    }
    print_model(model);
    print_layers(model);
    int64_t n_prompt = 0;
    int32_t * prompt = bench ? NULL : tokenize_prompt(model, o->prompt, o->parse_special, &n_prompt);
    if (!bench && prompt == NULL) {
        run_model_free(model);
        return 1;
    }
    if (!bench && o->verbose_prompt) {
        printf("prompt tokens:");
        for (int64_t i = 0; i < n_prompt; i++) {
            printf(" %d", (int) prompt[i]);
        }
        printf("\n");
        fflush(stdout);
        if (o->n_predict == 0) {
            free(prompt);
            run_model_free(model);
            return 0;
        }
    }
    if (o->ctx.n_ctx == 0) {
        const int64_t need = bench ? o->bp.n_prompt + o->bp.n_gen : n_prompt + o->n_predict;
        o->ctx.n_ctx = need < model->hp.n_ctx_train || bench ? need : model->hp.n_ctx_train;
    }
    struct run_context * rc = run_context_new(model, &o->ctx);
    int rc_exit = 1;
    if (rc != NULL) {
        print_buffers(rc);
        rc_exit = bench ? run_benchmark(rc, o) : run_generation(rc, prompt, n_prompt, o);
    }
    run_context_free(rc);
    run_model_free(model);
    free(prompt);
    return rc_exit;
}

int main(int argc, char ** argv) {
    struct options o;
    const int parsed = parse_options(argc, argv, &o);
    if (parsed != 0) {
        return parsed == 2 ? 0 : 1;
    }
    return run_main(&o);
}
