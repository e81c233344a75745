"""(being written) hook family: lr_updater."""
