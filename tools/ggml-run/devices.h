#pragma once

// devices.h: which devices of the registry run the model, and which layers
// each one gets.
//
// The model's layers (plus the output layer, counted as one more, as
// upstream's -ngl counts it) go to "layer devices": by default every GPU and
// integrated GPU of the registry, or the devices named with --device. The
// last n_gpu_layers layers are spread over them in proportion to
// --tensor-split (default: their free memory); the other layers, and the
// token embeddings, stay on the CPU. Accelerators that work on host memory
// (BLAS, ...) join the scheduler as helpers without layers of their own,
// named or not (as upstream's llama.cpp adds them); "none" leaves them out
// too, for the CPU alone.

#include "ggml-backend.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct run_devices {
    ggml_backend_dev_t * layer;   // layer devices, the CPU always last
    int                  n_layer;
    ggml_backend_dev_t * helper;  // accelerators used by the scheduler only
    int                  n_helper;
};

// Chooses the devices. names: NULL for the default choice, "none" for the
// CPU only (no helpers), else a comma-separated list of device names
// (case-insensitive) in the order the layers should go; a host-memory
// accelerator named there is a helper. Reports unknown names.
bool run_devices_select(const char * names, struct run_devices * devs);

void run_devices_free(struct run_devices * devs);

// Fills layer_dev[0 .. n_layer] (n_layer + 1 entries, the output layer
// last) with indices into devs->layer. n_gpu_layers < 0 means all;
// tensor_split is NULL or a comma-separated list of non-negative
// proportions, one per non-CPU layer device.
bool run_devices_assign_layers(const struct run_devices * devs, int64_t n_layer, int64_t n_gpu_layers,
                               const char * tensor_split, int * layer_dev);

// The share of each non-CPU layer device: tensor_split parsed (see
// run_devices_assign_layers), or by free memory; *total their sum.
bool run_devices_shares(const struct run_devices * devs, const char * tensor_split, float * share, double * total);

// --split-mode tensor: the non-CPU layer devices (two or more) become one
// meta device, whose weights get_split_state splits; the CPU stays last.
bool run_devices_make_meta(struct run_devices * devs, ggml_backend_meta_get_split_state_t get_split_state, void * user_data);

// index of the CPU in devs->layer
static inline int run_devices_cpu(const struct run_devices * devs) {
    return devs->n_layer - 1;
}

#ifdef __cplusplus
}
#endif
