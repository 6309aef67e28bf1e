"""Workload builders, grouped by kind; ``bench.registry`` lists them.

Kept free of imports for the same reason as ``bench/__init__.py``.
"""
