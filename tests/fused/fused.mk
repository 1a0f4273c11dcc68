# tests/fused: fused kernels (fuse on split reorder) end to end.
#   test-fused-cuda  tests/fused/sgd.cu and examples/tp_norm's fuse variant (the
#                    fused row-wise kernel) translated for the GPU compile with
#                    nvcc for sm_90 and sm_100 and link against NCCL 2.28.
#   test-fused       sgd.cu translated for the host backend prints what the
#                    program as written prints, bit for bit, at 1..8 ranks in f32,
#                    f16 and bf16; the NCCL-path fallbacks (a buffer not symmetric,
#                    ranks not in one LSA domain) agree too and say why; ranks on
#                    different paths or a buffer at another offset are reported;
#                    broken LSA barriers are exposed; so does examples/tp_norm's
#                    fuse variant at 1..8 ranks (the fused row-wise kernel); and
#                    bench/gpu/fused.cu (the GPU benchmark's fused program) runs on
#                    the host backend: both paths taken, results equal.

FUSED_DIR       := $(BUILD)/fused
FUSED_NVCCFLAGS  = $(EXAMPLE_NVCCFLAGS) -Werror all-warnings -Xcompiler -Werror \
                   -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 -I runtime/include

$(FUSED_DIR)/sgd-cuda.cu: tests/fused/sgd.cu $(BIN)/coconet
	@mkdir -p $(@D)
	$(BIN)/coconet $< -o $@ -- $(shell mpicxx --showme:compile 2>/dev/null)

$(FUSED_DIR)/sgd-cuda: $(FUSED_DIR)/sgd-cuda.cu runtime/include/coconet.h runtime/include/coconet_fused.h
	$(NVCC) $(FUSED_NVCCFLAGS) $< -o $@ $(EXAMPLE_LIBS)

# The fused row-wise kernel of examples/tp_norm (its fuse variant), for the GPU.
$(FUSED_DIR)/tp_norm-cuda.cu: examples/tp_norm/tp_norm.cu $(BIN)/coconet
	@mkdir -p $(@D)
	$(BIN)/coconet $< -o $@ -- $(shell mpicxx --showme:compile 2>/dev/null) -DCOCONET_EXAMPLE_FUSE

$(FUSED_DIR)/tp_norm-cuda: $(FUSED_DIR)/tp_norm-cuda.cu runtime/include/coconet.h runtime/include/coconet_fused.h
	$(NVCC) $(FUSED_NVCCFLAGS) -DCOCONET_EXAMPLE_FUSE $< -o $@ $(EXAMPLE_LIBS)

# Under SANITIZE=1 (the runtime's fused paths under ASan) the programs run at 2
# and 3 ranks; the nvcc builds are the plain run's only.
FUSED_RANKS := $(if $(filter 1,$(SANITIZE)),2 3,1 2 3 4 5 6 7 8)
TEST_TARGETS += test-fused test-fused-cuda
SANITIZE_TARGETS += test-fused
TEST_COST += 50:test-fused 10:test-fused-cuda 100:sanitize-test-fused
.PHONY: test-fused test-fused-cuda
$(FUSED_DIR)/bench-fused: bench/gpu/fused.cu $(BIN)/coconet $(HOST_LIB) runtime/include/coconet_fused.h
	@mkdir -p $(@D)
	$(BIN)/coconet --target=host $< -o $@.cu
	$(call coconet_host_program,$@,$@.cu,$(WARN) -I$(CURDIR)/runtime/include)

test-fused-cuda:
	@$(RECORD) fused-cuda $(MAKE) --no-print-directory $(FUSED_DIR)/sgd-cuda $(FUSED_DIR)/tp_norm-cuda

test-fused: $(FUSED_DIR)/bench-fused $(BIN)/coconet $(HOST_LIB)
	@$(RECORD) fused $(HOST_RUN_ENV) tests/fused/run.sh $(BIN)/coconet $(FUSED_DIR)/host "$(HOST_MPIRUN)" \
	  "$(FUSED_RANKS)" $(CXX) $(HOST_CXXFLAGS) $(WARN) -I$(CURDIR)/runtime/include -- $(HOST_LDLIBS)
	@$(RECORD) fused-bench-smoke $(HOST_RUN_ENV) sh -c 'COCONET_DEBUG=INFO $(FUSED_DIR)/bench-fused 10007 2 37 300 > $(FUSED_DIR)/bench.out 2>&1 && \
	  grep -q "^fused n=10007 iters=2 .* equal=yes$$" $(FUSED_DIR)/bench.out && \
	  grep -q "^fused_rows tokens=37 hidden=300 iters=2 .* equal=yes$$" $(FUSED_DIR)/bench.out && \
	  grep -q "region bench_sgd: fused kernel on symmetric memory" $(FUSED_DIR)/bench.out && \
	  grep -q "region bench_sgd: NCCL path: .g. is not in symmetric memory" $(FUSED_DIR)/bench.out && \
	  grep -q "region bench_rows: fused kernel on symmetric memory" $(FUSED_DIR)/bench.out && \
	  grep -q "region bench_rows: NCCL path: .y. is not in symmetric memory" $(FUSED_DIR)/bench.out || \
	  { cat $(FUSED_DIR)/bench.out; exit 1; }' 
