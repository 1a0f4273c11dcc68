# make install works: into a scratch prefix, then the installed coconet-cc
# builds an example for the host backend, which runs under mpirun.
TEST_TARGETS += test-install
TEST_COST += 5:test-install
INSTALL_TEST := $(abspath $(BUILD))/install-test

test-install: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@rm -rf $(INSTALL_TEST)
	@$(MAKE) --no-print-directory -s install PREFIX=$(INSTALL_TEST)
	@$(RECORD) install bash -c '$(INSTALL_TEST)/bin/coconet-cc --target=host $$(mpicxx --showme:compile) \
	  examples/adam/adam.cu -o $(INSTALL_TEST)/adam && \
	  $(HOST_RUN_ENV) $(HOST_MPIRUN) -np 2 $(INSTALL_TEST)/adam -n 1001 -steps 2 | grep "adam: n=1001 steps=2 ranks=2 checksum="'
