"""What Telegram makes tappable in a plain text: commands, mentions, hashtags, cashtags, links.

The fake Bot API (`infra.fake_telegram`) runs `find_entities` on every text a bot sends or
edits without entities of its own, and returns what it found as the message's `entities`, as
Telegram does. It follows tdlib's detectors (td/telegram/MessageEntity.cpp: `match_mentions`
and `find_mentions`, `match_bot_commands`, `match_hashtags`, `match_cashtags`,
`match_tg_urls`, `match_urls` with `is_email_address` and `fix_url`, then
`fix_entity_offsets`), which the Bot API server runs on such texts, step by step on code
points where tdlib walks UTF-8.

One deviation, on the strict side: tdlib takes a link without a protocol only when its
top-level domain is on its list of common ones; here any top-level domain of letters will do,
so the fake finds a link wherever Telegram does, and a few more. Bank card numbers and media
timestamps, which the Bot API does not report, are left out. Standard library only.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = [
    "KINDS",
    "find_bot_commands",
    "find_cashtags",
    "find_entities",
    "find_hashtags",
    "find_mentions",
    "find_tg_urls",
    "find_urls",
    "fix_url",
    "is_email_address",
]

# The entity types a plain text can grow, as the Bot API names them.
KINDS = ("mention", "bot_command", "hashtag", "cashtag", "url", "email")

Span = tuple[int, int]  # [start, end) in code points

_BAD_PATH_END = ".:;,('?!`"


def _category(ch: str) -> str:
    return unicodedata.category(ch)


def _is_letter(ch: str) -> bool:
    return _category(ch)[0] == "L"


def _is_separator(ch: str) -> bool:
    return _category(ch)[0] == "Z"


def _is_word(ch: str) -> bool:
    """tdlib's is_word_character: a letter, a number, or "_"."""
    return _is_letter(ch) or _category(ch) in ("Nd", "Nl", "No") or ch == "_"


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _alnum(ch: str) -> bool:
    return _is_digit(ch) or "a" <= ch <= "z" or "A" <= ch <= "Z"


def _alnum_(ch: str) -> bool:
    return _alnum(ch) or ch == "_"


def _alnum_minus(ch: str) -> bool:
    return _alnum_(ch) or ch == "-"


def _hashtag_letter(ch: str) -> bool:
    code = ord(ch)
    if ch == "_" or code in (0x200C, 0xB7) or 0xD80 <= code <= 0xDFF:
        return True
    return _category(ch) == "Nd" or _is_letter(ch)


def _url_unicode_symbol(ch: str) -> bool:
    code = ord(ch)
    if 0x2000 <= code <= 0x206F:  # General Punctuation: only the joiners and the dashes
        return code in (0x200C, 0x200D) or 0x2010 <= code <= 0x2015
    return not _is_separator(ch)


def _url_path_symbol(ch: str) -> bool:
    return ch not in '\n<>"«»' and _url_unicode_symbol(ch)


def _domain_symbol(ch: str) -> bool:
    if ord(ch) < 0xC0:
        return ch in ".~" or _alnum_minus(ch)
    return _url_unicode_symbol(ch)


def _user_data_symbol(ch: str) -> bool:
    return ch not in "\n/[]{}()'`<>\"@«»" and _url_unicode_symbol(ch)


def _protocol_symbol(ch: str) -> bool:
    if ord(ch) < 0x80:
        return _alnum(ch) or ch in "+-"  # no dots in a protocol
    return not _is_separator(ch)


# --- the detectors ---------------------------------------------------------------------------


def find_mentions(s: str) -> list[Span]:
    found: list[Span] = []
    i = s.find("@")
    while i != -1:
        if i > 0 and _is_word(s[i - 1]):
            i = s.find("@", i + 1)
            continue
        j = i + 1
        while j < len(s) and _alnum_(s[j]):
            j += 1
        if 2 <= j - i - 1 <= 32 and not (j < len(s) and _is_word(s[j])):
            name = s[i + 1 : j]
            # find_mentions: a short one only if it is one of Telegram's inline bots.
            if len(name) >= 4 or name.lower() in ("gif", "vid", "pic"):
                found.append((i, j))
        i = s.find("@", max(j, i + 1))
    return found


def find_bot_commands(s: str) -> list[Span]:
    found: list[Span] = []
    i = s.find("/")
    while i != -1:
        if i > 0 and (_is_word(s[i - 1]) or s[i - 1] in "/<>"):
            i = s.find("/", i + 1)
            continue
        j = i + 1
        while j < len(s) and _alnum_(s[j]):
            j += 1
        end = j
        ok = 1 <= j - i - 1 <= 64
        if ok and j < len(s) and s[j] == "@":
            k = j + 1
            while k < len(s) and _alnum_(s[k]):
                k += 1
            ok = 3 <= k - j - 1 <= 32
            j = end = k
        if ok and not (j < len(s) and (_is_word(s[j]) or s[j] in "/<>")):
            found.append((i, end))
        i = s.find("/", max(j, i + 1))
    return found


def find_hashtags(s: str) -> list[Span]:
    found: list[Span] = []
    i = s.find("#")
    while i != -1:
        if i > 0 and _hashtag_letter(s[i - 1]):
            i = s.find("#", i + 1)
            continue
        j, size, end, letter = i + 1, 0, -1, False
        while j < len(s) and _hashtag_letter(s[j]):
            j += 1
            if size == 255:
                end = j  # a hashtag is at most 256 characters
            if size != 256:
                letter |= _is_letter(s[j - 1])
                size += 1
        if end < 0:
            end = j
        if size >= 1 and not (j < len(s) and s[j] == "#") and letter:
            found.append((i, end))
        i = s.find("#", max(j, i + 1))
    return found


def find_cashtags(s: str) -> list[Span]:
    found: list[Span] = []
    i = s.find("$")
    while i != -1:
        if i > 0 and (_hashtag_letter(s[i - 1]) or s[i - 1] == "$"):
            i = s.find("$", i + 1)
            continue
        j = i + 1
        if s.startswith("1INCH", j):
            j += 5
        else:
            while j < len(s) and "A" <= s[j] <= "Z":
                j += 1
        ok = 1 <= j - i - 1 <= 8
        if ok and not (j < len(s) and (_hashtag_letter(s[j]) or s[j] == "$")):
            found.append((i, j))
        i = s.find("$", max(j, i + 1))
    return found


def _path_end(s: str, start: int) -> int:
    """Where a URL path that starts with the "/", "?" or "#" at `start` ends."""
    end = start + 1
    while end < len(s) and _url_path_symbol(s[end]):
        end += 1
    while end > start + 1 and s[end - 1] in _BAD_PATH_END:
        end -= 1
    return end


def find_tg_urls(s: str) -> list[Span]:
    found: list[Span] = []
    ptr = 0
    while len(s) - ptr > 5:
        colon = s.find(":", ptr)
        if colon == -1:
            break
        begin = -1
        if s.startswith("//", colon + 1):
            if colon >= 2 and s[colon - 2 : colon].lower() == "tg":
                begin = colon - 2
            elif colon >= 3 and s[colon - 3 : colon].lower() == "ton":
                begin = colon - 3
        if begin < 0:
            ptr = colon + 1
            continue
        ptr = domain = colon + 3
        while ptr < len(s) and ptr - domain != 253 and _alnum_minus(s[ptr]):
            ptr += 1
        if ptr == domain:
            continue
        if ptr < len(s) and s[ptr] in "/?#":
            end = _path_end(s, ptr)
            if s[ptr] == "/" or end > ptr + 1:
                ptr = end
        found.append((begin, ptr))
    return found


def _urls(s: str) -> list[Span]:
    """match_urls: every dot is looked at as the middle of a domain; `begin` is where the text
    still to read starts."""
    found: list[Span] = []
    begin = 0
    while True:
        dot = s.find(".", begin)
        if dot == -1 or dot + 1 == len(s):
            break
        if s[dot + 1] == " ":
            begin = dot + 2
            continue
        start = dot
        while start > begin and _domain_symbol(s[start - 1]):
            start -= 1
        last_at, end = -1, dot
        while end < len(s):
            if s[end] == "@":
                last_at = end
            elif not _domain_symbol(s[end]):
                break
            end += 1
        if last_at >= 0:
            while start > begin and _user_data_symbol(s[start - 1]):
                start -= 1
        if end < len(s) and s[end] == ":":
            port_end = end + 1
            while port_end < len(s) and _is_digit(s[port_end]):
                port_end += 1
            port = s[end + 1 : port_end].lstrip("0")
            if port and len(port) <= 5 and int(port) <= 65535:
                end = port_end
        if end < len(s) and s[end] in "/?#":
            path_end = _path_end(s, end)
            if s[end] == "/" or path_end > end + 1:
                end = path_end
        while end > dot + 1 and s[end - 1] == ".":
            end -= 1
        bad = False
        if start != begin and s[start - 1] == "@":
            if last_at >= 0:
                bad = True
            user = start - 1
            while user > begin and _user_data_symbol(s[user - 1]):
                user -= 1
            if user == start - 1:
                bad = True
            start = user
        if start != begin:
            prefix = s[begin:start]
            if len(prefix.encode("utf-8", "surrogatepass")) >= 6 and prefix.endswith("://"):
                protocol_start = start - 3
                while protocol_start > begin and _protocol_symbol(s[protocol_start - 1]):
                    protocol_start -= 1
                protocol = s[protocol_start : start - 3].lower()
                if protocol.endswith("http") and protocol != "shttp":
                    start -= 7
                elif protocol.endswith("https"):
                    start -= 8
                elif protocol.endswith("ftp") and protocol not in ("tftp", "sftp"):
                    start -= 6
                else:
                    bad = True
            elif _is_word(prefix[-1]) or prefix[-1] in "/#@":
                bad = True
        if not bad:
            if end > dot + 1:
                found.append((start, end))
            while end < len(s) and s[end] == ".":
                end += 1
        else:
            while s[end - 1] != ".":
                end -= 1
        begin = max(end, dot + 1)
    return found


def is_email_address(s: str) -> bool:
    user, _, domain = s.partition("@")
    if not domain:
        return False
    prev = parts = 0
    for i, ch in enumerate(user):
        if ch in ".+":
            if i - prev >= 27:
                return False
            parts += 1
            prev = i + 1
        elif not _alnum_minus(ch):
            return False
    if parts + 1 >= 12 or not 0 < len(user) - prev < 36:
        return False
    labels = domain.split(".")
    if not 1 < len(labels) <= 7:
        return False
    top = labels.pop()
    if not 1 < len(top) < 9 or not all(_alnum(c) and not _is_digit(c) for c in top):
        return False
    return all(
        0 < len(label) < 31
        and all(_alnum_minus(c) for c in label)
        and _alnum(label[0])
        and _alnum(label[-1])
        for label in labels
    )


def _top_level_domain(tld: str) -> bool:
    """tdlib's is_common_tld, loosened: any name of letters (see the module's docstring)."""
    return all(_is_letter(ch) for ch in tld)


def fix_url(url: str) -> str | None:
    """The link `url` really is, once a trailing piece that cannot end one is cut; None when
    its domain cannot be one."""
    full, rest, protocol = url, url, False
    if url[:8].lower().startswith(("http://", "https://", "ftp://")):
        rest, protocol = url[url.index(":") + 3 :], True
    cuts = [i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0]
    domain_end = min([len(rest), *cuts])
    domain, path = rest[:domain_end], rest[domain_end:]
    domain = domain[domain.find("@") + 1 :]
    if ":" in domain:
        domain = domain[: domain.rfind(":")]
    if domain.lower() == "teiegram.org":
        return None
    balance = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    kept = 0
    while kept < len(path):
        ch = path[kept]
        if ch in balance:
            balance[ch] += 1
        elif ch in closing:
            balance[closing[ch]] -= 1
        if min(balance.values()) < 0:
            break
        kept += 1
    while kept > 0 and path[kept - 1] in _BAD_PATH_END:
        kept -= 1
    full = full[: len(full) - (len(path) - kept)]

    labels = domain.split(".")
    if any(not label or len(label) >= 64 or label[-1] == "-" for label in labels):
        return None
    if len(labels) == 1:
        return None
    ipv4 = len(labels) == 4 and all(
        label.isascii()
        and label.isdigit()
        and len(label) <= 3
        and int(label) <= 255
        and not (label[0] == "0" and len(label) > 1)
        for label in labels
    )
    if ipv4:
        return full
    if all(c.isascii() and c.isdigit() for c in domain.replace(".", "")):
        return None
    tld = labels[-1]
    if len(tld) <= 1:
        return None
    if tld.startswith("xn--"):
        if len(tld) <= 5 or not all(_alnum(c) for c in tld[4:]):
            return None
    elif "_" in tld or "-" in tld or (not protocol and not _top_level_domain(tld)):
        return None
    if "_" in labels[-2]:
        return None
    return full


def find_urls(s: str) -> list[tuple[Span, str]]:
    found: list[tuple[Span, str]] = []
    for start, end in _urls(s):
        url = s[start:end]
        if is_email_address(url):
            found.append(((start, end), "email"))
        elif url.startswith("mailto:") and is_email_address(url[7:]):
            found.append(((start + 7, end), "email"))
        else:
            fixed = fix_url(url)
            if fixed:
                found.append(((start, start + len(fixed)), "url"))
    return found


def _utf16(s: str, index: int) -> int:
    return len(s[:index].encode("utf-16-le", "surrogatepass")) // 2


def find_entities(text: str) -> list[dict[str, Any]]:
    """The entities Telegram finds in `text`, as the Bot API returns them: sorted, never
    overlapping (the first, then the longest, is kept), offsets and lengths in UTF-16 units."""
    spans: list[tuple[Span, str]] = [
        *((span, "mention") for span in find_mentions(text)),
        *((span, "bot_command") for span in find_bot_commands(text)),
        *((span, "hashtag") for span in find_hashtags(text)),
        *((span, "cashtag") for span in find_cashtags(text)),
        *((span, "url") for span in find_tg_urls(text)),
        *find_urls(text),
    ]
    spans.sort(key=lambda found: (found[0][0], -(found[0][1] - found[0][0])))
    entities: list[dict[str, Any]] = []
    last_end = 0
    for (start, end), kind in spans:
        if start >= last_end and end > start:
            offset = _utf16(text, start)
            entities.append({"type": kind, "offset": offset, "length": _utf16(text, end) - offset})
            last_end = end
    return entities
