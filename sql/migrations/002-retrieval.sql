-- Retrieval: the full-text and trigram indexes of hybrid search, the decay
-- horizon of facts, lifecycle timestamps for as_of reads, skills, annotations
-- and per-workspace settings.

-- Headline words weigh more (A) than body words (B) in ranked full-text search.
ALTER TABLE brain.memory ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, headline), 'A')
    || setweight(to_tsvector('english'::regconfig, body), 'B')
) STORED;
-- More "most common elements" in the column statistics: search reads lexeme
-- frequencies from pg_stats to weigh rare words above common ones.
ALTER TABLE brain.memory ALTER COLUMN tsv SET STATISTICS 1000;
CREATE INDEX memory_tsv ON brain.memory USING gin (tsv);
CREATE INDEX memory_headline_trgm ON brain.memory USING gin (headline public.gin_trgm_ops);

-- When a fact's decay score falls below the dormancy threshold; NULL for
-- kinds that do not decay. Kept current by every function that touches a
-- fact, so search filters dormancy with a comparison instead of a formula.
ALTER TABLE brain.memory ADD COLUMN dormant_after timestamptz;
ALTER TABLE brain.memory ADD COLUMN forgotten_at timestamptz;
ALTER TABLE brain.memory ADD COLUMN archived_at timestamptz;

CREATE INDEX memory_skill_name ON brain.memory (workspace_id, (skill_trigger->>'name'))
    WHERE skill_trigger IS NOT NULL AND state = 'active';

CREATE TABLE brain.annotation (
    workspace_id  bigint NOT NULL DEFAULT brain.current_workspace(),
    annotation_id bigint GENERATED ALWAYS AS IDENTITY,
    memory_id     bigint NOT NULL,
    note          text NOT NULL CHECK (note !~ '^\s*$'),
    source        text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, annotation_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory ON DELETE CASCADE
);
CREATE INDEX annotation_memory ON brain.annotation (workspace_id, memory_id);

-- Overrides of the defaults in brain.setting(name); absent means default.
CREATE TABLE brain.setting (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    name         text NOT NULL,
    value        jsonb NOT NULL,
    PRIMARY KEY (workspace_id, name)
);

ALTER TABLE brain.annotation ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.annotation
    USING (workspace_id = brain.current_workspace())
    WITH CHECK (workspace_id = brain.current_workspace());
ALTER TABLE brain.setting ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.setting
    USING (workspace_id = brain.current_workspace())
    WITH CHECK (workspace_id = brain.current_workspace());

GRANT SELECT, INSERT, UPDATE, DELETE ON brain.annotation, brain.setting TO brain_user;
GRANT UPDATE ON brain.embedding_space TO brain_user;

-- What brain.search returns per result: headline and preview, never the body.
CREATE TYPE brain.search_result AS (
    id                bigint,
    kind              text,
    category          text,
    project           text,
    headline          text,
    preview           text,
    score             double precision,
    vector_rank       integer,           -- rank in each leg, NULL where the leg did not find it
    lexical_rank      integer,
    fuzzy_rank        integer,
    similarity        real,              -- cosine similarity to the query embedding
    state             text,
    pinned            boolean,
    superseded_by     bigint,
    current_id        bigint,            -- end of the supersede chain (itself when current)
    via_skill_trigger text,              -- the skill's name when a keyword surfaced it
    created_at        timestamptz
);

-- A memory in a list: brain.list_recent.
CREATE TYPE brain.memory_brief AS (
    id         bigint,
    kind       text,
    category   text,
    project    text,
    headline   text,
    preview    text,
    state      text,
    pinned     boolean,
    created_at timestamptz
);
