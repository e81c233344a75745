"""mmaction2 0.24.1 and mmpose 0.29.0 from the registry, unedited, on mmpar's zero-edit mode.

For each project one fresh process (``python -m mmpar.as_mmcv helpers/walk_and_step.py``)
imports every module of the package (``pkgutil.walk_packages``), then builds one model from the
project's own config with its own ``build_*`` function and runs a forward and a backward pass on
small random input. The configs are the released ones with a smaller backbone (ResNet-18 instead
of ResNet-50, the head's input channels to match) and no pretrained download.

mmpose's dataset modules import ``xtcocotools`` at module level; its last wheels are compiled
against numpy 1 and do not load under numpy 2, so the helper serves those names from
pycocotools, the COCO API xtcocotools was forked from (COCO evaluation code, unrelated to mmcv;
nothing here calls it).
"""

from __future__ import annotations

import json
import sys

import pytest

pytestmark = pytest.mark.slow

PROJECTS = {
    "mmaction2": dict(
        package="mmaction",
        config="recognition/tsn/tsn_r50_1x1x3_100e_kinetics400_rgb.py",
        options=[
            "model.backbone.pretrained=None",
            "model.backbone.depth=18",
            "model.cls_head.in_channels=512",
        ],
        flags=[],
        model="Recognizer2D",
        min_modules=150,
    ),
    "mmpose": dict(
        package="mmpose",
        config="body/2d_kpt_sview_rgb_img/topdown_heatmap/coco/res50_coco_256x192.py",
        options=[
            "model.pretrained=None",
            "model.backbone.depth=18",
            "model.keypoint_head.in_channels=512",
        ],
        flags=["--xtcocotools-from-pycocotools"],
        model="TopDown",
        min_modules=260,
    ),
}


@pytest.fixture(scope="module", params=sorted(PROJECTS))
def report(request, downloads, clients, tmp_path_factory):
    """Run the helper once per project; its JSON report."""
    name = request.param
    spec = PROJECTS[name]
    package_dir = downloads[name]
    config = package_dir / spec["package"] / ".mim" / "configs" / spec["config"]
    out = tmp_path_factory.mktemp(name) / "report.json"
    helper = clients.HELPERS / "walk_and_step.py"
    args = [helper, *spec["flags"], spec["package"], config, out, *spec["options"]]
    clients.run(
        [sys.executable, *clients.as_mmcv(*args)],
        env=clients.client_env(package_dir),
        cwd=out.parent,
    )
    return name, spec, json.loads(out.read_text())


def test_every_module_imports(report):
    name, spec, result = report
    assert not result["failures"], f"{name}: {len(result['failures'])} modules failed:\n" + (
        "\n".join(f"{module}: {error}" for module, error in sorted(result["failures"].items()))
    )
    assert len(result["modules"]) >= spec["min_modules"]


def test_model_from_own_config_trains_one_step(report):
    name, spec, result = report
    step = result["step"]
    assert step["model"] == spec["model"]
    assert step["loss"] > 0 and step["loss"] == step["loss"]  # positive, not NaN
    # Every parameter took part in the backward pass. Some gradients are exactly zero: the
    # residual blocks' last norm starts at zero (``zero_init_residual``), which blocks the
    # gradient of the layers before it in the block at the first step.
    assert step["with_grad"] == step["parameters"]
    assert step["nonzero_grad"] > step["parameters"] // 2
