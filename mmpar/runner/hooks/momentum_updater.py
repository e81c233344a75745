"""(being written) hook family: momentum_updater."""
