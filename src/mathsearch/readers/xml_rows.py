"""Stream the ``<row .../>`` elements of a Stack Exchange / ARQMath XML file.

lxml ``iterparse`` does the work; memory stays flat because every row is cleared
once read.  A malformed row stops libxml2, so from that point on the file is read
line by line (both formats hold one row per line), each bad line is reported with
its number and counted, and every good row is still yielded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from lxml import etree

from ..errors import InputError
from ..records import ReadReport


def check_xml_file(path: Path) -> None:
    """Raise InputError unless ``path`` is an existing file that starts like XML."""
    if not path.exists():
        raise InputError(f"{path} does not exist.")
    if not path.is_file():
        raise InputError(f"{path} is not a file.")
    with path.open("rb") as fh:
        head = fh.read(512).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"<"):
        raise InputError(f"{path} is not an XML file (it does not start with '<').")


class _CountingReader:
    """File wrapper that tells ``progress`` how many bytes libxml2 has consumed."""

    def __init__(self, fh: BinaryIO, progress: Callable[[int], None]):
        self._fh = fh
        self._progress = progress

    def read(self, size: int = -1) -> bytes:
        chunk = self._fh.read(size)
        self._progress(len(chunk))
        return chunk


def iter_xml_rows(
    path: str | Path,
    report: ReadReport | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line, attributes)`` for each ``<row/>`` of ``path``.

    Malformed rows are counted in ``report.skipped['malformed XML row']`` with their line;
    the caller counts the rows it turns into records.
    """
    path = Path(path)
    check_xml_file(path)
    report = report if report is not None else ReadReport(source=str(path))
    last_line = 0
    seen_root = False
    root_tag = ""  # the root's name: the line-by-line recovery skips its tags, and no other
    open_rows: list[int] = []  # lines of the elements below the root started and not yet ended
    fh = path.open("rb")
    source = _CountingReader(fh, progress) if progress is not None else fh
    try:
        for event, elem in etree.iterparse(source, events=("start", "end"), huge_tree=True):
            if event == "start":
                if seen_root:
                    open_rows.append(elem.sourceline or 0)
                    if elem.tag == "row":
                        _stray_text(elem, path, report)
                else:
                    root_tag = str(elem.tag)
                seen_root = True
                continue
            parent = elem.getparent()
            if parent is None:  # the root's end: text after its last row
                if len(elem):
                    _stray_text(None, path, report, after=elem[-1])
                continue
            open_rows.pop()
            if elem.tag != "row":
                if parent.getparent() is None:  # a damaged row: <rw .../>
                    report.skip("malformed XML row", f"{path}:{elem.sourceline} (<{elem.tag}> is not a row)")
                continue
            line = elem.sourceline or 0
            attrs = dict(elem.attrib)
            elem.clear(keep_tail=True)  # the text after it is looked at by the next row
            # Drop rows already handed out so the tree never grows.
            parent = elem.getparent()
            if parent is not None:
                while elem.getprevious() is not None:
                    del parent[0]
            last_line = line
            yield line, attrs
        return
    except etree.XMLSyntaxError as exc:
        if not seen_root:
            raise InputError(f"{path} is not a readable XML file: {exc.msg}") from None
        # A row opened and never closed (<row ...> for <row .../>, or damaged: <rw ...>) holds the
        # rows after it, which were read; it is lost: say so.  Rows after last_line are read again line by line below.
        for line in open_rows:
            if line <= last_line:
                report.skip("malformed XML row", f"{path}:{line} (never closed)")
    finally:
        fh.close()
    yield from _iter_rows_by_line(path, last_line, report, root_tag)


def _stray_text(row, path: Path, report: ReadReport, after=None) -> None:
    """Report text between rows (a damaged row that became text: ``Id="1" .../>``) at its line;
    libxml2 reads it as the root's content and would drop it unsaid."""
    before = row.getprevious() if row is not None else after
    text = (before.tail if before is not None else row.getparent().text) or ""
    start = before if before is not None else row.getparent()
    if not text.strip():
        # Layout is newlines and the next row's indentation; a whole line of other whitespace
        # between rows is a row damaged into a character reference (&#9;): reported too.
        inner = text.split("\n")[1:-1]
        for i, blank in enumerate(inner, 1):
            if blank.strip(" \r"):
                report.skip("malformed XML row", f"{path}:{(start.sourceline or 0) + i} (whitespace outside a row)")
        return
    # Counted on from the row (or root tag) before it, one line each: libxml2 turns a lone CR
    # into a newline in the text but does not count it as a line.
    line = (start.sourceline or 0) + text[: len(text) - len(text.lstrip())].count("\n")
    report.skip("malformed XML row", f"{path}:{line} (text outside a row)")


# Lines that are no row: the declaration, a comment or doctype.
_NOT_A_ROW = re.compile(rb"<\?.*\?>|<!.*>")


def _iter_rows_by_line(path: Path, after_line: int, report: ReadReport,
                       root_tag: str = "") -> Iterator[tuple[int, dict[str, str]]]:
    """Recovery mode: parse each line after ``after_line`` on its own.  Only the root's own tags
    (``root_tag``) are skipped as no row: a damaged row (``<ro>``) is reported."""
    root = re.compile(rb"</?" + re.escape(root_tag.encode()) + rb"\s*>") if root_tag else None
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if number <= after_line:
                continue
            text = raw.strip()
            if not text or _NOT_A_ROW.fullmatch(text) or (root is not None and root.fullmatch(text)):
                continue  # declaration, comments, the root's tags, blank lines
            if not text.startswith(b"<row"):
                report.skip("malformed XML row", f"{path}:{number}")
                continue
            try:
                elem = etree.fromstring(text)
            except etree.XMLSyntaxError as exc:
                report.skip("malformed XML row", f"{path}:{number} ({exc.msg})")
                continue
            yield number, dict(elem.attrib)
