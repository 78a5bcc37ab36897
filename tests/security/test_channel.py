"""The channel's protocol: values cross bit for bit; anything malformed is a ProtocolError, never a crash."""

from __future__ import annotations

import os
import pickle
import struct

import numpy as np
import pytest

from icmlgym.runner.channel import (
    DEFAULT_MAX_MESSAGE, PROTOCOL_VERSION, Channel, PeerError, ProtocolError, decode, encode, expect, frame,
)


def roundtrip(value, pickle_ok=False):
    return decode(encode(value, allow_pickle=pickle_ok), allow_pickle=pickle_ok)


def test_values_cross_exactly():
    value = {
        "obs": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
        "mask": np.array([True, False]),
        "i": np.int64(-3), "f": np.float32(0.1), "nan": float("nan"), "inf": -float("inf"), "x": 0.1 + 0.2,
        "t": (1, "a", (2.5,)), "b": b"\x00\xff", 7: "int key", "~tilde": 1, "nested": [{"k": np.uint8(255)}],
    }
    out = roundtrip(value)
    assert out["obs"].dtype == np.float32 and out["obs"].tobytes() == value["obs"].tobytes() and out["obs"].shape == (3, 4)
    assert out["mask"].dtype == bool and out["i"].dtype == np.int64 and out["i"] == -3
    assert out["f"].dtype == np.float32 and out["f"] == np.float32(0.1)
    assert np.isnan(out["nan"]) and out["inf"] == -float("inf") and out["x"] == 0.1 + 0.2
    assert out["t"] == (1, "a", (2.5,)) and out["b"] == b"\x00\xff" and out[7] == "int key" and out["~tilde"] == 1
    assert out["nested"][0]["k"] == 255 and out["nested"][0]["k"].dtype == np.uint8


def test_only_the_evaluator_side_sends_pickles():
    from gymnasium.spaces import Discrete

    assert roundtrip(Discrete(3), pickle_ok=True) == Discrete(3)
    with pytest.raises(ProtocolError, match="cannot send"):
        encode(Discrete(3))
    payload = encode({"x": Discrete(3)}, allow_pickle=True)
    with pytest.raises(ProtocolError, match="never unpickles"):
        decode(payload)
    with pytest.raises(ProtocolError):
        decode(encode(np.array([object()], dtype=object), allow_pickle=True))


@pytest.mark.parametrize("payload,reason", [
    (b'{"~nd": ["<f8", [1000000], "AAAA"]}', "does not match"),
    (b'{"~nd": ["O", [1], "AAAA"]}', "not numeric"),
    (b'{"~zz": 1}', "unknown tag"),
    (b"[1, 2", "malformed message"),
    (b"[" * 100000 + b"]" * 100000, "malformed"),
    (b'{"~pk": "' + __import__("base64").b64encode(pickle.dumps(print)) + b'"}', "never unpickles"),
])
def test_malformed_payloads(payload, reason):
    with pytest.raises(ProtocolError, match=reason):
        decode(payload)


def _pair(max_message=DEFAULT_MAX_MESSAGE):
    ch, theirs = Channel.pair(max_message)
    return ch, theirs


def test_frames_checked_before_the_payload_is_read():
    ch, theirs = _pair(max_message=1024)
    try:
        theirs.sendall(struct.pack(">2sBBI", b"IG", PROTOCOL_VERSION, 0, 2**31))
        with pytest.raises(ProtocolError, match="oversized"):
            ch.recv(timeout=2)
        ch._buf.clear()  # a failed frame ends the run; here the next case starts afresh
        theirs.sendall(struct.pack(">2sBBI", b"IG", PROTOCOL_VERSION + 1, 0, 2) + b"[]")
        with pytest.raises(ProtocolError, match="protocol version"):
            ch.recv(timeout=2)
        ch._buf.clear()
        theirs.sendall(b"HTTP/1.1 200 OK\r\n")
        with pytest.raises(ProtocolError, match="malformed frame header"):
            ch.recv(timeout=2)
        ch._buf.clear()
        theirs.sendall(struct.pack(">2sBBI", b"IG", PROTOCOL_VERSION, 1, 2) + b"[]")
        with pytest.raises(ProtocolError, match="never unpickles"):
            ch.recv(timeout=2)
        with pytest.raises(ProtocolError, match="message of 1992 bytes exceeds the limit of 1024"):
            ch.send("x" * 1990)
    finally:
        ch.close()
        theirs.close()


def test_late_and_closed():
    ch, theirs = _pair()
    with pytest.raises(ProtocolError, match="late"):
        ch.recv(timeout=0.2, what="the answer to 'act'")
    theirs.sendall(frame(encode(["action", 1]))[:5])  # half a header, then silence
    with pytest.raises(ProtocolError, match="late"):
        ch.recv(timeout=0.2)
    theirs.close()
    with pytest.raises(ProtocolError, match="closed the channel"):
        ch.recv(timeout=2)
    ch.close()


def test_answers_are_checked_against_the_call():
    assert expect(["action", 3], "action") == 3
    with pytest.raises(PeerError, match="boom"):
        expect(["error", "boom"], "action")
    for bad in (["bye", {}], "action", [], [1, 2], ["action", 1, 2]):
        with pytest.raises(ProtocolError):
            expect(bad, "action")


def test_a_round_trip_over_a_socket():
    ch, theirs = _pair()
    other = Channel(os.dup(theirs.fileno()), allow_pickle=True)
    theirs.close()
    try:
        ch.send([["act", np.ones(3), {"cost": {"env_steps": 1}}]], pickle_ok=True)
        calls = other.recv(timeout=2)
        assert calls[0][0] == "act" and calls[0][1].tolist() == [1.0, 1.0, 1.0]
        other.send(["action", np.int64(2)])
        assert expect(ch.recv(timeout=2), "action") == 2
    finally:
        ch.close()
        other.close()
