# shellcheck shell=bash
# stage NAME CMD...: run CMD with errexit in force (even inside functions), print its time, pass its status.
# Sourced by .ci/run and scripts/pr_job.sh, so a stage prints the same line wherever it runs:
#   === stage NAME: ok in S s (run T s)      or      === stage NAME: FAILED (exit N) in S s (run T s)
# RUN_T0 (the run's start, date +%s.%N) and STAGE_LOG (a file the lines are appended to, for the closing list of
# stage times) are taken from the environment when set, so a script .ci/run calls adds to its run's list.
RUN_T0=${RUN_T0:-$(date +%s.%N)}
stage() {
  local name=$1 t0 rc; shift
  t0=$(date +%s.%N)
  echo "=== stage $name"
  set +e
  ( set -e; "$@" )
  rc=$?
  set -e
  awk -v n="$name" -v a="$t0" -v b="$(date +%s.%N)" -v r="$RUN_T0" -v rc="$rc" 'BEGIN {
    printf "=== stage %s: %s in %.1f s (run %.1f s)\n", n, rc == 0 ? "ok" : "FAILED (exit " rc ")", b - a, b - r }' \
    | if [ -n "${STAGE_LOG:-}" ]; then tee -a "$STAGE_LOG"; else cat; fi
  return "$rc"
}
