#!/bin/sh
# compare-upstream-cpu.sh: upstream ggml's test-backend-ops with OUR CPU
# backend under test and UPSTREAM's CPU backend as the reference, in one
# process.
#
# usage: scripts/compare-upstream-cpu.sh OUR_BUILD UPSTREAM_BUILD WORK_DIR [test-backend-ops arguments...]
#
#   OUR_BUILD       a build dir of this repository (bin/libggml-cpu.so.0, bin/libggml-base.so.0)
#   UPSTREAM_BUILD  a build dir of upstream ggml with tests (bin/test-backend-ops)
#   WORK_DIR        where the renamed copies of our libraries and the shim go
#   arguments       passed on after "test -b OURCPU" (e.g. -o FLASH_ATTN_EXT);
#                   MODE=support runs "support" instead of "test"
#   --per-op [OP..] instead: one run per op (the given ones, or all of upstream's case list),
#                   logs in WORK_DIR/per-op/OP.log, a run that ends in neither 0
#                   nor 1 (the harness itself failing, e.g. a thread it could not
#                   start on a loaded machine) tried again up to twice; then the
#                   counts per op and in all: OK, FAIL, not supported by ours
#                   only, by upstream's CPU only, by both
#
# How: our libggml-base and libggml-cpu are copied with sonames of their own
# (libggml-ours-base.so, libggml-ours-cpu.so; patchelf), so that the loader
# does not hand ours upstream's already loaded libggml-base. The module
# scripts/ourcpu-shim.c (built here) opens our libggml-cpu with RTLD_DEEPBIND,
# so our code binds to our own ggml_* functions, and lists our CPU device as
# an ACCEL device "OURCPU": upstream's test-backend-ops skips devices of type
# CPU and compares each other device with its CPU backend. Upstream's
# ggml_backend_load_all loads the shim from GGML_BACKEND_PATH.
# Nothing of upstream is copied or changed.
set -eu

if [ $# -lt 3 ]; then
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
ours=$(cd "$1" && pwd)
up=$(cd "$2" && pwd)
work=$3
shift 3
repo=$(cd "$(dirname "$0")/.." && pwd)

command -v patchelf > /dev/null || { echo "compare-upstream-cpu: patchelf is needed (apt-get install patchelf)" >&2; exit 1; }
[ -x "$up/bin/test-backend-ops" ] || { echo "compare-upstream-cpu: no $up/bin/test-backend-ops" >&2; exit 1; }

mkdir -p "$work"
work=$(cd "$work" && pwd)

base_needed=$(patchelf --print-needed "$ours/bin/libggml-cpu.so" | grep '^libggml-base')
cp -f "$ours/bin/libggml-base.so" "$work/libggml-ours-base.so"
cp -f "$ours/bin/libggml-cpu.so"  "$work/libggml-ours-cpu.so"
patchelf --set-soname libggml-ours-base.so "$work/libggml-ours-base.so"
patchelf --remove-rpath "$work/libggml-ours-base.so"
patchelf --set-soname libggml-ours-cpu.so "$work/libggml-ours-cpu.so"
patchelf --replace-needed "$base_needed" libggml-ours-base.so "$work/libggml-ours-cpu.so"
patchelf --set-rpath '$ORIGIN' "$work/libggml-ours-cpu.so"

${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I"$repo/include" "$repo/scripts/ourcpu-shim.c" \
    -o "$work/libggml-ourcpu-shim.so" -ldl -lpthread

export GGML_BACKEND_PATH="$work/libggml-ourcpu-shim.so"
export OURCPU_LIB="$work/libggml-ours-cpu.so"
if [ "${1:-}" != "--per-op" ]; then
    exec "$up/bin/test-backend-ops" "${MODE:-test}" -b OURCPU "$@"
fi

strip_colors() { sed 's/\x1b\[[0-9;]*m//g' "$@"; }

shift
mkdir -p "$work/per-op"
if [ $# -gt 0 ]; then
    ops="$*"
else
    ops=$("$up/bin/test-backend-ops" support -b OURCPU | strip_colors | sed -n 's/^  \([A-Z_0-9]*\)(.*/\1/p' | sort -u)
fi
for op in $ops; do
    log="$work/per-op/$op.log"
    for try in 1 2 3; do
        rc=0
        "$up/bin/test-backend-ops" test -b OURCPU -o "$op" > "$log" 2>&1 || rc=$?
        echo "rc=$rc" >> "$log"
        [ $rc -le 1 ] && break
    done
done

printf "%-24s %6s %6s %8s %8s %8s %s\n" OP OK FAIL ours-no up-no both-no exit
for op in $ops; do
    log="$work/per-op/$op.log"
    printf "%-24s %6d %6d %8d %8d %8d %s\n" "$op" \
        "$(strip_colors "$log" | grep -cE '\): OK( |$)')" \
        "$(strip_colors "$log" | grep -cE '\): FAIL( |$)')" \
        "$(strip_colors "$log" | grep -c 'not supported \[OURCPU\]')" \
        "$(strip_colors "$log" | grep -c 'not supported \[CPU\]')" \
        "$(strip_colors "$log" | grep -c 'not supported \[OURCPU, CPU\]')" \
        "$(tail -1 "$log")"
done | tee "$work/per-op/summary.txt"
awk '{ ok += $2; fail += $3; on += $4; un += $5; bn += $6 }
     END { printf "all ops: OK %d, FAIL %d; not supported: by ours only %d, by upstream'"'"'s CPU only %d, by both %d\n", ok, fail, on, un, bn }' \
    "$work/per-op/summary.txt"
echo "failing cases:"
for op in $ops; do
    strip_colors "$work/per-op/$op.log" | sed -n '/^Failing tests:/,$p' | grep -E '^  [A-Z_0-9]+\(' || true
done
