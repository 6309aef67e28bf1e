"""dynagrad.optim: planned (see the project's issues); nothing is exported yet."""
