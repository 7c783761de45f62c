#include "testing.h"
int main(void) { return TEST_RESULT(); }
