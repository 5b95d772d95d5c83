"""What code outside a model reads off its field definitions, typed: `_meta.get_field` answers
any kind of field (or a relation), so the length limit a check repeats is read here, once."""

from __future__ import annotations

from django.db import models


def char_max_length(model: type[models.Model], name: str) -> int:
    """The `max_length` of the model's text field `name`: the limit a check outside the form repeats."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.CharField) or field.max_length is None:
        raise TypeError(f"{model.__name__}.{name} is not a text field with a max_length")
    return field.max_length
