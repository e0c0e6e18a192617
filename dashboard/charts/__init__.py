"""Geometry for the dashboard's server-rendered SVG: vanpool map, week chart, bars, trend.

Pure functions of plain values (no database, no request): the templates only
draw what these return, so every coordinate is computed, and tested, here.
One module per chart: ``vanpool_map``, ``week``, ``bars``, ``trend``.
"""
