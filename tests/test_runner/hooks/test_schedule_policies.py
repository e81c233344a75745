"""The annealing functions the LR and momentum schedules share."""

import math

from mmpar.runner.hooks.schedule_policies import annealing_cos, annealing_linear


def test_annealing_helpers():
    assert math.isclose(annealing_cos(1.0, 0.0, 0.0), 1.0)
    assert math.isclose(annealing_cos(1.0, 0.0, 1.0), 0.0, abs_tol=1e-12)
    assert math.isclose(annealing_cos(1.0, 0.0, 0.0, weight=0.5), 0.5)
    assert math.isclose(annealing_linear(1.0, 0.0, 0.25), 0.75)
