"""The pattern dialect of docs/spec.md R14.4: RE2, after ECMAScript spellings are rewritten.

Python's `re` is not RE2, so a pattern is parsed here by RE2's grammar and written out as a
Python expression that means the same: character classes become explicit code point ranges,
`\\d \\w \\s \\b` their ASCII sets, `$` the end of the text, scoped flags `(?i:...)`, `(?U)` a
swap of greedy and lazy. What RE2 refuses raises PatternError. `re` backtracks, so this is a
reference, not a guard against slow patterns (Toolgate's runtimes match in linear time).
Unicode scripts (`\\p{Greek}`) are not in Python's unicodedata: such a pattern raises
Unsupported, and the caller reports it rather than guessing.
"""

import re
import sys
import unicodedata
from functools import lru_cache

MAX_REPEAT = 1000
MAX_CODE_POINT = 0x10FFFF


class PatternError(ValueError):
    """The pattern is not valid in the dialect (RE2 refuses it)."""


class Unsupported(PatternError):
    """Valid RE2 that this reference cannot translate (Unicode scripts)."""


# --- Step 1: the ECMAScript spellings R14.4 rewrites, in one left-to-right pass. ---------------

_KEPT_ESCAPES = set("nrtafvdDsSwWbBpPAzQE01234567\\")
_HEX = set("0123456789abcdefABCDEF")


def rewrite_ecmascript(pattern):
    out = []
    i = 0
    n = len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if d == "c":
                if i + 2 < n and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
                    out.append("\\x{%X}" % (ord(pattern[i + 2]) % 32))
                    i += 3
                else:
                    out.append("c")
                    i += 2
                continue
            if d == "u":
                if i + 2 < n and pattern[i + 2] == "{":
                    j = i + 3
                    while j < n and pattern[j] in _HEX:
                        j += 1
                    if j < n and pattern[j] == "}" and j > i + 3:
                        out.append("\\x")
                        i += 2
                        continue
                elif i + 5 < n and all(ch in _HEX for ch in pattern[i + 2 : i + 6]):
                    out.append("\\x{" + pattern[i + 2 : i + 6] + "}")
                    i += 6
                    continue
                out.append("u")
                i += 2
                continue
            if d == "x":
                valid = False
                if i + 2 < n and pattern[i + 2] == "{":
                    j = i + 3
                    while j < n and pattern[j] in _HEX:
                        j += 1
                    valid = j < n and pattern[j] == "}" and j > i + 3
                elif i + 3 < n and pattern[i + 2] in _HEX and pattern[i + 3] in _HEX:
                    valid = True
                out.append("\\x" if valid else "x")
                i += 2
                continue
            if d in _KEPT_ESCAPES:
                out.append("\\" + d)
                i += 2
                continue
            if d.isascii() and d.isalnum():
                out.append(d)
                i += 2
                continue
            out.append("\\" + d)
            i += 2
            continue
        if c == "/":
            out.append("\\/")
            i += 1
            continue
        if c == "[":
            if not in_class and pattern[i + 1 : i + 2] == "]":
                out.append("[^\\x00-\\x{10FFFF}]")
                i += 2
                continue
            if not in_class and pattern[i + 1 : i + 3] == "^]":
                out.append("[\\x00-\\x{10FFFF}]")
                i += 3
                continue
            in_class = True
        elif c == "]":
            in_class = False
        elif not in_class and c == "(" and pattern[i + 1 : i + 3] == "?<" and i + 3 < n and pattern[i + 3] not in "=!>)":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


# --- Character sets as sorted lists of (low, high) code point ranges. --------------------------


def _normalize(ranges):
    ranges = sorted(ranges)
    out = []
    for lo, hi in ranges:
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _negate(ranges):
    out = []
    nxt = 0
    for lo, hi in _normalize(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return out


DIGIT = [(0x30, 0x39)]
WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
SPACE = [(0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)]
PERL = {"d": DIGIT, "w": WORD, "s": SPACE}
POSIX = {
    "alnum": [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
    "alpha": [(0x41, 0x5A), (0x61, 0x7A)],
    "ascii": [(0x00, 0x7F)],
    "blank": [(0x09, 0x09), (0x20, 0x20)],
    "cntrl": [(0x00, 0x1F), (0x7F, 0x7F)],
    "digit": [(0x30, 0x39)],
    "graph": [(0x21, 0x7E)],
    "lower": [(0x61, 0x7A)],
    "print": [(0x20, 0x7E)],
    "punct": [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
    "space": [(0x09, 0x0D), (0x20, 0x20)],
    "upper": [(0x41, 0x5A)],
    "word": WORD,
    "xdigit": [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
}
_CATEGORIES = {"Cc", "Cf", "Cn", "Co", "Cs", "Ll", "Lm", "Lo", "Lt", "Lu", "Mc", "Me", "Mn", "Nd", "Nl", "No", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "Sc", "Sk", "Sm", "So", "Zl", "Zp", "Zs"}


# Names RE2 gives `\p{…}` besides the general categories: scripts and a few binary properties.
# Python's unicodedata has neither, so a pattern naming one raises Unsupported (it is valid).
_OTHER_NAMES = set(
    """ASCII_Hex_Digit Alphabetic Dash Emoji Emoji_Component Emoji_Modifier Emoji_Modifier_Base
    Emoji_Presentation Extended_Pictographic Hex_Digit Lowercase Math Quotation_Mark
    Terminal_Punctuation Uppercase White_Space Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian
    Avestan Balinese Bamum Bassa_Vah Batak Bengali Beria_Erfe Bhaiksuki Bopomofo Brahmi Braille
    Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian
    Common Coptic Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra
    Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Garay Georgian Glagolitic Gothic
    Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Gurung_Khema Han Hangul Hanifi_Rohingya Hanunoo
    Hatran Hebrew Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi Inscriptional_Parthian
    Javanese Kaithi Kannada Katakana Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki
    Khudawadi Kirat_Rai Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani
    Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek
    Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar
    Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham
    Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian
    Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong
    Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra
    Sharada Shavian Siddham Sidetic SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese
    Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Tai_Yo Takri Tamil
    Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Todhri Tolong_Siki Toto
    Tulu_Tigalari Ugaritic Unknown Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square""".split()
)


@lru_cache(maxsize=None)
def _category_ranges(name):
    """Code point ranges of a general category (one letter: every category starting with it; LC: Lu, Ll, Lt)."""
    if name == "Any":
        return ((0, MAX_CODE_POINT),)
    if len(name) == 1 and any(c.startswith(name) for c in _CATEGORIES):
        match = lambda cat: cat[0] == name  # noqa: E731
    elif name == "LC":
        match = lambda cat: cat in ("Lu", "Ll", "Lt")  # noqa: E731
    elif name in _CATEGORIES:
        match = lambda cat: cat == name  # noqa: E731
    elif name in _OTHER_NAMES:
        raise Unsupported("Unicode class %s (a script or property) is not in this reference" % name)
    else:
        raise PatternError("invalid character class range: unknown Unicode class %s" % name)
    out = []
    start = None
    for cp in range(MAX_CODE_POINT + 2):
        inside = cp <= MAX_CODE_POINT and match(unicodedata.category(chr(cp)))
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            out.append((start, cp - 1))
            start = None
    return tuple(out)


def _class_text(ranges):
    """A Python character class for ranges (never empty: an empty set is `[^\\x00-\\U0010ffff]`)."""
    ranges = _normalize(ranges)
    if not ranges:
        return "[^\\x00-\\U0010ffff]"

    def ch(cp):
        return "\\U%08x" % cp

    return "[" + "".join(ch(lo) if lo == hi else ch(lo) + "-" + ch(hi) for lo, hi in ranges) + "]"


# --- Step 2: RE2 syntax to a Python expression. ------------------------------------------------

_WORD_CLASS = "[0-9A-Za-z_]"
_BOUNDARY = "(?:(?<=%s)(?!%s)|(?<!%s)(?=%s))" % ((_WORD_CLASS,) * 4)
_NOT_BOUNDARY = "(?:(?<=%s)(?=%s)|(?<!%s)(?!%s))" % ((_WORD_CLASS,) * 4)


class _Parser:
    def __init__(self, text):
        self.s = text
        self.i = 0
        self.names = set()
        self.pending = []

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else None

    def error(self, message):
        raise PatternError(message)

    def parse(self):
        out = self.alternation({"i": False, "m": False, "s": False, "U": False}, top=True)
        if self.i != len(self.s):
            self.error("unexpected )")
        return out

    def alternation(self, flags, top=False):
        flags = dict(flags)
        branches = [self.sequence(flags)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence(flags))
        if not top and self.peek() != ")":
            self.error("missing )")
        return "|".join(branches)

    def sequence(self, flags):
        """Terms up to `|` or `)`; a bare `(?i)` changes `flags` for the rest of the group."""
        parts = []
        while True:
            c = self.peek()
            if c is None or c == "|" or c == ")":
                return "".join(parts)
            if c == "(" and self.peek(1) == "?" and self._bare_flags(flags):
                # A flag group is no operand: a repetition right after it repeats what came before
                # (RE2 reads `$(?s){2}` as `${2}`), and it separates two repetitions.
                self._repeat_previous(parts, flags)
                continue
            if self.s.startswith("\\Q\\E", self.i):
                # An empty quotation is no operand either: `a\Q\E*` is `a*`.
                self.i += 4
                self._repeat_previous(parts, flags)
                continue
            atom = self.atom(flags)
            parts.extend(self.pending)
            self.pending.clear()
            parts.append(self.repetition(atom, flags))

    def _repeat_previous(self, parts, flags):
        nxt = self.peek()
        if nxt in ("*", "+", "?") or (nxt == "{" and re.compile(r"\{[0-9]+(,[0-9]*)?\}").match(self.s, self.i)):
            if not parts:
                self.error("missing argument to repetition operator")
            parts[-1] = self.repetition(parts[-1], flags)

    # RE2's flag groups: flags, then optionally `-` and at least one flag (`(?)` is a no-op,
    # `(?-)` and `(?i-)` are refused).
    _FLAGS = r"([imsU]*)(?:-([imsU]+))?"

    def _set_flags(self, m, flags):
        for ch in m.group(1):
            flags[ch] = True
        for ch in m.group(2) or "":
            flags[ch] = False

    def _bare_flags(self, flags):
        m = re.compile(r"\(\?" + self._FLAGS + r"\)").match(self.s, self.i)
        if not m:
            return False
        self._set_flags(m, flags)
        self.i = m.end()
        return True

    def repetition(self, atom, flags):
        c = self.peek()
        quant = None
        if c in ("*", "+", "?"):
            quant = c
            self.i += 1
        elif c == "{":
            m = re.compile(r"\{([0-9]+)(,([0-9]*))?\}").match(self.s, self.i)
            if m:
                lo = int(m.group(1))
                hi = lo if m.group(2) is None else (None if m.group(3) == "" else int(m.group(3)))
                if lo > MAX_REPEAT or (hi is not None and (hi > MAX_REPEAT or hi < lo)):
                    self.error("invalid repeat count")
                quant = "{%d}" % lo if m.group(2) is None else ("{%d,}" % lo if hi is None else "{%d,%d}" % (lo, hi))
                self.i = m.end()
        if quant is None:
            return atom
        lazy = False
        if self.peek() == "?":
            lazy = True
            self.i += 1
        if flags["U"]:
            lazy = not lazy
        nxt = self.peek()
        if nxt in ("*", "+", "?") or (nxt == "{" and re.compile(r"\{[0-9]+(,[0-9]*)?\}").match(self.s, self.i)):
            self.error("invalid nested repetition op")
        if atom == "":
            self.error("missing argument to repetition operator")
        return "(?:%s)%s%s" % (atom, quant, "?" if lazy else "")

    def atom(self, flags):
        c = self.peek()
        if c in ("*", "+", "?") or (c == "{" and re.compile(r"\{[0-9]+(,[0-9]*)?\}").match(self.s, self.i)):
            self.error("missing argument to repetition operator")
        if c == "(":
            return self.group(flags)
        if c == "[":
            return self.wrap(_class_text(self.char_class(flags)), flags)
        if c == ".":
            self.i += 1
            return "(?s:.)" if flags["s"] else "[^\\n]"
        if c == "^":
            self.i += 1
            return "(?m:^)" if flags["m"] else "\\A"
        if c == "$":
            self.i += 1
            return "(?m:$)" if flags["m"] else "\\Z"
        if c == "\\":
            return self.escape(flags)
        self.i += 1
        return self.literal(ord(c), flags)

    def wrap(self, text, flags):
        return "(?i:%s)" % text if flags["i"] else text

    def literal(self, cp, flags):
        return self.wrap(re.escape(chr(cp)), flags)

    def group(self, flags):
        self.i += 1
        inner_flags = dict(flags)
        if self.peek() == "?":
            m = re.compile(r"\?P<([A-Za-z_][A-Za-z0-9_]*)>").match(self.s, self.i)
            if m:
                name = m.group(1)
                if name in self.names:
                    self.error("duplicate capture group name")
                self.names.add(name)
                self.i = m.end()
                body = self.alternation(inner_flags)
                self.i += 1
                return "(%s)" % body
            m = re.compile(r"\?" + self._FLAGS + ":").match(self.s, self.i)
            if m:
                self._set_flags(m, inner_flags)
                self.i = m.end()
            else:
                self.error("invalid or unsupported Perl syntax")
            body = self.alternation(inner_flags)
            self.i += 1
            return "(?:%s)" % body
        body = self.alternation(inner_flags)
        self.i += 1
        return "(%s)" % body

    def escape(self, flags):
        """An escape outside a class: an assertion, a class, or one character."""
        d = self.peek(1)
        if d is None:
            self.error("trailing backslash")
        if d == "A":
            self.i += 2
            return "\\A"
        if d == "z":
            self.i += 2
            return "\\Z"
        if d == "b":
            self.i += 2
            return _BOUNDARY
        if d == "B":
            self.i += 2
            return _NOT_BOUNDARY
        if d == "Q":
            end = self.s.find("\\E", self.i + 2)
            text = self.s[self.i + 2 :] if end < 0 else self.s[self.i + 2 : end]
            self.i = len(self.s) if end < 0 else end + 2
            # Each quoted character is its own atom: a repetition after `\E` repeats the last one.
            literals = [self.literal(ord(ch), flags) for ch in text]
            self.pending.extend(literals[:-1])
            return literals[-1] if literals else ""
        ranges = self.class_escape()
        if isinstance(ranges, int):
            return self.literal(ranges, flags)
        return self.wrap(_class_text(ranges), flags)

    def class_escape(self):
        """`\\d`-style classes (ranges) or one character (its code point), at a backslash."""
        d = self.peek(1)
        if d is None:
            self.error("trailing backslash at end of expression")
        self.i += 2
        if d in PERL:
            return list(PERL[d])
        if d in ("D", "W", "S"):
            return _negate(PERL[d.lower()])
        if d in ("p", "P"):
            negate = d == "P"
            if self.peek() == "{":
                end = self.s.find("}", self.i)
                if end < 0:
                    self.error("invalid character class range")
                name = self.s[self.i + 1 : end]
                self.i = end + 1
                if name.startswith("^"):
                    negate = not negate
                    name = name[1:]
            else:
                name = self.peek()
                if name is None:
                    self.error("invalid character class range")
                self.i += 1
            ranges = list(_category_ranges(name))
            return _negate(ranges) if negate else ranges
        simple = {"n": 10, "r": 13, "t": 9, "a": 7, "f": 12, "v": 11}
        if d in simple:
            return simple[d]
        if d == "x":
            if self.peek() == "{":
                end = self.s.find("}", self.i)
                digits = self.s[self.i + 1 : end] if end > 0 else ""
                if not digits or any(ch not in _HEX for ch in digits) or int(digits, 16) > MAX_CODE_POINT:
                    self.error("invalid escape sequence")
                self.i = end + 1
                return int(digits, 16)
            digits = self.s[self.i : self.i + 2]
            if len(digits) != 2 or any(ch not in _HEX for ch in digits):
                self.error("invalid escape sequence")
            self.i += 2
            return int(digits, 16)
        if d in "01234567":
            digits = d
            while len(digits) < 3 and self.peek() is not None and self.peek() in "01234567":
                digits += self.peek()
                self.i += 1
            if d != "0" and len(digits) == 1:
                self.error("invalid escape sequence (a backreference)")
            return int(digits, 8)
        # RE2: an escaped ASCII character that is no letter or digit is itself; any other is refused.
        if not d.isascii() or d.isalnum():
            self.error("invalid escape sequence")
        return ord(d)

    def char_class(self, flags):
        self.i += 1
        negate = False
        if self.peek() == "^":
            negate = True
            self.i += 1
        ranges = []
        first = True
        while True:
            c = self.peek()
            if c is None:
                self.error("missing closing ]")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[" and self.peek(1) == ":":
                m = re.compile(r"\[:(\^?)([a-z]+):\]").match(self.s, self.i)
                if m and m.group(2) in POSIX:
                    r = POSIX[m.group(2)]
                    ranges.extend(_negate(r) if m.group(1) else r)
                    self.i = m.end()
                    continue
            lo = self.class_atom()
            if isinstance(lo, list):
                ranges.extend(lo)
                continue
            if self.peek() == "-" and self.peek(1) not in (None, "]"):
                self.i += 1
                hi = self.class_atom()
                if isinstance(hi, list) or hi < lo:
                    self.error("invalid character class range")
                ranges.append((lo, hi))
            else:
                ranges.append((lo, lo))
        if flags["i"]:
            ranges = _fold(ranges)
        return _negate(ranges) if negate else _normalize(ranges)

    def class_atom(self):
        c = self.peek()
        if c == "\\":
            r = self.class_escape()
            return r
        self.i += 1
        return ord(c)


def _fold(ranges):
    """Ranges closed under simple case folding (what `(?i)` does to a class)."""
    out = list(ranges)
    for lo, hi in ranges:
        if hi - lo > 5000:
            continue
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            for other in {ch.lower(), ch.upper(), ch.casefold()}:
                if len(other) == 1:
                    out.append((ord(other), ord(other)))
    return _normalize(out)


@lru_cache(maxsize=4096)
def compile_pattern(pattern):
    """The compiled Python equivalent of a dialect pattern; PatternError when RE2 refuses it."""
    text = rewrite_ecmascript(pattern)
    python = _Parser(text).parse()
    try:
        return re.compile(python)
    except (re.error, OverflowError, RecursionError) as e:  # pragma: no cover - a translation gap
        raise PatternError(str(e))


def search(pattern, value):
    return compile_pattern(pattern).search(value) is not None


def is_valid(pattern):
    try:
        compile_pattern(pattern)
        return True
    except Unsupported:
        return True
    except PatternError:
        return False


if __name__ == "__main__":
    print(compile_pattern(sys.argv[1]).pattern)
