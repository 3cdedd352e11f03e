"""Training checkpoints as safetensors plus JSON: reading one never runs code from the file.

A checkpoint is one ``.safetensors`` file. Its body holds every tensor (weights,
optimiser moments, the RNG state) in named groups (``encoder.``, ``loss.``,
``optimizer.``, ...); its header's metadata holds the rest as JSON (step,
history, config, the schedule, the optimiser's hyper-parameters). ``torch.load``
unpickles, and a pickle can run any code when loaded; the safetensors format
has no such path, so a checkpoint planted in the work folder can at worst be
refused. Anything that is not a checkpoint of this format is refused with
CheckpointError, never half-loaded.

One file, written to a temporary name, flushed to disk and renamed into place,
so a crash leaves either the previous checkpoint or the new one.

Example:
    >>> import tempfile, torch
    >>> path = Path(tempfile.mkdtemp()) / "state.safetensors"
    >>> save(path, {"encoder": {"w": torch.ones(2)}}, {"step": 3})
    >>> groups, state = load(path)
    >>> groups["encoder"]["w"].tolist(), state["step"]
    ([1.0, 1.0], 3)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from searchapp.base.private_files import replace_private
from searchapp.errors import CheckpointError

FORMAT = "searchapp-checkpoint"
VERSION = "1"
Groups = dict[str, dict[str, torch.Tensor]]


def save(path: Path, groups: Groups, state: dict) -> None:
    """Write tensor ``groups`` and JSON-able ``state`` to ``path`` atomically."""
    from safetensors.torch import save_file

    flat = _flatten(groups)
    metadata = {"format": FORMAT, "version": VERSION, "state": json.dumps(state)}
    def write(tmp: Path) -> None:
        save_file(flat, str(tmp), metadata=metadata)
        with open(tmp, "rb+") as f:  # on disk before it replaces the last good one
            os.fsync(f.fileno())

    replace_private(path, write)  # a new name of its own, renamed: never through a link


def load(path: Path) -> tuple[Groups, dict]:
    """The tensor groups (on the CPU) and the JSON state saved at ``path``.

    Raises CheckpointError for anything that is not a checkpoint of this format
    (a pickle, a truncated or foreign file); nothing in it is executed.
    """
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            metadata = f.metadata() or {}
            if metadata.get("format") != FORMAT or metadata.get("version") != VERSION:
                raise CheckpointError(_refused(path, "no searchapp checkpoint header"))
            flat = {key: f.get_tensor(key) for key in f.keys()}  # noqa: SIM118 - not a dict
        state = json.loads(metadata["state"])
    except CheckpointError:
        raise
    except Exception as exc:  # safetensors' own error, bad JSON, a missing key
        raise CheckpointError(_refused(path, f"{type(exc).__name__}: {exc}")) from exc
    if not isinstance(state, dict):
        raise CheckpointError(_refused(path, "its state is not a JSON object"))
    return _unflatten(flat), state


def optimizer_parts(state_dict: dict) -> tuple[dict[str, torch.Tensor], dict]:
    """Split an optimiser state dict into tensors and JSON (hyper-parameters, plain values).

    AdamW keeps ``step``, ``exp_avg`` and ``exp_avg_sq`` tensors per parameter;
    they become ``"<param>.<name>"`` tensors. Any non-tensor per-parameter value
    and the ``param_groups`` (lr, betas, weight decay, parameter indices) go to JSON.
    """
    tensors: dict[str, torch.Tensor] = {}
    plain: dict[str, dict] = {}
    for param, values in state_dict["state"].items():
        for name, value in values.items():
            if torch.is_tensor(value):
                tensors[f"{param}.{name}"] = value
            else:
                plain.setdefault(str(param), {})[name] = value
    return tensors, {"param_groups": state_dict["param_groups"], "plain": plain}


def optimizer_state(tensors: dict[str, torch.Tensor], parts: dict) -> dict:
    """The optimiser state dict that ``optimizer_parts`` split (for ``load_state_dict``)."""
    state: dict[int, dict] = {}
    for key, value in tensors.items():
        param, name = key.split(".", 1)
        state.setdefault(int(param), {})[name] = value
    for param, values in parts["plain"].items():
        state.setdefault(int(param), {}).update(values)
    groups = [{**g, "betas": tuple(g["betas"])} if "betas" in g else g
              for g in parts["param_groups"]]  # JSON made the tuple a list
    return {"state": state, "param_groups": groups}


def _flatten(groups: Groups) -> dict[str, torch.Tensor]:
    """``{"group.key": tensor}``, contiguous, on the CPU, no two sharing memory.

    safetensors refuses tensors that share storage (tied weights); those get a copy.
    """
    flat: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for group, tensors in groups.items():
        if "." in group:
            raise ValueError(f"group name {group!r} must not contain '.'")
        for key, tensor in tensors.items():
            t = tensor.detach().to("cpu").contiguous()
            if t.untyped_storage().data_ptr() in seen:
                t = t.clone()
            seen.add(t.untyped_storage().data_ptr())
            flat[f"{group}.{key}"] = t
    return flat


def _unflatten(flat: dict[str, torch.Tensor]) -> Groups:
    groups: Groups = {}
    for key, tensor in flat.items():
        group, name = key.split(".", 1)
        groups.setdefault(group, {})[name] = tensor
    return groups


def _refused(path: Path, reason: str) -> str:
    return (f"{path} is not a training checkpoint this app can read ({reason}); it was "
            "not loaded. Delete it to start the fine-tuning afresh.")
