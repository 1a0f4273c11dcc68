extern __shared__ float first[];
__global__ void k(float *x) { x[threadIdx.x] = first[0]; }

void middle(float *x) {
  k<<<1, 32>>>(x);
}
// filler line 0, far from every change
// filler line 1, far from every change
// filler line 2, far from every change
// filler line 3, far from every change
// filler line 4, far from every change
// filler line 5, far from every change
// filler line 6, far from every change
// filler line 7, far from every change
// filler line 8, far from every change
// filler line 9, far from every change
// filler line 10, far from every change
// filler line 11, far from every change
void last(float *x) { k<<<2, 64>>>(x); }