-- Retrieval's text index: the workspace a search runs in (brain._caller_workspace),
-- code and exact tokens, the text vector every memory is indexed by (trigger
-- memory_tsv) and the corpus counts BM25 reads. The rest of search:
-- 005a-search-words.sql (query words), 005b-search-statement.sql (the statement),
-- 005c-search-run.sql (brain.search), 005d-search-reads.sql (previews, skills, recent).

-- The workspace of a function that runs as the owner of schema brain
-- (SECURITY DEFINER: brain.search, brain.analyze_lexemes), with the access it
-- needs (NULL: any): brain.current_workspace checks the session's login role,
-- and a session that SET ROLE (brain serve runs a token's request as its
-- role) keeps no more than that role has.
DROP FUNCTION IF EXISTS brain._caller_workspace();
CREATE OR REPLACE FUNCTION brain._caller_workspace(need text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := CASE WHEN need IS NULL THEN brain.current_workspace() ELSE brain.current_workspace(need) END;
    acting text := nullif(nullif(current_setting('role', true), 'none'), '');
    levels text[] := ARRAY['read', 'write', 'admin'];
    held text;
BEGIN
    IF acting IS NOT NULL THEN
        held := brain._access(ws, acting);
        IF held IS NULL OR array_position(levels, held) < coalesce(array_position(levels, need), 1) THEN
            RAISE EXCEPTION USING ERRCODE = 'BR020',
                MESSAGE = format('Role %s has no %s access to workspace %s.', acting, coalesce(need, 'read'), ws),
                DETAIL = jsonb_build_object('role', acting, 'workspace', ws, 'access', held)::text,
                HINT = 'See your workspaces with brain.list_workspaces(); an admin grants access.';
        END IF;
    END IF;
    RETURN ws;
END
$$;

-- Identifiers, version strings and code tokens as typed: words joined by
-- underscores or colons (idle_timeout, ERR_SSL_PROTOCOL, std::vector),
-- lowercased, with each leading run of two or more parts (err_ssl,
-- err_ssl_protocol), so a query for the start of an identifier matches as
-- written. The english parser splits them at the underscore; dotted names and
-- versions (v2.3.1, app.config.yml) it keeps whole already.
CREATE OR REPLACE FUNCTION brain.code_tokens(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(array_agg(DISTINCT p.tok), '{}')
    FROM (SELECT lower(r.m[1]) AS word
          FROM regexp_matches(coalesce(t, ''), '([A-Za-z0-9]+(?:[_:]+[A-Za-z0-9]+)+)', 'g') AS r(m)) AS w
    CROSS JOIN LATERAL (
        SELECT array_to_string((regexp_split_to_array(w.word, '[_:]+'))[1:k], '_') AS tok
        FROM generate_series(2, least(cardinality(regexp_split_to_array(w.word, '[_:]+')), 6)) AS k
    ) AS p
    WHERE length(p.tok) <= 200
$$;
COMMENT ON FUNCTION brain.code_tokens IS
    'Identifiers joined by _ or : (idle_timeout, ERR_SSL_PROTOCOL), lowercased, with their leading runs of 2+ parts: indexed and searched whole beside the parts the english parser splits them into.';

-- The tokens of a short query (three words at most) that a user types to
-- find the memory holding them verbatim: IP addresses, error codes,
-- identifiers (snake_case, CamelCase, zebra-7), hex ids, versions, paths,
-- ticket keys. A token counts when it holds a digit (and is not a plain
-- number of four digits or fewer: a year, a count), joins letters or digits
-- with _ . / : @ or #, or has a capital after its first letter. A memory
-- holding every one of them verbatim is evidence whatever its vector says
-- (brain.search: exact_token_relevance). Lowercased, in query order.
CREATE OR REPLACE FUNCTION brain.exact_tokens(query text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT lower(w.tok)), '{}')
    FROM regexp_matches(coalesce(query, ''), '([[:alnum:]]+(?:[._/:@#+-]+[[:alnum:]]+)*)', 'g') AS m(g),
         LATERAL (SELECT m.g[1] AS tok) AS w
    WHERE cardinality(regexp_split_to_array(brain.trim_space(coalesce(query, '')), '\s+')) <= 3
      AND length(w.tok) >= 3
      AND (w.tok ~ '[0-9]' AND NOT (w.tok ~ '^[0-9]+$' AND length(w.tok) <= 4)
           OR w.tok ~ '[[:alnum:]][_./:@#][[:alnum:]]'
           OR w.tok ~ '^[[:alpha:]].*[[:upper:]]')
$$;
COMMENT ON FUNCTION brain.exact_tokens IS
    'The tokens of a query of at most three words that name one thing verbatim (IPs, error codes, snake_case and CamelCase identifiers, hex ids, versions, paths, ticket keys), lowercased: a memory holding them all ranks as evidence (exact_token_relevance, docs/ranking.md).';

-- Whether a text holds every token verbatim (case-insensitive), each as a
-- whole token: 10.20.30.4 is not in 10.20.30.40.
CREATE OR REPLACE FUNCTION brain.holds_tokens(t text, tokens text[])
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT cardinality(tokens) > 0 AND NOT EXISTS (
        SELECT FROM unnest(tokens) AS k(tok)
        -- a substring test first: the pattern only where the token occurs at all
        WHERE strpos(lower(coalesce(t, '')), k.tok) = 0
           OR NOT coalesce(t, '') ~* ('(^|[^[:alnum:]_.:@#+-])' || regexp_replace(k.tok, '([^[:alnum:][:space:]])', '\\\1', 'g')
                                      || '($|[^[:alnum:]_./:@#+-]|[.:,;!?]+(\s|$))'))
$$;
COMMENT ON FUNCTION brain.holds_tokens IS
    'True when the text holds every token verbatim (case-insensitive) as a whole token.';

-- The full-text vector of a memory: headline (A), body (B), context (C),
-- and the code tokens of headline and body (B) as typed.
CREATE OR REPLACE FUNCTION brain.memory_tsv(headline text, body text, context text)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT setweight(to_tsvector('english'::regconfig, coalesce(headline, '')), 'A')
           || setweight(to_tsvector('english'::regconfig, coalesce(body, '')), 'B')
           || setweight(to_tsvector('english'::regconfig, coalesce(context, '')), 'C')
           || coalesce((SELECT string_agg(quote_literal(c.tok) || ':1B', ' ')::tsvector
                        FROM unnest(brain.code_tokens(coalesce(headline, '') || ' ' || coalesce(body, ''))) AS c(tok)),
                       ''::tsvector)
$$;
COMMENT ON FUNCTION brain.memory_tsv IS
    'The full-text vector the lexical leg searches: headline words weigh A, body words B, context words C, plus identifiers whole (brain.code_tokens).';

-- Fills tsv, lexical_len and fact_terms (brain.distinguishing_terms) on every
-- write of the text, and keeps the
-- workspace's lexeme count in step when a memory's text changes in place.
CREATE OR REPLACE FUNCTION brain._memory_tsv()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.tsv := brain.memory_tsv(NEW.headline, NEW.body, NEW.context);
    NEW.fact_terms := brain.distinguishing_terms(NEW.headline || E'\n' || NEW.body);
    NEW.lexical_len := length(to_tsvector('english'::regconfig,
                                          coalesce(NEW.headline, '') || ' ' || coalesce(NEW.body, '')));
    IF TG_OP = 'UPDATE' AND NEW.lexical_len IS DISTINCT FROM OLD.lexical_len THEN
        PERFORM brain._count_corpus(NEW.workspace_id, 0, coalesce(NEW.lexical_len, 0) - coalesce(OLD.lexical_len, 0));
    END IF;
    RETURN NEW;
END
$$;

-- Adds to the workspace's memory and lexeme counts (brain.lexical_corpus), in
-- a slot no other transaction holds: concurrent writers never wait here.
CREATE OR REPLACE FUNCTION brain._count_corpus(ws bigint, docs bigint, lexemes bigint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    free integer;
BEGIN
    IF docs = 0 AND lexemes = 0 THEN
        RETURN;
    END IF;
    SELECT c.slot INTO free FROM brain.lexical_corpus c
    WHERE c.workspace_id = ws ORDER BY c.slot LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF free IS NOT NULL THEN
        UPDATE brain.lexical_corpus c SET docs = c.docs + _count_corpus.docs, lexemes = c.lexemes + _count_corpus.lexemes
        WHERE c.workspace_id = ws AND c.slot = free;
    ELSE
        -- Every slot is held by another writer (or there is none yet): a new one,
        -- named by this transaction's id. A slot named by the backend's pid could be
        -- one another writer had just taken above, and then this insert waited for it.
        INSERT INTO brain.lexical_corpus AS c (workspace_id, slot, docs, lexemes)
        VALUES (ws, -1 - (pg_current_xact_id()::text::bigint % 2147483647)::integer,
                _count_corpus.docs, _count_corpus.lexemes)
        ON CONFLICT (workspace_id, slot)
        DO UPDATE SET docs = c.docs + excluded.docs, lexemes = c.lexemes + excluded.lexemes;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION brain._count_corpus_rows()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR d IN SELECT n.workspace_id, count(*) AS docs, coalesce(sum(n.lexical_len), 0) AS lexemes
                 FROM new_rows n GROUP BY 1 ORDER BY 1 LOOP
            PERFORM brain._count_corpus(d.workspace_id, d.docs, d.lexemes);
        END LOOP;
    ELSE
        FOR d IN SELECT o.workspace_id, count(*) AS docs, coalesce(sum(o.lexical_len), 0) AS lexemes
                 FROM old_rows o GROUP BY 1 ORDER BY 1 LOOP
            PERFORM brain._count_corpus(d.workspace_id, -d.docs, -d.lexemes);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER memory_tsv BEFORE INSERT OR UPDATE OF headline, body, context ON brain.memory
    FOR EACH ROW EXECUTE FUNCTION brain._memory_tsv();
CREATE OR REPLACE TRIGGER memory_corpus_insert AFTER INSERT ON brain.memory
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION brain._count_corpus_rows();
CREATE OR REPLACE TRIGGER memory_corpus_delete AFTER DELETE ON brain.memory
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION brain._count_corpus_rows();

-- Calibrated relevance in [0, 1] (docs/ranking.md): the probability, by
-- logistic maps fitted on the dev questions, that a result is evidence for
-- the query. Each leg's evidence is a log-odds: vector slope x (similarity -
-- center), with the embedding space's center and slope; lexical lex_slope x
-- (BM25 share - lex_center). With both, bias + w_vec x vector + w_lex x
-- lexical; with one, that one (NULL similarity: the query had no embedding
-- or the memory has none in the space; NULL share: the query had no word
-- the workspace holds). c: {center, slope, lex_center, lex_slope, bias,
-- w_vec, w_lex}.
CREATE OR REPLACE FUNCTION brain.relevance(sim double precision, lex double precision, c double precision[])
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT 1 / (1 + exp(-least(50, greatest(-50,
               CASE WHEN sim IS NULL THEN c[4] * (lex - c[3])
                    WHEN lex IS NULL THEN c[2] * (sim - c[1])
                    ELSE c[5] + c[6] * c[2] * (sim - c[1]) + c[7] * c[4] * (lex - c[3]) END))))
$$;
COMMENT ON FUNCTION brain.relevance IS
    'Calibrated relevance of a result (docs/ranking.md): the logistic of its evidence. Vector: slope x (similarity - center), the space''s; lexical: lex_slope x (BM25 share - lex_center); both: bias + w_vec x vector + w_lex x lexical. c = {center, slope, lex_center, lex_slope, bias, w_vec, w_lex}; NULL when neither evidence is known.';
