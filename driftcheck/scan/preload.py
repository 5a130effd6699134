"""The whole-release text a first scan will search, inflated while the client is prepared.

On a release this cache has not answered questions about yet, the rules' whole-tree text queries
(`TextIndex.files_mentioning`) read every file of the target, and of the client's own vLLM when a rule
compares with it. Read after the fork, each process of the scan inflated both trees again (0.3-0.4 s
each on vLLM 0.32.0 and its 0.11.0 baseline). Here a forked reader inflates them on another core while
`prepare_client` runs (a thread could not: `ast.parse` holds the GIL for whole files, and the reader
starved), writing into memory shared with this process; the scan collects the text before it forks its
workers, so every worker inherits it instead of reading it.

Only archives are read ahead (a folder's files cost no inflating), and only for a tree whose answers are
not stored yet (a warm scan asks the store, not the text). Where `fork` is missing, nothing is read
ahead: the rules read the text when they first ask, as before.

Once the text is read, the reader's core is idle until the client is prepared (the text of 0.32.0 and its
baseline: 0.07 s of a 0.25 s serial start). There it answers the release questions the selected rules declare
(`RELEASE_QUESTIONS`: functions of the target's api that answer through `TextIndex.remember`, plain data, such as
DC110's index of "not ... yet" raises, 0.07 s on 0.16.0, 0.18 s on 0.32.0, which one of the scan's two processes
otherwise computes while the other waits) and sends them through a pipe. The scan takes what is ready when it
forks its workers (`finish`), waiting at most ANSWER_GRACE for the rest; what is not ready is computed by the rule
that asks, as before. The answers are the ones the rule would compute (the same function, on the same text).
"""

from __future__ import annotations

import json
import mmap
import os
import select
import signal
import struct

from driftcheck.sources.sources import ZipTree
from driftcheck.storage.signals import fork_helper

_SLOT = struct.Struct("<qq")  # a file's (offset, length) in the shared region; length -1: not readable
_TEXT_READ = b"T"  # the first byte the reader sends: the text is in the region
ANSWER_GRACE = 0.05  # seconds the scan waits for answers not ready when it forks (a question costs 0.07-0.2 s)


class Preload:
    """A forked read of the text of some text indexes into a shared region; `join()` collects it (before forking
    workers) and hands each index its files."""

    def __init__(self, indexes: list, questions: list | None = None, api=None):
        self.jobs = [(index, list(index.tree.iter_files(index.package))) for index in indexes
                     if index.cold() and isinstance(index.tree, ZipTree)]
        self._pid: int | None = None
        self._region: mmap.mmap | None = None
        self._pipe: int | None = None
        if not self.jobs or not hasattr(os, "fork"):
            return
        # the release questions, asked of the target (`indexes[0]`) only, and only when its text is read here
        self._questions = list(questions or ()) if self.jobs[0][0] is indexes[0] else []
        self._api = api
        count = sum(len(rels) for _, rels in self.jobs)
        size = sum(index.tree.member_size(rel) for index, rels in self.jobs for rel in rels)
        self._region = mmap.mmap(-1, _SLOT.size * count + size + 1)  # anonymous and shared: the child writes here
        read_end, write_end = os.pipe()
        self._pid = fork_helper(lambda: self._read_and_answer(_SLOT.size * count, read_end, write_end))  # the reader
        os.close(write_end)
        self._pipe = read_end

    def _read_and_answer(self, start: int, read_end: int, write_end: int) -> None:
        os.close(read_end)
        try:
            self._fill(start)
            os.write(write_end, _TEXT_READ)
            if self._questions:
                _write_all(write_end, self._answers())
        finally:
            os.close(write_end)

    def _answers(self) -> bytes:
        """The release questions' new answers, as JSON; b"" when one fails (the rules then ask it themselves)."""
        from driftcheck.vllm_model.text_index import encode_plain

        index = self.jobs[0][0]
        before = set(index.extra)
        try:
            for question in self._questions:
                question(self._api)
            return json.dumps({k: encode_plain(v) for k, v in index.extra.items() if k not in before}).encode()
        except Exception:  # a question's bug must not cost the text: the rule asking it reports the error
            return b""

    def _fill(self, start: int) -> None:
        region, at, slot = self._region, start, 0
        for index, rels in self.jobs:
            text = index.tree.read_many(rels)
            if self._questions and index is self.jobs[0][0]:
                index.adopt_blobs(text)  # this process's copy of the index: the questions read the text from it
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
        """Collect the text the reader wrote (it may still be answering questions: `finish` reaps it). `quiet`: the
        scan is failing for another reason, so the reader is stopped and nothing is collected."""
        if self._region is None:
            if quiet:
                self.finish(quiet=True)
            return
        region, self._region = self._region, None
        try:
            if quiet or os.read(self._pipe, 1) != _TEXT_READ:  # EOF: the reader failed before the text was whole
                self.finish(quiet=True)
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

    def finish(self, quiet: bool = False) -> None:
        """Take the release questions' answers if they come within ANSWER_GRACE, then stop and reap the reader (before
        the scan forks: its workers inherit the answers). `quiet`: stop it, take nothing."""
        if self._pid is None:
            return
        pid, self._pid = self._pid, None
        pipe, self._pipe = self._pipe, None
        try:
            data = b""
            if not quiet and self._questions and select.select([pipe], [], [], ANSWER_GRACE)[0]:
                data = _read_all(pipe)  # the reader is writing them, or has (a closed pipe reads as b"")
            if not data:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            if data:
                self._adopt_answers(data)
        finally:
            os.close(pipe)

    def _adopt_answers(self, data: bytes) -> None:
        from driftcheck.vllm_model.text_index import decode_plain

        index = self.jobs[0][0]
        try:
            answers = json.loads(data)
        except ValueError:
            return  # cut short: the rules ask for themselves
        for key, value in answers.items():
            if key not in index.extra:
                index.extra[key] = decode_plain(value)
                index.dirty = True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


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
    return Preload(indexes, [q for p in probes for q in getattr(p, "RELEASE_QUESTIONS", ())], api)
