#!/usr/bin/env bash
# The pull-request job: the make targets CI runs on every submission, in CI's order, each a timed stage. It is what
# the composite action (action.yml) runs on a hosted runner and what .ci/run runs here (the same script, the same
# steps; .ci/run adds its machine install and Docker leg around them and keeps `make test` last).
#
#   scripts/pr_job.sh              every step: setup jars lint verify verify-answers-none test
#   scripts/pr_job.sh lint test    those steps only, in the job's order
#   scripts/pr_job.sh --list       the steps, one a line
#
# Each step is `make STEP`; a failing step stops the job with its exit code (later steps do not run). Every step
# prints `=== stage STEP: ok in S s (run T s)` (scripts/ci/stage.sh); run on its own, the job closes with the list
# of its stage times (and writes it to $GITHUB_STEP_SUMMARY on GitHub), run by .ci/run it adds them to .ci/run's.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=(setup jars lint verify verify-answers-none test)

if [ "${1:-}" = --list ]; then printf '%s\n' "${STEPS[@]}"; exit 0; fi
[ $# -gt 0 ] || set -- "${STEPS[@]}"
for step in "$@"; do
  case " ${STEPS[*]} " in
    *" $step "*) ;;
    *) echo "pr_job: '$step' is not a step of the pull-request job (${STEPS[*]})" >&2; exit 2 ;;
  esac
done
# the job's order, whatever order the steps were named in
wanted=" $* "
selected=()
for step in "${STEPS[@]}"; do case "$wanted" in *" $step "*) selected+=("$step") ;; esac; done

own_log=
if [ -z "${STAGE_LOG:-}" ]; then own_log=1; STAGE_LOG=$(mktemp); fi
# shellcheck source=ci/stage.sh
. scripts/ci/stage.sh
closing() {
  [ -n "$own_log" ] || return 0
  echo "=== stage times"; cat "$STAGE_LOG"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    { echo '### turnbench pull-request job'; echo; echo '```'; cat "$STAGE_LOG"; echo '```'; } >> "$GITHUB_STEP_SUMMARY"
  fi
  rm -f "$STAGE_LOG"
}
trap closing EXIT
for step in "${selected[@]}"; do stage "$step" make "$step"; done
