"""The HTTP chooser against a local OpenAI-compatible test server on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from PIL import Image

from icmlgym.envs.arena.choosers import ChooserError, HTTPChooser, MalformedAnswerError
from icmlgym.envs.arena.images import ProductCatalog


class FakeVLM:
    """A tiny OpenAI-compatible chat completions server with scripted behaviour.

    ``script`` is a list of steps consumed one per request: ("answer", text),
    ("status", code), ("sleep", seconds, text), ("raw", bytes). When the script is
    empty it answers ``responder(body)`` if one is set, else "1".
    """

    def __init__(self, responder=None) -> None:
        self.requests: list[dict] = []
        self.script: list[tuple] = []
        self.responder = responder
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                if fake.script:
                    step = fake.script.pop(0)
                else:
                    step = ("answer", fake.responder(fake.requests[-1]["body"]) if fake.responder else "1")
                if step[0] == "status":
                    self.send_response(step[1])
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted failure"}')
                    return
                if step[0] == "sleep":
                    time.sleep(step[1])
                    step = ("answer", step[2])
                if step[0] == "raw":
                    payload = step[1]
                else:
                    payload = json.dumps(
                        {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": step[1]}, "finish_reason": "stop"}]}
                    ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server():
    s = FakeVLM()
    yield s
    s.close()


@pytest.fixture(scope="module")
def images():
    cat = ProductCatalog()
    return [cat.render(i, 32).composite() for i in (0, 8, 16)]


def make(server, tmp_path, **kw):
    args = dict(endpoint=server.url, api_key="sk-test", model="test-vlm", timeout=2.0, max_retries=2, backoff=0.01, cache_dir=tmp_path / "cache")
    args.update(kw)
    return HTTPChooser(**args)


def test_request_format(server, tmp_path, images):
    server.script = [("answer", "2")]
    ch = make(server, tmp_path)
    p = ch.choose(images, prompt="Which mug would you buy?", layout=(1, 3))
    assert p.tolist() == [0.0, 1.0, 0.0]
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    assert req["headers"]["Content-Type"] == "application/json"
    body = req["body"]
    assert body["model"] == "test-vlm"
    user = [m for m in body["messages"] if m["role"] == "user"][0]
    parts = user["content"]
    assert parts[0]["type"] == "text" and "Which mug would you buy?" in parts[0]["text"] and "1 to 3" in parts[0]["text"]
    image_parts = [p for p in parts if p["type"] == "image_url"]
    assert len(image_parts) == 3
    for part, img in zip(image_parts, images):
        url = part["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
        assert np.array_equal(decoded, img)  # PNG is lossless: the model sees our exact pixels
    rec = ch.log[0]
    assert rec.choice == 1 and rec.raw_answer == "2" and rec.error is None and not rec.cached


def test_endpoint_and_key_from_environment(server, tmp_path, images, monkeypatch):
    monkeypatch.setenv("ICMLGYM_ARENA_ENDPOINT", server.url)
    monkeypatch.setenv("ICMLGYM_ARENA_API_KEY", "sk-env")
    monkeypatch.setenv("ICMLGYM_ARENA_MODEL", "env-model")
    ch = HTTPChooser(cache_dir=None)
    ch.choose(images[:2])
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-env"
    assert server.requests[0]["body"]["model"] == "env-model"
    monkeypatch.delenv("ICMLGYM_ARENA_ENDPOINT")
    with pytest.raises(ValueError, match="ICMLGYM_ARENA_ENDPOINT"):
        HTTPChooser()
    with pytest.raises(ValueError, match="http"):
        HTTPChooser(endpoint="ftp://127.0.0.1/v1", model="m")


def test_retries_on_5xx(server, tmp_path, images):
    server.script = [("status", 503), ("status", 500), ("answer", "1")]
    ch = make(server, tmp_path)
    assert ch.choose(images[:2]).tolist() == [1.0, 0.0]
    assert len(server.requests) == 3 and ch.requests_sent == 3


def test_gives_up_after_retries_and_records_the_error(server, tmp_path, images):
    server.script = [("status", 502)] * 3
    ch = make(server, tmp_path, max_retries=2)
    with pytest.raises(ChooserError, match="502"):
        ch.choose(images[:2])
    assert len(server.requests) == 3
    assert ch.log[0].choice is None and "502" in ch.log[0].error


def test_client_error_is_not_retried(server, tmp_path, images):
    server.script = [("status", 400)]
    ch = make(server, tmp_path)
    with pytest.raises(ChooserError, match="400"):
        ch.choose(images[:2])
    assert len(server.requests) == 1


def test_timeout(server, tmp_path, images):
    server.script = [("sleep", 1.0, "1")]
    ch = make(server, tmp_path, timeout=0.2, max_retries=0)
    t0 = time.perf_counter()
    with pytest.raises(ChooserError, match="timed out"):
        ch.choose(images[:2])
    assert time.perf_counter() - t0 < 0.9
    assert "timed out" in ch.log[0].error and ch.log[0].choice is None
    # with a retry, a slow first attempt is followed by a good one
    server.script = [("sleep", 1.0, "1"), ("answer", "2")]
    ch2 = make(server, tmp_path, timeout=0.2, max_retries=1, cache_dir=None)
    assert ch2.choose(images[:2]).tolist() == [0.0, 1.0]


@pytest.mark.parametrize("answer", ["I prefer the blue one", "1 and 2", "7", ""])
def test_malformed_answer_is_an_error_never_a_choice(server, tmp_path, images, answer):
    server.script = [("answer", answer)]
    ch = make(server, tmp_path)
    with pytest.raises(MalformedAnswerError):
        ch.choose(images[:2])
    rec = ch.log[0]
    assert rec.choice is None and rec.probabilities is None and "MalformedAnswerError" in rec.error
    # a malformed answer is not cached: the next identical query asks again
    server.script = [("answer", "2")]
    assert ch.choose(images[:2]).tolist() == [0.0, 1.0]
    assert len(server.requests) == 2


def test_malformed_response_body(server, tmp_path, images):
    server.script = [("raw", b"<html>oops</html>"), ("raw", b'{"choices": []}')]
    ch = make(server, tmp_path)
    for _ in range(2):
        with pytest.raises(MalformedAnswerError):
            ch.choose(images[:2])
    assert all(r.error for r in ch.log)


def test_cache_avoids_repeated_queries(server, tmp_path, images):
    server.script = [("answer", "2")]
    ch = make(server, tmp_path)
    first = ch.choose(images[:2])
    second = ch.choose(images[:2])
    assert np.array_equal(first, second)
    assert len(server.requests) == 1
    assert [r.cached for r in ch.log] == [False, True]
    # the cache is on disk: a new chooser (a new process) reuses it
    fresh = make(server, tmp_path)
    assert fresh.choose(images[:2]).tolist() == [0.0, 1.0] and len(server.requests) == 1
    # a different order is a different query
    fresh.choose(images[:2][::-1])
    assert len(server.requests) == 2


def test_sampling_temperature_keeps_repeats_independent_but_replayable(server, tmp_path, images):
    server.script = [("answer", "1"), ("answer", "2")]
    ch = make(server, tmp_path, temperature=1.0)
    a = [ch.choose(images[:2]).tolist() for _ in range(2)]
    assert a == [[1.0, 0.0], [0.0, 1.0]] and len(server.requests) == 2
    rerun = make(server, tmp_path, temperature=1.0)
    assert [rerun.choose(images[:2]).tolist() for _ in range(2)] == a
    assert len(server.requests) == 2


def brightest_option(body: dict) -> str:
    """Decode the PNGs of a request and answer the brightest option (a rule-following 'VLM')."""
    parts = [p for p in body["messages"][-1]["content"] if p["type"] == "image_url"]
    means = [np.asarray(Image.open(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",", 1)[1])))).mean() for p in parts]
    return str(int(np.argmax(means)) + 1)


def test_choice_arena_end_to_end_through_the_http_chooser(tmp_path):
    from icmlgym.envs.arena.choice_arena import ChoiceArenaEnv

    server = FakeVLM(responder=brightest_option)
    try:
        chooser = HTTPChooser(endpoint=server.url, model="bright", timeout=5, backoff=0.01, cache_dir=tmp_path / "c")
        env = ChoiceArenaEnv(chooser=chooser, image_size=32, edit_budget=3, queries_per_step=4, n_competitors=2, eval_queries=8)
        obs, info = env.reset(seed=0)
        for _ in range(3):
            obs, r, term, trunc, info = env.step({"edit": 0, "magnitude": np.array([1.0], np.float32)})
        assert term
        m = info["metrics"]
        # a brighter photo never loses ground with a chooser that picks the brightest option
        assert m["final_win_rate"] >= m["initial_win_rate"]
        assert m["eval_exact"] == 0.0 and info["cost"]["eval_queries"] == 16
        # identical queries (temperature 0) are served by the cache: fewer requests than queries
        total = info["cost"]["queries"] + info["cost"]["eval_queries"]
        assert len(server.requests) < total
        assert sum(r.cached for r in chooser.log) == total - len(server.requests)
    finally:
        server.close()
