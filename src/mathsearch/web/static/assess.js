// The assessment page (/assess): topic on the left, candidate on the right, every grade by keyboard.
// Each action (grade, move) is queued and run in order, so keys pressed quickly land on the right
// items; a grade counts as saved only when the server says it committed it.  Where the assessor
// was is kept in the URL (#TOPIC/N) and in localStorage, so a reload resumes there.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const S = { assessor: null, state: null, topic: null, items: [], index: 0, cache: new Map(),
              chain: Promise.resolve(), saves: 0, pending: 0 };

  async function api(path, options) {
    const init = Object.assign({ headers: { "Content-Type": "application/json" } }, options || {});
    const r = await fetch("/api/assess" + path, init);
    let body = {};
    try { body = await r.json(); } catch (e) { body = {}; }
    if (!r.ok) throw new Error(typeof body.detail === "string" ? body.detail : r.status + " " + r.statusText);
    return body;
  }
  const enc = encodeURIComponent;
  const root = () => $("assess");

  function enqueue(fn) {
    S.pending += 1;
    root().dataset.pending = String(S.pending);
    S.chain = S.chain.then(fn).catch((e) => setStatus("error: " + e.message, "failed")).finally(() => {
      S.pending -= 1;
      root().dataset.pending = String(S.pending);
    });
    return S.chain;
  }

  function setStatus(text, cls) {
    const el = $("status");
    el.textContent = text;
    el.className = "status " + (cls || "");
  }

  function fatal(text) {
    const el = $("fatal");
    el.textContent = text;
    el.hidden = false;
  }

  function posKey() {
    return "mathsearch.assess.pos." + (S.state ? S.state.pool_id : "") + "." + S.assessor;
  }

  // -- assessors ----------------------------------------------------------------------------------
  function showPicker() {
    $("work").hidden = true;
    $("picker").hidden = false;
    root().dataset.state = "picker";
    const known = $("known");
    known.textContent = "";
    for (const name of (S.state ? S.state.assessors : [])) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = name;
      b.addEventListener("click", () => chooseAssessor(name));
      known.appendChild(b);
    }
    const input = $("assessor-name");
    input.value = "";
    input.focus();
  }

  async function chooseAssessor(name) {
    name = (name || "").trim();
    if (!name) return;
    const previous = S.assessor;
    S.assessor = name;
    try {
      await loadState();
    } catch (e) {
      S.assessor = previous;
      fatal("Cannot start as " + name + ": " + e.message);
      return;
    }
    $("fatal").hidden = true;
    localStorage.setItem("mathsearch.assess.assessor", name);
    const url = new URL(location.href);
    url.searchParams.set("assessor", name);
    history.replaceState(null, "", url.pathname + url.search + url.hash);
    $("picker").hidden = true;
    $("work").hidden = false;
    $("who").textContent = name;
    await resume(previous !== null && previous !== name);
  }

  // The topic list: one button a topic, its title typeset (title_html is sanitised by the server).
  function topicLabel(t) {
    const label = document.createElement("span");
    label.className = "topic-label";
    const id = document.createElement("span");
    id.className = "tid";
    id.textContent = t.topic_id + (t.overlap ? " (shared)" : "");
    const count = document.createElement("span");
    count.className = "count";
    count.dataset.topic = t.topic_id;
    const title = document.createElement("span");
    title.className = "ttl";
    title.innerHTML = t.title_html;
    label.append(id, " · ", count, " · ", title);
    return label;
  }

  async function loadState() {
    const state = await api("/state" + (S.assessor ? "?assessor=" + enc(S.assessor) : ""));
    S.state = state;
    const list = $("topic-list");
    list.textContent = "";
    for (const t of state.topics) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "topic-choice";
      b.dataset.topic = t.topic_id;
      b.appendChild(topicLabel(t));
      b.addEventListener("click", () => {
        $("topics").open = false;
        b.blur();
        enqueue(() => openTopic(t.topic_id, null));
      });
      li.appendChild(b);
      list.appendChild(li);
    }
    if (window.mathsearchRender) window.mathsearchRender(list);
    refreshProgress();
  }

  function showCurrentTopic() {
    const t = S.state.topics.find((x) => x.topic_id === S.topic.topic_id);
    const box = $("topic-current");
    box.textContent = "";
    box.appendChild(topicLabel(t));
    if (window.mathsearchRender) window.mathsearchRender(box);
    for (const b of $("topic-list").querySelectorAll("button")) {
      if (b.dataset.topic === t.topic_id) b.setAttribute("aria-current", "true");
      else b.removeAttribute("aria-current");
    }
  }

  function refreshProgress() {
    for (const el of document.querySelectorAll("#work .count[data-topic]")) {
      const t = S.state.topics.find((x) => x.topic_id === el.dataset.topic);
      el.textContent = t.judged + "/" + t.items;
    }
    const o = S.state.overall;
    const pct = o.items ? (100 * o.judged / o.items).toFixed(1) : "0";
    $("progress-all").textContent = "all topics: " + o.judged + " of " + o.items + " judged by you (" + pct + "%)";
    $("progress-all").dataset.judged = String(o.judged);
    if (S.topic) {
      const t = S.state.topics.find((x) => x.topic_id === S.topic.topic_id);
      $("progress-topic").textContent = "this topic: " + t.judged + " of " + t.items + " judged";
      $("progress-topic").dataset.judged = String(t.judged);
    }
  }

  function applyCounts(r) {
    const t = S.state.topics.find((x) => x.topic_id === r.topic.topic_id);
    if (t) { t.judged = r.topic.judged; t.judged_any = r.topic.judged_any; }
    S.state.overall = r.overall;
    refreshProgress();
  }

  // -- where to start -------------------------------------------------------------------------------
  async function resume(switched) {
    let topic = null;
    let n = null;
    const m = /^#([^/]+)\/(\d+)$/.exec(decodeURIComponent(location.hash));
    const saved = localStorage.getItem(posKey());
    if (m && !switched) { topic = m[1]; n = +m[2] - 1; }
    else if (saved) { const [t, i] = JSON.parse(saved); topic = t; n = i; }
    if (!topic || !S.state.topics.some((t) => t.topic_id === topic)) {
      const open = S.state.topics.find((t) => t.judged < t.items) || S.state.topics[0];
      topic = open ? open.topic_id : null;
      n = null;
    }
    if (!topic) { fatal("The pool holds no topic."); return; }
    await openTopic(topic, n);
  }

  // -- topics and items -------------------------------------------------------------------------------
  async function openTopic(topicId, index) {
    const t = await api("/topics/" + enc(topicId) + "?assessor=" + enc(S.assessor));
    S.topic = t;
    S.items = t.items;
    showCurrentTopic();
    $("topic-id").textContent = t.topic_id;
    $("topic-overlap").hidden = !t.overlap;
    $("topic-title").innerHTML = t.title_html;
    $("topic-question").innerHTML = t.question_html;
    const tags = $("topic-tags");
    tags.textContent = "";
    for (const tag of t.tags) { const s = document.createElement("span"); s.textContent = tag; tags.appendChild(s); }
    if (window.mathsearchRender) window.mathsearchRender(document.querySelector("#assess .topic"));
    buildStrip();
    refreshProgress();
    if (index === null || index === undefined) {
      index = S.items.findIndex((it) => it.grade === null);
      if (index < 0) index = 0;
    }
    await showItem(index);
  }

  function buildStrip() {
    const strip = $("strip");
    strip.textContent = "";
    let group = null;
    S.items.forEach((it, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.tabIndex = -1;
      b.textContent = String(i + 1);
      b.title = "item " + (i + 1);
      if (it.group !== null && it.group !== group && i > 0) b.classList.add("group-start");
      group = it.group;
      b.addEventListener("click", () => enqueue(() => showItem(i)));
      strip.appendChild(b);
    });
    markStrip();
  }

  function markStrip() {
    const buttons = $("strip").children;
    S.items.forEach((it, i) => {
      const b = buttons[i];
      if (!b) return;
      b.classList.toggle("judged", it.grade !== null);
      for (const code of [0, 1, 2, 3, 5, 6]) b.classList.toggle("g" + code, it.grade === code);
      b.classList.toggle("current", i === S.index);
      b.setAttribute("aria-label", "item " + (i + 1) + (it.grade !== null ? ", graded " + it.grade : ", not judged"));
    });
  }

  // What each colour of the strip means: the grades of this kind of item, and "not judged".
  function legend(kind) {
    const box = $("legend");
    if (box.dataset.kind === kind) return;
    box.dataset.kind = kind;
    box.textContent = "";
    const entries = S.state.grades[kind].map((g) => ["g" + g.code, g.code + " " + g.rating]);
    entries.push(["", "not judged"]);
    for (const [cls, text] of entries) {
      const li = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch " + cls;
      li.dataset.grade = cls;
      li.append(swatch, text);
      box.appendChild(li);
    }
  }

  function gradeButtons(kind) {
    const box = $("grade-buttons");
    box.textContent = "";
    for (const g of S.state.grades[kind]) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "grade";
      b.dataset.grade = String(g.code);
      b.setAttribute("aria-pressed", "false");
      const head = document.createElement("strong");
      head.textContent = g.key + " · " + g.rating;
      const def = document.createElement("span");
      def.className = "def";
      def.textContent = g.definition;
      b.append(head, def);
      b.addEventListener("click", () => judge(g.code));
      box.appendChild(b);
    }
  }

  function pressed() {
    const it = S.items[S.index];
    for (const b of $("grade-buttons").children) {
      b.setAttribute("aria-pressed", String(it && it.grade !== null && +b.dataset.grade === it.grade));
    }
  }

  async function showItem(i) {
    if (!S.items.length) {
      $("candidate").textContent = "No item to judge in this topic.";
      return;
    }
    i = Math.max(0, Math.min(S.items.length - 1, i));
    S.index = i;
    const it = S.items[i];
    history.replaceState(null, "", location.pathname + location.search + "#" + enc(S.topic.topic_id) + "/" + (i + 1));
    localStorage.setItem(posKey(), JSON.stringify([S.topic.topic_id, i]));
    let heading = "Item " + (i + 1) + " of " + S.items.length;
    if (it.kind === "formula") {
      const same = S.items.filter((x) => x.group === it.group);
      heading += " · instance " + (same.indexOf(it) + 1) + " of " + same.length + " of one visually distinct formula";
    } else if (it.kind === "task3") heading += " · an answer written by a system";
    $("item-heading").textContent = heading;
    gradeButtons(it.kind);
    legend(it.kind);
    pressed();
    $("comment").value = it.comment || "";
    markStrip();
    const root_ = root();
    root_.dataset.item = String(it.item_id);
    root_.dataset.state = "loading";
    let c = S.cache.get(it.item_id);
    if (!c) {
      c = await api("/items/" + it.item_id);
      S.cache.set(it.item_id, c);
    }
    if (S.items[S.index] !== it) return;  // moved on meanwhile
    const box = $("candidate");
    box.innerHTML = c.html;
    if (window.mathsearchRender) window.mathsearchRender(box);
    root_.dataset.state = "ready";
  }

  async function move(step) {
    const j = S.index + step;
    if (j >= 0 && j < S.items.length) return showItem(j);
    const topics = S.state.topics;
    const k = topics.findIndex((t) => t.topic_id === S.topic.topic_id) + (step > 0 ? 1 : -1);
    if (k < 0 || k >= topics.length) { setStatus(step > 0 ? "last item of the pool" : "first item of the pool"); return; }
    return openTopic(topics[k].topic_id, step > 0 ? 0 : topics[k].items - 1);
  }

  async function moveTopic(step) {
    const topics = S.state.topics;
    const k = topics.findIndex((t) => t.topic_id === S.topic.topic_id) + step;
    if (k >= 0 && k < topics.length) return openTopic(topics[k].topic_id, null);
  }

  async function nextUnjudged() {
    const j = S.items.findIndex((it, i) => i > S.index && it.grade === null);
    if (j >= 0) return showItem(j);
    const before = S.items.findIndex((it) => it.grade === null);
    if (before >= 0) return showItem(before);
    const open = S.state.topics.find((t) => t.judged < t.items && t.topic_id !== S.topic.topic_id);
    if (open) return openTopic(open.topic_id, null);
    setStatus("every item of the pool is judged", "saved");
  }

  // -- grades -----------------------------------------------------------------------------------------
  function judge(code) {
    return enqueue(async () => {
      const it = S.items[S.index];
      if (!it) return;
      const comment = $("comment").value;
      setStatus("saving " + code + "…");
      let r;
      try {
        r = await api("/judgements", { method: "POST", body: JSON.stringify(
          { item_id: it.item_id, assessor: S.assessor, grade: code, comment: comment }) });
      } catch (e) {
        setStatus("NOT saved (" + e.message + "): press the grade again", "failed");
        return;
      }
      it.grade = r.saved.grade;
      it.comment = r.saved.comment;
      S.saves += 1;
      root().dataset.saves = String(S.saves);
      applyCounts(r);
      setStatus("saved: item " + (S.index + 1) + " graded " + code, "saved");
      pressed();
      markStrip();
      if (S.index < S.items.length - 1) await showItem(S.index + 1);
      else setStatus("saved; last item of this topic (] for the next topic)", "saved");
    });
  }

  function clearGrade() {
    return enqueue(async () => {
      const it = S.items[S.index];
      if (!it || it.grade === null) return;
      const r = await api("/judgements/" + it.item_id + "?assessor=" + enc(S.assessor), { method: "DELETE" });
      it.grade = null;
      it.comment = "";
      applyCounts(r);
      pressed();
      markStrip();
      setStatus("grade withdrawn", "saved");
    });
  }

  // -- keys -------------------------------------------------------------------------------------------
  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (!$("picker").hidden && e.key === "Escape" && S.assessor && S.topic) {  // back, as the same assessor
      $("picker").hidden = true;
      $("work").hidden = false;
      root().dataset.state = "ready";
      return;
    }
    if (!$("picker").hidden || $("work").hidden) return;  // the picker's form takes Enter
    const t = e.target;
    if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT")) {
      if (e.key === "Escape") t.blur();
      return;
    }
    const k = e.key;
    const act = {
      "0": () => judge(0), "1": () => judge(1), "2": () => judge(2), "3": () => judge(3),
      "5": () => judge(5), "6": () => judge(6),
      "j": () => enqueue(() => move(1)), "ArrowRight": () => enqueue(() => move(1)),
      "k": () => enqueue(() => move(-1)), "ArrowLeft": () => enqueue(() => move(-1)),
      "u": () => enqueue(nextUnjudged),
      "]": () => enqueue(() => moveTopic(1)), "[": () => enqueue(() => moveTopic(-1)),
      "x": clearGrade,
      "c": () => $("comment").focus(),
      "a": showPicker,
    }[k];
    if (!act) return;
    e.preventDefault();
    act();
  }

  async function start() {
    $("picker-form").addEventListener("submit", (e) => {
      e.preventDefault();
      chooseAssessor($("assessor-name").value);
    });
    $("prev").addEventListener("click", () => enqueue(() => move(-1)));
    $("next").addEventListener("click", () => enqueue(() => move(1)));
    $("unjudged").addEventListener("click", () => enqueue(nextUnjudged));
    $("clear").addEventListener("click", clearGrade);
    document.addEventListener("keydown", onKey);
    const wanted = new URLSearchParams(location.search).get("assessor") || localStorage.getItem("mathsearch.assess.assessor");
    try {
      S.assessor = null;
      await loadState();
    } catch (e) {
      fatal("The assessment database cannot be read: " + e.message);
      return;
    }
    if (wanted) await chooseAssessor(wanted);
    else showPicker();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
