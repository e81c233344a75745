"""mmpar.datasets."""
