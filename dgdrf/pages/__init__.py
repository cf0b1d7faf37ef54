"""Pages to look at: a run's (``dgdrf run --html``), a sweep report's, an overlay's, and
a live cluster's dashboard; self-contained HTML drawn with plotly.js (dgdrf/pages/html.py)."""
