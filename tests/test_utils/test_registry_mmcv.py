"""Registry and build_from_cfg behave as mmcv 1.7.2's: legacy calls, scopes, exception types."""

import pytest

from mmpar.utils.registry import (
    ConfigArgumentError,
    NotARegistryError,
    Registry,
    ScopeConflictError,
    build_from_cfg,
)


@pytest.fixture
def models():
    return Registry("model", scope="mmpar")


def test_legacy_register_module_with_a_class(models):
    class ResNet:
        pass

    with pytest.deprecated_call(match="register_module"):
        assert models.register_module(ResNet) is ResNet
    assert models.get("ResNet") is ResNet

    with pytest.deprecated_call():

        @models.register_module  # no parentheses: the same old form
        class VGG:
            pass

    assert models.get("VGG") is VGG
    with pytest.raises(KeyError, match='"ResNet" is already registered'), pytest.deprecated_call():
        models.register_module(ResNet)
    with pytest.deprecated_call():
        models.register_module(ResNet, force=True)


def test_register_module_argument_types(models):
    def make():
        return 1

    with pytest.raises(TypeError, match="pass a function as module="):
        models.register_module(make)
    with pytest.raises(TypeError, match="list of str"):
        models.register_module(name=["ok", 3])
    assert models.register_module(name=("a", "b"), module=make) is make
    assert models.get("a") is make and models.get("b") is make
    with pytest.raises(TypeError, match="class or a function, but got int"):
        models.register_module(name="x", module=3)


def test_scoped_lookup_and_mmcv_helpers(models):
    child = Registry("model", parent=models, scope="mmdet")

    @child.register_module()
    class DetNet:
        pass

    assert Registry.split_scope_key("mmdet.a.B") == ("mmdet", "a.B")
    assert Registry.split_scope_key("B") == (None, "B")
    assert models.get("mmdet.DetNet") is DetNet and "mmdet.DetNet" in models
    assert child.get("mmdet.DetNet") is DetNet and len(child) == 1
    assert child.module_dict == {"DetNet": DetNet}
    assert repr(child).startswith("Registry(name=model, items={'DetNet'")
    assert Registry("x").scope == __name__.split(".")[0]  # infer_scope: the caller's package


def test_child_scope_conflict_and_bad_parent_are_mmcv_assertion_errors(models):
    Registry("model", parent=models, scope="mmdet")
    with pytest.raises(AssertionError, match="already exists") as info:
        Registry("model", parent=models, scope="mmdet")
    assert isinstance(info.value, (KeyError, ScopeConflictError))
    assert str(info.value).startswith('scope "mmdet"')  # no KeyError quotes
    with pytest.raises(AssertionError, match="parent must be a Registry") as info:
        Registry("model", parent="models")
    assert isinstance(info.value, (TypeError, NotARegistryError))
    with pytest.raises(AssertionError):
        models._add_children(object())


def test_build_from_cfg_exception_types(models):
    @models.register_module()
    class Net:
        def __init__(self, depth=18):
            if depth < 0:
                raise ValueError(f"depth must be >= 0, got {depth}")
            self.depth = depth

    with pytest.raises(TypeError, match="cfg must be a dict"):
        build_from_cfg([("type", "Net")], models)
    with pytest.raises(TypeError, match="registry must be a Registry"):
        build_from_cfg(dict(type="Net"), "models")
    with pytest.raises(KeyError, match='must contain the key "type"'):
        build_from_cfg(dict(depth=1), models)
    with pytest.raises(KeyError, match='"Nte" is not in the model registry.*Did you mean: Net'):
        build_from_cfg(dict(type="Nte"), models)
    with pytest.raises(ValueError, match=r'^Net \(registry "model"\): depth must be >= 0') as info:
        build_from_cfg(dict(type="Net", depth=-1), models)
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(ConfigArgumentError, match='unexpected keyword argument "deph"') as info:
        models.build(dict(type="Net", deph=50))
    assert isinstance(info.value, TypeError) and "Did you mean: depth?" in str(info.value)
    assert build_from_cfg(dict(depth=3), models, default_args=dict(type="Net")).depth == 3


def test_deprecated_register_module_warns_on_every_form(models):
    class A:
        pass

    class B:
        pass

    with pytest.deprecated_call(match=r"register_module\(cls, force=False\) is deprecated"):
        assert models.deprecated_register_module(A) is A
    assert models.get("A") is A
    with pytest.deprecated_call():
        decorator = models.deprecated_register_module(force=True)
    with pytest.deprecated_call():  # applying the decorator warns again, then registers
        assert decorator(B) is B
    assert models.get("B") is B
    with pytest.deprecated_call(), pytest.raises(KeyError):
        models.deprecated_register_module(A)
    with pytest.deprecated_call():
        assert models.deprecated_register_module(A, force=True) is A


def test_register_module_with_a_class_goes_through_the_deprecated_api(models, monkeypatch):
    calls = []
    original = models.deprecated_register_module

    def spy(cls=None, force=False):
        calls.append((cls, force))
        return original(cls, force=force)

    monkeypatch.setattr(models, "deprecated_register_module", spy)

    class C:
        pass

    with pytest.deprecated_call():
        assert models.register_module(C, force=True) is C
    assert calls == [(C, True)]


def test_private_register_module_accepts_the_old_module_class_keyword(models):
    class D:
        pass

    with pytest.deprecated_call(match="module_class"):
        models._register_module(module_class=D, module_name="DD")
    assert models.get("DD") is D
    with pytest.raises(AssertionError):
        models._register_module(module_class=D, module=D)
    models._register_module(module=D, force=True)  # the new keyword: no warning
    assert models.get("D") is D
