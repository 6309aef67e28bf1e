"""``python -m bench``: run the benchmark suite (see bench/README.md)."""
from bench.run import main

raise SystemExit(main())
