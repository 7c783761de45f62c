// output.c: console, CSV and SQL output, with upstream's fields and layout.

#include "tbo-run.h"

#include <string.h>
#include <time.h>

bool tbo_output_format_from_str(const char * s, enum tbo_output_format * format) {
    if (strcmp(s, "console") == 0) {
        *format = TBO_OUTPUT_CONSOLE;
    } else if (strcmp(s, "sql") == 0) {
        *format = TBO_OUTPUT_SQL;
    } else if (strcmp(s, "csv") == 0) {
        *format = TBO_OUTPUT_CSV;
    } else {
        return false;
    }
    return true;
}

const char * tbo_mode_name(enum tbo_mode mode) {
    switch (mode) {
        case TBO_MODE_TEST:    return "test";
        case TBO_MODE_PERF:    return "perf";
        case TBO_MODE_GRAD:    return "grad";
        case TBO_MODE_SUPPORT: return "support";
    }
    return "?";
}

static const char * green(const struct tbo_printer * p) { return p->color ? "\033[1;32m" : ""; }
static const char * red  (const struct tbo_printer * p) { return p->color ? "\033[1;31m" : ""; }
static const char * blue (const struct tbo_printer * p) { return p->color ? "\033[1;34m" : ""; }
static const char * reset(const struct tbo_printer * p) { return p->color ? "\033[0m" : ""; }

//
// the fields of a result, in upstream's order
//

enum field_kind { FIELD_STRING, FIELD_BOOL, FIELD_INT, FIELD_FLOAT };

struct field {
    const char *    name;
    enum field_kind kind;
    bool            csv; // one of the columns of the CSV output
};

static const struct field fields[] = {
    { "test_time",          FIELD_STRING, false },
    { "build_commit",       FIELD_STRING, false },
    { "backend_name",       FIELD_STRING, true  },
    { "op_name",            FIELD_STRING, true  },
    { "op_params",          FIELD_STRING, true  },
    { "test_mode",          FIELD_STRING, true  },
    { "supported",          FIELD_BOOL,   true  },
    { "passed",             FIELD_BOOL,   false },
    { "error_message",      FIELD_STRING, true  },
    { "time_us",            FIELD_FLOAT,  false },
    { "flops",              FIELD_FLOAT,  false },
    { "bandwidth_gb_s",     FIELD_FLOAT,  false },
    { "memory_kb",          FIELD_INT,    false },
    { "n_runs",             FIELD_INT,    false },
    { "device_description", FIELD_STRING, false },
    { "backend_reg_name",   FIELD_STRING, true  },
};

enum { N_FIELDS = sizeof(fields) / sizeof(fields[0]) };

static void time_now(char * buf, size_t size) {
    const time_t t = time(NULL);
    struct tm tm_buf;
    buf[0] = '\0';
#ifdef _WIN32
    if (gmtime_s(&tm_buf, &t) != 0) {
        return;
    }
#else
    if (gmtime_r(&t, &tm_buf) == NULL) {
        return;
    }
#endif
    if (strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm_buf) == 0) {
        buf[0] = '\0';
    }
}

// field i of r as text, as upstream writes it (std::to_string for numbers)
static void field_value(const struct tbo_result * r, int i, char * buf, size_t size) {
    const char * s = NULL;
    switch (i) {
        case 0:  time_now(buf, size); return;
        case 1:  s = ggml_commit(); break;
        case 2:  s = r->backend_name; break;
        case 3:  s = r->op_name; break;
        case 4:  s = r->op_params; break;
        case 5:  s = tbo_mode_name(r->mode); break;
        case 6:  snprintf(buf, size, "%d", r->supported ? 1 : 0); return;
        case 7:  snprintf(buf, size, "%d", r->passed ? 1 : 0); return;
        case 8:  s = r->error_message; break;
        case 9:  snprintf(buf, size, "%f", r->time_us); return;
        case 10: snprintf(buf, size, "%f", r->flops); return;
        case 11: snprintf(buf, size, "%f", r->bandwidth_gb_s); return;
        case 12: snprintf(buf, size, "%zu", r->memory_kb); return;
        case 13: snprintf(buf, size, "%d", r->n_runs); return;
        case 14: s = r->device_description; break;
        case 15: s = r->backend_reg_name; break;
        default: break;
    }
    snprintf(buf, size, "%s", s != NULL ? s : "");
}

void tbo_print_header(const struct tbo_printer * p) {
    if (p->format == TBO_OUTPUT_CSV) {
        bool first = true;
        for (int i = 0; i < N_FIELDS; i++) {
            if (fields[i].csv) {
                printf("%s\"%s\"", first ? "" : ",", fields[i].name);
                first = false;
            }
        }
        printf("\n");
    } else if (p->format == TBO_OUTPUT_SQL) {
        printf("CREATE TABLE IF NOT EXISTS test_backend_ops (\n");
        for (int i = 0; i < N_FIELDS; i++) {
            const char * type = fields[i].kind == FIELD_STRING ? "TEXT" : fields[i].kind == FIELD_FLOAT ? "REAL" : "INTEGER";
            printf("  %s %s%s\n", fields[i].name, type, i < N_FIELDS - 1 ? "," : "");
        }
        printf(");\n\n");
    }
}

static void print_csv_value(const char * v) {
    putchar('"');
    for (const char * c = v; *c != '\0'; c++) {
        if (*c == '"') {
            putchar('"'); // quotes are doubled
        }
        putchar(*c);
    }
    putchar('"');
}

static void print_csv(const struct tbo_result * r) {
    char buf[1024];
    bool first = true;
    for (int i = 0; i < N_FIELDS; i++) {
        if (!fields[i].csv) {
            continue;
        }
        field_value(r, i, buf, sizeof(buf));
        if (!first) {
            putchar(',');
        }
        print_csv_value(buf);
        first = false;
    }
    putchar('\n');
}

static void print_sql(const struct tbo_result * r) {
    char buf[1024];
    printf("INSERT INTO test_backend_ops (");
    for (int i = 0; i < N_FIELDS; i++) {
        printf("%s%s", fields[i].name, i < N_FIELDS - 1 ? ", " : "");
    }
    printf(") VALUES (");
    for (int i = 0; i < N_FIELDS; i++) {
        field_value(r, i, buf, sizeof(buf));
        putchar('\'');
        for (const char * c = buf; *c != '\0'; c++) {
            if (*c == '\'') {
                putchar('\''); // quotes are doubled
            }
            putchar(*c);
        }
        printf("'%s", i < N_FIELDS - 1 ? ", " : "");
    }
    printf(");\n");
}

static void format_flops(char * buf, size_t size, double flops) {
    if (flops >= 1e12) {
        snprintf(buf, size, "%6.2f TFLOP", flops / 1e12);
    } else if (flops >= 1e9) {
        snprintf(buf, size, "%6.2f GFLOP", flops / 1e9);
    } else if (flops >= 1e6) {
        snprintf(buf, size, "%6.2f MFLOP", flops / 1e6);
    } else {
        snprintf(buf, size, "%6.2f kFLOP", flops / 1e3);
    }
}

void tbo_print_case_start(const struct tbo_printer * p, enum tbo_mode mode, const char * op_name, const char * op_params) {
    if (p->format != TBO_OUTPUT_CONSOLE || mode == TBO_MODE_PERF) {
        return; // perf aligns its columns after the name: it prints the line at once
    }
    printf("  %s(%s): ", op_name, op_params);
    fflush(stdout);
}

static void print_console(const struct tbo_printer * p, const struct tbo_result * r) {
    switch (r->mode) {
        case TBO_MODE_TEST:
        case TBO_MODE_GRAD:
            if (!r->supported) {
                if (r->detail != NULL && r->detail[0] != '\0') {
                    printf("not supported [%s] %s\n", r->backend_name, r->detail);
                } else {
                    printf("not supported [%s]\n", r->backend_name);
                }
            } else {
                if (r->passed) {
                    printf("%sOK%s", green(p), reset(p));
                } else {
                    printf("%sFAIL%s", red(p), reset(p));
                }
                if (r->detail != NULL && r->detail[0] != '\0') {
                    printf(" (%s)", r->detail);
                }
                printf("\n");
            }
            break;
        case TBO_MODE_SUPPORT:
            if (r->supported) {
                printf("%sSUPPORTED%s\n", green(p), reset(p));
            } else {
                printf("%sNOT SUPPORTED%s\n", red(p), reset(p));
            }
            break;
        case TBO_MODE_PERF: {
            const int len = printf("  %s(%s): ", r->op_name, r->op_params);
            if (!r->supported) {
                printf("not supported\n");
                break;
            }
            if (!r->passed) {
                printf("%sFAIL%s (%s)\n", red(p), reset(p), r->detail != NULL ? r->detail : "");
                break;
            }
            // align, leaving some margin for names of different lengths
            const int align = 8;
            int last = (len + align - 1) / align * align;
            if (last - len < 5) {
                last += align;
            }
            printf("%*s", last - len, "");
            printf("    %8d runs - %8.2f us/run - ", r->n_runs, r->time_us);
            if (r->flops > 0) {
                char per_run[64];
                char rate[64];
                format_flops(per_run, sizeof(per_run), (double) (uint64_t) (r->flops * r->time_us / 1e6));
                format_flops(rate, sizeof(rate), r->flops);
                printf("%s/run - %s%sS%s", per_run, blue(p), rate, reset(p));
            } else {
                printf("%8zu kB/run - %s%7.2f GB/s%s", r->memory_kb, blue(p), r->bandwidth_gb_s, reset(p));
            }
            printf("\n");
        } break;
    }
    fflush(stdout);
}

void tbo_print_result(const struct tbo_printer * p, const struct tbo_result * r) {
    switch (p->format) {
        case TBO_OUTPUT_CONSOLE: print_console(p, r); break;
        case TBO_OUTPUT_CSV:     print_csv(r);        break;
        case TBO_OUTPUT_SQL:     print_sql(r);        break;
    }
}

void tbo_print_testing_start(const struct tbo_printer * p, size_t n_devices) {
    if (p->format == TBO_OUTPUT_CONSOLE) {
        printf("Testing %zu devices\n\n", n_devices);
    }
}

void tbo_print_backend_init(const struct tbo_printer * p, size_t index, size_t total, const char * name, const char * skip_reason,
                            const char * description, size_t memory_total_mb, size_t memory_free_mb, const char * compared_with) {
    if (p->format != TBO_OUTPUT_CONSOLE) {
        return;
    }
    printf("Backend %zu/%zu: %s\n", index + 1, total, name);
    if (skip_reason != NULL) {
        printf("  %s\n", skip_reason);
        return;
    }
    if (description != NULL && description[0] != '\0') {
        printf("  Device description: %s\n", description);
    }
    printf("  Device memory: %zu MB (%zu MB free)\n", memory_total_mb, memory_free_mb);
    if (compared_with != NULL) {
        printf("  Compared with: %s\n", compared_with);
    }
    printf("\n");
}

void tbo_print_summary(const struct tbo_printer * p, size_t passed, size_t total, size_t not_supported) {
    if (p->format != TBO_OUTPUT_CONSOLE) {
        return;
    }
    printf("  %zu/%zu tests passed\n", passed, total);
    if (not_supported > 0) {
        printf("  %zu cases not supported\n", not_supported);
    }
}

void tbo_print_failed_tests(const struct tbo_printer * p, char * const * names, size_t n) {
    if (p->format != TBO_OUTPUT_CONSOLE || n == 0) {
        return;
    }
    printf("\nFailing tests:\n");
    for (size_t i = 0; i < n; i++) {
        printf("  %s\n", names[i]);
    }
}

void tbo_print_backend_status(const struct tbo_printer * p, const char * name, bool ok) {
    if (p->format != TBO_OUTPUT_CONSOLE) {
        return;
    }
    printf("  Backend %s: %s%s%s\n", name, ok ? green(p) : red(p), ok ? "OK" : "FAIL", reset(p));
}

void tbo_print_overall_summary(const struct tbo_printer * p, size_t passed, size_t total) {
    if (p->format != TBO_OUTPUT_CONSOLE) {
        return;
    }
    printf("%zu/%zu backends passed\n", passed, total);
    const bool ok = passed == total;
    printf("%s%s%s\n", ok ? green(p) : red(p), ok ? "OK" : "FAIL", reset(p));
}
