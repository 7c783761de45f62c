# ggml-ref: the reference evaluator as a static library (see CMakeLists.txt
# here), included by tools/test-backend-ops and by tests/ (for the tests of the
# CPU kernels), whichever comes first.

if (NOT TARGET ggml-ref)
    set(ref_dir ${CMAKE_CURRENT_LIST_DIR})
    add_library(ggml-ref STATIC
        ${ref_dir}/ref-eval-attn.c
        ${ref_dir}/ref-eval-conv.c
        ${ref_dir}/ref-eval-image.c
        ${ref_dir}/ref-eval-elementwise.c
        ${ref_dir}/ref-eval-train.c
        ${ref_dir}/ref-eval-layout.c
        ${ref_dir}/ref-eval-matmul.c
        ${ref_dir}/ref-eval-misc.c
        ${ref_dir}/ref-eval-ssm.c
        ${ref_dir}/ref-eval-reduce.c
        ${ref_dir}/ref-eval.c
        ${ref_dir}/ref-ops.c
        )
    target_compile_options(ggml-ref PRIVATE ${GGML_WARNING_FLAGS})
    target_include_directories(ggml-ref PUBLIC ${ref_dir} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(ggml-ref PUBLIC ggml-base m)
endif()
