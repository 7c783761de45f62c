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
# cross builds for arm64 and s390x (big-endian), their tests run under qemu-user:
# cmake/toolchains/aarch64-linux-gnu.cmake and s390x-linux-gnu.cmake
pkgs="$pkgs gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross"
pkgs="$pkgs gcc-s390x-linux-gnu g++-s390x-linux-gnu libc6-dev-s390x-cross qemu-user-static"
missing=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done

if [ -n "$missing" ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    echo "setup: installing$missing"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
echo "setup: all build dependencies present"
