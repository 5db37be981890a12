"""The random-feature recursion of :class:`~tssdpa.filters.ProjectionFilter`
(``recurrent="features"``): which features are drawn, when they are redrawn, and the arguments
of the kernel that runs them (:func:`~tssdpa.signal.features.feature_filter`)."""

from __future__ import annotations

import numpy as np

from tssdpa.signal.features import draw_features

__all__ = ["RandomFeatureRecursion"]


class RandomFeatureRecursion:
    """Mixin of :class:`~tssdpa.filters.ProjectionFilter` for ``recurrent="features"``: uses
    its ``_settings()`` and parameters; keeps ``features_`` / ``feature_logw_``."""

    def _features_key(self, C):
        """What the random features depend on: redrawn when any of it changes."""
        s = self._settings()
        return (float(s["sigma"]), int(s["embedding"]), C, int(self.n_features),
                self.feature_map, int(self.random_state))  # fmt: skip

    def _draw_features(self, C=None):
        C = self.n_channels_ if C is None else C
        sigma, m, C, M, kind, random_state = key = self._features_key(C)
        center = np.tile(getattr(self, "center_", np.zeros(C)), m)
        spread = np.tile(getattr(self, "spread_", np.ones(C)), m)
        self.features_, self.feature_logw_ = draw_features(
            M, m * C, sigma, random_state, kind, center, spread
        )
        self._features_drawn_for = key

    def _feature_args(self, C):
        """Keyword arguments of :func:`~tssdpa.signal.features.feature_filter` for C channels.

        Features loaded from a file (no record of what they were drawn for) are kept as saved.
        """
        # no n_channels_ here: set on an unfitted filter it marked it fitted (check_is_fitted)
        # and refused every later channel count; the features are keyed by C instead
        s = self._settings()
        if s["decay"] is None and self.tau is None:
            raise ValueError("recurrent='features' needs decay or tau (an infinite-memory filter)")
        if s["degree"] or not np.isfinite(s["sigma"]):
            raise ValueError("recurrent='features' needs degree=0 and a finite sigma")
        drawn_for = getattr(self, "_features_drawn_for", None)
        if not hasattr(self, "features_") or drawn_for not in (None, self._features_key(C)):
            self._draw_features(C)
        m = int(s["embedding"])
        return dict(
            W=self.features_,
            logw=self.feature_logw_,
            kind=self.feature_map,
            center=np.tile(getattr(self, "center_", np.zeros(C)), m),
            sigma=float(s["sigma"]),
            embedding=m,
            decay=s["decay"],
            tau=self.tau,
            exclude_self=bool(self.exclude_self),
        )
