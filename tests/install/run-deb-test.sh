#!/usr/bin/env bash
# Makes the Debian packages of a build configured for them (cmake/ggml-package.cmake:
# CMAKE_INSTALL_PREFIX=/usr, GGML_BACKEND_DL=ON, GGML_BLAS=ON), then checks them
# without installing anything over the system:
#   - each package's name, version, dependencies and the files it must hold;
#   - the packages extracted with dpkg-deb into a temporary root: programs built
#     against the files they hold with pkg-config and with find_package(ggml), run
#     there; ggml_backend_load_all() finds the BLAS and MPI modules beside libggml.
#   usage: run-deb-test.sh <build dir> [source dir, default: this checkout]
set -euo pipefail
build=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "run-deb-test: $*" >&2; exit 1; }

rm -rf "$build/packages"
(cd "$build" && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
multiarch=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
[ -n "$version" ] && [ -n "$multiarch" ] || fail "no version or library directory in $build/CMakeCache.txt"

echo "== packages"
declare -A deb
for f in "$build"/packages/*.deb; do
    name=$(dpkg-deb -f "$f" Package)
    deb[$name]=$f
    printf '%-18s %-8s %6s KiB  Depends: %s\n' "$name" "$(dpkg-deb -f "$f" Version)" \
        "$(( $(stat -c %s "$f") / 1024 ))" "$(dpkg-deb -f "$f" Depends)"
done

has() { # package file-regex: the package holds a path matching it
    dpkg-deb -c "${deb[$1]}" | awk '{print $6}' | grep -q -E "$2" || fail "$1 holds no file matching '$2'"
}
depends_on() { # package regex: its Depends field matches
    dpkg-deb -f "${deb[$1]}" Depends | grep -q -E "$2" || fail "$1 does not depend on '$2': $(dpkg-deb -f "${deb[$1]}" Depends)"
}
lacks() { # package file-regex: the package holds no path matching it
    if dpkg-deb -c "${deb[$1]}" | awk '{print $6}' | grep -q -E "$2"; then fail "$1 holds a file matching '$2'"; fi
}

for p in libggml-c0 libggml-c-dev libggml-c0-blas; do
    [ -n "${deb[$p]:-}" ] || fail "no package $p"
    [ "$(dpkg-deb -f "${deb[$p]}" Version)" = "$version" ] || fail "$p is not version $version"
done

echo "== contents and dependencies"
lib="^\./usr/$multiarch"
for l in ggml ggml-base ggml-cpu; do
    has libggml-c0 "$lib/lib$l\.so\.0$"
    lacks libggml-c0 "$lib/lib$l\.so$"
    has libggml-c-dev "$lib/lib$l\.so$"
done
lacks libggml-c0 '^\./usr/include/'
depends_on libggml-c0 'libc6'
has libggml-c-dev '^\./usr/include/ggml\.h$'
has libggml-c-dev '^\./usr/include/ggml-backend-impl\.h$'
has libggml-c-dev "$lib/pkgconfig/ggml\.pc$"
has libggml-c-dev "$lib/cmake/ggml/ggml-config\.cmake$"
depends_on libggml-c-dev "libggml-c0 \(= $version\)"
has libggml-c0-blas "$lib/libggml-blas\.so$"
depends_on libggml-c0-blas "libggml-c0 \(= $version\)"
depends_on libggml-c0-blas 'libopenblas|libblas|libblis'
if [ -n "${deb[libggml-c0-mpi]:-}" ]; then
    has libggml-c0-mpi "$lib/libggml-mpi\.so$"
    has libggml-c0-mpi '^\./usr/bin/ggml-mpi-worker$'
    depends_on libggml-c0-mpi 'libopenmpi|libmpich'
fi
if [ -n "${deb[ggml-c-tools]:-}" ]; then
    has ggml-c-tools '^\./usr/bin/ggml-run$'
    depends_on ggml-c-tools "libggml-c0 \(= $version\)"
fi

echo "== extracted with dpkg-deb, programs built against them"
root="$work/root"
for f in "${deb[@]}"; do dpkg-deb -x "$f" "$root"; done
libdir="$root/usr/$multiarch"
export LD_LIBRARY_PATH="$libdir"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion ggml)" = "$version" ] || fail "ggml.pc is not version $version"
for prog in app upstream-style; do
    cc -std=c11 -Wall -Wextra -Werror -o "$work/$prog-pc" "$src/tests/install/$prog.c" \
        $(pkg-config --cflags --libs ggml) -lm
    "$work/$prog-pc"
done
cmake -S "$src/tests/install" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/app-cmake"

# the modules are found beside libggml, where the packages put them
cat > "$work/modules.c" <<'END'
#include "ggml-backend.h"
#include <stdio.h>
#include <string.h>
int main(int argc, char ** argv) {
    ggml_backend_load_all();
    for (int i = 1; i < argc; i++) {
        if (ggml_backend_reg_by_name(argv[i]) == NULL) {
            fprintf(stderr, "no registry entry %s after ggml_backend_load_all()\n", argv[i]);
            return 1;
        }
    }
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        printf("registry: %s\n", ggml_backend_reg_name(ggml_backend_reg_get(i)));
    }
    return 0;
}
END
cc -std=c11 -Wall -Wextra -Werror -o "$work/modules" "$work/modules.c" $(pkg-config --cflags --libs ggml)
regs="CPU BLAS"
if [ -n "${deb[libggml-c0-mpi]:-}" ]; then regs="$regs MPI"; fi
"$work/modules" $regs

if [ -n "${deb[ggml-c-tools]:-}" ]; then
    "$root/usr/bin/ggml-run" --size tiny -pp 8 -tg 4 -t 2 --no-progress -dev none
fi

echo "package test passed"
