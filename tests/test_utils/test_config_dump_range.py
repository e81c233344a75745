from mmpar.utils import Config


def test_a_range_dumps_to_python_and_loads_back(tmp_path):
    # mmcls's tools/train.py sets cfg.gpu_ids = range(world_size) under a launcher, then dumps.
    cfg = Config(dict(gpu_ids=range(2), steps=range(1, 9, 3)))
    path = tmp_path / "dumped.py"
    cfg.dump(str(path))
    assert "gpu_ids = range(0, 2)" in path.read_text()
    loaded = Config.fromfile(str(path))
    assert loaded.gpu_ids == range(2) and loaded.steps == range(1, 9, 3)
