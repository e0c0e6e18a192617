"""The shift specialist: does each rider work the hours the van runs?

A pure function of preloaded facts (no database, no clock): for every date of
the audit window on which the van runs and the rider works, the rider's start
must sit within a tolerance of the van's arrival at the work site and the
rider's end within a tolerance of its departure. Leave excuses a date. A
schedule the rules cannot read makes the rider ``unknown`` — for the model or a
human — never a silent pass or fail.

Its modules, each importing only those listed after it:

- ``check``: ``check_shift``, the vanpool's result; ``eval_cases`` turns a line
  of a shift evaluation set into facts.
- ``rider``: one rider judged across the window (several readings, rotations).
- ``days``: the days of the window compared, excused or off the van's days.
- ``van``: the van's schedule, its own or its riders' majority shift.
- ``readings``: a shift read into a schedule the rules can use, or ``Unreadable``.
"""
