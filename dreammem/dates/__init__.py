"""Dates and times in text: what a query asks about, and when a memory's words say it happened.

Every write grounds the times a turn mentions (:mod:`dreammem.dates.grounding`), and the
temporal recall path reads the window a question names (:mod:`dreammem.dates.parse`):
both read the same rules (:mod:`dreammem.dates.rules`), calendar words
(:mod:`dreammem.dates.words`) and spelled-out years (:mod:`dreammem.dates.years`), with
``dateparser`` underneath for absolute dates.
"""
