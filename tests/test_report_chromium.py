"""The report opened in a real browser (headless Chromium): no console errors, every image decodes
and is not blank. Without Chromium the tests skip with a one-line reason, except under CI=true
(`.ci/run` sets it and installs Chromium first), where its absence is a failure."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

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


def test_demo_ends_with_the_report(report_file):
    page = report_file.read_text(encoding="utf-8")
    for section_id in ("data", "distributions", "bias", "calibration", "agreement", "validity", "truth", "warnings"):
        assert f'<section id="{section_id}">' in page
    assert "LGN loaded from file" in page  # calibrated by the model fitted on the calibration split


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


def test_analysis_sections_render_in_the_browser(tmp_path):
    import pandas as pd

    from xleval.fairness import fairness_gaps
    from xleval.report import analysis_report, write_report

    acc = {"en": 0.9, "de": 0.86, "fr": 0.84, "sw": 0.7, "am": 0.56}
    size = {"en": 300.0, "de": 66.0, "fr": 56.0, "sw": 1.6, "am": 0.8}
    rows = [{"lang": k, "correct": float(i < round(v * 50)), "size": size[k]}
            for k, v in acc.items() for i in range(50)]
    result = fairness_gaps(pd.DataFrame(rows), "correct", "lang", resource="size", n_resamples=50, random_state=0)
    page = tmp_path / "fairness.html"
    write_report(analysis_report("fairness", [result]), page)
    images, messages = image_probe(page, tmp_path)
    assert messages == [] and len(images) == 3
    assert all(img["ok"] and img["variance"] > 100 for img in images), images
