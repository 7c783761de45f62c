// imatrix.c: reading upstream's GGUF importance matrices (see imatrix.h).
//
// The whole file is loaded with gguf (its tensors are small: one row of
// floats per weight matrix) and each NAME.in_sum2 / NAME.counts pair turned
// into importances once; lookups are a linear scan by name (a model has a
// few hundred weight tensors, each looked up once).

#include "imatrix.h"
#include "quantize.h"

#include "gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gq_imatrix_entry {
    char  * name;
    float * values;  // n_per_row * n_mat
    int64_t n_per_row;
    int64_t n_mat;
};

struct gq_imatrix {
    struct gq_imatrix_entry * entries;
    int64_t n;
};

static const char k_sums_suffix[]   = ".in_sum2";
static const char k_counts_suffix[] = ".counts";

void gq_imatrix_free(struct gq_imatrix * im) {
    if (im == NULL) {
        return;
    }
    for (int64_t i = 0; i < im->n; i++) {
        free(im->entries[i].name);
        free(im->entries[i].values);
    }
    free(im->entries);
    free(im);
}

static bool ends_with(const char * s, const char * suffix) {
    const size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

// Zero importances are legitimate: llama-imatrix writes 0 for a column whose
// activations were all 0 (never used). The quantizers weigh each value's
// error by its importance, so a block whose importances are all 0 has no
// error to minimise and quantizes to zeros (upstream's tool writes such
// blocks as zeros). So that no block is lost, a 0 is raised to the smallest
// positive importance of the same matrix, and a matrix whose importances are
// all 0 (no signal at all) gets 1 for each, as one that saw no input.
// Scaling the importances of a block by a constant changes none of the
// quantizers' choices, so a block of zeros is quantized as without imatrix.
static void gq_imatrix_raise_zeros(float * v, int64_t n, const char * path, const char * base, int64_t mat) {
    float min_pos = 0.0f;
    int64_t n_zero = 0;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] == 0.0f) {
            n_zero++;
        } else if (min_pos == 0.0f || v[i] < min_pos) {
            min_pos = v[i];
        }
    }
    if (n_zero == 0) {
        return;
    }
    const float floor = n_zero == n ? 1.0f : min_pos;
    for (int64_t i = 0; i < n; i++) {
        v[i] = v[i] == 0.0f ? floor : v[i];
    }
    fprintf(stderr, "ggml-quantize: warning: %s: entry %s (matrix %lld): %lld of %lld importances are 0; %s\n", path,
            base, (long long) mat, (long long) n_zero, (long long) n,
            n_zero == n ? "the matrix is quantized as without importances" : "they are raised to the smallest positive one");
}

// importances of one entry from its sums and counts tensors
static bool gq_imatrix_entry_from(struct gq_imatrix_entry * e, const char * path, const char * base,
                                  const struct ggml_tensor * sums, const struct ggml_tensor * counts) {
    if (sums->type != GGML_TYPE_F32 || counts->type != GGML_TYPE_F32 || ggml_n_dims(sums) > 2 ||
        counts->ne[0] != 1 || ggml_nelements(counts) != sums->ne[1]) {
        gq_error("%s: entry %s: in_sum2 must be F32 [n, n_mat] and counts F32 [1, n_mat] "
                 "(got %s [%lld, %lld], %s [%lld, %lld])", path, base,
                 ggml_type_name(sums->type), (long long) sums->ne[0], (long long) sums->ne[1],
                 ggml_type_name(counts->type), (long long) counts->ne[0], (long long) counts->ne[1]);
        return false;
    }
    e->n_per_row = sums->ne[0];
    e->n_mat     = sums->ne[1];
    e->name      = strdup(base);
    e->values    = malloc(sizeof(float) * (size_t) (e->n_per_row * e->n_mat));
    if (e->name == NULL || e->values == NULL) {
        gq_error("out of memory reading %s", path);
        return false;
    }
    const float * s = (const float *) sums->data;
    const float * c = (const float *) counts->data;
    for (int64_t j = 0; j < e->n_mat; j++) {
        if (!isfinite(c[j]) || c[j] < 0.0f) {
            gq_error("%s: entry %s: the count of matrix %lld is %g (a count is finite and >= 0)", path, base,
                     (long long) j, (double) c[j]);
            return false;
        }
        for (int64_t i = 0; i < e->n_per_row; i++) {
            const float v = c[j] > 0.0f ? s[j*e->n_per_row + i] / c[j] : 1.0f;
            // a sum of squares over a positive count: finite and >= 0
            if (!isfinite(v) || v < 0.0f) {
                gq_error("%s: entry %s: the importance of column %lld (matrix %lld) is %g, from the sum %g over %g "
                         "tokens; importances are finite and >= 0 (a damaged file?)", path, base, (long long) i,
                         (long long) j, (double) v, (double) s[j*e->n_per_row + i], (double) c[j]);
                return false;
            }
            e->values[j*e->n_per_row + i] = v;
        }
        gq_imatrix_raise_zeros(e->values + j*e->n_per_row, e->n_per_row, path, base, j);
    }
    return true;
}

struct gq_imatrix * gq_imatrix_load(const char * path) {
    struct ggml_context * data = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &data };
    struct gguf_context * g = gguf_init_from_file(path, gp);
    if (g == NULL) {
        gq_error("cannot read the importance matrix %s (not a GGUF file, or unreadable)", path);
        return NULL;
    }
    struct gq_imatrix * im = calloc(1, sizeof(*im));
    const int64_t n_tensors = gguf_get_n_tensors(g);
    if (im != NULL) {
        im->entries = calloc((size_t) (n_tensors > 0 ? n_tensors : 1), sizeof(*im->entries));
    }
    bool ok = im != NULL && im->entries != NULL;
    if (!ok) {
        gq_error("out of memory reading %s", path);
    }
    for (int64_t t = 0; ok && t < n_tensors; t++) {
        const char * name = gguf_get_tensor_name(g, t);
        if (!ends_with(name, k_sums_suffix)) {
            continue;
        }
        const size_t base_len = strlen(name) - strlen(k_sums_suffix);
        char * counts_name = malloc(base_len + sizeof(k_counts_suffix));
        char * base        = malloc(base_len + 1);
        if (counts_name == NULL || base == NULL) {
            gq_error("out of memory reading %s", path);
            ok = false;
        } else {
            memcpy(base, name, base_len);
            base[base_len] = '\0';
            memcpy(counts_name, name, base_len);
            memcpy(counts_name + base_len, k_counts_suffix, sizeof(k_counts_suffix));
            const struct ggml_tensor * counts = ggml_get_tensor(data, counts_name);
            if (counts == NULL) {
                gq_error("%s: entry %s has sums (%s) but no counts (%s)", path, base, name, counts_name);
                ok = false;
            } else {
                ok = gq_imatrix_entry_from(&im->entries[im->n], path, base, ggml_get_tensor(data, name), counts);
                im->n++;
            }
        }
        free(counts_name);
        free(base);
    }
    gguf_free(g);
    ggml_free(data);
    if (!ok) {
        gq_imatrix_free(im);
        return NULL;
    }
    return im;
}

const float * gq_imatrix_find(const struct gq_imatrix * im, const char * name, int64_t * n_per_row, int64_t * n_mat) {
    for (int64_t i = 0; im != NULL && i < im->n; i++) {
        if (strcmp(im->entries[i].name, name) == 0) {
            *n_per_row = im->entries[i].n_per_row;
            *n_mat     = im->entries[i].n_mat;
            return im->entries[i].values;
        }
    }
    return NULL;
}

int64_t gq_imatrix_count(const struct gq_imatrix * im) {
    return im != NULL ? im->n : 0;
}
