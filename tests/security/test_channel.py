"""The channel's protocol: values cross bit for bit; anything malformed is a ProtocolError, never a crash."""

from __future__ import annotations

import os
import pickle
import select
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


# -- the step path over the sandbox's pipes: Channel.step (evaluator) and Channel.exchange (agent) --


def _pipe_ends(max_message=DEFAULT_MAX_MESSAGE):
    ev, (r, w) = Channel.pipes(max_message)
    return ev, Channel(r, w, max_message=max_message, allow_pickle=True)


def _raw_frame(ch):
    """The bytes of the next frame the channel ``ch`` (the agent's end) receives, read raw."""
    header = os.read(ch.rfd, 8)
    (length,) = struct.unpack_from(">I", header, 4)
    body = b""
    while len(body) < length:
        body += os.read(ch.rfd, length - len(body))
    return header + body


def test_the_step_frame_is_send_steps_frame_byte_for_byte():
    ev, ag = _pipe_ends()
    try:
        obs = np.array([1.0, 0.25], dtype=np.float32)
        for info in ({"cost": {"env_steps": 4}}, {"metrics": {"x": 0.5, "n": 3, "s": "a", "t": (1, None)}}, {}):
            update = ["update", 0.5, obs, False, True, info]
            ev.send_step(update)
            reference = _raw_frame(ag)
            ag.send_action(1)  # the answer is there before step reads it
            assert ev.step(update, 5.0) == 1
            assert _raw_frame(ag) == reference
    finally:
        ev.close()
        ag.close()


def test_exchange_decodes_what_decode_step_values_decodes():
    from icmlgym.runner.channel import STEP, decode_step_values

    ev, ag = _pipe_ends()
    try:
        for obs, info in ((np.arange(6, dtype=np.float32).reshape(2, 3) / 7, {"cost": {"env_steps": 3}}),
                          (np.array([1.0, 2.0], dtype=">f8"), {"arr": np.arange(3), "x": np.float64(0.5)}),  # a new layout
                          (np.array([3.0, 4.0], dtype=">f8"), {"k": [1, 2]})):  # the cached one
            ev.send_step(["update", 0.25, obs, True, False, info])
            payload = _raw_frame(ag)[8:]
            ev.send_step(["update", 0.25, obs, True, False, info])
            fmt, values = ag.exchange(7)
            assert fmt == STEP
            expected = decode_step_values(payload)
            reward, out, term, trunc, out_info = values
            assert (reward, term, trunc) == expected[0:1] + expected[2:4] == (0.25, True, False)
            assert out.dtype == obs.dtype and out.shape == obs.shape and out.tobytes() == obs.tobytes()
            assert out.flags.writeable and out.flags.c_contiguous
            assert repr(out_info) == repr(info)
            assert expect(ev.recv(5.0), "action") == 7
        # anything but a step frame comes back undecoded, checked
        ev.send([["close"]], pickle_ok=True)
        fmt, payload = ag.exchange(2)
        assert fmt == 1 and pickle.loads(payload) == [["close"]]
        assert expect(ev.recv(5.0), "action") == 2
    finally:
        ev.close()
        ag.close()


def test_recv_step_sends_nothing_and_decodes_as_exchange_does():
    from icmlgym.runner.channel import STEP

    ev, ag = _pipe_ends()
    try:
        obs = np.array([0.5, 1.5], dtype=np.float32)
        ev.send_step(["update", 1.0, obs, False, False, {"cost": {"env_steps": 1}}])
        sent = ag.bytes_sent, ag.frames_sent
        fmt, (reward, out, term, trunc, info) = ag.recv_step()
        assert fmt == STEP and (reward, term, trunc, info) == (1.0, False, False, {"cost": {"env_steps": 1}})
        assert out.tobytes() == obs.tobytes() and out.flags.writeable
        assert (ag.bytes_sent, ag.frames_sent) == sent  # nothing went back
        assert not select.select([ev.rfd], [], [], 0)[0]
        ev.send([["close"]], pickle_ok=True)
        fmt, payload = ag.exchange(0.25)  # a float action: the general path, then the same read
        assert fmt == 1 and pickle.loads(payload) == [["close"]]
        assert expect(ev.recv(5.0), "action") == 0.25
        assert ag.frames_sent == sent[1] + 1
    finally:
        ev.close()
        ag.close()


def test_infos_with_arrays_switch_to_the_raw_array_pickler():
    ev, ag = _pipe_ends()
    try:
        obs = np.zeros(2, dtype=np.float32)
        ag.send_action(0)
        assert ev.step(["update", 0.0, obs, False, False, {"a": 1}], 5.0) == 0 and not ev._info_arrays
        ag_frame = _raw_frame(ag)
        assert b"numpy" not in ag_frame
        ag.send_action(1)
        info = {"steps": np.arange(4, dtype=np.int64)}
        assert ev.step(["update", 0.0, obs, False, False, info], 5.0) == 1 and ev._info_arrays
        sent = _raw_frame(ag)
        ev.send_step(["update", 0.0, obs, False, False, info])
        assert _raw_frame(ag) == sent  # the channel's own pickler, as send_step uses
    finally:
        ev.close()
        ag.close()


def test_step_answers_are_checked_as_every_answer():
    ev, ag = _pipe_ends(max_message=1024)
    obs = np.zeros(2, dtype=np.float32)
    update = ["update", 0.0, obs, False, False, {}]
    try:
        ag.send(["action", {"not": "a number"}])  # JSON: decoded and handed back
        assert ev.step(update, 5.0) == {"not": "a number"}
        os.write(ag.wfd, b"HTTP/1.1 200 OK\r\n")
        with pytest.raises(ProtocolError, match="malformed frame header"):
            ev.step(update, 5.0)
        ev._buf.clear()
        ag.send(["error", "boom"])
        with pytest.raises(PeerError, match="boom"):
            ev.step(update, 5.0)
        ag.send(["bye", {}])
        with pytest.raises(ProtocolError, match="wrong kind"):
            ev.step(update, 5.0)
        os.write(ag.wfd, struct.pack(">2sBBI", b"IG", PROTOCOL_VERSION, 0, 4096))
        with pytest.raises(ProtocolError, match="oversized"):
            ev.step(update, 5.0)
        ev._buf.clear()
        with pytest.raises(ProtocolError, match="exceeds the limit of 1024"):
            ev.step(["update", 0.0, obs, False, False, {"x": "y" * 2000}], 5.0)
    finally:
        ev.close()
        ag.close()


@pytest.mark.parametrize("sent", [b"", b"IG\x01\x02\x00"])  # nothing, or the start of a frame and then silence
def test_a_late_step_answer_fails_on_time_and_ends_the_channel(sent):
    import time

    ev, ag = _pipe_ends()
    try:
        os.write(ag.wfd, sent)
        t0 = time.monotonic()
        with pytest.raises(ProtocolError, match="late: no the agent's answer to 'act_next' within its deadline"):
            ev.step(["update", 0.0, np.zeros(2, dtype=np.float32), False, False, {}], 0.3)
        waited = time.monotonic() - t0
        assert 0.3 <= waited < 1.0  # never early; the watchdog looks every 0.0375 s here
        ag.send_action(1)  # too late: the channel stays failed
        for call in (lambda: ev.recv(5.0), lambda: ev.step(["update", 0.0, np.zeros(2, dtype=np.float32), False, False, {}], 5.0)):
            with pytest.raises(ProtocolError, match="late"):
                call()
    finally:
        ev.close()
        ag.close()


def test_an_answer_within_its_deadline_is_never_late():
    import threading
    import time

    ev, ag = _pipe_ends()
    obs = np.zeros(2, dtype=np.float32)
    try:
        for delay in (0.0, 0.05, 0.15):  # answered by another thread while step waits
            t = threading.Timer(delay, lambda: ag.send_action(5))
            t.start()
            assert ev.step(["update", 0.0, obs, False, False, {}], 0.4) == 5
            t.join()
        time.sleep(0.5)  # a channel between steps (the env's turn) is not waiting: nothing is late
        ag.send_action(6)
        assert ev.step(["update", 0.0, obs, False, False, {}], 0.4) == 6
    finally:
        ev.close()
        ag.close()


def test_a_closed_peer_and_the_watchdogs_end():
    obs = np.zeros(2, dtype=np.float32)
    ev, ag = _pipe_ends()
    watchdog = ev._watchdog
    assert watchdog is not None and watchdog._thread.is_alive()
    ag.close()
    with pytest.raises(ProtocolError, match="closed the channel before receiving"):  # the write fails: no reader
        ev.step(["update", 0.0, obs, False, False, {}], 5.0)
    ev.close()
    watchdog._thread.join(timeout=2)
    assert not watchdog._thread.is_alive()
    r, w = os.pipe()  # (likely the descriptors' numbers the channel had)
    ev.close()  # twice is fine, and closes nothing of anyone else's
    assert os.write(w, b"x") == 1 and os.read(r, 1) == b"x"
    os.close(r)
    os.close(w)
    ev, ag = _pipe_ends()
    os.close(ag.wfd)  # it reads the step, and never answers
    with pytest.raises(ProtocolError, match="closed the channel before sending the agent's answer"):
        ev.step(["update", 0.0, obs, False, False, {}], 5.0)
    ev.close()
    os.close(ag.rfd)


def test_the_evaluators_end_never_decodes_a_step_frame_from_the_agent():
    from icmlgym.runner.channel import STEP, frame

    ev, ag = _pipe_ends()
    try:
        ag.send_step(["update", 0.5, np.zeros(2, dtype=np.float32), False, False, {}])  # the agent's end, sending one
        with pytest.raises(ProtocolError, match="never unpickles"):
            ev.recv_step()
        ev._buf.clear()
        os.write(ag.wfd, frame(b"\x00" * 30, fmt=STEP))
        with pytest.raises(ProtocolError, match="never unpickles"):
            ev.recv_step()
    finally:
        ev.close()
        ag.close()
