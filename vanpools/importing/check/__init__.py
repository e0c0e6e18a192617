"""The check stage: every row checked against the file and the database, and its write planned.

``known`` loads what the rows name in a handful of queries; ``rows`` holds
the checks every kind shares (cells, required columns, one row per ID, the
model's own rules); ``shifts``, ``vanpools`` and ``employees`` plan one row
of their kind each; ``planning`` runs them in import order and sets the rows
with errors aside. Nothing here writes: a Plan says what the write stage
will do and what the preview shows.
"""
