// vk-stream.c: the Vulkan backend proper, a stream of work on one device.
//
// Work is recorded into a command buffer (the current batch) and submitted
// when a graph has been recorded, an event is recorded, or the stream is
// synchronised: one submit per graph, not one per node. Each submit signals
// the stream's timeline semaphore with the next value; the batch keeps what
// its commands use (command buffer, descriptor pools, staging memory) until
// the semaphore passes that value, and is then recycled.
//
// Ordering. Every command buffer starts with a full memory barrier and
// every dispatch or copy is followed by one, so commands see the results of
// all earlier commands on the device's queue, this stream's and others'.
// Across streams of one device, events and cpy_tensor_async add semaphore
// waits to the next submit; across devices, the waiting is done on the host.
//
// Asynchronous copies. set_tensor_async copies the data into staging memory
// at once and records a copy (the caller's memory is free on return);
// get_tensor_async records a copy into staging memory and copies out to the
// caller's memory when the batch is seen complete, at the latest in
// synchronize. Data in a pinned host buffer of the device is copied by one
// command, without staging. On a device whose buffers are mapped and an
// idle stream, both are plain memcpys.

#include "vk-impl.h"

#define GGML_VK_STAGING_CHUNK ((size_t) 4 << 20)
#define GGML_VK_POOL_SETS     256
#define GGML_VK_FREE_STAGING  4 // staging chunks kept for reuse

struct vk_host_copy {
    void *       dst;
    const void * src;
    size_t       size;
};

struct vk_wait {
    VkSemaphore sem;
    uint64_t    value;
};

struct vk_batch {
    VkCommandBuffer      cmd;   // VK_NULL_HANDLE: nothing recorded
    uint64_t             value; // the timeline value that marks it complete
    VkDescriptorPool   * pools;
    size_t               n_pools, cap_pools;
    struct ggml_vk_mem * staging;
    size_t               n_staging, cap_staging;
    size_t               staging_used; // bytes used of the last staging chunk
    struct vk_host_copy * copies;
    size_t               n_copies, cap_copies;
};

struct ggml_vk_stream {
    struct ggml_vk_device * d;
    VkCommandPool pool;
    VkSemaphore   timeline;
    uint64_t      submitted;  // the last value a submit signals

    struct vk_batch   cur;
    struct vk_batch * inflight;
    size_t            n_inflight, cap_inflight;

    struct vk_wait * waits;   // for the next submit
    size_t           n_waits, cap_waits;

    VkCommandBuffer    * free_cmds;
    size_t               n_free_cmds, cap_free_cmds;
    VkDescriptorPool   * free_pools;
    size_t               n_free_pools, cap_free_pools;
    struct ggml_vk_mem * free_staging;
    size_t               n_free_staging, cap_free_staging;

    bool failed;              // a Vulkan call failed: later graphs report it
};

struct vk_event {
    struct ggml_vk_device * d;
    VkSemaphore sem;
    uint64_t    value;        // the last value recorded
};

static bool grow(void ** array, size_t * cap, size_t n, size_t elem) {
    if (n < *cap) {
        return true;
    }
    const size_t new_cap = *cap == 0 ? 8 : 2 * *cap;
    void * p = realloc(*array, new_cap * elem);
    if (p == NULL) {
        GGML_LOG_ERROR("ggml_vulkan: out of host memory\n");
        return false;
    }
    *array = p;
    *cap = new_cap;
    return true;
}

#define PUSH(arr, n, cap, v) (grow((void **) &(arr), &(cap), (n), sizeof(*(arr))) ? ((arr)[(n)++] = (v), true) : false)

static bool vk_ok(struct ggml_vk_stream * s, VkResult r, const char * what) {
    if (r != VK_SUCCESS) {
        GGML_LOG_ERROR("ggml_vulkan: %s: %s failed (VkResult %d)\n", s->d->name, what, (int) r);
        s->failed = true;
        return false;
    }
    return true;
}

//
// batches
//

static uint64_t completed_value(struct ggml_vk_stream * s) {
    uint64_t v = 0;
    if (ggml_vk_fn.vkGetSemaphoreCounterValue(s->d->device, s->timeline, &v) != VK_SUCCESS) {
        return 0;
    }
    return v;
}

// a completed batch: its host copies done, its resources back to the free lists
static void batch_retire(struct ggml_vk_stream * s, struct vk_batch * b) {
    for (size_t i = 0; i < b->n_copies; i++) {
        memcpy(b->copies[i].dst, b->copies[i].src, b->copies[i].size);
    }
    if (b->cmd != VK_NULL_HANDLE) {
        ggml_vk_fn.vkResetCommandBuffer(b->cmd, 0);
        if (!PUSH(s->free_cmds, s->n_free_cmds, s->cap_free_cmds, b->cmd)) {
            ggml_vk_fn.vkFreeCommandBuffers(s->d->device, s->pool, 1, &b->cmd);
        }
    }
    for (size_t i = 0; i < b->n_pools; i++) {
        ggml_vk_fn.vkResetDescriptorPool(s->d->device, b->pools[i], 0);
        if (!PUSH(s->free_pools, s->n_free_pools, s->cap_free_pools, b->pools[i])) {
            ggml_vk_fn.vkDestroyDescriptorPool(s->d->device, b->pools[i], NULL);
        }
    }
    for (size_t i = 0; i < b->n_staging; i++) {
        if (s->n_free_staging >= GGML_VK_FREE_STAGING ||
            !PUSH(s->free_staging, s->n_free_staging, s->cap_free_staging, b->staging[i])) {
            ggml_vk_mem_free(s->d, &b->staging[i]);
        }
    }
    free(b->pools);
    free(b->staging);
    free(b->copies);
    memset(b, 0, sizeof(*b));
}

// retire the submitted batches the device has finished
static void reclaim(struct ggml_vk_stream * s) {
    if (s->n_inflight == 0) {
        return;
    }
    const uint64_t done = completed_value(s);
    size_t kept = 0;
    for (size_t i = 0; i < s->n_inflight; i++) {
        if (s->inflight[i].value <= done) {
            batch_retire(s, &s->inflight[i]);
        } else {
            s->inflight[kept++] = s->inflight[i];
        }
    }
    s->n_inflight = kept;
}

static bool stream_idle(struct ggml_vk_stream * s) {
    return s->cur.cmd == VK_NULL_HANDLE && s->n_waits == 0 && completed_value(s) >= s->submitted;
}

// the command buffer of the current batch, begun on first use
static VkCommandBuffer batch_cmd(struct ggml_vk_stream * s) {
    if (s->cur.cmd != VK_NULL_HANDLE) {
        return s->cur.cmd;
    }
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    if (s->n_free_cmds > 0) {
        cmd = s->free_cmds[--s->n_free_cmds];
    } else {
        const VkCommandBufferAllocateInfo info = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = s->pool,
            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1,
        };
        if (!vk_ok(s, ggml_vk_fn.vkAllocateCommandBuffers(s->d->device, &info, &cmd), "vkAllocateCommandBuffers")) {
            return VK_NULL_HANDLE;
        }
    }
    const VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    if (!vk_ok(s, ggml_vk_fn.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer")) {
        PUSH(s->free_cmds, s->n_free_cmds, s->cap_free_cmds, cmd);
        return VK_NULL_HANDLE;
    }
    ggml_vk_cmd_barrier(cmd);
    s->cur.cmd = cmd;
    return cmd;
}

// submit the current batch (possibly empty), signalling the stream's next
// value and, if given, an event's semaphore
static bool flush(struct ggml_vk_stream * s, VkSemaphore event_sem, uint64_t event_value) {
    if (s->cur.cmd == VK_NULL_HANDLE && s->n_waits == 0 && event_sem == VK_NULL_HANDLE) {
        return true;
    }
    if (s->cur.cmd != VK_NULL_HANDLE && !vk_ok(s, ggml_vk_fn.vkEndCommandBuffer(s->cur.cmd), "vkEndCommandBuffer")) {
        return false;
    }
    VkPipelineStageFlags * stages = NULL;
    VkSemaphore *          wait_sems = NULL;
    uint64_t *             wait_values = NULL;
    if (s->n_waits > 0) {
        stages      = (VkPipelineStageFlags *) malloc(s->n_waits * sizeof(VkPipelineStageFlags));
        wait_sems   = (VkSemaphore *) malloc(s->n_waits * sizeof(VkSemaphore));
        wait_values = (uint64_t *) malloc(s->n_waits * sizeof(uint64_t));
        if (stages == NULL || wait_sems == NULL || wait_values == NULL) {
            GGML_LOG_ERROR("ggml_vulkan: out of host memory\n");
            free(stages);
            free(wait_sems);
            free(wait_values);
            s->failed = true;
            return false;
        }
        for (size_t i = 0; i < s->n_waits; i++) {
            stages[i]      = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            wait_sems[i]   = s->waits[i].sem;
            wait_values[i] = s->waits[i].value;
        }
    }
    const uint64_t value = s->submitted + 1;
    const VkSemaphore signal_sems[2]   = { s->timeline, event_sem };
    const uint64_t    signal_values[2] = { value, event_value };
    const uint32_t    n_signal = event_sem != VK_NULL_HANDLE ? 2 : 1;
    const VkTimelineSemaphoreSubmitInfo timeline = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = (uint32_t) s->n_waits, .pWaitSemaphoreValues = wait_values,
        .signalSemaphoreValueCount = n_signal, .pSignalSemaphoreValues = signal_values,
    };
    const VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &timeline,
        .waitSemaphoreCount = (uint32_t) s->n_waits, .pWaitSemaphores = wait_sems, .pWaitDstStageMask = stages,
        .commandBufferCount = s->cur.cmd != VK_NULL_HANDLE ? 1 : 0, .pCommandBuffers = &s->cur.cmd,
        .signalSemaphoreCount = n_signal, .pSignalSemaphores = signal_sems,
    };
    pthread_mutex_lock(&s->d->queue_mutex);
    const VkResult r = ggml_vk_fn.vkQueueSubmit(s->d->queue, 1, &submit, VK_NULL_HANDLE);
    pthread_mutex_unlock(&s->d->queue_mutex);
    free(stages);
    free(wait_sems);
    free(wait_values);
    s->n_waits = 0;
    if (!vk_ok(s, r, "vkQueueSubmit")) {
        return false;
    }
    s->submitted = value;
    s->cur.value = value;
    if (!PUSH(s->inflight, s->n_inflight, s->cap_inflight, s->cur)) {
        // cannot track it: wait for it here
        ggml_vk_fn.vkDeviceWaitIdle(s->d->device);
        batch_retire(s, &s->cur);
    }
    memset(&s->cur, 0, sizeof(s->cur));
    return true;
}

static void stream_synchronize(struct ggml_vk_stream * s) {
    flush(s, VK_NULL_HANDLE, 0);
    if (s->submitted > 0) {
        const VkSemaphoreWaitInfo wait = {
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
            .pSemaphores = &s->timeline, .pValues = &s->submitted,
        };
        vk_ok(s, ggml_vk_fn.vkWaitSemaphores(s->d->device, &wait, UINT64_MAX), "vkWaitSemaphores");
    }
    reclaim(s);
}

// size bytes of staging memory in the current batch
static bool stage(struct ggml_vk_stream * s, size_t size, const struct ggml_vk_mem ** mem, size_t * offset) {
    struct vk_batch * b = &s->cur;
    const size_t aligned_used = (b->staging_used + 63) / 64 * 64;
    if (b->n_staging > 0 && aligned_used + size <= b->staging[b->n_staging - 1].size) {
        *mem = &b->staging[b->n_staging - 1];
        *offset = aligned_used;
        b->staging_used = aligned_used + size;
        return true;
    }
    struct ggml_vk_mem chunk = { 0 };
    for (size_t i = 0; i < s->n_free_staging; i++) {
        if (s->free_staging[i].size >= size) {
            chunk = s->free_staging[i];
            s->free_staging[i] = s->free_staging[--s->n_free_staging];
            break;
        }
    }
    if (chunk.buffer == VK_NULL_HANDLE && !ggml_vk_mem_alloc(s->d, MAX(size, GGML_VK_STAGING_CHUNK), true, &chunk)) {
        s->failed = true;
        return false;
    }
    if (!PUSH(b->staging, b->n_staging, b->cap_staging, chunk)) {
        ggml_vk_mem_free(s->d, &chunk);
        s->failed = true;
        return false;
    }
    *mem = &b->staging[b->n_staging - 1];
    *offset = 0;
    b->staging_used = size;
    return true;
}

static void record_buffer_copy(VkCommandBuffer cmd, VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset, size_t size) {
    const VkBufferCopy region = { .srcOffset = src_offset, .dstOffset = dst_offset, .size = size };
    ggml_vk_fn.vkCmdCopyBuffer(cmd, src, dst, 1, &region);
    ggml_vk_cmd_barrier(cmd);
}

//
// dispatch
//

static VkDescriptorSet alloc_descriptor_set(struct ggml_vk_stream * s) {
    struct vk_batch * b = &s->cur;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (b->n_pools > 0) {
            const VkDescriptorSetAllocateInfo info = {
                .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                .descriptorPool = b->pools[b->n_pools - 1], .descriptorSetCount = 1, .pSetLayouts = &s->d->set_layout,
            };
            VkDescriptorSet set;
            if (ggml_vk_fn.vkAllocateDescriptorSets(s->d->device, &info, &set) == VK_SUCCESS) {
                return set;
            }
        }
        // the last pool is full (or there is none): take another
        VkDescriptorPool pool = VK_NULL_HANDLE;
        if (s->n_free_pools > 0) {
            pool = s->free_pools[--s->n_free_pools];
        } else {
            const VkDescriptorPoolSize size = {
                .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = GGML_VK_POOL_SETS * GGML_VK_MAX_BINDINGS,
            };
            const VkDescriptorPoolCreateInfo info = {
                .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                .maxSets = GGML_VK_POOL_SETS, .poolSizeCount = 1, .pPoolSizes = &size,
            };
            if (!vk_ok(s, ggml_vk_fn.vkCreateDescriptorPool(s->d->device, &info, NULL, &pool), "vkCreateDescriptorPool")) {
                return VK_NULL_HANDLE;
            }
        }
        if (!PUSH(b->pools, b->n_pools, b->cap_pools, pool)) {
            ggml_vk_fn.vkDestroyDescriptorPool(s->d->device, pool, NULL);
            return VK_NULL_HANDLE;
        }
    }
    GGML_LOG_ERROR("ggml_vulkan: %s: cannot allocate a descriptor set\n", s->d->name);
    s->failed = true;
    return VK_NULL_HANDLE;
}

uint32_t ggml_vk_misalign(const struct ggml_vk_stream * s, const struct ggml_tensor * t, size_t elem_size) {
    const struct ggml_vk_mem * mem;
    size_t offset;
    if (t == NULL || !ggml_vk_tensor_mem(t, &mem, &offset)) {
        return 0;
    }
    return (uint32_t) ((offset % s->d->min_align) / elem_size);
}

bool ggml_vk_dispatch(struct ggml_vk_stream * s, enum ggml_vk_pipe pipe,
                      const struct ggml_tensor * const srcs[GGML_VK_MAX_BINDINGS - 1], const struct ggml_tensor * dst,
                      const void * push, size_t push_size, uint32_t n_groups) {
    GGML_ASSERT(push_size <= GGML_VK_PUSH_CONSTANTS && push_size % 4 == 0);
    if (n_groups == 0) {
        return true;
    }
    VkPipeline pipeline = ggml_vk_pipeline(s->d, pipe);
    VkCommandBuffer cmd = batch_cmd(s);
    if (pipeline == VK_NULL_HANDLE || cmd == VK_NULL_HANDLE) {
        return false;
    }
    VkDescriptorBufferInfo infos[GGML_VK_MAX_BINDINGS];
    for (int i = 0; i < GGML_VK_MAX_BINDINGS; i++) {
        const struct ggml_tensor * t = i < GGML_VK_MAX_BINDINGS - 1 ? srcs[i] : dst;
        if (t == NULL) {
            t = dst; // unused bindings still need a valid buffer
        }
        const struct ggml_vk_mem * mem;
        size_t offset;
        if (!ggml_vk_tensor_mem(t, &mem, &offset)) {
            GGML_LOG_ERROR("ggml_vulkan: %s: tensor '%s' of node '%s' is not in this device's memory\n", s->d->name, t->name, dst->name);
            return false;
        }
        const size_t base = offset / s->d->min_align * s->d->min_align;
        infos[i] = (VkDescriptorBufferInfo) { .buffer = mem->buffer, .offset = base, .range = mem->size - base };
    }
    VkDescriptorSet set = alloc_descriptor_set(s);
    if (set == VK_NULL_HANDLE) {
        return false;
    }
    VkWriteDescriptorSet writes[GGML_VK_MAX_BINDINGS];
    for (uint32_t i = 0; i < GGML_VK_MAX_BINDINGS; i++) {
        writes[i] = (VkWriteDescriptorSet) {
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = i, .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &infos[i],
        };
    }
    ggml_vk_fn.vkUpdateDescriptorSets(s->d->device, GGML_VK_MAX_BINDINGS, writes, 0, NULL);
    ggml_vk_fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    ggml_vk_fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->d->pipeline_layout, 0, 1, &set, 0, NULL);
    ggml_vk_fn.vkCmdPushConstants(cmd, s->d->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t) push_size, push);
    // the shaders number workgroups linearly over up to three dimensions
    const uint32_t lim = 65535;
    const uint32_t gx = MIN(n_groups, lim);
    uint32_t gy = (n_groups + gx - 1) / gx;
    uint32_t gz = 1;
    if (gy > lim) {
        gz = (gy + lim - 1) / lim;
        gy = lim;
    }
    ggml_vk_fn.vkCmdDispatch(cmd, gx, gy, gz);
    ggml_vk_cmd_barrier(cmd);
    return true;
}

bool ggml_vk_record_copy(struct ggml_vk_stream * s, const struct ggml_tensor * src, const struct ggml_tensor * dst, size_t size) {
    const struct ggml_vk_mem * smem;
    const struct ggml_vk_mem * dmem;
    size_t soff;
    size_t doff;
    if (!ggml_vk_tensor_mem(src, &smem, &soff) || !ggml_vk_tensor_mem(dst, &dmem, &doff)) {
        return false;
    }
    VkCommandBuffer cmd = batch_cmd(s);
    if (cmd == VK_NULL_HANDLE) {
        return false;
    }
    if (size > 0) {
        record_buffer_copy(cmd, smem->buffer, soff, dmem->buffer, doff, size);
    }
    return true;
}

//
// backend interface
//

static const char * vk_backend_get_name(ggml_backend_t backend) {
    return ((struct ggml_vk_stream *) backend->context)->d->name;
}

static void vk_backend_free(ggml_backend_t backend) {
    struct ggml_vk_stream * s = (struct ggml_vk_stream *) backend->context;
    stream_synchronize(s);
    for (size_t i = 0; i < s->n_inflight; i++) {
        batch_retire(s, &s->inflight[i]); // only after a failed wait
    }
    VkDevice dev = s->d->device;
    for (size_t i = 0; i < s->n_free_pools; i++) {
        ggml_vk_fn.vkDestroyDescriptorPool(dev, s->free_pools[i], NULL);
    }
    for (size_t i = 0; i < s->n_free_staging; i++) {
        ggml_vk_mem_free(s->d, &s->free_staging[i]);
    }
    ggml_vk_fn.vkDestroyCommandPool(dev, s->pool, NULL); // frees its command buffers
    ggml_vk_fn.vkDestroySemaphore(dev, s->timeline, NULL);
    free(s->inflight);
    free(s->waits);
    free(s->free_cmds);
    free(s->free_pools);
    free(s->free_staging);
    free(s);
    free(backend);
}

static void vk_backend_synchronize(ggml_backend_t backend) {
    stream_synchronize((struct ggml_vk_stream *) backend->context);
}

static void vk_set_tensor_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    struct ggml_vk_stream * s = (struct ggml_vk_stream *) backend->context;
    const struct ggml_vk_mem * mem;
    size_t toff;
    if (!ggml_vk_tensor_mem(tensor, &mem, &toff)) {
        GGML_ABORT("ggml_vulkan: set_tensor_async: '%s' is not in a Vulkan device buffer", tensor->name);
    }
    if (mem->mapped != NULL && stream_idle(s)) {
        memcpy((char *) mem->mapped + toff + offset, data, size);
        return;
    }
    VkBuffer pinned;
    size_t poff;
    VkCommandBuffer pcmd;
    if (ggml_vk_pinned_find(s->d, data, size, &pinned, &poff) && (pcmd = batch_cmd(s)) != VK_NULL_HANDLE) {
        record_buffer_copy(pcmd, pinned, poff, mem->buffer, toff + offset, size);
        return;
    }
    const struct ggml_vk_mem * st;
    size_t soff;
    VkCommandBuffer cmd;
    if (!stage(s, size, &st, &soff) || (cmd = batch_cmd(s)) == VK_NULL_HANDLE) {
        // no staging memory: copy synchronously, after what is queued
        stream_synchronize(s);
        ggml_vk_write(s->d, mem, toff + offset, data, size);
        return;
    }
    memcpy((char *) st->mapped + soff, data, size);
    record_buffer_copy(cmd, st->buffer, soff, mem->buffer, toff + offset, size);
}

static void vk_get_tensor_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    struct ggml_vk_stream * s = (struct ggml_vk_stream *) backend->context;
    const struct ggml_vk_mem * mem;
    size_t toff;
    if (!ggml_vk_tensor_mem(tensor, &mem, &toff)) {
        GGML_ABORT("ggml_vulkan: get_tensor_async: '%s' is not in a Vulkan device buffer", tensor->name);
    }
    if (mem->mapped != NULL && stream_idle(s)) {
        memcpy(data, (const char *) mem->mapped + toff + offset, size);
        return;
    }
    VkBuffer pinned;
    size_t poff;
    VkCommandBuffer pcmd;
    if (ggml_vk_pinned_find(s->d, data, size, &pinned, &poff) && (pcmd = batch_cmd(s)) != VK_NULL_HANDLE) {
        record_buffer_copy(pcmd, mem->buffer, toff + offset, pinned, poff, size);
        return;
    }
    const struct ggml_vk_mem * st;
    size_t soff;
    VkCommandBuffer cmd;
    if (!stage(s, size, &st, &soff) || (cmd = batch_cmd(s)) == VK_NULL_HANDLE) {
        stream_synchronize(s);
        ggml_vk_read(s->d, mem, toff + offset, data, size);
        return;
    }
    record_buffer_copy(cmd, mem->buffer, toff + offset, st->buffer, soff, size);
    const struct vk_host_copy copy = { .dst = data, .src = (const char *) st->mapped + soff, .size = size };
    if (!PUSH(s->cur.copies, s->cur.n_copies, s->cur.cap_copies, copy)) {
        stream_synchronize(s);
        ggml_vk_read(s->d, mem, toff + offset, data, size);
    }
}

// between two tensors of one device; the source's stream must have recorded its producer
static bool vk_cpy_tensor_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    if (!ggml_backend_is_vk(backend_src) || !ggml_backend_is_vk(backend_dst)) {
        return false;
    }
    struct ggml_vk_stream * ss = (struct ggml_vk_stream *) backend_src->context;
    struct ggml_vk_stream * sd = (struct ggml_vk_stream *) backend_dst->context;
    ggml_backend_buffer_t sbuf = src->view_src != NULL ? src->view_src->buffer : src->buffer;
    ggml_backend_buffer_t dbuf = dst->view_src != NULL ? dst->view_src->buffer : dst->buffer;
    if (ss->d != sd->d || ggml_vk_buffer_device(sbuf) != sd->d || ggml_vk_buffer_device(dbuf) != sd->d) {
        return false;
    }
    if (ss != sd) {
        if (!flush(ss, VK_NULL_HANDLE, 0)) {
            return false;
        }
        const struct vk_wait w = { .sem = ss->timeline, .value = ss->submitted };
        if (ss->submitted > 0 && !PUSH(sd->waits, sd->n_waits, sd->cap_waits, w)) {
            return false;
        }
    }
    return ggml_vk_record_copy(sd, src, dst, ggml_nbytes(src));
}

static enum ggml_status vk_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct ggml_vk_stream * s = (struct ggml_vk_stream *) backend->context;
    reclaim(s);
    if (s->failed) {
        GGML_LOG_ERROR("ggml_vulkan: %s: an earlier Vulkan call failed; the stream cannot compute\n", s->d->name);
        return GGML_STATUS_FAILED;
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (ggml_is_empty(node) || node->op == GGML_OP_NONE || node->op == GGML_OP_VIEW || node->op == GGML_OP_RESHAPE ||
            node->op == GGML_OP_PERMUTE || node->op == GGML_OP_TRANSPOSE || (node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
            continue;
        }
        if (!ggml_vk_record_node(s, node)) {
            GGML_LOG_ERROR("ggml_vulkan: %s: cannot compute node '%s' (%s)\n", s->d->name, node->name, ggml_op_desc(node));
            flush(s, VK_NULL_HANDLE, 0);
            return GGML_STATUS_FAILED;
        }
    }
    return flush(s, VK_NULL_HANDLE, 0) ? GGML_STATUS_SUCCESS : GGML_STATUS_FAILED;
}

static void vk_event_record(ggml_backend_t backend, ggml_backend_event_t event) {
    struct ggml_vk_stream * s = (struct ggml_vk_stream *) backend->context;
    struct vk_event * e = (struct vk_event *) event->context;
    GGML_ASSERT(e->d == s->d && "an event is recorded on a stream of its own device");
    const uint64_t value = e->value + 1;
    if (flush(s, e->sem, value)) {
        e->value = value;
    }
}

static void vk_event_wait(ggml_backend_t backend, ggml_backend_event_t event) {
    struct ggml_vk_stream * s = (struct ggml_vk_stream *) backend->context;
    struct vk_event * e = (struct vk_event *) event->context;
    if (e->value == 0) {
        return; // never recorded
    }
    if (e->d != s->d) {
        ggml_vk_event_synchronize(event->device, event);
        return;
    }
    const struct vk_wait w = { .sem = e->sem, .value = e->value };
    if (!PUSH(s->waits, s->n_waits, s->cap_waits, w)) {
        ggml_vk_event_synchronize(event->device, event);
    }
}

static ggml_guid_t vk_guid(void) {
    static ggml_guid guid = { 0x6b, 0x5e, 0x9a, 0x31, 0xc2, 0x47, 0x4d, 0x10, 0x9e, 0x83, 0x12, 0x7f, 0xa4, 0x0b, 0x55, 0xd6 };
    return &guid;
}

bool ggml_backend_is_vk(ggml_backend_t backend) {
    return backend != NULL && ggml_guid_matches(backend->guid, vk_guid());
}

static const struct ggml_backend_i vk_backend_iface = {
    .get_name            = vk_backend_get_name,
    .free                = vk_backend_free,
    .set_tensor_async    = vk_set_tensor_async,
    .get_tensor_async    = vk_get_tensor_async,
    .set_tensor_2d_async = NULL,
    .get_tensor_2d_async = NULL,
    .cpy_tensor_async    = vk_cpy_tensor_async,
    .synchronize         = vk_backend_synchronize,
    .graph_plan_create   = NULL,
    .graph_plan_free     = NULL,
    .graph_plan_update   = NULL,
    .graph_plan_compute  = NULL,
    .graph_compute       = vk_graph_compute,
    .event_record        = vk_event_record,
    .event_wait          = vk_event_wait,
    .graph_optimize      = NULL,
};

static bool create_timeline(struct ggml_vk_device * d, VkSemaphore * sem) {
    const VkSemaphoreTypeCreateInfo type = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE, .initialValue = 0,
    };
    const VkSemaphoreCreateInfo info = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type };
    const VkResult r = ggml_vk_fn.vkCreateSemaphore(d->device, &info, NULL, sem);
    if (r != VK_SUCCESS) {
        GGML_LOG_ERROR("ggml_vulkan: %s: vkCreateSemaphore failed (VkResult %d)\n", d->name, (int) r);
        return false;
    }
    return true;
}

ggml_backend_t ggml_vk_stream_new(struct ggml_vk_device * d) {
    struct ggml_vk_stream * s = (struct ggml_vk_stream *) calloc(1, sizeof(struct ggml_vk_stream));
    ggml_backend_t backend = (ggml_backend_t) calloc(1, sizeof(struct ggml_backend));
    if (s == NULL || backend == NULL) {
        GGML_LOG_ERROR("ggml_vulkan: out of host memory\n");
        free(s);
        free(backend);
        return NULL;
    }
    s->d = d;
    const VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = d->queue_family,
    };
    const VkResult r = ggml_vk_fn.vkCreateCommandPool(d->device, &pool_info, NULL, &s->pool);
    if (r != VK_SUCCESS || !create_timeline(d, &s->timeline)) {
        GGML_LOG_ERROR("ggml_vulkan: %s: cannot make a stream\n", d->name);
        if (r == VK_SUCCESS) {
            ggml_vk_fn.vkDestroyCommandPool(d->device, s->pool, NULL);
        }
        free(s);
        free(backend);
        return NULL;
    }
    *backend = (struct ggml_backend) { .guid = vk_guid(), .iface = vk_backend_iface, .device = &d->dev, .context = s };
    return backend;
}

//
// events
//

ggml_backend_event_t ggml_vk_event_new(ggml_backend_dev_t dev) {
    struct ggml_vk_device * d = (struct ggml_vk_device *) dev->context;
    if (!ggml_vk_device_ready(d)) {
        return NULL;
    }
    struct vk_event * e = (struct vk_event *) calloc(1, sizeof(struct vk_event));
    ggml_backend_event_t event = (ggml_backend_event_t) calloc(1, sizeof(struct ggml_backend_event));
    if (e == NULL || event == NULL || !create_timeline(d, &e->sem)) {
        GGML_LOG_ERROR("ggml_vulkan: %s: cannot make an event\n", d->name);
        free(e);
        free(event);
        return NULL;
    }
    e->d = d;
    event->device = dev;
    event->context = e;
    return event;
}

void ggml_vk_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    GGML_UNUSED(dev);
    if (event == NULL) {
        return;
    }
    struct vk_event * e = (struct vk_event *) event->context;
    ggml_vk_event_synchronize(dev, event); // the semaphore must not be pending
    ggml_vk_fn.vkDestroySemaphore(e->d->device, e->sem, NULL);
    free(e);
    free(event);
}

void ggml_vk_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    GGML_UNUSED(dev);
    struct vk_event * e = (struct vk_event *) event->context;
    if (e->value == 0) {
        return;
    }
    const VkSemaphoreWaitInfo wait = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1, .pSemaphores = &e->sem, .pValues = &e->value,
    };
    const VkResult r = ggml_vk_fn.vkWaitSemaphores(e->d->device, &wait, UINT64_MAX);
    if (r != VK_SUCCESS) {
        GGML_LOG_ERROR("ggml_vulkan: %s: waiting for an event failed (VkResult %d)\n", e->d->name, (int) r);
    }
}
