// vk-device.c: a Vulkan device's logical device, memory, pipelines and the
// synchronous transfers of its buffers.
//
// The logical device is made on the first stream or buffer of the device.
// It has one compute queue, shared by every stream of the device (submits
// are serialised by queue_mutex), a descriptor-set layout of six storage
// buffers (src0..src4 and dst) and one pipeline layout with 128 bytes of
// push constants that every shader uses. Pipelines are compiled on first use.
//
// Memory. Device buffers take a DEVICE_LOCAL memory type. On a device whose
// memory is the host's (an integrated GPU, a CPU driver) that type is
// normally host-visible and coherent too: such buffers are mapped and read
// and written with memcpy. Otherwise data goes through a staging buffer
// (HOST_VISIBLE | HOST_COHERENT) and a copy command, synchronously, in
// chunks of at most GGML_VK_STAGING_SIZE. GGML_VK_NO_MAPPED_DEVICE_MEMORY=1
// turns the mapping off, so that the staging paths run on any device.

#include "vk-impl.h"

#define GGML_VK_STAGING_SIZE ((size_t) 16 << 20)

static bool vk_check(VkResult r, const char * what) {
    if (r != VK_SUCCESS) {
        GGML_LOG_ERROR("ggml_vulkan: %s failed (VkResult %d)\n", what, (int) r);
        return false;
    }
    return true;
}

// a memory type allowed by type_bits with all of want (and, preferably, all of prefer)
static int find_memory_type(const struct ggml_vk_device * d, uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
    int fallback = -1;
    for (uint32_t i = 0; i < d->mem_props.memoryTypeCount; i++) {
        const VkMemoryPropertyFlags f = d->mem_props.memoryTypes[i].propertyFlags;
        if (!(type_bits & (1u << i)) || (f & want) != want) {
            continue;
        }
        if ((f & prefer) == prefer) {
            return (int) i;
        }
        if (fallback < 0) {
            fallback = (int) i;
        }
    }
    return fallback;
}

static const VkBufferUsageFlags k_buffer_usage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// the memory types of the two kinds of buffer, from a probe buffer's requirements
static bool choose_memory_types(struct ggml_vk_device * d) {
    const VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 4096, .usage = k_buffer_usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkBuffer probe;
    if (!vk_check(ggml_vk_fn.vkCreateBuffer(d->device, &info, NULL, &probe), "vkCreateBuffer")) {
        return false;
    }
    VkMemoryRequirements req;
    ggml_vk_fn.vkGetBufferMemoryRequirements(d->device, probe, &req);
    ggml_vk_fn.vkDestroyBuffer(d->device, probe, NULL);

    const VkMemoryPropertyFlags host_coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const bool uma = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    // GGML_VK_NO_MAPPED_DEVICE_MEMORY=1: device buffers go through staging even
    // where they could be mapped (to test those paths on such devices)
    const char * no_map = getenv("GGML_VK_NO_MAPPED_DEVICE_MEMORY");
    int dev_type = -1;
    if (uma && (no_map == NULL || strcmp(no_map, "1") != 0)) {
        dev_type = find_memory_type(d, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host_coherent, 0);
    }
    d->device_mem_mapped = dev_type >= 0;
    if (dev_type < 0) {
        dev_type = find_memory_type(d, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    }
    if (dev_type < 0) {
        dev_type = find_memory_type(d, req.memoryTypeBits, 0, 0);
    }
    const int host_type = find_memory_type(d, req.memoryTypeBits, host_coherent, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (dev_type < 0 || host_type < 0) {
        GGML_LOG_ERROR("ggml_vulkan: %s: no suitable memory type for buffers\n", d->name);
        return false;
    }
    d->mem_type_device = (uint32_t) dev_type;
    d->mem_type_host   = (uint32_t) host_type;
    return true;
}

static bool create_layouts(struct ggml_vk_device * d) {
    VkDescriptorSetLayoutBinding bindings[GGML_VK_MAX_BINDINGS];
    for (uint32_t i = 0; i < GGML_VK_MAX_BINDINGS; i++) {
        bindings[i] = (VkDescriptorSetLayoutBinding) {
            .binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    const VkDescriptorSetLayoutCreateInfo set_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = GGML_VK_MAX_BINDINGS, .pBindings = bindings,
    };
    if (!vk_check(ggml_vk_fn.vkCreateDescriptorSetLayout(d->device, &set_info, NULL, &d->set_layout), "vkCreateDescriptorSetLayout")) {
        return false;
    }
    const VkPushConstantRange range = { .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = GGML_VK_PUSH_CONSTANTS };
    const VkPipelineLayoutCreateInfo pl_info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1, .pSetLayouts = &d->set_layout,
        .pushConstantRangeCount = 1, .pPushConstantRanges = &range,
    };
    return vk_check(ggml_vk_fn.vkCreatePipelineLayout(d->device, &pl_info, NULL, &d->pipeline_layout), "vkCreatePipelineLayout");
}

static bool create_xfer(struct ggml_vk_device * d) {
    const VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = d->queue_family,
    };
    if (!vk_check(ggml_vk_fn.vkCreateCommandPool(d->device, &pool_info, NULL, &d->xfer_pool), "vkCreateCommandPool")) {
        return false;
    }
    const VkCommandBufferAllocateInfo cb_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d->xfer_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1,
    };
    const VkFenceCreateInfo fence_info = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    return vk_check(ggml_vk_fn.vkAllocateCommandBuffers(d->device, &cb_info, &d->xfer_cmd), "vkAllocateCommandBuffers") &&
           vk_check(ggml_vk_fn.vkCreateFence(d->device, &fence_info, NULL, &d->xfer_fence), "vkCreateFence");
}

static bool create_logical_device(struct ggml_vk_device * d) {
    const float priority = 1.0f;
    const VkDeviceQueueCreateInfo queue_info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = d->queue_family, .queueCount = 1, .pQueuePriorities = &priority,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .storageBuffer8BitAccess = VK_TRUE, .timelineSemaphore = VK_TRUE,
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12,
        .storageBuffer16BitAccess = VK_TRUE,
    };
    const char * extensions[1];
    uint32_t n_ext = 0;
    if (d->has_memory_budget) {
        extensions[n_ext++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    }
    const VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f11,
        .queueCreateInfoCount = 1, .pQueueCreateInfos = &queue_info,
        .enabledExtensionCount = n_ext, .ppEnabledExtensionNames = extensions,
    };
    if (!vk_check(ggml_vk_fn.vkCreateDevice(d->physical, &info, NULL, &d->device), "vkCreateDevice")) {
        return false;
    }
    ggml_vk_fn.vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
    return choose_memory_types(d) && create_layouts(d) && create_xfer(d);
}

bool ggml_vk_device_ready(struct ggml_vk_device * d) {
    pthread_mutex_lock(&d->mutex);
    if (!d->ready && !d->failed) {
        if (create_logical_device(d)) {
            d->ready = true;
            GGML_LOG_DEBUG("ggml_vulkan: %s: %s, buffers up to %zu bytes%s\n", d->name, d->description, d->max_buffer_size,
                           d->device_mem_mapped ? ", device memory mapped" : "");
        } else {
            GGML_LOG_ERROR("ggml_vulkan: %s (%s) cannot be used\n", d->name, d->description);
            d->failed = true;
        }
    }
    const bool ready = d->ready;
    pthread_mutex_unlock(&d->mutex);
    return ready;
}

//
// memory
//

bool ggml_vk_mem_alloc(struct ggml_vk_device * d, size_t size, bool host, struct ggml_vk_mem * mem) {
    memset(mem, 0, sizeof(*mem));
    if (size == 0) {
        size = 1;
    }
    const VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = k_buffer_usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    if (!vk_check(ggml_vk_fn.vkCreateBuffer(d->device, &info, NULL, &mem->buffer), "vkCreateBuffer")) {
        return false;
    }
    VkMemoryRequirements req;
    ggml_vk_fn.vkGetBufferMemoryRequirements(d->device, mem->buffer, &req);
    const uint32_t type = host ? d->mem_type_host : d->mem_type_device;
    if (!(req.memoryTypeBits & (1u << type))) {
        GGML_LOG_ERROR("ggml_vulkan: %s: the buffer cannot use the chosen memory type\n", d->name);
        ggml_vk_fn.vkDestroyBuffer(d->device, mem->buffer, NULL);
        return false;
    }
    const VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = type,
    };
    const VkResult r = ggml_vk_fn.vkAllocateMemory(d->device, &alloc, NULL, &mem->memory);
    if (r != VK_SUCCESS) {
        GGML_LOG_ERROR("ggml_vulkan: %s: cannot allocate %zu bytes of %s memory (VkResult %d)\n", d->name, size,
                       host ? "host" : "device", (int) r);
        ggml_vk_fn.vkDestroyBuffer(d->device, mem->buffer, NULL);
        return false;
    }
    bool ok = vk_check(ggml_vk_fn.vkBindBufferMemory(d->device, mem->buffer, mem->memory, 0), "vkBindBufferMemory");
    if (ok && (host || d->device_mem_mapped)) {
        ok = vk_check(ggml_vk_fn.vkMapMemory(d->device, mem->memory, 0, VK_WHOLE_SIZE, 0, &mem->mapped), "vkMapMemory");
    }
    if (!ok) {
        ggml_vk_fn.vkDestroyBuffer(d->device, mem->buffer, NULL);
        ggml_vk_fn.vkFreeMemory(d->device, mem->memory, NULL);
        memset(mem, 0, sizeof(*mem));
        return false;
    }
    mem->size = size;
    return true;
}

void ggml_vk_mem_free(struct ggml_vk_device * d, struct ggml_vk_mem * mem) {
    if (mem->buffer == VK_NULL_HANDLE) {
        return;
    }
    if (mem->mapped != NULL) {
        ggml_vk_fn.vkUnmapMemory(d->device, mem->memory);
    }
    ggml_vk_fn.vkDestroyBuffer(d->device, mem->buffer, NULL);
    ggml_vk_fn.vkFreeMemory(d->device, mem->memory, NULL);
    memset(mem, 0, sizeof(*mem));
}

//
// pipelines
//

VkPipeline ggml_vk_pipeline(struct ggml_vk_device * d, enum ggml_vk_pipe pipe) {
    pthread_mutex_lock(&d->mutex);
    VkPipeline p = d->pipelines[pipe];
    if (p == VK_NULL_HANDLE) {
        const struct ggml_vk_spirv * spv = &ggml_vk_spirv_table[pipe];
        const VkShaderModuleCreateInfo mod_info = {
            .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = spv->size, .pCode = spv->code,
        };
        VkShaderModule module;
        if (vk_check(ggml_vk_fn.vkCreateShaderModule(d->device, &mod_info, NULL, &module), "vkCreateShaderModule")) {
            const VkComputePipelineCreateInfo info = {
                .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                .stage = {
                    .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                    .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = module, .pName = "main",
                },
                .layout = d->pipeline_layout,
            };
            if (!vk_check(ggml_vk_fn.vkCreateComputePipelines(d->device, VK_NULL_HANDLE, 1, &info, NULL, &p), "vkCreateComputePipelines")) {
                GGML_LOG_ERROR("ggml_vulkan: %s: pipeline %s not made\n", d->name, spv->name);
                p = VK_NULL_HANDLE;
            }
            ggml_vk_fn.vkDestroyShaderModule(d->device, module, NULL);
        }
        d->pipelines[pipe] = p;
    }
    pthread_mutex_unlock(&d->mutex);
    return p;
}

//
// synchronous transfers
//

void ggml_vk_cmd_barrier(VkCommandBuffer cmd) {
    const VkMemoryBarrier barrier = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT,
    };
    ggml_vk_fn.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                                    1, &barrier, 0, NULL, 0, NULL);
}

// with xfer_mutex held: begin the transfer command buffer
static void xfer_begin(struct ggml_vk_device * d) {
    const VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    ggml_vk_fn.vkResetCommandBuffer(d->xfer_cmd, 0);
    ggml_vk_fn.vkBeginCommandBuffer(d->xfer_cmd, &begin);
    ggml_vk_cmd_barrier(d->xfer_cmd); // after whatever the queue ran before
}

// with xfer_mutex held: submit and wait
static void xfer_end(struct ggml_vk_device * d) {
    ggml_vk_cmd_barrier(d->xfer_cmd);
    ggml_vk_fn.vkEndCommandBuffer(d->xfer_cmd);
    const VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d->xfer_cmd,
    };
    pthread_mutex_lock(&d->queue_mutex);
    const VkResult r = ggml_vk_fn.vkQueueSubmit(d->queue, 1, &submit, d->xfer_fence);
    pthread_mutex_unlock(&d->queue_mutex);
    if (vk_check(r, "vkQueueSubmit")) {
        vk_check(ggml_vk_fn.vkWaitForFences(d->device, 1, &d->xfer_fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    }
    ggml_vk_fn.vkResetFences(d->device, 1, &d->xfer_fence);
}

// with xfer_mutex held: the staging buffer, made on first use
static bool xfer_staging(struct ggml_vk_device * d) {
    if (d->xfer_staging.buffer != VK_NULL_HANDLE) {
        return true;
    }
    return ggml_vk_mem_alloc(d, GGML_VK_STAGING_SIZE, true, &d->xfer_staging);
}

void ggml_vk_write(struct ggml_vk_device * d, const struct ggml_vk_mem * mem, size_t offset, const void * src, size_t size) {
    if (mem->mapped != NULL) {
        memcpy((char *) mem->mapped + offset, src, size);
        return;
    }
    pthread_mutex_lock(&d->xfer_mutex);
    if (!xfer_staging(d)) {
        GGML_ABORT("ggml_vulkan: %s: no staging memory for a transfer", d->name);
    }
    for (size_t done = 0; done < size; done += GGML_VK_STAGING_SIZE) {
        const size_t n = MIN(GGML_VK_STAGING_SIZE, size - done);
        memcpy(d->xfer_staging.mapped, (const char *) src + done, n);
        xfer_begin(d);
        const VkBufferCopy region = { .srcOffset = 0, .dstOffset = offset + done, .size = n };
        ggml_vk_fn.vkCmdCopyBuffer(d->xfer_cmd, d->xfer_staging.buffer, mem->buffer, 1, &region);
        xfer_end(d);
    }
    pthread_mutex_unlock(&d->xfer_mutex);
}

void ggml_vk_read(struct ggml_vk_device * d, const struct ggml_vk_mem * mem, size_t offset, void * dst, size_t size) {
    if (mem->mapped != NULL) {
        memcpy(dst, (const char *) mem->mapped + offset, size);
        return;
    }
    pthread_mutex_lock(&d->xfer_mutex);
    if (!xfer_staging(d)) {
        GGML_ABORT("ggml_vulkan: %s: no staging memory for a transfer", d->name);
    }
    for (size_t done = 0; done < size; done += GGML_VK_STAGING_SIZE) {
        const size_t n = MIN(GGML_VK_STAGING_SIZE, size - done);
        xfer_begin(d);
        const VkBufferCopy region = { .srcOffset = offset + done, .dstOffset = 0, .size = n };
        ggml_vk_fn.vkCmdCopyBuffer(d->xfer_cmd, mem->buffer, d->xfer_staging.buffer, 1, &region);
        xfer_end(d);
        memcpy((char *) dst + done, d->xfer_staging.mapped, n);
    }
    pthread_mutex_unlock(&d->xfer_mutex);
}

void ggml_vk_fill(struct ggml_vk_device * d, const struct ggml_vk_mem * mem, size_t offset, uint8_t value, size_t size) {
    if (mem->mapped != NULL) {
        memset((char *) mem->mapped + offset, value, size);
        return;
    }
    // vkCmdFillBuffer writes whole words: the unaligned head and tail go through the host
    const size_t head = MIN(size, (4 - offset % 4) % 4);
    const size_t body = (size - head) / 4 * 4;
    const size_t tail = size - head - body;
    uint8_t bytes[4] = { value, value, value, value };
    if (head > 0) {
        ggml_vk_write(d, mem, offset, bytes, head);
    }
    if (body > 0) {
        pthread_mutex_lock(&d->xfer_mutex);
        xfer_begin(d);
        const uint32_t word = 0x01010101u * value;
        ggml_vk_fn.vkCmdFillBuffer(d->xfer_cmd, mem->buffer, offset + head, body, word);
        xfer_end(d);
        pthread_mutex_unlock(&d->xfer_mutex);
    }
    if (tail > 0) {
        ggml_vk_write(d, mem, offset + head + body, bytes, tail);
    }
}

void ggml_vk_copy(struct ggml_vk_device * d, const struct ggml_vk_mem * src, size_t src_offset, const struct ggml_vk_mem * dst, size_t dst_offset, size_t size) {
    if (size == 0) {
        return;
    }
    pthread_mutex_lock(&d->xfer_mutex);
    xfer_begin(d);
    const VkBufferCopy region = { .srcOffset = src_offset, .dstOffset = dst_offset, .size = size };
    ggml_vk_fn.vkCmdCopyBuffer(d->xfer_cmd, src->buffer, dst->buffer, 1, &region);
    xfer_end(d);
    pthread_mutex_unlock(&d->xfer_mutex);
}
