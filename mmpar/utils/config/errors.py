"""The exceptions a config file or a ``--cfg-options`` item can raise.

Every one is a :class:`ConfigError` (and, as before, a ``ValueError``), and also an instance of
the built-in exception mmcv 1.x raises for the same mistake, so ``except KeyError:`` /
``except TypeError:`` / ``except OSError:`` in ported code keeps working:

- :class:`ConfigKeyError` (``KeyError``): duplicate key among ``_base_`` files, unknown
  ``{{ _base_.x }}``, list index out of range.
- :class:`ConfigTypeError` (``TypeError``): a dict merged onto a non-dict without ``_delete_``,
  a value of the wrong type (``_base_``, ``custom_imports``, ``_deprecation_``, a non-dict
  file).
- :class:`ConfigOSError` (``OSError``): unsupported file extension.
- :class:`ConfigSyntaxError` (``SyntaxError``): invalid Python/JSON/YAML.
- :class:`ConfigEncodingError` (``UnicodeDecodeError``): a config file that is not UTF-8.
- :class:`ConfigOptionError` and its ``Key``/``Type`` variants: a bad ``merge_from_dict`` key.
- :class:`ConfigMissingKeyError` (``KeyError`` and ``AttributeError``): a key a tool needs is
  not in the config (mmcv's ``cfg.model`` raised ``AttributeError`` there).
"""

from mmpar.utils.compat_errors import same_type_error


class ConfigError(ValueError):
    """A config file or option is invalid; the message names the file and/or key."""

    def __str__(self) -> str:
        # KeyError's str() would quote the message; print it as written.
        if len(self.args) == 1:
            return str(self.args[0])
        return super().__str__()


class ConfigKeyError(ConfigError, KeyError):
    """A key is duplicated, missing or out of range (a ``KeyError``, as in mmcv)."""


class ConfigMissingKeyError(ConfigKeyError, AttributeError):
    """Keys a tool or API needs are not in the config (``cfg.model`` raised ``AttributeError``)."""


class ConfigTypeError(ConfigError, TypeError):
    """A value has the wrong type, e.g. a dict merged onto a non-dict (a ``TypeError``)."""


class ConfigOSError(ConfigError, OSError):
    """A config file has an unsupported extension (an ``OSError``, as in mmcv)."""


class ConfigSyntaxError(SyntaxError, ConfigError):
    """A config file is not valid Python/JSON/YAML; ``filename`` and ``lineno`` are set."""


class ConfigEncodingError(ConfigError, UnicodeDecodeError):
    """A config file is not valid UTF-8 (a ``UnicodeDecodeError``, as reading it in mmcv raised).

    The message names the file, the byte offset and line of the first invalid byte.

    Args:
        path: The config file.
        err: The decoding error (its ``object``, ``start``, ``end``, ``reason`` are kept).
    """

    def __init__(self, path: str, err: UnicodeDecodeError) -> None:
        UnicodeDecodeError.__init__(self, err.encoding, err.object, err.start, err.end, err.reason)
        line = err.object.count(b"\n", 0, err.start) + 1
        byte = err.object[err.start : err.start + 1]
        self.message = (
            f"{path}: not valid UTF-8 at byte {err.start} (line {line}, byte 0x{byte.hex()}: "
            f"{err.reason}); config files must be UTF-8 encoded: re-save it as UTF-8 (e.g. "
            f"iconv -f <its encoding> -t utf-8)"
        )

    def __str__(self) -> str:
        return self.message


class ConfigOptionError(ConfigError):
    """A ``--cfg-options`` / ``merge_from_dict`` key is malformed or its path does not exist."""


class ConfigOptionKeyError(ConfigOptionError, ConfigKeyError):
    """An option's path goes through a missing key that looks like a typo, or past a list's end."""


class ConfigOptionTypeError(ConfigOptionError, ConfigTypeError):
    """An option's path goes through a value that is not a dict (or a list, with an index)."""


class ConfigCodeError(Exception):
    """Marks an error raised by a config file's own code (``1/0``, ``os.environ['UNSET']``).

    The error raised is of the type the code raised (a ``ZeroDivisionError``, a ``KeyError``)
    and of this class: its message names the config file and line (``path:line: message``),
    and tools print it as one line (:func:`config_code_error` makes it).
    """


def config_code_error(err: Exception, path: str, lineno: int | None) -> BaseException:
    """``err`` raised by the code of config ``path`` at ``lineno``, as a :class:`ConfigCodeError`.

    Args:
        err: What the config's code raised.
        path: The config file.
        lineno: Its line that raised (None if unknown).

    Returns:
        An instance of ``type(err)`` (a subclass that is also a :class:`ConfigCodeError`) whose
        message is ``path:lineno: <err's message>``; ``err`` itself when its type cannot be
        subclassed.
    """
    if isinstance(err, KeyError) and len(err.args) == 1:
        detail = f"no key {err.args[0]!r}"  # str(KeyError) is the bare quoted key
    else:
        detail = str(err) or type(err).__name__
    where = f"{path}:{lineno}" if lineno else path
    message = f"{where}: {detail} (raised by the config file's own code)"
    return same_type_error(err, message, ConfigCodeError)
