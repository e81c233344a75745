"""(being written) hook family: sampler_seed."""
