"""The profile page's inline SVG charts: well-formed, accessible, escaped, and correct."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import date, datetime, timedelta
from itertools import pairwise

import pytest

from bigmind.web import charts
from bigmind.web.charts import bars, calibration, cloud_size, compact, heatmap, line

NS = "{http://www.w3.org/2000/svg}"
END = date(2026, 3, 3)  # a Tuesday


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    assert root.get("role") == "img"
    assert root.get("aria-label")
    assert root.get("viewBox", "").startswith("0 0 ")
    assert root.get("width") == "100%"
    assert root.find(f"{NS}title") is not None
    return root


def cells(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter(f"{NS}rect") if r.get("data-date")]


def texts(root: ET.Element, cls: str) -> list[ET.Element]:
    return [t for t in root.iter(f"{NS}text") if cls in (t.get("class") or "").split()]


def title_of(el: ET.Element) -> str:
    t = el.find(f"{NS}title")
    assert t is not None
    return t.text or ""


# -- heatmap ------------------------------------------------------------------------------


@pytest.mark.parametrize("end", [END, date(2024, 12, 31), date(2025, 6, 1), date(2024, 2, 29)])
def test_heatmap_draws_exactly_the_last_365_days(end: date) -> None:
    root = parse(heatmap({}, end))
    drawn = [date.fromisoformat(r.get("data-date", "")) for r in cells(root)]
    assert len(drawn) == 365 == len(set(drawn))
    assert min(drawn) == drawn[0] == end - timedelta(days=364)
    assert max(drawn) == drawn[-1] == end
    assert all(r.get("class") == "lvl-0" for r in cells(root))


def test_heatmap_grid_is_iso_weeks_with_monday_on_top() -> None:
    root = parse(heatmap({}, END))
    by_date = {r.get("data-date"): r for r in cells(root)}
    xs = sorted({float(r.get("x", "")) for r in by_date.values()})
    assert len(xs) == 53
    end_cell = by_date[END.isoformat()]
    assert float(end_cell.get("x", "")) == xs[-1]
    monday = by_date[(END - timedelta(days=1)).isoformat()]  # 2026-03-02
    assert monday.get("x") == end_cell.get("x")
    assert float(monday.get("y", "")) < float(end_cell.get("y", ""))
    sunday = by_date[(END - timedelta(days=2)).isoformat()]
    assert float(sunday.get("x", "")) == xs[-2]
    ys = sorted({float(r.get("y", "")) for r in by_date.values()})
    assert len(ys) == 7 and float(sunday.get("y", "")) == ys[-1]


def test_heatmap_levels_follow_quartiles_of_nonzero_counts() -> None:
    days = {END - timedelta(days=i): n for i, n in enumerate([1, 2, 3, 4, 5, 6, 7, 8], start=1)}
    days[END - timedelta(days=400)] = 1000  # outside the window: ignored entirely
    root = parse(heatmap(days, END))
    level = {r.get("data-count"): r.get("class") for r in cells(root) if r.get("data-count") != "0"}
    assert level == {
        "1": "lvl-1",
        "2": "lvl-1",
        "3": "lvl-2",
        "4": "lvl-2",
        "5": "lvl-3",
        "6": "lvl-3",
        "7": "lvl-4",
        "8": "lvl-4",
    }
    zero = [r for r in cells(root) if r.get("data-count") == "0"]
    assert len(zero) == 365 - 8 and {r.get("class") for r in zero} == {"lvl-0"}


def test_heatmap_uniform_history_is_top_level_and_busiest_day_is_always_4() -> None:
    root = parse(heatmap({END: 3, END - timedelta(days=9): 3}, END))
    assert {r.get("class") for r in cells(root) if r.get("data-count") == "3"} == {"lvl-4"}
    root = parse(heatmap({END: 1, END - timedelta(days=1): 1, END - timedelta(days=2): 9}, END))
    got = {r.get("data-date"): r.get("class") for r in cells(root) if r.get("data-count") != "0"}
    assert got[(END - timedelta(days=2)).isoformat()] == "lvl-4"
    assert got[END.isoformat()] == "lvl-1"


def test_heatmap_tooltips_and_datetime_keys() -> None:
    days: dict[date, int] = {date(2026, 3, 2): 1, datetime(2026, 3, 1, 15, 30): 2}
    root = parse(heatmap(days, END))
    by_date = {r.get("data-date"): r for r in cells(root)}
    assert title_of(by_date["2026-03-02"]) == "1 session on Mon 2 Mar 2026"
    assert by_date["2026-03-02"].get("data-count") == "1"
    assert title_of(by_date["2026-03-01"]) == "2 sessions on Sun 1 Mar 2026"
    assert title_of(by_date["2026-03-03"]) == "0 sessions on Tue 3 Mar 2026"


def test_heatmap_month_labels_across_a_year_boundary() -> None:
    root = parse(heatmap({}, END))
    months = texts(root, "month")
    names = [t.text for t in months]
    assert names.count("Jan") == 1 and "Dec" in names
    assert names.index("Dec") < names.index("Jan")
    by_date = {r.get("data-date"): r for r in cells(root)}
    jan = months[names.index("Jan")]
    # 2026-01-05 is the first Monday of January 2026.
    assert jan.get("x") == by_date["2026-01-05"].get("x")
    # No two labels collide (columns are 13 apart; a month spans at least 4 of them).
    xs = [float(t.get("x", "")) for t in months]
    assert all(b - a >= 3 * 13 for a, b in pairwise(xs))


def test_heatmap_weekday_labels_and_legend() -> None:
    root = parse(heatmap({END: 2}, END))
    assert [t.text for t in texts(root, "wday")] == ["Mon", "Wed", "Fri"]
    assert [t.text for t in texts(root, "legend")] == ["Less", "More"]
    swatches = [r for r in root.iter(f"{NS}rect") if "legend-swatch" in (r.get("class") or "")]
    assert [s.get("class") for s in swatches] == [f"legend-swatch lvl-{i}" for i in range(5)]
    assert len({s.get("fill") for s in swatches}) == 5


def test_heatmap_weeks_parameter() -> None:
    root = parse(heatmap({}, END, weeks=4))
    drawn = [r.get("data-date") for r in cells(root)]
    assert len(drawn) == 22 and drawn[0] == (END - timedelta(days=21)).isoformat()
    with pytest.raises(ValueError):
        heatmap({}, END, weeks=0)


# -- bars and line ------------------------------------------------------------------------

EVIL = "<script>alert(1)</script>&\"'"


def test_labels_are_escaped_and_stay_text() -> None:
    for svg in (
        bars([(EVIL, 3.0)], label=EVIL, unit=EVIL),
        line([(EVIL, 3.0), ("b", 4.0)], label=EVIL, unit=EVIL),
        calibration([{"band": EVIL + " 0.5–0.7", "resolved": 2, "confirmed": 1}]),
    ):
        assert "<script>" not in svg
        root = parse(svg)
        assert not any(el.tag.endswith("script") for el in root.iter())
        alltext = [el.text or "" for el in root.iter()] + [root.get("aria-label", "")]
        assert any(EVIL in t for t in alltext)
    root = parse(bars([(EVIL, 3.0)], label=EVIL, unit=EVIL))
    assert title_of(root) == EVIL
    assert root.get("aria-label", "").startswith(EVIL)
    assert [t.text for t in texts(root, "x-tick")] == [EVIL[:11] + "…"]


def test_bars_one_rect_per_point_with_tooltips() -> None:
    root = parse(bars([("W1", 3), ("W2", 0), ("W3", 12.5)], label="Sessions", unit="sessions"))
    rects = [r for r in root.iter(f"{NS}rect") if r.get("class") == "bar"]
    assert [title_of(r) for r in rects] == ["W1: 3 sessions", "W2: 0 sessions", "W3: 12.5 sessions"]
    heights = [float(r.get("height", "")) for r in rects]
    assert heights[1] == 0 and heights[0] < heights[2]
    # Bars share the baseline.
    assert len({float(r.get("y", "")) + float(r.get("height", "")) for r in rects}) == 1


def test_bars_thin_x_labels_for_many_points() -> None:
    points = [(f"W{i:02d}", float(i)) for i in range(52)]
    root = parse(bars(points, label="Sessions per week"))
    shown = [t.text for t in texts(root, "x-tick")]
    assert 1 < len(shown) <= 8 and shown[0] == "W00"
    xs = [float(t.get("x", "")) for t in texts(root, "x-tick")]
    assert all(b - a > 60 for a, b in pairwise(xs))
    few = parse(bars(points[:5], label="x"))
    assert [t.text for t in texts(few, "x-tick")] == ["W00", "W01", "W02", "W03", "W04"]


@pytest.mark.parametrize(
    ("top", "shown"),
    [(0.3, "0.5"), (1, "1"), (3, "5"), (7, "10"), (10, "10"), (37, "50"), (120, "200"),
     (1000, "1k"), (1001, "2k"), (4800, "5k"), (2_100_000, "5M")],
)  # fmt: skip
def test_y_axis_max_is_a_nice_number(top: float, shown: str) -> None:
    for svg in (bars([("a", top / 2), ("b", top)], label="x"), line([("a", top)], label="x")):
        ticks = [t.text for t in texts(parse(svg), "y-tick")]
        assert ticks == ["0", shown]


@pytest.mark.parametrize("chart", [bars, line])
@pytest.mark.parametrize("points", [[], [("a", 0.0), ("b", 0.0)]])
def test_empty_or_zero_input_says_no_data(
    chart: Callable[..., str], points: list[tuple[str, float]]
) -> None:
    root = parse(chart(points, label="Tokens saved"))
    assert [t.text for t in texts(root, "empty")] == ["No data yet"]
    assert not list(root.iter(f"{NS}circle")) and not texts(root, "x-tick")


def test_line_cumulative_is_monotonic() -> None:
    points = [(f"W{i}", float(v)) for i, v in enumerate([5, 0, 3, 10, 0, 1, 7])]
    plain = parse(line(points, label="Tokens", unit="tokens"))
    ys = [float(c.get("cy", "")) for c in plain.iter(f"{NS}circle")]
    assert len(ys) == 7 and ys[1] > ys[0]  # the dip shows when not cumulative
    root = parse(line(points, label="Tokens", unit="tokens", cumulative=True))
    circles = list(root.iter(f"{NS}circle"))
    cys = [float(c.get("cy", "")) for c in circles]
    assert all(b <= a for a, b in pairwise(cys))
    assert cys[-1] < cys[0]
    assert title_of(circles[3]) == "W3: 18 tokens (+10)"
    assert [t.text for t in texts(root, "y-tick")] == ["0", "50"]
    assert root.find(f"{NS}polygon") is not None and root.find(f"{NS}polyline") is not None


def test_line_single_point() -> None:
    root = parse(line([("only", 2500.0)], label="Tokens", unit="tokens"))
    (circle,) = root.iter(f"{NS}circle")
    assert title_of(circle) == "only: 2,500 tokens"


# -- calibration --------------------------------------------------------------------------


def test_calibration_dots_diagonal_and_tooltips() -> None:
    bands: list[dict[str, object]] = [
        {"band": "0.0–0.3", "resolved": 0, "confirmed": 0, "confirmed_rate": None},
        {"band": "0.3–0.5", "resolved": 1, "confirmed": 0, "confirmed_rate": 0.0},
        {"band": "0.5–0.7", "resolved": 20, "confirmed": 11, "confirmed_rate": None},
        {"band": "0.7–0.9", "resolved": 5, "confirmed": 4, "confirmed_rate": 0.8},
        {"band": "0.9–1.01", "resolved": 3, "confirmed": 3, "confirmed_rate": 1.0},
    ]
    root = parse(calibration(bands))
    dots = [c for c in root.iter(f"{NS}circle") if c.get("class") == "dot"]
    assert len(dots) == 4
    assert title_of(dots[2]) == "Stated 0.7–0.9: 4 of 5 confirmed (80%)"
    assert title_of(dots[1]) == "Stated 0.5–0.7: 11 of 20 confirmed (55%)"
    radii = [float(d.get("r", "")) for d in dots]
    assert radii[1] == max(radii) and radii[0] == min(radii)
    diag = [el for el in root.iter(f"{NS}line") if el.get("class") == "diagonal"]
    assert len(diag) == 1 and diag[0].get("stroke-dasharray")
    d = diag[0]
    x0, y0, x1, y1 = (float(d.get(k, "")) for k in ("x1", "y1", "x2", "y2"))
    # x = band midpoint on the same scale as the diagonal; 1.01 clamps to 1.0 -> 0.95.
    cx = float(dots[3].get("cx", ""))
    assert cx == pytest.approx(x0 + 0.95 * (x1 - x0), abs=0.01)
    assert float(dots[3].get("cy", "")) == pytest.approx(y1, abs=0.01)  # rate 1.0 = top
    assert float(dots[0].get("cy", "")) == pytest.approx(y0, abs=0.01)  # rate 0.0 = bottom
    assert [t.text for t in texts(root, "axis-title")] == ["Stated confidence", "Confirmed"]
    assert [t.text for t in texts(root, "x-tick")] == ["0", "0.5", "1"]


def test_calibration_without_resolved_bands() -> None:
    for bands in ([], [{"band": "0.5–0.7", "resolved": 0, "confirmed": 0}]):
        root = parse(calibration(bands))
        assert [t.text for t in texts(root, "empty")] == ["No resolved hypotheses yet"]
        assert not list(root.iter(f"{NS}circle"))


# -- helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0"), (7, "7"), (950, "950"), (999, "999"), (12.5, "12.5"), (0.25, "0.25"),
     (1000, "1k"), (1200, "1.2k"), (9999, "10k"), (15300, "15k"), (999_499, "999k"),
     (999_999, "1M"), (2_500_000, "2.5M"), (3_000_000, "3M"), (4_200_000_000, "4.2B"),
     (-1200, "-1.2k"), (-5, "-5"), (-0.001, "0"), (1200.0, "1.2k")],
)  # fmt: skip
def test_compact(n: float, text: str) -> None:
    assert compact(n) == text


def test_cloud_size_bounds_and_monotonicity() -> None:
    assert cloud_size(0, 10) == 0.85
    assert cloud_size(5, 0) == 0.85
    assert cloud_size(-3, 10) == 0.85
    assert cloud_size(10, 10) == 2.2
    assert cloud_size(50, 10) == 2.2
    assert cloud_size(1, 1) == 2.2
    sizes = [cloud_size(c, 1000) for c in range(1, 1001)]
    assert all(0.85 <= s <= 2.2 for s in sizes)
    assert all(b >= a for a, b in pairwise(sizes))
    assert sizes[9] > 0.85 + (2.2 - 0.85) * 0.3  # log scale: 10 of 1000 is well above linear
    assert all(round(s, 2) == s for s in sizes)
    assert cloud_size(3, 9, smallest=1.0, largest=3.0) == round(
        1 + 2 * math.log(4) / math.log(10), 2
    )


def test_output_is_deterministic() -> None:
    def render() -> list[str]:
        points = [(f"W{i}", float(i * i % 7)) for i in range(30)]
        return [
            heatmap({END - timedelta(days=i): i % 5 for i in range(200)}, END),
            bars(points, label="a", unit="b"),
            line(points, label="a", unit="b", cumulative=True),
            calibration([{"band": "0.5–0.7", "resolved": 3, "confirmed": 2}]),
        ]

    assert render() == render()


def test_public_api() -> None:
    assert sorted(charts.__all__) == [
        "bars",
        "calibration",
        "cloud_size",
        "compact",
        "heatmap",
        "line",
    ]
