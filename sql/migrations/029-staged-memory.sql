-- A batch writer's work item: one chunk of one of its inputs, carried through
-- the batch's stages as one value instead of a dozen arrays kept in step:
-- staged (what will be stored, or why the input was refused), then given its
-- vector, deduplicated, stored and reported (brain.observe_batch,
-- brain.ingest_documents, brain.import_memories).
CREATE TYPE brain.staged_memory AS (
    item integer,            -- the input it came from, from 1
    chunk integer,           -- its chunk of that input; NULL for the input as a whole (a refused one)
    input jsonb,             -- the input as sent, when it is more than a text (a document)
    headline text,           -- what will be stored
    body text,
    normalized text,         -- the exact-dedup key
    metadata jsonb,
    section text,            -- the chunk's heading path
    source_ref text,
    source_hash text,
    flags text[],            -- the text's injection signals
    thread text,
    "position" integer,
    context text,            -- indexed with it (docs/ranking.md)
    said text,               -- the input's text as stored (secrets redacted): its neighbours' context
    redacted jsonb,          -- the secrets redacted from it: kind, start and end in the text as sent
    vector public.vector,    -- its embedding, when the batch sent them
    error_code text,         -- a refused input: the error's code and message
    error text,
    existing bigint,         -- the active memory with the same text, if any
    first_of integer,        -- the place in the batch of the chunk with the same text whose memory it takes
                             -- (observe_batch: the first such chunk, itself included)
    stored_id bigint,        -- the memory stored for it
    action text,             -- the outcome reported: created, skipped, folded, new, changed, rejected, ...
    memory_id bigint,        -- the memory it is now: its own, the one it repeats or folded into
    duplicate_of bigint,
    similarity real,
    previous_id bigint,      -- the memory it replaces (a changed chunk's old version), or the id it had
                             -- in the file it was imported from
    previous_ref text,       -- the ref it was known by (a renamed document)
    vectors integer          -- the vectors it brought with it (an imported memory)
);
