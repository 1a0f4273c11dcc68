# Tests of the host backend (runtime/host): plain asserting programs built
# against libcoconet_host.a, several of them run under mpirun with 1-4 ranks.
#   test-host-kernels   execution model and CUDA runtime API (1 process);
#                       the headers from a C program; again under COCONET_HOST_MEMCHECK=1;
#                       docs/host-backend.md's list of supported calls = the headers'
#   test-host-fp16      half/bf16/fp8 conversions and arithmetic, Philox/cuRAND
#   test-host-nccl      every collective x type x op, groups, split; 1-4 ranks
#   test-host-cublas    GEMMs against a naive triple loop; cuBLASLt matmuls and
#                       their epilogues against a reference in double
#   test-host-symm      symmetric memory across 2 and 4 ranks
#   test-host-program   a third-party-style program, <<<>>> source and lowering;
#                       a trainer-style step (node-local GPU choice, cuBLASLt,
#                       templated launches) built with coconet-cc as with nvcc;
#                       a translated warp-per-row RMSNorm against its reference,
#                       and launches its generated run-time checks must stop;
#                       two translated pipeline stages (1-3 ranks each) against
#                       a reference, and ends that do not match stopped
#   test-host-death     unsupported or broken uses abort with a clear message
#   test-host-mismatch  ranks calling different collectives, or not arriving,
#                       end the job with a report (2 ranks)

HOST_TEST_DIR  := tests/host
HOST_TEST_BIN  := $(BIN)/host-tests
HOST_PROGRAM   := $(HOST_TEST_BIN)/softmax_hist

$(HOST_TEST_BIN)/%: $(HOST_TEST_DIR)/%.cu $(HOST_TEST_DIR)/check.h $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(call coconet_host_program,$@,$<,$(WARN))

$(HOST_PROGRAM): $(HOST_TEST_DIR)/programs/softmax_hist.host.cu $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(call coconet_host_program,$@,$<,$(WARN))

# Built as its users build it for GPUs, the nvcc command line given to coconet-cc.
HOST_TRAINER := $(HOST_TEST_BIN)/trainer_step
$(HOST_TRAINER): $(HOST_TEST_DIR)/programs/trainer_step.cu $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(BIN)/coconet-cc --target=host -O2 $(HOST_MPI_CFLAGS) $< -o $@ -lmpi -lnccl -lcublas -lcublasLt

# A row-wise region translated as above; its run-time checks stop launches it cannot run.
HOST_ROWS_CHECK := $(HOST_TEST_BIN)/rows_check
$(HOST_ROWS_CHECK): $(HOST_TEST_DIR)/programs/rows_check.cu $(HOST_TEST_DIR)/programs/programs.h $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(BIN)/coconet-cc --target=host -O2 $(HOST_MPI_CFLAGS) $< -o $@ -lmpi -lnccl

# A bias read at [i % h] after an AllReduce, translated as above; the caller may pass the reduced buffer.
HOST_ALIAS_CHECK := $(HOST_TEST_BIN)/alias_check
$(HOST_ALIAS_CHECK): $(HOST_TEST_DIR)/programs/alias_check.cu $(HOST_TEST_DIR)/programs/programs.h $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(BIN)/coconet-cc --target=host -O2 $(HOST_MPI_CFLAGS) $< -o $@ -lmpi -lnccl

# A momentum step translated as above, run under COCONET_CHECK=clauses.
HOST_CLAUSE_CHECK := $(HOST_TEST_BIN)/clause_check
$(HOST_CLAUSE_CHECK): $(HOST_TEST_DIR)/programs/clause_check.cu $(HOST_TEST_DIR)/programs/programs.h $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(BIN)/coconet-cc --target=host -O2 $(HOST_MPI_CFLAGS) $< -o $@ -lmpi -lnccl

# Two pipeline stages, each end of its exchanges translated as above.
HOST_PIPELINE_CHECK := $(HOST_TEST_BIN)/pipeline_check
$(HOST_PIPELINE_CHECK): $(HOST_TEST_DIR)/programs/pipeline_check.cu $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(BIN)/coconet-cc --target=host -O2 $(HOST_MPI_CFLAGS) $< -o $@ -lmpi -lnccl

# The C API check: compiled as C11, linked by the C++ driver (the runtime is C++).
$(OBJ)/tests/host/c_api.o: $(HOST_TEST_DIR)/c_api.c $(HOST_HEADERS) | $(OBJ)/tests/host/
	$(CC) $(CFLAGS) -I$(HOST_DIR)/include $(HOST_MPI_CFLAGS) -c $< -o $@

$(HOST_TEST_BIN)/c_api: $(OBJ)/tests/host/c_api.o $(HOST_LIB)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $< -o $@ $(HOST_LDLIBS)

HOST_EACH := $(HOST_TEST_DIR)/mpirun-each.sh
# COCONET_HOST_MEMCHECK=1 runs; not under SANITIZE=1, where ASan checks device memory instead.
HOST_MEMCHECK_RUNS := $(if $(filter 1,$(SANITIZE)),,yes)

.PHONY: test-host-kernels test-host-fp16 test-host-nccl test-host-cublas test-host-symm test-host-program \
        test-host-death test-host-mismatch
TEST_TARGETS += test-host-kernels test-host-fp16 test-host-nccl test-host-cublas test-host-symm \
                test-host-program test-host-death test-host-mismatch
SANITIZE_TARGETS += test-host-kernels test-host-fp16 test-host-nccl test-host-cublas test-host-symm \
                    test-host-program test-host-death test-host-mismatch
TEST_COST += 20:test-host-mismatch 15:test-host-program 40:sanitize-test-host-mismatch \
             40:sanitize-test-host-program

test-host-kernels: $(HOST_TEST_BIN)/kernels $(HOST_TEST_BIN)/c_api
	@$(RECORD) host-kernels $(HOST_RUN_ENV) $<
	$(if $(HOST_MEMCHECK_RUNS),@$(RECORD) host-kernels-memcheck $(HOST_RUN_ENV) COCONET_HOST_MEMCHECK=1 $<)
	@$(RECORD) host-c-api $(HOST_RUN_ENV) $(HOST_TEST_BIN)/c_api
	@$(RECORD) host-api-list python3 $(HOST_TEST_DIR)/api_list.py docs/host-backend.md $(HOST_DIR)/include

test-host-fp16: $(HOST_TEST_BIN)/fp16
	@$(RECORD) host-fp16 $(HOST_RUN_ENV) $<

test-host-nccl: $(HOST_TEST_BIN)/nccl
	@$(RECORD) host-nccl $(HOST_RUN_ENV) $(HOST_EACH) "$(HOST_MPIRUN)" "1 2 3 4" $<
	@$(RECORD) host-nccl-chunked $(HOST_RUN_ENV) COCONET_HOST_CHUNK_BYTES=24 $(HOST_EACH) "$(HOST_MPIRUN)" "3" $<
	$(if $(HOST_MEMCHECK_RUNS),@$(RECORD) host-nccl-memcheck $(HOST_RUN_ENV) COCONET_HOST_MEMCHECK=1 $(HOST_EACH) "$(HOST_MPIRUN)" "2" $<)

test-host-cublas: $(HOST_TEST_BIN)/cublas $(HOST_TEST_BIN)/cublaslt
	@$(RECORD) host-cublas $(HOST_RUN_ENV) $<
	@$(RECORD) host-cublaslt $(HOST_RUN_ENV) $(HOST_TEST_BIN)/cublaslt

test-host-symm: $(HOST_TEST_BIN)/symm
	@$(RECORD) host-symm $(HOST_RUN_ENV) $(HOST_EACH) "$(HOST_MPIRUN)" "2 4" $<

test-host-program: $(HOST_PROGRAM) $(HOST_TRAINER) $(HOST_ROWS_CHECK) $(HOST_PIPELINE_CHECK) $(HOST_ALIAS_CHECK) $(HOST_CLAUSE_CHECK)
	@$(RECORD) host-program-lowering $(HOST_TEST_DIR)/lowering-check.sh \
	  $(HOST_TEST_DIR)/programs/softmax_hist.cu $(HOST_TEST_DIR)/programs/softmax_hist.host.cu
	@$(RECORD) host-program $(HOST_RUN_ENV) $(HOST_EACH) "$(HOST_MPIRUN)" "1 2 3" $<
	@$(RECORD) host-trainer-step $(HOST_RUN_ENV) $(HOST_EACH) "$(HOST_MPIRUN)" "1 2 3 4" $(HOST_TRAINER)
	@$(RECORD) host-rows-check $(HOST_RUN_ENV) $(HOST_TEST_DIR)/rows-check.sh "$(HOST_MPIRUN)" $(HOST_ROWS_CHECK)
	@$(RECORD) host-pipeline-check $(HOST_RUN_ENV) $(HOST_TEST_DIR)/pipeline-check.sh "$(HOST_MPIRUN)" \
	  $(HOST_PIPELINE_CHECK)
	@$(RECORD) host-alias-check $(HOST_RUN_ENV) $(HOST_TEST_DIR)/alias-check.sh "$(HOST_MPIRUN)" $(HOST_ALIAS_CHECK)
	@$(RECORD) host-clause-check $(HOST_RUN_ENV) $(HOST_TEST_DIR)/clause-check.sh "$(HOST_MPIRUN)" $(HOST_CLAUSE_CHECK)

# death.cu also checks the run-time checks of generated code.
$(HOST_TEST_BIN)/death: runtime/include/coconet.h

test-host-death: $(HOST_TEST_BIN)/death
	@$(RECORD) host-death $(HOST_RUN_ENV) $(HOST_TEST_DIR)/death.sh $<

test-host-mismatch: $(HOST_TEST_BIN)/mismatch
	@$(RECORD) host-mismatch $(HOST_RUN_ENV) $(HOST_TEST_DIR)/mismatch.sh "$(HOST_MPIRUN)" $<
