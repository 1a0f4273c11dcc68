# make install works: into a scratch prefix, then the installed coconet-cc
# builds an example for the host backend, plain and fused (coconet_fused.h),
# which run under mpirun; both man pages are there and format.
TEST_TARGETS += test-install
TEST_COST += 5:test-install
INSTALL_TEST := $(abspath $(BUILD))/install-test

test-install: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@rm -rf $(INSTALL_TEST)
	@$(MAKE) --no-print-directory -s install PREFIX=$(INSTALL_TEST)
	@$(RECORD) install bash -c '$(INSTALL_TEST)/bin/coconet-cc --target=host $$(mpicxx --showme:compile) \
	  examples/adam/adam.cu -o $(INSTALL_TEST)/adam && \
	  $(HOST_RUN_ENV) $(HOST_MPIRUN) -np 2 $(INSTALL_TEST)/adam -n 1001 -steps 2 | grep "adam: n=1001 steps=2 ranks=2 checksum=" && \
	  $(INSTALL_TEST)/bin/coconet-cc --target=host -DCOCONET_EXAMPLE_FUSE $$(mpicxx --showme:compile) \
	  examples/adam/adam.cu -o $(INSTALL_TEST)/adam-fused && \
	  $(HOST_RUN_ENV) $(HOST_MPIRUN) -np 2 $(INSTALL_TEST)/adam-fused -n 1001 -steps 2 | grep "ranks=2 checksum=" && \
	  for page in coconet coconet-cc; do \
	    test -s $(INSTALL_TEST)/share/man/man1/$$page.1 || exit 1; \
	    ! command -v groff >/dev/null || groff -man -Tutf8 -ww $(INSTALL_TEST)/share/man/man1/$$page.1 >/dev/null || exit 1; \
	  done'
