"""A file's lines as `str.splitlines()` gives them, read from its text on demand.

Every parsed client file keeps its lines for the code a finding quotes and the inline ignores. As a list of
strings they were 83 MiB of vLLM 0.32.0's tree as a client (870k lines, a string object each, beside the
text they repeat); here a line is sliced from the text when asked for, and only the offsets are kept (4 bytes a
line).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import accumulate

# the characters `str.splitlines()` ends a line at ("\r\n" is one end)
_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class TextLines(Sequence):
    """`text.splitlines()`, line for line, without a string per line."""

    __slots__ = ("_text", "_starts")

    def __init__(self, text: str):
        self._text = text
        # where each line starts, and the text's end: splitlines(keepends=True)'s pieces laid end to end
        self._starts = array("I" if len(text) < 2**32 else "Q", [0])
        self._starts.extend(accumulate(map(len, text.splitlines(True))))

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self._starts) - 1
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("line index out of range")
        piece = self._text[self._starts[index]:self._starts[index + 1]]
        if piece.endswith("\r\n"):
            return piece[:-2]
        return piece[:-1] if piece and piece[-1] in _LINE_ENDS else piece

    def code(self, number: int) -> str:
        """Line `number` (counted from 1) stripped, "" past either end: what a finding quotes, in one call (every
        line end `splitlines` knows is whitespace to `strip`, so the piece with its end strips to the line's)."""
        starts = self._starts
        if not 0 < number < len(starts):
            return ""
        return self._text[starts[number - 1]:starts[number]].strip()

    def __eq__(self, other) -> bool:
        # the lines, as a list compares them ("a\r\n" and "a\n" hold the same line)
        return isinstance(other, (TextLines, list)) and len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to a list, which has none

    def __repr__(self) -> str:
        return f"TextLines({len(self)} lines)"
