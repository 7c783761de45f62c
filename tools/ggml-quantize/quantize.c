// quantize.c: reading a GGUF model and writing it with converted weights:
// which tensors convert, the conversion in threads, and the file in order
// (metadata, then each tensor padded to the alignment).

#include "output-file.h"
#include "quantize.h"
#include "imatrix.h"

#include "gguf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// rows are converted in pieces of about this many bytes of F32
#define GQ_CHUNK_BYTES ((size_t) 16 << 20)

void gq_error(const char * fmt, ...) {
    char line[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof(line), fmt, args);
    va_end(args);
    fprintf(stderr, "ggml-quantize: error: %s\n", line);
}

bool gq_type_supported(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32:
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K:
        case GGML_TYPE_Q6_K:
        case GGML_TYPE_IQ4_NL:
        case GGML_TYPE_IQ4_XS:
        case GGML_TYPE_MXFP4:
        case GGML_TYPE_TQ1_0:
        case GGML_TYPE_TQ2_0:
        case GGML_TYPE_IQ2_S:
        case GGML_TYPE_IQ3_XXS:
        case GGML_TYPE_IQ3_S:
        case GGML_TYPE_IQ2_XXS: // these three with an importance matrix only
        case GGML_TYPE_IQ2_XS:
        case GGML_TYPE_IQ1_S:
        case GGML_TYPE_IQ1_M:
        case GGML_TYPE_NVFP4:
        case GGML_TYPE_Q1_0:
            return true;
        default:
            return false;
    }
}

bool gq_file_type(enum ggml_type type, uint32_t * file_type) {
    switch (type) {
        case GGML_TYPE_F32:  *file_type = 0;  return true;
        case GGML_TYPE_F16:  *file_type = 1;  return true;
        case GGML_TYPE_Q4_0: *file_type = 2;  return true;
        case GGML_TYPE_Q4_1: *file_type = 3;  return true;
        case GGML_TYPE_Q8_0: *file_type = 7;  return true;
        case GGML_TYPE_Q5_0: *file_type = 8;  return true;
        case GGML_TYPE_Q5_1: *file_type = 9;  return true;
        case GGML_TYPE_Q2_K: *file_type = 10; return true;
        // one type for every matrix: upstream's closest file types are the _S ones
        case GGML_TYPE_Q3_K: *file_type = 11; return true;
        case GGML_TYPE_Q4_K: *file_type = 14; return true;
        case GGML_TYPE_Q5_K: *file_type = 16; return true;
        case GGML_TYPE_Q6_K: *file_type = 18; return true;
        case GGML_TYPE_IQ4_NL: *file_type = 25; return true;
        case GGML_TYPE_IQ4_XS: *file_type = 30; return true;
        case GGML_TYPE_MXFP4:  *file_type = 38; return true;
        case GGML_TYPE_TQ1_0:  *file_type = 36; return true;
        case GGML_TYPE_TQ2_0:  *file_type = 37; return true;
        case GGML_TYPE_IQ3_XXS: *file_type = 23; return true;
        case GGML_TYPE_IQ3_S:   *file_type = 26; return true;
        case GGML_TYPE_IQ2_S:   *file_type = 28; return true;
        case GGML_TYPE_IQ2_XXS: *file_type = 19; return true;
        case GGML_TYPE_IQ2_XS:  *file_type = 20; return true;
        case GGML_TYPE_IQ1_S:   *file_type = 24; return true;
        case GGML_TYPE_IQ1_M:   *file_type = 31; return true;
        case GGML_TYPE_NVFP4:   *file_type = 39; return true;
        case GGML_TYPE_Q1_0:    *file_type = 40; return true;
        case GGML_TYPE_BF16: *file_type = 32; return true;
        default:             return false;
    }
}

//
// which tensors convert
//

// a weight matrix with data: empty tensors are copied through as they are
static bool gq_is_matrix(const struct ggml_tensor * t) {
    return t->ne[0] > 0 && t->ne[1] > 1 && t->ne[3] == 1; // ne[2] > 1: a stack of matrices (MoE experts)
}

// Decides whether t converts to target; false after reporting why a
// quantized matrix cannot be converted.
static bool gq_choose(const struct ggml_tensor * t, enum ggml_type target, const struct gq_params * params, bool * convert) {
    *convert = false;
    if (!gq_is_matrix(t) || t->type == target) {
        return true;
    }
    const bool float_src = t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_BF16;
    if (!float_src && !ggml_is_quantized(t->type)) {
        return true; // integer data is no weight to convert
    }
    if (!float_src && !params->allow_requantize) {
        gq_error("tensor %s is already quantized (%s): converting it to %s would lose precision twice; "
                 "--allow-requantize dequantizes and converts it", t->name, ggml_type_name(t->type), ggml_type_name(target));
        return false;
    }
    if (!float_src && ggml_get_type_traits(t->type)->to_float == NULL) {
        gq_error("tensor %s is of type %s, which this tool cannot dequantize", t->name, ggml_type_name(t->type));
        return false;
    }
    *convert = t->ne[0] % ggml_blck_size(target) == 0;
    return true;
}

//
// threads quantizing the rows of a chunk
//

struct gq_rows_job {
    enum ggml_type type;
    const float  * imatrix;
    const float  * src;
    void         * dst;
    int64_t        row0;
    int64_t        nrows;
    int64_t        n_per_row;
};

static void * gq_rows_worker(void * arg) {
    const struct gq_rows_job * job = (const struct gq_rows_job *) arg;
    ggml_quantize_chunk(job->type, job->src, job->dst, job->row0 * job->n_per_row, job->nrows, job->n_per_row, job->imatrix);
    return NULL;
}

// a thread is started for at least this many elements: starting one costs
// about as much as quantizing them (50,000 tensors of 64 elements took 1.2 s
// of system time with a thread each)
#define GQ_MIN_ELEMENTS_PER_THREAD ((int64_t) 1 << 16)

// rows split evenly over the threads; the caller takes the first share
static bool gq_quantize_rows(enum ggml_type type, const float * imatrix, const float * src, void * dst, int64_t nrows,
                             int64_t n_per_row, int n_threads) {
    const int64_t n_useful = (nrows * n_per_row + GQ_MIN_ELEMENTS_PER_THREAD - 1) / GQ_MIN_ELEMENTS_PER_THREAD;
    const int64_t n_cap  = n_useful < n_threads ? n_useful : n_threads;
    const int64_t n_want = nrows < n_cap ? nrows : n_cap;
    const int n_jobs = n_want > 0 ? (int) n_want : 1;
    struct gq_rows_job * jobs = (struct gq_rows_job *) calloc((size_t) n_jobs, sizeof(*jobs));
    pthread_t * threads = (pthread_t *) calloc((size_t) n_jobs, sizeof(*threads));
    bool * started = (bool *) calloc((size_t) n_jobs, sizeof(*started));
    if (jobs == NULL || threads == NULL || started == NULL) {
        gq_error("out of memory starting threads");
        free(jobs);
        free(threads);
        free(started);
        return false;
    }
    const int64_t per = (nrows + n_jobs - 1) / n_jobs;
    for (int i = 0; i < n_jobs; i++) {
        const int64_t r0 = per * i < nrows ? per * i : nrows;
        const int64_t r1 = r0 + per < nrows ? r0 + per : nrows;
        jobs[i] = (struct gq_rows_job) { .type = type, .imatrix = imatrix, .src = src, .dst = dst, .row0 = r0, .nrows = r1 - r0, .n_per_row = n_per_row };
        if (i > 0) {
            started[i] = pthread_create(&threads[i], NULL, gq_rows_worker, &jobs[i]) == 0;
        }
    }
    for (int i = 0; i < n_jobs; i++) {
        if (!started[i]) {
            gq_rows_worker(&jobs[i]); // the caller's share, and that of any thread that did not start
        }
    }
    for (int i = 1; i < n_jobs; i++) {
        if (started[i]) {
            pthread_join(threads[i], NULL);
        }
    }
    free(jobs);
    free(threads);
    free(started);
    return true;
}

//
// input and output
//

struct gq_io {
    FILE * in;
    FILE * out;
    const char * in_path;
    const char * out_path;
    size_t in_data;     // input data section offset
    uint64_t in_size;
    void * src_buf;     // source rows of a chunk
    float * f32_buf;    // the same rows as F32
    void * dst_buf;     // converted rows
    const struct gq_imatrix * imatrix; // or NULL
};

static bool gq_read_at(struct gq_io * io, uint64_t offset, void * dst, size_t size) {
    if (fseeko(io->in, (off_t) offset, SEEK_SET) != 0 || fread(dst, 1, size, io->in) != size) {
        gq_error("cannot read %s at offset %llu: %s", io->in_path, (unsigned long long) offset,
                 ferror(io->in) ? strerror(errno) : "unexpected end of file");
        return false;
    }
    return true;
}

static bool gq_write(struct gq_io * io, const void * data, size_t size) {
    if (size > 0 && fwrite(data, 1, size, io->out) != size) {
        gq_error("cannot write %s: %s", io->out_path, strerror(errno));
        return false;
    }
    return true;
}

static bool gq_pad(struct gq_io * io, uint64_t written, size_t alignment) {
    static const uint8_t zeros[64] = { 0 };
    size_t pad = (size_t) ((alignment - written % alignment) % alignment);
    while (pad > 0) {
        const size_t n = pad < sizeof(zeros) ? pad : sizeof(zeros);
        if (!gq_write(io, zeros, n)) {
            return false;
        }
        pad -= n;
    }
    return true;
}

static void gq_to_f32(enum ggml_type type, const void * src, float * dst, int64_t n) {
    if (type == GGML_TYPE_F32) {
        memcpy(dst, src, (size_t) n * sizeof(float));
    } else {
        ggml_get_type_traits(type)->to_float(src, dst, n);
    }
}

// A NaN or infinite weight cannot be quantized: the block's scale becomes
// NaN or infinite and takes its whole block with it (and the searches of
// the grid types find no nearest point). Refused, naming the tensor and the
// place; float targets (f16, bf16, f32) store them as they are.
static bool gq_check_finite(const struct ggml_tensor * t, const float * x, int64_t row0, int64_t nrows) {
    const int64_t ne0 = t->ne[0];
    for (int64_t i = 0; i < nrows*ne0; i++) {
        if (!isfinite(x[i])) {
            const int64_t row = row0 + i/ne0;
            gq_error("tensor %s: weight [%lld, %lld, %lld] is %g: a non-finite weight cannot be quantized",
                     t->name, (long long) (i % ne0), (long long) (row % t->ne[1]), (long long) (row / t->ne[1]),
                     (double) x[i]);
            return false;
        }
    }
    return true;
}

static bool gq_convert_tensor(struct gq_io * io, const struct ggml_tensor * t, uint64_t src_offset,
                              enum ggml_type target, const float * imatrix, int n_threads) {
    const int64_t ne0 = t->ne[0], nrows = ggml_nrows(t);
    const size_t src_row = ggml_row_size(t->type, ne0), dst_row = ggml_row_size(target, ne0);
    if (ne0 == 0 || nrows == 0) {
        return true; // no data (gq_is_matrix keeps these from converting)
    }
    int64_t chunk = (int64_t) (GQ_CHUNK_BYTES / ((size_t) ne0 * sizeof(float)));
    chunk = chunk < 1 ? 1 : (chunk > nrows ? nrows : chunk);
    io->src_buf = malloc((size_t) chunk * src_row);
    io->f32_buf = (float *) malloc((size_t) (chunk * ne0) * sizeof(float));
    io->dst_buf = malloc((size_t) chunk * dst_row);
    bool ok = io->src_buf != NULL && io->f32_buf != NULL && io->dst_buf != NULL;
    if (!ok) {
        gq_error("out of memory converting %s", t->name);
    }
    for (int64_t r = 0, n = 0; ok && r < nrows; r += n) {
        n = nrows - r < chunk ? nrows - r : chunk;
        // a stack of matrices (MoE experts) has an importance matrix for each
        const float * im = imatrix;
        if (imatrix != NULL && t->ne[2] > 1) {
            n  = n < t->ne[1] - r % t->ne[1] ? n : t->ne[1] - r % t->ne[1];
            im = imatrix + (r / t->ne[1]) * ne0;
        }
        // the file is little-endian: a big-endian host converts what it reads and what it writes
        ok = gq_read_at(io, src_offset + (uint64_t) r * src_row, io->src_buf, (size_t) n * src_row) &&
             gguf_tensor_data_to_host(t->name, t->type, io->src_buf, (size_t) n * src_row);
        if (ok) {
            gq_to_f32(t->type, io->src_buf, io->f32_buf, n * ne0);
            ok = (!ggml_is_quantized(target) || gq_check_finite(t, io->f32_buf, r, n)) &&
                 gq_quantize_rows(target, im, io->f32_buf, io->dst_buf, n, ne0, n_threads) &&
                 gguf_tensor_data_to_host(t->name, target, io->dst_buf, (size_t) n * dst_row) &&
                 gq_write(io, io->dst_buf, (size_t) n * dst_row);
        }
    }
    free(io->src_buf);
    free(io->f32_buf);
    free(io->dst_buf);
    io->src_buf = io->f32_buf = io->dst_buf = NULL;
    return ok;
}

static bool gq_copy_tensor(struct gq_io * io, uint64_t src_offset, size_t size) {
    const size_t step = size < GQ_CHUNK_BYTES ? size : GQ_CHUNK_BYTES;
    void * buf = malloc(step > 0 ? step : 1);
    bool ok = buf != NULL;
    if (!ok) {
        gq_error("out of memory copying a tensor");
    }
    for (size_t done = 0; ok && done < size; done += step) {
        const size_t n = size - done < step ? size - done : step;
        ok = gq_read_at(io, src_offset + done, buf, n) && gq_write(io, buf, n);
    }
    free(buf);
    return ok;
}

//
// the whole file
//

// what the conversion reads from the input: its tensors in file order, and
// the type of each in the output (its own when it does not convert)
struct gq_plan {
    int64_t                     n;
    const struct ggml_tensor ** tensors;
    enum ggml_type            * types;
};

static void gq_plan_free(struct gq_plan * plan) {
    free(plan->tensors);
    free(plan->types);
}

// The reader creates the tensors of meta in file order: walking both lists
// together avoids a search by name per tensor.
static bool gq_plan_tensors(const struct gguf_context * in, struct ggml_context * meta, const struct gq_params * params,
                            struct gq_plan * plan) {
    plan->n       = gguf_get_n_tensors(in);
    plan->tensors = (const struct ggml_tensor **) calloc((size_t) (plan->n > 0 ? plan->n : 1), sizeof(*plan->tensors));
    plan->types   = (enum ggml_type *) calloc((size_t) (plan->n > 0 ? plan->n : 1), sizeof(*plan->types));
    if (plan->tensors == NULL || plan->types == NULL) {
        gq_error("out of memory planning %lld tensors", (long long) plan->n);
        return false;
    }
    struct ggml_tensor * t = ggml_get_first_tensor(meta);
    for (int64_t i = 0; i < plan->n; i++) {
        const char * name = gguf_get_tensor_name(in, i);
        if (t == NULL || strcmp(t->name, name) != 0) {
            t = ggml_get_tensor(meta, name);
        }
        if (t == NULL) {
            gq_error("tensor %s of the GGUF has no ggml tensor", name); // the reader creates one for each
            return false;
        }
        plan->tensors[i] = t;
        t = ggml_get_next_tensor(meta, t);
    }
    // the target of each: the mix's choice by role, or the one type
    if (params->mix != GQ_MIX_NONE) {
        gq_mix_plan(in, plan->tensors, plan->n, params->mix, plan->types);
    }
    for (int64_t i = 0; i < plan->n; i++) {
        const enum ggml_type target = params->mix != GQ_MIX_NONE ? plan->types[i] : params->type;
        bool convert = false;
        if (!gq_choose(plan->tensors[i], target, params, &convert)) {
            return false;
        }
        plan->types[i] = convert ? target : plan->tensors[i]->type;
    }
    return true;
}

// general.file_type: the mix's (upstream's llama_ftype) with a mix, else the
// type most weight elements of the output have; a model whose main type has
// no file type gets none
static void gq_set_file_type(struct gguf_context * out, const struct gq_plan * plan, enum gq_mix_id mix) {
    if (mix != GQ_MIX_NONE) {
        gguf_set_val_u32(out, "general.file_type", (uint32_t) mix);
        return;
    }
    int64_t count[GGML_TYPE_COUNT] = { 0 };
    enum ggml_type main_type = GGML_TYPE_COUNT;
    for (int64_t i = 0; i < plan->n; i++) {
        const struct ggml_tensor * t = plan->tensors[i];
        if (gq_is_matrix(t)) {
            const enum ggml_type type = plan->types[i];
            count[type] += ggml_nelements(t);
            main_type = main_type == GGML_TYPE_COUNT || count[type] > count[main_type] ? type : main_type;
        }
    }
    uint32_t file_type = 0;
    if (main_type != GGML_TYPE_COUNT && gq_file_type(main_type, &file_type)) {
        gguf_set_val_u32(out, "general.file_type", file_type);
    } else {
        gguf_remove_key(out, "general.file_type");
    }
}

// the output's metadata: every input key, the file type, the tensors with their new types
static struct gguf_context * gq_plan_output(const struct gguf_context * in, const struct gq_plan * plan,
                                            struct ggml_context * out_meta, enum gq_mix_id mix) {
    struct gguf_context * out = gguf_init_empty();
    if (out == NULL) {
        return NULL;
    }
    gguf_set_kv(out, in);
    gq_set_file_type(out, plan, mix);
    gguf_set_val_u32(out, "general.quantization_version", 2);
    for (int64_t i = 0; i < plan->n; i++) {
        const struct ggml_tensor * t = plan->tensors[i];
        // every dimension: ggml_n_dims would drop a trailing 0 and make an empty tensor [64, 0] one of [64]
        struct ggml_tensor * o = ggml_new_tensor(out_meta, plan->types[i], GGML_MAX_DIMS, t->ne);
        ggml_set_name(o, t->name);
        gguf_add_tensor(out, o);
    }
    return out;
}

static bool gq_check_input(const struct gguf_context * in, uint64_t in_size, size_t data_offset, const char * path) {
    for (int64_t i = 0; i < gguf_get_n_tensors(in); i++) {
        const uint64_t end = (uint64_t) data_offset + gguf_get_tensor_offset(in, i) + gguf_get_tensor_size(in, i);
        if (end > in_size) {
            gq_error("%s: the data of tensor %s lies beyond the end of the file (truncated file?)", path, gguf_get_tensor_name(in, i));
            return false;
        }
    }
    return true;
}

// the importances for matrix t converted to target (NULL where the file has
// none); false after reporting an entry of the wrong length, or a type that
// needs one and finds none
static bool gq_tensor_imatrix(const struct gq_imatrix * im, const struct ggml_tensor * t, enum ggml_type target,
                              const float ** values) {
    int64_t n_per_row = 0, n_mat = 0;
    *values = gq_imatrix_find(im, t->name, &n_per_row, &n_mat);
    if (*values != NULL && (n_per_row != t->ne[0] || n_mat != t->ne[2])) { // one per matrix of a stack
        gq_error("the importance matrix entry of %s has %lld x %lld values; the tensor has rows of %lld in %lld matrices",
                 t->name, (long long) n_per_row, (long long) n_mat, (long long) t->ne[0], (long long) t->ne[2]);
        return false;
    }
    if (*values == NULL && ggml_quantize_requires_imatrix(target)) {
        gq_error("tensor %s: type %s needs an importance matrix, and %s has no entry for it", t->name,
                 ggml_type_name(target), im != NULL ? "the importance matrix" : "there is no importance matrix that");
        return false;
    }
    return true;
}

static bool gq_write_tensors(struct gq_io * io, const struct gguf_context * in, const struct gq_plan * plan,
                             const struct gguf_context * out, const struct gq_params * params, struct gq_stats * stats) {
    const size_t alignment = gguf_get_alignment(out);
    for (int64_t i = 0; i < plan->n; i++) {
        const struct ggml_tensor * t = plan->tensors[i];
        const uint64_t src_offset = io->in_data + gguf_get_tensor_offset(in, i);
        const bool convert = plan->types[i] != t->type;
        const float * imatrix = NULL;
        if (convert && !gq_tensor_imatrix(io->imatrix, t, plan->types[i], &imatrix)) {
            return false;
        }
        const bool ok = convert ? gq_convert_tensor(io, t, src_offset, plan->types[i], imatrix, params->n_threads)
                                : gq_copy_tensor(io, src_offset, ggml_nbytes(t));
        if (!ok || !gq_pad(io, gguf_get_tensor_size(out, i), alignment)) {
            return false;
        }
        stats->bytes_in  += ggml_nbytes(t);
        stats->bytes_out += gguf_get_tensor_size(out, i);
        stats->n_converted += convert;
        stats->n_kept      += !convert;
        if (params->verbose) {
            printf("%-40s %-6s -> %-6s [%lld, %lld, %lld, %lld]\n", t->name, ggml_type_name(t->type),
                   ggml_type_name(plan->types[i]), (long long) t->ne[0], (long long) t->ne[1],
                   (long long) t->ne[2], (long long) t->ne[3]);
        }
    }
    return true;
}

static bool gq_same_file(const char * a, const char * b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// the metadata with its padding, through the stream's buffer like the data
// (gguf_write_to_file_ptr would flush it, and the 4 MiB pieces after it
// would no longer lie at multiples of 4 MiB: see output-file.h)
static bool gq_write_meta(struct gq_io * io, const struct gguf_context * out, const char * tmp_path) {
    const size_t size = gguf_get_meta_size(out);
    void * meta = malloc(size > 0 ? size : 1);
    if (meta == NULL) {
        gq_error("out of memory writing the metadata (%zu bytes)", size);
        return false;
    }
    gguf_get_meta_data(out, meta);
    const bool ok = gq_write(io, meta, size);
    free(meta);
    if (!ok) {
        gq_error("cannot write the metadata to %s", tmp_path);
    }
    return ok;
}

// the metadata (with its padding), then the tensors in order, each padded,
// into a temporary file that replaces out_path when all is written
static bool gq_write_output(struct gq_io * io, const struct gguf_context * in, const struct gq_plan * plan,
                            const struct gguf_context * out, const struct gq_params * params, struct gq_stats * stats) {
    struct gq_output output;
    if (!gq_output_open(&output, io->out_path)) {
        return false;
    }
    io->out = output.file;
    io->in  = fopen(io->in_path, "rb");
    bool ok = io->in != NULL;
    if (!ok) {
        gq_error("cannot open %s: %s", io->in_path, strerror(errno));
    }
    ok = ok && gq_write_meta(io, out, output.tmp);
    ok = ok && gq_write_tensors(io, in, plan, out, params, stats);
    if (io->in != NULL) {
        fclose(io->in);
        io->in = NULL;
    }
    io->out = NULL;
    if (!ok) {
        gq_output_abort(&output);
        return false;
    }
    return gq_output_commit(&output);
}

static bool gq_run(const char * in_path, const char * out_path, const struct gq_params * params, struct gq_stats * stats,
                   struct gguf_context * in, struct ggml_context * meta, const struct gq_imatrix * imatrix) {
    struct gq_io io = { .in = NULL, .out = NULL, .in_path = in_path, .out_path = out_path, .in_data = gguf_get_data_offset(in),
                        .imatrix = imatrix };
    struct stat st;
    if (stat(in_path, &st) != 0 || !gq_check_input(in, (uint64_t) st.st_size, io.in_data, in_path)) {
        return false;
    }
    struct gq_plan plan = { .n = 0, .tensors = NULL, .types = NULL };
    if (!gq_plan_tensors(in, meta, params, &plan)) {
        gq_plan_free(&plan);
        return false;
    }
    const struct ggml_init_params ip = {
        .mem_size   = (size_t) (plan.n + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * out_meta = ggml_init(ip);
    struct gguf_context * out = out_meta != NULL ? gq_plan_output(in, &plan, out_meta, params->mix) : NULL;
    bool ok = out != NULL;
    if (!ok) {
        gq_error("out of memory planning the output");
    }
    ok = ok && gq_write_output(&io, in, &plan, out, params, stats);
    gguf_free(out);
    if (out_meta != NULL) {
        ggml_free(out_meta);
    }
    gq_plan_free(&plan);
    return ok;
}

bool gq_quantize_file(const char * in_path, const char * out_path, const struct gq_params * params,
                      struct gq_stats * stats) {
    struct gq_stats local = { 0, 0, 0, 0 };
    stats = stats != NULL ? stats : &local;
    *stats = local;
    if (params->mix == GQ_MIX_NONE && ggml_quantize_requires_imatrix(params->type) && params->imatrix_path == NULL) {
        // as upstream's quantize tool: these types are unusable without one
        gq_error("type %s needs an importance matrix (--imatrix FILE)", ggml_type_name(params->type));
        return false;
    }
    if (params->mix == GQ_MIX_NONE && !gq_type_supported(params->type)) {
        gq_error("cannot convert to type %s (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_K..q6_K, iq4_nl, iq4_xs, mxfp4, tq1_0, tq2_0, iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, nvfp4, q1_0)",
                 ggml_type_name(params->type));
        return false;
    }
    if (params->mix != GQ_MIX_NONE && gq_mix_base_type(params->mix) == GGML_TYPE_COUNT) {
        gq_error("unknown type mix %d", (int) params->mix);
        return false;
    }
    if (gq_same_file(in_path, out_path)) {
        gq_error("the output %s would overwrite the input", out_path);
        return false;
    }
    // opened first, so that a missing file is reported in one line
    FILE * f = fopen(in_path, "rb");
    if (f == NULL) {
        gq_error("cannot open %s: %s", in_path, strerror(errno));
        return false;
    }
    struct ggml_context * meta = NULL;
    const struct gguf_init_params gp = { .no_alloc = true, .ctx = &meta };
    struct gguf_context * in = gguf_init_from_file_ptr(f, gp);
    fclose(f);
    if (in == NULL) {
        gq_error("cannot load %s: not a valid GGUF file", in_path); // the reader said why
        return false;
    }
    struct gq_imatrix * imatrix = NULL;
    if (params->imatrix_path != NULL) {
        imatrix = gq_imatrix_load(params->imatrix_path);
        if (imatrix == NULL) {
            ggml_free(meta);
            gguf_free(in);
            return false;
        }
    }
    const bool ok = gq_run(in_path, out_path, params, stats, in, meta, imatrix);
    gq_imatrix_free(imatrix);
    ggml_free(meta);
    gguf_free(in);
    return ok;
}
