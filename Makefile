# braid's entry points on a fresh Debian 12 machine:
#   make demo    install what is missing, build, run the demo
#   make test    install what is missing, then the whole suite: Release, ThreadSanitizer,
#                ASan+UBSan, and clang's -Wthread-safety pass over the runtime
#   make bench   install what is missing (libtorch-dev too), build the benchmarks, run them
#   make rust    install what is missing (cargo too), build libbraid_c and the Rust crate
#   make python  install what is missing (pybind11 too), build the Python module into build/python
# Each build has its own directory under build/, so repeated runs rebuild only what changed.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.NOTPARALLEL:
MAKEFLAGS += --no-print-directory
.DEFAULT_GOAL := help

BUILD ?= build
JOBS ?= $(shell nproc)
CTEST_JOBS ?= $(JOBS)
PREFIX ?= /usr/local

RELEASE_DIR := $(BUILD)/release
TSAN_DIR := $(BUILD)/tsan
ASAN_DIR := $(BUILD)/asan

# Sanitizers stop at the first report; there are no suppressions for braid's own code.
# tests/tsan-suppressions.txt says why each of its few entries (none in braid's code) is there.
TSAN_OPTIONS := halt_on_error=1 second_deadlock_stack=1 suppressions=$(abspath tests/tsan-suppressions.txt)
ASAN_OPTIONS := halt_on_error=1 detect_leaks=1
UBSAN_OPTIONS := halt_on_error=1 print_stacktrace=1

# ThreadSanitizer needs its fixed memory layout; with address-space randomization off it never
# meets an "unexpected memory mapping". Used when the machine allows it.
SETARCH := $(shell setarch $$(uname -m) -R true >/dev/null 2>&1 && echo setarch $$(uname -m) -R)

# The libraries compile as unity builds here (see BRAID_UNITY_BUILD in CMakeLists.txt).
CMAKE_CONFIGURE := cmake -S . -Wno-dev -DBRAID_UNITY_BUILD=ON
# The Python package (braid.core and the pure-Python parts) is assembled here by the Release build.
PYTHON_DIR := $(abspath $(BUILD))/python
PYTHON := /usr/bin/python3

# With no GPU present (CI), the Release build compiles the CUDA kernels only to check them: PTX
# (no ptxas, nearly half of nvcc's time), device code unoptimized (cicc at -O0, a sixth less of
# nvcc's time than -G's debug build) and host code at -O0, which together take nvcc about a
# third of the optimized build's time. Every kernel is still parsed, instantiated and
# translated; no test here could run it. With a GPU, optimized sm_90 machine code as usual.
# CUDA_ARCHS=... and CUDA_FLAGS_RELEASE=... override.
HAVE_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
CUDA_ARCHS ?= $(if $(HAVE_GPU),90,90-virtual)
CUDA_FLAGS_RELEASE ?= $(if $(HAVE_GPU),-O3 -DNDEBUG,-O0 -Xcicc -O0 -DNDEBUG)
CTEST := ctest --output-on-failure --no-tests=error -j $(CTEST_JOBS) --test-dir

.PHONY: help demo test bench install clean rust test-rust test-rust-only python test-python \
        deps-demo deps-test deps-bench deps-rust deps-python \
        configure-release configure-release-bench configure-tsan configure-asan \
        test-release test-tsan test-asan check-thread-safety format tidy

help:
	@echo "make demo                 build and run the demo (build/release/examples/braid_demo)"
	@echo "make test                 the whole suite: Release, TSan, ASan+UBSan, -Wthread-safety"
	@echo "make bench                build and run the benchmarks against PyTorch (BENCH_ARGS=--quick)"
	@echo "make test-release | test-tsan | test-asan | check-thread-safety   one part of the suite"
	@echo "make rust | test-rust     build the Rust crate (bindings/rust) / run its tests, with Debian's cargo"
	@echo "make python | test-python build braid.core into $(BUILD)/python / run its pytest suite"
	@echo "make install PREFIX=...   install the library, the C API and the Python module (default PREFIX /usr/local)"
	@echo "make format | tidy        clang-format / clang-tidy over src, include, tests"
	@echo "make clean                remove $(BUILD)/"

# --- Dependencies (Debian packages, only the missing ones) -------------------------------------
deps-demo:
	scripts/install-deps demo
deps-test:
	scripts/install-deps test
deps-bench:
	scripts/install-deps bench
deps-rust:
	scripts/install-deps rust
deps-python:
	scripts/install-deps python

# --- Configure ---------------------------------------------------------------------------------
configure-release:
	$(CMAKE_CONFIGURE) -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DBRAID_SANITIZE= -DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHS) \
	  -DCMAKE_CUDA_FLAGS_RELEASE="$(CUDA_FLAGS_RELEASE)" \
	  -DBRAID_PYTHON_DIR=$(PYTHON_DIR) -DBRAID_BUILD_TESTS=ON -DBRAID_BUILD_EXAMPLES=ON -DBRAID_BUILD_BENCH=OFF
configure-release-bench:
	$(CMAKE_CONFIGURE) -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DBRAID_SANITIZE= -DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHS) \
	  -DCMAKE_CUDA_FLAGS_RELEASE="-O3 -DNDEBUG" \
	  -DBRAID_PYTHON_DIR=$(PYTHON_DIR) -DBRAID_BUILD_TESTS=ON -DBRAID_BUILD_EXAMPLES=ON -DBRAID_BUILD_BENCH=ON -DBRAID_BENCH_REQUIRE_TORCH=ON
# Sanitizer builds keep assertions on (Debug); BRAID_SANITIZE adds -O1 -g.
configure-tsan:
	$(CMAKE_CONFIGURE) -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DBRAID_SANITIZE=thread -DBRAID_CUDA=OFF \
	  -DBRAID_BUILD_TESTS=ON -DBRAID_BUILD_EXAMPLES=OFF -DBRAID_BUILD_BENCH=OFF
configure-asan:
	$(CMAKE_CONFIGURE) -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DBRAID_SANITIZE=address -DBRAID_CUDA=OFF \
	  -DBRAID_BUILD_TESTS=ON -DBRAID_BUILD_EXAMPLES=OFF -DBRAID_BUILD_BENCH=OFF

# --- The three entry points --------------------------------------------------------------------
demo: deps-demo configure-release
	cmake --build $(RELEASE_DIR) --target braid_demo -j $(JOBS)
	$(RELEASE_DIR)/examples/braid_demo

# The cheap clang pass goes first so a missing lock fails in seconds, not after the builds. The
# Release stage builds and runs the C API's and the Python module's suites with the C++ one;
# the Rust crate's tests follow it.
test: deps-test check-thread-safety test-release test-rust-only test-tsan test-asan
	@echo "make test: Release (C++, C, Python), Rust, ThreadSanitizer, ASan+UBSan and -Wthread-safety all passed"

# bench/run.sh builds the benchmark target itself; BENCH_ARGS passes options (e.g. --quick).
bench: deps-bench configure-release-bench
	BRAID_BUILD_DIR=$(abspath $(RELEASE_DIR)) JOBS=$(JOBS) bench/run.sh $(BENCH_ARGS)

# --- The parts of `make test` ------------------------------------------------------------------
check-thread-safety: configure-release
	JOBS=$(JOBS) scripts/check-thread-safety $(RELEASE_DIR)

test-release: configure-release
	cmake --build $(RELEASE_DIR) -j $(JOBS)
	$(CTEST) $(RELEASE_DIR)

test-tsan: configure-tsan
	cmake --build $(TSAN_DIR) -j $(JOBS)
	TSAN_OPTIONS="$(TSAN_OPTIONS)" $(SETARCH) $(CTEST) $(TSAN_DIR)

test-asan: configure-asan
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ASAN_OPTIONS="$(ASAN_OPTIONS)" UBSAN_OPTIONS="$(UBSAN_OPTIONS)" $(CTEST) $(ASAN_DIR)

# --- The Rust crate (bindings/rust) ----------------------------------------------------------
# Debian's toolchain (Rust 1.63), whatever else is on PATH; the crate has no dependencies, so
# cargo runs offline. build.rs finds the library and the generated C headers in the Release build.
RUST_ENV := RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
  BRAID_LIB_DIR=$(abspath $(RELEASE_DIR))/bindings/c:$(abspath $(RELEASE_DIR)) \
  BRAID_INCLUDE_DIR=$(abspath $(RELEASE_DIR))/bindings/c/generated/include
CARGO := /usr/bin/cargo

rust: deps-rust configure-release
	cmake --build $(RELEASE_DIR) --target braid_c -j $(JOBS)
	cd bindings/rust && $(RUST_ENV) $(CARGO) build --offline -j $(JOBS)

test-rust: rust test-rust-only

# The crate's tests against the Release build's libbraid_c (built by test-release or rust).
test-rust-only:
	cd bindings/rust && $(RUST_ENV) $(CARGO) test --offline -j $(JOBS)

# --- The Python module (bindings/python) -------------------------------------------------------
python: deps-python configure-release
	cmake --build $(RELEASE_DIR) --target braid_python -j $(JOBS)
	@echo "make python: PYTHONPATH=$(PYTHON_DIR) $(PYTHON) -c 'import braid.core as mx'"

test-python: python
	cd bindings/python/tests && PYTHONPATH=$(PYTHON_DIR) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m pytest -q -p no:cacheprovider

# --- Developer conveniences --------------------------------------------------------------------
# The library, the C API and the Python module (into <prefix>/lib/python3.X/dist-packages).
install: deps-python configure-release
	cmake --build $(RELEASE_DIR) --target braid braid_c braid_python -j $(JOBS)
	cmake --install $(RELEASE_DIR) --prefix $(PREFIX)

format:
	git ls-files -z -- 'src/*.cpp' 'src/*.h' 'include/*.h' 'tests/*.cpp' 'bench/*.cpp' 'examples/*.cpp' \
	  | xargs -0 -r $$(command -v clang-format-14 || command -v clang-format) -i

tidy: configure-release
	git ls-files -z -- 'src/*.cpp' \
	  | xargs -0 -r $$(command -v clang-tidy-14 || command -v clang-tidy) -p $(RELEASE_DIR) --quiet

clean:
	rm -rf $(BUILD)
