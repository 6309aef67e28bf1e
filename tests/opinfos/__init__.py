"""The OpInfo records, one module per op family; use them through ``tests/opinfo.py``."""
