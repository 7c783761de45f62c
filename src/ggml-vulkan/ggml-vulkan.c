// ggml-vulkan.c: the Vulkan registry entry, its devices and the public API.
//
// One ggml device per selected Vulkan physical device that has Vulkan 1.2, a
// compute queue, 8- and 16-bit storage buffers, timeline semaphores and
// subgroup arithmetic (a device without them is skipped with a log line).
// Selected, as upstream selects them: GGML_VK_VISIBLE_DEVICES (comma-separated
// indices into the driver's list) names the devices and their order; without
// it, every usable discrete and integrated GPU in the driver's order (a GPU
// that two drivers list is used through one of them), or when there is none,
// the first device that is not a CPU driver. So a CPU driver (Mesa's lavapipe)
// is never listed unless named: programs put every listed device in their
// schedulers, and the CPU backend computes far faster on the same cores.
//
// Device types: an integrated GPU is GGML_BACKEND_DEVICE_TYPE_IGPU, every
// other device (a named CPU driver too) GPU.
//
// The list is made once, on first use, and lives until the process ends.

#include "vk-impl.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

struct vk_registry {
    struct ggml_vk_device ** devices;
    size_t                   n_devices;
};

static struct vk_registry       g_vk;
static pthread_once_t           g_vk_once = PTHREAD_ONCE_INIT;
static struct ggml_backend_reg  g_vk_reg;

//
// device interface
//

static struct ggml_vk_device * dev_ctx(ggml_backend_dev_t dev) {
    return (struct ggml_vk_device *) dev->context;
}

static const char * vk_dev_get_name(ggml_backend_dev_t dev) {
    return dev_ctx(dev)->name;
}

static const char * vk_dev_get_description(ggml_backend_dev_t dev) {
    return dev_ctx(dev)->description;
}

// device-local heaps: their size, and with VK_EXT_memory_budget what is free of them
static void vk_dev_get_memory(ggml_backend_dev_t dev, size_t * free, size_t * total) {
    struct ggml_vk_device * d = dev_ctx(dev);
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT,
    };
    VkPhysicalDeviceMemoryProperties2 props = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
        .pNext = d->has_memory_budget ? &budget : NULL,
    };
    ggml_vk_fn.vkGetPhysicalDeviceMemoryProperties2(d->physical, &props);
    size_t t = 0;
    size_t f = 0;
    for (uint32_t i = 0; i < props.memoryProperties.memoryHeapCount; i++) {
        const VkMemoryHeap * heap = &props.memoryProperties.memoryHeaps[i];
        if (!(heap->flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) {
            continue;
        }
        t += heap->size;
        if (d->has_memory_budget) {
            const VkDeviceSize b = budget.heapBudget[i];
            const VkDeviceSize u = budget.heapUsage[i];
            f += b > u ? b - u : 0;
        } else {
            f += heap->size;
        }
    }
    *total = t;
    *free  = f;
}

static enum ggml_backend_dev_type vk_dev_get_type(ggml_backend_dev_t dev) {
    // as upstream: a CPU driver, listed only when named, is a GPU too
    return dev_ctx(dev)->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? GGML_BACKEND_DEVICE_TYPE_IGPU
                                                                                    : GGML_BACKEND_DEVICE_TYPE_GPU;
}

static void vk_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    props->name        = vk_dev_get_name(dev);
    props->description = vk_dev_get_description(dev);
    props->type        = vk_dev_get_type(dev);
    props->device_id   = NULL;
    vk_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = (struct ggml_backend_dev_caps) {
        .async                = true,
        .host_buffer          = true,
        .buffer_from_host_ptr = false,
        .events               = true,
        .mmap_support         = false,
    };
}

static ggml_backend_t vk_dev_init_backend(ggml_backend_dev_t dev, const char * params) {
    GGML_UNUSED(params);
    struct ggml_vk_device * d = dev_ctx(dev);
    if (!ggml_vk_device_ready(d)) {
        return NULL;
    }
    return ggml_vk_stream_new(d);
}

static ggml_backend_buffer_type_t vk_dev_get_buffer_type(ggml_backend_dev_t dev) {
    return &dev_ctx(dev)->buft;
}

static ggml_backend_buffer_type_t vk_dev_get_host_buffer_type(ggml_backend_dev_t dev) {
    GGML_UNUSED(dev);
    return ggml_vk_host_buft();
}

static bool vk_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    return ggml_vk_supports_op(dev_ctx(dev), op);
}

static bool vk_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    return buft == &dev_ctx(dev)->buft;
}

// weights in host memory: a matrix product over a batch of tokens is worth
// the copy of its weights to the device (a GET_ROWS gather never is)
static bool vk_dev_offload_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    GGML_UNUSED(dev);
    const int64_t min_batch = 32;
    return (op->op == GGML_OP_MUL_MAT && op->ne[1] >= min_batch) || (op->op == GGML_OP_MUL_MAT_ID && op->ne[2] >= min_batch);
}

static const struct ggml_backend_device_i vk_device_iface = {
    .get_name             = vk_dev_get_name,
    .get_description      = vk_dev_get_description,
    .get_memory           = vk_dev_get_memory,
    .get_type             = vk_dev_get_type,
    .get_props            = vk_dev_get_props,
    .init_backend         = vk_dev_init_backend,
    .get_buffer_type      = vk_dev_get_buffer_type,
    .get_host_buffer_type = vk_dev_get_host_buffer_type,
    .buffer_from_host_ptr = NULL,
    .supports_op          = vk_dev_supports_op,
    .supports_buft        = vk_dev_supports_buft,
    .offload_op           = vk_dev_offload_op,
    .event_new            = ggml_vk_event_new,
    .event_free           = ggml_vk_event_free,
    .event_synchronize    = ggml_vk_event_synchronize,
};

//
// enumeration
//

static bool has_device_extension(VkPhysicalDevice pd, const char * name) {
    uint32_t n = 0;
    if (ggml_vk_fn.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) {
        return false;
    }
    VkExtensionProperties * ext = (VkExtensionProperties *) calloc(n, sizeof(VkExtensionProperties));
    if (ext == NULL) {
        return false;
    }
    bool found = false;
    if (ggml_vk_fn.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) == VK_SUCCESS) {
        for (uint32_t i = 0; i < n && !found; i++) {
            found = strcmp(ext[i].extensionName, name) == 0;
        }
    }
    free(ext);
    return found;
}

// NULL if the physical device can run the backend, else why not
static const char * device_unusable_reason(VkPhysicalDevice pd, const VkPhysicalDeviceProperties * props, uint32_t * queue_family) {
    if (props->apiVersion < VK_API_VERSION_1_2) {
        return "Vulkan 1.2 is needed";
    }
    VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
    VkPhysicalDeviceVulkan11Features f11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12 };
    VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11 };
    ggml_vk_fn.vkGetPhysicalDeviceFeatures2(pd, &f);
    if (!f11.storageBuffer16BitAccess || !f12.storageBuffer8BitAccess) {
        return "8- and 16-bit storage buffers are needed";
    }
    if (!f12.timelineSemaphore) {
        return "timeline semaphores are needed";
    }
    VkPhysicalDeviceSubgroupProperties sg = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES };
    VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg };
    ggml_vk_fn.vkGetPhysicalDeviceProperties2(pd, &p2);
    const VkSubgroupFeatureFlags sg_needed = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    if (!(sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) || (sg.supportedOperations & sg_needed) != sg_needed) {
        return "subgroup arithmetic in compute shaders is needed";
    }
    uint32_t n = 0;
    ggml_vk_fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties * q = (VkQueueFamilyProperties *) calloc(n > 0 ? n : 1, sizeof(VkQueueFamilyProperties));
    if (q == NULL) {
        return "out of memory";
    }
    ggml_vk_fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    // a compute queue; one without graphics first (often a dedicated engine)
    int found = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            if (found < 0 || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
                found = (int) i;
            }
            if (!(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
                break;
            }
        }
    }
    free(q);
    if (found < 0) {
        return "no compute queue";
    }
    *queue_family = (uint32_t) found;
    return NULL;
}

static void add_device(VkPhysicalDevice pd, uint32_t pd_index) {
    VkPhysicalDeviceProperties props;
    ggml_vk_fn.vkGetPhysicalDeviceProperties(pd, &props);
    uint32_t queue_family = 0;
    const char * why = device_unusable_reason(pd, &props, &queue_family);
    if (why != NULL) {
        GGML_LOG_INFO("ggml_vulkan: skipping device %u (%s): %s\n", pd_index, props.deviceName, why);
        return;
    }
    struct ggml_vk_device * d = (struct ggml_vk_device *) calloc(1, sizeof(struct ggml_vk_device));
    struct ggml_vk_device ** grown = (struct ggml_vk_device **) realloc(g_vk.devices, (g_vk.n_devices + 1) * sizeof(*grown));
    if (d == NULL || grown == NULL) {
        GGML_LOG_ERROR("ggml_vulkan: out of memory: device %u (%s) not listed\n", pd_index, props.deviceName);
        free(d);
        if (grown != NULL) {
            g_vk.devices = grown;
        }
        return;
    }
    g_vk.devices = grown;
    d->index        = (int) g_vk.n_devices;
    d->physical     = pd;
    d->props        = props;
    d->queue_family = queue_family;
    ggml_vk_fn.vkGetPhysicalDeviceMemoryProperties(pd, &d->mem_props);
    d->has_memory_budget = has_device_extension(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    snprintf(d->name, sizeof(d->name), "%s%d", GGML_VK_NAME, d->index);
    snprintf(d->description, sizeof(d->description), "%s", props.deviceName);

    VkPhysicalDeviceMaintenance3Properties m3 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES };
    VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3 };
    ggml_vk_fn.vkGetPhysicalDeviceProperties2(pd, &p2);
    d->min_align = (size_t) props.limits.minStorageBufferOffsetAlignment;
    if (d->min_align < 16) {
        d->min_align = 16;
    }
    // every tensor must fit one storage-buffer binding: a buffer is at most
    // the binding range (and the allocation limit), rounded to the alignment
    size_t max_size = (size_t) props.limits.maxStorageBufferRange;
    if ((size_t) m3.maxMemoryAllocationSize < max_size) {
        max_size = (size_t) m3.maxMemoryAllocationSize;
    }
    d->max_buffer_size = max_size / d->min_align * d->min_align;

    pthread_mutex_init(&d->mutex, NULL);
    pthread_mutex_init(&d->queue_mutex, NULL);
    pthread_mutex_init(&d->xfer_mutex, NULL);
    pthread_mutex_init(&d->pinned_mutex, NULL);
    d->dev = (struct ggml_backend_device) { .iface = vk_device_iface, .reg = &g_vk_reg, .context = d };
    ggml_vk_buft_init(d);
    g_vk.devices[g_vk.n_devices++] = d;
}

// the identity of a physical device: the same GPU can be listed twice, by two drivers
struct vk_identity {
    VkPhysicalDeviceProperties2       props;
    VkPhysicalDeviceDriverProperties  driver;
    VkPhysicalDeviceIDProperties      id;
};

static void get_identity(VkPhysicalDevice pd, struct vk_identity * out) {
    memset(out, 0, sizeof(*out));
    out->id     = (VkPhysicalDeviceIDProperties) { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
    out->driver = (VkPhysicalDeviceDriverProperties) { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = &out->id };
    out->props  = (VkPhysicalDeviceProperties2) { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &out->driver };
    ggml_vk_fn.vkGetPhysicalDeviceProperties2(pd, &out->props);
}

static bool same_gpu(const struct vk_identity * a, const struct vk_identity * b) {
    if (a->driver.driverID == VK_DRIVER_ID_MOLTENVK && b->driver.driverID == VK_DRIVER_ID_MOLTENVK) {
        return false; // MoltenVK may give distinct GPUs of one card the same UUID
    }
    return memcmp(a->id.deviceUUID, b->id.deviceUUID, VK_UUID_SIZE) == 0 ||
           (a->id.deviceLUIDValid && b->id.deviceLUIDValid && memcmp(a->id.deviceLUID, b->id.deviceLUID, VK_LUID_SIZE) == 0);
}

// which of two drivers of one GPU is used: the lower rank (as upstream ranks them)
static int driver_rank(uint32_t vendor, VkDriverId driver) {
    if (driver == VK_DRIVER_ID_MESA_DOZEN) {
        return 100;
    }
    switch (vendor) {
        case 0x1002: // AMD
            return driver == VK_DRIVER_ID_MESA_RADV ? 1 : driver == VK_DRIVER_ID_AMD_OPEN_SOURCE ? 2 :
                   driver == VK_DRIVER_ID_AMD_PROPRIETARY ? 3 : INT_MAX;
        case 0x8086: // Intel
            return driver == VK_DRIVER_ID_INTEL_OPEN_SOURCE_MESA ? 1 : driver == VK_DRIVER_ID_INTEL_PROPRIETARY_WINDOWS ? 2 : INT_MAX;
        case 0x10de: // NVIDIA
            return driver == VK_DRIVER_ID_NVIDIA_PROPRIETARY ? 1 : driver == VK_DRIVER_ID_MESA_NVK ? 2 : INT_MAX;
        case 0x5143: // Qualcomm
            return driver == VK_DRIVER_ID_QUALCOMM_PROPRIETARY ? 1 : driver == VK_DRIVER_ID_MESA_TURNIP ? 2 : INT_MAX;
        default:
            return INT_MAX;
    }
}

// the physical devices to use, in order: those GGML_VK_VISIBLE_DEVICES names,
// else the usable discrete and integrated GPUs (one driver per GPU), else the
// first device that is not a CPU driver
static size_t select_devices(VkPhysicalDevice * all, uint32_t n_all, uint32_t * order) {
    const char * env = getenv("GGML_VK_VISIBLE_DEVICES");
    size_t n = 0;
    if (env != NULL) {
        const char * p = env;
        while (*p != '\0') {
            char * end = NULL;
            const long v = strtol(p, &end, 10);
            if (end == p) {
                GGML_LOG_WARN("ggml_vulkan: GGML_VK_VISIBLE_DEVICES='%s': not a list of device indices; ignored from '%s'\n", env, p);
                break;
            }
            if (v < 0 || v >= (long) n_all) {
                GGML_LOG_WARN("ggml_vulkan: GGML_VK_VISIBLE_DEVICES: no device %ld (%u devices)\n", v, n_all);
            } else {
                bool dup = false;
                for (size_t i = 0; i < n; i++) {
                    dup = dup || order[i] == (uint32_t) v;
                }
                if (!dup) {
                    order[n++] = (uint32_t) v;
                }
            }
            p = end;
            while (*p == ',' || isspace((unsigned char) *p)) {
                p++;
            }
        }
        return n;
    }
    for (uint32_t i = 0; i < n_all; i++) {
        VkPhysicalDeviceProperties props;
        ggml_vk_fn.vkGetPhysicalDeviceProperties(all[i], &props);
        uint32_t queue_family = 0;
        if ((props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU && props.deviceType != VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) ||
            device_unusable_reason(all[i], &props, &queue_family) != NULL) {
            continue;
        }
        struct vk_identity cand; // Vulkan 1.2 here: the driver properties are core
        get_identity(all[i], &cand);
        size_t k = 0;
        struct vk_identity old;
        for (; k < n; k++) {
            get_identity(all[order[k]], &old);
            if (same_gpu(&old, &cand)) {
                break;
            }
        }
        if (k == n) {
            order[n++] = i;
        } else if (driver_rank(old.props.properties.vendorID, cand.driver.driverID) <
                   driver_rank(old.props.properties.vendorID, old.driver.driverID)) {
            // the better driver replaces the other, at the end of the list
            memmove(&order[k], &order[k + 1], (n - k - 1) * sizeof(*order));
            order[n - 1] = i;
        }
    }
    for (uint32_t i = 0; i < n_all && n == 0; i++) {
        VkPhysicalDeviceProperties props;
        ggml_vk_fn.vkGetPhysicalDeviceProperties(all[i], &props);
        if (props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
            order[n++] = i;
        }
    }
    if (n == 0) {
        GGML_LOG_INFO("ggml_vulkan: no Vulkan device: the driver lists only CPU devices (GGML_VK_VISIBLE_DEVICES names one by its index)\n");
    }
    return n;
}

static void registry_init(void) {
    VkInstance instance = ggml_vk_instance();
    if (instance == VK_NULL_HANDLE) {
        return; // logged by ggml_vk_instance
    }
    uint32_t n_all = 0;
    if (ggml_vk_fn.vkEnumeratePhysicalDevices(instance, &n_all, NULL) != VK_SUCCESS || n_all == 0) {
        GGML_LOG_INFO("ggml_vulkan: no Vulkan device: the driver lists no physical device\n");
        return;
    }
    VkPhysicalDevice * all = (VkPhysicalDevice *) calloc(n_all, sizeof(VkPhysicalDevice));
    uint32_t * order = (uint32_t *) calloc(n_all, sizeof(uint32_t));
    if (all == NULL || order == NULL || ggml_vk_fn.vkEnumeratePhysicalDevices(instance, &n_all, all) != VK_SUCCESS) {
        GGML_LOG_ERROR("ggml_vulkan: cannot enumerate the physical devices\n");
        free(all);
        free(order);
        return;
    }
    const size_t n = select_devices(all, n_all, order);
    for (size_t i = 0; i < n; i++) {
        add_device(all[order[i]], order[i]);
    }
    free(all);
    free(order);
}

static void vk_registry_ensure(void) {
    pthread_once(&g_vk_once, registry_init);
}

size_t ggml_vk_device_count(void) {
    vk_registry_ensure();
    return g_vk.n_devices;
}

struct ggml_vk_device * ggml_vk_device_get(size_t index) {
    vk_registry_ensure();
    return index < g_vk.n_devices ? g_vk.devices[index] : NULL;
}

//
// registry interface
//

static const char * vk_reg_get_name(ggml_backend_reg_t reg) {
    GGML_UNUSED(reg);
    return GGML_VK_NAME;
}

static size_t vk_reg_get_device_count(ggml_backend_reg_t reg) {
    GGML_UNUSED(reg);
    return ggml_vk_device_count();
}

static ggml_backend_dev_t vk_reg_get_device(ggml_backend_reg_t reg, size_t index) {
    GGML_UNUSED(reg);
    struct ggml_vk_device * d = ggml_vk_device_get(index);
    GGML_ASSERT(d != NULL && "device index out of range");
    return &d->dev;
}

static struct ggml_backend_reg g_vk_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name         = vk_reg_get_name,
        .get_device_count = vk_reg_get_device_count,
        .get_device       = vk_reg_get_device,
        .get_proc_address = NULL,
    },
    .context = NULL,
};

ggml_backend_reg_t ggml_backend_vk_reg(void) {
    vk_registry_ensure();
    return &g_vk_reg;
}

//
// public API
//

ggml_backend_t ggml_backend_vk_init(size_t dev_num) {
    struct ggml_vk_device * d = ggml_vk_device_get(dev_num);
    if (d == NULL) {
        GGML_LOG_ERROR("%s: device index %zu out of range (%zu Vulkan devices)\n", __func__, dev_num, ggml_vk_device_count());
        return NULL;
    }
    return vk_dev_init_backend(&d->dev, NULL);
}

int ggml_backend_vk_get_device_count(void) {
    return (int) ggml_vk_device_count();
}

void ggml_backend_vk_get_device_description(int device, char * description, size_t description_size) {
    struct ggml_vk_device * d = device >= 0 ? ggml_vk_device_get((size_t) device) : NULL;
    if (description_size > 0) {
        snprintf(description, description_size, "%s", d != NULL ? d->description : "");
    }
}

void ggml_backend_vk_get_device_memory(int device, size_t * free, size_t * total) {
    struct ggml_vk_device * d = device >= 0 ? ggml_vk_device_get((size_t) device) : NULL;
    if (d == NULL) {
        *free = 0;
        *total = 0;
        return;
    }
    vk_dev_get_memory(&d->dev, free, total);
}

ggml_backend_buffer_type_t ggml_backend_vk_buffer_type(size_t dev_num) {
    struct ggml_vk_device * d = ggml_vk_device_get(dev_num);
    if (d == NULL) {
        GGML_LOG_ERROR("%s: device index %zu out of range\n", __func__, dev_num);
        return NULL;
    }
    return &d->buft;
}

ggml_backend_buffer_type_t ggml_backend_vk_host_buffer_type(void) {
    return ggml_vk_device_count() > 0 ? ggml_vk_host_buft() : NULL;
}
