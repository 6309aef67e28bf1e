"""dynagrad.utils: data loading (``dynagrad.utils.data``) and activation checkpointing
(``dynagrad.utils.checkpoint``)."""
from . import checkpoint, data  # noqa: F401
