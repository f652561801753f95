-- Each memory's naming words (brain._naming_words of what it states,
-- brain._statement_text: the words that name what its values are of), stored
-- with it and kept by the write path (trigger memory_tsv), as its
-- distinguishing terms are (migration 036). brain._restates compared them for
-- every pair of results a search judged, twice a pair: at 100k memories, a
-- search scoped to one of ten projects spent about 6.7 ms of its 26 on them.
-- NULL: not computed (readers compute them then).
ALTER TABLE brain.memory ADD COLUMN IF NOT EXISTS naming_words text[];
COMMENT ON COLUMN brain.memory.naming_words IS
    'The words of what the memory states (a captured turn''s text without its speaker, an authored memory''s headline) that name what its values are of (brain._naming_words), kept by the write path: what brain._restates compares.';

-- Existing rows, when the functions of the release being upgraded have them
-- (migrations run before the function files; an older release leaves them
-- NULL, and readers compute them).
DO $$
BEGIN
    IF to_regprocedure('brain._naming_words(text)') IS NOT NULL
       AND to_regprocedure('brain._statement_text(text, text, text)') IS NOT NULL THEN
        EXECUTE 'UPDATE brain.memory SET naming_words = brain._naming_words(brain._statement_text(origin, headline, body))
                 WHERE naming_words IS NULL';
    END IF;
END
$$;
