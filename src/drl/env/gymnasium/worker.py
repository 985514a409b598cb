# One worker of rlsolver's Gymnasium bridge (src/drl/env/gymnasium): steps a slice of the batch.
# Frames on stdin/stdout: a little-endian u32 length, then the payload. Protocol fd is a private
# duplicate of stdout; fd 1 is pointed at stderr so that C extensions printing to stdout
# (pybullet prints "argv[0]=") cannot corrupt a frame.
import json, os, struct, sys

# The server's working folder first on the import path, as `python -c` would have it (a user's
# env module next to where the service runs: `gymnasium:my_envs:Trading-v0`).
sys.path.insert(0, os.getcwd())
proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
os.dup2(2, 1)
sys.stdout = sys.stderr
proto_in = sys.stdin.buffer


def read_frame():
    head = proto_in.read(4)
    if len(head) < 4:
        sys.exit(0)
    (n,) = struct.unpack("<I", head)
    body = proto_in.read(n)
    if len(body) < n:
        sys.exit(0)
    return body


def write_frame(payload):
    proto_out.write(struct.pack("<I", len(payload)) + payload)


def first_line(error):
    text = f"{type(error).__name__}: {error}".strip()
    return text.splitlines()[0] if text else type(error).__name__


def describe_action(space, spaces):
    if isinstance(space, spaces.Box):
        low, high = space.low.reshape(-1), space.high.reshape(-1)
        if not (np.isfinite(low).all() and np.isfinite(high).all()):
            raise ValueError(f"action space {space} is unbounded; the algorithms here need a bounded Box")
        return {"kind": "continuous", "low": low.astype(float).tolist(), "high": high.astype(float).tolist()}
    if isinstance(space, spaces.Discrete):
        return {"kind": "discrete", "n": int(space.n)}
    if isinstance(space, spaces.MultiDiscrete):
        nvec = space.nvec.reshape(-1).astype(int).tolist()
        n = int(np.prod(nvec))
        if n > 65536:
            raise ValueError(f"action space {space} has {n} joint actions; at most 65536 are taken as one Discrete")
        return {"kind": "discrete", "n": n}
    raise ValueError(f"action space {space} is not a Box, Discrete or MultiDiscrete")


def to_action(space, spaces, row):
    if isinstance(space, spaces.Box):
        # A Gaussian policy's samples leave the Box; they are clipped to it as SB3's rollout
        # loop and Gymnasium's ClipAction do, so that an env that prices its action (MuJoCo's
        # control cost, MountainCarContinuous's fuel) sees only the action it can apply.
        return np.clip(np.asarray(row, dtype=space.dtype).reshape(space.shape), space.low, space.high)
    if isinstance(space, spaces.Discrete):
        return int(space.start) + int(round(float(row[0])))
    # MultiDiscrete: the joint index in mixed radix, last component fastest.
    index = int(round(float(row[0])))
    nvec = space.nvec.reshape(-1).astype(int)
    parts = []
    for n in nvec[::-1]:
        parts.append(index % n)
        index //= n
    return (np.array(parts[::-1], dtype=space.dtype) + space.start.reshape(-1)).reshape(space.shape)


try:
    init = json.loads(read_frame())
    import numpy as np
    import gymnasium as gym
    from gymnasium import spaces

    kwargs = init.get("kwargs") or {}
    envs = [gym.make(init["id"], **kwargs) for _ in range(init["num_envs"])]
    obs_space, act_space = envs[0].observation_space, envs[0].action_space
    obs_dim = int(spaces.flatdim(obs_space))
    action = describe_action(act_space, spaces)
    width = int(np.prod(act_space.shape)) if isinstance(act_space, spaces.Box) else 1
    write_frame(json.dumps({
        "ok": True,
        "observation_dim": obs_dim,
        "action_space": action,
    }).encode())
except BaseException as error:  # the first line goes back as the 422's message
    write_frame(json.dumps({"ok": False, "error": first_line(error)}).encode())
    sys.exit(0)

n = len(envs)


def flat(o):
    return np.asarray(spaces.flatten(obs_space, o), dtype=np.float32).reshape(-1)


while True:
    frame = read_frame()
    tag = frame[:1]
    if tag == b"R":
        seeds = struct.unpack(f"<{n}Q", frame[1:1 + 8 * n])
        out = np.zeros((n, obs_dim), dtype=np.float32)
        for j, env in enumerate(envs):
            o, _ = env.reset(seed=seeds[j])
            out[j] = flat(o)
        write_frame(out.tobytes())
    elif tag == b"S":
        actions = np.frombuffer(frame[1:], dtype=np.float32).reshape(n, width)
        obs = np.zeros((n, obs_dim), dtype=np.float32)
        final = np.zeros((n, obs_dim), dtype=np.float32)
        rewards = np.zeros(n, dtype=np.float32)
        flags = np.zeros((2, n), dtype=np.uint8)
        for j, env in enumerate(envs):
            o, r, terminated, truncated, _ = env.step(to_action(act_space, spaces, actions[j]))
            rewards[j] = r
            flags[0, j], flags[1, j] = bool(terminated), bool(truncated)
            if terminated or truncated:
                final[j] = flat(o)
                o, _ = env.reset()
            obs[j] = flat(o)
        write_frame(obs.tobytes() + rewards.tobytes() + flags.tobytes() + final.tobytes())
    else:
        for env in envs:
            env.close()
        sys.exit(0)
