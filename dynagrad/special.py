"""``dg.special``: PyTorch's ``torch.special`` namespace.

Every name is an op defined elsewhere: the special functions of ``ops/special.py`` (the gamma
family, error functions, Bessel functions, orthogonal polynomials), and the ops that
``torch.special`` only renames, which here are the very same function objects as their
``dg.<name>`` (``expit`` is ``dg.sigmoid``, ``psi`` is ``dg.digamma``, ``gammaln`` is
``dg.lgamma``, ``multigammaln`` is ``dg.mvlgamma``, ``gammainc``/``gammaincc`` are
``dg.igamma``/``dg.igammac``; ``erf``, ``expm1``, ``exp2``, ``log1p``, ``round``,
``softmax``, ``log_softmax`` and ``logsumexp`` keep their names).

Example:
    >>> import dynagrad as dg
    >>> dg.special.expit is dg.sigmoid
    True
    >>> dg.special.ndtr(dg.tensor([0.0, 2.0]))
    tensor([0.5000, 0.9772])
"""
from .ops.registry import FUNCTIONS as _DG
from .ops.special import FUNCTIONS as _SPECIAL

# torch.special's name -> the op (by its dg name) it is
_RENAMED = {"expit": "sigmoid", "psi": "digamma", "gammaln": "lgamma",
            "multigammaln": "mvlgamma", "gammainc": "igamma", "gammaincc": "igammac"}
_SAME_NAME = ("erf", "expm1", "exp2", "log1p", "round", "softmax", "log_softmax", "logsumexp")
# the special ops torch.special spells otherwise (above) or leaves to torch (igamma's pair)
_NOT_HERE = ("lgamma", "mvlgamma", "igamma", "igammac")

globals().update({name: fn for name, fn in _SPECIAL.items() if name not in _NOT_HERE})
globals().update({name: _DG[op] for name, op in _RENAMED.items()})
globals().update({name: _DG[name] for name in _SAME_NAME})
