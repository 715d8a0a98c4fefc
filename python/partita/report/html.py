"""One self-contained HTML page: inline CSS, figures as base64 PNG data URIs, nothing fetched."""

from __future__ import annotations

import base64
import datetime as dt
from html import escape

from .. import __version__, launch_checks
from .headline import BEST_MARK_NOTE

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1150px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
figure { margin: 1.2em 0 2em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
p.finding { font-weight: 600; margin: .3em 0 .5em 0; } figcaption { font-size: .85em; color: #555; }
table { border-collapse: collapse; margin: .6em 0; font-size: .92em; }
td, th { border: 1px solid #ccc; padding: .25em .6em; text-align: right; } td:first-child, th:first-child { text-align: left; }
.meta, .notes li { font-size: .88em; color: #444; } .problems li { color: #a00; } code { font-size: .92em; }
nav li { font-size: .9em; }
"""


def table_html(rows: list[list[str]]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(runs, headline, figures) -> str:
    folders = ", ".join(escape(f.resolve().name) for f in runs.folders)
    suites = []
    for m in runs.manifests:
        desc = m.get("description")
        suites.append(f"<li>suite <b>{escape(str(m.get('suite')))}</b>, started {escape(str(m.get('started', '?')))}"
                      + (f": {escape(desc)}" if desc else "") + "</li>")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>partita report: {folders}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>partita report: {folders}</h1>",
             f"<p class='meta'>written {dt.datetime.now().isoformat(timespec='seconds')} by partita "
             f"{escape(__version__)} (<code>partita report</code>); medians with 95% confidence intervals of the "
             f"median as error bars.</p><ul class='meta'>{''.join(suites)}</ul>",
             "<h2 id='verdict'>Verdict</h2>"]
    if headline.rows:
        parts.append(table_html([headline.header] + headline.rows))
        if headline.marked:
            parts.append(f"<p class='meta'>{BEST_MARK_NOTE}</p>")
    if headline.notes:
        parts.append("<ul class='notes'>" + "".join(f"<li>{escape(n)}</li>" for n in headline.notes) + "</ul>")
    for r in headline.checks:
        parts.append(f"<h3>{escape(launch_checks.title(r))}</h3><p class='finding'>{escape(launch_checks.verdict(r))}</p>"
                     "<ul class='notes'>" + "".join(f"<li>{escape(x)}</li>" for x in launch_checks.per_size_lines(r))
                     + "</ul>" + table_html(launch_checks.table_rows(r)))
    if runs.problems:
        parts.append("<h3>Runs without a result</h3><ul class='problems'>"
                     + "".join(f"<li>{escape(p)}</li>" for p in runs.problems) + "</ul>")
    if figures:
        parts.append("<nav><ol>" + "".join(f"<li><a href='#fig{i}'>{escape(f.title)}</a></li>"
                                           for i, f in enumerate(figures, 1)) + "</ol></nav>")
    else:
        parts.append("<p>These results hold nothing the report draws.</p>")
    for i, f in enumerate(figures, 1):
        img = base64.b64encode(f.png).decode("ascii")
        parts.append(f"<h2 id='fig{i}'>{i}. {escape(f.title)}</h2><figure><p class='finding'>{escape(f.finding)}</p>"
                     f"<img alt='{escape(f.title)}' src='data:image/png;base64,{img}'>"
                     f"{table_html(f.table)}<figcaption>What was run: {escape(f.caption)}</figcaption></figure>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
