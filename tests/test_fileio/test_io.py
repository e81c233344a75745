"""load / dump: formats by suffix, paths, file objects, strings, the handler registry."""

import io
import pickle
from pathlib import Path

import numpy as np
import pytest

import mmpar
from mmpar.fileio import BaseFileHandler, dump, load, register_handler
from mmpar.fileio.handlers import JsonHandler
from mmpar.fileio.handlers.json_handler import set_default
from mmpar.fileio.io import file_handlers

DATA = {"name": "run", "lr": 0.1, "steps": [1, 2, 3], "nested": {"ok": True, "none": None}}


@pytest.mark.parametrize("suffix", ["json", "yaml", "yml", "pickle", "pkl"])
def test_round_trip_through_a_path_str_and_a_pathlib_path(tmp_path, suffix):
    as_str = str(tmp_path / "sub" / "dir" / f"a.{suffix}")  # parent folders are created
    assert dump(DATA, as_str) is None
    assert load(as_str) == DATA
    as_path = tmp_path / f"b.{suffix}"
    dump(DATA, as_path)
    assert load(as_path) == DATA
    assert mmpar.load(as_path) == DATA  # mmcv 1.x's top-level spelling


def test_files_hold_what_the_standard_libraries_read(tmp_path):
    import json

    import yaml

    dump(DATA, tmp_path / "a.json", indent=2)
    assert json.loads((tmp_path / "a.json").read_text()) == DATA
    assert "\n  " in (tmp_path / "a.json").read_text()  # kwargs reach json.dump
    dump(DATA, tmp_path / "a.yaml")
    assert yaml.safe_load((tmp_path / "a.yaml").read_text()) == DATA
    dump(DATA, tmp_path / "a.pkl")
    assert pickle.loads((tmp_path / "a.pkl").read_bytes()) == DATA


@pytest.mark.parametrize(
    ("fmt", "buffer"),
    [("json", io.StringIO), ("yaml", io.StringIO), ("pickle", io.BytesIO)],
)
def test_file_objects_need_the_format(fmt, buffer):
    f = buffer()
    dump(DATA, f, file_format=fmt)
    f.seek(0)
    assert load(f, file_format=fmt) == DATA


def test_dump_without_a_file_returns_the_serialized_object():
    text = dump(DATA, file_format="json")
    assert isinstance(text, str) and load(io.StringIO(text), file_format="json") == DATA
    assert "steps:" in dump(DATA, file_format="yaml")
    blob = dump(DATA, file_format="pkl")
    assert isinstance(blob, bytes) and pickle.loads(blob) == DATA
    assert blob[:2] == b"\x80\x02"  # protocol 2 by default, as mmcv


def test_dump_without_file_or_format_is_a_value_error():
    with pytest.raises(ValueError, match="file_format must be given"):
        dump(DATA)


def test_unsupported_format_is_a_type_error_listing_the_registered_ones(tmp_path):
    with pytest.raises(TypeError, match=r"Unsupported format: 'txt'.*'json'.*'pkl'"):
        load(tmp_path / "a.txt")
    with pytest.raises(TypeError, match="Unsupported format: 'csv'"):
        dump(DATA, tmp_path / "a.json", file_format="csv")
    with pytest.raises(TypeError, match=r"Unsupported format: '' \(inferred from"):
        dump(DATA, str(tmp_path / "no_suffix"))
    with pytest.raises(TypeError, match="Unsupported format: None"):
        load(io.StringIO("{}"))


def test_a_file_that_is_neither_path_nor_file_object_is_a_type_error():
    with pytest.raises(TypeError, match="must be a path"):
        load(123, file_format="json")
    with pytest.raises(TypeError, match="must be a path"):
        dump(DATA, 123, file_format="json")


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.json")


def test_json_set_default_converts_sets_ranges_and_numpy():
    assert set_default({3}) == [3]
    assert set_default(range(3)) == [0, 1, 2]
    assert set_default(np.arange(4).reshape(2, 2)) == [[0, 1], [2, 3]]
    value = set_default(np.float32(1.5))
    assert value == 1.5 and type(value) is float
    assert type(set_default(np.int64(7))) is int
    with pytest.raises(TypeError, match="object is unsupported for json dump"):
        set_default(object())
    text = dump({"a": np.arange(3), "b": np.int32(2), "c": {1}}, file_format="json")
    assert load(io.StringIO(text), file_format="json") == {"a": [0, 1, 2], "b": 2, "c": [1]}


def test_yaml_writes_plain_yaml_and_reads_it_back(tmp_path):
    obj = {"pair": (1, 2), "arr": np.arange(2), "x": np.float64(0.5), "tags": {"a"}}
    dump(obj, tmp_path / "a.yaml")
    text = (tmp_path / "a.yaml").read_text()
    assert "!!python" not in text
    assert load(tmp_path / "a.yaml") == {"pair": [1, 2], "arr": [0, 1], "x": 0.5, "tags": {"a"}}


def test_yaml_is_read_safely(tmp_path):
    import yaml

    path = tmp_path / "evil.yaml"
    path.write_text(f"!!python/object/apply:os.system ['touch {tmp_path / 'marker'}']\n")
    with pytest.raises(yaml.YAMLError, match="python/object/apply"):
        load(path)
    assert not (tmp_path / "marker").exists()
    with pytest.raises(TypeError, match="only with yaml.safe_load"):
        load(io.StringIO("a: 1"), "yaml", Loader=yaml.Loader)


class _Opaque:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Opaque) and other.value == self.value


def test_pickle_loads_data_types_and_refuses_other_globals(tmp_path):
    import collections
    import datetime

    data = {
        "arr": np.arange(6, dtype=np.float32).reshape(2, 3),
        "scalar": np.int64(3),
        "od": collections.OrderedDict(a=1),
        "when": datetime.date(2024, 1, 2),
        "set": {1, 2},
        "path": Path("a/b"),
        "raw": b"\x00\x01",
    }
    dump(data, tmp_path / "ok.pkl")
    back = load(tmp_path / "ok.pkl")
    np.testing.assert_array_equal(back.pop("arr"), data.pop("arr"))
    assert back == data

    dump({"obj": _Opaque(1)}, tmp_path / "obj.pkl")
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to unpickle .*_Opaque"):
        load(tmp_path / "obj.pkl")
    allowed = f"{_Opaque.__module__}._Opaque"
    assert load(tmp_path / "obj.pkl", allowed_globals=[allowed]) == {"obj": _Opaque(1)}
    with pytest.raises(TypeError, match="allowed_globals entries"):
        load(tmp_path / "obj.pkl", allowed_globals=[42])


def test_pickle_cannot_run_code_while_loading(tmp_path):
    class Evil:
        def __reduce__(self):
            return (open, (str(tmp_path / "marker"), "w"))

    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(Evil()))
    with pytest.raises(pickle.UnpicklingError, match="io.open"):
        load(tmp_path / "evil.pkl")
    assert not (tmp_path / "marker").exists()


class _LinesHandler(BaseFileHandler):
    """A text format: one item per line."""

    def __init__(self, sep="\n"):
        self.sep = sep

    def load_from_fileobj(self, file, **kwargs):
        return file.read().split(self.sep)

    def dump_to_fileobj(self, obj, file, **kwargs):
        file.write(self.dump_to_str(obj))

    def dump_to_str(self, obj, **kwargs):
        return self.sep.join(obj)


@pytest.fixture
def restore_handlers():
    saved = dict(file_handlers)
    yield
    file_handlers.clear()
    file_handlers.update(saved)


def test_register_handler_as_a_decorator_with_constructor_kwargs(tmp_path, restore_handlers):
    @register_handler(["txt", "lines"], sep="|")
    class PipeHandler(_LinesHandler):
        pass

    assert isinstance(file_handlers["txt"], PipeHandler) and file_handlers["txt"].sep == "|"
    dump(["a", "b"], tmp_path / "x.txt")
    assert (tmp_path / "x.txt").read_text() == "a|b"
    assert load(tmp_path / "x.txt") == ["a", "b"]
    assert dump(["c"], file_format="lines") == "c"


def test_register_handler_directly_in_either_argument_order(restore_handlers):
    handler = _LinesHandler()
    register_handler("lst", handler)
    register_handler(handler, ["lst2"])
    assert file_handlers["lst"] is handler and file_handlers["lst2"] is handler


def test_register_handler_rejects_what_is_not_a_handler(restore_handlers):
    with pytest.raises(TypeError, match="BaseFileHandler"):
        register_handler("txt", object())
    with pytest.raises(TypeError, match="BaseFileHandler subclass"):

        @register_handler("txt")
        class NotAHandler:
            pass

    with pytest.raises(TypeError, match="file_formats must be a str or a list of str"):
        register_handler([1], JsonHandler())
    assert "txt" not in file_handlers
