#!/bin/sh
# bench-compare.sh: the CPU benches of two builds of this tree, run in
# alternation (A, B, A, B, ...) so that both see the same machine, and their
# outputs set side by side, line by line.
#
#   scripts/bench-compare.sh BUILD_A BUILD_B [ROUNDS (2)] [OUT_DIR]
#
# BUILD_A and BUILD_B are build directories (each with bin/bench-matmul,
# bin/bench-elementwise, bin/bench-cpu-attention and bin/ggml-run). Every
# bench runs with 2 threads. The logs stay in OUT_DIR (default: a new
# temporary directory); nothing else is written. For each bench and round the
# lines of A and B are printed side by side: the benches print the same lines in
# the same order, so each pair is one figure of both builds ("A  ||  B").
set -eu

if [ $# -lt 2 ]; then
    echo "usage: $0 BUILD_A BUILD_B [ROUNDS] [OUT_DIR]" >&2
    exit 2
fi
A=$1
B=$2
ROUNDS=${3:-2}
OUT=${4:-$(mktemp -d "${TMPDIR:-/tmp}/bench-compare-XXXXXX")}
mkdir -p "$OUT"

for dir in "$A" "$B"; do
    for prog in bench-matmul bench-elementwise bench-cpu-attention ggml-run; do
        if [ ! -x "$dir/bin/$prog" ]; then
            echo "error: $dir/bin/$prog is missing (build the benches and tools there)" >&2
            exit 1
        fi
    done
done

# name and arguments of each bench; the program is the first word
BENCHES="matmul-gen:bench-matmul -t 2 -g
matmul-prompt:bench-matmul -t 2 -T q8_0
elementwise:bench-elementwise 2
attention:bench-cpu-attention 1 4096 2 32 8 128 f16 20
run:ggml-run -t 2 -pp 128 -tg 32 -r 2 -dev none --no-progress"

run_one() { # label build bench-name command...
    label=$1; build=$2; name=$3; shift 3
    prog=$1; shift
    "$build/bin/$prog" "$@" > "$OUT/$label-$name.log" 2>&1 || {
        echo "error: $build/bin/$prog $* failed (log: $OUT/$label-$name.log)" >&2
        exit 1
    }
}

echo "$BENCHES" | while IFS=: read -r name cmd; do
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        # shellcheck disable=SC2086
        run_one "a$r" "$A" "$name" $cmd
        # shellcheck disable=SC2086
        run_one "b$r" "$B" "$name" $cmd
        r=$((r + 1))
    done
done

echo "$BENCHES" | while IFS=: read -r name cmd; do
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        echo "=== $name, round $r: $cmd"
        echo "    A: $A"
        echo "    B: $B"
        # a tab between the two (the benches print '|' themselves, never a tab)
        paste "$OUT/a$r-$name.log" "$OUT/b$r-$name.log" | sed "s/$(printf '\t')/  ||  /"
        r=$((r + 1))
    done
done
echo "logs: $OUT"
