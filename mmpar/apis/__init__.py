"""mmpar.apis."""
