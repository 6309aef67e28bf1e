"""cuda."""
