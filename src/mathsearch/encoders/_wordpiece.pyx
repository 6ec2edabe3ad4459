# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""A static encoder's word pieces, compiled (setup.py builds it; there is no .py twin).

:class:`mathsearch.encoders.static.StaticEncoder` calls this where it was built and the pure path
was not asked for; its reference is the ``tokenizers`` pipeline it replaces (``encode_batch_fast``
without special tokens, cut at ``max_tokens``), which stays the fallback for every text this
kernel declines.

Why: the tokenizer was ~90% of the student's encoding (docs/log/compiled.md), and the student
encodes every post of the collection.  A post's words repeat across the collection, so here each
distinct word is split into word pieces once, by the tokenizer's own WordPiece model
(``model.tokenize``), and remembered; a post is then one pass over its characters, which stops at
``max_tokens`` pieces instead of reading the whole post.

Only the pipeline it was written for is accepted (:func:`WordPieces.accepts`): BertNormalizer
lower-casing and cleaning, BertPreTokenizer, a WordPiece model, added tokens of ASCII characters
matched in the raw text (``normalized=False``, no stripping, not whole-word only; leftmost-longest,
as ``tokenizers`` does).  A text is read as ``tokenizers`` reads it: split where an added token
matches, then cut at ASCII white space (which the normaliser keeps as a space, so nothing crosses
it); each piece that is printable ASCII is words (runs of letters and digits, lower-cased) and
punctuation characters, split by the WordPiece model; any other piece (non-ASCII characters,
control characters the normaliser removes) goes whole through the tokenizer's own pipeline, and
is remembered as well.  tests/test_wordpiece_kernel.py compares both on every post of the sample
and on random text.
"""

import string

import numpy as np

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ
from libc.string cimport memcmp, memcpy

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)

# Per byte, as tokenizers' BERT pipeline reads ASCII: white space the normaliser maps to " ",
# punctuation the pre-tokenizer isolates (char::is_ascii_punctuation); PLAIN: printable ASCII, what
# this kernel splits itself (the other bytes stand for non-ASCII characters, or are control
# characters the normaliser removes, joining the characters beside them).
cdef bint _SPACE[256]
cdef bint _PUNCT[256]
cdef bint _PLAIN[256]
for _c in range(256):
    _SPACE[_c] = _c in (9, 10, 13, 32)
    _PUNCT[_c] = _c < 128 and chr(_c) in string.punctuation
    _PLAIN[_c] = 32 < _c < 127
cdef unsigned char _OTHER = 255  # a non-ASCII character in a text's byte copy

cdef enum:
    _NPAIRS = 16384  # 128 * 128 first-two-character buckets of the added tokens


cdef class WordPieces:
    """Word-piece ids of texts, for one ``tokenizers.Tokenizer`` (see the module)."""

    cdef object tokenize          # the tokenizer's WordPiece model's tokenize
    cdef object encode            # the tokenizer's encode: the whole pipeline, for the other pieces
    cdef dict cache               # a word (bytes, lower-cased) or another piece (str) -> its ids (int64, packed)
    cdef Py_ssize_t cache_max
    cdef list added               # the added tokens' contents (bytes), by bucket, longest first
    cdef long long[::1] added_ids
    cdef int start[_NPAIRS]       # per first two characters: the added tokens' range in ``added``
    cdef int end[_NPAIRS]
    cdef long long single[128]    # the id of a one-character added token, or -1
    cdef bint first[256]          # whether an added token starts with this character
    cdef public Py_ssize_t other_pieces  # pieces the tokenizer's pipeline read, over this object's life

    def __init__(self, tokenizer, Py_ssize_t cache_max=500_000):
        cdef Py_ssize_t i, k
        self.tokenize = tokenizer.model.tokenize
        self.encode = tokenizer.encode
        self.cache = {}
        self.cache_max = cache_max
        self.other_pieces = 0
        for i in range(256):
            self.first[i] = False
        for i in range(128):
            self.single[i] = -1
        for i in range(_NPAIRS):
            self.start[i] = 0
            self.end[i] = 0
        tokens = sorted(((t.content.encode("ascii"), int(i)) for i, t in tokenizer.get_added_tokens_decoder().items()),
                        key=lambda x: (x[0][0], x[0][1] if len(x[0]) > 1 else -1, -len(x[0])))
        self.added = []
        ids = []
        for content, tid in tokens:
            self.first[content[0]] = True
            if len(content) == 1:
                self.single[content[0]] = tid
                continue
            k = content[0] * 128 + content[1]
            if self.end[k] == 0:
                self.start[k] = len(self.added)
            self.added.append(content)
            ids.append(tid)
            self.end[k] = len(self.added)
        self.added_ids = np.asarray(ids if ids else [0], dtype=np.int64)

    @staticmethod
    def accepts(tokenizer) -> bool:
        """Whether ``tokenizer`` is the pipeline this kernel reads (see the module)."""
        import json

        try:
            spec = json.loads(tokenizer.to_str())
        except Exception:  # noqa: BLE001 - a tokenizer that cannot say what it is: the reference
            return False
        norm, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec.get("model") or {}
        if (norm.get("type") != "BertNormalizer" or not norm.get("lowercase") or not norm.get("clean_text")
                or pre.get("type") != "BertPreTokenizer" or model.get("type") != "WordPiece"
                or spec.get("truncation") or spec.get("padding")):
            return False
        for t in spec.get("added_tokens") or []:
            content = t.get("content", "")
            if (not content or not content.isascii() or t.get("normalized") or t.get("lstrip") or t.get("rstrip")
                    or t.get("single_word") or not all(_PLAIN[ord(c)] for c in content)):
                return False
        return True

    cdef bytes _word(self, const unsigned char* low, Py_ssize_t a, Py_ssize_t b):
        """The ids of the lower-cased ASCII word ``low[a:b]``, packed (remembered, else the model's)."""
        key = PyBytes_FromStringAndSize(<const char*>low + a, b - a)
        got = self.cache.get(key)
        if got is None:
            got = np.asarray([t.id for t in self.tokenize(key.decode("ascii"))], dtype=np.int64).tobytes()
            if len(self.cache) < self.cache_max:
                self.cache[key] = got
        return <bytes>got

    cdef bytes _other(self, str piece):
        """The ids of a piece with other characters, by the tokenizer's whole pipeline, packed."""
        got = self.cache.get(piece)
        if got is None:
            self.other_pieces += 1
            got = np.asarray(self.encode(piece, add_special_tokens=False).ids, dtype=np.int64).tobytes()
            if len(self.cache) < self.cache_max:
                self.cache[piece] = got
        return <bytes>got

    cdef Py_ssize_t _put(self, bytes packed, long long* out, Py_ssize_t room) noexcept:
        """Copy ``packed`` ids to ``out``, at most ``room`` of them; how many were copied."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(packed) // 8
        if n > room:
            n = room
        memcpy(out, PyBytes_AS_STRING(packed), n * 8)
        return n

    cdef Py_ssize_t _added_at(self, const unsigned char* s, Py_ssize_t i, Py_ssize_t n, long long* tid) noexcept:
        """The length of the longest added token at ``s[i:]`` (its id in ``tid``), or 0."""
        cdef unsigned char c0 = s[i], c1
        cdef Py_ssize_t j, size
        if not self.first[c0]:
            return 0
        if i + 1 < n and s[i + 1] < 128:
            c1 = s[i + 1]
            for j in range(self.start[c0 * 128 + c1], self.end[c0 * 128 + c1]):
                size = PyBytes_GET_SIZE(self.added[j])
                if size <= n - i and memcmp(s + i, PyBytes_AS_STRING(self.added[j]), size) == 0:
                    tid[0] = self.added_ids[j]
                    return size
        if self.single[c0] >= 0:
            tid[0] = self.single[c0]
            return 1
        return 0

    cdef Py_ssize_t _text(self, str text, Py_ssize_t max_tokens, long long* out, bytearray buf):
        """The ids of one text into ``out`` (at most ``max_tokens``); how many."""
        cdef Py_ssize_t n = len(text), i, j, a, count = 0, size
        cdef long long tid
        cdef const unsigned char* raw
        cdef unsigned char* low
        cdef unsigned char c
        cdef bint plain
        cdef int kind = PyUnicode_KIND(text)
        cdef void* data = PyUnicode_DATA(text)
        cdef Py_UCS4 u
        if len(buf) < 2 * n:
            buf.extend(bytes(2 * n - len(buf)))
        low = <unsigned char*><char*>buf
        if PyUnicode_IS_ASCII(text):
            raw = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &n)
        else:  # one byte per character: the ASCII ones, and _OTHER for the rest
            for i in range(n):
                u = PyUnicode_READ(kind, data, i)
                low[n + i] = <unsigned char>u if u < 128 else _OTHER
            raw = low + n
        for i in range(n):
            c = raw[i]
            low[i] = c + 32 if 65 <= c <= 90 else c
        i = 0
        while i < n and count < max_tokens:
            c = raw[i]
            if _SPACE[c]:
                i += 1
                continue
            size = self._added_at(raw, i, n, &tid) if self.first[c] else 0
            if size:
                out[count] = tid
                count += 1
                i += size
                continue
            # a piece: up to the next ASCII space or added token
            plain = _PLAIN[c]
            j = i + 1
            while j < n and not _SPACE[raw[j]] and not (self.first[raw[j]] and self._added_at(raw, j, n, &tid)):
                plain = plain and _PLAIN[raw[j]]
                j += 1
            if not plain:
                count += self._put(self._other(text[i:j]), out + count, max_tokens - count)
                i = j
                continue
            while i < j and count < max_tokens:  # words and punctuation
                if _PUNCT[raw[i]]:
                    count += self._put(self._word(low, i, i + 1), out + count, max_tokens - count)
                    i += 1
                    continue
                a = i
                while i < j and not _PUNCT[raw[i]]:
                    i += 1
                count += self._put(self._word(low, a, i), out + count, max_tokens - count)
            i = j
        return count

    def ids(self, list texts, Py_ssize_t max_tokens):
        """``(flat, lengths)``: each text's first ``max_tokens`` word-piece ids, one text after another
        (int64), and how many each has."""
        cdef Py_ssize_t k, n, total = 0, at = 0
        for text in texts:
            # in ASCII a piece covers one character at least; elsewhere a character can be several
            # (a Hangul syllable is its letters after NFD)
            total += min(len(<str>text), max_tokens) if PyUnicode_IS_ASCII(text) else max_tokens
        flat_array = np.empty(max(total, 1), dtype=np.int64)
        lengths_array = np.zeros(len(texts), dtype=np.int64)
        cdef long long[::1] flat = flat_array
        cdef long long[::1] lengths = lengths_array
        cdef bytearray buf = bytearray()
        for k in range(len(texts)):
            n = self._text(<str>texts[k], max_tokens, &flat[0] + at, buf)
            lengths[k] = n
            at += n
        return flat_array[:at], lengths_array
