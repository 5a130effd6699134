"""Prepare, on a machine with PyPI, everything the GPU runs need on the device machine (which reaches no registry).

    python bench/gpu/prepare.py            # -> .gpu/ (ignored through .git/info/exclude)

1. downloads PyPI's `vllm==0.22.0` wheel (CUDA build, cp38-abi3, manylinux_2_28_x86_64): its torch 2.11.0,
   torchaudio 2.11.0 and torchvision 0.26.0 pins are what the device image already holds;
2. resolves its requirements for CPython 3.12 / x86-64 (pip's dry-run report), drops what the image already has
   (bench/gpu/image-packages.txt, from the device docs) and the large optional GPU-kernel packages that the runs here
   do not use (DROP below; flashinfer's sampler is switched off with VLLM_USE_FLASHINFER_SAMPLER=0), and downloads
   the rest, one version of each;
3. unpacks speculators 0.3.0 (package + dist-info, as pip lays it out) twice: `speculators-0.3.0/` unmodified and
   `speculators-0.3.0-fixed/` after `driftcheck fix --apply --warnings --vllm <the 0.22.0 wheel>` (static: reads the wheel);
   the fix's diff is kept in bench/gpu/results/;
4. removes xgrammar's C++ static library from its wheel (not loaded at run time; 31 MB);
5. packs all of it into one tar and splits it into parts of at most --chunk-mib MiB (default 62), one folder per part
   (.gpu/send/pNN/), each with the tar's sha256, so that each device call carries one part (the device tool carries
   at most 64 MiB a call, the working tree included).

Needs network to PyPI and the dev environment (driftcheck importable). Prints the device commands at the end.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VLLM = "vllm==0.22.0"
SPECULATORS = "speculators==0.3.0"
# Large GPU-kernel packages vLLM 0.22.0 requires but that a bf16 Llama on an H200 does not load (attention is
# vLLM's own FlashAttention build inside the wheel); the sampler's flashinfer path is switched off at run time.
DROP = {
    "flashinfer-python", "flashinfer-cubin", "tilelang", "z3-solver", "humming-kernels",
    "nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-cu13", "quack-kernels",
    "tokenspeed-mla", "tokenspeed-triton", "nvidia-cudnn-frontend", "fastsafetensors", "cuda-python", "cuda-tile",
    "nvidia-cuda-cccl", "nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-nvvm", "torch-c-dlpack-ext",
    # fastapi[standard]'s command-line tools (the `fastapi` command and its cloud deploy): no server runs here
    "fastapi-cli", "fastapi-cloud-cli", "agent-detector", "detect-installer", "fastar", "rignore", "sentry-sdk",
    "rich-toolkit",
}
PLATFORM_ARGS = ["--python-version", "3.12", "--implementation", "cp", "--abi", "cp312", "--abi", "abi3",
                 "--abi", "none", "--only-binary=:all:",
                 *[a for n in range(5, 40) for a in ("--platform", f"manylinux_2_{n}_x86_64")],
                 "--platform", "manylinux2014_x86_64", "--platform", "manylinux1_x86_64",
                 "--platform", "linux_x86_64", "--platform", "any"]


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def image_packages() -> set[str]:
    text = (HERE / "image-packages.txt").read_text()
    return {norm(w) for line in text.splitlines() if not line.startswith("#") for w in line.split()}


def download_vllm(dl: Path) -> Path:
    have = sorted(dl.glob("vllm-0.22.0-*.whl"))
    if not have:
        pip("download", "--no-deps", *PLATFORM_ARGS, "-d", str(dl), VLLM)
        have = sorted(dl.glob("vllm-0.22.0-*.whl"))
    return have[0]


def resolve_deps(wheel: Path, work: Path) -> list[tuple[str, str]]:
    report = work / "report.json"
    if not report.exists():
        pip("install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report), *PLATFORM_ARGS,
            "--target", str(work / "dry-run-target"), str(wheel))
    installs = json.loads(report.read_text())["install"]
    have, out = image_packages(), []
    for item in installs:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if norm(name) in have or norm(name) in DROP or norm(name) == "vllm":
            continue
        out.append((name, version))
    return out


def download_deps(deps: list[tuple[str, str]], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    missing = [f"{n}=={v}" for n, v in deps
               if not any(norm(p.name.split("-")[0]) == norm(n) for p in dest.glob("*.whl"))]
    if missing:
        pip("download", "--no-deps", *PLATFORM_ARGS, "-d", str(dest), *missing)
    names = [norm(p.name.split("-")[0]) for p in dest.glob("*.whl")]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise SystemExit(f"two versions of {sorted(dupes)} in {dest}: keep one")


def strip_static_libs(deps: Path) -> list[str]:
    """xgrammar's wheel carries its C++ static library (lib/*.a, ~31 MB compressed) for linking against it; the
    Python package loads libxgrammar_bindings.so only. Dropping the .a (and its RECORD line) saves a device call."""
    notes = []
    for whl in sorted(deps.glob("xgrammar-*.whl")):
        with zipfile.ZipFile(whl) as z:
            names = [n for n in z.namelist() if n.endswith(".a")]
            if not names:
                continue
            tmp = whl.with_suffix(".tmp")
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
                for info in z.infolist():
                    if info.filename in names:
                        continue
                    data = z.read(info)
                    if info.filename.endswith(".dist-info/RECORD"):
                        data = b"".join(line for line in data.splitlines(keepends=True)
                                        if line.split(b",")[0].decode() not in names)
                    out.writestr(info, data)
        os.replace(tmp, whl)
        notes.append(f"{whl.name}: removed {names}")
    return notes


def clients(work: Path, wheel: Path, results: Path) -> Path:
    dl = work / "dl"
    spec_whl = sorted(dl.glob("speculators-0.3.0-*.whl"))
    if not spec_whl:
        pip("download", "--no-deps", "-d", str(dl), SPECULATORS)
        spec_whl = sorted(dl.glob("speculators-0.3.0-*.whl"))
    root = work / "payload" / "clients"
    shutil.rmtree(root, ignore_errors=True)
    plain, fixed = root / "speculators-0.3.0", root / "speculators-0.3.0-fixed"
    for d in (plain, fixed):
        with zipfile.ZipFile(spec_whl[0]) as z:
            z.extractall(d)
    env = dict(os.environ, NO_COLOR="1")
    env.setdefault("DRIFTCHECK_CACHE_DIR", "/tmp/dc-cache")
    # --warnings: the generator's DC102 (prefix caching) and DC106 (DeepSeek layer arguments) fixes too
    base = [sys.executable, "-m", "driftcheck", "fix", "--warnings", "--vllm", str(wheel), "--client", str(fixed)]
    dry = subprocess.run(base, capture_output=True, text=True, cwd=REPO, env=env)
    results.mkdir(parents=True, exist_ok=True)
    (results / "speculators-0.3.0-fix-vllm-0.22.0.diff").write_text(dry.stdout)
    app = subprocess.run([*base, "--apply", "--no-backup"], capture_output=True, text=True, cwd=REPO, env=env)
    (results / "speculators-0.3.0-fix-vllm-0.22.0.log").write_text(
        f"$ driftcheck fix --apply --warnings --no-backup --vllm {wheel.name} --client speculators-0.3.0-fixed\n"
        f"exit {app.returncode}\n--- stdout\n{app.stdout}\n--- stderr\n{app.stderr}")
    print(f"driftcheck fix --apply: exit {app.returncode}\n{app.stderr[-2000:]}")
    if app.returncode != 0:
        print("warning: driftcheck fix did not exit 0 (see bench/gpu/results/speculators-0.3.0-fix-vllm-0.22.0.log)")
    return root


def pack(work: Path, wheel: Path, chunk_mib: int) -> list[Path]:
    payload = work / "payload"
    tar_path = work / "payload.tar"
    with tarfile.open(tar_path, "w") as tar:  # wheels are zip files already: no compression
        tar.add(wheel, arcname=f"wheels/{wheel.name}")
        for p in sorted((payload / "deps").glob("*.whl")):
            tar.add(p, arcname=f"wheels/{p.name}")
        tar.add(payload / "clients", arcname="clients")
        tar.add(HERE / "image-packages.txt", arcname="image-packages.txt")
    digest = hashlib.sha256(tar_path.read_bytes()).hexdigest()
    send = work / "send"
    shutil.rmtree(send, ignore_errors=True)
    parts, size, n = [], tar_path.stat().st_size, chunk_mib << 20
    with open(tar_path, "rb") as f:
        for i in range((size + n - 1) // n):
            d = send / f"p{i + 1:02d}"
            d.mkdir(parents=True)
            (d / f"part{i + 1:02d}").write_bytes(f.read(n))
            (d / "SHA256").write_text(f"{digest}  payload.tar {(size + n - 1) // n} parts\n")
            parts.append(d)
    tar_path.unlink()
    return parts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=str(REPO / ".gpu"))
    ap.add_argument("--chunk-mib", type=int, default=62)
    args = ap.parse_args()
    work = Path(args.work)
    (work / "dl").mkdir(parents=True, exist_ok=True)
    wheel = download_vllm(work / "dl")
    deps = resolve_deps(wheel, work)
    download_deps(deps, work / "payload" / "deps")
    for note in strip_static_libs(work / "payload" / "deps"):
        print("trimmed", note)
    clients(work, wheel, HERE / "results")
    parts = pack(work, wheel, args.chunk_mib)
    total = sum(p.stat().st_size for d in parts for p in d.iterdir())
    print(f"{len(deps)} dependencies carried; {len(parts)} parts, {total / 2**20:.1f} MiB in all:")
    for i, d in enumerate(parts, 1):
        print(f"  call {i}: carry [{str(d.relative_to(REPO))!r}]  command: bash bench/gpu/device.sh "
              + ("receive" if i < len(parts) else "receive-last"))


if __name__ == "__main__":
    main()
