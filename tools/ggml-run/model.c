// model.c: loading a model from a GGUF file (or any weight source): the
// tensors its architecture describes and their shapes, placement of the
// weights on devices, the mapped CPU buffer and copies to device memory.

#include "model.h"
#include "split-tensor.h"
#include "run-common.h"

#include "ggml-alloc.h"
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct run_model_params run_model_default_params(void) {
    return (struct run_model_params) {
        .devices      = NULL,
        .n_gpu_layers = -1,
        .tensor_split = NULL,
        .split_tensor = false,
        .use_mmap     = true,
        .repack       = true,
    };
}

//
// weight sources: a file, mapped or read
//

static void source_release_mapping(void * base, size_t size) {
    munmap(base, size);
}

static void source_release_heap(void * base, size_t size) {
    (void) size;
    free(base);
}

void run_weight_source_free(struct run_weight_source * src) {
    if (src->release != NULL && src->base != NULL) {
        src->release(src->base, src->size);
    }
    if (src->meta != NULL) {
        ggml_free(src->meta);
    }
    free(src->tensors);
    if (src->gguf != NULL) {
        gguf_free(src->gguf);
    }
    memset(src, 0, sizeof(*src));
}

static bool source_read_file(int fd, size_t size, const char * path, void ** out) {
    void * mem = NULL;
    const size_t page = (size_t) sysconf(_SC_PAGESIZE);
    if (posix_memalign(&mem, page, size > 0 ? size : 1) != 0) {
        run_error("out of memory reading %s (%zu bytes)", path, size);
        return false;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // huge pages for the weights, as ggml's own host buffers ask for them
    // (ggml_aligned_malloc): every weight is streamed once per token
    if (getenv("GGML_NO_HUGEPAGES") == NULL && size >= page) {
        (void) madvise(mem, size / page * page, MADV_HUGEPAGE);
    }
#endif
    for (size_t done = 0; done < size;) {
        const ssize_t n = pread(fd, (char *) mem + done, size - done, (off_t) done);
        if (n <= 0) {
            run_error("cannot read %s: %s", path, n < 0 ? strerror(errno) : "unexpected end of file");
            free(mem);
            return false;
        }
        done += (size_t) n;
    }
    *out = mem;
    return true;
}

// The file mapped read-only, its pages faulted in now rather than during the
// first tokens; NULL (errno set) on failure. On Linux the mapping is advised
// MADV_HUGEPAGE before the faults, unless GGML_NO_HUGEPAGES is set: a file
// not yet in the page cache is then read into 2 MiB folios and mapped with
// 2 MiB pages, as the weights ggml allocates are (ggml_aligned_malloc); a
// file already cached keeps the folios it has.
static void * source_map_weights(int fd, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MADV_POPULATE_READ)
    if (getenv("GGML_NO_HUGEPAGES") == NULL) {
        void * base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (base == MAP_FAILED) {
            return NULL;
        }
        (void) madvise(base, size, MADV_HUGEPAGE);
        if (madvise(base, size, MADV_POPULATE_READ) != 0 && errno == EINVAL) {
            // a kernel before 5.14 (other failures are left to the reads, as
            // MAP_POPULATE leaves them): the first read of each page faults it in
            const size_t page = (size_t) sysconf(_SC_PAGESIZE);
            volatile unsigned char sum = 0;
            for (size_t i = 0; i < size; i += page) {
                sum += ((const volatile unsigned char *) base)[i];
            }
            (void) sum;
        }
        return base;
    }
#endif
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE;
#endif
    void * base = mmap(NULL, size, PROT_READ, flags, fd, 0);
    return base == MAP_FAILED ? NULL : base;
}

static bool source_map_file(const char * path, bool use_mmap, struct run_weight_source * src) {
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        run_error("cannot open %s: %s", path, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        run_error("cannot read %s: %s", path, strerror(errno));
        close(fd);
        return false;
    }
    if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
        run_error("cannot read %s: %s", path, S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
        close(fd);
        return false;
    }
    src->size = (size_t) st.st_size;
    bool ok = true;
    if (use_mmap) {
        src->base = source_map_weights(fd, src->size);
        if (src->base == NULL) {
            run_error("cannot map %s: %s", path, strerror(errno));
            ok = false;
        } else {
            src->release = source_release_mapping;
        }
    } else {
        ok = source_read_file(fd, src->size, path, &src->base);
        src->release = ok ? source_release_heap : NULL;
    }
    close(fd);
    return ok;
}

// every tensor's bytes must lie inside the file
static bool source_check_bounds(const struct run_weight_source * src) {
    for (int64_t i = 0; i < gguf_get_n_tensors(src->gguf); i++) {
        const size_t offs = gguf_get_tensor_offset(src->gguf, i);
        const size_t size = gguf_get_tensor_size(src->gguf, i);
        if (src->data_offset > src->size || offs > src->size - src->data_offset ||
            size > src->size - src->data_offset - offs) {
            run_error("%s: the data of tensor %s lies beyond the end of the file (truncated file?)",
                      src->name, gguf_get_tensor_name(src->gguf, i));
            return false;
        }
    }
    return true;
}

bool run_source_index_tensors(struct run_weight_source * src) {
    const int64_t n = gguf_get_n_tensors(src->gguf);
    free(src->tensors);
    src->tensors = (struct ggml_tensor **) run_calloc((size_t) (n > 0 ? n : 1), sizeof(*src->tensors), "the tensor index");
    if (src->tensors == NULL) {
        return false;
    }
    // meta holds the tensors in the GGUF's order (the reader and the
    // synthetic model both create them so); a name search is the fallback
    struct ggml_tensor * t = ggml_get_first_tensor(src->meta);
    for (int64_t id = 0; id < n; id++) {
        const char * name = gguf_get_tensor_name(src->gguf, id);
        if (t == NULL || strcmp(t->name, name) != 0) {
            t = ggml_get_tensor(src->meta, name);
        }
        src->tensors[id] = t;
        t = t != NULL ? ggml_get_next_tensor(src->meta, t) : NULL;
    }
    return true;
}

struct ggml_tensor * run_source_tensor(const struct run_weight_source * src, const char * name) {
    const int64_t id = gguf_find_tensor(src->gguf, name);
    return id < 0 ? NULL : src->tensors[id];
}

// the file is opened first, so that a missing one is reported in one line
// GGUF tensor data is little-endian: a big-endian host reads the file into
// memory (never maps it) and converts every tensor there, or refuses the file
// when a tensor's type does not convert (the reader's log line names it)
static bool source_data_to_host(struct run_weight_source * src) {
    for (int64_t i = 0; i < gguf_get_n_tensors(src->gguf); i++) {
        uint8_t * data = (uint8_t *) src->base + src->data_offset + gguf_get_tensor_offset(src->gguf, i);
        if (!gguf_tensor_data_to_host(gguf_get_tensor_name(src->gguf, i), gguf_get_tensor_type(src->gguf, i), data,
                                      gguf_get_tensor_size(src->gguf, i))) {
            run_error("cannot load %s on this big-endian host", src->name);
            return false;
        }
    }
    return true;
}

static bool host_is_little_endian(void) {
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static bool source_open_file(const char * path, bool use_mmap, struct run_weight_source * src) {
    memset(src, 0, sizeof(*src));
    src->name = path;
    const bool convert = !host_is_little_endian();
    if (!source_map_file(path, use_mmap && !convert, src)) {
        run_weight_source_free(src);
        return false;
    }
    const struct gguf_init_params gp = { .no_alloc = true, .ctx = &src->meta };
    src->gguf = gguf_init_from_buffer(src->base, src->size, gp);
    if (src->gguf == NULL) {
        // the GGUF reader has said what is wrong, but not in which file
        run_error("cannot load %s: not a valid GGUF file", path);
        run_weight_source_free(src);
        return false;
    }
    src->data_offset = gguf_get_data_offset(src->gguf);
    if (!run_source_index_tensors(src) || !source_check_bounds(src) || (convert && !source_data_to_host(src))) {
        run_weight_source_free(src);
        return false;
    }
    return true;
}

//
// tensors
//

// the tensor of that name with the shape ne (3 dimensions), or NULL (reported when required or misshapen)
static struct ggml_tensor * model_tensor(struct run_model * model, const char * name, const int64_t ne[3], bool required) {
    struct ggml_tensor * t = run_source_tensor(&model->src, name);
    if (t == NULL) {
        if (required) {
            run_error("tensor %s is missing", name);
        }
        return NULL;
    }
    if (t->ne[0] != ne[0] || t->ne[1] != ne[1] || t->ne[2] != ne[2] || t->ne[3] != 1) {
        run_error("tensor %s has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld, %lld]", name,
                  (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3],
                  (long long) ne[0], (long long) ne[1], (long long) ne[2]);
        return NULL;
    }
    return t;
}

static struct ggml_tensor * model_tensor_2d(struct run_model * model, const char * name, int64_t ne0, int64_t ne1, bool required) {
    const int64_t ne[3] = { ne0, ne1, 1 };
    return model_tensor(model, name, ne, required);
}

static struct ggml_tensor ** layer_field(struct run_layer * l, const struct run_tensor_desc * d) {
    return (struct ggml_tensor **) (void *) ((char *) l + d->field);
}

// the tensors of layer il that the architecture describes
static bool model_layer_tensors(struct run_model * model, int64_t il) {
    const struct run_hparams * hp = &model->hp;
    const struct run_arch * arch = hp->arch;
    struct run_layer * l = &model->layers[il];
    char name[GGML_MAX_NAME + 32];
    for (int i = 0; i < arch->n_layer_tensors; i++) {
        const struct run_tensor_desc * d = &arch->layer[i];
        const int64_t ne[3] = { run_dim_size(hp, d->ne[0]), run_dim_size(hp, d->ne[1]), run_dim_size(hp, d->ne[2]) };
        snprintf(name, sizeof(name), "blk.%lld.%s", (long long) il, d->name);
        struct ggml_tensor * t = model_tensor(model, name, ne, d->required);
        if (t == NULL && (d->required || run_source_tensor(&model->src, name) != NULL)) {
            return false;
        }
        *layer_field(l, d) = t;
    }
    return true;
}

static bool model_find_tensors(struct run_model * model) {
    const struct run_hparams * hp = &model->hp;
    model->tok_embd    = model_tensor_2d(model, "token_embd.weight", hp->n_embd, hp->n_vocab, true);
    model->output_norm = model->tok_embd ? model_tensor_2d(model, "output_norm.weight", hp->n_embd, 1, true) : NULL;
    if (model->output_norm == NULL) {
        return false;
    }
    model->output = run_source_tensor(&model->src, "output.weight") != NULL
        ? model_tensor_2d(model, "output.weight", hp->n_embd, hp->n_vocab, true)
        : model->tok_embd; // tied embeddings
    if (model->output == NULL) {
        return false;
    }
    // LongRoPE (Phi-3 of 128k tokens) changes the frequencies by context length: not implemented
    if (run_source_tensor(&model->src, "rope_factors_long.weight") != NULL) {
        run_error("RoPE factors rope_factors_long/short (LongRoPE) are not supported");
        return false;
    }
    model->layers = (struct run_layer *) run_calloc((size_t) hp->n_layer, sizeof(struct run_layer), "the layers");
    if (model->layers == NULL) {
        return false;
    }
    for (int64_t il = 0; il < hp->n_layer; il++) {
        if (!model_layer_tensors(model, il)) {
            return false;
        }
    }
    return true;
}

//
// placement
//

struct weight_ref {
    struct ggml_tensor * t;
    enum run_weight_use  use;
    int                  dev;    // index into model->devs.layer
    bool                 repack; // on the CPU, in its extra buffer type (a copy in the kernels' layout)
};

// a throw-away node that uses w as the model does
static struct ggml_tensor * weight_use_op(struct ggml_context * ctx, struct ggml_tensor * w, enum run_weight_use use) {
    switch (use) {
        case RUN_USE_MATMUL: return ggml_mul_mat(ctx, w, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, w->ne[0], 1));
        case RUN_USE_MATMUL_ID: {
            const int64_t n_used = w->ne[2] < 2 ? w->ne[2] : 2;
            return ggml_mul_mat_id(ctx, w, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, w->ne[0], 1, 1),
                                   ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, 1));
        }
        case RUN_USE_SCALE:  return ggml_mul(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, w->ne[0], 1), w);
        case RUN_USE_ADD:    return ggml_add(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, w->ne[0], 1), w);
        case RUN_USE_ROWS:   return ggml_get_rows(ctx, w, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1));
        case RUN_USE_ROPE: {
            struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 2 * w->ne[0], 1, 1);
            return ggml_rope_ext(ctx, x, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1), w, (int) (2 * w->ne[0]),
                                 GGML_ROPE_TYPE_NORMAL, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        }
    }
    return NULL;
}

static bool dev_supports_weight(ggml_backend_dev_t dev, struct ggml_tensor * w, enum run_weight_use use) {
    const struct ggml_init_params ip = { .mem_size = 8 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        return false;
    }
    struct ggml_tensor * op = weight_use_op(ctx, w, use);
    // the model reads float rows: GET_ROWS of an I32 matrix gives I32 rows
    const bool ok = ggml_backend_dev_supports_op(dev, op) && (use != RUN_USE_ROWS || op->type == GGML_TYPE_F32);
    ggml_free(ctx);
    return ok;
}

// The first of the device's extra buffer types (weights in a layout of its
// kernels, as the CPU's "CPU_REPACK") that takes weight w for its use, or
// NULL: asked as llama.cpp asks, with w in an empty buffer of each type.
static ggml_backend_buffer_type_t dev_extra_buft_for_weight(ggml_backend_dev_t dev, struct ggml_tensor * w, enum run_weight_use use) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    void * sym = reg != NULL ? ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts") : NULL;
    if (sym == NULL || w->buffer != NULL) {
        return NULL;
    }
    ggml_backend_dev_get_extra_bufts_t get_extra_bufts;
    memcpy(&get_extra_bufts, &sym, sizeof(sym));
    for (ggml_backend_buffer_type_t * b = get_extra_bufts(dev); b != NULL && *b != NULL; b++) {
        ggml_backend_buffer_t empty = ggml_backend_buft_alloc_buffer(*b, 0);
        if (empty == NULL) {
            continue;
        }
        w->buffer = empty;
        const bool ok = dev_supports_weight(dev, w, use);
        w->buffer = NULL;
        ggml_backend_buffer_free(empty);
        if (ok) {
            return *b;
        }
    }
    return NULL;
}

// the wanted device if it can use the weight, else the CPU (if it can)
static bool place_weight(struct run_model * model, struct weight_ref * ref, int wanted) {
    const int cpu = run_devices_cpu(&model->devs);
    if (wanted != cpu && dev_supports_weight(model->devs.layer[wanted], ref->t, ref->use)) {
        ref->dev = wanted;
        return true;
    }
    if (!dev_supports_weight(model->devs.layer[cpu], ref->t, ref->use)) {
        static const char * const op_of_use[] = { "MUL_MAT", "MUL_MAT_ID", "MUL", "ADD", "GET_ROWS", "ROPE" };
        run_error("the CPU backend cannot compute %s with tensor %s of type %s", op_of_use[ref->use], ref->t->name,
                  ggml_type_name(ref->t->type));
        return false;
    }
    if (wanted != cpu) {
        run_warn("%s cannot use %s (%s): it stays on the CPU", ggml_backend_dev_name(model->devs.layer[wanted]),
                 ref->t->name, ggml_type_name(ref->t->type));
    }
    ref->dev = cpu;
    return true;
}

static void weight_list_add(struct weight_ref * refs, int * n, struct ggml_tensor * t, enum run_weight_use use) {
    if (t != NULL) {
        refs[(*n)++] = (struct weight_ref) { .t = t, .use = use, .dev = -1 };
    }
}

// The weights in placement order, each with the device of its layer.
static struct weight_ref * model_list_weights(struct run_model * model, struct ggml_tensor * rope_freqs, int * n_refs) {
    const int64_t n_layer = model->hp.n_layer;
    const int per_layer = model->hp.arch->n_layer_tensors;
    struct weight_ref * refs = (struct weight_ref *) run_calloc((size_t) (per_layer * n_layer + 4), sizeof(*refs), "the weight list");
    if (refs == NULL) {
        return NULL;
    }
    int n = 0;
    for (int64_t il = 0; il < n_layer; il++) {
        struct run_layer * l = &model->layers[il];
        const int first = n;
        for (int i = 0; i < per_layer; i++) {
            const struct run_tensor_desc * d = &model->hp.arch->layer[i];
            weight_list_add(refs, &n, *layer_field(l, d), d->use);
        }
        for (int i = first; i < n; i++) {
            refs[i].dev = model->layer_dev[il];
        }
    }
    const int out_first = n;
    weight_list_add(refs, &n, model->output_norm, RUN_USE_SCALE);
    if (model->output != model->tok_embd) {
        weight_list_add(refs, &n, model->output, RUN_USE_MATMUL);
    }
    for (int i = out_first; i < n; i++) {
        refs[i].dev = model->layer_dev[n_layer];
    }
    // the input layer runs on the CPU, as upstream keeps it; so do the
    // small frequency factors, which the scheduler copies where needed
    const int cpu = run_devices_cpu(&model->devs);
    weight_list_add(refs, &n, model->tok_embd, RUN_USE_ROWS);
    refs[n - 1].dev = cpu;
    if (rope_freqs != NULL) {
        weight_list_add(refs, &n, rope_freqs, RUN_USE_ROPE);
        refs[n - 1].dev = cpu;
    }
    *n_refs = n;
    return refs;
}

static bool model_push_buffer(struct run_model * model, ggml_backend_buffer_t buf) {
    ggml_backend_buffer_t * grown = (ggml_backend_buffer_t *) realloc(model->buffers, (size_t) (model->n_buffers + 1) * sizeof(*grown));
    if (grown == NULL) {
        run_error("out of memory");
        ggml_backend_buffer_free(buf);
        return false;
    }
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    grown[model->n_buffers++] = buf;
    model->buffers = grown;
    return true;
}

static const void * source_tensor_data(const struct run_weight_source * src, const struct ggml_tensor * t) {
    const int64_t id = gguf_find_tensor(src->gguf, t->name);
    return (const char *) src->base + src->data_offset + gguf_get_tensor_offset(src->gguf, id);
}

// CPU weights stay where the source holds them
static bool model_map_cpu_weights(struct run_model * model, struct weight_ref * refs, int n_refs) {
    ggml_backend_dev_t cpu_dev = model->devs.layer[run_devices_cpu(&model->devs)];
    size_t max_tensor = 0;
    for (int i = 0; i < n_refs; i++) {
        max_tensor = ggml_nbytes(refs[i].t) > max_tensor ? ggml_nbytes(refs[i].t) : max_tensor;
    }
    ggml_backend_buffer_t buf = ggml_backend_dev_buffer_from_host_ptr(cpu_dev, model->src.base, model->src.size, max_tensor);
    if (buf == NULL) {
        run_error("the CPU device cannot use the model's memory as a buffer");
        return false;
    }
    if (!model_push_buffer(model, buf)) {
        return false;
    }
    for (int i = 0; i < n_refs; i++) {
        if (refs[i].dev != run_devices_cpu(&model->devs) || refs[i].repack) {
            continue;
        }
        if (ggml_backend_tensor_alloc(buf, refs[i].t, (void *) source_tensor_data(&model->src, refs[i].t)) != GGML_STATUS_SUCCESS) {
            run_error("cannot place tensor %s in the mapped buffer", refs[i].t->name);
            return false;
        }
        model->weight_bytes[refs[i].dev] += ggml_nbytes(refs[i].t);
    }
    return true;
}

// The pages of a mapped file that held a tensor now copied into the CPU's
// extra buffer type are no longer read: give them back at once, so that the
// copies do not add up to a second model in memory (should anything read
// them, they come back from the file). A source in heap memory keeps them.
static void model_release_mapped_copy(struct run_model * model, const struct ggml_tensor * t) {
    if (model->src.release != source_release_mapping) {
        return;
    }
    const uintptr_t page  = (uintptr_t) sysconf(_SC_PAGESIZE);
    const uintptr_t begin = (uintptr_t) source_tensor_data(&model->src, t);
    const uintptr_t first = (begin + page - 1) / page * page;
    const uintptr_t last  = (begin + ggml_nbytes(t)) / page * page;
    if (last > first) {
#if defined(MADV_PAGEOUT)
        // the page cache's copy too (madvise(MADV_DONTNEED) alone unmaps the
        // pages, and the file's pages stay in memory until the kernel needs it)
        madvise((void *) first, last - first, MADV_PAGEOUT);
#endif
        madvise((void *) first, last - first, MADV_DONTNEED);
    }
}

static size_t pad_to(size_t x, size_t align) {
    return (x + align - 1) / align * align;
}

// One device's weights of one buffer type (those with repack set, or not):
// as few buffers as its maximum buffer size allows, filled in order, then
// the bytes copied from the source.
static bool model_upload_device_weights(struct run_model * model, struct weight_ref * refs, int n_refs, int dev,
                                        ggml_backend_buffer_type_t buft, bool repack) {
    const size_t align   = ggml_backend_buft_get_alignment(buft);
    const size_t max_buf = ggml_backend_buft_get_max_size(buft);
    int i = 0;
    while (i < n_refs) {
        size_t size = 0;
        int end = i;
        for (; end < n_refs; end++) {
            if (refs[end].dev != dev || refs[end].repack != repack) {
                continue;
            }
            const size_t need = pad_to(ggml_backend_buft_get_alloc_size(buft, refs[end].t), align);
            if (size > 0 && size + need > max_buf) {
                break;
            }
            size += need;
        }
        if (size == 0) {
            return true;
        }
        char sz[32];
        ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, size);
        if (buf == NULL) {
            run_error("cannot allocate %s of weights on %s", run_fmt_size(size, sz, sizeof(sz)),
                      ggml_backend_dev_name(model->devs.layer[dev]));
            return false;
        }
        if (!model_push_buffer(model, buf)) {
            return false;
        }
        struct ggml_tallocr talloc = ggml_tallocr_new(buf);
        for (; i < end; i++) {
            if (refs[i].dev != dev || refs[i].repack != repack) {
                continue;
            }
            if (ggml_tallocr_alloc(&talloc, refs[i].t) != GGML_STATUS_SUCCESS) {
                run_error("cannot place tensor %s on %s", refs[i].t->name, ggml_backend_dev_name(model->devs.layer[dev]));
                return false;
            }
            ggml_backend_tensor_set(refs[i].t, source_tensor_data(&model->src, refs[i].t), 0, ggml_nbytes(refs[i].t));
            model->weight_bytes[dev] += ggml_nbytes(refs[i].t);
            if (repack) {
                model->repack_bytes += ggml_nbytes(refs[i].t);
                model_release_mapped_copy(model, refs[i].t);
            }
        }
    }
    return true;
}

static enum ggml_type model_main_type(const struct weight_ref * refs, int n_refs) {
    int64_t count[GGML_TYPE_COUNT] = { 0 };
    enum ggml_type best = GGML_TYPE_F32;
    for (int i = 0; i < n_refs; i++) {
        if (refs[i].use == RUN_USE_MATMUL || refs[i].use == RUN_USE_MATMUL_ID) {
            count[refs[i].t->type] += ggml_nelements(refs[i].t);
            best = count[refs[i].t->type] > count[best] ? refs[i].t->type : best;
        }
    }
    return best;
}

static bool model_place_weights(struct run_model * model, const struct run_model_params * params) {
    model->layer_dev    = (int *)    run_calloc((size_t) (model->hp.n_layer + 1), sizeof(int), "the layer map");
    model->weight_bytes = (size_t *) run_calloc((size_t) model->devs.n_layer, sizeof(size_t), "the layer map");
    if (model->layer_dev == NULL || model->weight_bytes == NULL ||
        !run_devices_assign_layers(&model->devs, model->hp.n_layer, params->n_gpu_layers,
                                   params->split_tensor ? NULL : params->tensor_split, model->layer_dev)) {
        return false;
    }
    struct ggml_tensor * rope_freqs = run_source_tensor(&model->src, "rope_freqs.weight");
    if (rope_freqs != NULL && model_tensor_2d(model, "rope_freqs.weight", model->hp.n_rot / 2, 1, true) == NULL) {
        return false;
    }
    if (rope_freqs != NULL && rope_freqs->type != GGML_TYPE_F32) {
        run_error("tensor rope_freqs.weight must be F32, not %s", ggml_type_name(rope_freqs->type));
        return false;
    }
    model->rope_freqs = rope_freqs;
    // tied embeddings also serve the output matrix product, on the CPU
    if (model->output == model->tok_embd &&
        !dev_supports_weight(model->devs.layer[run_devices_cpu(&model->devs)], model->output, RUN_USE_MATMUL)) {
        run_error("the CPU backend cannot compute MUL_MAT with tensor %s of type %s", model->output->name,
                  ggml_type_name(model->output->type));
        return false;
    }
    int n_refs = 0;
    struct weight_ref * refs = model_list_weights(model, rope_freqs, &n_refs);
    bool ok = refs != NULL;
    for (int i = 0; ok && i < n_refs; i++) {
        ok = place_weight(model, &refs[i], refs[i].dev);
    }
    // matrices on the CPU in the layout of its kernels where it has one for them
    const int cpu = run_devices_cpu(&model->devs);
    ggml_backend_buffer_type_t repack_buft = NULL;
    for (int i = 0; ok && params->repack && i < n_refs; i++) {
        if (refs[i].dev == cpu && (refs[i].use == RUN_USE_MATMUL || refs[i].use == RUN_USE_MATMUL_ID) && refs[i].t != model->tok_embd) {
            ggml_backend_buffer_type_t b = dev_extra_buft_for_weight(model->devs.layer[cpu], refs[i].t, refs[i].use);
            // one extra type at most (the CPU has one)
            if (b != NULL && (repack_buft == NULL || b == repack_buft)) {
                repack_buft = b;
                refs[i].repack = true;
            }
        }
    }
    ok = ok && model_map_cpu_weights(model, refs, n_refs);
    for (int dev = 0; ok && dev < cpu; dev++) {
        ok = model_upload_device_weights(model, refs, n_refs, dev, ggml_backend_dev_buffer_type(model->devs.layer[dev]), false);
    }
    if (ok && repack_buft != NULL) {
        ok = model_upload_device_weights(model, refs, n_refs, cpu, repack_buft, true);
        model->repack_buft = repack_buft;
    }

    if (ok) {
        model->ftype = model_main_type(refs, n_refs);
    }
    free(refs);
    return ok;
}

//
// the model
//

struct run_model * run_model_from_source(struct run_weight_source * src, const struct run_model_params * params) {
    struct run_model * model = (struct run_model *) run_calloc(1, sizeof(struct run_model), "the model");
    if (model == NULL) {
        run_weight_source_free(src);
        return NULL;
    }
    model->src = *src;
    memset(src, 0, sizeof(*src));
    bool ok = run_hparams_load(&model->hp, model->src.gguf) && run_vocab_load(&model->vocab, model->src.gguf);
    if (ok) {
        model->hp.n_vocab = model->vocab.n_tokens;
        ok = model_find_tensors(model) &&
             run_devices_select(params->devices, &model->devs) &&
             (!params->split_tensor || run_split_tensor_setup(model, params->tensor_split)) &&
             model_place_weights(model, params);
    }
    if (!ok) {
        run_model_free(model);
        return NULL;
    }
    return model;
}

struct run_model * run_model_load(const char * path, const struct run_model_params * params) {
    struct run_weight_source src;
    if (!source_open_file(path, params->use_mmap, &src)) {
        return NULL;
    }
    return run_model_from_source(&src, params);
}

void run_model_free(struct run_model * model) {
    if (model == NULL) {
        return;
    }
    for (int i = 0; i < model->n_buffers; i++) {
        ggml_backend_buffer_free(model->buffers[i]);
    }
    free(model->buffers);
    run_weight_source_free(&model->src);
    run_vocab_free(&model->vocab);
    run_devices_free(&model->devs);
    run_split_plan_free(model->split_plan);
    free(model->layers);
    free(model->layer_dev);
    free(model->weight_bytes);
    free(model);
}

size_t run_model_weight_bytes(const struct run_model * model) {
    size_t total = 0;
    for (int i = 0; i < model->devs.n_layer; i++) {
        total += model->weight_bytes[i];
    }
    return total;
}
