#!/usr/bin/env python3
"""Checks the size limits of lib/ (docs/architecture.md, "Size limits"): no
source file (.c, .h, .cpp, .hpp) over 600 lines, no function in one over
120 lines. Prints one line per breach, file:line first, and fails.

How it counts:
- a file: its lines, as `wc -l` counts them (plus an unterminated last line);
- a function: from its signature line to the line of its closing brace, both
  included, blank lines and comments inside too. The signature line is the
  first line of the definition's head: its return type, `static`,
  `template <...>` or qualified name, whichever comes first after the
  previous declaration, brace, comment or preprocessor line. A definition is
  a brace block whose head (the code since the last `;`, `{` or `}` at file,
  namespace, extern "C" or class scope) names a parameter list; lambdas,
  local classes and blocks inside a function are part of that function.

Why its own counter rather than lizard (PyPI; not a Debian package, and CI
installs Debian's alone through .ci/deps): this needs only brace matching,
about 200 lines of the standard library with a self-test of the tricky
cases (--self-test: strings, characters, raw strings, comments, digit
separators, preprocessor branches, initialisers, constructors' init lists,
operators), and its counts cannot change under a new version of a tool.
The lexer skips comments, string and character literals and preprocessor
lines, and reads the first branch of an #if/#ifdef (the #else branch of an
#if 0), so that braces split across #if branches still balance. A file it
cannot balance fails the check, named, rather than passing unread.

Usage: check-sizes.py [--max-file-lines N] [--max-function-lines N] DIR...
       check-sizes.py --self-test
"""
import os
import re
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120
SUFFIXES = (".c", ".h", ".cpp", ".hpp")
RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}
DIRECTIVE = re.compile(r"#\s*(\w+)(.*)", re.S)
ACCESS = re.compile(r"^(public|private|protected)$")
# A name before a parameter list that is not a function's.
NOT_A_NAME = {"__attribute__", "alignas", "__declspec", "decltype", "sizeof", "if", "for",
              "while", "switch", "return", "__asm__", "asm", "static_assert", "_Static_assert"}
NAME = re.compile(r"(~?[A-Za-z_]\w*(?:\s*<[^<>;{}]*>)?(?:\s*::\s*~?[A-Za-z_]\w*)*)\s*$")
OPERATOR = re.compile(r"((?:[A-Za-z_]\w*\s*::\s*)*operator\s*(?:[^\s(\w][^\s(]*(?:\s*\[\s*\])?)?)\s*\($")


class ParseError(Exception):
    pass


def blank(ch):
    return "\n" if ch == "\n" else " "


def strip_code(text):
    """`text` with comments, literals' contents, preprocessor lines and the
    branches of conditionals not read turned into spaces (newlines kept, so
    offsets and line numbers stay those of the file). A literal keeps its
    quotes: `extern "C"` reads `extern " "`."""
    out = []
    n = len(text)
    i = 0
    frames = []  # per #if: [branch taken, reading now]
    line_start = True  # only blanks so far on this line

    def reading():
        return all(f[1] for f in frames)

    def emit(s):
        out.append(s if reading() else "".join(blank(c) for c in s))

    while i < n:
        c = text[i]
        if c == "\n":
            out.append("\n")
            line_start = True
            i += 1
            continue
        if line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":  # a directive, with its continuations
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            directive(text[i:j], frames)
            out.append("".join(blank(ch) for ch in text[i:j]))
            i = j
            continue
        if c not in " \t\r\f\v":
            line_start = False
        if text.startswith("//", i):
            j = i
            while j < n and text[j] != "\n":
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            out.append("".join(blank(ch) for ch in text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(blank(ch) for ch in text[i:j]))
            i = j
        elif c == '"' and raw_string(text, i):
            open_paren = text.find("(", i)
            delim = text[i + 1:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            if open_paren < 0 or end < 0:
                raise ParseError(f"unterminated raw string at offset {i}")
            j = end + len(delim) + 2
            emit('"' + "".join(blank(ch) for ch in text[i + 1:j - 1]) + '"')
            i = j
        elif c == '"' or (c == "'" and not digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if j >= n or text[j] != c:
                raise ParseError(f"unterminated literal on line {text.count(chr(10), 0, i) + 1}")
            j += 1
            emit(c + "".join(blank(ch) for ch in text[i + 1:j - 1]) + c)
            i = j
        else:
            emit(c)
            i += 1
    if frames:
        raise ParseError("#if without #endif")
    return "".join(out)


def raw_string(text, i):
    """Whether the quote at i opens a C++ raw string (R"delim(...)delim")."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    return text[j:i] in RAW_PREFIXES


def digit_separator(text, i):
    """Whether the quote at i is C++14's digit separator (1'000'000)."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.'"):
        j -= 1
    return j < i and text[j].isdigit()


def directive(line, frames):
    """Follows #if/#ifdef/#ifndef/#elif/#else/#endif: the first branch is
    read, except that of an #if 0, whose next branch is read instead."""
    m = DIRECTIVE.match(line)
    if not m:
        return
    word, rest = m.group(1), m.group(2).strip()
    if word in ("if", "ifdef", "ifndef"):
        off = word == "if" and rest == "0"
        frames.append([not off, not off])
    elif word in ("elif", "elifdef", "elifndef", "else"):
        if not frames:
            raise ParseError(f"#{word} without #if")
        taken = frames[-1][0]
        frames[-1][1] = not taken and not (word == "elif" and rest == "0")
        frames[-1][0] = taken or frames[-1][1]
    elif word == "endif":
        if not frames:
            raise ParseError("#endif without #if")
        frames.pop()


def matching_paren(code, i):
    """Index of the ')' closing the '(' at i, or -1."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "(":
            depth += 1
        elif code[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


def function_name(head):
    """(name, offset in head just past its parameter list), or None when the
    head names no parameter list (a type, an initialiser, a namespace)."""
    depth = 0
    for i, c in enumerate(head):
        if c == "(" and depth == 0:
            close = matching_paren(head, i)
            if close < 0:
                return None
            m = OPERATOR.search(head[:i + 1])
            if m and m.group(1).endswith("operator") and not head[i + 1:close].strip():
                # operator(): its name's "()" comes before the parameters
                after = head.find("(", close + 1)
                end = matching_paren(head, after) if after >= 0 else -1
                return re.sub(r"\s+", "", m.group(1)) + "()", end + 1 if end >= 0 else len(head)
            if not m:
                m = NAME.search(head[:i])
            name = re.sub(r"\s+", "", m.group(1)) if m else None
            if name and name.split("::")[-1].split("<")[0] not in NOT_A_NAME:
                return name, close + 1
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
    return None


def classify(head):
    """What a '{' after `head` opens at file/namespace/class scope:
    ('container', None), ('function', name), ('init', None) (a brace
    initialiser of a constructor's member: the head goes on), or
    ('other', None)."""
    h = head.strip()
    if not h or h.endswith("=") or h.endswith(","):
        return "other", None
    if re.search(r"\bnamespace\b", h) or re.search(r'\bextern\s*"\s*"$', h):
        return "container", None
    fn = function_name(h)
    if fn:
        name, after = fn
        tail = h[after:]
        # A constructor's init list: a brace after a member's name
        # initialises it; the body's brace follows ')' or '}'.
        if re.search(r"(?<!:):(?!:)", tail) and re.search(r"[\w>]$", h):
            return "init", None
        return "function", name
    if re.search(r"\b(class|struct|union|enum)\b", h):
        return "container", None
    return "other", None


def functions(code):
    """[(name, first line, last line)] of the function definitions in
    stripped code; raises ParseError when its braces do not balance."""
    found = []
    stack = []  # (kind, name, start line)
    head_start = 0
    paren = 0  # depth of parentheses in the head at a container scope
    line_at = [0]  # offset of each line's start
    for i, c in enumerate(code):
        if c == "\n":
            line_at.append(i + 1)

    def line_of(off):
        lo, hi = 0, len(line_at) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_at[mid] <= off:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def at_container():
        return all(k == "container" for k, _, _ in stack)

    for i, c in enumerate(code):
        if c not in "{};:()":
            continue
        if not at_container():
            if c == "{":
                stack.append(("other", None, 0))
            elif c == "}":
                kind, name, start = stack.pop()
                if kind == "function":
                    found.append((name, start, line_of(i)))
                    head_start = i + 1
            continue
        # At file, namespace, extern "C" or class scope.
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        elif paren > 0:
            if c == "{":  # inside a head's parentheses: a default argument
                stack.append(("other", None, 0))
            continue
        elif c == ";":
            head_start = i + 1
        elif c == ":":
            if ACCESS.match(code[head_start:i].strip()):
                head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            kind, name = classify(head)
            if kind == "init":
                stack.append(("init", None, 0))
                continue
            first = len(head) - len(head.lstrip())
            stack.append((kind, name, line_of(head_start + first)))
            if kind == "container":
                head_start = i + 1
        elif c == "}":
            if not stack:
                raise ParseError(f"'}}' without '{{' on line {line_of(i)}")
            kind, name, start = stack.pop()
            if kind in ("container", "function"):
                head_start = i + 1
            if kind == "function":
                found.append((name, start, line_of(i)))
    if stack:
        raise ParseError(f"'{{' on line {stack[-1][2] or '?'} never closed")
    return found


def line_count(text):
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def check_file(path, shown, max_file, max_function):
    """The breaches of one file, as printed lines."""
    text = open(path, encoding="utf-8", errors="replace").read()
    errors = []
    lines = line_count(text)
    if lines > max_file:
        errors.append(f"{shown}:1: file has {lines} lines (limit {max_file})")
    try:
        found = functions(strip_code(text))
    except ParseError as e:
        return errors + [f"{shown}: cannot count its functions: {e}"], 0
    for name, first, last in found:
        length = last - first + 1
        if length > max_function:
            errors.append(f"{shown}:{first}: function {name} has {length} lines "
                          f"(limit {max_function})")
    return errors, len(found)


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SUFFIXES):
                yield os.path.join(d, name)


def check(roots, max_file=MAX_FILE_LINES, max_function=MAX_FUNCTION_LINES):
    errors, files, funcs = [], 0, 0
    for root in roots:
        top = os.path.dirname(os.path.abspath(root))
        for path in sources(root):
            e, n = check_file(path, os.path.relpath(os.path.abspath(path), top),
                              max_file, max_function)
            errors += e
            files += 1
            funcs += n
    return errors, files, funcs


def main(argv):
    max_file, max_function, roots = MAX_FILE_LINES, MAX_FUNCTION_LINES, []
    args = iter(argv)
    for a in args:
        if a == "--self-test":
            return self_test()
        if a == "--max-file-lines":
            max_file = int(next(args))
        elif a == "--max-function-lines":
            max_function = int(next(args))
        else:
            roots.append(a)
    if not roots:
        print(__doc__)
        return 2
    errors, files, funcs = check(roots, max_file, max_function)
    for e in errors:
        print("FAIL", e)
    if errors:
        print(f"{len(errors)} over the limits (files <= {max_file} lines, functions <= "
              f"{max_function}; split them by job, docs/architecture.md)")
        return 1
    print(f"ok: {files} files, {funcs} functions; none over {max_file} lines a file, "
          f"{max_function} a function")
    return 0


# --- self-test -----------------------------------------------------------

CASES = [
    # (source, [(name, first line, last line)])
    ('int f(void)\n{\n    const char *s = "{\\"{";\n    char c = \'}\';\n    return s[0] + c;\n}\n',
     [("f", 1, 6)]),
    ("static int\ng(int a) // {\n{\n    /* } } */\n    return a;\n}\n", [("g", 1, 6)]),
    ('auto h() {\n    auto s = R"x( } ")x";\n    auto t = u8R"(})";\n    return 1\'000 + s[0] + t[0];\n}\n',
     [("h", 1, 5)]),
    ("int k(int x) {\n#if A\n    if (x) {\n#else\n    if (!x) {\n#endif\n        x++;\n    }\n"
     "    return x;\n}\n", [("k", 1, 10)]),
    ("#if 0\nint dead( {\n#endif\n#define OPEN(x) \\\n  { x\nint live(void) { return 0; }\n",
     [("live", 6, 6)]),
    ('namespace a { namespace {\nextern "C" {\nint c1(void) { return 0; }\n}\n} }\n',
     [("c1", 3, 3)]),
    ("static const int tab[] = {1, 2, {3}};\nstruct s { int a; };\nstruct s *\nmake(void)\n"
     "{\n    static struct s v = {1};\n    return &v;\n}\nenum class E : int { A, B };\n",
     [("make", 3, 8)]),
    ("class C : public B {\npublic:\n    C(int x) : B(x), a_{x}, b_(x) {\n        run([](int y) { return y; });\n"
     "    }\n    bool operator==(const C &o) const { return a_ == o.a_; }\n"
     "    int operator()(int y) const\n    {\n        return y;\n    }\nprivate:\n    int a_, b_;\n};\n",
     [("C", 3, 5), ("operator==", 6, 6), ("operator()", 7, 10)]),
    ("template <typename T>\nT twice(T x) noexcept {\n    return x + x;\n}\n"
     "std::vector<int> v(int n = {}) { return {n}; }\nint ns::Cls::method(int x) const {\n    return x;\n}\n",
     [("twice", 1, 4), ("v", 5, 5), ("ns::Cls::method", 6, 8)]),
    ("__attribute__((visibility(\"default\"))) int api(void) {\n    return 0;\n}\n"
     "struct __attribute__((packed)) P { char c; };\n", [("api", 1, 3)]),
]


def self_test():
    failures = 0
    for src, want in CASES:
        try:
            got = functions(strip_code(src))
        except ParseError as e:
            got = f"ParseError: {e}"
        if got != want:
            failures += 1
            print(f"FAIL self-test: {src!r}\n  want {want}\n  got  {got}")
    for src in ("int f(void) {\n", "}\n", "int f(void) { char *s = \"x; }\n", "#if A\nint x;\n"):
        try:
            functions(strip_code(src))
            failures += 1
            print(f"FAIL self-test: {src!r} parsed, expected a ParseError")
        except ParseError:
            pass
    failures += self_test_fixture()
    if failures:
        print(f"{failures} self-test failures")
        return 1
    print(f"ok: {len(CASES) + 4} counting cases, the fixture fails as it should")
    return 0


def fixture_function(name, lines):
    """A function of exactly `lines` lines, signature to closing brace."""
    body = "".join(f"    x += {i};\n" for i in range(lines - 4))
    return f"int\n{name}(int x)\n{{\n{body}}}\n"


def self_test_fixture():
    """The command on a fixture tree: a file of 601 lines and a function of
    121 fail, a function of 120 and a file of 600 pass."""
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "lib")
        os.makedirs(os.path.join(lib, "sub"))
        short = fixture_function("just_fits", 120)
        with open(os.path.join(lib, "sub", "ok.c"), "w") as f:
            f.write(short + "\n" * (600 - line_count(short)))
        long_fn = fixture_function("too_long", 121)
        with open(os.path.join(lib, "sub", "big.cpp"), "w") as f:
            f.write("// a fixture\n" + long_fn + "\n" * (601 - 1 - line_count(long_fn)))
        r = subprocess.run([sys.executable, os.path.abspath(__file__), lib],
                           capture_output=True, text=True)
        print(r.stdout, end="")
        want = ["FAIL lib/sub/big.cpp:1: file has 601 lines (limit 600)",
                "FAIL lib/sub/big.cpp:2: function too_long has 121 lines (limit 120)"]
        got = [l for l in r.stdout.splitlines() if l.startswith("FAIL")]
        if r.returncode != 1 or got != want:
            print(f"FAIL self-test: fixture exit {r.returncode}, lines {got}, want 1, {want}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
