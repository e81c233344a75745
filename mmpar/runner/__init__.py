"""mmpar.runner."""
