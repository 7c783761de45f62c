// test-run-tokenizer: the parts of ggml-run's tokenizers, on cases worked
// out by hand from their definitions:
// - Unicode categories and White_Space of known code points, UTF-8 decoding
//   of invalid input, the complete-character prefix for streaming;
// - each pre-tokenizer (gpt-2, llama-bpe, qwen2, tekken, deepseek-llm) on
//   texts whose words follow from its regular expression (backtracking of
//   \s+(?!\S), contractions in either case, digit groups, case-aware words);
// - byte-level BPE on a tiny GGUF vocabulary: merges by rank, ignore_merges,
//   bos/eos from the GGUF flags, special tokens parsed (longest first,
//   user-defined ones always) or left as text, pieces and streaming
//   detokenisation that holds back an unfinished UTF-8 character;
// - refusals: an unknown tokenizer or pre-tokenizer (named in the message), a
//   missing pre-tokenizer or merge list, a malformed merge, add_eos without eos.
// The comparison with real vocabularies is test-tokenizer-npm.

#include "testing.h"

#include "pretokenize.h"
#include "tokenizer.h"
#include "unicode.h"

#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//
// Unicode
//

static void test_unicode(void) {
    CHECK_EQ_INT(run_unicode_category('A'), RUN_UCAT_LU);
    CHECK_EQ_INT(run_unicode_category('z'), RUN_UCAT_LL);
    CHECK_EQ_INT(run_unicode_category('7'), RUN_UCAT_ND);
    CHECK_EQ_INT(run_unicode_category(0x01C5), RUN_UCAT_LT);  // Dž
    CHECK_EQ_INT(run_unicode_category(0x02B0), RUN_UCAT_LM);  // modifier small h
    CHECK_EQ_INT(run_unicode_category(0x4E00), RUN_UCAT_LO);  // CJK one
    CHECK_EQ_INT(run_unicode_category(0x0301), RUN_UCAT_MN);  // combining acute
    CHECK_EQ_INT(run_unicode_category(0x0903), RUN_UCAT_MC);  // Devanagari visarga
    CHECK_EQ_INT(run_unicode_category(0x2163), RUN_UCAT_NL);  // Roman numeral four
    CHECK_EQ_INT(run_unicode_category(0x00BD), RUN_UCAT_NO);  // one half
    CHECK_EQ_INT(run_unicode_category(0x0663), RUN_UCAT_ND);  // Arabic-Indic three
    CHECK_EQ_INT(run_unicode_category('_'), RUN_UCAT_PC);
    CHECK_EQ_INT(run_unicode_category(0x00AB), RUN_UCAT_PI);  // «
    CHECK_EQ_INT(run_unicode_category('$'), RUN_UCAT_SC);
    CHECK_EQ_INT(run_unicode_category(0x1F600), RUN_UCAT_SO); // grinning face
    CHECK_EQ_INT(run_unicode_category(0x200B), RUN_UCAT_CF);  // zero width space
    CHECK_EQ_INT(run_unicode_category(0xE000), RUN_UCAT_CO);
    CHECK_EQ_INT(run_unicode_category(0xD800), RUN_UCAT_CS);
    CHECK_EQ_INT(run_unicode_category(0x0378), RUN_UCAT_CN);  // unassigned
    CHECK_EQ_INT(run_unicode_category(0x10FFFF), RUN_UCAT_CN);
    CHECK_EQ_INT(run_unicode_category(0x110000), RUN_UCAT_CN);
    CHECK_EQ_INT(run_unicode_category(0), RUN_UCAT_CC);
    // the table: sorted, from U+0000
    CHECK_EQ_INT(run_unicode_runs[0] >> 5, 0);
    bool sorted = true;
    for (size_t i = 1; i < run_unicode_n_runs; i++) {
        sorted = sorted && (run_unicode_runs[i] >> 5) > (run_unicode_runs[i - 1] >> 5);
    }
    CHECK(sorted);

    const uint32_t spaces[] = { 9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000 };
    for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
        CHECK_MSG(run_unicode_is_space(spaces[i]), "U+%04X is White_Space", (unsigned) spaces[i]);
    }
    const uint32_t not_spaces[] = { 0, 8, 14, 0x1C, 'a', 0x200B, 0x180E, 0xFEFF, 0x2060 };
    for (size_t i = 0; i < sizeof(not_spaces) / sizeof(not_spaces[0]); i++) {
        CHECK_MSG(!run_unicode_is_space(not_spaces[i]), "U+%04X is not White_Space", (unsigned) not_spaces[i]);
    }

    uint32_t cp;
    CHECK_EQ_INT(run_utf8_decode("\xc3\xa9", 2, &cp), 2);
    CHECK_EQ_INT(cp, 0xE9);
    CHECK_EQ_INT(run_utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
    CHECK_EQ_INT(cp, 0x1F600);
    CHECK_EQ_INT(run_utf8_decode("\xc0\x80", 2, &cp), 1);     // overlong
    CHECK_EQ_INT(cp, 0xFFFD);
    CHECK_EQ_INT(run_utf8_decode("\xed\xa0\x80", 3, &cp), 1); // surrogate
    CHECK_EQ_INT(cp, 0xFFFD);
    CHECK_EQ_INT(run_utf8_decode("\xe4\xb8", 2, &cp), 1);     // cut short
    CHECK_EQ_INT(run_utf8_decode("\x80", 1, &cp), 1);         // a continuation byte alone
    CHECK_EQ_INT(cp, 0xFFFD);
    char enc[4];
    CHECK_EQ_INT(run_utf8_encode(0x10FFFF, enc), 4);
    CHECK(memcmp(enc, "\xf4\x8f\xbf\xbf", 4) == 0);

    CHECK_EQ_INT(run_utf8_complete_prefix("ab", 2), 2);
    CHECK_EQ_INT(run_utf8_complete_prefix("a\xc3", 2), 1);
    CHECK_EQ_INT(run_utf8_complete_prefix("a\xc3\xa9", 3), 3);
    CHECK_EQ_INT(run_utf8_complete_prefix("a\xf0\x9f\x98", 4), 1);
    CHECK_EQ_INT(run_utf8_complete_prefix("a\xf0\x9f\x98\x80", 5), 5);
    CHECK_EQ_INT(run_utf8_complete_prefix("a\x80", 2), 2);     // invalid: nothing to wait for
    CHECK_EQ_INT(run_utf8_complete_prefix("\xc3\xa9\xa9", 3), 3);
}

//
// pre-tokenizers
//

// the words of text under kind against want (NULL-terminated)
static void check_words(enum run_pretok kind, const char * text, const char * const * want) {
    struct run_words w = { NULL, 0, 0 };
    const bool ok = run_pretokenize(kind, text, strlen(text), &w);
    size_t n_want = 0;
    while (want[n_want] != NULL) {
        n_want++;
    }
    bool same = ok && w.n == n_want;
    for (size_t i = 0, start = 0; same && i < w.n; start = w.end[i++]) {
        same = w.end[i] - start == strlen(want[i]) && memcmp(text + start, want[i], w.end[i] - start) == 0;
    }
    if (!same) {
        fprintf(stderr, "  words of '%s' (kind %d):", text, (int) kind);
        for (size_t i = 0, start = 0; i < w.n; start = w.end[i++]) {
            fprintf(stderr, " [%.*s]", (int) (w.end[i] - start), text + start);
        }
        fprintf(stderr, "\n");
    }
    CHECK_MSG(same, "pre-tokenizer %d on '%s'", (int) kind, text);
    free(w.end);
}

#define WORDS(...) ((const char * const[]) { __VA_ARGS__, NULL })

static void test_pretokenizers(void) {
    // gpt-2: one space stays before the next word, the rest of a run of
    // spaces is a word ( \s+(?!\S) gives back its last space)
    check_words(RUN_PRETOK_GPT2, "Hello world's  123 !!\n\n x",
                WORDS("Hello", " world", "'s", " ", " 123", " !!", "\n\n", " x"));
    check_words(RUN_PRETOK_GPT2, "don't DON'T", WORDS("don", "'t", " DON", "'", "T"));
    check_words(RUN_PRETOK_GPT2, "a   ", WORDS("a", "   "));
    check_words(RUN_PRETOK_GPT2, "caf\xc3\xa9 \xce\xb1\xce\xb2 12\xc2\xbd", WORDS("caf\xc3\xa9", " \xce\xb1\xce\xb2", " 12\xc2\xbd"));
    // llama3: contractions in either case, at most 3 digits, newlines kept with what ends in them
    check_words(RUN_PRETOK_LLAMA3, "I'M 12345 ab\r\n\n  c",
                WORDS("I", "'M", " ", "123", "45", " ab", "\r\n\n", " ", " c"));
    check_words(RUN_PRETOK_LLAMA3, "x.\n\ny", WORDS("x", ".\n\n", "y"));
    check_words(RUN_PRETOK_LLAMA3, "(hi)", WORDS("(hi", ")"));
    // qwen2: one digit at a time
    check_words(RUN_PRETOK_QWEN2, "x 2024", WORDS("x", " ", "2", "0", "2", "4"));
    // tekken: capitalised words split at case changes; '/' joins a run of punctuation after newlines
    check_words(RUN_PRETOK_TEKKEN, "HelloWORLD fooBar", WORDS("Hello", "WORLD", " foo", "Bar"));
    check_words(RUN_PRETOK_TEKKEN, "x!!\n/", WORDS("x", "!!\n/"));
    check_words(RUN_PRETOK_LLAMA3, "x!!\n/", WORDS("x", "!!\n", "/"));
    check_words(RUN_PRETOK_TEKKEN, "ab12", WORDS("ab", "1", "2"));
    // deepseek-llm: six expressions in turn, each cutting what the previous left
    check_words(RUN_PRETOK_DEEPSEEK_LLM, "Hello, \xe4\xb8\x96\xe7\x95\x8c" "123\n  ",
                WORDS("Hello", ",", " ", "\xe4\xb8\x96\xe7\x95\x8c", "123", "\n", "  "));
    check_words(RUN_PRETOK_DEEPSEEK_LLM, "a b", WORDS("a", " b"));

    // a long run of spaces inside a text: every position of it starts a
    // failing \s+$ (deepseek-llm) or \s*[\r\n]+ (llama3); the words stay right
    // (and the matcher linear: quadratic would take minutes here)
    const size_t n_sp = 200000;
    char * long_text = (char *) malloc(n_sp + 4);
    long_text[0] = 'a';
    memset(long_text + 1, ' ', n_sp);
    memcpy(long_text + 1 + n_sp, "b\n", 3);
    struct run_words w = { NULL, 0, 0 };
    CHECK(run_pretokenize(RUN_PRETOK_DEEPSEEK_LLM, long_text, n_sp + 3, &w));
    CHECK(w.n == 4 && w.end[0] == 1 && w.end[1] == n_sp && w.end[2] == n_sp + 2 && w.end[3] == n_sp + 3);
    w.n = 0;
    CHECK(run_pretokenize(RUN_PRETOK_LLAMA3, long_text, n_sp + 3, &w));
    CHECK(w.n == 4 && w.end[0] == 1 && w.end[1] == n_sp && w.end[2] == n_sp + 2 && w.end[3] == n_sp + 3);
    free(w.end);
    free(long_text);

    // names
    enum run_pretok k;
    CHECK(run_pretok_from_name("llama-bpe", &k) && k == RUN_PRETOK_LLAMA3);
    CHECK(run_pretok_from_name("qwen2", &k) && k == RUN_PRETOK_QWEN2);
    CHECK(run_pretok_from_name("tekken", &k) && k == RUN_PRETOK_TEKKEN);
    CHECK(run_pretok_from_name("deepseek-llm", &k) && k == RUN_PRETOK_DEEPSEEK_LLM);
    CHECK(run_pretok_from_name("gpt-2", &k) && k == RUN_PRETOK_GPT2);
    CHECK(!run_pretok_from_name("falcon", &k));
    CHECK(!run_pretok_from_name("", &k));
}

//
// byte-level BPE on a tiny vocabulary
//

// tokens 0-255: the byte alphabet in byte order (token b is byte b); then these
enum {
    T_HE = 256, T_LL, T_HELL, T_HELLO, T_SP_H, T_END, T_END_BANG, T_BOS, T_HEL, T_EL, N_TINY,
};

// GPT-2's alphabet character of byte b, as UTF-8 (independent of tokenizer-bpe.c)
static void alphabet_char(int b, char * out) {
    int cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))) {
        int k = 0; // the rank of b among the bytes that are not printable
        for (int i = 0; i < b; i++) {
            k += !((i >= 0x21 && i <= 0x7E) || (i >= 0xA1 && i <= 0xAC) || (i >= 0xAE && i <= 0xFF));
        }
        cp = 256 + k;
    }
    if (cp < 0x80) {
        out[0] = (char) cp;
        out[1] = '\0';
    } else {
        out[0] = (char) (0xC0 | (cp >> 6));
        out[1] = (char) (0x80 | (cp & 0x3F));
        out[2] = '\0';
    }
}

struct tiny_opts {
    const char * model;      // tokenizer.ggml.model
    const char * pre;        // NULL: no key
    bool         merges;     // write tokenizer.ggml.merges
    const char * bad_merge;  // a merge string added at the end, or NULL
    int          add_eos;    // -1: no key
    int32_t      eos;        // -1: no key
};

static struct gguf_context * tiny_gguf(const struct tiny_opts * o) {
    static char bytes[256][4];
    const char * tokens[N_TINY];
    int32_t types[N_TINY];
    for (int b = 0; b < 256; b++) {
        alphabet_char(b, bytes[b]);
        tokens[b] = bytes[b];
        types[b]  = RUN_TOKEN_TYPE_NORMAL;
    }
    tokens[T_HE] = "he"; tokens[T_LL] = "ll"; tokens[T_HELL] = "hell"; tokens[T_HELLO] = "hello";
    tokens[T_SP_H] = "\xc4\xa0h"; // Ġh
    tokens[T_END] = "<|end|>"; tokens[T_END_BANG] = "<|end|>!"; tokens[T_BOS] = "<|bos|>";
    tokens[T_HEL] = "hel"; tokens[T_EL] = "el";
    for (int t = T_HE; t < N_TINY; t++) {
        types[t] = RUN_TOKEN_TYPE_NORMAL;
    }
    types[T_END] = types[T_BOS] = RUN_TOKEN_TYPE_CONTROL;
    types[T_END_BANG] = RUN_TOKEN_TYPE_USER_DEFINED;
    // ranks: he 0, ll 1, he+ll 2, hell+o 3, e+l 4, Ġ+h 5
    const char * merges[] = { "h e", "l l", "he ll", "hell o", "e l", "\xc4\xa0 h", o->bad_merge };
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_str(g, "tokenizer.ggml.model", o->model);
    if (o->pre != NULL) {
        gguf_set_val_str(g, "tokenizer.ggml.pre", o->pre);
    }
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, N_TINY);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, N_TINY);
    if (o->merges) {
        gguf_set_arr_str(g, "tokenizer.ggml.merges", merges, o->bad_merge != NULL ? 7 : 6);
    }
    gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", T_BOS);
    gguf_set_val_bool(g, "tokenizer.ggml.add_bos_token", true);
    if (o->eos >= 0) {
        gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", (uint32_t) o->eos);
    }
    if (o->add_eos >= 0) {
        gguf_set_val_bool(g, "tokenizer.ggml.add_eos_token", o->add_eos != 0);
    }
    return g;
}

static bool tiny_vocab(struct run_vocab * v, const struct tiny_opts * o) {
    struct gguf_context * g = tiny_gguf(o);
    const bool ok = run_vocab_load(v, g);
    gguf_free(g);
    return ok;
}

static void check_ids(const struct run_vocab * v, const char * text, bool add_special, bool parse_special,
                      const int32_t * want, int64_t n_want) {
    int32_t got[64];
    const struct run_tokenize_opts opts = { .add_special = add_special, .parse_special = parse_special };
    const int64_t n = run_tokenize_opts(v, text, strlen(text), &opts, got, 64);
    bool same = n == n_want;
    for (int64_t i = 0; same && i < n; i++) {
        same = got[i] == want[i];
    }
    if (!same) {
        fprintf(stderr, "  got:");
        for (int64_t i = 0; i < n && i < 64; i++) {
            fprintf(stderr, " %d", (int) got[i]);
        }
        fprintf(stderr, "\n");
    }
    CHECK_MSG(same, "tokens of '%s' (special: add %d, parse %d)", text, add_special, parse_special);
}

#define IDS(...) ((const int32_t[]) { __VA_ARGS__ }), (int64_t) (sizeof((const int32_t[]) { __VA_ARGS__ }) / sizeof(int32_t))

static void test_bpe(void) {
    struct run_vocab v;
    const struct tiny_opts gpt2 = { "gpt2", "gpt-2", true, NULL, 1, T_END };
    CHECK(tiny_vocab(&v, &gpt2));
    if (v.n_tokens == 0) {
        return;
    }
    CHECK_EQ_INT(v.kind, RUN_VOCAB_BPE);
    CHECK(v.add_bos && v.add_eos && !v.ignore_merges);
    CHECK_EQ_INT(run_vocab_merge_rank(&v, 'h', 'e'), 0);
    CHECK_EQ_INT(run_vocab_merge_rank(&v, T_HELL, 'o'), 3);
    CHECK_EQ_INT(run_vocab_merge_rank(&v, 'e', 'h'), -1);
    // bos and eos as the GGUF asks, merges lowest rank first
    check_ids(&v, "hello", true, true, IDS(T_BOS, T_HELLO, T_END));
    check_ids(&v, "hello", false, true, IDS(T_HELLO));
    // h+e (0) before e+l (4): "he" "l", not "h" "el"
    check_ids(&v, "hel", false, true, IDS(T_HE, 'l'));
    // Ġ+h (5) comes after h+e (0): " hello" keeps its space apart
    check_ids(&v, " hello", false, true, IDS(0x20, T_HELLO));
    check_ids(&v, " h", false, true, IDS(T_SP_H));
    // bytes outside ASCII: é is C3 A9, each byte its alphabet token
    check_ids(&v, "\xc3\xa9", false, true, IDS(0xC3, 0xA9));
    // special tokens: the longest first; user-defined ones even when not parsing
    check_ids(&v, "hi<|end|>!x", false, true, IDS('h', 'i', T_END_BANG, 'x'));
    check_ids(&v, "a<|end|>b", false, true, IDS('a', T_END, 'b'));
    check_ids(&v, "a<|end|>b", false, false, IDS('a', '<', '|', 'e', 'n', 'd', '|', '>', 'b'));
    check_ids(&v, "<|end|>!", false, false, IDS(T_END_BANG));
    check_ids(&v, "<|bos|><|bos|>", false, true, IDS(T_BOS, T_BOS));
    check_ids(&v, "", true, true, IDS(T_BOS, T_END));
    // too small an output: the count is still right
    int32_t one[1];
    CHECK_EQ_INT(run_tokenize(&v, "hello", 5, true, one, 1), 3);
    CHECK_EQ_INT(one[0], T_BOS);
    CHECK(run_vocab_is_eog(&v, T_END) && !run_vocab_is_eog(&v, T_HELLO));

    // pieces: alphabet characters back to bytes, control tokens print nothing
    char buf[16];
    CHECK_EQ_INT(run_token_to_piece(&v, 0x20, buf, sizeof(buf)), 1);
    CHECK(buf[0] == ' ');
    CHECK_EQ_INT(run_token_to_piece(&v, T_SP_H, buf, sizeof(buf)), 2);
    CHECK(memcmp(buf, " h", 2) == 0);
    CHECK_EQ_INT(run_token_to_piece(&v, T_END, buf, sizeof(buf)), 0);
    CHECK_EQ_INT(run_token_to_piece(&v, T_END_BANG, buf, sizeof(buf)), 8);
    CHECK_EQ_INT(run_token_to_piece(&v, 0xC3, buf, sizeof(buf)), 1);
    CHECK((uint8_t) buf[0] == 0xC3);
    CHECK_EQ_INT(run_token_to_piece(&v, N_TINY, buf, sizeof(buf)), 0);

    // streaming: the first byte of é waits for the second
    struct run_detok d = { NULL, 0, 0, 0 };
    const char * text = NULL;
    size_t n = 99;
    // a control token (empty piece) first: no bytes, but a valid pointer (it was NULL)
    CHECK(run_token_to_piece(&v, T_BOS, NULL, 0) == 0);
    CHECK(run_detok_push(&d, &v, T_BOS, &text, &n));
    CHECK(text != NULL && n == 0);
    CHECK(run_detok_push(&d, &v, T_HELLO, &text, &n));
    CHECK(n == 5 && memcmp(text, "hello", 5) == 0);
    CHECK(run_detok_push(&d, &v, 0xC3, &text, &n));
    CHECK_EQ_INT(n, 0);
    CHECK(run_detok_push(&d, &v, 0xA9, &text, &n));
    CHECK(n == 2 && memcmp(text, "\xc3\xa9", 2) == 0);
    CHECK(run_detok_push(&d, &v, 0xF0, &text, &n)); // a 4-byte character's lead byte, then the end
    CHECK_EQ_INT(n, 0);
    run_detok_flush(&d, &text, &n);
    CHECK(n == 1 && (uint8_t) text[0] == 0xF0);
    run_detok_flush(&d, &text, &n);
    CHECK_EQ_INT(n, 0);
    run_detok_free(&d);
    run_vocab_free(&v);

    // llama-bpe: a word that is a token is that token (ignore_merges)
    const struct tiny_opts llama3 = { "gpt2", "llama-bpe", true, NULL, -1, -1 };
    CHECK(tiny_vocab(&v, &llama3));
    if (v.n_tokens > 0) {
        CHECK(v.ignore_merges && v.add_bos && !v.add_eos);
        check_ids(&v, "hel", false, true, IDS(T_HEL));
        check_ids(&v, "hel", true, true, IDS(T_BOS, T_HEL));
        run_vocab_free(&v);
    }
}

// runs f with stderr going to a file; returns what it wrote (to be freed)
static char * capture_stderr(bool (*f)(const struct tiny_opts *), const struct tiny_opts * o, bool * result) {
    fflush(stderr);
    FILE * tmp = tmpfile();
    const int saved = dup(2);
    dup2(fileno(tmp), 2);
    *result = f(o);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    const long n = ftell(tmp);
    char * out = (char *) calloc((size_t) (n > 0 ? n : 0) + 1, 1);
    rewind(tmp);
    if (n > 0 && fread(out, 1, (size_t) n, tmp) != (size_t) n) {
        out[0] = '\0';
    }
    fclose(tmp);
    return out;
}

static bool load_and_free(const struct tiny_opts * o) {
    struct run_vocab v;
    const bool ok = tiny_vocab(&v, o);
    if (ok) {
        run_vocab_free(&v);
    }
    return ok;
}

static void check_refused(const struct tiny_opts * o, const char * must_say, const char * what) {
    bool ok = true;
    char * msg = capture_stderr(load_and_free, o, &ok);
    CHECK_MSG(!ok, "%s: refused", what);
    CHECK_MSG(strstr(msg, must_say) != NULL, "%s: the message names '%s': %s", what, must_say, msg);
    free(msg);
}

static void test_refusals(void) {
    const struct tiny_opts falcon = { "gpt2", "falcon", true, NULL, -1, -1 };
    check_refused(&falcon, "'falcon'", "an unknown pre-tokenizer");
    check_refused(&falcon, "llama-bpe", "the known pre-tokenizers listed");
    const struct tiny_opts no_pre = { "gpt2", NULL, true, NULL, -1, -1 };
    check_refused(&no_pre, "tokenizer.ggml.pre", "no pre-tokenizer");
    const struct tiny_opts bert = { "bert", "gpt-2", true, NULL, -1, -1 };
    check_refused(&bert, "'bert'", "an unknown tokenizer");
    const struct tiny_opts no_merges = { "gpt2", "gpt-2", false, NULL, -1, -1 };
    check_refused(&no_merges, "tokenizer.ggml.merges", "no merges");
    const struct tiny_opts bad_merge = { "gpt2", "gpt-2", true, "hello", -1, -1 };
    check_refused(&bad_merge, "merge 6", "a merge without a space");
    const struct tiny_opts eos_missing = { "gpt2", "gpt-2", true, NULL, 1, -1 };
    check_refused(&eos_missing, "eos", "add_eos without an eos token");
}

int main(void) {
    test_unicode();
    test_pretokenizers();
    test_bpe();
    test_refusals();
    return TEST_RESULT();
}
