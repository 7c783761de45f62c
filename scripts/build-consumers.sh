#!/usr/bin/env bash
# Builds llama.cpp and/or whisper.cpp, from checkouts the user names, against an
# installed ggml (this library's install, or any other: upstream's, to compare),
# with their own options for a system ggml (LLAMA_USE_SYSTEM_GGML,
# WHISPER_USE_SYSTEM_GGML). The checkouts are only read: each build goes to a
# directory of its own under OUT, which must not exist yet or must be one this
# script made before (it holds the marker file .ggml-consumer-build).
#
#   scripts/build-consumers.sh --prefix DIR --out DIR [--llama DIR] [--whisper DIR] [--jobs N]
#
# Built: llama.cpp's llama-bench, llama-completion, llama-quantize, test-llama-archs and
# test-tokenizer-0; whisper.cpp's whisper-cli, whisper-bench and its tests (ctest).
set -euo pipefail

usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

prefix="" out="" llama="" whisper="" jobs=2
while [ $# -gt 0 ]; do
    case $1 in
        --prefix)  prefix=${2:?}; shift 2 ;;
        --out)     out=${2:?}; shift 2 ;;
        --llama)   llama=${2:?}; shift 2 ;;
        --whisper) whisper=${2:?}; shift 2 ;;
        --jobs)    jobs=${2:?}; shift 2 ;;
        -h|--help) usage ;;
        *) echo "build-consumers: unknown option '$1'" >&2; usage ;;
    esac
done
[ -n "$prefix" ] && [ -n "$out" ] || usage
[ -n "$llama$whisper" ] || { echo "build-consumers: name --llama and/or --whisper" >&2; exit 2; }
[ -f "$prefix/include/ggml.h" ] || { echo "build-consumers: no include/ggml.h under --prefix $prefix" >&2; exit 1; }
case $jobs in ''|*[!0-9]*|0) echo "build-consumers: --jobs wants a positive number" >&2; exit 2 ;; esac

if [ -e "$out" ] && [ ! -f "$out/.ggml-consumer-build" ]; then
    echo "build-consumers: $out exists and was not made by this script; name another --out" >&2
    exit 1
fi
mkdir -p "$out"
touch "$out/.ggml-consumer-build"
prefix=$(cd "$prefix" && pwd)

if [ -n "$llama" ]; then
    [ -f "$llama/include/llama.h" ] || { echo "build-consumers: $llama is not a llama.cpp checkout" >&2; exit 1; }
    # ggml_ssm_scan gained the argument K on 2026-08-14: llama.cpp older than that
    # does not compile against a ggml.h of that date or later (upstream's or ours)
    if grep -q "int64_t *K)" <(sed -n '/ggml_ssm_scan(/,/);/p' "$prefix/include/ggml.h") &&
       grep -q "ggml_ssm_scan(ctx, ssm, x, dt, A, B, C, ids)" "$llama/src/models/mamba-base.cpp" 2>/dev/null; then
        echo "build-consumers: this llama.cpp calls ggml_ssm_scan without its last argument K, which" >&2
        echo "  the installed ggml.h has (since 2026-08-14); pass 1 at its call sites first:" >&2
        grep -rn "ggml_ssm_scan(" "$llama/src" | sed 's/^/    /' >&2
        exit 1
    fi
    echo "== llama.cpp -> $out/llama"
    cmake -S "$llama" -B "$out/llama" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_USE_SYSTEM_GGML=ON -DCMAKE_PREFIX_PATH="$prefix" \
        -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >"$out/llama-configure.log"
    cmake --build "$out/llama" -j"$jobs" --target llama-bench llama-completion llama-quantize test-llama-archs test-tokenizer-0
    echo "   $out/llama/bin: $(ls "$out/llama/bin" | tr '\n' ' ')"
fi

if [ -n "$whisper" ]; then
    [ -f "$whisper/include/whisper.h" ] || { echo "build-consumers: $whisper is not a whisper.cpp checkout" >&2; exit 1; }
    echo "== whisper.cpp -> $out/whisper"
    cmake -S "$whisper" -B "$out/whisper" -DCMAKE_BUILD_TYPE=Release \
        -DWHISPER_USE_SYSTEM_GGML=ON -DCMAKE_PREFIX_PATH="$prefix" \
        -DWHISPER_BUILD_TESTS=ON -DWHISPER_BUILD_EXAMPLES=ON -DWHISPER_SDL2=OFF >"$out/whisper-configure.log"
    cmake --build "$out/whisper" -j"$jobs"
    echo "   $out/whisper/bin: $(ls "$out/whisper/bin" | tr '\n' ' ')"
fi

# the libraries the programs will load: the install named, by RUNPATH or LD_LIBRARY_PATH
echo "== run them with: LD_LIBRARY_PATH=$(ls -d "$prefix"/lib*/ | head -n1)"
