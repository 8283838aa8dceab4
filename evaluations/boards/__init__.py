"""A benchmark version's board: read from the database, figured, cached, kept up to date entry by entry.

One module a concern, each importing only those listed after it:

- `queries`: what pages ask beyond one board (the versions, a task's results, a model's entries);
- `serving`: the door (`board`, `served_board`, `rebuild`): recent boards, the shared cache, the worker's rebuild;
- `compute`: a board from counted rollouts (`compute_board`), or updated entry by entry (`updated_board`);
- `counting`: what a rollout contributes (disposition, counted score, usage, curves);
  `published_entries`: papers' results figured as ours;
  `invalidation`: the generation counters, `invalidate`, the signals that bump them.

Beside them, `board` writes the board's shape down, `sorting` orders its rows,
`board_html` renders them once per board.
"""
