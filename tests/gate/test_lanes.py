"""Matrix scheduling: every release is scanned exactly once, and a worker's next release is a neighbour of its last."""

from __future__ import annotations

import multiprocessing
import random
from concurrent.futures import ProcessPoolExecutor

import pytest

from driftcheck.gate.lanes import Lanes, claim, segment_ends


def _drain(n: int, workers: int, rng: random.Random) -> dict[int, list[int]]:
    """Workers claim in a random interleaving (any worker may be the faster one) until nothing is left."""
    ends = segment_ends(n, workers)
    taken: dict[int, list[int]] = {w: [] for w in range(workers)}
    live = list(range(workers))
    while live:
        w = rng.choice(live)
        index = claim(ends, w)
        if index is None:
            live.remove(w)
        else:
            taken[w].append(index)
    return taken


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 5, 8])
def test_every_release_is_claimed_once(workers):
    rng = random.Random(workers)
    for n in range(0, 41):
        for _ in range(20):
            taken = _drain(n, workers, rng)
            claimed = sorted(i for seq in taken.values() for i in seq)
            assert claimed == list(range(n)), (n, workers, taken)


def test_two_workers_walk_neighbours_from_both_ends():
    """Two workers: one walks up from the oldest release, the other down from the newest, whoever is faster, so
    each next release differs from the last one by one step, and they meet without a jump."""
    rng = random.Random(0)
    for n in range(2, 41):
        for _ in range(20):
            taken = _drain(n, 2, rng)
            up, down = taken[0], taken[1]
            assert up == list(range(len(up))), (n, taken)
            assert down == list(range(n - 1, n - 1 - len(down), -1)), (n, taken)


def test_four_workers_stay_in_their_segment_until_it_is_empty():
    ends = segment_ends(34, 4)
    assert ends == [0, 17, 17, 34]
    firsts = [claim(ends, w) for w in range(4)]
    assert firsts == [0, 16, 17, 33]
    # worker 2's segment emptied while worker 0's has most left: worker 2 helps there
    ends = [5, 12, 20, 20]
    assert claim(ends, 2) == 5 and ends == [6, 12, 20, 20]


def _claim_in_worker(_):
    import os
    return os.getpid(), _LANES["lanes"].claim(_LANES["number"])


_LANES: dict = {}


def _join(lanes):
    _LANES["lanes"], _LANES["number"] = lanes, lanes.join()


def test_shared_lanes_across_processes():
    ctx = multiprocessing.get_context("fork")
    lanes = Lanes(23, 2, ctx)
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx, initializer=_join, initargs=(lanes,)) as pool:
        got = list(pool.map(_claim_in_worker, range(23)))
    indices = sorted(i for _, i in got)
    assert indices == list(range(23))
    by_worker: dict[int, list[int]] = {}
    for pid, i in got:
        by_worker.setdefault(pid, []).append(i)
    for seq in by_worker.values():  # each process's releases are one run of neighbours, up or down
        assert sorted(seq) == list(range(min(seq), max(seq) + 1))
