# SPDX-License-Identifier: GPL-2.0
# damon-perf harness entry points.  See README.md.
VARIANT ?= on
CMD ?= uname -a
S := scripts

.PHONY: help demo check deps base expand export config build damon kunit \
	selftest static cross docs docs-examples consumers damo damon-tests fuzz bench eval testpmu stress per-patch checkpatch vm \
	clean distclean

help:
	@sed -n 's/^## //p' README.md

demo:            ; @bash $(S)/demo.sh
check:           ; @bash $(S)/check.sh
deps:            ; @bash $(S)/deps.sh
base: deps       ; @bash $(S)/base.sh
expand: deps     ; @bash $(S)/expand.sh
export:          ; @bash $(S)/export.sh
config:          ; @bash $(S)/config.sh $(VARIANT)
build:           ; @bash $(S)/build.sh $(VARIANT)
damon:           ; @bash $(S)/build.sh $(VARIANT) mm/damon/
kunit: build     ; @bash $(S)/kunit.sh $(VARIANT)
selftest: build  ; @bash $(S)/kselftest.sh $(VARIANT) $(TESTS)
static:          ; @bash $(S)/static-check.sh $(VARIANT)
consumers: build ; @bash $(S)/consumers.sh $(VARIANT)
damo: build      ; @bash $(S)/damo.sh $(VARIANT)
damon-tests: build ; @bash $(S)/damon-tests.sh $(VARIANT)
fuzz:            ; @bash $(S)/spe-fuzz.sh $(SECS)
bench:           ; @bash bench/bench.sh
eval:            ; @bash bench/eval/eval.sh
testpmu:         ; @bash $(S)/testpmu.sh
stress:          ; @bash $(S)/stress-all.sh
docs:            ; @bash $(S)/docs-check.sh
docs-examples:   ; @bash $(S)/build.sh on && bash $(S)/docs-examples.sh
cross:           ; @for a in arm64 i386; do bash $(S)/cross-check.sh $$a $(VARIANT) || exit 1; done
per-patch:       ; @bash $(S)/per-patch.sh
checkpatch:      ; @bash $(S)/checkpatch.sh
vm: build        ; @bash $(S)/vm-run.sh --name vm $(VARIANT) -- '$(CMD)'

clean:
	rm -rf build/vm build/logs build/kselftest build/kselftest-obj

distclean:
	rm -rf build
