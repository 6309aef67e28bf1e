"""``dg.compile``: PyTorch's ``torch.compile`` spelling, for code that calls it.

dynagrad already compiles: each op's kernel is generated and compiled by Numba the first time it
runs with a dtype and layout, and cached on disk (``kernels/cache.py``). There is no graph
compiler above the ops, so ``compile`` returns the model or function unchanged; it runs exactly
as it did, already on compiled kernels. The arguments torch's ``compile`` takes are accepted
(and ``backend``/``mode`` checked for type only) so that code written for PyTorch runs as is.

Example:
    >>> import dynagrad as dg
    >>> f = dg.compile(lambda x: x * 2)
    >>> f(dg.ones(2)).tolist()
    [2.0, 2.0]
"""
from __future__ import annotations

from collections.abc import Callable


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic=None,
            backend=None, mode: str | None = None, options: dict | None = None,
            disable: bool = False, **kwargs):
    """``model`` itself (see the module docstring); with no ``model``, a decorator that returns
    the function it decorates."""
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable, **kwargs)
    if not callable(model):
        # (torch's exception type)
        raise AssertionError(  # noqa: TRY004
            f"A callable function is expected, but {type(model)} is provided.")
    return model
