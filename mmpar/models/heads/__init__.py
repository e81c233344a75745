"""mmpar.models.heads."""
