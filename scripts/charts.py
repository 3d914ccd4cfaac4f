"""Grouped bar charts as plain SVG (no plotting library), for the docs' benchmarks page."""

from __future__ import annotations

from html import escape

PALETTE = ("#4051b5", "#e07b39", "#3aa17e", "#b5405e", "#8c8c8c", "#7b5ea7")
_ROW = 20  # height of one bar, px
_GAP = 14  # space between category groups, px
_LABEL = 150  # width of the category labels, px
_PLOT = 420  # width of the plotting area, px


def bar_chart(title: str, categories: list[str], series: dict[str, list[float]], unit: str) -> str:
    """Horizontal grouped bars: one group per category, one bar per series, values printed."""
    top = max((v for values in series.values() for v in values), default=1.0) or 1.0
    group = _ROW * len(series) + _GAP
    legend_y = 40 + group * len(categories)
    height = legend_y + 22 * len(series) + 10
    width = _LABEL + _PLOT + 70
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" role="img">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for c, category in enumerate(categories):
        y0 = 34 + c * group
        out.append(f'<text x="{_LABEL - 8}" y="{y0 + group / 2}" text-anchor="end">{escape(category)}</text>')
        for s, (name, values) in enumerate(series.items()):
            value = values[c]
            length = _PLOT * value / top
            y = y0 + s * _ROW
            colour = PALETTE[s % len(PALETTE)]
            out.append(
                f'<rect x="{_LABEL}" y="{y}" width="{length:.1f}" height="{_ROW - 3}" fill="{colour}">'
                f"<title>{escape(name)}: {value:g} {escape(unit)}</title></rect>"
            )
            out.append(f'<text x="{_LABEL + length + 4:.1f}" y="{y + _ROW - 7}">{value:g}</text>')
    for s, name in enumerate(series):
        y = legend_y + 22 * s
        out.append(f'<rect x="{_LABEL}" y="{y}" width="14" height="14" fill="{PALETTE[s % len(PALETTE)]}"/>')
        out.append(f'<text x="{_LABEL + 20}" y="{y + 12}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)
