"""Layer classes, one file per family (re-exported by ``dynagrad.nn``)."""
