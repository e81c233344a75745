"""mmpar.models."""
