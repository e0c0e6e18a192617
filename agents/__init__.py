"""The model runtime every agent runs on: client, prompts, result contract, traces, export.

Only the runtime: each agent lives on the floor whose work it does (the
location and shift specialists in ``audit``, the case manager, outreach,
supervisor and knowledge agents in ``caseloop``, the reply classifier in
``outreach.replies``); this package sits below them all (docs/design.md, Layers).
"""
