"""Catalogues at a cold start: today's JSON files against gettext's, as the standard library
reads them.

    .venv/bin/python benchmarks/catalogues.py [--pairs 21]

The gettext variant is what the catalogues would be as PO files: the standard library's
`gettext` reads only their compiled form (MO), so a build step would compile them; here every
catalogue of `handlers/i18n` is compiled to MO in a temporary folder, its plural rule as a
`Plural-Forms` header (the C expression gettext evaluates), and checked to give, for every n up
to 1,000, the very template `handlers.text.tn` picks. Then, each in a fresh interpreter that has
already imported what the webhook imports anyway (`telegram`, `boto3`: `json` comes with them,
`gettext` does not; and `engine`), the time from the first line to the catalogues in memory:

    json     import json; json.loads() of every i18n/*.json
    gettext  import gettext; gettext.GNUTranslations() of every compiled .mo
    today    import handlers.text: the JSON read, parsed and checked against English

Run in pairs (json and gettext one after the other, their order flipping), as
benchmarks/cold_start.py does; prints medians and quartiles in milliseconds, of wall-clock time and
of CPU time (the steadier when the machine is busy), and the files' sizes.
"""

from __future__ import annotations

import argparse
import gettext
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from handlers import text  # noqa: E402  (after the path: run as a script from anywhere)

FOLDER = ROOT / "handlers" / "i18n"

# Each plural rule of handlers.text as gettext writes it: the number of forms, the expression
# choosing one, and the CLDR category of each index.
GETTEXT_PLURALS = {
    "en": ("nplurals=2; plural=(n != 1);", ("one", "other")),
    "fr": ("nplurals=2; plural=(n > 1);", ("one", "other")),
    "ar": (
        "nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : "
        "n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5);",
        ("zero", "one", "two", "few", "many", "other"),
    ),
}

PREAMBLE = (
    "import telegram, boto3, engine\nimport time\n"
    "started, cpu = time.perf_counter(), time.process_time()\n"
)
VARIANTS = {
    "json": PREAMBLE
    + "import json, pathlib\n"
    + "c = [json.loads(p.read_text(encoding='utf-8'))"
    + " for p in pathlib.Path({folder!r}).glob('*.json')]\n",
    "gettext": PREAMBLE
    + "import gettext, pathlib\n"
    + "c = [gettext.GNUTranslations(p.open('rb')) for p in pathlib.Path({mo!r}).glob('*.mo')]\n",
    "today": PREAMBLE + "import handlers.text\n",
}
EPILOGUE = "print(time.perf_counter() - started, time.process_time() - cpu)\n"


def mo_file(messages: dict[bytes, bytes]) -> bytes:
    """GNU gettext's binary catalogue: a header, the sorted keys' and values' (length, offset)
    tables, then the NUL-terminated strings (the format `gettext.GNUTranslations` parses)."""
    keys = sorted(messages)
    header, table = 7 * 4, 2 * 8 * len(keys)
    ids = b"".join(k + b"\0" for k in keys)
    start_ids, start_strs = header + table, header + table + len(ids)
    id_table, str_table, at_id, at_str = [], [], start_ids, start_strs
    for key in keys:
        value = messages[key]
        id_table += [len(key), at_id]
        str_table += [len(value), at_str]
        at_id, at_str = at_id + len(key) + 1, at_str + len(value) + 1
    head = struct.pack("<7I", 0x950412DE, 0, len(keys), header, header + 8 * len(keys), 0, 0)
    tables = struct.pack(f"<{len(id_table) * 2}I", *id_table, *str_table)
    return head + tables + ids + b"".join(messages[k] + b"\0" for k in keys)


def compile_catalogue(raw: dict[str, object]) -> bytes:
    """A JSON catalogue as an MO file: a plural key's forms in gettext's order, by n."""
    expression, categories = GETTEXT_PLURALS[str(raw["_plural"])]
    meta = f"Content-Type: text/plain; charset=UTF-8\nPlural-Forms: {expression}\n"
    messages = {b"": meta.encode()}
    for key, value in raw.items():
        if key.startswith("_"):
            continue
        if isinstance(value, dict):
            forms = [str(value.get(c, value["other"])) for c in categories]
            messages[f"{key}\0{key}".encode()] = "\0".join(forms).encode()
        else:
            messages[key.encode()] = str(value).encode()
    return mo_file(messages)


def build(mo_folder: Path) -> int:
    """Every catalogue compiled into `mo_folder`, checked against handlers.text; their size."""
    size = 0
    for path in sorted(FOLDER.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        data = compile_catalogue(raw)
        target = mo_folder / f"{path.stem}.mo"
        target.write_bytes(data)
        size += len(data)
        with target.open("rb") as file:
            catalogue = gettext.GNUTranslations(file)
        used = text.catalogues()[path.stem]  # what the bot uses
        entries = used.entries
        for key, entry in entries.items():
            if isinstance(entry, str):
                assert catalogue.gettext(key) == entry, (path.stem, key)
                continue
            for n in range(1001):
                category = used.plural(n)
                wanted = entry.get(category, entry["other"])
                assert catalogue.ngettext(key, key, n) == wanted, (path.stem, key, n)
    return size


def run(code: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": ""}
    env = {k: v for k, v in env.items() if v}
    out = subprocess.run(
        [sys.executable, "-c", code + EPILOGUE],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    wall, cpu = out.stdout.split()
    return float(wall) * 1000, float(cpu) * 1000


def summary(name: str, times: list[tuple[float, float]]) -> str:
    said = []
    for clock, measured in (("wall", [w for w, _ in times]), ("CPU", [c for _, c in times])):
        q1, median, q3 = statistics.quantiles(measured, n=4)
        said.append(f"{clock} {median:5.2f} ms ({q1:.2f}–{q3:.2f})")
    return f"{name:8} median " + ", ".join(said) + f", {len(times)} runs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        mo = Path(temporary)
        mo_size = build(mo)
        json_size = sum(p.stat().st_size for p in FOLDER.glob("*.json"))
        codes = {k: v.format(folder=str(FOLDER), mo=str(mo)) for k, v in VARIANTS.items()}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in codes}
        for _ in range(2):  # warm the file cache and the bytecode
            for code in codes.values():
                run(code)
        for pair in range(args.pairs):
            order = ["json", "gettext"] if pair % 2 == 0 else ["gettext", "json"]
            for name in order:
                times[name].append(run(codes[name]))
            times["today"].append(run(codes["today"]))
    languages = ", ".join(text.SUPPORTED)
    print(f"catalogues: {len(text.SUPPORTED)} ({languages}); gettext's give the same texts")
    print(f"on disk: JSON {json_size} B; MO {mo_size} B (and PO sources to compile them from)")
    for name, measured in times.items():
        print(summary(name, measured))
    for clock, which in (("wall", 0), ("CPU", 1)):
        gettext_ = statistics.median(t[which] for t in times["gettext"])
        json_ = statistics.median(t[which] for t in times["json"])
        print(f"gettext - json: {gettext_ - json_:+.2f} ms of {clock} time a cold start")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
