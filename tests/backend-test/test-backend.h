#pragma once

//
// test-backend.h: a configurable backend for tests.
//
// Each test_backend_reg_new() makes an independent registry entry with one
// device, its buffer type and its streams. The device's memory is either
// host memory or "device memory": tensor->data then holds addresses in a
// reserved, inaccessible (PROT_NONE) range while the bytes live in a private
// allocation, so that any code that dereferences tensor->data of such a
// buffer crashes instead of silently working. All access goes through the
// buffer interface, which translates addresses to offsets and checks them.
//
// The streams compute a small set of ops with naive code (views, ADD, MUL,
// SCALE, DUP/CONT/CPY of F32/F16, MUL_MAT, GET_ROWS, SET of F32); a node
// whose tensors lie in memory the device cannot reach (another device's, or
// host memory for a device with memory of its own) fails the computation
// with a message instead of being computed; supports_op can be
// narrowed further by op list, type mask and callback. Everything is
// synchronous: the async entry points, when enabled, run at once, and events
// are complete as soon as they are recorded. Counters record what the
// backend was asked to do, for tests such as "weights are not copied again".
//
// The entry point can also be built into a loadable module
// (test-backend-module.c): its registry entry then offers
// "test_backend_get_counters" and "test_backend_reset_counters" through
// ggml_backend_reg_get_proc_address.
//

#include "ggml-backend-impl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct test_backend_config {
    const char * name;               // registry entry, device and buffer type name (default "Test")
    const char * description;        // device description (default "test backend")
    enum ggml_backend_dev_type type; // device type reported
    bool     host_memory;            // host memory (is_host) instead of unreachable device memory
    size_t   alignment;              // buffer alignment, a power of two (0: 32)
    size_t   max_buffer_size;        // buffer type max size (0: none, get_max_size left NULL)
    size_t   alloc_padding;          // get_alloc_size adds this many bytes (0: get_alloc_size left NULL)
    size_t   memory_total;           // memory reported by the device (0: 1 GiB)
    bool     events;                 // the device and its streams have events
    bool     buffer_2d;              // buffers implement set_tensor_2d / get_tensor_2d
    bool     no_buffer_cpy;          // buffers leave cpy_tensor NULL (copies into them go through the host)
    bool     async;                  // streams implement the async entry points and cpy_tensor_async
    bool     fail_alloc;             // alloc_buffer fails (returns NULL)
    bool     fail_init_tensor;       // init_tensor fails (returns GGML_STATUS_FAILED)
    const enum ggml_op * ops;        // the ops supports_op may accept (NULL: all it can compute)
    size_t   n_ops;
    uint64_t types;                  // (1 << type) mask allowed for dst and sources (0: F32, F16, I32)
    bool  (*supports_op_extra)(const struct ggml_tensor * op, void * user_data); // further condition, or NULL
    void *   user_data;
    int64_t  offload_min_batch;      // offload_op is true for ops with ne[1] >= this (0: offload_op left NULL)
    bool     skip_compute;           // accept every op (within types, ops and the extra condition) and
                                     // compute nothing: for measuring the machinery around the backend
    // faults, for tests that conformance checks find them (tools/test-backend-ops)
    float    add_error;              // ADD results are off by this much, relative (0: exact)
    enum ggml_op fail_op;            // graph_compute fails on nodes of this op (GGML_OP_NONE: never)
};

// what the backend was asked to do
struct test_backend_counters {
    uint64_t n_buffers_alloc;   // buffers allocated (not counting empty dummies)
    uint64_t bytes_alloc;
    uint64_t n_init_tensor;
    uint64_t n_set;             // set_tensor calls (synchronous)
    uint64_t n_get;             // get_tensor calls (synchronous)
    uint64_t n_set_2d;          // set_tensor_2d calls
    uint64_t n_get_2d;          // get_tensor_2d calls
    uint64_t n_set_async;       // set_tensor_async and set_tensor_2d_async calls
    uint64_t n_get_async;       // get_tensor_async and get_tensor_2d_async calls
    uint64_t bytes_set;         // bytes written into buffers by any set
    uint64_t bytes_get;         // bytes read from buffers by any get
    uint64_t n_memset;
    uint64_t n_clear;
    uint64_t n_cpy_tensor;      // copies into this device's buffers done by the buffer itself
    uint64_t n_cpy_async;       // copies done by cpy_tensor_async
    uint64_t n_graph_computes;
    uint64_t n_nodes_computed;  // nodes computed (views and empty nodes not counted)
    uint64_t n_synchronize;
    uint64_t n_event_record;
    uint64_t n_event_wait;
    uint64_t n_event_synchronize;
};

ggml_backend_reg_t test_backend_reg_new(const struct test_backend_config * config);
// the entry must have been unregistered first (ggml_backend_unload), and
// its buffers and streams freed
void               test_backend_reg_free(ggml_backend_reg_t reg);

ggml_backend_dev_t test_backend_device(ggml_backend_reg_t reg);
bool               test_backend_is_test_device(ggml_backend_dev_t dev);

void test_backend_get_counters(ggml_backend_dev_t dev, struct test_backend_counters * counters);
void test_backend_reset_counters(ggml_backend_dev_t dev);

typedef void (*test_backend_get_counters_t)(ggml_backend_dev_t dev, struct test_backend_counters * counters);
typedef void (*test_backend_reset_counters_t)(ggml_backend_dev_t dev);

#ifdef __cplusplus
}
#endif
