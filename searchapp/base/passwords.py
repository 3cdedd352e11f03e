"""The password gate's secrets: salted, slow hashes and constant-time checks.

``SEARCHAPP_PASSWORD`` (the password itself) or ``SEARCHAPP_PASSWORD_HASH``
(a hash from ``searchapp hash-password``, so the password is not stored in
clear) turns on a login form in front of every page. A hash is
``scrypt:N:r:p:SALT:KEY`` (base64 salt and key; scrypt makes each guess cost
about 0.1 s and 32 MiB); Django-style ``pbkdf2_sha256$ITERATIONS$SALT$KEY``
strings are read too. ``:`` separates the fields so the value survives
``.env`` files and docker compose, which expand ``$``; ``$`` is accepted as well.
Every comparison goes through ``hmac.compare_digest``, so the time it takes
does not tell how much of a guess was right.

Example:
    >>> stored = hash_password("s3cret", n=2**10)  # a small N: quick for the example
    >>> stored.startswith("scrypt:1024:8:1:")
    True
    >>> verify_password("s3cret", stored), verify_password("s3cre", stored)
    (True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1  # 128 * r * N = 32 MiB per check
SCRYPT_MAXMEM = 64 * 2**20
KEY_BYTES = 32
SALT_BYTES = 16
HASH_FORMS = ("scrypt:N:r:p:SALT:KEY (from `searchapp hash-password`)",
              "pbkdf2_sha256$ITERATIONS$SALT$KEY")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)


def hash_password(password: str, n: int = SCRYPT_N, salt: bytes | None = None) -> str:
    """A salted scrypt hash of ``password`` for SEARCHAPP_PASSWORD_HASH.

    Example:
        >>> hash_password("pw", n=2**10, salt=bytes(16))
        'scrypt:1024:8:1:AAAAAAAAAAAAAAAAAAAAAA:f6_fxHvVP94DtWUEFcSA7cLCpODOCjx9cFCH8I05Wog'
    """
    if not password:
        raise ValueError("the password is empty")
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    key = hashlib.scrypt(password.encode(), salt=salt, n=n, r=SCRYPT_R, p=SCRYPT_P,
                         maxmem=SCRYPT_MAXMEM, dklen=KEY_BYTES)
    return f"scrypt:{n}:{SCRYPT_R}:{SCRYPT_P}:{_b64(salt)}:{_b64(key)}"


def check_hash(stored: str) -> None:
    """Raise ValueError (naming the accepted forms) unless ``stored`` is a hash we can check.

    Done once at start, so a mistyped hash stops the app instead of locking everyone out.

    Example:
        >>> check_hash("scrypt:1024:8:1:AAAA:AAAA")
        >>> check_hash("hunter2")
        Traceback (most recent call last):
        ...
        ValueError: not a password hash; use scrypt:N:r:p:SALT:KEY ... or pbkdf2_sha256$...
    """
    try:
        _derive("", stored, dry_run=True)
    except (ValueError, OverflowError) as exc:  # binascii.Error is a ValueError
        forms = " or ".join(HASH_FORMS)
        raise ValueError(f"not a password hash; use {forms}") from exc


def verify_password(attempt: str, stored: str) -> bool:
    """Whether ``attempt`` matches the hash ``stored``, compared in constant time.

    Example:
        >>> verify_password("pw", hash_password("pw", n=2**10))
        True
    """
    expected, key = _derive(attempt, stored)
    return hmac.compare_digest(expected, key)


def verify_plain(attempt: str, password: str) -> bool:
    """Whether ``attempt`` equals ``password`` (SEARCHAPP_PASSWORD), in constant time.

    Example:
        >>> verify_plain("open sesame", "open sesame"), verify_plain("open", "open sesame")
        (True, False)
    """
    return hmac.compare_digest(attempt.encode(), password.encode())


def _derive(attempt: str, stored: str, dry_run: bool = False) -> tuple[bytes, bytes]:
    """(the stored key, the key derived from ``attempt`` the same way); ValueError on a
    malformed hash. ``dry_run`` only parses (and returns the stored key twice)."""
    kind, *fields = re.split(r"[:$]", stored.strip())
    if kind == "scrypt" and len(fields) == 5:
        return _scrypt(attempt, fields, dry_run)
    if kind == "pbkdf2_sha256" and len(fields) == 3:
        return _pbkdf2(attempt, fields, dry_run)
    raise ValueError(f"unknown hash form {kind!r}")


def _scrypt(attempt: str, fields: list[str], dry_run: bool) -> tuple[bytes, bytes]:
    n, r, p = (int(x) for x in fields[:3])
    salt, key = _unb64(fields[3]), _unb64(fields[4])
    if n < 2 or n & (n - 1) or not key:
        raise ValueError("scrypt N must be a power of two, and the key not empty")
    if dry_run:
        return key, key
    return key, hashlib.scrypt(attempt.encode(), salt=salt, n=n, r=r, p=p,
                               maxmem=max(SCRYPT_MAXMEM, 256 * r * n), dklen=len(key))


def _pbkdf2(attempt: str, fields: list[str], dry_run: bool) -> tuple[bytes, bytes]:
    iterations, salt = int(fields[0]), fields[1].encode()
    key = base64.b64decode(fields[2], validate=True)
    if iterations < 1 or not key:
        raise ValueError("iterations must be positive, and the key not empty")
    if dry_run:
        return key, key
    return key, hashlib.pbkdf2_hmac("sha256", attempt.encode(), salt, iterations, len(key))
