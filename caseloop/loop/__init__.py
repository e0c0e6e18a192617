"""The case loop after an audit: write to the riders, act on replies, time out, pre-cancel.

docs/design.md steps 5-9. Every status change goes through ``cases.lifecycle``;
every email through ``outreach.sending`` with an idempotency key naming the
case, the rider and the purpose, so a task delivered twice queues nothing new.

Its modules, each importing only those listed after it (an import-linter
contract in pyproject.toml holds the order):

- ``deadlines``: the sweep: reminders, re-audits at the deadline, send retries.
- ``inbound``: a stored reply claimed once, read, and routed (to a person, or on).
- ``buckets``: what each kind of reply leads to (the design's table), and the
  cards that ask a person to read or approve.
- ``reaudit``: audit again and move the case on; ``enter_pre_cancel`` asks for
  one ``cancel_membership`` per flagged rider.
- ``reading``: what the reader made of a reply, before anything is written.
- ``writing``: who is written to; ``start_outreach`` writes one thread per case,
  one message per flagged rider (riders never see each other's data).
"""
