-- A memory as one value: what a write stores, built once by the function a
-- caller names (brain.remember, brain.supersede, brain.capture_context,
-- brain.record_trajectory) and handed to the write core (brain._write) whole;
-- its kind fields are what brain._store_memories writes the kind rows from
-- (an import's too).
-- Before, brain._write took 35 positional parameters, spelled out at each of
-- its five call sites. The kind's own fields are typed details, one per kind
-- that has them; a detail given for another kind is refused by the write, as
-- the flat fields were.
CREATE TYPE brain.rule_detail AS (
    severity text,
    prior_severity text
);

CREATE TYPE brain.fact_detail AS (
    halflife_days double precision
);

CREATE TYPE brain.task_detail AS (
    status text,
    priority integer,
    due_at timestamptz,
    status_note text,
    status_changed_at timestamptz
);

CREATE TYPE brain.incident_detail AS (
    what_was_wrong text,
    what_is_correct text,
    error_message text,
    command_attempted text,
    related_files text[],
    complexity text
);

CREATE TYPE brain.memory_draft AS (
    -- what it is and says
    kind text,
    headline text,
    body text,
    category text,
    origin text,
    project text,
    tags text[],
    importance double precision,
    pinned boolean,
    skill_trigger jsonb,
    metadata jsonb,
    -- its vector, in a named space (NULL: the worker embeds it later)
    embedding double precision[],
    embedding_space text,
    -- where it came from
    source_agent text,
    session_id bigint,
    source_system text,
    source_ref text,
    source_hash text,
    -- its life: when it expires, what it replaces, whether a near-identical text may fold into it
    expires_at timestamptz,
    supersedes bigint,
    foldable boolean,
    -- the kind's own fields
    rule brain.rule_detail,
    fact brain.fact_detail,
    task brain.task_detail,
    incident brain.incident_detail
);

-- The 35 positional parameters give way to the draft (sql/functions/004a-write-core.sql), and
-- the write core takes the kind fields, vectors and audit of what it stores.
DROP FUNCTION IF EXISTS brain._store_memories(brain.memory[], text[]);
DROP FUNCTION IF EXISTS brain._write(text, text, text, text, text, text, text, text[], double precision, boolean,
    jsonb, jsonb, double precision[], text, text, bigint, text, text, text, timestamptz, double precision, text,
    integer, timestamptz, text, text, text, text, text[], text, boolean, bigint, text, text, boolean);
