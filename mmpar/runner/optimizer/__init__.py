"""mmpar.runner.optimizer."""
