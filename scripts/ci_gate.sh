#!/usr/bin/env bash
# The CI gate: scan a client against a vLLM target, write every report, annotate, summarise.
#
#   scripts/ci_gate.sh VLLM_TARGET [CLIENT] [REPORT_DIR] [-- extra scan args]
#
# VLLM_TARGET: a version (0.16.0), a wheel, a folder (e.g. a nightly unpacked with uv, see README).
# Writes REPORT_DIR/driftcheck.{json,sarif,junit.xml,md}; prints GitHub annotations on stdout;
# appends the Markdown report to $GITHUB_STEP_SUMMARY when it is set. Exit code: driftcheck's
# (0 clean, 1 findings or unknowns, 2 tool error).
set -uo pipefail
vllm="${1:?usage: ci_gate.sh VLLM_TARGET [CLIENT] [REPORT_DIR] [-- scan args]}"
client="${2:-}"
out="${3:-reports}"
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
args=(scan --vllm "$vllm" --report-dir "$out" -f github)
[ -n "$client" ] && args+=(--client "$client")
driftcheck "${args[@]}" "$@"
rc=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/driftcheck.md" ]; then
  cat "$out/driftcheck.md" >> "$GITHUB_STEP_SUMMARY"
fi
echo "driftcheck gate: exit $rc, reports in $out/" >&2
exit $rc
