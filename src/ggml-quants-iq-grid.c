// ggml-quants-iq-grid.c: the IQ grids expanded from their compact codes.
//
// Two forms. The dequantization grids (bytes of the values a code stands
// for) are built once on first use under pthread_once: every dequantizer and
// dot product of the IQ1/IQ2/IQ3 types reads them. The quantizer's search
// tables (grid points as levels 2*code + 1, the map from code vectors to
// grid points, the neighbour lists of the code vectors off the grid) are
// built by ggml_quantize_init for one type and freed by ggml_quantize_free,
// both under ggml-quants.c's lock, with upstream's semantics.
//
// The neighbour lists are upstream's: for a code vector off the grid, the
// grid points at its n_nearest smallest distinct squared distances (integer,
// in level units), ordered by distance and then by index. Upstream builds
// them by sorting all points for every vector; here a histogram of the
// distances picks the cut and one scan per distance lists the points. Only
// the code vectors a quantizer can produce (codes below max_code) get a list.

#include "ggml-quants-iq.h"

#include <pthread.h>
#include <stdlib.h>

//
// dequantization grids
//

static uint64_t g_grid_iq2xxs[256];
static uint64_t g_grid_iq2xs[512];
static uint64_t g_grid_iq2s[1024];
static uint64_t g_grid_iq1s[2048];
static uint32_t g_grid_iq3xxs[256];
static uint32_t g_grid_iq3s[512];
static struct ggml_iq_grids g_grids;
static pthread_once_t g_grids_once = PTHREAD_ONCE_INIT;

static uint64_t expand_point8(uint16_t codes, const uint8_t * value_of_code) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t) value_of_code[(codes >> 2*i) & 3] << 8*i;
    }
    return v;
}

static uint32_t expand_point4(uint16_t codes, const uint8_t * value_of_code) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        v |= (uint32_t) value_of_code[(codes >> 3*i) & 7] << 8*i;
    }
    return v;
}

static void build_grids(void) {
    static const uint8_t iq2_values[4]    = { 8, 25, 43, 0 };
    static const uint8_t iq1_values[4]    = { 0xff, 0x00, 0x01, 0 };
    static const uint8_t iq3xxs_values[8] = { 4, 12, 20, 28, 36, 44, 52, 62 };
    static const uint8_t iq3s_values[8]   = { 1, 3, 5, 7, 9, 11, 13, 15 };
    for (int i = 0; i < 256;  i++) g_grid_iq2xxs[i] = expand_point8(ggml_iq2xxs_codes[i], iq2_values);
    for (int i = 0; i < 512;  i++) g_grid_iq2xs[i]  = expand_point8(ggml_iq2xs_codes[i],  iq2_values);
    for (int i = 0; i < 1024; i++) g_grid_iq2s[i]   = expand_point8(ggml_iq2s_codes[i],   iq2_values);
    for (int i = 0; i < 2048; i++) g_grid_iq1s[i]   = expand_point8(ggml_iq1s_codes[i],   iq1_values);
    for (int i = 0; i < 256;  i++) g_grid_iq3xxs[i] = expand_point4(ggml_iq3xxs_codes[i], iq3xxs_values);
    for (int i = 0; i < 512;  i++) g_grid_iq3s[i]   = expand_point4(ggml_iq3s_codes[i],   iq3s_values);
    g_grids = (struct ggml_iq_grids) {
        .iq2xxs = g_grid_iq2xxs, .iq2xs = g_grid_iq2xs, .iq2s = g_grid_iq2s, .iq1s = g_grid_iq1s,
        .iq3xxs = g_grid_iq3xxs, .iq3s = g_grid_iq3s,
    };
}

const struct ggml_iq_grids * ggml_iq_grids(void) {
    pthread_once(&g_grids_once, build_grids);
    return &g_grids;
}

//
// quantizer search tables
//

enum { IQ_SLOT_IQ2XXS, IQ_SLOT_IQ2XS, IQ_SLOT_IQ2S, IQ_SLOT_IQ1S, IQ_SLOT_IQ3XXS, IQ_SLOT_IQ3S, IQ_SLOT_COUNT };

struct iq_search_source {
    const uint16_t * codes;
    int n_points;
    int dim;
    int bits;
    int max_code;  // codes a quantizer produces: 0 .. max_code-1
    int n_nearest; // distinct distances in a neighbour list
};

static const struct iq_search_source g_sources[IQ_SLOT_COUNT] = {
    [IQ_SLOT_IQ2XXS] = { ggml_iq2xxs_codes, 256,  8, 2, 3, 2 },
    [IQ_SLOT_IQ2XS]  = { ggml_iq2xs_codes,  512,  8, 2, 3, 2 },
    [IQ_SLOT_IQ2S]   = { ggml_iq2s_codes,   1024, 8, 2, 3, 1 },
    [IQ_SLOT_IQ1S]   = { ggml_iq1s_codes,   2048, 8, 2, 3, 3 },
    [IQ_SLOT_IQ3XXS] = { ggml_iq3xxs_codes, 256,  4, 3, 8, 2 },
    [IQ_SLOT_IQ3S]   = { ggml_iq3s_codes,   512,  4, 3, 8, 3 },
};

// guarded by ggml-quants.c's lock (written in init/free, read after init)
static struct ggml_iq_search * g_search[IQ_SLOT_COUNT];

static int search_slot(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_IQ2_XXS: return IQ_SLOT_IQ2XXS;
        case GGML_TYPE_IQ2_XS:  return IQ_SLOT_IQ2XS;
        case GGML_TYPE_IQ2_S:   return IQ_SLOT_IQ2S;
        case GGML_TYPE_IQ1_S:
        case GGML_TYPE_IQ1_M:   return IQ_SLOT_IQ1S;
        case GGML_TYPE_IQ3_XXS: return IQ_SLOT_IQ3XXS;
        case GGML_TYPE_IQ3_S:   return IQ_SLOT_IQ3S;
        default:                return -1;
    }
}

const struct ggml_iq_search * ggml_iq_search_get(enum ggml_type type) {
    const int slot = search_slot(type);
    return slot < 0 ? NULL : g_search[slot];
}

static void free_search(struct ggml_iq_search * s) {
    if (s) {
        free((void *) s->points);
        free((void *) s->map);
        free((void *) s->neighbours);
        free(s);
    }
}

// is every code of the packed vector below max_code?
static bool codes_reachable(int packed, const struct iq_search_source * src) {
    for (int i = 0; i < src->dim; i++) {
        if (((packed >> src->bits*i) & ((1 << src->bits) - 1)) >= src->max_code) {
            return false;
        }
    }
    return true;
}

// squared distances (level units) from the vector `packed` to every point
static void distances_to_points(int packed, const struct iq_search_source * src, const int8_t * points, int * d2) {
    int8_t pos[8];
    for (int i = 0; i < src->dim; i++) {
        pos[i] = (int8_t) (2*((packed >> src->bits*i) & ((1 << src->bits) - 1)) + 1);
    }
    for (int j = 0; j < src->n_points; j++) {
        int d = 0;
        for (int i = 0; i < src->dim; i++) {
            const int diff = points[src->dim*j + i] - pos[i];
            d += diff*diff;
        }
        d2[j] = d;
    }
}

// the largest distance in the list: the n_nearest-th smallest distinct one
// (or the largest there is); *count gets the list's length
static int neighbour_cut(const int * d2, int n_points, int n_nearest, int * hist, int hist_size, int * count) {
    memset(hist, 0, (size_t) hist_size*sizeof(int));
    for (int j = 0; j < n_points; j++) {
        hist[d2[j]]++;
    }
    int seen = 0, cut = 0, n = 0;
    for (int d = 0; d < hist_size && seen < n_nearest; d++) {
        if (hist[d]) {
            seen++;
            cut = d;
            n += hist[d];
        }
    }
    *count = n;
    return cut;
}

static struct ggml_iq_search * build_search(const struct iq_search_source * src) {
    const int map_size  = 1 << (src->bits*src->dim);
    const int hist_size = src->dim*(2*(1 << src->bits))*(2*(1 << src->bits)) + 1;
    struct ggml_iq_search * s = calloc(1, sizeof(*s));
    int8_t  * points = malloc((size_t) src->n_points*(size_t) src->dim);
    int32_t * map    = malloc((size_t) map_size*sizeof(int32_t));
    int     * d2     = malloc((size_t) src->n_points*sizeof(int));
    int     * hist   = malloc((size_t) hist_size*sizeof(int));
    uint16_t * neighbours = NULL;
    if (!s || !points || !map || !d2 || !hist) {
        goto fail;
    }
    for (int j = 0; j < src->n_points; j++) {
        for (int i = 0; i < src->dim; i++) {
            points[src->dim*j + i] = (int8_t) (2*((src->codes[j] >> src->bits*i) & ((1 << src->bits) - 1)) + 1);
        }
    }
    for (int u = 0; u < map_size; u++) {
        map[u] = INT32_MIN;
    }
    for (int j = 0; j < src->n_points; j++) {
        map[src->codes[j]] = j;
    }

    // first pass: sizes; second: the lists
    size_t total = 0;
    for (int u = 0; u < map_size; u++) {
        if (map[u] != INT32_MIN || !codes_reachable(u, src)) {
            continue;
        }
        int n;
        distances_to_points(u, src, points, d2);
        neighbour_cut(d2, src->n_points, src->n_nearest, hist, hist_size, &n);
        total += 1 + (size_t) n;
    }
    neighbours = malloc(total*sizeof(uint16_t));
    if (!neighbours) {
        goto fail;
    }
    size_t at = 0;
    for (int u = 0; u < map_size; u++) {
        if (map[u] != INT32_MIN || !codes_reachable(u, src)) {
            continue;
        }
        int n;
        distances_to_points(u, src, points, d2);
        const int cut = neighbour_cut(d2, src->n_points, src->n_nearest, hist, hist_size, &n);
        map[u] = -(int32_t) (at + 1);
        neighbours[at++] = (uint16_t) n;
        for (int d = 0; d <= cut; d++) {
            if (!hist[d]) {
                continue;
            }
            for (int j = 0; j < src->n_points; j++) {
                if (d2[j] == d) {
                    neighbours[at++] = (uint16_t) j;
                }
            }
        }
    }
    free(d2);
    free(hist);
    *s = (struct ggml_iq_search) {
        .dim = src->dim, .bits = src->bits, .n_points = src->n_points,
        .points = points, .map = map, .neighbours = neighbours,
    };
    return s;

fail:
    free(s);
    free(points);
    free(map);
    free(d2);
    free(hist);
    free(neighbours);
    return NULL;
}

void ggml_iq_search_init(enum ggml_type type) {
    const int slot = search_slot(type);
    if (slot < 0 || g_search[slot]) {
        return;
    }
    g_search[slot] = build_search(&g_sources[slot]);
    if (!g_search[slot]) {
        GGML_LOG_ERROR("ggml_quantize_init: out of memory building the %s search tables\n", ggml_type_name(type));
    }
}

void ggml_iq_search_free(void) {
    for (int i = 0; i < IQ_SLOT_COUNT; i++) {
        free_search(g_search[i]);
        g_search[i] = NULL;
    }
}
