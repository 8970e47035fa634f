"""Charts as inline SVG (no script, no build step): rating over games played, and a row's small trend line."""

from __future__ import annotations

from html import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def line_chart(series: dict[str, list[tuple[float, float]]], width: int = 640, height: int = 240,
               x_label: str = "games in the league", y_label: str = "Elo") -> str:
    """An SVG with one polyline per series (``{label: [(x, y), ...]}``), axes and a legend."""
    points = [p for pts in series.values() for p in pts]
    if not points:
        return '<p class="muted">No rating yet: it appears after the first games.</p>'
    left, right, top, bottom = 56, 12, 12, 36
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    pad = max(10.0, (y1 - y0) * 0.1)
    y0, y1 = y0 - pad, y1 + pad
    w, h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * w

    def py(y: float) -> float:
        return top + (1 - (y - y0) / (y1 - y0)) * h

    out = [f'<svg class="chart" role="img" aria-label="{escape(y_label)} over {escape(x_label)}" '
           f'xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>']
    for i in range(5):
        yv = y0 + (y1 - y0) * i / 4
        out.append(f'<line x1="{left}" x2="{left + w}" y1="{py(yv):.1f}" y2="{py(yv):.1f}" stroke="#e4e4e4"/>'
                   f'<text x="{left - 6}" y="{py(yv) + 4:.1f}" font-size="11" text-anchor="end">{yv:+.0f}</text>')
    for xv, anchor in ((x0, "start"), ((x0 + x1) / 2, "middle"), (x1, "end")):  # the ends stay inside the frame
        out.append(f'<text x="{px(xv):.1f}" y="{top + h + 16}" font-size="11" text-anchor="{anchor}">{xv:.0f}</text>')
    out.append(f'<text x="{left + w / 2:.1f}" y="{height - 4}" font-size="11" text-anchor="middle">'
               f'{escape(x_label)}</text>')
    for k, (label, pts) in enumerate(series.items()):
        colour = COLOURS[k % len(COLOURS)]
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}"/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{colour}">'
                       f'<title>{escape(label)}: {y:+.1f} after {x:.0f} games</title></circle>')
        out.append(f'<text x="{left + 8}" y="{top + 16 + 14 * k}" font-size="12" fill="{colour}">'
                   f'{escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def sparkline(points: list[tuple[float, float]], label: str = "", width: int = 120, height: int = 26) -> str:
    """A small inline SVG of one series (``[(games, elo), ...]``, oldest first) for a table
    cell: the line, its last point, and a title naming the first and last values."""
    if not points:
        return '<span class="muted">-</span>'
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    pad = 2.5

    def px(x: float) -> float:
        return pad + ((x - x0) / (x1 - x0) if x1 > x0 else 1.0) * (width - 2 * pad)

    def py(y: float) -> float:
        return pad + (1 - ((y - y0) / (y1 - y0) if y1 > y0 else 0.5)) * (height - 2 * pad)

    coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
    rise = ys[-1] - ys[0]
    colour = "#1b7f2a" if rise > 0.5 else "#b3261e" if rise < -0.5 else "#555"
    title = (f"{label}: " if label else "") + (f"{ys[0]:+.0f} after {xs[0]:.0f} games, {ys[-1]:+.0f} after "
                                               f"{xs[-1]:.0f} games ({len(points)} fits)")
    return (f'<svg class="spark" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{escape(title)}</title>'
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{coords}"/>'
            f'<circle cx="{px(xs[-1]):.1f}" cy="{py(ys[-1]):.1f}" r="2.2" fill="{colour}"/></svg>')
