// tbo-main.c: the test-backend-ops executable (everything else is in the ggml-tbo library).

#include "tbo-run.h"

int main(int argc, char ** argv) {
    return tbo_main(argc, argv);
}
