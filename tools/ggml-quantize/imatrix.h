#pragma once

// imatrix.h: an importance matrix read from a GGUF file in the format of
// upstream's llama-imatrix: for a weight tensor NAME, an F32 tensor
// NAME.in_sum2 of [n_per_row, n_mat] sums of squared activations and an F32
// tensor NAME.counts of [1, n_mat] token counts. The importance of column i
// of matrix j is in_sum2[j][i] / counts[j], or 1 where counts[j] is 0 (a
// matrix that saw no input), as upstream's quantize tool computes it.
//
// Loading refuses (naming the entry, which is the weight tensor's name) an
// importance that is NaN, infinite or negative, and a count that is: no
// sum of squares gives one, and the quantizers turn them into NaN or zero
// weights. A zero importance (a column never activated) is raised to the
// smallest positive importance of its matrix, and a matrix of zeros gets 1
// for each (see gq_imatrix_raise_zeros), with a warning: the quantizers
// would write a block of zero importances as zeros.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gq_imatrix;

// the file's entries, or NULL after reporting why (unreadable, not GGUF,
// a sums tensor without counts, wrong types or shapes, values out of range)
struct gq_imatrix * gq_imatrix_load(const char * path);
void gq_imatrix_free(struct gq_imatrix * im);

// the importances of tensor `name` (n_per_row values per matrix, *n_mat
// matrices), or NULL where the file has no entry for it
const float * gq_imatrix_find(const struct gq_imatrix * im, const char * name, int64_t * n_per_row, int64_t * n_mat);

// the number of entries
int64_t gq_imatrix_count(const struct gq_imatrix * im);

#ifdef __cplusplus
}
#endif
