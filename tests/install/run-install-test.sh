#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs small
# programs against the installed headers and libraries twice: once with
# pkg-config and a plain compiler call, once with find_package(ggml).
#   usage: run-install-test.sh <source dir> <build dir>
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -n1)
libdir=${libdir%/}

echo "== headers installed"
for h in ggml.h ggml-alloc.h ggml-backend.h ggml-backend-impl.h ggml-cpu.h ggml-blas.h gguf.h; do
    test -f "$work/prefix/include/$h" || { echo "missing include/$h"; exit 1; }
done
test -f "$libdir/pkgconfig/ggml.pc"
test -f "$libdir/cmake/ggml/ggml-config.cmake"

echo "== pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# static libraries: their own dependencies (Libs.private: BLAS, MPI) come with --static
pc_static=""
if [ -f "$libdir/libggml.a" ]; then pc_static="--static"; fi
for prog in app upstream-style; do
    cc -std=c11 -Wall -Wextra -Werror -o "$work/$prog-pc" "$src/tests/install/$prog.c" \
        $(pkg-config $pc_static --cflags --libs ggml) -Wl,-rpath,"$libdir" -lm
    "$work/$prog-pc"
done

if ls "$libdir"/libggml-blas.* >/dev/null 2>&1; then
    # built in (ggml.pc links it): ggml-blas.h's functions; a module: the registry only
    echo "== BLAS backend (ggml-blas.h, pkg-config)"
    direct=""
    if pkg-config --libs ggml | grep -q -- -lggml-blas; then direct="-DDIRECT"; fi
    cat > "$work/blas-app.c" <<'END'
#include "ggml-blas.h"
#include <stdio.h>
int main(void) {
    ggml_backend_load_all();
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("BLAS");
    ggml_backend_t b = dev != NULL ? ggml_backend_dev_init(dev, NULL) : NULL;
    if (b == NULL) {
        return 1;
    }
#ifdef DIRECT
    if (!ggml_backend_is_blas(b)) {
        return 1;
    }
    ggml_backend_blas_set_n_threads(b, 2);
#endif
    printf("BLAS backend on %s\n", ggml_backend_dev_description(dev));
    ggml_backend_free(b);
    return 0;
}
END
    cc -std=c11 -Wall -Wextra -Werror $direct -o "$work/blas-app" "$work/blas-app.c" \
        $(pkg-config $pc_static --cflags --libs ggml) -Wl,-rpath,"$libdir" -lm
    "$work/blas-app"
fi

echo "== find_package"
cmake -S "$src/tests/install" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/app-cmake"
"$work/consumer/upstream-style-cmake"

if ls "$libdir"/libggml-base.so* >/dev/null 2>&1; then
    echo "== out-of-tree backend module"
    cmake -S "$src/tests/install/ext-backend" -B "$work/ext" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
    cmake --build "$work/ext" >/dev/null
    "$work/ext/ext-app" "$work/ext/libggml-ext.so"
else
    # a module and the program must share one libggml-base (as upstream,
    # loadable backends need the shared libraries)
    echo "== out-of-tree backend module: skipped (static libraries)"
fi

if [ -x "$work/prefix/bin/ggml-run" ]; then
    echo "== installed programs"
    "$work/prefix/bin/ggml-run" --size tiny -pp 8 -tg 4 -t 2 --no-progress
    test -x "$work/prefix/bin/ggml-quantize"
fi
if [ -x "$work/prefix/bin/test-backend-ops" ]; then
    echo "== installed test-backend-ops"
    "$work/prefix/bin/test-backend-ops" test -o SCALE >/dev/null
fi

echo "install test passed"
