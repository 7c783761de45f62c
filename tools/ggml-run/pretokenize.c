// pretokenize.c: the regular expressions of the BPE pre-tokenizers as tables
// of alternatives, and the backtracking matcher that cuts a text with them.

#include "pretokenize.h"
#include "run-common.h"
#include "unicode.h"

#include <stdlib.h>
#include <string.h>

//
// character classes
//

enum pre_class {
    CLS_SPACE,          // ' '
    CLS_LETTER,         // \p{L}
    CLS_NUMBER,         // \p{N}
    CLS_WS,             // \s
    CLS_CRLF,           // [\r\n]
    CLS_CRLF_SLASH,     // [\r\n/]
    CLS_NOT_CRLF_L_N,   // [^\r\n\p{L}\p{N}]
    CLS_NOT_WS_L_N,     // [^\s\p{L}\p{N}]
    CLS_UPPERISH,       // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    CLS_LOWERISH,       // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
    CLS_DS_LETTER,      // deepseek-llm's list of cased letters
    CLS_DS_PUNCT,       // [!-/:-~！-／：-～‘-‟　-。]
    CLS_DS_CJK,         // [一-龥ࠀ-一가-퟿]
    CLS_COUNT,
};

struct cp_range {
    uint32_t first;
    uint32_t last;
};

// The letter ranges of deepseek-llm's second expression. Six of its ranges
// are written in tokenizer.json with characters that NFC normalisation maps
// elsewhere (ώ U+1F7D, ι U+1FBE, ΐ U+1FD3, Ί U+1FDB, Ω U+2126, K U+212A);
// these are the code points as written.
static const struct cp_range ds_letters[] = {
    { 0x0041, 0x005A }, { 0x0061, 0x007A }, { 0x00B5, 0x00B5 }, { 0x00C0, 0x00D6 }, { 0x00D8, 0x00F6 },
    { 0x00F8, 0x01BA }, { 0x01BC, 0x01BF }, { 0x01C4, 0x0293 }, { 0x0295, 0x02AF }, { 0x0370, 0x0373 },
    { 0x0376, 0x0377 }, { 0x037B, 0x037D }, { 0x037F, 0x037F }, { 0x0386, 0x0386 }, { 0x0388, 0x038A },
    { 0x038C, 0x038C }, { 0x038E, 0x03A1 }, { 0x03A3, 0x03F5 }, { 0x03F7, 0x0481 }, { 0x048A, 0x052F },
    { 0x0531, 0x0556 }, { 0x10A0, 0x10C5 }, { 0x13A0, 0x13F5 }, { 0x13F8, 0x13FD }, { 0x1C90, 0x1CBA },
    { 0x1CBD, 0x1CBF }, { 0x1D00, 0x1D2B }, { 0x1D6B, 0x1D77 }, { 0x1D79, 0x1D9A }, { 0x1E00, 0x1F15 },
    { 0x1F18, 0x1F1D }, { 0x1F20, 0x1F45 }, { 0x1F48, 0x1F4D }, { 0x1F50, 0x1F57 }, { 0x1F59, 0x1F59 },
    { 0x1F5B, 0x1F5B }, { 0x1F5D, 0x1F5D }, { 0x1F5F, 0x1F7D }, { 0x1F80, 0x1FB4 }, { 0x1FB6, 0x1FBC },
    { 0x1FBE, 0x1FBE }, { 0x1FC2, 0x1FC4 }, { 0x1FC6, 0x1FCC }, { 0x1FD0, 0x1FD3 }, { 0x1FD6, 0x1FDB },
    { 0x1FE0, 0x1FEC }, { 0x1FF2, 0x1FF4 }, { 0x1FF6, 0x1FFC }, { 0x2102, 0x2102 }, { 0x2107, 0x2107 },
    { 0x210A, 0x2113 }, { 0x2115, 0x2115 }, { 0x2119, 0x211D }, { 0x2124, 0x2124 }, { 0x2126, 0x2126 },
    { 0x2128, 0x2128 }, { 0x212A, 0x212D }, { 0x212F, 0x2134 }, { 0x2139, 0x2139 }, { 0x213C, 0x213F },
    { 0x2145, 0x2149 }, { 0x214E, 0x214E }, { 0x2183, 0x2184 }, { 0x2C00, 0x2C7B }, { 0x2C7E, 0x2CE4 },
    { 0x2CEB, 0x2CEE }, { 0x2CF2, 0x2CF3 }, { 0xA640, 0xA66D }, { 0xA680, 0xA69B }, { 0xA722, 0xA76F },
    { 0xA771, 0xA787 }, { 0xA78B, 0xA78E }, { 0xAB70, 0xABBF }, { 0xFB00, 0xFB06 }, { 0xFB13, 0xFB17 },
    { 0xFF21, 0xFF3A }, { 0xFF41, 0xFF5A }, { 0x10400, 0x1044F }, { 0x104B0, 0x104D3 }, { 0x104D8, 0x104FB },
    { 0x10C80, 0x10CB2 }, { 0x10CC0, 0x10CF2 }, { 0x118A0, 0x118DF }, { 0x1E900, 0x1E943 },
};

static const struct cp_range ds_punct[] = {
    { 0x21, 0x2F }, { 0x3A, 0x7E }, { 0xFF01, 0xFF0F }, { 0xFF1A, 0xFF5E }, { 0x2018, 0x201F }, { 0x3000, 0x3002 },
};

static const struct cp_range ds_cjk[] = {
    { 0x4E00, 0x9FA5 }, { 0x0800, 0x4E00 }, { 0xAC00, 0xD7FF },
};

static bool in_ranges(const struct cp_range * r, size_t n, uint32_t cp) {
    for (size_t i = 0; i < n; i++) {
        if (cp >= r[i].first && cp <= r[i].last) {
            return true;
        }
    }
    return false;
}

#define N_RANGES(a) (sizeof(a) / sizeof((a)[0]))

// a decoded character: its code point, category and White_Space property
struct pre_char {
    uint32_t      cp;
    enum run_ucat cat;
    bool          ws;
};

static bool class_has(enum pre_class cls, const struct pre_char * c) {
    switch (cls) {
        case CLS_SPACE:        return c->cp == ' ';
        case CLS_LETTER:       return run_ucat_is_letter(c->cat);
        case CLS_NUMBER:       return run_ucat_is_number(c->cat);
        case CLS_WS:           return c->ws;
        case CLS_CRLF:         return c->cp == '\r' || c->cp == '\n';
        case CLS_CRLF_SLASH:   return c->cp == '\r' || c->cp == '\n' || c->cp == '/';
        case CLS_NOT_CRLF_L_N: return c->cp != '\r' && c->cp != '\n' && !run_ucat_is_letter(c->cat) && !run_ucat_is_number(c->cat);
        case CLS_NOT_WS_L_N:   return !c->ws && !run_ucat_is_letter(c->cat) && !run_ucat_is_number(c->cat);
        case CLS_UPPERISH:     return c->cat == RUN_UCAT_LU || c->cat == RUN_UCAT_LT || c->cat == RUN_UCAT_LM ||
                                      c->cat == RUN_UCAT_LO || run_ucat_is_mark(c->cat);
        case CLS_LOWERISH:     return c->cat == RUN_UCAT_LL || c->cat == RUN_UCAT_LM || c->cat == RUN_UCAT_LO ||
                                      run_ucat_is_mark(c->cat);
        case CLS_DS_LETTER:    return in_ranges(ds_letters, N_RANGES(ds_letters), c->cp);
        case CLS_DS_PUNCT:     return in_ranges(ds_punct, N_RANGES(ds_punct), c->cp);
        case CLS_DS_CJK:       return in_ranges(ds_cjk, N_RANGES(ds_cjk), c->cp);
        case CLS_COUNT:        break;
    }
    return false;
}

//
// patterns: alternatives of element sequences
//

enum pre_elem_kind {
    EL_CLASS,             // cls{min,max}, greedy
    EL_CONTRACTION,       // 's|'t|'re|'ve|'m|'ll|'d
    EL_CONTRACTION_ANY,   // the same, either case
    EL_NOT_BEFORE_NONWS,  // (?!\S)
    EL_END,               // $
};

#define REP_MAX SIZE_MAX

struct pre_elem {
    enum pre_elem_kind kind;
    enum pre_class     cls;
    size_t             min;
    size_t             max;
};

#define MAX_ELEMS 4

struct pre_alt {
    size_t          n;
    struct pre_elem e[MAX_ELEMS];
};

struct pre_stage {
    const struct pre_alt * alts;
    size_t                 n_alts;
};

#define ONE(c)   { EL_CLASS, (c), 1, 1 }
#define OPT(c)   { EL_CLASS, (c), 0, 1 }
#define STAR(c)  { EL_CLASS, (c), 0, REP_MAX }
#define PLUS(c)  { EL_CLASS, (c), 1, REP_MAX }
#define UPTO(c, n) { EL_CLASS, (c), 1, (n) }
#define CONTRACTION     { EL_CONTRACTION, CLS_SPACE, 0, 0 }
#define CONTRACTION_ANY { EL_CONTRACTION_ANY, CLS_SPACE, 0, 0 }
#define NOT_BEFORE_NONWS { EL_NOT_BEFORE_NONWS, CLS_SPACE, 0, 0 }
#define END_OF_TEXT     { EL_END, CLS_SPACE, 0, 0 }

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
static const struct pre_alt gpt2_alts[] = {
    { 1, { CONTRACTION } },
    { 2, { OPT(CLS_SPACE), PLUS(CLS_LETTER) } },
    { 2, { OPT(CLS_SPACE), PLUS(CLS_NUMBER) } },
    { 2, { OPT(CLS_SPACE), PLUS(CLS_NOT_WS_L_N) } },
    { 2, { PLUS(CLS_WS), NOT_BEFORE_NONWS } },
    { 1, { PLUS(CLS_WS) } },
};

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
static const struct pre_alt llama3_alts[] = {
    { 1, { CONTRACTION_ANY } },
    { 2, { OPT(CLS_NOT_CRLF_L_N), PLUS(CLS_LETTER) } },
    { 1, { UPTO(CLS_NUMBER, 3) } },
    { 3, { OPT(CLS_SPACE), PLUS(CLS_NOT_WS_L_N), STAR(CLS_CRLF) } },
    { 2, { STAR(CLS_WS), PLUS(CLS_CRLF) } },
    { 2, { PLUS(CLS_WS), NOT_BEFORE_NONWS } },
    { 1, { PLUS(CLS_WS) } },
};

// llama3's with \p{N} instead of \p{N}{1,3}
static const struct pre_alt qwen2_alts[] = {
    { 1, { CONTRACTION_ANY } },
    { 2, { OPT(CLS_NOT_CRLF_L_N), PLUS(CLS_LETTER) } },
    { 1, { ONE(CLS_NUMBER) } },
    { 3, { OPT(CLS_SPACE), PLUS(CLS_NOT_WS_L_N), STAR(CLS_CRLF) } },
    { 2, { STAR(CLS_WS), PLUS(CLS_CRLF) } },
    { 2, { PLUS(CLS_WS), NOT_BEFORE_NONWS } },
    { 1, { PLUS(CLS_WS) } },
};

// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|
// \p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
static const struct pre_alt tekken_alts[] = {
    { 3, { OPT(CLS_NOT_CRLF_L_N), STAR(CLS_UPPERISH), PLUS(CLS_LOWERISH) } },
    { 3, { OPT(CLS_NOT_CRLF_L_N), PLUS(CLS_UPPERISH), STAR(CLS_LOWERISH) } },
    { 1, { ONE(CLS_NUMBER) } },
    { 3, { OPT(CLS_SPACE), PLUS(CLS_NOT_WS_L_N), STAR(CLS_CRLF_SLASH) } },
    { 2, { STAR(CLS_WS), PLUS(CLS_CRLF) } },
    { 2, { PLUS(CLS_WS), NOT_BEFORE_NONWS } },
    { 1, { PLUS(CLS_WS) } },
};

// deepseek-llm: [\r\n], \s?[letters]+, \s?[punctuation]+, \s+$, [CJK]+, \p{N}+ in turn
static const struct pre_alt ds_crlf[]   = { { 1, { ONE(CLS_CRLF) } } };
static const struct pre_alt ds_letter[] = { { 2, { OPT(CLS_WS), PLUS(CLS_DS_LETTER) } } };
static const struct pre_alt ds_punct_alt[] = { { 2, { OPT(CLS_WS), PLUS(CLS_DS_PUNCT) } } };
static const struct pre_alt ds_trail[]  = { { 2, { PLUS(CLS_WS), END_OF_TEXT } } };
static const struct pre_alt ds_cjk_alt[] = { { 1, { PLUS(CLS_DS_CJK) } } };
static const struct pre_alt ds_number[] = { { 1, { PLUS(CLS_NUMBER) } } };

#define STAGE(a) { (a), N_RANGES(a) }

static const struct pre_stage gpt2_stages[]   = { STAGE(gpt2_alts) };
static const struct pre_stage llama3_stages[] = { STAGE(llama3_alts) };
static const struct pre_stage qwen2_stages[]  = { STAGE(qwen2_alts) };
static const struct pre_stage tekken_stages[] = { STAGE(tekken_alts) };
static const struct pre_stage ds_stages[]     = {
    STAGE(ds_crlf), STAGE(ds_letter), STAGE(ds_punct_alt), STAGE(ds_trail), STAGE(ds_cjk_alt), STAGE(ds_number),
};

static const struct {
    const char *             name;
    enum run_pretok          kind;
} pretok_names[] = {
    { "gpt-2",        RUN_PRETOK_GPT2 },
    { "phi-2",        RUN_PRETOK_GPT2 },
    { "llama-bpe",    RUN_PRETOK_LLAMA3 },
    { "llama3",       RUN_PRETOK_LLAMA3 },
    { "llama-v3",     RUN_PRETOK_LLAMA3 },
    { "qwen2",        RUN_PRETOK_QWEN2 },
    { "deepseek-llm", RUN_PRETOK_DEEPSEEK_LLM },
    { "tekken",       RUN_PRETOK_TEKKEN },
};

bool run_pretok_from_name(const char * name, enum run_pretok * out) {
    for (size_t i = 0; i < N_RANGES(pretok_names); i++) {
        if (strcmp(pretok_names[i].name, name) == 0) {
            *out = pretok_names[i].kind;
            return true;
        }
    }
    return false;
}

const char * run_pretok_known_names(void) {
    return "gpt-2, phi-2, llama-bpe, llama3, llama-v3, qwen2, deepseek-llm, tekken";
}

//
// matching
//

#define NO_MATCH SIZE_MAX

// the last run of each class found: characters [first, end) are in it and
// end is not, so a run starting anywhere inside ends at end too. This keeps
// matching linear where an alternative fails after scanning a long run (\s+$
// at every position of a long run of spaces).
struct class_run {
    size_t first;
    size_t end;
};

struct pre_text {
    const struct pre_char * c;
    size_t                  end; // the fragment ends here: nothing beyond is seen
    struct class_run        runs[CLS_COUNT];
};

// the end of the run of cls from pos
static size_t run_end(struct pre_text * t, enum pre_class cls, size_t pos) {
    struct class_run * r = &t->runs[cls];
    if (pos >= r->first && pos < r->end) {
        return r->end;
    }
    size_t e = pos;
    while (e < t->end && class_has(cls, &t->c[e])) {
        e++;
    }
    if (e > pos) {
        *r = (struct class_run) { pos, e };
    }
    return e;
}

static char ascii_lower(uint32_t cp) {
    return cp >= 'A' && cp <= 'Z' ? (char) (cp - 'A' + 'a') : (char) cp;
}

// the length of a contraction at pos, or 0
static size_t match_contraction(struct pre_text * t, size_t pos, bool any_case) {
    static const char * const suffixes[] = { "s", "t", "re", "ve", "m", "ll", "d" };
    if (pos >= t->end || t->c[pos].cp != '\'') {
        return 0;
    }
    for (size_t s = 0; s < N_RANGES(suffixes); s++) {
        const size_t n = strlen(suffixes[s]);
        if (pos + 1 + n > t->end) {
            continue;
        }
        bool ok = true;
        for (size_t i = 0; ok && i < n; i++) {
            const uint32_t cp = t->c[pos + 1 + i].cp;
            ok = cp < 0x80 && (any_case ? ascii_lower(cp) : (char) cp) == suffixes[s][i];
        }
        if (ok) {
            return 1 + n;
        }
    }
    return 0;
}

// where elements e[0, n) matched from pos end, or NO_MATCH
static size_t match_elems(struct pre_text * t, const struct pre_elem * e, size_t n, size_t pos) {
    if (n == 0) {
        return pos;
    }
    switch (e->kind) {
        case EL_CONTRACTION:
        case EL_CONTRACTION_ANY: {
            const size_t len = match_contraction(t, pos, e->kind == EL_CONTRACTION_ANY);
            return len == 0 ? NO_MATCH : match_elems(t, e + 1, n - 1, pos + len);
        }
        case EL_NOT_BEFORE_NONWS:
            return pos < t->end && !t->c[pos].ws ? NO_MATCH : match_elems(t, e + 1, n - 1, pos);
        case EL_END:
            return pos == t->end ? match_elems(t, e + 1, n - 1, pos) : NO_MATCH;
        case EL_CLASS:
            break;
    }
    const size_t run   = run_end(t, e->cls, pos) - pos;
    const size_t count = run < e->max ? run : e->max;
    // a run that must reach the end does so whole or not at all: no giving back
    // (which would make \s+$ quadratic over a long run of spaces in a text)
    if (n > 1 && e[1].kind == EL_END) {
        return count >= e->min && pos + count == t->end ? match_elems(t, e + 1, n - 1, pos + count) : NO_MATCH;
    }
    // greedy: the longest run first, giving back one character at a time
    for (size_t k = count + 1; k-- > e->min;) {
        const size_t r = match_elems(t, e + 1, n - 1, pos + k);
        if (r != NO_MATCH) {
            return r;
        }
    }
    return NO_MATCH;
}

// the end of the first alternative matching at pos, or NO_MATCH (empty matches do not count)
static size_t match_at(struct pre_text * t, const struct pre_stage * st, size_t pos) {
    for (size_t a = 0; a < st->n_alts; a++) {
        const size_t r = match_elems(t, st->alts[a].e, st->alts[a].n, pos);
        if (r != NO_MATCH && r > pos) {
            return r;
        }
    }
    return NO_MATCH;
}

static bool frag_push(struct run_words * f, size_t end) {
    if (f->n == f->cap) {
        const size_t cap = f->cap == 0 ? 64 : 2 * f->cap;
        size_t * p = (size_t *) realloc(f->end, cap * sizeof(size_t));
        if (p == NULL) {
            run_error("out of memory while pre-tokenising");
            return false;
        }
        f->end = p;
        f->cap = cap;
    }
    f->end[f->n++] = end;
    return true;
}

// fragments are kept as run_words of character (not byte) offsets

// cuts each fragment of in by the stage's matches (and the text between them) into out
static bool apply_stage(const struct pre_char * c, const struct pre_stage * st, const struct run_words * in,
                        struct run_words * out) {
    size_t start = 0;
    for (size_t f = 0; f < in->n; f++) {
        struct pre_text t = { .c = c, .end = in->end[f] };
        memset(t.runs, 0, sizeof(t.runs));
        size_t gap = start;
        for (size_t pos = start; pos < t.end;) {
            const size_t r = match_at(&t, st, pos);
            if (r == NO_MATCH) {
                pos++;
                continue;
            }
            if (gap < pos && !frag_push(out, pos)) {
                return false;
            }
            if (!frag_push(out, r)) {
                return false;
            }
            gap = pos = r;
        }
        if (gap < t.end && !frag_push(out, t.end)) {
            return false;
        }
        start = t.end;
    }
    return true;
}

static void stages_of(enum run_pretok kind, const struct pre_stage ** st, size_t * n) {
    switch (kind) {
        case RUN_PRETOK_GPT2:         *st = gpt2_stages;   *n = N_RANGES(gpt2_stages);   return;
        case RUN_PRETOK_LLAMA3:       *st = llama3_stages; *n = N_RANGES(llama3_stages); return;
        case RUN_PRETOK_QWEN2:        *st = qwen2_stages;  *n = N_RANGES(qwen2_stages);  return;
        case RUN_PRETOK_DEEPSEEK_LLM: *st = ds_stages;     *n = N_RANGES(ds_stages);     return;
        case RUN_PRETOK_TEKKEN:       *st = tekken_stages; *n = N_RANGES(tekken_stages); return;
    }
    *st = gpt2_stages;
    *n  = N_RANGES(gpt2_stages);
}

bool run_pretokenize(enum run_pretok kind, const char * text, size_t len, struct run_words * words) {
    if (len == 0) {
        return true;
    }
    struct pre_char * c = (struct pre_char *) run_malloc(len * sizeof(struct pre_char), "the text to pre-tokenise");
    size_t * offs = (size_t *) run_malloc((len + 1) * sizeof(size_t), "the text to pre-tokenise");
    struct run_words a = { NULL, 0, 0 }, b = { NULL, 0, 0 };
    bool ok = c != NULL && offs != NULL;
    size_t n = 0;
    for (size_t i = 0; ok && i < len; n++) {
        offs[n] = i;
        i += run_utf8_decode(text + i, len - i, &c[n].cp);
        c[n].cat = run_unicode_category(c[n].cp);
        c[n].ws  = run_unicode_is_space(c[n].cp);
    }
    if (ok) {
        offs[n] = len;
        ok = frag_push(&a, n);
    }
    const struct pre_stage * st = NULL;
    size_t n_st = 0;
    stages_of(kind, &st, &n_st);
    for (size_t s = 0; ok && s < n_st; s++) {
        b.n = 0;
        ok = apply_stage(c, &st[s], &a, &b);
        const struct run_words tmp = a;
        a = b;
        b = tmp;
    }
    for (size_t f = 0; ok && f < a.n; f++) {
        ok = frag_push(words, offs[a.end[f]]);
    }
    free(a.end);
    free(b.end);
    free(offs);
    free(c);
    return ok;
}
