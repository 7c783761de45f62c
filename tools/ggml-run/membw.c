// membw.c: the read bandwidth (membw.h), measured by tools/common/read-bandwidth.c.

#include "membw.h"
#include "run-common.h"
#include "read-bandwidth.h"

double run_read_bandwidth(int n_threads) {
    char err[256];
    const double gbs = tools_read_bandwidth(n_threads, err, sizeof(err));
    if (gbs <= 0.0) {
        run_error("%s", err);
    }
    return gbs;
}
