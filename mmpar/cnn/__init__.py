"""mmpar.cnn: mmcv 1.x's ``mmcv.cnn`` (layer bricks, their registries and builders)."""
