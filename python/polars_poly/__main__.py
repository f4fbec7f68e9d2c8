"""Command line: ``python -m polars_poly demo``."""

from __future__ import annotations

import argparse

from polars_poly.demo import run_demo


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m polars_poly", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run the demo on the bundled data set")
    args = parser.parse_args(argv)
    if args.command == "demo":
        run_demo()


if __name__ == "__main__":
    main()
