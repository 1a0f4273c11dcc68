// cases.h: kernels for the analysis tests. Each case is a kernel, the launch
// that calls it (inside `#pragma coconet region name(CASE)`), and what the
// analysis must say: for accepted kernels, text that --dump=ir shows for the
// op; for rejected ones, text of the reason.
//   CASE(name, accepted, kernel source, launch, expected text)
// The host function of each case has these variables: float *a, *b, *c;
// __half *h, *h2; int *ia; int n; size_t sz; float s; int hidden;
// unsigned long long seed, offset; cudaStream_t st; Shape shape (struct Shape
// { int n; float scale; }).

CASE(guard_if, true,
     "__global__ void k_guard_if(float *a, const float *b, float s, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = b[i] * s;\n"
     "}\n",
     "k_guard_if<<<(n + 255) / 256, 256, 0, st>>>(a, b, s, n);",
     "a[i] = b[i] * s")

CASE(grid_stride, true,
     "__global__ void k_grid_stride(float *a, const float *b, size_t n) {\n"
     "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
     "       i += (size_t)blockDim.x * gridDim.x)\n"
     "    a[i] = b[i] + 1.0f;\n"
     "}\n",
     "k_grid_stride<<<64, 256, 0, st>>>(a, b, sz);",
     "a[i] = b[i] + 1.0f")

CASE(reversed_index, true,
     "__global__ void k_reversed(float *a, int n) {\n"
     "  int i = threadIdx.x + blockDim.x * blockIdx.x;\n"
     "  if (i < n) a[i] = 2.0f * a[i];\n"
     "}\n",
     "k_reversed<<<n / 256 + 1, 256>>>(a, n);",
     "a[i] = 2.0f * a[i]")

CASE(early_return, true,
     "__global__ void k_early_return(float *a, const float *b, int n) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i >= n) return;\n"
     "  a[i] = -b[i];\n"
     "}\n",
     "k_early_return<<<n, 1, 0, st>>>(a, b, n);",
     "a[i] = -b[i]")

CASE(cast_index, true,
     "__global__ void k_cast_index(float *a, long n) {\n"
     "  long i = (long)(blockIdx.x * blockDim.x + threadIdx.x);\n"
     "  if (i < n) a[i] = 0.5f;\n"
     "}\n",
     "k_cast_index<<<n, 256>>>(a, (long)n);",
     "a[i] = 0.5f")

CASE(helper_variables, true,
     "__global__ void k_helpers(float *a, int n) {\n"
     "  int tid = threadIdx.x;\n"
     "  int bid = blockIdx.x;\n"
     "  int i = bid * blockDim.x + tid;\n"
     "  if (i < n) a[i] = a[i] * a[i];\n"
     "}\n",
     "k_helpers<<<n, 256>>>(a, n);",
     "a[i] = a[i] * a[i]")

CASE(compound_assign, true,
     "__global__ void k_compound(float *a, float *b, float *c, float s, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { a[i] += s; b[i] -= s; c[i] *= s; a[i] /= 2.0f; }\n"
     "}\n",
     "k_compound<<<n, 256>>>(a, b, c, s, n);",
     "a[i] = a[i] / 2.0f")

CASE(locals, true,
     "__global__ void k_locals(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) {\n"
     "    float x = b[i];\n"
     "    x = x * x;\n"
     "    a[i] = x + 1.0f;\n"
     "  }\n"
     "}\n",
     "k_locals<<<n, 256>>>(a, b, n);",
     "let x = x * x")

CASE(select, true,
     "__global__ void k_select(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = b[i] > 0.0f ? b[i] : 0.01f * b[i];\n"
     "}\n",
     "k_select<<<n, 256>>>(a, b, n);",
     "a[i] = b[i] > 0.0f ? b[i] : 0.00999999978f * b[i]")

CASE(math, true,
     "__global__ void k_math(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = sqrtf(fabsf(b[i])) + expf(-b[i]) + fmaxf(b[i], 0.0f) + tanhf(b[i]);\n"
     "}\n",
     "k_math<<<n, 256>>>(a, b, n);",
     "sqrtf(fabsf(b[i]))")

CASE(half_conversions, true,
     "__global__ void k_half_conv(__half *h, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) h[i] = __float2half(__half2float(h[i]) + b[i]);\n"
     "}\n",
     "k_half_conv<<<n, 256>>>(h, b, n);",
     "h[i] = (f16)((f32)h[i] + b[i])")

CASE(half_operators, true,
     "__global__ void k_half_ops(__half *h, const __half *h2, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) h[i] = h[i] * h2[i] + h2[i];\n"
     "}\n",
     "k_half_ops<<<n, 256>>>(h, h2, n);",
     "h[i] = h[i] * h2[i] + h2[i]")

CASE(broadcast_mod, true,
     "__global__ void k_bias(float *a, const float *bias, int n, int hidden) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] += bias[i % hidden];\n"
     "}\n",
     "k_bias<<<n, 256>>>(a, b, n, hidden);",
     "a[i] = a[i] + b[i % hidden]")

CASE(broadcast_div, true,
     "__global__ void k_row_scale(float *a, const float *scale, int n, int hidden) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] *= scale[i / hidden];\n"
     "}\n",
     "k_row_scale<<<n, 256>>>(a, c, n, hidden);",
     "a[i] = a[i] * c[i / hidden]")

CASE(broadcast_const, true,
     "__global__ void k_const_read(float *a, const float *c, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = a[i] - c[0];\n"
     "}\n",
     "k_const_read<<<n, 256>>>(a, c, n);",
     "a[i] = a[i] - c[0]")

CASE(device_helper, true,
     "__device__ __forceinline__ float gelu(float x) {\n"
     "  const float c = 0.7978845608f;\n"
     "  return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));\n"
     "}\n"
     "__global__ void k_gelu(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = gelu(b[i]);\n"
     "}\n",
     "k_gelu<<<n, 256>>>(a, b, n);",
     "a[i] = 0.5f * b[i] * (1.0f + tanhf(c * (b[i] + 0.0447149985f * b[i] * b[i] * b[i])))")

CASE(philox_dropout, true,
     "__global__ void k_dropout(float *a, const float *b, float p, int n,\n"
     "                          unsigned long long seed, unsigned long long offset) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) {\n"
     "    curandStatePhilox4_32_10_t st;\n"
     "    curand_init(seed, i, offset, &st);\n"
     "    float u = curand_uniform(&st);\n"
     "    a[i] = u > p ? b[i] / (1.0f - p) : 0.0f;\n"
     "  }\n"
     "}\n",
     "k_dropout<<<n, 256>>>(a, b, s, n, seed, offset);",
     "philox_uniform(seed, i, offset, 0)")

CASE(conditional_store, true,
     "__global__ void k_cond(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) {\n"
     "    if (b[i] > 0.0f) a[i] = b[i];\n"
     "  }\n"
     "}\n",
     "k_cond<<<n, 256>>>(a, b, n);",
     "let cond = b[i] > 0.0f\n      a[i] = cond ? b[i] : a[i]")

CASE(hint_index, true,
     "#pragma coconet pointwise(index=idx, count=len)\n"
     "__global__ void k_hinted(float *a, int len) {\n"
     "  int idx = blockIdx.x * 256 + threadIdx.x;\n"
     "  if (idx < len) a[idx] = 1.0f;\n"
     "}\n",
     "k_hinted<<<n / 256 + 1, 256>>>(a, n);",
     "a[i] = 1.0f")

CASE(integer_tensor, true,
     "__global__ void k_int(int *x, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) x[i] = (x[i] << 1) ^ 3;\n"
     "}\n",
     "k_int<<<n, 256>>>(ia, n);",
     "ia[i] = ia[i] << 1 ^ 3")

CASE(neighbour_read, true,
     "__global__ void k_stencil(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = b[i + 1] - b[i];\n"
     "}\n",
     "k_stencil<<<n, 256>>>(a, b, n);",
     "b[i + 1]")

CASE(write_not_at_i, false,
     "__global__ void k_shift(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i + 1] = b[i];\n"
     "}\n",
     "k_shift<<<n, 256>>>(a, b, n);",
     "kernel 'k_shift' writes a[i + 1]: a pointwise kernel writes only at [i]")

CASE(no_element_loop, false,
     "__global__ void k_thread_only(float *a) {\n"
     "  a[threadIdx.x] = 0.0f;\n"
     "}\n",
     "k_thread_only<<<1, 256>>>(a);",
     "kernel 'k_thread_only': cannot find the element loop")

CASE(shared_memory, false,
     "__global__ void k_shared(float *a, int n) {\n"
     "  __shared__ float tile[256];\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  tile[threadIdx.x] = i < n ? a[i] : 0.0f;\n"
     "  __syncthreads();\n"
     "  if (i < n) a[i] = tile[255 - threadIdx.x];\n"
     "}\n",
     "k_shared<<<n, 256>>>(a, n);",
     "kernel 'k_shared' declares shared memory (__shared__ float tile[256];): its threads work together, so it is not pointwise")

CASE(bound_not_parameter, false,
     "__global__ void k_loaded_bound(float *a, const int *len) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < len[0] % 7) a[i] = 0.0f;\n"
     "}\n",
     "k_loaded_bound<<<n, 256>>>(a, ia);",
     "the element loop's bound 'len[0] % 7' must be a scalar parameter of the kernel or an expression of them")

// Counts written as expressions: a product of parameters, a const local, a
// member of a by-value struct parameter, a quotient.
CASE(bound_product, true,
     "__global__ void k_rows_cols(float *a, int rows, int cols) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < rows * cols) a[i] = 1.0f;\n"
     "}\n",
     "k_rows_cols<<<(hidden * n + 255) / 256, 256>>>(a, hidden, n);",
     "[i < hidden * n]")

CASE(bound_local, true,
     "__global__ void k_local_bound(float *a, int rows, int cols) {\n"
     "  const int total = rows * cols;\n"
     "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += blockDim.x * gridDim.x) a[i] = 2.0f;\n"
     "}\n",
     "k_local_bound<<<32, 256>>>(a, hidden, n);",
     "[i < hidden * n]")

CASE(bound_member, true,
     "__global__ void k_member_bound(float *a, Shape p) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < p.n) a[i] = 3.0f;\n"
     "}\n",
     "k_member_bound<<<(shape.n + 127) / 128, 128>>>(a, shape);",
     "[i < shape.n]")

CASE(bound_quotient, true,
     "__global__ void k_quarter(float *a, int n) {\n"
     "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += blockDim.x * gridDim.x) a[i] = 4.0f;\n"
     "}\n",
     "k_quarter<<<8, 256>>>(a, n);",
     "[i < n/4]")

// atomicAdd into one element is a sum over the elements; other atomics are not.
CASE(atomics, true,
     "__global__ void k_sum(const float *a, float *total, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) atomicAdd(total, a[i]);\n"
     "}\n",
     "k_sum<<<n, 256>>>(a, c, n);",
     "c[0] += a[i]")

CASE(atomic_max, false,
     "__global__ void k_max(const int *a, int *top, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) atomicMax(top, a[i]);\n"
     "}\n",
     "k_max<<<n, 256>>>(ia, ia, n);",
     "kernel 'k_max' calls 'atomicMax' as a statement: not supported in a pointwise kernel")

CASE(inner_loop, true,
     "__global__ void k_inner_loop(float *a, const float *w, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { for (int r = 0; r < 3; r++) a[i] *= w[r]; }\n"
     "}\n",
     "k_inner_loop<<<n, 256>>>(a, b, n);",
     "a[i] = a[i] * b[0]\n      a[i] = a[i] * b[1]\n      a[i] = a[i] * b[2]")

CASE(inner_loop_runtime_bound, false,
     "__global__ void k_inner_loop_n(float *a, int n, int taps) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { for (int r = 0; r < taps; r++) a[i] *= 0.5f; }\n"
     "}\n",
     "k_inner_loop_n<<<n, 256>>>(a, n, 4);",
     "kernel 'k_inner_loop_n': a loop in the element body must have constant bounds to be unrolled")

CASE(template_kernel, true,
     "template <typename T>\n"
     "__global__ void k_template(T *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = a[i] + T(2) * a[i];\n"
     "}\n",
     "k_template<float><<<(n + 255) / 256, 256>>>(a, n);",
     "a[i] = a[i] + (f32)2 * a[i]")

CASE(block_constant, true,
     "__global__ void k_block_constant(float *a, int n) {\n"
     "  const int i = blockIdx.x * 256 + threadIdx.x;\n"
     "  if (i < n) a[i] = a[i] * 3.0f;\n"
     "}\n",
     "k_block_constant<<<(n + 255) / 256, 256>>>(a, n);",
     "a[i] = a[i] * 3.0f")

CASE(block_constant_other, false,
     "__global__ void k_block_other(float *a, int n) {\n"
     "  const int i = blockIdx.x * 128 + threadIdx.x;\n"
     "  if (i < n) a[i] = a[i] * 3.0f;\n"
     "}\n",
     "k_block_other<<<(n + 255) / 256, 256>>>(a, n);",
     "kernel 'k_block_other': cannot find the element loop")

CASE(philox_not_keyed, false,
     "__global__ void k_bad_dropout(float *a, int n, unsigned long long seed) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) {\n"
     "    curandStatePhilox4_32_10_t st;\n"
     "    curand_init(seed, 0, i, &st);\n"
     "    a[i] = curand_uniform(&st);\n"
     "  }\n"
     "}\n",
     "k_bad_dropout<<<n, 256>>>(a, n, seed);",
     "curand_init must be keyed by the element index: curand_init(seed, i, offset, &state)")

CASE(if_else, true,
     "__global__ void k_if_else(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { if (a[i] > 0.0f) a[i] = 1.0f; else a[i] = -1.0f; }\n"
     "}\n",
     "k_if_else<<<n, 256>>>(a, n);",
     "let cond = a[i] > 0.0f\n      a[i] = !cond ? -1.0f : 1.0f\n")

CASE(pointer_arithmetic, true,
     "__global__ void k_deref(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) *(a + i) = *(b + i);\n"
     "}\n",
     "k_deref<<<n, 256>>>(a, b, n);",
     "a[i] = b[i]")

CASE(pointer_arithmetic_offset, false,
     "__global__ void k_deref_next(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = *(b + i + 1);\n"
     "}\n",
     "k_deref_next<<<n, 256>>>(a, b, n);",
     "kernel 'k_deref_next' reads *(b + i + 1): a pointwise kernel dereferences only &t[i], t + i or a buffer parameter")

CASE(null_argument_unguarded, false,
     "__global__ void k_null(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = b[i];\n"
     "}\n",
     "k_null<<<n, 256>>>(a, nullptr, n);",
     "kernel 'k_null' uses 'b', which the launch passes as nullptr")

CASE(null_test_guarded, true,
     "__global__ void k_opt(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { a[i] = 2.0f; if (b) a[i] += b[i]; if (!b) a[i] *= 3.0f; }\n"
     "}\n",
     "k_opt<<<n, 256>>>(a, NULL, n);",
     "a[i] = 2.0f * 3.0f")  // (the element reads back its own store of 2.0f)

CASE(loop_down_by_two, true,
     "__global__ void k_down(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { for (int k = 4; k > 0; k -= 2) a[i] += (float)k; }\n"
     "}\n",
     "k_down<<<n, 256>>>(a, n);",
     "a[i] = a[i] + (f32)4\n      a[i] = a[i] + (f32)2\n")

CASE(return_in_grid_stride, false,
     "__global__ void k_ret(float *a, int n) {\n"
     "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {\n"
     "    if (a[i] < 0.0f) return;\n"
     "    a[i] = 1.0f;\n"
     "  }\n"
     "}\n",
     "k_ret<<<n, 256>>>(a, n);",
     "kernel 'k_ret': 'return' in a grid-stride loop ends the thread, not the element: write 'continue'")

CASE(helper_stores_in_expression, false,
     "__device__ float put(float *p, float v) { *p = v; return v; }\n"
     "__global__ void k_put(float *a, float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = put(&b[i], 1.0f) * 2.0f;\n"
     "}\n",
     "k_put<<<n, 256>>>(a, b, n);",
     "kernel 'k_put': a helper that stores must be called as a statement")

CASE(helper_pointer_offset_argument, false,
     "__device__ float first(const float *p) { return p[0]; }\n"
     "__global__ void k_first(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = first(b + i + 1);\n"
     "}\n",
     "k_first<<<n, 256>>>(a, b, n);",
     "kernel 'k_first' passes 'b + i + 1' to helper 'first': a pointer argument must be a buffer parameter, &t[i] or t + i")

CASE(helper_element_pointer_neighbour, false,
     "__device__ float next(const float *p) { return p[1]; }\n"
     "__global__ void k_next(float *a, const float *b, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = next(&b[i]);\n"
     "}\n",
     "k_next<<<n, 256>>>(a, b, n);",
     "kernel 'k_next' reads p[1], which is not element i (the pointer points at element i)")

CASE(global_variable, false,
     "__device__ float g_scale;\n"
     "__global__ void k_global(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = a[i] * g_scale;\n"
     "}\n",
     "k_global<<<n, 256>>>(a, n);",
     "kernel 'k_global' uses 'g_scale', which is not a scalar parameter or a local of the element loop")

CASE(external_kernel, false,
     "__global__ void k_elsewhere(float *a, int n);\n",
     "k_elsewhere<<<n, 256>>>(a, n);",
     "the kernel's definition is not in this file")

CASE(printf_statement, false,
     "__global__ void k_printf(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) printf(\"%f\\n\", a[i]);\n"
     "}\n",
     "k_printf<<<n, 256>>>(a, n);",
     "kernel 'k_printf' calls 'printf' as a statement")

CASE(local_without_value, true,
     "__global__ void k_uninit(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { float x; x = a[i] * 2.0f; a[i] = x; }\n"
     "}\n",
     "k_uninit<<<n, 256>>>(a, n);",
     "let x = a[i] * 2.0f")

CASE(local_array, false,
     "__global__ void k_local_array(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { float x[2]; a[i] = 1.0f; }\n"
     "}\n",
     "k_local_array<<<n, 256>>>(a, n);",
     "kernel 'k_local_array': local 'x' of type 'float[2]' is not supported (arithmetic scalars only)")

// Launch coverage: a guarded kernel computes only the elements that have a
// thread, so the launch must be proven to give each of the n elements one.
CASE(coverage_one_block, false,
     "__global__ void k_one_block(float *a, const float *b, float s, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] -= s * b[i];\n"
     "}\n",
     "k_one_block<<<1, 256, 0, st>>>(a, b, s, n);",
     "kernel 'k_one_block' computes only the elements that have a thread (its guard against 'n'), and "
     "coconet cannot prove that '<<<1, 256>>>' gives every one of the n elements a thread")

CASE(coverage_half_grid, false,
     "__global__ void k_half_grid(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i >= n) return;\n"
     "  a[i] = 0.0f;\n"
     "}\n",
     "k_half_grid<<<(n + 255) / 256, 128, 0, st>>>(a, n);",
     "cannot prove that '<<<(n + 255) / 256, 128>>>' gives every one of the n elements a thread")

CASE(coverage_other_count, false,
     "__global__ void k_other_count(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = 0.0f;\n"
     "}\n",
     "k_other_count<<<(n + 255) / 256, 256, 0, st>>>(a, hidden);",
     "cannot prove that '<<<(n + 255) / 256, 256>>>' gives every one of the hidden elements a thread")

CASE(coverage_grid_stride_one_block, true,
     "__global__ void k_gs_one(float *a, int n) {\n"
     "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) a[i] = 1.0f;\n"
     "}\n",
     "k_gs_one<<<1, 32, 0, st>>>(a, n);",
     "a[i] = 1.0f")

CASE(coverage_constants_and_helper, true,
     "constexpr int kBlock = 128;\n"
     "#define THREADS 128\n"
     "static inline int div_up(int a, int b) { return (a + b - 1) / b; }\n"
     "__global__ void k_helper_grid(float *a, int n) {\n"
     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = 3.0f;\n"
     "}\n",
     "k_helper_grid<<<div_up(n, kBlock), THREADS, 0, st>>>(a, n);",
     "a[i] = 3.0f")

CASE(coverage_dim3_product, true,
     "__global__ void k_dim3(float *a, size_t n) {\n"
     "  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n"
     "  if (i < n) a[i] = 4.0f;\n"
     "}\n",
     "k_dim3<<<dim3((sz * hidden - 1) / 256 + 1), dim3(256), 0, st>>>(a, sz * hidden);",
     "a[i] = 4.0f")
