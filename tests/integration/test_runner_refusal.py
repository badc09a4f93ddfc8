"""What the local runner says when its first Bot API request fails: what was answered and where,
and the token blamed only when a Bot API refused it. The answers come from a small HTTP server
on this machine, read by python-telegram-bot itself, as the runner's would be."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import telegram
from telegram.error import NetworkError, TelegramError

from handlers.config import Settings
from infra.runner import BAD_TOKEN, refusal

TOKEN = "123456:AAH-a-token-nobody-may-print"
NOT_FOUND_PAGE = "<!DOCTYPE html><pre>Cannot GET /bot{token}/getMe</pre>"  # Express's 404
BOT_API_401 = '{"ok":false,"error_code":401,"description":"Unauthorized"}'
SHOP_PAGE = "<html><body>Welcome to our shop</body></html>"


@contextmanager
def server(status: int, body: str) -> Iterator[str]:
    """A server answering every request with `status` and `body` ("{token}" filled from the
    request's path, as a server quoting it would); yields its base URL for a bot."""

    class Answer(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            token = self.path.removeprefix("/bot").partition("/")[0]
            data = body.replace("{token}", token).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/bot"
    finally:
        httpd.shutdown()
        httpd.server_close()


def first_request(base_url: str) -> TelegramError:
    """The runner's first request (getMe) through python-telegram-bot, and how it failed."""

    async def ask() -> None:
        async with telegram.Bot(TOKEN, base_url=base_url) as bot:
            await bot.get_me()

    with pytest.raises(TelegramError) as caught:
        asyncio.run(ask())
    return caught.value


def said(base_url: str | None, error: TelegramError) -> str:
    return refusal(error, Settings(bot_token=TOKEN, api_base_url=base_url))


def test_a_server_that_is_no_bot_api_is_named_and_the_token_is_not_blamed() -> None:
    for status, page in ((404, NOT_FOUND_PAGE), (200, SHOP_PAGE)):
        with server(status, page) as url:
            line = said(url, first_request(url))
        assert "TELEGRAM_BOT_TOKEN" not in line.replace("<TELEGRAM_BOT_TOKEN>", ""), line
        assert url in line and "not a Bot API" in line and "TELEGRAM_API_BASE_URL" in line
        assert TOKEN not in line, "the answer quoted the path, token and all"
        assert "\n" not in line and len(line) < 400
        assert ("Not Found (404)" if status == 404 else "Invalid server response") in line


def test_a_bot_api_that_refuses_the_token_blames_the_token_and_says_where() -> None:
    with server(401, BOT_API_401) as url:
        error = first_request(url)
    line = said(url, error)
    assert line.startswith(f"The Bot API at {url} refused TELEGRAM_BOT_TOKEN (Unauthorized)")
    assert said(None, error) == BAD_TOKEN, "Telegram's own: the token, and where to check it"


def test_a_server_that_cannot_be_reached_is_named() -> None:
    with server(200, "") as url:
        pass  # closed: nothing listens there any more
    line = said(url, first_request(url))
    assert line.startswith(f"The Bot API at {url} could not be reached")
    # Telegram's own, by the address a person would recognize; and the way to play without it.
    line = said(None, NetworkError("httpx.ConnectError: [Errno -3] name resolution failed"))
    assert line.startswith("The Bot API at https://api.telegram.org could not be reached: ")
    assert "unset TELEGRAM_BOT_TOKEN (or add --offline) to play the offline table" in line
