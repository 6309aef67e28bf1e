"""gemm."""
