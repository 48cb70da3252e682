"""The work meter (tests/support/work_meter.py) counts what it says, and tells a quadratic parser from a linear one."""

from __future__ import annotations

import itertools

import pytest

from tests.support.work_meter import metered_module

_NAMES = itertools.count()


def counted(expression: str, setup: str = "") -> tuple[object, int]:
    """The value of `expression` in a metered module, and the characters the meter counted for it."""
    source = (
        f"from __future__ import annotations\nimport re\nimport regex\n{setup}\ndef run():\n    return {expression}\n"
    )
    module, meter = metered_module(source, f"meter_case_{next(_NAMES)}", assembly=(), assembly_functions=())
    value = module.run()
    return value, sum(meter.scanning.values())


@pytest.mark.parametrize(
    ("expression", "value", "chars"),
    [
        ('"abcx".find("x")', 3, 4),  # up to the end of what it found
        ('"abc".find("x")', -1, 3),  # everything, when it finds nothing
        ('"abcabc".find("c", 3)', 5, 3),  # from where it starts
        ('"abcabc".find("c", 1, 2)', -1, 1),  # to where it must stop
        ('"abcabc".rfind("a")', 3, 3),  # from the end back to what it found
        ('"abcabc".index("b")', 1, 2),
        ('"abcabc".count("a")', 2, 6),
        ('"abc".startswith("ab")', True, 2),  # the affix
        ('"abc".startswith(("a", "abc"))', True, 4),  # each affix of a tuple
        ('"abc".endswith("zz", 0, 1)', False, 1),  # no more than the bounds hold
        ('"b" in "abc"', True, 2),
        ('"z" in "abc"', False, 3),
        ('"z" not in "abc"', True, 3),
        ("1 in [1, 2]", True, 0),  # not a string
        ('"abcdef"[1:4]', "bcd", 3),  # a copy: its length
        ('"abcdef"[:]', "abcdef", 0),  # the string itself: no copy
        ("[1, 2, 3][1:]", [2, 3], 0),
        ('"ab" + "c"', "abc", 3),
        ("1 + 2", 3, 0),
        ('re.compile("c").search("abcabc", 1)[0]', "c", 2),  # a character per failed start, then the match
        ('re.compile("z").search("abcabc", 1)', None, 5),  # every start from pos fails
        ('re.compile("z").search("abcabc", 1, 4)', None, 3),  # up to endpos
        # A start fails after reading what could still be a match from it: a repeat over the rest of a run, a
        # lookahead over the rest of the text, so that the search costs quadratically, as it does in `re`.
        ('re.compile("[^<]*</x>").search("aaaa<b")', None, 6 + 5 + 4 + 3 + 2 + 1),
        (r're.compile("(?=.*?</t>)", re.DOTALL).search("abcdef")', None, 6 + 5 + 4 + 3 + 2 + 1),
        # (800 starts: estimated from 8 of them, the midpoints of 8 equal parts: 750, 650, ... 50 characters)
        (r're.compile("(?=.*?</t>)", re.DOTALL).search("a" * 800) is None', True, 800 * 400),
        ('re.compile("<tool>").match("<toolbox")', None, 6),  # '<tool', then 'b' rules it out
        ('re.compile("<tool>").match("x<tool>", 1)[0]', "<tool>", 6),
        (r're.compile("(?=.*?</t>)", re.DOTALL).match("abcdef </")', None, 9),  # a lookahead reads to the end
        ('len(list(re.compile("a").finditer("abab")))', 2, 4),  # to the end once exhausted
        ('next(re.compile("a").finditer("xxabab"))[0]', "a", 3),  # to the last match taken
        ('re.compile("a").sub("b", "aaa")', "bbb", 3),
        ('regex.compile("abc").search("xxab", partial=True).partial', True, 4),  # partial: to the end
        ('regex.compile("abc").search("xxabc", 1)[0]', "abc", 4),
    ],
)
def test_each_operation_counts_the_characters_it_spans(expression: str, value: object, chars: int) -> None:
    assert counted(expression) == (value, chars)


def test_augmented_assignment_keeps_its_meaning_and_counts_string_copies() -> None:
    setup = "class Box:\n    def __init__(self):\n        self.text = 'ab'\n        self.items = [1]\n"
    source_run = "grow(Box())"
    setup += (
        "def grow(box):\n"
        "    items = box.items\n"
        "    box.items += (2,)\n"  # a list grows in place: `+` would refuse a tuple
        "    box.text += 'cde'\n"  # a new string of 5 characters
        "    total = 1\n"
        "    total += 2\n"
        "    return box.text, box.items, items is box.items, total\n"
    )
    assert counted(source_run, setup) == (("abcde", [1, 2], True, 3), 5)


def test_annotations_are_left_alone() -> None:
    setup = "def typed(buf: str, pos: int = 1) -> tuple[str, ...]:\n    head: str = buf[pos:]\n    return (head,)\n"
    assert counted("typed.__annotations__['return'], typed('abc')", setup) == (
        ("tuple[str, ...]", ("bc",)),
        2,
    )


# A parser that keeps the whole stream and searches it from the start on every feed, and one that keeps
# only what a delimiter split across chunks needs: the meter must tell them apart.
QUADRATIC = """
class Parser:
    def __init__(self):
        self.buffer = ""

    def feed(self, text):
        self.buffer += text
        return self.buffer.find("</end>")
"""
LINEAR = """
class Parser:
    def __init__(self):
        self.tail = ""

    def feed(self, text):
        window = self.tail + text
        self.tail = window[-5:]
        return "</end>" in window
"""


def work_per_char(source: str, length: int) -> float:
    module, meter = metered_module(source, f"meter_toy_{next(_NAMES)}", assembly=(), assembly_functions=())
    parser = module.Parser()
    for char in "x" * length:
        parser.feed(char)
    return sum(meter.scanning.values()) / length


def test_a_quadratic_parser_is_caught_and_a_linear_one_passes() -> None:
    quadratic = work_per_char(QUADRATIC, 8000) / work_per_char(QUADRATIC, 1000)
    linear = work_per_char(LINEAR, 8000) / work_per_char(LINEAR, 1000)
    assert quadratic > 7  # the work per character grows with the stream, 8x longer here
    assert 0.95 < linear < 1.05
