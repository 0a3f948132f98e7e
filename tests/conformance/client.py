"""The conformance-suite client: a user of mcp_sync's public API, nothing else.

`npx conformance client --command "python tests/conformance/client.py" --scenario NAME` starts
a test server for the scenario, sets MCP_CONFORMANCE_SCENARIO (and, for some scenarios,
MCP_CONFORMANCE_CONTEXT) and runs this program with the server's URL as its last argument.
Exit status 0 means the client did what the scenario asks.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import mcp_sync
from mcp_sync.types import ElicitRequestFormParams, ElicitResult


def accept_with_defaults(params: ElicitRequestFormParams) -> ElicitResult:
    # Accept without values: the client fills the schema's defaults in (SEP-1034).
    return ElicitResult(action="accept", content={})


def sample(params: mcp_sync.types.CreateMessageRequestParams) -> mcp_sync.types.CreateMessageResult:
    return mcp_sync.types.CreateMessageResult(
        role="assistant", content=mcp_sync.types.TextContent(text="conformance"), model="none"
    )


def arguments_for(tool: mcp_sync.types.Tool, tools: list[mcp_sync.types.Tool]) -> dict[str, Any]:
    """Plausible arguments for a tool the scenario did not give any for."""
    if tool.name == "json_schema_echo":  # asks for the other tool's input schema, verbatim
        focal = next((t for t in tools if t.name != tool.name), tool)
        return {"schema": focal.input_schema}
    samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "object": {}}
    properties = tool.input_schema.get("properties") or {}
    return {
        name: samples.get(str(properties.get(name, {}).get("type")), "x")
        for name in tool.input_schema.get("required") or []
    }


def exercise(client: mcp_sync.Client, context: dict[str, Any]) -> None:
    """List and use what the server offers: tools (the context's calls), resources, prompts."""
    caps = client.server_capabilities
    tools = client.list_tools() if caps.tools is not None else []
    print(f"listed {len(tools)} tools")
    calls = context.get("toolCalls") or [
        {"name": tool.name, "arguments": arguments_for(tool, tools)} for tool in tools
    ]
    # Concurrently, as an agent would: each call's input rounds must stay its own.
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [
            pool.submit(client.call_tool, call["name"], call.get("arguments") or {})
            for call in calls
        ]
        for call, future in zip(calls, futures, strict=True):
            try:
                print(f"{call['name']} -> {future.result().text[:200]!r}")
            except mcp_sync.RpcError as exc:
                if context.get("toolCalls"):
                    raise  # the scenario asked for this call: it must work
                print(f"{call['name']} -> {exc}")  # a guessed call the server may refuse
    if caps.resources is not None:
        resources = client.list_resources()
        if resources:
            client.read_resource(resources[0].uri)
    if caps.prompts is not None:
        prompts = client.list_prompts()
        if prompts:
            required = {a.name: "x" for a in prompts[0].arguments or [] if a.required}
            client.get_prompt(prompts[0].name, required)


def use_skills(client: mcp_sync.Client, scenario: str) -> None:
    """As an agent host would: list the skills when connecting (reading no file); load one
    when the model asks for it, then read the files its instructions point to."""
    skills = client.skills.list()
    print(f"listed {len(skills)} skills: {[s.name for s in skills]}")
    if scenario == "sep-2640-client-no-prefetch" or not skills:
        return  # nothing asked for a skill: nothing is read
    try:
        loaded = client.skills.load(skills[0])
    except mcp_sync.SkillVerificationError as exc:
        print(f"refused {skills[0].uri}: {exc.reason}")
        return
    for path in loaded.files:
        print(f"{path}: {len(loaded.read(path))} bytes")


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    if scenario.startswith("auth/"):  # a whole-suite run sends every scenario here
        import auth_client

        return auth_client.main()
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    client = mcp_sync.Client("mcp-sync-conformance", "0.1.0", request_timeout=20, roots=["/"])
    client.on_elicitation(accept_with_defaults)
    client.on_sampling(sample)
    with client.connect(mcp_sync.StreamableHttpTransport(url)):
        if scenario == "tools_call" and not context.get("toolCalls"):
            client.list_tools()
            print(client.call_tool("add_numbers", {"a": 5, "b": 3}).text)
        elif scenario == "elicitation-sep1034-client-defaults":
            client.list_tools()
            print(client.call_tool("test_client_elicitation_defaults", {}).text)
        elif scenario.startswith("sep-2640-client-"):
            use_skills(client, scenario)
        elif scenario == "sse-retry":
            client.list_tools()
            print(client.call_tool("test_reconnection", {}).text)
        else:
            exercise(client, context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
