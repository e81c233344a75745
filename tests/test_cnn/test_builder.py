"""mmcv.cnn's MODELS: mmpar's model registry, the root of downstream projects' registries."""

import pytest
from torch import nn

from mmpar.cnn import MODELS, build_model_from_cfg
from mmpar.cnn import builder as cnn_builder
from mmpar.models import builder as models_builder
from mmpar.runner import Sequential
from mmpar.utils import Registry


@pytest.fixture
def child():
    """A downstream registry as mmcls makes it: ``Registry('models', parent=MODELS)``."""
    registry = Registry("models", parent=MODELS, scope="downstream_test")
    try:
        yield registry
    finally:
        MODELS.children.pop("downstream_test")


def test_models_registry_is_cnns():
    assert models_builder.MODELS is MODELS is cnn_builder.MODELS
    assert models_builder.build_model_from_cfg is build_model_from_cfg
    assert MODELS.name == "model" and MODELS.scope == "mmpar"
    assert MODELS.get("ImageClassifier") is not None  # mmpar's own models are registered here


def test_list_config_builds_a_sequential():
    @MODELS.register_module()
    class _TestBlock(nn.Module):
        def __init__(self, width=1):
            super().__init__()
            self.fc = nn.Linear(width, width)

    try:
        seq = build_model_from_cfg([dict(type="_TestBlock"), dict(type="_TestBlock")], MODELS)
        assert isinstance(seq, Sequential) and isinstance(seq, nn.Sequential) and len(seq) == 2
        one = MODELS.build(dict(type="_TestBlock"), default_args=dict(width=3))
        assert one.fc.in_features == 3
    finally:
        MODELS.module_dict.pop("_TestBlock")


def test_downstream_child_registry_resolves(child):
    @child.register_module()
    class Head(nn.Module):
        pass

    # The child builds with the parent's build function, finds its own names, and mmpar's.
    assert child.build_func is build_model_from_cfg
    assert isinstance(child.build([dict(type="Head")]), Sequential)
    assert child.get("Head") is Head
    assert child.get("mmpar.ImageClassifier") is MODELS.get("ImageClassifier")
    # From the root, and from a sibling, the child's names are reached by its scope.
    assert MODELS.get("downstream_test.Head") is Head
    sibling = Registry("models", parent=MODELS, scope="sibling_test")
    try:
        assert sibling.get("downstream_test.Head") is Head
    finally:
        MODELS.children.pop("sibling_test")
    with pytest.raises(KeyError, match="NoSuchModel"):
        child.build(dict(type="NoSuchModel"))
