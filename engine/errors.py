"""Why a move was refused: one error family with a stable code per reason.

The engine never writes a sentence for a player. Callers branch on the class or the code and
turn the code into words in the player's language (the bot's catalogues).
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """Why a move was refused. The value is what catalogues are keyed on: never rename one."""

    NOT_A_PLAYER = "not_a_player"
    NOT_YOUR_TURN = "not_your_turn"
    NO_BULLETS = "no_bullets"
    ALREADY_CHALLENGED = "already_challenged"
    NEXT_PLAYER_PLAYED = "next_player_played"
    NOTHING_TO_CHALLENGE = "nothing_to_challenge"
    OWN_PLAY = "own_play"
    CARDS_NOT_IN_HAND = "cards_not_in_hand"
    CARD_COUNT = "card_count"
    BAD_CARDS = "bad_cards"
    BAD_NAME = "bad_name"
    GAME_NOT_RUNNING = "game_not_running"
    GAME_OVER = "game_over"
    ALREADY_STARTED = "already_started"
    ALREADY_JOINED = "already_joined"
    TABLE_FULL = "table_full"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    NO_PERSON_SEATED = "no_person_seated"
    FINAL_PLAY_PENDING = "final_play_pending"
    NOT_DECIDER = "not_decider"
    NO_DECISION_PENDING = "no_decision_pending"
    DEADLINE_PASSED = "deadline_passed"
    NOT_YET_DUE = "not_yet_due"
    STALE = "stale"
    NOT_ALLOWED = "not_allowed"
    ALREADY_VOTED = "already_voted"
    BAD_CLOCK = "bad_clock"


class MenteurError(ValueError):
    """A refused move. `player` names someone the reason is about (who plays, who shouted)."""

    def __init__(self, code: Code, player: int | None = None) -> None:
        super().__init__(code.value if player is None else f"{code.value} ({player})")
        self.code = code
        self.player = player


class InvalidMove(MenteurError):
    """The move is malformed whatever the state: no cards, five cards, a card that isn't one."""


class IllegalMove(MenteurError):
    """The move is well formed but the rules do not allow it now."""
