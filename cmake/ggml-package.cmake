# Debian packages of the install, made by CPack from the install components:
#
#   cmake -S . -B build-deb -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_BLAS=ON \
#         -DGGML_BLAS_VENDOR=OpenBLAS -DCMAKE_INSTALL_PREFIX=/usr
#   cmake --build build-deb -j2 && (cd build-deb && cpack -G DEB)
#
# One package per install component (the COMPONENT of each install() rule):
#   runtime  libggml-c0       libggml, libggml-base, libggml-cpu (every x86-64 kernel
#                             level in a GGML_NATIVE=OFF build), libggml-vulkan (the
#                             Vulkan loader is opened at run time: libvulkan1 is a
#                             recommendation, not a dependency)
#   blas     libggml-c0-blas  the BLAS backend module (GGML_BACKEND_DL builds)
#   mpi      libggml-c0-mpi   the MPI backend module and ggml-mpi-worker
#   dev      libggml-c-dev    headers, the libraries' development links, ggml.pc and
#                             the CMake package (find_package(ggml))
#   tools    ggml-c-tools     ggml-run, ggml-quantize, test-backend-ops
# Dependencies on system libraries come from dpkg-shlibdeps (Debian: dpkg-dev);
# dependencies between the packages are exact versions. The files have upstream's
# names and sonames, so the packages conflict with Debian's own ggml packages.

set(CPACK_PACKAGE_NAME "ggml-c")
set(CPACK_PACKAGE_VENDOR "ggml-c")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
# no CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before every package's own
# description; the first line of each description below is that package's summary
set(CPACK_PACKAGE_CONTACT "ggml-c maintainers <ggml-c@localhost>")
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_DIRECTORY "${CMAKE_BINARY_DIR}/packages")

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/ggml-org/ggml")
# the libraries of the runtime package, for dpkg-shlibdeps of the packages that link them
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    "${CPACK_PACKAGE_DIRECTORY}/_CPack_Packages/Linux/DEB/${CPACK_PACKAGE_NAME}-${PROJECT_VERSION}-Linux/runtime/${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")

# only the components this build has files for
set(CPACK_COMPONENTS_ALL runtime dev)
if (GGML_BUILD_TOOLS)
    list(APPEND CPACK_COMPONENTS_ALL tools)
endif()
if (GGML_BLAS AND GGML_BACKEND_DL)
    list(APPEND CPACK_COMPONENTS_ALL blas)
endif()
if (GGML_MPI_ENABLED AND (GGML_BACKEND_DL OR GGML_BUILD_TOOLS))
    list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()

set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)
set(CPACK_COMPONENT_BLAS_DEPENDS runtime)
set(CPACK_COMPONENT_MPI_DEPENDS runtime)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "libggml-c0")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONFLICTS "libggml0, libggml-base0, libggml0-backend-cpu, libggml0-backend-vulkan")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_REPLACES "${CPACK_DEBIAN_RUNTIME_PACKAGE_CONFLICTS}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "libvulkan1")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "libggml-c0-blas, libggml-c0-mpi, mesa-vulkan-drivers")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "ggml tensor runtime, in C11: core, registry, CPU and Vulkan backends\nThe ggml backend system (buffers, backends, devices, registry, graph allocator,\nmulti-backend scheduler) with its CPU backend, every x86-64 kernel level chosen\nat run time, and a Vulkan backend. Source-compatible with ggml's C API.")

set(CPACK_DEBIAN_BLAS_PACKAGE_NAME "libggml-c0-blas")
set(CPACK_DEBIAN_BLAS_PACKAGE_CONFLICTS "libggml0-backend-blas")
set(CPACK_DEBIAN_BLAS_DESCRIPTION
    "ggml tensor runtime, in C11: BLAS backend module\nLarge matrix products through the system's BLAS library, loaded by\nggml_backend_load_all().")

set(CPACK_DEBIAN_MPI_PACKAGE_NAME "libggml-c0-mpi")
set(CPACK_DEBIAN_MPI_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_DEBIAN_MPI_DESCRIPTION
    "ggml tensor runtime, in C11: MPI backend\nThe devices of the other ranks of an MPI job as ggml devices, and\nggml-mpi-worker, which serves them.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME "libggml-c-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION "libdevel")
set(CPACK_DEBIAN_DEV_PACKAGE_CONFLICTS "libggml-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_REPLACES "libggml-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "ggml tensor runtime, in C11: development files\nHeaders (ggml.h, ggml-backend.h, ggml-backend-impl.h, gguf.h, ...), ggml.pc\nand the CMake package: find_package(ggml) finds it with no prefix.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME "ggml-c-tools")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION
    "ggml tensor runtime, in C11: tools\nggml-run (runs GGUF language models), ggml-quantize and test-backend-ops.")

include(CPack)
