"""The read stage: a CSV or JSON export into Tables of roster Rows.

``files`` reads the bytes as text, ``json_rows`` and ``csv_rows`` find each
kind's rows (``kind`` tells a bare list's or a header's kind) and run each
source row through the mapping (``source_rows``), ``rider_lists`` turns a
vanpool's rider list into its riders' employee rows. What reading finds
besides rows (errors, warnings about what it skipped) collects in
``context.Reading``. A file that cannot be read at all stops here; every
other problem is listed and checking goes on.
"""
