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
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
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
exec "$up/bin/test-backend-ops" "${MODE:-test}" -b OURCPU "$@"
