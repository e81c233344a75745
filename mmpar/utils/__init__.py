"""mmpar.utils."""
