"""Ask about this case: answers from the case's own records, with citations, checked first.

``answer.answer_question(records, question)``:

1. Scope (``questions``): a question naming an employee, vanpool, case or
   message that is not on this case, or asking the assistant to act, is
   declined before any backend sees it.
2. The rules backend (``rules``) answers from templates filled with the
   records' values (why did it fail, what did the rider say, what was sent,
   what happens next, the deadline, who is flagged, the history). With
   ``LLM_BACKEND=openai`` the model answers from the same records as JSON data
   and must cite record keys; any client failure falls back to rules.
3. Faithfulness (``answer``): every ID, date, time and number in the answer
   must appear in the records it cites, and every citation must be one of the
   case's records (``records``). Otherwise the answer is replaced by a
   fallback that lists the evidence itself.

Every answer is traced as an AgentRun on the case (agent ``case_qa``). The
case page (``dashboard.case_views``) loads the records, asks, and links each
citation to where the page shows it (``dashboard.case_qa``).
"""
