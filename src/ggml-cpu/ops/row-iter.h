#pragma once

// row-iter.h: walking a range of rows (i1, i2, i3) of a tensor in order.
//
// Kernels split ggml_nrows(t) rows between threads as flat indices
// r = i1 + ne1*(i2 + ne2*i3); the iterator turns the first index of a range
// into (i1, i2, i3) once and then steps without dividing per row.

#include "cpu-impl.h"

struct cpu_row_iter {
    int64_t i1, i2, i3;
    int64_t ne1, ne2;
};

static inline struct cpu_row_iter cpu_row_iter_at(const struct ggml_tensor * t, int64_t r) {
    struct cpu_row_iter it = {
        .i1  = r % t->ne[1],
        .i2  = (r / t->ne[1]) % t->ne[2],
        .i3  = r / (t->ne[1] * t->ne[2]),
        .ne1 = t->ne[1],
        .ne2 = t->ne[2],
    };
    return it;
}

static inline void cpu_row_iter_next(struct cpu_row_iter * it) {
    if (++it->i1 == it->ne1) {
        it->i1 = 0;
        if (++it->i2 == it->ne2) {
            it->i2 = 0;
            it->i3++;
        }
    }
}

// the row of t at the iterator's position (t has the rows' dims 1..3, any strides)
static inline char * cpu_row_iter_ptr(const struct cpu_row_iter * it, const struct ggml_tensor * t) {
    return (char *) t->data + it->i1*t->nb[1] + it->i2*t->nb[2] + it->i3*t->nb[3];
}
