# The host backend (runtime/host/README.md): libcoconet_host.a, a CPU
# implementation of the CUDA runtime + NCCL + cuBLAS + cuRAND subset that
# translated CUDA programs (coconet --target=host) compile and link against.
#
# For others' fragments:
#   $(CXX) $(HOST_CXXFLAGS) prog.cu -o prog $(HOST_LDLIBS)    compile and link a .cu
#   $(call coconet_host_program,OUT,SOURCES,EXTRA_FLAGS)       the same, as a recipe line
#   $(BUILD)/host/DIR/NAME                                     built from DIR/NAME.cu by a pattern rule
#   $(HOST_RUN_ENV) $(HOST_MPIRUN) -np N prog                  run N ranks (mpirun as root too;
#                                                              LeakSanitizer ignores OpenMPI's own leaks)
#   $(TRANSLATOR_RUN_ENV) coconet --verify ...                  the translator, its harness run so

HOST_DIR        := runtime/host
HOST_LIB        := $(LIB)/libcoconet_host.a
HOST_SRCS       := $(wildcard $(HOST_DIR)/src/*.cc)
HOST_OBJS       := $(HOST_SRCS:$(HOST_DIR)/src/%.cc=$(OBJ)/runtime/host/%.o)
HOST_HEADERS    := $(wildcard $(HOST_DIR)/include/*.h $(HOST_DIR)/include/*/*.h $(HOST_DIR)/include/cub/*.cuh \
                              $(HOST_DIR)/include/cub/*/*.cuh $(HOST_DIR)/include/cuda/functional \
                              $(HOST_DIR)/include/cuda/std/functional)
HOST_MPI_CFLAGS := $(shell mpicxx --showme:compile 2>/dev/null) -DOMPI_SKIP_MPICXX=1
HOST_MPI_LIBS   := $(shell mpicxx --showme:link 2>/dev/null)

# .cu files are C++17 here; -x none in HOST_LDLIBS ends that for what follows.
HOST_CXXFLAGS := -std=c++17 -O2 -g -fno-strict-aliasing $(SANFLAGS) -I$(CURDIR)/$(HOST_DIR)/include \
                 $(HOST_MPI_CFLAGS) -x c++ -include cuda_runtime.h
HOST_LDLIBS   := -x none $(SANFLAGS) $(CURDIR)/$(HOST_LIB) $(HOST_MPI_LIBS) -lopenblas -lm

HOST_MPIRUN  := mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
HOST_SYMBOLIZER := $(realpath $(shell command -v llvm-symbolizer 2>/dev/null))
# LeakSanitizer ignores OpenMPI's own allocations; finding their frames needs the
# slow unwinder, which costs a program with many allocations (the translator on
# libclang) several times its run: only MPI programs get it.
HOST_LSAN    := suppressions=$(CURDIR)/$(HOST_DIR)/lsan.supp:fast_unwind_on_malloc=0:print_suppressions=0
# Open MPI's ob1 messaging: the default also probes the cm layer's network
# transports, which takes each mpirun 0.2 s more (the tests run about 2,000).
HOST_RUN_ENV := env OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_pml=ob1 LSAN_OPTIONS=$(HOST_LSAN) \
                $(if $(HOST_SYMBOLIZER),ASAN_SYMBOLIZER_PATH=$(HOST_SYMBOLIZER))
# For coconet and coconet-cc, whose MPI programs (--verify's harness) run
# through COCONET_VERIFY_MPIRUN.
TRANSLATOR_RUN_ENV := env OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_pml=ob1 COCONET_VERIFY_MPIRUN="$(HOST_RUN_ENV) $(HOST_MPIRUN)" \
                      $(if $(HOST_SYMBOLIZER),ASAN_SYMBOLIZER_PATH=$(HOST_SYMBOLIZER))

coconet_host_program = $(CXX) $(HOST_CXXFLAGS) $(3) $(2) -o $(1) $(HOST_LDLIBS)

$(OBJ)/runtime/host/%.o: $(HOST_DIR)/src/%.cc | $(OBJ)/runtime/host/
	$(CXX) $(CXXFLAGS) -MMD -MP -I$(HOST_DIR)/include -I$(HOST_DIR)/src $(HOST_MPI_CFLAGS) -c $< -o $@

$(HOST_LIB): $(HOST_OBJS) | $(LIB)/
	rm -f $@ && ar rcs $@ $^

all: $(HOST_LIB)

$(BUILD)/host/%: %.cu $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(call coconet_host_program,$@,$<,)

# bench-host: a pointwise kernel through the COCONET_HOST_SIMPLE fast path
# against the same loop in plain C++ (prints the ratio; not a test).
HOST_BENCH := $(BIN)/host-bench/pointwise

$(HOST_BENCH): $(HOST_DIR)/bench/pointwise.cu $(HOST_LIB) $(HOST_HEADERS)
	@mkdir -p $(@D)
	$(call coconet_host_program,$@,$<,$(WARN))

.PHONY: bench-host
bench-host: $(HOST_BENCH)
	$(HOST_BENCH)

-include $(HOST_OBJS:.o=.d)
