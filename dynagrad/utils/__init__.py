"""dynagrad.utils: data loading (``dynagrad.utils.data``)."""
from . import data  # noqa: F401
