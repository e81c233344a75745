"""mmpar.datasets.samplers."""
