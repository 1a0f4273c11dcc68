// An input error: coconet-cc stops with the translator's diagnostic.
__global__ void k(float *x) { x[0] = undeclared; }
int main() { return 0; }
