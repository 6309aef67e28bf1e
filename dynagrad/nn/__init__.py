"""dynagrad.nn: planned (see the project's issues); nothing is exported yet."""
