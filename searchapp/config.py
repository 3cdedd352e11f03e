"""Settings from the environment, validated once at start.

Variables (all optional):
    SEARCHAPP_DATA_DIR      folder for the database, indexes and models (default ``data``)
    SEARCHAPP_DATABASE_URL  any SQLAlchemy URL (default SQLite at DATA_DIR/searchapp.db)
    SEARCHAPP_MODEL         default model for new corpora (default ``all-MiniLM-L6-v2``)
    SEARCHAPP_DEVICE        ``auto`` (CUDA when available), ``cpu`` or ``cuda``
    SEARCHAPP_PRECISION     ``auto`` (the fastest exact path for this CPU/GPU), ``fp32`` or
                            ``bf16`` (see ``searchapp/embedding/speed.py``)
    SEARCHAPP_MAX_UPLOAD_BYTES  largest upload once uncompressed, in bytes or with a K, M or
                            G suffix (binary units; default ``1G``): a bigger file, or a
                            small .gz that expands past it, is refused while it is read
    SEARCHAPP_MAX_PAGES     pages or slides read from one document (default 2000; a longer
                            file is refused with one line, the others ingested)
    SEARCHAPP_MAX_FILES, SEARCHAPP_MAX_UNPACKED_BYTES, SEARCHAPP_MAX_RATIO  files per
                            ingest (100000), bytes unpacked from archives (4G), and how
                            many times an archive or a .gz table may expand its own size
                            (200)
    SEARCHAPP_EXTRACT_TIMEOUT, SEARCHAPP_EXTRACT_MEMORY  seconds one file may take to read
                            (120) and the memory of each reading process (2G)
    SEARCHAPP_PASSWORD      turns on a login form before every page of the web app
    SEARCHAPP_PASSWORD_HASH the same with a hash from ``searchapp hash-password`` instead
                            of the password (``searchapp/base/passwords.py``); set one of the two
    SEARCHAPP_BUSY_TIMEOUT  seconds a write waits for another process' write lock on a
                            SQLite database before a "database busy" error (default 30)
    SEARCHAPP_PASSAGE_TOKENS  the passage window for long documents, in model tokens
                            (default: half the model's window; 16 or more)
    SEARCHAPP_RAY_ADDRESS   a Ray cluster for embedding (``auto``, ``HOST:6379``,
                            ``ray://HOST:10001`` or ``local``): the Jobs page offers
                            "Embed on Ray", and ``embed --engine ray`` uses it by default
    SEARCHAPP_SEARCH_ENGINE ``local`` (default: each process holds a corpus' whole index) or
                            ``ray`` (queries fan out to the corpus' shard servers on that
                            cluster: ``searchapp shards serve``, docs/scale-out.md)
    SEARCHAPP_ALLOWED_HOSTS the host names the web server answers to besides the loopback
                            names (comma list, e.g. ``search.example.org,10.0.0.5``; ``*``
                            for any): a request naming another ``Host`` is refused (421),
                            which stops DNS rebinding. Unset: loopback names only on a
                            loopback server, any name on one that listens beyond it
    SEARCHAPP_TRUSTED_PROXIES  addresses whose ``X-Forwarded-For``/``-Proto`` the web server
                            believes (comma list of IPs or networks, e.g. ``127.0.0.1`` for
                            a reverse proxy on this machine); default none: the client is
                            the peer of the connection (the login throttle's key)
    SEARCHAPP_MAX_REQUEST_BYTES  largest request body the web server reads (default ``64M``);
                            uploads through the pages get Streamlit's ``server.maxUploadSize``
                            if that is larger; a bigger body is refused with 413

Example:
    >>> s = Settings.from_env({"SEARCHAPP_DATA_DIR": "/tmp/x"})
    >>> s.database_url
    'sqlite:////tmp/x/searchapp.db'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import URL

from searchapp.base import passwords
from searchapp.base.private_files import private_dir
from searchapp.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16")
DEFAULT_MAX_UPLOAD_BYTES = 1 << 30  # 1 GiB uncompressed
DEFAULT_BUSY_TIMEOUT = 30.0  # seconds
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# Never handed to a process the app starts (the worker): they open the web app.
SECRET_VARIABLES = ("SEARCHAPP_PASSWORD", "SEARCHAPP_PASSWORD_HASH")


@dataclass(frozen=True)
class Settings:
    """Where data lives and which model, device and precision to use."""

    data_dir: Path
    database_url: str
    model: str = DEFAULT_MODEL
    device: str = "auto"
    precision: str = "auto"
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    password: str | None = field(default=None, repr=False)
    password_hash: str | None = field(default=None, repr=False)
    ray_address: str | None = None
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT
    passage_tokens: int | None = None  # None: half the model's window
    answer_sentences: bool = True  # cut and encode sentences at embed time, for answers
    search_engine: str = "local"  # "ray": queries fan out to the corpus' shard servers
    shard_words_dir: Path | None = None  # where shard servers keep their full text (None:
    # each node's temporary folder)
    translate_words: bool = True  # hybrid search: query words in a multilingual corpus' languages
    search_stems: bool = True  # full text: query words also as stems in the corpus' languages

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read and validate the ``SEARCHAPP_*`` variables."""
        env = os.environ if env is None else env
        data_dir = Path(env.get("SEARCHAPP_DATA_DIR", "") or "data").expanduser().resolve()
        if data_dir.exists() and not data_dir.is_dir():
            raise ConfigError(f"SEARCHAPP_DATA_DIR={data_dir} is a file; point it at a folder.")
        url = env.get("SEARCHAPP_DATABASE_URL", "") or sqlite_url(data_dir / "searchapp.db")
        if "://" not in url:
            raise ConfigError(
                f"SEARCHAPP_DATABASE_URL={url!r} is not a SQLAlchemy URL; "
                "use e.g. sqlite:///path/to/file.db or postgresql://user@host/db."
            )
        device = (env.get("SEARCHAPP_DEVICE", "") or "auto").lower()
        if device not in DEVICES:
            raise ConfigError(
                f"SEARCHAPP_DEVICE={device!r} is not valid; use one of: {', '.join(DEVICES)}."
            )
        precision = (env.get("SEARCHAPP_PRECISION", "") or "auto").lower()
        if precision not in PRECISIONS:
            raise ConfigError(
                f"SEARCHAPP_PRECISION={precision!r} is not valid; use one of: "
                f"{', '.join(PRECISIONS)}."
            )
        model = env.get("SEARCHAPP_MODEL", "") or DEFAULT_MODEL
        password, password_hash = _password_settings(env)
        return cls(data_dir=data_dir, database_url=url, model=model, device=device,
                   precision=precision, max_upload_bytes=max_upload_bytes(env),
                   password=password, password_hash=password_hash,
                   ray_address=ray_address(env), busy_timeout=busy_timeout(env),
                   passage_tokens=passage_tokens(env),
                   answer_sentences=answer_sentences(env), search_engine=search_engine(env),
                   shard_words_dir=shard_words_dir(env), translate_words=translate_words(env),
                   search_stems=search_stems(env))

    @property
    def password_required(self) -> bool:
        """Whether the web app shows a login form before any page."""
        return bool(self.password or self.password_hash)

    def check_password(self, attempt: str) -> bool:
        """Whether ``attempt`` opens the app (constant-time; False when no password is set).

        Example:
            >>> Settings.from_env({"SEARCHAPP_PASSWORD": "pw"}).check_password("pw")
            True
        """
        if self.password_hash:
            return passwords.verify_password(attempt, self.password_hash)
        if self.password:
            return passwords.verify_plain(attempt, self.password)
        return False

    @property
    def models_dir(self) -> Path:
        """Fine-tuned and user-added models: ``DATA_DIR/models/NAME``."""
        return self.data_dir / "models"

    @property
    def index_dir(self) -> Path:
        """HNSW index files, one per (corpus, model)."""
        return self.data_dir / "indexes"

    @property
    def backup_dir(self) -> Path:
        """Backups: ``searchapp backup`` and the API's snapshots, and the copy a schema
        upgrade takes first."""
        return self.data_dir / "backups"

    @property
    def originals_dir(self) -> Path:
        """Uploaded and ingested files as they came, once per SHA-256 (``corpora/originals``)."""
        return self.data_dir / "originals"

    @property
    def work_dir(self) -> Path:
        """Scratch space for jobs (checkpoints, uploads waiting for a job)."""
        return self.data_dir / "work"

    def ensure_dirs(self) -> None:
        """Create the data folders (idempotent); the data folder is made private (0700)."""
        private_dir(self.data_dir)
        for d in (self.models_dir, self.index_dir, self.work_dir, self.backup_dir):
            d.mkdir(mode=0o700, parents=True, exist_ok=True)


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file, with ``?``, ``%``, ``#`` and spaces in its path
    escaped, so they stay part of the path (not a query string, not a fragment).

    Example:
        >>> sqlite_url(Path("/srv/p?one/searchapp.db"))
        'sqlite:////srv/p%3Fone/searchapp.db'
    """
    return URL.create("sqlite", database=str(path)).render_as_string()


def size_words(n: int) -> str:
    """Bytes in binary units for messages (the inverse of ``parse_size``, roughly).

    Example:
        >>> size_words(1 << 30), size_words(1536), size_words(12)
        ('1 GiB', '1.5 KiB', '12 bytes')
    """
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def parse_size(text: str) -> int:
    """A size in bytes from ``"1048576"``, ``"500M"``, ``"2G"`` or ``"1.5GiB"`` (binary units).

    Example:
        >>> parse_size("512M"), parse_size("1.5G"), parse_size("4096")
        (536870912, 1610612736, 4096)
    """
    cleaned = text.strip().upper().removesuffix("IB").removesuffix("B").strip()
    number, unit = cleaned.rstrip("KMGT").strip(), cleaned[len(cleaned.rstrip("KMGT")):]
    try:
        value = float(number) * SIZE_UNITS[unit]
    except (KeyError, ValueError):
        raise ValueError(f"{text!r} is not a size") from None
    if not 0 < value < float("inf"):
        raise ValueError(f"{text!r} is not a positive size")
    return int(value)


def max_upload_bytes(env: Mapping[str, str] | None = None) -> int:
    """SEARCHAPP_MAX_UPLOAD_BYTES (default 1 GiB), validated; read on its own so ``ingest``
    can check an upload without the other settings.

    Example:
        >>> max_upload_bytes({"SEARCHAPP_MAX_UPLOAD_BYTES": "10M"})
        10485760
    """
    env = os.environ if env is None else env
    raw = env.get("SEARCHAPP_MAX_UPLOAD_BYTES", "") or str(DEFAULT_MAX_UPLOAD_BYTES)
    try:
        return parse_size(raw)
    except ValueError:
        raise ConfigError(
            f"SEARCHAPP_MAX_UPLOAD_BYTES={raw!r} is not a size; use bytes or a number with "
            "K, M or G, e.g. 1048576, 500M or 2G."
        ) from None


def busy_timeout(env: Mapping[str, str] | None = None) -> float:
    """SEARCHAPP_BUSY_TIMEOUT in seconds (default 30), validated (``Settings.busy_timeout``).

    Example:
        >>> busy_timeout({"SEARCHAPP_BUSY_TIMEOUT": "0.5"}), busy_timeout({})
        (0.5, 30.0)
    """
    return _seconds(env, "SEARCHAPP_BUSY_TIMEOUT", DEFAULT_BUSY_TIMEOUT, "0", "30")


DEFAULT_WORKER_REST = 600.0  # seconds a worker stays idle before it frees its caches


def worker_rest(env: Mapping[str, str] | None = None) -> float:
    """SEARCHAPP_WORKER_REST: seconds without a job after which the worker frees its loaded
    models and indexes (default 600; 0 never), validated.

    Example:
        >>> worker_rest({"SEARCHAPP_WORKER_REST": "30"}), worker_rest({})
        (30.0, 600.0)
    """
    return _seconds(env, "SEARCHAPP_WORKER_REST", DEFAULT_WORKER_REST, "0 (never)", "600")


def _seconds(env: Mapping[str, str] | None, name: str, default: float, zero: str,
             example: str) -> float:
    """``name``'s value as seconds from 0 to a day (``default`` when unset or blank)."""
    env = os.environ if env is None else env
    raw = (env.get(name, "") or "").strip() or str(default)
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86_400:
        raise ConfigError(f"{name}={raw!r} is not a number of seconds between {zero} and "
                          f"86400; e.g. {example}.")
    return seconds


def passage_tokens(env: Mapping[str, str] | None = None) -> int | None:
    """SEARCHAPP_PASSAGE_TOKENS: the passage window in model tokens (default: from the model).

    Example:
        >>> passage_tokens({"SEARCHAPP_PASSAGE_TOKENS": "200"}), passage_tokens({})
        (200, None)
    """
    env = os.environ if env is None else env
    raw = (env.get("SEARCHAPP_PASSAGE_TOKENS", "") or "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 16:
        raise ConfigError(f"SEARCHAPP_PASSAGE_TOKENS={raw!r} is not valid; use a whole number "
                          "of tokens, 16 or more (the model's window caps it).")
    return int(raw)


def _switch(env: Mapping[str, str] | None, name: str, default: bool, what: str) -> bool:
    """A SEARCHAPP_* on/off variable: 1/on/true/yes or 0/off/false/no; ``what`` says in the
    error what the variable does."""
    env = os.environ if env is None else env
    raw = (env.get(name, "") or ("1" if default else "0")).strip().lower()
    if raw not in ("0", "1", "off", "on", "false", "true", "no", "yes"):
        raise ConfigError(f"{name}={raw!r} is not valid; use 1 ({what}) or 0.")
    return raw in ("1", "on", "true", "yes")


def answer_sentences(env: Mapping[str, str] | None = None) -> bool:
    """SEARCHAPP_ANSWER_SENTENCES: whether the embed job keeps each passage's sentences for
    answers (default on; ``0`` saves the encoder time they take, and answers go silent on
    documents embedded so).

    Example:
        >>> answer_sentences({"SEARCHAPP_ANSWER_SENTENCES": "0"}), answer_sentences({})
        (False, True)
    """
    return _switch(env, "SEARCHAPP_ANSWER_SENTENCES", True,
                   "keep sentences for answers, the default")


def search_stems(env: Mapping[str, str] | None = None) -> bool:
    """SEARCHAPP_SEARCH_STEMS: whether full-text search also looks for the query's words as
    their stems in each of the corpus' languages, where the index keeps its documents'
    stems (``search.corpus_languages``; default on, ``0``: the words as written only).

    Example:
        >>> search_stems({"SEARCHAPP_SEARCH_STEMS": "0"}), search_stems({})
        (False, True)
    """
    return _switch(env, "SEARCHAPP_SEARCH_STEMS", True,
                   "search the stems of the query's words in the corpus' languages, the default")


def translate_words(env: Mapping[str, str] | None = None) -> bool:
    """SEARCHAPP_TRANSLATE_WORDS: whether hybrid search on a corpus of a multilingual model
    also looks for the query's words as the corpus' other languages write them
    (``search.translated_words``; default on, ``0`` searches the words as typed only).

    Example:
        >>> translate_words({"SEARCHAPP_TRANSLATE_WORDS": "off"}), translate_words({})
        (False, True)
    """
    return _switch(env, "SEARCHAPP_TRANSLATE_WORDS", True,
                   "translate the query's words on multilingual corpora, the default")


SEARCH_ENGINES = ("local", "ray")


def search_engine(env: Mapping[str, str] | None = None) -> str:
    """SEARCHAPP_SEARCH_ENGINE: where queries find their vectors. ``local`` (the default):
    this process' own index of each corpus; ``ray``: the corpus' shard servers on the Ray
    cluster at SEARCHAPP_RAY_ADDRESS (``searchapp shards serve``; docs/scale-out.md).

    Example:
        >>> search_engine({"SEARCHAPP_SEARCH_ENGINE": "Ray"}), search_engine({})
        ('ray', 'local')
    """
    env = os.environ if env is None else env
    raw = (env.get("SEARCHAPP_SEARCH_ENGINE", "") or "local").strip().lower()
    if raw not in SEARCH_ENGINES:
        raise ConfigError(f"SEARCHAPP_SEARCH_ENGINE={raw!r} is not valid; use local (this "
                          "process' index, the default) or ray (the corpus' shard servers).")
    return raw


def shard_words_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """SEARCHAPP_SHARD_WORDS_DIR: the folder, on each node, where shard servers keep their
    documents' full text (a local disk: SQLite files); None when unset (the node's
    temporary folder).

    Example:
        >>> shard_words_dir({"SEARCHAPP_SHARD_WORDS_DIR": "/srv/words"}), shard_words_dir({})
        (PosixPath('/srv/words'), None)
    """
    env = os.environ if env is None else env
    raw = env.get("SEARCHAPP_SHARD_WORDS_DIR", "").strip()
    return Path(raw).expanduser() if raw else None


def ray_address(env: Mapping[str, str] | None = None) -> str | None:
    """SEARCHAPP_RAY_ADDRESS, validated; None when unset (no Ray cluster configured).

    Example:
        >>> ray_address({"SEARCHAPP_RAY_ADDRESS": "ray://head:10001"}), ray_address({})
        ('ray://head:10001', None)
    """
    env = os.environ if env is None else env
    raw = env.get("SEARCHAPP_RAY_ADDRESS", "").strip()
    if not raw:
        return None
    host, _, port = raw.rpartition(":")
    if raw in ("auto", "local") or (host and port.isdigit()):
        return raw
    raise ConfigError(f"SEARCHAPP_RAY_ADDRESS={raw!r} is not a Ray address; use auto, local, "
                      "HOST:6379 or ray://HOST:10001.")


def _password_settings(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(SEARCHAPP_PASSWORD, SEARCHAPP_PASSWORD_HASH), at most one set and the hash readable."""
    password = env.get("SEARCHAPP_PASSWORD", "") or None
    password_hash = env.get("SEARCHAPP_PASSWORD_HASH", "").strip() or None
    if password and password_hash:
        raise ConfigError("Both SEARCHAPP_PASSWORD and SEARCHAPP_PASSWORD_HASH are set; "
                          "keep one (the hash, so the password is not stored in clear).")
    if password_hash:
        try:
            passwords.check_hash(password_hash)
        except ValueError as exc:
            raise ConfigError(f"SEARCHAPP_PASSWORD_HASH is {exc}.") from None
    return password, password_hash


DEFAULT_MAX_REQUEST_BYTES = 64 << 20  # 64 MiB: a JSON batch of documents fits many times over


def allowed_hosts(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """SEARCHAPP_ALLOWED_HOSTS as lower-case host names (no ports); empty when unset.

    Example:
        >>> allowed_hosts({"SEARCHAPP_ALLOWED_HOSTS": " Search.Example.org, [::1]:8501 ,"})
        ('search.example.org', '::1')
    """
    env = os.environ if env is None else env
    names = []
    for raw in (env.get("SEARCHAPP_ALLOWED_HOSTS", "") or "").split(","):
        name = raw.strip().lower()
        if not name:
            continue
        if any(c in name for c in "/@ ?#\\"):
            name = ""
        elif name.startswith("["):
            name = name[1:name.find("]")] if "]" in name else ""
        elif name.count(":") == 1:
            name = name.split(":")[0]
        if not name:
            raise ConfigError(f"SEARCHAPP_ALLOWED_HOSTS has {raw.strip()!r}, which is not a host "
                              "name; use names or addresses separated by commas, e.g. "
                              "search.example.org,10.0.0.5 (or * for any).")
        names.append(name.rstrip("."))
    return tuple(names)


def trusted_proxies(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """SEARCHAPP_TRUSTED_PROXIES as IP addresses or networks; empty (trust none) when unset.

    Example:
        >>> trusted_proxies({"SEARCHAPP_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8"})
        ('127.0.0.1', '10.0.0.0/8')
        >>> trusted_proxies({})
        ()
    """
    import ipaddress

    env = os.environ if env is None else env
    found = []
    for raw in (env.get("SEARCHAPP_TRUSTED_PROXIES", "") or "").split(","):
        item = raw.strip()
        if not item:
            continue
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ConfigError(f"SEARCHAPP_TRUSTED_PROXIES has {item!r}, which is not an IP "
                              "address or network; e.g. 127.0.0.1 (a reverse proxy on this "
                              "machine) or 10.0.0.0/8.") from None
        found.append(item)
    return tuple(found)


def max_request_bytes(env: Mapping[str, str] | None = None) -> int:
    """SEARCHAPP_MAX_REQUEST_BYTES (default 64 MiB), validated.

    Example:
        >>> max_request_bytes({"SEARCHAPP_MAX_REQUEST_BYTES": "1M"}), max_request_bytes({})
        (1048576, 67108864)
    """
    env = os.environ if env is None else env
    raw = env.get("SEARCHAPP_MAX_REQUEST_BYTES", "") or str(DEFAULT_MAX_REQUEST_BYTES)
    try:
        return parse_size(raw)
    except ValueError:
        raise ConfigError(f"SEARCHAPP_MAX_REQUEST_BYTES={raw!r} is not a size; use bytes or a "
                          "number with K, M or G, e.g. 16M.") from None
