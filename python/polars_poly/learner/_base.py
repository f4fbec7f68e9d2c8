"""The estimators' shared base: how a fitted model is stored and restored."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from polars_poly._estimator import (
    ClassifierMixin,
)
from polars_poly._internal import Learner
from polars_poly._lazy import np
from polars_poly._params import (
    fields,
)
from polars_poly._persist import (
    CLASSES,
    COUNT,
    NAME,
    NAMES,
    NUMBER,
    StateCheck,
    dict_of,
    kind_of,
    list_of,
    optional,
    plain,
)
from polars_poly.learner._data import (
    _LEGACY_NAMES,
)
from polars_poly.learner._inspection import _Inspection
from polars_poly.learner._options import _engine_params
from polars_poly.multiclass import OneAgainstAll

# Options the engine's stored options give back (``_engine_params``), not the estimator text.
_FROM_ENGINE = ("expansion", "interactions", "ffm", "bits", "max_bits")


class _BaseSGD(_Inspection):
    """The estimators' shared base."""

    def _estimator_text(self) -> str:
        """What the model file keeps beside the engine's sections: the options only the Python
        layer knows and the fitted column layout (nothing the engine stores)."""
        params = {
            f.name: plain(getattr(self, f.name))
            for f in fields(self)
            if not f.metadata.get("engine") and f.name not in _FROM_ENGINE
        }
        for listed in ("features", "categorical"):
            if params.get(listed) is not None and not isinstance(params[listed], str):
                params[listed] = list(params[listed])
        state = {
            "estimator": type(self).__name__,
            "params": params,
            "feature_columns": getattr(self, "feature_columns_", None),
            "numeric_columns": getattr(self, "_numeric_columns", []),
            "categorical_columns": getattr(self, "_categorical_columns", {}),
            "n_features_in": getattr(self, "n_features_in_", None),
            "classes": self._classes_list(),
            "pass_loss": list(self.pass_loss_),
            "holdout_loss": list(self.holdout_loss_),
            "rows_seen": self._rows_seen,
            # The command line's Vowpal Wabbit reader flags (n-grams, ...), which reading a
            # file for the model needs again.
            "vw_reader": self.__dict__.get("_vw_reader"),
        }
        learner = self._check_fitted()
        if isinstance(learner, OneAgainstAll):
            state["multiclass_errors"] = list(learner.errors)
        apple = self._apple()
        if apple is not None:
            # The engine stores the settings the model trained with (a race's winner: its
            # ranking, max_degree 1 for the linear model); the estimator's own may differ.
            state["apple_race"] = {"ranking": apple.ranking, "max_degree": apple.max_degree}
        return json.dumps(state)

    def _classes_list(self) -> list[Any] | None:
        return None

    # What _estimator_text writes, as load checks it.
    _stored_state: ClassVar[dict[str, StateCheck]] = {
        "feature_columns": optional(NAMES),
        "numeric_columns": NAMES,
        "categorical_columns": dict_of(NAME, "a mapping of column names to category kinds"),
        "sparse_columns": kind_of(bool, what="True or False"),  # files before mixed columns
        "n_features_in": optional(COUNT),
        "classes": optional(CLASSES),
        "pass_loss": list_of(NUMBER, "a list of numbers"),
        "holdout_loss": list_of(NUMBER, "a list of numbers"),
        "rows_seen": COUNT,
        "vw_reader": optional(dict_of(lambda _: None, "a mapping of reader options")),
        "multiclass_errors": list_of(NUMBER, "two numbers", at_least=2),
        "apple_race": dict_of(lambda _: None, "a mapping of apple settings"),
    }

    def _restore(self, learner: Learner | OneAgainstAll, state: dict[str, Any]) -> None:
        classes = state["classes"]
        heads = len(learner.heads) if isinstance(learner, OneAgainstAll) else 2
        if (classes is None) == isinstance(self, ClassifierMixin):
            raise ValueError(f"classes {classes!r} for a {type(self).__name__}")
        if classes is not None and len(classes) != heads:
            raise ValueError(f"{len(classes)} classes for a model of {heads}")
        columns = set(state["feature_columns"] or [])
        stray = set(state.get("numeric_columns", [])) | set(state.get("categorical_columns", {}))
        if not stray <= columns:
            raise ValueError(f"columns {sorted(stray - columns)} are not among the features")
        self._learner = learner
        if isinstance(learner, OneAgainstAll):
            errors, weight = state.get("multiclass_errors", (0.0, 0.0))
            learner.errors = (float(errors), float(weight))
        self.feature_columns_ = state["feature_columns"]
        if "numeric_columns" in state:
            self._numeric_columns = state["numeric_columns"]
        else:  # before mixed columns: all sparse or all numeric
            numeric = not state["sparse_columns"] and state["feature_columns"] is not None
            self._numeric_columns = list(state["feature_columns"]) if numeric else []
        self._categorical_columns = state.get("categorical_columns", {})
        # Files before 2026-11-27 have none for numeric columns: counted as a fit counts them.
        self._count_features_in(state["n_features_in"])
        self.namespaces_ = list(learner.options()["namespaces"])
        self.pass_loss_ = state["pass_loss"]
        self.holdout_loss_ = state["holdout_loss"]
        self.stopped_early_ = False
        self._rows_seen = state["rows_seen"]
        if state.get("vw_reader"):
            self._vw_reader = state["vw_reader"]
        if state["classes"] is not None:
            self.classes_ = np.asarray(state["classes"])
        self._finish_fit()

    def _fitted_model(self) -> Learner | OneAgainstAll:
        return self._check_fitted()

    @classmethod
    def _from_model(cls, model: Any, state: dict[str, Any]) -> Any:
        own = {f.name for f in fields(cls) if not f.metadata.get("engine")}
        stored = {_LEGACY_NAMES.get(k, k): v for k, v in state["params"].items()}
        params = {k: v for k, v in stored.items() if k in own and k not in _FROM_ENGINE}
        engine = _engine_params(model.options(), state.get("apple_race"))
        estimator = cls(**params, **engine)
        estimator._restore(model, state)
        return estimator
