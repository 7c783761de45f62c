// test-quantize-tool: the ggml-quantize program, run as a user would, on
// small GGUF files written here.
//
// - the output path: an existing file survives every failure (bad input,
//   refused conversion, a write that fails half-way), an empty directory, a
//   FIFO and /dev/null are refused and stay as they were, no temporary file
//   is left behind; a success replaces an existing file keeping its
//   permissions, and writes through a symbolic link;
// - empty tensors ([0, 4], [64, 0]) are copied through, with no crash;
// - an already quantized model is refused with a message, and with
//   --allow-requantize converted again: the weights against the original
//   floats within the two formats' rounding bounds, general.file_type saying
//   what the weights are;
// - a matrix large enough to be split over threads: the same bytes with 1
//   and 3 threads, each weight within Q8_0's rounding of the original;
// - --imatrix: an importance matrix in llama-imatrix's GGUF format (sums of
//   squares and counts), its importances (sums / count, 1 for a zero count)
//   given to the quantizer of each matrix it has; the types that need one
//   refuse without it, or for a matrix it lacks; bad files are refused;
// - the MXFP4_MOE mix on a MoE-shaped model: the expert stacks (3-D) MXFP4,
//   the other matrices Q8_0, the router and the norm kept, bytes those of the
//   quantizer of the original floats, general.file_type 38; an expert stack
//   quantized with an importance matrix of one row per expert;
// - NaN, infinite or negative importances (or counts) and non-finite weights
//   are refused naming the tensor, with no file left; zero importances are
//   raised (a matrix of zeros to 1, others to the matrix's smallest positive
//   importance) so that no group quantizes to zeros; a weight of 1e15 is
//   quantized by the grid types (they aborted);
// - SIGINT and SIGTERM during a conversion end it by that signal, with no
//   temporary file left;
// - the output is written in aligned 4 MiB pieces: mapped right after, its
//   first 4 MiB lie in 2 MiB pages (where a probe file shows that this kernel
//   and file system keep new files in large folios).

#define _GNU_SOURCE

#include "testing.h"
#include "run-program.h"
#include "mapped-pages.h"

#include "ggml.h"
#include "gguf.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GGML_QUANTIZE_BIN
#error "GGML_QUANTIZE_BIN: the path of the ggml-quantize program"
#endif

static char g_dir[256];

static void temp_path(char * out, size_t size, const char * name) {
    snprintf(out, size, "%s/%s", g_dir, name);
}

//
// input files
//

enum { W_NE0 = 64, W_NE1 = 6 };

static float g_weights[W_NE1][W_NE0];

static void make_weights(void) {
    uint32_t state = 12345;
    for (int r = 0; r < W_NE1; r++) {
        for (int c = 0; c < W_NE0; c++) {
            state = state * 1664525u + 1013904223u;
            g_weights[r][c] = ((float) (state >> 8) / 16777216.0f - 0.5f) * (float) (r + 1);
        }
    }
}

// two weight matrices (F32), a norm, optionally empty tensors, and a file type saying F32
static bool write_input(const char * path, bool with_empty) {
    const struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_str(gguf, "general.architecture", "test");
    gguf_set_val_u32(gguf, "general.file_type", 0);
    const char * names[2] = { "a.weight", "b.weight" };
    for (int i = 0; i < 2; i++) {
        struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, W_NE0, W_NE1);
        ggml_set_name(t, names[i]);
        memcpy(t->data, g_weights, sizeof(g_weights));
        gguf_add_tensor(gguf, t);
    }
    struct ggml_tensor * norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, W_NE0);
    ggml_set_name(norm, "norm.weight");
    memcpy(norm->data, g_weights[0], sizeof(g_weights[0]));
    gguf_add_tensor(gguf, norm);
    if (with_empty) {
        struct ggml_tensor * e1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 4);
        ggml_set_name(e1, "empty-rows.weight");
        gguf_add_tensor(gguf, e1);
        struct ggml_tensor * e2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, W_NE0, 0);
        ggml_set_name(e2, "no-rows.weight");
        gguf_add_tensor(gguf, e2);
    }
    const bool ok = gguf_write_to_file(gguf, path, false);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

static void write_text(const char * path, const char * text) {
    FILE * f = fopen(path, "wb");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

// the whole file as a string (files here are small); NULL if unreadable
static char * read_text(const char * path) {
    FILE * f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    char * buf = (char *) calloc(1, 1 << 16);
    const size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static bool file_holds(const char * path, const char * text) {
    char * got = read_text(path);
    const bool same = got != NULL && strcmp(got, text) == 0;
    free(got);
    return same;
}

// entries of g_dir whose name contains ".tmp"
static int count_temp_files(void) {
    DIR * d = opendir(g_dir);
    int n = 0;
    for (struct dirent * e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        n += strstr(e->d_name, ".tmp") != NULL;
    }
    if (d != NULL) {
        closedir(d);
    }
    return n;
}

//
// running the tool
//

// runs ggml-quantize -q [extra] in out type; the result in r
static void quantize(const char * in, const char * out, const char * type, const char * extra, long fsize_limit,
                     struct program_result * r) {
    char * argv[8];
    int n = 0;
    argv[n++] = (char *) GGML_QUANTIZE_BIN;
    argv[n++] = (char *) "-q";
    if (extra != NULL) {
        argv[n++] = (char *) extra;
    }
    argv[n++] = (char *) in;
    argv[n++] = (char *) out;
    argv[n++] = (char *) type;
    argv[n] = NULL;
    if (!run_program(argv, fsize_limit, r)) {
        r->exited = false;
        r->status = -1;
        snprintf(r->output, sizeof(r->output), "could not run %s", GGML_QUANTIZE_BIN);
    }
}

#define CHECK_EXIT(r, want) do { \
        char ending_[32]; \
        CHECK_MSG((r).exited && (r).status == (want), "ended by %s, not exit status %d; output:\n%s", \
                  program_ending(&(r), ending_, sizeof(ending_)), (want), (r).output); \
    } while (0)

// a GGUF of the output, with tensor data
struct loaded {
    struct gguf_context * gguf;
    struct ggml_context * ctx;
};

static bool load(const char * path, struct loaded * l) {
    l->ctx  = NULL;
    l->gguf = gguf_init_from_file(path, (struct gguf_init_params) { .no_alloc = false, .ctx = &l->ctx });
    return l->gguf != NULL;
}

static void unload(struct loaded * l) {
    gguf_free(l->gguf);
    ggml_free(l->ctx);
}

static int64_t file_type_of(const struct loaded * l) {
    const int64_t k = gguf_find_key(l->gguf, "general.file_type");
    return k < 0 ? -1 : (int64_t) gguf_get_val_u32(l->gguf, k);
}

//
// importance matrices
//

enum { IM_NE0 = 512, IM_NE1 = 3 };

// a model of two matrices a.weight and b.weight of IM_NE1 rows of IM_NE0
static bool write_im_model(const char * path, float * a, float * b) {
    const struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_str(gguf, "general.architecture", "test");
    uint32_t state = 777;
    float * data[2] = { a, b };
    const char * names[2] = { "a.weight", "b.weight" };
    for (int i = 0; i < 2; i++) {
        struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, IM_NE0, IM_NE1);
        ggml_set_name(t, names[i]);
        for (int j = 0; j < IM_NE0*IM_NE1; j++) {
            state = state * 1664525u + 1013904223u;
            data[i][j] = (float) (state >> 8) / 16777216.0f - 0.5f;
        }
        memcpy(t->data, data[i], sizeof(float) * IM_NE0 * IM_NE1);
        gguf_add_tensor(gguf, t);
    }
    const bool ok = gguf_write_to_file(gguf, path, false);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

// an imatrix file: for each of n names, sums of length ne0[i] and a count
// (with_counts false: the sums only)
static bool write_imatrix(const char * path, int n, const char * const * names, const int * ne0,
                          const float * const * sums, const float * counts, bool with_counts) {
    const struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_u32(gguf, "imatrix.chunk_count", 1);
    gguf_set_val_u32(gguf, "imatrix.chunk_size", 512);
    const char * datasets[1] = { "test" };
    gguf_set_arr_str(gguf, "imatrix.datasets", datasets, 1);
    for (int i = 0; i < n; i++) {
        char name[128];
        struct ggml_tensor * s = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0[i], 1);
        snprintf(name, sizeof(name), "%s.in_sum2", names[i]);
        ggml_set_name(s, name);
        memcpy(s->data, sums[i], sizeof(float) * (size_t) ne0[i]);
        gguf_add_tensor(gguf, s);
        if (with_counts) {
            struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 1);
            snprintf(name, sizeof(name), "%s.counts", names[i]);
            ggml_set_name(c, name);
            ((float *) c->data)[0] = counts[i];
            gguf_add_tensor(gguf, c);
        }
    }
    const bool ok = gguf_write_to_file(gguf, path, false);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

// runs ggml-quantize -q [--imatrix im] in out type
static void quantize_im(const char * in, const char * out, const char * type, const char * im, struct program_result * r) {
    char * argv[8];
    int n = 0;
    argv[n++] = (char *) GGML_QUANTIZE_BIN;
    argv[n++] = (char *) "-q";
    if (im != NULL) {
        argv[n++] = (char *) "--imatrix";
        argv[n++] = (char *) im;
    }
    argv[n++] = (char *) in;
    argv[n++] = (char *) out;
    argv[n++] = (char *) type;
    argv[n] = NULL;
    if (!run_program(argv, 0, r)) {
        r->exited = false;
        r->status = -1;
        snprintf(r->output, sizeof(r->output), "could not run %s", GGML_QUANTIZE_BIN);
    }
}

// the bytes of tensor name in the file at path equal ggml_quantize_chunk's of x with imatrix
static bool tensor_is(const char * path, const char * name, enum ggml_type type, const float * x, const float * imatrix) {
    struct loaded l;
    if (!load(path, &l)) {
        return false;
    }
    const struct ggml_tensor * t = ggml_get_tensor(l.ctx, name);
    const size_t size = ggml_row_size(type, IM_NE0) * IM_NE1;
    void * want = malloc(size);
    ggml_quantize_chunk(type, x, want, 0, IM_NE1, IM_NE0, imatrix);
    const bool same = t != NULL && t->type == type && ggml_nbytes(t) == size && memcmp(t->data, want, size) == 0;
    free(want);
    unload(&l);
    return same;
}

static void test_imatrix(void) {
    char model[300], out[300], im[300];
    temp_path(model, sizeof(model), "im-model.gguf");
    temp_path(out, sizeof(out), "im-out.gguf");
    temp_path(im, sizeof(im), "imatrix.gguf");
    static float a[IM_NE0*IM_NE1], b[IM_NE0*IM_NE1], sums_a[IM_NE0], sums_b[IM_NE0], want_a[IM_NE0], ones[IM_NE0];
    CHECK(write_im_model(model, a, b));
    for (int i = 0; i < IM_NE0; i++) {
        sums_a[i] = (float) (1 + (i*37) % 11) * 3.0f; // counts 3: importances 1 .. 11
        sums_b[i] = (float) (i % 5);
        want_a[i] = (float) (1 + (i*37) % 11);
        ones[i]   = 1.0f;
    }
    const char * names[2] = { "a.weight", "b.weight" };
    const int ne0[2] = { IM_NE0, IM_NE0 };
    const float * sums[2] = { sums_a, sums_b };
    const float counts[2] = { 3.0f, 0.0f }; // b saw no input: importance 1 everywhere
    struct program_result r;

    // the types that need one refuse without
    quantize_im(model, out, "iq2_xxs", NULL, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "importance matrix") != NULL, "output:\n%s", r.output);

    CHECK(write_imatrix(im, 2, names, ne0, sums, counts, true));
    const char * types[3] = { "iq2_xxs", "q4_K", "iq3_s" };
    const enum ggml_type ttypes[3] = { GGML_TYPE_IQ2_XXS, GGML_TYPE_Q4_K, GGML_TYPE_IQ3_S };
    // on a big-endian host too: the IQ layouts are byte-swapped field by field
    for (int i = 0; i < 3; i++) {
        quantize_im(model, out, types[i], im, &r);
        CHECK_EXIT(r, 0);
        CHECK_MSG(tensor_is(out, "a.weight", ttypes[i], a, want_a), "%s: a.weight not quantized with sums / count", types[i]);
        CHECK_MSG(tensor_is(out, "b.weight", ttypes[i], b, ones), "%s: b.weight not quantized with importance 1", types[i]);
    }
    // the importances matter: iq3_s of a differs from the plain one
    CHECK(!tensor_is(out, "a.weight", GGML_TYPE_IQ3_S, a, NULL));

    // an entry only for a: q4_K quantizes b without one; iq2_xs refuses b
    CHECK(write_imatrix(im, 1, names, ne0, sums, counts, true));
    quantize_im(model, out, "q4_K", im, &r);
    CHECK_EXIT(r, 0);
    CHECK(tensor_is(out, "a.weight", GGML_TYPE_Q4_K, a, want_a));
    CHECK(tensor_is(out, "b.weight", GGML_TYPE_Q4_K, b, NULL));
    quantize_im(model, out, "iq2_xs", im, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "b.weight") != NULL, "output:\n%s", r.output);

    // bad files: sums without counts, the wrong length, not GGUF
    CHECK(write_imatrix(im, 2, names, ne0, sums, counts, false));
    quantize_im(model, out, "q4_K", im, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "no counts") != NULL, "output:\n%s", r.output);
    const int short_ne0[2] = { IM_NE0/2, IM_NE0 };
    CHECK(write_imatrix(im, 2, names, short_ne0, sums, counts, true));
    quantize_im(model, out, "q4_K", im, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "a.weight") != NULL, "output:\n%s", r.output);
    write_text(im, "not a gguf file");
    quantize_im(model, out, "q4_K", im, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "importance matrix") != NULL, "output:\n%s", r.output);

    remove(model);
    remove(out);
    remove(im);
}

//
// defect: bad importances and weights were quantized to zeros or NaN, or
// aborted the grid searches (leaving the temporary file)
//

// a model of one matrix `name` [ne0, ne1] of type (F32 or F16) holding x
static bool write_matrix_model(const char * path, const char * name, const float * x, int64_t ne0, int64_t ne1,
                               enum ggml_type type) {
    const struct ggml_init_params ip = { .mem_size = (size_t) (ne0*ne1) * 4 + (1 << 20), .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_str(gguf, "general.architecture", "test");
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, type, ne0, ne1);
    ggml_set_name(t, name);
    if (type == GGML_TYPE_F16) {
        ggml_fp32_to_fp16_row(x, (ggml_fp16_t *) t->data, ne0*ne1);
    } else {
        memcpy(t->data, x, sizeof(float) * (size_t) (ne0*ne1));
    }
    gguf_add_tensor(gguf, t);
    const bool ok = gguf_write_to_file(gguf, path, false);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

// no group of 32 weights of `name` in the file dequantizes to all zeros
// (the weights written are all nonzero)
static bool no_zero_groups(const char * path, const char * name) {
    struct loaded l;
    if (!load(path, &l)) {
        return false;
    }
    const struct ggml_tensor * t = ggml_get_tensor(l.ctx, name);
    bool ok = t != NULL && ggml_get_type_traits(t->type)->to_float != NULL;
    float * y = ok ? (float *) malloc(sizeof(float) * (size_t) ggml_nelements(t)) : NULL;
    if (ok) {
        ggml_get_type_traits(t->type)->to_float(t->data, y, ggml_nelements(t));
        for (int64_t g = 0; ok && g < ggml_nelements(t)/32; g++) {
            bool all_zero = true;
            for (int i = 0; i < 32; i++) {
                all_zero = all_zero && y[32*g + i] == 0.0f && isfinite(y[32*g + i]);
                ok = ok && isfinite(y[32*g + i]);
            }
            ok = ok && !all_zero;
        }
    }
    free(y);
    unload(&l);
    return ok;
}

static void test_imatrix_values(void) {
    char model[300], out[300], im[300];
    temp_path(model, sizeof(model), "imv-model.gguf");
    temp_path(out, sizeof(out), "imv-out.gguf");
    temp_path(im, sizeof(im), "imv-imatrix.gguf");
    static float a[IM_NE0*IM_NE1], b[IM_NE0*IM_NE1], sums_a[IM_NE0], sums_b[IM_NE0], want_a[IM_NE0], ones[IM_NE0];
    CHECK(write_im_model(model, a, b));
    const char * names[2] = { "a.weight", "b.weight" };
    const int ne0[2] = { IM_NE0, IM_NE0 };
    const float * sums[2] = { sums_a, sums_b };
    const float counts[2] = { 2.0f, 2.0f };
    for (int i = 0; i < IM_NE0; i++) {
        sums_b[i] = 2.0f;
        ones[i]   = 1.0f;
    }
    const char * types[] = { "q4_0", "q2_K", "q4_K", "iq4_xs", "iq1_s", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s" };
    const enum ggml_type ttypes[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q2_K, GGML_TYPE_Q4_K, GGML_TYPE_IQ4_XS, GGML_TYPE_IQ1_S,
                                      GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S };
    const int n_types = (int) (sizeof(types)/sizeof(types[0]));
    struct program_result r;

    // NaN, infinite or negative importances: refused, naming the tensor, nothing written
    const float bad[] = { NAN, INFINITY, -INFINITY, -1.0f };
    for (size_t k = 0; k < sizeof(bad)/sizeof(bad[0]); k++) {
        for (int i = 0; i < IM_NE0; i++) {
            sums_a[i] = 2.0f;
        }
        sums_a[100] = bad[k];
        CHECK(write_imatrix(im, 2, names, ne0, sums, counts, true));
        for (int ti = 0; ti < n_types; ti++) {
            remove(out);
            quantize_im(model, out, types[ti], im, &r);
            CHECK_EXIT(r, 1);
            CHECK_MSG(strstr(r.output, "a.weight") != NULL, "%s, importance %g: output:\n%s", types[ti], (double) bad[k], r.output);
            CHECK(access(out, F_OK) != 0);
            CHECK_EQ_INT(count_temp_files(), 0);
        }
    }
    // a count that is NaN or negative, likewise
    const float bad_counts[2][2] = { { NAN, 2.0f }, { -1.0f, 2.0f } };
    for (int i = 0; i < IM_NE0; i++) {
        sums_a[i] = 2.0f;
    }
    for (int k = 0; k < 2; k++) {
        CHECK(write_imatrix(im, 2, names, ne0, sums, bad_counts[k], true));
        quantize_im(model, out, "q4_K", im, &r);
        CHECK_EXIT(r, 1);
        CHECK_MSG(strstr(r.output, "a.weight") != NULL, "output:\n%s", r.output);
    }

    // zero importances (columns never activated) keep the weights: a matrix
    // of zeros is quantized as with importance 1, isolated zeros are raised
    // to the smallest positive importance of the matrix; a warning says so
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < IM_NE0; i++) {
            const bool zero = pass == 0 || (i / 32) % 3 == 0 || i % 7 == 0; // whole groups and scattered columns
            sums_a[i]  = zero ? 0.0f : (float) (3 + i % 5) * 2.0f;
            want_a[i]  = zero ? (pass == 0 ? 1.0f : 3.0f) : (float) (3 + i % 5);
        }
        CHECK(write_imatrix(im, 2, names, ne0, sums, counts, true));
        for (int ti = 0; ti < n_types; ti++) {
            quantize_im(model, out, types[ti], im, &r);
            CHECK_EXIT(r, 0);
            CHECK_MSG(strstr(r.output, "warning") != NULL && strstr(r.output, "a.weight") != NULL, "output:\n%s", r.output);
            CHECK_MSG(tensor_is(out, "a.weight", ttypes[ti], a, want_a), "%s, pass %d: a.weight not quantized with the rule's importances",
                      types[ti], pass);
            CHECK_MSG(tensor_is(out, "b.weight", ttypes[ti], b, ones), "%s: b.weight", types[ti]);
            CHECK_MSG(no_zero_groups(out, "a.weight"), "%s, pass %d: a group of a.weight quantized to zeros or non-finite",
                      types[ti], pass);
        }
    }
    remove(model);
    remove(out);
    remove(im);
}

static void test_weight_values(void) {
    char model[300], out[300];
    temp_path(model, sizeof(model), "wv-model.gguf");
    temp_path(out, sizeof(out), "wv-out.gguf");
    enum { NE0 = 512, NE1 = 4 };
    static float x[NE0*NE1];
    uint32_t state = 99;
    for (int i = 0; i < NE0*NE1; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float) (state >> 8) / 16777216.0f - 0.5f;
    }
    struct program_result r;
    // non-finite weights: refused, naming the tensor, for every quantized type
    const char * types[] = { "q8_0", "q4_0", "q4_K", "iq4_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_m", "mxfp4", "tq2_0" };
    const float bad[] = { NAN, INFINITY, -INFINITY };
    for (size_t k = 0; k < sizeof(bad)/sizeof(bad[0]); k++) {
        const float keep = x[NE0 + 300];
        x[NE0 + 300] = bad[k];
        CHECK(write_matrix_model(model, "w.weight", x, NE0, NE1, k == 0 ? GGML_TYPE_F32 : GGML_TYPE_F16));
        for (size_t ti = 0; ti < sizeof(types)/sizeof(types[0]); ti++) {
            remove(out);
            quantize(model, out, types[ti], NULL, 0, &r);
            CHECK_EXIT(r, 1);
            CHECK_MSG(strstr(r.output, "w.weight") != NULL && strstr(r.output, "[300, 1, 0]") != NULL,
                      "%s, weight %g: output:\n%s", types[ti], (double) bad[k], r.output);
            CHECK(access(out, F_OK) != 0);
            CHECK_EQ_INT(count_temp_files(), 0);
        }
        x[NE0 + 300] = keep;
    }
    // a large finite weight is quantized (the grid searches aborted on 1e15),
    // with the bytes of the library's quantizer
    x[NE0 + 77] = 1e15f;
    CHECK(write_matrix_model(model, "w.weight", x, NE0, NE1, GGML_TYPE_F32));
    const char * big_types[] = { "iq3_s", "iq2_s", "iq3_xxs", "q4_K" };
    const enum ggml_type big_ttypes[] = { GGML_TYPE_IQ3_S, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_Q4_K };
    for (int ti = 0; ti < 4; ti++) {
        quantize(model, out, big_types[ti], NULL, 0, &r);
        CHECK_EXIT(r, 0);
        struct loaded l;
        CHECK(load(out, &l));
        const struct ggml_tensor * t = ggml_get_tensor(l.ctx, "w.weight");
        const size_t size = ggml_row_size(big_ttypes[ti], NE0) * NE1;
        void * want = malloc(size);
        ggml_quantize_chunk(big_ttypes[ti], x, want, 0, NE1, NE0, NULL);
        CHECK_MSG(t != NULL && ggml_nbytes(t) == size && memcmp(t->data, want, size) == 0, "%s: bytes", big_types[ti]);
        free(want);
        unload(&l);
    }
    CHECK_EQ_INT(count_temp_files(), 0);
    remove(model);
    remove(out);
}

//
// defect: SIGINT or SIGTERM during a conversion left the temporary file
//

// starts ggml-quantize on a conversion of some seconds, waits for its
// temporary file, sends sig: the process ends by sig and leaves no file
static void check_signal(const char * model, const char * out, int sig) {
    char * argv[] = { (char *) GGML_QUANTIZE_BIN, (char *) "-q", (char *) "-t", (char *) "1", (char *) model,
                      (char *) out, (char *) "iq3_xxs", NULL };
    const pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        const int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        run_program_exec(argv);
        _exit(127);
    }
    bool seen = false;
    for (int i = 0; i < 60000 && !seen; i++) { // up to a minute (an emulator is slow to start)
        seen = count_temp_files() > 0;
        if (!seen) {
            usleep(1000);
        }
    }
    CHECK_MSG(seen, "no temporary file appeared");
    kill(pid, sig);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == sig, "signal %d: ended with status 0x%x (the conversion too short?)",
              sig, (unsigned) status);
    CHECK_EQ_INT(count_temp_files(), 0);
    CHECK(access(out, F_OK) != 0);
}

static void test_signals(void) {
    char model[300], out[300];
    temp_path(model, sizeof(model), "sig-model.gguf");
    temp_path(out, sizeof(out), "sig-out.gguf");
    // 8M weights: iq3_xxs on one thread takes seconds
    enum { NE0 = 4096, NE1 = 2048 };
    float * x = (float *) malloc(sizeof(float) * NE0 * NE1);
    uint32_t state = 5;
    for (int i = 0; i < NE0*NE1; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float) (state >> 8) / 16777216.0f - 0.5f;
    }
    CHECK(write_matrix_model(model, "w.weight", x, NE0, NE1, GGML_TYPE_F16));
    free(x);
    check_signal(model, out, SIGINT);
    check_signal(model, out, SIGTERM);
    remove(model);
}

//
// defect: the output path was removed on every failure
//

static void test_output_kept_on_failure(const char * good) {
    char out[300], missing[300], garbage[300];
    temp_path(out, sizeof(out), "precious.gguf");
    temp_path(missing, sizeof(missing), "no-such-input.gguf");
    temp_path(garbage, sizeof(garbage), "garbage.gguf");
    write_text(garbage, "this is no GGUF file");
    struct program_result r;

    write_text(out, "precious");
    quantize(missing, out, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(file_holds(out, "precious"), "a missing input destroyed the existing output");

    quantize(garbage, out, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(file_holds(out, "precious"), "a corrupt input destroyed the existing output");

    // a truncated input: the metadata reads, the data is missing
    char truncated[300];
    temp_path(truncated, sizeof(truncated), "truncated.gguf");
    char * bytes = read_text(good);
    struct stat st;
    CHECK(bytes != NULL && stat(good, &st) == 0);
    FILE * f = fopen(truncated, "wb");
    if (f != NULL && bytes != NULL) {
        fwrite(bytes, 1, (size_t) st.st_size - 512, f);
    }
    if (f != NULL) {
        fclose(f);
    }
    free(bytes);
    quantize(truncated, out, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(file_holds(out, "precious"), "a truncated input destroyed the existing output");
    remove(truncated);

    quantize(good, out, "no-such-type", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK(file_holds(out, "precious"));

    // the write fails half-way (file size limit): the old file stays, no temporary file is left
    quantize(good, out, "f16", NULL, 1024, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(file_holds(out, "precious"), "a failed write destroyed the existing output");
    CHECK_EQ_INT(count_temp_files(), 0);
    remove(out);
}

static void test_output_not_a_file(const char * good) {
    struct program_result r;
    struct stat st;

    char dir[300];
    temp_path(dir, sizeof(dir), "a-directory");
    CHECK(mkdir(dir, 0700) == 0);
    quantize(good, dir, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "directory") != NULL, "no message saying it is a directory:\n%s", r.output);
    CHECK_MSG(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "the empty directory given as output is gone");
    char missing[300];
    temp_path(missing, sizeof(missing), "no-such-input.gguf");
    quantize(missing, dir, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "the empty directory given as output is gone");
    rmdir(dir);

    // a FIFO, held open for reading so that a writer would not wait for one
    char fifo[300];
    temp_path(fifo, sizeof(fifo), "a-fifo");
    CHECK(mkfifo(fifo, 0600) == 0);
    const int reader = open(fifo, O_RDONLY | O_NONBLOCK);
    quantize(good, fifo, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "not a regular file") != NULL, "no message saying why:\n%s", r.output);
    quantize(missing, fifo, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO given as output is gone");
    if (reader >= 0) {
        close(reader);
    }
    remove(fifo);

    // a device node (not removable by a test that is not root, but refused all the same)
    if (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode)) {
        quantize(good, "/dev/null", "q8_0", NULL, 0, &r);
        CHECK_EXIT(r, 1);
        CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    }
    CHECK_EQ_INT(count_temp_files(), 0);
}

static void test_output_replaced(const char * good) {
    struct program_result r;
    struct stat st;
    char out[300], link_path[300];
    temp_path(out, sizeof(out), "replaced.gguf");
    write_text(out, "old contents");
    CHECK(chmod(out, 0640) == 0);
    quantize(good, out, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 0);
    struct loaded l;
    CHECK(load(out, &l));
    if (l.gguf != NULL) {
        CHECK_EQ_INT(gguf_get_n_tensors(l.gguf), 3);
        CHECK(ggml_get_tensor(l.ctx, "a.weight")->type == GGML_TYPE_Q8_0);
        unload(&l);
    }
    CHECK(stat(out, &st) == 0 && (st.st_mode & 0777) == 0640);
    CHECK_EQ_INT(count_temp_files(), 0);

    // through a symbolic link: the file it points to is replaced, the link stays
    temp_path(link_path, sizeof(link_path), "link.gguf");
    CHECK(symlink(out, link_path) == 0);
    quantize(good, link_path, "f16", NULL, 0, &r);
    CHECK_EXIT(r, 0);
    CHECK(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(load(out, &l));
    if (l.gguf != NULL) {
        CHECK(ggml_get_tensor(l.ctx, "a.weight")->type == GGML_TYPE_F16);
        unload(&l);
    }
    // a link to nothing is refused
    remove(out);
    quantize(good, link_path, "f16", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
    remove(link_path);
    CHECK_EQ_INT(count_temp_files(), 0);
}

//
// defect: an empty tensor divided by zero (SIGFPE)
//

static void test_empty_tensors(void) {
    char in[300], out[300];
    temp_path(in, sizeof(in), "with-empty.gguf");
    temp_path(out, sizeof(out), "with-empty-q8_0.gguf");
    CHECK(write_input(in, true));
    struct program_result r;
    quantize(in, out, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 0);
    struct loaded l;
    CHECK(load(out, &l));
    if (l.gguf != NULL) {
        CHECK_EQ_INT(gguf_get_n_tensors(l.gguf), 5);
        const struct ggml_tensor * e1 = ggml_get_tensor(l.ctx, "empty-rows.weight");
        const struct ggml_tensor * e2 = ggml_get_tensor(l.ctx, "no-rows.weight");
        CHECK(e1 != NULL && e1->type == GGML_TYPE_F32 && e1->ne[0] == 0 && e1->ne[1] == 4);
        CHECK(e2 != NULL && e2->type == GGML_TYPE_F32 && e2->ne[0] == W_NE0 && e2->ne[1] == 0);
        CHECK(ggml_get_tensor(l.ctx, "b.weight")->type == GGML_TYPE_Q8_0);
        CHECK_EQ_INT(file_type_of(&l), 7);
        unload(&l);
    }
    remove(in);
    remove(out);
}

//
// defect: a quantized model "converted" with nothing converted and a false file type
//

// max |x - y| over the weights, against a bound of rel * (the block's largest |x|)
static bool weights_within(const struct ggml_tensor * t, double rel, double * worst) {
    float row[W_NE0];
    bool ok = t->ne[0] == W_NE0 && t->ne[1] == W_NE1;
    *worst = 0.0;
    for (int r = 0; ok && r < W_NE1; r++) {
        ggml_get_type_traits(t->type)->to_float((const char *) t->data + r * t->nb[1], row, W_NE0);
        for (int b = 0; b < W_NE0; b += 32) {
            double amax = 0.0;
            for (int c = b; c < b + 32; c++) {
                amax = fmax(amax, fabs((double) g_weights[r][c]));
            }
            for (int c = b; c < b + 32; c++) {
                const double d = fabs((double) row[c] - (double) g_weights[r][c]) / amax;
                *worst = fmax(*worst, d);
                ok = ok && d <= rel;
            }
        }
    }
    return ok;
}

static void test_requantize(const char * good) {
    char q8[300], q4[300];
    temp_path(q8, sizeof(q8), "model-q8_0.gguf");
    temp_path(q4, sizeof(q4), "model-q4_0.gguf");
    struct program_result r;
    quantize(good, q8, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 0);

    // refused by default, with a message naming the way out; no output
    quantize(q8, q4, "q4_0", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK_MSG(strstr(r.output, "--allow-requantize") != NULL, "no hint of --allow-requantize:\n%s", r.output);
    CHECK_MSG(access(q4, F_OK) != 0, "an output was written although the conversion was refused");

    // the same type again converts nothing and needs no permission: the file type stays true
    char q8b[300];
    temp_path(q8b, sizeof(q8b), "model-q8_0-again.gguf");
    quantize(q8, q8b, "q8_0", NULL, 0, &r);
    CHECK_EXIT(r, 0);
    struct loaded l;
    CHECK(load(q8b, &l));
    if (l.gguf != NULL) {
        CHECK(ggml_get_tensor(l.ctx, "a.weight")->type == GGML_TYPE_Q8_0);
        CHECK_EQ_INT(file_type_of(&l), 7);
        unload(&l);
    }
    remove(q8b);

    // allowed: dequantized and converted. Q8_0 rounds to 1/127 of the
    // block's largest (error <= 1/254 of it); Q4_0 maps the largest to -8
    // steps of 1/8 of it, so that values of the other sign near it clamp at
    // +7 (error <= 1/8 of the Q8_0 largest, itself <= (1 + 1/254) times ours)
    quantize(q8, q4, "q4_0", "--allow-requantize", 0, &r);
    CHECK_EXIT(r, 0);
    CHECK(load(q4, &l));
    if (l.gguf != NULL) {
        const struct ggml_tensor * a = ggml_get_tensor(l.ctx, "a.weight");
        const struct ggml_tensor * b = ggml_get_tensor(l.ctx, "b.weight");
        CHECK(a->type == GGML_TYPE_Q4_0 && b->type == GGML_TYPE_Q4_0);
        CHECK(ggml_get_tensor(l.ctx, "norm.weight")->type == GGML_TYPE_F32);
        CHECK_EQ_INT(file_type_of(&l), 2);
        double worst = 0.0;
        const double bound = (1.0 + 1.0 / 254) / 8 + 1.0 / 254 + 1e-6;
        CHECK_MSG(weights_within(a, bound, &worst), "requantized weights off by %g of the block maximum (bound %g)", worst, bound);
        unload(&l);
    }
    // and back to f16 (a dequantization is a conversion of quantized weights too)
    quantize(q4, q8, "f16", NULL, 0, &r);
    CHECK_EXIT(r, 1);
    CHECK(load(q8, &l)); // the refused conversion left the Q8_0 file as it was
    if (l.gguf != NULL) {
        CHECK(ggml_get_tensor(l.ctx, "a.weight")->type == GGML_TYPE_Q8_0);
        unload(&l);
    }
    remove(q8);
    remove(q4);
}

// weights that are no conversion candidates leave a file type that says what they are
static void test_file_type_follows_weights(void) {
    char in[300], out[300];
    temp_path(in, sizeof(in), "f16-rows.gguf");
    temp_path(out, sizeof(out), "f16-rows-q4_0.gguf");
    const struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_u32(gguf, "general.file_type", 7); // a false claim of the input: the output must not repeat it
    // rows of 48: no whole Q4_0 blocks, so the weights stay F16
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 48, 4);
    ggml_set_name(t, "w.weight");
    memset(t->data, 0, ggml_nbytes(t));
    gguf_add_tensor(gguf, t);
    CHECK(gguf_write_to_file(gguf, in, false));
    gguf_free(gguf);
    ggml_free(ctx);

    struct program_result r;
    quantize(in, out, "q4_0", NULL, 0, &r);
    CHECK_EXIT(r, 0);
    struct loaded l;
    CHECK(load(out, &l));
    if (l.gguf != NULL) {
        CHECK(ggml_get_tensor(l.ctx, "w.weight")->type == GGML_TYPE_F16);
        CHECK_EQ_INT(file_type_of(&l), 1);
        unload(&l);
    }
    remove(in);
    remove(out);
}

//
// the MXFP4_MOE mix on a MoE-shaped model
//

// the bytes of tensor t equal ggml_quantize_chunk's of x as type (rows of t->ne[0])
static bool holds_quantized(const struct ggml_tensor * t, enum ggml_type type, const float * x) {
    if (t == NULL || t->type != type) {
        return false;
    }
    const int64_t nrows = ggml_nrows(t);
    const size_t  size  = ggml_row_size(type, t->ne[0]) * (size_t) nrows;
    void * want = malloc(size);
    ggml_quantize_chunk(type, x, want, 0, nrows, t->ne[0], NULL);
    const bool same = ggml_nbytes(t) == size && memcmp(t->data, want, size) == 0;
    free(want);
    return same;
}

static void test_mxfp4_moe(void) {
    char in[300], out[300];
    temp_path(in, sizeof(in), "moe.gguf");
    temp_path(out, sizeof(out), "moe-mxfp4.gguf");
    const struct ggml_init_params ip = { .mem_size = 4 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    gguf_set_val_str(gguf, "general.architecture", "test-moe");
    gguf_set_val_u32(gguf, "general.file_type", 0);
    // name, ne0, ne1, ne2 (ne1 = 0: 1-D)
    const struct { const char * name; int64_t ne[3]; } spec[] = {
        { "token_embd.weight",          { 64, 10, 1 } },
        { "blk.0.attn_norm.weight",     { 64, 0,  1 } },
        { "blk.0.attn_q.weight",        { 64, 64, 1 } },
        { "blk.0.ffn_gate_inp.weight",  { 64, 4,  1 } },  // the router: kept
        { "blk.0.ffn_gate_exps.weight", { 64, 32, 4 } },
        { "blk.0.ffn_down_exps.weight", { 32, 64, 4 } },
        { "blk.0.ffn_up_exps.weight",   { 64, 32, 4 } },
        { "blk.0.ffn_odd_exps.weight",  { 48, 2,  4 } },  // rows of 48: no MXFP4 block, F16 as for every mix
        { "output.weight",              { 64, 10, 1 } },
    };
    enum { N_SPEC = sizeof(spec) / sizeof(spec[0]) };
    const enum ggml_type want[N_SPEC] = {
        GGML_TYPE_Q8_0, GGML_TYPE_F32, GGML_TYPE_Q8_0, GGML_TYPE_F32,
        GGML_TYPE_MXFP4, GGML_TYPE_MXFP4, GGML_TYPE_MXFP4, GGML_TYPE_F16, GGML_TYPE_Q8_0,
    };
    float * data[N_SPEC];
    uint32_t state = 4242;
    for (int i = 0; i < N_SPEC; i++) {
        struct ggml_tensor * t = spec[i].ne[1] == 0 ? ggml_new_tensor_1d(ctx, GGML_TYPE_F32, spec[i].ne[0])
                                                    : ggml_new_tensor_3d(ctx, GGML_TYPE_F32, spec[i].ne[0], spec[i].ne[1], spec[i].ne[2]);
        ggml_set_name(t, spec[i].name);
        data[i] = (float *) t->data;
        for (int64_t j = 0; j < ggml_nelements(t); j++) {
            state = state * 1664525u + 1013904223u;
            data[i][j] = (float) (state >> 8) / 16777216.0f - 0.5f;
        }
        gguf_add_tensor(gguf, t);
    }
    CHECK(gguf_write_to_file(gguf, in, false));
    gguf_free(gguf);

    struct program_result r;
    quantize(in, out, "MXFP4_MOE", NULL, 0, &r);
    CHECK_EXIT(r, 0);
    struct loaded l;
    CHECK(load(out, &l));
    if (l.gguf != NULL) {
        CHECK_EQ_INT(file_type_of(&l), 38);
        for (int i = 0; i < N_SPEC; i++) {
            const struct ggml_tensor * t = ggml_get_tensor(l.ctx, spec[i].name);
            CHECK_MSG(t != NULL && t->type == want[i], "%s is %s, want %s", spec[i].name,
                      t != NULL ? ggml_type_name(t->type) : "missing", ggml_type_name(want[i]));
            if (t == NULL || t->type != want[i]) {
                continue;
            }
            if (want[i] == GGML_TYPE_F32) {
                CHECK(memcmp(t->data, data[i], ggml_nbytes(t)) == 0);
            } else if (want[i] != GGML_TYPE_F16) {
                CHECK_MSG(holds_quantized(t, want[i], data[i]), "%s: not the bytes of its quantization", spec[i].name);
                CHECK(t->ne[2] == spec[i].ne[2]);
            }
        }
        unload(&l);
    }
    ggml_free(ctx);
    remove(in);
    remove(out);
}

// an expert stack [IM_NE0, 3, 2] with an importance matrix entry of one
// row per expert: each expert's rows quantized with its own importances
static void test_imatrix_experts(void) {
    enum { ROWS = 3, N_EXP = 2 };
    char model[300], out[300], im[300];
    temp_path(model, sizeof(model), "im-exps.gguf");
    temp_path(out, sizeof(out), "im-exps-q4_k.gguf");
    temp_path(im, sizeof(im), "im-exps-imatrix.gguf");
    const struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    struct ggml_tensor * e = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, IM_NE0, ROWS, N_EXP);
    ggml_set_name(e, "blk.0.ffn_up_exps.weight");
    float * x = (float *) e->data;
    uint32_t state = 99;
    for (int64_t j = 0; j < ggml_nelements(e); j++) {
        state = state * 1664525u + 1013904223u;
        x[j] = (float) (state >> 8) / 16777216.0f - 0.5f;
    }
    gguf_add_tensor(gguf, e);
    CHECK(gguf_write_to_file(gguf, model, false));
    gguf_free(gguf);

    // sums [IM_NE0, N_EXP], counts [1, N_EXP] = 1: the importances are the sums
    struct gguf_context * gi = gguf_init_empty();
    struct ggml_tensor * sums = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, IM_NE0, N_EXP);
    struct ggml_tensor * cnt  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, N_EXP);
    ggml_set_name(sums, "blk.0.ffn_up_exps.weight.in_sum2");
    ggml_set_name(cnt, "blk.0.ffn_up_exps.weight.counts");
    for (int i = 0; i < IM_NE0 * N_EXP; i++) {
        ((float *) sums->data)[i] = i < IM_NE0 ? (float) (1 + i % 7) : (float) (1 + (i*13) % 29);
    }
    for (int j = 0; j < N_EXP; j++) {
        ((float *) cnt->data)[j] = 1.0f;
    }
    gguf_add_tensor(gi, sums);
    gguf_add_tensor(gi, cnt);
    CHECK(gguf_write_to_file(gi, im, false));
    gguf_free(gi);

    struct program_result r;
    quantize_im(model, out, "q4_K", im, &r);
    CHECK_EXIT(r, 0);
    struct loaded l;
    CHECK(load(out, &l));
    if (l.gguf != NULL) {
        const struct ggml_tensor * t = ggml_get_tensor(l.ctx, "blk.0.ffn_up_exps.weight");
        const size_t per_exp = ggml_row_size(GGML_TYPE_Q4_K, IM_NE0) * ROWS;
        CHECK(t != NULL && t->type == GGML_TYPE_Q4_K && ggml_nbytes(t) == per_exp * N_EXP);
        void * want = malloc(per_exp);
        for (int j = 0; t != NULL && t->type == GGML_TYPE_Q4_K && j < N_EXP; j++) {
            ggml_quantize_chunk(GGML_TYPE_Q4_K, x + (size_t) j*ROWS*IM_NE0, want, 0, ROWS, IM_NE0,
                                (const float *) sums->data + (size_t) j*IM_NE0);
            CHECK_MSG(memcmp((const char *) t->data + j*per_exp, want, per_exp) == 0, "expert %d: not quantized with its importances", j);
        }
        free(want);
        unload(&l);
    }
    ggml_free(ctx);
    remove(model);
    remove(out);
    remove(im);
}

//
// rows split over threads
//

enum { BIG_NE0 = 256, BIG_NE1 = 1024 }; // 4 threads' worth of elements

static void test_threads(void) {
    char in[300], out1[300], out3[300];
    temp_path(in, sizeof(in), "big.gguf");
    temp_path(out1, sizeof(out1), "big-1.gguf");
    temp_path(out3, sizeof(out3), "big-3.gguf");
    const struct ggml_init_params ip = { .mem_size = 2 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, BIG_NE0, BIG_NE1);
    ggml_set_name(t, "big.weight");
    float * w = (float *) t->data;
    uint32_t state = 777;
    for (int i = 0; i < BIG_NE0 * BIG_NE1; i++) {
        state = state * 1664525u + 1013904223u;
        w[i] = (float) (state >> 8) / 16777216.0f - 0.5f;
    }
    gguf_add_tensor(gguf, t);
    CHECK(gguf_write_to_file(gguf, in, false));

    struct program_result r;
    char * argv1[] = { (char *) GGML_QUANTIZE_BIN, (char *) "-q", (char *) "-t", (char *) "1", in, out1, (char *) "q8_0", NULL };
    char * argv3[] = { (char *) GGML_QUANTIZE_BIN, (char *) "-q", (char *) "-t", (char *) "3", in, out3, (char *) "q8_0", NULL };
    CHECK(run_program(argv1, 0, &r));
    CHECK_EXIT(r, 0);
    CHECK(run_program(argv3, 0, &r));
    CHECK_EXIT(r, 0);
    struct loaded l1, l3;
    CHECK(load(out1, &l1));
    CHECK(load(out3, &l3));
    if (l1.gguf != NULL && l3.gguf != NULL) {
        const struct ggml_tensor * a = ggml_get_tensor(l1.ctx, "big.weight");
        const struct ggml_tensor * b = ggml_get_tensor(l3.ctx, "big.weight");
        CHECK(a->type == GGML_TYPE_Q8_0 && b->type == GGML_TYPE_Q8_0);
        CHECK(ggml_nbytes(a) == ggml_nbytes(b) && memcmp(a->data, b->data, ggml_nbytes(a)) == 0);
        // Q8_0: each weight within 1/254 of its block's largest (plus the F16 scale's rounding)
        float row[BIG_NE0];
        double worst = 0.0;
        for (int r0 = 0; r0 < BIG_NE1; r0++) {
            ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float((const char *) b->data + r0 * b->nb[1], row, BIG_NE0);
            for (int c0 = 0; c0 < BIG_NE0; c0 += 32) {
                double amax = 0.0;
                for (int c = c0; c < c0 + 32; c++) {
                    amax = fmax(amax, fabs((double) w[r0 * BIG_NE0 + c]));
                }
                for (int c = c0; c < c0 + 32; c++) {
                    worst = fmax(worst, fabs((double) row[c] - (double) w[r0 * BIG_NE0 + c]) / amax);
                }
            }
        }
        CHECK_MSG(worst <= 1.0 / 254 + 1.0 / 1024, "Q8_0 weights off by %g of the block maximum", worst);
    }
    if (l1.gguf != NULL) {
        unload(&l1);
    }
    if (l3.gguf != NULL) {
        unload(&l3);
    }
    gguf_free(gguf);
    ggml_free(ctx);
    remove(in);
    remove(out1);
    remove(out3);
}

//
// the output in the page cache
//

// ggml-quantize writes its output in aligned 4 MiB pieces (output-file.h), so
// that a model quantized and then mapped is mapped in 2 MiB pages. The matrix
// quantized to Q4_0 in pieces of 1024 rows (2.4 MB each, at offsets that are
// not multiples of 2 MiB) left its first 4 MiB in 4 KiB folios before.
static void test_output_in_large_folios(void) {
    if (!large_folios_here(g_dir)) {
        printf("test_output_in_large_folios: skipped (no large folios for new files here)\n");
        return;
    }
    enum { NE0 = 4096, NE1 = 2048 };
    char in[300], out[300];
    temp_path(in, sizeof(in), "folios.gguf");
    temp_path(out, sizeof(out), "folios-q4_0.gguf");
    float * x = (float *) malloc(sizeof(float) * NE0 * NE1);
    CHECK(x != NULL);
    if (x == NULL) {
        return;
    }
    for (int i = 0; i < NE0 * NE1; i++) {
        x[i] = (float) ((int) (((long) i * 7919) % 1001)) / 1000.0f - 0.5f;
    }
    CHECK(write_matrix_model(in, "blk.0.ffn_up.weight", x, NE0, NE1, GGML_TYPE_F32));
    free(x);
    struct program_result r;
    quantize(in, out, "q4_0", NULL, 0, &r);
    CHECK_EXIT(r, 0);
    long long size;
    const long kib = mapped_in_pmds_kib(out, &size);
    CHECK(size > (4ll << 20));
    CHECK_MSG(kib >= 4096, "the output (%lld bytes) is mapped with %ld KiB of 2 MiB pages, not its first 4 MiB",
              size, kib);
    remove(in);
    remove(out);
}

int main(void) {
    const char * tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof(g_dir), "%s/test-quantize-tool-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(g_dir) == NULL) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    make_weights();
    char good[300];
    temp_path(good, sizeof(good), "model-f32.gguf");
    CHECK(write_input(good, false));

    test_output_kept_on_failure(good);
    test_output_not_a_file(good);
    test_output_replaced(good);
    test_empty_tensors();
    test_requantize(good);
    test_file_type_follows_weights();
    test_threads();
    test_imatrix();
    test_mxfp4_moe();
    test_imatrix_experts();
    test_imatrix_values();
    test_weight_values();
    test_signals();
    test_output_in_large_folios();

    char garbage[300];
    temp_path(garbage, sizeof(garbage), "garbage.gguf");
    remove(garbage);
    remove(good);
    CHECK_MSG(rmdir(g_dir) == 0, "files left in %s", g_dir);
    return TEST_RESULT();
}
