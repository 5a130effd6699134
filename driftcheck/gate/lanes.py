"""Which release a matrix worker scans next: a neighbour of the one it scanned last.

Releases side by side ship mostly the same files, and a matrix worker keeps what it read in a file by the file's
content (`vllm_model/file_memo.py`). Handed every other release, two workers each read nearly every content the range
holds (0.11.0..0.33.0: 29,236 contents read against 20,068 when each takes one contiguous half). So the releases,
sorted, are cut into segments, one per pair of workers; in a segment one worker walks up from the bottom and the
other down from the top, and both stay on neighbours until they meet. A worker whose segment is empty takes from the
segment with the most left, so no core idles while releases wait.

`claim` is the whole policy, on a plain sequence of segment ends; `Lanes` holds those ends in shared memory.
"""

from __future__ import annotations

from typing import MutableSequence


def segment_ends(n_items: int, workers: int) -> list[int]:
    """[lo0, hi0, lo1, hi1, ...]: `n_items` cut into contiguous segments, one per pair of workers (lo is the next item
    from the bottom, hi one past the next from the top)."""
    segments = max(1, min((workers + 1) // 2, n_items))
    ends: list[int] = []
    for s in range(segments):
        ends += [n_items * s // segments, n_items * (s + 1) // segments]
    return ends


def claim(ends: MutableSequence[int], worker: int) -> int | None:
    """The index `worker` scans next (None: nothing left), taken from `ends`, which it updates."""
    segments = len(ends) // 2
    seg = (worker // 2) % segments
    if ends[2 * seg] >= ends[2 * seg + 1]:  # own segment done: help where most is left
        seg = max(range(segments), key=lambda s: ends[2 * s + 1] - ends[2 * s])
        if ends[2 * seg] >= ends[2 * seg + 1]:
            return None
    if worker % 2 == 0:
        ends[2 * seg] += 1
        return ends[2 * seg] - 1
    ends[2 * seg + 1] -= 1
    return ends[2 * seg + 1]


class Lanes:
    """The segment ends and a worker counter in shared memory, made before the pool's processes start."""

    def __init__(self, n_items: int, workers: int, ctx):
        self._lock = ctx.Lock()
        self._ends = ctx.Array("i", segment_ends(n_items, workers), lock=False)
        self._joined = ctx.Value("i", 0, lock=False)

    def join(self) -> int:
        """A new worker's number (its place in the segments)."""
        with self._lock:
            number = self._joined.value
            self._joined.value += 1
            return number

    def claim(self, worker: int) -> int | None:
        with self._lock:
            return claim(self._ends, worker)
