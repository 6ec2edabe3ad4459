# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The text analysis' hot loops, compiled (setup.py builds it; there is no .py twin).

:mod:`mathsearch.text.analysis` calls this where it was built and the pure path was not asked for;
its reference is the Python it replaces there (the ``_py`` functions), which stays the fallback for
every formula this kernel declines (it returns None):

* :meth:`FormulaTerms.math_tokens` is ``_math_tokens_py``: the formula's LaTeX tokens
  (``analysis._LATEX_TOKEN``), mapped to symbols, as ``m:`` tokens, classed ``p:`` pairs and the
  whole-formula key;
* :meth:`FormulaTerms.formula_words` is ``_formula_words_py``: ``latex_to_words`` (the parser's
  tokens, ``formula.words``' rules), lower-cased, cut into alphanumeric runs of at most 40
  characters;
* :meth:`WordTerms.words` and :meth:`WordTerms.raw` are ``_words_py`` and ``_raw_latex_terms_py``;
  :func:`split_math` is ``_split_math_py``.

Why: the text step spent most of its analysis on regular expressions that build a string per
token, and on Python loops over those strings (docs/log/compiled.md, ninth pass).  Here one pass
over the characters finds the tokens, and a string is made only for what the output holds (and for
the commands, numbers and words looked up in the reference's own tables).

The formula functions read ASCII LaTeX only: there the regular expressions' classes (``\\s``,
``\\w``) and ``lower()`` are the 128-entry tables built below from Python's own ``str`` methods.  A
formula with any other character, or with an HTML entity the parser would decode (``&`` and ``;``
both in it), goes to the reference.  The text functions read any text (Python's own Unicode tables
for the rest).  tests/test_text_terms_kernel.py compares each with its reference on every text and
formula of the sample and on random text.
"""

from cpython.unicode cimport (Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE, PyUnicode_AsUTF8AndSize, PyUnicode_DATA,
                              PyUnicode_KIND, PyUnicode_READ)

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)

# Per ASCII code: white space as the regular expressions' \s (str.isspace), a word character as
# [^\W_] (str.isalnum).
cdef bint _SPACE[128]
cdef bint _ALNUM[128]
for _c in range(128):
    _SPACE[_c] = chr(_c).isspace()
    _ALNUM[_c] = chr(_c).isalnum()

cdef Py_ssize_t _MAX_RUN = 40  # analysis._formula_words keeps runs of at most 40 characters
cdef Py_ssize_t _CACHE_MAX = 200_000  # numbers and commands are open-ended: the tables start again


cdef inline bint _alpha(char c) noexcept nogil:
    return (b'a' <= c <= b'z') or (b'A' <= c <= b'Z')


cdef inline bint _digit(char c) noexcept nogil:
    return b'0' <= c <= b'9'


cdef inline Py_ssize_t _number_end(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """``[0-9]+(?:\\.[0-9]+)?`` from ``i`` (a digit): where it ends."""
    while i < n and _digit(s[i]):
        i += 1
    if i + 1 < n and s[i] == b'.' and _digit(s[i + 1]):
        i += 2
        while i < n and _digit(s[i]):
            i += 1
    return i


cdef inline bint _number(str sym):
    """A symbol of two characters or more with a digit first: a number of _LATEX_TOKEN."""
    cdef Py_UCS4 first
    if len(sym) < 2:
        return False
    first = sym[0]
    return u'0' <= first <= u'9'


cdef list _runs(str word):
    """``[w for w in [^\\W_]+ of word.lower() if len(w) <= 40]`` for an ASCII word."""
    cdef Py_ssize_t n, i = 0, j
    cdef const char* s = PyUnicode_AsUTF8AndSize(word, &n)
    cdef list out = []
    while i < n:
        if not _ALNUM[<unsigned char> s[i]]:
            i += 1
            continue
        j = i
        while j < n and _ALNUM[<unsigned char> s[j]]:
            j += 1
        if j - i <= _MAX_RUN:
            out.append(word[i:j].lower())
        i = j
    return out


cdef class FormulaTerms:
    """The two per-formula term functions over the reference's own tables.

    ``symbol_of(token)``: a LaTeX token's symbol after aliasing, "" when dropped (analysis'
    ``_SYMBOL_TERMS``); ``key_of(symbols)``: the whole-formula token of a formula's symbols
    (analysis' ``symbols_key``); ``char_words`` and ``skipped``: ``formula.words``' tables.
    """

    cdef object symbol_of, key_of
    cdef dict char_words
    cdef frozenset skipped
    cdef list char_sym        # per ASCII code: the symbol of that one-character token
    cdef list char_runs       # per ASCII code: the runs of that one-character token's word
    cdef dict m_token         # symbol -> "m:" + symbol
    cdef dict command_runs    # command name -> the runs of its word (empty: no word)
    cdef tuple dots_runs, assign_runs

    def __init__(self, symbol_of, key_of, dict char_words, skipped):
        self.symbol_of = symbol_of
        self.key_of = key_of
        self.char_words = char_words
        self.skipped = frozenset(skipped)
        self.char_sym = [symbol_of(chr(c)) for c in range(128)]
        self.char_runs = [tuple(_runs(self._char_word(chr(c)))) for c in range(128)]
        self.dots_runs = tuple(_runs(self._char_word("...")))
        self.assign_runs = tuple(_runs(self._char_word(":=")))
        self.m_token = {}
        self.command_runs = {}

    cdef str _char_word(self, str tok):
        """latex_to_words' word of a token that is not a command and does not start alphanumeric."""
        w = self.char_words.get(tok)
        if w is None:
            w = tok if tok.isalnum() else ""
        return w

    cdef inline str _symbol(self, str tok):
        return <str> self.symbol_of(tok)  # the reference's own table, filled and bounded by itself

    cdef inline str _m(self, str sym):
        t = self.m_token.get(sym)
        if t is None:
            if len(self.m_token) >= _CACHE_MAX:
                self.m_token.clear()
            t = self.m_token[sym] = "m:" + sym
        return <str> t

    cpdef object math_tokens(self, str latex):
        """``analysis._math_tokens_py(latex)``, or None for LaTeX that is not ASCII."""
        if not PyUnicode_IS_ASCII(latex):
            return None
        cdef Py_ssize_t n, i = 0, j, k, m
        cdef const char* s = PyUnicode_AsUTF8AndSize(latex, &n)
        cdef char c
        cdef list syms = []
        cdef str sym
        while i < n:
            c = s[i]
            if c == b'\\':  # \\[A-Za-z]+ | \\. (not a line break)
                if i + 1 < n and _alpha(s[i + 1]):
                    j = i + 2
                    while j < n and _alpha(s[j]):
                        j += 1
                elif i + 1 < n and s[i + 1] != b'\n':
                    j = i + 2
                else:  # a backslash no alternative matches
                    i += 1
                    continue
                sym = self._symbol(latex[i:j])
            elif _digit(c):
                j = _number_end(s, i, n)
                sym = self._symbol(latex[i:j])
            elif _SPACE[<unsigned char> c]:
                i += 1
                continue
            else:  # [A-Za-z] | [^\sA-Za-z0-9\\]: one character
                j = i + 1
                sym = <str> self.char_sym[<unsigned char> c]
            if sym:
                syms.append(sym)
            i = j
        m = len(syms)
        if m == 0:
            return ()
        out = [self._m(sym) for sym in syms]
        # Numbers (a symbol of two characters or more, a digit first) are a class in the pairs.
        classed = ["#" if _number(sym) else sym for sym in syms]
        for k in range(m - 1):
            out.append(f"p:{classed[k]}|{classed[k + 1]}")
        out.append(self.key_of(syms))
        return tuple(out)

    cdef list _command(self, str name):
        """The runs of a command's word: empty for a control symbol that makes none (the caller has
        already passed over the skipped commands)."""
        r = self.command_runs.get(name)
        if r is None:
            if len(self.command_runs) >= _CACHE_MAX:
                self.command_runs.clear()
            if name == "{":
                r = ["lbrace"]
            elif name == "}":
                r = ["rbrace"]
            elif name == "|":
                r = ["norm"]
            elif name.isalpha():
                r = _runs(name)
            else:
                r = []
            self.command_runs[name] = r
        return <list> r

    cpdef object formula_words(self, str latex):
        """``analysis._formula_words_py(latex)``, or None for LaTeX that is not ASCII or may hold an
        HTML entity (the parser's tokenizer decodes ``&name;``)."""
        if not PyUnicode_IS_ASCII(latex) or ("&" in latex and ";" in latex):
            return None
        cdef Py_ssize_t n, i = 0, j
        cdef const char* s = PyUnicode_AsUTF8AndSize(latex, &n)
        cdef char c
        cdef list out = []
        cdef list env = []
        cdef bint skip_env_name = False
        while i < n:
            c = s[i]
            if c == b'\\':  # \\[a-zA-Z]+ | \\. (anything, re.S) | a last lone backslash (\S)
                if i + 1 < n and _alpha(s[i + 1]):
                    j = i + 2
                    while j < n and _alpha(s[j]):
                        j += 1
                else:
                    j = i + 2 if i + 1 < n else i + 1
                name = latex[i + 1:j]
                i = j
                if name in self.skipped:
                    skip_env_name = name == "begin" or name == "end"
                    continue
                out += self._command(name)
                continue
            if _SPACE[<unsigned char> c]:
                i += 1
                continue
            if _digit(c):
                j = _number_end(s, i, n)
            elif c == b'.' and i + 2 < n and s[i + 1] == b'.' and s[i + 2] == b'.':
                j = i + 3
            elif c == b':' and i + 1 < n and s[i + 1] == b'=':
                j = i + 2
            else:
                j = i + 1
            if j == i + 1 and c == b'%':  # the tokenizer drops a bare %
                i = j
                continue
            if skip_env_name:
                if j == i + 1 and c == b'{':
                    pass
                elif j == i + 1 and c == b'}':
                    skip_env_name = False
                    if env:
                        out += _runs("".join(env))
                        env.clear()
                else:
                    env.append(latex[i:j])
                i = j
                continue
            if _ALNUM[<unsigned char> c]:
                if j == i + 1:
                    out += <tuple> self.char_runs[<unsigned char> c]
                else:
                    out += _runs(latex[i:j])
            elif j == i + 1:
                out += <tuple> self.char_runs[<unsigned char> c]
            elif j == i + 3:
                out += self.dots_runs
            else:
                out += self.assign_runs
            i = j
        return tuple(out)


cdef class WordTerms:
    """:func:`analysis.words` and :func:`analysis.raw_latex_terms`: the runs of ``[^\\W_]+`` (a run
    of characters that are ``str.isalnum``) in the lower-cased text, through the reference's
    ``_WORD_TERMS`` table (words) or its stop words and length limit (raw terms).  ASCII text is
    read as it is, its runs lower-cased one by one; any other text is lower-cased first (a
    character may lower to two)."""

    cdef object term_of
    cdef frozenset stopwords

    def __init__(self, term_of, stopwords):
        self.term_of = term_of
        self.stopwords = frozenset(stopwords)

    cdef list _runs(self, str text, bint raw):
        cdef bint ascii = PyUnicode_IS_ASCII(text)
        if not ascii:
            text = text.lower()
        cdef Py_ssize_t n = len(text), i = 0, j
        cdef int kind = PyUnicode_KIND(text)
        cdef void* s = PyUnicode_DATA(text)
        cdef Py_UCS4 c
        cdef bint upper
        cdef list out = []
        cdef object term_of = self.term_of
        cdef frozenset stopwords = self.stopwords
        while i < n:
            c = PyUnicode_READ(kind, s, i)
            if not (_ALNUM[c] if c < 128 else Py_UNICODE_ISALNUM(c)):
                i += 1
                continue
            j = i
            upper = False
            while j < n:
                c = PyUnicode_READ(kind, s, j)
                if not (_ALNUM[c] if c < 128 else Py_UNICODE_ISALNUM(c)):
                    break
                upper |= u'A' <= c <= u'Z'
                j += 1
            if not raw or j - i <= _MAX_RUN:
                w = text[i:j]
                if upper and ascii:
                    w = w.lower()
                if raw:
                    if w not in stopwords:
                        out.append(w)
                else:
                    t = term_of(w)
                    if t:
                        out.append(t)
            i = j
        return out

    cpdef list words(self, str text):
        return self._runs(text, False)

    cpdef list raw(self, str text):
        return self._runs(text, True)


cdef inline Py_ssize_t _find2(int kind, void* s, Py_ssize_t n, Py_ssize_t i, Py_UCS4 a, Py_UCS4 b) noexcept:
    """Where the two characters ``ab`` first start at or after ``i`` (-1: nowhere)."""
    while i + 1 < n:
        if PyUnicode_READ(kind, s, i) == a and PyUnicode_READ(kind, s, i + 1) == b:
            return i
        i += 1
    return -1


cpdef tuple split_math(str text):
    """``analysis.split_math(text)``: ``dollar_math``'s plain-text pattern (code in backticks, ``\\$``,
    ``$$..$$``, ``$..$``, ``\\(..\\)``, ``\\[..\\]``, re.S) read left to right as its ``finditer``
    does (the first alternative that matches at a position wins; its non-greedy bodies end at the
    first closing delimiter), the prose joined by spaces, each formula stripped (str.strip)."""
    cdef Py_ssize_t n = len(text), p = 0, q, start, end = 0, a, b, pos = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void* s = PyUnicode_DATA(text)
    cdef Py_UCS4 c, c1
    cdef list prose = []
    cdef list formulae = []
    while p < n:
        c = PyUnicode_READ(kind, s, p)
        c1 = PyUnicode_READ(kind, s, p + 1) if p + 1 < n else 0
        if c == u'`':  # `[^`]*`: code, not math
            q = p + 1
            while q < n and PyUnicode_READ(kind, s, q) != u'`':
                q += 1
            p = q + 1 if q < n else p + 1
            continue
        if c == u'\\' and c1 == u'$':  # an escaped dollar
            p += 2
            continue
        if c == u'\\' and (c1 == u'(' or c1 == u'['):
            q = _find2(kind, s, n, p + 3, u'\\', u')' if c1 == u'(' else u']')
            if q < 0:
                p += 1
                continue
            a, b, end = p + 2, q, q + 2
        elif c == u'$':
            q = _find2(kind, s, n, p + 3, u'$', u'$') if c1 == u'$' else -1
            if q >= 0:
                a, b, end = p + 2, q, q + 2
            else:  # \$(?:[^$\\]|\\.)+?\$: the first dollar not after a backslash's pair
                q = p + 1
                while q < n:
                    c = PyUnicode_READ(kind, s, q)
                    if c == u'$':
                        break
                    q += 2 if c == u'\\' else 1
                if q >= n or q == p + 1:
                    p += 1
                    continue
                a, b, end = p + 1, q, q + 1
        else:
            p += 1
            continue
        start = p
        p = end
        while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, s, a)):
            a += 1
        while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, s, b - 1)):
            b -= 1
        if a < b:  # a formula of white space alone is left in the prose
            prose.append(text[pos:start])
            formulae.append(text[a:b])
            pos = end
    if not formulae:
        return text, []
    prose.append(text[pos:])
    return " ".join(prose), formulae
