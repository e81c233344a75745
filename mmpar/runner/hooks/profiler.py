"""(being written) hook family: profiler."""
