"""mmcv 1.x ``mmcv.utils.misc`` names: sequence checks, casts, tuples and guarding decorators."""

import sys
import warnings

import pytest

from mmpar.utils import (
    check_prerequisites,
    concat_list,
    deprecated_api_warning,
    has_method,
    is_list_of,
    is_method_overridden,
    is_seq_of,
    is_str,
    is_tuple_of,
    iter_cast,
    list_cast,
    misc,
    plugins,
    requires_executable,
    requires_package,
    slice_list,
    to_1tuple,
    to_2tuple,
    to_3tuple,
    to_4tuple,
    to_ntuple,
    tuple_cast,
)


def test_to_ntuple_repeats_scalars_and_keeps_iterables():
    assert to_1tuple(3) == (3,)
    assert to_2tuple(3) == (3, 3)
    assert to_3tuple(0.5) == (0.5, 0.5, 0.5)
    assert to_4tuple(None) == (None,) * 4
    assert to_ntuple(5)(1) == (1,) * 5
    pair = [1, 2]
    assert to_2tuple(pair) is pair  # iterables pass through unchanged, whatever their length
    assert to_2tuple("ab") == "ab"


def test_is_str():
    assert is_str("a") and is_str("")
    assert not is_str(b"a") and not is_str(1) and not is_str(None)


def test_iter_cast_and_friends():
    out = iter_cast(["1", "2"], int)
    assert not isinstance(out, (list, tuple)) and list(out) == [1, 2]
    assert iter_cast(["1", "2"], int, return_type=set) == {1, 2}
    assert list_cast([1, 2], str) == ["1", "2"]
    assert tuple_cast(("1.5", 2), float) == (1.5, 2.0)
    with pytest.raises(TypeError, match="iterable"):
        iter_cast(1, int)
    with pytest.raises(TypeError, match="type"):
        list_cast([1], "int")


def test_is_seq_of_family():
    assert is_seq_of([1, 2], int)
    assert is_seq_of((1, 2), int)
    assert is_seq_of(["a", 1], (str, int))
    assert is_seq_of([], int)
    assert not is_seq_of([1, "a"], int)
    assert not is_seq_of(1, int)
    assert not is_seq_of({1, 2}, int)  # a set is not a Sequence
    assert is_seq_of([1], int, list) and not is_seq_of((1,), int, list)
    assert is_list_of([1.0], float) and not is_list_of((1.0,), float)
    assert is_tuple_of((1.0,), float) and not is_tuple_of([1.0], float)
    result = is_seq_of([1], int)
    assert result is True
    with pytest.raises(AssertionError, match="seq_type"):
        is_seq_of([1], int, seq_type="list")
    with pytest.raises(TypeError):
        is_seq_of([1], int, seq_type=list())


def test_slice_list():
    assert slice_list([1, 2, 3, 4, 5, 6], [1, 2, 3]) == [[1], [2, 3], [4, 5, 6]]
    assert slice_list([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]
    assert slice_list("abcd", [3, 1]) == ["abc", "d"]
    with pytest.raises(ValueError, match="add up to 3"):
        slice_list([1, 2, 3, 4], [1, 2])
    with pytest.raises(TypeError, match="int or a list"):
        slice_list([1, 2], (1, 1))
    with pytest.raises(AssertionError, match="cannot be cut"):  # mmcv asserted divisibility
        slice_list([1, 2, 3], 2)
    with pytest.raises(ValueError, match="cannot be cut"):
        slice_list([1, 2, 3], 0)


def test_concat_list():
    assert concat_list([[1, 2], [3], []]) == [1, 2, 3]
    assert concat_list([(1,), "ab"]) == [1, "a", "b"]
    assert concat_list([]) == []


def test_check_prerequisites_runs_or_raises_runtime_error():
    calls = []

    @check_prerequisites(["a", "b"], checker=lambda name: name != "b")
    def needs_b(x):
        calls.append(x)
        return x * 2

    @check_prerequisites("a", checker=lambda name: True)
    def needs_a(x):
        return x + 1

    assert needs_a(1) == 2
    with pytest.raises(RuntimeError, match='Prerequisites "b" are required in method "needs_b"'):
        needs_b(3)
    assert calls == []
    assert needs_b.__name__ == "needs_b"

    @check_prerequisites(["x", "y"], checker=lambda name: False, msg_tmpl="no {} for {}")
    def custom():
        return None

    with pytest.raises(RuntimeError, match="no x, y for custom"):
        custom()


@pytest.mark.parametrize(
    "decorator,present,missing",
    [
        (requires_package, "json", "mmpar_surely_not_a_package_xyz"),
        (requires_executable, "git", "mmpar-no-such-executable"),
    ],
)
def test_requires_package_and_executable(decorator, present, missing):
    @decorator(present)
    def uses_present():
        return "ok"

    @decorator([present, missing])
    def uses_missing():
        return "never"

    assert uses_present() == "ok"
    with pytest.raises(RuntimeError, match=f'"{missing}" are required in method "uses_missing"'):
        uses_missing()


def test_deprecated_api_warning_renames_keywords():
    @deprecated_api_warning({"old": "new"}, cls_name="Thing")
    def func(new=0, other=1):
        return new, other

    with pytest.warns(DeprecationWarning, match='"old" is deprecated in `Thing.func`'):
        assert func(old=5) == (5, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert func(new=3, other=4) == (3, 4)
        assert func(7) == (7, 1)
    with pytest.raises(AssertionError, match="both"):
        func(old=1, new=2)
    with pytest.raises(TypeError, match="both"):
        func(old=1, new=2)


def test_deprecated_api_warning_warns_for_old_positional_parameter():
    @deprecated_api_warning({"old": "new"})
    def func(old, new=None):
        return old

    with pytest.warns(DeprecationWarning, match='"old" is deprecated in `func`'):
        assert func(1) == 1


def test_is_method_overridden():
    class Base:
        def run(self):
            return "base"

        def stop(self):
            return None

    class Child(Base):
        def run(self):
            return "child"

    assert is_method_overridden("run", Base, Child)
    assert is_method_overridden("run", Base, Child())
    assert not is_method_overridden("stop", Base, Child)
    with pytest.raises(AssertionError, match="class"):
        is_method_overridden("run", Base(), Child)
    with pytest.raises(AttributeError):
        is_method_overridden("missing", Base, Child)


def test_has_method():
    class Thing:
        value = 1

        def act(self):
            return None

    assert has_method(Thing(), "act")
    assert not has_method(Thing(), "value")
    assert not has_method(Thing(), "missing")


def test_misc_module_reexports_without_second_copy():
    assert misc.import_modules_from_strings is plugins.import_modules_from_strings
    os_path, system = misc.import_modules_from_strings(["os.path", "sys"])
    assert system is sys and os_path.join("a", "b")
    for name in misc.__all__:
        assert hasattr(misc, name), name


def test_import_optional_names_the_user_and_the_install_step(monkeypatch):
    import json
    import sys

    from mmpar.utils.misc import import_optional

    assert import_optional("json", "me", "pip install json") is json
    monkeypatch.setitem(sys.modules, "not_here_pkg", None)
    expected = "SomeHook needs the Python package 'not_here_pkg'"
    with pytest.raises(ImportError, match=expected) as info:
        import_optional("not_here_pkg", "SomeHook", "pip install not-here")
    assert str(info.value).endswith(": pip install not-here")
    assert isinstance(info.value.__cause__, ImportError)
