#!/usr/bin/env python3
"""Writes the tokenizer test corpus (tests/tokenizer/corpus.jsonl): one JSON
string per line, each a text to tokenise. Deterministic (fixed seed).

Usage: tests/tokenizer/make-corpus.py > tests/tokenizer/corpus.jsonl

The texts mix English prose with contractions, code, numbers, runs of
spaces, tabs and newlines, many scripts (Latin with accents, Greek,
Cyrillic, Armenian, Hebrew, Arabic, Devanagari and Thai with their combining
marks, CJK, kana, Hangul), emoji with modifiers and joiners, symbols, and
random characters drawn from every assigned code point. U+0085 and U+FEFF
are left out: JavaScript's \\s disagrees with Unicode's White_Space on them
(the npm encoders run JavaScript regular expressions), and so are code
points unassigned in the Unicode version of this Python (categories may
differ from node's newer tables there)."""

import json
import random
import sys
import unicodedata

rng = random.Random(20261124)

WORDS = """the of and to in is was he for it with as his on be at by i this had not are but from or
have an they which one you were her all she there would their we him been has when who will more no if
out so said what up its about into than them can only other new some could time these two may then do
first any my now such like our over man me even most made after also did many before must through back
years where much your way well down should because each just those people mr how too little state good
very make world still own see men work long get here between both life being under never day same another
know while last might us great old year off come since against go came right used take three tokenizer
merge vocabulary llama qwen mistral nemo gemma token bytes unicode encoder decoder model weights""".split()

CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'M", "'LL", "'D", "'x", "'"]

SCRIPTS = {
    "latin": "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿāăąćčďđēėęěğīįıłńňōőœřśşšťūůűųźżžßÀÉÎÕÜŸĀŁŒŠŽ",
    "greek": "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ",
    "cyrillic": "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯіїєґІЇЄҐ",
    "armenian": "աբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆԱԲԳԴԵԶ",
    "hebrew": "אבגדהוזחטיכלמנסעפצקרשתםןףץ\u05b0\u05b4\u05b8\u05bc",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي\u064b\u064e\u064f\u0650\u0651\u0652٠١٢٣٤٥٦٧٨٩",
    "devanagari": "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह\u093e\u093f\u0940\u0941\u0942\u0947\u0948\u094b\u094c\u094d\u0902०१२३४५६७८९",
    "thai": "กขคงจฉชซญดตถทธนบปผพฟภมยรลวศษสหอฮ\u0e31\u0e34\u0e35\u0e36\u0e37\u0e38\u0e39\u0e48\u0e49\u0e4aเแโใไ๐๑๒๓",
    "cjk": "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没公从",
    "kana": "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンー",
    "hangul": "가나다라마바사아자차카타파하한국어대학교서울시간사람세계문화",
    "fullwidth": "ＡＢＣＤＥＦａｂｃｄｅｆ０１２３！？（）：；～　。、",
    "symbols": "©®™°±×÷¶§†‡•…‰′″‹›«»€£¥¢₹₽∀∂∃∅∇∈∉∑∏√∞∧∨∩∪∫≈≠≡≤≥⊂⊃←↑→↓↔⇒⇔■□▲△●○★☆♠♣♥♦♪♫",
    "numbers": "0123456789½¼¾²³¹⁰⁴⁵ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫ①②③④⑤",
    "combining": "e\u0301a\u0300o\u0302u\u0308n\u0303c\u0327i\u0304z\u030c",
}

EMOJI = ["😀", "😂", "🥲", "😍", "🤔", "👍", "👍🏽", "👋🏿", "🙏", "🎉", "🔥", "✨", "❤️", "💯", "🚀", "🌍",
         "👨‍👩‍👧‍👦", "🧑‍💻", "🏳️‍🌈", "🇫🇷", "🇯🇵", "🇺🇸", "☕", "⚡", "🐍", "🦙", "🤖", "1️⃣", "#️⃣", "©️"]

CODE = [
    "int main(void) {\n    printf(\"hello, world\\n\");\n    return 0;\n}\n",
    "def f(x):\n\treturn [i ** 2 for i in range(x) if i % 3 == 0]\n",
    "for (size_t i = 0; i < n; i++) { a[i] += b[i] * c; }",
    "{\"name\": \"llama\", \"n_embd\": 4096, \"rope_theta\": 500000.0, \"tags\": [\"a\", \"b\"]}",
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;",
    "const x = (a, b) => a?.b ?? b; // comment\n/* block */ let s = `t ${x}`;",
    "<div class=\"main\"><a href=\"https://example.com/?q=1&r=2\">link</a></div>",
    "if err != nil {\n\t\treturn fmt.Errorf(\"open %s: %w\", path, err)\n\t}",
    "    #include <stdio.h>\n\n\n#define MAX(a,b) ((a)>(b)?(a):(b))\r\n",
    "x = 0x7fffffff; y = 1e-9; z = 3.14159265358979; w = -42;",
    "$ cmake -S . -B build && cmake --build build -j2 2>&1 | tail -n 20",
    "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
    "a:=b; c+=d; e->f; g::h; i<<=2; j>>>=1; k!==l; m===n; o||p&&q",
]

SPACES = [" ", "  ", "   ", "    ", "        ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n",
          " \n", "\n ", "  \n  ", "\t\n", " \t ", "\u00a0", "\u3000", "\u2003", "\u2009", "\u202f", "\u2028", "\r"]

LLAMA3_SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                  "<|eot_id|>", "<|eom_id|>", "<|python_tag|>", "<|reserved_special_token_7|>"]


def assigned_code_points():
    out = []
    for cp in range(0x110000):
        if cp in (0x85, 0xFEFF) or 0xD800 <= cp <= 0xDFFF:
            continue
        cat = unicodedata.category(chr(cp))
        if cat in ("Cn", "Co", "Cs"):
            continue
        out.append(cp)
    return out


ASSIGNED = assigned_code_points()


def word():
    w = rng.choice(WORDS)
    r = rng.random()
    if r < 0.1:
        w = w.capitalize()
    elif r < 0.13:
        w = w.upper()
    return w


def sentence():
    parts = []
    for _ in range(rng.randint(3, 16)):
        w = word()
        if rng.random() < 0.08:
            w += rng.choice(CONTRACTIONS)
        parts.append(w)
    s = " ".join(parts)
    return s[0].upper() + s[1:] + rng.choice([".", "!", "?", "...", ";", ":", ",", ""])


def number():
    r = rng.random()
    if r < 0.3:
        return str(rng.randint(0, 10 ** rng.randint(1, 15)))
    if r < 0.5:
        return "%.*f" % (rng.randint(1, 6), rng.uniform(-1e6, 1e6))
    if r < 0.6:
        return "{:,}".format(rng.randint(1000, 10 ** 12))
    if r < 0.7:
        return "%04d-%02d-%02d" % (rng.randint(1900, 2100), rng.randint(1, 12), rng.randint(1, 28))
    if r < 0.8:
        return "+1 (%03d) %03d-%04d" % (rng.randint(100, 999), rng.randint(100, 999), rng.randint(0, 9999))
    if r < 0.9:
        return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40)))
    return "%d%%" % rng.randint(0, 100)


def script_text(name):
    chars = SCRIPTS[name]
    out = []
    for _ in range(rng.randint(1, 6)):
        out.append("".join(rng.choice(chars) for _ in range(rng.randint(1, 10))))
    return " ".join(out)


def random_chars():
    return "".join(chr(rng.choice(ASSIGNED)) for _ in range(rng.randint(1, 12)))


def piece(special):
    r = rng.random()
    if r < 0.25:
        return sentence()
    if r < 0.35:
        return number()
    if r < 0.55:
        return script_text(rng.choice(sorted(SCRIPTS)))
    if r < 0.62:
        return "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 4)))
    if r < 0.70:
        return rng.choice(CODE)
    if r < 0.80:
        return rng.choice(SPACES) * rng.randint(1, 3)
    if r < 0.90:
        return random_chars()
    if special and r < 0.93:
        return rng.choice(LLAMA3_SPECIAL)
    return word() + rng.choice(CONTRACTIONS) + " " + word()


def text(special):
    parts = [piece(special) for _ in range(rng.randint(1, 5))]
    sep = [rng.choice(["", " ", " ", "\n", "  "]) for _ in parts]
    return "".join(p + s for p, s in zip(parts, sep))


def main():
    fixed = [
        "Hello, world!", "Hello world!", " leading space", "trailing space ", "  two leading", "a  b   c    d",
        "\n", "\n\n\n", " \n \n ", "\t\tindented", "I'm sure they'll say it's fine, we've done what you'd do.",
        "DON'T SHOUT", "x's y'S z'll", "12345678901234567890", "3.14159", "1,000,000", "2024-01-01",
        "日本語のテキスト", "中文文本测试", "한국어 텍스트", "Привет, мир!", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם",
        "नमस्ते दुनिया", "สวัสดีชาวโลก", "😀😀😀", "👨‍👩‍👧‍👦 family", "naïve café résumé", "e\u0301", "ＡＢＣ１２３",
        "<|begin_of_text|>Hello<|eot_id|>", "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
        "<|not_a_token|>", "<s>text</s>", "<|endoftext|>", "a" * 200, " " * 50, "\n" * 30, "ab" * 100,
    ]
    cases = fixed[:]
    for i in range(4000):
        cases.append(text(special=(i % 4 == 0)))
    for c in cases:
        sys.stdout.write(json.dumps(c, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
