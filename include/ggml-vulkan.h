#pragma once

//
// ggml-vulkan.h: the Vulkan backend, one device per Vulkan physical device
// (Vulkan0, Vulkan1, ...). GGML_VK_VISIBLE_DEVICES (comma-separated indices
// of the physical devices) restricts and orders the devices.
//

#include "ggml.h"
#include "ggml-backend.h"

#ifdef  __cplusplus
extern "C" {
#endif

#define GGML_VK_NAME "Vulkan"
#define GGML_VK_MAX_DEVICES 16

    // a stream on device dev_num (NULL, with a log line, when there is none)
    GGML_BACKEND_API ggml_backend_t ggml_backend_vk_init(size_t dev_num);

    GGML_BACKEND_API bool ggml_backend_is_vk(ggml_backend_t backend);
    GGML_BACKEND_API int  ggml_backend_vk_get_device_count(void);
    GGML_BACKEND_API void ggml_backend_vk_get_device_description(int device, char * description, size_t description_size);
    GGML_BACKEND_API void ggml_backend_vk_get_device_memory(int device, size_t * free, size_t * total);

    // device memory of device dev_num
    GGML_BACKEND_API ggml_backend_buffer_type_t ggml_backend_vk_buffer_type(size_t dev_num);
    // host memory visible to the first device, for staging (pinned)
    GGML_BACKEND_API ggml_backend_buffer_type_t ggml_backend_vk_host_buffer_type(void);

    GGML_BACKEND_API ggml_backend_reg_t ggml_backend_vk_reg(void);

#ifdef  __cplusplus
}
#endif
