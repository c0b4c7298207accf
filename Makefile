# wasmeval: build, test, bench, check, and the CPython-WASI artifact.
#
#   make demo    build bin/wasmeval and run the example session
#   make test    every test (builds what it needs first)
#   make bench   the benchmarks; figures go to docs/benchmarks.md
#   make check   gofmt, go vet, go mod tidy; fails on a diff
#   make python  the CPython artifact only (cached by the hash of its inputs)
#   make mcp-everything  the npm MCP server that cmd/wasmeval's --tools-mcp test uses
#   make npm-testdata    the npm packages runtimes/js's node_modules tests load

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

include wasm/python/pins.mk

GO          ?= go
APT_PACKAGES := clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32 dpkg-dev \
                python3.11 zstd tcl make gcc
CACHE_ROOT  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/wasmeval-build
PY_DIST     := wasm/python/dist
PY_INPUTS   := wasm/python/pins.mk wasm/python/build.sh wasm/python/mkstdlib.py \
               wasm/python/config.site-wasmeval $(wildcard wasm/python/shim/*) \
               $(wildcard wasm/python/patches/*) $(wildcard wasm/python/sqlite/*)
PY_HASH     := $(shell cat $(PY_INPUTS) | sha256sum | cut -c1-16)
PY_CACHE    := $(CACHE_ROOT)/python-$(PY_HASH)
SRC_DIR     := $(CACHE_ROOT)/src

.PHONY: build demo test bench check python deps go-deps clean mcp-everything mcp-inspector npm-testdata

# The reference MCP server from npm, for TestEvalToolsMCPEverything (which
# skips without it); keep the version in step with everythingVersion there.
MCP_EVERYTHING_VERSION := 2026.8.31
MCP_EVERYTHING_DIR     := $(CACHE_ROOT)/mcp-everything-$(MCP_EVERYTHING_VERSION)

build: python go-deps
	$(GO) build -o bin/wasmeval ./cmd/wasmeval

# The example session's fourth request fails on purpose (an IndexError that
# leaves the session intact), so wasmeval exits 1: "a cell failed".
demo: build
	rm -rf bin/demo && mkdir -p bin/demo
	cd bin/demo && { rc=0; ../wasmeval eval < ../../examples/demo/session.ndjson || rc=$$?; [ $$rc -le 1 ]; }

test: python go-deps mcp-everything mcp-inspector npm-testdata
	WASMEVAL_REQUIRE_PYTHON=1 $(GO) test -count=1 ./...
	WASMEVAL_REQUIRE_PYTHON=1 $(GO) test -count=1 -run '^$$' -bench . -benchtime=1x ./...

bench: python go-deps
	WASMEVAL_REQUIRE_PYTHON=1 $(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./... | tee bench.out
	$(GO) run ./internal/benchreport < bench.out > docs/benchmarks.md

check: go-deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

go-deps:
	$(GO) mod download

mcp-everything: $(MCP_EVERYTHING_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js

# The MCP Inspector CLI, which TestMCPInspectorCLI runs with `npx --offline`
# (tests do not reach the network): fetch it into the npm cache once.
mcp-inspector: $(CACHE_ROOT)/mcp-inspector.stamp

$(CACHE_ROOT)/mcp-inspector.stamp:
	mkdir -p "$(CACHE_ROOT)"
	npx -y @modelcontextprotocol/inspector --help >/dev/null
	touch $@

$(MCP_EVERYTHING_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js:
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

$(NPM_TESTDATA_DIR)/.stamp:
	mkdir -p "$(NPM_TESTDATA_DIR)"
	npm install --no-audit --no-fund --no-save --prefix "$(NPM_TESTDATA_DIR)" $(NPM_TESTDATA_PACKAGES)
	touch $@

# ---- the CPython artifact -----------------------------------------------------

python: $(PY_DIST)/.hash-$(PY_HASH)

$(PY_DIST)/.hash-$(PY_HASH):
	@if [ ! -f "$(PY_CACHE)/python.wasm.zst" ]; then $(MAKE) --no-print-directory py-build; fi
	rm -f $(PY_DIST)/.hash-* $(PY_DIST)/*.zst
	cp "$(PY_CACHE)/python.wasm.zst" "$(PY_CACHE)/python311.zip.zst" $(PY_DIST)/
	cp "$(PY_CACHE)/builtin-modules.txt" "$(PY_CACHE)/stdlib-excluded.txt" wasm/python/
	touch $@

.PHONY: py-build py-sources
py-build: deps py-sources
	rm -rf "$(PY_CACHE).tmp"
	JOBS=$$(nproc) bash wasm/python/build.sh "$(SRC_DIR)" "$(CACHE_ROOT)/work" "$(PY_CACHE).tmp"
	zstd -q -19 --rm "$(PY_CACHE).tmp/python.wasm" -o "$(PY_CACHE).tmp/python.wasm.zst"
	zstd -q -19 --rm "$(PY_CACHE).tmp/python311.zip" -o "$(PY_CACHE).tmp/python311.zip.zst"
	rm -rf "$(PY_CACHE)" && mv "$(PY_CACHE).tmp" "$(PY_CACHE)"
	rm -rf "$(CACHE_ROOT)/work"

# Debian source packages, pinned by version and checked by SHA-256.
py-sources: deps
	mkdir -p "$(SRC_DIR)"
	cd "$(SRC_DIR)" && { \
	  echo "$(PY_ORIG_SHA256)  $(PY_ORIG)"; \
	  echo "$(PY_DEB_SHA256)  $(PY_DEB_TAR)"; \
	  echo "$(ZLIB_ORIG_SHA256)  $(ZLIB_ORIG)"; \
	  echo "$(SQLITE_ORIG_SHA256)  $(SQLITE_ORIG)"; } > SHA256SUMS; \
	  if ! sha256sum --quiet -c SHA256SUMS 2>/dev/null; then \
	    apt-get source --download-only \
	      python3.11=$(PY_DEB_VERSION) zlib=$(ZLIB_DEB_VERSION) sqlite3=$(SQLITE_DEB_VERSION); \
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

clean:
	rm -rf bin $(PY_DIST)/*.zst $(PY_DIST)/.hash-*
