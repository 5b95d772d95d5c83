"""The report's charts: SVG drawn on the server, labels escaped, no style attribute (strict CSP)."""

from __future__ import annotations

import re
from decimal import Decimal

from commissions.charts import columns_svg, horizontal_bars_svg


def test_bars_are_as_long_as_their_share_of_the_largest_and_labels_are_escaped():
    svg = horizontal_bars_svg(
        title="Şirkete göre", items=[("<script>x</script>", Decimal("2000.00")), ("Anka", Decimal("1000.00"))]
    )
    widths = [float(width) for width in re.findall(r'<rect class="chart-bar" [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == 2 * widths[1] > 0
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "2.000,00 ₺" in svg and "style=" not in svg


def test_columns_have_a_caption_and_an_empty_month_has_no_height():
    svg = columns_svg(title="Aya göre", items=[("Oca 26", Decimal("12500.00")), ("Şub 26", Decimal("0.00"))])
    heights = re.findall(r'<rect class="chart-bar" [^>]*height="([\d.]+)"', svg)
    assert [float(height) for height in heights] == [180.0, 0.0]
    assert "12,5 bin" in svg and "Şub 26" in svg and "style=" not in svg
