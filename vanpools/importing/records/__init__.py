"""Ride, permit and monthly records: trips, ride days, badge swipes, permits, months, holidays.

docs/roster-format.md ("Ride, permit and monthly records") is the contract.
Beside the roster's importer because of size: a month of a large program's
trip log is a million rows, so a CSV is read as it streams and each kind
(one class in ``rides``, ``swipes`` or ``program``) keeps its rows compact.
The stages are the roster's: read (``read``, with the same mappings), check
each row, plan against what is stored, write only the differences in one
transaction (``run``); a file with any error writes nothing.
"""

from vanpools.importing.records.kinds import RECORD_KINDS
from vanpools.importing.records.run import import_records, record_kind_of

__all__ = ["RECORD_KINDS", "import_records", "record_kind_of"]
