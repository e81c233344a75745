"""mmpar.models.classifiers."""
