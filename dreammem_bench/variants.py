"""Recall variants named on a benchmark's command line (``--variants``), each a recall configuration.

A variant recalls the same store as the configured method with another
:class:`~dreammem.config.RecallConfig`, so one run scores many settings on the same
data. Specs, separated by ``;``:

- ``-name``: the configured paths without that one;
- ``only:a+b``: just those paths;
- ``preset:name``: a named preset (:data:`dreammem.recall.recipe.PRESETS`);
- ``key=value``: one field changed, the value in JSON (``rrf_k=60``,
  ``path_weights={"vector": 1.0}``, ``lexical_evidence=true``); several joined by ``&``.
"""

from __future__ import annotations

import json

import typer
from pydantic import ValidationError as PydanticValidationError

from dreammem.config import RecallConfig

__all__ = ["parse_variant", "parse_variants"]


def parse_variant(spec: str, base: RecallConfig) -> RecallConfig:
    """A recall configuration from one variant spec (see the module docstring).

    Raises:
        typer.BadParameter: The spec is malformed or gives an invalid configuration.
    """
    try:
        return _parse(spec, base)
    except (ValueError, PydanticValidationError) as exc:
        raise typer.BadParameter(f"variant {spec!r}: {exc}") from exc


def _parse(spec: str, base: RecallConfig) -> RecallConfig:
    if spec.startswith("-"):
        if spec[1:] not in base.active_paths:
            raise ValueError(f"{spec[1:]!r} is not among the configured paths {base.active_paths}")
        kept = tuple(p for p in base.active_paths if p != spec[1:])
        return RecallConfig.model_validate({**base.model_dump(), "paths": kept})
    if spec.startswith("only:"):
        return RecallConfig.model_validate({**base.model_dump(), "paths": tuple(spec[5:].split("+"))})
    if spec.startswith("preset:"):
        return RecallConfig.model_validate({**base.model_dump(), "preset": spec[7:], "paths": ()})
    if "=" in spec:
        changes = dict(part.partition("=")[::2] for part in spec.split("&"))
        return RecallConfig.model_validate(
            {**base.model_dump(), **{k: json.loads(v) for k, v in changes.items()}}
        )
    raise typer.BadParameter(f"unknown variant {spec!r} (use -path, only:a+b, preset:name or key=value)")


def parse_variants(specs: str, base: RecallConfig) -> list[tuple[str, RecallConfig]]:
    """Each ``;``-separated spec with its configuration, in order."""
    return [(spec, parse_variant(spec, base)) for spec in (s.strip() for s in specs.split(";")) if spec]
