# wasmeval: build, test, bench, check, and the CPython-WASI artifact.
#
#   make demo    build bin/wasmeval and run the example session
#   make test    every test (builds what it needs first)
#   make bench   the benchmarks; figures go to docs/benchmarks.md
#   make pyodide Pyodide from npm, which make bench compares with
#   make check   gofmt, go vet, go mod tidy; fails on a diff
#   make python  rebuild the committed CPython artifact when its inputs changed
#                (cached by the hash of its inputs); make python-check verifies it
#   make python-reproduce  rebuild it in a fresh folder and check it is identical
#                to the committed one, byte for byte (compiles CPython: not in make test)
#   make mcp-everything  the npm MCP server that cmd/wasmeval's --tools-mcp test uses
#   make npm-testdata    the npm packages runtimes/js's node_modules tests load
#   make py-test-packages  the Debian Python packages the --packages tests mount
#   make jupyter-deps    Debian's ipykernel, numpy and matplotlib for the Jupyter backend
#   make cluster-deps    Debian's postgresql and haproxy for the store and several-node tests

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

include wasm/python/pins.mk

GO          ?= go
APT_PACKAGES := clang-14 lld-14 llvm-14 wasi-libc libclang-rt-14-dev-wasm32 dpkg-dev \
                python3.11 zstd tcl make gcc binaryen
CACHE_ROOT  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/wasmeval-build
PY_DIST     := wasm/python/dist
# The artifact is two builds, each cached under CACHE_ROOT by the hash of its
# inputs: python.wasm (python-<hash>/: compiles CPython, minutes) and the
# stdlib zip with tzdata (stdlib-<hash>/: seconds). pins.mk's TZDATA_ lines
# concern only the zip; the zip holds the interpreter build's sysconfigdata,
# so its hash covers python.wasm's too. The build is profile-guided with the
# committed profile (pgo/python.proftext.zst; llvm-14's llvm-profdata makes
# its indexed form); the build never takes a profile (wasm/python/pgo/README.md).
PY_WASM_INPUTS := wasm/python/build.sh wasm/python/config.site-wasmeval \
                  $(wildcard wasm/python/shim/*) $(wildcard wasm/python/patches/*) \
                  $(wildcard wasm/python/sqlite/*) wasm/python/pgo/python.proftext.zst
PY_WASM_HASH  := $(shell { grep -v '^TZDATA_' wasm/python/pins.mk; cat $(PY_WASM_INPUTS); } | sha256sum | cut -c1-16)
PY_WASM_CACHE := $(CACHE_ROOT)/python-$(PY_WASM_HASH)
PY_LIB_INPUTS := wasm/python/pins.mk wasm/python/stdlib.sh wasm/python/mkstdlib.py
PY_LIB_HASH   := $(shell { echo $(PY_WASM_HASH); cat $(PY_LIB_INPUTS); } | sha256sum | cut -c1-16)
PY_LIB_CACHE  := $(CACHE_ROOT)/stdlib-$(PY_LIB_HASH)
PY_HASH       := $(PY_WASM_HASH)-$(PY_LIB_HASH)
SRC_DIR     := $(CACHE_ROOT)/src

.PHONY: build demo test bench check python python-check deps go-deps clean node mcp-everything mcp-inspector npm-testdata

# The reference MCP server from npm, for TestEvalToolsMCPEverything (which
# skips without it); keep the version in step with everythingVersion there.
MCP_EVERYTHING_VERSION := 2026.8.31
MCP_EVERYTHING_DIR     := $(CACHE_ROOT)/mcp-everything-$(MCP_EVERYTHING_VERSION)

# The commit and version that `wasmeval version` prints, stamped even when a
# build has no VCS information (a source tarball, -buildvcs=false).
LDFLAGS := -X main.stampCommit=$(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty) \
           -X main.stampVersion=$(shell git describe --tags --dirty 2>/dev/null)

build: python go-deps
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/wasmeval ./cmd/wasmeval

# The example session's fourth request fails on purpose (an IndexError that
# leaves the session intact), so wasmeval exits 1: "a cell failed".
demo: build
	rm -rf bin/demo && mkdir -p bin/demo
	cd bin/demo && { rc=0; ../wasmeval eval < ../../examples/demo/session.ndjson || rc=$$?; [ $$rc -le 1 ]; }

# The packages whose tests run guest wasm (Python, the filesystem guest),
# run again on the second engine: the first round runs on the default,
# wasmtime (a cgo build: README, "Engines"), the second on wazero, the
# default of a CGO_ENABLED=0 build.
WASM_TEST_PKGS := ./wasm/... ./runtimes/python/... ./sandbox/... ./attack/... ./cmd/wasmeval/... \
                  ./server/... ./replay/... ./profiles/...

test: python-check go-deps mcp-everything mcp-inspector npm-testdata py-test-packages jupyter-deps cluster-deps
	WASMEVAL_REQUIRE_PYTHON=1 WASMEVAL_REQUIRE_CLUSTER=1 $(GO) test -count=1 -timeout 40m ./...
	WASMEVAL_ENGINE=wazero WASMEVAL_REQUIRE_PYTHON=1 $(GO) test -count=1 -timeout 40m $(WASM_TEST_PKGS)
	WASMEVAL_REQUIRE_PYTHON=1 $(GO) test -count=1 -timeout 40m -run '^$$' -bench . -benchtime=1x ./...

# One run, one package at a time (-p 1: two packages' benchmarks would
# share the two cores), with Pyodide (internal/benchreport/pyodide) next to
# wasmeval on both engines. docs/benchmarks.md is written even when a
# benchmark failed (it lists the failures), and then make fails; its
# hand-written sections (between <!-- hand-written --> markers) are kept.
# It needs what the benchmarks of runtimes/jupyter (ipykernel) and
# runtimes/python (the test packages) need, as make test does.
# The headline's eval line, fib, loop and whole-process benchmarks and the
# typical-code kernels, ours and Pyodide's, and the fuel overhead, then run
# in BENCH_REPEATS more processes each, in turn; benchreport reports each
# of their figures as its median over the processes. On this 2-core VM the
# host's other work slows a stretch of seconds by 20-40% (one process's
# fib(27) runs read 42-60 ms in turn), and a median of 5 moved with it:
# 8 repeats make it a median of 9. One eval line process reads 38-60 µs
# from one run to the next: whether it and its driver share a vCPU.
BENCH_REPEATS := 8
BENCH_HEADLINE := '^Benchmark(EvalLine|Fib27|Loop3M|FuelOverhead|ProcessEvalPrint1|PyodideEvalLine|PyodideFib27|PyodideLoop3M|Kernel|PyodideKernel)$$'
bench: python go-deps pyodide py-test-packages jupyter-deps
	{ echo "loadavg-before: $$(cat /proc/loadavg)"; echo "node: $$(node --version)"; \
	  rc=0; WASMEVAL_REQUIRE_PYTHON=1 WASMEVAL_REQUIRE_PYODIDE=1 $(GO) test -p 1 -run '^$$' -bench . -benchmem -count=1 -timeout 60m ./... || rc=$$?; \
	  for i in $$(seq $(BENCH_REPEATS)); do \
	    WASMEVAL_REQUIRE_PYTHON=1 WASMEVAL_REQUIRE_PYODIDE=1 $(GO) test -p 1 -run '^$$' -bench $(BENCH_HEADLINE) -benchmem -count=1 -timeout 20m \
	      ./runtimes/python/ ./internal/benchreport/pyodide/ ./cmd/wasmeval/ || rc=$$?; \
	  done; \
	  echo "loadavg-after: $$(cat /proc/loadavg)"; echo "go-test-exit: $$rc"; } 2>&1 | tee bench.out
	$(GO) run ./internal/benchreport -o docs/benchmarks.md < bench.out
	@grep -qx 'go-test-exit: 0' bench.out || { echo "make bench: go test failed: see bench.out; docs/benchmarks.md lists the failures"; exit 1; }

# Pyodide from npm, for make bench's side-by-side figures
# (internal/benchreport/pyodide); keep the version in step with Version
# there.
PYODIDE_VERSION := 0.29.5
PYODIDE_DIR     := $(CACHE_ROOT)/pyodide-$(PYODIDE_VERSION)

.PHONY: pyodide
pyodide: $(PYODIDE_DIR)/node_modules/pyodide/pyodide.mjs

$(PYODIDE_DIR)/node_modules/pyodide/pyodide.mjs: | node
	mkdir -p "$(PYODIDE_DIR)"
	npm install --no-audit --no-fund --no-save --prefix "$(PYODIDE_DIR)" pyodide@$(PYODIDE_VERSION)

check: go-deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

go-deps:
	$(GO) mod download

mcp-everything: $(MCP_EVERYTHING_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js

# The MCP Inspector CLI, which TestMCPInspectorCLI runs as a real MCP client
# (tests do not reach the network): installed once, pinned; keep the version
# in step with inspectorVersion in cmd/wasmeval/mcp_test.go.
MCP_INSPECTOR_VERSION := 0.15.0
MCP_INSPECTOR_DIR     := $(CACHE_ROOT)/mcp-inspector-$(MCP_INSPECTOR_VERSION)
mcp-inspector: $(MCP_INSPECTOR_DIR)/node_modules/.bin/mcp-inspector

$(MCP_INSPECTOR_DIR)/node_modules/.bin/mcp-inspector: | node
	mkdir -p "$(MCP_INSPECTOR_DIR)"
	npm install --no-audit --no-fund --prefix "$(MCP_INSPECTOR_DIR)" @modelcontextprotocol/inspector@$(MCP_INSPECTOR_VERSION)

# node and npm, for the npm packages the tests use: from apt when missing.
node:
	@if ! command -v npm >/dev/null || ! command -v node >/dev/null; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nodejs npm; \
	fi

$(MCP_EVERYTHING_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js: | node
	mkdir -p "$(MCP_EVERYTHING_DIR)"
	npm install --no-audit --no-fund --prefix "$(MCP_EVERYTHING_DIR)" @modelcontextprotocol/server-everything@$(MCP_EVERYTHING_VERSION)

# Real npm packages for runtimes/js's require/import tests (TestNpmPackages),
# which copy them into a session root: CommonJS (lodash), ESM only (nanoid)
# and conditional exports (uuid). Keep the list in step with npmTestPackages
# in runtimes/js/npm_test.go, and bump the directory's number (there too)
# when the list changes.
NPM_TESTDATA_PACKAGES := lodash@4.17.21 nanoid@5.1.12 uuid@9.0.1
NPM_TESTDATA_DIR      := $(CACHE_ROOT)/npm-testdata-1

npm-testdata: $(NPM_TESTDATA_DIR)/.stamp

$(NPM_TESTDATA_DIR)/.stamp: | node
	mkdir -p "$(NPM_TESTDATA_DIR)"
	npm install --no-audit --no-fund --no-save --prefix "$(NPM_TESTDATA_DIR)" $(NPM_TESTDATA_PACKAGES)
	touch $@

# ---- the CPython artifact -----------------------------------------------------

# The artifact is committed (wasm/python/dist: the two .zst files, INPUTS
# holding PY_HASH, SHA256SUMS of the files), so that `go build`, `go install`
# and a module that imports sandbox get Python without make. `make python`
# rebuilds it when its inputs changed (commit the result); `make python-check`,
# which `make test` runs, fails when the committed artifact was built from
# other inputs or its files do not match SHA256SUMS.
python:
	@if [ "$$(cat $(PY_DIST)/INPUTS 2>/dev/null)" = "$(PY_HASH)" ] && \
	   (cd $(PY_DIST) && sha256sum --quiet -c SHA256SUMS 2>/dev/null); then exit 0; fi; \
	if [ ! -f "$(PY_WASM_CACHE)/python.wasm.zst" ]; then $(MAKE) --no-print-directory py-build; fi; \
	if [ ! -f "$(PY_LIB_CACHE)/python311.zip.zst" ]; then $(MAKE) --no-print-directory py-stdlib; fi; \
	rm -f $(PY_DIST)/*.zst; \
	install -m 644 "$(PY_WASM_CACHE)/python.wasm.zst" "$(PY_LIB_CACHE)/python311.zip.zst" $(PY_DIST)/; \
	cp "$(PY_WASM_CACHE)/builtin-modules.txt" "$(PY_LIB_CACHE)/stdlib-excluded.txt" wasm/python/; \
	(cd $(PY_DIST) && sha256sum python.wasm.zst python311.zip.zst > SHA256SUMS); \
	echo "$(PY_HASH)" > $(PY_DIST)/INPUTS; \
	echo "the Python artifact is now $(PY_HASH): commit wasm/python/dist"

python-check:
	@test "$$(cat $(PY_DIST)/INPUTS 2>/dev/null)" = "$(PY_HASH)" || { \
	  echo "wasm/python/dist was built from inputs $$(cat $(PY_DIST)/INPUTS 2>/dev/null || echo '(none)'), but they hash to $(PY_HASH) now: run make python and commit wasm/python/dist"; exit 1; }
	@cd $(PY_DIST) && sha256sum --quiet -c SHA256SUMS || { \
	  echo "wasm/python/dist's files do not match its SHA256SUMS: run make python and commit wasm/python/dist"; exit 1; }

# python-reproduce builds the artifact again from the pinned sources in a
# temporary folder (not CACHE_ROOT/work, where py-build built it) and fails
# unless python.wasm and the zip are identical to wasm/python/dist's, byte
# for byte (wasm/python/reproduce.sh). It compiles CPython (minutes on 2 idle
# cores), so make test does not run it.
.PHONY: python-reproduce
python-reproduce: python-check deps py-sources
	JOBS=$$(nproc) bash wasm/python/reproduce.sh "$(SRC_DIR)" "$(PY_DIST)"

# py-build compiles python.wasm; py-stdlib makes the zip (from CPython's Lib/,
# the interpreter build's sysconfigdata and tzdata) without compiling anything.
.PHONY: py-build py-stdlib py-sources
py-build: deps py-sources
	rm -rf "$(PY_WASM_CACHE).tmp"
	JOBS=$$(nproc) bash wasm/python/build.sh "$(SRC_DIR)" "$(CACHE_ROOT)/work" "$(PY_WASM_CACHE).tmp"
	zstd -q -19 --rm "$(PY_WASM_CACHE).tmp/python.wasm" -o "$(PY_WASM_CACHE).tmp/python.wasm.zst"
	rm -rf "$(PY_WASM_CACHE)" && mv "$(PY_WASM_CACHE).tmp" "$(PY_WASM_CACHE)"
	rm -rf "$(CACHE_ROOT)/work"

py-stdlib: deps py-sources
	@if [ ! -f "$(PY_WASM_CACHE)/python.wasm.zst" ]; then $(MAKE) --no-print-directory py-build; fi
	rm -rf "$(PY_LIB_CACHE).tmp"
	bash wasm/python/stdlib.sh "$(SRC_DIR)/$(PY_ORIG)" "$(SRC_DIR)/$(TZDATA_DEB)" "$(PY_WASM_CACHE)" \
	  "$(CACHE_ROOT)/work-stdlib" "$(PY_LIB_CACHE).tmp"
	zstd -q -19 --rm "$(PY_LIB_CACHE).tmp/python311.zip" -o "$(PY_LIB_CACHE).tmp/python311.zip.zst"
	rm -rf "$(PY_LIB_CACHE)" && mv "$(PY_LIB_CACHE).tmp" "$(PY_LIB_CACHE)"
	rm -rf "$(CACHE_ROOT)/work-stdlib"

# Debian source packages (and tzdata's binary package), pinned by version and
# checked by SHA-256.
py-sources: deps
	mkdir -p "$(SRC_DIR)"
	cd "$(SRC_DIR)" && { \
	  echo "$(PY_ORIG_SHA256)  $(PY_ORIG)"; \
	  echo "$(PY_DEB_SHA256)  $(PY_DEB_TAR)"; \
	  echo "$(ZLIB_ORIG_SHA256)  $(ZLIB_ORIG)"; \
	  echo "$(SQLITE_ORIG_SHA256)  $(SQLITE_ORIG)"; \
	  echo "$(TZDATA_DEB_SHA256)  $(TZDATA_DEB)"; } > SHA256SUMS; \
	  if ! sha256sum --quiet -c SHA256SUMS 2>/dev/null; then \
	    apt-get source --download-only \
	      python3.11=$(PY_DEB_VERSION) zlib=$(ZLIB_DEB_VERSION) sqlite3=$(SQLITE_DEB_VERSION); \
	    [ -f "$(TZDATA_DEB)" ] || apt-get download tzdata=$(TZDATA_DEB_VERSION); \
	    sha256sum -c SHA256SUMS; \
	  fi

# Debian packages, and the deb-src entry apt-get source needs.
DEB_SRC_LIST := /etc/apt/sources.list.d/wasmeval-deb-src.sources
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	need_src=0; apt-cache showsrc zlib 2>/dev/null | grep -q '^Package: zlib' || need_src=1; \
	if [ -n "$$missing" ] || [ $$need_src = 1 ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  if [ $$need_src = 1 ]; then \
	    printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' \
	      'Suites: bookworm bookworm-updates' 'Components: main' \
	      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' | $$SUDO tee $(DEB_SRC_LIST) >/dev/null; \
	  fi; \
	  $$SUDO apt-get update -q; \
	  [ -z "$$missing" ] || DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

# ---- pure-Python packages for the package-layer tests -------------------------
# Debian bookworm's packages, pinned by version and checked by SHA-256,
# unpacked with dpkg-deb -x (not installed) into one dist-packages folder
# that the --packages tests mount (internal/testpackages finds it): sympy and
# mpmath, networkx, attrs, and PyYAML, whose _yaml C extension shows the
# message for packages that need one. python3.11 compiles their byte-code.
# Bump the directory's number, here and in internal/testpackages, when the
# list changes.
PYPKG_DIR  := $(CACHE_ROOT)/py-test-packages-1
PYPKG_DEBS := python3-sympy=1.11.1-1 python3-mpmath=1.2.1-2 python3-networkx=2.8.8-1 \
              python3-attr=22.2.0-1 python3-yaml=6.0-3+b2
PYPKG_SHA256 := \
  b437232be31819aafd267ddf2132c16293ef75e02fd58b4ad31eee3ef1d5b49e python3-sympy_1.11.1-1_all.deb \
  2c219b63cbab11b27208ef4141c116cbb022dc1236e84981fadb46042f3ce235 python3-mpmath_1.2.1-2_all.deb \
  69888603d1b54696f5c3d02d05527628d2d18661d845109a62fe24aff241aa7b python3-networkx_2.8.8-1_all.deb \
  6a12ea96a8a909445a982975279f96d7b9a1ff96c912efff39abc8d92372694a python3-attr_22.2.0-1_all.deb \
  8d0db0b3099298fe039b94e4c52a6987798a90d23b80de3ac13c3cb75cf622a2 python3-yaml_6.0-3+b2_amd64.deb

.PHONY: py-test-packages
py-test-packages: $(PYPKG_DIR)/.complete

$(PYPKG_DIR)/.complete:
	rm -rf "$(PYPKG_DIR)" "$(PYPKG_DIR).tmp" && mkdir -p "$(PYPKG_DIR).tmp/debs"
	# A fresh machine may have no package lists yet: update them once.
	SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	cd "$(PYPKG_DIR).tmp/debs" && { apt-get download $(PYPKG_DEBS) 2>/dev/null || \
	  { $$SUDO apt-get update -qq && apt-get download $(PYPKG_DEBS); } || \
	  { echo "apt-get download failed: check Debian bookworm's apt sources and run make py-test-packages again"; exit 1; }; }
	command -v python3.11 >/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get install -y -qq python3.11; }
	cd "$(PYPKG_DIR).tmp/debs" && printf '%s  %s\n' $(PYPKG_SHA256) | sha256sum --quiet -c -
	for d in "$(PYPKG_DIR).tmp"/debs/*.deb; do dpkg-deb -x "$$d" "$(PYPKG_DIR).tmp/root"; done
	mv "$(PYPKG_DIR).tmp/root/usr/lib/python3/dist-packages" "$(PYPKG_DIR).tmp/dist-packages"
	# Byte-code, as Debian's py3compile makes at install: the guest cannot
	# write it into the read-only layer, and without it importing sympy
	# compiles its source every time (17 s instead of 5 s).
	if command -v python3.11 >/dev/null; then \
	  python3.11 -m compileall -q -j0 -x '/tests/' "$(PYPKG_DIR).tmp/dist-packages" >/dev/null; \
	else echo "note: no python3.11 to byte-compile the test packages (make deps installs it); the tests import them slower"; fi
	rm -rf "$(PYPKG_DIR).tmp/root" "$(PYPKG_DIR).tmp/debs"
	echo "$(PYPKG_DEBS)" > "$(PYPKG_DIR).tmp/.complete"
	mv "$(PYPKG_DIR).tmp" "$(PYPKG_DIR)"

# The native Jupyter backend's kernel (runtimes/jupyter) runs in the host's
# Debian python3: ipykernel, and numpy and matplotlib for its plotting test;
# jupyter-server is the external server the --jupyter-url tests start on loopback.
JUPYTER_DEBS := python3-ipykernel python3-numpy python3-matplotlib python3-jupyter-server

.PHONY: jupyter-deps
jupyter-deps:
	@missing=$$(for p in $(JUPYTER_DEBS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	[ -z "$$missing" ] || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing 2>/dev/null || \
	  { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; }; }

# The postgres:// store's tests and the several-node test (cluster/) start
# their own PostgreSQL cluster on loopback (initdb into a temporary folder,
# as the postgres user when run as root) and HAProxy in front of the nodes;
# both from Debian. The service the package starts is not used.
CLUSTER_DEBS := postgresql haproxy

.PHONY: cluster-deps
cluster-deps:
	@missing=$$(for p in $(CLUSTER_DEBS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	[ -z "$$missing" ] || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing 2>/dev/null || \
	  { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; }; }

clean:
	rm -rf bin
