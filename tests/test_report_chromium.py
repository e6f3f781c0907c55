"""The report opened in a real browser (headless Chromium): no console errors, every image decodes
and is not blank, and the layout holds at 1280 and 400 px for the demo report and a WMT21 report
(nothing wider than the page except tables that scroll, every figure titled and its axes
labelled and readable, the summary first, the leaderboard sortable). Without Chromium the tests
skip with a one-line reason, except under CI=true (`.ci/run` sets it and installs Chromium first),
where its absence is a failure.

Headless Chromium will not make a window narrower than 500 px, so the 400 px view loads the page
into a 400 px wide same-origin frame (``srcdoc``) of a wider window: the frame is the viewport."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from xleval.stats import Resampling

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]

# Appended to a copy of the page: after load, draw every image onto a canvas and record its size
# and pixel statistics in a <pre>, which --dump-dom returns.
PROBE = """<script>
window.addEventListener("load", async () => {
  const out = [];
  for (const img of document.images) {
    try { await img.decode(); } catch (e) {}
    const r = {w: img.naturalWidth, h: img.naturalHeight, ok: img.complete && img.naturalWidth > 0};
    try {
      const c = document.createElement("canvas"); c.width = r.w; c.height = r.h;
      const ctx = c.getContext("2d"); ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, r.w, r.h); ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, r.w, r.h).data; let s = 0, s2 = 0, n = 0;
      for (let i = 0; i < d.length; i += 4) { const v = (d[i] + d[i+1] + d[i+2]) / 3; s += v; s2 += v * v; n++; }
      r.variance = s2 / n - (s / n) ** 2;
    } catch (e) { r.error = String(e); }
    out.push(r);
  }
  const el = document.createElement("pre"); el.id = "xleval-probe"; el.textContent = JSON.stringify(out);
  document.body.appendChild(el);
});
</script>"""


# Appended to a copy of the page: after load, record the layout facts the tests check in a <pre> of the
# top document (the frame's parent at 400 px), which --dump-dom returns.
LAYOUT_PROBE = """<script>
window.addEventListener("load", async () => {
  const vw = document.documentElement.clientWidth;
  const out = {viewport: vw, scrollWidth: document.documentElement.scrollWidth, overflow: [], scrollers: [],
               images: [], sections: [], sort: null};
  for (const el of document.body.querySelectorAll("*")) {
    if (el.tagName === "SCRIPT") continue;
    const box = el.closest(".table-scroll");
    if (box && box !== el) continue;  // inside a scrolling container: may be wider, the container scrolls
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > vw + 0.5 || r.left < -0.5) {
      const name = `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}`;
      out.overflow.push(`${name} ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
  }
  for (const s of document.querySelectorAll(".table-scroll")) {
    const t = s.querySelector("table");
    out.scrollers.push({overflowX: getComputedStyle(s).overflowX,
                        fits: s.getBoundingClientRect().right <= vw + 0.5,
                        scrolls: t.getBoundingClientRect().width > s.clientWidth + 0.5
                                 && s.scrollWidth > s.clientWidth});
  }
  for (const img of document.images) {
    try { await img.decode(); } catch (e) {}
    const r = {alt: img.alt, natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
               ok: img.complete && img.naturalWidth > 0, svgTitle: null, axes: 0, unlabelled: 0};
    const src = img.getAttribute("src");
    if (src.startsWith("data:image/svg+xml")) {
      const text = src.includes(";base64,") ? atob(src.slice(src.indexOf(",") + 1))
                                            : decodeURIComponent(src.slice(src.indexOf(",") + 1));
      const svg = new DOMParser().parseFromString(text, "image/svg+xml");
      const drawn = (root, sel) => Array.from(root.querySelectorAll(sel)).some((g) => g.querySelector("use, path"));
      const figX = drawn(svg, 'g[id="xlabel-fig"]'), figY = drawn(svg, 'g[id="ylabel-fig"]');
      const axes = Array.from(svg.querySelectorAll('g[id^="axes_"]'));
      const title = svg.querySelector("svg > title");
      r.svgTitle = title ? title.textContent : "";
      r.axes = axes.length;
      r.unlabelled = axes.filter((a) => !((figX || drawn(a, 'g[id^="xlabel-"]')) &&
                                          (figY || drawn(a, 'g[id^="ylabel-"]')))).length;
    }
    out.images.push(r);
  }
  out.sections = Array.from(document.querySelectorAll("main > section")).map((s) => s.id);
  const table = document.querySelector("table.sortable");
  if (table) {
    // where the calibrated score (the column the ranking reads) ends, before any sideways scroll
    const names = Array.from(table.tHead.rows[0].cells).map((c) => c.textContent);
    const at = names.findIndex((n) => n.startsWith("calibrated") || n.startsWith("score"));
    out.calibratedRight = at < 0 ? null : table.tBodies[0].rows[0].cells[at].getBoundingClientRect().right;
    const head = table.tHead.rows[0].cells[0];
    head.click(); head.click();  // the first column (rank), descending
    const last = table.tBodies[0].rows[0].cells[0].textContent;
    head.click();
    out.sort = {descendingFirst: last, ascendingFirst: table.tBodies[0].rows[0].cells[0].textContent,
                rows: table.tBodies[0].rows.length};
  }
  const top = window.parent.document;
  const pre = top.createElement("pre"); pre.id = "xleval-layout"; pre.textContent = JSON.stringify(out);
  top.body.appendChild(pre);
});
</script>"""


def _chromium() -> str:
    exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    if exe is None:
        reason = ("no Chromium found (chromium, chromium-browser or google-chrome on PATH; "
                  "Debian: apt-get install chromium)")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI=true requires it (.ci/run installs it)", pytrace=False)
        pytest.skip(reason)
    return exe


def _run(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    cmd = [_chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def console_messages(stderr: str) -> list[str]:
    """Console output of the page (Chromium logs it as INFO:CONSOLE lines with --enable-logging)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def image_probe(page: Path, tmp_path: Path) -> tuple[list[dict], list[str]]:
    probed = tmp_path / (page.stem + "-probe.html")
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = _run(probed, tmp_path, "--dump-dom")
    found = re.search(r'<pre id="xleval-probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"probe did not run; chromium stderr tail: {proc.stderr[-2000:]}"
    return json.loads(found.group(1)), console_messages(proc.stderr)


def _at_width(page: Path, tmp_path: Path, width: int, extra: str = "") -> Path:
    """The page (plus ``extra`` before </body>) as seen in a ``width`` px viewport: itself at >= 500 px,
    else inside a ``width`` px wide same-origin frame of a 500 px window."""
    text = page.read_text(encoding="utf-8").replace("</body>", extra + "</body>")
    out = tmp_path / f"{page.stem}-{width}.html"
    if width >= 500:
        out.write_text(text, encoding="utf-8")
    else:
        out.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe style="border:0;width:{width}px;'
                       f'height:2400px" srcdoc="{html.escape(text, quote=True)}"></iframe></body></html>',
                       encoding="utf-8")
    return out


def layout_probe(page: Path, tmp_path: Path, width: int) -> tuple[dict, list[str]]:
    probed = _at_width(page, tmp_path, width, LAYOUT_PROBE)
    proc = _run(probed, tmp_path, "--dump-dom", "--hide-scrollbars", f"--window-size={max(width, 500)},2400")
    found = re.search(r'<pre id="xleval-layout">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"layout probe did not run; chromium stderr tail: {proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1))), console_messages(proc.stderr)


def screenshot(page: Path, tmp_path: Path, width: int) -> np.ndarray:
    """A screenshot (grey levels in [0, 1]) of the page at ``width`` px, 2400 px tall; kept in
    $XLEVAL_SCREENSHOTS when that is set."""
    import matplotlib.image

    shot = tmp_path / f"{page.stem}-{width}.png"
    proc = _run(_at_width(page, tmp_path, width), tmp_path, f"--screenshot={shot}", "--hide-scrollbars",
                f"--window-size={max(width, 500)},2400")
    assert shot.exists(), f"no screenshot; chromium stderr tail: {proc.stderr[-2000:]}"
    if os.environ.get("XLEVAL_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["XLEVAL_SCREENSHOTS"]) / shot.name)
    return matplotlib.image.imread(shot)[:, :width, :3].mean(axis=2)


def screenshot_variance(page: Path, tmp_path: Path) -> tuple[float, list[str]]:
    import matplotlib.image

    shot = tmp_path / (page.stem + ".png")
    proc = _run(page, tmp_path, f"--screenshot={shot}", "--window-size=1200,1600")
    assert shot.exists(), f"no screenshot; chromium stderr tail: {proc.stderr[-2000:]}"
    pixels = matplotlib.image.imread(shot)[..., :3].mean(axis=2)
    return float(np.var(pixels)), console_messages(proc.stderr)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    """The report `xleval demo` writes (the demo's last step)."""
    from xleval.demo import run_demo

    result = run_demo(tmp_path_factory.mktemp("demo"), seed=0)
    return Path(result.files["report"])


@pytest.fixture(scope="module")
def wmt_report_file(tmp_path_factory, wmt21_segments) -> Path:
    """`xleval report` of WMT21 to-English chrF against raw DA (150 segments per pair, every MT system)."""
    from xleval.metrics import score_frame
    from xleval.report import mt_report, write_report

    df = wmt21_segments
    rows = df[(df["tgt_lang"] == "en") & ~df["is_human"] & (df["seg_id"] <= 150)].reset_index(drop=True)
    scored = score_frame(rows, ["chrf"]).frame.rename(columns={"human_raw": "human"})
    path = tmp_path_factory.mktemp("wmt") / "wmt21-report.html"
    write_report(mt_report(scored, "chrf", by="lp", human="human", resampling=Resampling(n_resamples=200)), path)
    return path


@pytest.fixture(scope="module")
def leaderboard_file(tmp_path_factory, report_file) -> Path:
    """`xleval leaderboard --format html` of the demo's evaluation split (verdict, table, warnings)."""
    import pandas as pd

    from xleval.leaderboard import leaderboard
    from xleval.report import leaderboard_report, write_report

    ev = pd.read_parquet(report_file.parent / "calibrated.parquet")
    path = tmp_path_factory.mktemp("board") / "leaderboard.html"
    write_report(leaderboard_report(leaderboard(ev, "metric", "tgt_lang", human="human",
                                                resampling=Resampling(n_resamples=200))), path)
    return path


def test_demo_ends_with_the_report(report_file):
    page = report_file.read_text(encoding="utf-8")
    for section_id in ("summary", "leaderboard", "warnings", "human-scores", "distributions", "bias", "calibration",
                       "agreement", "validity", "validity-system", "truth", "data"):
        assert f'<section id="{section_id}">' in page
    assert "saved LGN (by tgt_lang)" in page  # calibrated by the model fitted on the calibration split


PAGES = {"demo": ("report_file", 4), "wmt21": ("wmt_report_file", 4), "leaderboard": ("leaderboard_file", 1)}


@pytest.mark.parametrize("which", [pytest.param(w, marks=pytest.mark.data) if w == "wmt21" else w for w in PAGES])
@pytest.mark.parametrize("width", [1280, 400])
def test_layout_holds_at_desktop_and_phone_width(which, width, request, tmp_path):
    fixture, n_figures = PAGES[which]
    page = request.getfixturevalue(fixture)
    facts, messages = layout_probe(page, tmp_path, width)
    assert messages == []
    assert facts["viewport"] == width and facts["scrollWidth"] <= width  # the page itself never scrolls sideways
    assert facts["overflow"] == []  # no element wider than the viewport, except inside a scrolling table container
    assert facts["scrollers"] and all(s["overflowX"] == "auto" and s["fits"] for s in facts["scrollers"])
    if width == 400:
        assert any(s["scrolls"] for s in facts["scrollers"])  # the leaderboard is wider than a phone: it scrolls
        # ... but rank, its interval, group, system and the calibrated score are seen without scrolling
        assert facts["calibratedRight"] is not None and facts["calibratedRight"] <= width, facts["calibratedRight"]
    assert facts["sections"][0] == "summary" and facts["sections"][1] == "leaderboard"
    assert len(facts["images"]) >= n_figures
    for img in facts["images"]:
        assert img["ok"] and img["svgTitle"] and img["alt"].startswith(img["svgTitle"]), img
        assert img["axes"] >= 1 and img["unlabelled"] == 0, img  # every panel has an x and a y label
        assert img["shown"] <= width
        # the figures scale with the page; their 10-11 pt text stays >= 8 px: shown at >= 0.6 of natural size
        assert img["shown"] >= 0.6 * min(img["natural"], width - 40), img
    sort = facts["sort"]
    assert sort["ascendingFirst"] == "1" and sort["descendingFirst"] == str(sort["rows"])
    pixels = screenshot(page, tmp_path, width)
    assert pixels.shape[1] == width and np.var(pixels) > 0.005  # a blank page has variance 0


def test_report_has_no_console_errors_and_images_are_not_blank(report_file, tmp_path):
    images, messages = image_probe(report_file, tmp_path)
    assert messages == []
    assert len(images) == report_file.read_text(encoding="utf-8").count("<img ") >= 2
    for img in images:
        assert img["ok"] and img["w"] > 100 and img["h"] > 100, img
        assert "error" not in img and img["variance"] > 100, img  # plotted lines/text, not a flat area
    variance, messages = screenshot_variance(report_file, tmp_path)
    assert messages == [] and variance > 0.005  # pixels in [0, 1]: a blank page has variance 0


def test_the_checks_catch_broken_pages(tmp_path):
    # The detectors themselves: a console error, a broken image and a blank image must be seen.
    blank_svg = ("data:image/svg+xml;base64,"
                 "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHdpZHRoPSIyMDAiIGhlaWdodD0iMjAwIi8+")
    page = tmp_path / "bad.html"
    page.write_text(f'<html><body><img src="{blank_svg}"><img src="data:image/png;base64,AAAA">'
                    '<script>console.error("boom")</script></body></html>', encoding="utf-8")
    images, messages = image_probe(page, tmp_path)
    assert any('"boom"' in m for m in messages)
    assert images[0]["ok"] and images[0]["variance"] == 0
    assert not images[1]["ok"]


def test_the_layout_checks_catch_broken_pages(tmp_path):
    # A wide block that does not scroll, a figure without title or axis labels, no summary first.
    from matplotlib.figure import Figure as MplFigure

    from xleval.report import figure_from_matplotlib

    fig = MplFigure(figsize=(3, 2))
    fig.add_subplot().plot([1, 3, 2])
    bare = figure_from_matplotlib(fig, "t").content.replace("<title>t</title>", "")
    from urllib.parse import quote

    page = tmp_path / "bad.html"
    page.write_text('<html><body><main><section id="data"><div style="width:900px">wide</div>'
                    f'<img src="data:image/svg+xml;charset=utf-8,{quote(bare)}"></section></main></body></html>',
                    encoding="utf-8")
    facts, _ = layout_probe(page, tmp_path, 400)
    assert facts["viewport"] == 400 and any(o.startswith("div ") for o in facts["overflow"])
    assert facts["images"][0]["svgTitle"] == "" and facts["images"][0]["unlabelled"] == 1
    assert facts["sections"] == ["data"] and facts["sort"] is None


def test_analysis_sections_render_in_the_browser(tmp_path):
    import pandas as pd

    from xleval.fairness import fairness_gaps
    from xleval.report import analysis_report, write_report

    acc = {"en": 0.9, "de": 0.86, "fr": 0.84, "sw": 0.7, "am": 0.56}
    size = {"en": 300.0, "de": 66.0, "fr": 56.0, "sw": 1.6, "am": 0.8}
    rows = [{"lang": k, "correct": float(i < round(v * 50)), "size": size[k]}
            for k, v in acc.items() for i in range(50)]
    result = fairness_gaps(pd.DataFrame(rows), "correct", "lang", resource="size",
                           resampling=Resampling(n_resamples=50, random_state=0))
    page = tmp_path / "fairness.html"
    write_report(analysis_report("fairness", [result]), page)
    images, messages = image_probe(page, tmp_path)
    assert messages == [] and len(images) == 3
    assert all(img["ok"] and img["variance"] > 100 for img in images), images
