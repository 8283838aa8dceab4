"""Forms of the explorer's GET parameters that are more than a page number."""
from __future__ import annotations

import math

from django import forms


class CurveRangeForm(forms.Form):
    """A zoomed plot's x range: elapsed seconds, or step ids (curve.json)."""

    x = forms.ChoiceField(choices=[("t", "elapsed seconds"), ("step", "step")], initial="t")
    low = forms.FloatField()
    high = forms.FloatField()

    def clean(self):
        cleaned = super().clean()
        low, high = cleaned.get("low"), cleaned.get("high")
        if low is not None and high is not None:
            if not (math.isfinite(low) and math.isfinite(high)):
                raise forms.ValidationError("low and high must be finite numbers")
            if low > high:
                raise forms.ValidationError("low must not be above high")
        return cleaned
