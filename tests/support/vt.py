"""A terminal's screen, for the tests: what a terminal of `columns` × `lines` shows after the
offline table's output, read the way a VT100-compatible terminal reads it (cursor moves, erasing
a line or the screen, the alternate screen), and what it would have done wrong: a character past
the last column (`overflowed`), lines pushed up off the screen into the scrollback (`scrolled`)."""

from __future__ import annotations

import re
import unicodedata

_CSI = re.compile(r"\x1b\[([?0-9;]*)([@-~])")
_UNFINISHED = re.compile(r"\x1b(\[[?0-9;]*)?\Z")


def _width(char: str) -> int:
    if unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


class Screen:
    def __init__(self, columns: int = 80, lines: int = 24) -> None:
        self.columns, self.lines = columns, lines
        self.grid = self._blank()
        self.row = self.col = 0
        self.alternate = False
        self._main: list[list[str]] | None = None
        self.scrolled = 0
        self.overflowed = False
        self._rest = ""

    def _blank(self) -> list[list[str]]:
        return [[" "] * self.columns for _ in range(self.lines)]

    def feed(self, text: str) -> None:
        text, self._rest = self._rest + text, ""
        unfinished = _UNFINISHED.search(text)
        if unfinished is not None:
            text, self._rest = text[: unfinished.start()], text[unfinished.start() :]
        i = 0
        while i < len(text):
            found = _CSI.match(text, i)
            if found is not None:
                self._csi(found[1], found[2])
                i = found.end()
                continue
            char = text[i]
            i += 1
            if char == "\x1b":
                continue  # an escape of another kind: nothing the table sends
            if char == "\r":
                self.col = 0
            elif char == "\n":
                self._down()
            elif char == "\b":
                self.col = max(0, self.col - 1)
            elif char.isprintable() or _width(char) == 0:
                self._put(char)

    def _csi(self, params: str, final: str) -> None:
        numbers = [int(p) if p.isdigit() else 0 for p in params.lstrip("?").split(";")]
        if final == "H":
            row, col = [*numbers, 0, 0][:2]
            self.row, self.col = max(1, row) - 1, max(1, col) - 1
        elif final == "K":
            start = 0 if numbers[0] == 2 else self.col
            self.grid[self.row][start:] = [" "] * (self.columns - start)
        elif final == "J":
            if numbers[0] == 2:
                self.grid = self._blank()
            else:
                self.grid[self.row][self.col :] = [" "] * (self.columns - self.col)
                for row in range(self.row + 1, self.lines):
                    self.grid[row] = [" "] * self.columns
        elif params == "?1049" and final in "hl":
            entering = final == "h"
            if entering and not self.alternate:
                self._main, self.grid = self.grid, self._blank()
            elif not entering and self.alternate and self._main is not None:
                self.grid, self._main = self._main, None
            self.alternate = entering

    def _put(self, char: str) -> None:
        width = _width(char)
        if width == 0:
            column = max(0, self.col - 1)
            self.grid[self.row][column] += char
            return
        if self.col + width > self.columns:
            self.overflowed = True
            self.col = 0
            self._down()
        self.grid[self.row][self.col] = char
        if width == 2:
            self.grid[self.row][self.col + 1] = ""
        self.col += width

    def _down(self) -> None:
        self.row += 1
        if self.row >= self.lines:
            self.grid = [*self.grid[1:], [" "] * self.columns]
            self.row = self.lines - 1
            self.scrolled += 1

    def text(self) -> str:
        return "\n".join("".join(row).rstrip() for row in self.grid)

    def rows(self) -> list[str]:
        return self.text().split("\n")
