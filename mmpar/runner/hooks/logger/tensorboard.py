"""(being written) logger: tensorboard."""
