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


# -- the per-step fast paths: format 2 (the agent's action) and format 3 (the evaluator's step) --


def _ends():
    import socket

    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return Channel(a.detach()), Channel(b.detach(), allow_pickle=True)  # evaluator's end, agent's end


@pytest.mark.parametrize("action", [
    3, -2**63, 2**63 - 1, 0.1 + 0.2, float("nan"), np.int64(-3), np.uint8(255), np.float32(0.1), np.bool_(True),
    np.complex64(1 + 2j), np.array([1, 0, 3], dtype=np.int64), np.zeros((2, 3), dtype=">f4"), np.array(7, dtype=np.int16),
    np.zeros((0, 4), dtype=np.float64), np.arange(6, dtype=np.float64).reshape(2, 3).T,
])
def test_actions_take_the_binary_path_and_cross_exactly(action):
    from icmlgym.runner.channel import ACTION, decode_action, encode_action

    ev, ag = _ends()
    assert decode_action(encode_action(action))[0] == "action"
    ag.send(["action", action])
    assert ev._sock.recv(8, __import__("socket").MSG_PEEK)[3] == ACTION  # the binary format, not JSON
    kind, out = ev.recv(5.0)
    assert kind == "action" and type(out) is type(action)
    if isinstance(action, (np.ndarray, np.generic)):
        assert out.dtype == action.dtype and np.shape(out) == np.shape(action)
        assert np.asarray(out).tobytes() == np.ascontiguousarray(action).tobytes()
        if isinstance(out, np.ndarray):
            out[...] = 0  # writable, as the agent's own array was
    else:
        assert struct.pack("<d", float(out)) == struct.pack("<d", float(action))
    for ch in (ev, ag):
        ch.close()


def test_other_answers_still_go_as_json():
    from icmlgym.runner.channel import encode_action

    for value in (True, [1, 2], {"op": 0, "compound": np.int64(3)}, 2**70, np.array(["a"]), None):
        assert encode_action(value) is None
    ev, ag = _ends()
    ag.send(["action", {"op": 0, "compound": np.int64(3)}])
    assert ev.recv(5.0) == ["action", {"op": 0, "compound": np.int64(3)}]


@pytest.mark.parametrize("payload,reason", [
    (b"a\x02|O" + bytes([1]) + struct.pack("<q", 1) + b"x" * 8, "not numeric"),
    (b"a\x03<f8" + bytes([1]) + struct.pack("<q", 1000) + b"x" * 8, "does not match"),
    (b"a\x03<f8" + bytes([1]) + struct.pack("<q", -1) + b"x" * 8, "does not match"),
    (b"a\x03<f8" + bytes([200]) + b"x" * 8, "dimensions"),
    (b"s\x03<f8" + b"x" * 3, "scalar"),
    (b"s\x07float64" + b"x" * 8, "not numeric"),  # only canonical dtype strings
    (b"i\x00" + b"x" * 3, "malformed action frame"),
    (b"z\x00", "malformed action frame"),
    (b"", "malformed action frame"),
])
def test_malformed_action_frames(payload, reason):
    from icmlgym.runner.channel import decode_action

    with pytest.raises(ProtocolError, match=reason):
        decode_action(payload)


def test_step_frames_cross_exactly_and_only_towards_the_agent():
    from icmlgym.runner.channel import STEP, frame

    ev, ag = _ends()
    obs = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    info = {"cost": {"env_steps": 3}, "metrics": {"x": np.float64(0.5)}}
    ev.send_step(["update", 0.25, obs, False, True, info])
    calls = ag.recv(5.0)
    assert calls[1] == ["act_next"] and calls[0][0] == "update"
    _, reward, out, term, trunc, out_info = calls[0]
    assert reward == 0.25 and term is False and trunc is True and out_info == info
    assert out.dtype == obs.dtype and out.tobytes() == obs.tobytes() and out.flags.writeable
    # not a step of that shape (an int reward, a dict observation): the general pickle frame
    ev.send_step(["update", 1, {"a": obs}, np.bool_(False), False, {}])
    assert ag.recv(5.0)[0][2]["a"].tobytes() == obs.tobytes()
    # an agent sending a step frame (a pickle inside) is refused like a pickle
    os.write(ag.wfd, frame(b"\x00" * 20, fmt=STEP))
    with pytest.raises(ProtocolError, match="never unpickles"):
        ev.recv(5.0)
