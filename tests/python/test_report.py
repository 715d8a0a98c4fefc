"""partita report / summary: the HTML report, the headline verdict and the findings, from made-up
results folders (missing, failed and single-implementation runs, corrupt files)."""

import json
import re
import subprocess
import sys
from html import unescape

import pytest

from partita import findings
from partita.report import ReportError, verdict, write_report
from partita.runner import fmt_eta, remaining_estimate
from partita.summary import summarize_group

from report_helpers import every_family, p2p, pattern, write_folder
from trace_helpers import rank_doc, send_request, write_trace


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "partita.cli", *args], capture_output=True, text=True, timeout=120)


def images(html: str) -> list[tuple[str, str]]:
    """(alt text, base64 PNG) of every figure."""
    found = re.findall(r"<img alt='([^']*)' src='data:image/png;base64,([A-Za-z0-9+/=]+)'>", html)
    return [(unescape(alt), data) for alt, data in found]


def test_report_has_every_family_with_caption_and_finding(tmp_path):
    folder = every_family(tmp_path / "r")
    out = tmp_path / "report.html"
    p = run_cli("report", str(folder), "-o", str(out))
    assert p.returncode == 0, p.stderr
    html = out.read_text()
    titles = [t for t, _ in images(html)]
    for family in ("Overhead", "Perceived bandwidth", "availability", "Early-bird", "Send mechanisms",
                   "run 'sweep3d'", "run 'halo3d'", "run 'stencil'", "PLogGP model"):
        assert any(family in t for t in titles), (family, titles)
    assert all(len(b) > 1000 for _, b in images(html)), "every figure is a real PNG"
    assert "http://" not in html and "https://" not in html, "nothing fetched when viewed"
    assert html.count("What was run:") == len(titles)
    assert "MPICH Version: 5.0.2" in html and "partita-p2p" in html
    assert "/opt/x/bin" not in html, "commands are shown without the machine's paths"


def test_missing_failed_and_single_implementation(tmp_path):
    folder = write_folder(tmp_path / "r", [
        ("p2p", "native", p2p("native")),
        ("p2p", "partita:timer", "failed"),
        ("p2p", "partita:model", "missing"),
        ("p2p-noise", "native", p2p("native", noisy=True)),
        ("p2p-noise", "partita:none", "unavailable"),
    ])
    out = tmp_path / "r.html"
    runs, h = write_report([folder], out)
    html = out.read_text()
    assert len(images(html)) >= 4
    assert any("partita:timer" in p and "failed" in p for p in runs.problems)
    assert any("partita:model" in p and "missing" in p for p in runs.problems)
    assert any("partita:none" in p and "unavailable" in p for p in runs.problems)
    assert "Runs without a result" in html and "failed" in html
    # one implementation: the overhead finding gives its range, with no comparison
    f = findings.overhead(runs.groups[0].by_impl)
    assert f.startswith("native: from ") and "partita" not in f
    assert [r[0] for r in h.rows] == ["native"] and "*" not in " ".join(h.rows[0]), "nothing to mark best against"


def test_corrupt_result_is_named(tmp_path):
    folder = write_folder(tmp_path / "r", [("p2p", "native", p2p("native"))])
    (folder / "p2p-native.json").write_text("{ not json")
    p = run_cli("report", str(folder))
    assert p.returncode == 2
    assert "partita report: error:" in p.stderr and "p2p-native.json" in p.stderr and "Traceback" not in p.stderr
    p = run_cli("summary", str(folder))  # a result file (not the manifest): exit 1, as docs/suites.md says
    assert p.returncode == 1 and "p2p-native.json" in p.stderr
    with pytest.raises(ReportError, match="p2p-native.json"):
        write_report([folder], tmp_path / "x.html")


def test_findings_follow_the_data(tmp_path):
    a = write_folder(tmp_path / "a", [("p2p", "native", p2p("native", 1.0)),
                                      ("p2p", "partita:model", p2p("partita:model", 0.5))])
    runs, _ = verdict([a])
    before = findings.overhead(runs.groups[0].by_impl)
    assert before.startswith("partita:model: ") and "native" in before and "CIs do not overlap" in before
    # the policy now costs more than native everywhere: the sentence says so, with other numbers
    b = write_folder(tmp_path / "b", [("p2p", "native", p2p("native", 1.0)),
                                      ("p2p", "partita:model", p2p("partita:model", 1.02))])
    after = findings.overhead(verdict([b])[0].groups[0].by_impl)
    assert after != before and after.startswith("no implementation beats native") and "CIs overlap" in after
    nums = lambda s: re.findall(r"\d+\.\d+x", s)  # noqa: E731
    assert nums(before) != nums(after)


def test_pattern_and_availability_findings_follow_the_data():
    fast = {"native": pattern("stencil", {"nonblocking": 450.0, "partitioned": 300.0})}
    slow = {"native": pattern("stencil", {"nonblocking": 450.0, "partitioned": 900.0})}
    assert findings.pattern(fast).startswith("partitioned with 2 threads: 300 us per iteration, 1.50x as fast as")
    assert findings.pattern(slow).startswith("nonblocking is fastest")
    good = {"native": p2p("native", noisy=True), "partita:timer": p2p("partita:timer", 2.0, noisy=True)}
    assert findings.availability(good).startswith("partita:timer gives back 80%")
    early = {"native": p2p("native", noisy=True), "partita:timer": p2p("partita:timer", 1.5, noisy=True)}
    assert findings.early(early) == ("partita:timer: 38% of the message arrived before the join at 4KiB in 8 "
                                     "partitions (early-bird share 55%); native: 25% arrived, early-bird share 50%.")
    tie = {"native": p2p("native", noisy=True), "partita:none": p2p("partita:none", noisy=True)}
    assert findings.early(tie).startswith("native and partita:none: 25% of the message arrived")


def test_zero_metric_is_explained_not_tabulated(tmp_path):
    by_impl = {"native": p2p("native", noisy=True, zero_early=True),
               "partita:none": p2p("partita:none", noisy=True, zero_early=True)}
    text = summarize_group("p2p-noise", by_impl)
    assert "availability is 0 for every implementation" in text
    assert "# p2p-noise: availability (%)" not in text, "no column of zeros"
    assert "delay:500us" in text, "the reason names the run's noise"
    folder = write_folder(tmp_path / "r", [("n", impl, r) for impl, r in by_impl.items()])
    p = run_cli("summary", str(folder))
    assert p.returncode == 0 and "availability is 0 for every implementation" in p.stdout
    assert "availability under noise" not in p.stdout.splitlines()[1], "the headline drops the zero column"
    p = run_cli("summary", str(folder), "--all")
    assert p.returncode == 0 and "# n: perceived_bw (MB/s)" in p.stdout


def test_a_zero_median_with_launches_above_zero_is_not_explained_away():
    """Pooled launches: availability's median 0, but one launch's median 47% (the pooled CI reaches
    it). The verdict said "availability is 0 for every implementation and case" with a reason
    why it must be, and summary --all replaced the table [0.00, 50.50] by that sentence."""
    by_impl = {"native": p2p("native", noisy=True, zero_early=True),
               "partita:timer": p2p("partita:timer", noisy=True, zero_early=True)}
    by_impl["partita:timer"]["results"][1]["metrics"]["availability"]["summary"]["ci95_hi"] = 50.5
    assert not findings.all_zero(by_impl, "availability")
    sentence = findings.availability(by_impl)
    assert "is 0 for every implementation" not in sentence
    assert sentence.startswith("the median availability is 0% for every implementation and case")
    assert "partita:timer's 95% CI reaches 50%" in sentence or "partita:timer's 95% CI reaches 51%" in sentence
    assert "# p2p-noise: availability (%)" in summarize_group("p2p-noise", by_impl)


def test_early_finding_gives_each_tied_implementations_early_bird_share():
    """partita:none and partita:timer both had 50% early at 64KiB: the sentence gave the early-bird
    share of the first alone (1%), as if it were both's (the timer's was 59%)."""
    by_impl = {"native": p2p("native", noisy=True), "partita:none": p2p("partita:none", 1.5, noisy=True),
               "partita:timer": p2p("partita:timer", 1.5, noisy=True)}
    by_impl["partita:timer"]["results"][0]["metrics"]["early_bird"]["summary"]["median"] = 70.0
    sentence = findings.early(by_impl)
    assert sentence.startswith("partita:none and partita:timer: 38% of the message arrived")
    assert "(early-bird share 55% and 70%)" in sentence


def test_headline_marks_the_best(tmp_path):
    folder = write_folder(tmp_path / "r", [
        ("p2p", "native", p2p("native", 1.0)), ("p2p", "partita:model", p2p("partita:model", 0.4)),
        ("p2p-noise", "native", p2p("native", 1.0, noisy=True)),
        ("p2p-noise", "partita:timer", p2p("partita:timer", 1.5, noisy=True))])
    p = run_cli("summary", str(folder))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    model = next(line for line in lines if line.startswith("partita:model"))
    timer = next(line for line in lines if line.startswith("partita:timer"))
    assert "0.54x *" in model                     # 1.2 * 0.4 * (1 + 8/64), the only >1-partition case
    assert timer.count("*") == 2                  # bandwidth and availability
    assert any(line.startswith("- overhead (p2p): partita:model") for line in lines)


def test_no_best_mark_note_without_a_mark(tmp_path):
    """One implementation: nothing is marked best, yet the verdict explained a '*' it did not show."""
    folder = write_folder(tmp_path / "r", [("p2p", "native", p2p("native", 1.0))])
    p = run_cli("summary", str(folder))
    assert p.returncode == 0, p.stderr
    assert "*" not in p.stdout
    write_report([folder], tmp_path / "r.html")
    assert "* best" not in (tmp_path / "r.html").read_text()


def test_several_folders_are_compared(tmp_path):
    a = write_folder(tmp_path / "a", [("p2p", "native", p2p("native", 1.0))])
    b = write_folder(tmp_path / "b", [("p2p", "native", p2p("native", 0.5))])
    runs, h = verdict([a, b])
    assert list(runs.groups[0].by_impl) == ["a/native", "b/native"]
    assert "b/native" in findings.overhead(runs.groups[0].by_impl)


def _laggard_trace(folder, late_us):
    """4 partitions, thread 3 marks partition 3 late_us after the others in every round."""
    rounds = [(r * 10**6, [r * 10**6 + 1000 * p + (late_us * 1000 if p == 3 else 0) for p in range(4)],
               [0, 1, 2, 3], r * 10**6 + 900_000) for r in range(6)]
    return write_trace(folder, [rank_doc(0, 2, [send_request(0, 1, 7, rounds)]), rank_doc(1, 2, [])])


def test_trace_figure_and_its_finding_come_from_the_trace(tmp_path):
    folder = write_folder(tmp_path / "r", [("p2p", "native", p2p("native"))])
    said = {}
    for late in (300, 120):
        out = tmp_path / f"late{late}.html"
        write_report([folder], out, trace=_laggard_trace(tmp_path / f"t{late}", late))
        html = unescape(out.read_text())
        assert "Arrival pattern (trace)" in html and len(images(html)) >= 2
        said[late] = re.search(r"laggard thread 3 \(100% of rounds, ([0-9.]+) µs\)", html)
        assert said[late], html[-2000:]
    assert float(said[300].group(1)) > float(said[120].group(1))


def test_trace_that_cannot_be_read_is_a_clear_error(tmp_path):
    folder = write_folder(tmp_path / "r", [("p2p", "native", p2p("native"))])
    (tmp_path / "trace").mkdir()
    p = run_cli("report", str(folder), "--trace", str(tmp_path / "trace"))
    assert p.returncode == 2 and "partita report: error:" in p.stderr and "trace" in p.stderr
    assert "Traceback" not in p.stderr


def test_remaining_time_estimate():
    class Spec:
        def __init__(self, name):
            self.name = name
    a, b = Spec("a"), Spec("b")
    jobs = [(a, "x", 1, 2), (a, "y", 1, 2), (b, "x", 1, 1), (b, "y", 1, 1)]
    # after the first job (10 s): one more of run a at 10 s, two of b at the mean so far (10 s)
    assert remaining_estimate(jobs, [10.0], 1) == pytest.approx(30.0)
    assert remaining_estimate(jobs, [10.0, 30.0, 1.0], 3) == pytest.approx(1.0)
    assert fmt_eta(5) == "" and fmt_eta(30) == " (about 30 s left)" and fmt_eta(130) == " (about 2 min 10 s left)"


def test_run_writes_the_report_and_states_the_verdict(build, tmp_path):
    suite = tmp_path / "tiny.toml"
    suite.write_text('[[run]]\nname = "p2p"\nprogram = "partita-p2p"\n'
                     'args = ["-m", "4K:8K", "--partitions", "1,4", "-i", "5", "-x", "1"]\n')
    p = subprocess.run([sys.executable, "-m", "partita.cli", "run", "--suite", str(suite), "--out", str(tmp_path),
                        "--build", str(build.path.parent if build.path.is_file() else build.path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    folder = next(tmp_path.glob("*-tiny"))
    assert (folder / "report.html").is_file()
    out = p.stdout
    assert out.index("# verdict of") > out.index("[1/1]"), "the verdict follows the progress"
    assert f"# report: {folder / 'report.html'}" in out
    assert "- overhead (p2p): native: from " in out
    assert json.loads((folder / "manifest.json").read_text())["runs"][0]["status"] == "ok"


def test_a_suites_loggp_run_feeds_the_model_figure(tmp_path):
    """A partita-loggp run writes LogGP parameters, not a result: the summary and the report take
    them for the model section instead of stopping on the schema."""
    from partita.model import Params, Segment
    folder = write_folder(tmp_path / "r", [("p2p", "native", p2p("native")), ("loggp", "native", "missing")])
    segs = [Segment(None, 0.2, 0.5, 0.4, 0.9, 1e-4, 2.5)]
    Params.from_segments(segs, o_pready=0.125).save(folder / "loggp-native.json")
    runs, h = verdict([folder])
    assert [g.name for g in runs.groups] == ["p2p"] and runs.params_files == [folder / "loggp-native.json"]
    out = tmp_path / "r.html"
    write_report([folder], out)
    assert "loggp-native.json" in unescape(out.read_text())   # the model figure names its parameters
    p = run_cli("summary", str(folder), "--all")
    assert p.returncode == 0 and "LogGP parameters in" in p.stdout, p.stderr


@pytest.mark.parametrize("lo, hi, labels", [
    (0.45, 3.2, ["0.5", "1", "2", "3"]),            # an overhead ratio: once only "10^0" was labelled
    (2.5, 35.0, ["3", "5", "10", "20", "30"]),
    (0.3, 12.0, ["0.5", "1", "2", "5", "10"]),
    (0.005, 2000.0, ["0.01", "0.1", "1", "10", "100", "1000"]),  # many decades: powers of ten only
])
def test_log_value_axes_are_labelled_with_plain_numbers(lo, hi, labels):
    from partita.report.figures.common import log_value_axis, panels, pyplot

    fig, axes = panels(2, sharey=True)
    axes[0].plot([1, 2], [lo, hi])
    axes[1].plot([1, 2], [lo * 1.1, hi / 1.1])  # a shared axis: the panels' data together set it
    axes[0].set_ylim(lo, hi)  # exactly: autoscale margins differ between matplotlib versions
    log_value_axis(axes)
    fig.canvas.draw()
    bottom, top = axes[0].get_ylim()
    shown = [t.get_text() for t, v in zip(axes[0].get_yticklabels(), axes[0].get_yticks()) if bottom <= v <= top]
    assert shown == labels, shown
    pyplot().close(fig)


def test_count_axes_are_labelled_with_the_counts():
    from partita.figure_axes import count_axis
    from partita.report.figures.common import panels, pyplot

    fig, axes = panels(1)
    axes[0].plot([1, 2, 4, 8, 16, 32], [1, 0.9, 0.8, 0.7, 0.65, 0.6])
    count_axis(axes[0], [1, 2, 4, 8, 16, 32])
    fig.canvas.draw()
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["1", "2", "4", "8", "16", "32"]
    assert list(axes[0].xaxis.get_minorticklocs()) == []
    pyplot().close(fig)


def test_report_writes_into_an_existing_folder_only(tmp_path):
    folder = every_family(tmp_path / "r")
    out = tmp_path / "report.html"
    p = run_cli("report", str(folder), "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    # the folder of -o is never made (it was, at the file system's root too), nor for a bad input
    never = tmp_path / "never" / "report.html"
    p = run_cli("report", str(folder), "-o", str(never))
    assert p.returncode == 2 and f"-o {never}: the folder {never.parent} does not exist" in p.stderr, p.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    p = run_cli("report", str(empty), "-o", str(empty / "report.html"))
    assert p.returncode == 2 and "manifest.json" in p.stderr
    assert not never.parent.exists() and list(empty.iterdir()) == []


def test_the_one_send_reference_shows_at_a_single_size(tmp_path, monkeypatch):
    """A noisy p2p run of one message size: the single send's dotted line had one point, so the
    legend listed "one send" and nothing was drawn."""
    from partita.report.figures import bandwidth

    one_size = {impl: p2p(impl, gain, noisy=True) for impl, gain in (("native", 1.0), ("partita:timer", 2.0))}
    for doc in one_size.values():
        doc["results"] = [r for r in doc["results"] if r["case"]["bytes"] == 65536]
    folder = write_folder(tmp_path / "r", [("p2p-noise", impl, doc) for impl, doc in one_size.items()])
    drawn = []
    monkeypatch.setattr(bandwidth, "png", lambda fig, legend_from=None: drawn.append(fig) or b"")
    bandwidth.draw(verdict([folder])[0].groups[0])
    ref = [ln for ax in drawn[0].axes for ln in ax.get_lines() if ln.get_label() == "one send"]
    assert len(ref) == 1 and len(ref[0].get_xdata()) == 1
    assert ref[0].get_marker() not in (None, "None", "", " ")
