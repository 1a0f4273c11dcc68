# make deps: install the Debian packages coconet needs, only when one is missing.
DEB_PACKAGES := libclang-16-dev clang-16 llvm-16-tools libclang-rt-16-dev \
                libcmocka-dev libcjson-dev libopenmpi-dev openmpi-bin \
                libopenblas-dev graphviz patch python3 bc

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing" $$missing; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $$missing; \
	fi
	@$(MAKE) --no-print-directory check-cuda

check-cuda:
	@if [ ! -x "$(NVCC)" ] || [ ! -f "$(CUDA_HOME)/include/nccl.h" ]; then \
	  echo "coconet: no CUDA toolkit with NCCL found at CUDA_HOME=$(CUDA_HOME)" >&2; \
	  echo "  (looked at \$$CUDA_HOME, nvcc on PATH, /usr/local/cuda; need bin/nvcc and include/nccl.h)" >&2; \
	  echo "  install the CUDA Toolkit 13 with NCCL 2.28, or run: make CUDA_HOME=/path/to/cuda" >&2; \
	  exit 1; \
	fi
