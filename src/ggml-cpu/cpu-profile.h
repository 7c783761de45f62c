#pragma once

//
// cpu-profile.h: where the time of the graphs a CPU backend computes goes,
// per kind of node and in the hand-offs between nodes.
//
// A program (ggml-run --bench --profile) gives a CPU backend a profile with
// the registry's proc address "ggml_backend_cpu_set_profile"; every graph the
// backend computes afterwards adds to it, until the profile is taken back
// (NULL). Not part of upstream's API: the declarations are here, for the
// programs of this tree.
//
// Every thread of the pool reads the clock after each node's kernel and after
// the barrier that follows it. For a node:
//   wall         the time from the end of the previous node's barrier to the
//                end of this node's, as thread 0 (the caller) saw it: the
//                walls of a graph's nodes add up to its time
//   compute_max  the longest any thread spent in the kernel
//   compute_mean the mean over the threads
// so that wall - compute_max is the hand-off (the barrier's latency), and
// compute_max - compute_mean the imbalance (threads waiting for the slowest).
// bytes counts what a node reads and writes: its operands and its result,
// except that GET_ROWS counts only the rows it reads; weight_bytes the part
// of it read from weights (operands in buffers of usage WEIGHTS).
//

#include "ggml-backend.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

// one kind of node: the op, its sub-op (the unary or GLU op, the products of
// a MUL_MAT group, the GLU op of a MUL_MAT pair with its GLU, else -1), the
// type of its first operand (GGML_TYPE_COUNT without one) and the fusion that
// computes it with the nodes after it, if any (its row then holds the
// fusion's time and bytes, and n_nodes counts fusions)
struct ggml_cpu_profile_row {
    enum ggml_op   op;
    int32_t        sub_op;
    enum ggml_type src0_type;
    int64_t        n_nodes;
    double         wall_ns;
    double         compute_max_ns;
    double         compute_mean_ns;
    double         bytes;
    double         weight_bytes;
    int32_t        fusion;    // the nodes computed with it (enum ggml_cpu_fusion of cpu-impl.h; 0: none)
};

// one graph of a paired profile and the read right after it
struct ggml_cpu_profile_pair {
    double graph_ns;      // the graph, start to end
    double token_ns;      // from the end of the read before it (or its own start) to its end:
                          // the graph and the program's own work before it (a generated token's time)
    double weight_bytes;  // what it read of weights
    double read_gbs;      // the read right after it
};

struct ggml_cpu_profile_probe;

// Zero it before use. rows grows with realloc (free it with free()).
struct ggml_cpu_profile {
    struct ggml_cpu_profile_row * rows;
    size_t                        n_rows;
    size_t                        cap_rows;
    int64_t                       n_graphs;
    double                        graph_ns;  // the whole computations, start to end
    int                           n_threads; // of the last graph
    int                           failed;    // set when a table could not grow (rows then incomplete)

    // Paired (set before the first graph, or GGML_CPU_PROFILE=paired): after
    // every graph that reads weights the backend's pool reads a buffer of 64
    // MiB per thread (far beyond the caches, in the fastest of the read
    // patterns of tools/common/read-bandwidth.c, chosen once), so that each
    // token of a program the profile knows nothing of (llama-bench) is set
    // against the read bandwidth of the moment right after it, as ggml-run
    // --bench --profile sets its own. The reads run on the pool's threads
    // (none of them spins beside a read) and are not in any graph's time; a
    // program's own timing of course includes them. pairs grows with realloc
    // (free it with free()); the read's buffers go when the profile is taken
    // back from the backend. Without the buffers, a warning and no pairing.
    int                            paired;
    struct ggml_cpu_profile_pair * pairs;
    size_t                         n_pairs;
    size_t                         cap_pairs;
    struct ggml_cpu_profile_probe * probe;
    double                         pair_end_ns; // the end of the last read (CLOCK_MONOTONIC)
};

// proc address "ggml_backend_cpu_set_profile": the backend adds the graphs it
// computes to profile from now on (NULL: no longer). The backend must be a
// CPU backend; the profile must outlive its use.
typedef void (*ggml_backend_cpu_set_profile_t)(ggml_backend_t backend, struct ggml_cpu_profile * profile);

// the sums over a profile's rows
struct ggml_cpu_profile_totals {
    double n_nodes;
    double wall_ns;
    double compute_max_ns;
    double compute_mean_ns;
    double bytes;
    double weight_bytes;
    int    name_width; // the width of the table's name column, for lines printed below it
};

// proc address "ggml_backend_cpu_profile_print_table": the table of p's rows,
// longest first, then all nodes and the graphs' start and end, each figure per
// one of n_units (tokens, graphs) named unit; the sums into totals (if not NULL)
typedef void (*ggml_backend_cpu_profile_print_table_t)(FILE * f, const struct ggml_cpu_profile * p, double n_units,
                                                        const char * unit, struct ggml_cpu_profile_totals * totals);
void ggml_cpu_profile_print_table(FILE * f, const struct ggml_cpu_profile * p, double n_units, const char * unit,
                                  struct ggml_cpu_profile_totals * totals);

// GGML_CPU_PROFILE set (not "0"): every CPU backend made gets a profile of its
// own (cleared, or NULL without the variable), which it prints to stderr
// (per graph) and frees when the backend is freed (ggml_cpu_profile_finish).
// For programs that do not know of profiles: llama-bench, whisper-bench.
// GGML_CPU_PROFILE=paired makes the profile paired.
struct ggml_cpu_profile * ggml_cpu_profile_from_env(void);
void                      ggml_cpu_profile_finish(struct ggml_cpu_profile * p, const char * who);

// the backend's side of pairing (cpu-profile.c): after a graph of t_start_ns
// .. t_end_ns that read weight_bytes of weights, the read on tp's n_threads
// threads; the read's buffers released
struct ggml_threadpool;
void ggml_cpu_profile_pair_graph(struct ggml_cpu_profile * p, struct ggml_threadpool * tp, int n_threads,
                                 double t_start_ns, double t_end_ns, double weight_bytes);
void ggml_cpu_profile_release_probe(struct ggml_cpu_profile * p);

// proc address "ggml_backend_cpu_profile_print_pairs": the pairs' summary
// (nothing for a profile that is not paired or has none): the read, the
// weights per graph, and each graph's share of the read after it (median and
// quartiles), alone and with the program's own work before it
typedef void (*ggml_backend_cpu_profile_print_pairs_t)(FILE * f, const struct ggml_cpu_profile * p);
void ggml_cpu_profile_print_pairs(FILE * f, const struct ggml_cpu_profile * p);

#ifdef __cplusplus
}
#endif
