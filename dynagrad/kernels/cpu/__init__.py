"""The CPU target: ``backend`` implements ``kernels.backend``'s contract on NumPy arrays with
kernels generated from ``templates`` and compiled by ``numba.njit``; ``scalarlib`` holds the
scalar helpers they call, ``gemm/`` the matrix products, ``nn/`` the layers' own kernels."""
