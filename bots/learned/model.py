"""The ``learned`` bot's model: a weight per afterstate feature, in a small ``.npz`` file.

``weights.npz`` holds ``names`` (the feature names, checked against
:data:`bots.learned.features.NAMES`), ``weights`` (one float per feature), ``scale``
(each feature's spread in the training data; the weights apply to features divided by
it) and ``meta`` (a JSON string: the command and seed that made the file, and its learning curve;
the run's CPU seconds are in a separate report, so the file is a function of the command).
Inference is one dot product per candidate, in numpy.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .features import NAMES

#: the weights shipped with the bot
DEFAULT_PATH = Path(__file__).with_name("weights.npz")


class Model:
    """Scores afterstates: ``score(F) = (F / scale) @ weights`` for a matrix of features."""

    def __init__(self, weights, scale=None, meta: dict | None = None):
        self.weights = np.asarray(weights, dtype=np.float64)
        self.scale = np.ones(len(NAMES)) if scale is None else np.asarray(scale, dtype=np.float64)
        if self.weights.shape != (len(NAMES),) or self.scale.shape != (len(NAMES),):
            raise ValueError(f"a model has {len(NAMES)} weights and scales, got {self.weights.shape} and {self.scale.shape}")
        self.meta = dict(meta or {})
        self._w = self.weights / self.scale

    def score(self, feats: np.ndarray) -> np.ndarray:
        """One score per row of ``feats`` (candidates by :data:`NAMES`): the products added
        feature by feature, so a move is the same on every machine (a BLAS product sums in
        an order that depends on the CPU, which can turn a near tie)."""
        out = np.zeros(len(feats))
        for j, w in enumerate(self._w.tolist()):
            if w:
                out += feats[:, j] * w
        return out

    def save(self, path) -> None:
        """Write the model as ``.npz`` (names, weights, scale, meta)."""
        np.savez(path, names=np.array(NAMES), weights=self.weights, scale=self.scale,
                 meta=np.array(json.dumps(self.meta, sort_keys=True)))

    @classmethod
    def load(cls, path=DEFAULT_PATH) -> "Model":
        """Read a model saved by :meth:`save`; refuse one made for other features."""
        with np.load(path, allow_pickle=False) as data:
            names = tuple(str(x) for x in data["names"])
            if names != NAMES:
                raise ValueError(f"{path} was made for the features {names}, not {NAMES}")
            return cls(data["weights"], data["scale"], json.loads(str(data["meta"])))
