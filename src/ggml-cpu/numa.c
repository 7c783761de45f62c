// numa.c: NUMA detection (ggml_numa_init, ggml_is_numa) and the placement of
// pool threads that follows from the chosen strategy:
//   DISTRIBUTE  thread i runs on the cpus of node i % n_nodes
//   ISOLATE     every thread runs on the node that called ggml_numa_init
//   NUMACTL     every thread keeps the cpu set the process was started with
//   MIRROR      not supported: treated as DISABLED, with a warning
// An explicit cpumask in the thread pool parameters takes precedence.

#include "cpu-features.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#if defined(__linux__)

struct numa_state {
    int         n_nodes;
    cpu_set_t * node_cpus;     // [n_nodes]
    cpu_set_t   inherited;     // affinity of the process at ggml_numa_init
    int         caller_node;   // node of the thread that called ggml_numa_init
};

static struct numa_state g_numa;
static pthread_once_t    g_numa_once = PTHREAD_ONCE_INIT;
static atomic_int        g_numa_strategy = GGML_NUMA_STRATEGY_DISABLED;

// parse a cpulist such as "0-3,8,10-11" into set
static void parse_cpulist(const char * s, cpu_set_t * set) {
    CPU_ZERO(set);
    while (*s) {
        char * end;
        long a = strtol(s, &end, 10);
        if (end == s) {
            break;
        }
        long b = a;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            s = end;
        }
        for (long c = a; c <= b && c < CPU_SETSIZE; c++) {
            CPU_SET((int) c, set);
        }
        if (*s == ',') {
            s++;
        } else {
            break;
        }
    }
}

static void numa_detect(void) {
    g_numa.n_nodes = 0;
    g_numa.caller_node = 0;
    sched_getaffinity(0, sizeof(g_numa.inherited), &g_numa.inherited);

    for (int node = 0; ; node++) {
        char path[128];
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
        FILE * f = fopen(path, "r");
        if (f == NULL) {
            break;
        }
        char line[4096] = { 0 };
        const bool ok = fgets(line, sizeof(line), f) != NULL;
        fclose(f);
        if (!ok) {
            break;
        }
        cpu_set_t * grown = (cpu_set_t *) realloc(g_numa.node_cpus, sizeof(cpu_set_t) * (size_t)(node + 1));
        if (grown == NULL) {
            break;
        }
        g_numa.node_cpus = grown;
        parse_cpulist(line, &g_numa.node_cpus[node]);
        g_numa.n_nodes = node + 1;
    }

    const int cpu = sched_getcpu();
    for (int node = 0; cpu >= 0 && node < g_numa.n_nodes; node++) {
        if (CPU_ISSET(cpu, &g_numa.node_cpus[node])) {
            g_numa.caller_node = node;
        }
    }
}

void ggml_numa_init(enum ggml_numa_strategy numa) {
    pthread_once(&g_numa_once, numa_detect);
    if (numa == GGML_NUMA_STRATEGY_MIRROR) {
        GGML_LOG_WARN("%s: the mirror strategy is not supported; threads are not placed\n", __func__);
        numa = GGML_NUMA_STRATEGY_DISABLED;
    }
    if (numa != GGML_NUMA_STRATEGY_DISABLED && g_numa.n_nodes <= 1) {
        GGML_LOG_INFO("%s: %d NUMA node(s) found: threads are not placed\n", __func__, g_numa.n_nodes);
    }
    atomic_store(&g_numa_strategy, (int) numa);
}

bool ggml_is_numa(void) {
    pthread_once(&g_numa_once, numa_detect);
    return g_numa.n_nodes > 1;
}

bool ggml_cpu_numa_placement(int ith, cpu_set_t * set) {
    const int strategy = atomic_load(&g_numa_strategy);
    if (strategy == GGML_NUMA_STRATEGY_DISABLED || !ggml_is_numa()) {
        return false;
    }
    switch (strategy) {
        case GGML_NUMA_STRATEGY_DISTRIBUTE: *set = g_numa.node_cpus[ith % g_numa.n_nodes];  return true;
        case GGML_NUMA_STRATEGY_ISOLATE:    *set = g_numa.node_cpus[g_numa.caller_node];   return true;
        case GGML_NUMA_STRATEGY_NUMACTL:    *set = g_numa.inherited;                       return true;
        default:                            return false;
    }
}

#else // no NUMA support on this platform

void ggml_numa_init(enum ggml_numa_strategy numa) {
    if (numa != GGML_NUMA_STRATEGY_DISABLED) {
        GGML_LOG_INFO("%s: NUMA placement is not supported on this platform\n", __func__);
    }
}

bool ggml_is_numa(void) {
    return false;
}

#endif
