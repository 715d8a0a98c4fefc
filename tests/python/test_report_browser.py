"""The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
scripts/install-chromium.sh under `make test` when root) loads a generated report with a small
checker script appended, which records script and resource errors and, for every <img>, whether
it decoded, its natural size and how many colours it has; the DOM is dumped after the load.
Then the report itself is screenshotted at its full height (report.png in the test's tmp dir)."""

import json
import re
import shutil
import subprocess
from html import unescape

import pytest

from partita.report import write_report

from report_helpers import every_family

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium: the report's browser check (rendering, image decoding, screenshot) is left "
    "out; run scripts/install-chromium.sh as root (make test does) or apt-get install chromium")

# Appended to a copy of the report: the report itself has no script.
CHECKER = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || (e.target && e.target.tagName) || e.type)), true);
const __consoleError = console.error;
console.error = (...a) => { window.__errors.push('console.error: ' + a.join(' ')); __consoleError(...a); };
function __colours(im) {
  if (!im.complete || im.naturalWidth === 0) return 0;   // broken: drawImage would throw
  const c = document.createElement('canvas'); c.width = 64; c.height = 64;
  const g = c.getContext('2d'); g.drawImage(im, 0, 0, 64, 64);
  const d = g.getImageData(0, 0, 64, 64).data; const seen = new Set();
  for (let k = 0; k < d.length; k += 4) seen.add((d[k] << 16) | (d[k + 1] << 8) | d[k + 2]);
  return seen.size;
}
window.addEventListener('load', () => {
  const images = Array.from(document.images).map(im => ({alt: im.alt, complete: im.complete,
    width: im.naturalWidth, height: im.naturalHeight, colours: __colours(im)}));
  const out = document.createElement('pre'); out.id = 'partita-check';
  out.textContent = JSON.stringify({images: images, errors: window.__errors,
                                    height: document.documentElement.scrollHeight});
  document.body.appendChild(out);
});
</script>
"""


def chromium(tmp_path, *args):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=180)


def test_report_renders_every_figure_in_chromium(tmp_path):
    report = tmp_path / "report.html"
    write_report([every_family(tmp_path / "results")], report)
    html = report.read_text()
    expected = html.count("<img ")
    assert expected >= 9

    checked = tmp_path / "checked.html"
    checked.write_text(html.replace("</body>", CHECKER + "</body>"))
    p = chromium(tmp_path, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom",
                 checked.as_uri())
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r'<pre id="partita-check">(.*?)</pre>', p.stdout, re.S)
    assert m, "the page never finished loading"
    state = json.loads(unescape(m.group(1)))
    assert state["errors"] == [], state["errors"]
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    assert len(state["images"]) == expected
    for im in state["images"]:
        assert im["complete"] and im["width"] > 100 and im["height"] > 100, im
        assert im["colours"] > 2, f"figure {im['alt']!r} is blank"

    shot = tmp_path / "report.png"
    p = chromium(tmp_path, f"--window-size=1200,{min(state['height'] + 50, 30000)}", f"--screenshot={shot}",
                 report.as_uri())
    assert p.returncode == 0, p.stderr[-2000:]
    assert shot.stat().st_size > 20000
    print(f"screenshot of the report: {shot}")
