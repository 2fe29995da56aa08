"""`numpile report DIR`: one web page of the compile traces in DIR (written by trace_log.py under
NUMPILE_TRACE_DIR), as tlparse makes one of torch.compile's.

The page stands alone (inline CSS, no script, nothing fetched) so it opens offline and can be
attached to an issue. At the top a summary of every run: functions, compiles, graphs, graph
breaks, recompiles, compile time. Then per process and per function the user compiled, its
compiles in order: the frame (the function, a resume function after a break, a callee), the
recompile reason, the graph break with the user's source lines, the guards, the graph, the code
the backend generated, and the compile times. Every text from a trace is escaped.
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

# A compile's seconds leave out the recompile reason logged just before it and the logging after
# it; a log line this much before the compile's timed start still belongs to it (trace_log.py's
# [Note: which compile a log line belongs to]).
SLACK = 0.01


@dataclass
class Compile:
    """One cache entry compiled: its compile line and the log lines written while it ran."""

    line: dict
    logs: list = field(default_factory=list)

    def messages(self, category: str) -> list[str]:
        return [log["message"] for log in self.logs if log["category"] == category]


@dataclass
class Function:
    """A function (or model) the user compiled, and every compile made for it."""

    name: str
    defined_at: str | None
    compiles: list = field(default_factory=list)


@dataclass
class Run:
    """One process's trace file."""

    path: Path
    info: dict
    functions: list
    between: list   # log lines written outside any compile


def read_run(path: Path) -> Run:
    """A trace file, its log lines sorted into the compiles that wrote them."""
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError:   # the last line of a process killed while writing it
            continue
    info = lines[0] if lines and lines[0].get("kind") == "run" else {}
    functions: dict = {}
    pending: dict = {}   # thread -> log lines not yet claimed by a compile
    for line in lines:
        if line.get("kind") == "log":
            pending.setdefault(line["thread"], []).append(line)
        elif line.get("kind") == "compile":
            start = line["time"] - line["seconds"] - SLACK
            waiting = pending.pop(line["thread"], [])
            # earlier lines stay pending: a compile that began before this one (it compiled a
            # callee) may still claim them
            pending[line["thread"]] = [log for log in waiting if log["time"] < start]
            key = (line["function_id"], line["function"])
            if key not in functions:
                functions[key] = Function(line["function"], line.get("defined_at"))
            functions[key].compiles.append(Compile(line, [log for log in waiting if log["time"] >= start]))
    between = sorted((log for logs in pending.values() for log in logs), key=lambda log: log["time"])
    return Run(path, info, list(functions.values()), between)


def read_runs(directory: Path) -> list[Run]:
    return [read_run(p) for p in sorted(Path(directory).glob("*.jsonl"))]


def write(directory, output) -> Path:
    """Read the traces in `directory`, write the page to `output`; FileNotFoundError when there are none."""
    runs = read_runs(Path(directory))
    if not runs:
        raise FileNotFoundError(f"no numpile trace files (*.jsonl) in {directory}: run a program with "
                                f"NUMPILE_TRACE_DIR={directory} first")
    output = Path(output)
    output.write_text(render(runs, str(directory)), encoding="utf-8")
    return output


# -- the page ----------------------------------------------------------------------------------
esc = html.escape

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 96em; padding: 0 1em; color: #1d2329; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 2em; border-bottom: 2px solid #d5dde5; }
h3 { margin: 1.6em 0 .4em; } h4 { margin: .9em 0 .3em; font-size: 1em; }
.muted { color: #66727d; font-weight: normal; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border: 1px solid #d5dde5; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #eef3f7; } td.num, th.num { text-align: right; white-space: nowrap; }
td code { white-space: nowrap; }
.summary td { font-size: 1.3em; font-weight: 600; text-align: center; min-width: 6em; }
.summary th { text-align: center; }
pre { background: #f6f8fa; border: 1px solid #e1e6eb; padding: .6em; overflow-x: auto; font-size: 12.5px;
      margin: .3em 0; }
details.compile { border: 1px solid #d5dde5; border-radius: 6px; margin: .8em 0; padding: .3em .9em .6em; }
details.compile > summary { cursor: pointer; font-weight: 600; padding: .3em 0; }
.break { background: #fdecea; border-left: 4px solid #c0392b; padding: .4em .8em; margin: .5em 0; }
.recompile { background: #fff6e0; border-left: 4px solid #d68910; padding: .4em .8em; margin: .5em 0; }
.break pre, .recompile pre { background: #fff; }
pre.code { max-height: 40em; overflow: auto; }
ul.guards { font-family: ui-monospace, monospace; font-size: 12.5px; margin: .2em 0; }
"""


def render(runs: list[Run], title: str) -> str:
    compiles = [c for run in runs for f in run.functions for c in f.compiles]
    seconds = sum(c.line["seconds"] for c in compiles)
    counts = [("functions", sum(len(run.functions) for run in runs)), ("compiles", len(compiles)),
              ("graphs", sum(c.line["graph"] is not None for c in compiles)),
              ("graph breaks", sum(c.line["break"] is not None for c in compiles)),
              ("recompiles", sum(c.line["entry"] > 1 for c in compiles)), ("compile time", _ms(seconds))]
    body = [f"<h1>numpile compile report <span class=muted>{esc(title)}</span></h1>",
            f"<p class=muted>{len(runs)} process{'es' if len(runs) != 1 else ''}, "
            f"written {esc(time.strftime('%Y-%m-%d %H:%M:%S'))}</p>",
            '<table class="summary"><tr>' + "".join(f"<th>{esc(k)}</th>" for k, _ in counts) + "</tr><tr>"
            + "".join(f"<td>{esc(str(v))}</td>" for _, v in counts) + "</tr></table>"]
    for r, run in enumerate(runs):
        body += _run(run, f"r{r}")
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>numpile report: {esc(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _run(run: Run, anchor: str) -> list[str]:
    info = run.info
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["time"])) if "time" in info else "?"
    out = [f"<h2>Process {esc(str(info.get('pid', '?')))}: <code>{esc(' '.join(info.get('argv', [])))}</code></h2>",
           f"<p class=muted>{esc(run.path.name)}; started {esc(started)}; Python {esc(str(info.get('python', '?')))}, "
           f"numpile {esc(str(info.get('numpile', '?')))}</p>"]
    if not run.functions:
        out.append("<p>Nothing was compiled.</p>")
    for f, function in enumerate(run.functions):
        out += _function(function, f"{anchor}f{f}")
    if run.between:
        out.append("<h3>Logged outside compiles <span class=muted>(at run time, or by a compile that did not "
                   "finish)</span></h3>")
        out += [f"<pre>[{esc(log['category'])}] {esc(log['message'])}</pre>" for log in run.between]
    return out


def _function(function: Function, anchor: str) -> list[str]:
    where = f" <span class=muted>{esc(function.defined_at)}</span>" if function.defined_at else ""
    out = [f"<h3 id={anchor}><code>{esc(function.name)}</code>{where}</h3>",
           "<table><tr><th>#</th><th>frame</th><th>entry</th><th>backend</th><th class=num>ops</th>"
           "<th>graph break</th><th class=num>trace</th><th class=num>backend</th></tr>"]
    for i, c in enumerate(function.compiles):
        line, brk = c.line, c.line["break"]
        out.append(f"<tr><td><a href='#{anchor}c{i}'>{i + 1}</a></td><td><code>{esc(line['frame'])}</code></td>"
                   f"<td class=num>{line['entry']}</td><td>{esc(line['backend'])}</td>"
                   f"<td class=num>{len(line['ops'])}</td><td>{esc(brk['reason']) if brk else ''}</td>"
                   f"<td class=num>{_ms(line['trace_seconds'])}</td>"
                   f"<td class=num>{_ms(line['backend_seconds'])}</td></tr>")
    out.append("</table>")
    for i, c in enumerate(function.compiles):
        out += _compile(c, i, f"{anchor}c{i}")
    return out


def _compile(c: Compile, i: int, anchor: str) -> list[str]:
    line = c.line
    what = (f"ran as Python ({esc(line['backend'])})" if line["eager"] else
            f"{len(line['ops'])} ops, {esc(line['backend'])}" if line["graph"] is not None else "no graph")
    out = [f"<details class=compile id={anchor} open><summary>{i + 1}. <code>{esc(line['frame'])}</code>, "
           f"entry {line['entry']}: {what}, {_ms(line['seconds'])}</summary>"]
    out += [f"<div class=recompile><b>Recompiled:</b> {esc(reason)}</div>" for reason in c.messages("recompiles")]
    if line["break"] is not None:
        out += _break(line["break"])
    out.append(f"<h4>Guards ({len(line['guards'])})</h4>")
    out.append("<ul class=guards>" + "".join(f"<li>{esc(g)}</li>" for g in line["guards"]) + "</ul>"
               if line["guards"] else "<p class=muted>none</p>")
    if line["graph"] is not None:
        out += ["<h4>Graph</h4>", f"<pre>{esc(line['graph'])}</pre>"]
    for code in c.messages("output_code"):
        out.append(f"<details><summary>Generated code ({code.count(chr(10)) + 1} lines)</summary>"
                   f"<pre class=code>{esc(code)}</pre></details>")
    perf = c.messages("perf")   # the trace and backend times, and what a backend said of its own
    if perf:
        out.append("<h4>Compile times</h4><ul>" + "".join(f"<li>{esc(m)}</li>" for m in perf) + "</ul>")
    return out + ["</details>"]


def _break(brk: dict) -> list[str]:
    out = [f"<div class=break><b>Graph break:</b> {esc(brk['reason'])}"]
    for place in brk["stack"] or ([brk["at"]] if brk["at"] else []):
        out.append(f"<div>{esc(place['file'])}:{place['line']} in <code>{esc(place['function'])}</code></div>"
                   f"<pre>{place['line']:>5} | {esc(place['source'])}</pre>")
    return out + ["</div>"]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"
