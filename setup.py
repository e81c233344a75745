"""Ship ``configs/`` inside the wheel as ``mmpar/configs`` (everything else is in pyproject.toml).

A user who installs mmpar without a clone gets the example configs with it: ``mmpar-train
digits_lenet`` finds ``mmpar/configs/digits_lenet.py`` (see :mod:`mmpar.cli.packaged_configs`).
pyproject.toml cannot map a directory outside ``mmpar/`` into the package, hence this file.
"""

from setuptools import find_namespace_packages, setup


def _packages(where: str = ".", include: tuple = ("*",)) -> list[str]:
    found = find_namespace_packages(where=where, include=include)
    return [name for name in found if "__pycache__" not in name.split(".")]


setup(
    packages=[
        *_packages(include=("mmpar", "mmpar.*")),
        "mmpar.configs",
        *(f"mmpar.configs.{name}" for name in _packages("configs")),
    ],
    package_dir={"mmpar.configs": "configs"},
)
