"""Reading Vowpal Wabbit text in Python: how long ``read_vw(namespaces="auto")`` takes, what its
whole-file namespace scan costs against the read it serves (plain and gzip), and whether a fit
on the file's path (parsed, hashed and learned in Rust) beats reading a frame and fitting that.

* eat-rate (fwumious_wabbit's sampling, 12 namespaces) written as VW text, ``--eat-rate`` rows:
  ``read_vw(path, namespaces="auto")``; then its first ``--scan-rows`` lines, plain and gzip:
  the scan (``polars_poly._internal.vw_namespaces``) against ``read_vw`` given its namespaces;
* UCI Adult as VW text (``vw_text_speed``'s file, 14 namespaces, weights, tags), ``--adult``
  rows: ``SGDClassifier.fit(path)`` against ``read_vw`` + ``fit(frame)``, in file order, the same
  progressive loss checked.

Each timing alternates with its counterpart, ``--rounds`` times; medians are printed with the
load. Needs the shared data for Adult (skipped visibly without it).

    .venv/bin/python -m benches.suite.vw_reading --eat-rate 10000000 --rounds 3
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import tempfile
from functools import partial
from pathlib import Path

import polars_poly as pp
from polars_poly import _internal

from benches.common import DATA, alternated_medians, load, timed
from benches.suite.vw_text_speed import write_adult_vw, write_eat_rate_vw


def head(source: Path, target: Path, lines: int) -> None:
    with source.open("rb") as read, target.open("wb") as write:
        for _, line in zip(range(lines), read, strict=False):
            write.write(line)


def eat_rate_rows(folder: Path, rows: int, scan_rows: int, rounds: int) -> None:
    path = folder / "eat_rate.vw"
    write_eat_rate_vw(path, rows)
    size = path.stat().st_size / 1e9
    frame, seconds = timed(lambda: pp.read_vw(path, namespaces="auto"))
    print(
        f"eat-rate, {rows:,} lines ({size:.2f} GB), {frame.width} columns: "
        f"read_vw(namespaces='auto') {seconds:.2f} s ({load()})"
    )
    del frame
    plain = folder / "head.vw"
    head(path, plain, scan_rows)
    packed = folder / "head.vw.gz"
    with plain.open("rb") as read, gzip.open(packed, "wb") as write:
        shutil.copyfileobj(read, write)
    for name, file in (("plain", plain), ("gzip", packed)):
        namespaces = _internal.vw_namespaces(str(file), {})
        scanning = partial(_internal.vw_namespaces, str(file), {})
        reading = partial(pp.read_vw, file, namespaces=namespaces)
        times = alternated_medians({"scan": scanning, "read": reading}, rounds)
        print(
            f"the first {scan_rows:,} lines, {name} ({file.stat().st_size / 1e6:.0f} MB): "
            f"scan {times['scan']:.3f} s against read {times['read']:.2f} s ({load()})"
        )


def adult_rows(folder: Path, rows: int, rounds: int) -> None:
    if not (DATA / "adult" / "adult.tsv.gz").exists():
        print(f"SKIPPED: Adult needs the shared data ({DATA}; set $POLARS_POLY_DATA)")
        return
    path = folder / "adult.vw"
    write_adult_vw(path, rows)

    def model() -> pp.SGDClassifier:
        return pp.SGDClassifier(loss="logistic", shuffle=False, progress=False)

    losses: dict[str, float] = {}

    def from_path() -> None:
        losses["path"] = model().fit(path).progressive_loss_

    def from_frame() -> None:
        frame = pp.read_vw(path, namespaces="auto").drop("tag")
        fitted = model().fit(frame, "label", sample_weight="weight")
        losses["frame"] = fitted.progressive_loss_

    from_path()  # the first fit of a process also pays one-off costs
    times = alternated_medians({"path": from_path, "frame": from_frame}, rounds)
    print(
        f"Adult as VW text, {rows:,} rows: fit(path) {times['path']:.2f} s against "
        f"read_vw + fit(frame) {times['frame']:.2f} s, {times['path'] / times['frame']:.2f}x; "
        f"progressive loss {losses['path']:.5f} / {losses['frame']:.5f} ({load()})"
    )
    if losses["path"] != losses["frame"]:
        raise SystemExit("the two fits learned different models")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eat-rate", type=int, default=10_000_000, help="lines of eat-rate")
    parser.add_argument("--scan-rows", type=int, default=1_000_000, help="lines scanned")
    parser.add_argument("--adult", type=int, default=325_000, help="rows of Adult")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        eat_rate_rows(Path(folder), args.eat_rate, args.scan_rows, args.rounds)
        adult_rows(Path(folder), args.adult, args.rounds)


if __name__ == "__main__":
    main()
