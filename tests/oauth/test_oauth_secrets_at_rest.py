"""Secrets at rest: tokens, client secrets and DPoP keys sealed in the state stores.

Against a real redis-server (tests/helpers/redis_server.py) and a real OAuth server (fastmcp's
InMemoryOAuthProvider, with DPoP from oauth_extensions), the raw keys are read back with
redis-py to show that no token, client secret or key material is there in plain text. The
tampering is done the way an attacker with write access to Redis would: by editing the raw
values.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator

import pytest

from tests.helpers.support import FASTMCP_MISSING

pytest.importorskip("redis", reason="the redis extra is not installed")
pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)  # the OAuth test server

import redis
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import mcp_sync
from mcp_sync.oauth import (
    AesGcmSealer,
    ClientMetadata,
    FileStateStore,
    InvalidSealingKey,
    OAuthError,
    OAuthProvider,
    PlaintextDPoPKeyRefused,
    SealedStateError,
    StateStoreError,
)
from mcp_sync.oauth.redis_store import RedisStateStore
from mcp_sync.oauth.sealing import stored_key_id
from tests.helpers.oauth_fastmcp_server import serve
from tests.helpers.redis_server import redis_server
from tests.oauth.test_oauth_e2e import Redirects
from tests.oauth.test_oauth_extensions import trust  # noqa: F401 (the DPoP server's fixture)

pytestmark = pytest.mark.timeout(90)

REDIRECT = "http://127.0.0.1:1/callback"
SECRET_CLIENT = ClientMetadata(token_endpoint_auth_method="client_secret_post")


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def raw(redis_url) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def prefix(request) -> str:
    return f"test:{request.node.name}:"


def raw_state(raw: redis.Redis, prefix: str) -> dict[str, bytes]:
    """Every state value under ``prefix``, as Redis holds it, by server URL."""
    found = {}
    for name in raw.scan_iter(match=f"{prefix}state:*"):
        found[name.decode()[len(f"{prefix}state:") :]] = raw.get(name)
    return found


def secrets_in(state: dict) -> list[str]:
    """The token, secret and key material of one state object (each must be there)."""
    tokens = state["tokens"]
    values = [tokens["accessToken"], tokens["refreshToken"]]
    values += [client["clientSecret"] for client in state["clients"].values()]
    if "dpopKey" in state:
        pem = state["dpopKey"]
        values += [pem, "PRIVATE KEY", *(line for line in pem.splitlines() if "-----" not in line)]
    assert all(values), values
    return values


def sign_in(server, store, **options) -> OAuthProvider:
    provider = OAuthProvider(
        server.url,
        REDIRECT,
        on_redirect=Redirects(),
        store=store,
        client_metadata=SECRET_CLIENT,
        **options,
    )
    with mcp_sync.connect(server.url, auth=provider) as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    return provider


def test_tokens_client_secrets_and_dpop_keys_are_sealed_in_redis(trust, redis_url, raw, prefix):  # noqa: F811
    sealer = AesGcmSealer([AesGcmSealer.generate_key()])
    with serve(trust=trust) as server:
        first = sign_in(server, RedisStateStore(redis_url, prefix=prefix, sealer=sealer), dpop=True)
        assert first.tokens.token_type == "DPoP"
        stored = raw_state(raw, prefix)
        assert list(stored) == [server.url]
        state = RedisStateStore(redis_url, prefix=prefix, sealer=sealer).load(server.url)
        assert state is not None and state["dpopKey"]
        for secret in secrets_in(state):
            assert secret.encode() not in stored[server.url]
        assert b"accessToken" not in stored[server.url]  # not even the field names
        assert stored[server.url].startswith(b"mcp-sync-sealed:1:")

        # another worker with the same key: the same tokens and DPoP key, no sign-in
        redirects = Redirects()
        second = OAuthProvider(
            server.url,
            REDIRECT,
            on_redirect=redirects,
            store=RedisStateStore(redis_url, prefix=prefix, sealer=sealer),
        )
        assert second.tokens.access_token == first.tokens.access_token
        with mcp_sync.connect(server.url, auth=second) as client:
            assert client.call_tool("add", {"a": 2, "b": 2}).text == "4"
        assert redirects.urls == []

        # a worker with another key: a typed error at once, not a second sign-in
        with pytest.raises(SealedStateError) as info:
            OAuthProvider(
                server.url,
                REDIRECT,
                on_redirect=redirects,
                store=RedisStateStore(
                    redis_url, prefix=prefix, sealer=AesGcmSealer([AesGcmSealer.generate_key()])
                ),
            )
        assert info.value.key_id == sealer.key_ids[0] and info.value.key == server.url
        assert "RedisStateStore" in str(info.value) and sealer.key_ids[0] in str(info.value)
        assert redirects.urls == []
        assert raw_state(raw, prefix) == stored  # nothing overwritten


def test_keys_rotate_the_newest_writes_and_any_reads(redis_url, raw, prefix):
    old, new = AesGcmSealer.generate_key(), AesGcmSealer.generate_key()
    old_only, new_only = AesGcmSealer([old]), AesGcmSealer([new])
    rotated = AesGcmSealer([new, old])
    assert rotated.key_ids == (new_only.key_ids[0], old_only.key_ids[0])
    value = {"tokens": {"accessToken": "at-1", "refreshToken": "rt-1"}}

    RedisStateStore(redis_url, prefix=prefix, sealer=old_only).save("https://a/mcp", value)
    before = raw_state(raw, prefix)["https://a/mcp"]
    assert stored_key_id(before) == old_only.key_ids[0]
    during = RedisStateStore(redis_url, prefix=prefix, sealer=rotated)
    assert during.load("https://a/mcp") == value  # an old key still reads
    # a worker still on the old key reads it too, until the value is saved again
    assert RedisStateStore(redis_url, prefix=prefix, sealer=old_only).load("https://a/mcp")

    with during.lock("https://a/mcp"):  # the next save (a refresh) seals with the newest key
        during.save("https://a/mcp", during.load("https://a/mcp"))
    after = raw_state(raw, prefix)["https://a/mcp"]
    assert stored_key_id(after) == new_only.key_ids[0]
    assert RedisStateStore(redis_url, prefix=prefix, sealer=new_only).load("https://a/mcp") == value
    with pytest.raises(SealedStateError) as info:
        RedisStateStore(redis_url, prefix=prefix, sealer=old_only).load("https://a/mcp")
    assert info.value.key_id == new_only.key_ids[0]
    assert "does not have" in str(info.value) and old_only.key_ids[0] in str(info.value)


def test_keys_come_from_the_environment_variable(redis_url, raw, prefix, tmp_path, monkeypatch):
    old, new = AesGcmSealer.generate_key(), AesGcmSealer.generate_key()
    monkeypatch.setenv("MCP_SYNC_OAUTH_KEYS", f"{new}, {old}")
    store = RedisStateStore(redis_url, prefix=prefix)
    store.save("https://a/mcp", {"tokens": {"accessToken": "env-token"}})
    stored = raw_state(raw, prefix)["https://a/mcp"]
    assert b"env-token" not in stored
    assert RedisStateStore(redis_url, prefix=prefix, sealer=AesGcmSealer([new])).load(
        "https://a/mcp"
    ) == {"tokens": {"accessToken": "env-token"}}
    files = FileStateStore(tmp_path / "oauth.json")
    files.save("https://a/mcp", {"tokens": {"accessToken": "env-token"}})
    assert "env-token" not in (tmp_path / "oauth.json").read_text()

    monkeypatch.setenv("MCP_SYNC_OAUTH_KEYS", "not-a-key")
    with pytest.raises(InvalidSealingKey) as info:
        RedisStateStore(redis_url, prefix=prefix)
    assert "$MCP_SYNC_OAUTH_KEYS[0]" in str(info.value) and "not-a-key" not in str(info.value)
    monkeypatch.delenv("MCP_SYNC_OAUTH_KEYS")
    with pytest.raises(SealedStateError) as sealed:  # sealed, and no key given: says how
        RedisStateStore(redis_url, prefix=prefix).load("https://a/mcp")
    assert "MCP_SYNC_OAUTH_KEYS" in str(sealed.value)
    assert sealed.value.key_id == AesGcmSealer([new]).key_ids[0]


def _flip(value: bytes, at: int) -> bytes:
    body = bytearray(base64.urlsafe_b64decode(value[len(b"mcp-sync-sealed:1:") :]))
    body[at] ^= 0x01
    return b"mcp-sync-sealed:1:" + base64.urlsafe_b64encode(bytes(body))


def test_a_tampered_moved_or_truncated_value_is_a_typed_error(redis_url, raw, prefix):
    sealer = AesGcmSealer([AesGcmSealer.generate_key()])
    store = RedisStateStore(redis_url, prefix=prefix, sealer=sealer)
    secret = "refresh-token-that-must-not-leak"
    store.save("https://a/mcp", {"tokens": {"accessToken": "at", "refreshToken": secret}})
    store.save("https://b/mcp", {"tokens": {"accessToken": "bt"}})
    good = raw_state(raw, prefix)["https://a/mcp"]
    name = f"{prefix}state:https://a/mcp"
    cases = {
        "a flipped ciphertext byte": _flip(good, 30),
        "a flipped nonce byte": _flip(good, 6),
        "truncated": good[:-12],
        "b's value under a's key": raw_state(raw, prefix)["https://b/mcp"],
    }
    for what, value in cases.items():
        raw.set(name, value)
        with pytest.raises(SealedStateError) as info:
            store.load("https://a/mcp")
        error = info.value
        assert isinstance(error, StateStoreError) and isinstance(error, OAuthError), what
        assert error.key == "https://a/mcp" and error.key_id == sealer.key_ids[0], what
        assert "does not authenticate" in str(error) and repr(store) in str(error), what
        assert secret not in str(error) and error.__cause__ is None, what
    raw.set(name, b"mcp-sync-sealed:1:" + base64.urlsafe_b64encode(b"\x01short"))  # no key id
    with pytest.raises(SealedStateError, match="not a value AesGcmSealer sealed"):
        store.load("https://a/mcp")
    raw.set(name, good)
    assert store.load("https://a/mcp")["tokens"]["refreshToken"] == secret


def test_unsealed_values_are_refused_by_a_sealing_store_unless_migrating(redis_url, raw, prefix):
    value = {"tokens": {"accessToken": "plain-at"}}
    RedisStateStore(redis_url, prefix=prefix).save("https://a/mcp", value)
    assert stored_key_id(raw_state(raw, prefix)["https://a/mcp"]) is None
    sealer = AesGcmSealer([AesGcmSealer.generate_key()])
    # (or anyone with write access to Redis could slip in metadata naming their own endpoints)
    with pytest.raises(SealedStateError, match="accept_plaintext=True") as info:
        RedisStateStore(redis_url, prefix=prefix, sealer=sealer).load("https://a/mcp")
    assert "plain-at" not in str(info.value)
    migrating = RedisStateStore(redis_url, prefix=prefix, sealer=sealer, accept_plaintext=True)
    assert migrating.load("https://a/mcp") == value
    migrating.save("https://a/mcp", value)
    assert b"plain-at" not in raw_state(raw, prefix)["https://a/mcp"]
    assert RedisStateStore(redis_url, prefix=prefix, sealer=sealer).load("https://a/mcp") == value


def test_a_dpop_key_is_not_put_into_redis_unencrypted(trust, redis_url, raw, prefix):  # noqa: F811
    with serve(trust=trust) as server:
        store = RedisStateStore(redis_url, prefix=prefix)
        provider = OAuthProvider(
            server.url, REDIRECT, on_redirect=Redirects(), store=store, dpop=True
        )
        for _attempt in range(2):  # and still refused the second time
            with pytest.raises(PlaintextDPoPKeyRefused) as info:
                mcp_sync.connect(server.url, auth=provider)
            assert "allow_plaintext_dpop_key=True" in str(info.value)
            assert info.value.option == "allow_plaintext_dpop_key"
            assert repr(store) in str(info.value) and info.value.key == server.url
            assert all(b"PRIVATE KEY" not in value for value in raw_state(raw, prefix).values())
        assert provider.tokens is None  # no token bound to a key the fleet never saw

        # told to: stored, in plain text, as documented
        allowed = RedisStateStore(redis_url, prefix=prefix, allow_plaintext_dpop_key=True)
        sign_in(server, allowed, dpop=True)
        assert b"PRIVATE KEY" in raw_state(raw, prefix)[server.url]


class EnvelopeSealer:
    """A user's KMS sealer: a fresh data key per value, wrapped by a master key that never
    leaves the "KMS" (here a dict in this process, standing in for a KMS client)."""

    def __init__(self) -> None:
        self.kms = {"master-1": AESGCM.generate_key(bit_length=256)}
        self.contexts: list[bytes] = []

    def _kms(self, key_id: str) -> AESGCM:
        if key_id not in self.kms:
            raise LookupError(f"KMS: no such key {key_id}")
        return AESGCM(self.kms[key_id])

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        self.contexts.append(context)
        data_key = AESGCM.generate_key(bit_length=256)
        wrapped = self._kms("master-1").encrypt(b"\0" * 12, data_key, context)
        body = AESGCM(data_key).encrypt(b"\0" * 12, plaintext, context)
        return json.dumps(
            {
                "kid": "master-1",
                "key": base64.b64encode(wrapped).decode(),
                "body": base64.b64encode(body).decode(),
            }
        ).encode()

    def open(self, sealed: bytes, context: bytes) -> bytes:
        envelope = json.loads(sealed)
        data_key = self._kms(envelope["kid"]).decrypt(
            b"\0" * 12, base64.b64decode(envelope["key"]), context
        )
        return AESGCM(data_key).decrypt(b"\0" * 12, base64.b64decode(envelope["body"]), context)


def test_a_kms_sealer_the_user_wrote(redis_url, raw, prefix):
    kms = EnvelopeSealer()
    with serve() as server:
        provider = sign_in(server, RedisStateStore(redis_url, prefix=prefix, sealer=kms))
        stored = raw_state(raw, prefix)[server.url]
        state = RedisStateStore(redis_url, prefix=prefix, sealer=kms).load(server.url)
        for secret in secrets_in(state):
            assert secret.encode() not in stored
        assert state["tokens"]["accessToken"] == provider.tokens.access_token
        assert set(kms.contexts) == {server.url.encode()}

        del kms.kms["master-1"]  # the KMS lost (or refuses) the key
        with pytest.raises(SealedStateError) as info:
            RedisStateStore(redis_url, prefix=prefix, sealer=kms).load(server.url)
        assert isinstance(info.value.__cause__, LookupError)
        assert "LookupError: KMS: no such key master-1" in str(info.value)
        assert info.value.key == server.url


def test_the_file_store_seals_each_servers_entry(tmp_path):
    path = tmp_path / "oauth.json"
    sealer = AesGcmSealer([AesGcmSealer.generate_key()])
    store = FileStateStore(path, sealer=sealer)
    store.save("https://a/mcp", {"tokens": {"accessToken": "file-at-a"}})
    store.save("https://b/mcp", {"tokens": {"accessToken": "file-at-b"}})
    text = path.read_text()
    assert "file-at-a" not in text and "file-at-b" not in text
    assert sorted(json.loads(text)["servers"]) == ["https://a/mcp", "https://b/mcp"]
    again = FileStateStore(path, sealer=sealer)
    assert again.load("https://a/mcp") == {"tokens": {"accessToken": "file-at-a"}}
    assert again.load("https://b/mcp") == {"tokens": {"accessToken": "file-at-b"}}

    document = json.loads(text)
    document["servers"]["https://a/mcp"] = document["servers"]["https://b/mcp"]  # moved
    path.write_text(json.dumps(document))
    with pytest.raises(SealedStateError, match="does not authenticate") as info:
        again.load("https://a/mcp")
    assert "FileStateStore" in str(info.value) and info.value.key_id == sealer.key_ids[0]
    with pytest.raises(SealedStateError, match="no sealer"):
        FileStateStore(path).load("https://b/mcp")
    # a local file is not shared: a DPoP key may go there unsealed (mode 0600)
    FileStateStore(tmp_path / "plain.json").save("k", {"dpopKey": "-----BEGIN PRIVATE KEY-----"})


@pytest.mark.parametrize(
    ("keys", "says"),
    [
        ([], "non-empty list"),
        ("c2VjcmV0", "non-empty list"),  # one string, not a list of keys
        (["c2hvcnQtc2VjcmV0"], "keys[0] is not a sealing key"),
        ([AesGcmSealer.generate_key(), b"\xff" * 7], "keys[1] is not a sealing key"),
    ],
)
def test_a_bad_sealing_key_is_a_typed_error_that_does_not_show_it(keys, says):
    with pytest.raises(InvalidSealingKey, match=re.escape(says)) as info:
        AesGcmSealer(keys)
    assert isinstance(info.value, ValueError) and isinstance(info.value, OAuthError)
    assert "c2hvcnQtc2VjcmV0" not in str(info.value)


def test_a_sealer_without_seal_and_open_is_refused_when_the_store_is_made(redis_url, tmp_path):
    with pytest.raises(TypeError, match="seal\\(\\) and open\\(\\)"):
        RedisStateStore(redis_url, sealer=AesGcmSealer.generate_key())  # a key, not a sealer
    with pytest.raises(TypeError, match="seal\\(\\) and open\\(\\)"):
        FileStateStore(tmp_path / "oauth.json", sealer=object())


def test_the_sealing_keys_never_show_in_an_error_message():
    key = AesGcmSealer.generate_key()
    standard = base64.b64encode(base64.urlsafe_b64decode(key)).decode()
    sealer = AesGcmSealer([standard])  # given in standard base64
    for form in (key, standard):
        assert form not in str(OAuthError(f"a message that quotes {form} by mistake"))
    assert key not in repr(sealer) and sealer.key_ids[0] in repr(sealer)
