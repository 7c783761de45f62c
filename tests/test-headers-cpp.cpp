// The public headers compile as C++17 together, and their C linkage lets a
// C++ program name the API; ggml-cpp.h's smart pointers free what they own.
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-blas.h"
#include "ggml-cpp.h"
#include "gguf.h"

#include <type_traits>

static_assert(sizeof(ggml_fp16_t) == 2, "fp16 is two bytes");
static_assert(GGML_TYPE_COUNT == 43, "ggml_type values follow upstream");
static_assert(std::is_standard_layout<ggml_tensor>::value, "tensor is a C struct");

int main() {
    // calls through the C linkage of the headers
    ggml_init_params params = { 1024 * 1024, nullptr, false };
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 8);
    bool ok = ggml_nbytes(t) == 16 && ggml_fp16_to_fp32(ggml_fp32_to_fp16(1.5f)) == 1.5f;
    ggml_free(ctx);

    // the owning pointers: each frees its object when it goes out of scope
    // (the sanitizer builds would report a leak otherwise)
    {
        ggml_context_ptr owned(ggml_init(params));
        ok = ok && owned != nullptr && ggml_new_tensor_1d(owned.get(), GGML_TYPE_F32, 4) != nullptr;
        gguf_context_ptr gguf(gguf_init_empty());
        ok = ok && gguf != nullptr && gguf_get_n_tensors(gguf.get()) == 0;
        ggml_backend_buffer_ptr buf(ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 256));
        ok = ok && buf != nullptr && ggml_backend_buffer_get_size(buf.get()) >= 256;
        ggml_gallocr_ptr galloc(ggml_gallocr_new(ggml_backend_cpu_buffer_type()));
        ok = ok && galloc != nullptr;
        ggml_backend_ptr null_backend;
        ggml_backend_event_ptr null_event;
        ggml_backend_sched_ptr null_sched;
        ok = ok && !null_backend && !null_event && !null_sched;
    }
    return ok ? 0 : 1;
}
