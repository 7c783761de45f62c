// vk-impl.h: what the files of the Vulkan backend share.
//
//   vk-loader.c    opens the Vulkan loader at run time and fills ggml_vk_fn,
//                  the table of Vulkan entry points (no link-time dependency)
//   ggml-vulkan.c  the registry entry, the devices, the public API
//   vk-device.c    a device's logical device, memory, pipelines, and the
//                  synchronous transfers of its buffers
//   vk-buffer.c    the buffer types: device memory and pinned host memory
//   vk-stream.c    the backend (a stream): command buffers recorded and
//                  submitted in batches, asynchronous copies, events
//   vk-ops.c       which ops the device runs (supports_op) and
//   vk-ops-record.c how each is recorded (push constants and workgroups)
//   vk-ops-train.c  both for the training ops (backward ops, loss, optimizer steps)
//
// Lifetimes. The instance, the physical devices and their ggml device
// objects live until the process ends (like every registry entry). A
// device's VkDevice is made on first use, under the device's mutex;
// pipelines are made on first use too. Streams, buffers and events belong
// to their callers.

#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "ggml-vulkan.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"
#include "vk-shaders.h"

#include <pthread.h>

//
// entry points (vk-loader.c)
//

#define GGML_VK_INSTANCE_FUNCS(X) \
    X(vkDestroyInstance) \
    X(vkEnumeratePhysicalDevices) \
    X(vkGetPhysicalDeviceProperties) \
    X(vkGetPhysicalDeviceProperties2) \
    X(vkGetPhysicalDeviceFeatures2) \
    X(vkGetPhysicalDeviceMemoryProperties) \
    X(vkGetPhysicalDeviceMemoryProperties2) \
    X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkEnumerateDeviceExtensionProperties) \
    X(vkCreateDevice) \
    X(vkGetDeviceProcAddr)

#define GGML_VK_DEVICE_FUNCS(X) \
    X(vkDestroyDevice) \
    X(vkGetDeviceQueue) \
    X(vkDeviceWaitIdle) \
    X(vkCreateBuffer) \
    X(vkDestroyBuffer) \
    X(vkGetBufferMemoryRequirements) \
    X(vkAllocateMemory) \
    X(vkFreeMemory) \
    X(vkBindBufferMemory) \
    X(vkMapMemory) \
    X(vkUnmapMemory) \
    X(vkCreateCommandPool) \
    X(vkDestroyCommandPool) \
    X(vkAllocateCommandBuffers) \
    X(vkFreeCommandBuffers) \
    X(vkResetCommandBuffer) \
    X(vkBeginCommandBuffer) \
    X(vkEndCommandBuffer) \
    X(vkCmdCopyBuffer) \
    X(vkCmdFillBuffer) \
    X(vkCmdPipelineBarrier) \
    X(vkCmdBindPipeline) \
    X(vkCmdBindDescriptorSets) \
    X(vkCmdPushConstants) \
    X(vkCmdDispatch) \
    X(vkQueueSubmit) \
    X(vkCreateFence) \
    X(vkDestroyFence) \
    X(vkWaitForFences) \
    X(vkResetFences) \
    X(vkCreateSemaphore) \
    X(vkDestroySemaphore) \
    X(vkWaitSemaphores) \
    X(vkGetSemaphoreCounterValue) \
    X(vkCreateShaderModule) \
    X(vkDestroyShaderModule) \
    X(vkCreateDescriptorSetLayout) \
    X(vkDestroyDescriptorSetLayout) \
    X(vkCreatePipelineLayout) \
    X(vkDestroyPipelineLayout) \
    X(vkCreateComputePipelines) \
    X(vkDestroyPipeline) \
    X(vkCreateDescriptorPool) \
    X(vkDestroyDescriptorPool) \
    X(vkResetDescriptorPool) \
    X(vkAllocateDescriptorSets) \
    X(vkUpdateDescriptorSets)

struct ggml_vk_functions {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    PFN_vkCreateInstance      vkCreateInstance;
    PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion;
#define GGML_VK_DECLARE_FN(name) PFN_##name name;
    GGML_VK_INSTANCE_FUNCS(GGML_VK_DECLARE_FN)
    GGML_VK_DEVICE_FUNCS(GGML_VK_DECLARE_FN)
#undef GGML_VK_DECLARE_FN
};

// Filled once by ggml_vk_instance(); read-only afterwards.
extern struct ggml_vk_functions ggml_vk_fn;

// The process's Vulkan instance (made once; VK_NULL_HANDLE, with one log line
// saying why, when there is no loader or no usable driver).
VkInstance ggml_vk_instance(void);

//
// memory (vk-device.c)
//

// A VkBuffer with its own memory; mapped when host-visible.
struct ggml_vk_mem {
    VkBuffer       buffer;
    VkDeviceMemory memory;
    void *         mapped;
    size_t         size;
};

//
// device (vk-device.c, ggml-vulkan.c)
//

#define GGML_VK_MAX_BINDINGS 6      // src0..src4, dst (binding 5)
#define GGML_VK_PUSH_CONSTANTS 128  // bytes, the minimum every device has

struct ggml_vk_device {
    int  index;                  // in the registry
    char name[16];               // "Vulkan0"
    char description[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];

    VkPhysicalDevice                 physical;
    VkPhysicalDeviceProperties       props;
    VkPhysicalDeviceMemoryProperties mem_props;
    bool     has_memory_budget;
    uint32_t queue_family;
    size_t   max_buffer_size;    // largest buffer: allocation limit and storage-buffer range
    size_t   min_align;          // minStorageBufferOffsetAlignment

    pthread_mutex_t mutex;       // guards the lazily made objects below
    bool     ready;              // the logical device exists
    bool     failed;             // making it failed (logged once)
    VkDevice device;
    VkQueue  queue;
    pthread_mutex_t queue_mutex; // vkQueueSubmit needs the queue to itself
    uint32_t mem_type_device;    // memory type of device buffers
    bool     device_mem_mapped;  // device buffers are host-visible and used mapped (UMA, lavapipe)
    uint32_t mem_type_host;      // memory type of pinned host buffers
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout      pipeline_layout;
    VkPipeline            pipelines[GGML_VK_PIPE_COUNT];

    // synchronous transfers of buffer data (guarded by xfer_mutex)
    pthread_mutex_t xfer_mutex;
    VkCommandPool   xfer_pool;
    VkCommandBuffer xfer_cmd;
    VkFence         xfer_fence;
    struct ggml_vk_mem xfer_staging;

    // pinned host buffers made on this device, so that asynchronous copies
    // from and to them need no staging (guarded by pinned_mutex)
    pthread_mutex_t               pinned_mutex;
    const struct ggml_vk_mem   ** pinned;
    size_t                        n_pinned, cap_pinned;

    struct ggml_backend_buffer_type buft;
    struct ggml_backend_device      dev;
};

// make the logical device on first use; false (logged) when that fails
bool ggml_vk_device_ready(struct ggml_vk_device * d);

// a buffer of size bytes; host: pinned host memory, else device memory
bool ggml_vk_mem_alloc(struct ggml_vk_device * d, size_t size, bool host, struct ggml_vk_mem * mem);
void ggml_vk_mem_free (struct ggml_vk_device * d, struct ggml_vk_mem * mem);

// the pipeline of a shader variant, made on first use (VK_NULL_HANDLE, logged, on failure)
VkPipeline ggml_vk_pipeline(struct ggml_vk_device * d, enum ggml_vk_pipe pipe);

// synchronous copies between host memory and a device buffer
void ggml_vk_write(struct ggml_vk_device * d, const struct ggml_vk_mem * mem, size_t offset, const void * src, size_t size);
void ggml_vk_read (struct ggml_vk_device * d, const struct ggml_vk_mem * mem, size_t offset, void * dst, size_t size);
void ggml_vk_fill (struct ggml_vk_device * d, const struct ggml_vk_mem * mem, size_t offset, uint8_t value, size_t size);
void ggml_vk_copy (struct ggml_vk_device * d, const struct ggml_vk_mem * src, size_t src_offset, const struct ggml_vk_mem * dst, size_t dst_offset, size_t size);

// one command buffer's barrier making earlier transfers and dispatches visible to later ones
void ggml_vk_cmd_barrier(VkCommandBuffer cmd);

// the registry's device objects (ggml-vulkan.c)
struct ggml_vk_device * ggml_vk_device_get(size_t index); // NULL when out of range
size_t                  ggml_vk_device_count(void);

//
// buffers (vk-buffer.c)
//

void ggml_vk_buft_init(struct ggml_vk_device * d);          // d->buft
bool ggml_vk_buft_is_device(ggml_backend_buffer_type_t buft); // a device buffer type of this backend
bool ggml_vk_buffer_is_device(ggml_backend_buffer_t buffer);
ggml_backend_buffer_type_t ggml_vk_host_buft(void);

// the pinned host buffer of device d holding [ptr, ptr + size), and the offset there
bool ggml_vk_pinned_find(struct ggml_vk_device * d, const void * ptr, size_t size, VkBuffer * buffer, size_t * offset);

// where a tensor's data lies: the device buffer and byte offset (false if not in a device buffer)
bool ggml_vk_tensor_mem(const struct ggml_tensor * t, const struct ggml_vk_mem ** mem, size_t * offset);
struct ggml_vk_device * ggml_vk_buffer_device(ggml_backend_buffer_t buffer);

//
// streams (vk-stream.c)
//

struct ggml_vk_stream;

ggml_backend_t ggml_vk_stream_new(struct ggml_vk_device * d);

// record a dispatch: srcs (NULL where unused) in bindings 0..4, dst in 5
bool ggml_vk_dispatch(struct ggml_vk_stream * s, enum ggml_vk_pipe pipe,
                      const struct ggml_tensor * const srcs[GGML_VK_MAX_BINDINGS - 1], const struct ggml_tensor * dst,
                      const void * push, size_t push_size, uint32_t n_groups);
// the offset of t's data from its binding's start, in units of elem_size bytes
uint32_t ggml_vk_misalign(const struct ggml_vk_stream * s, const struct ggml_tensor * t, size_t elem_size);
// a copy of bytes between two device tensors' data, recorded on the stream
bool ggml_vk_record_copy(struct ggml_vk_stream * s, const struct ggml_tensor * src, const struct ggml_tensor * dst, size_t size);

// events (device-level functions)
ggml_backend_event_t ggml_vk_event_new(ggml_backend_dev_t dev);
void ggml_vk_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event);
void ggml_vk_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event);

//
// ops (vk-ops.c, vk-ops-record.c)
//

// What the device does with one op, as the CPU's struct ggml_cpu_op_impl: the
// two members sit side by side in one table entry, so that what supports_op
// answers and what can be recorded cannot drift apart.
struct ggml_vk_op_impl {
    // whether the device computes this node: its types, shapes and op
    // parameters (layout_ok of vk-ops.c is checked for every op besides)
    bool (*supports)(const struct ggml_tensor * op);
    // records node's dispatches on s; false (logged) on failure
    bool (*record)(struct ggml_vk_stream * s, struct ggml_tensor * node);
};

// the entry of op, NULL when the device has no kernel for it: the ops of
// vk-ops-record.c (the element-wise lists of ggml-op-list.h among them), then
// the training ops of vk-ops-train.c (ggml_vk_train_op_impl)
const struct ggml_vk_op_impl * ggml_vk_op_impl_of(enum ggml_op op);
const struct ggml_vk_op_impl * ggml_vk_train_op_impl(enum ggml_op op);

bool ggml_vk_supports_op(const struct ggml_vk_device * d, const struct ggml_tensor * op);
// record one node; false (logged) when it cannot be
bool ggml_vk_record_node(struct ggml_vk_stream * s, struct ggml_tensor * node);
