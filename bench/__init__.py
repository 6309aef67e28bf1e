"""dynagrad's JIT-warm benchmark suite against NumPy and PyTorch (``python -m bench --help``).

Kept free of imports so that child processes can import ``bench.workloads.numpy_mlp`` without
pulling in dynagrad or PyTorch.
"""
