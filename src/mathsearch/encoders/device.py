"""Where an encoder's network runs: a CUDA device when torch sees one, else the CPU.

``--device auto`` (the builds' default) takes the GPU when there is one; ``cuda`` asks for it and
falls back to the CPU with a message when torch sees none; ``cpu`` never touches a GPU.  Static
encoders are numpy tables and always run on the CPU; MiniLM (the teacher and the ``minilm``
encoder) is the one that gains: about 12 posts per CPU second here, thousands a second on a GPU.
"""

from __future__ import annotations

import sys

from ..errors import InputError

DEVICES = ("auto", "cpu", "cuda")


def cuda_available() -> bool:
    """True when torch is installed and sees a CUDA device (never imports torch without the extras)."""
    from importlib.util import find_spec

    if find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def check_device(asked: str | None) -> str:
    asked = (asked or "auto").strip().lower()
    if asked not in DEVICES:
        raise InputError(f"--device {asked!r}: give one of {', '.join(DEVICES)}.")
    return asked


def choose_device(asked: str | None = "auto", quiet: bool = False) -> str:
    """``cuda`` or ``cpu`` for ``asked`` (auto, cpu, cuda); a CUDA device asked for and not seen is
    said on stderr, and the CPU used."""
    asked = check_device(asked)
    if asked == "cpu":
        return "cpu"
    if cuda_available():
        return "cuda"
    if asked == "cuda" and not quiet:
        print("--device cuda: torch sees no CUDA device here; the encoders run on the CPU", file=sys.stderr, flush=True)
    return "cpu"


def describe(device: str) -> str:
    """``cuda (NVIDIA H100 ...)`` or ``cpu (N threads)``: what an index's manifest records."""
    try:
        import torch
    except ImportError:
        return device
    if device.startswith("cuda"):
        try:
            return f"{device} ({torch.cuda.get_device_name(0)})"
        except Exception:  # noqa: BLE001 - a name is only for people; the device is what counts
            return device
    return f"cpu ({torch.get_num_threads()} threads)"
