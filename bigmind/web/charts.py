"""Inline SVG charts for the local profile page: standard library only, deterministic.

Every function returns one ``<svg>`` element (SVG namespace, ``role="img"``, ``aria-label``,
``<title>``, a ``viewBox`` with ``width="100%"``) ready to embed with Jinja2's ``|safe``.
All text that reaches the markup goes through :func:`html.escape`. The shapes carry their
own ``fill``/``stroke`` attributes, plus class names so a stylesheet can override them
(CSS beats presentation attributes).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta

__all__ = ["bars", "calibration", "cloud_size", "compact", "heatmap", "line"]

SVG_NS = "http://www.w3.org/2000/svg"
FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
TEXT = "#57606a"
GRID = "#d0d7de"
ACCENT = "#2da44e"
LEVELS = ("#ebedf0", "#9be9a8", "#40c463", "#30a14e", "#216e39")  # GitHub's green scale
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MAX_X_LABELS = 8
X_LABEL_CHARS = 12


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(x: float) -> str:
    """A coordinate: at most two decimals, no trailing zeros, never "-0"."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _svg(kind: str, width: float, height: float, label: str, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="{SVG_NS}" class="chart chart-{kind}" role="img" aria-label="{_e(label)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" width="100%" '
        f'style="display:block;max-width:{_n(width)}px;height:auto" '
        f'font-family="{_e(FONT)}" font-size="10">'
        f"<title>{_e(title)}</title>" + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, cls: str, anchor: str = "start", extra: str = "") -> str:
    return (
        f'<text x="{_n(x)}" y="{_n(y)}" class="{cls}" text-anchor="{anchor}" '
        f'fill="{TEXT}"{extra}>{_e(text)}</text>'
    )


def _number(x: float) -> str:
    """A value for a tooltip: exact, with thousands separators."""
    if not math.isfinite(x):
        return str(x)
    if x == int(x):
        return f"{int(x):,}"
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def compact(n: float) -> str:
    """950 -> "950", 1200 -> "1.2k", 15300 -> "15k", 2_500_000 -> "2.5M"; keeps the sign."""
    if not math.isfinite(n):
        return str(n)
    a = abs(n)
    r = round(a, 2)
    if r < 1000:
        body = str(int(r)) if r == int(r) else f"{r:.2f}".rstrip("0").rstrip(".")
    else:
        body = ""
        for div, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "B"), (1e12, "T")):
            s = a / div
            v = round(s, 1) if s < 10 else float(round(s))
            if v < 1000 or suffix == "T":
                body = (str(int(v)) if v == int(v) else f"{v:.1f}") + suffix
                break
    return body if n >= 0 or body == "0" else "-" + body


def cloud_size(
    count: int, max_count: int, *, smallest: float = 0.85, largest: float = 2.2
) -> float:
    """Font size (rem) for a topic cloud, log-scaled from ``smallest`` to ``largest``."""
    if max_count <= 0 or count <= 0:
        return round(smallest, 2)
    share = math.log1p(min(count, max_count)) / math.log1p(max_count)
    return round(smallest + (largest - smallest) * share, 2)


# -- heatmap ------------------------------------------------------------------------------


def _levels(counts: Sequence[int]) -> tuple[int, int, int, int]:
    """Quartile thresholds (nearest rank) of the non-zero counts, plus their maximum."""
    nz = sorted(c for c in counts if c > 0)
    if not nz:
        return (0, 0, 0, 0)

    def rank(p: float) -> int:
        return nz[max(math.ceil(p * len(nz)) - 1, 0)]

    return (rank(0.25), rank(0.5), rank(0.75), nz[-1])


def _level(count: int, thresholds: tuple[int, int, int, int]) -> int:
    """0 for no sessions; the busiest day is always 4 (so a uniform history is all 4);
    otherwise 1 + how many quartile thresholds the count exceeds."""
    if count <= 0:
        return 0
    if count >= thresholds[3]:
        return 4
    return 1 + sum(count > q for q in thresholds[:3])


def _long_date(d: date) -> str:
    return f"{WEEKDAYS[d.weekday()]} {d.day} {MONTHS[d.month - 1]} {d.year}"


def heatmap(days: Mapping[date, int], end: date, *, weeks: int = 53) -> str:
    """A contribution graph of sessions per day: one column per ISO week (Monday on top),
    the last column holds ``end``; the first drawn day is ``end - 7 * (weeks - 1)`` days
    (end - 364 for the default 53 weeks). Cells: ``class="lvl-0"`` … ``"lvl-4"``."""
    if weeks < 1:
        raise ValueError("weeks must be at least 1")
    if isinstance(end, datetime):
        end = end.date()
    counts: dict[date, int] = {}
    for day, n in days.items():
        key = day.date() if isinstance(day, datetime) else day
        counts[key] = counts.get(key, 0) + int(n)
    first = end - timedelta(days=7 * (weeks - 1))
    monday0 = first - timedelta(days=first.weekday())
    span = [first + timedelta(days=i) for i in range((end - first).days + 1)]
    values = [max(counts.get(d, 0), 0) for d in span]
    thresholds = _levels(values)

    step, size, left, top = 13, 11, 30, 18
    width = left + weeks * step + 12  # room for a month label on the last column
    grid_bottom = top + 7 * step
    height = grid_bottom + 22
    body: list[str] = []

    # Month labels: at each column whose Monday starts a new month; the first column too
    # when the next label is far enough away not to collide.
    mondays = [monday0 + timedelta(weeks=c) for c in range(weeks)]
    starts = [c for c in range(1, weeks) if mondays[c].month != mondays[c - 1].month]
    if not starts or (starts[0] >= 3 and mondays[starts[0]].month != first.month):
        body.append(_text(left, top - 6, MONTHS[first.month - 1], "month"))
    for c in starts:
        body.append(_text(left + c * step, top - 6, MONTHS[mondays[c].month - 1], "month"))
    for row in (0, 2, 4):
        body.append(_text(left - 4, top + row * step + 9, WEEKDAYS[row], "wday", "end"))

    for d, n in zip(span, values, strict=True):
        lvl = _level(n, thresholds)
        x = left + ((d - monday0).days // 7) * step
        y = top + d.weekday() * step
        noun = "session" if n == 1 else "sessions"
        body.append(
            f'<rect x="{x}" y="{y}" width="{size}" height="{size}" rx="2" '
            f'data-date="{d.isoformat()}" data-count="{n}" class="lvl-{lvl}" '
            f'fill="{LEVELS[lvl]}"><title>{n} {noun} on {_e(_long_date(d))}</title></rect>'
        )

    # Legend: Less ▢▢▢▢▢ More, bottom right.
    lx = width - 12 - 30 - 5 * step
    ly = grid_bottom + 6
    body.append(_text(lx - 4, ly + 9, "Less", "legend", "end"))
    for lvl, colour in enumerate(LEVELS):
        body.append(
            f'<rect x="{lx + lvl * step}" y="{ly}" width="{size}" height="{size}" rx="2" '
            f'class="legend-swatch lvl-{lvl}" fill="{colour}"/>'
        )
    body.append(_text(lx + 5 * step + 2, ly + 9, "More", "legend"))

    total, active = sum(values), sum(1 for v in values if v > 0)
    label = (
        f"Activity heatmap: {total:,} sessions on {active} days "
        f"from {first.isoformat()} to {end.isoformat()}"
    )
    return _svg("heatmap", width, height, label, "Sessions per day", body)


# -- bars and lines -----------------------------------------------------------------------


def _nice_max(v: float) -> float:
    """The smallest 1, 2 or 5 × 10^n that is >= v (1 for v <= 0)."""
    if not math.isfinite(v) or v <= 0:
        return 1.0
    exp = math.floor(math.log10(v))
    for m in (1, 2, 5, 10):
        candidate = m * 10.0**exp
        if candidate >= v * (1 - 1e-9):
            return float(f"{candidate:.12g}")
    return 10.0 ** (exp + 1)  # pragma: no cover - the loop always returns


def _short(label: str) -> str:
    return label if len(label) <= X_LABEL_CHARS else label[: X_LABEL_CHARS - 1] + "…"


class _Frame:
    """The shared axes of bars() and line(): plot box, y scale, ticks, thinned x labels."""

    width, left, right, top, bottom = 600, 44, 24, 12, 22

    def __init__(self, height: int, top_value: float) -> None:
        self.height = max(height, 80)
        self.plot_w = self.width - self.left - self.right
        self.base = self.height - self.bottom
        self.plot_h = self.base - self.top
        self.ymax = _nice_max(top_value)

    def y(self, v: float) -> float:
        return self.base - max(v, 0.0) / self.ymax * self.plot_h

    def axes(self) -> list[str]:
        x0, x1 = self.left, self.width - self.right
        out = [
            f'<line x1="{x0}" y1="{_n(self.top)}" x2="{x1}" y2="{_n(self.top)}" class="grid" '
            f'stroke="{GRID}" stroke-dasharray="3 3"/>',
            f'<line x1="{x0}" y1="{_n(self.base)}" x2="{x1}" y2="{_n(self.base)}" class="axis" '
            f'stroke="{TEXT}"/>',
            _text(x0 - 6, self.base + 3, "0", "tick y-tick", "end"),
            _text(x0 - 6, self.top + 3, compact(self.ymax), "tick y-tick", "end"),
        ]
        return out

    def x_labels(self, xs: Sequence[float], labels: Sequence[str]) -> list[str]:
        every = max(math.ceil(len(labels) / MAX_X_LABELS), 1)
        return [
            _text(x, self.height - 7, _short(lab), "tick x-tick", "middle")
            for i, (x, lab) in enumerate(zip(xs, labels, strict=True))
            if i % every == 0
        ]


def _tip(point_label: str, value: float, unit: str) -> str:
    return f"{point_label}: {_number(value)} {unit}".rstrip()


def _empty(kind: str, label: str, height: int, message: str, width: int = 600) -> str:
    h = max(height, 80)
    text = _text(width / 2, h / 2 + 4, message, "empty", "middle", ' font-size="13"')
    return _svg(kind, width, h, f"{label}: {message}", label, [text])


def _has_data(values: Sequence[float]) -> bool:
    return any(math.isfinite(v) and v > 0 for v in values)


def bars(
    points: Sequence[tuple[str, float]], *, label: str, unit: str = "", height: int = 160
) -> str:
    """A vertical bar chart; y runs from 0 to a nice max (1, 2 or 5 × 10^n). Negative values
    are drawn as empty bars (their tooltip still tells the value)."""
    values = [float(v) for _, v in points]
    if not _has_data(values):
        return _empty("bars", label, height, "No data yet")
    frame = _Frame(height, max(values))
    slot = frame.plot_w / len(points)
    bar_w = max(slot * 0.8, 1.0) if slot >= 2 else slot
    body = frame.axes()
    xs: list[float] = []
    for i, ((name, v), value) in enumerate(zip(points, values, strict=True)):
        x = frame.left + i * slot + (slot - bar_w) / 2
        xs.append(x + bar_w / 2)
        y = frame.y(value)
        body.append(
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(bar_w)}" height="{_n(frame.base - y)}" '
            f'class="bar" fill="{ACCENT}"><title>{_e(_tip(name, v, unit))}</title></rect>'
        )
    body += frame.x_labels(xs, [name for name, _ in points])
    aria = f"{label}: bar chart of {len(points)} values, highest {compact(max(values))} {unit}"
    return _svg("bars", frame.width, frame.height, aria.rstrip(), label, body)


def line(
    points: Sequence[tuple[str, float]],
    *,
    label: str,
    unit: str = "",
    height: int = 160,
    cumulative: bool = False,
) -> str:
    """A line chart with an area fill; ``cumulative=True`` plots the running total."""
    raw = [float(v) for _, v in points]
    values: list[float] = []
    running = 0.0
    for v in raw:
        running += v
        values.append(running if cumulative else v)
    if not _has_data(values):
        return _empty("line", label, height, "No data yet")
    frame = _Frame(height, max(values))
    n = len(points)
    gap = frame.plot_w / (n - 1) if n > 1 else 0.0
    xs = [frame.left + i * gap if n > 1 else frame.left + frame.plot_w / 2 for i in range(n)]
    ys = [frame.y(v) for v in values]
    coords = " ".join(f"{_n(x)},{_n(y)}" for x, y in zip(xs, ys, strict=True))
    body = frame.axes()
    area = f"{_n(xs[0])},{_n(frame.base)} {coords} {_n(xs[-1])},{_n(frame.base)}"
    body.append(f'<polygon points="{area}" class="area" fill="{ACCENT}" fill-opacity="0.15"/>')
    body.append(
        f'<polyline points="{coords}" class="line" fill="none" stroke="{ACCENT}" '
        f'stroke-width="2" stroke-linejoin="round"/>'
    )
    for (name, _), x, y, v, step in zip(points, xs, ys, values, raw, strict=True):
        tip = _tip(name, v, unit)
        if cumulative:
            tip += f" (+{_number(step)})" if step >= 0 else f" ({_number(step)})"
        body.append(
            f'<circle cx="{_n(x)}" cy="{_n(y)}" r="3" class="point" fill="#fff" '
            f'stroke="{ACCENT}" stroke-width="1.5"><title>{_e(tip)}</title></circle>'
        )
    body += frame.x_labels(xs, [name for name, _ in points])
    kind = "running total" if cumulative else "line chart"
    aria = f"{label}: {kind} of {n} values, highest {compact(max(values))} {unit}"
    return _svg("line", frame.width, frame.height, aria.rstrip(), label, body)


# -- calibration --------------------------------------------------------------------------

_NUMBER = re.compile(r"\d*\.?\d+")


def _as_float(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _midpoint(band: str) -> float | None:
    """The middle of "lo–hi" (en dash; hi clamped to 1.0), or None if it has no number."""
    nums = [float(m) for m in _NUMBER.findall(band)[:2]]
    if not nums:
        return None
    lo, hi = (nums[0], nums[0]) if len(nums) == 1 else (nums[0], nums[1])
    return min(max((lo + min(hi, 1.0)) / 2, 0.0), 1.0)


def calibration(bands: Sequence[Mapping[str, object]]) -> str:
    """Stated confidence (band midpoint) against the observed confirmed rate, one dot per
    band with resolved hypotheses (area ∝ resolved), over a dashed "perfectly calibrated"
    diagonal."""
    title = "Calibration: stated confidence vs confirmed rate"
    dots: list[tuple[float, float, float, str]] = []
    for row in bands:
        band = str(row.get("band", ""))
        resolved = _as_float(row.get("resolved")) or 0.0
        confirmed = _as_float(row.get("confirmed")) or 0.0
        mid = _midpoint(band)
        if resolved <= 0 or mid is None:
            continue
        rate = _as_float(row.get("confirmed_rate"))
        if rate is None:
            rate = confirmed / resolved
        rate = min(max(rate, 0.0), 1.0)
        tip = (
            f"Stated {band}: {_number(confirmed)} of {_number(resolved)} confirmed "
            f"({round(rate * 100)}%)"
        )
        dots.append((mid, rate, resolved, tip))
    if not dots:
        return _empty("calibration", title, 312, "No resolved hypotheses yet", width=340)

    width, height, left, top, size = 340, 312, 52, 36, 240
    x0, y0 = left, top + size  # the plot's origin, bottom left

    def px(v: float) -> float:
        return x0 + v * size

    def py(v: float) -> float:
        return y0 - v * size

    body = [
        f'<rect x="{x0}" y="{top}" width="{size}" height="{size}" class="plot" fill="none" '
        f'stroke="{GRID}"/>',
        f'<line x1="{x0}" y1="{y0}" x2="{_n(px(1))}" y2="{_n(py(1))}" class="diagonal" '
        f'stroke="{TEXT}" stroke-dasharray="5 4"><title>Perfectly calibrated</title></line>',
        _text(px(1), 12, "- - perfectly calibrated", "legend", "end"),
    ]
    for v, name in ((0.0, "0"), (0.5, "0.5"), (1.0, "1")):
        body.append(_text(px(v), y0 + 14, name, "tick x-tick", "middle"))
        body.append(_text(x0 - 6, py(v) + 3, name, "tick y-tick", "end"))
    body.append(_text(px(0.5), y0 + 32, "Stated confidence", "axis-title", "middle"))
    cy = top + size / 2
    rotate = f' transform="rotate(-90 {_n(x0 - 30)} {_n(cy)})"'
    body.append(_text(x0 - 30, cy, "Confirmed", "axis-title", "middle", rotate))
    biggest = max(r for _, _, r, _ in dots)
    for mid, rate, resolved, tip in dots:
        radius = 4 + 10 * math.sqrt(resolved / biggest)
        body.append(
            f'<circle cx="{_n(px(mid))}" cy="{_n(py(rate))}" r="{_n(radius)}" class="dot" '
            f'fill="{ACCENT}" fill-opacity="0.7" stroke="#1a7f37">'
            f"<title>{_e(tip)}</title></circle>"
        )
    total = sum(r for _, _, r, _ in dots)
    aria = f"{title}: {len(dots)} confidence bands, {_number(total)} resolved hypotheses"
    return _svg("calibration", width, height, aria, title, body)
