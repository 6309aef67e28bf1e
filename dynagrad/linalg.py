"""``dg.linalg``: PyTorch's ``torch.linalg`` namespace.

Decompositions and solvers run LAPACK (NumPy/SciPy) on the host buffer in float64 and round to
the input's dtype; CUDA tensors take a host round trip (copied to the host, computed, copied
back). Every function takes leading batch dims, returns PyTorch's named tuples (``.L``, ``.Q``,
``.R``, ``.U``, ``.S``, ``.Vh``, ``.info``, ...), raises ``LinAlgError`` (a RuntimeError) for
singular or indefinite input where PyTorch does, and is differentiable where PyTorch is. The
implementations live in ``ops/decompositions.py`` (and the products in ``ops/linalg.py``).

``eig`` and ``eigvals`` return complex tensors in PyTorch; dynagrad has no complex dtype yet, so
they are not offered.

Example:
    >>> import dynagrad as dg
    >>> a = dg.tensor([[4.0, 2.0], [2.0, 3.0]])
    >>> dg.linalg.cholesky(a).tolist()
    [[2.0, 0.0], [1.0, 1.4142135381698608]]
"""
from .ops.decompositions import (  # noqa: F401
                                 LinAlgError,
                                 cholesky,
                                 cholesky_ex,
                                 cond,
                                 cross,
                                 det,
                                 diagonal,
                                 eig,
                                 eigh,
                                 eigvals,
                                 eigvalsh,
                                 householder_product,
                                 inv,
                                 inv_ex,
                                 ldl_factor,
                                 ldl_factor_ex,
                                 ldl_solve,
                                 lstsq,
                                 lu,
                                 lu_factor,
                                 lu_factor_ex,
                                 lu_solve,
                                 matrix_exp,
                                 matrix_norm,
                                 matrix_power,
                                 matrix_rank,
                                 multi_dot,
                                 norm,
                                 pinv,
                                 qr,
                                 slogdet,
                                 solve,
                                 solve_ex,
                                 solve_triangular,
                                 svd,
                                 svdvals,
                                 tensorinv,
                                 tensorsolve,
                                 vander,
                                 vecdot,
                                 vector_norm,
)
from .ops.linalg import matmul  # noqa: F401

# PyTorch's shared notes for the docstrings of its linalg functions (a plain dict there too)
common_notes = {
    "experimental_warning": "This function is \"experimental\" and it may change in a future "
                            "PyTorch release.",
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device with "
                 "the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only when "
                    "check_errors=True.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that device "
                        "with the CPU. For a version of this function that does not synchronize, "
                        "see {}.",
}
