"""mmpar.models.backbones."""
