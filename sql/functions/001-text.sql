-- Text rules: errors, the clock, normalization, the text embedded, word counts.
-- All pure functions. The secret scanner: 001a-text-secret-rules.sql (the rules),
-- 001b-text-clean.sql (the scan, redaction, refusal) and 001d-text-secret-decoding.sql
-- (what the scan undoes); signals and extraction: 001c-text-signals.sql.

CREATE OR REPLACE FUNCTION brain._raise(code text, message text, detail jsonb, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Absent parts are left out, not sent empty.
    IF detail IS NOT NULL AND hint IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = detail::text, HINT = hint;
    ELSIF detail IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = detail::text;
    ELSIF hint IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, HINT = hint;
    ELSE
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
    END IF;
END
$$;
COMMENT ON FUNCTION brain._raise IS
    'Raises a pybrain error: SQLSTATE class BR, a message, a JSON DETAIL and a HINT (docs/errors.md).';

-- BR009 unless a count a caller asks for (max_results, max_rows, buckets) lies
-- between 1 and most; the detail names the argument and what it was.
CREATE OR REPLACE FUNCTION brain._check_count(arg text, given integer, most integer, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF given IS NULL OR given NOT BETWEEN 1 AND most THEN
        PERFORM brain._raise('BR009', format('%s lies between 1 and %s.', arg, most),
            jsonb_build_object(arg, given), hint);
    END IF;
END
$$;

-- The check of a text argument that may not be left out or blank (a reason,
-- a note, an event): `code` with the message and hint when it is.
CREATE OR REPLACE FUNCTION brain._require_text(given text, code text, message text, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF given IS NULL OR brain.trim_space(given) = '' THEN
        PERFORM brain._raise(code, message, NULL, hint);
    END IF;
END
$$;

-- The clock of a call that changes something (maintenance, prune, sessions,
-- tasks): a client's `now` may replay the past, never run ahead of the
-- server's clock (it would end other agents' sessions, archive and prune
-- early). NULL is the server's clock. Reading functions (search, boot_payload,
-- metrics) take their `now` as given: it changes only what the caller sees.
CREATE OR REPLACE FUNCTION brain._clock(now timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT least(coalesce(now, pg_catalog.now()), pg_catalog.now())
$$;

-- trim_space, normalize_text, embedding_input and word_count are single
-- expressions over built-ins: without a SET clause the planner inlines them
-- into their callers (a SET clause turns every use into a function call).
CREATE OR REPLACE FUNCTION brain.trim_space(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_replace(t, '^[\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g')
$$;
COMMENT ON FUNCTION brain.trim_space IS 'The text without leading and trailing white space of any kind.';

CREATE OR REPLACE FUNCTION brain.normalize_text(headline text, body text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT lower(brain.trim_space(regexp_replace(coalesce(headline, '') || ' ' || coalesce(body, ''),
                                                 '\s+', ' ', 'g')))
$$;
COMMENT ON FUNCTION brain.normalize_text IS
    'Headline and body lowercased with runs of white space folded: the key of exact dedup.';

CREATE OR REPLACE FUNCTION brain.embedding_input(headline text, body text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN brain.trim_space(coalesce(body, '')) = '' THEN brain.trim_space(headline)
                -- A derived headline (observed text) is the body's own start: say it once.
                WHEN starts_with(regexp_replace(body, '\s+', ' ', 'g'),
                                 CASE WHEN strpos(headline, ' …') = 0 THEN brain.trim_space(headline)
                                      ELSE regexp_replace(brain.trim_space(headline), ' …( \(part \d+/\d+\))?$', '') END)
                    THEN brain.trim_space(body)
                ELSE brain.trim_space(headline) || E'\n\n' || brain.trim_space(body) END
$$;
COMMENT ON FUNCTION brain.embedding_input(text, text) IS
    'The text an embedder sees for a memory: the headline, a blank line, the body (the body alone when it starts with the headline).';

-- The text an embedder sees for a memory with a title (a document's, for its
-- chunks: docs/ranking.md, "What the embedder sees"): the title first, as the
-- start of the location path when the headline is the chunk's heading path
-- (docs/guide.md > Guide > Webhooks), else on a line of its own; then the text
-- as brain.embedding_input(headline, body) gives it. The title is cut to 24
-- estimated tokens (brain._embedded_title), and the chunks of a titled text
-- are cut that much shorter (brain.observe_batch, brain.ingest_documents), so
-- the whole still fits the embedder's window. Without a title:
-- brain.embedding_input(headline, body).
-- (PL/pgSQL: brain._embedded_title is defined with the token estimate, later.)
CREATE OR REPLACE FUNCTION brain.embedding_input(headline text, body text, title text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := brain._embedded_title(title);
    h text := brain.trim_space(coalesce(headline, ''));
    text_part text := brain.embedding_input(headline, body);
BEGIN
    IF t IS NULL THEN
        RETURN text_part;
    END IF;
    -- The headline said apart from the body and not its start: the heading path
    -- of a chunk (or another headline that names the text), read on from the title.
    IF h <> '' AND brain.trim_space(coalesce(body, '')) NOT IN ('', text_part) THEN
        RETURN t || ' > ' || text_part;
    END IF;
    RETURN t || E'\n\n' || text_part;
END
$$;
COMMENT ON FUNCTION brain.embedding_input(text, text, text) IS
    'The text an embedder sees for a memory with a title (a document chunk): the title first (cut to 24 estimated tokens), joined to the headline as one location path (docs/guide.md > Guide > Webhooks) when the headline is said apart from the body, else on its own line; then brain.embedding_input(headline, body). A NULL or empty title: brain.embedding_input(headline, body).';

-- The title a stored memory is embedded with: metadata.title of an observed
-- or artifact memory (brain.observe_batch keeps the caller's, brain.ingest_documents
-- sets the document's ref); authored memories are embedded by their text alone.
CREATE OR REPLACE FUNCTION brain._embedding_title(origin text, metadata jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN origin IN ('observed', 'artifact') AND jsonb_typeof(metadata -> 'title') = 'string'
                THEN metadata ->> 'title' END
$$;

CREATE OR REPLACE FUNCTION brain.word_count(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_count(coalesce(t, ''), '[^\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+')
$$;
COMMENT ON FUNCTION brain.word_count IS 'Number of words separated by white space (no-break spaces included).';
