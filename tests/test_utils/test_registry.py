import pytest

from mmpar import ConfigDict, Registry, build_from_cfg


@pytest.fixture
def models():
    return Registry("model", scope="mmpar")


def test_register_as_decorator_and_call(models):
    @models.register_module()
    class ResNet:
        def __init__(self, depth=18):
            self.depth = depth

    class VGG:
        pass

    assert models.register_module(module=VGG) is VGG
    assert models.get("ResNet") is ResNet and models.get("VGG") is VGG
    assert "ResNet" in models and "Nope" not in models
    assert len(models) == 2
    assert set(models.module_dict) == {"ResNet", "VGG"}
    assert models.name == "model" and models.scope == "mmpar"


def test_register_with_names(models):
    @models.register_module(name=["Alias1", "Alias2"])
    class Net:
        pass

    @models.register_module(name="Short")
    def make_net():
        return Net()

    assert models.get("Alias1") is Net and models.get("Alias2") is Net
    assert models.get("Net") is None
    assert isinstance(models.build(dict(type="Short")), Net)


def test_reregistration_needs_force(models):
    @models.register_module()
    class Net:
        pass

    with pytest.raises(KeyError, match='"Net" is already registered in the model registry'):

        @models.register_module()
        class Net:  # noqa: F811
            pass

    @models.register_module(force=True)
    class Net:  # noqa: F811
        version = 2

    assert models.get("Net").version == 2


def test_register_bad_arguments(models):
    with pytest.raises(TypeError, match="force must be a bool"):
        models.register_module(force=1)
    with pytest.raises(TypeError, match="name must be None, a str or a list"):
        models.register_module(name=3)
    with pytest.raises(TypeError, match="must be a class or a function"):
        models.register_module(module=3)


def test_build_from_cfg_type_kinds_and_default_args(models):
    @models.register_module()
    class Net:
        def __init__(self, depth, width=1):
            self.depth, self.width = depth, width

    def factory(depth, width=1):
        return ("factory", depth, width)

    net = build_from_cfg(dict(type="Net", depth=18), models, default_args=dict(width=4))
    assert (type(net), net.depth, net.width) == (Net, 18, 4)
    # cfg wins over default_args
    net = models.build(ConfigDict(type="Net", depth=50, width=2), default_args=dict(width=4))
    assert (net.depth, net.width) == (50, 2)
    assert build_from_cfg(dict(type=Net, depth=1), models).depth == 1
    assert build_from_cfg(dict(type=factory, depth=3), models) == ("factory", 3, 1)
    # type may come from default_args
    assert build_from_cfg(dict(depth=7), models, default_args=dict(type="Net")).depth == 7
    cfg = dict(type="Net", depth=2)
    build_from_cfg(cfg, models, default_args=dict(width=9))
    assert cfg == dict(type="Net", depth=2)  # not modified


def test_build_from_cfg_bad_input(models):
    with pytest.raises(TypeError, match="cfg must be a dict"):
        build_from_cfg([1], models)
    with pytest.raises(KeyError, match='must contain the key "type"'):
        build_from_cfg(dict(depth=1), models)
    with pytest.raises(TypeError, match="registry must be a Registry"):
        build_from_cfg(dict(type="Net"), object())
    with pytest.raises(TypeError, match="default_args must be a dict"):
        build_from_cfg(dict(type="Net"), models, default_args=[1])
    with pytest.raises(TypeError, match="type must be a str, class or callable"):
        build_from_cfg(dict(type=3), models)


def test_unknown_type_names_registry_and_close_matches(models):
    @models.register_module()
    class ResNet:
        pass

    @models.register_module()
    class ResNeXt:
        pass

    with pytest.raises(KeyError) as info:
        models.build(dict(type="ResNett"))
    msg = str(info.value)
    assert '"ResNett" is not in the model registry' in msg
    assert "Did you mean: ResNet" in msg
    assert "custom_imports" in msg
    with pytest.raises(KeyError) as info:
        models.build(dict(type="Transformer"))
    assert "Did you mean" not in str(info.value)


def test_constructor_error_names_registry_and_type(models):
    @models.register_module()
    class Fragile:
        def __init__(self, depth):
            raise ValueError(f"bad depth {depth}")

    with pytest.raises(ValueError, match=r'Fragile \(registry "model"\): bad depth 3') as info:
        models.build(dict(type="Fragile", depth=3))
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(TypeError, match=r'Fragile \(registry "model"\).*unexpected keyword'):
        models.build(dict(type="Fragile", depth=3, nope=1))


def test_constructor_error_with_unusual_exception_type(models):
    class NeedsTwoArgs(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    @models.register_module()
    class Odd:
        def __init__(self):
            raise NeedsTwoArgs("x", "y")

    # The original error surfaces instead of a TypeError from re-wrapping it.
    with pytest.raises(NeedsTwoArgs):
        models.build(dict(type="Odd"))


def test_child_falls_back_to_parent_and_scope_routing():
    parent = Registry("model", scope="mmpar")
    child = Registry("model", parent=parent, scope="mmdet")
    sibling = Registry("model", parent=parent, scope="mmcls")

    @parent.register_module()
    class Shared:
        pass

    @child.register_module()
    class DetNet:
        pass

    @sibling.register_module()
    class ClsNet:
        pass

    @sibling.register_module(name="Shared")
    class ClsShared:
        pass

    assert parent.children == {"mmdet": child, "mmcls": sibling}
    assert child.parent is parent
    assert isinstance(child.build(dict(type="Shared")), Shared)  # parent fallback
    assert isinstance(sibling.build(dict(type="Shared")), ClsShared)  # own entry first
    assert isinstance(parent.build(dict(type="mmdet.DetNet")), DetNet)  # routed to child
    assert isinstance(child.build(dict(type="mmcls.ClsNet")), ClsNet)  # routed via root
    assert isinstance(child.build(dict(type="mmdet.DetNet")), DetNet)  # own scope
    assert parent.get("DetNet") is None  # parents do not look into children unscoped
    with pytest.raises(KeyError, match="Did you mean: mmdet.DetNet"):
        parent.build(dict(type="mmdet.DetNt"))
    with pytest.raises(KeyError, match="already exists"):
        Registry("model", parent=parent, scope="mmdet")
    with pytest.raises(TypeError, match="parent must be a Registry"):
        Registry("model", parent=object(), scope="x")


def test_child_inherits_build_func_and_scope_is_inferred():
    def custom_build(cfg, registry, default_args=None):
        return ("built", cfg["type"], registry.name)

    parent = Registry("thing", build_func=custom_build, scope="mmpar")
    child = Registry("thing", parent=parent, scope="mine")
    assert child.build(dict(type="X")) == ("built", "X", "thing")
    inferred = Registry("auto")
    assert inferred.scope == __name__.split(".")[0]
    assert "Registry(name=auto" in repr(inferred)
