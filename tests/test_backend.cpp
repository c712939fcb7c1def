#include <cstdio>
int main() { std::puts("SKIP: not written yet"); return 77; }
