"""The GPU benchmark: dynagrad on CUDA against PyTorch CUDA in one process (``bench/bench_gpu.py``).

``timing`` (clocks, warm-up, interleaved repeats, the row type), ``workloads`` (the four sections:
bandwidth, matmul, training, launch), ``models`` (the MLP and LeNet-5 at any size), ``report``
(tables, targets, JSON).
"""
