"""mmpar.datasets.pipelines."""
