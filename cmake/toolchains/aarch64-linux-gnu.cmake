# Cross-compiling for arm64 Linux with Debian's gcc-aarch64-linux-gnu (and
# libc6-dev-arm64-cross); ctest runs the test programs under qemu-user:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# GGML_NATIVE is off (the build machine is not the target); the CPU backend
# picks the NEON extensions (dotprod, i8mm) at run time. Vulkan and BLAS are off.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(GGML_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER   ${GGML_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${GGML_CROSS_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${GGML_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/${GGML_CROSS_TRIPLE})

set(GGML_NATIVE OFF CACHE BOOL "" FORCE)
set(GGML_VULKAN OFF CACHE STRING "" FORCE)
set(GGML_BLAS   OFF CACHE BOOL "" FORCE)
