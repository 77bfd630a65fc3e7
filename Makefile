# The README's two commands. Both do all set-up themselves on a fresh Debian 12 machine.
#   make demo   - the local demo: daemon on loopback + smoke workload + GUI (or a headless report)
#   make test   - every test
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: deps configure build demo test bench package format clean

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

demo: build
	@./scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 900

# The node bundle for GPU hosts: build/package/runplane-node-VERSION-linux-x86_64.tar.gz
package: build
	@./scripts/package-node.sh $(BUILD)

bench: build
	@./scripts/bench.sh $(BUILD)

format:
	@git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
