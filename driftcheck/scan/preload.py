"""The whole-release text a first scan will search, inflated while the client is prepared.

On a release this cache has not answered questions about yet, the rules' whole-tree text queries
(`TextIndex.files_mentioning`) read every file of the target, and of the client's own vLLM when a rule
compares with it. Read after the fork, each process of the scan inflated both trees again (0.3-0.4 s
each on vLLM 0.32.0 and its 0.11.0 baseline). Here a forked reader inflates them on another core while
`prepare_client` runs (a thread could not: `ast.parse` holds the GIL for whole files, and the reader
starved), writing into memory shared with this process; the scan collects the text before it forks its
workers, so every worker inherits it instead of reading it. (Sources zips are stored, not deflated, since the
fifteenth session: reading 0.32.0's and 0.11.0's text takes 0.07 s, inside `prepare_client`'s time, where inflating
them took longer than it and the scan waited 0.13 s for the reader; wheels and older caches are still deflated.)

Only archives are read ahead (a folder's files cost no inflating), and only for a tree whose answers are
not stored yet (a warm scan asks the store, not the text). Where `fork` is missing, nothing is read
ahead: the rules read the text when they first ask, as before.
"""

from __future__ import annotations

import mmap
import os
import signal
import struct

from driftcheck.sources.sources import ZipTree
from driftcheck.storage.signals import fork_helper

_SLOT = struct.Struct("<qq")  # a file's (offset, length) in the shared region; length -1: not readable


class Preload:
    """A forked read of the text of some text indexes into a shared region; `join()` collects it (before forking
    workers) and hands each index its files."""

    def __init__(self, indexes: list):
        self.jobs = [(index, list(index.tree.iter_files(index.package))) for index in indexes
                     if index.cold() and isinstance(index.tree, ZipTree)]
        self._pid: int | None = None
        self._region: mmap.mmap | None = None
        if not self.jobs or not hasattr(os, "fork"):
            return
        count = sum(len(rels) for _, rels in self.jobs)
        size = sum(index.tree.member_size(rel) for index, rels in self.jobs for rel in rels)
        self._region = mmap.mmap(-1, _SLOT.size * count + size + 1)  # anonymous and shared: the child writes here
        self._pid = fork_helper(lambda: self._fill(_SLOT.size * count))  # the reader

    def _fill(self, start: int) -> None:
        region, at, slot = self._region, start, 0
        for index, rels in self.jobs:
            text = index.tree.read_many(rels)
            for rel in rels:
                data = text.get(rel)
                if data is None or at + len(data) > len(region):
                    _SLOT.pack_into(region, slot * _SLOT.size, 0, -1)
                else:
                    region[at:at + len(data)] = data
                    _SLOT.pack_into(region, slot * _SLOT.size, at, len(data))
                    at += len(data)
                slot += 1

    def join(self, quiet: bool = False) -> None:
        """Collect what the reader wrote. `quiet`: the scan is failing for another reason, so the reader is stopped
        and nothing is collected."""
        if self._pid is None:
            return
        pid, self._pid = self._pid, None
        region, self._region = self._region, None
        try:
            if quiet:
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            if quiet or os.waitstatus_to_exitcode(status) != 0:
                return  # the rules read the text themselves when they ask, as without a reader
            slot = 0
            for index, rels in self.jobs:
                text: dict[str, bytes] = {}
                for rel in rels:
                    at, length = _SLOT.unpack_from(region, slot * _SLOT.size)
                    if length >= 0:
                        text[rel] = region[at:at + length]
                    slot += 1
                index.adopt_blobs(text)
        finally:
            region.close()


def preload_text(api, probes, loader) -> Preload:
    """Start reading the target's text, and that of the client's own vLLM when a selected rule compares with it
    (`Rule.baseline`). The baseline is loaded here, in this process, so a fetch it needs reports its progress and
    its errors as it would from the rule; it is loaded whatever the rules, since the client model reads it too (an
    override the target orphans never runs: orphaned_overrides), and a `--select` must not change a finding."""
    from driftcheck.vllm_model.bodies import text_index_for

    indexes = [text_index_for(api)]
    if loader is not None:
        baseline = loader()
        if baseline is not None and not isinstance(baseline, str) and any(p.RULE.baseline for p in probes):
            indexes.append(text_index_for(baseline))  # a string: why it could not be loaded
    return Preload(indexes)
