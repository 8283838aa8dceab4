"""What each harness's tools do: one table of tool names, their role and where their arguments are.

Harnesses name the same few actions differently: claude-code calls `Bash`,
`Read`, `Edit`, `MultiEdit` and `Write`; Codex `shell`/`exec_command` and
`apply_patch`; OpenHands `execute_bash` and `str_replace_editor`; gemini-cli
`run_shell_command`, `read_file`, `replace` and `write_file`; terminus-2
`bash_command` with keystrokes; Inspect AI `bash`, `python` and
`text_editor`. `TOOLS` maps every name we know to a `Tool`: its role (run
a shell command, read a file, write one, replace text in one, apply a
patch, ...) and the argument names that hold the command, path, old and
new text, content or patch. `tool_use` reads one call through the table
and returns what the analysis needs, whatever the harness; names not in
the table are matched case-insensitively, then by their arguments (a
`command` is a shell command), as before.

Some harnesses put commands in the message text instead of tool calls:
mini-swe-agent's text mode (one fenced ```bash block per turn) and
terminus-2 with `raw_content` (its JSON or XML reply, `commands` holding
keystrokes). `message_commands` reads those.

Pure: no Django, no database. Inspect AI log import uses the same table.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Roles.
SHELL = "shell"  # runs a shell command (or keystrokes typed into a terminal)
PYTHON = "python"  # runs Python code
EDITOR = "editor"  # one tool, several actions chosen by an argument (view, create, str_replace, insert)
READ = "read"  # shows a file
SEARCH = "search"  # lists or searches files (grep, glob, ls)
WRITE = "write"  # writes a whole file
REPLACE = "replace"  # replaces text in a file
MULTI_REPLACE = "multi_replace"  # several replacements in one file (claude-code MultiEdit)
INSERT = "insert"  # inserts text after a line
PATCH = "patch"  # applies a patch (unified diff or Codex's *** Begin Patch)
SUBMIT = "submit"  # ends the task
WAIT = "wait"  # reads a background job's new output, or waits
OTHER = "other"  # plans, notes, subagents, web: none of the above

ROLES = (SHELL, PYTHON, EDITOR, READ, SEARCH, WRITE, REPLACE, MULTI_REPLACE, INSERT, PATCH, SUBMIT, WAIT, OTHER)

# Argument names, most specific first, shared by most entries.
COMMAND = ("command", "cmd", "keystrokes", "script", "input")
PATH = ("file_path", "path", "absolute_path", "filename", "file", "notebook_path", "target_file")
OLD = ("old_string", "old_str", "old_text", "search")
NEW = ("new_string", "new_str", "new_text", "replace", "replacement")
CONTENT = ("content", "file_text", "contents", "text", "new_source")
PATCH_TEXT = ("input", "patch", "diff", "content")
CODE = ("code", "source", "script")


@dataclass(frozen=True)
class Tool:
    """One tool's role and which arguments hold what (names tried in order)."""

    role: str
    harnesses: tuple[str, ...] = ()  # who emits it, for people reading the table
    command: tuple[str, ...] = COMMAND
    path: tuple[str, ...] = PATH
    old: tuple[str, ...] = OLD
    new: tuple[str, ...] = NEW
    content: tuple[str, ...] = CONTENT
    patch: tuple[str, ...] = PATCH_TEXT
    code: tuple[str, ...] = CODE
    action: tuple[str, ...] = ("command", "action", "operation")  # EDITOR: which action


def _tools(role: str, names: str, harnesses: str, **arguments) -> dict[str, Tool]:
    tool = Tool(role, tuple(harnesses.split()), **arguments)
    return {name: tool for name in names.split()}


TOOLS: dict[str, Tool] = {
    # Shell commands.
    **_tools(SHELL, "bash_command", "terminus-2", command=("keystrokes",)),
    **_tools(SHELL, "Bash", "claude-code", command=("command",)),
    **_tools(SHELL, "shell local_shell exec_command container.exec", "codex", command=("command", "cmd")),
    **_tools(SHELL, "execute_bash bash execute cmd run", "openhands mini-swe-agent swe-agent inspect-ai"),
    **_tools(SHELL, "run_shell_command", "gemini-cli qwen-code", command=("command",)),
    **_tools(SHELL, "execute_command run_command terminal shell_exec", "cline goose others"),
    **_tools(SHELL, "bash_session", "inspect-ai", command=("input", "command")),
    # Python code.
    **_tools(PYTHON, "python", "inspect-ai", code=("code",)),
    **_tools(PYTHON, "execute_ipython_cell ipython", "openhands", code=("code",)),
    # Multi-action editors (view / create / str_replace / insert / undo_edit).
    **_tools(EDITOR, "str_replace_editor", "openhands swe-agent"),
    **_tools(EDITOR, "text_editor", "inspect-ai"),
    **_tools(EDITOR, "str_replace_based_edit_tool", "anthropic text editor"),
    **_tools(EDITOR, "editor edit_file", "various"),
    # Reading and searching.
    **_tools(READ, "Read NotebookRead", "claude-code"),
    **_tools(READ, "read_file view read_many_files", "gemini-cli openhands others"),
    **_tools(SEARCH, "Grep Glob LS", "claude-code"),
    **_tools(SEARCH, "list_directory glob search_file_content grep find_files list_files", "gemini-cli others"),
    # Writing whole files.
    **_tools(WRITE, "Write", "claude-code", content=("content",)),
    **_tools(WRITE, "write_file create_file file_write write write_to_file", "gemini-cli others"),
    # Replacing text.
    **_tools(REPLACE, "Edit", "claude-code"),
    **_tools(REPLACE, "replace replace_in_file edit", "gemini-cli others"),
    **_tools(MULTI_REPLACE, "MultiEdit", "claude-code"),
    **_tools(INSERT, "insert", "various"),
    **_tools(WRITE, "NotebookEdit", "claude-code", content=("new_source",)),
    # Patches.
    **_tools(PATCH, "apply_patch patch", "codex others"),
    # Ending the task.
    **_tools(SUBMIT, "mark_task_complete", "terminus-2"),
    **_tools(SUBMIT, "finish", "openhands"),
    **_tools(SUBMIT, "submit task_complete submit_solution complete_task done attempt_completion", "inspect-ai others"),
    # Waiting on background work.
    **_tools(WAIT, "BashOutput", "claude-code"),
    **_tools(WAIT, "write_stdin", "codex", command=("chars",)),
    # The rest, named so that they are not guessed at from their arguments.
    **_tools(OTHER, "TodoWrite Task KillShell KillBash WebFetch WebSearch ExitPlanMode", "claude-code"),
    **_tools(OTHER, "update_plan view_image web_search_call spawn_agent", "codex"),
    **_tools(OTHER, "think browser web_read fetch", "openhands inspect-ai"),
    **_tools(OTHER, "save_memory google_web_search web_fetch", "gemini-cli"),
}
_BY_LOWER = {}
for _name, _tool in TOOLS.items():
    _BY_LOWER.setdefault(_name.lower(), _tool)


@dataclass(frozen=True)
class ToolUse:
    """One call read through the table: what it does and with what."""

    role: str
    command: str | None = None  # SHELL: the shell text; PYTHON: the code as a python heredoc
    action: str = ""  # EDITOR: view | create | str_replace | insert | undo_edit | ...
    path: str = ""
    old: str | None = None
    new: str | None = None
    content: str | None = None
    patch: str | None = None
    edits: tuple[tuple[str, str], ...] = ()  # MULTI_REPLACE: (old, new) pairs
    line: int | None = None  # INSERT
    whole_file: bool = True  # READ: no offset or line range, so its output is the whole file
    replace_all: bool = False  # REPLACE: every occurrence (claude-code's Edit with replace_all)
    keystrokes: bool = False  # SHELL: typed into a terminal (tmux), not run as one command


def lookup(name: str) -> Tool | None:
    """The table's entry for a tool name: exact, else case-insensitive."""
    return TOOLS.get(name) or _BY_LOWER.get(name.lower())


def use_of(call) -> ToolUse:
    """tool_use of a parsed call (reading.parsed.ParsedToolCall), worked out once and kept on it."""
    use = call.use
    if use is None:
        use = call.use = tool_use(call.function_name, call.arguments)
    return use


def tool_use(name: str, arguments: Any) -> ToolUse:
    """What a call of `name` with `arguments` does."""
    args = arguments if isinstance(arguments, dict) else {}
    tool = lookup(name)
    if tool is None:
        tool = _guess(name, args)
    role = tool.role
    if role == SHELL:
        return ToolUse(SHELL, command=_command(args, tool.command), keystrokes="keystrokes" in args)
    if role == PYTHON:
        code = _first_string(args, tool.code)
        return ToolUse(PYTHON, command=_python_heredoc(code) if code is not None else None)
    if role == WAIT:
        return ToolUse(WAIT)
    path = _first_string(args, tool.path) or ""
    if role == EDITOR:
        action = (_first_string(args, tool.action) or "").lower()
        return ToolUse(
            EDITOR, action=action, path=path, old=_first_string(args, tool.old), new=_first_string(args, tool.new),
            content=_first_string(args, tool.content), line=_int_argument(args.get("insert_line", args.get("line"))),
            whole_file=not args.get("view_range"),
        )
    if role == READ:
        ranged = any(args.get(key) not in (None, "", 0) for key in ("offset", "limit", "view_range", "start_line", "end_line"))
        return ToolUse(READ, path=path, whole_file=not ranged)
    if role == WRITE:
        return ToolUse(WRITE, path=path, content=_first_string(args, tool.content))
    if role == REPLACE:
        return ToolUse(REPLACE, path=path, old=_first_string(args, tool.old), new=_first_string(args, tool.new), replace_all=args.get("replace_all") is True)
    if role == MULTI_REPLACE:
        pairs = []
        for edit in args.get("edits") if isinstance(args.get("edits"), list) else []:
            if isinstance(edit, dict):
                old, new = _first_string(edit, tool.old), _first_string(edit, tool.new)
                if old is not None:
                    pairs.append((old, new or ""))
        return ToolUse(MULTI_REPLACE, path=path, edits=tuple(pairs))
    if role == INSERT:
        return ToolUse(INSERT, path=path, new=_first_string(args, tool.new + tool.content), line=_int_argument(args.get("insert_line", args.get("line"))))
    if role == PATCH:
        return ToolUse(PATCH, patch=_first_string(args, tool.patch) or "")
    return ToolUse(role, path=path)


def _guess(name: str, args: dict) -> Tool:
    """A tool the table does not know, by its arguments."""
    if isinstance(args.get("patch"), str):
        return Tool(PATCH)
    if "keystrokes" in args or "command" in args or "cmd" in args:
        value = args.get("keystrokes", args.get("command", args.get("cmd")))
        if isinstance(value, (str, list)) and not (isinstance(value, str) and value.lower() in _EDITOR_ACTIONS):
            return Tool(SHELL)
        if isinstance(args.get("path"), str):
            return Tool(EDITOR)
    return Tool(OTHER)


_EDITOR_ACTIONS = {"view", "create", "str_replace", "insert", "undo_edit", "write", "append"}


def _command(args: dict, names: tuple[str, ...]) -> str | None:
    for name in names:
        if name not in args:
            continue
        value = args[name]
        if isinstance(value, list):
            # Codex: ["bash", "-lc", "..."]; the script is the last element.
            if value and isinstance(value[-1], str) and len(value) >= 3 and value[-2] in ("-c", "-lc"):
                return value[-1]
            return " ".join(map(str, value))
        if isinstance(value, str):
            return value
        return None
    return None


def _python_heredoc(code: str) -> str:
    """Python code as the shell command that runs it, so that shell analysis reads it."""
    marker = "PYCODE"
    while marker in code:
        marker += "_"
    return f"python3 - <<'{marker}'\n{code}\n{marker}\n"


def _first_string(args: dict, names: tuple[str, ...]) -> str | None:
    """The first of the arguments `names` that holds text (agents name the same argument differently)."""
    for name in names:
        value = args.get(name)
        if isinstance(value, str):
            return value
    return None


def _int_argument(value: Any) -> int | None:
    """A line number as the agent sent it (3, "3" or 3.0), None when it is none (or true/false)."""
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# -- commands in message text --------------------------------------------------------

# mini-swe-agent's text mode: exactly one ```bash block per reply (its format
# rule; a reply with none or several is refused and not run).
_FENCE = re.compile(r"^```(?:bash|sh)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_XML_KEYSTROKES = re.compile(r"<keystrokes(?:\s[^>]*)?>(.*?)</keystrokes>", re.S)


@dataclass(frozen=True)
class MessageCommand:
    """A command an agent wrote in its message rather than as a tool call."""

    text: str
    keystrokes: bool  # typed into a terminal (terminus-2) rather than run as a command
    submit: bool = False


# terminus-2's answer to a reply it could not parse: nothing of that reply ran.
REJECTED_REPLY = "Previous response had parsing errors"
# OpenHands without native function calling writes each call as text.
_TEXT_FUNCTION = re.compile(r"<function=([\w.-]+)>(.*?)(?:</function>|\Z)", re.S)
_TEXT_PARAMETER = re.compile(r"<parameter=([\w.-]+)>(.*?)</parameter>", re.S)


def rejected_reply(observations: list[str]) -> bool:
    """The harness refused the reply these observations answer (terminus-2's parse-error prompt)."""
    return any(text.lstrip().startswith(REJECTED_REPLY) for text in observations)


def text_function_calls(message: str) -> list[tuple[str, dict[str, str]]]:
    """OpenHands' calls written as text (`<function=execute_bash><parameter=command>...`): (name, arguments) each."""
    if "<function=" not in message:
        return []
    calls = []
    for match in _TEXT_FUNCTION.finditer(message):
        arguments = {key: value.strip("\n") for key, value in _TEXT_PARAMETER.findall(match.group(2))}
        calls.append((match.group(1), arguments))
    return calls


def message_commands(message: str) -> list[MessageCommand]:
    """Commands in an agent message: terminus-2's JSON or XML reply, else fenced bash blocks."""
    text = message.strip()
    if not text:
        return []
    found = _terminus_json(text)
    if found is not None:
        return found
    if "<keystrokes" in text or "<task_complete>" in text:
        commands = [MessageCommand(_xml_unescape(m.group(1)), True) for m in _XML_KEYSTROKES.finditer(text)]
        if re.search(r"<task_complete>\s*true\s*</task_complete>", text, re.I):
            commands.append(MessageCommand("", True, submit=True))
        return commands
    if "```" in text:
        blocks = _FENCE.findall(text)
        return [MessageCommand(blocks[0], False)] if len(blocks) == 1 else []
    return []


def _terminus_json(text: str) -> list[MessageCommand] | None:
    """terminus-2's JSON reply ({"analysis", "plan", "commands": [{"keystrokes", "duration"}], "task_complete"}).

    The model may wrap it in prose or a ```json fence; the outermost object is read.
    """
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start or '"commands"' not in text and '"task_complete"' not in text:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or not ("commands" in data or "task_complete" in data):
        return None
    commands = []
    for item in data.get("commands") if isinstance(data.get("commands"), list) else []:
        if isinstance(item, dict) and isinstance(item.get("keystrokes"), str):
            commands.append(MessageCommand(item["keystrokes"], True))
    if data.get("task_complete") is True:
        commands.append(MessageCommand("", True, submit=True))
    return commands


def _xml_unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'").replace("&amp;", "&")


# -- what a read tool showed -------------------------------------------------------------

_NUMBERED = re.compile(r"^\s*\d+(?:\t|→)", re.M)
_CAT_N_HEADER = re.compile(r"\AHere's the result of running `cat -n` on [^\n]*:\n")
_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>\s*\Z", re.S)


def read_output_content(output: str) -> str | None:
    """A file's content from what a read tool returned, or None when it cannot be told.

    Line-numbered output (claude-code's `     1→text`, `cat -n`'s `     1\\ttext`
    under OpenHands' and Inspect's "Here's the result of running `cat -n`"
    header) loses its numbers; claude-code's trailing system reminder goes.
    """
    text = _REMINDER.sub("\n", _CAT_N_HEADER.sub("", output))
    if not text.strip():
        return None
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and all(_NUMBERED.match(line) for line in lines):
        return "".join(_NUMBERED.sub("", line, count=1) + "\n" for line in lines)
    if _NUMBERED.match(text):
        return None  # numbered, but not all of it: cut or wrapped, not the file
    return text
