// The public headers compile as C++17 together, and their C linkage lets a
// C++ program name the API.
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-blas.h"
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
    const bool ok = ggml_nbytes(t) == 16 && ggml_fp16_to_fp32(ggml_fp32_to_fp16(1.5f)) == 1.5f;
    ggml_free(ctx);
    return ok ? 0 : 1;
}
