# The README's two commands. Both do all set-up themselves on a fresh Debian 12 machine.
#   make demo   - the local demo: daemon on loopback + smoke workload + GUI (or a headless report)
#   make test   - every test
#   make fuzz   - every libFuzzer target for FUZZ_SECONDS each (docs/fuzzing.md)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: deps configure build demo test bench package format clean fuzz-build fuzz fuzz-smoke

deps:
	@./scripts/install-deps.sh

configure: deps
	@# ccache is looked up here, after deps installed it (not when make reads this file).
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  $$(command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) $(CMAKE_FLAGS) >$(BUILD).configure.log 2>&1 \
	  || { cat $(BUILD).configure.log; exit 1; }
	@grep -A12 -- '---- Runplane configuration summary' $(BUILD).configure.log || true

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

# Only the programs the demo runs; the tests, benchmarks and fuzzers are left to `make test`.
demo: configure
	@cmake --build $(BUILD) -j$(JOBS) --target demo-programs
	@./scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 900

# The node bundle for GPU hosts: build/package/runplane-node-VERSION-linux-x86_64.tar.gz
package: build
	@./scripts/package-node.sh $(BUILD)

bench: build
	@./scripts/bench.sh $(BUILD)

# The fuzz build (clang-14, ASan + UBSan + libFuzzer), only the libraries the targets need.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
fuzz-build: deps
	@cmake -S . -B $(FUZZ_BUILD) -DRUNPLANE_FUZZ=ON -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DRUNPLANE_BUILD_GUI=OFF \
	  -DRUNPLANE_BUILD_TESTS=OFF -DRUNPLANE_BUILD_BENCH=OFF -DRUNPLANE_WITH_CUDA=OFF \
	  -DRUNPLANE_WITH_TORCH=OFF -DRUNPLANE_WERROR=OFF \
	  $$(command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >$(FUZZ_BUILD).configure.log 2>&1 \
	  || { cat $(FUZZ_BUILD).configure.log; exit 1; }
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzzers

fuzz: fuzz-build
	@./scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# CI's short run: each target over its committed corpus, then FUZZ_SMOKE_SECONDS of new inputs.
FUZZ_SMOKE_SECONDS ?= 20
# Per input: a real hang still fails it; an input that runs long under ASan on a slow CI machine does not.
FUZZ_SMOKE_TIMEOUT ?= 60
# A fixed seed and a cap on executions: CI replays the first part of a sequence that was run to
# its end before the commit (scripts/fuzz.sh), so a passing commit cannot fail CI by chance.
FUZZ_SMOKE_SEED ?= 1
FUZZ_SMOKE_RUNS ?= 3000
fuzz-smoke: fuzz-build
	@FUZZ_TIMEOUT=$(FUZZ_SMOKE_TIMEOUT) FUZZ_SEED=$(FUZZ_SMOKE_SEED) FUZZ_RUNS=$(FUZZ_SMOKE_RUNS) \
	  ./scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS)

format:
	@git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
