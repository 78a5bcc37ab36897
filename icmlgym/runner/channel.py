"""The evaluator/agent channel: a versioned, size-limited message protocol over a pipe pair or a socket.

The evaluator (env, metrics, record builder) and a submitted agent run in
separate processes; this module is everything that crosses between them.

**Transport.** A sandbox's channel is two pipes (:meth:`Channel.pipes`: cheaper per
message than a socket); :meth:`Channel.pair` gives a Unix socket pair. Either way a
deadline costs no extra system call on the sender's side; on a pipe the receiver
calls ``poll`` once before its first read of a message, on a socket the kernel's receive
timeout does it. The evaluator's step answers on a pipe (:meth:`Channel.step`, every step)
are read with a plain blocking read instead; a watchdog thread keeps their deadline
(:class:`_Watchdog`).

**Frames.** Each message is one frame: an 8-byte header (``b"IG"``, the
protocol version as one byte, a format byte, the payload length as a big-endian
uint32) and the payload. Format 0 is UTF-8 JSON with tagged values (below), what
the agent sends; format 1 is a pickle, what the evaluator sends (the agent's side
unpickles what the trusted evaluator sent: exact types, and the cheapest encoding
for observations and infos; numeric numpy arrays are pickled as their raw bytes,
dtype and shape, which costs a tenth of numpy's own reduction). The evaluator refuses
a format-1 frame, so nothing the agent sends is ever unpickled. Format 2 is the
agent's fast path for its most frequent message, ``["action", a]`` with ``a`` a
Python int or float, a numeric numpy scalar or a numeric numpy array: a kind byte
and the value's raw bytes (arrays: dtype, shape, then the data), checked like the
JSON arrays (numeric dtype, no fields, byte count matching the shape); it decodes
to the same ``["action", a]``, bit for bit. A frame whose magic, version or format is wrong,
whose length passes the receiver's limit (:data:`DEFAULT_MAX_MESSAGE`, checked
before the payload is read), whose JSON does not parse, or that does not arrive
before its deadline raises :class:`ProtocolError`; the evaluator turns that into
a ``failed`` run with the reason, never a crash of its driver.

**Values (JSON).** JSON plus tagged objects, so that a value crosses bit for bit:
numpy arrays (``{"~nd": [dtype, shape, base64]}``), numpy scalars (``~ns``: dtype
and the exact Python value; ``~nc`` for complex),
tuples (``~t``), bytes (``~b``) and dicts whose keys are not all strings or
start with ``~`` (``~d``: a list of pairs). Floats use Python's ``repr`` (exact);
NaN and infinities are allowed; the JSON decoder never builds anything else (no
``object`` arrays, no pickles: a ``~pk`` value, which only :func:`encode` with
``allow_pickle`` writes, is refused unless the decoder allows it).

**Calls** (version 1). A frame from the evaluator is a list of calls, run in order;
only the last one may expect an answer, so that the calls that need none
(``reset``, ``update``) ride along with the next one that does (batching)::

    ["hello", {"protocol": 1, "agent": {...}, "spec": <~pk>, "max_message": n}]  -> ["ready", {...}]
    ["reset", seed, episode]                                   (no answer)
    ["update", reward, next_obs, terminated, truncated, info] (no answer; the agent
                                                               keeps its last obs and action)
    ["act", obs, info]                                         -> ["action", action]
    ["act_next"]      act on the last update's next_obs and info -> ["action", action]
    ["train", budget, train_seed, agent_seed]                  -> ["trained"]
    ["close"]                                                  -> ["bye", {...}]

An agent-side exception answers ``["error", text]`` (the text capped). Every
answer is checked against the call that asked for it.
"""

from __future__ import annotations

import base64
import copyreg
import fcntl
import io
import json
import math
import os
import pickle
import select
import socket
import stat
import struct
import threading
import time
import weakref
from typing import Any

import numpy as np

PROTOCOL_VERSION = 1
MAGIC = b"IG"
_HEADER = struct.Struct(">2sBBI")
HEADER_SIZE = _HEADER.size
DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024  # bytes per frame payload
ERROR_TEXT_LIMIT = 64 * 1024
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux's fcntl command (named in Python 3.10+)

# the calls of version 1 and the answer each expects (None: no answer)
CALLS: dict[str, str | None] = {
    "hello": "ready",
    "reset": None,
    "update": None,
    "act": "action",
    "act_next": "action",
    "train": "trained",
    "close": "bye",
}


class ProtocolError(RuntimeError):
    """A message that breaks the protocol: malformed, oversized, of the wrong kind, or late."""


class PeerError(RuntimeError):
    """The other side reported an exception (its text, capped)."""


# -- values ------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _pack(obj: Any, allow_pickle: bool) -> Any:
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is float:
        return obj
    if t is list:
        return [_pack(v, allow_pickle) for v in obj]
    if t is dict:
        if all(type(k) is str and not k.startswith("~") for k in obj):
            return {k: _pack(v, allow_pickle) for k, v in obj.items()}
        return {"~d": [[_pack(k, allow_pickle), _pack(v, allow_pickle)] for k, v in obj.items()]}
    if t is tuple:
        return {"~t": [_pack(v, allow_pickle) for v in obj]}
    if t is np.ndarray and obj.dtype.kind in "biufc" and not obj.dtype.fields:
        a = np.ascontiguousarray(obj)
        return {"~nd": [a.dtype.str, list(a.shape), _b64(a.tobytes())]}
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        return {"~ns": [obj.dtype.str, obj.item()]}  # exact: ints, bools, and floats widened to Python's
    if isinstance(obj, np.generic) and obj.dtype.kind == "c":
        return {"~nc": [obj.dtype.str, _b64(obj.tobytes())]}
    if t is bytes:
        return {"~b": _b64(obj)}
    if allow_pickle:
        return {"~pk": _b64(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))}
    raise ProtocolError(f"cannot send a value of type {t.__module__}.{t.__qualname__}; "
                        "send numbers, strings, bytes, lists, tuples, dicts or numeric numpy arrays")


def _unpack_hook(allow_pickle: bool):
    def hook(d: dict) -> Any:
        if len(d) != 1:
            return d
        (tag, v), = d.items()
        if not tag.startswith("~"):
            return d
        try:
            if tag == "~nd":
                dtype, shape, data = v
                dt = np.dtype(dtype)
                if dt.kind not in "biufc" or dt.fields:
                    raise ProtocolError(f"array dtype {dtype!r} is not numeric")
                raw = base64.b64decode(data, validate=True)
                shape = tuple(int(s) for s in shape)
                if any(s < 0 for s in shape) or math.prod(shape) * dt.itemsize != len(raw):
                    raise ProtocolError(f"array of shape {shape} and dtype {dtype} does not match its {len(raw)} bytes")
                return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
            if tag == "~ns":
                dtype, value = v
                dt = np.dtype(dtype)
                if dt.kind not in "biuf" or dt.fields or type(value) not in (int, float, bool):
                    raise ProtocolError(f"scalar of dtype {dtype!r} with value {str(value)[:40]!r}")
                out = dt.type(value)
                if dt.kind in "iu" and int(out) != value:
                    raise ProtocolError(f"{value} does not fit dtype {dtype}")
                return out
            if tag == "~nc":
                dtype, data = v
                dt = np.dtype(dtype)
                raw = base64.b64decode(data, validate=True)
                if dt.kind != "c" or len(raw) != dt.itemsize:
                    raise ProtocolError(f"complex scalar of dtype {dtype!r} with {len(raw)} bytes")
                return np.frombuffer(raw, dtype=dt)[0]
            if tag == "~t":
                return tuple(v)
            if tag == "~d":
                return {_hashable(k): val for k, val in v}
            if tag == "~b":
                return base64.b64decode(v, validate=True)
            if tag == "~pk":
                if not allow_pickle:
                    raise ProtocolError("the evaluator never unpickles what an agent sends")
                return pickle.loads(base64.b64decode(v, validate=True))
        except ProtocolError:
            raise
        except Exception as err:  # noqa: BLE001 - any bad tagged value is a malformed message
            raise ProtocolError(f"malformed {tag} value: {type(err).__name__}: {err}") from None
        raise ProtocolError(f"unknown tag {tag!r}")

    return hook


def _hashable(k: Any) -> Any:
    if isinstance(k, list):
        raise ProtocolError("a dict key cannot be a list")
    return k


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=True)  # built once: json.dumps builds one per call
_DECODERS = {flag: json.JSONDecoder(object_hook=_unpack_hook(flag)) for flag in (False, True)}


def encode(obj: Any, allow_pickle: bool = False) -> bytes:
    """The JSON payload of ``obj`` (see the module docstring for the tagged types)."""
    return _ENCODER.encode(_pack(obj, allow_pickle)).encode("utf-8")


def decode(data: bytes, allow_pickle: bool = False) -> Any:
    """The value of a payload; :class:`ProtocolError` for anything malformed."""
    try:
        return _DECODERS[bool(allow_pickle)].decode(data.decode("utf-8"))
    except ProtocolError:
        raise
    except (ValueError, RecursionError, TypeError, UnicodeDecodeError) as err:
        raise ProtocolError(f"malformed message: {type(err).__name__}: {str(err)[:200]}") from None


JSON, PICKLE, ACTION, STEP = 0, 1, 2, 3  # payload formats (the header's format byte)


def _array(dtype: str, shape: tuple[int, ...], data: bytes) -> np.ndarray:
    """An array rebuilt from what :func:`_reduce_array` pickled (writable, like the original)."""
    return np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)


def _reduce_array(a: np.ndarray) -> Any:
    if a.dtype.kind in "biufc" and not a.dtype.fields:
        return _array, (a.dtype.str, a.shape, a.tobytes())
    return a.__reduce_ex__(pickle.HIGHEST_PROTOCOL)


_STEP_HEAD = struct.Struct("<dBBBB")  # reward, terminated, truncated, dtype-string length, ndim
_LAYOUTS: dict[tuple[np.dtype, tuple[int, ...]], tuple[int, int, bytes]] = {}  # an observation's packed dtype and shape
_SHAPES: dict[int, struct.Struct] = {}


def _shape_struct(ndim: int) -> struct.Struct:
    st = _SHAPES.get(ndim)
    if st is None:
        st = _SHAPES[ndim] = struct.Struct(f"<{ndim}q")
    return st


def _dumps(obj: Any, pickler: "_Pickler", out: io.BytesIO) -> bytes:
    """``obj`` pickled by a reused pickler (cheaper than building one per message)."""
    out.seek(0)
    out.truncate()
    pickler.clear_memo()
    pickler.dump(obj)
    return out.getvalue()


def encode_step(update: list[Any], pickler: "_Pickler", out: io.BytesIO) -> bytes | None:
    """The format-3 payload of ``[update, ["act_next"]]`` (the evaluator's message of every step):
    reward and flags packed, the observation's raw bytes, the info pickled; None when the step
    is not of that shape (a float reward, bool flags, a numeric array observation)."""
    parts = _step_parts(update, pickler, out)
    return None if parts is None else b"".join(parts)


def _step_parts(update: list[Any], pickler: "_Pickler", out: io.BytesIO) -> tuple[bytes, bytes, bytes, bytes] | None:
    """The pieces of a format-3 payload (packed head, layout, observation bytes, info pickle), or None."""
    _, reward, obs, terminated, truncated, info = update
    if type(reward) is not float or type(obs) is not np.ndarray or type(terminated) is not bool or type(truncated) is not bool:
        return None
    key = (obs.dtype, obs.shape)
    layout = _LAYOUTS.get(key)
    if layout is None:
        name = _dtype_name(obs.dtype)
        if name is None or obs.ndim > _MAX_DIMS:
            return None
        if len(_LAYOUTS) > 256:  # observations of ever-new shapes: keep the cache small
            _LAYOUTS.clear()
        layout = _LAYOUTS[key] = (len(name), obs.ndim, name + _shape_struct(obs.ndim).pack(*obs.shape))
    n, ndim, tail = layout
    return _STEP_HEAD.pack(reward, terminated, truncated, n, ndim), tail, obs.tobytes(), _dumps(info, pickler, out)


def decode_step(data: bytes) -> list[Any]:
    """The calls a format-3 payload stands for (the agent's side: the info is a pickle from the evaluator)."""
    return [["update", *decode_step_values(data)], ["act_next"]]


def decode_step_values(data: bytes) -> tuple[float, np.ndarray, bool, bool, Any]:
    """``(reward, next_obs, terminated, truncated, info)`` of a format-3 payload (the agent's side)."""
    reward, terminated, truncated, n, ndim = _STEP_HEAD.unpack_from(data)
    end = _STEP_HEAD.size + n + 8 * ndim
    layout = _OBS_LAYOUTS.get(data[_STEP_HEAD.size : end])
    if layout is None:
        layout = _obs_layout(data, n, ndim)
    dt, shape, size = layout
    stop = end + size
    obs = np.ndarray(shape, dt, bytearray(data[end:stop]))  # its own writable copy, as the evaluator's was
    return reward, obs, bool(terminated), bool(truncated), pickle.loads(data[stop:])


_OBS_LAYOUTS: dict[bytes, tuple[np.dtype, tuple[int, ...], int]] = {}  # a step frame's layout bytes -> dtype, shape, byte size


def _obs_layout(data: bytes, n: int, ndim: int) -> tuple[np.dtype, tuple[int, ...], int]:
    at = _STEP_HEAD.size
    dt = _numeric_dtype(data[at : at + n])
    shape = _shape_struct(ndim).unpack_from(data, at + n)
    layout = (dt, shape, math.prod(shape) * dt.itemsize)
    if len(_OBS_LAYOUTS) > 256:
        _OBS_LAYOUTS.clear()
    _OBS_LAYOUTS[bytes(data[at : at + n + 8 * ndim])] = layout
    return layout


class _Pickler(pickle.Pickler):
    """The evaluator's pickler: numeric arrays travel as raw bytes (see the module docstring)."""

    dispatch_table = {**copyreg.dispatch_table, np.ndarray: _reduce_array}


_ACTION_HEAD = struct.Struct("<cB")  # kind (b"i" int, b"f" float, b"s" numpy scalar, b"a" array), dtype-string length
_I64, _F64 = struct.Struct("<q"), struct.Struct("<d")
_INT_ACTION = struct.Struct("<10sq")  # an int action's whole frame: its fixed first 10 bytes (header, kind, 0), the value
_U32 = struct.Struct(">I")  # a header's payload length
_STEP_FLAGS = struct.Struct("<dBB")  # a step payload's reward, terminated, truncated (the start of _STEP_HEAD)
_STEP_PREFIX = MAGIC + bytes((PROTOCOL_VERSION, STEP))  # the first 4 header bytes of every step frame
_STEP_OBS = HEADER_SIZE + _STEP_FLAGS.size  # where a step frame's layout (dtype-string length, ndim, dtype, shape) starts
_MAX_DIMS = 32


_NAMES: dict[np.dtype, bytes] = {}  # numeric dtype -> its dtype string (cached: dtype.str costs more than the rest)
_DTYPES: dict[bytes, np.dtype] = {}  # dtype string -> numeric dtype (only strings that passed the check)


def _dtype_name(dt: np.dtype) -> bytes | None:
    name = _NAMES.get(dt)
    if name is None:
        if dt.kind not in "biufc" or dt.fields:
            return None
        name = _NAMES[dt] = dt.str.encode("ascii")
    return name


def _numeric_dtype(name: bytes | bytearray) -> np.dtype:
    name = bytes(name)
    dt = _DTYPES.get(name)
    if dt is None:
        text = name.decode("ascii")
        dt = np.dtype(text)
        if dt.kind not in "biufc" or dt.fields or dt.str != text:
            raise ProtocolError(f"dtype {name[:40]!r} is not numeric")
        _DTYPES[name] = dt
    return dt


def encode_action(action: Any) -> bytes | None:
    """The format-2 payload of ``["action", action]``, or None when ``action`` is not a type it carries."""
    t = type(action)
    if t is int:
        if -(2**63) <= action < 2**63:
            return b"i\x00" + _I64.pack(action)
        return None
    if t is float:
        return b"f\x00" + _F64.pack(action)
    if t is np.ndarray or isinstance(action, np.generic):
        name = _dtype_name(action.dtype)
        if name is None:
            return None
        if t is np.ndarray:
            shape = action.shape
            return _ACTION_HEAD.pack(b"a", len(name)) + name + struct.pack(f"<B{len(shape)}q", len(shape), *shape) + action.tobytes()
        return _ACTION_HEAD.pack(b"s", len(name)) + name + action.tobytes()
    return None


def decode_action(data: bytes) -> list[Any]:
    """``["action", a]`` from a format-2 payload; :class:`ProtocolError` for anything malformed."""
    try:
        kind, n = _ACTION_HEAD.unpack_from(data)
        if kind == b"i" and len(data) == 10:
            return ["action", _I64.unpack_from(data, 2)[0]]
        if kind == b"f" and len(data) == 10:
            return ["action", _F64.unpack_from(data, 2)[0]]
        if kind in (b"s", b"a"):
            dt = _numeric_dtype(data[2 : 2 + n])
            at = 2 + n
            if kind == b"s":
                if len(data) - at != dt.itemsize:
                    raise ProtocolError(f"action scalar of dtype {dt.str} with {len(data) - at} bytes")
                return ["action", np.frombuffer(data, dtype=dt, offset=at)[0]]
            ndim = data[at]
            if ndim > _MAX_DIMS:
                raise ProtocolError(f"action array of {ndim} dimensions")
            shape = struct.unpack_from(f"<{ndim}q", data, at + 1)
            at += 1 + 8 * ndim
            if any(d < 0 for d in shape) or math.prod(shape) * dt.itemsize != len(data) - at:
                raise ProtocolError(f"action array of shape {shape} and dtype {dt.str} does not match its {len(data) - at} bytes")
            return ["action", np.frombuffer(bytearray(data[at:]), dtype=dt).reshape(shape)]
    except ProtocolError:
        raise
    except Exception as err:  # noqa: BLE001 - any undecodable action is a malformed message
        raise ProtocolError(f"malformed action frame: {type(err).__name__}: {err}") from None
    raise ProtocolError(f"malformed action frame (kind {bytes(data[:1])!r}, {len(data)} bytes)")


def _poll_ms(seconds: float) -> int:
    """``seconds`` as ``poll``'s timeout: whole milliseconds, rounded up, at least 1."""
    return min(max(1, math.ceil(seconds * 1000)), 2**31 - 1)


def frame(payload: bytes, max_message: int = DEFAULT_MAX_MESSAGE, fmt: int = JSON) -> bytes:
    """One frame: the header, then ``payload`` (``ProtocolError`` past ``max_message`` bytes)."""
    if len(payload) > max_message:
        raise ProtocolError(f"message of {len(payload)} bytes exceeds the limit of {max_message} bytes")
    return _HEADER.pack(MAGIC, PROTOCOL_VERSION, fmt, len(payload)) + payload


def cap_text(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters not kept]"


_NO_ANSWER = object()  # Channel.exchange's action when there is none to send (Channel.recv_step)
_PICKLED = frozenset((PICKLE, STEP))  # formats that hold a pickle: only the agent's side reads them
_DECODE = {JSON: decode, PICKLE: pickle.loads, ACTION: lambda p: decode_action(p), STEP: lambda p: decode_step(p)}


def decode_frame(fmt: int, payload: bytes) -> Any:
    """The message a frame of format ``fmt`` carries (its header already checked, see :meth:`Channel.recv_frame`)."""
    return _DECODE[fmt](payload)


# -- the endpoint ------------------------------------------------------------------------------


class Channel:
    """One end of the protocol over a connected stream socket (or any fd pair).

    Args:
        rfd, wfd: file descriptors to read frames from and write frames to.
        max_message: the largest payload this end accepts (and sends).
        allow_pickle: decode ``~pk`` values (True only on the agent's side).
    """

    def __init__(self, rfd: int, wfd: int | None = None, max_message: int = DEFAULT_MAX_MESSAGE, allow_pickle: bool = False) -> None:
        self.rfd = rfd
        self.wfd = rfd if wfd is None else wfd
        self.max_message = int(max_message)
        self.allow_pickle = allow_pickle
        self.bytes_sent = 0
        self.bytes_received = 0
        self.frames_sent = 0
        self._buf = bytearray()
        self._out = io.BytesIO()
        self._pickler = _Pickler(self._out, protocol=pickle.HIGHEST_PROTOCOL)
        self._timeout: float | None = None  # the socket's receive timeout as last set
        # the whole frame of an int action but its value (header, kind, dtype length): its fast path
        self._int_ok = self.max_message >= 10
        self._int_frame = _HEADER.pack(MAGIC, PROTOCOL_VERSION, ACTION, 10) + b"i\x00" if self._int_ok else b"\x00" * 10
        # the step frame's layout as last sent (observation dtype and shape, its layout bytes, the
        # payload's size but the info) and as last received (layout bytes, dtype, shape, where the
        # observation's bytes start and stop): see step and exchange
        self._out_dtype: Any = None
        self._out_shape: tuple[int, ...] | None = None
        self._out_key = b""
        self._out_fixed = 0
        self._in_key = b"\xff"  # matches no layout (a dtype string is shorter than 255 bytes)
        self._step_prefix = _STEP_PREFIX if allow_pickle else b"\xff"  # what starts a step frame this end may decode
        self._in_layout: tuple[np.dtype, tuple[int, ...], int, int] | None = None
        self._info_arrays = False  # an info held a numpy object: pickle infos with _Pickler from then on
        self._sock: socket.socket | None = None
        self._poll: Any = None
        # a pipe's step answers: a blocking read whose deadline a watchdog thread keeps (see step, _Watchdog)
        self._waits = 0  # odd while step waits for an answer
        self._wait_timeout: float | None = None  # that wait's deadline in seconds (None: none)
        self._watchdog: _Watchdog | None = None
        self._late = False  # the watchdog woke a wait past its deadline: every later read is late
        self._lock = threading.Lock()  # close() against the watchdog's wake-up (it opens this channel's read end)
        self._closed = False
        dup = os.dup(rfd)
        try:  # on a socket, deadlines are the kernel's receive timeout: one syscall per read, no select
            self._sock = socket.socket(fileno=dup)
            self._sock.setblocking(True)
        except OSError:
            os.close(dup)
            self._poll = select.poll()  # a pipe: one poll, then the read (see _wait)
            self._poll.register(rfd, select.POLLIN)
        self.transport = "socket" if self._sock is not None else "pipe"

    @classmethod
    def pair(cls, max_message: int = DEFAULT_MAX_MESSAGE) -> tuple["Channel", socket.socket]:
        """An evaluator-side channel and the socket to hand to the agent's process."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.setblocking(True)
        ch = cls(ours.detach(), max_message=max_message)
        return ch, theirs

    @classmethod
    def pipes(cls, max_message: int = DEFAULT_MAX_MESSAGE) -> tuple["Channel", tuple[int, int]]:
        """An evaluator-side channel over two pipes, and the agent's (read, write) descriptors.

        What :class:`~icmlgym.runner.sandbox.Sandbox` uses: a pipe's write and read cost
        less than a Unix socket's (about 2 us against 5 us for the same bytes, both in one
        process, on the machine of ``benchmarks/sandbox_channel.py``). Each pipe's buffer is
        raised to 1 MiB where the kernel allows, so a large frame blocks its writer no
        sooner than a socket's buffer would."""
        to_agent_r, to_agent_w = os.pipe()
        to_eval_r, to_eval_w = os.pipe()
        for fd in (to_agent_w, to_eval_w):
            try:
                fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
            except OSError:
                pass
        ch = cls(to_eval_r, to_agent_w, max_message=max_message)
        ch._watch_deadlines()  # here, before the caller pins its thread: the watchdog's thread keeps every CPU
        return ch, (to_agent_r, to_eval_w)

    def _watch_deadlines(self) -> None:
        """Start the watchdog of this pipe channel's step answers (see :meth:`step`), where it can wake a read."""
        wake = _reopen_for_write(self.rfd) if self._sock is None else None
        if wake is not None:
            os.close(wake)
            self._watchdog = _Watchdog(self)

    def send(self, obj: Any, pickle_ok: bool = False) -> None:
        """Send one message: a pickle with ``pickle_ok`` (the evaluator's side), else tagged JSON."""
        if pickle_ok:
            self._write(_dumps(obj, self._pickler, self._out), PICKLE)
            return
        if type(obj) is list and len(obj) == 2 and obj[0] == "action":
            fast = encode_action(obj[1])
            if fast is not None:
                self._write(fast, ACTION)
                return
        self._write(encode(obj), JSON)

    def send_step(self, update: list[Any]) -> None:
        """Send ``[update, ["act_next"]]`` (evaluator's side), as a format-3 frame when it fits one."""
        parts = _step_parts(update, self._pickler, self._out)
        if parts is None:
            self.send([update, ["act_next"]], pickle_ok=True)
            return
        head, tail, obs, info = parts
        size = len(head) + len(tail) + len(obs) + len(info)
        if size > self.max_message:
            raise ProtocolError(f"message of {size} bytes exceeds the limit of {self.max_message} bytes")
        data = b"".join((_HEADER.pack(MAGIC, PROTOCOL_VERSION, STEP, size), head, tail, obs, info))
        self._send_all(data)

    def send_action(self, action: Any) -> None:
        """Send ``["action", action]`` (the agent's answer to ``act``), as a format-2 frame when it fits one."""
        if type(action) is int and -(2**63) <= action < 2**63 and self._int_ok:  # the commonest action
            self._send_all(_INT_ACTION.pack(self._int_frame, action))
            return
        payload = encode_action(action)
        if payload is None:
            self.send(["action", action])
        else:
            self._write(payload, ACTION)

    def step(self, update: list[Any], timeout: float | None, what: str = "the agent's answer to 'act_next'") -> Any:
        """The evaluator's call of every step: send ``[update, ["act_next"]]``, return the agent's action.

        The usual step (a float reward, bool flags, a numeric array observation of the last step's
        dtype and shape) is one format-3 frame built from the cached layout in one ``join``; the
        info is pickled by ``pickle.dumps`` until one holds a numpy object (then by the channel's
        pickler, which sends arrays as raw bytes). On a pipe the answer's first read is a plain
        blocking read, no ``poll``: the channel's watchdog thread keeps its deadline (see
        :class:`_Watchdog`; a late answer raises :class:`ProtocolError` "late" as before, within
        a few hundredths of a second past its deadline); an int action is recognised by its fixed
        first 10 bytes. The frame's bytes and every check are those of :meth:`send_step` and
        :meth:`recv`."""
        _, reward, obs, terminated, truncated, info = update
        if (type(obs) is np.ndarray and type(reward) is float and type(terminated) is bool and type(truncated) is bool
                and ((obs.dtype is self._out_dtype and obs.shape == self._out_shape) or self._learn_out(obs))):
            if self._info_arrays:
                infob = _dumps(info, self._pickler, self._out)
            else:
                infob = pickle.dumps(info, pickle.HIGHEST_PROTOCOL)
                if b"numpy" in infob:  # numpy's own reduction was used: ours from now on (raw bytes, no numpy calls)
                    self._info_arrays = True
                    infob = _dumps(info, self._pickler, self._out)
            size = self._out_fixed + len(infob)
            if size > self.max_message:
                raise ProtocolError(f"message of {size} bytes exceeds the limit of {self.max_message} bytes")
            data = b"".join((_STEP_PREFIX, _U32.pack(size), _STEP_FLAGS.pack(reward, terminated, truncated),
                              self._out_key, obs.tobytes(), infob))
            try:
                sent = os.write(self.wfd, data)
            except OSError:
                sent = 0
            if sent == len(data):
                self.bytes_sent += sent
                self.frames_sent += 1
            else:
                self._send_all(data[sent:])  # (what is left, or the error as a ProtocolError)
                self.bytes_sent += sent
        else:
            self.send_step(update)
        if self._buf or self._late:
            return expect(self.recv(timeout, what), "action")
        if self._watchdog is None:  # a socket (the kernel's receive timeout), or a pipe without a watchdog (a poll first)
            data, deadline = self._first(timeout, what)
            if len(data) == 18 and data.startswith(self._int_frame):
                self.bytes_received += 18
                return _I64.unpack_from(data, 10)[0]
            return expect(self._decode_first(data, deadline, timeout, what), "action")
        # a pipe of Channel.pipes(): blocking reads, the watchdog keeps the whole answer's deadline
        if timeout != self._wait_timeout:
            self._wait_timeout = timeout
            self._watchdog.retick(timeout)
        self._waits += 1  # odd while the answer is read: the watchdog wakes the read once it outlives the deadline
        try:
            data = os.read(self.rfd, 65536)
            if len(data) == 18 and data.startswith(self._int_frame):
                self.bytes_received += 18
                return _I64.unpack_from(data, 10)[0]
            if self._late:
                raise ProtocolError(f"late: no {what} within its deadline")
            if not data:
                raise ProtocolError(f"the other side closed the channel before sending {what}")
            return expect(self._decode_first(data, None, None, what), "action")  # the rest: blocking reads too
        except OSError as err:
            raise ProtocolError(f"the channel broke while reading {what}: {err}") from None
        finally:
            self._waits += 1

    def _wake_late(self, waits: int) -> None:
        """(The watchdog's thread) the wait ``waits`` outlived its deadline: mark every later read late,
        and end the blocked read with one byte written through a write end of our own read pipe."""
        with self._lock:
            if self._closed or self._waits != waits:
                return
            self._late = True
            fd = _reopen_for_write(self.rfd)
            if fd is None:
                return
            try:
                os.write(fd, b"\x00")  # non-blocking: a full pipe is one the read does not wait on
            except OSError:
                pass
            finally:
                os.close(fd)

    def _learn_out(self, obs: np.ndarray) -> bool:
        """Cache the step frame's layout for observations like ``obs``; False if it cannot travel in one."""
        name = _dtype_name(obs.dtype)
        if name is None or obs.ndim > _MAX_DIMS:
            return False
        self._out_key = bytes((len(name), obs.ndim)) + name + _shape_struct(obs.ndim).pack(*obs.shape)
        self._out_fixed = _STEP_FLAGS.size + len(self._out_key) + obs.nbytes
        self._out_dtype, self._out_shape = obs.dtype, obs.shape
        return True

    def exchange(self, action: Any) -> tuple[int, Any]:
        """The agent's side of a step: answer ``["action", action]``, then receive the next frame.

        Returns ``(STEP, (reward, next_obs, terminated, truncated, info))`` for a step frame,
        decoded as :func:`decode_step_values` decodes it, else ``(fmt, payload)`` of the frame
        that came, checked as :meth:`recv_frame` checks it and not decoded (``_NO_ANSWER``: send nothing,
        what :meth:`recv_step` does)."""
        if type(action) is int and -(2**63) <= action < 2**63 and self._int_ok:
            data = _INT_ACTION.pack(self._int_frame, action)
            try:
                sent = os.write(self.wfd, data)  # 18 bytes: one write (a pipe writes up to PIPE_BUF bytes whole)
            except OSError:
                sent = 0
            if sent == 18:
                self.bytes_sent += 18
                self.frames_sent += 1
            else:
                self._send_all(data[sent:])  # (what is left, or the error as a ProtocolError)
                self.bytes_sent += sent
        elif action is not _NO_ANSWER:
            self.send_action(action)
        # the next frame, read here rather than by a call of recv_step (one Python call less per step)
        if self._buf or self._sock is not None:
            fmt, payload = self.recv_frame()
            return (STEP, decode_step_values(payload)) if fmt == STEP else (fmt, payload)
        try:
            data = os.read(self.rfd, 65536)
        except OSError as err:
            raise ProtocolError(f"the channel broke while reading a message: {err}") from None
        if not data:
            raise ProtocolError("the other side closed the channel before sending a message")
        n = len(data)
        if (n >= _STEP_OBS + 2 and data.startswith(self._step_prefix)
                and n - HEADER_SIZE == _U32.unpack_from(data, 4)[0] <= self.max_message):  # exactly one step frame
            self.bytes_received += n
            reward, terminated, truncated = _STEP_FLAGS.unpack_from(data, HEADER_SIZE)
            layout = self._in_layout if data.startswith(self._in_key, _STEP_OBS) else self._learn_in(data)
            dt, shape, start, stop = layout  # type: ignore[misc]
            obs = np.ndarray(shape, dt, bytearray(data[start:stop]))  # its own writable copy, as the evaluator's was
            return STEP, (reward, obs, bool(terminated), bool(truncated), pickle.loads(data[stop:]))
        if self._whole(data):
            self.bytes_received += n
            fmt, payload = data[3], data[HEADER_SIZE:]
        else:
            self._buf += data
            fmt, payload = self._frame(None, None, "a message", False)
        return (STEP, decode_step_values(payload)) if fmt == STEP else (fmt, payload)

    def recv_step(self) -> tuple[int, Any]:
        """The next frame, as :meth:`exchange` returns it (no deadline: the agent's side waits for its calls)."""
        return self.exchange(_NO_ANSWER)

    def _learn_in(self, data: bytes) -> tuple[np.dtype, tuple[int, ...], int, int]:
        """The observation layout of the step frame ``data`` (dtype, shape, start and stop of its bytes), cached."""
        n, ndim = data[_STEP_OBS], data[_STEP_OBS + 1]
        at = _STEP_OBS + 2
        dt = _numeric_dtype(data[at : at + n])
        shape = _shape_struct(ndim).unpack_from(data, at + n)
        start = at + n + 8 * ndim
        self._in_key = bytes(data[_STEP_OBS:start])
        self._in_layout = (dt, shape, start, start + math.prod(shape) * dt.itemsize)
        return self._in_layout

    def _write(self, payload: bytes, fmt: int) -> None:
        size = len(payload)
        if size > self.max_message:
            raise ProtocolError(f"message of {size} bytes exceeds the limit of {self.max_message} bytes")
        self._send_all(_HEADER.pack(MAGIC, PROTOCOL_VERSION, fmt, size) + payload)

    def _send_all(self, data: bytes) -> None:
        size = len(data)
        try:
            n = os.write(self.wfd, data)
            if n < size:
                view = memoryview(data)[n:]
                while view:
                    view = view[os.write(self.wfd, view):]
        except BrokenPipeError:
            raise ProtocolError("the other side closed the channel before receiving a message") from None
        except OSError as err:
            raise ProtocolError(f"the channel broke while sending a message: {err}") from None
        self.bytes_sent += size
        self.frames_sent += 1

    def _wait(self, timeout: float | None, what: str) -> None:
        """Before the first read of a message: arm its deadline (a socket's receive timeout), or wait for
        data until it (a blocking pipe: ``poll``); :class:`ProtocolError` when nothing came in time."""
        if self._sock is not None:
            if timeout != self._timeout:
                self._set_timeout(timeout)
        elif timeout is not None and not self._poll.poll(_poll_ms(timeout)):
            raise ProtocolError(f"late: no {what} within its deadline")

    def _first(self, timeout: float | None, what: str) -> tuple[bytes, float | None]:
        """The first read of a message, by its deadline, and that deadline (None without ``timeout``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self._wait(timeout, what)
        chunk = self._read(what)
        if self._late:  # a byte of the watchdog's (a step answer was late): this channel is done
            raise ProtocolError(f"late: no {what} within its deadline")
        return chunk, deadline

    def _set_timeout(self, seconds: float | None) -> None:
        if self._sock is not None and seconds != self._timeout:
            secs = 0.0 if seconds is None else max(seconds, 1e-3)
            whole = int(secs)
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", whole, int((secs - whole) * 1e6)))
            self._timeout = seconds

    def _fill(self, n: int, deadline: float | None, timeout: float | None, what: str, first: bool = True) -> None:
        """Read until the buffer holds ``n`` bytes, by ``deadline`` (``first``: no read of this message yet)."""
        while len(self._buf) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProtocolError(f"late: no {what} within its deadline")
                if self._sock is not None:
                    self._set_timeout(timeout if first else left)
                elif not select.select([self.rfd], [], [], left)[0]:
                    raise ProtocolError(f"late: no {what} within its deadline")
            else:
                self._set_timeout(None)
            first = False
            self._buf += self._read(what, max(n - len(self._buf), 65536))
            if self._late:  # the watchdog woke this read (step's answer outlived its deadline)
                raise ProtocolError(f"late: no {what} within its deadline")

    def recv(self, timeout: float | None = None, what: str = "a message") -> Any:
        """Receive one message; :class:`ProtocolError` if it is malformed, too big or later than ``timeout`` s."""
        if self._late:
            raise ProtocolError(f"late: no {what} within its deadline")
        if not self._buf:
            data, deadline = self._first(timeout, what)
            return self._decode_first(data, deadline, timeout, what)
        deadline = None if timeout is None else time.monotonic() + timeout
        return self._buffered(deadline, timeout, what, True)

    def recv_frame(self, timeout: float | None = None, what: str = "a message") -> tuple[int, bytes]:
        """The format and payload of the next frame, checked like :meth:`recv` checks it, not decoded."""
        if self._late:
            raise ProtocolError(f"late: no {what} within its deadline")
        if not self._buf:
            data, deadline = self._first(timeout, what)
            if self._whole(data):
                self.bytes_received += len(data)
                return data[3], data[HEADER_SIZE:]
            self._buf += data
            return self._frame(deadline, timeout, what, False)
        return self._frame(None if timeout is None else time.monotonic() + timeout, timeout, what, True)

    def _whole(self, data: bytes) -> bool:
        """Whether ``data`` is exactly one complete frame that passes every header check."""
        n = len(data)
        if n < HEADER_SIZE:
            return False
        magic, version, fmt, length = _HEADER.unpack_from(data)
        return (n == HEADER_SIZE + length and magic == MAGIC and version == PROTOCOL_VERSION and fmt <= STEP
                and length <= self.max_message and (self.allow_pickle or fmt not in _PICKLED))

    def _decode_first(self, data: bytes, deadline: float | None, timeout: float | None, what: str) -> Any:
        """The message that starts with ``data`` (the usual case: one read brought exactly one frame)."""
        if self._whole(data):
            self.bytes_received += len(data)
            return _DECODE[data[3]](data[HEADER_SIZE:])
        self._buf += data
        return self._buffered(deadline, timeout, what, False)

    def _buffered(self, deadline: float | None, timeout: float | None, what: str, first: bool) -> Any:
        fmt, payload = self._frame(deadline, timeout, what, first)
        return _DECODE[fmt](payload)

    def _frame(self, deadline: float | None, timeout: float | None, what: str, first: bool) -> tuple[int, bytes]:
        """The next frame from the buffer, read further as needed (each header checked before its payload is read)."""
        buf = self._buf
        if len(buf) < HEADER_SIZE:
            self._fill(HEADER_SIZE, deadline, timeout, what, first)
            first = False
        magic, version, fmt, length = _HEADER.unpack_from(buf)
        if magic != MAGIC or version != PROTOCOL_VERSION or fmt > STEP or length > self.max_message or (fmt in _PICKLED and not self.allow_pickle):
            self._refuse(magic, version, fmt, length)
        end = HEADER_SIZE + length
        if len(buf) < end:
            self._fill(end, deadline, timeout, what, first)
        payload = bytes(buf[HEADER_SIZE:end])
        del buf[:end]
        self.bytes_received += end
        return fmt, payload

    def _read(self, what: str, n: int = 65536) -> bytes:
        try:
            chunk = os.read(self.rfd, n)
        except BlockingIOError:
            raise ProtocolError(f"late: no {what} within its deadline") from None
        except OSError as err:
            raise ProtocolError(f"the channel broke while reading {what}: {err}") from None
        if not chunk:
            raise ProtocolError(f"the other side closed the channel before sending {what}")
        return chunk

    def _refuse(self, magic: bytes, version: int, fmt: int, length: int) -> None:
        if magic != MAGIC:
            raise ProtocolError(f"malformed frame header {bytes(self._buf[:HEADER_SIZE])!r} (not an icmlgym channel frame)")
        if version != PROTOCOL_VERSION:
            raise ProtocolError(f"protocol version {version} is not this evaluator's version {PROTOCOL_VERSION}")
        if fmt in _PICKLED and not self.allow_pickle:
            raise ProtocolError(f"frame format {fmt} refused: the evaluator never unpickles what an agent sends")
        if fmt > STEP:
            raise ProtocolError(f"malformed frame: unknown format {fmt}")
        raise ProtocolError(f"oversized message: {length} bytes announced, the limit is {self.max_message}")

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.stop()
        with self._lock:
            if not self._closed:  # once: a second close must not close descriptors the process has reused since
                self._closed = True
                self._close_fds()

    def _close_fds(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        for fd in {self.rfd, self.wfd}:
            try:
                os.close(fd)
            except OSError:
                pass


def _reopen_for_write(fd: int) -> int | None:
    """A new non-blocking write end of the pipe whose read end is ``fd`` (opened through
    ``/proc/self/fd``), or None where that is not possible."""
    try:
        w = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        ours, new = os.fstat(fd), os.fstat(w)
        if stat.S_ISFIFO(new.st_mode) and (new.st_dev, new.st_ino) == (ours.st_dev, ours.st_ino):
            return w
    except OSError:
        pass
    os.close(w)
    return None


class _Watchdog:
    """The deadline keeper of a pipe channel's step answers, which :meth:`Channel.step` reads with a
    plain blocking read: a ``poll`` before each read cost more than the rest of the evaluator's channel
    code per step (``docs/performance.md``, perf7-chan).

    A daemon thread looks at the channel's wait counter every ``tick`` seconds (an eighth of the
    deadline, at most 0.05 s). A wait it has seen for at least the deadline has lasted at least that
    long (it began before it was first seen), so it is late, never early; it is caught at most about
    two ticks past its deadline. The thread then wakes the read (:meth:`Channel._wake_late`): that
    read and every later one raise :class:`ProtocolError` "late", as a polled deadline does. The
    thread holds the channel weakly and ends with :meth:`Channel.close`.

    Args:
        channel: the evaluator's end of a pipe pair (see :meth:`Channel.pipes`).
    """

    def __init__(self, channel: Channel) -> None:
        self._ref = weakref.ref(channel)
        self._stop = threading.Event()
        self.tick = 0.05
        self._thread = threading.Thread(target=self._run, name="channel-deadlines", daemon=True)
        self._thread.start()

    def retick(self, timeout: float | None) -> None:
        """Look often enough for deadlines of ``timeout`` seconds (from the next look on)."""
        self.tick = 0.05 if timeout is None else min(0.05, max(timeout / 8, 0.001))

    def stop(self) -> None:
        """End the thread (at once: it waits on this event)."""
        self._stop.set()

    def _run(self) -> None:
        seen, since = -1, 0.0
        while not self._stop.wait(self.tick):
            ch = self._ref()
            if ch is None:
                return
            waits, timeout = ch._waits, ch._wait_timeout
            if not waits & 1 or timeout is None:
                seen = -1
            elif waits != seen:
                seen, since = waits, time.monotonic()
            elif time.monotonic() - since >= timeout:
                ch._wake_late(waits)
                seen = -1
            del ch


def expect(message: Any, answer: str) -> Any:
    """The payload of an answer of kind ``answer``; raises for an error report or anything else."""
    if not isinstance(message, list) or not message or not isinstance(message[0], str):
        raise ProtocolError(f"malformed answer (expected [{answer!r}, ...], got a {type(message).__name__})")
    kind = message[0]
    if kind == "error":
        text = message[1] if len(message) > 1 and isinstance(message[1], str) else "the agent reported an error without text"
        raise PeerError(cap_text(text))
    if kind != answer:
        raise ProtocolError(f"answer of the wrong kind: expected {answer!r}, got {kind[:40]!r}")
    if len(message) != 2:
        raise ProtocolError(f"malformed {answer!r} answer: {len(message)} fields, expected 2")
    return message[1]


__all__ = [
    "CALLS", "Channel", "DEFAULT_MAX_MESSAGE", "PROTOCOL_VERSION", "PeerError", "ProtocolError",
    "cap_text", "decode", "decode_action", "decode_frame", "decode_step", "decode_step_values", "encode", "encode_action", "encode_step", "expect", "frame",
]
