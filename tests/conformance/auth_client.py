"""The conformance-suite client for the auth scenarios: mcp_sync's public API only.

`conformance client --command "python tests/conformance/auth_client.py" --scenario auth/...`
runs this with the test server's URL as the last argument. MCP_CONFORMANCE_CONTEXT carries
credentials for the pre-registration and client-credentials scenarios. The authorization
server approves without a user, so the redirect is read headlessly.
"""

from __future__ import annotations

import json
import logging
import os
import sys

import mcp_sync
from mcp_sync.oauth import (
    ClientCredentialsProvider,
    ClientMetadata,
    IdJagExchange,
    JwtBearerProvider,
    OAuthProvider,
    headless_redirect,
)

#: The client id metadata document URL the basic-cimd scenario expects.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
#: Never listened on: headless_redirect reads the code from the redirect's Location.
REDIRECT_URL = "http://localhost:3000/callback"


def provider_for(url: str, scenario: str, context: dict[str, str]) -> object:
    if scenario in ("auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow"):
        # the user's ID token from the enterprise IdP is traded there for an ID-JAG
        id_jag = IdJagExchange(
            context["idp_token_endpoint"],
            context["idp_id_token"],
            client_id=context["idp_client_id"],
        )
        return JwtBearerProvider(
            url, id_jag, client_id=context["client_id"], client_secret=context["client_secret"]
        )
    if scenario == "auth/wif-jwt-bearer":
        return JwtBearerProvider(url, context["valid_jwt"], client_id=context["client_id"])
    if scenario.startswith("auth/client-credentials-"):
        return ClientCredentialsProvider(
            url,
            context["client_id"],
            client_secret=context.get("client_secret"),
            private_key=context.get("private_key_pem"),
            signing_algorithm=context.get("signing_algorithm", "ES256"),
        )
    return OAuthProvider(
        url,
        REDIRECT_URL,
        client_metadata=ClientMetadata(client_name="mcp-sync-conformance"),
        client_metadata_url=CIMD_URL,
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_issuer=context.get("issuer"),
        on_redirect=headless_redirect(),
    )


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    provider = provider_for(url, scenario, context)
    client = mcp_sync.Client("mcp-sync-conformance", "0.1.0", request_timeout=20)
    with client.connect(mcp_sync.StreamableHttpTransport(url, auth=provider)):
        tools = client.list_tools()
        print(f"{scenario}: listed {len(tools)} tools")
        if tools:
            print(client.call_tool(tools[0].name, {}).text)
        if scenario == "auth/authorization-server-migration" and tools:
            print(client.call_tool(tools[0].name, {}).text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
