"""A benchmark version's board: read from the database, figured, cached, kept up to date entry by entry.

`leaderboard` is its door (`board`, `served_board`, `rebuild`), `board`
writes its shape down, `board_html` renders its rows once per board.
"""
