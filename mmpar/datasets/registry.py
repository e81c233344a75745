"""The registries of datasets, pipelines and samplers (``builder`` builds from them).

In their own module so that what registers into them (datasets, dataset wrappers, pipeline
transforms) and the builder that needs those wrappers import in one direction.
"""

from mmpar.utils.registry import Registry

DATASETS = Registry("dataset")
PIPELINES = Registry("pipeline")
SAMPLERS = Registry("sampler")
BATCH_SAMPLERS = Registry("batch sampler")

__all__ = ["BATCH_SAMPLERS", "DATASETS", "PIPELINES", "SAMPLERS"]
