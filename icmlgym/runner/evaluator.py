"""The evaluator: runs the env, the metrics and the record builder, and drives a sandboxed agent.

For an isolated run (``RunTask.isolation`` set: ``icmlgym submit``, and ``run`` /
``benchmark`` with ``--isolate``) :func:`evaluate` replaces the in-process
:func:`icmlgym.runner.loop.execute`. The agent lives in a :class:`Sandbox` and is
reached only through the channel (:mod:`icmlgym.runner.channel`); the evaluator
plays the episodes with the same :func:`icmlgym.runner.rollout.rollout` as a
local run, through :class:`RemoteAgent`, a stand-in that forwards the agent
protocol's calls. Without hidden seeds, an isolated run's metrics are therefore
bit for bit those of a local run of the same seeds.

**Hidden evaluation instances.** With ``SandboxOptions.hidden_seeds`` (the board's
secret), episode ``e`` of run seed ``s`` resets the env with :func:`hidden_seed`
(an HMAC of the public seed under the secret) instead of the public seed, and
the env's instance arguments (:data:`INSTANCE_KWARGS`, e.g. a bandit's
``instance_seed``) that the task leaves at their default get hidden values too.
The agent's own seeds, its spec and its training env stay public, so a
submission cannot rebuild the evaluation instance; its record says
``seeds: hidden`` and lists the hidden arguments.

**Identity.** The record's agent name, entry point and source hash come from the
task (set by the submitter, from the file's bytes), never from the agent.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from icmlgym.agents.protocol import AgentSpec
from icmlgym.catalog import card
from icmlgym.envs import make, register_all
from icmlgym.redaction import redact, redact_text, secret_values
from icmlgym.runner import provenance
from icmlgym.runner.channel import PROTOCOL_VERSION, Channel, PeerError, ProtocolError, cap_text, expect
from icmlgym.runner.record import RunRecord
from icmlgym.runner.rollout import episode_seed, rollout
from icmlgym.runner.sandbox import Sandbox, SandboxOptions


@dataclass
class Isolation:
    """How an isolated run loads and confines its agent.

    Args:
        name: the entry's name (given by the submitter; never read from the agent).
        entry_point: what was submitted (a shipped name, ``module:Class`` or ``file.py[:Class]``).
        source_hash: hash of the submitted source, from the file's bytes.
        load: what the agent host loads inside the sandbox (e.g. ``/agent/my_agent.py:MyAgent``).
        options: the sandbox's limits, mode and (for submissions) the hidden-seed secret.
    """

    name: str
    entry_point: str
    source_hash: str
    load: str
    options: SandboxOptions = field(default_factory=SandboxOptions)

    source_file: str = ""  # the file hashed (its icmlgym imports are read with ast, never executed)
    module: str = ""  # a shipped agent's module: its code hash is then a local run's (icmlgym code only)

    @property
    def identity(self) -> dict[str, str]:
        return {"name": self.name, "entry_point": self.entry_point, "source_hash": self.source_hash}

    def meta(self, c: Any) -> dict[str, str]:
        """The identity plus the run key's code hash on the env of card ``c`` (see :mod:`icmlgym.codehash`)."""
        from icmlgym.codehash import code_hash, module_closure

        if self.module:
            files = module_closure([self.module])
        else:
            files = module_closure([], [self.source_file]) if self.source_file else {}
        return {**self.identity, "code_hash": code_hash(self.source_hash, files, c.entry_point)}


def hidden_seed(secret: bytes, env_id: str, seed: int | None) -> int | None:
    """The evaluation env seed that stands in for a public ``seed`` under the board's secret."""
    if seed is None:
        return None
    digest = hmac.new(secret, f"{env_id}\0{int(seed)}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:4], "big") >> 1


# constructor arguments that only pick which instance of a task is played (seeds of a random
# instance or catalog): hidden for submissions unless the task fixes them explicitly
INSTANCE_KWARGS = ("instance_seed", "catalog_seed")

# dict-valued constructor arguments that build a generated instance from a seed inside the dict,
# as (argument, {kind that is generated}, seed key, default kind): Screening's embedded library
# (``library={"kind": "embedded", ...}``) is one, and its ground truth is only as hidden as its seed
NESTED_INSTANCE_SEEDS = (("library", ("embedded",), "seed", "embedded"),)


def _constructor_params(entry_point: str) -> dict[str, Any]:
    """The keyword parameters of an env's constructor, its base classes' included (``**kwargs`` passes them on)."""
    import importlib
    import inspect

    module, _, attr = entry_point.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    params: dict[str, Any] = {}
    for klass in (obj.__mro__ if inspect.isclass(obj) else (obj,)):
        init = klass.__init__ if inspect.isclass(obj) else klass
        try:
            sig = inspect.signature(init)
        except (TypeError, ValueError):
            continue
        for name, p in sig.parameters.items():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name != "self":
                params.setdefault(name, p.default)
    return params


def hidden_instance_kwargs(c: Any, task: Any, secret: bytes, kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The env's instance arguments that the task does not set, each given a value derived from the
    board's secret and the run seed: :data:`INSTANCE_KWARGS` its constructor takes, and the seed
    inside a generated dict argument (:data:`NESTED_INSTANCE_SEEDS`) that does not give one.
    ``kwargs``: the env kwargs the run uses (the tier's and the task's)."""
    try:
        params = _constructor_params(c.entry_point)
    except (ImportError, AttributeError, TypeError, ValueError):
        return {}
    hidden: dict[str, Any] = {
        k: hidden_seed(secret, f"{c.id}/{k}", task.seed)
        for k in INSTANCE_KWARGS
        if k in params and k not in task.env_kwargs
    }
    used = kwargs if kwargs is not None else task.env_kwargs
    for arg, kinds, seed_key, default_kind in NESTED_INSTANCE_SEEDS:
        if arg not in params:
            continue
        value = used.get(arg, params[arg])
        if isinstance(value, str):
            value = {"kind": value}
        if isinstance(value, dict) and value.get("kind", default_kind) in kinds and seed_key not in value:
            hidden[arg] = {**value, seed_key: hidden_seed(secret, f"{c.id}/{arg}.{seed_key}", task.seed)}
    return hidden


def hidden_names(hidden: dict[str, Any]) -> list[str]:
    """The hidden arguments as the record lists them (``library.seed`` for a nested seed)."""
    nested = {arg: key for arg, _, key, _ in NESTED_INSTANCE_SEEDS}
    return sorted(f"{k}.{nested[k]}" if isinstance(v, dict) and k in nested else k for k, v in hidden.items())


def shown_hidden(hidden: dict[str, Any]) -> dict[str, Any]:
    """The hidden arguments as the record's env spec shows them: each value (or nested seed) ``<hidden>``."""
    nested = {arg: key for arg, _, key, _ in NESTED_INSTANCE_SEEDS}
    return {k: ({**v, nested[k]: "<hidden>"} if isinstance(v, dict) and k in nested else "<hidden>") for k, v in hidden.items()}


class HiddenSeedEnv:
    """An env whose ``reset(seed=s)`` resets the wrapped env with :func:`hidden_seed` of ``s``."""

    def __init__(self, env: Any, secret: bytes, env_id: str) -> None:
        self._env = env
        self._secret = secret
        self._env_id = env_id

    def reset(self, seed: Any = None, options: dict | None = None) -> Any:
        if isinstance(seed, (list, tuple)):  # a vector env: one seed per sub-env
            return self._env.reset(seed=[hidden_seed(self._secret, self._env_id, s) for s in seed], options=options)
        return self._env.reset(seed=hidden_seed(self._secret, self._env_id, seed), options=options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


class RemoteAgent:
    """The agent protocol, forwarded over the channel to the agent host.

    ``reset`` and ``update`` need no answer: they are queued and sent in the same
    frame as the next ``act`` (one round trip per step). An ``act`` on the
    observation and info the last ``update`` carried sends ``act_next`` instead of
    sending them twice."""

    def __init__(self, channel: Channel, call_timeout: float, multi_agent: bool) -> None:
        self.ch = channel
        self.call_timeout = call_timeout
        self.multi_agent = multi_agent
        self._pending: list[list[Any]] = []
        self._last_update: list[Any] | None = None
        self.trains = False

    def _call(self, call: list[Any], answer: str, timeout: float) -> Any:
        self._pending.append(call)
        calls, self._pending = self._pending, []
        self.ch.send(calls, pickle_ok=True)
        return expect(self.ch.recv(timeout, what=f"the agent's answer to {call[0]!r}"), answer)

    def hello(self, load: str, kwargs: dict[str, Any], spec: dict[str, Any], timeout: float, sys_path: list[str] | None = None,
              vectorized: bool = False, cpu: int | None = None) -> dict[str, Any]:
        """Load the agent in the sandbox (``cpu``: the CPU its host's main thread runs on, see :mod:`icmlgym.runner.affinity`)."""
        agent = {"load": load, "kwargs": kwargs, "sys_path": sys_path or []}
        call = {"protocol": PROTOCOL_VERSION, "agent": agent, "spec": spec, **({"vectorized": True} if vectorized else {}),
                **({"cpu": int(cpu)} if cpu is not None else {})}
        ready = self._call(["hello", call], "ready", timeout)
        if not isinstance(ready, dict):
            raise ProtocolError("malformed 'ready' answer")
        self.trains = bool(ready.get("trains", False))
        return ready

    def reset(self, seed: int | None, spec: Any) -> None:
        episode = next(iter(spec.values())).episode if isinstance(spec, dict) else spec.episode
        self._pending.append(["reset", seed, int(episode)])
        self._last_update = None

    def act(self, obs: Any, info: Any) -> Any:
        last = self._last_update
        self._last_update = None
        if last is not None and last[2] is obs and last[5] is info:
            if len(self._pending) == 1:  # every step but an episode's first: one update, then act on its observation
                self._pending = []
                return self.ch.step(last, self.call_timeout)
            return self._call(["act_next"], "action", self.call_timeout)
        return self._call(["act", obs, info], "action", self.call_timeout)

    def update(self, obs: Any, action: Any, reward: Any, next_obs: Any, terminated: Any, truncated: Any, info: Any) -> None:
        call = ["update", reward, next_obs, terminated, truncated, info]
        self._pending.append(call)
        self._last_update = call

    def train(self, budget: int, train_seed: int) -> None:
        self._call(["train", int(budget), int(train_seed)], "trained", self.call_timeout)

    def close(self, timeout: float) -> dict[str, Any]:
        bye = self._call(["close"], "bye", timeout)
        return bye if isinstance(bye, dict) else {}


def _public_spec(c: Any, env: Any, kwargs: dict[str, Any], task: Any) -> dict[str, Any]:
    if c.kind == "multi":
        spaces: Any = {a: (env.observation_space(a), env.action_space(a)) for a in env.possible_agents}
    else:
        spaces = (env.observation_space, env.action_space)
    return {"kind": c.kind, "env_id": c.id, "env_kwargs": redact(kwargs), "tier": task.tier, "device": task.device, "card": c, "spaces": spaces}


def _sandbox_load(iso: Isolation, mode: str) -> str:
    """What the agent host loads: a file path as the sandbox sees it (under ``/agent``)."""
    root = iso.options.agent_path
    if not root or mode != "bwrap":
        return iso.load
    real = os.path.realpath(root)
    path, sep, attr = iso.load, "", ""
    head, colon, tail = iso.load.rpartition(":")
    if colon and head.endswith(".py"):
        path, sep, attr = head, colon, tail
    if path.startswith(real + "/"):
        return "/agent/" + os.path.relpath(path, real) + (sep + attr if sep else "")
    return iso.load


def _agent_died(sandbox: Sandbox) -> str:
    proc = sandbox.proc
    if proc is None:
        return ""
    try:
        code = proc.wait(timeout=1.0)
    except Exception:
        return ""
    why = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
    return f"the agent process ended ({why})"


def evaluate(task: Any) -> RunRecord:
    """Run one isolated task (see the module docstring); never raises for the agent's failures."""
    from icmlgym.runner.task import add_cost, add_gpu_seconds, ensure_registered, task_env_kwargs, spec_dict, base_record

    register_all()
    t_start = time.perf_counter()
    iso: Isolation = task.isolation
    opts = iso.options
    record = base_record(task, None, iso.identity)
    sandbox = Sandbox(opts)
    record.isolation = {"sandbox": sandbox.mode, "seeds": "hidden" if opts.hidden_seeds else "public", "protocol": PROTOCOL_VERSION}
    env = None
    secrets: list[str] = []
    channel = None
    try:
        channel = sandbox.start()  # the agent's interpreter starts while the env is built
        ensure_registered(task)
        c = card(task.env_id)
        tier = c.tier(task.tier)
        kwargs = task_env_kwargs(c, task)
        secrets = secret_values(kwargs, task.agent_kwargs)
        hidden = hidden_instance_kwargs(c, task, opts.hidden_seeds, kwargs) if opts.hidden_seeds else {}
        env = make(c.id, **{**kwargs, **hidden})
        record.env_spec = redact(spec_dict(c, env, {**kwargs, **shown_hidden(hidden)}))
        if hidden:
            record.isolation["hidden_kwargs"] = hidden_names(hidden)
        agent = RemoteAgent(channel, opts.call_timeout, multi_agent=c.kind == "multi")
        agent.hello(_sandbox_load(iso, sandbox.mode), task.agent_kwargs, _public_spec(c, env, kwargs, task), opts.load_timeout,
                    [opts.agent_dir(sandbox.mode)] if opts.agent_path else [], cpu=sandbox.cpu)
        public = redact(kwargs)
        if c.kind == "multi":
            spec: Any = {a: AgentSpec(c.id, env.observation_space(a), env.action_space(a), c, public, task.tier, 0, a, task.device) for a in env.possible_agents}
        else:
            spec = AgentSpec(c.id, env.observation_space, env.action_space, c, public, task.tier, 0, None, task.device)
        if agent.trains:
            t0 = time.perf_counter()
            agent.reset(episode_seed(task.seed, -1, "agent"), spec)
            agent.train(tier.train_steps, episode_seed(task.seed, -1, "train"))
            record.train_wall_time = time.perf_counter() - t0
        play = HiddenSeedEnv(env, opts.hidden_seeds, c.id) if opts.hidden_seeds else env
        n_episodes = task.episodes if task.episodes is not None else tier.episodes
        for ep in range(n_episodes):  # the rollout hands the agent a copy of the spec for episode ep
            record.episodes.append(rollout(play, agent, task.seed, spec, episode=ep, max_steps=tier.max_steps))
        agent.close(opts.call_timeout)
        record.device = provenance.device_info(task.device)
        if record.device.get("type") == "cuda":
            add_gpu_seconds(record)
        for e in record.episodes:
            add_cost(record.cost, e.cost)
    except BaseException as err:  # noqa: BLE001 - every failure becomes a record
        if isinstance(err, KeyboardInterrupt):
            raise
        record.status = "failed"
        record.episodes = []
        if isinstance(err, PeerError):
            record.error = f"the agent raised: {err}"
        elif isinstance(err, ProtocolError):
            died = _agent_died(sandbox) if "closed the channel" in str(err) else ""
            record.error = f"protocol: {err}" + (f"; {died}" if died else "")
        else:
            record.error = f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=20)}"
    finally:
        sandbox.stop(grace=0.0 if record.status == "failed" else 2.0)
        if env is not None:
            try:
                env.close()
            except Exception:
                pass
    if sandbox.limit_error:
        record.status = "failed"
        record.episodes = []
        record.cost = {}
        record.error = sandbox.limit_error + (f" (then: {record.error.splitlines()[0]})" if record.error else "")
    record.error = redact_text(cap_text(record.error), secrets)
    record.log = redact_text(sandbox.log, secrets)
    record.isolation.update(sandbox.summary())
    record.isolation["start_s"] = round(sandbox.start_time, 4)
    record.isolation["frames"] = channel.frames_sent if channel is not None else 0
    record.wall_time = time.perf_counter() - t_start
    return record


def _agent_failure(err: BaseException, sandbox: Sandbox) -> str:
    """The error text of a failed isolated run (the agent's report, a protocol breach, or our own traceback)."""
    if isinstance(err, PeerError):
        return f"the agent raised: {err}"
    if isinstance(err, ProtocolError):
        died = _agent_died(sandbox) if "closed the channel" in str(err) else ""
        return f"protocol: {err}" + (f"; {died}" if died else "")
    return f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=20)}"


class _RunSingly(Exception):
    """The agent has no vector twin (or trains): the batch's tasks run one by one."""


def evaluate_batch(tasks: list[Any], play_episode: Any, vector_env_class: Any) -> list[RunRecord]:
    """Isolated tasks that differ only in their seed, played in one vector env against one sandboxed
    agent (its vector twin), one record per task, each equal to what :func:`evaluate` gives it.

    One round trip then serves every seed's step. Where that cannot hold (no vector env or
    twin, a training agent, a time limit from the spec, hidden instance arguments, which
    differ per seed), each task runs alone through :func:`evaluate`. ``play_episode`` and
    ``vector_env_class`` are :mod:`icmlgym.runner.batched`'s (which calls this), so that the
    episodes are played exactly as a local batch plays them."""
    import gymnasium as gym

    from icmlgym.agents.protocol import with_episode
    from icmlgym.runner.task import add_cost, base_record, ensure_registered, task_env_kwargs

    tasks = list(tasks)
    singly = lambda: [evaluate(t) for t in tasks]  # noqa: E731
    if len(tasks) < 2:
        return singly()
    register_all()
    first = tasks[0]
    iso: Isolation = first.isolation
    opts = iso.options
    ensure_registered(first)
    c = card(first.env_id)
    kwargs = task_env_kwargs(c, first)
    if (c.kind != "single" or not c.vector_entry_point or gym.spec(c.id).max_episode_steps is not None or first.device != "cpu"
            or (opts.hidden_seeds and hidden_instance_kwargs(c, first, opts.hidden_seeds, kwargs))):
        return singly()
    t_start = time.perf_counter()
    records = [base_record(t, None, iso.identity) for t in tasks]
    sandbox = Sandbox(opts)
    isolation = {"sandbox": sandbox.mode, "seeds": "hidden" if opts.hidden_seeds else "public", "protocol": PROTOCOL_VERSION,
                 "batched": len(tasks)}
    venv = None
    secrets = secret_values(kwargs, first.agent_kwargs)
    error = ""
    batched = False
    channel = None
    try:
        channel = sandbox.start()
        tier = c.tier(first.tier)
        venv = vector_env_class(c)(num_envs=len(tasks), **kwargs)
        spaces = (venv.single_observation_space, venv.single_action_space)
        public = redact(kwargs)
        agent = RemoteAgent(channel, opts.call_timeout, multi_agent=False)
        spec_msg = {"kind": c.kind, "env_id": c.id, "env_kwargs": public, "tier": first.tier, "device": first.device, "card": c, "spaces": spaces}
        ready = agent.hello(_sandbox_load(iso, sandbox.mode), first.agent_kwargs, spec_msg, opts.load_timeout,
                            [opts.agent_dir(sandbox.mode)] if opts.agent_path else [], vectorized=True, cpu=sandbox.cpu)
        batched = bool(ready.get("vectorized")) and not agent.trains
        if not batched:
            raise _RunSingly()
        spec = AgentSpec(c.id, spaces[0], spaces[1], c, public, first.tier, 0, None, first.device)
        play = HiddenSeedEnv(venv, opts.hidden_seeds, c.id) if opts.hidden_seeds else venv
        seeds = [int(t.seed) for t in tasks]
        n_episodes = first.episodes if first.episodes is not None else tier.episodes
        for ep in range(n_episodes):
            spec = with_episode(spec, ep)
            for rec, e in zip(records, play_episode(play, agent, seeds, spec, ep, tier.max_steps)):
                rec.episodes.append(e)
        agent.close(opts.call_timeout)
    except _RunSingly:
        pass
    except BaseException as err:  # noqa: BLE001 - every failure becomes the batch's records
        if isinstance(err, KeyboardInterrupt):
            raise
        error = _agent_failure(err, sandbox)
    finally:
        sandbox.stop(grace=0.0 if error else 2.0)
        if venv is not None:
            try:
                venv.close()
            except Exception:
                pass
    if not batched and not error:
        return singly()
    if sandbox.limit_error:
        error = sandbox.limit_error + (f" (then: {error.splitlines()[0]})" if error else "")
    device = provenance.device_info(first.device)
    isolation.update(sandbox.summary())
    isolation["start_s"] = round(sandbox.start_time, 4)
    isolation["frames"] = channel.frames_sent if channel is not None else 0
    wall = (time.perf_counter() - t_start) / len(tasks)
    log = redact_text(sandbox.log, secrets)
    for rec in records:
        rec.env_spec = redact({"id": c.id, "kwargs": kwargs, "entry_point": c.entry_point, "max_episode_steps": None})
        rec.isolation = dict(isolation)
        rec.log = log
        rec.wall_time = wall
        rec.device = dict(device)
        if error:
            rec.status, rec.episodes, rec.cost = "failed", [], {}
            rec.error = redact_text(cap_text(error), secrets)
        else:
            for e in rec.episodes:
                add_cost(rec.cost, e.cost)
    return records


__all__ = ["HiddenSeedEnv", "Isolation", "RemoteAgent", "evaluate", "evaluate_batch", "hidden_seed"]
