"""What the pages of ``mathsearch serve`` show beside a search: a whole thread, and a formula with
its visually identical instances in the collection.

Library calls over :class:`~mathsearch.searcher.Searcher` (one INDEX_DIR, opened once), so the web
layer only renders.  Every list is bounded: a thread's answers and comments as the collection has
them (a Math Stack Exchange thread is small), a formula's instances at ``limit``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError, NotFoundError
from .formula import visual_key
from .formula.view import representations
from .readers.html import strip_delimiters
from .records import LinkType
from .searcher import Searcher
from .store.store import StoredFormula, StoredPost

MAX_LATEX = 2000  # characters of a formula looked up by LaTeX (a parse is linear, but a page is not)


@dataclass(frozen=True)
class ThreadPost:
    post: StoredPost  # body: the HTML as stored (sanitise before showing it)
    comments: list[tuple[int, str]]  # (comment id, plain text with $LaTeX$)
    formulas: list[StoredFormula]  # every instance of the post and its comments


@dataclass(frozen=True)
class LinkedThread:
    thread_id: int
    title: str | None


@dataclass(frozen=True)
class Thread:
    thread_id: int
    title: str | None
    question: ThreadPost | None  # None when the collection holds answers of a question it lacks
    answers: list[ThreadPost]  # by score (highest first), then post id
    duplicates: list[LinkedThread]  # threads of the collection linked as duplicates, either way
    related: list[LinkedThread]


def thread_of(searcher: Searcher, post_id: int) -> Thread:
    """The thread holding ``post_id`` (a question or an answer)."""
    store = searcher.ctx.store
    post = store.post(post_id)
    if post is None:
        raise NotFoundError(f"post {post_id} is not in the collection of {searcher.index_dir}.")
    tid = post.thread_id
    question = store.post(tid)
    # A thread's answers as the site shows them: by votes (the post's score, not a search score), then post id.
    answers = sorted(store.answers_of(tid), key=lambda p: (-(p.score or 0), p.post_id))
    posts = ([question] if question is not None else []) + answers
    ids = [p.post_id for p in posts]
    comments = store.comments_of_posts(ids)

    def full(p: StoredPost) -> ThreadPost:
        return ThreadPost(p, comments.get(p.post_id, []), store.formulas_of(p.post_id))

    def linked(kind: LinkType) -> list[LinkedThread]:
        found = store.posts(i for i in store.linked(tid, kind) if i != tid)
        return [LinkedThread(i, found[i].title) for i in sorted(found)]

    return Thread(tid, question.title if question else None, full(question) if question else None,
                  [full(a) for a in answers], linked(LinkType.DUPLICATE), linked(LinkType.RELATED))


@dataclass(frozen=True)
class FormulaView:
    latex: str
    representations: dict  # mathsearch formula's view (formula.view.representations)
    visual_id: str | None  # the collection's visual id of this formula, when it holds it
    instances: list[StoredFormula]  # at most ``limit``, by formula id
    titles: dict[int, str | None]  # thread id -> title, for the instances' threads


def formula_view(searcher: Searcher, latex: str | None = None, formula_id: int | None = None,
                 limit: int = 50) -> FormulaView:
    """Every representation of a formula (given as LaTeX or as an instance id of the collection)
    and its visually identical instances: those sharing its visual id.  LaTeX typed by a person is
    found in the collection through the formula index (Task 2's top 50, the instances whose
    visual key equals the query's)."""
    store = searcher.ctx.store
    vid = None
    if formula_id is not None:
        f = store.formula(formula_id)
        if f is None:
            raise NotFoundError(f"formula {formula_id} is not in the collection of {searcher.index_dir}.")
        latex, vid = f.latex, f.visual_id
    if latex is None or not latex.strip():
        raise InputError("give a formula: its LaTeX (without $ delimiters) or its id.")
    if len(latex) > MAX_LATEX and formula_id is None:
        raise InputError(f"the formula has {len(latex):,} characters; at most {MAX_LATEX:,} are looked up.")
    if vid is None and formula_id is None:
        latex = strip_delimiters(latex)
        key = visual_key(latex)
        try:
            hits = searcher.search(f"${latex}$", task=2, k=50).hits
        except InputError:  # nothing to search for ("$"): no instance, the representations still shown
            hits = []
        for hit in hits:
            f = store.formula(hit.id)
            if f is not None and f.visual_id is not None and visual_key(f.latex) == key:
                vid = f.visual_id
                break
    instances = store.formulas_with_visual_id(vid, limit) if vid is not None else []
    if formula_id is not None and not instances:
        instances = [f]
    threads = store.posts({f.thread_id for f in instances})
    return FormulaView(latex, representations(latex[:MAX_LATEX]), vid, instances,
                       {t: p.title for t, p in threads.items()})
