// copy-cvt-tmpl.h: one run converter of copy-engine.c (a ggml_cpu_run_cvt_t)
// between two element types. Included once per pair, after defining
//     COPY_CVT          the name of the converter
//     COPY_CVT_S        the source element type
//     COPY_CVT_D        the destination element type
//     COPY_CVT_ONE      D COPY_CVT_ONE(S): one element
//     COPY_CVT_VEC      void COPY_CVT_VEC(int64_t n, const S *, D *): a contiguous run
//     COPY_CVT_VEC_REF  the same, the scalar path taken under use_ref
// (all six are undefined at the end). A contiguous run goes through the vector
// (or the reference) function, any other element by element.

#if !defined(COPY_CVT) || !defined(COPY_CVT_S) || !defined(COPY_CVT_D) || \
    !defined(COPY_CVT_ONE) || !defined(COPY_CVT_VEC) || !defined(COPY_CVT_VEC_REF)
#error "define COPY_CVT, COPY_CVT_S, COPY_CVT_D, COPY_CVT_ONE, COPY_CVT_VEC and COPY_CVT_VEC_REF before including copy-cvt-tmpl.h"
#endif

static void COPY_CVT(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds,
                     int64_t n, bool use_ref) {
    if (ss == sizeof(COPY_CVT_S) && ds == sizeof(COPY_CVT_D)) {
        if (use_ref) {
            COPY_CVT_VEC_REF(n, (const COPY_CVT_S *) src, (COPY_CVT_D *) dst);
        } else {
            COPY_CVT_VEC(n, (const COPY_CVT_S *) src, (COPY_CVT_D *) dst);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        *(COPY_CVT_D *)(dst + i*ds) = COPY_CVT_ONE(*(const COPY_CVT_S *)(src + i*ss));
    }
}

#undef COPY_CVT
#undef COPY_CVT_S
#undef COPY_CVT_D
#undef COPY_CVT_ONE
#undef COPY_CVT_VEC
#undef COPY_CVT_VEC_REF
