"""What a line typed at the offline table means: cards by what they are, words for buttons.

A line is read whole, then read word by word; nothing is done unless every word means
something, so a typo changes nothing and is answered with what would have worked.

    10  7  7h  7♥  R♥  K♥  as      a card by what it is: a rank, then a suit if you like
    #3                             the third card of your hand, as the screen shows it
    p  l  s  e                     the moves' buttons, by the keys shown beside them (or
                                   their words: play, liar, stand, end)
    b1 ...  join  start  leave     the other buttons
    new (n)  help (h, ?)  quit (q)

A rank alone takes a card of that rank not yet chosen; "7 7" takes two sevens. The ranks
are the game's (A, 2-10, V, D, R) and the English letters J, Q and K read as V, D and R.
Suits: ♠ ♥ ♦ ♣, or s h d c. Arabic-Indic digits read as digits, and a button's label in any
language the bot speaks as its word, given those labels (`Buttons`): its name alone ("Let it
stand", "كاذب!", "Jouer") or the whole label as shown ("Jouer 2 × 4"), whatever the spaces
("Menteur !" typed with an ordinary space). Standard library only, and nothing here knows the
bot or speaks to the person: `infra/terminal.py` gives the labels, words the refusals in the
table's language and presses what a line resolves to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from engine import RANKS, SUITS, parse_card, rank_of, suit_of

# The words that press the game's buttons; then the keys and short forms that read as words.
ACTION_WORDS = ("play", "liar", "stand", "end", "join", "start", "leave")
TABLE_WORDS = ("new", "help", "quit")
ALIASES = {
    "p": "play",
    "l": "liar",
    "s": "stand",
    "e": "end",
    "n": "new",
    "h": "help",
    "?": "help",
    "q": "quit",
    "exit": "quit",
}
_RANK_LETTERS = {"J": "V", "Q": "D", "K": "R"}
_SUIT_LETTERS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣", "♤": "♠", "♡": "♥", "♢": "♦", "♧": "♣"}
_DIGITS = str.maketrans("٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹", "01234567890123456789")
_SEPARATORS = re.compile(r"[\s,;]+")
_BUTTON_KEY = re.compile(r"b\d{1,2}")
# A mark that ends a label's word ("Liar!", "Menteur !" with a no-break space, "البطاقات:"): a
# label is read without them, typed or pasted, with any space before them or none.
_MARKS_AFTER_WORD = re.compile(r"(?<=\w)\s*[!?؟:]+(?=\s|$)")
SLOT = "\0"  # where a label shows a number or a rank ("Play \0 × \0")


@dataclass(frozen=True)
class Card:
    """A card by what it is: `rank` an index into RANKS, `suit` into SUITS or None (any)."""

    rank: int
    suit: int | None
    text: str  # as typed, for the answer when it is not in the hand

    @property
    def name(self) -> str:
        return RANKS[self.rank] + (SUITS[self.suit] if self.suit is not None else "")


@dataclass(frozen=True)
class Position:
    """The `number`th card of the hand (from 1), as the screen shows the hand."""

    number: int


@dataclass(frozen=True)
class Word:
    """A button's word (ACTION_WORDS, or "b1"...), or one of the table's own (TABLE_WORDS)."""

    word: str


Token = Card | Position | Word


class Meaningless(ValueError):
    """A word of the line means nothing: `word` is it."""

    def __init__(self, word: str) -> None:
        super().__init__(word)
        self.word = word


def card_of(word: str) -> Card | None:
    """`word` as a card: "10", "7h", "R♥", "k♥", "as"; None when it is not one."""
    text = word.translate(_DIGITS).upper()
    for rank_text in sorted({*RANKS, *_RANK_LETTERS}, key=len, reverse=True):
        if not text.startswith(rank_text):
            continue
        rank = RANKS.index(_RANK_LETTERS.get(rank_text, rank_text))
        rest = text[len(rank_text) :]
        if not rest:
            return Card(rank, None, word)
        suit = _SUIT_LETTERS.get(rest, rest)
        if suit in SUITS:
            return Card(rank, SUITS.index(suit), word)
    return None


def name_key(name: str) -> str:
    """A button's name as it is looked up: "Liar!" and "liar", "كاذب!" and "كاذب", "Menteur !"
    and "menteur" are one."""
    return " ".join(name.casefold().strip(" !؟?:(").split())


def _bare(text: str) -> str:
    """`text` without the marks that end its words (`_MARKS_AFTER_WORD`)."""
    return _MARKS_AFTER_WORD.sub("", text)


# A slot of a label, as typed: a number, a rank or "1/2", spaced or not.
_SLOT_TYPED = r"\s*\S+?\s*"


@dataclass(frozen=True)
class Buttons:
    """The buttons' labels in every language, each with the word that presses it: its name
    (what comes before a number, by `name_key`: "jouer", "laisser passer") in `names`; the
    names of several words and the whole labels as shown ("Jouer 2 × 4", "Finir la partie
    1/2") in `labels`, as patterns read before the line is split into words."""

    names: Mapping[str, str] = field(default_factory=dict)
    labels: tuple[tuple[re.Pattern[str], str], ...] = ()


def buttons(labels: Iterable[tuple[str, str]]) -> Buttons:
    """`Buttons` from (label, word) pairs, a label with `SLOT` where it shows a number or a
    rank: ("Play \0 × \0", "play"), ("Let it stand", "stand")."""
    names: dict[str, str] = {}
    patterns: dict[str, str] = {}
    for label, word in labels:
        bare = _bare(label)
        name = name_key(bare.partition(SLOT)[0])
        if not name:
            continue
        names[name] = word
        for shape in (bare, name):
            if len(shape.split()) > 1 or SLOT in shape:
                parts = (r"\s+".join(map(re.escape, part.split())) for part in shape.split(SLOT))
                patterns[rf"(?<!\S){_SLOT_TYPED.join(parts)}(?!\S)"] = word
    # The longest first: a whole label before its name.
    ordered = sorted(patterns.items(), key=lambda item: -len(item[0]))
    return Buttons(names, tuple((re.compile(p, re.IGNORECASE), w) for p, w in ordered))


def parse(line: str, known: Buttons | None = None) -> list[Token]:
    """The words of `line`, each read as a word of the game, a card or a position. `known`:
    the buttons' labels in every language and the word each stands for ("stand"). Raises
    `Meaningless` at the first word that is none of them: then nothing of the line is done."""
    known = known or Buttons()
    text = _bare(line.strip())
    for pattern, meant in known.labels:
        text = pattern.sub(meant, text)
    tokens: list[Token] = []
    for raw in _SEPARATORS.split(text):
        if not raw:
            continue
        word = raw.casefold()
        word = ALIASES.get(word) or known.names.get(name_key(raw)) or word
        if word in ACTION_WORDS or word in TABLE_WORDS or _BUTTON_KEY.fullmatch(word):
            tokens.append(Word(word))
            continue
        if word.startswith("#") and word[1:].translate(_DIGITS).isdecimal():
            tokens.append(Position(int(word[1:].translate(_DIGITS))))
            continue
        card = card_of(raw)
        if card is None:
            raise Meaningless(raw)
        tokens.append(Card(card.rank, card.suit, raw))
    return tokens


class NotInHand(ValueError):
    """A card or position of the line (`token`) names no card left in the hand, which holds
    `held` cards."""

    def __init__(self, token: Card | Position, held: int) -> None:
        super().__init__(token)
        self.token = token
        self.held = held


def choose(tokens: list[Token], hand: list[str]) -> list[int | None]:
    """The cards the line's card and position words take, by index into `hand` (the card
    buttons' labels in screen order, "✓" marking a selected one); None for the other words.
    A rank alone takes the first card of that rank not yet taken by the line, one not selected
    before the others (so "7" selects a seven, and a second "7" another). Raises `NotInHand`
    when one names no card that is left."""
    cards = [parse_card(label.removeprefix("✓")) for label in hand]
    selected = [label.startswith("✓") for label in hand]
    taken: set[int] = set()
    chosen: list[int | None] = []
    for token in tokens:
        if isinstance(token, Position):
            index = token.number - 1
            if not 0 <= index < len(cards) or index in taken:
                raise NotInHand(token, len(cards))
        elif isinstance(token, Card):
            fits = [
                i
                for i, c in enumerate(cards)
                if i not in taken
                and rank_of(c) == token.rank
                and (token.suit is None or suit_of(c) == token.suit)
            ]
            if not fits:
                raise NotInHand(token, len(cards))
            index = min(fits, key=lambda i: selected[i])
        else:
            chosen.append(None)
            continue
        taken.add(index)
        chosen.append(index)
    return chosen
