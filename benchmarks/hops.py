"""How far a reader follows one Liar! press and one timer tick through the code: the hops.

    .venv/bin/python benchmarks/hops.py [--list]

A hop is a call from a function of one module of `handlers/` or `engine/` into a function of
another (the tests' wrappers around the store are looked through), counted once however often
it is made: what a reader meets following the update through the imports and the calls. The
press and the tick run through the webhook and timer functions on moto and the fake Bot API
(`running_bot`), under `sys.setprofile`; the hops are split at the conditional write's commit
(the first return of the DynamoDB store's write). Prints, for each, the hops up to the commit
and after it, and how many modules they cross; `--list` names the hops after the commit.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

# Run as a script, this folder comes first on sys.path: put the project's root there instead.
ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

from engine import rank_of  # noqa: E402
from handlers.callbacks import Kind  # noqa: E402
from infra.harness import by_id, people  # noqa: E402
from infra.harness.bot import open_and_start, running_bot  # noqa: E402

COROUTINE = 0x80  # CO_COROUTINE: a coroutine's frame is entered again at each resumption
WRITES = ("save", "apply")  # the store's conditional write, by the name it had then and now


def module(code: CodeType) -> str | None:
    """The project module (`handlers.x`, `engine.y`) a function belongs to, if any."""
    path = Path(code.co_filename)
    if not path.is_relative_to(ROOT) or path.parts[len(ROOT.parts)] not in ("handlers", "engine"):
        return None
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def hops(action: Callable[[], Any]) -> dict[tuple[str, str], bool]:
    """Each hop `action` makes, once, and whether it is first made after the commit."""
    seen: dict[tuple[str, str], bool] = {}
    entered: set[FrameType] = set()
    committed = [False]

    def profile(frame: FrameType, event: str, arg: object) -> None:
        callee = module(frame.f_code)
        if event == "return" and callee == "handlers.dynamo" and frame.f_code.co_name in WRITES:
            committed[0] = True
        if event != "call" or callee is None or frame.f_code.co_name.startswith("__"):
            return
        if frame.f_code.co_flags & COROUTINE:
            if frame in entered:
                return  # resumed, not called
            entered.add(frame)
        back = frame.f_back
        while (
            back is not None
            and module(back.f_code) is None
            and "harness" in str(back.f_code.co_filename)
        ):
            back = back.f_back  # the tests' wrappers are looked through
        caller = None if back is None else module(back.f_code)
        if caller is None or caller == callee:
            return
        hop = (f"{caller}.{back.f_code.co_name}", f"{callee}.{frame.f_code.co_name}")  # type: ignore[union-attr]
        seen.setdefault(hop, committed[0])

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return seen


def report(name: str, found: dict[tuple[str, str], bool], listing: bool) -> None:
    after = sorted(hop for hop, late in found.items() if late)
    modules = {f.rsplit(".", 1)[0] for hop in found for f in hop}
    handlers = sum(m.startswith("handlers") for m in modules)
    print(
        f"{name}: {len(found)} hops across {handlers} handler modules and "
        f"{len(modules) - handlers} engine modules: {len(found) - len(after)} up to the "
        f"commit, {len(after)} after it"
    )
    if listing:
        for caller, callee in after:
            print(f"    {caller} -> {callee}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="name the hops after the commit")
    listing = parser.parse_args().list
    players = people(3)
    with running_bot(seed=11) as table:
        open_and_start(table, players)
        game = table.game()
        liar = by_id(players, game.awaited)
        table.play(liar, {next(c for c in sorted(table.hand(liar)) if rank_of(c) != game.rank)})
        accuser = by_id(players, table.game().awaited)
        shout = table.group_message_with(Kind.SHOUT)
        report(
            "a Liar! press", hops(lambda: table.press_button(accuser, shout, Kind.SHOUT)), listing
        )
        table.clock.advance(91)  # the awaited person's turn clock runs out
        report("a timer tick (the table plays)", hops(table.sweep), listing)


if __name__ == "__main__":
    main()
