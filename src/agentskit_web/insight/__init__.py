"""What readers ask, back to the docs owner: the owner's own eval and the question log's report.

- `eval_questions`: the questions file an owner writes (pages that answer, or `decline`);
- `eval_run`: asks each question of a built site (in process) or a running backend, scores it;
- `report`: reads a question log (server/question_log.py) into a terminal summary or one
  self-contained HTML page (`report_html`).
"""
