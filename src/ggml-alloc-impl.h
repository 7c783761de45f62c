#pragma once

//
// ggml-alloc-impl.h: graph allocator entry points for the scheduler only.
//

#include "ggml-alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

// Place graph's tensors where the current plan puts them, without checking
// that the graph fits the plan: for a caller that knows the graph has the
// structure, sizes and buffer ids of the graph planned last (the scheduler,
// after comparing shapes). False (nothing placed, no log line) when there is
// no allocated plan for a graph of this many nodes and leafs.
bool ggml_gallocr_alloc_graph_planned(ggml_gallocr_t galloc, struct ggml_cgraph * graph);

#ifdef __cplusplus
}
#endif
