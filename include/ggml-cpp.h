#pragma once

//
// ggml-cpp.h: owning smart pointers for the objects of the C API, for C++
// programs. Each *_ptr is a std::unique_ptr whose deleter calls the object's
// free function, so that a context, a buffer or a scheduler is released on
// every path out of a scope. Header only: nothing here is compiled into the
// libraries, and a C program must not include it.
//

#ifndef __cplusplus
#error "ggml-cpp.h is a C++ header; C programs use the free functions of the other headers"
#endif

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "gguf.h"

#include <memory>

// core: the tensor arena and GGUF files

struct ggml_context_deleter {
    void operator()(ggml_context * ctx) { ggml_free(ctx); }
};

struct gguf_context_deleter {
    void operator()(gguf_context * ctx) { gguf_free(ctx); }
};

typedef std::unique_ptr<ggml_context, ggml_context_deleter> ggml_context_ptr;
typedef std::unique_ptr<gguf_context, gguf_context_deleter> gguf_context_ptr;

// the graph allocator

struct ggml_gallocr_deleter {
    void operator()(ggml_gallocr_t galloc) { ggml_gallocr_free(galloc); }
};

typedef std::unique_ptr<ggml_gallocr, ggml_gallocr_deleter> ggml_gallocr_ptr;

// backends, their buffers and events, and the scheduler

struct ggml_backend_deleter {
    void operator()(ggml_backend_t backend) { ggml_backend_free(backend); }
};

struct ggml_backend_buffer_deleter {
    void operator()(ggml_backend_buffer_t buffer) { ggml_backend_buffer_free(buffer); }
};

struct ggml_backend_event_deleter {
    void operator()(ggml_backend_event_t event) { ggml_backend_event_free(event); }
};

struct ggml_backend_sched_deleter {
    void operator()(ggml_backend_sched_t sched) { ggml_backend_sched_free(sched); }
};

typedef std::unique_ptr<ggml_backend,        ggml_backend_deleter>        ggml_backend_ptr;
typedef std::unique_ptr<ggml_backend_buffer, ggml_backend_buffer_deleter> ggml_backend_buffer_ptr;
typedef std::unique_ptr<ggml_backend_event,  ggml_backend_event_deleter>  ggml_backend_event_ptr;
typedef std::unique_ptr<ggml_backend_sched,  ggml_backend_sched_deleter>  ggml_backend_sched_ptr;
