"""Mapping files: how another system's export feeds the roster's columns (the map stage).

An HR system or a vanpool vendor exports its own column names, nests values
in objects and writes names, dates and schedules its own way. A mapping file
(TOML or YAML, see docs/roster-format.md) says, per kind of row, where each
roster column comes from and how to turn it into the roster's form. This
package reads the file (``spec``, ``load``) and turns one source row into
roster cells (``recipes``, and ``riders`` for a vanpool's rider list);
``checks`` finds the paths a mapping reads that no row holds. Checking the
cells is the check stage's job, as for an unmapped file.

It knows nothing of the database: every function here is pure.
"""
