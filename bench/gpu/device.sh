#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root (the device tool's working-tree copy).
#
#   bash bench/gpu/device.sh receive        # copy the carried part (.gpu/send/pNN/) to /tmp/dc-gpu/chunks
#   bash bench/gpu/device.sh receive-last   # receive, install, smoke (all in one call)
#   bash bench/gpu/device.sh bench          # the throughput benchmark (needs the install of a warm machine)
#   bash bench/gpu/device.sh install|smoke  # the pieces of receive-last
#   bash bench/gpu/device.sh receive-last-steps   # receive, install, then bench/gpu/stepwise.py's steps (carry .gpu/steps too)
#
# /tmp survives between calls only while the machine stays warm (30 s after a call): send the parts in
# consecutive calls. What comes back is written under $OUT (at most 8 files): logs and results.
set -u
STATE=/tmp/dc-gpu
SITE=/tmp/site
OUT=${OUT:-/tmp/dc-gpu/out}
mkdir -p "$STATE/chunks" "$OUT"
PY=${PY:-$(command -v python3)}
export PYTHONUNBUFFERED=1 VLLM_USE_FLASHINFER_SAMPLER=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
       VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1

receive() {
  local d n=0
  for d in .gpu/send/p*/; do
    [ -f "$d/SHA256" ] || continue
    cp "$d"part* "$STATE/chunks/" && cp "$d/SHA256" "$STATE/chunks/SHA256" && n=$((n + 1))
  done
  [ "$n" -gt 0 ] || { echo "no carried part under .gpu/send/"; return 1; }
  echo "received: $(ls "$STATE/chunks" | grep -c '^part') of $(awk '{print $3}' "$STATE/chunks/SHA256") parts; $(du -sh "$STATE/chunks" | cut -f1); /tmp free: $(df -h /tmp | awk 'NR==2{print $4}')"
}

install() {
  local t0=$SECONDS want have
  want=$(awk '{print $3}' "$STATE/chunks/SHA256"); have=$(ls "$STATE/chunks" | grep -c '^part')
  [ "$want" = "$have" ] || { echo "have $have of $want parts: send the rest first"; return 1; }
  cat "$STATE"/chunks/part* > "$STATE/payload.tar"
  (cd "$STATE" && echo "$(awk '{print $1}' chunks/SHA256)  payload.tar" | sha256sum -c -) || return 1
  rm -rf "$STATE/payload" && mkdir -p "$STATE/payload" && tar -xf "$STATE/payload.tar" -C "$STATE/payload" || return 1
  rm -f "$STATE/payload.tar"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
      "$STATE"/payload/wheels/*.whl > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; return 1; }
  export PYTHONPATH=$SITE
  {
    echo "install: $((SECONDS - t0)) s"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    "$PY" -c "import sys, torch, transformers, vllm; print('python', sys.version.split()[0], sys.executable); print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0)); print('transformers', transformers.__version__); print('vllm', vllm.__version__, vllm.__file__)"
    echo "import vllm: $((SECONDS - t0)) s since install start"
  } 2>&1 | tee -a "$OUT/install.log" | grep -v Warning
}

pack() {  # pack a smoke output folder for $OUT, without model weights or hidden states
  tar -czf "$OUT/$2.tar.gz" -C "$(dirname "$1")" --exclude='*.safetensors' --exclude='reference.pt' \
      --exclude='.pythonpath' --exclude='hidden_states' "$(basename "$1")"
}

smoke() {
  export PYTHONPATH=$SITE
  local C=$STATE/payload/clients t0=$SECONDS
  echo "== native, careful + defaults"
  "$PY" -m driftcheck.runner --python "$PY" --driver native --defaults-too --timeout 170 \
      --out "$STATE/smoke-native"; echo "exit $?"
  pack "$STATE/smoke-native" smoke-native; echo "[$((SECONDS - t0)) s]"
  echo "== generator, speculators 0.3.0 unmodified"
  "$PY" -m driftcheck.runner --python "$PY" --driver generator --client "$C/speculators-0.3.0" --timeout 120 \
      --out "$STATE/smoke-gen-unmodified"; echo "exit $?"
  pack "$STATE/smoke-gen-unmodified" smoke-gen-unmodified; echo "[$((SECONDS - t0)) s]"
  echo "== generator, speculators 0.3.0 after driftcheck fix --apply --vllm 0.22.0"
  "$PY" -m driftcheck.runner --python "$PY" --driver generator --client "$C/speculators-0.3.0-fixed" --timeout 170 \
      --out "$STATE/smoke-gen-fixed"; echo "exit $?"
  pack "$STATE/smoke-gen-fixed" smoke-gen-fixed; echo "[$((SECONDS - t0)) s]"
}

steps() {  # speculators 0.3.0 fixed one drift at a time (bench/gpu/stepwise.py): the real crash of each step
  export PYTHONPATH=$SITE
  local S=$STATE/steps R=$STATE/steps-out t0=$SECONDS d name model="" extra
  rm -rf "$S" "$R" && mkdir -p "$S" "$R" && tar -xzf .gpu/steps/steps.tar.gz -C "$S" || return 1
  for d in "$S"/s*; do
    name=$(basename "$d")
    [[ "$name" == s0-* && -z "${STEPS_ALL:-}" ]] && continue   # the unmodified client: run by `smoke` already
    mkdir -p "$R/$name"; [ -n "$model" ] && cp -r "$model" "$R/$name/model"   # same spec: the build is skipped
    extra=""; [[ "$name" == *prefix-caching ]] && extra="--defaults-too"
    echo "== $name"
    "$PY" -m driftcheck.runner --python "$PY" --driver generator --client "$d" --timeout "${STEP_TIMEOUT:-90}" \
        --out "$R/$name" $extra; echo "exit $? [$((SECONDS - t0)) s]"
    model=$R/$name/model
  done
  tar -czf "$OUT/steps.tar.gz" -C "$STATE" --exclude='*.safetensors' --exclude='reference.pt' --exclude='.pythonpath' \
      --exclude='hidden_states' --exclude='shim' steps-out
}

bench() {
  export PYTHONPATH=$SITE
  "$PY" bench/gpu/throughput.py all --out "$STATE/bench" --client-fixed "$STATE/payload/clients/speculators-0.3.0-fixed" \
      --timeout "${BENCH_TIMEOUT:-170}" "$@" 2>&1 | tee "$OUT/bench-stdout.txt"
  cp "$STATE/bench/throughput.json" "$OUT/" 2>/dev/null
  tar -czf "$OUT/bench-logs.tar.gz" -C "$STATE" bench
}

case "${1:-}" in
  receive) receive ;;
  receive-last) receive && install && smoke 2>&1 | tee "$OUT/smoke-stdout.txt" ;;
  receive-last-steps) receive && install && steps 2>&1 | tee "$OUT/steps-stdout.txt" ;;
  steps) steps 2>&1 | tee "$OUT/steps-stdout.txt" ;;
  install) install ;;
  smoke) smoke 2>&1 | tee "$OUT/smoke-stdout.txt" ;;
  bench) shift; bench "$@" ;;
  *) echo "usage: $0 receive|receive-last|install|smoke|bench"; exit 2 ;;
esac
