# Hook Bridge: `make serve` installs and starts the server; `make test` installs and runs every check.
PYTHON ?= python3
# bash, for pipefail: an install's progress is filtered through awk and its failure must still fail.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?=

.PHONY: serve test test-ready newest-python lint install install-dev system-deps ts-deps claude-code-deps gemini-deps codex-deps copilot-deps opencode-deps amp-deps cline-deps bench bench-peers soak test-oldest-python test-fast

# The installs use uv (pinned below; pip installs it into the virtualenv first): on a fresh clone here pip took
# 50 s to install Hook Bridge and 23 s more for the dev tools, each second of it before the first check could
# start; uv takes a few seconds for each. Quiet, but never silent: a person watching `make serve` on a fresh
# machine is told what takes the time and sees uv's summary lines; its whole output is kept in install.log,
# and its end is shown if it fails.
UV_SPEC := uv>=0.13.9,<0.14
UV := $(VENV)/bin/uv
# make serve's install compiles every module (--compile-bytecode, uv's threads on every core): a server started
# where bytecode is not written (PYTHONDONTWRITEBYTECODE) would otherwise compile Django at every start. CI's
# does not (12 CPU-seconds before the first check): its tests write bytecode caches as they go (below).
COMPILE := $(if $(filter true,$(CI)),,--compile-bytecode)
$(VENV)/.installed: pyproject.toml
	@echo "Installing Hook Bridge into $(VENV)…"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -qq --disable-pip-version-check "$(UV_SPEC)"
	@set -o pipefail; $(UV) pip install --python $(PY) $(COMPILE) -e . 2>&1 \
	  | tee $(VENV)/install.log | awk '/^(Resolved|Prepared|Installed|Bytecode) /{print "  " $$0; fflush()}' \
	  || { echo "uv failed; the end of its output ($(VENV)/install.log):"; tail -n 25 $(VENV)/install.log; exit 1; }
	@touch $@

# The development tools and the newest Python's virtualenv are installed without compiling every module (uv's
# default): the tests, which write bytecode caches as they go (below), compile only what they import, once.
$(VENV)/.installed-dev: $(VENV)/.installed
	@echo "Installing the development tools into $(VENV)…"
	@$(UV) pip install -q --python $(PY) -e ".[dev]"
	@touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# Debian's packages the tests drive: chromium for the browser tests (never a downloaded
# browser build), nginx and openssl for the deployment test, tmux to drive Claude Code's terminal UI. The
# nginx service the package starts is stopped again: the test runs its own.
system-deps:
	@missing=""; \
	test -x /usr/bin/chromium || missing="$$missing chromium"; \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	command -v nginx >/dev/null || missing="$$missing nginx"; \
	command -v openssl >/dev/null || missing="$$missing openssl"; \
	command -v tmux >/dev/null || missing="$$missing tmux"; \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		(service nginx stop || nginx -s stop) >/dev/null 2>&1 || true; \
	fi

# The TypeScript MCP SDK, as agent hosts embed it, for the tests that drive it (testing/ts_client.py),
# installed exactly as locked.
tests/ts/node_modules/.installed: tests/ts/package-lock.json | system-deps
	npm ci --prefix tests/ts --no-audit --no-fund --loglevel=error
	touch $@

ts-deps: tests/ts/node_modules/.installed

# The real Claude Code CLI (its npm package, with the native binary it ships), pinned by the lock,
# for tests/clients/test_claude_code_cli.py, which runs it offline against a scripted model.
tests/claude_code/node_modules/.installed: tests/claude_code/package-lock.json | system-deps
	npm ci --prefix tests/claude_code --no-audit --no-fund --loglevel=error
	touch $@

claude-code-deps: tests/claude_code/node_modules/.installed

# The real Gemini CLI, pinned by the lock, for tests/clients/test_gemini_cli.py (offline, against
# testing/gemini_stand_in.py).
tests/gemini_cli/node_modules/.installed: tests/gemini_cli/package-lock.json | system-deps
	npm ci --prefix tests/gemini_cli --no-audit --no-fund --loglevel=error
	touch $@

gemini-deps: tests/gemini_cli/node_modules/.installed

# The real Codex CLI (its npm package ships the Linux binary), pinned by the lock, for
# tests/clients/test_codex_cli.py (offline, against testing/codex_stand_in.py).
tests/codex_cli/node_modules/.installed: tests/codex_cli/package-lock.json | system-deps
	npm ci --prefix tests/codex_cli --no-audit --no-fund --loglevel=error
	touch $@

codex-deps: tests/codex_cli/node_modules/.installed

# The real GitHub Copilot CLI, pinned by the lock, for tests/clients/test_copilot_cli.py (offline: its own-model
# mode against testing/model_stand_in.py).
tests/copilot_cli/node_modules/.installed: tests/copilot_cli/package-lock.json | system-deps
	npm ci --prefix tests/copilot_cli --no-audit --no-fund --loglevel=error
	touch $@

copilot-deps: tests/copilot_cli/node_modules/.installed

# The real OpenCode, pinned by the lock, for tests/clients/test_opencode_cli.py (offline: its anthropic provider
# against testing/model_stand_in.py). `npm install`, which keeps to the lock, not `npm ci`: npm 11 writes
# opencode-ai's other platforms' optional packages into the lock without a version and `npm ci` then calls the
# lock out of sync ("Missing: opencode-darwin-arm64@").
# With it, the plugin SDK OpenCode installs into a config folder at its first start (plugin_sdk: the
# package.json and lock OpenCode itself writes there): each test's folder starts as a person's does after that
# first start, instead of waiting seconds for the registry in every test (testing.opencode_cli).
tests/opencode_cli/node_modules/.installed: tests/opencode_cli/package-lock.json tests/opencode_cli/plugin_sdk/package-lock.json | system-deps
	npm install --prefix tests/opencode_cli --no-audit --no-fund --loglevel=error
	npm ci --prefix tests/opencode_cli/plugin_sdk --no-audit --no-fund --loglevel=error
	touch $@

opencode-deps: tests/opencode_cli/node_modules/.installed

# The real Amp CLI (its npm package and the native binary it ships), pinned by the lock, for
# tests/clients/test_amp_cli.py: its `amp permissions test` evaluates the rules `register amp` writes, offline,
# running the delegate as Amp runs it before a tool call, with no sign-in. `npm install`, which keeps to the lock,
# not `npm ci`: as with OpenCode, npm 11 writes the other platforms' optional packages into the lock without a
# version, and `npm ci` calls the lock out of sync.
tests/amp_cli/node_modules/.installed: tests/amp_cli/package-lock.json | system-deps
	npm install --prefix tests/amp_cli --no-audit --no-fund --loglevel=error
	touch $@

amp-deps: tests/amp_cli/node_modules/.installed

# The real Cline CLI (its npm package and the binary it ships), pinned by the lock, for tests/clients/test_cline_cli.py
# (offline: its openai-compatible provider against testing/openai_stand_in.py). `npm install` for the same reason.
tests/cline_cli/node_modules/.installed: tests/cline_cli/package-lock.json | system-deps
	npm install --prefix tests/cline_cli --no-audit --no-fund --loglevel=error
	touch $@

cline-deps: tests/cline_cli/node_modules/.installed

# PORT unset: the first free port from 8000 up; PORT=N: exactly that one.
serve: $(VENV)/.installed
	@$(PY) manage.py serve --host $(HOST) $(if $(PORT),--port $(PORT)) $(SERVE_ARGS)

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports

# The whole suite in parallel (pytest-xdist): TEST_WORKERS processes, each test file on one of them (its
# module's servers start once; the files handed out in conftest.py's order), coverage combined across the
# workers and the servers they start. It runs on the newest Python where there is one: there coverage
# measures through sys.monitoring (COVERAGE_CORE=sysmon), which costs the suite a fifth less CPU than Python
# 3.11's tracer, and coverage is most of what a server under test spends. Before it, two at a time and each
# one's output kept together: the installs, the lint, and the tests that need no server, browser, PostgreSQL
# or Redis on the oldest Python supported. (Run beside the suite instead, on a fresh clone here: the suite
# took 13:57 instead of 13:04 and they 3:39 instead of 1:28, the whole run no shorter (15:08 against 15:38 and
# 14:55 before it), and a timing test failed under that load.)
TEST_WORKERS ?= 3
# The tests write Python's bytecode caches (__pycache__, ignored by git) whatever the environment says: where
# PYTHONDONTWRITEBYTECODE is set (this machine's environment sets it), each of the three hundred Python processes
# a run starts (servers, commands, workers) compiled every module of ours and of the dev tools anew, about 0.2 s
# of CPU each. (Set empty, not removed: Python reads an empty value as unset.)
test test-fast test-oldest-python: export PYTHONDONTWRITEBYTECODE :=
NEWEST_PYTHON ?= $(shell for p in $$(ls -d $$(pyenv root 2>/dev/null || echo $$HOME/.pyenv)/versions/3.13*/bin/python3 2>/dev/null) python3.13; do $$p -c "" 2>/dev/null && echo $$p && break; done)
NEWEST := .venv-newest
SUITE_VENV := $(if $(NEWEST_PYTHON),$(NEWEST),$(VENV))
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-ready
	$(if $(NEWEST_PYTHON),COVERAGE_CORE=sysmon )$(SUITE_VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadfile \
	  --no-loadscope-reorder

test-ready: $(VENV)/.installed-dev system-deps ts-deps claude-code-deps gemini-deps codex-deps copilot-deps opencode-deps amp-deps cline-deps lint test-oldest-python newest-python

# The newest Python supported (requires-python has no ceiling), in a virtualenv of its own, from PATH or
# pyenv. CI fails without it; a person's `make test` says so and runs the suite on $(VENV).
newest-python: $(if $(NEWEST_PYTHON),$(NEWEST)/.installed-dev)
	@if [ -z "$(NEWEST_PYTHON)" ]; then \
	  echo "Python 3.13 not found (PATH or pyenv): the suite runs on $$($(PY) --version) alone"; \
	  [ "$${CI:-}" != "true" ]; \
	fi

$(NEWEST)/.installed-dev: pyproject.toml $(VENV)/.installed
	@echo "Installing Hook Bridge and its development tools for $$($(NEWEST_PYTHON) --version) into $(NEWEST)…"
	@[ -x $(NEWEST)/bin/python ] || $(NEWEST_PYTHON) -m venv $(NEWEST)
	@$(UV) pip install -q --python $(NEWEST)/bin/python -e ".[dev]"
	@touch $@

# The fast tests, as a person runs them while working: the dev tools, then every test that needs no
# server, browser, PostgreSQL or Redis, without coverage (its floor is for the whole suite). About a minute.
test-fast: $(VENV)/.installed-dev
	$(VENV)/bin/pytest -q --no-cov -n 2 -m "not e2e and not browser and not team"

# The oldest Python supported (requires-python's floor, $(VENV)): the tests that need no server, browser,
# PostgreSQL or Redis. Three workers on two cores: these tests wait as much as they compute (2 workers: 96-100 s
# for 111 s of CPU; 3 workers: 75-76 s, 2026-11-28). (The two migration checks on PostgreSQL, a minute of one
# worker, ran here too, against what this said; the suite runs them, with every other test of the team tier.)
test-oldest-python: $(VENV)/.installed-dev
	@echo "Unit tests on $$($(PY) --version)"
	@$(VENV)/bin/pytest -q -p no:cacheprovider --no-cov -n 3 -m "not e2e and not browser and not team"

# The figures (docs/performance.md): several minutes each, for people, not CI. First the
# side-by-side comparison (bench/compare.py: the same-SDK floor, Hook Bridge, the peers when
# `make bench-peers` installed them), then fifty busy agents on one worker beside the floor
# (bench/agents.py), then Hook Bridge's own scenarios (bench/run.py).
bench: $(VENV)/.installed-dev
	$(PY) -m bench.compare $(COMPARE_ARGS)
	$(PY) -m bench.agents $(AGENTS_ARGS)
	$(PY) -m bench.run $(BENCH_ARGS)

# Peers measured side by side, each in a virtualenv of its own (their pins are not ours).
PEERS := bench/.peers
MFE_VERSION ?= 2.8.5
bench-peers: $(PEERS)/mcp-feedback-enhanced/.installed
$(PEERS)/mcp-feedback-enhanced/.installed:
	$(PYTHON) -m venv $(PEERS)/mcp-feedback-enhanced
	$(PEERS)/mcp-feedback-enhanced/bin/python -m pip install -q "mcp-feedback-enhanced==$(MFE_VERSION)"
	touch $@

soak: $(VENV)/.installed-dev
	$(PY) -m bench.soak $(SOAK_ARGS)
