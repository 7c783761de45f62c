#!/usr/bin/env bash
# Compares ggml-run's tokenizers with the npm tokenizer packages on the
# corpus (ctest's test-tokenizer-npm). For each package, node writes its
# vocabulary, merges and encodings (npm-truth.mjs) and the C program compares;
# first, node's regular expressions cut the corpus as each pre-tokenizer should.
#
# usage: run-npm-test.sh TEST_PROGRAM WORK_DIR
# The packages are looked for in $GGML_NPM_DIR, else build-deps/npm/node_modules
# of the source tree (where scripts/setup.sh installs them). Exits 77 (skipped)
# when node or a package is missing.
set -u
prog=$1
work=$2
here="$(cd "$(dirname "$0")" && pwd)"
modules="${GGML_NPM_DIR:-$here/../../build-deps/npm/node_modules}"
packages="gpt-3-encoder llama3-tokenizer-js llama-tokenizer-js"

if ! command -v node >/dev/null 2>&1; then
    echo "skipped: node is not installed (scripts/setup.sh installs it)"
    exit 77
fi
for p in $packages; do
    if [ ! -f "$modules/$p/package.json" ]; then
        echo "skipped: npm package $p is not in $modules (scripts/setup.sh installs it)"
        exit 77
    fi
done

status=0
for p in pre-tokenizers $packages; do
    if ! node "$here/npm-truth.mjs" "$modules" "$p" "$here/corpus.jsonl" "$work/$p"; then
        echo "FAILED: node could not encode the corpus with $p"
        status=1
        continue
    fi
    "$prog" "$work/$p" || status=1
done
exit $status
