"""The exceptions a config file or a ``--cfg-options`` item can raise."""


class ConfigError(ValueError):
    """A config file or option is invalid; the message names the file and/or key."""


class ConfigSyntaxError(SyntaxError, ConfigError):
    """A config file is not valid Python/JSON/YAML; ``filename`` and ``lineno`` are set."""


class ConfigOptionError(ConfigError):
    """A ``--cfg-options`` / ``merge_from_dict`` key is malformed or its path does not exist."""
