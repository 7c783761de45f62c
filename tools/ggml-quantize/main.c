// ggml-quantize: writes a copy of a GGUF model with its weight matrices
// converted to another type (see quantize.h for which tensors convert).

#include "output-file.h"
#include "quantize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static void print_usage(const char * argv0) {
    printf("usage: %s [options] input.gguf output.gguf TYPE\n"
           "\n"
           "Converts the 2-D F32/F16/BF16 weights of a GGUF model to TYPE (q8_0, q4_0, q4_1,\n"
           "q5_0, q5_1, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, mxfp4, tq1_0, tq2_0,\n"
           "iq1_m, iq2_s, iq3_xxs, iq3_s, nvfp4, q1_0; with an importance matrix also iq1_s,\n"
           "iq2_xxs, iq2_xs;\n"
           "f16, bf16, f32);\n"
           "1-D tensors (norms), empty tensors and rows that are not a whole number of\n"
           "blocks keep their type; all metadata is copied, and general.file_type set to\n"
           "the type of most weights (to the mix's, with a mix). The output is written to\n"
           "a temporary file beside it, which replaces it only when complete.\n"
           "TYPE may also name one of upstream's mixes, which choose each matrix's type by\n"
           "its role (output, attention V, FFN down ...): Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, Q4_K_S,\n"
           "Q4_K_M, Q5_K_S, Q5_K_M, Q6_K, IQ4_NL, IQ4_XS, MXFP4_MOE (MoE models: the expert\n"
           "stacks MXFP4, the rest Q8_0) (upper case; q4_K etc. is one type).\n"
           "\n"
           "options:\n"
           "  -t, --threads N       threads (default: every core)\n"
           "  -q, --quiet           no line per tensor\n"
           "  --allow-requantize    convert weights that are already quantized (refused\n"
           "                        otherwise): dequantized, then converted to TYPE\n"
           "  --imatrix FILE        importance matrix (GGUF, as llama-imatrix writes it):\n"
           "                        every matrix it has an entry for is quantized with it\n"
           "  -h, --help\n", argv0);
}

// ggml's exact type name (q4_K) is one type for every matrix; otherwise a mix
// name (Q4_K_M, Q2_K, ...) in any case; otherwise a type name in any case
static bool parse_type(const char * s, struct gq_params * p) {
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && gq_mix_parse(s, &p->mix)) {
            p->type = gq_mix_base_type(p->mix);
            return true;
        }
        for (int t = 0; t < GGML_TYPE_COUNT; t++) {
            const char * name = ggml_type_name((enum ggml_type) t);
            const bool same = name != NULL && (pass == 0 ? strcmp(name, s) == 0 : strcasecmp(name, s) == 0);
            if (same && gq_type_supported((enum ggml_type) t)) {
                p->type = (enum ggml_type) t;
                p->mix  = GQ_MIX_NONE;
                return true;
            }
        }
    }
    return false;
}

int main(int argc, char ** argv) {
    const long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct gq_params params = { .type = GGML_TYPE_Q8_0, .n_threads = n_cpu > 0 ? (int) n_cpu : 1, .verbose = true,
                               .allow_requantize = false, .imatrix_path = NULL };
    const char * pos[3] = { NULL, NULL, NULL };
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char * arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_usage(argv[0]);
            return 0;
        }
        if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
            params.verbose = false;
        } else if (strcmp(arg, "--allow-requantize") == 0) {
            params.allow_requantize = true;
        } else if (strcmp(arg, "--imatrix") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ggml-quantize: error: --imatrix expects a file\n");
                return 1;
            }
            params.imatrix_path = argv[++i];
        } else if (strcmp(arg, "-t") == 0 || strcmp(arg, "--threads") == 0) {
            char * end = NULL;
            const long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || *end != '\0' || v < 1 || v > 4096) {
                fprintf(stderr, "ggml-quantize: error: %s expects a thread count from 1 to 4096\n", arg);
                return 1;
            }
            params.n_threads = (int) v;
            i++;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            fprintf(stderr, "ggml-quantize: error: unknown option '%s' (see --help)\n", arg);
            return 1;
        } else if (n_pos < 3) {
            pos[n_pos++] = arg;
        } else {
            fprintf(stderr, "ggml-quantize: error: too many arguments (see --help)\n");
            return 1;
        }
    }
    if (n_pos != 3) {
        print_usage(argv[0]);
        return 1;
    }
    if (!parse_type(pos[2], &params)) {
        fprintf(stderr, "ggml-quantize: error: unknown type '%s' (q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q3_K, q4_K, q5_K, q6_K, "
                        "iq4_nl, iq4_xs, mxfp4, tq1_0, tq2_0, iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, nvfp4, q1_0, f16, bf16, f32; mixes Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, Q4_K_S, Q4_K_M, "
                        "Q5_K_S, Q5_K_M, Q6_K, IQ4_NL, IQ4_XS, MXFP4_MOE)\n", pos[2]);
        return 1;
    }
    // an interrupted or crashed conversion leaves no temporary file behind
    if (!gq_output_catch_signals()) {
        return 1;
    }
    struct gq_stats stats;
    if (!gq_quantize_file(pos[0], pos[1], &params, &stats)) {
        return 1;
    }
    printf("%s: %lld tensors converted to %s%s, %lld kept; tensor data %.2f MiB -> %.2f MiB\n", pos[1],
           (long long) stats.n_converted, ggml_type_name(params.type), params.mix != GQ_MIX_NONE ? " (a mix)" : "",
           (long long) stats.n_kept,
           (double) stats.bytes_in / (1024.0 * 1024.0), (double) stats.bytes_out / (1024.0 * 1024.0));
    return 0;
}
