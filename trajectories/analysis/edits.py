"""Which files a tool call writes, and the edits as unified diffs.

A rollout's edits are reconstructed by following the last known content of
every file through the trajectory: full writes (heredocs, editor `create`,
Python writing a literal) replace it, `sed -i` and editor `str_replace` are
replayed on it, and `cat file` output seen in an observation seeds it when
nothing is known yet. When the old content is unknown a full write is shown
as a new file with a note; an edit that cannot be replayed is shown as the
command itself ("pseudo-diff") and the file's content becomes unknown.
"""
from __future__ import annotations

import ast
import difflib
import posixpath
import re
from dataclasses import dataclass, field

from trajectories.reading.parsed import FileChange, ParsedToolCall
from trajectories.analysis.patches import ADD, DELETE, Hunk, apply_hunks, parse_patch
from trajectories.analysis.sed import apply_sed
from trajectories.analysis import tool_vocabulary as vocabulary
from trajectories.analysis.shell import Command
from trajectories.analysis.tool_vocabulary import ToolUse, use_of

# File extensions that make a copy or a redirection an edit of the solution
# rather than a log or a data dump.
SOURCE_EXTENSIONS = {
    ".py", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cu", ".cuh", ".rs", ".go", ".java", ".js", ".ts",
    ".sh", ".bash", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".mk", ".cmake", ".s", ".S", ".ptx", ".jl", ".rb",
    ".pl", ".lua", ".scala", ".kt", ".swift", ".m", ".f90", ".sql", ".txt", ".json", ".md",
}
_NOT_EDITED = (".log", ".out", ".err")
_WRITE_MODE = re.compile(r"[wax+]")
# A shell prompt "root@977371b89e17:/app# ". It may follow output that did not
# end with a newline ("...styleroot@977371b89e17:/app# "), so prompts seen at
# line starts teach the exact "user@host:" to look for anywhere.
_PROMPT = re.compile(r"(?<![\w.-])[A-Za-z_][\w.-]{0,31}@[\w.-]{1,64}:([^\s#$]{0,300})[#$] ")
_PROMPT_AT_LINE_START = re.compile(r"^([A-Za-z_][\w.-]{0,31}@[\w.-]{1,64}:)[^\s#$]{0,300}[#$] ", re.M)


def _prompts(text: str) -> list[re.Match]:
    if "@" not in text:
        return []  # every prompt has one
    owners = _prompt_owners_at_line_starts(text)
    if not owners:
        return list(_PROMPT.finditer(text))
    alternatives = "|".join(re.escape(owner) for owner in sorted(owners))
    return list(re.finditer(rf"(?:{alternatives})([^\s#$]{{0,300}})[#$] ", text))


def _prompt_owners_at_line_starts(text: str) -> set[str]:
    """The "user@host:" of prompts that start a line.

    Same as matching `_PROMPT_AT_LINE_START` all through `text`, but only lines
    holding an "@" are tried: a prompt never spans lines.
    """
    owners: set[str] = set()
    at = text.find("@")
    while at != -1:
        match = _PROMPT_AT_LINE_START.match(text, text.rfind("\n", 0, at) + 1)
        if match is not None:
            owners.add(match.group(1))
        line_end = text.find("\n", at)
        if line_end == -1:
            break
        at = text.find("@", line_end)
    return owners


_TRUNCATED = re.compile(r"\[\.\.\. output limited to|\.\.\. \(truncated|<truncated|\[truncated")


@dataclass
class FileWrite:
    """One change a command makes to one file."""

    path: str
    mode: str  # write | append | sed | str_replace | replacements | insert | copy | patch | unknown
    content: str | None = None  # full (write) or appended text, when known
    old: str = ""  # str_replace
    new: str = ""  # str_replace / insert
    line: int | None = None  # insert after this line
    scripts: list[str] = field(default_factory=list)  # sed
    extended: bool = False  # sed -E
    source: str = ""  # copy: where from
    command: str = ""  # what to show when the edit cannot be replayed
    hunks: list[Hunk] | None = None  # patch: this file's hunks, to replay (trajectories.analysis.patches)
    replacements: tuple[tuple[str, str], ...] = ()  # replacements: (old, new) in order, one edit
    every: bool = False  # replacements: every occurrence, not the first


# --- what a command writes -------------------------------------------------------------


def shell_writes(command: Command) -> list[FileWrite]:
    """The files one shell command writes, with what is known of the change."""
    if "writes" not in command.cache:
        command.cache["writes"] = _shell_writes(command)
    return command.cache["writes"]


def _shell_writes(command: Command) -> list[FileWrite]:
    stages = command.stage_words()
    words = stages[0] if stages else []
    program = words[0].rsplit("/", 1)[-1] if words else ""
    writes: list[FileWrite] = []
    outputs = [(op, path) for op, path in command.output_files if not path.endswith(_NOT_EDITED)]
    heredoc = command.heredoc

    if program == "cat" and heredoc is not None and len(words) == 1:
        for op, path in outputs:
            writes.append(FileWrite(path, "append" if op.endswith(">>") else "write", heredoc, command=command.text))
    elif program in ("echo", "printf") and outputs:
        text = _echo_text(words) if program == "echo" else _printf_text(words)
        for op, path in outputs:
            writes.append(FileWrite(path, "append" if op.endswith(">>") else "write", text, command=command.text))
    elif program == "sed" and _has_flag(words, "i"):
        scripts, files, extended = _sed_arguments(words)
        for path in files:
            writes.append(FileWrite(path, "sed", scripts=scripts, extended=extended, command=command.text))
    elif program == "perl" and any(word.startswith("-") and "i" in word for word in words[1:]):
        files = [word for word in words[1:] if not word.startswith("-")][1:]
        writes.extend(FileWrite(path, "unknown", command=command.text) for path in files)
    elif _is_python(program) and (heredoc is not None or "-c" in words):
        code = heredoc if heredoc is not None and "-c" not in words else _argument_after(words, "-c")
        if code is not None:
            writes.extend(python_writes(code, command.text))
    elif program in ("cp", "mv", "install") and len(words) >= 3:
        operands = [word for word in words[1:] if not word.startswith("-")]
        if len(operands) == 2 and _is_source(operands[1]) and not _is_scratch(operands[1]):
            writes.append(FileWrite(operands[1], "copy", source=operands[0], command=command.text))
    elif program == "patch" or (program == "git" and len(words) > 1 and words[1] == "apply"):
        writes.extend(patch_writes(heredoc or "", command.text))
    elif program == "git" and len(words) > 2 and words[1] in ("checkout", "restore") and "--" in words:
        files = words[words.index("--") + 1 :]
        writes.extend(FileWrite(path, "unknown", command=command.text) for path in files)
    elif outputs:
        # Output of another program (or `cat a b`) redirected into a source file.
        for op, path in outputs:
            if _is_source(path) and not path.endswith((".txt", ".json", ".md")):
                writes.append(FileWrite(path, "unknown", command=command.text))

    # `... | tee [-a] file`: tee writes what flows in; known only from a heredoc or echo.
    for stage in stages:
        if stage and stage[0].rsplit("/", 1)[-1] == "tee":
            append = any(word in ("-a", "--append") for word in stage[1:])
            files = [word for word in stage[1:] if not word.startswith("-") and not word.endswith(_NOT_EDITED)]
            content = None
            if stage is stages[0] and heredoc is not None:
                content = heredoc
            elif program in ("echo", "printf") and stage is not stages[0]:
                content = _echo_text(words) if program == "echo" else _printf_text(words)
            elif program == "cat" and heredoc is not None:
                content = heredoc
            elif stage is not stages[0]:
                # A benchmark piped into `tee run.log` is logging, not editing.
                files = [path for path in files if _is_source(path) and not path.endswith(".txt")]
            for path in files:
                mode = "append" if append else "write"
                writes.append(FileWrite(path, mode if content is not None else "unknown", content, command=command.text))
    return writes


def tool_writes(call: ParsedToolCall) -> list[FileWrite] | None:
    """Writes of an editor or patch tool call; None when `call` is not such a tool.

    The tool's role and arguments come from the harness vocabulary
    (trajectories.analysis.tool_vocabulary), whatever the harness calls it.
    """
    use = use_of(call)
    return writes_of(use, call.function_name)


def writes_of(use: ToolUse, name: str) -> list[FileWrite] | None:
    """The writes a tool use makes; None for tools that are not editors, readers or patches."""
    role, path = use.role, use.path
    if role == vocabulary.PATCH:
        return patch_writes(use.patch or "", name)
    if role in (vocabulary.READ, vocabulary.SEARCH):
        return []
    if role not in _EDITING_ROLES:
        return None
    action = use.action
    if action == "view" or not path:
        return []
    if role == vocabulary.MULTI_REPLACE:
        return [FileWrite(path, "replacements", replacements=use.edits, command=f"{name} {path}")] if use.edits else []
    text = use.content
    if role == vocabulary.WRITE or action == "create" or (text is not None and use.old is None and role != vocabulary.INSERT):
        return [FileWrite(path, "write", text or "", command=f"{name} create {path}")]
    if role == vocabulary.INSERT or action == "insert":
        return [FileWrite(path, "insert", new=use.new or text or "", line=use.line, command=f"{name} insert {path}")]
    if use.old is not None and use.replace_all:
        return [FileWrite(path, "replacements", replacements=((use.old, use.new or ""),), every=True,
                          command=f"{name} replace_all {path}")]
    if use.old is not None:
        return [FileWrite(path, "str_replace", old=use.old, new=use.new or "", command=f"{name} str_replace {path}")]
    if action == "undo_edit":
        return [FileWrite(path, "unknown", command=f"{name} undo_edit {path}")]
    return [FileWrite(path, "unknown", command=f"{name} {action} {path}".strip())]


_EDITING_ROLES = {vocabulary.EDITOR, vocabulary.WRITE, vocabulary.REPLACE, vocabulary.MULTI_REPLACE, vocabulary.INSERT}


def is_editor_view(call: ParsedToolCall) -> bool:
    """A tool call that shows a file or searches files (an inspect step)."""
    use = use_of(call)
    return use.role in (vocabulary.READ, vocabulary.SEARCH) or (use.role == vocabulary.EDITOR and use.action == "view")


def patch_writes(patch: str, command: str) -> list[FileWrite]:
    """Each file a unified diff or a Codex `*** Begin Patch` changes, with its own part of the patch."""
    writes = []
    for part in parse_patch(patch):
        if part.operation == ADD:
            writes.append(FileWrite(part.path, "write", part.added_content, command=command))
        elif part.operation == DELETE:
            writes.append(FileWrite(part.path, "unknown", command=f"{command}: delete {part.path}"))
        else:
            writes.append(FileWrite(part.path, "patch", part.text, hunks=part.hunks, command=command))
    if not writes:
        return [FileWrite("", "patch", patch, command=command)]
    return writes


def python_writes(code: str, command: str = "python") -> list[FileWrite]:
    """Files a Python snippet opens for writing, with the literal it writes when there is one."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return [
            FileWrite(match.group(1), "unknown", command=command)
            for match in re.finditer(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][^'\"]*[wax]", code)
        ] + [
            FileWrite(match.group(1), "unknown", command=command)
            for match in re.finditer(r"Path\(\s*['\"]([^'\"]+)['\"]\s*\)\.write_text", code)
        ]
    writes: dict[str, FileWrite] = {}
    handles: dict[str, tuple[str, str]] = {}  # variable -> (path, mode)
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                opened = _opened_for_writing(item.context_expr)
                if opened and isinstance(item.optional_vars, ast.Name):
                    handles[item.optional_vars.id] = opened
                    writes.setdefault(opened[0], FileWrite(opened[0], _mode(opened[1]), None, command=command))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method, target = node.func.attr, node.func.value
        literal = _literal(node.args[0]) if node.args else None
        if method in ("write_text", "write_bytes"):
            path = None
            if isinstance(target, ast.Call) and _call_name(target) in ("Path", "pathlib.Path") and target.args:
                path = _literal(target.args[0])
            _record(writes, path or "", "write" if method == "write_text" and path else "unknown", literal, command)
        elif method == "write":
            if isinstance(target, ast.Name) and target.id in handles:
                path, mode = handles[target.id]
                _record(writes, path, _mode(mode), literal, command, accumulate=True)
            elif isinstance(target, ast.Call):
                opened = _opened_for_writing(target)
                if opened:
                    _record(writes, opened[0], _mode(opened[1]), literal, command)
    for node in ast.walk(tree):
        # open(path, "w") used some other way (json.dump(obj, open(...)), a variable, ...).
        if isinstance(node, ast.Call):
            opened = _opened_for_writing(node)
            if opened and opened[0] not in writes:
                writes[opened[0]] = FileWrite(opened[0], "unknown", command=command)
    for write in writes.values():
        if not write.path or (write.content is None and write.mode in ("write", "append")):
            write.mode, write.content = "unknown", None
    return list(writes.values())


def _record(writes: dict[str, FileWrite], path: str, mode: str, literal: str | None, command: str, accumulate: bool = False) -> None:
    existing = writes.get(path)
    if existing is None or not accumulate:
        writes[path] = FileWrite(path, mode if literal is not None else "unknown", literal, command=command)
        return
    if existing.mode == "unknown" or literal is None:
        existing.mode, existing.content = "unknown", None
        return
    existing.content = (existing.content or "") + literal


def _opened_for_writing(node: ast.AST) -> tuple[str, str] | None:
    if not isinstance(node, ast.Call) or _call_name(node) not in ("open", "io.open", "codecs.open"):
        return None
    path = _literal(node.args[0]) if node.args else None
    mode = _literal(node.args[1]) if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg == "mode":
            mode = _literal(keyword.value)
        elif keyword.arg == "file":
            path = _literal(keyword.value)
    if mode and _WRITE_MODE.search(mode):
        return path or "", mode  # "": a computed file name
    return None


def _mode(mode: str) -> str:
    return "append" if "a" in mode else "write"


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def _literal(node: ast.AST) -> str | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


# --- following content through the rollout ---------------------------------------------


class FileTracker:
    """The last known content of every file, and the diffs of each change."""

    def __init__(self) -> None:
        self.known: dict[str, str | None] = {}
        self.cwd: str | None = None
        # Each changed file's content just before its first change (None: unknown).
        self.before: dict[str, str | None] = {}
        # The last net diff of each file, with the content it was made from: a
        # live rollout asks for net changes after every step, most files unchanged.
        self._net_diffs: dict[str, tuple[str | None, str]] = {}

    def resolve(self, path: str) -> str:
        if not path or path.startswith("/") or path.startswith("~") or self.cwd is None:
            return path
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def seed(self, path: str, content: str) -> None:
        """Content seen (e.g. `cat path` output); kept only when nothing is known yet."""
        path = self.resolve(path)
        if self.known.get(path) is None:
            self.known[path] = content

    def apply(self, write: FileWrite) -> tuple[str, str]:
        """(path, diff text) of `write`, updating the known content."""
        if not write.path and write.mode != "patch":
            shown = write.command if len(write.command) <= 500 else write.command[:500] + "..."
            return "", f"# {shown.strip()} (writes a file whose name is computed; change not reconstructed)\n"
        path = self.resolve(write.path)
        old = self.known.get(path)
        if path:
            self.before.setdefault(path, old)
        mode = write.mode
        new: str | None = None
        if mode == "write":
            new = write.content or ""
        elif mode == "append":
            new = None if old is None else old + (write.content or "")
            if old is None:
                self.known[path] = None
                return path, _added_only(path, write.content or "", "appended; earlier content unknown")
        elif mode == "copy":
            source = self.known.get(self.resolve(write.source))
            if source is None:
                self.known[path] = None
                return path, _pseudo(path, write.command, "copied from a file whose content is unknown")
            new = source
        elif mode == "sed":
            new = apply_sed(old, write.scripts, write.extended) if old is not None else None
            if new is None:
                self.known[path] = None
                reason = "content before the edit unknown" if old is None else "script not replayed"
                return path, _pseudo(path, write.command, reason)
        elif mode == "str_replace":
            if old is not None and write.old and write.old in old:
                new = old.replace(write.old, write.new, 1)
            else:
                return path, _replacement_hunk(path, write.old, write.new)
        elif mode == "replacements":
            new = old
            for old_text, new_text in write.replacements:
                if new is None or not old_text or old_text not in new:
                    new = None
                    break
                new = new.replace(old_text, new_text, -1 if write.every else 1)
            if new is None:
                self.known[path] = None
                return path, "".join(_replacement_hunk(path, a, b) for a, b in write.replacements)
        elif mode == "insert":
            if old is not None and write.line is not None:
                lines = old.splitlines(keepends=True)
                text = write.new if write.new.endswith("\n") or not write.new else write.new + "\n"
                new = "".join(lines[: write.line]) + text + "".join(lines[write.line :])
            else:
                self.known[path] = None
                return path, _added_only(path, write.new, f"inserted after line {write.line}; content unknown")
        elif mode == "patch":
            new = apply_hunks(old, write.hunks) if old is not None and write.hunks else None
            if new is None:
                # Shown as written: the file's content is unknown after.
                if path:
                    self.known[path] = None
                return path, write.content or ""
        else:
            self.known[path] = None
            return path, _pseudo(path, write.command, "change not reconstructed")
        self.known[path] = new
        if old is None:
            return path, unified_diff(path, None, new)
        if old == new:
            return path, f"# {path}: written with unchanged content\n"
        return path, unified_diff(path, old, new)

    def net_changes(self, step_ids: dict[str, list[int]]) -> list[FileChange]:
        """Each changed file's change over the whole rollout, by path; `step_ids` say who changed it."""
        changes = []
        for path in sorted(self.before):
            before, after = self.before[path], self.known.get(path)
            cached = self._net_diffs.get(path)
            if cached is not None and cached[0] is after:
                diff = cached[1]
            else:
                diff = unified_diff(path, before, after) if after is not None and after != before else ""
                self._net_diffs[path] = (after, diff)
            changes.append(
                FileChange(path=path, step_ids=step_ids.get(path, []), diff=diff, end_known=after is not None, start_known=before is not None)
            )
        return changes

    def seed_from_observation(self, text: str) -> None:
        """Learn file contents from `cat path` output and the working directory from prompts."""
        for path, content in cat_outputs(text):
            self.seed(path, content)

    def apply_commands(self, commands: list[Command]):
        """(path, diff) of every write of a shell call's commands, following `cd` on the way."""
        for command in commands:
            self.note_cwd([command])
            for write in shell_writes(command):
                yield self.apply(write)

    def note_cwd(self, commands: list[Command]) -> None:
        for command in commands:
            words = command.words
            if words[:1] == ["cd"] and len(words) == 2 and words[1].startswith("/"):
                self.cwd = posixpath.normpath(words[1])
            elif words[:1] == ["cd"] and len(words) == 2 and self.cwd and not words[1].startswith(("~", "-", "$")):
                self.cwd = posixpath.normpath(posixpath.join(self.cwd, words[1]))


def unified_diff(path: str, old: str | None, new: str) -> str:
    """A unified diff with git-style names; an unknown `old` shows `new` as a new file."""
    name = path.lstrip("/")
    if old is None:
        lines = difflib.unified_diff([], _lines(new), "/dev/null", f"b/{name}")
        note = f"# {path}: previous content unknown; shown as a new file\n"
        return note + _join(lines)
    return _join(difflib.unified_diff(_lines(old), _lines(new), f"a/{name}", f"b/{name}"))


def _replacement_hunk(path: str, old: str, new: str) -> str:
    name = path.lstrip("/")
    note = f"# {path}: replacement shown without surrounding content (file content unknown)\n"
    return note + _join(difflib.unified_diff(_lines(old), _lines(new), f"a/{name}", f"b/{name}", n=0))


def _added_only(path: str, text: str, why: str) -> str:
    name = path.lstrip("/")
    added = _lines(text)
    body = "".join("+" + line for line in added)
    return f"# {path}: {why}\n--- a/{name}\n+++ b/{name}\n@@ +{len(added)} lines @@\n{body}"


def _pseudo(path: str, command: str, why: str) -> str:
    name = path.lstrip("/")
    shown = command if len(command) <= 500 else command[:500] + "..."
    return f"--- a/{name}\n+++ b/{name}\n# {shown.strip()} on {path} ({why})\n"


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def _join(lines) -> str:
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n")
    return "".join(out)


def cat_outputs(text: str) -> list[tuple[str, str]]:
    """(path, content) of every complete `cat <one file>` shown in terminal output.

    The output runs from the echoed command line to the next shell prompt; a
    file without a final newline has the prompt glued to its last line.
    Output cut by the harness ("output limited to ...") is not used.
    """
    if "cat " not in text:
        return []
    prompts = _prompts(text)
    found: list[tuple[str, str]] = []
    for current, following in zip(prompts, prompts[1:]):
        line_end = text.find("\n", current.end())
        if line_end == -1 or line_end > following.start():
            continue
        typed = text[current.end() : line_end].strip()
        words = typed.split()
        if len(words) != 2 or words[0] != "cat" or words[1].startswith("-") or any(c in typed for c in "|><;&*$"):
            continue
        content = text[line_end + 1 : following.start()]
        if _TRUNCATED.search(content):
            continue
        path = words[1]
        cwd = current.group(1).strip()
        if not path.startswith("/") and cwd.startswith("/"):
            path = posixpath.normpath(posixpath.join(cwd, path))
        found.append((path, content))
    return found


_PROMPT_CWD = re.compile(r"@[\w.-]{1,64}:(/[^\s#$]{0,300})[#$] ")


def prompt_cwd(text: str) -> str | None:
    """The working directory of the last shell prompt at the end of `text` ("root@host:/app# ").

    Only the end is read: the directory changes with a `cd`, after which the
    terminal shows a fresh prompt; output of a running job has none.
    """
    tail = text[-2000:]
    if "@" not in tail:
        return None  # most screens of a running job: no prompt, and a quick look says so
    cwd = None
    for match in _PROMPT_CWD.finditer(tail):
        cwd = match.group(1)
    return cwd


# --- small helpers --------------------------------------------------------------------


_PYTHON = re.compile(r"python[0-9.]*|pypy3?")
_SCRATCH_NAME = re.compile(r"(^|[._-])(bak|backup|orig|old|copy|save[d]?)([._-]|$)")


def _is_python(program: str) -> bool:
    return _PYTHON.fullmatch(program) is not None


def _is_source(path: str) -> bool:
    if not path or path.endswith("/") or path.startswith("/dev/"):
        return False
    return posixpath.splitext(path)[1] in SOURCE_EXTENSIONS


def _is_scratch(path: str) -> bool:
    """A backup or a scratch copy (`cp solve.c /tmp/solve.c.bak`) is no edit of the solution."""
    name = path.rsplit("/", 1)[-1].lower()
    return path.startswith("/tmp/") or _SCRATCH_NAME.search(name) is not None


def _has_flag(words: list[str], flag: str) -> bool:
    for word in words[1:]:
        if word.startswith("--in-place"):
            return True
        if word.startswith("-") and not word.startswith("--") and flag in word[1:]:
            # -i, -i.bak, -Ei; but not an -e expression's text
            return True
    return False


def _sed_arguments(words: list[str]) -> tuple[list[str], list[str], bool]:
    scripts: list[str] = []
    files: list[str] = []
    extended = False
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("-e", "--expression") and i + 1 < len(words):
            scripts.append(words[i + 1])
            i += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif word.startswith("-") and len(word) > 1 and not word.startswith("--"):
            if "E" in word or "r" in word:
                extended = True
            if word.endswith("e") and i + 1 < len(words):
                scripts.append(words[i + 1])
                i += 2
                continue
        elif word.startswith("--"):
            pass
        elif not scripts:
            scripts.append(word)
        else:
            files.append(word)
        i += 1
    return scripts, files, extended


def _echo_text(words: list[str]) -> str:
    args = words[1:]
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.replace("\\n", "\n").replace("\\t", "\t")
    return text + ("\n" if newline else "")


def _printf_text(words: list[str]) -> str:
    if len(words) < 2:
        return ""
    fmt = words[1]
    if len(words) > 2 and fmt in ("%s", "%s\\n"):
        return " ".join(words[2:]) + ("\n" if fmt.endswith("\\n") else "")
    return fmt.replace("\\n", "\n").replace("\\t", "\t")


def _argument_after(words: list[str], flag: str) -> str | None:
    if flag in words:
        index = words.index(flag)
        if index + 1 < len(words):
            return words[index + 1]
    return None

