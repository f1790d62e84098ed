"""TLS and mutual TLS, with certificates made here: the client verifies the server, the server
verifies client certificates, a credential may be bound to a certificate subject, and the SDKs
connect with TLS and a token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.conftest import StartApp
from tests.security_env import CREDENTIALS, TOKENS, secured  # noqa: F401
from tests.support import Turn
from tests.support.certs import TestCA
from treadle.config.auth import token_sha256
from treadle_client import AgentClient, AttachError, TLSConfig, attach

Code = grpc.StatusCode


class Echo:
    id = "pii-guard"

    def process_input(self, args: Any) -> Any:
        return args.messages


@pytest.fixture
def ca(tmp_path: Path) -> TestCA:
    return TestCA(tmp_path)


async def test_tls_serves_verified_clients_and_refuses_plaintext(secured, ca: TestCA) -> None:
    server = ca.issue("localhost", server=True)
    running, model = await secured([Turn.say("over tls")],
                                   tls_cert=server.cert, tls_key=server.key)
    target = f"localhost:{running.port}"
    async with AgentClient(target, token=TOKENS["web-app"], tls=TLSConfig(ca=ca.cert)) as client:
        assert (await client.generate("echo", "hi")).text == "over tls"
    async with AgentClient(target, token=TOKENS["web-app"]) as plain:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await plain.generate("echo", "hi", timeout=5)
    assert info.value.code() == Code.UNAVAILABLE
    other = TestCA(ca.dir, "Another CA")  # a server certificate from a CA the client does not trust
    async with AgentClient(target, token=TOKENS["web-app"], tls=TLSConfig(ca=other.cert)) as wrong:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await wrong.generate("echo", "hi", timeout=5)
    assert info.value.code() == Code.UNAVAILABLE
    assert len(model.requests) == 1  # the refused connections sent nothing


async def test_mtls_refuses_a_client_without_a_certificate(secured, ca: TestCA) -> None:
    server, client_pair = ca.issue("localhost", server=True), ca.issue("web-app")
    running, _ = await secured([Turn.say("mutual")], tls_cert=server.cert, tls_key=server.key,
                               tls_client_ca=ca.cert)
    target = f"localhost:{running.port}"
    async with AgentClient(target, token=TOKENS["web-app"], tls=TLSConfig(ca=ca.cert)) as anonymous:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await anonymous.generate("echo", "hi", timeout=5)
    assert info.value.code() == Code.UNAVAILABLE
    stranger_ca = TestCA(ca.dir, "Stranger CA")
    stranger = stranger_ca.issue("stranger")
    tls = TLSConfig(ca=ca.cert, cert=stranger.cert, key=stranger.key)
    async with AgentClient(target, token=TOKENS["web-app"], tls=tls) as client:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.generate("echo", "hi", timeout=5)
    assert info.value.code() == Code.UNAVAILABLE
    tls = TLSConfig(ca=ca.cert, cert=client_pair.cert, key=client_pair.key)
    async with AgentClient(target, token=TOKENS["web-app"], tls=tls) as client:
        assert (await client.generate("echo", "hi")).text == "mutual"


async def test_a_credential_bound_to_a_certificate_subject(secured, ca: TestCA) -> None:
    server, web, ops = ca.issue("localhost", server=True), ca.issue("web-app"), ca.issue("ops-laptop")
    creds = [dict(c, clientCertSubject="CN=ops-laptop") if c["id"] == "ops" else c for c in CREDENTIALS]
    creds.append({"id": "cert-only", "clientCertSubject": "CN=web-app", "agents": ["echo"]})
    running, model = await secured([Turn.say("cert only")], auth={"credentials": creds},
                                   tls_cert=server.cert, tls_key=server.key, tls_client_ca=ca.cert)
    target = f"localhost:{running.port}"
    # The ops token from the web-app machine's certificate is not enough.
    tls_web = TLSConfig(ca=ca.cert, cert=web.cert, key=web.key)
    async with AgentClient(target, token=TOKENS["ops"], tls=tls_web) as client:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.list_agents()
    assert info.value.code() == Code.UNAUTHENTICATED
    tls_ops = TLSConfig(ca=ca.cert, cert=ops.cert, key=ops.key)
    async with AgentClient(target, token=TOKENS["ops"], tls=tls_ops) as client:
        assert "secret" in [a.id for a in await client.list_agents()]
    # No token at all: the certificate alone names the cert-only credential.
    async with AgentClient(target, token="", tls=tls_web) as client:
        assert (await client.generate("echo", "hi")).text == "cert only"
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.generate("secret", "hi")
    assert info.value.code() == Code.PERMISSION_DENIED


async def test_the_processor_sdk_attaches_over_mtls_with_a_token(secured, ca: TestCA) -> None:
    server, guard = ca.issue("localhost", server=True), ca.issue("guard-host")
    running, model = await secured([Turn.say("guarded")], tls_cert=server.cert, tls_key=server.key,
                                   tls_client_ca=ca.cert)
    target = f"localhost:{running.port}"
    tls = TLSConfig(ca=ca.cert, cert=guard.cert, key=guard.key)
    async with await attach([Echo()], target, token=TOKENS["guard-team"], tls=tls) as attachment:
        await attachment.ready(timeout=10)
        async with AgentClient(target, token=TOKENS["web-app"], tls=tls) as client:
            assert (await client.generate("guarded", "hi")).text == "guarded"
    async with await attach([Echo()], target, token=TOKENS["web-app"], tls=tls) as refused:
        with pytest.raises(AttachError) as info:
            await refused.ready(timeout=10)
    assert info.value.code == Code.PERMISSION_DENIED


async def test_tls_settings_need_both_halves(start_app: StartApp, ca: TestCA) -> None:
    pair = ca.issue("localhost", server=True)
    with pytest.raises(ValueError, match="both a certificate and a key"):
        await start_app(tls_cert=pair.cert)
    with pytest.raises(ValueError, match="needs --tls-cert"):
        await start_app(tls_client_ca=ca.cert)
    assert token_sha256("x") != token_sha256("y")


async def test_a_common_name_that_reads_like_a_subject_is_not_that_subject(secured, ca: TestCA) -> None:
    server, forged, real = ca.issue("localhost", server=True), ca.issue("CN=ops-laptop"), ca.issue("ops-laptop")
    creds = [dict(c, clientCertSubject="CN=ops-laptop") if c["id"] == "ops" else c for c in CREDENTIALS]
    running, _ = await secured(auth={"credentials": creds},
                               tls_cert=server.cert, tls_key=server.key, tls_client_ca=ca.cert)
    target = f"localhost:{running.port}"
    tls_forged = TLSConfig(ca=ca.cert, cert=forged.cert, key=forged.key)
    async with AgentClient(target, token=TOKENS["ops"], tls=tls_forged) as client:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.list_agents()
    assert info.value.code() == Code.UNAUTHENTICATED
    async with AgentClient(target, token=TOKENS["ops"], tls=TLSConfig(ca=ca.cert, cert=real.cert, key=real.key)) as client:
        assert "secret" in [a.id for a in await client.list_agents()]


def test_subjects_are_parsed_distinguished_names() -> None:
    from treadle.config.auth import AuthConfigError, parse_auth, parse_dn

    assert parse_dn("CN=ops, O=Example") == parse_dn("o=Example,commonName=ops") == (("CN", "ops"), ("O", "Example"))
    assert parse_dn(r"CN=CN\=ops-laptop") == (("CN", "CN=ops-laptop"),) != parse_dn("CN=ops-laptop")
    assert parse_dn(r"CN=a\2Cb") == parse_dn(r"CN=a\,b") == (("CN", "a,b"),)
    for bad in ("", "ops", "CN=ops,", "C N=x", "CN=x\\"):
        with pytest.raises(ValueError):
            parse_dn(bad)
    with pytest.raises(AuthConfigError, match="clientCertSubject 'ops' is not a distinguished name"):
        parse_auth({"credentials": [{"id": "x", "clientCertSubject": "ops"}]})
