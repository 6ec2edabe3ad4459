"""On-disk layout of the collection store: two SQLite files under INDEX_DIR.

* ``store.sqlite``: ``meta`` and ``posts``;
* ``store-side.sqlite``: ``comments``, ``links`` and ``formulas``, attached when the store is
  opened (queries name the tables without a schema).

Two files, so that two processes can build them at once, each with its own indexes.
``meta`` records the schema version and how the store was built, so an index of
another version is refused with a clear message rather than misread.
"""

SCHEMA_VERSION = 2
STORE_FILE = "store.sqlite"
SIDE_FILE = "store-side.sqlite"

POSTS_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE posts (
    post_id INTEGER PRIMARY KEY,
    post_type INTEGER NOT NULL,          -- 1 question, 2 answer
    thread_id INTEGER NOT NULL,          -- the question's id
    parent_id INTEGER,
    title TEXT,                          -- plain text, formulae as $LaTeX$ (questions)
    tags TEXT,                           -- space separated
    body TEXT NOT NULL,                  -- HTML as in the collection (spans with formula ids)
    text TEXT NOT NULL,                  -- plain text of the body, formulae as $LaTeX$
    score INTEGER,
    creation_date TEXT,
    answer_count INTEGER,
    accepted_answer_id INTEGER,
    owner_user_id INTEGER,
    view_count INTEGER
);
"""

SIDE_TABLES = """
CREATE TABLE comment_spans (formula_id INTEGER PRIMARY KEY, comment_id INTEGER);
CREATE TABLE comments (
    comment_id INTEGER PRIMARY KEY,
    post_id INTEGER NOT NULL,
    markup TEXT NOT NULL,                -- as in the file (spans with formula ids)
    text TEXT NOT NULL,                  -- plain text, formulae as $LaTeX$
    score INTEGER,
    creation_date TEXT,
    user_id INTEGER
);
CREATE TABLE links (
    link_id INTEGER PRIMARY KEY,
    post_id INTEGER NOT NULL,
    related_post_id INTEGER NOT NULL,
    link_type INTEGER NOT NULL,          -- 1 related, 3 duplicate
    creation_date TEXT
);
CREATE TABLE formulas (
    formula_id INTEGER PRIMARY KEY,
    post_id INTEGER NOT NULL,
    thread_id INTEGER NOT NULL,
    kind TEXT NOT NULL,                  -- title, question, answer, comment
    comment_id INTEGER,
    visual_id TEXT,                      -- NULL when the collection has none
    latex TEXT NOT NULL,
    issue TEXT
);
"""

# Covering (thread, type, id): query-time signals ask for the answer ids of tens of threads a
# query, and reading them from the index alone spares a disk read of each post's row (its text).
POSTS_INDEXES = """
CREATE INDEX posts_thread ON posts(thread_id, post_type, post_id);
"""

SIDE_INDEXES = """
CREATE INDEX comments_post ON comments(post_id);
CREATE INDEX links_post ON links(post_id);
CREATE INDEX links_related ON links(related_post_id);
CREATE INDEX formulas_post ON formulas(post_id);
CREATE INDEX formulas_visual ON formulas(visual_id);
"""
