"""mmpar.parallel."""
