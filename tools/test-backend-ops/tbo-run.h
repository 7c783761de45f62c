#pragma once

//
// tbo-run.h: running cases on backends (run.c) and printing what happened (output.c).
//

#include "tbo.h"

enum tbo_output_format {
    TBO_OUTPUT_CONSOLE,
    TBO_OUTPUT_SQL,
    TBO_OUTPUT_CSV,
};

bool         tbo_output_format_from_str(const char * s, enum tbo_output_format * format);
const char * tbo_mode_name(enum tbo_mode mode);

// one line of output: the fields of upstream's test_result, plus a detail line for the console
struct tbo_result {
    const char * backend_name;
    const char * op_name;
    const char * op_params;
    enum tbo_mode mode;
    bool         supported;
    bool         passed;
    const char * error_message;
    double       time_us;
    double       flops;
    double       bandwidth_gb_s;
    size_t       memory_kb;
    int          n_runs;
    const char * device_description;
    const char * backend_reg_name;
    const char * detail; // console only: the error and the threshold, or what went wrong
};

struct tbo_printer {
    enum tbo_output_format format;
    bool                   color; // ANSI colours: console output on a terminal only
};

void tbo_print_header(const struct tbo_printer * p);
void tbo_print_result(const struct tbo_printer * p, const struct tbo_result * r);
// the case name before it runs, so that a crash inside a backend shows which case it was
void tbo_print_case_start(const struct tbo_printer * p, enum tbo_mode mode, const char * op_name, const char * op_params);
void tbo_print_testing_start(const struct tbo_printer * p, size_t n_devices);
void tbo_print_backend_init(const struct tbo_printer * p, size_t index, size_t total, const char * name, const char * skip_reason,
                            const char * description, size_t memory_total_mb, size_t memory_free_mb, const char * compared_with);
void tbo_print_summary(const struct tbo_printer * p, size_t passed, size_t total, size_t not_supported);
void tbo_print_failed_tests(const struct tbo_printer * p, char * const * names, size_t n);
void tbo_print_backend_status(const struct tbo_printer * p, const char * name, bool ok);
void tbo_print_overall_summary(const struct tbo_printer * p, size_t passed, size_t total);

struct tbo_run_opts {
    enum tbo_mode mode;
    const char *  op_filter;   // -o: op names or full case names, comma separated
    uint64_t      seed;        // input data of case i comes from seed and i
};

// what a backend did with a list of cases
struct tbo_run_counts {
    size_t  passed;
    size_t  failed;
    size_t  not_supported;
    char ** failed_names;
    size_t  n_failed_names;
};

// --quick: keeps the cases whose reference evaluation is cheap, a few per op
// name and combination of types, evenly spread over the list; returns how many it dropped
size_t tbo_select_quick(struct tbo_case_list * cases);

void tbo_run_counts_free(struct tbo_run_counts * counts);

// runs every case of the list that matches the filters on backend; in test
// mode compares with cpu, or with the reference evaluator when cpu is NULL.
// Returns false if any case failed.
bool tbo_run_backend(ggml_backend_t backend, ggml_backend_t cpu, const struct tbo_case_list * cases,
                     const struct tbo_run_opts * opts, const struct tbo_printer * printer, struct tbo_run_counts * counts);

// grad mode (grad.c): one case on one backend; init fills the case's tensors from a seed
enum tbo_grad_status {
    TBO_GRAD_SKIPPED,
    TBO_GRAD_NOT_SUPPORTED,
    TBO_GRAD_OK,
    TBO_GRAD_FAIL,
};
enum tbo_grad_status tbo_eval_grad(const struct tbo_case * c, size_t index, ggml_backend_t backend, const struct tbo_run_opts * opts,
                                   const struct tbo_printer * p, void (*init)(const struct tbo_case *, struct ggml_context *, uint64_t));

// whether the op name and full name of a case pass the -o filter
bool tbo_matches_op_filter(const char * filter, const char * op_name, const char * full_name);

// the whole program: command line, devices, cases; returns the exit status
int tbo_main(int argc, char ** argv);

// the full name of the case running now on this thread, or NULL (for the abort callback)
const char * tbo_current_case(void);
