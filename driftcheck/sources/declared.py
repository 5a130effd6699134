"""`--vllm declared`: the vLLM release the clients' own requirement lets pip install.

A client that declares `vllm==0.11.0` gets 0.11.0; one that declares a range (`vllm>=0.10.0`, `>=0.12,<0.17`) gets the
newest final release of vLLM the range admits, which is what `pip install` of the client would pull. Several clients:
the newest release every declared range admits. When the release list cannot be read (no index), the range's own
top (`<=`) or floor (`>=`) is used, and a line says so: a gate should never pass on a guess it does not name.
"""

from __future__ import annotations

from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from driftcheck.errors import DriftcheckError, FetchError
from driftcheck.report import progress
from driftcheck.sources.package_metadata import declared_vllm_version

SPEC = "declared"


def declared_release(clients, cache_dir: Path) -> str:
    """The release `--vllm declared` names for these clients, with a line on stderr saying which and why."""
    declaring = _declaring(clients, "pass the release to check: --vllm VERSION")
    said = _said(declaring)
    spec = SpecifierSet(",".join(str(r.specifier) for _, r in declaring))
    pinned = [r for _, r in declaring if any(s.operator in ("==", "===") for s in r.specifier)]
    pins = {declared_vllm_version(r) for r in pinned}  # `==0.22.0+cpu` pins 0.22.0: a build label names no sources
    if len(pins) == 1 and all(r.specifier.contains(next(iter(pins)), prereleases=True)
                              for _, r in declaring if r not in pinned):  # a pin needs no release list
        (pin,) = pins
        _say(f"{said}: scanning vLLM {pin}")
        return pin
    from driftcheck.sources.releases import known_releases

    try:
        releases = known_releases(cache_dir)
    except FetchError as exc:
        guesses = [declared_vllm_version(r) for _, r in declaring]
        guess = max((g for g in guesses if g), key=Version, default=None)
        if guess is None or not spec.contains(guess, prereleases=True):
            raise DriftcheckError(f"--vllm declared: {exc.message}, and {said} names no release to fall back on",
                                  "pass the release to check: --vllm VERSION") from None
        _say(f"{said}: the release list could not be read ({exc.message}); scanning vLLM {guess}, the range's bound")
        return guess
    admitted = [v for v in releases if spec.contains(v)]
    if not admitted:
        raise DriftcheckError(f"--vllm declared: no vLLM release admits {spec} ({said})",
                              "pass the release to check: --vllm VERSION")
    _say(f"{said}: scanning vLLM {admitted[-1]}, the newest release it admits")
    return admitted[-1]


def _declaring(clients, hint: str) -> list:
    """(client, its vLLM requirement) for each client that declares one; none is an error."""
    declaring = [(c, c.declared_vllm()) for c in clients]
    declaring = [(c, r) for c, r in declaring if r is not None]
    if not declaring:
        raise DriftcheckError("--vllm declared: no client declares a vLLM requirement", hint)
    return declaring


def _said(declaring: list) -> str:
    return ", ".join(f"{c.name or c.location} requires {r.name}{r.specifier}" for c, r in declaring)


def _has_floor(req) -> bool:
    return any(s.operator in (">=", ">", "==", "===", "~=") for s in req.specifier)


def _say(line: str) -> None:
    progress.warn(f"--vllm declared: {line}")


def declared_releases(clients, cache_dir: Path) -> list[str]:
    """`matrix` / `range --vllm declared`: every final release some client's declared requirement admits (each
    client's own range, so a row holds the releases that client allows and those another client's range adds), oldest
    first; a pin is kept even where the list lacks it."""
    from driftcheck.sources.releases import ALL_RELEASES_FROM, known_releases

    declaring = _declaring(clients, "pass the releases to check: --vllm 0.11.0..0.33.0")
    releases = known_releases(cache_dir)
    chosen = {v for _, r in declaring for v in releases if r.specifier.contains(v)
              and (_has_floor(r) or Version(v) >= ALL_RELEASES_FROM)}  # `<0.17` alone: from 0.8.5, as all-releases
    chosen |= {declared_vllm_version(r) for _, r in declaring if any(s.operator in ("==", "===") for s in r.specifier)}
    if not chosen:
        raise DriftcheckError(f"--vllm declared: no vLLM release admits what the clients declare ({_said(declaring)})",
                              "pass the releases to check: --vllm 0.11.0..0.33.0")
    out = sorted(chosen, key=Version)
    _say(f"{len(out)} release(s), {out[0]} to {out[-1]}")
    return out
