"""The supervisor: an independent check of a case's evidence package before a cancellation.

docs/design.md step 9. When a case reaches ``pre_cancel`` the supervisor validates
what a coordinator is about to act on and records a CaseReview. It only reads:
it never changes the case, its status, its findings or its actions.

1. Deterministic checks (no model), one module per thing reviewed: the
   findings (summary, evidence, consistency, membership: ``findings``), the
   timeline (``timeline``) and the replies (``replies``). Each returns issues
   {type, severity, description}.
2. Assessment of the reasoning (``reasoning``): the rules engine always
   (evidence strength, contradictions such as a location flag within the
   distance limit, gaps); with ``LLM_BACKEND=openai`` a model as well, merged
   conservatively (the weaker justification, the union of findings). A model
   failure leaves the rules assessment and the deterministic checks to decide.
3. Score from 100 (``review``): each issue costs once — a missing section 15,
   a consistency issue 20, otherwise by severity (high 10, medium 5, low 2) —
   and a weak justification 15; clamped to 0..100. Passed when the score is at
   least 70 and no issue is high-severity.

Every check reads one ``package.Package``, loaded in a fixed number of queries.
``review`` is the entry point (``validate``, ``review_pre_cancel``,
``review_for_decision``) and answers the dashboard's queries.
"""
