"""Render the configuration reference (docs/configuration.md) from the pydantic models.

The docs build calls :func:`render` through ``scripts/docs_hooks.py``, so the page can
never drift from the code. ``python scripts/config_reference.py`` prints it.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from dreammem.config import DreamMemConfig

INTRO = """# Configuration reference

Generated from the pydantic models in `dreammem/config.py` when the docs are built.
Every model is frozen and forbids unknown keys, so a typo in a config file is a
`ConfigError`, never a silently ignored setting. Pass a config in code:

```python
from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, RecallConfig

config = DreamMemConfig(recall=RecallConfig(rrf_k=20))
memory = DreamMemory("./memory", config=config)
```

or load a TOML (or JSON) file with `dreammem.config.load_config(path)`; the CLI takes
`--config FILE`. Each section below is a TOML table:

```toml
[recall]
rrf_k = 20
path_weights = { vector = 0.5, graph = 0.25 }

[graph]
type = "neo4j"
uri = "bolt://127.0.0.1:7687"
```
"""


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join("..." if a is Ellipsis else _type_name(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "see below"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def model_table(model: type[BaseModel]) -> str:
    """A Markdown table of one model's fields: key, type, default, description."""
    lines = ["| key | type | default | description |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        description = _cell(field.description or "")
        lines.append(
            f"| `{name}` | `{_cell(_type_name(field.annotation))}` | {_default(field)} | {description} |"
        )
    return "\n".join(lines)


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The model classes of a section's annotation (several for a tagged union)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def render() -> str:
    """The whole configuration reference page."""
    parts = [INTRO]
    for section, field in DreamMemConfig.model_fields.items():
        parts.append(f"## `[{section}]`\n")
        for model in _models(field.annotation):
            doc = " ".join((model.__doc__ or "").split("\n\n")[0].split())
            heading = f"### `{model.__name__}`\n\n" if len(_models(field.annotation)) > 1 else ""
            parts.append(f"{heading}{doc} (`dreammem.config.{model.__name__}`)\n\n{model_table(model)}\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(render())
