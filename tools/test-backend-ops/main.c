// main.c: the command line of test-backend-ops and the loop over devices (tbo_main).
//
// Modes: test (default), perf, support, grad (gradients against finite
// differences, grad.c). Unlike
// upstream's tool, the CPU device is not skipped: in test mode it is compared
// with the reference evaluator, every other device with the CPU backend (with
// the reference for the cases the CPU backend does not support).

#include "tbo-run.h"

#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <io.h>
#define isatty _isatty
#define fileno _fileno
#else
#include <unistd.h>
#endif

#ifdef TBO_HAVE_REGEX
#include <regex.h>
#endif

struct options {
    enum tbo_mode          mode;
    enum tbo_output_format format;
    const char *           op_filter;
    const char *           backend_filter;
    const char *           params_filter;
    uint64_t               seed;
    int                    n_threads;
    bool                   quick;
    bool                   list_ops;
    bool                   show_coverage;
};

static void usage(const char * argv0) {
    printf("Usage: %s [mode] [-o <op,..>] [-b <backend>] [-p <params regex>] [--output <console|sql|csv>] [--list-ops]", argv0);
    printf(" [--show-coverage] [--quick] [--seed <n>] [-t <n>]\n");
    printf("    valid modes:\n");
    printf("      - test (default: the CPU against the reference evaluator, every other backend against the CPU,\n");
    printf("        or against the reference where the CPU lacks an op)\n");
    printf("      - perf (performance evaluation)\n");
    printf("      - support (probe backend operation support)\n");
    printf("      - grad (gradients of the backward pass against finite differences)\n");
    printf("    op names for -o are as given by ggml_op_desc() (e.g. ADD, MUL_MAT, etc),\n");
    printf("        optionally including the full test case string (e.g. \"ADD(type=f16,ne=[1,1,8,1],nr=[1,1,1,1],nf=1)\")\n");
    printf("    -p keeps the cases whose parameters match the regular expression (a substring where regex.h is missing)\n");
    printf("    --output specifies output format (default: console, options: console, sql, csv)\n");
    printf("    --list-ops lists all available GGML operations\n");
    printf("    --show-coverage shows test coverage\n");
    printf("    --quick skips the test cases that take long to check against the reference\n");
    printf("    --seed <n> seeds the input data (default 1)\n");
    printf("    -t <n> threads of the backends that take a thread count (default: all cores)\n");
}

static int default_threads(void) {
#ifdef _WIN32
    return 4;
#else
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int) n : 1;
#endif
}

// false: print the usage and exit with an error
static bool parse_args(int argc, char ** argv, struct options * o) {
    *o = (struct options) {
        .mode      = TBO_MODE_TEST,
        .format    = TBO_OUTPUT_CONSOLE,
        .seed      = 1,
        .n_threads = default_threads(),
    };
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        const bool has_value = i + 1 < argc;
        if (strcmp(a, "test") == 0) {
            o->mode = TBO_MODE_TEST;
        } else if (strcmp(a, "perf") == 0) {
            o->mode = TBO_MODE_PERF;
        } else if (strcmp(a, "grad") == 0) {
            o->mode = TBO_MODE_GRAD;
        } else if (strcmp(a, "support") == 0) {
            o->mode = TBO_MODE_SUPPORT;
        } else if (strcmp(a, "-o") == 0 && has_value) {
            o->op_filter = argv[++i];
        } else if (strcmp(a, "-b") == 0 && has_value) {
            o->backend_filter = argv[++i];
        } else if (strcmp(a, "-p") == 0 && has_value) {
            o->params_filter = argv[++i];
        } else if (strcmp(a, "--output") == 0 && has_value) {
            if (!tbo_output_format_from_str(argv[++i], &o->format)) {
                return false;
            }
        } else if (strcmp(a, "--list-ops") == 0) {
            o->list_ops = true;
        } else if (strcmp(a, "--show-coverage") == 0) {
            o->show_coverage = true;
        } else if (strcmp(a, "--quick") == 0) {
            o->quick = true;
        } else if (strcmp(a, "--seed") == 0 && has_value) {
            char * end;
            o->seed = strtoull(argv[++i], &end, 10);
            if (*end != '\0') {
                return false;
            }
        } else if (strcmp(a, "-t") == 0 && has_value) {
            o->n_threads = atoi(argv[++i]);
            if (o->n_threads < 1) {
                return false;
            }
        } else {
            return false;
        }
    }
    return true;
}

//
// --list-ops and --show-coverage
//

static int cmp_str(const void * a, const void * b) {
    return strcmp(*(const char * const *) a, *(const char * const *) b);
}

// the names of every op, unary op and glu op, sorted, without duplicates
static size_t all_op_names(const char ** names, bool skip_views) {
    size_t n = 0;
    for (int i = 1; i < GGML_OP_COUNT; i++) {
        const enum ggml_op op = (enum ggml_op) i;
        if (skip_views && (tbo_is_view_op(op) || op == GGML_OP_CONT || op == GGML_OP_GLU || op == GGML_OP_UNARY)) {
            continue;
        }
        names[n++] = ggml_op_name(op);
    }
    for (int i = 0; i < GGML_UNARY_OP_COUNT; i++) {
        names[n++] = ggml_unary_op_name((enum ggml_unary_op) i);
    }
    for (int i = 0; i < GGML_GLU_OP_COUNT; i++) {
        names[n++] = ggml_glu_op_name((enum ggml_glu_op) i);
    }
    qsort(names, n, sizeof(names[0]), cmp_str);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m == 0 || strcmp(names[m - 1], names[i]) != 0) {
            names[m++] = names[i];
        }
    }
    return m;
}

enum { MAX_OP_NAMES = GGML_OP_COUNT + GGML_UNARY_OP_COUNT + GGML_GLU_OP_COUNT };

static void list_all_ops(void) {
    const char * names[MAX_OP_NAMES];
    const size_t n = all_op_names(names, false);
    printf("GGML operations:\n");
    for (size_t i = 0; i < n; i++) {
        printf("  %s\n", names[i]);
    }
    printf("\nTotal: %zu operations\n", n);
}

static const char * tested_op_name(const struct ggml_tensor * out) {
    switch (out->op) {
        case GGML_OP_UNARY: return ggml_unary_op_name(ggml_get_unary_op(out));
        case GGML_OP_GLU:   return ggml_glu_op_name(ggml_get_glu_op(out));
        default:            return ggml_op_name(out->op);
    }
}

static void show_test_coverage(const struct tbo_case_list * cases) {
    const char * names[MAX_OP_NAMES];
    const size_t n = all_op_names(names, true);
    bool * covered = tbo_calloc(n, sizeof(bool));

    const struct ggml_init_params params = {
        .mem_size   = ggml_tensor_overhead() * 1024 + ggml_graph_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    for (size_t i = 0; i < cases->n; i++) {
        const struct tbo_case * c = &cases->v[i];
        if (tbo_case_run_whole_graph(c)) {
            continue; // fusions: their ops are covered by the single-op cases
        }
        struct ggml_context * ctx = ggml_init(params);
        if (ctx == NULL) {
            continue;
        }
        struct tbo_build b;
        tbo_build_init(&b, ctx, TBO_MODE_SUPPORT);
        const struct ggml_tensor * out = c->cls->build(c, &b);
        if (out != NULL && out->op != GGML_OP_NONE) {
            const char * name = tested_op_name(out);
            for (size_t j = 0; j < n; j++) {
                if (strcmp(names[j], name) == 0) {
                    covered[j] = true;
                }
            }
        }
        tbo_build_free(&b);
        ggml_free(ctx);
    }

    size_t n_covered = 0;
    for (size_t j = 0; j < n; j++) {
        n_covered += covered[j] ? 1 : 0;
    }
    printf("Operations covered by tests (%zu):\n", n_covered);
    for (size_t j = 0; j < n; j++) {
        if (covered[j]) {
            printf("  \xe2\x9c\x93 %s\n", names[j]);
        }
    }
    printf("\nOperations without tests (%zu):\n", n - n_covered);
    for (size_t j = 0; j < n; j++) {
        if (!covered[j]) {
            printf("  \xe2\x9c\x97 %s\n", names[j]);
        }
    }
    printf("\nCoverage Summary:\n");
    printf("  Total operations: %zu\n", n);
    printf("  Tested operations: %zu\n", n_covered);
    printf("  Untested operations: %zu\n", n - n_covered);
    printf("  Coverage: %.1f%%\n", 100.0 * (double) n_covered / (double) n);
    free(covered);
}

//
// -p: keep the cases whose parameters match
//

static void filter_params(struct tbo_case_list * cases, const char * pattern) {
#ifdef TBO_HAVE_REGEX
    regex_t re;
    const bool use_regex = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0;
    if (!use_regex) {
        fprintf(stderr, "test-backend-ops: -p '%s' is not a regular expression, matching it as a substring\n", pattern);
    }
#endif
    size_t kept = 0;
    for (size_t i = 0; i < cases->n; i++) {
        struct tbo_case * c = &cases->v[i];
        bool match;
#ifdef TBO_HAVE_REGEX
        match = use_regex ? regexec(&re, c->vars, 0, NULL, 0) == 0 : strstr(c->vars, pattern) != NULL;
#else
        match = strstr(c->vars, pattern) != NULL;
#endif
        if (match) {
            cases->v[kept++] = *c;
        } else {
            free(c->vars);
            free(c->p);
        }
    }
    cases->n = kept;
#ifdef TBO_HAVE_REGEX
    if (use_regex) {
        regfree(&re);
    }
#endif
}

//
// the devices
//

static void set_threads(ggml_backend_t backend, int n_threads) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_get_device(backend));
    void * proc = ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    if (proc != NULL) {
        // ISO C has no conversion from object to function pointers; POSIX guarantees the representation
        ggml_backend_set_n_threads_t set_n_threads;
        memcpy(&set_n_threads, &proc, sizeof(set_n_threads));
        set_n_threads(backend, n_threads);
    }
}

static void on_abort(const char * message) {
    const char * c = tbo_current_case();
    fprintf(stderr, "test-backend-ops: aborted%s%s: %s\n", c != NULL ? " in case " : "", c != NULL ? c : "", message);
    fflush(stdout);
}

// tests one device; false if a case failed or the device could not be used
static bool run_device(const struct options * o, ggml_backend_dev_t dev, size_t index, size_t total,
                       const struct tbo_case_list * cases, const struct tbo_printer * printer, ggml_backend_t * cpu) {
    ggml_backend_t backend = ggml_backend_dev_init(dev, NULL);
    if (backend == NULL) {
        tbo_print_backend_init(printer, index, total, ggml_backend_dev_name(dev), "Failed to initialize the backend", NULL, 0, 0, NULL);
        return false;
    }
    set_threads(backend, o->n_threads);

    // the trusted side of test mode: the reference for the CPU, the CPU for the others
    const bool is_cpu = ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU;
    ggml_backend_t compare_with = NULL;
    if (o->mode == TBO_MODE_TEST && !is_cpu) {
        if (*cpu == NULL) {
            *cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
            if (*cpu != NULL) {
                set_threads(*cpu, o->n_threads);
            }
        }
        compare_with = *cpu; // NULL: no CPU backend, the reference it is
    }

    size_t free_mem = 0, total_mem = 0;
    ggml_backend_dev_memory(dev, &free_mem, &total_mem);
    tbo_print_backend_init(printer, index, total, ggml_backend_dev_name(dev), NULL, ggml_backend_dev_description(dev),
                           total_mem / 1024 / 1024, free_mem / 1024 / 1024,
                           o->mode != TBO_MODE_TEST ? NULL : compare_with != NULL ? ggml_backend_name(compare_with)
                                                                                 : "reference evaluator (double precision)");

    const struct tbo_run_opts run_opts = {
        .mode      = o->mode,
        .op_filter = o->op_filter,
        .seed      = o->seed,
    };
    struct tbo_run_counts counts;
    const bool ok = tbo_run_backend(backend, compare_with, cases, &run_opts, printer, &counts);
    tbo_print_backend_status(printer, ggml_backend_name(backend), ok);
    tbo_run_counts_free(&counts);
    ggml_backend_free(backend);
    return ok;
}

// -b names a device of the registry: a name that matches none is an error
// (upstream skips every device and reports them all passed), reported with
// the names there are
static bool backend_name_known(const char * name) {
    const size_t n_dev = ggml_backend_dev_count();
    for (size_t i = 0; i < n_dev; i++) {
        if (strcmp(name, ggml_backend_dev_name(ggml_backend_dev_get(i))) == 0) {
            return true;
        }
    }
    fprintf(stderr, "test-backend-ops: error: no backend named '%s'; the backends are:", name);
    for (size_t i = 0; i < n_dev; i++) {
        fprintf(stderr, "%s %s", i > 0 ? "," : "", ggml_backend_dev_name(ggml_backend_dev_get(i)));
    }
    fprintf(stderr, "\n");
    return false;
}

int tbo_main(int argc, char ** argv) {
    struct options o;
    if (!parse_args(argc, argv, &o)) {
        usage(argv[0]);
        return 1;
    }
    if (o.list_ops) {
        list_all_ops();
        return 0;
    }
    struct tbo_case_list cases = { 0 };
    if (o.mode == TBO_MODE_PERF) {
        tbo_make_cases_perf(&cases);
    } else {
        tbo_make_cases_eval(&cases);
    }
    if (o.show_coverage) {
        show_test_coverage(&cases);
        tbo_case_list_free(&cases);
        return 0;
    }
    if (o.params_filter != NULL) {
        filter_params(&cases, o.params_filter);
    }
    if (o.quick) {
        const size_t dropped = tbo_select_quick(&cases);
        if (o.format == TBO_OUTPUT_CONSOLE) {
            printf("--quick: %zu cases, %zu left out\n", cases.n, dropped);
        }
    }

    ggml_set_abort_callback(on_abort);
    ggml_backend_load_all();

    const struct tbo_printer printer = {
        .format = o.format,
        .color  = o.format == TBO_OUTPUT_CONSOLE && isatty(fileno(stdout)),
    };
    tbo_print_header(&printer);

    const size_t n_dev = ggml_backend_dev_count();
    if (o.backend_filter != NULL && !backend_name_known(o.backend_filter)) {
        tbo_case_list_free(&cases);
        return 1;
    }
    tbo_print_testing_start(&printer, n_dev);

    ggml_backend_t cpu = NULL;
    size_t n_ok = 0;
    for (size_t i = 0; i < n_dev; i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (o.backend_filter != NULL && strcmp(o.backend_filter, ggml_backend_dev_name(dev)) != 0) {
            tbo_print_backend_init(&printer, i, n_dev, ggml_backend_dev_name(dev), "Skipping", NULL, 0, 0, NULL);
            n_ok++;
            continue;
        }
        if (run_device(&o, dev, i, n_dev, &cases, &printer, &cpu)) {
            n_ok++;
        }
    }

    if (cpu != NULL) {
        ggml_backend_free(cpu);
    }
    tbo_case_list_free(&cases);
    ggml_quantize_free();

    tbo_print_overall_summary(&printer, n_ok, n_dev);
    return n_ok == n_dev ? 0 : 1;
}
