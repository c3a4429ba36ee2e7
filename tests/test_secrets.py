"""Secrets stay out of messages: credentials in a server URL are redacted in every error, an API
key sent over plain http to another machine is warned about once, and the browser test's failure
messages never show the JupyterLab token. A stub HTTP server on 127.0.0.1 stands in for an LLM or
embedding server (no model)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from lab_browser import LabPage, LabServer, redact_token
from local_servers import free_port

from inferqa_utils.llm import routing, server
from inferqa_utils.llm.embeddings import ServerEmbedder
from inferqa_utils.llm.http_settings import HTTPSettings
from inferqa_utils.llm.server import ServerError, ServerLLM

SECRET = "s3cr3t-pw"


@pytest.mark.parametrize("text", [
    f"http://alice:{SECRET}@10.0.0.5:8000/v1 failed",
    f"cannot reach https://{SECRET}@host.example (ConnectError)",
    f"name=http://u:{SECRET}@h:1#served, other=http://h2:2",
    f"GET http://h:1/v1/models?api_key={SECRET}&x=1",
    f"http://u:p@ss{SECRET}@h:8000/v1",  # an unencoded @ in the password
])
def test_credentials_in_urls_are_redacted(text):
    out = routing.redact_credentials(text)
    assert SECRET not in out and "***" in out
    assert routing.redact_credentials("http://10.0.0.5:8000/v1 and me@example.org") == \
        "http://10.0.0.5:8000/v1 and me@example.org"


def test_routing_errors_do_not_show_credentials():
    with pytest.raises(ValueError) as e:
        routing.check_url(f"ftp://bob:{SECRET}@host:21", "INFERQA_LLM_SERVER")
    assert SECRET not in str(e.value) and "ftp://***@host:21" in str(e.value)
    with pytest.raises(ValueError) as e:
        routing.parse_servers(f"=http://bob:{SECRET}@host:8000")
    assert SECRET not in str(e.value)


class _NotJSON(BaseHTTPRequestHandler):
    """Answers every POST with 200 and a body that is not JSON (an HTML error page, say)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b"<html>proxy error</html>"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stub() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _NotJSON)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://alice:{SECRET}@127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_server_errors_do_not_show_credentials(stub):
    llm = ServerLLM("m", HTTPSettings(stub, max_retries=0, concurrency=1))
    with pytest.raises(ServerError, match="not JSON") as e:
        llm._post("/v1/chat/completions", {})
    assert SECRET not in str(e.value) and "127.0.0.1" in str(e.value)
    emb = ServerEmbedder("m", HTTPSettings(stub, max_retries=0, concurrency=1), use_cache=False)
    with pytest.raises(ServerError) as e:
        emb.encode(["a text"], progress=False)
    assert SECRET not in str(e.value)
    dead = ServerLLM(
        "m", HTTPSettings(f"http://alice:{SECRET}@127.0.0.1:{free_port()}", max_retries=0, concurrency=1)
    )
    with pytest.raises(ServerError, match="cannot reach") as e:
        dead._post("/v1/chat/completions", {})
    assert SECRET not in str(e.value)
    assert SECRET not in str(ServerError(f"at http://u:{SECRET}@h:1: HTTP 500"))


def test_a_key_over_plain_http_to_another_machine_is_warned_about_once(monkeypatch, caplog):
    monkeypatch.setattr(server, "_warned_plain_http", set())
    caplog.set_level(logging.WARNING, logger=server.__name__)
    for url in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000", "https://10.1.2.3:8000"):
        ServerLLM("m", HTTPSettings(url, api_key=SECRET))._http()
    ServerLLM("m", HTTPSettings("http://10.1.2.3:8000"))._http()  # no key: nothing to leak
    assert caplog.records == []
    for _ in range(2):
        ServerLLM("m", HTTPSettings(f"http://u:{SECRET}@10.1.2.3:8000", api_key=SECRET))._http()
    ServerEmbedder("m", HTTPSettings("http://10.1.2.3:8000", api_key=SECRET), use_cache=False)._http()
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert "http://10.1.2.3:8000" in message and "https" in message and SECRET not in message


# ------------------------------------------------------------------------------ the browser test's token
def test_the_lab_token_is_redacted_from_logs_and_navigation_errors(tmp_path):
    lab = LabServer(tmp_path, tmp_path)
    lab.log.write_text(f"[I ServerApp] Jupyter Server is running at:\n"
                       f"[I ServerApp] http://127.0.0.1:{lab.port}/lab?token={lab.token}\n"
                       f"    http://127.0.0.1:{lab.port}/lab?token={lab.token}&x=1\n")
    tail = lab.log_tail()
    assert lab.token not in tail and "/lab?token=***" in tail
    assert redact_token(f"Authorization: token {lab.token}", lab.token) == "Authorization: token ***"

    class Driver:
        def get(self, url: str) -> None:
            raise RuntimeError(f"unknown error: net::ERR_CONNECTION_REFUSED loading {url}")

    page = LabPage(Driver(), lab, tmp_path / "shots", log=lambda s: None)
    with pytest.raises(AssertionError) as e:
        page.open("00_quickstart.ipynb")
    assert lab.token not in str(e.value) and "token=***" in str(e.value)
    assert e.value.__cause__ is None and e.value.__context__ is None
