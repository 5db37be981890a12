"""Datasets: locating shared real data, loaders, synthetic generators and noise models."""

from tssdpa.data.paths import ENV_VAR, candidate_dirs, find_dataset, have_dataset

__all__ = ["ENV_VAR", "candidate_dirs", "find_dataset", "have_dataset"]
