"""resolve_config / --list-configs: the tools find the configs that ship with mmpar by name."""

import argparse
import os
from pathlib import Path

import pytest

from mmpar.cli.packaged_configs import (
    ListConfigsAction,
    configs_dir,
    list_configs,
    resolve_config,
)

REPO = Path(__file__).resolve().parents[2]


def test_a_checkout_uses_its_configs_folder():
    assert configs_dir() == REPO / "configs"
    assert "digits_lenet" in list_configs()
    assert not any(name.startswith("_") for name in list_configs())  # _base_ fragments


@pytest.mark.parametrize("name", ["digits_lenet", "digits_lenet.py", "configs/digits_lenet.py"])
def test_a_shipped_name_resolves_from_any_directory(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    assert resolve_config(name) == str(REPO / "configs" / "digits_lenet.py")


def test_an_existing_path_wins_and_an_unknown_one_is_passed_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    own = tmp_path / "configs" / "digits_lenet.py"
    own.parent.mkdir()
    own.write_text("x = 1\n")
    assert resolve_config("configs/digits_lenet.py") == "configs/digits_lenet.py"
    assert resolve_config("configs/nope.py") == "configs/nope.py"  # the tool reports it
    assert resolve_config(str(tmp_path / "nope.py")) == str(tmp_path / "nope.py")


def test_list_configs_prints_names_and_files_and_exits_before_positionals(capsys):
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("--list-configs", action=ListConfigsAction)
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["--list-configs"])  # no config given: not an error here
    assert info.value.code == 0
    lines = dict(line.split() for line in capsys.readouterr().out.splitlines())
    assert lines["digits_lenet"] == str(REPO / "configs" / "digits_lenet.py")
    assert all(os.path.isfile(path) for path in lines.values())
