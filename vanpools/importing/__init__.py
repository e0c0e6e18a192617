"""Roster import: HR's shifts, vanpools and employees, upserted by ID.

docs/roster-format.md is the contract. An import runs in stages, each a
subpackage or module here:

- **read** (``read``): the CSV or JSON export into tables of rows in the
  roster's column names, every source row through the mapping;
- **map** (``mapping``): a mapping file read and checked, and the recipes
  that turn one source row into roster cells (pure);
- **check** (``check``): every cell read (``cells``, by ``columns``) and every
  row checked against the rest of the file and the database, each write
  planned; errors are collected, so HR can fix a file in one go;
- **write** (``write``): only a file without errors is written, in one
  transaction, so a bad export changes nothing; only differences from what
  is stored are written, which makes re-sending the same file a no-op;
- **preview** (``preview``): counts, the first changes and warnings, from
  the plans.

``run`` strings them together; ``result`` holds what an import reports.
"""

from vanpools.importing.columns import KINDS
from vanpools.importing.result import ImportFailed, ImportResult, RowError
from vanpools.importing.run import import_data, import_file, read_mapping

__all__ = [
    "KINDS",
    "ImportFailed",
    "ImportResult",
    "RowError",
    "import_data",
    "import_file",
    "read_mapping",
]
