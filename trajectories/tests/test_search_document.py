"""What a word is, and what a step's search document holds."""
import pytest

from trajectories.search.document import (
    MAX_DOCUMENT_WORDS,
    OutputLines,
    document,
    flatten,
    highlighted,
    query_words,
    words,
    trajectory_documents,
    tsquery,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("python3 /app/evaluate_local.py --size large", ["python3", "app", "evaluate", "local", "py", "size", "large"]),
        ("avr_loss=0.305", ["avr", "loss", "0", "305"]),
        ("CUDA out of memory. Tried to allocate", ["cuda", "out", "of", "memory", "tried", "to", "allocate"]),
        ("loss loss LOSS", ["loss"]),
        ("ÄPFEL und Birnen", ["äpfel", "und", "birnen"]),
        ("steps: 100%|██████| 3000/3000", ["steps", "100", "██████", "3000"]),
        ("it's a:b \\x 'q'", ["it", "s", "a", "b", "x", "q"]),
        ("->  ;; ", []),
        ("", []),
        # Blobs are no words (PostgreSQL refuses lexemes over 2 KB).
        ("key " + "A" * 101, ["key"]),
    ],
)
def test_words(text, expected):
    assert query_words(text) == expected


def test_document_is_quoted_distinct_words():
    doc = document(["Hash join", "", "hash TABLE"])
    assert sorted(doc.split(" ")) == ["'hash'", "'join'", "'table'"]
    assert document(["", "->"]) == ""


def test_document_is_capped_keeping_the_first_words():
    text = "first " + " ".join(f"w{i}" for i in range(MAX_DOCUMENT_WORDS + 10)) + " last"
    doc = document([text]).split(" ")
    assert len(doc) == MAX_DOCUMENT_WORDS + 1 and "'first'" in doc and "'last'" not in doc
    # Marked, so that substring search reads the step rather than trust it.
    assert "'+incomplete'" in doc and "'+incomplete'" not in document(["first last"])
    assert "'+incomplete'" in document(["short " + "x" * 101])


def test_queries_require_every_word_the_last_as_a_prefix():
    from trajectories.search.document import like_patterns

    assert tsquery(query_words("local & !evaluate")) == "'local' & 'evaluate':*"
    assert like_patterns(["hash", "jo"]) == ["%'hash'%", "%'jo%"]


@pytest.mark.parametrize(
    "value, expected",
    [
        ({"keystrokes": "cat > a.py <<EOF\nimport torch\nEOF\n", "duration": 0.5}, "cat > a.py <<EOF\nimport torch\nEOF\n\n0.5"),
        ({"path": "/app/x", "edits": [{"old": "a", "new": "b"}], "dry": True}, "/app/x\na\nb\n"),
        (None, ""),
    ],
)
def test_flatten_keeps_words_apart(value, expected):
    # Not JSON text: its "\n" escapes would glue "nimport" together.
    assert flatten(value) == expected


def test_output_lines_are_new_once():
    lines = OutputLines()
    assert sorted(lines.new("$ ls\nREADME.md\n$ ").split("\n")) == ["$ ", "$ ls", "README.md"]
    assert lines.new("$ ls\nREADME.md\n$ ") == ""
    assert lines.new("$ ls\nREADME.md\n$ python3 train.py\nCUDA out of memory") in (
        "$ python3 train.py\nCUDA out of memory",
        "CUDA out of memory\n$ python3 train.py",
    )


def test_output_lines_keep_their_order_and_a_line_repeated_in_one_output_once():
    lines = OutputLines()
    assert lines.new("b\na\nb\nc\na") == "b\na\nc"
    assert lines.new("d\nc\nd\ne") == "d\ne"
    assert lines.new("") == ""


def test_step_documents_index_a_line_where_it_first_shows():
    screen = "$ python3 train.py\nCUDA out of memory"
    docs, _ = trajectory_documents(
        [
            ("Run it.", "", [{"keystrokes": "python3 train.py\n"}], [screen]),
            ("Poll.", "", [{"keystrokes": ""}], [screen]),
            ("", "Think", [], [screen + "\n$ nvidia-smi"]),
        ]
    )
    words = [set(doc.split(" ")) for doc in docs]
    assert {"'cuda'", "'memory'", "'train'", "'run'"} <= words[0]
    assert words[1] == {"'poll'"}
    assert words[2] == {"'think'", "'nvidia'", "'smi'"}


def test_the_rollout_document_is_the_union_of_its_steps():

    docs, words = trajectory_documents([("hash join", "", [], ["a"]), ("join table", "", [], ["a\nb"])])
    assert [sorted(doc.split(" ")) for doc in docs] == [["'a'", "'hash'", "'join'"], ["'b'", "'join'", "'table'"]]
    assert sorted(words.split(" ")) == ["'a'", "'b'", "'hash'", "'join'", "'table'"]


def test_the_rollout_document_stays_under_postgresqls_tsvector_limit():
    from trajectories.search.document import MAX_ROLLOUT_BYTES, trajectory_documents

    steps = [(" ".join(f"w{step}x{i}" + "y" * 90 for i in range(2000)), "", [], []) for step in range(10)]
    _, words = trajectory_documents(steps)
    assert len(words.encode()) <= MAX_ROLLOUT_BYTES < 1_000_000
    assert len(words.split(" ")) > 5000 and "'+incomplete'" in words.split(" ")


@pytest.mark.parametrize(
    "q, expected",
    [
        ("aluate_loc", ["aluate", "loc"]),  # inside "evaluate" and "local"
        ("Out Of Mem", ["out", "of", "mem"]),
        ("->", None),  # no words: every text must be read
        ("x" * 101, None),  # longer than any word a document keeps
    ],
)
def test_infix_filters(q, expected):
    from trajectories.search.document import infix_filters

    assert infix_filters(q) == expected


def marks(pieces):
    return [text for text, matched in pieces if matched]


@pytest.mark.parametrize(
    "text, q, by_words, expected",
    [
        # Whole words, in any case; the last query word begins a word.
        ("python3 /app/evaluate_local.py", "evaluate_loc", True, ["evaluate", "local"]),
        ("Loss fell: loss=0.3, lossy", "loss", True, ["Loss", "loss", "lossy"]),
        ("make && ./bench --iters 10", "bench make", True, ["make", "bench"]),
        # A word that is not the last must be whole: "be" does not mark "bench".
        ("./bench be quick", "be quick", True, ["be", "quick"]),
        ("ÄPFEL und Birnen", "äpfel", True, ["ÄPFEL"]),
        ("no match here", "other", True, []),
        ("->", "->", True, []),
        # As typed, in any case, anywhere.
        ("a->b  A->B", "->b", False, ["->b", "->B"]),
        ("x.*y", ".*", False, [".*"]),
        ("", "x", False, []),
    ],
)
def test_highlighted(text, q, by_words, expected):
    pieces = highlighted(text, q, by_words=by_words)
    assert "".join(piece for piece, _ in pieces) == text
    assert marks(pieces) == expected


def test_highlighted_marks_what_the_word_rule_splits():
    text = "steps: 100%|██████| 3000/3000 avr_loss=0.305 café-au-lait ÄPFEL"
    pieces = highlighted(text, " ".join(words(text)), by_words=True)
    assert {piece.lower() for piece in marks(pieces)} == set(words(text))
    # Nothing else is marked: what lies between marks holds no word.
    assert all(not words(piece) for piece, matched in pieces if not matched)
