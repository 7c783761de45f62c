// test-noinit.c: a shared library named like a backend module that has no
// ggml_backend_init; the registry must refuse it without crashing.

__attribute__((visibility("default"))) int test_noinit_answer(void);

int test_noinit_answer(void) {
    return 42;
}
