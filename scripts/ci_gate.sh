#!/usr/bin/env bash
# The CI gate: scan a client against a vLLM target, write every report, annotate, summarise.
#
#   scripts/ci_gate.sh VLLM_TARGET [CLIENT] [REPORT_DIR] [-- extra scan args]
#
# VLLM_TARGET: a version (0.16.0), nightly, nightly@YYYY-MM-DD, nightly==VERSION, a wheel, a folder.
# $DRIFTCHECK_SINCE (optional): only findings new compared with that vLLM fail ('declared' = the
# client's own); the gone ones are listed too.
# Writes REPORT_DIR/driftcheck.{json,sarif,junit.xml,md}; prints GitHub annotations on stdout;
# appends a heading (which vLLM build, which wheel file was read) and the Markdown report to
# $GITHUB_STEP_SUMMARY when it is set. Exit code: driftcheck's (0 clean, 1 findings or unknowns, 2 tool error).
set -uo pipefail
vllm="${1:?usage: ci_gate.sh VLLM_TARGET [CLIENT] [REPORT_DIR] [-- scan args]}"
client="${2:-}"
out="${3:-reports}"
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
args=(scan --vllm "$vllm" --report-dir "$out" -f github)
[ -n "$client" ] && args+=(--client "$client")
[ -n "${DRIFTCHECK_SINCE:-}" ] && args+=(--since "$DRIFTCHECK_SINCE")
driftcheck "${args[@]}" "$@"
rc=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/driftcheck.md" ]; then
  python3 - "$out/driftcheck.json" >> "$GITHUB_STEP_SUMMARY" 2>/dev/null <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
v = d.get("vllm") or {}
line = f"**vLLM {v.get('version') or v.get('source')}**"
if v.get("nightly"):
    line += f" (nightly of {v.get('built') or v.get('date')}" + (f", git {v['git_sha']}" if v.get("git_sha") else "") + ")"
if v.get("wheel"):
    line += f", read from `{v['wheel']}`"
print(line + "\n")
since = (d.get("stats") or {}).get("since")
if since:
    print(f"Compared with vLLM {since['vllm'].get('version')}: {len(since['new'])} new finding(s), "
          f"{len(since['gone'])} went away, {since['unchanged']} unchanged (hidden).\n")
PY
  cat "$out/driftcheck.md" >> "$GITHUB_STEP_SUMMARY"
fi
echo "driftcheck gate: exit $rc, reports in $out/" >&2
exit $rc
