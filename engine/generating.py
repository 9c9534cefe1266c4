"""Generated parameter values: passwords, tokens, Fernet keys and RSA keys made with `secrets`-grade randomness.

The engine (runner) makes a value once, when an Instance is first planned without one, and keeps it in
the Instance's Secret of generated values; the planner only ever reads that Secret.
"""

from __future__ import annotations

import base64
import secrets
import string

from engine.model import Generated, GenerateKind

__all__ = ["LENGTHS", "Generated", "length_problem", "make"]

# kind -> (default length, smallest, largest); a Fernet key has one length (32 bytes, 44 characters).
LENGTHS: dict[GenerateKind, tuple[int, int, int]] = {
    GenerateKind.PASSWORD: (24, 8, 4096),
    GenerateKind.TOKEN: (32, 16, 4096),
    GenerateKind.FERNET: (44, 44, 44),
    GenerateKind.RSA: (2048, 2048, 8192),
}
ALPHABETS = {
    GenerateKind.PASSWORD: string.ascii_letters + string.digits,
    GenerateKind.TOKEN: string.ascii_lowercase + string.digits,
}


def length_problem(generated: Generated) -> str | None:
    """Why `length` does not fit the kind, or None."""
    default, low, high = LENGTHS[generated.kind]
    length = generated.length if generated.length is not None else default
    if generated.kind is GenerateKind.FERNET and generated.length is not None:
        return "is not used by kind fernet: a Fernet key is always 44 characters"
    if generated.kind is GenerateKind.RSA and length % 1024:
        return f"must be a multiple of 1024 bits for kind rsa, got {length}"
    if not low <= length <= high:
        return f"must be between {low} and {high} for kind {generated.kind.value}, got {length}"
    return None


def make(generated: Generated) -> str:
    """A fresh value of the kind: letters and digits (password), lower-case letters and digits (token), a
    urlsafe-base64 32-byte key (fernet) or a PEM PKCS#8 private key of `length` bits (rsa)."""
    length = generated.length if generated.length is not None else LENGTHS[generated.kind][0]
    match generated.kind:
        case GenerateKind.FERNET:
            return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
        case GenerateKind.RSA:
            return rsa_key(length)
        case kind:
            return "".join(secrets.choice(ALPHABETS[kind]) for _ in range(length))


def rsa_key(bits: int) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
