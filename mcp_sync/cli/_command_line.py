"""The command line of ``mcp-sync``: the parser, and the reordering that lets options and
the target URL stand anywhere (``mcp-sync --json URL tools``, ``call NAME --arguments '{}' k=v``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

__all__ = ["EPILOG", "UsageError", "build_parser", "parse_command_line"]

EPILOG = """\
targets (one of):
  -- COMMAND [ARGS...]     run a stdio server (the rest of the line is its command)
  URL, --url URL           a remote server (Streamable HTTP, falling back to HTTP+SSE)
  --config FILE [--server NAME]
                           a server from an mcpServers JSON file (Claude Desktop, Cursor,
                           VS Code); --server may be left out if the file has one server;
                           --input ID=VALUE gives a VS Code ${input:ID}
  options may stand before or after the URL and the verb; the URL may end the line

arguments of call and prompt:
  key=value                converted to the type the tool's input schema gives key
                           (numbers, booleans, JSON objects and arrays)
  key:=JSON                a raw JSON value
  --arguments JSON         a JSON object ('-' reads it from stdin); key=value words
                           override its keys. `--json '{...}'` is accepted too

exit codes:
  0    success (also when the reader of the output stopped reading: `| head`)
  1    the tool reported an error (isError)
  2    usage: bad command line, config or arguments; unknown tool or prompt
  3    the server reported an error, or broke the protocol
  4    connection: the server could not be started or reached, or it went away
  5    timeout
  6    authorization needed or refused (HTTP 401/403, OAuth): `mcp-sync login URL`
       where the server offers OAuth, else -H 'Authorization: ...'
  130  interrupted (Ctrl-C): the request was cancelled on the wire

examples:
  mcp-sync tools -- mcp-server-time
  mcp-sync call get_current_time timezone=Europe/Paris -- mcp-server-time
  mcp-sync --config ~/.cursor/mcp.json --server time tools
  mcp-sync login https://example.com/mcp       (then any command against that URL)
"""

TARGETS = """\
TARGET (one of):
  -- COMMAND [ARGS...]     run a stdio server (the rest of the line is its command)
  URL, --url URL           a remote server: http://... or https://...
  --config FILE [--server NAME]
                           a server from an mcpServers config file
  options may stand before or after the URL and the verb; see mcp-sync --help
"""

SIGN_IN_TARGETS = """\
the server (one of):
  URL, --url URL           the remote server's URL: http://... or https://...
  --config FILE [--server NAME]
                           a remote server (an entry with "url") from a config file
"""

#: Verbs that take no words of their own: a URL after them is the target.
NO_POSITIONALS = (
    "tools",
    "resources",
    "templates",
    "prompts",
    "ping",
    "stubs",
    "info",
    "login",
    "logout",
)


ALL_VERBS = (*NO_POSITIONALS, "call", "read", "prompt", "complete", "pin")


class UsageError(Exception):
    """A problem with what the user typed: exit 2 with the message."""


# -- command line ---------------------------------------------------------------------------


#: The options that mean something to ``login`` and ``logout`` (no request is sent).
SIGN_IN_OPTIONS = frozenset({"--url", "--config", "--server", "--input", "--timeout", "--verbose"})


def _common(
    parser: argparse.ArgumentParser, *, top: bool, only: frozenset[str] | None = None
) -> None:
    """Options accepted before and after the verb (after: defaults suppressed); ``only``
    keeps those its verb uses."""

    def default(value: Any) -> Any:
        return value if top else argparse.SUPPRESS

    class Group:
        def __init__(self, group: Any) -> None:
            self.group = group

        def add_argument(self, *names: str, **kwargs: Any) -> None:
            if only is not None and "--timeout" in names:
                kwargs["help"] = "how long to wait for the sign-in (default: 300)"
            if only is None or any(name in only for name in names):
                self.group.add_argument(*names, **kwargs)

    group = Group(parser.add_argument_group("connection and output"))
    group.add_argument("--url", default=default(None), help="a remote server's URL")
    group.add_argument(
        "--config", default=default(None), metavar="FILE", help="an mcpServers JSON config file"
    )
    group.add_argument(
        "--server", default=default(None), metavar="NAME", help="the server to use from --config"
    )
    group.add_argument(
        "--input",
        action="append",
        default=default([]),
        metavar="ID=VALUE",
        help="the value of ${input:ID} in a VS Code config (repeatable)",
    )
    group.add_argument(
        "-H",
        "--header",
        action="append",
        default=default([]),
        metavar="'NAME: VALUE'",
        help="an HTTP header (repeatable)",
    )
    group.add_argument(
        "--verify",
        default=default(None),
        metavar="system|CA_FILE|no",
        help="HTTPS trust: the OS store (needs the truststore extra), a CA bundle, or no check",
    )
    group.add_argument(
        "--cert", default=default(None), metavar="FILE", help="a client certificate (mTLS), PEM"
    )
    group.add_argument(
        "--key", default=default(None), metavar="FILE", help="the client certificate's key, PEM"
    )
    group.add_argument(
        "--proxy",
        default=default(None),
        metavar="URL",
        help="an HTTP proxy (http://user:password@host:port), instead of HTTPS_PROXY",
    )
    group.add_argument(
        "--protocol",
        default=default(None),
        metavar="auto|handshake|VERSION",
        help="protocol era or version to use (default: auto)",
    )
    group.add_argument(
        "--timeout",
        type=float,
        default=default(None),
        metavar="SECONDS",
        help="per-request timeout, renewed by progress (default: 30)",
    )
    group.add_argument(
        "--pin", default=default(None), metavar="FILE", help="stop a tool that differs from FILE"
    )
    group.add_argument(
        "--record",
        default=default(None),
        metavar="FILE",
        help="record the session to FILE, a cassette (JSONL; see docs/testing.md)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print JSON for machines instead of tables",
    )
    group.add_argument(
        "--ignore-capabilities",
        action="store_true",
        default=default(False),
        help="send a request even if the server does not advertise the capability it needs",
    )
    group.add_argument(
        "--sandbox",
        action="store_true",
        default=default(False),
        help="run a command's server in the bubblewrap sandbox (Linux; see docs/sandbox.md)",
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default(0),
        help="show server log messages, stderr and progress (-vv: debug)",
    )


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="mcp-sync",
        description="Talk to an MCP server: list and call its tools, resources and prompts.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mcp-sync {__version__}")
    parser.error = _fail  # type: ignore[method-assign]
    _common(parser, top=True)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    def verb(
        name: str,
        help: str,
        words: str = "",
        *,
        only: frozenset[str] | None = None,
        targets: str = TARGETS,
    ) -> argparse.ArgumentParser:
        words = f" {words}" if words else ""
        sub = verbs.add_parser(
            name,
            help=f"{help}: {name}{words}" if words else help,
            description=help,
            usage=f"mcp-sync {name}{words} [options] TARGET",
            epilog=targets,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.error = _fail  # type: ignore[method-assign]
        _common(sub, top=False, only=only)
        return sub

    def arguments_of(sub: argparse.ArgumentParser, what: str) -> None:
        sub.add_argument(
            "words",
            nargs="*",
            metavar="key=value",
            help=f"the {what}'s arguments, each converted to the type its schema gives it "
            "(key:=JSON for a raw JSON value)",
        )
        sub.add_argument(
            "--arguments",
            metavar="JSON",
            help="the arguments as a JSON object ('-' reads stdin); key=value words override it",
        )

    verb("tools", "list the server's tools and their parameters")
    call = verb("call", "call a tool", "NAME [key=value ...]")
    call.add_argument("name", metavar="NAME", help="the tool's name (see the tools verb)")
    arguments_of(call, "tool")
    verb("resources", "list the server's resources")
    verb("templates", "list the server's resource templates")
    read = verb("read", "read a resource", "URI")
    read.add_argument("uri", metavar="URI", help="the resource's URI (see resources, templates)")
    verb("prompts", "list the server's prompts")
    prompt = verb("prompt", "get a prompt", "NAME [key=value ...]")
    prompt.add_argument("name", metavar="NAME", help="the prompt's name (see the prompts verb)")
    arguments_of(prompt, "prompt")
    complete = verb(
        "complete",
        "complete an argument of a prompt or a resource template",
        "prompt:NAME|resource:URI ARGUMENT [VALUE] [key=value ...]",
    )
    complete.add_argument(
        "ref",
        metavar="prompt:NAME|resource:URI",
        help="what the argument belongs to: a prompt, or a resource template's URI template",
    )
    complete.add_argument("argument", metavar="ARGUMENT", help="the argument to complete")
    complete.add_argument(
        "value", nargs="?", default="", metavar="VALUE", help="what is typed so far"
    )
    complete.add_argument(
        "words", nargs="*", metavar="key=value", help="arguments already filled in (context)"
    )
    verb("ping", "check that the server answers")
    verb("stubs", "print a typed Python module of the server's tools (client.functions)")
    login = verb(
        "login",
        "sign in to a remote server with OAuth (opens the browser)",
        "URL",
        only=SIGN_IN_OPTIONS,
        targets=SIGN_IN_TARGETS,
    )
    login.usage = (
        "mcp-sync login URL [options]\n       mcp-sync login --config FILE [--server NAME]"
    )
    login.add_argument(
        "--no-browser",
        action="store_true",
        help="print the sign-in URL instead of opening a browser",
    )
    login.add_argument(
        "--device",
        action="store_true",
        help="sign in on another device: print a code and a URL (RFC 8628; no browser here)",
    )
    login.add_argument("--scope", help="the scope to ask for (default: what the server says)")
    login.add_argument("--client-id", help="a pre-registered OAuth client id")
    login.add_argument("--client-secret", help="its secret, for a confidential client")
    login.add_argument(
        "--port",
        type=int,
        default=0,
        help="the loopback port for the redirect (default: any free port)",
    )
    logout = verb(
        "logout",
        "revoke and forget the OAuth tokens stored for a remote server",
        "URL",
        only=SIGN_IN_OPTIONS - {"--timeout"},
        targets=SIGN_IN_TARGETS,
    )
    logout.usage = (
        "mcp-sync logout URL [options]\n       mcp-sync logout --config FILE [--server NAME]"
    )
    verb("info", "server name, version, protocol, capabilities and instructions")
    verb("record", "record a look at the server (its lists) to FILE", "-o FILE").add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the cassette to write"
    )
    verb("pin", "record or refresh FILE, the pins of the server's tools").add_argument("file")
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(options and verb words, server command after ``--``)."""
    argv = list(argv)
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1 :]
    return argv, []


def _rewrite_json_arguments(words: list[str]) -> list[str]:
    """``--json '{...}'`` (or ``--json -``) after call/prompt means ``--arguments``."""
    out: list[str] = []
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if word == "--json" and (following.lstrip().startswith("{") or following == "-"):
            out.append("--arguments")
        else:
            out.append(word)
    return out


#: Options that take the next word as their value (unless written ``--option=value``).
VALUE_OPTIONS = frozenset(
    {
        "--url",
        "--config",
        "--server",
        "--input",
        "-H",
        "--header",
        "--protocol",
        "--timeout",
        "--arguments",
        "--scope",
        "--client-id",
        "--client-secret",
        "--port",
        "--pin",
        "--verify",
        "--cert",
        "--key",
        "--proxy",
    }
)


def _is_url(word: str) -> bool:
    return word.startswith(("http://", "https://"))


def _is_option(word: str) -> bool:
    return word.startswith("-") and len(word) > 1 and not word[1:2].isdigit()


def _positionals(words: Sequence[str]) -> Iterator[tuple[int, str]]:
    """The words that are neither an option nor an option's value, with their index."""
    i = 0
    while i < len(words):
        word = words[i]
        if _is_option(word):
            i += 2 if word in VALUE_OPTIONS else 1
            continue
        yield i, word
        i += 1


def _verb_at(words: Sequence[str]) -> int | None:
    """The index of the verb: the first word that is neither an option nor its value."""
    return next((i for i, word in _positionals(words) if word in ALL_VERBS), None)


#: The words of their own that a verb needs before a URL may end the line as its target.
WORDS_NEEDED = {"call": 1, "read": 1, "prompt": 1, "complete": 2, "pin": 1}


def _take_url(words: list[str], *, other_target: bool) -> str | None:
    """Remove and return the target URL written as a bare word: anywhere before the verb,
    after a verb that takes no words of its own, or, where the usage line puts TARGET, at the
    end (``call NAME k=v URL``, ``read URI URL``) when no other target is given and the
    verb's own words come before it (``read https://...`` alone reads that URI)."""
    verb = _verb_at(words)
    positionals = list(_positionals(words))
    for i, word in positionals:
        if _is_url(word) and (verb is None or i < verb or words[verb] in NO_POSITIONALS):
            del words[i]
            return word
    own = [(i, word) for i, word in positionals if verb is not None and i > verb]
    if other_target or verb is None or len(own) <= WORDS_NEEDED.get(words[verb], 0):
        return None
    i, word = own[-1]
    if not _is_url(word):
        return None
    del words[i]
    return word


def _positionals_first(words: list[str]) -> list[str]:
    """Move the options after the verb behind its positional words.

    argparse ends a ``nargs="*"`` positional at the first option, so
    ``call NAME --arguments '{...}' key=value`` would leave ``key=value`` unrecognized.
    """
    verb = _verb_at(words)
    if verb is None:
        return words
    positionals: list[str] = []
    options: list[str] = []
    i = verb + 1
    while i < len(words):
        word = words[i]
        if _is_option(word):
            width = 2 if word in VALUE_OPTIONS else 1
            options.extend(words[i : i + width])
            i += width
        else:
            positionals.append(word)
            i += 1
    return [*words[: verb + 1], *positionals, *options]


#: ``127.0.0.1:8000/mcp``, ``localhost:3000``, ``example.com:443/mcp``: a URL without its scheme.
_HOST_PORT = re.compile(r"^(localhost|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}(/\S*)?$")


def _schemeless_url(words: Sequence[str]) -> str | None:
    """A word where the target URL stands that is a URL without ``http://``."""
    verb = _verb_at(words)
    for i, word in _positionals(words):
        if (verb is None or i < verb or words[verb] in NO_POSITIONALS) and _HOST_PORT.match(word):
            return word
    return None


def parse_command_line(argv: Sequence[str]) -> argparse.Namespace:
    words, command = _split(argv)
    words = _rewrite_json_arguments(words)
    named = any(word.split("=")[0] in ("--url", "--config") for word in words)
    url = _take_url(words, other_target=bool(command) or named)
    bare = _schemeless_url(words) if url is None else None
    if bare is not None:
        raise UsageError(f"{bare!r} is not a URL: write http://{bare} (or https://{bare})")
    words = _positionals_first(words)
    args = build_parser().parse_args(words)
    args.command = command
    if url is not None:
        if args.url:
            raise UsageError("two URLs given")
        args.url = url
    if len(command) == 1 and command[0].startswith(("http://", "https://")):
        args.url, args.command = command[0], []
    targets = sum(bool(t) for t in (args.command, args.url, args.config))
    if targets == 0:
        raise UsageError(
            "no server given: add `-- COMMAND ARGS...`, a URL, or --config FILE --server NAME"
        )
    if targets > 1:
        raise UsageError("give one server: `-- COMMAND`, a URL, or --config")
    if args.server and not args.config:
        raise UsageError("--server needs --config FILE")
    return args


def _fail(message: str) -> NoReturn:
    raise UsageError(f"{message} (see mcp-sync --help)")
