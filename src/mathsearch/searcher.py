"""One search service for every face: ``mathsearch search`` today, the web page and the assessment
tool tomorrow.

``Searcher(index_dir).search("text with $x^2$", task=1, k=10)`` runs a system (the task's default
unless named) and decorates its hits for a person: the thread title, a snippet around the query's
words, and the formulae a hit shares with the query, each cut so that no field can grow without
bound (a 1 MB formula in the collection must not make a 1 MB line).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from .answers import NO_ANSWER
from .errors import InputError
from .formula.analysis import AnalyzerConfig, FormulaAnalyzer
from .formula.opt import ONode
from .formula.wildcards import has_variables, match, query_variables
from .formula.wildcards import to_latex as wildcard_latex
from .ranking import Ranking
from .readers.snippets import post_snippet
from .systems import Answerer, Ranker, SearchContext, SearchQuery, make_system, needs_of, resolve, spec
from .systems.closeness import NO_CLOSE_MATCH, NO_CLOSE_MATCH_BELOW, evidence, no_terms_notice, query_terms
from .systems.narrowing import filtered, matching
from .systems.runner import top
from .systems.spelling import Spelling, spelling
from .text.analysis import formula_key, split_math
from .text.filters import QueryFilters, parse_filters
from .text.plainmath import to_latex

FILTER_DEPTH = 1000  # hits ranked before filters keep the first k: a filter rarer than that finds fewer
FILTERED_ANSWER_DEPTH = 100  # a filtered question's Task 1 ranking, deeper than any Task 3 choice reads
MAX_SHOWN = 200  # characters of a title or matched formula shown, as a snippet is cut at 200
MAX_MATCHED = 10  # matched formulae listed per hit
NO_POST = "[post not in the index]"  # the snippet of a hit whose post the store lacks
# What a query must hold: a character besides white space, dollars and ASCII punctuation (a
# letter, a digit, a symbol such as ∞), or a $formula$ with something in it.  "?" or "..." alone
# has no term for any index, and the vectors' nearest posts to it are noise.  The API's pattern for
# ``q`` is this one (\x1c-\x1f: white space to Python, not to the API's regex).
SEARCHABLE = r"[^\s\x1c-\x1f$!-/:-@\[-`{-~]|\$[^$]*[^\s\x1c-\x1f$][^$]*\$"
_SEARCHABLE = re.compile(SEARCHABLE)


def cap(text: str, width: int = MAX_SHOWN) -> tuple[str, bool]:
    """``text`` cut to ``width`` characters (with "..." after it), and whether it was cut."""
    if len(text) <= width:
        return text, False
    return text[:width] + "...", True


# What LaTeX would misread: a name spelt out (sqrt, pi, sin), brackets as groups (e^(i pi), (a)/(b)).
_PLAIN_ONLY = re.compile(r"[A-Za-z]{2,}|[\^_]\(|\)\s*/|/\s*\(|[√∫∑π∞≤≥≠²³]")


def formula_query(query: str) -> str:
    """A Task 2 query as the systems read it: typed without ``$``, ``\\(`` or ``\\[``, the whole
    query is one formula (``x^2+y^2`` searches as ``$x^2+y^2$``); otherwise it is unchanged."""
    if "$" in query or split_math(query)[1] or not query.strip():
        return query
    # typed without LaTeX ("sqrt(x^2+1)", "e^(i pi)"): the formula it spells; LaTeX as it is
    plain = to_latex(query) if _PLAIN_ONLY.search(query) and "\\" not in query else None
    return f"${plain or query.strip()}$"


def searched_as(query: str, task: int = 1) -> list[dict[str, str]]:
    """The maths of ``query`` typed without LaTeX and the LaTeX it is searched as
    (``[{"typed": "sqrt 2", "latex": "\\sqrt{2}"}]``): what the page and the API show, so that a
    user sees what was understood (:attr:`ParsedQuery.searched_as`).  Empty when the query has none
    (its formulae are all ``$...$``) or is empty."""
    try:
        return parse_query(query, task).searched_as_json()
    except InputError:
        return []


def bindings_of(pattern: ONode, latex: str) -> dict[str, str] | None:
    """``{variable name: the LaTeX it matched}`` of one formula; None when it does not match."""
    found = match(pattern, _PATTERN_ANALYZER.analyze(latex).parsed.opt)
    return {name: wildcard_latex(node) for name, node in found.items()} if found is not None else None


_PATTERN_ANALYZER = FormulaAnalyzer(AnalyzerConfig(cache_size=20_000, keep_trees=True))


@dataclass(frozen=True)
class ParsedQuery:
    """A query as a person typed it, analysed once (:func:`parse_query`): its filters, its maths
    typed without LaTeX read as formulae, Task 2's one formula and query variables.  The ranking,
    the decoration of hits, the notices and the page all read this one object; none of them reads
    the typed text again."""

    typed: str  # as typed, filters included
    task: int  # 1 or 2 (a Task 3 question is read as Task 1 reads it)
    filters: QueryFilters
    query: SearchQuery  # what the systems are given
    searched: str  # the text searched, its maths as $LaTeX$ (Task 2: one formula), filters out
    searched_as: tuple[tuple[str, str], ...]  # (typed, LaTeX) of maths typed without LaTeX
    pattern: ONode | None = None  # Task 2's query variables (?a) as an operator tree
    bare_formula: bool = False  # Task 2 typed without $: the whole query is one formula

    @cached_property
    def formulae(self) -> tuple[str, ...]:
        """The LaTeX of the query's formulae (the parts of hit formulae that match are marked)."""
        return tuple(split_math(self.searched)[1])

    @cached_property
    def marked_formulae(self) -> tuple[str, ...]:
        """:attr:`formulae` as a hit's matching parts are marked by: a query variable stands for any
        subexpression, so it marks none (``?a^2+?b^2`` boxed the ``a`` of ``a^2+b^2`` only)."""
        return tuple(query_variables(f)[0] if has_variables(f) else f for f in self.formulae)

    @cached_property
    def formula_keys(self) -> frozenset[str]:
        """Task 1: the keys (:func:`~mathsearch.text.analysis.formula_key`) of the query's formulae,
        whose instances in a hit are listed as matched."""
        return frozenset(formula_key(latex) for latex in self.formulae) if self.task == 1 else frozenset()

    @property
    def title_words(self) -> set[str]:
        """The query's words a snippet is cut around."""
        return set(self.query.bags.title_words)

    def searched_as_json(self) -> list[dict[str, str]]:
        return [{"typed": typed, "latex": latex} for typed, latex in self.searched_as]


def parse_query(typed: str, task: int = 1, tags: tuple[str, ...] = ()) -> ParsedQuery:
    """The one analysis of a typed query (Tasks 1 and 2; a Task 3 question as Task 1): an empty
    query, or one of filters only, is refused with an :class:`~mathsearch.errors.InputError`."""
    if task not in (1, 2, 3):
        raise InputError(f"task must be 1 (answers), 2 (formulae) or 3 (one answer), not {task}.")
    if not typed.strip() or not typed.replace("$", "").strip():
        what = "words or a $formula$" if task != 2 else "a formula"
        raise InputError(f"the query is empty; give {what} to search for.")
    text, filters = parse_filters(typed)
    if filters and not text.replace("$", "").strip():
        raise InputError(f"the query has only filters ({filters.describe()}); give words or a $formula$ to search for.")
    if not _SEARCHABLE.search(text):
        raise InputError(f"the query {text.strip()[:40]!r} has no word, number or formula to search for"
                         + (" (a formula of punctuation alone is searched as $LaTeX$, e.g. $+$)." if task == 2 else "."))
    if task != 2:
        q = SearchQuery.from_text(text, tags=tags)
        return ParsedQuery(typed, 1, filters, q, q.title, tuple((s.typed, s.latex) for s in q.understood))
    searched = formula_query(text)
    plain = searched[1:-1] if searched != text else None
    understood = ((text.strip(), plain),) if plain and plain != text.strip() else ()
    formulae = split_math(searched)[1]
    latex = formulae[0] if formulae else text.strip().strip("$")
    pattern, given = None, searched
    if has_variables(latex):  # query variables: the formula's structure finds candidates, the tree match decides
        with_placeholders = query_variables(latex)[0]
        pattern = _PATTERN_ANALYZER.analyze(with_placeholders).parsed.opt
        given = f"${with_placeholders}$"
    q = SearchQuery.from_text(given, tags=tags)
    return ParsedQuery(typed, 2, filters, q, searched, understood, pattern, searched != text)


def _number(hit_id: str) -> int | str:
    return int(hit_id) if hit_id.isdigit() else hit_id


@dataclass(frozen=True)
class SearchHit:
    """One hit as a person sees it: ``id`` is the answer (Task 1) or formula instance (Task 2);
    ``snippet`` plain text with $LaTeX$, never cut inside a formula; ``bindings``, for Task 2 with
    query variables (?a, \\qvar{a}), the LaTeX each variable matched in this formula.  The API's
    JSON and its schema are this record's."""

    rank: int
    id: int | str
    post_id: int | None
    score: float
    thread_title: str | None
    snippet: str
    matched_formulae: list[str]  # at most MAX_MATCHED, each cut at MAX_SHOWN characters
    matched_total: int
    cut: list[str]  # the fields shortened: "thread_title", "matched_formulae"
    visual_id: str | None = None  # Task 2: the formula's visual id (instances that look the same share it)
    bindings: dict[str, str] | None = None  # Task 2 with query variables: {name: the LaTeX ?name matched}


@dataclass(frozen=True)
class SearchResult:
    query: str
    task: int
    system: str  # the spec that ran
    hits: list[SearchHit]
    notices: list[str] = field(default_factory=list)  # read before the hits (filters, no close match)
    searched_as: list[dict[str, str]] = field(default_factory=list)  # maths typed without LaTeX, as searched
    suggestion: str | None = None  # the query with its words no post holds respelt ("did you mean")

    def as_json(self) -> dict:
        return {"query": self.query, "system": self.system, "hits": [asdict(h) for h in self.hits],
                "notices": self.notices, "searched_as": self.searched_as, "suggestion": self.suggestion}


def unknown_words_notice(spelt: Spelling) -> str:
    """'No post of this collection holds "a" or "b".' (the respelt query is the result's
    ``suggestion``: each face offers it in its own way)."""
    quoted = [f'"{w}"' for w in spelt.unknown]
    said = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"No post of this collection holds {said}."


class Searcher:
    """Searches one INDEX_DIR; the indexes open on first use and stay open (a server keeps one).

    Examples:
        >>> searcher = Searcher("index")  # mathsearch index ../shared/data/arqmath/collection --index index
        >>> [hit.rank for hit in searcher.search("harmonic series diverges", k=2).hits]
        [1, 2]
    """

    def __init__(self, index_dir: str | Path):
        self.index_dir = Path(index_dir)
        self.ctx = SearchContext(self.index_dir)
        self._analyzer = _PATTERN_ANALYZER
        self._spellings: dict[tuple[str, str, str], Spelling] = {}

    def system_for(self, task: int, system: str | None = None) -> str:
        """The spec to run: ``system`` checked against ``task``, or the task's default
        (:func:`mathsearch.systems.resolve`)."""
        return spec(self._ranker(task, system))

    def _ranker(self, task: int, system: str | None) -> Ranker:
        sys_obj = resolve(task, system, self.index_dir, tasks=(1, 2))
        assert isinstance(sys_obj, Ranker), sys_obj  # Tasks 1 and 2 rank
        return sys_obj

    def load_models(self, tasks: tuple[int, ...] = (1, 2, 3)) -> list[str]:
        """Open the indexes and load the query encoders that the default system of each of ``tasks``
        needs (Task 3: the Task 1 ranking it draws from), encoding one query so that the first search
        pays for nothing; the names of the encoders they need (loaded now, or before in this
        process).  A server calls it before it says it is serving; the CLI never does (a search
        loads only what its own system needs, when it needs it)."""
        specs = [self.system_for(t) for t in tasks if t in (1, 2)]
        if 3 in tasks:
            base = self.answer_base()
            specs += [base] if base is not None else []
        needed: set[str] = set()
        for name in specs:
            sys_obj = make_system(name)
            needed.update(n for n in needs_of(sys_obj) if self.ctx.has(n))
            config_for = getattr(sys_obj, "config_for", None)  # (ours: what it runs follows the index)
            if callable(config_for):
                needed.update(n for n in config_for(self.index_dir).needs() if self.ctx.has(n))
        for name in sorted(needed):
            self.ctx.open(name)
        if "dense" not in needed:
            return []
        self.ctx.dense.encode("warm up")  # (torch's first call costs more than the next ones)
        return [str(getattr(self.ctx.dense.query_encoder(), "name", "dense"))]

    @staticmethod
    def parse(query: str | ParsedQuery, task: int = 1, tags: tuple[str, ...] = ()) -> ParsedQuery:
        """``query`` analysed once (:func:`parse_query`); a :class:`ParsedQuery` is passed through."""
        return query if isinstance(query, ParsedQuery) else parse_query(query, task, tags)

    def search(self, query: str | ParsedQuery, task: int = 1, system: str | None = None, k: int = 10,
               tags: tuple[str, ...] = ()) -> SearchResult:
        p = self.parse(query, task, tags)
        name, ranking = self.rank(p, p.task, system, k)
        best = ranking.ordered()[0] if len(ranking) else None
        return SearchResult(p.typed, p.task, name, self.hits(p, p.task, ranking), self.notices(p, p.task, best),
                            p.searched_as_json(), self.spelling(p, p.task).suggestion)

    def rank(self, query: str | ParsedQuery, task: int = 1, system: str | None = None, k: int = 10,
             tags: tuple[str, ...] = ()) -> tuple[str, Ranking]:
        """The spec that ran and its best ``k`` hits, not yet decorated: what a server keeps to
        answer the next pages of a query without searching again (:meth:`hits` and :meth:`decorate`
        decorate them).  A Task 2 query without delimiters is one formula (:func:`formula_query`).
        ``task`` picks the system (a Task 3 answer ranks its question with a Task 1 system)."""
        if k < 1:
            raise InputError(f"the number of hits must be at least 1, not {k}")
        p = self.parse(query, task, tags)
        sys_obj = self._ranker(task, system)
        self.ctx.require(("store", *needs_of(sys_obj)))
        return spec(sys_obj), self.rank_by(p, sys_obj, k)

    def rank_by(self, p: ParsedQuery, sys_obj: Ranker, k: int) -> Ranking:
        """The best ``k`` hits of the configured system ``sys_obj`` for the parsed query ``p``, its
        filters and query variables applied: the one path from a typed query to a ranking (the
        PyTerrier retriever's typed-in searches take it too)."""
        if not p.filters and p.pattern is None:
            return top(sys_obj.search(self.ctx, p.query, k), k)
        # filters and query variables keep some of the hits: rank deeper, then keep the first k they allow
        found = sys_obj.search(self.ctx, p.query, max(k, FILTER_DEPTH))
        if p.pattern is not None:  # first: an instance standing in for its visual id has its LaTeX
            found = matching(self.ctx, found, p.pattern, self._analyzer)
        if p.filters:
            found = filtered(self.ctx, found, p.filters, k)
        return top(found, k)

    def closeness(self, query: str | ParsedQuery, best: int | str) -> float:
        """The evidence (:func:`mathsearch.systems.closeness.evidence`) that the hit ``best`` (an
        answer or question id) holds what ``query`` asks about, in [0, 1]."""
        return evidence(self.ctx, self.parse(query).query, best)

    def spelling(self, query: str | ParsedQuery, task: int = 1) -> Spelling:
        """The words of a Task 1 or 3 query that no post holds, and the query respelt with the
        collection's nearest words (:func:`mathsearch.systems.spelling.spelling`); none for Task 2,
        whose query is one formula."""
        p = self.parse(query, 2 if task == 2 else 1)
        if task == 2:
            return Spelling((), None)
        # kept for the query's other readers (its notices, its answer, the next page): a misspelt
        # word costs a fuzzy query and up to 50 posts read, once
        key = (p.typed, p.query.title, p.query.question)
        found = self._spellings.get(key)
        if found is None:
            if len(self._spellings) >= 256:
                self._spellings.clear()
            found = self._spellings[key] = spelling(self.ctx, p.query, p.typed)
        return found

    def notices(self, query: str | ParsedQuery, task: int = 1, best: int | str | None = None) -> list[str]:
        """Lines a person should read before the hits: a Task 1 query of common words only, "no
        close match" when the best Task 1 hit ``best`` shares too little with the query
        (:data:`NO_CLOSE_MATCH_BELOW`), the query's words no post holds (:meth:`spelling`), a ``[tag]`` no
        thread has, a filter on a field this collection does not record (so not applied)."""
        out = []
        p = self.parse(query, 2 if task == 2 else 1)
        spelt = self.spelling(p, task)
        if spelt.unknown:
            out.append(unknown_words_notice(spelt))
        if task != 2 and not any(query_terms(p.query)):
            out.append(no_terms_notice(p.query))  # said whether or not the vectors found something
        elif task != 2 and best is not None and self.closeness(p, best) < NO_CLOSE_MATCH_BELOW:
            out.append(NO_CLOSE_MATCH)
        return out + self.filter_notices(p)

    def filter_notices(self, query: str | ParsedQuery) -> list[str]:
        """A ``[tag]`` no thread has, a filter on a field this collection does not record (so not
        applied): the lines :meth:`notices` and :meth:`answer` give before the hits or the answer."""
        filters = self.parse(query).filters
        out = filters.unread_notices()  # "score:abc": searched as words, and said so
        if not filters:
            return out
        store = self.ctx.store
        out += [f"No thread has the tag [{t}]: nothing can match it." for t in filters.tags if store.tag_count(t) == 0]
        out += [f"No thread has the tag [{t}]: -[{t}] excludes nothing." for t in filters.not_tags
                if store.tag_count(t) == 0]
        if filters.min_score is not None and not store.holds_field("score"):
            out.append(f"score:{filters.min_score} was not applied: this collection records no post scores.")
        if filters.accepted and not store.holds_field("accepted_answer_id"):
            out.append("is:accepted was not applied: this collection does not record accepted answers.")
        if filters.min_answers is not None and not store.holds_field("answer_count"):
            out.append(f"answers:{filters.min_answers} counts the answers in this collection (it records no answer counts).")
        return out

    def hits(self, query: str | ParsedQuery, task: int, ranking: Ranking, start: int = 0, stop: int | None = None,
             tags: tuple[str, ...] = ()) -> list[SearchHit]:
        """Hits ``start:stop`` of ``ranking`` (ranked from ``start + 1``) decorated for a person:
        one page of a search's hits is the same whether its ranking is new or kept."""
        return self._decorate(ranking, self.parse(query, task, tags), start=start, stop=stop)

    def decorate(self, ranking: Ranking, task: int, query: str | ParsedQuery,
                 only: Collection[str] | None = None) -> list[SearchHit]:
        """The hits of ``ranking`` as a person sees them (title, snippet, matched formulae), ranks
        counted over the whole ranking; with ``only``, just those ids are decorated."""
        return self._decorate(ranking, self.parse(query, task), only=None if only is None else {str(i) for i in only})

    def _answerer(self, system: str | None) -> Answerer:
        sys_obj = resolve(3, system, self.index_dir)
        assert isinstance(sys_obj, Answerer), sys_obj  # Task 3 answers
        return sys_obj

    def answer_base(self, system: str | None = None) -> str | None:
        """The spec of the Task 1 ranking the Task 3 system ``system`` draws its answer from, where
        it can be given that ranking (:meth:`answer`'s ``ranking``); else None."""
        from .systems.task3 import base_system

        sys_obj = self._answerer(system)
        if not hasattr(sys_obj, "answer_from") or not hasattr(sys_obj, "base"):
            return None
        return spec(base_system(self.ctx, sys_obj.base))

    def answer(self, question: str | ParsedQuery, system: str | None = None, tags: tuple[str, ...] = (),
               ranking: Ranking | None = None) -> AnswerResult:
        """One answer of at most 1,200 characters to ``question`` (text with ``$LaTeX$``), with its
        sources: the Task 3 system ``system`` (default ``extract``) over this index.  ``ranking``:
        the question's Task 1 ranking by :meth:`answer_base`, already made (a server keeps it), to
        draw from instead of searching again; ``question`` parsed already (:meth:`parse`, as Task 1)
        is not read again."""
        parsed = self.parse(question, 3, tags)  # refused as a search refuses it (parse_query)
        q, question = parsed.query, parsed.typed
        sys_obj = self._answerer(system)
        self.ctx.require(("store", *needs_of(sys_obj)))
        if ranking is None and parsed.filters:  # "[calculus] ...": the answer is drawn from the threads allowed
            base = self.answer_base(system)
            if base is None:
                raise InputError(f"the Task 3 system {spec(sys_obj)} does not answer from a ranking, so it cannot "
                                 f"apply the query's filters ({parsed.filters.describe()}).")
            ranking = self.rank(parsed, 1, base, k=FILTERED_ANSWER_DEPTH)[1]
        if ranking is not None:
            made = sys_obj.answer_from(self.ctx, q, [(d, ranking[d]) for d in ranking.ordered()])
        else:
            made = sys_obj.answer(self.ctx, q)
        store = self.ctx.store
        if not any(query_terms(q)):  # "why": nothing to answer from, whatever the vectors found
            made = dataclasses.replace(made, text="", mode="declined", notes=(no_terms_notice(q),))
        elif made.sources and made.mode != "declined" and evidence(self.ctx, q, made.sources[0]) < NO_CLOSE_MATCH_BELOW:
            # the post it would answer from shares too little with the question: say so, do not answer
            made = dataclasses.replace(made, text="", mode="declined", notes=(NO_CLOSE_MATCH, *made.notes))
        elif not made.sources:  # nothing to answer from (a filter no thread passes): no answer, and why
            made = dataclasses.replace(made, text="", mode="declined", notes=(*made.notes, NO_ANSWER))
        posts = store.posts(made.sources)
        threads = store.posts({p.thread_id for p in posts.values()})
        sources = []
        for sid in made.sources:
            post = posts.get(int(sid))
            thread = threads.get(post.thread_id) if post is not None else None
            title = cap(thread.title)[0] if thread is not None and thread.title else None
            sources.append(AnswerSource(int(sid), post.thread_id if post else None, title))
        spelt = self.spelling(parsed, 3)
        notes = [unknown_words_notice(spelt)] if spelt.unknown else []
        return AnswerResult(question, spec(sys_obj), made.text, sources, made.mode,
                            notes + list(made.notes) + self.filter_notices(parsed), spelt.suggestion)

    def _decorate(self, ranking: Ranking, p: ParsedQuery, *,
                  only: set[str] | None = None, start: int = 0, stop: int | None = None) -> list[SearchHit]:
        store = self.ctx.store
        task, words, query_keys, pattern = p.task, p.title_words, p.formula_keys, p.pattern
        hits = []
        for rank, hit_id in enumerate(ranking.ordered()[start:stop], start + 1):
            if only is not None and hit_id not in only:
                continue
            anchor = None
            if task == 2:
                f = store.formula(hit_id)
                post = store.post(ranking.post_of(hit_id) or (f.post_id if f else -1))
                matched = [f.latex] if f else []
                anchor = f.latex if f and len(f.latex) <= MAX_SHOWN else None
            else:
                f = None
                post = store.post(hit_id)
                matched = []
                if post is not None:
                    matched = sorted({f.latex for f in store.formulas_of(post.post_id) if formula_key(f.latex) in query_keys})
            thread = store.post(post.thread_id) if post is not None else None
            cut = []
            title = thread.title if thread else None
            if title is not None:
                title, was_cut = cap(title)
                if was_cut:
                    cut.append("thread_title")
            shown = [cap(m) for m in matched[:MAX_MATCHED]]
            if len(matched) > MAX_MATCHED or any(c for _, c in shown):
                cut.append("matched_formulae")
            hits.append(SearchHit(
                rank, _number(hit_id), post.post_id if post else None, ranking[hit_id], title,
                post_snippet(post.body, words, anchor=anchor, anchor_id=hit_id if task == 2 else None) if post else NO_POST,
                [m for m, _ in shown], len(matched), cut,
                f.visual_id if f else None, bindings_of(pattern, f.latex) if pattern is not None and f else None,
            ))
        return hits


@dataclass(frozen=True)
class GroupPost:
    """A post holding an instance of a group's formula."""

    formula_id: int
    post_id: int
    thread_id: int
    thread_title: str | None  # cut at MAX_SHOWN characters


@dataclass(frozen=True)
class FormulaGroup:
    """Task 2 hits that look the same (one visual id, or one formula instance where the collection
    has no visual ids), in rank order: the best one's rank, score and LaTeX stand for the group;
    ``posts`` are posts of the collection holding an instance of it (at most ``per_group``)."""

    visual_id: str | None
    rank: int
    score: float
    latex: str
    hits: list[SearchHit]
    posts: list[GroupPost]


def group_by_visual_id(hits: list[SearchHit], searcher: Searcher | None = None, per_group: int = 5) -> list[FormulaGroup]:
    """Task 2 hits grouped by visual id, groups in the order of their best hit; with ``searcher``,
    each group lists up to ``per_group`` posts of its collection that hold the formula."""
    groups: dict[object, list[SearchHit]] = {}
    for h in sorted(hits, key=lambda h: h.rank):
        groups.setdefault(h.visual_id if h.visual_id is not None else ("id", h.id), []).append(h)
    store = searcher.ctx.store if searcher is not None else None
    out = []
    for g in groups.values():
        posts: list[GroupPost] = []
        if store is not None:
            found = store.formulas_with_visual_id(g[0].visual_id, per_group) if g[0].visual_id is not None else []
            titles = {p.post_id: p.title for p in store.posts({f.thread_id for f in found}).values()}
            posts = [GroupPost(f.formula_id, f.post_id, f.thread_id, cap(titles[f.thread_id])[0] if titles.get(f.thread_id) else None)
                     for f in found]
        out.append(FormulaGroup(g[0].visual_id, g[0].rank, g[0].score, g[0].matched_formulae[0] if g[0].matched_formulae else "",
                                g, posts))
    return out


@dataclass(frozen=True)
class AnswerSource:
    """A post an answer was taken from (main source first)."""

    post_id: int
    thread_id: int | None
    thread_title: str | None  # cut at MAX_SHOWN characters


@dataclass(frozen=True)
class AnswerResult:
    """One answer to a question (ARQMath Task 3): at most 1,200 characters, with its sources."""

    question: str
    system: str  # the spec that answered
    text: str
    sources: list[AnswerSource]
    mode: str  # extract, generate, or fallback (generation failed: the extractive answer)
    notes: list[str]
    suggestion: str | None = None  # the question with its words no post holds respelt ("did you mean")

    @property
    def sources_field(self) -> str:
        """As a run file's Sources field: ``answer:ID,answer:ID``."""
        return ",".join(f"answer:{s.post_id}" for s in self.sources)

    def as_json(self) -> dict:
        return {"question": self.question, "system": self.system, "answer": self.text,
                "sources": [asdict(s) for s in self.sources], "sources_field": self.sources_field,
                "mode": self.mode, "notes": list(self.notes), "suggestion": self.suggestion}
