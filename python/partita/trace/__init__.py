"""Traces of partitioned communication written by libpartita-trace.so (format partita.trace/1).

`reader` loads a trace folder (one JSON file per rank) onto one time line; the analysis,
advice and projection modules work on what it returns.
"""
