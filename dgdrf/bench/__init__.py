"""Benchmarks and (later) sweeps, result stores, figures and reports."""
