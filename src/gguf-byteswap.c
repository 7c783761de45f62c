// gguf-byteswap.c: converting tensor data between the byte order of GGUF
// files (little-endian) and the host's, for big-endian hosts (s390x).
//
// Every multi-byte value the code reads from a type's data is listed here:
// plain numbers (F32, F16, BF16, I16..I64, F64) swap element by element; a
// quantized block swaps its fp16 scales and the integer fields that the
// quantizers store and the kernels load as whole integers, at the width they
// are loaded with (the 32 high bits of Q5_0/Q5_1, read through memcpy into a
// uint32_t; the high scale bits of IQ4_XS; the float scale and the int16 sums
// of Q8_K; the uint16 words of IQ2_XS and IQ1_S; the uint32 words of IQ2_XXS
// and the sign words of IQ3_XXS; the four uint16 scale words of IQ1_M). Byte
// arrays (codes, packed scales, e8m0/ue4m3 scales) are read byte by byte
// everywhere and stay as they are. A type not listed is refused with a line
// naming the tensor and type, so that a big-endian host never computes with
// data it has read wrong.

#include "gguf-impl.h"
#include "ggml-common.h"

#include <stddef.h>

// a run of count values of width bytes at offset in each block
struct gguf_swap_field {
    size_t offset;
    size_t width;
    size_t count;
};

#define GGUF_SWAP_MAX_FIELDS 3

struct gguf_swap_layout {
    size_t                 block_size; // bytes of one block (of one element for plain types)
    int                    n_fields;
    struct gguf_swap_field fields[GGUF_SWAP_MAX_FIELDS];
};

#define GGUF_FIELD(block, member, width, count) { offsetof(block, member), (width), (count) }

// the layout of the multi-byte fields of a type; false for a type whose
// layout is not known to convert
static bool gguf_swap_layout_of(enum ggml_type type, struct gguf_swap_layout * l) {
    const size_t h = sizeof(ggml_half);
    switch (type) {
        case GGML_TYPE_I8:
        case GGML_TYPE_MXFP4: // an e8m0 byte and 4-bit codes
            *l = (struct gguf_swap_layout){ 1, 0, { { 0, 0, 0 } } };
            return true;
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
        case GGML_TYPE_I16:
            *l = (struct gguf_swap_layout){ 2, 1, { { 0, 2, 1 } } };
            return true;
        case GGML_TYPE_F32:
        case GGML_TYPE_I32:
            *l = (struct gguf_swap_layout){ 4, 1, { { 0, 4, 1 } } };
            return true;
        case GGML_TYPE_F64:
        case GGML_TYPE_I64:
            *l = (struct gguf_swap_layout){ 8, 1, { { 0, 8, 1 } } };
            return true;
        case GGML_TYPE_Q4_0:
            *l = (struct gguf_swap_layout){ sizeof(block_q4_0), 1, { GGUF_FIELD(block_q4_0, d, h, 1) } };
            return true;
        case GGML_TYPE_Q4_1: // d and m
            *l = (struct gguf_swap_layout){ sizeof(block_q4_1), 1, { GGUF_FIELD(block_q4_1, d, h, 2) } };
            return true;
        case GGML_TYPE_Q5_0:
            *l = (struct gguf_swap_layout){ sizeof(block_q5_0), 2,
                                            { GGUF_FIELD(block_q5_0, d, h, 1), GGUF_FIELD(block_q5_0, qh, 4, 1) } };
            return true;
        case GGML_TYPE_Q5_1:
            *l = (struct gguf_swap_layout){ sizeof(block_q5_1), 2,
                                            { GGUF_FIELD(block_q5_1, d, h, 2), GGUF_FIELD(block_q5_1, qh, 4, 1) } };
            return true;
        case GGML_TYPE_Q8_0:
            *l = (struct gguf_swap_layout){ sizeof(block_q8_0), 1, { GGUF_FIELD(block_q8_0, d, h, 1) } };
            return true;
        case GGML_TYPE_Q8_1: // d and s
            *l = (struct gguf_swap_layout){ sizeof(block_q8_1), 1, { GGUF_FIELD(block_q8_1, d, h, 2) } };
            return true;
        case GGML_TYPE_Q2_K: // d and dmin
            *l = (struct gguf_swap_layout){ sizeof(block_q2_K), 1, { GGUF_FIELD(block_q2_K, d, h, 2) } };
            return true;
        case GGML_TYPE_Q3_K:
            *l = (struct gguf_swap_layout){ sizeof(block_q3_K), 1, { GGUF_FIELD(block_q3_K, d, h, 1) } };
            return true;
        case GGML_TYPE_Q4_K:
            *l = (struct gguf_swap_layout){ sizeof(block_q4_K), 1, { GGUF_FIELD(block_q4_K, d, h, 2) } };
            return true;
        case GGML_TYPE_Q5_K:
            *l = (struct gguf_swap_layout){ sizeof(block_q5_K), 1, { GGUF_FIELD(block_q5_K, d, h, 2) } };
            return true;
        case GGML_TYPE_Q6_K:
            *l = (struct gguf_swap_layout){ sizeof(block_q6_K), 1, { GGUF_FIELD(block_q6_K, d, h, 1) } };
            return true;
        case GGML_TYPE_Q8_K:
            *l = (struct gguf_swap_layout){ sizeof(block_q8_K), 2,
                                            { GGUF_FIELD(block_q8_K, d, sizeof(float), 1),
                                              GGUF_FIELD(block_q8_K, bsums, sizeof(int16_t), QK_K/16) } };
            return true;
        case GGML_TYPE_IQ4_NL:
            *l = (struct gguf_swap_layout){ sizeof(block_iq4_nl), 1, { GGUF_FIELD(block_iq4_nl, d, h, 1) } };
            return true;
        case GGML_TYPE_IQ4_XS:
            *l = (struct gguf_swap_layout){ sizeof(block_iq4_xs), 2,
                                            { GGUF_FIELD(block_iq4_xs, d, h, 1),
                                              GGUF_FIELD(block_iq4_xs, scales_h, sizeof(uint16_t), 1) } };
            return true;
        case GGML_TYPE_NVFP4: // UE4M3 scale bytes and 4-bit codes
            *l = (struct gguf_swap_layout){ 1, 0, { { 0, 0, 0 } } };
            return true;
        case GGML_TYPE_Q1_0:
            *l = (struct gguf_swap_layout){ sizeof(block_q1_0), 1, { GGUF_FIELD(block_q1_0, d, h, 1) } };
            return true;
        case GGML_TYPE_Q2_0:
            *l = (struct gguf_swap_layout){ sizeof(block_q2_0), 1, { GGUF_FIELD(block_q2_0, d, h, 1) } };
            return true;
        case GGML_TYPE_IQ2_XXS: // qs: per 32 values two uint32 (grid indices; signs and scale)
            *l = (struct gguf_swap_layout){ sizeof(block_iq2_xxs), 2,
                                            { GGUF_FIELD(block_iq2_xxs, d, h, 1),
                                              GGUF_FIELD(block_iq2_xxs, qs, sizeof(uint32_t), QK_K/16) } };
            return true;
        case GGML_TYPE_IQ2_XS: // qs: a uint16 of grid index and signs per 8 values
            *l = (struct gguf_swap_layout){ sizeof(block_iq2_xs), 2,
                                            { GGUF_FIELD(block_iq2_xs, d, h, 1),
                                              GGUF_FIELD(block_iq2_xs, qs, sizeof(uint16_t), QK_K/8) } };
            return true;
        case GGML_TYPE_IQ2_S:
            *l = (struct gguf_swap_layout){ sizeof(block_iq2_s), 1, { GGUF_FIELD(block_iq2_s, d, h, 1) } };
            return true;
        case GGML_TYPE_IQ3_XXS: // after 64 index bytes, per 32 values a uint32 of signs and scale
            *l = (struct gguf_swap_layout){ sizeof(block_iq3_xxs), 2,
                                            { GGUF_FIELD(block_iq3_xxs, d, h, 1),
                                              { offsetof(block_iq3_xxs, qs) + QK_K/4, sizeof(uint32_t), QK_K/32 } } };
            return true;
        case GGML_TYPE_IQ3_S:
            *l = (struct gguf_swap_layout){ sizeof(block_iq3_s), 1, { GGUF_FIELD(block_iq3_s, d, h, 1) } };
            return true;
        case GGML_TYPE_IQ1_S: // qh: a uint16 of high index bits, scale and shift sign per 32 values
            *l = (struct gguf_swap_layout){ sizeof(block_iq1_s), 2,
                                            { GGUF_FIELD(block_iq1_s, d, h, 1),
                                              GGUF_FIELD(block_iq1_s, qh, sizeof(uint16_t), QK_K/32) } };
            return true;
        case GGML_TYPE_IQ1_M: // scales: four uint16 (3-bit scales, the fp16 scale in their top bits)
            *l = (struct gguf_swap_layout){ sizeof(block_iq1_m), 1,
                                            { GGUF_FIELD(block_iq1_m, scales, sizeof(uint16_t), QK_K/64) } };
            return true;
        case GGML_TYPE_TQ1_0:
            *l = (struct gguf_swap_layout){ sizeof(block_tq1_0), 1, { GGUF_FIELD(block_tq1_0, d, h, 1) } };
            return true;
        case GGML_TYPE_TQ2_0:
            *l = (struct gguf_swap_layout){ sizeof(block_tq2_0), 1, { GGUF_FIELD(block_tq2_0, d, h, 1) } };
            return true;
        default:
            return false;
    }
}

static void gguf_reverse_bytes(uint8_t * p, size_t width) {
    for (size_t a = 0, b = width - 1; a < b; a++, b--) {
        const uint8_t tmp = p[a];
        p[a] = p[b];
        p[b] = tmp;
    }
}

static bool gguf_swap_check(const char * name, enum ggml_type type, size_t size, struct gguf_swap_layout * l) {
    if (!gguf_swap_layout_of(type, l)) {
        GGML_LOG_ERROR("gguf: tensor '%s' of type %s cannot be converted between little-endian (the file) and this "
                       "big-endian host\n", name, ggml_type_name(type));
        return false;
    }
    if (size % l->block_size != 0) {
        GGML_LOG_ERROR("gguf: tensor '%s' of type %s: %zu bytes are not whole blocks of %zu\n", name,
                       ggml_type_name(type), size, l->block_size);
        return false;
    }
    return true;
}

bool gguf_byteswap_supported(enum ggml_type type) {
    struct gguf_swap_layout l;
    return gguf_swap_layout_of(type, &l);
}

bool gguf_byteswap_tensor_data(const char * name, enum ggml_type type, void * data, size_t size) {
    struct gguf_swap_layout l;
    if (!gguf_swap_check(name, type, size, &l)) {
        return false;
    }
    uint8_t * block = (uint8_t *) data;
    for (size_t i = 0; i < size / l.block_size; i++, block += l.block_size) {
        for (int f = 0; f < l.n_fields; f++) {
            const struct gguf_swap_field * fd = &l.fields[f];
            for (size_t k = 0; k < fd->count; k++) {
                gguf_reverse_bytes(block + fd->offset + k * fd->width, fd->width);
            }
        }
    }
    return true;
}

bool gguf_tensor_data_to_host(const char * name, enum ggml_type type, void * data, size_t size) {
    if (gguf_host_is_little_endian()) {
        return true;
    }
    return gguf_byteswap_tensor_data(name, type, data, size);
}
