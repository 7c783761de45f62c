// vk-ops.c: which nodes the Vulkan device computes (supports_op), and the
// recording of one node: both through the node's entry {supports, record}
// of the op table (vk-ops-record.c, vk-ops-train.c), so that the answer is
// exactly what can be recorded; the scheduler runs everything else elsewhere.
// Conditions common to every op, checked here: element counts and byte
// sizes fit 32 bits (the shaders index with uint) and every tensor fits one
// storage-buffer binding (maxStorageBufferRange: 128 MiB on lavapipe), strides and view offsets
// are multiples of the element size (the shaders index typed arrays; rows of
// quantized blocks need even offsets, MXFP4 ones none), and rows read as rows
// are contiguous.

#include "vk-impl.h"

// the unit of a tensor's strides and offset in the shaders (MXFP4 blocks,
// 17 bytes, hold no 16-bit field: read byte by byte)
static size_t index_unit(const struct ggml_tensor * t) {
    if (t->type == GGML_TYPE_MXFP4) {
        return 1;
    }
    return ggml_is_quantized(t->type) ? 2 : ggml_type_size(t->type);
}

// indexable by the shaders and bindable as one storage buffer (NULL is
// fine: an absent optional source)
static bool layout_ok(const struct ggml_vk_device * d, const struct ggml_tensor * t) {
    if (t == NULL) {
        return true;
    }
    const size_t unit = index_unit(t);
    if (ggml_nbytes(t) > d->max_buffer_size || (uint64_t) ggml_nelements(t) > UINT32_MAX ||
        (t->view_src != NULL && ggml_nbytes(t->view_src) > d->max_buffer_size)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->nb[i] % unit != 0 || t->ne[i] > UINT32_MAX) {
            return false;
        }
    }
    if (ggml_is_quantized(t->type) && t->nb[0] != ggml_type_size(t->type)) {
        return false;
    }
    return t->view_src == NULL || t->view_offs % unit == 0;
}

bool ggml_vk_supports_op(const struct ggml_vk_device * d, const struct ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_NONE: case GGML_OP_VIEW: case GGML_OP_RESHAPE: case GGML_OP_PERMUTE: case GGML_OP_TRANSPOSE:
            return true; // nothing to compute
        default:
            break;
    }
    const struct ggml_vk_op_impl * impl = ggml_vk_op_impl_of(op->op);
    if (impl == NULL || !impl->supports(op)) {
        return false;
    }
    if (!layout_ok(d, op)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (!layout_ok(d, op->src[i])) {
            return false;
        }
    }
    return true;
}

bool ggml_vk_record_node(struct ggml_vk_stream * s, struct ggml_tensor * node) {
    const struct ggml_vk_op_impl * impl = ggml_vk_op_impl_of(node->op);
    if (impl == NULL) {
        GGML_LOG_ERROR("ggml_vulkan: no kernel for %s\n", ggml_op_desc(node));
        return false;
    }
    return impl->record(s, node);
}
