"""English words of the terminal clients (the reference: every other table has exactly these keys)."""

from __future__ import annotations

WORDS: dict[str, str] = {
    "status.waiting": "waiting for an opponent",
    "status.countdown": "starting",
    "status.running": "racing",
    "status.finished": "finished",
    "status.closed": "closed",
    "reason.cleared": "cleared first",
    "reason.count": "more cards on foundations",
    "reason.reached_first": "same count, reached first",
    "reason.abandoned": "the opponent abandoned the rated race",
    "reason.draw": "draw",
    "attempt.playing": "still playing",
    "attempt.cleared": "cleared the board",
    "attempt.resigned": "resigned",
    "attempt.abandoned": "away too long (abandoned)",
    "attempt.stuck": "declared stuck",
    "attempt.dead": "no way to a foundation left",
    "attempt.blocked": "no legal move left",
    "attempt.time_limit": "out of time",
    "attempt.race_over": "still playing at the end",
    "closed.left": "the creator left",
    "closed.abandoned": "the creator went away",
    "closed.cancelled": "the quick-match entry was cancelled",
    "closed.lobby_full": "the lobby was full",
    "closed.expired": "nobody joined in time",
    "closed.operator": "an operator closed it",
    "closed.paired": "quick match seated you in another race",
    "go": "Go!",
    "joined": "{name} joined.",
    "left_before_start": "{name} left before the start.",
    "disconnected": "{name} disconnected.",
    "back": "{name} is back.",
    "you_win": "You win: {reason}.",
    "wins": "{name} wins: {reason}.",
    "draw": "Draw: both have {count}/52 on foundations.",
    "waiting": "Waiting for an opponent ...",
    "opponent_joins": "Your opponent joins with:",
    "keys_help": """Full-screen keys (the footer shows those that work now):
  5d ts 10h    type a card: it moves when it has one legal destination, else its destinations light up
  f 1-6        the destination of the lit card: its foundation, a column (Esc cancels)
  mouse        click a card, then a lit column number or "Foundations"
  m            the numbered list of legal moves (arrows and Enter, or a click, play one)
  o            auto-move on/off: safe cards go to the foundations by themselves
  u            undo (races with undo; counted)
  e            the one-time redeal (races with it; asks first)
  x  g         declare stuck, resign (each asks first)
  ?            this help
  Ctrl-Q Ctrl-C Ctrl-D   leave at once
After the result: r rematch, p replay this race, l the lobby, q quit.""",
}
