"""The agent's side of the channel: the program that runs inside the sandbox.

``python -m icmlgym.runner.agent_host R,W [MAX]`` reads calls from the channel on file
descriptor ``R`` and answers on ``W`` (two pipes; a single ``FD`` is a socket, see
:mod:`icmlgym.runner.channel`), loads the submitted agent
*here* (so its import-time code runs under the sandbox's limits, never in the
submitting or evaluating process), and answers. It sees only what the calls
carry: the public part of the spec (spaces, card, env kwargs with credentials
redacted, tier, device), observations, rewards and infos; for ``train`` it
builds a training env of its own from the env id, the public kwargs and the
training seed. Anything the agent raises is answered as ``["error", text]``.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

from icmlgym.runner.affinity import pin_self, unpin_self
from icmlgym.runner.channel import STEP, Channel, ProtocolError, cap_text, decode_frame, decode_step_values


class AgentHost:
    """Holds the loaded agent and answers the evaluator's calls."""

    def __init__(self, channel: Channel) -> None:
        self.ch = channel
        self.agent: Any = None
        self.specs: Any = None
        self.spec_info: dict[str, Any] = {}
        self.obs: Any = None
        self.info: Any = None
        self.action: Any = None
        self.steps = 0
        self.cpu: int | None = None  # the evaluator's CPU, which this thread runs on during episodes
        self._mask: set[int] | None = None  # this thread's affinity before it was pinned

    # -- calls ---------------------------------------------------------------------------------

    def hello(self, payload: dict[str, Any]) -> dict[str, Any]:
        answer = self._load(payload)
        cpu = payload.get("cpu")
        if type(cpu) is int:  # after the load: the agent's import-time threads keep the whole mask
            self.cpu = cpu
            self._mask = pin_self(cpu)
        return answer

    def _load(self, payload: dict[str, Any]) -> dict[str, Any]:
        from icmlgym.agents.loading import load_agent
        from icmlgym.agents.protocol import AgentSpec

        spec = payload["spec"]
        self.spec_info = spec
        card = spec.get("card")
        if card is not None:
            self._ensure_registered(card)
        agent_spec = payload["agent"]
        for path in reversed(agent_spec.get("sys_path") or []):
            sys.path.insert(0, path)
        loaded = load_agent(agent_spec["load"], **agent_spec.get("kwargs", {}))
        multi_env = spec["kind"] == "multi"
        if multi_env:
            from icmlgym.agents.multi import lift

            agent = lift(loaded)
            self.specs = {
                a: AgentSpec(spec["env_id"], o, s, card, spec["env_kwargs"], spec["tier"], 0, a, spec["device"])
                for a, (o, s) in spec["spaces"].items()
            }
        else:
            twin = None
            if payload.get("vectorized"):  # a batch of seeds in one vector env: the agent's vector twin plays it
                from icmlgym.agents.vector import vector_class

                twin = vector_class(loaded.cls)
            agent = twin(**loaded.kwargs) if twin is not None else loaded()
            o, s = spec["spaces"]
            self.specs = AgentSpec(spec["env_id"], o, s, card, spec["env_kwargs"], spec["tier"], 0, None, spec["device"])
            if payload.get("vectorized"):
                self.agent = agent
                return {"entry_point": loaded.entry_point, "trains": callable(getattr(loaded.cls, "train", None)), "vectorized": twin is not None}
        self.agent = agent
        return {"entry_point": loaded.entry_point, "trains": callable(getattr(agent, "train", None))}

    @staticmethod
    def _ensure_registered(card: Any) -> None:
        from icmlgym.catalog import UnknownEnvError
        from icmlgym.catalog import card as lookup
        from icmlgym.envs import register_all
        from icmlgym.registry import register

        register_all()
        try:
            lookup(card.id)
        except UnknownEnvError:
            register(card)

    def reset(self, seed: int, episode: int) -> None:
        from icmlgym.agents.protocol import with_episode

        self.specs = with_episode(self.specs, episode)
        self.agent.reset(seed, self.specs)

    def act(self, obs: Any, info: Any) -> Any:
        self.obs, self.info = obs, info
        self.action = self.agent.act(obs, info)
        return self.action

    def update(self, reward: Any, next_obs: Any, terminated: Any, truncated: Any, info: Any) -> None:
        self.agent.update(self.obs, self.action, reward, next_obs, terminated, truncated, info)
        self.obs, self.info = next_obs, info
        self.steps += 1

    def train(self, budget: int, train_seed: int) -> None:
        from icmlgym.envs import make

        info = self.spec_info
        pinned, self._mask = self._mask, None
        unpin_self(pinned)  # training may use every core the sandbox has
        env = make(info["env_id"], **info["env_kwargs"])
        try:
            if info["kind"] == "single":
                env.reset(seed=train_seed)
                env.action_space.seed(train_seed)
            self.agent.train(env, budget)
        finally:
            env.close()
            if pinned is not None:
                self._mask = pin_self(self.cpu)

    # -- the loop ------------------------------------------------------------------------------

    def serve(self) -> None:
        ch = self.ch
        fmt, payload = ch.recv_frame()
        while True:
            if fmt == STEP:  # every step but an episode's first: update, then act on the new observation
                fmt, payload = self._play(decode_step_values(payload))
                if fmt is None:  # the agent raised (reported)
                    return
            calls = decode_frame(fmt, payload)
            if not isinstance(calls, list) or not calls:
                raise ProtocolError("expected a list of calls")
            answer: list[Any] | None = None
            try:
                for call in calls:
                    op = call[0]
                    if op == "update":
                        self.update(*call[1:])
                    elif op == "act_next":
                        answer = _ACTION
                        self.action = self.agent.act(self.obs, self.info)
                    elif op == "act":
                        answer = _ACTION
                        self.act(call[1], call[2])
                    elif op == "reset":
                        self.reset(call[1], call[2])
                    elif op == "hello":
                        answer = ["ready", self.hello(call[1])]
                        if call[1].get("vectorized") and not answer[1].get("vectorized"):
                            ch.send(answer)  # no vector twin: the evaluator runs the seeds singly
                            return
                    elif op == "train":
                        self.train(call[1], call[2])
                        answer = ["trained", None]
                    elif op == "close":
                        _flush_output()  # the agent's output reaches the log before the evaluator ends the sandbox
                        ch.send(["bye", {"steps": self.steps}])
                        return
                    else:
                        raise ProtocolError(f"unknown call {op!r}")
            except ProtocolError:
                raise
            except BaseException as err:  # noqa: BLE001 - the agent's failure is reported, then we stop
                _flush_output()
                ch.send(["error", _error_text(err)])
                return
            if answer is _ACTION:  # (an episode's first action): answer it and take the next frame in one call
                fmt, payload = ch.exchange(self.action)
                if fmt == STEP:
                    fmt, payload = self._play(payload)
                    if fmt is None:
                        return
                continue
            if answer is not None:
                ch.send(answer)
            fmt, payload = ch.recv_frame()

    def _play(self, values: tuple[Any, ...]) -> tuple[int | None, Any]:
        """Play step frames until another kind of frame comes: ``values`` (the first step's, decoded)
        then each next one, update then act, answered by :meth:`Channel.exchange`. Returns the
        frame that ended the run of steps (format, payload), or ``(None, None)`` once the agent
        raised (reported to the evaluator as ``["error", text]``).

        The agent's ``update`` and ``act`` are looked up once per run of steps (an episode: its
        first act and every reset come in other frames), as :func:`icmlgym.runner.rollout.rollout`
        looks them up once per episode in a local run."""
        ch, agent = self.ch, self.agent
        update, act, exchange = agent.update, agent.act, ch.exchange
        obs, action, steps = self.obs, self.action, self.steps
        info = self.info
        try:
            while True:
                reward, next_obs, terminated, truncated, info = values
                update(obs, action, reward, next_obs, terminated, truncated, info)
                steps += 1
                obs = next_obs
                action = act(next_obs, info)
                fmt, values = exchange(action)
                if fmt != STEP:
                    return fmt, values
        except ProtocolError:
            raise
        except BaseException as err:  # noqa: BLE001 - reported as in the general loop
            _flush_output()
            ch.send(["error", _error_text(err)])
            return None, None
        finally:
            self.obs, self.info, self.action, self.steps = obs, info, action, steps


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - an agent may have replaced or closed them
            pass


def _error_text(err: BaseException) -> str:
    return cap_text(f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=20)}")


_ACTION = ["action"]  # marks an answer that is the agent's last action (sent by the channel's binary path when it fits)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    rfd, _, wfd = args[0].partition(",")  # "R,W": two pipes; "FD": one socket
    fds = (int(rfd), int(wfd) if wfd else None)
    max_message = int(args[1]) if len(args) > 1 else None
    ch = Channel(*fds, max_message=max_message, allow_pickle=True) if max_message else Channel(*fds, allow_pickle=True)
    try:
        AgentHost(ch).serve()
    except ProtocolError as err:
        print(f"agent host: {err}", file=sys.stderr)
        return 3
    finally:
        ch.close()
    return 0


if __name__ == "__main__":
    code = main()
    _flush_output()
    os._exit(code)  # no interpreter teardown: nothing in it matters to the evaluator, and it costs every run CPU
