// vk-loader.c: the Vulkan loader, opened at run time.
//
// libggml does not link libvulkan: the loader (libvulkan.so.1) is opened
// with dlopen the first time the registry asks for Vulkan devices, and every
// entry point comes from vkGetInstanceProcAddr on the one instance the
// process makes (device-level calls go through the loader's dispatch, which
// serves every device). Without a loader, without a driver, or with a
// driver older than Vulkan 1.2, there is no instance: one log line says why
// and the registry lists no Vulkan device.

#include "vk-impl.h"

#include <dlfcn.h>

struct ggml_vk_functions ggml_vk_fn;

static pthread_once_t g_instance_once = PTHREAD_ONCE_INIT;
static VkInstance     g_instance      = VK_NULL_HANDLE;

static bool load_instance_functions(VkInstance instance) {
    bool ok = true;
#define GGML_VK_LOAD_FN(name) \
    ggml_vk_fn.name = (PFN_##name) ggml_vk_fn.vkGetInstanceProcAddr(instance, #name); \
    if (ggml_vk_fn.name == NULL) { GGML_LOG_WARN("ggml_vulkan: the loader lacks %s\n", #name); ok = false; }
    GGML_VK_INSTANCE_FUNCS(GGML_VK_LOAD_FN)
    GGML_VK_DEVICE_FUNCS(GGML_VK_LOAD_FN)
#undef GGML_VK_LOAD_FN
    return ok;
}

static void instance_init(void) {
    void * lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (lib == NULL) {
        GGML_LOG_INFO("ggml_vulkan: no Vulkan device: the Vulkan loader (libvulkan.so.1) is not installed\n");
        return;
    }
    // dlsym returns void *; the conversion to a function pointer goes through memcpy (ISO C)
    void * sym = dlsym(lib, "vkGetInstanceProcAddr");
    if (sym == NULL) {
        GGML_LOG_INFO("ggml_vulkan: no Vulkan device: the loader exports no vkGetInstanceProcAddr\n");
        dlclose(lib);
        return;
    }
    memcpy(&ggml_vk_fn.vkGetInstanceProcAddr, &sym, sizeof(sym));
    ggml_vk_fn.vkCreateInstance = (PFN_vkCreateInstance) ggml_vk_fn.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance");
    ggml_vk_fn.vkEnumerateInstanceVersion =
        (PFN_vkEnumerateInstanceVersion) ggml_vk_fn.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion");

    uint32_t version = VK_API_VERSION_1_0;
    if (ggml_vk_fn.vkEnumerateInstanceVersion != NULL) {
        ggml_vk_fn.vkEnumerateInstanceVersion(&version);
    }
    if (ggml_vk_fn.vkCreateInstance == NULL || version < VK_API_VERSION_1_2) {
        GGML_LOG_INFO("ggml_vulkan: no Vulkan device: the loader supports Vulkan %u.%u, 1.2 is needed\n",
                      VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
        dlclose(lib);
        return;
    }

    const VkApplicationInfo app = {
        .sType            = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "ggml",
        .pEngineName      = "ggml",
        .apiVersion       = VK_API_VERSION_1_2,
    };
    const VkInstanceCreateInfo info = {
        .sType            = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    VkInstance instance = VK_NULL_HANDLE;
    const VkResult r = ggml_vk_fn.vkCreateInstance(&info, NULL, &instance);
    if (r != VK_SUCCESS) {
        GGML_LOG_INFO("ggml_vulkan: no Vulkan device: vkCreateInstance failed (VkResult %d): no usable driver\n", (int) r);
        dlclose(lib);
        return;
    }
    if (!load_instance_functions(instance)) {
        GGML_LOG_INFO("ggml_vulkan: no Vulkan device: the loader lacks entry points of Vulkan 1.2\n");
        PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance) ggml_vk_fn.vkGetInstanceProcAddr(instance, "vkDestroyInstance");
        if (destroy != NULL) {
            destroy(instance, NULL);
        }
        dlclose(lib);
        return;
    }
    // the library stays open for the life of the process, like the instance
    g_instance = instance;
}

VkInstance ggml_vk_instance(void) {
    pthread_once(&g_instance_once, instance_init);
    return g_instance;
}
