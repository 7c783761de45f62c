#pragma once

// split-tensor.h: --split-mode tensor: the layer devices made one meta device
// (ggml_backend_meta_device), each layer's weights split across them as
// llama.cpp splits them for its tensor-split mode: attention by heads (Q, K,
// V and their biases by rows, the KV cache by KV heads, the output
// projection along its input: partial sums), the feed-forward by rows of
// gate and up and along the input of down (partial sums); norms, the token
// embeddings and the output matrix whole on each. The meta device adds the
// partial sums (over MPI devices, by MPI between their workers).

#include "ggml-backend.h"

#include <stdbool.h>

struct run_model;

// the devices' shares of heads and feed-forward rows
struct run_split_plan;

// Makes model->devs' layer devices one meta device, with the shares of
// tensor_split (NULL: by free memory). False (reported) for fewer than two
// devices besides the CPU, or an architecture or shapes it cannot split.
bool run_split_tensor_setup(struct run_model * model, const char * tensor_split);

void run_split_plan_free(struct run_split_plan * plan);
