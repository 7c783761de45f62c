#!/usr/bin/env bash
# Installs the Debian packages that building and testing need (run once on a
# new machine; a no-op when everything is present).
set -euo pipefail

pkgs="cmake make gcc g++ pkg-config"
# the GGUF fuzz target: clang with libFuzzer and the sanitizer runtimes
pkgs="$pkgs clang libclang-rt-14-dev"
# libopenblas-dev and libblis-dev: the BLAS backend (-DGGML_BLAS=ON), which CI
# builds against both
pkgs="$pkgs libopenblas-dev libblis-dev"
# libvulkan-dev, glslc: build the Vulkan backend; mesa-vulkan-drivers: lavapipe, a
# Vulkan driver on the CPU, so that the Vulkan tests run on machines without a GPU
pkgs="$pkgs libvulkan-dev glslc mesa-vulkan-drivers"
# libopenmpi-dev, openmpi-bin: the MPI backend (devices of other ranks) and mpirun for its tests
pkgs="$pkgs libopenmpi-dev openmpi-bin"
# cross builds for arm64 and s390x (big-endian), their tests run under qemu-user:
# cmake/toolchains/aarch64-linux-gnu.cmake and s390x-linux-gnu.cmake
pkgs="$pkgs gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross"
pkgs="$pkgs gcc-s390x-linux-gnu g++-s390x-linux-gnu libc6-dev-s390x-cross qemu-user-static"
# dpkg-dev: dpkg-shlibdeps, which the Debian packages (cpack -G DEB) take their dependencies from
pkgs="$pkgs dpkg-dev"
missing=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
# node and npm: the tokenizer test (test-tokenizer-npm) runs the npm tokenizer
# packages under node (any node >= 18; a node from elsewhere is fine)
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"

if [ -n "$missing" ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    echo "setup: installing$missing"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# the npm tokenizer packages that test-tokenizer-npm compares ggml-run's
# tokenizers with, into build-deps/npm (ignored by git), at fixed versions
npm_dir="$(cd "$(dirname "$0")/.." && pwd)/build-deps/npm"
npm_pkgs="gpt-3-encoder@1.1.4 llama3-tokenizer-js@1.2.0 llama-tokenizer-js@1.2.2"
npm_missing=""
for p in $npm_pkgs; do
    name="${p%@*}" version="${p##*@}"
    grep -qs "\"version\": \"$version\"" "$npm_dir/node_modules/$name/package.json" || npm_missing="$npm_missing $p"
done
if [ -n "$npm_missing" ]; then
    echo "setup: installing npm packages$npm_missing into $npm_dir"
    mkdir -p "$npm_dir"
    npm install --prefix "$npm_dir" --no-audit --no-fund --silent $npm_pkgs
fi
echo "setup: all build dependencies present"
