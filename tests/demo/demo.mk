# The demo a newcomer runs: every example agrees between its original and
# scheduled builds, and the summary says so (build/demo/summary.txt). Not in
# the sanitizer run: the demo measures speed.
TEST_TARGETS += test-demo
TEST_COST += 95:test-demo

test-demo: all
	@HOST_MPIRUN="$(HOST_MPIRUN)" HOST_RUN_ENV="$(HOST_RUN_ENV)" $(RECORD) demo bash -c \
	  'mk/demo.sh $(BUILD) >$(BUILD)/demo.log 2>&1; status=$$?; tail -n 8 $(BUILD)/demo.log; \
	   grep -Eq "^demo: [0-9]+ examples, [0-9]+ agree, 0 disagree$$" $(BUILD)/demo/summary.txt && \
	   [ $$status -eq 0 ] && [ $$(grep -c " yes " $(BUILD)/demo/summary.txt) -ge 3 ]'
