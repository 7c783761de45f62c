// ggml-backend-meta.c: the meta backend's entry points (ggml-backend.h).
//
// Upstream's meta device splits every tensor across several devices and runs
// the graph on all of them with all-reduces in between. It is not implemented
// here yet: ggml_backend_meta_device reports that with one log line and NULL,
// which every caller must handle anyway (a device that cannot be created).
// The axis names are upstream's, as they appear in its logs.

#include "ggml-backend.h"
#include "ggml-impl.h"

const char * ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis) {
    switch (split_axis) {
        case GGML_BACKEND_SPLIT_AXIS_0:        return "0";
        case GGML_BACKEND_SPLIT_AXIS_1:        return "1";
        case GGML_BACKEND_SPLIT_AXIS_2:        return "2";
        case GGML_BACKEND_SPLIT_AXIS_3:        return "3";
        case GGML_BACKEND_SPLIT_AXIS_MIRRORED: return "MIRRORED";
        case GGML_BACKEND_SPLIT_AXIS_PARTIAL:  return "PARTIAL";
        case GGML_BACKEND_SPLIT_AXIS_NONE:     return "NONE";
        case GGML_BACKEND_SPLIT_AXIS_UNKNOWN:  return "UNKNOWN";
    }
    GGML_ABORT("%s: invalid split axis %d", __func__, (int) split_axis);
}

ggml_backend_dev_t ggml_backend_meta_device(ggml_backend_dev_t * devs, size_t n_devs,
                                            ggml_backend_meta_get_split_state_t get_split_state, void * get_split_state_ud) {
    (void) devs;
    (void) get_split_state;
    (void) get_split_state_ud;
    GGML_LOG_ERROR("%s: the meta backend (tensors split across %zu devices) is not implemented in this ggml\n", __func__,
                   n_devs);
    return NULL;
}
