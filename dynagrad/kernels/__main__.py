"""``python -m dynagrad.kernels stats|clear|warmup``."""
from __future__ import annotations

import argparse
import json

from . import cache_dir, cache_stats, clear_cache
from .._warmup import warmup  # an entry point, never imported: it may run ops


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynagrad.kernels",
                                     description="Inspect and manage dynagrad's kernel cache.")
    parser.add_argument("command", choices=["stats", "clear", "warmup"])
    args = parser.parse_args(argv)
    if args.command == "clear":
        clear_cache(disk=True)
        print(f"cleared {cache_dir()}")
    elif args.command == "warmup":
        warmup(verbose=True)
    else:
        files = list(cache_dir().glob("k_*.py")) if cache_dir().is_dir() else []
        print(json.dumps({"cache_dir": str(cache_dir()), "kernels_on_disk": len(files),
                          "process": cache_stats()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
