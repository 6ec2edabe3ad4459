"""Retrieval-augmented generation through any OpenAI-compatible chat endpoint (standard library only).

:class:`ChatEndpoint` posts ``{"model", "messages", "temperature", "max_tokens"}`` to
``URL/chat/completions`` (``URL`` may name that path itself) with ``Authorization: Bearer KEY``
when a key is given, and reads ``choices[0].message.content``.  Every failure (refused
connection, timeout, HTTP error, a reply that is not the protocol's JSON) is one
:class:`GenerationError`, so a caller can fall back instead of losing a topic.

:func:`generate` prompts with the question and the top passages, each labelled with its id
(``[answer:123]``), asks for an answer of at most 1,200 characters that cites the passages it
uses, and asks again (saying how long the answer was) while it is too long, as the lab's GPT-3
baseline retried; after the last try the answer is cut at a sentence boundary (never inside a
formula).  The cited ids become the answer's sources; the markers are removed from the text.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import MathsearchError
from .passages import MAX_ANSWER_CHARS, condense, text_pieces

URL_ENV = "MATHSEARCH_LLM_URL"  # e.g. http://127.0.0.1:8000/v1
MODEL_ENV = "MATHSEARCH_LLM_MODEL"
KEY_ENV = "MATHSEARCH_LLM_KEY"  # else OPENAI_API_KEY
MAX_REPLY_BYTES = 1 << 20  # a reply larger than this is refused, not read into memory

SYSTEM_PROMPT = (
    "You answer mathematics questions as a concise, self-contained answer of at most {budget} "
    "characters. Write plain text with LaTeX between $...$ (inline) or $$...$$ (displayed); no HTML, "
    "no Markdown headings. Use the passages (each labelled [answer:ID]) when they help and cite each one you use as "
    "[answer:ID] right after the sentence that uses it."
)


class GenerationError(MathsearchError):
    """The endpoint could not give an answer (unreachable, timeout, HTTP error, bad reply)."""


@dataclass(frozen=True)
class ChatEndpoint:
    """An OpenAI-compatible chat completions endpoint."""

    url: str
    model: str
    key: str | None = field(default=None, repr=False)
    timeout: float = 60.0

    @classmethod
    def from_env(cls, url: str = "", model: str = "", key: str | None = None, timeout: float = 60.0) -> ChatEndpoint:
        """Options first, then the environment (:data:`URL_ENV`, :data:`MODEL_ENV`, :data:`KEY_ENV`
        or ``OPENAI_API_KEY``); refuses to start without a URL and a model."""
        url = url or os.environ.get(URL_ENV, "")
        model = model or os.environ.get(MODEL_ENV, "")
        key = key if key is not None else (os.environ.get(KEY_ENV) or os.environ.get("OPENAI_API_KEY"))
        if not url or not model:
            raise GenerationError(
                f"the generate system needs an OpenAI-compatible endpoint: give url= and model= "
                f"(or set {URL_ENV} and {MODEL_ENV}; the key comes from {KEY_ENV} or OPENAI_API_KEY)"
            )
        if not url.startswith(("http://", "https://")):
            raise GenerationError(f"endpoint URL {url!r} must start with http:// or https://")
        return cls(url, model, key or None, timeout)

    @property
    def completions_url(self) -> str:
        base = self.url.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    def complete(self, messages: Sequence[dict[str, str]], temperature: float = 0.2, max_tokens: int = 600) -> str:
        """The content of the first choice of one chat completion."""
        payload = {"model": self.model, "messages": list(messages), "temperature": temperature, "max_tokens": max_tokens}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.completions_url, json.dumps(payload).encode("utf-8"), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:  # noqa: S310 - http(s) checked above
                raw = reply.read(MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as exc:
            detail = ""
            try:
                detail = exc.read(300).decode("utf-8", "replace").strip()
            except OSError:
                pass
            raise GenerationError(f"endpoint answered HTTP {exc.code}" + (f": {detail}" if detail else "")) from None
        except TimeoutError:
            raise GenerationError(f"endpoint did not answer within {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise GenerationError(f"endpoint did not answer within {self.timeout:g} s") from None
            raise GenerationError(f"cannot reach the endpoint {self.completions_url}: {reason}") from None
        except OSError as exc:
            raise GenerationError(f"endpoint connection failed: {exc}") from None
        if len(raw) > MAX_REPLY_BYTES:
            raise GenerationError(f"endpoint reply is larger than {MAX_REPLY_BYTES} bytes")
        try:
            data = json.loads(raw.decode("utf-8"))
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise GenerationError("endpoint reply is not a chat completion (no choices[0].message.content)") from None
        if not isinstance(content, str):
            raise GenerationError("endpoint reply content is not text")
        return content


@dataclass(frozen=True)
class Generated:
    text: str
    sources: tuple[str, ...]  # post ids cited, in order of first citation
    tries: int
    trimmed: bool  # cut to the budget after the last try


_CITE = re.compile(r"\s*\[(?:answer:)?\s*(\d+)\s*\]")


def prompt(title: str, question: str, passages: Sequence[tuple[str, str]], budget: int = MAX_ANSWER_CHARS) -> list[dict[str, str]]:
    """The chat messages: the system instruction, then the question and the labelled passages."""
    lines = [f"Question: {title.strip()}"]
    if question.strip():
        lines.append(question.strip())
    if passages:
        lines.append("")
        lines.append("Passages:")
        for pid, text in passages:
            lines.append(f"[answer:{pid}] {' '.join(text.split())}")
    lines.append("")
    lines.append(f"Answer in at most {budget} characters, citing the passages you use as [answer:ID].")
    return [{"role": "system", "content": SYSTEM_PROMPT.format(budget=budget)}, {"role": "user", "content": "\n".join(lines)}]


def citations(text: str, known: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """``text`` without its ``[answer:ID]`` markers, and the known ids it cites (first citation first)."""
    cited: list[str] = []
    allowed = set(known)

    def drop(m: re.Match[str]) -> str:
        if m.group(1) in allowed and m.group(1) not in cited:
            cited.append(m.group(1))
        return ""

    clean = _CITE.sub(drop, text)
    clean = re.sub(r"[ \t]+([.,;:!?])", r"\1", clean)
    clean = "\n".join(" ".join(line.split()) for line in clean.strip().split("\n"))
    return re.sub(r"\n{2,}", "\n", clean).strip(), tuple(cited)


def generate(
    endpoint: ChatEndpoint,
    title: str,
    question: str,
    passages: Sequence[tuple[str, str]],
    budget: int = MAX_ANSWER_CHARS,
    retries: int = 2,
    temperature: float = 0.2,
    max_tokens: int = 600,
) -> Generated:
    """An answer from ``endpoint`` in at most ``budget`` characters; raises :class:`GenerationError`
    when the endpoint fails or only ever answers nothing."""
    messages = prompt(title, question, passages, budget)
    known = [pid for pid, _ in passages]
    text = ""
    cited: tuple[str, ...] = ()
    tries = 0
    for tries in range(1, retries + 2):
        reply = endpoint.complete(messages, temperature, max_tokens)
        text, cited = citations(reply, known)
        if text and len(text) <= budget:
            return Generated(text, cited, tries, False)
        if text:
            messages = [*messages, {"role": "assistant", "content": reply},
                        {"role": "user", "content": f"That answer has {len(text)} characters. Rewrite it in at most "
                                                    f"{budget} characters, keeping the citations."}]
    if not text:
        raise GenerationError(f"endpoint gave an empty answer {tries} time(s)")
    cut = condense(text_pieces(text), budget)
    if not cut:
        raise GenerationError("endpoint's answer cannot be cut to the budget outside its formulae")
    return Generated(cut, cited, tries, True)
