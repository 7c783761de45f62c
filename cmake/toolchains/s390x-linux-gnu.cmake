# Cross-compiling for s390x (IBM Z, big-endian) Linux with Debian's gcc-s390x-linux-gnu (and
# libc6-dev-s390x-cross); ctest runs the test programs under qemu-user:
#   cmake -S . -B build-s390x -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/s390x-linux-gnu.cmake
# GGML_NATIVE is off (the build machine is not the target): the CPU backend
# runs its portable C kernels. Vulkan and BLAS are off.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(GGML_CROSS_TRIPLE s390x-linux-gnu)

set(CMAKE_C_COMPILER   ${GGML_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${GGML_CROSS_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${GGML_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x-static -L /usr/${GGML_CROSS_TRIPLE})

set(GGML_NATIVE OFF CACHE BOOL "" FORCE)
set(GGML_VULKAN OFF CACHE STRING "" FORCE)
set(GGML_BLAS   OFF CACHE BOOL "" FORCE)

# In ISO C mode (-std=c11) gcc on s390x evaluates float expressions in double
# (FLT_EVAL_METHOD 1, for an old ABI), which -Wdouble-promotion flags everywhere
# and which rounds differently from every other target; the hardware computes in
# binary32, and "fast" excess precision lets gcc use it as on x86-64 and arm64.
set(CMAKE_C_FLAGS_INIT "-fexcess-precision=fast")
set(CMAKE_CXX_FLAGS_INIT "-fexcess-precision=fast")
